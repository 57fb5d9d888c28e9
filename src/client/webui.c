/*
 * The client's web page (BOINC never had one: its issue #2112), served on
 * the GUI RPC port by the same server (gui_rpc.c), so it is reachable from
 * exactly where the GUI RPC is: localhost, or the hosts remote_hosts.cfg /
 * <allow_remote_gui_rpc> admit.
 *
 *   GET /          the page (webui_page.c): plain HTML, one script, one
 *   GET /app.js    style sheet, nothing from elsewhere
 *   GET /app.css
 *   POST /rpc      body: one GUI RPC request (<get_results/>, ...), with
 *                  "Authorization: Bearer TOKEN", TOKEN being the password
 *                  of gui_rpc_auth.cfg; answered with the GUI RPC reply
 *                  (text/xml). Without the right token: 401, logged.
 *
 * The page holds no data and no secret: the browser asks for the token (or
 * takes it from the address's #token= fragment, which is never sent) and
 * keeps it in sessionStorage. A custom header cannot be sent cross-site
 * without a CORS preflight, which is never answered, so another site can
 * neither read nor drive the client; the Host header must name the address
 * the client listens on (a DNS-rebound name is refused). With no password
 * in gui_rpc_auth.cfg, /rpc is refused. One request per connection
 * (Connection: close).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client/gui_rpc_int.h"
#include "volsched/client.h"
#include "volsched/xml.h"

#define HTTP_MAX_HEAD 8192

/* The value of header name (case-insensitive) in head, copied to out. */
static bool header(const char *head, size_t hlen, const char *name, char *out, size_t size)
{
    size_t nl = strlen(name);
    for (const char *p = head; p && p < head + hlen;) {
        const char *eol = memchr(p, '\n', (size_t)(head + hlen - p));
        size_t len = eol ? (size_t)(eol - p) : (size_t)(head + hlen - p);
        if (len > nl && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            size_t vl = (size_t)(p + len - v);
            while (vl && (v[vl - 1] == '\r' || v[vl - 1] == ' '))
                vl--;
            if (vl >= size)
                return false;
            memcpy(out, v, vl);
            out[vl] = '\0';
            return true;
        }
        p = eol ? eol + 1 : NULL;
    }
    return false;
}

static bool same_secret(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned char d = (unsigned char)(la != lb);
    for (size_t i = 0; i < la; i++)
        d |= (unsigned char)(a[i] ^ b[i % (lb ? lb : 1)]);
    return d == 0;
}

static void respond(struct vs_buf *out, int code, const char *reason, const char *type,
                    const char *body, size_t len)
{
    if (vs_buf_printf(out,
                      "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                      "Connection: close\r\nCache-Control: no-store\r\n"
                      "X-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n"
                      "X-Frame-Options: DENY\r\n"
                      "Content-Security-Policy: default-src 'none'; script-src 'self'; "
                      "style-src 'self'; connect-src 'self'; frame-ancestors 'none'\r\n\r\n",
                      code, reason, type, len) != 0 ||
        vs_buf_append(out, body, len) != 0) {
        vs_buf_reset(out); /* over the reply cap: nothing is sent but the close */
    }
}

static void error_page(struct vs_buf *out, int code, const char *reason, const char *why)
{
    respond(out, code, reason, "text/plain; charset=utf-8", why, strlen(why));
}

/* Whether the Host header names this client (not another name resolved to it). */
static bool host_ok(const struct vs_client *c, const char *host, bool remote)
{
    char want[80];
    static const char *const names[] = {"127.0.0.1", "localhost", "[::1]"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(want, sizeof(want), "%s:%d", names[i], c->gui_port);
        if (strcasecmp(host, want) == 0)
            return true;
    }
    if (!remote)
        return false;
    /* remote access is on: an address literal with our port */
    const char *colon = strrchr(host, ':');
    if (!colon || strtol(colon + 1, NULL, 10) != c->gui_port)
        return false;
    for (const char *p = host; p < colon; p++)
        if (!strchr("0123456789.[]:abcdefABCDEF", *p))
            return false;
    return true;
}

static void rpc(struct vs_client *c, const char *body, size_t len, struct vs_buf *out)
{
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_buf req, reply;
    vs_buf_init(&req, len + 128);
    vs_buf_init(&reply, 64u << 20);
    struct vs_xml_doc doc;
    struct vs_xml_error xe;
    int rc = vs_buf_puts(&req, "<boinc_gui_rpc_request>\n");
    if (rc == 0)
        rc = vs_buf_append(&req, body, len);
    if (rc == 0)
        rc = vs_buf_puts(&req, "\n</boinc_gui_rpc_request>\n");
    if (rc == 0 && strstr(body, "<boinc_gui_rpc_request") != NULL)
        rc = VS_EINVAL; /* one op, without the envelope */
    if (rc != 0 || vs_xml_parse(req.data, req.len, NULL, 0, &a, &doc, &xe) != 0 ||
        !doc.root->child) {
        error_page(out, 400, "Bad Request", "the body is one GUI RPC request, e.g. <get_state/>\n");
    } else if (strcmp(doc.root->child->name, "auth1") == 0 ||
               strcmp(doc.root->child->name, "auth2") == 0) {
        error_page(out, 400, "Bad Request", "the token authenticates; no auth1/auth2 here\n");
    } else {
        rc = vs_buf_puts(&reply, "<boinc_gui_rpc_reply>\n");
        if (rc == 0)
            rc = vs_client_gui_dispatch(c, &doc, doc.root->child, &a, &reply);
        if (rc == 0)
            rc = vs_buf_puts(&reply, "</boinc_gui_rpc_reply>\n");
        if (rc == 0)
            respond(out, 200, "OK", "text/xml; charset=utf-8", reply.data, reply.len);
        else
            error_page(out, 500, "Internal Server Error", "reply too large\n");
    }
    vs_buf_cleanup(&reply);
    vs_buf_cleanup(&req);
    vs_arena_cleanup(&a);
}

