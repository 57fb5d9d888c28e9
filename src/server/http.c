/*
 * HTTP front end on libmicrohttpd: routing, body collection with a hard cap,
 * the master page, downloads with Range, and logging of refused requests.
 * See http.h for the URL layout.
 */
#include "server/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/str.h"

#define PATH_MAX_LEN 512
#define MAX_REPLY    (16u * 1024u * 1024u)

enum route { R_NONE = 0, R_SCHED, R_UPLOAD };

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
    char path[PATH_MAX_LEN]; /* master page, "/demo/" */
    char sched_path[PATH_MAX_LEN];
    char dl_path[PATH_MAX_LEN]; /* "/demo/download/" (with the '/') */
    char ul_path[PATH_MAX_LEN];
    char cfg_path[PATH_MAX_LEN]; /* "/demo/get_project_config.php" */
    size_t path_len, dl_path_len;
    size_t max_body, max_upload;
    struct MHD_Response *master_resp;
    struct MHD_Response *config_resp;
    /* The pages name the bound ports, so they are built once the daemons
     * listen; until then the page paths answer 503. */
    _Atomic bool pages_ready;
    _Atomic uint64_t n_requests, n_sched, n_downloads, n_refused;
};

/* Per-request state for POSTs, freed by request_completed. */
struct post_req {
    enum route route;
    bool too_big;
    struct vs_buf body;
    /* A streamed route: the handler's state, bytes seen, handler done. */
    const struct vs_http_stream_ops *ops;
    void *sreq;
    uint64_t nread;
    bool stop;
};

static void peer_text(struct MHD_Connection *c, char *out, size_t n)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    out[0] = '\0';
    if (!ci || !ci->client_addr)
        return;
    const struct sockaddr *sa = ci->client_addr;
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, out,
                  (socklen_t)n);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, out,
                  (socklen_t)n);
}

