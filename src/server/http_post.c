/*
 * The POST routes of the HTTP front end (the scheduler, uploads): the body
 * collected under its cap or streamed to the upload handler, then the
 * handler run on a handler thread while the connection is suspended, so
 * that the threads polling the sockets never wait on a commit or an fsync
 * (libmicrohttpd pins a connection to one polling thread: a kept-alive
 * connection whose thread waits on another request's commit would stall).
 */
#include <stdio.h>
#include <string.h>

#include "server/http_int.h"
#include "volsched/alloc.h"
#include "volsched/log.h"
#include "volsched/str.h"

/* What uploads answer until an upload handler is plugged in: a transient
 * failure, so the client keeps its outputs and retries later. */
static int upload_later(void *ctx, const char *body, size_t len, const char *peer,
                        struct vs_buf *out)
{
    (void)ctx;
    (void)body;
    (void)len;
    (void)peer;
    if (vs_buf_puts(out, "<data_server_reply>\n    <status>1</status>\n"
                         "    <message>uploads are not accepted yet; try later</message>\n"
                         "</data_server_reply>\n") != 0)
        return MHD_HTTP_INTERNAL_SERVER_ERROR;
    return MHD_HTTP_OK;
}

static struct vs_http_conn *conn_rec(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

struct vs_http_post *vs_http__post_new(struct vs_http *h, struct MHD_Connection *c,
                                       enum vs_http_route route, size_t body_cap)
{
    struct vs_http_post *pr = VS_NEW(struct vs_http_post);
    pr->route = route;
    pr->conn = c;
    vs_http__peer(h, c, pr->peer, sizeof(pr->peer));
    vs_buf_init(&pr->body, body_cap); /* a streamed route only uses its cap */
    vs_buf_init(&pr->out, VS_HTTP_MAX_REPLY);
    vs_buf_init(&pr->strs, 64 * 1024);
    return pr;
}

/* A remote submission request over the body cap: refused (413) in the
 * submission API's error shape (BOINC-COMPAT xml_error), so its clients
 * show the reason. */
static enum MHD_Result refuse_api_size(struct vs_http *h, struct MHD_Connection *c,
                                       const char *method, const char *url)
{
    char peer[VS_HTTP_PEER_MAX];
    vs_http__peer(h, c, peer, sizeof(peer));
    atomic_fetch_add_explicit(&h->n_refused, 1, memory_order_relaxed);
    VS_LOG(h->cfg.log, VS_LOG_WARN, "http 413 %s %s from %s: request body over %zu bytes", method,
           url, peer, h->max_api_body);
    char text[400];
    int n = snprintf(text, sizeof(text),
                     "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n<error>\n"
                     "    <error_num>-1</error_num>\n    <error_msg>The request is larger than "
                     "this project accepts (%zu bytes); submit the jobs in smaller batches, or "
                     "upload large inputs with job_file.php.</error_msg>\n</error>\n",
                     h->max_api_body);
    if (n < 0 || (size_t)n >= sizeof(text))
        return MHD_NO;
    struct MHD_Response *r =
        MHD_create_response_from_buffer((size_t)n, text, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/xml");
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_CONTENT_TOO_LARGE, r);
    MHD_destroy_response(r);
    return ret;
}

/* Keeps a remote submission POST's path (after the master URL's) and
 * Content-Type; its reply may be as large as its body cap (a query of a
 * large batch). */
static int api_begin(struct vs_http *h, struct MHD_Connection *c, struct vs_http_post *pr,
                     const char *url)
{
    const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    const char *rel = url + strlen(h->path);
    pr->out.max_len = h->max_api_body > VS_HTTP_MAX_REPLY ? h->max_api_body : VS_HTTP_MAX_REPLY;
    pr->api_path = pr->strs.len + 1;
    int rc = vs_buf_append(&pr->strs, rel, strlen(rel) + 1);
    if (rc == 0 && ct) {
        pr->api_ctype = pr->strs.len + 1;
        rc = vs_buf_append(&pr->strs, ct, strlen(ct) + 1);
    }
    return rc;
}

enum MHD_Result vs_http__post_begin(struct vs_http *h, struct MHD_Connection *c,
                                    enum vs_http_route route, const char *method, const char *url,
                                    struct vs_http_post **out_pr)
{
    *out_pr = NULL;
    const char *cl =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    int64_t clen = 0;
    size_t cap = route == VS_ROUTE_UPLOAD ? h->max_upload
                 : route == VS_ROUTE_FORM ? VS_HTTP_FORM_MAX
                 : route == VS_ROUTE_API  ? h->max_api_body
                                          : h->max_body;
    if (cl && vs_parse_int64(cl, &clen) == 0 && clen > 0 && (uint64_t)clen > cap)
        return route == VS_ROUTE_API ? refuse_api_size(h, c, method, url)
                                     : vs_http__refuse(h, c, MHD_HTTP_CONTENT_TOO_LARGE, method,
                                                       url, "request body over limit");
    if (route == VS_ROUTE_SCHED)
        atomic_fetch_add_explicit(&h->n_sched, 1, memory_order_relaxed);
    struct vs_http_post *pr = vs_http__post_new(h, c, route, cap);
    if (route == VS_ROUTE_API && api_begin(h, c, pr, url) != 0) {
        vs_http__post_free(pr);
        return vs_http__refuse(h, c, MHD_HTTP_BAD_REQUEST, method, url, "request head too large");
    }
    if (route == VS_ROUTE_UPLOAD && h->cfg.upload_stream) {
        pr->ops = h->cfg.upload_stream;
        pr->sreq = pr->ops->open(h->cfg.upload_ctx, pr->peer);
    }
    vs_http_guard_head_done(h->guard, conn_rec(c), true);
    *out_pr = pr;
    return MHD_YES;
}

/* The handler's work for a complete body (on a handler thread). */
static void run_handler(struct vs_http *h, struct vs_http_post *pr)
{
    if (pr->route == VS_ROUTE_PAGE) {
        vs_http__page_run(h, pr);
        return;
    }
    if (pr->ops) {
        pr->status = pr->ops->finish(pr->sreq, &pr->out);
        return;
    }
    if (pr->route == VS_ROUTE_API) {
        struct vs_http_api_req req = {
            .path = pr->strs.data + pr->api_path - 1,
            .content_type = pr->api_ctype ? pr->strs.data + pr->api_ctype - 1 : NULL,
            .body = pr->body.data ? pr->body.data : "",
            .len = pr->body.len,
            .peer = pr->peer,
        };
        pr->status = h->cfg.api(h->cfg.api_ctx, &req, &pr->out);
        return;
    }
    vs_http_post_fn fn = pr->route == VS_ROUTE_SCHED ? h->cfg.sched : h->cfg.upload;
    void *ctx = pr->route == VS_ROUTE_SCHED ? h->cfg.sched_ctx : h->cfg.upload_ctx;
    if (!fn)
        fn = upload_later;
    /* The body buffer is NULL until the first byte; handlers get "" instead. */
    const char *body = pr->body.data ? pr->body.data : "";
    pr->status = fn(ctx, body, pr->body.len, pr->peer, &pr->out);
}

static enum MHD_Result answer(struct vs_http *h, struct MHD_Connection *c, struct vs_http_post *pr,
                              const char *method, const char *url)
{
    if (pr->status != MHD_HTTP_OK) {
        atomic_fetch_add_explicit(&h->n_refused, 1, memory_order_relaxed);
        VS_LOG(h->cfg.log, VS_LOG_WARN, "http %d %s %s from %s: handler refused", pr->status,
               method, url, pr->peer);
    }
    struct MHD_Response *r = vs_http__take_response(&pr->out, "text/xml");
    if (!r)
        return MHD_NO;
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)pr->status, r);
    MHD_destroy_response(r);
    return ret;
}

