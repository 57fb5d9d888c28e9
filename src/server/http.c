/*
 * HTTP front end on libmicrohttpd: the listeners (plain, HTTPS, the
 * operator's) and their limits (http_guard.c), routing by listener
 * (https_only, the operator's listener), and logging of refused requests;
 * the POST routes are in http_post.c, the pages in http_pages.c, downloads
 * in http_download.c, TLS in http_tls.c. See http.h for the URL layout.
 */
#include "volsched/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "server/http_int.h"
#include "volsched/alloc.h"
#include "volsched/str.h"

static struct vs_http_conn *conn_rec(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

void vs_http__peer(struct vs_http *h, struct MHD_Connection *c, char *out, size_t n)
{
    out[0] = '\0';
    struct vs_http_conn *rec = conn_rec(c);
    if (!rec)
        return;
    struct vs_ip ip = *vs_http_guard_peer(rec);
    const char *xff = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Forwarded-For");
    if (xff && vs_http_guard_trusted(rec)) {
        size_t np = 0;
        const struct vs_ip_prefix *px = vs_http_guard_proxies(h->guard, &np);
        struct vs_ip client;
        if (vs_ip_forwarded_client(&ip, xff, px, np, &client)) {
            ip = client;
            atomic_fetch_add_explicit(&h->n_forwarded, 1, memory_order_relaxed);
        }
    }
    vs_ip_text(&ip, out, n);
}

/* Answers a short plain-text error and logs why, with the peer address. */
enum MHD_Result vs_http__refuse(struct vs_http *h, struct MHD_Connection *c, unsigned status,
                                const char *method, const char *url, const char *why)
{
    char peer[VS_HTTP_PEER_MAX];
    vs_http__peer(h, c, peer, sizeof(peer));
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

/* An MHD response that owns b's bytes (b is left empty), with its
 * Content-Type; NULL when MHD cannot make one (the bytes are freed). */
struct MHD_Response *vs_http__take_response(struct vs_buf *b, const char *ctype)
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

/* The mark a bodiless request's first call leaves in *con_cls. MHD (0.9.75)
 * takes a response queued on a request's first call, while the head has
 * just been parsed, as an early answer: it stops reading the connection
 * and sends "Connection: close", so every GET (downloads, pages) cost a
 * new connection. Answering on the second call, when MHD has read the
 * whole request, keeps the connection alive. */
static char bodiless_mark;

static enum MHD_Result answer_bodiless(struct vs_http *h, struct MHD_Connection *c,
                                       const char *method, const char *url, bool is_get,
                                       void **con_cls);

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    (void)version;
    struct vs_http *h = cls;
    if (*con_cls == &bodiless_mark) {
        if (*upload_data_size) { /* a body sent anyway is dropped, at the body rate */
            vs_http_guard_body(h->guard, conn_rec(c), *upload_data_size);
            *upload_data_size = 0;
            return MHD_YES;
        }
        vs_http_guard_busy(h->guard, conn_rec(c));
        *con_cls = NULL; /* a page queued for the page thread puts its state here */
        return answer_bodiless(h, c, method, url, true, con_cls);
    }
    if (*con_cls) /* later calls of a POST: its body, then its answer */
        return vs_http__post_step(h, c, *con_cls, method, url, upload_data, upload_data_size);
    atomic_fetch_add_explicit(&h->inflight, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->n_requests, 1, memory_order_relaxed);
    bool is_get =
        strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
    bool is_post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
    enum vs_http_route route = VS_ROUTE_NONE;
    if (strcmp(url, h->sched_path) == 0)
        route = VS_ROUTE_SCHED;
    else if (strcmp(url, h->ul_path) == 0)
        route = VS_ROUTE_UPLOAD;
    else if (h->cfg.api && (strcmp(url, h->submit_path) == 0 || strcmp(url, h->jobfile_path) == 0))
        route = VS_ROUTE_API;
    /* The scheduler and uploads are not on the operator's listener, nor on
     * the plain one in https_only mode (answer_bodiless refuses them). */
    enum vs_http_listener l = vs_http__listener(h, c);
    bool open = l == VS_LISTEN_TLS || (l == VS_LISTEN_PLAIN && !h->cfg.https_only);
    /* A form of the volunteers' site: a POST under the master URL's path,
     * but not under stats/ (the exports: answer_bodiless says 405). */
    if (route == VS_ROUTE_NONE && is_post && open && h->cfg.pages &&
        strncmp(url, h->path, h->path_len) == 0 &&
        !(h->stats_dir && strncmp(url + h->path_len, "stats/", 6) == 0))
        route = VS_ROUTE_FORM;
    if (route != VS_ROUTE_NONE && is_post && open) {
        struct vs_http_post *pr = NULL;
        enum MHD_Result ret = vs_http__post_begin(h, c, route, method, url, &pr);
        *con_cls = pr;
        return ret;
    }
    if (is_get) { /* answered on the next call (bodiless_mark) */
        vs_http_guard_head_done(h->guard, conn_rec(c), true);
        *con_cls = &bodiless_mark;
        return MHD_YES;
    }
    /* Any other method is refused at once: MHD then drops its body and
     * closes the connection, which is what such a request deserves. */
    vs_http_guard_head_done(h->guard, conn_rec(c), false);
    return answer_bodiless(h, c, method, url, false, con_cls);
}

/* https_only: what the plain listener refuses, naming the https URL. */
static enum MHD_Result refuse_plain(struct vs_http *h, struct MHD_Connection *c, const char *method,
                                    const char *url)
{
    char why[VS_HTTP_PATH_MAX + 160];
    snprintf(why, sizeof(why), "this project serves %s only over https: %s%s", url, h->https_base,
             url);
    return vs_http__refuse(h, c, MHD_HTTP_FORBIDDEN, method, url, why);
}

static enum MHD_Result answer_bodiless(struct vs_http *h, struct MHD_Connection *c,
                                       const char *method, const char *url, bool is_get,
                                       void **con_cls)
{
    enum vs_http_listener l = vs_http__listener(h, c);
    if (l == VS_LISTEN_OPS) {
        if (is_get)
            return vs_http__serve_page(h, c, method, url, con_cls);
        return vs_http__refuse(h, c, MHD_HTTP_METHOD_NOT_ALLOWED, method, url,
                               "the operator's listener serves only its pages (GET)");
    }
    bool plain_only = l == VS_LISTEN_PLAIN && h->cfg.https_only;
    if (strcmp(url, h->sched_path) == 0 || strcmp(url, h->ul_path) == 0 ||
        (h->cfg.api && (strcmp(url, h->submit_path) == 0 || strcmp(url, h->jobfile_path) == 0))) {
        if (plain_only)
            return refuse_plain(h, c, method, url);
        return vs_http__refuse(h, c, MHD_HTTP_METHOD_NOT_ALLOWED, method, url,
                               "endpoint takes POST");
    }
    bool pages = atomic_load_explicit(&h->pages_ready, memory_order_acquire);
    /* The master URL's path, with or without its trailing '/'. */
    if ((strncmp(url, h->path, h->path_len - 1) == 0 &&
         (url[h->path_len - 1] == '\0' || strcmp(url + h->path_len - 1, "/") == 0 ||
          strcmp(url + h->path_len - 1, "/index.html") == 0))) {
        if (!is_get)
            return vs_http__refuse(h, c, MHD_HTTP_METHOD_NOT_ALLOWED, method, url,
                                   "master page is GET");
        if (!pages)
            return vs_http__refuse(h, c, MHD_HTTP_SERVICE_UNAVAILABLE, method, url, "starting");
        return MHD_queue_response(c, MHD_HTTP_OK, h->master_resp);
    }
    if (strcmp(url, h->cfg_path) == 0 && is_get) {
        if (!pages)
            return vs_http__refuse(h, c, MHD_HTTP_SERVICE_UNAVAILABLE, method, url, "starting");
        return MHD_queue_response(c, MHD_HTTP_OK, h->config_resp);
    }
    if (h->stats_dir && strncmp(url, h->path, h->path_len) == 0 &&
        strncmp(url + h->path_len, "stats/", 6) == 0) {
        if (!is_get)
            return vs_http__refuse(h, c, MHD_HTTP_METHOD_NOT_ALLOWED, method, url,
                                   "statistics exports are GET");
        return vs_http__serve_stats(h, c, method, url, url + h->path_len + 6);
    }
    if (strncmp(url, h->dl_path, h->dl_path_len) == 0) {
        if (!is_get)
            return vs_http__refuse(h, c, MHD_HTTP_METHOD_NOT_ALLOWED, method, url,
                                   "downloads are GET");
        return vs_http__serve_download(h, c, method, url, url + h->dl_path_len);
    }
    if (plain_only)
        return refuse_plain(h, c, method, url);
    if (is_get)
        return vs_http__serve_page(h, c, method, url, con_cls);
    return vs_http__refuse(h, c, MHD_HTTP_NOT_FOUND, method, url, "no such page");
}

enum vs_http_listener vs_http__listener(struct vs_http *h, struct MHD_Connection *c)
{
    (void)h;
    return (enum vs_http_listener)vs_http_guard_listener(conn_rec(c));
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    struct vs_http *h = cls;
    if (*con_cls != &bodiless_mark)
        vs_http__post_free(*con_cls);
    *con_cls = NULL;
    /* The next request's head is due from now (keep-alive). */
    vs_http_guard_idle(h->guard, conn_rec(c));
    atomic_fetch_sub_explicit(&h->inflight, 1, memory_order_relaxed);
}

/* Connections come and go: their records for the limits and deadlines,
 * marked with their listener (cls is that listener's entry of h->lctx: a
 * request's own callbacks cannot tell the daemons of a thread pool apart). */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    const struct vs_http_lctx *lc = cls;
    struct vs_http *h = lc->h;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *fd =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        const union MHD_ConnectionInfo *ad =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        *socket_context =
            vs_http_guard_open(h->guard, fd ? fd->connect_fd : -1, ad ? ad->client_addr : NULL);
        vs_http_guard_set_listener(*socket_context, (int)lc->kind);
    } else {
        vs_http_guard_close(h->guard, *socket_context);
        *socket_context = NULL;
    }
}

