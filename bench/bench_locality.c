/*
 * bench_locality: locality scheduling (seed 001) against plain scheduling of
 * the same jobs, through the real request handler in-process (no HTTP),
 * over a real SQLite store.
 *
 * The project: FILES big input files of 100 MB, WUS workunits per file with
 * target_nresults 2 (two results each, one_result_per_user_per_wu), created
 * in shuffled order (as a generator working on many files at once would;
 * creation order in file order would hand plain scheduling locality for
 * free). The store is built twice from the same jobs: for locality as
 * create_work and the transitioner store a full-locality app's rows (ids
 * placed by file, store_cluster.c; BENCH_LOCALITY_NO_NEAR=1 leaves
 * that out, to measure it), and for plain in creation order, as a project
 * without locality stores them. A population of HOSTS hosts, one user each, that keep their sticky
 * files between requests exactly as the BOINC client does: a host lists what
 * it holds, downloads an input it lacks, drops a file when told
 * (<delete_file_info>). Hosts ask in turn (sweeps over the population), each
 * request for JOBS jobs' worth of work, until the work is gone. With
 * locality on, `volsched locality-ws`'s pass keeps the working set at
 * ACTIVE / 2 files (seed 001's N/M), run every 100 requests.
 *
 * Reported: bytes of big files downloaded per completed (sent) result,
 * against the lower bound (each file sent to M = 2 hosts: FILES x 2 x 100 MB
 * over all results), against the population's bound (if each asking host
 * gets its share, a file needs at least max(M, active / FILES) hosts) and
 * against plain scheduling; server CPU per request
 * (the handler plus a feeder step before each request, as serve's feeder
 * loop runs, in both modes) and requests per
 * second of that CPU, locality on vs off. Targets: within 1.2x of
 * the lower bound, >= 10x fewer bytes than plain, <= 2x the CPU per request.
 *
 *   bench_locality [--hosts N] [--files N] [--wus N] [--jobs N] [--batch N] [--active N]
 *                  [--disk-gb N] [--sorted] [--reps N] [--seed N]
 *                   --batch N: workunits are made in blocks of N of one file (default 1)
 *                   --active N: only the first N hosts ask (default all); the
 *                     working set is N / 2 files
 *                   --disk-gb N: the hosts report N GB of free disk (default: the
 *                     captured request's 84 GB of 271 GB)
 *                   --sorted: <locality_scheduling_sorted_order/> (picks in turn)
 *   bench_locality --full      10,000 hosts, 1,000 files, 50 WUs (the size)
 *
 * The default size (2,000 hosts, 200 files) runs in seconds on a shared
 * 2-core machine; both runs are in one process, one after the other.
 */
#define BENCH_NAME "bench_locality"
#include "bench_util.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/locality.h"
#include "volsched/locality_daemons.h"
#include "volsched/proto.h"
#include "volsched/rng.h"
#include "volsched/sched.h"
#include "volsched/store_project.h"

#define FILE_BYTES 1e8 /* 100 MB */
#define M          2   /* target_nresults */
#define NOW0       1800000000
#define WS_EVERY   100 /* requests between working-set passes */

struct params {
    int hosts, files, wus, jobs, reps;
    int active;  /* hosts that ask (the first ones); 0: all */
    bool sorted; /* <locality_scheduling_sorted_order/>: working-set picks in turn */
    int batch;   /* workunits of one file created one after the other */
    int disk_gb; /* the hosts' free disk (0: the captured request's) */
    uint64_t seed;
};

struct host {
    int64_t hostid;
    int seqno;
    char auth[40];
    char **files; /* the big files it holds (sticky) */
    size_t nfiles, cap;
    char **results; /* the results it runs (never reported): listed in
                     * <other_results> as the client does, so that the
                     * server does not resend them as lost */
    size_t nresults, capresults;
};

struct run {
    double bytes;     /* big-file bytes downloaded */
    uint64_t results; /* results sent */
    uint64_t rpcs, rpcs_with_work;
    double cpu;       /* server CPU: handler (+ refills) */
    double sys;       /* of which in the kernel (system calls: file reads, trigger files) */
    double cpu_work;  /* of which in requests that got work */
    double ws_cpu;    /* working-set manager passes (locality) */
    uint64_t deletes; /* <delete_file_info>s received */
    size_t max_hosts_per_file;
    uint64_t searched; /* locality file searches */
    double mean_hosts_per_file;
};

