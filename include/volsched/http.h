/*
 * The project's HTTP front end (libmicrohttpd), kept-alive connections, with
 * limits against slow and greedy clients (http_guard.h). It serves the paths of the
 * project's URLs (config.xml); by default, for a master URL with path P
 * (e.g. "/demo/" for http://127.0.0.1:8080/demo/):
 *
 *   P                              the master page (scheduler URL for the client)
 *   Pcgi                           the scheduler (POST), handed to cfg->sched
 *   Pdownload/<rel>                files of the download hierarchy (GET, Range)
 *   Pfile_upload_handler           uploads (POST), handed to cfg->upload if set
 *   Pget_project_config.php        the project's description for attach wizards
 *   Psubmit_rpc_handler.php, Pjob_file.php   remote submission (POST), cfg->api
 *   anything else (GET)            cfg->pages (status page, dashboard, metrics)
 *
 * Only the path of each URL is matched (the host part is the operator's
 * business). Everything else is a 404. With HTTPS (cfg->tls_cert_file) a
 * second listener serves the same over TLS 1.2+; with https_only the plain
 * listener serves only the master page, get_project_config.php and
 * downloads; an operator's listener (cfg->ops_host) serves only the pages. Every refused request is
 * logged at WARN with the peer address and the reason. The layer knows nothing about the store or
 * the protocol: the scheduler and the upload handler are callbacks, so that the HTTP layer can be
 * tested on its own.
 */
#ifndef VOLSCHED_SERVER_HTTP_H
#define VOLSCHED_SERVER_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "volsched/buf.h"
#include "volsched/error.h"
#include "volsched/http_addr.h"
#include "volsched/log.h"

/* Default cap on a POST body: a scheduler request with many reported results
 * stays well below it (the real client's are a few KB). */
#define VS_HTTP_DEFAULT_MAX_BODY (4u * 1024u * 1024u)
/* Default cap on an upload POST (header + file bytes; streamed to disk, not
 * held in memory): outputs larger than this need a bigger cap
 * (`serve --max-upload`); the file's own limit is its certificate's
 * max_nbytes. */
#define VS_HTTP_DEFAULT_MAX_UPLOAD (64u * 1024u * 1024u)

/*
 * A POST handler: body (NUL-terminated, len bytes) in, reply body appended to
 * out (capped buffer). peer is the client's address as text. Returns the HTTP
 * status to send (200 normally). Runs on one of the server's threads; several
 * may run at once.
 */
typedef int (*vs_http_post_fn)(void *ctx, const char *body, size_t len, const char *peer,
                               struct vs_buf *out);

/*
 * A GET page handler (status page, dashboard, metrics): it sees only the
 * request's path, query string ("" if none; "k=v&k=v" with '%', '&', '=',
 * '+', '#', spaces and bytes outside printable ASCII percent-encoded:
 * read it with vs_form_get, server/form.h), Authorization and Cookie
 * headers (NULL if none), peer, and whether it came over TLS, so that it
 * does not depend on this HTTP layer. It appends the body to out->body,
 * sets out->ctype (a static string), may set out->set_cookie (a whole
 * Set-Cookie value) and out->retry_after (seconds, for a 429 or 503), and
 * returns the HTTP status: 200, 303 (with out->location), 400, 401 (the
 * layer adds a Basic challenge), 403, 429, 500, or 404 when the path is not
 * one of its pages (the layer answers its own 404). Forms are POSTed to it
 * too (req->form).
 *
 * It runs on the front end's page thread, one page at a time, never on
 * the threads that poll the sockets: a page that reads the store or
 * checks a password (PBKDF2) holds up no download, master page or
 * scheduler request. At most VS_HTTP_PAGES_QUEUED pages wait for it; more
 * are answered 503 at once.
 */
