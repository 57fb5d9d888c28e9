/*
 * Store benchmark: how fast the SQLite store does what the scheduler asks of
 * it per RPC. Prints figures; asserts nothing.
 *
 *   bench_store [NRESULTS] [DIR]
 *
 * Creates NRESULTS (default 20000) UNSENT results in a fresh store in DIR
 * (default /tmp), then measures: the feeder's paged scan (rows/s), one
 * durable claim transaction per RPC with 1 result and with 4 results
 * (claims/s, results/s), host update + claim in one transaction (the
 * scheduler's commit), and user lookup by authenticator.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BENCH_NAME "bench_store"
#include "bench_util.h"
#include "volsched/alloc.h"
#include "volsched/store.h"
#include "volsched/str.h"

struct scan {
    int64_t *ids;
    size_t n, cap;
};

static int on_job(void *ctx, const struct vs_job *job)
{
    struct scan *sc = ctx;
    if (sc->n < sc->cap)
        sc->ids[sc->n++] = job->result.id;
    return 0;
}

int main(int argc, char **argv)
{
    long nres = argc > 1 ? strtol(argv[1], NULL, 10) : 20000;
    const char *dir = argc > 2 ? argv[2] : "/tmp";
    if (nres < 100 || nres > 10000000) {
        fprintf(stderr, "usage: bench_store [NRESULTS (100..1e7)] [DIR]\n");
        return 2;
    }
    char path[512], url[600];
    snprintf(path, sizeof(path), "%s/bench_store_%d.db", dir, (int)getpid());
    snprintf(url, sizeof(url), "sqlite:%s", path);
    /* BENCH_NO_AUTOCHECKPOINT=1: what a server with a background
     * checkpointer sees on its request path. */
    bool noauto = getenv("BENCH_NO_AUTOCHECKPOINT") != NULL;
    struct vs_store *s;
    bench_check(
        vs_store_open(url, VS_STORE_CREATE | (noauto ? VS_STORE_NO_AUTOCHECKPOINT : 0), NULL, &s),
        "open");

    struct vs_app app;
    struct vs_user u;
    struct vs_host h;
    memset(&h, 0, sizeof(h));
    bench_add_app_user_host(s, "bench", &app, &u, &h);

    /* Fill: one WU + one result each, 1000 per transaction. */
    double t0 = bench_now_s();
    char xml[512];
    snprintf(xml, sizeof(xml), "%s",
             "<file_info>\n    <name>in</name>\n    <url>http://h/download/1/in</url>\n"
             "    <md5_cksum>0123456789abcdef0123456789abcdef</md5_cksum>\n"
             "    <nbytes>100</nbytes>\n</file_info>\n<workunit>\n    <file_ref>\n"
             "        <file_name>in</file_name>\n        <open_name>in</open_name>\n"
             "    </file_ref>\n</workunit>\n");
    for (long i = 0; i < nres; i++) {
        if (i % 1000 == 0)
            bench_check(vs_store_begin(s), "begin");
        struct vs_workunit wu;
        vs_workunit_defaults(&wu);
        wu.appid = app.id;
        snprintf(wu.name, sizeof(wu.name), "wu_%ld", i);
        wu.xml_doc = xml;
        bench_check(vs_store_workunit_add(s, &wu), "wu");
        struct vs_result r;
        memset(&r, 0, sizeof(r));
        r.workunitid = wu.id;
        r.appid = app.id;
        r.server_state = VS_RESULT_SERVER_STATE_UNSENT;
        snprintf(r.name, sizeof(r.name), "wu_%ld_0", i);
        r.xml_doc_in = xml;
        bench_check(vs_store_result_add(s, &r), "result");
        if (i % 1000 == 999 || i == nres - 1)
            bench_check(vs_store_commit(s), "commit");
    }
    double t_fill = bench_now_s() - t0;

    /* Feeder scan, 1000 rows a page. */
    struct scan sc = {vs_xcalloc((size_t)nres, sizeof(int64_t)), 0, (size_t)nres};
    t0 = bench_now_s();
    struct vs_job_key last = {VS_JOB_KEY_TOP_PRIORITY, 0};
    for (;;) {
        size_t before = sc.n;
        bench_check(vs_store_jobs_unsent(s, &last, 1000, on_job, &sc, &last), "scan");
        if (sc.n == before)
            break;
    }
    double t_scan = bench_now_s() - t0;

    /* Claims: a quarter with 1 result per transaction, a quarter with 4. */
    size_t next = 0, n1 = sc.n / 4, n4 = sc.n / 4;
    t0 = bench_now_s();
    for (size_t i = 0; i < n1; i++) {
        struct vs_claim c = {.result_id = sc.ids[next++], .report_deadline = 2000000000};
        size_t got;
        bench_check(vs_store_results_claim(s, h.id, u.id, 0, 1700000000, &c, 1, &got), "claim");
    }
    double t_claim1 = bench_now_s() - t0;
    t0 = bench_now_s();
    for (size_t i = 0; i + 4 <= n4; i += 4) {
        struct vs_claim c[4];
        memset(c, 0, sizeof(c));
        for (int k = 0; k < 4; k++) {
            c[k].result_id = sc.ids[next++];
            c[k].report_deadline = 2000000000;
        }
        size_t got;
        bench_check(vs_store_results_claim(s, h.id, u.id, 0, 1700000000, c, 4, &got), "claim4");
    }
    double t_claim4 = bench_now_s() - t0;
    /* The scheduler's commit: host update + claim of 1, one transaction. */
    size_t nrpc = sc.n / 4;
    t0 = bench_now_s();
    for (size_t i = 0; i < nrpc && next < sc.n; i++) {
        bench_check(vs_store_begin(s), "begin");
        h.rpc_seqno++;
        h.rpc_time = 1700000000 + (int64_t)i;
        bench_check(vs_store_host_update(s, &h), "host update");
        struct vs_claim c = {.result_id = sc.ids[next++], .report_deadline = 2000000000};
        size_t got;
        bench_check(vs_store_results_claim(s, h.id, u.id, 0, 1700000000, &c, 1, &got), "claim");
        bench_check(vs_store_commit(s), "commit");
    }
    double t_rpc = bench_now_s() - t0;
    /* Authenticator lookups. */
    t0 = bench_now_s();
    int nauth = 20000;
    for (int i = 0; i < nauth; i++) {
        struct vs_user got;
        bench_check(vs_store_user_by_auth(s, u.authenticator, &got), "auth");
        vs_user_cleanup(&got);
    }
    double t_auth = bench_now_s() - t0;

    printf("bench_store: %ld results, SQLite WAL synchronous=NORMAL, %s, %s\n", nres, dir,
           noauto ? "no autocheckpoint" : "autocheckpoint");
    printf("  fill (1000 WU+result per txn):   %10.0f WU/s\n", nres / t_fill);
    printf("  feeder scan (pages of 1000):     %10.0f rows/s\n", sc.n / t_scan);
    printf("  claim 1 result per txn:          %10.0f txn/s\n", n1 / t_claim1);
    printf("  claim 4 results per txn:         %10.0f txn/s (%.0f results/s)\n",
           (n4 / 4) / t_claim4, (n4 / 4 * 4) / t_claim4);
    printf("  host update + claim 1, one txn:  %10.0f txn/s\n", nrpc / t_rpc);
    printf("  user by authenticator:           %10.0f lookups/s\n", nauth / t_auth);
    vs_free(sc.ids);
    vs_store_close(s);
    char p2[620];
    unlink(path);
    snprintf(p2, sizeof(p2), "%s-wal", path);
    unlink(p2);
    snprintf(p2, sizeof(p2), "%s-shm", path);
    unlink(p2);
    return 0;
}