static double sys_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------------ */
/* The project                                                               */
/* ------------------------------------------------------------------------ */

static void make_store(const struct params *pa, const char *url, bool near, struct vs_store **out)
{
    struct vs_store *s;
    bench_check(vs_store_open(url, VS_STORE_CREATE, NULL, &s), "store");
    struct vs_platform pf = {0};
    snprintf(pf.name, sizeof(pf.name), "x86_64-pc-linux-gnu");
    bench_check(vs_store_platform_add(s, &pf), "platform");
    struct vs_app app = {0};
    snprintf(app.name, sizeof(app.name), "einstein");
    app.locality_scheduling = VS_LOC_APP_FULL;
    bench_check(vs_store_app_add(s, &app), "app");
    struct vs_app_version av = {0};
    av.appid = app.id;
    av.platformid = pf.id;
    av.version_num = 100;
    av.avg_ncpus = 1;
    struct vs_app_version_file file = {.main_program = 1, .executable = 1, .nbytes = 17000};
    snprintf(file.name, sizeof(file.name), "einstein_100");
    snprintf(file.path, sizeof(file.path), "3f/einstein_100");
    snprintf(file.md5_cksum, sizeof(file.md5_cksum), "0123456789abcdef0123456789abcdef");
    file.file_signature = vs_xstrdup("aabbccdd\n.\n");
    av.files = &file;
    av.nfiles = 1;
    bench_check(vs_store_app_version_add(s, &av), "app version");
    vs_free(file.file_signature);
    bench_check(vs_store_begin(s), "begin");
    for (int h = 0; h < pa->hosts; h++) {
        struct vs_user u = {0};
        snprintf(u.name, sizeof(u.name), "u%d", h);
        snprintf(u.authenticator, sizeof(u.authenticator), "a%031d", h);
        bench_check(vs_store_user_add(s, &u), "user");
        vs_user_cleanup(&u);
    }
    /* Workunits in shuffled order of blocks of `batch` consecutive
     * workunits of one file (batch 1: fully shuffled). */
    size_t n = (size_t)pa->files * (size_t)pa->wus;
    size_t bs = (size_t)(pa->batch > 0 ? pa->batch : 1);
    size_t per_file = ((size_t)pa->wus + bs - 1) / bs, nblocks = (size_t)pa->files * per_file;
    uint32_t *blocks = vs_xcalloc(nblocks, sizeof(*blocks));
    for (size_t i = 0; i < nblocks; i++)
        blocks[i] = (uint32_t)i;
    struct vs_rng rng;
    vs_rng_seed(&rng, pa->seed);
    for (size_t i = nblocks; i > 1; i--) {
        size_t j = (size_t)vs_rng_below(&rng, i);
        uint32_t t = blocks[i - 1];
        blocks[i - 1] = blocks[j];
        blocks[j] = t;
    }
    uint32_t *order = vs_xcalloc(n, sizeof(*order));
    size_t nord = 0;
    for (size_t b = 0; b < nblocks; b++) {
        size_t f = blocks[b] / per_file, first = (blocks[b] % per_file) * bs;
        for (size_t w = first; w < first + bs && w < (size_t)pa->wus; w++)
            order[nord++] = (uint32_t)(f * (size_t)pa->wus + w);
    }
    vs_free(blocks);
    char doc[1024];
    for (size_t i = 0; i < n; i++) {
        int f = (int)(order[i] / (uint32_t)pa->wus), k = (int)(order[i] % (uint32_t)pa->wus);
        struct vs_workunit wu;
        vs_workunit_defaults(&wu);
        wu.appid = app.id;
        snprintf(wu.name, sizeof(wu.name), "big%04d__%d", f, k);
        wu.rsc_fpops_est = 3.6e12; /* an hour at 1 GFLOPS */
        wu.rsc_fpops_bound = 3.6e14;
        wu.rsc_memory_bound = 1e8;
        wu.rsc_disk_bound = FILE_BYTES + 1e7;
        wu.delay_bound = 14 * 86400;
        wu.min_quorum = M;
        wu.target_nresults = M;
        wu.transition_time = VS_TIME_NEVER;
        snprintf(doc, sizeof(doc),
                 "<file_info>\n    <name>big%04d</name>\n    <sticky/>\n    <report_on_rpc/>\n"
                 "    <url>http://127.0.0.1:1/b/download/1a/big%04d</url>\n"
                 "    <md5_cksum>00000000000000000000000000000000</md5_cksum>\n"
                 "    <nbytes>%.0f</nbytes>\n</file_info>\n"
                 "<workunit>\n    <file_ref>\n        <file_name>big%04d</file_name>\n"
                 "        <open_name>in</open_name>\n    </file_ref>\n</workunit>\n",
                 f, f, FILE_BYTES, f);
        wu.xml_doc = vs_xstrdup(doc);
        char fname[16];
        snprintf(fname, sizeof(fname), "big%04d", f);
        bench_check(vs_store_workunit_add_near(s, &wu, near ? fname : NULL), "workunit");
        for (int r = 0; r < M; r++) {
            struct vs_result res = {0};
            res.workunitid = wu.id;
            res.appid = app.id;
            res.server_state = VS_RESULT_SERVER_STATE_UNSENT;
            snprintf(res.name, sizeof(res.name), "big%04d__%d_%d", f, k, r);
            snprintf(doc, sizeof(doc),
                     "<file_info>\n    <name>%s_out</name>\n"
                     "    <url>http://127.0.0.1:1/b/file_upload_handler</url>\n"
                     "    <max_nbytes>100000</max_nbytes>\n</file_info>\n"
                     "<result>\n    <file_ref>\n        <file_name>%s_out</file_name>\n"
                     "        <open_name>out</open_name>\n    </file_ref>\n</result>\n",
                     res.name, res.name);
            res.xml_doc_in = vs_xstrdup(doc);
            bench_check(vs_store_result_add_near(s, &res, near ? fname : NULL), "result");
            vs_result_cleanup(&res);
        }
        vs_workunit_cleanup(&wu);
    }
    bench_check(vs_store_commit(s), "commit");
    vs_free(order);
    *out = s;
}

