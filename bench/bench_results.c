/*
 * Results coming home, timed in-process (no HTTP): the upload handler
 * writing outputs (certificate check, store lookup, write, MD5, fsync) and
 * the scheduler recording reported results (lookup, group-committed
 * transaction, acks). Prints figures; checks that every upload was taken and
 * every report acknowledged, asserts nothing else.
 *
 *   bench_results [NRESULTS] [FILE_BYTES] [DIR]
 *
 * Makes a project under DIR (default /tmp) with NRESULTS (default 2000)
 * results in progress on one host, uploads one output of FILE_BYTES
 * (default 4096) for each, then reports them: half one per RPC, half ten
 * per RPC.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BENCH_NAME "bench_results"
#include "bench_util.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/config.h"
#include "volsched/h_upload.h"
#include "volsched/md5.h"
#include "volsched/proto.h"
#include "volsched/sched.h"
#include "volsched/sign.h"
#include "volsched/store.h"
#include "volsched/store_project.h"
#include "volsched/str.h"

#define T0 1800000000

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 2000;
    long fbytes = argc > 2 ? strtol(argv[2], NULL, 10) : 4096;
    const char *base = argc > 3 ? argv[3] : "/tmp";
    if (n < 20 || n > 1000000 || fbytes < 1 || fbytes > (16L << 20)) {
        fprintf(stderr, "usage: bench_results [NRESULTS (20..1e6)] [FILE_BYTES (1..16M)] [DIR]\n");
        return 2;
    }
    char dir[512];
    struct vs_project_config cfg;
    bench_project(base, "vs_bench_results", dir, sizeof(dir), &cfg);
    char p[1200];
    snprintf(p, sizeof(p), "%s/upload", dir);
    mkdir(p, 0755);
    bench_check(vs_project_config_write(&cfg), "config write");
    bench_check(vs_sign_keygen_write(cfg.key_dir, 1024), "keygen");
    struct vs_store *s;
    bench_check(vs_project_store_open(&cfg, true, NULL, &s), "open");
    struct vs_app app;
    struct vs_user u;
    struct vs_host h;
    memset(&h, 0, sizeof(h));
    h.rpc_seqno = 1;
    bench_add_app_user_host(s, "app", &app, &u, &h);

    bench_check(vs_store_begin(s), "begin");
    for (long i = 0; i < n; i++) {
        struct vs_workunit wu;
        vs_workunit_defaults(&wu);
        wu.appid = app.id;
        snprintf(wu.name, sizeof(wu.name), "wu%ld", i);
        wu.transition_time = VS_TIME_NEVER;
        wu.xml_doc = vs_xstrdup("<workunit>\n</workunit>\n");
        bench_check(vs_store_workunit_add(s, &wu), "wu");
        struct vs_result r;
        memset(&r, 0, sizeof(r));
        r.workunitid = wu.id;
        r.appid = app.id;
        r.server_state = VS_RESULT_SERVER_STATE_UNSENT;
        snprintf(r.name, sizeof(r.name), "wu%ld_0", i);
        char doc[512];
        snprintf(doc, sizeof(doc),
                 "<file_info>\n<name>wu%ld_0_r1_0</name>\n<max_nbytes>%ld</max_nbytes>\n"
                 "</file_info>\n<result>\n<file_ref>\n<file_name>wu%ld_0_r1_0</file_name>\n"
                 "<open_name>out</open_name>\n</file_ref>\n</result>\n",
                 i, fbytes, i);
        r.xml_doc_in = vs_xstrdup(doc);
        bench_check(vs_store_result_add(s, &r), "result");
        struct vs_claim c = {.result_id = r.id, .report_deadline = T0 + 86400};
        size_t nc = 0;
        bench_check(vs_store_results_claim(s, h.id, u.id, 0, T0, &c, 1, &nc), "claim");
        vs_workunit_cleanup(&wu);
        vs_result_cleanup(&r);
    }
    bench_check(vs_store_commit(s), "commit");

    /* ---- uploads ---- */
    struct vs_upload *up;
    bench_check(vs_upload_create(&cfg, NULL, &up), "upload create");
    struct vs_sign_key *key;
    snprintf(p, sizeof(p), "%s/%s", cfg.key_dir, VS_SIGN_UPLOAD_PRIVATE);
    bench_check(vs_sign_key_load(p, true, &key), "key");
    char *data = vs_xmalloc((size_t)fbytes);
    for (long i = 0; i < fbytes; i++)
        data[i] = (char)('a' + i % 26);
    char md5[VS_MD5_HEX_LEN + 1];
    bench_check(vs_md5_hex(data, (size_t)fbytes, md5), "md5");
    /* The client's requests are built before the clock starts. */
    struct vs_buf *bodies = vs_xcalloc((size_t)n, sizeof(*bodies));
    for (long i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof(name), "wu%ld_0_r1_0", i);
        struct vs_buf sig;
        vs_buf_init(&sig, 8192);
        bench_check(vs_sign_upload_cert(key, name, (double)fbytes, &sig), "sign");
        struct vs_proto_upload_request q = {.kind = VS_PROTO_UPLOAD_FILE,
                                            .core_client_major_version = 7,
                                            .name = name,
                                            .xml_signature = sig.data,
                                            .max_nbytes = (double)fbytes,
                                            .nbytes = fbytes,
                                            .md5_cksum = md5};
        vs_buf_init(&bodies[i], VS_BUF_UNLIMITED);
        bench_check(vs_proto_upload_write_header(&q, &bodies[i]), "header");
        bench_check(vs_buf_append(&bodies[i], data, (size_t)fbytes), "data");
        vs_buf_cleanup(&sig);
    }
    struct vs_buf out;
    vs_buf_init(&out, 1u << 20);
    double t = bench_now_s();
    for (long i = 0; i < n; i++) {
        vs_buf_reset(&out);
        vs_upload_http(up, bodies[i].data, bodies[i].len, "127.0.0.1", &out);
    }
    double dt = bench_now_s() - t;
    struct vs_upload_stats us;
    vs_upload_get_stats(up, &us);
    printf("uploads of %ld B (cert + lookup + write + md5 + fsync): %llu of %ld taken in %.3f s: "
           "%.0f /s, %.1f MB/s\n",
           fbytes, (unsigned long long)us.files_done, n, dt, n / dt, n * (double)fbytes / dt / 1e6);
    for (long i = 0; i < n; i++)
        vs_buf_cleanup(&bodies[i]);
    vs_free(bodies);

    /* ---- reports ---- */
    struct vs_sched *sched;
    bench_check(vs_sched_create(&cfg, NULL, NULL, &sched), "sched");
    long half = n / 2;
    for (int pass = 0; pass < 2; pass++) {
        long per = pass == 0 ? 1 : 10, first = pass == 0 ? 0 : half, last = pass == 0 ? half : n;
        long nrpc = 0, nacks = 0;
        struct vs_buf req;
        vs_buf_init(&req, VS_BUF_UNLIMITED);
        double busy = 0;
        for (long i = first; i < last; i += per) {
            vs_buf_reset(&req);
            bench_check(vs_buf_printf(&req,
                                      "<scheduler_request>\n<authenticator>%s</authenticator>\n"
                                      "<hostid>%lld</hostid>\n<rpc_seqno>%ld</rpc_seqno>\n"
                                      "<platform_name>x86_64-pc-linux-gnu</platform_name>\n",
                                      u.authenticator, (long long)h.id, 2 + nrpc),
                        "req");
            for (long k = i; k < i + per && k < last; k++)
                bench_check(
                    vs_buf_printf(&req,
                                  "<result>\n<name>wu%ld_0</name>\n<exit_status>0</exit_status>\n"
                                  "<state>5</state>\n<final_cpu_time>10</final_cpu_time>\n"
                                  "<final_elapsed_time>11</final_elapsed_time>\n</result>\n",
                                  k),
                    "req");
            bench_check(vs_buf_puts(&req, "</scheduler_request>\n"), "req");
            vs_buf_reset(&out);
            t = bench_now_s();
            vs_sched_handle(sched, req.data, req.len, "127.0.0.1", T0 + 100, &out);
            busy += bench_now_s() - t;
            nrpc++;
            for (const char *a = strstr(out.data, "<result_ack>"); a;
                 a = strstr(a + 1, "<result_ack>"))
                nacks++;
        }
        printf(
            "report RPCs, %2ld result(s) each (lookup + group commit + acks): %ld RPCs, %ld acks "
            "of %ld in %.3f s: %.0f RPCs/s, %.0f reports/s\n",
            per, nrpc, nacks, last - first, busy, nrpc / busy, (last - first) / busy);
        vs_buf_cleanup(&req);
    }
    int64_t over = 0;
    bench_check(vs_store_count_results(s, 0, VS_RESULT_SERVER_STATE_OVER, &over), "count");
    printf("store: %lld of %ld results OVER\n", (long long)over, n);
    vs_buf_cleanup(&out);
    vs_sched_destroy(sched);
    vs_upload_destroy(up);
    vs_sign_key_destroy(key);
    vs_free(data);
    vs_user_cleanup(&u);
    vs_store_close(s);
    snprintf(p, sizeof(p), "rm -rf '%s'", dir);
    if (system(p) != 0)
        fprintf(stderr, "bench_results: could not remove %s\n", dir);
    return 0;
}
