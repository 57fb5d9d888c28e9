/*
 * Inside the HTTP front end (http.c: listeners, routing, downloads;
 * http_post.c: the POST routes and the handler threads; http_pages.c:
 * the master page and the GET pages). Not for use outside src/server/http*.c.
 */
#ifndef VOLSCHED_SERVER_HTTP_INT_H
#define VOLSCHED_SERVER_HTTP_INT_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>

#include "server/http.h"
#include "server/http_guard.h"

#define VS_HTTP_PATH_MAX  512
#define VS_HTTP_MAX_REPLY (16u * 1024u * 1024u)
#define VS_HTTP_PEER_MAX  64

enum vs_http_route { VS_ROUTE_NONE = 0, VS_ROUTE_SCHED, VS_ROUTE_UPLOAD };

struct vs_http_post;

/* The handler threads: POST handlers (the scheduler waits on the group
 * commit, an upload on its fsyncs) run here, off the threads that poll the
 * sockets, so one slow request never holds the others of its thread. */
struct vs_http_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct vs_http_post *head, *tail;
    pthread_t *threads;
    unsigned nthreads;
    bool stop;
};

struct vs_http {
    struct MHD_Daemon *d;
    struct MHD_Daemon *tls_d;  /* HTTPS, when a certificate is configured */
    char *tls_cert, *tls_key;  /* PEM text, alive while tls_d runs */
    char *https_sched_url;     /* what the master page advertises with TLS */
    struct vs_http_config cfg; /* strings below are our copies */
    char *master_url;
    char *sched_url;
    char *download_dir;
    int download_fd;
    char path[VS_HTTP_PATH_MAX]; /* master page, "/demo/" */
    char sched_path[VS_HTTP_PATH_MAX];
    char dl_path[VS_HTTP_PATH_MAX]; /* "/demo/download/" (with the '/') */
    char ul_path[VS_HTTP_PATH_MAX];
    char cfg_path[VS_HTTP_PATH_MAX]; /* "/demo/get_project_config.php" */
    size_t path_len, dl_path_len;
    size_t max_body, max_upload;
    unsigned max_connections;
    struct MHD_Response *master_resp;
    struct MHD_Response *config_resp;
    struct vs_http_guard *guard;
    struct vs_http_pool pool;
    bool pool_inited, pool_started; /* handler threads may take requests */
    _Atomic unsigned inflight;      /* requests begun and not completed (the drain waits) */
    /* The pages name the bound ports, so they are built once the daemons
     * listen; until then the page paths answer 503. */
    _Atomic bool pages_ready;
    _Atomic uint64_t n_requests, n_sched, n_downloads, n_refused, n_forwarded;
};

/* Per-request state for POSTs, freed by the request-completed callback. */
struct vs_http_post {
    struct vs_http_post *next; /* the pool's queue */
    struct MHD_Connection *conn;
    enum vs_http_route route;
    bool too_big;
    enum { POST_BODY = 0, POST_RUNNING, POST_DONE } state;
    struct vs_buf body;
    /* A streamed route: the handler's state, bytes seen, handler done. */
    const struct vs_http_stream_ops *ops;
    void *sreq;
    uint64_t nread;
    bool stop;
    int status;        /* the handler's answer, once POST_DONE */
    struct vs_buf out; /* its reply body */
    char peer[VS_HTTP_PEER_MAX];
};

/* Answers a short plain-text error and logs why, with the peer address. */
enum MHD_Result vs_http__refuse(struct vs_http *h, struct MHD_Connection *c, unsigned status,
                                const char *method, const char *url, const char *why);
/* The client's address as text: the socket's peer, or the client a trusted
 * proxy names in X-Forwarded-For. */
void vs_http__peer(struct vs_http *h, struct MHD_Connection *c, char *out, size_t n);
/* An MHD response that owns b's bytes (b is left empty), with its
 * Content-Type; NULL when MHD cannot make one (the bytes are freed). */
struct MHD_Response *vs_http__take_response(struct vs_buf *b, const char *ctype);

/* http_post.c: a POST to route (the head is in): its state, or an answer
 * already queued (*out_pr NULL, the MHD result returned). */
enum MHD_Result vs_http__post_begin(struct vs_http *h, struct MHD_Connection *c,
                                    enum vs_http_route route, const char *method, const char *url,
                                    struct vs_http_post **out_pr);
/* The later calls of the access handler for a POST. */
enum MHD_Result vs_http__post_step(struct vs_http *h, struct MHD_Connection *c,
                                   struct vs_http_post *pr, const char *method, const char *url,
                                   const char *data, size_t *data_size);
void vs_http__post_free(struct vs_http_post *pr);
/* The queue's lock (pool_init, before any listener) and its threads. */
void vs_http__pool_init(struct vs_http *h);
int vs_http__pool_start(struct vs_http *h, unsigned nthreads);
/* Runs what is queued, then stops the threads: POSTs arriving later run
 * on their polling thread. */
void vs_http__pool_stop(struct vs_http *h);
/* After the listeners stopped. */
void vs_http__pool_free(struct vs_http *h);

/* http_pages.c */
int vs_http__build_pages(struct vs_http *h);
enum MHD_Result vs_http__serve_page(struct vs_http *h, struct MHD_Connection *c, const char *method,
                                    const char *url);

#endif