/* ------------------------------------------------------------------------ */
/* Requests                                                                  */
/* ------------------------------------------------------------------------ */

/* The minimal captured request, cut at the values a host changes. */
struct tmpl {
    char *text;
    const char *seg[7]; /* text between the cuts */
    size_t len[7];
};

/* The first four cuts are values; the last two are where the host's
 * results and sticky files go. */
#define NCUTS 6
static const char *const cut_at[NCUTS] = {
    "<authenticator>", "<hostid>",         "<rpc_seqno>",
    "<cpu_req_secs>",  "</other_results>", "</scheduler_request>",
};

/* Replaces the value of <tag> in text (owned) by v; exits when it lacks it. */
static char *set_value(char *text, const char *tag, double v)
{
    char open[64], close[64];
    snprintf(open, sizeof(open), "<%s>", tag);
    snprintf(close, sizeof(close), "</%s>", tag);
    char *a = strstr(text, open), *e = a ? strstr(a, close) : NULL;
    if (!a || !e) {
        fprintf(stderr, BENCH_NAME ": template lacks %s\n", open);
        exit(1);
    }
    a += strlen(open);
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    int rc = vs_buf_append(&b, text, (size_t)(a - text));
    rc |= vs_buf_printf(&b, "%.0f", v);
    rc |= vs_buf_puts(&b, e);
    bench_check(rc ? VS_ELIMIT : 0, "template");
    vs_free(text);
    return vs_buf_take(&b, NULL);
}

/* disk_gb > 0: the hosts report that much free disk (and at least as much
 * in total) instead of the captured request's 84 GB free of 271 GB. */
