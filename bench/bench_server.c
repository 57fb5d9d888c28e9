/*
 * bench_server: scheduler throughput under many simulated hosts.
 *
 * It builds a throwaway project in a temporary directory (one app version,
 * N workunits with one UNSENT result each), serves it in-process exactly as
 * `volsched serve` does (HTTP front end, job cache with a feeder thread,
 * group-committed claims into SQLite), and plays many hosts against it over
 * loopback from one thread (non-blocking sockets, epoll, HTTP/1.1 keep-alive,
 * one connection per host; requests built from pieces of the template cut
 * once, replies parsed only for what the host needs). Each host sends the
 * real 7.20.5 client's work request (tests/data/boinc/sched_request_02.xml):
 * its first RPC has hostid 0 and gets a host record; later ones carry the
 * hostid, an incremented rpc_seqno and the code-signing key, and ask for
 * one job (20 s of CPU, one idle CPU).
 *
 * Each host reports, in its next RPC, the jobs it got in the previous one
 * (the real client's <result> element: success, one output file), so that
 * a steady state has one send and one report per RPC.
 *
 * For 1, 64 and 512 concurrent hosts it prints scheduler RPCs per second,
 * jobs dispatched per second, reports acknowledged per second and latency
 * p50/p99, then checks that every job the hosts received is recorded in
 * the store (IN_PROGRESS, or OVER once reported: durable before the reply
 * left). The job count defaults to enough for every RPC of every phase
 * (--rpcs per phase plus --direct), so no phase runs dry.
 *
 * Bounded: each phase stops after --secs seconds or --rpcs requests,
 * whichever comes first; loopback only.
 *
 * usage: bench_server [--jobs N] [--secs S] [--rpcs N] [--threads T]
 *                     [--sync-full] [--conc a,b,c] [--commit-delay US]
 *                     [--direct N] [--keep] [--rules on|off] [--poll N]
 *                     [--ceiling] [--slowloris N]
 *
 * --threads T: handler threads (default 16, as `volsched serve`); --poll N:
 * threads polling the sockets.
 * --ceiling then runs the same phases against the same front end with a
 * handler that answers an empty reply at once (the HTTP layer's own
 * ceiling; the ratio says how close the scheduler is to it).
 * --slowloris N then runs the phases again beside N connections dripping
 * a request head one byte every 3 s (under the 30 s head deadline, so they
 * stay open), and prints the rate as a share of the rate without.
 *
 * --rules on (default) switches every work-send rule on (none binding for
 * this load); off leaves the checks the scheduler had before them.
 *
 * --direct N first times N calls of the handler on one thread, without HTTP
 * (each as a new host), to show its own cost.
 *
 * --target PORT[,PORT...] --path P --auth KEY[,KEY...] [--journal FILE]
 * plays the same hosts against servers already running (run_target below),
 * for tests of several instances (tests/pg/test_pg_nginx.sh); host i belongs
 * to the i-th account of the list, round robin.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "loadgen.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/config.h"
#include "volsched/http.h"
#include "volsched/sched.h"
#include "volsched/store.h"
#include "volsched/str.h"

#define AUTH "0123456789abcdef0123456789abcdef" /* the sample's authenticator */

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "bench_server: cannot read %s\n", path);
        exit(1);
    }
    struct vs_buf b;
    vs_buf_init(&b, 1u << 24);
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        if (vs_buf_append(&b, chunk, n) != 0)
            exit(1);
    fclose(f);
    return vs_buf_take(&b, NULL);
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "bench_server: %s: %s\n", what, vs_strerror(rc));
    exit(1);
}

/* ---------------- the project ---------------- */

/* The work-send rules: "on" switches every rule on (all checked on every
 * candidate, none binding for this load: limits and quotas far above what a
 * phase sends); "off" leaves only what the scheduler checked before the
 * rules were configurable (platform, version, memory, disk, deadline, one
 * result of a workunit per host). */