struct vs_http_get {
    const char *path;
    const char *query;
    const char *authorization;
    const char *cookie;
    const char *peer;
    bool https;        /* came over the HTTPS listener */
    bool ops_listener; /* came over the private operator's listener */
    /* A form's POST (a path under the master URL's that is not the
     * scheduler's or the uploads'): its application/x-www-form-urlencoded
     * body, NUL-terminated (read it with vs_form_get); NULL for a GET.
     * At most VS_HTTP_FORM_MAX bytes, else answered 413 by the layer. */
    const char *form;
};
#define VS_HTTP_SET_COOKIE_MAX 256
#define VS_HTTP_PAGES_QUEUED   64
#define VS_HTTP_FORM_MAX       (64u * 1024u)
#define VS_HTTP_LOCATION_MAX   512
struct vs_http_page {
    struct vs_buf *body; /* the layer's buffer (capped) */
    const char *ctype;   /* "text/plain" until set */
    char set_cookie[VS_HTTP_SET_COOKIE_MAX];
    unsigned retry_after;
    char location[VS_HTTP_LOCATION_MAX]; /* a redirect's (303) Location; "" = none */
};
typedef int (*vs_http_get_fn)(void *ctx, const struct vs_http_get *req, struct vs_http_page *out);

/*
 * A POST handler fed as the body arrives (uploads: the file goes to disk in
 * chunks, never whole into memory). open makes the request's state (peer is
 * the client's address as text); data gets each chunk in order and returns
 * non-zero once it wants no more (the rest of the body is then read and
 * dropped); finish appends the reply body to out and returns the HTTP
 * status; close frees the state, always called once after open.
 */
struct vs_http_stream_ops {
    void *(*open)(void *ctx, const char *peer);
    int (*data)(void *req, const char *data, size_t n);
    int (*finish)(void *req, struct vs_buf *out);
    void (*close)(void *req);
};

/*
 * Remote job submission (BOINC's submit_rpc_handler.php and job_file.php,
 * POST): the request's path after the master URL's ("job_file.php"), its
 * Content-Type (NULL if none: a form is urlencoded or multipart) and body.
 * The handler appends the reply (text/xml) to out and returns the status.
 */
#define VS_HTTP_DEFAULT_MAX_API_BODY (64u * 1024u * 1024u)
struct vs_http_api_req {
    const char *path;
    const char *content_type;
    const char *body; /* NUL-terminated, len bytes */
    size_t len;
    const char *peer;
};
typedef int (*vs_http_api_fn)(void *ctx, const struct vs_http_api_req *req, struct vs_buf *out);

struct vs_http_config {
    const char *master_url;   /* "http://127.0.0.1:8080/demo/" (trailing '/') */
    const char *sched_url;    /* NULL: master_url + "cgi" */
    const char *download_url; /* NULL: master_url + "download" (no trailing '/') */
    const char *upload_url;   /* NULL: master_url + "file_upload_handler" */
    const char *project_name; /* shown on the master page; NULL: master_url */
    /* What get_project_config.php says about accounts (elements, already
     * XML; server/acct_rpc.h makes it); NULL: that accounts cannot be
     * made here. */
    const char *project_config_xml;
    const char *download_dir; /* directory served under <path>download/ */
    const char *stats_dir;    /* served under <path>stats/ (db_dump's exports); NULL: none */
    size_t max_body;          /* POST body cap; 0: VS_HTTP_DEFAULT_MAX_BODY */
    size_t max_upload_body;   /* cap of an upload POST; 0: VS_HTTP_DEFAULT_MAX_UPLOAD */
    /* HTTPS: with both PEM files named, a second listener on https_port
     * (0: a free one) serves the same paths over TLS (1.2 and 1.3,
     * forward-secret AEAD suites only), and the master page advertises
     * only the https scheduler URL (master URL's host). */
    const char *tls_cert_file, *tls_key_file;
    uint16_t https_port;
    /* With HTTPS: the plain listener serves only the master page,
     * get_project_config.php and downloads, and answers everything else
     * (scheduler, uploads, pages) 403, naming the https URL. Needs an
     * https upload URL (refused at start otherwise). */
    bool https_only;
    /* A third, plain listener for the operator (NULL: none): it serves
     * only the pages (req->ops_listener set), the others nothing else. */
    const char *ops_host;
    uint16_t ops_port;
    unsigned threads;      /* handler threads (POSTs); 0: 4 */
    unsigned poll_threads; /* threads polling the sockets; 0: 2 */
    /* Limits (http_guard.h, docs/server.md "Limits"). */
    unsigned max_connections; /* 0: sized from the open-file limit */
    unsigned max_per_address; /* connections from one address; 0: no limit */
    unsigned head_timeout;    /* seconds for a request head; 0: 30 */
    unsigned idle_timeout;    /* seconds without traffic; 0: 60 */
    unsigned body_min_rate;   /* bytes/s a body must keep; 0: no minimum */
    /* Proxies whose X-Forwarded-For is believed (copied); they are exempt
     * from max_per_address. */
    const struct vs_ip_prefix *trusted_proxies;
    size_t ntrusted_proxies;
    struct vs_log *log;    /* borrowed; may be NULL */
    vs_http_post_fn sched; /* the scheduler endpoint; required */
    void *sched_ctx;
    vs_http_post_fn upload; /* NULL: uploads answer "try later" */
    /* Streamed uploads; when set, used instead of upload (same upload_ctx). */
    const struct vs_http_stream_ops *upload_stream;
    void *upload_ctx;
    /* Remote submission's POSTs (NULL: 404), and their body cap (0:
     * VS_HTTP_DEFAULT_MAX_API_BODY); they run on the POST threads. */
    vs_http_api_fn api;
    void *api_ctx;
    size_t max_api_body;
    vs_http_get_fn pages; /* other GET paths; NULL: 404 */
    void *pages_ctx;
};