/* Answers a short plain-text error and logs why, with the peer address. */
static enum MHD_Result refuse(struct vs_http *h, struct MHD_Connection *c, unsigned status,
                              const char *method, const char *url, const char *why)
{
    char peer[64];
    peer_text(c, peer, sizeof(peer));
    atomic_fetch_add_explicit(&h->n_refused, 1, memory_order_relaxed);
    VS_LOG(h->cfg.log, VS_LOG_WARN, "http %u %s %s from %s: %s", status, method, url, peer, why);
    char text[256];
    int n = snprintf(text, sizeof(text), "%u %s\n", status, why);
    if (n < 0)
        n = 0;
    if ((size_t)n >= sizeof(text))
        n = (int)sizeof(text) - 1;
    struct MHD_Response *r =
        MHD_create_response_from_buffer((size_t)n, text, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

int vs_http_url_path(const char *url, char *out_path, size_t out_size)
{
    const char *p = strstr(url, "://");
    if (!p)
        return VS_EINVAL;
    p = strchr(p + 3, '/');
    if (!p)
        return VS_EINVAL;
    size_t n = strlen(p);
    if (n >= out_size || strchr(p, '?') || strchr(p, '#'))
        return VS_EINVAL;
    memcpy(out_path, p, n + 1);
    return 0;
}

bool vs_http_safe_relpath(const char *rel)
{
    if (!rel || !*rel || rel[0] == '/')
        return false;
    const char *seg = rel;
    for (const char *s = rel;; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '/' || ch == '\0') {
            size_t n = (size_t)(s - seg);
            if (n == 0 || (n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
                return false;
            if (ch == '\0')
                return true;
            seg = s + 1;
            continue;
        }
        if (ch < 0x20 || ch == 0x7f || ch == '\\')
            return false;
    }
}

/* Parses "bytes=N-" or "bytes=N-M" into [*start, *end] (inclusive) for a file
 * of size bytes. Returns 1 for a usable range, 0 to ignore the header (serve
 * everything), -1 when the range lies past the end (416). */
static int parse_range(const char *hdr, uint64_t size, uint64_t *start, uint64_t *end)
{
    if (!vs_str_has_prefix(hdr, "bytes="))
        return 0;
    const char *p = hdr + 6;
    if (strchr(p, ','))
        return 0; /* multi-range: not worth it, whole file is valid too */
    char *dash;
    errno = 0;
    unsigned long long a = strtoull(p, &dash, 10);
    if (dash == p || *dash != '-' || errno)
        return 0;
    unsigned long long b = size ? size - 1 : 0;
    if (dash[1] != '\0') {
        char *e;
        b = strtoull(dash + 1, &e, 10);
        if (*e != '\0' || errno || b < a)
            return 0;
        if (b >= size)
            b = size ? size - 1 : 0;
    }
    if (a >= size)
        return -1;
    *start = a;
    *end = b;
    return 1;
}

static enum MHD_Result serve_download(struct vs_http *h, struct MHD_Connection *c,
                                      const char *method, const char *url, const char *rel)
{
    if (!vs_http_safe_relpath(rel))
        return refuse(h, c, MHD_HTTP_NOT_FOUND, method, url, "unsafe download path");
    int fd = openat(h->download_fd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return refuse(h, c, MHD_HTTP_NOT_FOUND, method, url, "no such file");
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return refuse(h, c, MHD_HTTP_NOT_FOUND, method, url, "not a regular file");
    }
    uint64_t size = (uint64_t)st.st_size, start = 0, end = size ? size - 1 : 0;
    unsigned status = MHD_HTTP_OK;
    const char *range = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_RANGE);
    if (range) {
        int rr = parse_range(range, size, &start, &end);
        if (rr < 0) {
            close(fd);
            char cr[64];
            snprintf(cr, sizeof(cr), "bytes */%" PRIu64, size);
            struct MHD_Response *r =
                MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
            if (!r)
                return MHD_NO;
            MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_RANGE, cr);
            VS_LOG(h->cfg.log, VS_LOG_WARN, "http 416 %s %s: range '%s' past end", method, url,
                   range);
            atomic_fetch_add_explicit(&h->n_refused, 1, memory_order_relaxed);
            enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_RANGE_NOT_SATISFIABLE, r);
            MHD_destroy_response(r);
            return ret;
        }
        if (rr > 0)
            status = MHD_HTTP_PARTIAL_CONTENT;
    }
    uint64_t len = size ? end - start + 1 : 0;
    /* MHD owns fd from here and closes it with the response. */
    struct MHD_Response *r = MHD_create_response_from_fd_at_offset64(len, fd, start);
    if (!r) {
        close(fd);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
    MHD_add_response_header(r, MHD_HTTP_HEADER_ACCEPT_RANGES, "bytes");
    if (status == MHD_HTTP_PARTIAL_CONTENT) {
        char cr[96];
        snprintf(cr, sizeof(cr), "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, start, end, size);
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_RANGE, cr);
    }
    atomic_fetch_add_explicit(&h->n_downloads, 1, memory_order_relaxed);
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

/* An MHD response that owns b's bytes (b is left empty), with its
 * Content-Type; NULL when MHD cannot make one (the bytes are freed). */
static struct MHD_Response *take_response(struct vs_buf *b, const char *ctype)
{
    size_t len = 0;
    char *data = vs_buf_take(b, &len);
    struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback(
        len, data ? data : "", data ? vs_free : NULL);
    if (!r) {
        vs_free(data);
        return NULL;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    return r;
}

static enum MHD_Result finish_post(struct vs_http *h, struct MHD_Connection *c, struct post_req *pr,
                                   const char *method, const char *url)
{
    if (pr->too_big)
        return refuse(h, c, MHD_HTTP_CONTENT_TOO_LARGE, method, url, "request body over limit");
    char peer[64];
    peer_text(c, peer, sizeof(peer));
    struct vs_buf out;
    vs_buf_init(&out, MAX_REPLY);
    int status;
    if (pr->ops) {
        status = pr->ops->finish(pr->sreq, &out);
    } else {
        vs_http_post_fn fn = pr->route == R_SCHED ? h->cfg.sched : h->cfg.upload;
        void *ctx = pr->route == R_SCHED ? h->cfg.sched_ctx : h->cfg.upload_ctx;
        /* The body buffer is NULL until the first byte; handlers get "" instead. */
        const char *body = pr->body.data ? pr->body.data : "";
        status = fn(ctx, body, pr->body.len, peer, &out);
    }
    if (status != MHD_HTTP_OK) {
        atomic_fetch_add_explicit(&h->n_refused, 1, memory_order_relaxed);
        VS_LOG(h->cfg.log, VS_LOG_WARN, "http %d %s %s from %s: handler refused", status, method,
               url, peer);
    }
    struct MHD_Response *r = take_response(&out, "text/xml");
    if (!r)
        return MHD_NO;
    /* One POST per connection. libmicrohttpd 0.9.75 in its epoll mode
     * sometimes leaves a request that arrives on a kept-alive connection
     * right after the previous reply unread until its idle timeout (the
     * bench's load generator, or a proxy in front, sends that fast; the
     * BOINC client makes one RPC per connection anyway). */
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ret;
}

struct query_acc {
    struct vs_buf *b;
    int rc;
};

static enum MHD_Result add_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *value)
{
    (void)kind;
    struct query_acc *q = cls;
    if (q->rc == 0)
        q->rc = vs_buf_printf(q->b, "%s%s%s%s", q->b->len ? "&" : "", key, value ? "=" : "",
                              value ? value : "");
    return q->rc == 0 ? MHD_YES : MHD_NO;
}

/* A GET for a path none of the fixed routes own: the page handler's turn. */
static enum MHD_Result serve_page(struct vs_http *h, struct MHD_Connection *c, const char *method,
                                  const char *url)
{
    if (!h->cfg.pages)
        return refuse(h, c, MHD_HTTP_NOT_FOUND, method, url, "no such page");
    struct vs_buf query;
    vs_buf_init(&query, 4096);
    struct query_acc qa = {.b = &query};
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_arg, &qa);
    char peer[64];
    peer_text(c, peer, sizeof(peer));
    struct vs_http_get req = {
        .path = url,
        .query = vs_buf_str(&query),
        .authorization =
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION),
        .peer = peer,
    };
    struct vs_buf out;
    vs_buf_init(&out, MAX_REPLY);
    const char *ctype = "text/plain";
    int status = qa.rc ? MHD_HTTP_BAD_REQUEST : h->cfg.pages(h->cfg.pages_ctx, &req, &out, &ctype);
    vs_buf_cleanup(&query);
    if (status == MHD_HTTP_NOT_FOUND) {
        vs_buf_cleanup(&out);
        return refuse(h, c, MHD_HTTP_NOT_FOUND, method, url, "no such page");
    }
    struct MHD_Response *r = take_response(&out, ctype);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (status == MHD_HTTP_UNAUTHORIZED) {
        atomic_fetch_add_explicit(&h->n_refused, 1, memory_order_relaxed);
        MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                "Basic realm=\"volsched operator\", charset=\"UTF-8\"");
    }
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ret;
}

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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    (void)version;
    struct vs_http *h = cls;
    struct post_req *pr = *con_cls;
    if (pr) {
        /* Later calls of a POST: collect the body, then answer. */
        if (*upload_data_size > 0) {
            size_t n = *upload_data_size;
            *upload_data_size = 0;
            if (pr->ops) {
                /* Streamed: the chunk goes to the handler, nothing stays
                 * here; bytes after its decision are dropped. */
                pr->nread += n;
                if (pr->nread > pr->body.max_len)
                    pr->too_big = true;
                if (!pr->too_big && !pr->stop && pr->ops->data(pr->sreq, upload_data, n) != 0)
                    pr->stop = true;
                return MHD_YES;
            }
            if (!pr->too_big && vs_buf_append(&pr->body, upload_data, n) != 0)
                pr->too_big = true;
            return MHD_YES;
        }
        return finish_post(h, c, pr, method, url);
    }
    atomic_fetch_add_explicit(&h->n_requests, 1, memory_order_relaxed);
    bool is_get =
        strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
    bool is_post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;

    bool pages = atomic_load_explicit(&h->pages_ready, memory_order_acquire);
    /* The master URL's path, with or without its trailing '/'. */
    if ((strncmp(url, h->path, h->path_len - 1) == 0 &&
         (url[h->path_len - 1] == '\0' || strcmp(url + h->path_len - 1, "/") == 0 ||
          strcmp(url + h->path_len - 1, "/index.html") == 0))) {
        if (!is_get)
            return refuse(h, c, MHD_HTTP_METHOD_NOT_ALLOWED, method, url, "master page is GET");
        if (!pages)
            return refuse(h, c, MHD_HTTP_SERVICE_UNAVAILABLE, method, url, "starting");
        return MHD_queue_response(c, MHD_HTTP_OK, h->master_resp);
    }
    if (strcmp(url, h->cfg_path) == 0 && is_get) {
        if (!pages)
            return refuse(h, c, MHD_HTTP_SERVICE_UNAVAILABLE, method, url, "starting");
        return MHD_queue_response(c, MHD_HTTP_OK, h->config_resp);
    }
    if (strncmp(url, h->dl_path, h->dl_path_len) == 0) {
        if (!is_get)
            return refuse(h, c, MHD_HTTP_METHOD_NOT_ALLOWED, method, url, "downloads are GET");
        return serve_download(h, c, method, url, url + h->dl_path_len);
    }
    enum route route = R_NONE;
    if (strcmp(url, h->sched_path) == 0)
        route = R_SCHED;
    else if (strcmp(url, h->ul_path) == 0)
        route = R_UPLOAD;
    if (route == R_NONE && is_get)
        return serve_page(h, c, method, url);
    if (route == R_NONE)
        return refuse(h, c, MHD_HTTP_NOT_FOUND, method, url, "no such page");
    if (!is_post)
        return refuse(h, c, MHD_HTTP_METHOD_NOT_ALLOWED, method, url, "endpoint takes POST");
    const char *cl =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    int64_t clen = 0;
    size_t cap = route == R_UPLOAD ? h->max_upload : h->max_body;
    if (cl && vs_parse_int64(cl, &clen) == 0 && clen > 0 && (uint64_t)clen > cap)
        return refuse(h, c, MHD_HTTP_CONTENT_TOO_LARGE, method, url, "request body over limit");
    if (route == R_SCHED)
        atomic_fetch_add_explicit(&h->n_sched, 1, memory_order_relaxed);
    pr = VS_NEW(struct post_req);
    pr->route = route;
    vs_buf_init(&pr->body, cap); /* a streamed route only uses its cap */
    if (route == R_UPLOAD && h->cfg.upload_stream) {
        char peer[64];
        peer_text(c, peer, sizeof(peer));
        pr->ops = h->cfg.upload_stream;
        pr->sreq = pr->ops->open(h->cfg.upload_ctx, peer);
    }
    *con_cls = pr;
    return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    struct post_req *pr = *con_cls;
    if (pr) {
        if (pr->ops)
            pr->ops->close(pr->sreq);
        vs_buf_cleanup(&pr->body);
        vs_free(pr);
        *con_cls = NULL;
    }
}