int vs_http__dispatch(struct vs_http_pool *p, struct vs_http_post *pr)
{
    pthread_mutex_lock(&p->mu);
    if (p->stop || !p->started) {
        pthread_mutex_unlock(&p->mu);
        return 0;
    }
    if (p->max_queued && p->queued >= p->max_queued) {
        pthread_mutex_unlock(&p->mu);
        return -1;
    }
    /* Suspended before it is queued, so a quick handler thread can never
     * resume it first. */
    MHD_suspend_connection(pr->conn);
    pr->state = POST_RUNNING;
    pr->next = NULL;
    if (p->tail)
        p->tail->next = pr;
    else
        p->head = pr;
    p->tail = pr;
    p->queued++;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return 1;
}

enum MHD_Result vs_http__post_step(struct vs_http *h, struct MHD_Connection *c,
                                   struct vs_http_post *pr, const char *method, const char *url,
                                   const char *data, size_t *data_size)
{
    if (pr->state == POST_DONE)
        return pr->route == VS_ROUTE_PAGE ? vs_http__page_answer(h, c, pr, method, url)
                                          : answer(h, c, pr, method, url);
    if (pr->state == POST_RUNNING)
        return MHD_YES; /* not expected: MHD calls again only once resumed */
    if (*data_size > 0) {
        size_t n = *data_size;
        *data_size = 0;
        vs_http_guard_body(h->guard, conn_rec(c), n);
        if (pr->ops) {
            /* Streamed: the chunk goes to the handler, nothing stays
             * here; bytes after its decision are dropped. */
            pr->nread += n;
            if (pr->nread > pr->body.max_len)
                pr->too_big = true;
            if (!pr->too_big && !pr->stop && pr->ops->data(pr->sreq, data, n) != 0)
                pr->stop = true;
            return MHD_YES;
        }
        if (!pr->too_big && vs_buf_append(&pr->body, data, n) != 0)
            pr->too_big = true;
        return MHD_YES;
    }
    /* The whole body is in. */
    vs_http_guard_busy(h->guard, conn_rec(c));
    if (pr->too_big)
        return pr->route == VS_ROUTE_API ? refuse_api_size(h, c, method, url)
                                         : vs_http__refuse(h, c, MHD_HTTP_CONTENT_TOO_LARGE, method,
                                                           url, "request body over limit");
    if (pr->route == VS_ROUTE_FORM)
        return vs_http__form_ready(h, c, pr, method, url);
    if (vs_http__dispatch(&h->pool, pr) > 0)
        return MHD_YES;
    run_handler(h, pr);
    pr->state = POST_DONE;
    return answer(h, c, pr, method, url);
}

