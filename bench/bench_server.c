/*
 * bench_server: scheduler throughput under many simulated hosts.
 *
 * It builds a throwaway project in a temporary directory (one app version,
 * N workunits with one UNSENT result each), serves it in-process exactly as
 * `volsched serve` does (HTTP front end, job cache with a feeder thread,
 * group-committed claims into SQLite), and plays many hosts against it over
 * loopback with libcurl's multi interface in one thread. Each host sends the
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
 *                     [--direct N] [--keep] [--rules on|off]
 *
 * --rules on (default) switches every work-send rule on (none binding for
 * this load); off leaves the checks the scheduler had before them.
 *
 * --direct N first times N calls of the handler on one thread, without HTTP
 * (each as a new host), to show its own cost.
 */
#include <curl/curl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "server/http.h"
#include "server/sched.h"
#include "store/project.h"
#include "store/store.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/str.h"

#define AUTH "0123456789abcdef0123456789abcdef" /* the sample's authenticator */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

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

/* ---------------- the hosts ---------------- */

struct host {
    CURL *easy;
    int64_t hostid;
    int64_t seqno;
    struct vs_buf req, reply;
    struct vs_buf got; /* names of the jobs of the last reply, '\n'-terminated */
    double t_sent;
};

/* Appends a report of every job in h->got: the shape of the 7.20 client's
 * <result> (tests/data/boinc/sched_request_04.xml), files uploaded. */
static int append_reports(struct host *h)
{
    const char *p = h->got.data;
    for (size_t off = 0; p && off < h->got.len;) {
        const char *nl = memchr(p + off, '\n', h->got.len - off);
        if (!nl)
            break;
        int n = (int)(nl - (p + off));
        char tmp[1024];
        int k = snprintf(tmp, sizeof(tmp),
                         "<result>\n    <name>%.*s</name>\n"
                         "    <final_cpu_time>19.5</final_cpu_time>\n"
                         "    <final_elapsed_time>20.1</final_elapsed_time>\n"
                         "    <exit_status>0</exit_status>\n    <state>5</state>\n"
                         "    <platform>x86_64-pc-linux-gnu</platform>\n"
                         "    <version_num>100</version_num>\n"
                         "    <app_version_num>100</app_version_num>\n<file_info>\n"
                         "    <name>%.*s_r0</name>\n    <nbytes>12.000000</nbytes>\n"
                         "    <max_nbytes>100000.000000</max_nbytes>\n"
                         "    <md5_cksum>00000000000000000000000000000000</md5_cksum>\n"
                         "</file_info>\n</result>\n",
                         n, p + off, n, p + off);
        if (k < 0 || (size_t)k >= sizeof(tmp) || vs_buf_append(&h->req, tmp, (size_t)k) != 0)
            return -1;
        off = (size_t)(nl - p) + 1;
    }
    return 0;
}

/* Remembers the names of the jobs in a reply (to report them next time);
 * returns how many there were. */
static uint64_t collect_jobs(struct host *h, const char *body)
{
    uint64_t n = 0;
    vs_buf_reset(&h->got);
    for (const char *q = strstr(body, "<result>"); q; q = strstr(q + 8, "<result>")) {
        n++;
        const char *a = strstr(q, "<name>"), *b = a ? strstr(a, "</name>") : NULL;
        if (a && b &&
            (vs_buf_append(&h->got, a + 6, (size_t)(b - a - 6)) != 0 ||
             vs_buf_puts(&h->got, "\n") != 0))
            exit(1);
    }
    return n;
}

/* The sample request with this host's id, sequence number and a one-job
 * work request; hosts that have an id also echo the signing key. */
static void build_request(struct host *h, const char *tmpl)
{
    vs_buf_reset(&h->req);
    const char *p = tmpl;
    struct {
        const char *tag;
        char value[64];
    } subs[4];
    snprintf(subs[0].value, sizeof(subs[0].value), "%" PRId64, h->hostid);
    subs[0].tag = "<hostid>";
    snprintf(subs[1].value, sizeof(subs[1].value), "%" PRId64, h->seqno);
    subs[1].tag = "<rpc_seqno>";
    snprintf(subs[2].value, sizeof(subs[2].value), "20.000000");
    subs[2].tag = "<cpu_req_secs>";
    snprintf(subs[3].value, sizeof(subs[3].value), "1.000000");
    subs[3].tag = "<cpu_req_instances>";
    for (int i = 0; i < 4; i++) {
        size_t tl = strlen(subs[i].tag);
        const char *at = strstr(p, subs[i].tag);
        const char *end = at ? strchr(at + tl, '<') : NULL;
        if (!at || !end)
            exit(1);
        if (vs_buf_append(&h->req, p, (size_t)(at - p) + tl) != 0 ||
            vs_buf_puts(&h->req, subs[i].value) != 0)
            exit(1);
        p = end;
    }
    /* The reports go before </scheduler_request>. */
    const char *tail = strstr(p, "</scheduler_request>");
    if (!tail || vs_buf_append(&h->req, p, (size_t)(tail - p)) != 0 || append_reports(h) != 0 ||
        vs_buf_puts(&h->req, tail) != 0)
        exit(1);
    if (h->hostid == 0) {
        /* The template echoes a key; a new client has none yet. */
        char *k = strstr(h->req.data, "<code_sign_key>");
        char *ke = k ? strstr(k, "</code_sign_key>\n") : NULL;
        if (k && ke)
            memmove(k, ke + 17, strlen(ke + 17) + 1);
        h->req.len = strlen(h->req.data);
    }
}

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
    struct host *h = ud;
    if (vs_buf_append(&h->reply, ptr, size * nmemb) != 0)
        return 0;
    return size * nmemb;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