VS_PRINTF(2, 0) static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    struct vs_http *h = cls;
    char msg[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    size_t n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
        msg[--n] = '\0';
    VS_LOG(h->cfg.log, VS_LOG_WARN, "microhttpd: %s", msg);
}

/* Appends s with &, <, > and " escaped (names and URLs go into HTML/XML). */
static int put_escaped(struct vs_buf *b, const char *s)
{
    int rc = 0;
    for (; *s && rc == 0; s++) {
        switch (*s) {
        case '&':
            rc = vs_buf_puts(b, "&amp;");
            break;
        case '<':
            rc = vs_buf_puts(b, "&lt;");
            break;
        case '>':
            rc = vs_buf_puts(b, "&gt;");
            break;
        case '"':
            rc = vs_buf_puts(b, "&quot;");
            break;
        default:
            rc = vs_buf_append(b, s, 1);
            break;
        }
    }
    return rc;
}

/* BOINC-COMPAT: the client scans the master page line by line for
 * <link rel="boinc_scheduler" href="..."> (attribute order and quotes exactly
 * so) and for <scheduler>...</scheduler>; each goes on its own short line. */
static int build_pages(struct vs_http *h)
{
    const char *name = h->cfg.project_name ? h->cfg.project_name : h->master_url;
    /* With HTTPS, only the https scheduler is advertised: the client then
     * never sends its account key in clear. */
    const char *sched = h->https_sched_url ? h->https_sched_url : h->sched_url;
    struct vs_buf b;
    vs_buf_init(&b, 64 * 1024);
    int rc = vs_buf_puts(&b, "<html><head><title>");
    rc = rc ? rc : put_escaped(&b, name);
    rc = rc ? rc
            : vs_buf_printf(&b, "</title>\n<link rel=\"boinc_scheduler\" href=\"%s\">\n", sched);
    rc = rc ? rc
            : vs_buf_printf(&b, "</head><body>\n<!-- <scheduler>%s</scheduler> -->\n<h1>", sched);
    rc = rc ? rc : put_escaped(&b, name);
    rc = rc ? rc
            : vs_buf_puts(&b, "</h1>\n<p>A volsched project. Attach a BOINC client with "
                              "this page's URL and your account key.</p>\n</body></html>\n");
    if (rc == 0)
        h->master_resp = take_response(&b, "text/html");
    vs_buf_reset(&b);
    rc = rc ? rc : vs_buf_puts(&b, "<project_config>\n    <name>");
    rc = rc ? rc : put_escaped(&b, name);
    rc = rc ? rc : vs_buf_puts(&b, "</name>\n    <master_url>");
    rc = rc ? rc : put_escaped(&b, h->master_url);
    rc = rc ? rc : vs_buf_puts(&b, "</master_url>\n    <web_rpc_url_base>");
    rc = rc ? rc : put_escaped(&b, h->master_url);
    rc = rc ? rc
            : vs_buf_puts(&b, "</web_rpc_url_base>\n"
                              "    <account_creation_disabled/>\n"
                              "    <client_account_creation_disabled/>\n"
                              "    <min_passwd_length>6</min_passwd_length>\n"
                              "</project_config>\n");
    if (rc == 0)
        h->config_resp = take_response(&b, "text/xml");
    vs_buf_cleanup(&b);
    if (rc == 0 && (!h->master_resp || !h->config_resp))
        rc = VS_ENOMEM;
    return rc;
}