/* Before a connection costs anything: refused when its address or the
 * server is at its limit (the client sees the connection closed at once). */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
    (void)addrlen;
    struct vs_http *h = cls;
    return vs_http_guard_admit(h->guard, addr) ? MHD_YES : MHD_NO;
}

VS_PRINTF(2, 0) static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    struct vs_http *h = cls;
    char msg[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    size_t n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
        msg[--n] = '\0';
    /* What one connection did (closed early, reset, timed out) is the
     * client's business and comes once per connection: debug only, or a
     * slowloris fills the log. The limits are logged by the guard. */
    static const char *const per_conn[] = {"onnection", "closed", "timed out", "reset"};
    enum vs_log_level level = VS_LOG_WARN;
    for (size_t i = 0; i < sizeof(per_conn) / sizeof(per_conn[0]); i++)
        if (strstr(msg, per_conn[i]))
            level = VS_LOG_DEBUG;
    VS_LOG(h->cfg.log, level, "microhttpd: %s", msg);
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
        int m2 =
            snprintf(h->submit_path, sizeof(h->submit_path), "%ssubmit_rpc_handler.php", h->path);
        int m3 = snprintf(h->jobfile_path, sizeof(h->jobfile_path), "%sjob_file.php", h->path);
        if (m < 0 || (size_t)m >= sizeof(h->cfg_path) || m2 < 0 ||
            (size_t)m2 >= sizeof(h->submit_path) || m3 < 0 || (size_t)m3 >= sizeof(h->jobfile_path))
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

/* One listening daemon on ss (port given separately): plain, TLS, or the
 * operator's (plain). */
struct MHD_Daemon *vs_http__start_daemon(struct vs_http *h, const struct vs_http_config *cfg,
                                         struct sockaddr_storage *ss, bool v6, uint16_t port,
                                         enum vs_http_listener kind)
{
    bool tls = kind == VS_LISTEN_TLS;
    h->lctx[kind] = (struct vs_http_lctx){.h = h, .kind = kind};
    struct sockaddr_in *a4 = (struct sockaddr_in *)(void *)ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)(void *)ss;
    if (v6)
        a6->sin6_port = htons(port);
    else
        a4->sin_port = htons(port);
    unsigned pollers = cfg->poll_threads ? cfg->poll_threads : 2;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    /* Suspend/resume hands POSTs to the handler threads (http_post.c); its
     * ITC also lets vs_http_drain quiesce the listening socket. */
    flags |= MHD_USE_EPOLL | MHD_USE_TURBO | MHD_ALLOW_SUSPEND_RESUME;
    if (v6)
        flags |= MHD_USE_IPv6;
    if (tls)
        flags |= MHD_USE_TLS;
    /* The guard refuses at max_connections (on_accept), quickly; MHD's own
     * limit (split among its polling threads) is set above it so that it
     * never leaves connections waiting in the backlog instead. */
    unsigned mhd_limit = h->max_connections + h->max_connections / 4 + 64;
    unsigned idle = cfg->idle_timeout ? cfg->idle_timeout : 60;
    /* The logger goes first, so MHD prints nothing through its own. For
     * the HTTP daemon the list ends before the TLS options. */
    // clang-format off
    return MHD_start_daemon(flags, port, on_accept, h, on_request, h,
                            MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)ss,
                            MHD_OPTION_THREAD_POOL_SIZE, pollers,
                            MHD_OPTION_CONNECTION_LIMIT, mhd_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, idle,
                            MHD_OPTION_LISTEN_BACKLOG_SIZE, 4096u,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
                            MHD_OPTION_NOTIFY_CONNECTION, on_connection, &h->lctx[kind],
                            tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, h->tls_cert,
                            MHD_OPTION_HTTPS_MEM_KEY, h->tls_key,
                            MHD_OPTION_HTTPS_PRIORITIES, vs_http__tls_priorities,
                            MHD_OPTION_END);
    // clang-format on
}

