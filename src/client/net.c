/*
 * The client's HTTP, all of it non-blocking: every download, upload,
 * scheduler RPC and master page fetch is an easy handle on one curl multi
 * handle. The main loop waits for the transfers' sockets and the GUI RPC
 * sockets together (vs_client_net_wait), then moves the transfers on
 * (vs_client_net_run), which calls each finished transfer's done function.
 * So a server that sends one byte a minute holds one transfer slot, never
 * the loop: GUI RPCs, signals and the tasks are served meanwhile.
 *
 * Each transfer is labelled with what it is for (its kind, its project's
 * master URL, the file's name), so xfer.c can count transfers per project
 * for BOINC's budgets, a detached project's transfers can be abandoned, and
 * a shutdown abandons them all at once. Every transfer has BOINC's low-speed
 * limit (cc_config <http_transfer_timeout_bps> bytes/s over
 * <http_transfer_timeout> s); scheduler RPCs also an overall timeout.
 */
#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "client/https_pin.h"
#include "volsched/alloc.h"
#include "volsched/client.h"

#define CONNECT_TIMEOUT_S 10L
#define NET_MAX_WAITFDS   64

struct net_op {
    CURL *h;
    int kind;
    char *project_url;
    char *name;
    cl_http_done_fn done;
    void *ud;
    struct curl_slist *hdr;
    long timeout_s;
    /* a POST body streamed: the head in memory, then the rest of a file */
    const char *head;
    size_t head_len, head_off;
    FILE *tail;
    /* where the reply body goes: memory (capped by the buffer) or a file */
    struct vs_buf *reply;
    FILE *sink;
    double sink_limit, got;
    bool disk_full, over_limit;
    char err[CURL_ERROR_SIZE];
};

struct cl_net {
    CURLM *m;
    struct net_op **ops;
    size_t n_ops, cap;
};

void vs_client_net_global_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

static size_t to_buf(char *p, size_t sz, size_t n, void *ud)
{
    struct net_op *op = ud;
    return vs_buf_append(op->reply, p, sz * n) == 0 ? sz * n : 0;
}

static size_t to_file(char *p, size_t sz, size_t n, void *ud)
{
    struct net_op *op = ud;
    op->got += (double)(sz * n);
    if (op->got > op->sink_limit) {
        op->over_limit = true;
        return 0;
    }
    size_t w = fwrite(p, sz, n, op->sink);
    if (w != n) {
        op->disk_full = errno == ENOSPC || errno == EDQUOT;
        return 0;
    }
    return sz * n;
}

static size_t from_body(char *p, size_t sz, size_t n, void *ud)
{
    struct net_op *op = ud;
    size_t want = sz * n, got = 0;
    if (op->head_off < op->head_len) {
        got = op->head_len - op->head_off < want ? op->head_len - op->head_off : want;
        memcpy(p, op->head + op->head_off, got);
        op->head_off += got;
    }
    if (got < want && op->tail) {
        size_t r = fread(p + got, 1, want - got, op->tail);
        if (r == 0 && ferror(op->tail))
            return CURL_READFUNC_ABORT;
        got += r;
    }
    return got;
}

static bool matches(const struct net_op *op, int kinds, const char *project_url, const char *name)
{
    return (op->kind & kinds) && (!project_url || strcmp(op->project_url, project_url) == 0) &&
           (!name || (op->name && strcmp(op->name, name) == 0));
}

size_t vs_client_net_count(const struct vs_client *c, int kinds, const char *project_url)
{
    size_t n = 0;
    for (size_t i = 0; c->net && i < c->net->n_ops; i++)
        if (matches(c->net->ops[i], kinds, project_url, NULL))
            n++;
    return n;
}

double vs_client_net_to_come(const struct vs_client *c, const char *project_url)
{
    double n = 0;
    for (size_t i = 0; c->net && i < c->net->n_ops; i++) {
        const struct net_op *op = c->net->ops[i];
        if (op->sink && matches(op, CL_NET_DOWNLOAD, project_url, NULL))
            n += fmax(0, op->sink_limit - op->got);
    }
    return n;
}