/* Appends suffix to master_url when url is NULL (the default layout). */
static char *url_or_default(const char *url, const char *master_url, const char *suffix)
{
    if (url)
        return vs_xstrdup(url);
    size_t a = strlen(master_url), b = strlen(suffix);
    char *s = vs_xmalloc(a + b + 1);
    memcpy(s, master_url, a);
    memcpy(s + a, suffix, b + 1);
    return s;
}

/* Works out the path of every endpoint from the configured URLs. */
static int url_paths(struct vs_http *h, const struct vs_http_config *cfg)
{
    int rc = vs_http_url_path(cfg->master_url, h->path, sizeof(h->path));
    size_t n = strlen(h->path);
    if (rc != 0 || n == 0 || h->path[n - 1] != '/')
        return VS_EINVAL;
    h->path_len = n;
    h->master_url = vs_xstrdup(cfg->master_url);
    h->sched_url = url_or_default(cfg->sched_url, cfg->master_url, "cgi");
    char *dl = url_or_default(cfg->download_url, cfg->master_url, "download");
    char *ul = url_or_default(cfg->upload_url, cfg->master_url, "file_upload_handler");
    rc = vs_http_url_path(h->sched_url, h->sched_path, sizeof(h->sched_path));
    if (rc == 0)
        rc = vs_http_url_path(ul, h->ul_path, sizeof(h->ul_path));
    if (rc == 0)
        rc = vs_http_url_path(dl, h->dl_path, sizeof(h->dl_path) - 1);
    if (rc == 0) {
        h->dl_path_len = strlen(h->dl_path);
        if (h->dl_path_len == 0 || h->dl_path[h->dl_path_len - 1] != '/') {
            h->dl_path[h->dl_path_len++] = '/';
            h->dl_path[h->dl_path_len] = '\0';
        }
        int m = snprintf(h->cfg_path, sizeof(h->cfg_path), "%sget_project_config.php", h->path);
        if (m < 0 || (size_t)m >= sizeof(h->cfg_path))
            rc = VS_EINVAL;
    }
    vs_free(dl);
    vs_free(ul);
    return rc;
}

