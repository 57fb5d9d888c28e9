/*
 * The GUI RPC server (boinc-client-notes.md 5): TCP on 127.0.0.1 (all
 * interfaces only when remote_hosts.cfg or <allow_remote_gui_rpc> says so,
 * remote peers then filtered by that list), requests framed by
 * <boinc_gui_rpc_request> and byte 0x03, auth1 nonce / auth2
 * md5(nonce + password), read-only requests from localhost without auth.
 * Replies follow what boinccmd 7.20.5's line- and order-sensitive parser
 * needs (5.4): <result> etc. on their own lines, get_state items after
 * their project.
 *
 * Nothing a peer does can stall the client or lock the others out: sockets
 * are non-blocking; a reply the peer does not read waits in its
 * connection's buffer (one reply at most: nothing more is read from the
 * peer until it is sent) and the connection is dropped, with a reset, when
 * it takes no byte for GUI_WRITE_STALL seconds; a connection not authenticated is closed after
 * GUI_AUTH_DEADLINE seconds (from connecting for a remote peer; of
 * idleness for a local one, whose read-only requests need no password); and
 * a connection that finds the table full takes the place of the one idle
 * longest, unauthenticated ones first. Remote access without a password
 * is refused at start (vs_client_gui_check).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client/gui_rpc_int.h"
#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/md5.h"
#include "volsched/str.h"
#include "volsched/xml.h"

#define GUI_MAX_CONNS     32
#define GUI_MAX_REQUEST   (256 * 1024)
#define GUI_MAX_REPLY     (64u << 20)
#define GUI_AUTH_DEADLINE 5.0  /* s: unauthenticated (remote: from connecting; local: idle) */
#define GUI_WRITE_STALL   10.0 /* s: a pending reply that takes no byte for this long */

struct gui_conn {
    int fd;
    bool local;
    bool authorized;
    bool got_nonce;
    int unauth;
    char nonce[64];
    struct vs_buf in;
    struct vs_buf out; /* the reply not sent yet (from out_off) */
    size_t out_off;
    bool http;     /* a web page request (webui.c): closed once answered */
    double opened; /* when it connected */
    double active; /* its last request, or the last byte of a reply it took */
};

static void read_remote_hosts(struct vs_client *c)
{
    char path[VS_CLIENT_PATH_MAX];
    c->n_remote_hosts = 0;
    if (vs_client_path(c, path, sizeof(path), "remote_hosts.cfg"))
        return;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof(line), f) && c->n_remote_hosts < 16) {
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        s[strcspn(s, " \t\r\n#;")] = '\0';
        if (*s)
            if (vs_strlcpy(c->remote_hosts[c->n_remote_hosts++], s, sizeof(c->remote_hosts[0]))) {
                /* longer than any address: it will never match */
            }
    }
    fclose(f);
}

static bool remote_allowed(const struct vs_client *c)
{
    return c->n_remote_hosts > 0 || c->prefs.allow_remote_gui_rpc || c->allow_remote_cmdline;
}

int vs_client_gui_check(struct vs_client *c)
{
    read_remote_hosts(c);
    if (!remote_allowed(c) || c->gui_password[0])
        return 0;
    char why[200];
    snprintf(why, sizeof(why), "%s%s%s", c->n_remote_hosts > 0 ? "remote_hosts.cfg, " : "",
             c->prefs.allow_remote_gui_rpc ? "<allow_remote_gui_rpc> in cc_config.xml, " : "",
             c->allow_remote_cmdline ? "--allow_remote_gui_rpc, " : "");
    why[strlen(why) - 2] = '\0';
    char msg[VS_CLIENT_PATH_MAX + 1200];
    snprintf(msg, sizeof(msg),
             "refusing to start: GUI RPC access from other hosts is allowed (%s) but "
             "gui_rpc_auth.cfg is empty, so anyone who can reach port %d could control this "
             "client without a password, attach it to any project and run that project's "
             "programs. Put a password in %s/gui_rpc_auth.cfg (or delete the file: the next "
             "start writes a random one), or remove the remote access.",
             why, c->gui_port, c->dir);
    fprintf(stderr, "volsched client: %s\n", msg);
    vs_client_msg(c, -1, 3, "%s", msg);
    return VS_ECONFIG;
}