bool vs_client_net_busy(const struct vs_client *c, int kinds, const char *project_url,
                        const char *name)
{
    for (size_t i = 0; c->net && i < c->net->n_ops; i++)
        if (matches(c->net->ops[i], kinds, project_url, name))
            return true;
    return false;
}

static void op_free(struct net_op *op)
{
    if (op->h)
        curl_easy_cleanup(op->h);
    curl_slist_free_all(op->hdr);
    vs_free(op->project_url);
    vs_free(op->name);
    vs_free(op);
}

/* Takes op out of the multi handle and the table (its place goes to the last one). */
static void op_detach(struct cl_net *net, size_t i)
{
    struct net_op *op = net->ops[i];
    curl_multi_remove_handle(net->m, op->h);
    net->ops[i] = net->ops[--net->n_ops];
}

/* The proxy set through the GUI RPC (set_proxy_settings), if any; without
 * one, curl's own environment variables apply, as in BOINC. */
static void set_proxy(const struct vs_client *c, CURL *h)
{
    const struct cl_proxy *px = &c->proxy;
    char url[320];
    bool http = px->use_http && px->http_server[0];
    if (!http && !(px->use_socks && px->socks_server[0]))
        return;
    if (http)
        snprintf(url, sizeof(url), "http://%s:%d", px->http_server,
                 px->http_port > 0 ? px->http_port : 80);
    else
        snprintf(url, sizeof(url), "socks5h://%s:%d", px->socks_server,
                 px->socks_port > 0 ? px->socks_port : 1080);
    curl_easy_setopt(h, CURLOPT_PROXY, url);
    if (http ? px->use_http_auth : px->socks5_user[0] != '\0') {
        curl_easy_setopt(h, CURLOPT_PROXYUSERNAME, http ? px->http_user : px->socks5_user);
        curl_easy_setopt(h, CURLOPT_PROXYPASSWORD, http ? px->http_passwd : px->socks5_passwd);
    }
    if (px->no_proxy[0])
        curl_easy_setopt(h, CURLOPT_NOPROXY, px->no_proxy);
}

int vs_client_http_start(struct vs_client *c, const struct cl_http_req *q, cl_http_done_fn done,
                         void *ud)
{
    if (!c->net) {
        struct cl_net *net = VS_NEW(struct cl_net);
        net->m = curl_multi_init();
        if (!net->m) {
            vs_free(net);
            return VS_ENET;
        }
        c->net = net;
    }
    struct cl_net *net = c->net;
    struct net_op *op = VS_NEW(struct net_op);
    op->h = curl_easy_init();
    if (!op->h) {
        vs_free(op);
        return VS_ENET;
    }
    op->kind = q->kind;
    op->project_url = vs_xstrdup(q->project_url);
    op->name = q->name ? vs_xstrdup(q->name) : NULL;
    op->done = done;
    op->ud = ud;
    op->reply = q->reply;
    op->sink = q->sink;
    op->sink_limit = q->sink_limit;
    op->timeout_s = q->timeout_s;
    CURL *h = op->h;
    curl_easy_setopt(h, CURLOPT_URL, q->url);
    curl_easy_setopt(h, CURLOPT_PRIVATE, op);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, op->err);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT_S);
    if (q->timeout_s > 0)
        curl_easy_setopt(h, CURLOPT_TIMEOUT, q->timeout_s);
    /* BOINC-COMPAT: cc_config http_transfer_timeout_bps / http_transfer_timeout */
    if (c->prefs.http_transfer_timeout_bps > 0 && c->prefs.http_transfer_timeout > 0) {
        curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, (long)c->prefs.http_transfer_timeout_bps);
        curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, (long)c->prefs.http_transfer_timeout);
    }
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
    /* a redirect may not leave http/https (file://, gopher:// ...) */
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_USERAGENT, "BOINC client (x86_64-pc-linux-gnu 7.20.5)");
    set_proxy(c, h);
    vs_client_https_curl(c, h, q->url);
    if (q->sink) {
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, to_file);
        if (q->resume_from > 0)
            curl_easy_setopt(h, CURLOPT_RESUME_FROM_LARGE, (curl_off_t)q->resume_from);
    } else {
        vs_buf_reset(q->reply);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, to_buf);
    }
    curl_easy_setopt(h, CURLOPT_WRITEDATA, op);
    if (q->body) {
        curl_easy_setopt(h, CURLOPT_POST, 1L);
        if (q->body_file) {
            /* streamed: a large upload is never all in memory */
            op->head = q->body;
            op->head_len = q->len;
            op->tail = q->body_file;
            curl_easy_setopt(h, CURLOPT_READFUNCTION, from_body);
            curl_easy_setopt(h, CURLOPT_READDATA, op);
            curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
                             (curl_off_t)q->len + (curl_off_t)q->body_file_len);
        } else {
            curl_easy_setopt(h, CURLOPT_POSTFIELDS, q->body);
            curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)q->len);
        }
        op->hdr = curl_slist_append(op->hdr, "Content-Type: application/x-www-form-urlencoded");
        op->hdr = curl_slist_append(op->hdr, "Expect:");
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, op->hdr);
    }
    if (curl_multi_add_handle(net->m, h) != CURLM_OK) {
        op_free(op);
        return VS_ENET;
    }
    if (net->n_ops == net->cap) {
        net->cap = net->cap ? 2 * net->cap : 16;
        net->ops = vs_xreallocarray(net->ops, net->cap, sizeof(*net->ops));
    }
    net->ops[net->n_ops++] = op;
    return 0;
}

