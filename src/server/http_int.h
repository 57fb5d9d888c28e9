/*
 * Inside the HTTP front end (http.c: listeners, routing; http_post.c: the
 * POST routes and the handler threads; http_pages.c: the master page and
 * the GET pages on their thread; http_download.c: downloads; http_tls.c:
 * HTTPS). Not for use outside src/server/http*.c.
 */
#ifndef VOLSCHED_SERVER_HTTP_INT_H
#define VOLSCHED_SERVER_HTTP_INT_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include "server/http_guard.h"
#include "volsched/http.h"

#define VS_HTTP_PATH_MAX  512
#define VS_HTTP_MAX_REPLY (16u * 1024u * 1024u)
#define VS_HTTP_PEER_MAX  64

enum vs_http_route {
    VS_ROUTE_NONE = 0,
    VS_ROUTE_SCHED,
    VS_ROUTE_UPLOAD,
    VS_ROUTE_PAGE,
    VS_ROUTE_FORM, /* a form's POST: its body, then a page */
    VS_ROUTE_API   /* submit_rpc_handler.php, job_file.php: the submission API */
};

/* Which listener a connection came in on. */
enum vs_http_listener { VS_LISTEN_PLAIN = 0, VS_LISTEN_TLS, VS_LISTEN_OPS };

struct vs_http_post;

/* The handler threads: POST handlers (the scheduler waits on the group
 * commit, an upload on its fsyncs) run here, off the threads that poll the
 * sockets, so one slow request never holds the others of its thread. The
 * pages (a store read, a password check) have a pool of their own, one
 * thread with a bounded queue, so that they never take the scheduler's. */
struct vs_http_pool {
    struct vs_http *h;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct vs_http_post *head, *tail;
    pthread_t *threads;
    unsigned nthreads;
    unsigned queued, max_queued; /* waiting now; 0: no bound */
    bool started;                /* threads may take requests */
    bool stop;
};

/* A listener's entry for its connection callback (see on_connection). */
struct vs_http_lctx {
    struct vs_http *h;
    enum vs_http_listener kind;
};

