/*
 * The GUI RPC server (boinc-client-notes.md 5): TCP on 127.0.0.1 (all
 * interfaces only when remote_hosts.cfg or <allow_remote_gui_rpc> says so,
 * remote peers then filtered by that list), requests framed by
 * <boinc_gui_rpc_request> and byte 0x03, auth1 nonce / auth2
 * md5(nonce + password), read-only requests from localhost without auth.
 * Replies follow what boinccmd 7.20.5's line- and order-sensitive parser
 * needs (5.4): <result> etc. on their own lines, get_state items after
 * their project.
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
#include <sys/time.h>
#include <unistd.h>

#include "client/gui_rpc_int.h"
#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/md5.h"
#include "volsched/str.h"
#include "volsched/xml.h"

#define GUI_MAX_CONNS   32
#define GUI_MAX_REQUEST (256 * 1024)

struct gui_conn {
    int fd;
    bool local;
    bool authorized;
    bool got_nonce;
    int unauth;
    char nonce[64];
    struct vs_buf in;
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
    if (c->n_remote_hosts == 0)
        c->n_remote_hosts = 0;
}

int vs_client_gui_open(struct vs_client *c, int port)
{
    read_remote_hosts(c);
    bool remote = c->n_remote_hosts > 0 || c->prefs.allow_remote_gui_rpc;
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
    return 0;
}

static void conn_close(struct gui_conn *k)
{
    if (k->fd >= 0)
        close(k->fd);
    vs_buf_cleanup(&k->in);
    memset(k, 0, sizeof(*k));
    k->fd = -1;
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
    return c->prefs.allow_remote_gui_rpc && c->n_remote_hosts == 0;
}

static void accept_all(struct vs_client *c)
{
    for (int k = 0; k < 16; k++) {
        struct sockaddr_in sa;
        socklen_t sl = sizeof(sa);
        int fd = accept4(c->gui_fd, (struct sockaddr *)&sa, &sl, SOCK_CLOEXEC);
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
            close(fd);
            continue;
        }
        /* writes block (bounded by the timeout); reads are driven by poll */
        struct timeval tv = {5, 0};
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        memset(slot, 0, sizeof(*slot));
        slot->fd = fd;
        slot->local = local;
        vs_buf_init(&slot->in, GUI_MAX_REQUEST);
    }
}

static bool send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
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
    vs_buf_init(&out, 64u << 20);
    bool keep = true;
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
    if (!send_all(k->fd, out.data, out.len))
        keep = false;
    vs_buf_cleanup(&out);
    vs_arena_cleanup(&a);
    return keep;
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
        conn_close(k);
        return;
    }
    /* one or more complete requests, each ending in 0x03 */
    for (int guard = 0; guard < 64; guard++) {
        char *end = memchr(k->in.data, 3, k->in.len);
        if (!end)
            return;
        size_t rl = (size_t)(end - k->in.data);
        bool keep = handle(c, k, k->in.data, rl);
        if (!keep || k->fd < 0) {
            conn_close(k);
            return;
        }
        size_t rest = k->in.len - rl - 1;
        memmove(k->in.data, end + 1, rest);
        k->in.len = rest;
        k->in.data[rest] = '\0';
    }
}

void vs_client_gui_poll(struct vs_client *c, int timeout_ms)
{
    struct pollfd pf[GUI_MAX_CONNS + 1];
    size_t map[GUI_MAX_CONNS + 1];
    nfds_t n = 0;
    if (c->gui_fd >= 0) {
        pf[n].fd = c->gui_fd;
        pf[n].events = POLLIN;
        map[n++] = (size_t)-1;
    }
    for (size_t i = 0; c->conns && i < GUI_MAX_CONNS; i++)
        if (c->conns[i].fd >= 0) {
            pf[n].fd = c->conns[i].fd;
            pf[n].events = POLLIN;
            map[n++] = i;
        }
    int r = poll(pf, n, timeout_ms);
    if (r <= 0)
        return;
    for (nfds_t i = 0; i < n; i++) {
        if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        if (map[i] == (size_t)-1)
            accept_all(c);
        else
            serve_conn(c, &c->conns[map[i]]);
    }
}