static int make_sockaddr(const char *host, uint16_t port, struct sockaddr_storage *ss, bool *out_v6)
{
    memset(ss, 0, sizeof(*ss));
    struct sockaddr_in *a4 = (struct sockaddr_in *)(void *)ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)(void *)ss;
    if (strcmp(host, "localhost") == 0)
        host = "127.0.0.1";
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons(port);
        *out_v6 = false;
        return 0;
    }
    if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons(port);
        *out_v6 = true;
        return 0;
    }
    return VS_EINVAL;
}

/* One listening daemon on ss (port given separately), HTTP or HTTPS. */
static struct MHD_Daemon *start_daemon(struct vs_http *h, const struct vs_http_config *cfg,
                                       struct sockaddr_storage *ss, bool v6, uint16_t port,
                                       bool tls)
{
    struct sockaddr_in *a4 = (struct sockaddr_in *)(void *)ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)(void *)ss;
    if (v6)
        a6->sin6_port = htons(port);
    else
        a4->sin_port = htons(port);
    unsigned threads = cfg->threads ? cfg->threads : 4;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    /* ITC lets vs_http_drain quiesce the listening socket. */
    flags |= MHD_USE_EPOLL | MHD_USE_TURBO | MHD_USE_ITC;
    if (v6)
        flags |= MHD_USE_IPv6;
    if (tls)
        flags |= MHD_USE_TLS;
    /* The logger goes first, so MHD prints nothing through its own. For
     * the HTTP daemon the list ends before the TLS options. */
    // clang-format off
    return MHD_start_daemon(flags, port, NULL, NULL, on_request, h,
                            MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)ss,
                            MHD_OPTION_THREAD_POOL_SIZE, threads,
                            MHD_OPTION_CONNECTION_LIMIT,
                            cfg->max_connections ? cfg->max_connections : 1024u,
                            MHD_OPTION_CONNECTION_TIMEOUT, 120u,
                            MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
                            tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, h->tls_cert,
                            MHD_OPTION_HTTPS_MEM_KEY, h->tls_key,
                            MHD_OPTION_END);
    // clang-format on
}

