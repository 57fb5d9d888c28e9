/*
 * Protocol benchmark: scheduler requests parsed per second over every request
 * captured from the real BOINC client (tests/golden/boinc), and parse + reply
 * write per second (the reply acks every reported result and carries one
 * job, like a server's answer), and over the GPU hosts' requests written as
 * that client writes them (tests/golden/gpu: <coprocs>, trickle-ups). One arena and one buffer are
 * reused, as the server does per RPC. Each figure is given for the full tree parser
 * (vs_proto_request_parse, the library's reference) and for the server's
 * parse (vs_proto_request_parse_fast: one pass, no tree), or for the one
 * named.
 *
 *   build/release/bench_proto [SECONDS_PER_CASE] [full|fast]
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/proto.h"
#include "volsched/str.h"

#define GOLDEN   VS_SOURCE_DIR "/tests/golden/boinc"
#define GPU      VS_SOURCE_DIR "/tests/golden/gpu"
#define MAX_MSGS 256

struct msg {
    char *data;
    size_t len;
    char name[600];
};

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

/* CPU seconds of this process: on a shared machine, the figure per CPU-second is the stable one. */
static double cpu_now(void)
{
    return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

struct rate {
    double wall; /* operations per wall-clock second */
    double cpu;  /* operations per CPU second */
};

static char *slurp(const char *path, size_t *out_len)
{
    struct vs_buf b;
    vs_buf_init(&b, 16u << 20);
    if (vs_buf_append_file(&b, path) != 0) {
        vs_buf_cleanup(&b);
        return NULL;
    }
    return vs_buf_take(&b, out_len);
}

/* The sched_request_* files of dir, named "<label>/<file>", appended to msgs[*n..]. */
static void load_dir(const char *dir, const char *label, struct msg *msgs, size_t *n)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && *n < MAX_MSGS) {
        if (!vs_str_has_prefix(e->d_name, "sched_request_"))
            continue;
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        msgs[*n].data = slurp(path, &msgs[*n].len);
        snprintf(msgs[*n].name, sizeof(msgs[*n].name), "%s/%s", label, e->d_name);
        if (msgs[*n].data)
            (*n)++;
    }
    closedir(d);
}

static size_t load(struct msg *msgs)
{
    size_t n = 0;
    DIR *top = opendir(GOLDEN);
    if (!top)
        return 0;
    struct dirent *v;
    while ((v = readdir(top)) != NULL && n < MAX_MSGS) {
        if (v->d_name[0] == '.')
            continue;
        char dir[512];
        snprintf(dir, sizeof(dir), "%s/%s", GOLDEN, v->d_name);
        load_dir(dir, v->d_name, msgs, &n);
    }
    closedir(top);
    return n;
}

/* A reply like the server's: acks for every reported result plus one job. */
static int write_reply(const struct vs_proto_request *req, struct vs_arena *a, struct vs_buf *out)
{
    struct vs_proto_reply rep;
    memset(&rep, 0, sizeof(rep));
    rep.project_name = "Bench";
    rep.scheduler_version = 720;
    const char **acks = vs_arena_alloc(a, (req->n_results + 1) * sizeof(char *));
    for (size_t i = 0; i < req->n_results; i++)
        acks[i] = req->results[i].name;
    rep.result_acks = acks;
    rep.n_result_acks = req->n_results;
    static struct vs_proto_url in_url = {VS_PROTO_URL, "http://127.0.0.1/p/download/in_1"};
    static struct vs_proto_url out_url = {VS_PROTO_URL, "http://127.0.0.1/p/file_upload_handler"};
    static struct vs_proto_file_info fis[2] = {
        {.name = "in_1",
         .urls = &in_url,
         .n_urls = 1,
         .nbytes = 37,
         .md5_cksum = "d1c70a9dc77759dcf0844d951b8fddbe"},
        {.name = "wu_1_0_out", .urls = &out_url, .n_urls = 1, .max_nbytes = 1e6},
    };
    static struct vs_proto_file_ref wref = {.file_name = "in_1", .open_name = "in"};
    static struct vs_proto_file_ref rref = {.file_name = "wu_1_0_out", .open_name = "out"};
    static struct vs_proto_workunit wu = {.name = "wu_1",
                                          .app_name = "uppercase",
                                          .rsc_fpops_est = 5e9,
                                          .rsc_fpops_bound = 5e12,
                                          .rsc_memory_bound = 1e8,
                                          .rsc_disk_bound = 1e8,
                                          .file_refs = &wref,
                                          .n_file_refs = 1};
    static struct vs_proto_result res = {.name = "wu_1_0",
                                         .wu_name = "wu_1",
                                         .report_deadline = 1796574517,
                                         .platform = "x86_64-pc-linux-gnu",
                                         .version_num = 101,
                                         .file_refs = &rref,
                                         .n_file_refs = 1};
    rep.file_infos = fis;
    rep.n_file_infos = 2;
    rep.workunits = &wu;
    rep.n_workunits = 1;
    rep.results = &res;
    rep.n_results = 1;
    return vs_proto_reply_write(&rep, out);
}

