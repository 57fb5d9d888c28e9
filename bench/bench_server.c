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
 * --threads T: handler threads; --poll N: threads polling the sockets.
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
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
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

#include "server/http.h"
#include "server/sched.h"
#include "store/store.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/config.h"
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

/* ---------------- the hosts ---------------- */

/* The sample request cut once into constant pieces around the values a host
 * changes (hostid, rpc_seqno) so that building a request is a few copies:
 * no scans of the 7 KB template per RPC. The work request (one job: 20 s,
 * one idle CPU) is patched into the constant part once. */
struct tmpl {
    struct vs_buf head;     /* up to and including <hostid> */
    struct vs_buf mid;      /* </hostid> ... <rpc_seqno> */
    struct vs_buf rest;     /* </rpc_seqno> ... before </scheduler_request> */
    struct vs_buf rest_new; /* the same without <code_sign_key> (a new host has none) */
    struct vs_buf tail;     /* </scheduler_request> and what follows */
};

static void tmpl_cut(struct tmpl *t, const char *doc)
{
    vs_buf_init(&t->head, 1u << 20);
    vs_buf_init(&t->mid, 1u << 20);
    vs_buf_init(&t->rest, 1u << 20);
    vs_buf_init(&t->rest_new, 1u << 20);
    vs_buf_init(&t->tail, 1u << 20);
    const char *hid = strstr(doc, "<hostid>");
    const char *hid_end = hid ? strchr(hid + 8, '<') : NULL;
    const char *seq = hid_end ? strstr(hid_end, "<rpc_seqno>") : NULL;
    const char *seq_end = seq ? strchr(seq + 11, '<') : NULL;
    const char *tail = seq_end ? strstr(seq_end, "</scheduler_request>") : NULL;
    if (!tail)
        exit(1);
    if (vs_buf_append(&t->head, doc, (size_t)(hid - doc) + 8) != 0 ||
        vs_buf_append(&t->mid, hid_end, (size_t)(seq - hid_end) + 11) != 0 ||
        vs_buf_puts(&t->tail, tail) != 0)
        exit(1);
    /* The constant middle with the one-job work request patched in. */
    const char *p = seq_end;
    const struct {
        const char *tag, *value;
    } subs[] = {{"<cpu_req_secs>", "20.000000"}, {"<cpu_req_instances>", "1.000000"}};
    for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
        size_t tl = strlen(subs[i].tag);
        const char *at = strstr(p, subs[i].tag);
        const char *end = at ? strchr(at + tl, '<') : NULL;
        if (!at || !end || at > tail)
            exit(1);
        if (vs_buf_append(&t->rest, p, (size_t)(at - p) + tl) != 0 ||
            vs_buf_puts(&t->rest, subs[i].value) != 0)
            exit(1);
        p = end;
    }
    if (vs_buf_append(&t->rest, p, (size_t)(tail - p)) != 0)
        exit(1);
    /* The template echoes a key; a new client has none yet. */
    const char *r = vs_buf_str(&t->rest);
    const char *k = strstr(r, "<code_sign_key>");
    const char *ke = k ? strstr(k, "</code_sign_key>\n") : NULL;
    if (k && ke) {
        if (vs_buf_append(&t->rest_new, r, (size_t)(k - r)) != 0 ||
            vs_buf_puts(&t->rest_new, ke + 17) != 0)
            exit(1);
    } else if (vs_buf_puts(&t->rest_new, r) != 0) {
        exit(1);
    }
}

static void tmpl_cleanup(struct tmpl *t)
{
    vs_buf_cleanup(&t->head);
    vs_buf_cleanup(&t->mid);
    vs_buf_cleanup(&t->rest);
    vs_buf_cleanup(&t->rest_new);
    vs_buf_cleanup(&t->tail);
}