struct vs_http;

/*
 * Starts serving on host:port (port 0 picks a free port, see vs_http_port).
 * The configuration's strings are copied; ctx pointers and the log are
 * borrowed and must outlive the server. Returns 0 and *out_http, or
 * VS_EINVAL (bad URL, missing handler), -errno / VS_ENET when the address
 * cannot be bound.
 */
VS_MUST_CHECK int vs_http_start(const struct vs_http_config *cfg, const char *host, uint16_t port,
                                struct vs_http **out_http);

/* The port actually bound. */
uint16_t vs_http_port(const struct vs_http *h);
/* The HTTPS port bound, 0 without HTTPS; and the scheduler URL the master
 * page advertises for it (NULL without HTTPS). */
uint16_t vs_http_https_port(const struct vs_http *h);
const char *vs_http_https_sched_url(const struct vs_http *h);
/* The operator's listener's port, 0 without one. */
uint16_t vs_http_ops_port(const struct vs_http *h);

/* Counters since start (read without locking; approximate while running). */
struct vs_http_stats {
    uint64_t requests;
    uint64_t sched_requests;
    uint64_t downloads;
    uint64_t refused;   /* 4xx/5xx answers */
    uint64_t forwarded; /* requests whose client a trusted proxy named */
    uint64_t connections, open_connections, max_connections;
    uint64_t head_timeouts;       /* closed: request head late */
    uint64_t slow_bodies;         /* closed: body under the minimum rate */
    uint64_t refused_per_address; /* refused: over the per-address limit */
    uint64_t refused_full;        /* refused: at max_connections */
};
void vs_http_get_stats(const struct vs_http *h, struct vs_http_stats *out_stats);

/*
 * Stops accepting new connections and waits up to timeout_ms for the
 * requests in flight to be answered (SIGTERM's drain). Returns the number of
 * requests still in flight when it gave up (0: drained; idle kept-alive
 * connections do not count). Call vs_http_stop
 * afterwards.
 */
unsigned vs_http_drain(struct vs_http *h, int timeout_ms);

/* Stops accepting, finishes the requests in flight and frees everything. NULL is a no-op. */
void vs_http_stop(struct vs_http *h);

/*
 * Copies the path of an http(s) URL ("/demo/" of "http://h:1/demo/") into
 * out_path. Exposed for the tests. Returns 0, or VS_EINVAL for a URL without
 * a path, with a query or fragment, or a path that does not fit.
 */
VS_MUST_CHECK int vs_http_url_path(const char *url, char *out_path, size_t out_size);

/*
 * Checks that rel (an already-unescaped path below the download directory) is
 * safe to open: non-empty, relative, no "." or ".." or empty component, no
 * backslash, no control characters. Returns true when it is.
 */
bool vs_http_safe_relpath(const char *rel);

#endif