/* Reads a PEM file (certificate or key) whole; NULL on error (logged). */
static char *read_pem(const struct vs_http_config *cfg, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct vs_buf b;
    vs_buf_init(&b, 1u << 20);
    char chunk[4096];
    ssize_t n = 0;
    int rc = fd < 0 ? -errno : 0;
    while (rc == 0 && (n = read(fd, chunk, sizeof(chunk))) > 0)
        rc = vs_buf_append(&b, chunk, (size_t)n);
    if (rc == 0 && n < 0)
        rc = -errno;
    if (fd >= 0)
        close(fd);
    if (rc == 0 && b.len == 0)
        rc = VS_EPARSE;
    if (rc != 0) {
        VS_LOG(cfg->log, VS_LOG_ERROR, "https: cannot read %s: %s", path, vs_strerror(rc));
        vs_buf_cleanup(&b);
        return NULL;
    }
    return vs_buf_take(&b, NULL);
}

/* The HTTPS daemon, and the https scheduler URL the master page names:
 * the master URL's host with the HTTPS port and the scheduler's path. */
static int start_tls(struct vs_http *h, const struct vs_http_config *cfg, const char *host,
                     struct sockaddr_storage *ss, bool v6)
{
    if (!cfg->tls_cert_file || !cfg->tls_key_file) {
        VS_LOG(cfg->log, VS_LOG_ERROR, "https: both a certificate and a key are needed");
        return VS_ECONFIG;
    }
    if (!MHD_is_feature_supported(MHD_FEATURE_TLS)) {
        VS_LOG(cfg->log, VS_LOG_ERROR, "https: libmicrohttpd was built without TLS");
        return VS_EUNSUPPORTED;
    }
    h->tls_cert = read_pem(cfg, cfg->tls_cert_file);
    h->tls_key = read_pem(cfg, cfg->tls_key_file);
    if (!h->tls_cert || !h->tls_key)
        return VS_ECONFIG;
    h->tls_d = start_daemon(h, cfg, ss, v6, cfg->https_port, true);
    if (!h->tls_d) {
        VS_LOG(cfg->log, VS_LOG_ERROR, "https: cannot listen on %s:%u (or bad certificate/key)",
               host, (unsigned)cfg->https_port);
        return VS_ENET;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->tls_d, MHD_DAEMON_INFO_BIND_PORT);
    const char *hp = strstr(h->master_url, "://") + 3; /* url_paths checked "://" */
    size_t hl = strcspn(hp, "/");
    /* The host without its port ("[v6]:p" keeps its brackets). */
    size_t k = hl;
    while (k > 0 && hp[k - 1] != ':' && hp[k - 1] != ']')
        k--;
    if (k > 0 && hp[k - 1] == ':')
        hl = k - 1;
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    int rc = vs_buf_printf(&b, "https://%.*s:%u%s", (int)hl, hp, di ? (unsigned)di->port : 0u,
                           h->sched_path);
    if (rc == 0)
        h->https_sched_url = vs_buf_take(&b, NULL);
    vs_buf_cleanup(&b);
    return rc;
}