void vs_http__post_free(struct vs_http_post *pr)
{
    if (!pr)
        return;
    if (pr->ops)
        pr->ops->close(pr->sreq);
    vs_buf_cleanup(&pr->body);
    vs_buf_cleanup(&pr->out);
    vs_buf_cleanup(&pr->strs);
    vs_free(pr);
}

static void *pool_main(void *arg)
{
    struct vs_http_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->head && !p->stop)
            pthread_cond_wait(&p->cv, &p->mu);
        struct vs_http_post *pr = p->head;
        if (!pr)
            break; /* stopping, and nothing left */
        p->head = pr->next;
        if (!p->head)
            p->tail = NULL;
        p->queued--;
        pthread_mutex_unlock(&p->mu);
        run_handler(p->h, pr);
        pr->state = POST_DONE;
        /* MHD's resume takes its own lock: what the handler wrote is seen
         * by the polling thread that answers. */
        MHD_resume_connection(pr->conn);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

void vs_http__pool_init(struct vs_http *h, struct vs_http_pool *p, unsigned max_queued)
{
    p->h = h;
    p->max_queued = max_queued;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
}

int vs_http__pool_start(struct vs_http_pool *p, unsigned nthreads)
{
    p->threads = vs_xmalloc(nthreads * sizeof(*p->threads));
    p->started = true;
    for (unsigned i = 0; i < nthreads; i++) {
        if (pthread_create(&p->threads[i], NULL, pool_main, p) != 0)
            return VS_ENOMEM;
        p->nthreads++;
    }
    return 0;
}

void vs_http__pool_stop(struct vs_http_pool *p)
{
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    vs_free(p->threads);
    p->threads = NULL;
    p->nthreads = 0;
}

void vs_http__pool_free(struct vs_http_pool *p)
{
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
}