static void tmpl_load(struct tmpl *t, double disk_gb)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/tests/data/sched_request_minimal.xml", VS_SOURCE_DIR);
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        bench_check(vs_buf_append(&b, chunk, n), "read");
    fclose(f);
    t->text = vs_buf_take(&b, NULL);
    if (disk_gb > 0) {
        t->text = set_value(t->text, "d_free", disk_gb * 1e9);
        t->text = set_value(t->text, "d_total",
                            disk_gb * 1e9 > 270553174016.0 ? disk_gb * 1e9 : 270553174016.0);
    }
    const char *p = t->text;
    for (int i = 0; i < NCUTS; i++) {
        const char *at = strstr(p, cut_at[i]);
        if (!at) {
            fprintf(stderr, BENCH_NAME ": template lacks %s\n", cut_at[i]);
            exit(1);
        }
        at += i < 4 ? strlen(cut_at[i]) : 0;
        t->seg[i] = p;
        t->len[i] = (size_t)(at - p);
        /* skip the old value up to its closing tag */
        p = i < 4 ? strchr(at, '<') : at;
    }
    t->seg[NCUTS] = p;
    t->len[NCUTS] = strlen(p);
}

static void build(const struct tmpl *t, const struct host *h, double secs, struct vs_buf *b)
{
    vs_buf_reset(b);
    char v[4][64];
    snprintf(v[0], sizeof(v[0]), "%s", h->auth);
    snprintf(v[1], sizeof(v[1]), "%lld", (long long)h->hostid);
    snprintf(v[2], sizeof(v[2]), "%d", h->seqno);
    snprintf(v[3], sizeof(v[3]), "%f", secs);
    int rc = 0;
    for (int i = 0; i < 5; i++) {
        rc |= vs_buf_append(b, t->seg[i], t->len[i]);
        if (i < 4)
            rc |= vs_buf_puts(b, v[i]);
    }
    for (size_t k = 0; k < h->nresults; k++)
        rc |= vs_buf_printf(b,
                            "    <other_result>\n        <name>%s</name>\n"
                            "        <app_version>0</app_version>\n    </other_result>\n",
                            h->results[k]);
    rc |= vs_buf_append(b, t->seg[5], t->len[5]);
    for (size_t k = 0; k < h->nfiles; k++)
        rc |= vs_buf_printf(b,
                            "<file_info>\n    <name>%s</name>\n    <nbytes>%f</nbytes>\n"
                            "    <status>1</status>\n</file_info>\n",
                            h->files[k], FILE_BYTES);
    rc |= vs_buf_append(b, t->seg[6], t->len[6]);
    bench_check(rc ? VS_ELIMIT : 0, "request");
}

static bool host_has(const struct host *h, const char *f)
{
    for (size_t i = 0; i < h->nfiles; i++)
        if (strcmp(h->files[i], f) == 0)
            return true;
    return false;
}

static void host_add(struct host *h, const char *f)
{
    if (h->nfiles == h->cap) {
        h->cap = h->cap ? h->cap * 2 : 4;
        h->files = vs_xreallocarray(h->files, h->cap, sizeof(*h->files));
    }
    h->files[h->nfiles++] = vs_xstrdup(f);
}

static void host_run(struct host *h, const char *name)
{
    if (h->nresults == h->capresults) {
        h->capresults = h->capresults ? h->capresults * 2 : 8;
        h->results = vs_xreallocarray(h->results, h->capresults, sizeof(*h->results));
    }
    h->results[h->nresults++] = vs_xstrdup(name);
}

static void host_drop(struct host *h, const char *f)
{
    for (size_t i = 0; i < h->nfiles; i++) {
        if (strcmp(h->files[i], f) == 0) {
            vs_free(h->files[i]);
            h->files[i] = h->files[--h->nfiles];
            return;
        }
    }
}

/* ------------------------------------------------------------------------ */
/* One run                                                                   */
/* ------------------------------------------------------------------------ */