int vs_http_start(const struct vs_http_config *cfg, const char *host, uint16_t port,
                  struct vs_http **out_http)
{
    if (!cfg || !cfg->master_url || !cfg->download_dir || !cfg->sched || !host)
        return VS_EINVAL;
    struct vs_http *h = VS_NEW(struct vs_http);
    h->download_fd = -1;
    h->cfg = *cfg;
    int rc = url_paths(h, cfg);
    if (rc != 0) {
        VS_LOG(cfg->log, VS_LOG_ERROR, "bad project URL(s): master '%s'", cfg->master_url);
        goto fail;
    }
    h->download_dir = vs_xstrdup(cfg->download_dir);
    h->cfg.master_url = h->master_url;
    h->cfg.sched_url = h->sched_url;
    h->cfg.download_url = NULL;
    h->cfg.upload_url = NULL;
    h->cfg.download_dir = h->download_dir;
    h->cfg.project_name = NULL;
    h->max_body = cfg->max_body ? cfg->max_body : VS_HTTP_DEFAULT_MAX_BODY;
    h->max_upload = cfg->max_upload_body ? cfg->max_upload_body : VS_HTTP_DEFAULT_MAX_UPLOAD;
    if (!h->cfg.upload)
        h->cfg.upload = upload_later;
    h->download_fd = open(h->download_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (h->download_fd < 0) {
        rc = -errno;
        VS_LOG(cfg->log, VS_LOG_ERROR, "cannot open download dir %s: %s", h->download_dir,
               strerror(errno));
        goto fail;
    }
    struct sockaddr_storage ss;
    bool v6 = false;
    rc = make_sockaddr(host, port, &ss, &v6);
    if (rc != 0) {
        VS_LOG(cfg->log, VS_LOG_ERROR, "bad listen address '%s'", host);
        goto fail;
    }
    h->d = start_daemon(h, cfg, &ss, v6, port, false);
    if (!h->d) {
        rc = VS_ENET;
        VS_LOG(cfg->log, VS_LOG_ERROR, "cannot listen on %s:%u", host, (unsigned)port);
        goto fail;
    }
    if (cfg->tls_cert_file || cfg->tls_key_file) {
        rc = start_tls(h, cfg, host, &ss, v6);
        if (rc != 0)
            goto fail;
    }
    /* The pages name the bound ports, so they are built last. */
    h->cfg.project_name = cfg->project_name; /* used only while building pages */
    rc = build_pages(h);
    h->cfg.project_name = NULL;
    if (rc != 0)
        goto fail;
    atomic_store_explicit(&h->pages_ready, true, memory_order_release);
    *out_http = h;
    return 0;
fail:
    vs_http_stop(h);
    return rc;
}

uint16_t vs_http_https_port(const struct vs_http *h)
{
    const union MHD_DaemonInfo *di =
        h->tls_d ? MHD_get_daemon_info(h->tls_d, MHD_DAEMON_INFO_BIND_PORT) : NULL;
    return di ? di->port : 0;
}

const char *vs_http_https_sched_url(const struct vs_http *h)
{
    return h->https_sched_url;
}

uint16_t vs_http_port(const struct vs_http *h)
{
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    return di ? di->port : 0;
}

void vs_http_get_stats(const struct vs_http *h, struct vs_http_stats *out_stats)
{
    out_stats->requests = atomic_load_explicit(&h->n_requests, memory_order_relaxed);
    out_stats->sched_requests = atomic_load_explicit(&h->n_sched, memory_order_relaxed);
    out_stats->downloads = atomic_load_explicit(&h->n_downloads, memory_order_relaxed);
    out_stats->refused = atomic_load_explicit(&h->n_refused, memory_order_relaxed);
}

/* Closes d's listening socket: no new connections from here on. */
static void quiesce(struct MHD_Daemon *d)
{
    MHD_socket fd = d ? MHD_quiesce_daemon(d) : MHD_INVALID_SOCKET;
    if (fd != MHD_INVALID_SOCKET)
        close(fd);
}

static unsigned connections(struct MHD_Daemon *d)
{
    const union MHD_DaemonInfo *di =
        d ? MHD_get_daemon_info(d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS) : NULL;
    return di ? di->num_connections : 0;
}

unsigned vs_http_drain(struct vs_http *h, int timeout_ms)
{
    if (!h || !h->d)
        return 0;
    quiesce(h->d);
    quiesce(h->tls_d); /* the HTTPS listener drains the same way */
    unsigned left = 0;
    for (int waited = 0;; waited += 20) {
        left = connections(h->d) + connections(h->tls_d);
        if (left == 0 || waited >= timeout_ms)
            break;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return left;
}

void vs_http_stop(struct vs_http *h)
{
    if (!h)
        return;
    if (h->d)
        MHD_stop_daemon(h->d);
    if (h->tls_d)
        MHD_stop_daemon(h->tls_d);
    if (h->tls_key)
        explicit_bzero(h->tls_key, strlen(h->tls_key));
    vs_free(h->tls_key);
    vs_free(h->tls_cert);
    vs_free(h->https_sched_url);
    if (h->master_resp)
        MHD_destroy_response(h->master_resp);
    if (h->config_resp)
        MHD_destroy_response(h->config_resp);
    if (h->download_fd >= 0)
        close(h->download_fd);
    vs_free(h->master_url);
    vs_free(h->sched_url);
    vs_free(h->download_dir);
    vs_free(h);
}