/* The limits: max_connections sized from the open-file limit (raised to
 * its hard limit first) unless configured. */
static int start_guard(struct vs_http *h, const struct vs_http_config *cfg)
{
    uint64_t nofile = vs_http_raise_nofile();
    /* Kept free: the store, log and listening descriptors, and the file
     * each download or upload in progress holds. */
    uint64_t fit = nofile > 2048 ? nofile - 1024 : nofile / 2;
    uint64_t maxc = cfg->max_connections ? cfg->max_connections : fit;
    if (maxc > fit) {
        VS_LOG(cfg->log, VS_LOG_WARN,
               "http: %u connections configured, but the open-file limit (%llu) fits %llu",
               cfg->max_connections, (unsigned long long)nofile, (unsigned long long)fit);
        maxc = fit;
    }
    if (maxc > 1000000)
        maxc = 1000000;
    if (maxc < 10000 && !cfg->max_connections)
        VS_LOG(cfg->log, VS_LOG_WARN,
               "http: at most %llu connections (open-file limit %llu); raise the hard limit "
               "(ulimit -Hn, LimitNOFILE=) for more",
               (unsigned long long)maxc, (unsigned long long)nofile);
    h->max_connections = (unsigned)maxc;
    struct vs_http_guard_config gc = {
        .head_timeout = cfg->head_timeout ? cfg->head_timeout : 30,
        .body_min_rate = cfg->body_min_rate,
        .max_per_address = cfg->max_per_address,
        .max_connections = h->max_connections,
        .trusted = cfg->trusted_proxies,
        .ntrusted = cfg->ntrusted_proxies,
        .log = cfg->log,
    };
    h->cfg.trusted_proxies = NULL; /* the guard keeps its copy */
    return vs_http_guard_create(&gc, &h->guard);
}

