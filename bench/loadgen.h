/*
 * The load generator of bench_server: simulated BOINC hosts over loopback
 * (non-blocking sockets, epoll, HTTP/1.1 keep-alive, one connection per
 * host). Header only, with static functions, as bench_util.h: every
 * bench/bench_*.c is a program of its own. bench_server includes it for its
 * in-process server and for --target (servers already running, e.g. several
 * `volsched serve` behind nginx in tests/pg/test_pg_nginx.sh).
 *
 * With a journal (struct lg_target.journal), every job a host receives is
 * written as "S <hostid> <result name>" and every report acknowledged as
 * "A <hostid> <result name>", so that a test can hold the store to what
 * the hosts were told.
 */
#ifndef VOLSCHED_BENCH_LOADGEN_H
#define VOLSCHED_BENCH_LOADGEN_H

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/str.h"

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
    bool busy;  /* an RPC is in flight */
    int target; /* index of its server in struct loadgen's addrs */
    int account; /* index of its account's template in struct loadgen's t */
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

#define LG_MAX_TARGETS 16

/* Where the hosts send their RPCs: host i to ports[i % nports] on 127.0.0.1. */
struct lg_target {
    const char *path; /* the scheduler's URL path */
    uint16_t ports[LG_MAX_TARGETS];
    int nports;
    FILE *journal; /* NULL: none (see the top of this file) */
    int naccounts; /* t is an array of this many templates, one per account
                    * (host i uses t[i % naccounts]); 0 is 1 */
};

struct loadgen {
    int ep;
    struct sockaddr_in addrs[LG_MAX_TARGETS];
    const char *path; /* the scheduler's URL path */
    const struct tmpl *t; /* naccounts of them */
    int naccounts;
    FILE *journal;
};

static int host_connect(struct loadgen *lg, struct host *h)
{
    h->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (h->fd < 0)
        return -1;
    int one = 1;
    setsockopt(h->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    const struct sockaddr_in *addr = &lg->addrs[h->target];
    if (connect(h->fd, (const struct sockaddr *)addr, sizeof(*addr)) != 0 &&
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
    build_request(h, &lg->t[h->account]);
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

/* Writes "<kind> <hostid> <name>" for every element `tag` (result_ack, or
 * result for a job) of a reply body. */
static void journal_names(FILE *j, char kind, int64_t hostid, const char *body, size_t len,
                          const char *tag)
{
    char open_tag[32];
    snprintf(open_tag, sizeof(open_tag), "<%s>", tag);
    size_t tl = strlen(open_tag);
    const char *end = body + len;
    for (const char *q = find(body, len, open_tag); q;
         q = find(q + tl, (size_t)(end - q - (ptrdiff_t)tl), open_tag)) {
        const char *a = find(q, (size_t)(end - q), "<name>");
        const char *b = a ? find(a, (size_t)(end - a), "</name>") : NULL;
        if (a && b)
            fprintf(j, "%c %" PRId64 " %.*s\n", kind, hostid, (int)(b - a - 6), a + 6);
    }
}

static void run_phase_on(const struct lg_target *tg, const struct tmpl *t, int conc, double secs,
                         uint64_t max_rpcs, struct phase_result *out)
{
    memset(out, 0, sizeof(*out));
    struct loadgen lg = {
        .ep = epoll_create1(EPOLL_CLOEXEC), .path = tg->path, .t = t,
        .naccounts = tg->naccounts > 0 ? tg->naccounts : 1, .journal = tg->journal};
    if (lg.ep < 0 || tg->nports < 1 || tg->nports > LG_MAX_TARGETS)
        exit(1);
    for (int k = 0; k < tg->nports; k++) {
        lg.addrs[k].sin_family = AF_INET;
        lg.addrs[k].sin_port = htons(tg->ports[k]);
        lg.addrs[k].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    }
    struct host *hosts = vs_xcalloc((size_t)conc, sizeof(*hosts));
    for (int i = 0; i < conc; i++) {
        hosts[i].target = i % tg->nports;
        hosts[i].account = i % lg.naccounts;
    }
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
                if (lg.journal) {
                    journal_names(lg.journal, 'A', h->hostid, body, blen, "result_ack");
                    journal_names(lg.journal, 'S', h->hostid, body, blen, "result");
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
    if (lg.journal)
        fflush(lg.journal);
}

static void run_phase(const char *path, uint16_t port, const struct tmpl *t, int conc, double secs,
                      uint64_t max_rpcs, struct phase_result *out)
{
    struct lg_target tg = {.path = path, .ports = {port}, .nports = 1};
    run_phase_on(&tg, t, conc, secs, max_rpcs, out);
}

#endif