static void run_one(const struct params *pa, const char *dir, const char *db, bool locality,
                    struct run *out)
{
    struct vs_project_config cfg;
    vs_project_config_init(&cfg);
    snprintf(cfg.dir, sizeof(cfg.dir), "%s", dir);
    snprintf(cfg.long_name, sizeof(cfg.long_name), "bench");
    snprintf(cfg.master_url, sizeof(cfg.master_url), "http://127.0.0.1:1/b/");
    snprintf(cfg.download_url, sizeof(cfg.download_url), "http://127.0.0.1:1/b/download");
    snprintf(cfg.upload_url, sizeof(cfg.upload_url), "http://127.0.0.1:1/b/file_upload_handler");
    snprintf(cfg.cgi_url, sizeof(cfg.cgi_url), "http://127.0.0.1:1/b/");
    snprintf(cfg.key_dir, sizeof(cfg.key_dir), "%s/keys", dir);
    snprintf(cfg.store_url, sizeof(cfg.store_url), "sqlite:%s", db);
    cfg.policy.one_result_per_user_per_wu = true;
    /* The hosts never report (each request adds its jobs' whole duration to
     * what it asks for), so the daily quota and volsched's protective
     * per-host cap (4 results in progress per CPU: 8 on the template's 2
     * CPUs) would end a host's work early; JOBS says how many a request
     * takes, and --jobs 8 is what the cap allows a fresh host. */
    cfg.policy.daily_result_quota = 0;
    cfg.policy.host_in_progress_per_cpu = 0;
    /* Room for a request of JOBS jobs on the template's 2 CPUs. */
    cfg.policy.max_wus_to_send = (pa->jobs + 1) / 2;
    cfg.locality_scheduling = locality;
    cfg.locality_scheduling_sorted_order = pa->sorted;
    struct vs_sched_options so = {
        .cache_slots = 1000, .max_jobs_per_rpc = pa->jobs, .commit_delay_us = -1};
    struct vs_sched *s = NULL;
    bench_check(vs_sched_create(&cfg, NULL, &so, &s), "scheduler");
    struct vs_store *ws_store = NULL;
    bench_check(vs_store_open(cfg.store_url, 0, NULL, &ws_store), "store");