/* One simulated host: one keep-alive connection, one RPC in flight. */
struct host {
    int fd;
    int64_t hostid;
    int64_t seqno;
    struct vs_buf req; /* the scheduler request body */
    struct vs_buf out; /* HTTP request: header and body */
    size_t out_off;    /* bytes of out already written */
    char *in;          /* the response as it arrives */
    size_t in_len, in_cap;
    size_t body_off;   /* where the body starts once the header is in, else 0 */
    size_t body_len;   /* its Content-Length */
    bool conn_close;   /* the server asked to close after this response */
    bool want_out;     /* registered for EPOLLOUT */
    struct vs_buf got; /* names of the jobs of the last reply, '\n'-terminated */
    double t_sent;
    bool busy; /* an RPC is in flight */
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

/* Finds needle in [p, p + n). */
static const char *find(const char *p, size_t n, const char *needle)
{
    return memmem(p, n, needle, strlen(needle));
}

/* Remembers the names of the jobs in a reply (to report them next time);
 * returns how many there were. */
static uint64_t collect_jobs(struct host *h, const char *body, size_t len)
{
    uint64_t n = 0;
    const char *end = body + len;
    vs_buf_reset(&h->got);
    for (const char *q = find(body, len, "<result>"); q;
         q = find(q + 8, (size_t)(end - q - 8), "<result>")) {
        n++;
        const char *a = find(q, (size_t)(end - q), "<name>");
        const char *b = a ? find(a, (size_t)(end - a), "</name>") : NULL;
        if (a && b &&
            (vs_buf_append(&h->got, a + 6, (size_t)(b - a - 6)) != 0 ||
             vs_buf_puts(&h->got, "\n") != 0))
            exit(1);
    }
    return n;
}

/* The sample request with this host's id, sequence number and a one-job
 * work request; hosts that have an id also echo the signing key. */
static void build_request(struct host *h, const struct tmpl *t)
{
    vs_buf_reset(&h->req);
    const struct vs_buf *rest = h->hostid == 0 ? &t->rest_new : &t->rest;
    if (vs_buf_append(&h->req, t->head.data, t->head.len) != 0 ||
        vs_buf_printf(&h->req, "%" PRId64, h->hostid) != 0 ||
        vs_buf_append(&h->req, t->mid.data, t->mid.len) != 0 ||
        vs_buf_printf(&h->req, "%" PRId64, h->seqno) != 0 ||
        vs_buf_append(&h->req, rest->data, rest->len) != 0 || append_reports(h) != 0 ||
        vs_buf_append(&h->req, t->tail.data, t->tail.len) != 0)
        exit(1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* An RPC without a reply after this long is given up (counted in errors
 * and in stalled; its connection closed, the host stops), so that a phase
 * always ends: microhttpd 0.9.75 has been seen to leave a burst of fresh
 * connections unread until its 120 s idle timeout. */
#define RPC_STALL_SECS 10.0

struct phase_result {
    uint64_t rpcs, jobs, reports, errors, new_hosts, stalled;
    double secs, p50, p99;
    double cpu_server, cpu_client; /* CPU seconds used during the phase */
};

struct loadgen {
    int ep;
    struct sockaddr_in addr;
    const char *path; /* the scheduler's URL path */
    const struct tmpl *t;
};

static int host_connect(struct loadgen *lg, struct host *h)
{
    h->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (h->fd < 0)
        return -1;
    int one = 1;
    setsockopt(h->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(h->fd, (struct sockaddr *)&lg->addr, sizeof(lg->addr)) != 0 &&
        errno != EINPROGRESS) {
        close(h->fd);
        h->fd = -1;
        return -1;
    }
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = h};
    h->want_out = true;
    if (epoll_ctl(lg->ep, EPOLL_CTL_ADD, h->fd, &ev) != 0) {
        close(h->fd);
        h->fd = -1;
        return -1;
    }
    return 0;
}

static void host_close(struct loadgen *lg, struct host *h)
{
    if (h->fd >= 0) {
        epoll_ctl(lg->ep, EPOLL_CTL_DEL, h->fd, NULL);
        close(h->fd);
        h->fd = -1;
    }
}

static void set_want_out(struct loadgen *lg, struct host *h, bool want)
{
    if (h->want_out == want)
        return;
    struct epoll_event ev = {.events = EPOLLIN | (want ? EPOLLOUT : 0u), .data.ptr = h};
    epoll_ctl(lg->ep, EPOLL_CTL_MOD, h->fd, &ev);
    h->want_out = want;
}

/* Writes what is left of the request; returns -1 on a dead connection. */
static int host_flush(struct loadgen *lg, struct host *h)
{
    while (h->out_off < h->out.len) {
        ssize_t n = send(h->fd, h->out.data + h->out_off, h->out.len - h->out_off, MSG_NOSIGNAL);
        if (n > 0) {
            h->out_off += (size_t)n;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOTCONN)) {
            set_want_out(lg, h, true);
            return 0;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            return -1;
        }
    }
    set_want_out(lg, h, false);
    return 0;
}

/* Starts this host's next RPC on its connection (a new one if it has none). */
static int send_one(struct loadgen *lg, struct host *h)
{
    build_request(h, lg->t);
    vs_buf_reset(&h->out);
    if (vs_buf_printf(&h->out,
                      "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      "User-Agent: BOINC client (x86_64-pc-linux-gnu 7.20.5)\r\n"
                      "Accept: */*\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                      "Content-Length: %zu\r\n\r\n",
                      lg->path, h->req.len) != 0 ||
        vs_buf_append(&h->out, h->req.data, h->req.len) != 0)
        exit(1);
    h->out_off = 0;
    h->in_len = h->body_off = h->body_len = 0;
    h->conn_close = false;
    h->t_sent = now_s();
    h->busy = true;
    int rc = h->fd < 0 ? host_connect(lg, h) : 0;
    if (rc == 0 && !h->want_out)
        rc = host_flush(lg, h);
    if (rc != 0) {
        h->busy = false;
        host_close(lg, h);
    }
    return rc;
}

/* Case-insensitive header lookup in [hdr, end); returns the value or NULL. */
static const char *header_value(const char *hdr, const char *end, const char *name)
{
    size_t nl = strlen(name);
    for (const char *line = hdr; line < end;) {
        const char *eol = memchr(line, '\n', (size_t)(end - line));
        if (!eol)
            break;
        if ((size_t)(eol - line) > nl && strncasecmp(line, name, nl) == 0 && line[nl] == ':') {
            const char *v = line + nl + 1;
            while (*v == ' ')
                v++;
            return v;
        }
        line = eol + 1;
    }
    return NULL;
}

/* Reads what arrived; returns 1 when the whole response is in, 0 when more
 * is to come, -1 on an error or a closed connection. */
static int host_read(struct host *h)
{
    for (;;) {
        if (h->in_cap - h->in_len < 16384) {
            h->in_cap = h->in_cap ? h->in_cap * 2 : 65536;
            h->in = vs_xrealloc(h->in, h->in_cap + 1);
        }
        ssize_t n = recv(h->fd, h->in + h->in_len, h->in_cap - h->in_len, 0);
        if (n == 0)
            return -1;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
        }
        h->in_len += (size_t)n;
        h->in[h->in_len] = '\0';
        if (h->body_off == 0) {
            const char *e = find(h->in, h->in_len, "\r\n\r\n");
            if (!e)
                continue;
            h->body_off = (size_t)(e - h->in) + 4;
            const char *cl = header_value(h->in, e + 2, "Content-Length");
            int64_t v = -1;
            char tmp[24];
            size_t k = 0;
            for (; cl && *cl >= '0' && *cl <= '9' && k + 1 < sizeof(tmp); cl++)
                tmp[k++] = *cl;
            tmp[k] = '\0';
            if (!cl || vs_parse_int64(tmp, &v) != 0 || v < 0)
                return -1; /* the server always sends a length */
            h->body_len = (size_t)v;
            const char *conn = header_value(h->in, e + 2, "Connection");
            h->conn_close = conn && strncasecmp(conn, "close", 5) == 0;
        }
        if (h->in_len >= h->body_off + h->body_len)
            return 1;
    }
}