struct phase_result {
    uint64_t rpcs, jobs, reports, errors, new_hosts;
    double secs, p50, p99;
    double cpu_server, cpu_client; /* CPU seconds used during the phase */
};

static void send_one(CURLM *m, struct host *h, const char *url, const char *tmpl)
{
    build_request(h, tmpl);
    vs_buf_reset(&h->reply);
    curl_easy_setopt(h->easy, CURLOPT_URL, url);
    curl_easy_setopt(h->easy, CURLOPT_POSTFIELDS, h->req.data);
    curl_easy_setopt(h->easy, CURLOPT_POSTFIELDSIZE, (long)h->req.len);
    h->t_sent = now_s();
    curl_multi_add_handle(m, h->easy);
}

static void run_phase(const char *url, const char *tmpl, int conc, double secs, uint64_t max_rpcs,
                      struct phase_result *out)
{
    memset(out, 0, sizeof(*out));
    CURLM *m = curl_multi_init();
    curl_multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)conc);
    struct host *hosts = vs_xcalloc((size_t)conc, sizeof(*hosts));
    size_t lat_cap = 1u << 20, nlat = 0;
    double *lat = vs_xmalloc(lat_cap * sizeof(*lat));
    struct curl_slist *hdr = curl_slist_append(NULL, "Expect:");
    hdr = curl_slist_append(hdr, "Content-Type: application/x-www-form-urlencoded");
    double t0 = now_s(), t_end = t0 + secs;
    double c_proc0 = cpu_s(CLOCK_PROCESS_CPUTIME_ID), c_me0 = cpu_s(CLOCK_THREAD_CPUTIME_ID);
    uint64_t started = 0;
    for (int i = 0; i < conc; i++) {
        struct host *h = &hosts[i];
        h->easy = curl_easy_init();
        vs_buf_init(&h->req, 1u << 20);
        vs_buf_init(&h->reply, 16u << 20);
        vs_buf_init(&h->got, 1u << 20);
        curl_easy_setopt(h->easy, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(h->easy, CURLOPT_WRITEDATA, h);
        curl_easy_setopt(h->easy, CURLOPT_PRIVATE, h);
        curl_easy_setopt(h->easy, CURLOPT_HTTPHEADER, hdr);
        curl_easy_setopt(h->easy, CURLOPT_NOPROXY, "*");
        curl_easy_setopt(h->easy, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h->easy, CURLOPT_USERAGENT, "BOINC client (x86_64-pc-linux-gnu 7.20.5)");
        send_one(m, h, url, tmpl);
        started++;
    }
    int running = conc;
    while (running > 0) {
        curl_multi_perform(m, &running);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left)) != NULL) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            struct host *h;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&h);
            double t = now_s();
            long status = 0;
            curl_easy_getinfo(h->easy, CURLINFO_RESPONSE_CODE, &status);
            CURLcode res = msg->data.result;
            curl_multi_remove_handle(m, h->easy);
            out->rpcs++;
            if (nlat < lat_cap)
                lat[nlat++] = t - h->t_sent;
            const char *body = h->reply.data ? h->reply.data : "";
            if (res != CURLE_OK || status != 200 || !strstr(body, "</scheduler_reply>")) {
                out->errors++;
            } else {
                const char *hid = strstr(body, "<hostid>");
                if (hid) {
                    int64_t id = 0;
                    char tmp[32];
                    size_t k = 0;
                    for (const char *q = hid + 8; *q >= '0' && *q <= '9' && k < 20; q++)
                        tmp[k++] = *q;
                    tmp[k] = '\0';
                    if (vs_parse_int64(tmp, &id) == 0 && id > 0) {
                        h->hostid = id;
                        h->seqno = 0;
                        out->new_hosts++;
                    }
                } else {
                    h->seqno++;
                }
                for (const char *q = strstr(body, "<result_ack>"); q;
                     q = strstr(q + 12, "<result_ack>"))
                    out->reports++;
                uint64_t got = collect_jobs(h, body);
                out->jobs += got;
                static int shown;
                if (got == 0 && getenv("BENCH_DEBUG") && shown++ < 2)
                    fprintf(stderr, "reply without a job:\n%s\n", body);
            }
            if (t < t_end && started < max_rpcs) {
                send_one(m, h, url, tmpl);
                started++;
                running++;
            }
        }
        if (running > 0)
            curl_multi_poll(m, NULL, 0, 100, NULL);
    }
    out->secs = now_s() - t0;
    /* This thread is the load generator; every other thread is the server
     * (HTTP workers, group commit, feeder). */
    out->cpu_client = cpu_s(CLOCK_THREAD_CPUTIME_ID) - c_me0;
    out->cpu_server = cpu_s(CLOCK_PROCESS_CPUTIME_ID) - c_proc0 - out->cpu_client;
    qsort(lat, nlat, sizeof(*lat), cmp_double);
    if (nlat) {
        out->p50 = lat[nlat / 2];
        out->p99 = lat[(size_t)((double)nlat * 0.99)];
    }
    for (int i = 0; i < conc; i++) {
        curl_easy_cleanup(hosts[i].easy);
        vs_buf_cleanup(&hosts[i].req);
        vs_buf_cleanup(&hosts[i].reply);
        vs_buf_cleanup(&hosts[i].got);
    }
    curl_slist_free_all(hdr);
    vs_free(hosts);
    vs_free(lat);
    curl_multi_cleanup(m);
}