int vs_client_gui_open(struct vs_client *c, int port)
{
    read_remote_hosts(c);
    bool remote = remote_allowed(c);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(remote ? INADDR_ANY : INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 16) != 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    c->gui_fd = fd;
    c->gui_port = port;
    c->conns = vs_xcalloc(GUI_MAX_CONNS, sizeof(struct gui_conn));
    for (size_t i = 0; i < GUI_MAX_CONNS; i++)
        c->conns[i].fd = -1;
    vs_client_msg(c, -1, 1, "GUI RPC listening on %s:%d", remote ? "0.0.0.0" : "127.0.0.1", port);
    vs_client_msg(c, -1, 1,
                  "Web page: http://127.0.0.1:%d/ (its token is the password in gui_rpc_auth.cfg)",
                  port);
    return 0;
}

static void conn_close(struct gui_conn *k)
{
    if (k->fd >= 0)
        close(k->fd);
    vs_buf_cleanup(&k->in);
    vs_buf_cleanup(&k->out);
    memset(k, 0, sizeof(*k));
    k->fd = -1;
}

/* Closes a misbehaving connection with a reset: the kernel drops the replies
 * it still holds for the peer (up to tcp_wmem's 4 MB) at once, and the peer
 * sees the close even if it never reads. */
static void conn_drop(struct gui_conn *k)
{
    struct linger lg = {1, 0};
    if (k->fd >= 0)
        (void)setsockopt(k->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    conn_close(k);
}

void vs_client_gui_close(struct vs_client *c)
{
    if (c->conns)
        for (size_t i = 0; i < GUI_MAX_CONNS; i++)
            if (c->conns[i].fd >= 0)
                conn_close(&c->conns[i]);
    vs_free(c->conns);
    c->conns = NULL;
    if (c->gui_fd >= 0)
        close(c->gui_fd);
    c->gui_fd = -1;
}

static bool peer_allowed(const struct vs_client *c, const struct sockaddr_in *sa, bool *local)
{
    *local = ntohl(sa->sin_addr.s_addr) >> 24 == 127;
    if (*local)
        return true;
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &sa->sin_addr, ip, sizeof(ip));
    for (size_t i = 0; i < c->n_remote_hosts; i++)
        if (strcmp(c->remote_hosts[i], ip) == 0)
            return true;
    return (c->prefs.allow_remote_gui_rpc || c->allow_remote_cmdline) && c->n_remote_hosts == 0;
}

/* The connection a newcomer replaces when the table is full: unauthenticated
 * before authenticated, then the one idle longest. */
static struct gui_conn *victim(struct vs_client *c)
{
    struct gui_conn *best = NULL;
    for (size_t i = 0; i < GUI_MAX_CONNS; i++) {
        struct gui_conn *k = &c->conns[i];
        if (k->fd >= 0 && (!best || (best->authorized && !k->authorized) ||
                           (best->authorized == k->authorized && k->active < best->active)))
            best = k;
    }
    return best;
}