static void run_phase(const char *path, uint16_t port, const struct tmpl *t, int conc, double secs,
                      uint64_t max_rpcs, struct phase_result *out)
{
    memset(out, 0, sizeof(*out));
    struct loadgen lg = {.ep = epoll_create1(EPOLL_CLOEXEC), .path = path, .t = t};
    if (lg.ep < 0)
        exit(1);
    lg.addr.sin_family = AF_INET;
    lg.addr.sin_port = htons(port);
    lg.addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct host *hosts = vs_xcalloc((size_t)conc, sizeof(*hosts));
    size_t lat_cap = 1u << 20, nlat = 0;
    double *lat = vs_xmalloc(lat_cap * sizeof(*lat));
    double t0 = now_s(), t_end = t0 + secs;
    double c_proc0 = cpu_s(CLOCK_PROCESS_CPUTIME_ID), c_me0 = cpu_s(CLOCK_THREAD_CPUTIME_ID);
    uint64_t started = 0;
    int running = 0;
    for (int i = 0; i < conc; i++) {
        struct host *h = &hosts[i];
        h->fd = -1;
        vs_buf_init(&h->req, 1u << 20);
        vs_buf_init(&h->out, 1u << 20);
        vs_buf_init(&h->got, 1u << 20);
        if (send_one(&lg, h) != 0) {
            out->errors++;
            continue;
        }
        started++;
        running++;
    }
    struct epoll_event evs[256];
    double next_stall_check = t0 + 1;
    while (running > 0) {
        int n = epoll_wait(lg.ep, evs, 256, 200);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            exit(1);
        double tc = n < 256 ? now_s() : 0;
        if (tc > next_stall_check) {
            next_stall_check = tc + 1;
            for (int i = 0; i < conc; i++) {
                struct host *h = &hosts[i];
                if (h->busy && tc - h->t_sent > RPC_STALL_SECS) {
                    h->busy = false;
                    host_close(&lg, h);
                    out->stalled++;
                    out->errors++;
                    running--;
                }
            }
        }
        for (int i = 0; i < n; i++) {
            struct host *h = evs[i].data.ptr;
            int st = 0;
            if (h->fd < 0 || !h->busy)
                continue;
            if ((evs[i].events & EPOLLOUT) && host_flush(&lg, h) != 0)
                st = -1;
            if (st == 0 && (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
                st = host_read(h);
            if (st == 0)
                continue;
            double tn = now_s();
            h->busy = false;
            out->rpcs++;
            if (nlat < lat_cap)
                lat[nlat++] = tn - h->t_sent;
            const char *body = h->in ? h->in + h->body_off : "";
            size_t blen = st == 1 ? h->body_len : 0;
            bool ok = st == 1 && h->in_len > 12 && memcmp(h->in + 9, "200", 3) == 0 &&
                      find(body, blen, "</scheduler_reply>");
            if (!ok) {
                out->errors++;
                host_close(&lg, h);
            } else {
                const char *hid = find(body, blen, "<hostid>");
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
                for (const char *q = find(body, blen, "<result_ack>"); q;
                     q = find(q + 12, (size_t)(body + blen - q - 12), "<result_ack>"))
                    out->reports++;
                uint64_t got = collect_jobs(h, body, blen);
                out->jobs += got;
                static int shown;
                if (got == 0 && getenv("BENCH_DEBUG") && shown++ < 2)
                    fprintf(stderr, "reply without a job:\n%.*s\n", (int)blen, body);
                if (h->conn_close)
                    host_close(&lg, h);
            }
            running--;
            if (tn < t_end && started < max_rpcs) {
                if (send_one(&lg, h) != 0) {
                    out->errors++;
                    continue;
                }
                started++;
                running++;
            }
        }
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
        host_close(&lg, &hosts[i]);
        vs_buf_cleanup(&hosts[i].req);
        vs_buf_cleanup(&hosts[i].out);
        vs_buf_cleanup(&hosts[i].got);
        vs_free(hosts[i].in);
    }
    close(lg.ep);
    vs_free(hosts);
    vs_free(lat);
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

int main(int argc, char **argv)
{
    int64_t njobs = 0, max_rpcs = 40000, threads = 4;
    double secs = 5;
    bool sync_full = false, keep = false, rules = true;
    int64_t direct = 0, commit_delay = 0, poll = 2, slow = 0;
    bool ceiling = false;
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
        } else if (strcmp(a, "--poll") == 0 && v && vs_parse_int64(v, &poll) == 0) {
            i++;
        } else if (strcmp(a, "--slowloris") == 0 && v && vs_parse_int64(v, &slow) == 0) {
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
            fprintf(stderr, "usage: bench_server [--jobs N] [--secs S] [--rpcs N] [--threads T]"
                            " [--sync-full] [--conc a,b,c] [--commit-delay US] [--direct N]"
                            " [--keep] [--rules on|off] [--poll N] [--ceiling]"
                            " [--slowloris N]\n");
            return 2;
        }
    }
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
    printf("server: %" PRId64 " handler threads, %" PRId64
           " polling threads, keep-alive, durability %s, request %zu bytes\n",
           threads, poll,
           sync_full ? "synchronous=FULL (power loss)" : "synchronous=NORMAL (process crash)",
           strlen(tmpl));
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