    struct tmpl t;
    tmpl_load(&t, pa->disk_gb);
    struct host *hosts = vs_xcalloc((size_t)pa->hosts, sizeof(*hosts));
    for (int i = 0; i < pa->hosts; i++)
        snprintf(hosts[i].auth, sizeof(hosts[i].auth), "a%031d", i);
    size_t nfile_hosts = (size_t)pa->files;
    size_t *hosts_per_file = vs_xcalloc(nfile_hosts, sizeof(*hosts_per_file));
    uint64_t total = (uint64_t)pa->files * (uint64_t)pa->wus * M;
    struct vs_buf req, rep;
    vs_buf_init(&req, VS_BUF_UNLIMITED);
    vs_buf_init(&rep, 64u << 20);
    memset(out, 0, sizeof(*out));
    double secs = (double)pa->jobs * 3600.0; /* each job adds its whole duration */
    int64_t now = NOW0;
    for (int sweep = 0; out->results < total && sweep < 100; sweep++) {
        uint64_t before = out->results;
        for (int i = 0; i < pa->active && out->results < total; i++) {
            struct host *h = &hosts[i];
            if (locality && out->rpcs % WS_EVERY == 0) {
                double c0 = cpu_now();
                struct vs_locality_ws_stats wst;
                bench_check(
                    vs_locality_ws_pass(ws_store, &cfg, (size_t)(pa->active / M), NULL, &wst),
                    "working set");
                out->ws_cpu += cpu_now() - c0;
            }
            build(&t, h, secs, &req);
            vs_buf_reset(&rep);
            double s0 = sys_now();
            double c0 = cpu_now();
            /* serve's feeder step, in both modes (it also checkpoints the
             * store's log); with locality it loads no full-locality job. */
            size_t added;
            bench_check(vs_sched_refill(s, &added), "refill");
            int st = vs_sched_handle(s, req.data, req.len, "127.0.0.1", now++, &rep);
            double c = cpu_now() - c0;
            out->sys += sys_now() - s0;
            if (st != 200) {
                fprintf(stderr, BENCH_NAME ": handler status %d\n", st);
                exit(1);
            }
            out->cpu += c;
            out->rpcs++;
            struct vs_arena a;
            vs_arena_init(&a, 64 * 1024);
            struct vs_proto_reply r;
            struct vs_proto_error err = {0};
            if (vs_proto_reply_parse(rep.data, rep.len, &a, &r, &err) != 0) {
                fprintf(stderr, BENCH_NAME ": reply does not parse: %s\n", err.msg);
                exit(1);
            }
            if (r.hostid > 0)
                h->hostid = r.hostid;
            h->seqno++;
            for (size_t k = 0; k < r.n_file_infos; k++) {
                const char *nm = r.file_infos[k].name;
                if (strncmp(nm, "big", 3) != 0 || strstr(nm, "__") || host_has(h, nm))
                    continue;
                out->bytes += r.file_infos[k].nbytes;
                host_add(h, nm);
                int64_t f = -1; /* our own names: "bigNNNN" */
                if (vs_parse_int64(nm + 3, &f) == 0 && f >= 0 && (size_t)f < nfile_hosts)
                    hosts_per_file[f]++;
            }
            for (size_t k = 0; k < r.n_delete_file_infos; k++) {
                host_drop(h, r.delete_file_infos[k]);
                out->deletes++;
            }
            for (size_t k = 0; k < r.n_results; k++)
                if (r.results[k].name)
                    host_run(h, r.results[k].name);
            out->results += r.n_results;
            if (r.n_results > 0) {
                out->rpcs_with_work++;
                out->cpu_work += c;
            }
            vs_arena_cleanup(&a);
        }
        if (out->results == before)
            break; /* a whole sweep without work: the rest is not sendable */
    }
    double sum = 0;
    for (size_t f = 0; f < nfile_hosts; f++) {
        sum += (double)hosts_per_file[f];
        if (hosts_per_file[f] > out->max_hosts_per_file)
            out->max_hosts_per_file = hosts_per_file[f];
    }
    out->mean_hosts_per_file = sum / (double)nfile_hosts;
    struct vs_sched_stats ss;
    vs_sched_get_stats(s, &ss);
    out->searched = ss.loc_searched;
    for (int i = 0; i < pa->hosts; i++) {
        for (size_t k = 0; k < hosts[i].nfiles; k++)
            vs_free(hosts[i].files[k]);
        vs_free(hosts[i].files);
        for (size_t k = 0; k < hosts[i].nresults; k++)
            vs_free(hosts[i].results[k]);
        vs_free(hosts[i].results);
    }
    vs_free(hosts);
    vs_free(hosts_per_file);
    vs_buf_cleanup(&req);
    vs_buf_cleanup(&rep);
    vs_free(t.text);
    vs_store_close(ws_store);
    vs_sched_destroy(s);
}

static int copy_db(const char *from, const char *to)
{
    char cmd[2 * VS_PATH_MAX + 16];
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
    return system(cmd) == 0 ? 0 : VS_EIO;
}