static void set_rules(struct vs_sp_config *p, bool on)
{
    vs_sp_config_defaults(p);
    p->max_wus_to_send = 10;
    if (!on) {
        p->min_core_client_version = 0;
        return;
    }
    const char *only = getenv("BENCH_RULES"); /* experiments: a subset, e.g. "quota,hr" */
    bool all = !only;
#define RULE(name) (all || strstr(only, name))
    p->one_result_per_user_per_wu = RULE("user");
    p->one_result_per_host_per_wu = true;
    p->daily_result_quota = RULE("quota") ? 100000 : 0;
    p->homogeneous_redundancy = RULE("hr") ? 2 : 0;
    p->min_core_client_version = 70000;
    p->workload_sim = RULE("edf");
    if (!RULE("limits"))
        return;
#undef RULE
    p->limits.project.total.jobs = 100000;
    p->limits.project.cpu.jobs = 10000;
    p->limits.project.cpu.per_proc = true;
    p->limits.n_apps = 1;
    snprintf(p->limits.apps[0].app_name, sizeof(p->limits.apps[0].app_name), "primes");
    p->limits.apps[0].total.jobs = 100000;
    p->limits.apps[0].cpu.jobs = 10000;
}

static void make_project(struct vs_project_config *c, const char *dir, int njobs, bool sync_full,
                         bool rules)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->dir, sizeof(c->dir), "%s", dir);
    snprintf(c->long_name, sizeof(c->long_name), "bench");
    snprintf(c->master_url, sizeof(c->master_url), "http://127.0.0.1:1/bench/");
    snprintf(c->download_url, sizeof(c->download_url), "http://127.0.0.1:1/bench/download");
    snprintf(c->upload_url, sizeof(c->upload_url), "http://127.0.0.1:1/bench/file_upload_handler");
    snprintf(c->cgi_url, sizeof(c->cgi_url), "http://127.0.0.1:1/bench/");
    snprintf(c->download_dir, sizeof(c->download_dir), "%s", dir);
    snprintf(c->key_dir, sizeof(c->key_dir), "%s", dir);
    snprintf(c->store_url, sizeof(c->store_url), "sqlite:%s/bench.db%s", dir,
             sync_full ? "?sync=full" : "");
    /* VS_BENCH_STORE: another store, e.g. a fresh PostgreSQL database. */
    const char *other = getenv("VS_BENCH_STORE");
    if (other && *other)
        snprintf(c->store_url, sizeof(c->store_url), "%s", other);
    set_rules(&c->policy, rules);
    char path[VS_PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/code_sign_public", dir);
    FILE *f = fopen(path, "w");
    fputs("1024\n0011\n.\n", f);
    fclose(f);

    struct vs_store *st;
    int rc = vs_store_open(c->store_url, VS_STORE_CREATE, NULL, &st);
    if (rc)
        die("store open", rc);
    struct vs_platform pf = {0};
    snprintf(pf.name, sizeof(pf.name), "x86_64-pc-linux-gnu");
    struct vs_app app = {0};
    snprintf(app.name, sizeof(app.name), "primes");
    if ((rc = vs_store_platform_add(st, &pf)) || (rc = vs_store_app_add(st, &app)))
        die("app", rc);
    struct vs_app_version av = {.appid = app.id, .platformid = pf.id, .version_num = 100};
    av.avg_ncpus = 1;
    struct vs_app_version_file file = {.main_program = 1, .executable = 1, .nbytes = 17000};
    snprintf(file.name, sizeof(file.name), "primes_100");
    snprintf(file.path, sizeof(file.path), "3f/primes_100");
    snprintf(file.md5_cksum, sizeof(file.md5_cksum), "0123456789abcdef0123456789abcdef");
    file.file_signature = vs_xstrdup("aabb\n.\n");
    av.files = &file;
    av.nfiles = 1;
    if ((rc = vs_store_app_version_add(st, &av)))
        die("app version", rc);
    vs_free(file.file_signature);
    struct vs_user u = {0};
    snprintf(u.name, sizeof(u.name), "bench");
    snprintf(u.authenticator, sizeof(u.authenticator), AUTH);
    if ((rc = vs_store_user_add(st, &u)))
        die("user", rc);
    vs_user_cleanup(&u);
    double t0 = now_s();
    if ((rc = vs_store_begin(st)))
        die("begin", rc);
    for (int i = 0; i < njobs; i++) {
        struct vs_workunit wu;
        vs_workunit_defaults(&wu);
        wu.appid = app.id;
        snprintf(wu.name, sizeof(wu.name), "bench_wu_%d", i);
        wu.rsc_fpops_est = 2e10;
        wu.delay_bound = 86400;
        wu.transition_time = VS_TIME_NEVER;
        char doc[600];
        snprintf(doc, sizeof(doc),
                 "<file_info>\n    <name>in_%d</name>\n"
                 "    <url>http://127.0.0.1:1/bench/download/1a/in_%d</url>\n"
                 "    <md5_cksum>00000000000000000000000000000000</md5_cksum>\n"
                 "    <nbytes>12</nbytes>\n</file_info>\n<workunit>\n    <file_ref>\n"
                 "        <file_name>in_%d</file_name>\n        <open_name>in</open_name>\n"
                 "        <copy_file/>\n    </file_ref>\n</workunit>\n",
                 i, i, i);
        wu.xml_doc = vs_xstrdup(doc);
        if ((rc = vs_store_workunit_add(st, &wu)))
            die("workunit", rc);
        struct vs_result r = {.workunitid = wu.id, .appid = app.id};
        r.server_state = VS_RESULT_SERVER_STATE_UNSENT;
        snprintf(r.name, sizeof(r.name), "bench_wu_%d_0", i);
        snprintf(doc, sizeof(doc),
                 "<file_info>\n    <name>bench_wu_%d_0_r0</name>\n"
                 "    <url>http://127.0.0.1:1/bench/file_upload_handler</url>\n"
                 "    <max_nbytes>100000</max_nbytes>\n</file_info>\n<result>\n"
                 "    <file_ref>\n        <file_name>bench_wu_%d_0_r0</file_name>\n"
                 "        <open_name>out</open_name>\n        <copy_file/>\n    </file_ref>\n"
                 "</result>\n",
                 i, i);
        r.xml_doc_in = vs_xstrdup(doc);
        if ((rc = vs_store_result_add(st, &r)))
            die("result", rc);
        vs_workunit_cleanup(&wu);
        vs_result_cleanup(&r);
    }
    if ((rc = vs_store_commit(st)))
        die("commit", rc);
    vs_store_close(st);
    printf("project: %d jobs created in %.1f s (%s)\n", njobs, now_s() - t0, c->store_url);
}