/* What became of a finished transfer, in the terms its owner acts on. */
static void outcome(struct vs_client *c, struct net_op *op, CURLcode cc, struct cl_http_done *d)
{
    memset(d, 0, sizeof(*d));
    curl_easy_getinfo(op->h, CURLINFO_RESPONSE_CODE, &d->code);
    curl_off_t speed = 0, connect_us = 0, total_us = 0;
    curl_easy_getinfo(op->h, CURLINFO_SPEED_DOWNLOAD_T, &speed);
    curl_easy_getinfo(op->h, CURLINFO_CONNECT_TIME_T, &connect_us);
    curl_easy_getinfo(op->h, CURLINFO_TOTAL_TIME_T, &total_us);
    d->speed = (double)speed;
    curl_off_t up = 0, down = 0;
    curl_easy_getinfo(op->h, CURLINFO_SIZE_UPLOAD_T, &up);
    curl_easy_getinfo(op->h, CURLINFO_SIZE_DOWNLOAD_T, &down);
    vs_client_xfer_add(c, (double)up, (double)down);
    d->disk_full = op->disk_full;
    d->over_limit = op->over_limit;
    d->range_refused = cc == CURLE_RANGE_ERROR;
    if (cc == CURLE_OK) {
        if (op->reply && !op->reply->data && vs_buf_puts(op->reply, "") != 0)
            d->rc = VS_ELIMIT;
        return;
    }
    if (cc == CURLE_WRITE_ERROR) {
        d->rc = VS_ELIMIT;
    } else if (cc == CURLE_OPERATION_TIMEDOUT) {
        d->rc = VS_ETIMEOUT;
        /* a connect timeout, the overall one, or else the low-speed limit */
        bool overall = op->timeout_s > 0 && (double)total_us >= (op->timeout_s - 1) * 1e6;
        d->too_slow = !overall && (connect_us > 0 || strstr(op->err, "too slow"));
    } else {
        d->rc = VS_ENET;
    }
    if (d->rc == VS_ELIMIT)
        snprintf(d->why, sizeof(d->why), "%s", vs_strerror(VS_ELIMIT));
    else if (d->too_slow)
        snprintf(d->why, sizeof(d->why), "transfer slower than %.0f bytes/s for %.0f s",
                 c->prefs.http_transfer_timeout_bps, c->prefs.http_transfer_timeout);
    else
        snprintf(d->why, sizeof(d->why), "%s", op->err[0] ? op->err : curl_easy_strerror(cc));
}