static void accept_all(struct vs_client *c)
{
    for (int k = 0; k < 16; k++) {
        struct sockaddr_in sa;
        socklen_t sl = sizeof(sa);
        int fd = accept4(c->gui_fd, (struct sockaddr *)&sa, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        bool local;
        if (!peer_allowed(c, &sa, &local)) {
            VS_LOG(&c->log, VS_LOG_WARN,
                   "GUI RPC: refused a connection from a host not in "
                   "remote_hosts.cfg");
            close(fd);
            continue;
        }
        struct gui_conn *slot = NULL;
        for (size_t i = 0; i < GUI_MAX_CONNS && !slot; i++)
            if (c->conns[i].fd < 0)
                slot = &c->conns[i];
        if (!slot) {
            /* said once a minute at most: a flood must not flood the log */
            slot = victim(c);
            c->gui_evicted++;
            double now = vs_client_now();
            if (now - c->gui_evict_said >= 60) {
                VS_LOG(&c->log, VS_LOG_WARN,
                       "GUI RPC: all %d connections in use; %u closed to make room for new "
                       "ones (the idle longest, unauthenticated first)",
                       GUI_MAX_CONNS, c->gui_evicted);
                c->gui_evict_said = now;
                c->gui_evicted = 0;
            }
            conn_drop(slot);
        }
        memset(slot, 0, sizeof(*slot));
        slot->fd = fd;
        slot->local = local;
        /* with no password there is nothing to authenticate */
        slot->authorized = !c->gui_password[0];
        slot->opened = slot->active = vs_client_now();
        vs_buf_init(&slot->in, GUI_MAX_REQUEST);
        vs_buf_init(&slot->out, GUI_MAX_REPLY);
    }
}

/* Sends what the peer takes of the pending reply, without waiting. Returns
 * false when the connection is broken. */
static bool flush(struct gui_conn *k)
{
    while (k->out_off < k->out.len) {
        ssize_t w = send(k->fd, k->out.data + k->out_off, k->out.len - k->out_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return true;
        if (w <= 0)
            return false;
        k->out_off += (size_t)w;
        k->active = vs_client_now();
    }
    vs_buf_cleanup(&k->out); /* a big reply's memory goes back at once */
    vs_buf_init(&k->out, GUI_MAX_REPLY);
    k->out_off = 0;
    return true;
}

static bool out_pending(const struct gui_conn *k)
{
    return k->out_off < k->out.len;
}

/* Requests that read only, allowed from localhost without authentication. */
static bool read_only(const char *op)
{
    static const char *const ro[] = {"get_state",
                                     "get_results",
                                     "get_project_status",
                                     "get_messages",
                                     "get_cc_status",
                                     "get_host_info",
                                     "get_file_transfers",
                                     "get_disk_usage",
                                     "get_old_results",
                                     "get_simple_gui_info",
                                     "get_statistics",
                                     "get_message_count",
                                     "get_notices_public",
                                     "exchange_versions",
                                     "get_notices",
                                     "get_newer_version",
                                     "get_all_projects_list",
                                     "get_daily_xfer_history",
                                     "get_screensaver_tasks"};
    for (size_t i = 0; i < sizeof(ro) / sizeof(ro[0]); i++)
        if (strcmp(op, ro[i]) == 0)
            return true;
    return false;
}

/* Returns false when the connection is to be closed. */
static bool handle(struct vs_client *c, struct gui_conn *k, const char *req, size_t len)
{
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_xml_doc doc;
    struct vs_xml_error xe;
    struct vs_buf out;
    vs_buf_init(&out, GUI_MAX_REPLY);
    bool keep = true;
    k->active = vs_client_now();
    int rc = vs_buf_puts(&out, "<boinc_gui_rpc_reply>\n");
    const struct vs_xml_node *op = NULL;
    if (vs_xml_parse(req, len, NULL, 0, &a, &doc, &xe) != 0 ||
        strcmp(doc.root->name, "boinc_gui_rpc_request") != 0 || !doc.root->child) {
        rc = rc ? rc : vs_buf_puts(&out, "<error>malformed request</error>\n");
    } else {
        op = doc.root->child;
        bool need_auth =
            c->gui_password[0] && !k->authorized && (!k->local || !read_only(op->name));
        if (strcmp(op->name, "auth1") == 0) {
            snprintf(k->nonce, sizeof(k->nonce), "%f", vs_client_now());
            k->got_nonce = true;
            rc = vs_buf_printf(&out, "<nonce>%s</nonce>\n", k->nonce);
        } else if (strcmp(op->name, "auth2") == 0) {
            const char *h = vs_xml_text_trim(vs_xml_child(op, "nonce_hash"), &a);
            char want[VS_MD5_HEX_LEN + 1], both[400];
            int n = snprintf(both, sizeof(both), "%s%s", k->nonce, c->gui_password);
            bool ok = k->got_nonce && n > 0 && (size_t)n < sizeof(both) &&
                      vs_md5_hex(both, (size_t)n, want) == 0 && strcmp(h, want) == 0;
            k->got_nonce = false;
            if (ok) {
                k->authorized = true;
                rc = vs_buf_puts(&out, "<authorized/>\n");
            } else {
                VS_LOG(&c->log, VS_LOG_WARN, "GUI RPC: wrong password");
                rc = vs_buf_puts(&out, "<unauthorized/>\n");
                keep = ++k->unauth < 2;
            }
        } else if (need_auth) {
            rc = vs_buf_puts(&out, "<unauthorized/>\n");
            keep = ++k->unauth < 2;
        } else {
            rc = vs_client_gui_dispatch(c, &doc, op, &a, &out);
        }
    }
    if (rc == 0)
        rc = vs_buf_puts(&out, "</boinc_gui_rpc_reply>\n\003");
    if (rc != 0) {
        vs_buf_reset(&out);
        if (vs_buf_puts(&out, "<boinc_gui_rpc_reply>\n<error>reply too large</error>\n"
                              "</boinc_gui_rpc_reply>\n\003")) {
            /* a reset buffer takes 80 bytes */
        }
    }
    /* the reply waits in the connection (nothing was pending: see serve_requests) */
    vs_buf_cleanup(&k->out);
    k->out = out;
    k->out_off = 0;
    if (!flush(k))
        keep = false;
    vs_arena_cleanup(&a);
    return keep;
}

/* Answers the complete requests received (each ending in 0x03), one at a
 * time: the next only once the last reply is sent. */
/* An HTTP request (the web page, webui.c) instead of GUI RPC ones: answered
 * once complete, then the connection closes. Returns false when it is not one. */
static bool serve_http(struct vs_client *c, struct gui_conn *k)
{
    if (k->http || !k->in.len || !vs_client_webui_is_http(k->in.data, k->in.len))
        return k->http;
    struct vs_buf out;
    vs_buf_init(&out, GUI_MAX_REPLY);
    int rc = vs_client_webui_serve(c, remote_allowed(c), k->in.data, k->in.len, &out);
    if (rc == VS_EBUSY) {
        vs_buf_cleanup(&out);
        return true; /* the rest of the request is to come */
    }
    if (rc != 0) {
        vs_buf_cleanup(&out);
        conn_drop(k);
        return true;
    }
    k->http = true;
    k->active = vs_client_now();
    vs_buf_reset(&k->in);
    vs_buf_cleanup(&k->out);
    k->out = out;
    k->out_off = 0;
    if (!flush(k) || !out_pending(k))
        conn_close(k);
    return true;
}

static void serve_requests(struct vs_client *c, struct gui_conn *k)
{
    if (serve_http(c, k))
        return;
    for (int guard = 0; guard < 64 && k->fd >= 0 && !out_pending(k); guard++) {
        char *end = k->in.len ? memchr(k->in.data, 3, k->in.len) : NULL;
        if (!end)
            return;
        size_t rl = (size_t)(end - k->in.data);
        if (!handle(c, k, k->in.data, rl)) {
            conn_close(k);
            return;
        }
        size_t rest = k->in.len - rl - 1;
        memmove(k->in.data, end + 1, rest);
        k->in.len = rest;
        k->in.data[rest] = '\0';
    }
}

static void serve_conn(struct vs_client *c, struct gui_conn *k)
{
    char buf[16384];
    ssize_t n = recv(k->fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        conn_close(k);
        return;
    }
    if (n < 0)
        return;
    if (vs_buf_append(&k->in, buf, (size_t)n) != 0) {
        VS_LOG(&c->log, VS_LOG_WARN, "GUI RPC: request over %d bytes; connection closed",
               GUI_MAX_REQUEST);
        conn_drop(k);
        return;
    }
    serve_requests(c, k);
}

/* Closes the connections past a deadline (see the top of the file). */
static void expire(struct vs_client *c)
{
    double now = vs_client_now();
    for (size_t i = 0; c->conns && i < GUI_MAX_CONNS; i++) {
        struct gui_conn *k = &c->conns[i];
        if (k->fd < 0)
            continue;
        if (out_pending(k) && now - k->active > GUI_WRITE_STALL) {
            VS_LOG(&c->log, VS_LOG_WARN,
                   "GUI RPC: a connection took no byte of its reply for %.0f s; closed",
                   GUI_WRITE_STALL);
            conn_drop(k);
        } else if (!k->authorized && now - (k->local ? k->active : k->opened) > GUI_AUTH_DEADLINE) {
            VS_LOG(&c->log, VS_LOG_DEBUG,
                   "GUI RPC: a connection not authenticated within %.0f s; closed",
                   GUI_AUTH_DEADLINE);
            conn_drop(k);
        }
    }
}

void vs_client_gui_poll(struct vs_client *c, int timeout_ms)
{
    struct pollfd pf[GUI_MAX_CONNS + 1];
    size_t map[GUI_MAX_CONNS + 1];
    size_t n = 0;
    for (size_t i = 0; c->conns && i < GUI_MAX_CONNS; i++)
        if (c->conns[i].fd >= 0) {
            pf[n].fd = c->conns[i].fd;
            /* a reply waiting: nothing more is read (the peer's requests wait
             * in the kernel, which slows the peer down) until it is sent */
            pf[n].events = out_pending(&c->conns[i]) ? POLLOUT : POLLIN;
            map[n++] = i;
        }
    /* last: the connections are served before a newcomer may replace one */
    if (c->gui_fd >= 0) {
        pf[n].fd = c->gui_fd;
        pf[n].events = POLLIN;
        map[n++] = (size_t)-1;
    }
    vs_client_net_wait(c, pf, n, timeout_ms);
    for (size_t i = 0; i < n; i++) {
        short ev = pf[i].revents;
        if (map[i] == (size_t)-1) {
            if (ev & POLLIN)
                accept_all(c);
            continue;
        }
        struct gui_conn *k = &c->conns[map[i]];
        if ((ev & POLLOUT) && out_pending(k)) {
            if (!flush(k) || (k->http && !out_pending(k))) {
                conn_close(k);
                continue;
            }
            serve_requests(c, k); /* the ones read before, now their turn */
            continue;
        }
        if (k->fd >= 0 && (ev & (POLLIN | POLLHUP | POLLERR)))
            serve_conn(c, k);
    }
    expire(c);
}