struct vs_http {
    struct MHD_Daemon *d;
    struct MHD_Daemon *tls_d;    /* HTTPS, when a certificate is configured */
    struct MHD_Daemon *ops_d;    /* the operator's private listener, if any */
    struct vs_http_lctx lctx[3]; /* indexed by enum vs_http_listener */
    char *tls_cert, *tls_key;    /* PEM text, alive while tls_d runs */
    char *https_sched_url;       /* what the master page advertises with TLS */
    char *https_base;            /* "https://HOST:PORT" (https_only's refusals name it) */
    struct vs_http_config cfg;   /* strings below are our copies */
    char *master_url;
    char *sched_url;
    char *download_dir;
    int download_fd;
    char *stats_dir;             /* NULL: no stats/ */
    char path[VS_HTTP_PATH_MAX]; /* master page, "/demo/" */
    char sched_path[VS_HTTP_PATH_MAX];
    char dl_path[VS_HTTP_PATH_MAX]; /* "/demo/download/" (with the '/') */
    char ul_path[VS_HTTP_PATH_MAX];
    char cfg_path[VS_HTTP_PATH_MAX];     /* "/demo/get_project_config.php" */
    char submit_path[VS_HTTP_PATH_MAX];  /* "/demo/submit_rpc_handler.php" */
    char jobfile_path[VS_HTTP_PATH_MAX]; /* "/demo/job_file.php" */
    size_t path_len, dl_path_len;
    size_t max_body, max_upload, max_api_body;
    unsigned max_connections;
    struct MHD_Response *master_resp;
    struct MHD_Response *config_resp;
    struct vs_http_guard *guard;
    struct vs_http_pool pool;      /* POSTs */
    struct vs_http_pool page_pool; /* GET pages */
    bool pool_inited;
    _Atomic unsigned inflight; /* requests begun and not completed (the drain waits) */
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
    /* A page (VS_ROUTE_PAGE): the request, its strings' copies (one
     * buffer), and the handler's headers. */
    struct vs_http_get get;
    struct vs_buf strs;
    struct vs_http_page page;
    /* A remote submission POST (VS_ROUTE_API): its path and Content-Type
     * (offsets + 1 into strs, 0 for none). */
    size_t api_path, api_ctype;
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
/* A pool's lock (pool_init, before any listener) and its threads. */
void vs_http__pool_init(struct vs_http *h, struct vs_http_pool *p, unsigned max_queued);
int vs_http__pool_start(struct vs_http_pool *p, unsigned nthreads);
/* Runs what is queued, then stops the threads: requests arriving later
 * run on their polling thread. */
void vs_http__pool_stop(struct vs_http_pool *p);
/* After the listeners stopped. */
void vs_http__pool_free(struct vs_http_pool *p);
/* Hands pr to p's threads with its connection suspended: 1; 0 when the
 * threads are stopping (the caller runs it itself); -1 when p's queue is
 * full (nothing done). */
int vs_http__dispatch(struct vs_http_pool *p, struct vs_http_post *pr);
/* The new state of a request (POST or page), answering on conn. */
struct vs_http_post *vs_http__post_new(struct vs_http *h, struct MHD_Connection *c,
                                       enum vs_http_route route, size_t body_cap);
/* The listener c came in on. */
enum vs_http_listener vs_http__listener(struct vs_http *h, struct MHD_Connection *c);

/* http.c: one listening daemon on ss (port given separately): plain, TLS,
 * or the operator's (plain). NULL when it cannot listen. */
struct MHD_Daemon *vs_http__start_daemon(struct vs_http *h, const struct vs_http_config *cfg,
                                         struct sockaddr_storage *ss, bool v6, uint16_t port,
                                         enum vs_http_listener kind);

/* http_tls.c: the GnuTLS priority string of the TLS listener. */
extern const char vs_http__tls_priorities[];
/* HTTPS's conditions before anything listens (upload_url: the upload URL
 * in force): 0, or VS_ECONFIG (logged). */
int vs_http__check_https(const struct vs_http_config *cfg, const char *upload_url);
/* The TLS listener on ss at cfg->https_port, and h->https_base and
 * h->https_sched_url (host: the master URL's). 0 or an error (logged). */
int vs_http__start_tls(struct vs_http *h, const struct vs_http_config *cfg, const char *host,
                       struct sockaddr_storage *ss, bool v6);

/* http_download.c: GET of rel below the download directory. */
/* GET <path>stats/<rel>: a file of the statistics exports' directory. */
enum MHD_Result vs_http__serve_stats(struct vs_http *h, struct MHD_Connection *c,
                                     const char *method, const char *url, const char *rel);
enum MHD_Result vs_http__serve_download(struct vs_http *h, struct MHD_Connection *c,
                                        const char *method, const char *url, const char *rel);

/* http_pages.c */
int vs_http__build_pages(struct vs_http *h);
/* A GET for the page handler: queued for the page thread (*con_cls then
 * holds its state), or answered at once (busy, no handler). */
enum MHD_Result vs_http__serve_page(struct vs_http *h, struct MHD_Connection *c, const char *method,
                                    const char *url, void **con_cls);
/* A form's POST whose body is in: handed to the page handler like a GET
 * (with req.form), or answered at once. */
enum MHD_Result vs_http__form_ready(struct vs_http *h, struct MHD_Connection *c,
                                    struct vs_http_post *pr, const char *method, const char *url);
/* Runs the page handler for pr (on the page thread). */
void vs_http__page_run(struct vs_http *h, struct vs_http_post *pr);
/* Answers a page whose handler has run. */
enum MHD_Result vs_http__page_answer(struct vs_http *h, struct MHD_Connection *c,
                                     struct vs_http_post *pr, const char *method, const char *url);

#endif