void vs_client_net_wait(struct vs_client *c, struct pollfd *pf, size_t n, int timeout_ms)
{
    for (size_t i = 0; i < n; i++)
        pf[i].revents = 0;
    if (!c->net || c->net->n_ops == 0 || n > NET_MAX_WAITFDS) {
        /* no transfer: a plain poll (an idle client costs nothing more than before) */
        if (poll(pf, (nfds_t)n, timeout_ms) < 0 && errno != EINTR)
            VS_LOG(&c->log, VS_LOG_WARN, "poll: %s", strerror(errno));
        return;
    }
    struct curl_waitfd w[NET_MAX_WAITFDS];
    for (size_t i = 0; i < n; i++) {
        w[i].fd = pf[i].fd;
        w[i].events = (short)(((pf[i].events & POLLIN) ? CURL_WAIT_POLLIN : 0) |
                              ((pf[i].events & POLLOUT) ? CURL_WAIT_POLLOUT : 0));
        w[i].revents = 0;
    }
    /* returns at the first socket ready, curl's next timer, or a signal (EINTR) */
    int ready = 0;
    if (curl_multi_poll(c->net->m, w, (unsigned)n, timeout_ms, &ready) != CURLM_OK)
        return;
    for (size_t i = 0; i < n; i++)
        pf[i].revents = (short)(((w[i].revents & CURL_WAIT_POLLIN) ? POLLIN : 0) |
                                ((w[i].revents & CURL_WAIT_POLLOUT) ? POLLOUT : 0));
}

#define NET_DONE_BATCH 32

void vs_client_net_run(struct vs_client *c)
{
    struct cl_net *net = c->net;
    if (!net || net->n_ops == 0)
        return;
    int running = 0;
    curl_multi_perform(net->m, &running);
    /* The finished ones leave the table first, then their owners hear of it:
     * a done function may start the next transfer (an upload's second
     * request) while nothing iterates the table. */
    for (;;) {
        struct net_op *fin[NET_DONE_BATCH];
        CURLcode ccs[NET_DONE_BATCH];
        size_t nfin = 0;
        CURLMsg *msg;
        int left;
        while (nfin < NET_DONE_BATCH && (msg = curl_multi_info_read(net->m, &left)) != NULL) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            CURL *h = msg->easy_handle;
            CURLcode cc = msg->data.result;
            for (size_t i = 0; i < net->n_ops; i++)
                if (net->ops[i]->h == h) {
                    fin[nfin] = net->ops[i];
                    ccs[nfin++] = cc;
                    op_detach(net, i);
                    break;
                }
        }
        if (nfin == 0)
            return;
        c->now = vs_client_now();
        for (size_t i = 0; i < nfin; i++) {
            struct cl_http_done d;
            outcome(c, fin[i], ccs[i], &d);
            fin[i]->done(c, fin[i]->ud, &d);
            op_free(fin[i]);
        }
    }
}

void vs_client_net_abandon(struct vs_client *c, int kinds, const char *project_url)
{
    struct cl_net *net = c->net;
    for (size_t i = 0; net && i < net->n_ops;) {
        struct net_op *op = net->ops[i];
        if (!matches(op, kinds, project_url, NULL)) {
            i++;
            continue;
        }
        op_detach(net, i);
        struct cl_http_done d;
        memset(&d, 0, sizeof(d));
        d.abandoned = true;
        d.rc = VS_ENET;
        snprintf(d.why, sizeof(d.why), "abandoned");
        op->done(c, op->ud, &d);
        op_free(op);
    }
}

void vs_client_net_cleanup(struct vs_client *c)
{
    if (!c->net)
        return;
    vs_client_net_abandon(c, CL_NET_ANY, NULL);
    curl_multi_cleanup(c->net->m);
    vs_free(c->net->ops);
    vs_free(c->net);
    c->net = NULL;
}