int main(int argc, char **argv)
{
    struct params pa = {
        .hosts = 2000, .files = 200, .wus = 50, .jobs = 50, .seed = 1, .reps = 3, .batch = 1};
    const char *only = getenv("BENCH_LOCALITY_ONLY"); /* "locality" or "plain": profiling */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int64_t v = 0;
        bool has_v = i + 1 < argc && vs_parse_int64(argv[i + 1], &v) == 0 && v > 0;
        if (strcmp(a, "--full") == 0) {
            pa.hosts = 10000;
            pa.files = 1000;
            pa.wus = 50;
        } else if (has_v && strcmp(a, "--hosts") == 0) {
            pa.hosts = (int)v;
            i++;
        } else if (has_v && strcmp(a, "--files") == 0) {
            pa.files = (int)v;
            i++;
        } else if (has_v && strcmp(a, "--wus") == 0) {
            pa.wus = (int)v;
            i++;
        } else if (has_v && strcmp(a, "--jobs") == 0) {
            pa.jobs = (int)v;
            i++;
        } else if (has_v && strcmp(a, "--batch") == 0) {
            pa.batch = (int)v;
            i++;
        } else if (has_v && strcmp(a, "--active") == 0) {
            pa.active = (int)v;
            i++;
        } else if (has_v && strcmp(a, "--disk-gb") == 0) {
            pa.disk_gb = (int)v;
            i++;
        } else if (strcmp(a, "--sorted") == 0) {
            pa.sorted = true;
        } else if (has_v && strcmp(a, "--reps") == 0) {
            pa.reps = (int)v;
            i++;
        } else if (has_v && strcmp(a, "--seed") == 0) {
            pa.seed = (uint64_t)v;
            i++;
        } else {
            fprintf(stderr, "usage: bench_locality [--full] [--hosts N] [--files N] [--wus N] "
                            "[--jobs N] [--batch N] [--active N] [--disk-gb N] [--sorted] "
                            "[--reps N] [--seed N]\n");
            return 2;
        }
    }
    if (pa.active <= 0 || pa.active > pa.hosts)
        pa.active = pa.hosts;
    if (pa.files > 9999) {
        fprintf(stderr, BENCH_NAME ": at most 9999 files\n");
        return 2;
    }
    char dir[256];
    snprintf(dir, sizeof(dir), "/tmp/bench_locality_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char keys[300], basel[300], basep[300], dbl[300], dbp[300];
    snprintf(keys, sizeof(keys), "%s/keys", dir);
    mkdir(keys, 0700);
    snprintf(basel, sizeof(basel), "%s/base_loc.db", dir);
    snprintf(basep, sizeof(basep), "%s/base_plain.db", dir);
    snprintf(dbl, sizeof(dbl), "%s/loc.db", dir);
    snprintf(dbp, sizeof(dbp), "%s/plain.db", dir);
    printf("bench_locality: %d hosts (%d asking), %d files of 100 MB, %d WUs per file, "
           "target_nresults %d, %d jobs per request, working set %d files%s, --batch %d\n",
           pa.hosts, pa.active, pa.files, pa.wus, M, pa.jobs, pa.active / M,
           pa.sorted ? " (sorted order)" : "", pa.batch);
    /* The same jobs made in the same order twice: as create_work and the
     * transitioner store them with locality on (a file's rows placed
     * together, store_cluster.c) and as a project without locality
     * scheduling stores them (ids in creation order). Plain scheduling
     * runs on the second: placing rows by file would hand it locality it
     * does not have. */
    double t0 = bench_now_s();
    for (int k = 0; k < 2; k++) {
        char url[320];
        snprintf(url, sizeof(url), "sqlite:%s", k == 0 ? basel : basep);
        struct vs_store *s;
        make_store(&pa, url, k == 0 && !getenv("BENCH_LOCALITY_NO_NEAR"), &s);
        bench_check(vs_store_checkpoint(s), "checkpoint");
        vs_store_close(s);
    }
    printf("  project built in %.1f s (twice: rows placed by file for locality, in creation "
           "order for plain)%s\n",
           bench_now_s() - t0,
           getenv("BENCH_LOCALITY_NO_NEAR") ? "; BENCH_LOCALITY_NO_NEAR: not placed" : "");

    /* Alternating runs on fresh copies (the machine is noisy): bytes are
     * the same every time up to the random working-set picks; CPU is the
     * best of the runs of each mode. */
    struct run loc = {0}, plain = {0};
    double wl = 0, wp = 0;
    for (int rep = 0; rep < pa.reps; rep++) {
        for (int k = 0; k < 2; k++) {
            bool is_loc = (k == 0) == (rep % 2 == 0);
            if (only && strcmp(only, is_loc ? "locality" : "plain") != 0)
                continue;
            const char *db = is_loc ? dbl : dbp;
            bench_check(copy_db(is_loc ? basel : basep, db), "copy");
            struct run r;
            double w0 = bench_now_s();
            run_one(&pa, dir, db, is_loc, &r);
            double w = bench_now_s() - w0;
            struct run *best = is_loc ? &loc : &plain;
            if (rep == 0 || (r.rpcs && r.cpu / (double)r.rpcs < best->cpu / (double)best->rpcs)) {
                *best = r;
                *(is_loc ? &wl : &wp) = w;
            }
        }
    }
    uint64_t total = (uint64_t)pa.files * (uint64_t)pa.wus * M;
    double lb = (double)pa.files * M * FILE_BYTES / (double)total;
    /* If every asking host gets its share of the work (total / active
     * results; the server does not leave an asking host idle while there is
     * work), a file's M x WUS results need at least active / files hosts:
     * the population's bound, above the M-host one when there are more
     * hosts than files x M (the working set N / M is then larger than the
     * project's files). */
    double pop_hosts = (double)pa.active / (double)pa.files > M ? (double)pa.active / pa.files : M;
    double lbp = lb * pop_hosts / M;
    double bl = loc.results ? loc.bytes / (double)loc.results : 0;
    double bp = plain.results ? plain.bytes / (double)plain.results : 0;
    printf("  %-9s %8s %8s %9s %12s %8s %8s %10s %10s %9s\n", "", "results", "RPCs", "with work",
           "MB/result", "x bound", "hosts/f", "us/RPC", "us/workRPC", "RPC/s cpu");
    const struct run *rs[2] = {&loc, &plain};
    const char *names[2] = {"locality", "plain"};
    for (int i = 0; i < 2; i++) {
        const struct run *r = rs[i];
        double b = r->results ? r->bytes / (double)r->results : 0;
        printf("  %-9s %8llu %8llu %9llu %12.2f %8.2f %8.2f %10.1f %10.1f %9.0f\n", names[i],
               (unsigned long long)r->results, (unsigned long long)r->rpcs,
               (unsigned long long)r->rpcs_with_work, b / 1e6, b / lb, r->mean_hosts_per_file,
               r->rpcs ? 1e6 * r->cpu / (double)r->rpcs : 0,
               r->rpcs_with_work ? 1e6 * r->cpu_work / (double)r->rpcs_with_work : 0,
               r->cpu > 0 ? (double)r->rpcs / r->cpu : 0);
    }
    printf(
        "  lower bound %.2f MB/result (each file to %d hosts); population's bound %.2f MB/result "
        "(%.1f hosts per file if each of the %d asking hosts gets its share); locality "
        "%.2fx the population's bound\n",
        lb / 1e6, M, lbp / 1e6, pop_hosts, pa.active, bl / lbp);
    printf("  locality deletes %llu, most hosts on one file %zu; working-set passes %.2f s CPU\n",
           (unsigned long long)loc.deletes, loc.max_hosts_per_file, loc.ws_cpu);
    printf(
        "  locality file searches per RPC %.2f; kernel share of the server CPU: locality %.0f%%, "
        "plain %.0f%%\n",
        loc.rpcs ? (double)loc.searched / (double)loc.rpcs : 0,
        loc.cpu > 0 ? 100 * loc.sys / loc.cpu : 0, plain.cpu > 0 ? 100 * plain.sys / plain.cpu : 0);
    double cpu_ratio = (loc.rpcs_with_work && plain.rpcs_with_work)
                           ? (loc.cpu_work / (double)loc.rpcs_with_work) /
                                 (plain.cpu_work / (double)plain.rpcs_with_work)
                           : 0;
    double cpu_ratio_all = (loc.rpcs && plain.rpcs)
                               ? (loc.cpu / (double)loc.rpcs) / (plain.cpu / (double)plain.rpcs)
                               : 0;
    printf("  locality: %.2fx the lower bound (target <= 1.2), %.1fx fewer bytes than plain "
           "(target >= 10), CPU per RPC with work %.2fx plain, per RPC %.2fx (target <= 2)\n",
           bl / lb, bl > 0 ? bp / bl : 0, cpu_ratio, cpu_ratio_all);
    printf("  wall (best run): locality %.1f s, plain %.1f s; best of %d alternating runs each\n",
           wl, wp, pa.reps);
    bool ok = loc.results == total && plain.results == total;
    if (!ok)
        printf("  NOTE: not all results were sent (locality %llu, plain %llu of %llu)\n",
               (unsigned long long)loc.results, (unsigned long long)plain.results,
               (unsigned long long)total);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (getenv("BENCH_KEEP"))
        printf("  kept %s\n", dir);
    else if (system(cmd) != 0)
        fprintf(stderr, BENCH_NAME ": could not remove %s\n", dir);
    return 0;
}