int main(int argc, char **argv)
{
    int64_t njobs = 0, max_rpcs = 40000, threads = 4;
    double secs = 5;
    bool sync_full = false, keep = false, rules = true;
    int64_t direct = 0, commit_delay = 0;
    char conc_list[128] = "1,64,512";
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
        } else if (strcmp(a, "--sync-full") == 0) {
            sync_full = true;
        } else if (strcmp(a, "--keep") == 0) {
            keep = true;
        } else if (strcmp(a, "--rules") == 0 && v && (!strcmp(v, "on") || !strcmp(v, "off"))) {
            rules = strcmp(v, "on") == 0;
            i++;
        } else {
            fprintf(stderr, "usage: bench_server [--jobs N] [--secs S] [--rpcs N] [--threads T]"
                            " [--sync-full] [--conc a,b,c] [--commit-delay US] [--direct N]"
                            " [--keep] [--rules on|off]\n");
            return 2;
        }
    }
    if (njobs <= 0) {
        /* One job per RPC of every phase and of --direct, plus the cache's
         * share, so that no phase runs out of work. */
        int64_t nphases = 1;
        for (const char *q = conc_list; *q; q++)
            nphases += *q == ',';
        njobs = direct + nphases * max_rpcs + 4000;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
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
                                .sched = vs_sched_http,
                                .sched_ctx = s};
    struct vs_http *http;
    if ((rc = vs_http_start(&hc, "127.0.0.1", 0, &http)))
        die("http", rc);
    char url[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/bench/cgi", (unsigned)vs_http_port(http));
    char path[512];
    snprintf(path, sizeof(path), "%s/tests/data/boinc/sched_request_02.xml", VS_SOURCE_DIR);
    char *tmpl = read_file(path);
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
            build_request(&h, tmpl);
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
    printf("server: %" PRId64 " HTTP threads, durability %s, request %zu bytes\n", threads,
           sync_full ? "synchronous=FULL (power loss)" : "synchronous=NORMAL (process crash)",
           strlen(tmpl));
    printf("%6s %8s %8s %8s %9s %8s %8s %6s %7s %11s %11s\n", "hosts", "rpcs", "rpcs/s", "jobs/s",
           "reports/s", "p50_ms", "p99_ms", "errors", "jobs", "srv_cpu_us", "cli_cpu_us");
    char *save = NULL;
    for (char *tok = strtok_r(conc_list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int64_t conc;
        if (vs_parse_int64(tok, &conc) != 0 || conc < 1 || conc > 4096)
            continue;
        struct phase_result pr;
        run_phase(url, tmpl, (int)conc, secs, (uint64_t)max_rpcs, &pr);
        total_jobs += pr.jobs;
        total_reports += pr.reports;
        double n = pr.rpcs ? (double)pr.rpcs : 1;
        printf("%6" PRId64 " %8" PRIu64 " %8.0f %8.0f %9.0f %8.2f %8.2f %6" PRIu64 " %7" PRIu64
               " %11.0f %11.0f\n",
               conc, pr.rpcs, (double)pr.rpcs / pr.secs, (double)pr.jobs / pr.secs,
               (double)pr.reports / pr.secs, pr.p50 * 1e3, pr.p99 * 1e3, pr.errors, pr.jobs,
               pr.cpu_server / n * 1e6, pr.cpu_client / n * 1e6);
        fflush(stdout);
    }
    struct vs_sched_stats ss;
    vs_sched_get_stats(s, &ss);
    printf("srv_cpu_us / cli_cpu_us: CPU microseconds per RPC used by the server threads and by "
           "the load generator\n");
    printf("group commit: %" PRIu64 " batches for %" PRIu64 " RPCs (avg %.1f, max %" PRIu64
           " per transaction)\n",
           ss.commit_batches, ss.commit_items,
           ss.commit_batches ? (double)ss.commit_items / (double)ss.commit_batches : 0,
           ss.commit_max_batch);

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
    if (!keep) {
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "bench_server: could not remove %s\n", dir);
    } else {
        printf("kept %s\n", dir);
    }
    curl_global_cleanup();
    return ok ? 0 : 1;
}