bool vs_client_webui_is_http(const char *in, size_t len)
{
    static const char *const verbs[] = {"GET ", "POST ", "HEAD ", "PUT ", "OPTIONS ", "DELETE "};
    for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
        size_t n = strlen(verbs[i]);
        if (len >= n ? memcmp(in, verbs[i], n) == 0 : memcmp(in, verbs[i], len) == 0)
            return true;
    }
    return false;
}

int vs_client_webui_serve(struct vs_client *c, bool remote, const char *in, size_t len,
                          struct vs_buf *out)
{
    const char *end = NULL;
    for (size_t i = 0; i + 3 < len && !end; i++)
        if (memcmp(in + i, "\r\n\r\n", 4) == 0)
            end = in + i + 4;
    if (!end)
        return len > HTTP_MAX_HEAD ? VS_ELIMIT : VS_EBUSY;
    size_t hlen = (size_t)(end - in);
    char method[8] = "", path[256] = "", host[256] = "", auth[400] = "", clen[32] = "";
    const char *sp = memchr(in, ' ', hlen);
    const char *sp2 = sp ? memchr(sp + 1, ' ', (size_t)(end - sp - 1)) : NULL;
    if (!sp || !sp2 || (size_t)(sp - in) >= sizeof(method) ||
        (size_t)(sp2 - sp - 1) >= sizeof(path)) {
        error_page(out, 400, "Bad Request", "bad request line\n");
        return 0;
    }
    memcpy(method, in, (size_t)(sp - in));
    memcpy(path, sp + 1, (size_t)(sp2 - sp - 1));
    size_t body_len = 0;
    if (header(in, hlen, "Content-Length", clen, sizeof(clen))) {
        char *e = NULL;
        long long n = strtoll(clen, &e, 10);
        if (!*clen || *e || n < 0 || n > 200 * 1024) {
            error_page(out, 413, "Payload Too Large", "bad or too large Content-Length\n");
            return 0;
        }
        body_len = (size_t)n;
    }
    if (len - hlen < body_len)
        return VS_EBUSY;
    if (!header(in, hlen, "Host", host, sizeof(host)) || !host_ok(c, host, remote)) {
        VS_LOG(&c->log, VS_LOG_WARN, "web page: refused a request for another host name");
        error_page(out, 421, "Misdirected Request", "wrong Host\n");
        return 0;
    }
    char *q = strchr(path, '?');
    if (q)
        *q = '\0';
    const char *type = NULL;
    size_t asset_len = 0;
    const char *asset = NULL;
    if (strcmp(method, "GET") == 0 && vs_client_webui_asset(path, &asset, &asset_len, &type)) {
        respond(out, 200, "OK", type, asset, asset_len);
    } else if (strcmp(method, "POST") == 0 && strcmp(path, "/rpc") == 0) {
        char token[300] = "";
        if (header(in, hlen, "Authorization", auth, sizeof(auth)) &&
            strncasecmp(auth, "Bearer ", 7) == 0 && strlen(auth + 7) < sizeof(token))
            memcpy(token, auth + 7, strlen(auth + 7) + 1);
        if (!c->gui_password[0]) {
            error_page(out, 403, "Forbidden",
                       "gui_rpc_auth.cfg is empty: put a password there to use the web page\n");
        } else if (!token[0] || !same_secret(token, c->gui_password)) {
            c->web_refused++;
            double now = vs_client_now();
            if (now - c->web_refused_said >= 60) { /* a flood must not flood the log */
                vs_client_msg(c, -1, 2, "web page: %u request%s without the right token refused",
                              c->web_refused, c->web_refused > 1 ? "s" : "");
                c->web_refused_said = now;
                c->web_refused = 0;
            }
            error_page(out, 401, "Unauthorized",
                       "the token (gui_rpc_auth.cfg) is missing or wrong\n");
        } else {
            rpc(c, end, body_len, out);
        }
    } else if (strcmp(method, "GET") == 0) {
        error_page(out, 404, "Not Found", "no such page\n");
    } else {
        error_page(out, 405, "Method Not Allowed", "GET or POST /rpc only\n");
    }
    return 0;
}