typedef int (*parse_fn)(const char *, size_t, struct vs_arena *, struct vs_proto_request *,
                        struct vs_proto_error *);
static parse_fn g_parse = vs_proto_request_parse;

/* Runs for about secs; returns operations per second. */
static struct rate run(const struct msg *m, size_t n, double secs, bool reply, size_t *out_bytes)
{
    struct vs_arena a;
    vs_arena_init(&a, 64 * 1024);
    struct vs_buf out;
    vs_buf_init(&out, VS_PROTO_MAX_REPLY_BYTES);
    size_t ops = 0, bytes = 0;
    double t0 = now(), c0 = cpu_now(), t;
    do {
        for (int k = 0; k < 64; k++) {
            const struct msg *x = &m[ops % n];
            struct vs_proto_request req;
            if (g_parse(x->data, x->len, &a, &req, NULL) != 0) {
                fprintf(stderr, "bench: %s does not parse\n", x->name);
                exit(1);
            }
            if (reply) {
                vs_buf_reset(&out);
                if (write_reply(&req, &a, &out) != 0)
                    exit(1);
            }
            bytes += x->len;
            vs_arena_reset(&a);
            ops++;
        }
        t = now() - t0;
    } while (t < secs);
    vs_arena_cleanup(&a);
    vs_buf_cleanup(&out);
    double c = cpu_now() - c0;
    if (out_bytes)
        *out_bytes = bytes / (ops ? ops : 1);
    return (struct rate){(double)ops / t, c > 0 ? (double)ops / c : 0};
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? strtod(argv[1], NULL) : 1.0;
    if (!(secs > 0))
        secs = 1.0;
    static struct msg msgs[MAX_MSGS], gpu[MAX_MSGS];
    size_t n = load(msgs), n_gpu = 0;
    load_dir(GPU, "gpu", gpu, &n_gpu);
    if (n == 0 || n_gpu == 0) {
        fprintf(stderr, "bench: no requests under %s or %s\n", GOLDEN, GPU);
        return 1;
    }
    static const struct {
        const char *name;
        parse_fn fn;
    } parsers[] = {{"full", vs_proto_request_parse}, {"fast", vs_proto_request_parse_fast}};
    for (size_t k = 0; k < 2; k++) {
        if (argc > 2 && strcmp(argv[2], parsers[k].name) != 0)
            continue;
        g_parse = parsers[k].fn;
        const char *pn = parsers[k].name;
        size_t avg = 0;
        struct rate all = run(msgs, n, secs, false, &avg);
        printf("[%s] requests parsed (all %zu captured requests, avg %zu bytes): %.0f/s wall, "
               "%.0f per CPU-second\n",
               pn, n, avg, all.wall, all.cpu);
        struct rate both = run(msgs, n, secs, true, NULL);
        printf("[%s] parse + reply write (all captured requests): %.0f/s wall, %.0f per "
               "CPU-second\n",
               pn, both.wall, both.cpu);
        struct rate g = run(gpu, n_gpu, secs, false, &avg);
        printf("[%s] requests parsed (all %zu GPU-host requests, avg %zu bytes): %.0f/s wall, "
               "%.0f per CPU-second\n",
               pn, n_gpu, avg, g.wall, g.cpu);
        /* the typical cases: a work request without reports, one reporting 2 results, the
         * same work request from an NVIDIA host, and the report with trickles */
        static const char *const typical[] = {
            "signed/sched_request_02.xml", "signed/sched_request_04.xml",
            "gpu/sched_request_nvidia.xml", "gpu/sched_request_trickle.xml"};
        for (size_t t = 0; t < sizeof(typical) / sizeof(typical[0]); t++) {
            const struct msg *set = t < 2 ? msgs : gpu;
            for (size_t i = 0; i < (t < 2 ? n : n_gpu); i++) {
                if (strcmp(set[i].name, typical[t]) != 0)
                    continue;
                struct rate p = run(&set[i], 1, secs, false, NULL);
                struct rate q = run(&set[i], 1, secs, true, NULL);
                printf("[%s] %-30s %5zu bytes: parse %.0f/s wall, %.0f/CPU-s; parse + reply "
                       "%.0f/s wall, %.0f/CPU-s\n",
                       pn, typical[t], set[i].len, p.wall, p.cpu, q.wall, q.cpu);
            }
        }
    }
    for (size_t i = 0; i < n; i++)
        vs_free(msgs[i].data);
    for (size_t i = 0; i < n_gpu; i++)
        vs_free(gpu[i].data);
    return 0;
}