/* The listeners: plain on host:port, HTTPS beside it, the operator's. */
static int start_listeners(struct vs_http *h, const struct vs_http_config *cfg, const char *host,
                           uint16_t port)
{
    struct sockaddr_storage ss;
    bool v6 = false;
    if (make_sockaddr(host, port, &ss, &v6) != 0) {
        VS_LOG(cfg->log, VS_LOG_ERROR, "bad listen address '%s'", host);
        return VS_EINVAL;
    }
    h->d = vs_http__start_daemon(h, cfg, &ss, v6, port, VS_LISTEN_PLAIN);
    if (!h->d) {
        VS_LOG(cfg->log, VS_LOG_ERROR, "cannot listen on %s:%u", host, (unsigned)port);
        return VS_ENET;
    }
    if (cfg->tls_cert_file || cfg->tls_key_file) {
        int rc = vs_http__start_tls(h, cfg, host, &ss, v6);
        if (rc != 0)
            return rc;
    }
    if (!cfg->ops_host)
        return 0;
    if (make_sockaddr(cfg->ops_host, cfg->ops_port, &ss, &v6) != 0) {
        VS_LOG(cfg->log, VS_LOG_ERROR, "bad operator's listen address '%s'", cfg->ops_host);
        return VS_EINVAL;
    }
    h->ops_d = vs_http__start_daemon(h, cfg, &ss, v6, cfg->ops_port, VS_LISTEN_OPS);
    if (!h->ops_d) {
        VS_LOG(cfg->log, VS_LOG_ERROR, "cannot listen on %s:%u (operator's listener)",
               cfg->ops_host, (unsigned)cfg->ops_port);
        return VS_ENET;
    }
    return 0;
}