/* ---------------- the feeder ---------------- */

struct feeder {
    struct vs_sched *s;
    atomic_bool stop;
};

static void *feeder_main(void *arg)
{
    struct feeder *f = arg;
    while (!atomic_load(&f->stop)) {
        size_t added = 0;
        double t0 = now_s();
        if (vs_sched_refill(f->s, &added) != 0)
            fprintf(stderr, "bench_server: refill failed\n");
        if (getenv("BENCH_DEBUG") && added)
            fprintf(stderr, "refill: %zu jobs in %.3f s\n", added, now_s() - t0);
        struct timespec ts = {.tv_sec = 0, .tv_nsec = added ? 1000000 : 10000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* The HTTP layer's own ceiling: a handler that answers at once with an
 * empty reply (no parse, no store), on the same front end. */
static int empty_sched(void *ctx, const char *body, size_t len, const char *peer,
                       struct vs_buf *out)
{
    (void)ctx;
    (void)body;
    (void)len;
    (void)peer;
    return vs_buf_puts(out, "<scheduler_reply>\n</scheduler_reply>\n") == 0 ? 200 : 500;
}

/* Slowloris beside the honest hosts: n connections, each dripping a
 * request head one byte every 3 s, from a thread of their own (its CPU is
 * taken out of the server's figure). */
struct slowloris {
    int *fds;
    int n;
    atomic_bool stop;
    pthread_t t;
};

static void *slowloris_main(void *arg)
{
    struct slowloris *sl = arg;
    static const char head[] = "POST /bench/cgi HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
                               "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    unsigned step = 0;
    while (!atomic_load(&sl->stop)) {
        /* Every 100 ms a thirtieth of them: each one byte per 3 s. */
        for (int i = (int)(step % 30); i < sl->n; i += 30) {
            if (sl->fds[i] >= 0) {
                size_t k = (step / 30) % (sizeof(head) - 1);
                if (send(sl->fds[i], head + k, 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
                    errno != EAGAIN) {
                    close(sl->fds[i]);
                    sl->fds[i] = -1;
                }
            }
        }
        step++;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static int slowloris_start(struct slowloris *sl, uint16_t port, int n)
{
    sl->fds = vs_xmalloc((size_t)n * sizeof(int));
    sl->n = n;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int open = 0;
    for (int i = 0; i < n; i++) {
        sl->fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (sl->fds[i] >= 0 && connect(sl->fds[i], (struct sockaddr *)&a, sizeof(a)) != 0) {
            close(sl->fds[i]);
            sl->fds[i] = -1;
        }
        open += sl->fds[i] >= 0;
    }
    atomic_store(&sl->stop, false);
    pthread_create(&sl->t, NULL, slowloris_main, sl);
    return open;
}

static double slowloris_cpu(struct slowloris *sl)
{
    clockid_t id;
    return pthread_getcpuclockid(sl->t, &id) == 0 ? cpu_s(id) : 0;
}

static void slowloris_stop(struct slowloris *sl)
{
    atomic_store(&sl->stop, true);
    pthread_join(sl->t, NULL);
    for (int i = 0; i < sl->n; i++)
        if (sl->fds[i] >= 0)
            close(sl->fds[i]);
    vs_free(sl->fds);
}

static void print_row(const char *label, int64_t conc, const struct phase_result *pr)
{
    double n = pr->rpcs ? (double)pr->rpcs : 1;
    printf("%6" PRId64 " %8" PRIu64 " %8.0f %8.0f %9.0f %8.2f %8.2f %6" PRIu64 " %7" PRIu64
           " %11.0f %11.0f%s\n",
           conc, pr->rpcs, (double)pr->rpcs / pr->secs, (double)pr->jobs / pr->secs,
           (double)pr->reports / pr->secs, pr->p50 * 1e3, pr->p99 * 1e3, pr->errors, pr->jobs,
           pr->cpu_server / n * 1e6, pr->cpu_client / n * 1e6, label);
    if (pr->stalled)
        printf("       (%" PRIu64 " RPCs had no reply after %.0f s and were given up)\n",
               pr->stalled, RPC_STALL_SECS);
    fflush(stdout);
}

/*
 * --target: the hosts against servers already running on 127.0.0.1 (host i
 * to the i-th port of the list, round robin), e.g. `volsched serve`
 * instances or nginx in front of them, host i as the (i % n)-th of the n
 * accounts of auth (the project's own users; the project must have an
 * x86_64-pc-linux-gnu app version and let an account add this many hosts). One row per concurrency;
 * with journal every job received and report acknowledged is appended to that file (loadgen.h) for
 * the caller to check against the store.
 */
static int run_target(const char *ports, const char *path, const char *auth, const char *journal,
                      char *conc_list, double secs, int64_t max_rpcs)
{
    struct lg_target tg = {.path = path};
    char list[256];
    snprintf(list, sizeof(list), "%s", ports);
    char *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int64_t p;
        if (tg.nports == LG_MAX_TARGETS || vs_parse_int64(tok, &p) != 0 || p < 1 || p > 65535) {
            fprintf(stderr, "bench_server: bad --target port '%s' (at most %d ports)\n", tok,
                    LG_MAX_TARGETS);
            return 2;
        }
        tg.ports[tg.nports++] = (uint16_t)p;
    }
    enum { MAX_ACCOUNTS = 256 };
    size_t klen = strlen(AUTH);
    size_t alen = auth ? strlen(auth) : 0;
    if (tg.nports == 0 || alen < klen || (alen + 1) % (klen + 1) != 0 ||
        (alen + 1) / (klen + 1) > MAX_ACCOUNTS) {
        fprintf(stderr,
                "bench_server: --target needs ports and --auth KEY[,KEY...] (keys of %zu "
                "characters, at most %d)\n",
                klen, MAX_ACCOUNTS);
        return 2;
    }
    tg.naccounts = (int)((alen + 1) / (klen + 1));
    char tpath[512];
    snprintf(tpath, sizeof(tpath), "%s/tests/data/boinc/sched_request_02.xml", VS_SOURCE_DIR);
    char *doc = read_file(tpath);
    struct tmpl *tp = vs_xcalloc((size_t)tg.naccounts, sizeof(*tp));
    for (int k = 0; k < tg.naccounts; k++) {
        const char *key = auth + (size_t)k * (klen + 1);
        if (k > 0 && key[-1] != ',') {
            fprintf(stderr, "bench_server: --auth: keys are separated by commas\n");
            return 2;
        }
        /* The sample's account becomes the project's (same length: in place). */
        char *d = vs_xstrdup(doc);
        for (char *q = strstr(d, AUTH); q; q = strstr(q, AUTH))
            memcpy(q, key, klen);
        tmpl_cut(&tp[k], d);
        vs_free(d);
    }
    FILE *j = NULL;
    if (journal && !(j = fopen(journal, "a"))) {
        fprintf(stderr, "bench_server: cannot open %s\n", journal);
        return 1;
    }
    tg.journal = j;
    printf("%6s %8s %8s %8s %9s %8s %8s %6s %7s %11s %11s\n", "hosts", "rpcs", "rpcs/s", "jobs/s",
           "reports/s", "p50_ms", "p99_ms", "errors", "jobs", "srv_cpu_us", "cli_cpu_us");
    save = NULL;
    for (char *tok = strtok_r(conc_list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int64_t conc;
        if (vs_parse_int64(tok, &conc) != 0 || conc < 1 || conc > 4096)
            continue;
        struct phase_result pr;
        run_phase_on(&tg, tp, (int)conc, secs, (uint64_t)max_rpcs, &pr);
        print_row("", conc, &pr);
    }
    printf("(srv_cpu_us is 0 here: the servers are other processes)\n");
    if (j)
        fclose(j);
    for (int k = 0; k < tg.naccounts; k++)
        tmpl_cleanup(&tp[k]);
    vs_free(tp);
    vs_free(doc);
    return 0;
}

/* What the store's commits survive, in words: SQLite's synchronous mode,
 * or what the PostgreSQL server says it runs with (its settings, not
 * ours: the bench changes none of them). */
static void durability_of(const char *url, bool sync_full, char *out, size_t n)
{
    if (!vs_str_has_prefix(url, "postgresql:") && !vs_str_has_prefix(url, "postgres:")) {
        snprintf(out, n, "%s",
                 sync_full ? "synchronous=FULL (power loss)"
                           : "synchronous=NORMAL (process crash)");
        return;
    }
    snprintf(out, n, "PostgreSQL's (could not ask it)");
    PGconn *c = PQconnectdb(url);
    if (PQstatus(c) == CONNECTION_OK) {
        PGresult *r = PQexec(c, "SELECT current_setting('fsync'), "
                                "current_setting('synchronous_commit'), "
                                "current_setting('wal_sync_method')");
        if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
            bool durable =
                strcmp(PQgetvalue(r, 0, 0), "on") == 0 && strcmp(PQgetvalue(r, 0, 1), "on") == 0;
            snprintf(out, n, "PostgreSQL fsync=%s, synchronous_commit=%s, wal_sync_method=%s (%s)",
                     PQgetvalue(r, 0, 0), PQgetvalue(r, 0, 1), PQgetvalue(r, 0, 2),
                     durable ? "a commit is fsynced before its reply"
                             : "NOT durable: commits may be lost");
        }
        PQclear(r);
    }
    PQfinish(c);
}

int main(int argc, char **argv)
{
    int64_t njobs = 0, max_rpcs = 40000, threads = 16; /* serve's default */
    double secs = 5;
    bool sync_full = false, keep = false, rules = true;
    int64_t direct = 0, commit_delay = 0, poll = 2, slow = 0;
    bool ceiling = false;
    char conc_list[128] = "1,64,512";
    const char *target = NULL, *sched_path = "/bench/cgi", *auth = NULL, *journal = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t x;
        if (strcmp(a, "--jobs") == 0 && v && vs_parse_int64(v, &njobs) == 0) {
            i++;
        } else if (strcmp(a, "--rpcs") == 0 && v && vs_parse_int64(v, &max_rpcs) == 0) {
            i++;
        } else if (strcmp(a, "--threads") == 0 && v && vs_parse_int64(v, &threads) == 0) {
            i++;
        } else if (strcmp(a, "--secs") == 0 && v && vs_parse_int64(v, &x) == 0 && x > 0) {
            secs = (double)x;
            i++;
        } else if (strcmp(a, "--conc") == 0 && v) {
            snprintf(conc_list, sizeof(conc_list), "%s", v);
            i++;
        } else if (strcmp(a, "--commit-delay") == 0 && v && vs_parse_int64(v, &commit_delay) == 0) {
            i++;
        } else if (strcmp(a, "--direct") == 0 && v && vs_parse_int64(v, &direct) == 0) {
            i++;
        } else if (strcmp(a, "--poll") == 0 && v && vs_parse_int64(v, &poll) == 0) {
            i++;
        } else if (strcmp(a, "--slowloris") == 0 && v && vs_parse_int64(v, &slow) == 0) {
            i++;
        } else if (strcmp(a, "--target") == 0 && v) {
            target = v;
            i++;
        } else if (strcmp(a, "--path") == 0 && v) {
            sched_path = v;
            i++;
        } else if (strcmp(a, "--auth") == 0 && v) {
            auth = v;
            i++;
        } else if (strcmp(a, "--journal") == 0 && v) {
            journal = v;
            i++;
        } else if (strcmp(a, "--ceiling") == 0) {
            ceiling = true;
        } else if (strcmp(a, "--sync-full") == 0) {
            sync_full = true;
        } else if (strcmp(a, "--keep") == 0) {
            keep = true;
        } else if (strcmp(a, "--rules") == 0 && v && (!strcmp(v, "on") || !strcmp(v, "off"))) {
            rules = strcmp(v, "on") == 0;
            i++;
        } else {
            fprintf(stderr,
                    "usage: bench_server [--jobs N] [--secs S] [--rpcs N] [--threads T]"
                    " [--sync-full] [--conc a,b,c] [--commit-delay US] [--direct N]"
                    " [--keep] [--rules on|off] [--poll N] [--ceiling]"
                    " [--slowloris N]\n"
                    "       bench_server --target PORT[,PORT...] --path P --auth KEY[,KEY...]"
                    " [--journal FILE] [--conc a,b] [--secs S] [--rpcs N]\n");
            return 2;
        }
    }
    if (target)
        return run_target(target, sched_path, auth, journal, conc_list, secs, max_rpcs);
    if (njobs <= 0) {
        /* One job per RPC of every phase and of --direct, plus the cache's
         * share, so that no phase runs out of work. */
        int64_t nphases = 1;
        for (const char *q = conc_list; *q; q++)
            nphases += *q == ',';
        if (slow > 0)
            nphases *= 2;
        njobs = direct + nphases * max_rpcs + 4000;
    }
    char dir[] = "/tmp/vs_bench_server_XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    struct vs_project_config cfg;
    make_project(&cfg, dir, (int)njobs, sync_full, rules);
    printf("work-send rules: %s\n", rules ? "all on" : "off (legacy checks only)");

    struct vs_sched_options so = {.cache_slots = 4000, .commit_delay_us = (int)commit_delay};
    struct vs_sched *s;
    int rc = vs_sched_create(&cfg, NULL, &so, &s);
    if (rc)
        die("sched", rc);
    struct feeder fd = {.s = s};
    pthread_t ft;
    pthread_create(&ft, NULL, feeder_main, &fd);
    struct vs_http_config hc = {.master_url = cfg.master_url,
                                .download_dir = dir,
                                .threads = (unsigned)threads,
                                .poll_threads = (unsigned)poll,
                                .sched = vs_sched_http,
                                .sched_ctx = s};
    struct vs_http *http;
    if ((rc = vs_http_start(&hc, "127.0.0.1", 0, &http)))
        die("http", rc);
    uint16_t port = (uint16_t)vs_http_port(http);
    char path[512];
    snprintf(path, sizeof(path), "%s/tests/data/boinc/sched_request_02.xml", VS_SOURCE_DIR);
    char *tmpl = read_file(path);
    struct tmpl tp;
    tmpl_cut(&tp, tmpl);
    /* Let the feeder fill the cache before timing. */
    double tw = now_s();
    for (;;) {
        struct vs_sched_stats ss0;
        vs_sched_get_stats(s, &ss0);
        if (ss0.cache_present >= (size_t)(njobs < 4000 ? njobs : 4000) || now_s() - tw > 60)
            break;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 50000000};
        nanosleep(&ts, NULL);
    }
    printf("job cache: filled in %.2f s\n", now_s() - tw);

    uint64_t total_jobs = 0, total_reports = 0;
    if (direct > 0) {
        /* The handler alone, on this thread: its CPU cost per RPC without
         * HTTP, threads or the load generator. Hosts are new each time
         * (hostid 0), as in the first RPC of an attach. */
        struct host h = {0};
        vs_buf_init(&h.req, 1u << 20);
        struct vs_buf out;
        vs_buf_init(&out, 16u << 20);
        uint64_t jobs = 0;
        double t1 = now_s(), c1 = cpu_s(CLOCK_THREAD_CPUTIME_ID);
        for (int64_t k = 0; k < direct; k++) {
            build_request(&h, &tp);
            vs_buf_reset(&out);
            vs_sched_handle(s, h.req.data, h.req.len, "127.0.0.1", (int64_t)time(NULL), &out);
            for (const char *q = strstr(vs_buf_str(&out), "<result>"); q;
                 q = strstr(q + 8, "<result>"))
                jobs++;
        }
        double dt = now_s() - t1, dc = cpu_s(CLOCK_THREAD_CPUTIME_ID) - c1;
        printf("direct: %" PRId64 " RPCs in %.2f s on one thread: %.1f us/RPC wall, %.1f us/RPC "
               "CPU, %" PRIu64 " jobs\n",
               direct, dt, dt / (double)direct * 1e6, dc / (double)direct * 1e6, jobs);
        total_jobs += jobs;
        vs_buf_cleanup(&h.req);
        vs_buf_cleanup(&out);
    }
    char dura[256];
    durability_of(cfg.store_url, sync_full, dura, sizeof(dura));
    printf("server: %" PRId64 " handler threads, %" PRId64
           " polling threads, keep-alive, durability %s, request %zu bytes\n",
           threads, poll, dura, strlen(tmpl));
    printf("%6s %8s %8s %8s %9s %8s %8s %6s %7s %11s %11s\n", "hosts", "rpcs", "rpcs/s", "jobs/s",
           "reports/s", "p50_ms", "p99_ms", "errors", "jobs", "srv_cpu_us", "cli_cpu_us");
    int64_t concs[16];
    double rate[16];
    int nconc = 0;
    char *save = NULL;
    for (char *tok = strtok_r(conc_list, ",", &save); tok && nconc < 16;
         tok = strtok_r(NULL, ",", &save)) {
        int64_t conc;
        if (vs_parse_int64(tok, &conc) != 0 || conc < 1 || conc > 4096)
            continue;
        struct phase_result pr;
        run_phase("/bench/cgi", port, &tp, (int)conc, secs, (uint64_t)max_rpcs, &pr);
        total_jobs += pr.jobs;
        total_reports += pr.reports;
        print_row("", conc, &pr);
        concs[nconc] = conc;
        rate[nconc++] = (double)pr.rpcs / pr.secs;
    }
    if (slow > 0) {
        /* The same phases again beside slowloris connections. */
        struct slowloris sl;
        int open = slowloris_start(&sl, port, (int)slow);
        struct timespec ts = {.tv_sec = 1, .tv_nsec = 0};
        nanosleep(&ts, NULL);
        printf("with %d slowloris connections (of %" PRId64 ") dripping a head byte every 3 s:\n",
               open, slow);
        for (int k = 0; k < nconc; k++) {
            struct phase_result pr;
            double c0 = slowloris_cpu(&sl);
            run_phase("/bench/cgi", port, &tp, (int)concs[k], secs, (uint64_t)max_rpcs, &pr);
            pr.cpu_server -= slowloris_cpu(&sl) - c0;
            total_jobs += pr.jobs;
            total_reports += pr.reports;
            char label[64];
            double r = (double)pr.rpcs / pr.secs;
            snprintf(label, sizeof(label), "  slowloris: %.0f%% of the rate without",
                     100 * r / rate[k]);
            print_row(label, concs[k], &pr);
        }
        slowloris_stop(&sl);
    }
    if (ceiling) {
        /* The HTTP layer alone, same front end and threads, same POSTs. */
        struct vs_http_config ec = hc;
        ec.sched = empty_sched;
        ec.sched_ctx = NULL;
        struct vs_http *eh;
        if ((rc = vs_http_start(&ec, "127.0.0.1", 0, &eh)))
            die("http (empty handler)", rc);
        printf("the HTTP layer's ceiling (a handler answering an empty reply at once):\n");
        for (int k = 0; k < nconc; k++) {
            struct phase_result pr;
            run_phase("/bench/cgi", vs_http_port(eh), &tp, (int)concs[k], secs, (uint64_t)max_rpcs,
                      &pr);
            char label[64];
            double r = (double)pr.rpcs / pr.secs;
            snprintf(label, sizeof(label), "  ceiling: the scheduler runs at %.0f%% of it",
                     100 * rate[k] / r);
            print_row(label, concs[k], &pr);
        }
        vs_http_stop(eh);
    }
    struct vs_sched_stats ss;
    vs_sched_get_stats(s, &ss);
    printf("srv_cpu_us / cli_cpu_us: CPU microseconds per RPC used by the server threads and by "
           "the load generator\n");
    printf("group commit: %" PRIu64 " batches for %" PRIu64 " RPCs (avg %.1f, max %" PRIu64
           " per transaction, %" PRIu64 " run again with savepoints)\n",
           ss.commit_batches, ss.commit_items,
           ss.commit_batches ? (double)ss.commit_items / (double)ss.commit_batches : 0,
           ss.commit_max_batch, ss.commit_redone);

    vs_http_stop(http);
    atomic_store(&fd.stop, true);
    pthread_join(ft, NULL);
    vs_sched_destroy(s);

    /* Every job a host received must be recorded as sent. */
    struct vs_store *st;
    int64_t in_progress = -1, over = -1;
    if (vs_store_open(cfg.store_url, 0, NULL, &st) == 0) {
        if (vs_store_count_results(st, 0, VS_RESULT_SERVER_STATE_IN_PROGRESS, &in_progress) != 0)
            in_progress = -1;
        if (vs_store_count_results(st, 0, VS_RESULT_SERVER_STATE_OVER, &over) != 0)
            over = -1;
        vs_store_close(st);
    }
    /* Every job sent is IN_PROGRESS or, once its report was acknowledged, OVER. */
    bool ok = in_progress >= 0 && over == (int64_t)total_reports &&
              in_progress + over == (int64_t)total_jobs;
    printf("durability: hosts received %" PRIu64 " jobs and had %" PRIu64
           " reports acknowledged; store has %" PRId64 " IN_PROGRESS + %" PRId64 " OVER: %s\n",
           total_jobs, total_reports, in_progress, over, ok ? "match" : "MISMATCH");
    vs_free(tmpl);
    tmpl_cleanup(&tp);
    if (!keep) {
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "bench_server: could not remove %s\n", dir);
    } else {
        printf("kept %s\n", dir);
    }
    return ok ? 0 : 1;
}