int vs_http_start(const struct vs_http_config *cfg, const char *host, uint16_t port,
                  struct vs_http **out_http)
{
    if (!cfg || !cfg->master_url || !cfg->download_dir || !cfg->sched || !host)
        return VS_EINVAL;
    struct vs_http *h = VS_NEW(struct vs_http);
    h->download_fd = -1;
    h->pool_inited = true;
    vs_http__pool_init(h, &h->pool, 0);
    vs_http__pool_init(h, &h->page_pool, VS_HTTP_PAGES_QUEUED);
    h->cfg = *cfg;
    int rc = url_paths(h, cfg);
    if (rc != 0) {
        VS_LOG(cfg->log, VS_LOG_ERROR, "bad project URL(s): master '%s'", cfg->master_url);
        goto fail;
    }
    char *ul = url_or_default(cfg->upload_url, cfg->master_url, "file_upload_handler");
    rc = vs_http__check_https(cfg, ul);
    vs_free(ul);
    if (rc != 0)
        goto fail;
    h->download_dir = vs_xstrdup(cfg->download_dir);
    h->stats_dir = cfg->stats_dir ? vs_xstrdup(cfg->stats_dir) : NULL;
    h->cfg.stats_dir = h->stats_dir;
    h->cfg.master_url = h->master_url;
    h->cfg.sched_url = h->sched_url;
    h->cfg.download_url = NULL;
    h->cfg.upload_url = NULL;
    h->cfg.download_dir = h->download_dir;
    h->cfg.project_name = NULL;
    h->cfg.project_config_xml = NULL;
    h->cfg.ops_host = NULL; /* used only while starting */
    h->max_body = cfg->max_body ? cfg->max_body : VS_HTTP_DEFAULT_MAX_BODY;
    h->max_upload = cfg->max_upload_body ? cfg->max_upload_body : VS_HTTP_DEFAULT_MAX_UPLOAD;
    h->max_api_body = cfg->max_api_body ? cfg->max_api_body : VS_HTTP_DEFAULT_MAX_API_BODY;
    rc = start_guard(h, cfg);
    if (rc != 0)
        goto fail;
    rc = vs_http__pool_start(&h->pool, cfg->threads ? cfg->threads : 4);
    if (rc == 0)
        rc = vs_http__pool_start(&h->page_pool, 1);
    if (rc != 0)
        goto fail;
    h->download_fd = open(h->download_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (h->download_fd < 0) {
        rc = -errno;
        VS_LOG(cfg->log, VS_LOG_ERROR, "cannot open download dir %s: %s", h->download_dir,
               strerror(errno));
        goto fail;
    }
    rc = start_listeners(h, cfg, host, port);
    if (rc != 0)
        goto fail;
    /* The pages name the bound ports, so they are built last. */
    h->cfg.project_name = cfg->project_name; /* used only while building pages */
    h->cfg.project_config_xml = cfg->project_config_xml;
    rc = vs_http__build_pages(h);
    h->cfg.project_name = NULL;
    h->cfg.project_config_xml = NULL;
    if (rc != 0)
        goto fail;
    atomic_store_explicit(&h->pages_ready, true, memory_order_release);
    *out_http = h;
    return 0;
fail:
    vs_http_stop(h);
    return rc;
}

uint16_t vs_http_ops_port(const struct vs_http *h)
{
    const union MHD_DaemonInfo *di =
        h->ops_d ? MHD_get_daemon_info(h->ops_d, MHD_DAEMON_INFO_BIND_PORT) : NULL;
    return di ? di->port : 0;
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
    out_stats->forwarded = atomic_load_explicit(&h->n_forwarded, memory_order_relaxed);
    out_stats->max_connections = h->max_connections;
    struct vs_http_guard_stats gs;
    vs_http_guard_get_stats(h->guard, &gs);
    out_stats->connections = gs.accepted;
    out_stats->open_connections = gs.open;
    out_stats->head_timeouts = gs.head_timeouts;
    out_stats->slow_bodies = gs.slow_bodies;
    out_stats->refused_per_address = gs.per_address;
    out_stats->refused_full = gs.full;
}

/* Closes d's listening socket: no new connections from here on. */
static void quiesce(struct MHD_Daemon *d)
{
    MHD_socket fd = d ? MHD_quiesce_daemon(d) : MHD_INVALID_SOCKET;
    if (fd != MHD_INVALID_SOCKET)
        close(fd);
}

unsigned vs_http_drain(struct vs_http *h, int timeout_ms)
{
    if (!h || !h->d)
        return 0;
    quiesce(h->d);
    quiesce(h->tls_d); /* the HTTPS and operator's listeners drain the same way */
    quiesce(h->ops_d);
    /* Requests, not connections: kept-alive idle ones may stay open. */
    unsigned left = 0;
    for (int waited = 0;; waited += 20) {
        left = atomic_load_explicit(&h->inflight, memory_order_relaxed);
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
    /* The handler threads first: each resumes its connection, so none is
     * left suspended when the listeners stop. */
    if (h->pool_inited) {
        vs_http__pool_stop(&h->pool);
        vs_http__pool_stop(&h->page_pool);
    }
    if (h->d)
        MHD_stop_daemon(h->d);
    if (h->tls_d)
        MHD_stop_daemon(h->tls_d);
    if (h->ops_d)
        MHD_stop_daemon(h->ops_d);
    if (h->pool_inited) {
        vs_http__pool_free(&h->pool);
        vs_http__pool_free(&h->page_pool);
    }
    vs_http_guard_destroy(h->guard);
    if (h->tls_key)
        explicit_bzero(h->tls_key, strlen(h->tls_key));
    vs_free(h->tls_key);
    vs_free(h->tls_cert);
    vs_free(h->https_sched_url);
    vs_free(h->https_base);
    if (h->master_resp)
        MHD_destroy_response(h->master_resp);
    if (h->config_resp)
        MHD_destroy_response(h->config_resp);
    if (h->download_fd >= 0)
        close(h->download_fd);
    vs_free(h->master_url);
    vs_free(h->sched_url);
    vs_free(h->download_dir);
    vs_free(h->stats_dir);
    vs_free(h);
}
