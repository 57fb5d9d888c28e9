/*
 * The HTTP front end's pages: the master page and get_project_config.php
 * (built once, when the listeners are up), and the GET paths handed to the
 * page handler (status page, dashboard, metrics).
 */
#include <stdio.h>
#include <string.h>

#include "server/http_int.h"
#include "volsched/alloc.h"

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
enum MHD_Result vs_http__serve_page(struct vs_http *h, struct MHD_Connection *c, const char *method,
                                    const char *url)
{
    if (!h->cfg.pages)
        return vs_http__refuse(h, c, MHD_HTTP_NOT_FOUND, method, url, "no such page");
    struct vs_buf query;
    vs_buf_init(&query, 4096);
    struct query_acc qa = {.b = &query};
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_arg, &qa);
    char peer[VS_HTTP_PEER_MAX];
    vs_http__peer(h, c, peer, sizeof(peer));
    struct vs_http_get req = {
        .path = url,
        .query = vs_buf_str(&query),
        .authorization =
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION),
        .peer = peer,
    };
    struct vs_buf out;
    vs_buf_init(&out, VS_HTTP_MAX_REPLY);
    const char *ctype = "text/plain";
    int status = qa.rc ? MHD_HTTP_BAD_REQUEST : h->cfg.pages(h->cfg.pages_ctx, &req, &out, &ctype);
    vs_buf_cleanup(&query);
    if (status == MHD_HTTP_NOT_FOUND) {
        vs_buf_cleanup(&out);
        return vs_http__refuse(h, c, MHD_HTTP_NOT_FOUND, method, url, "no such page");
    }
    struct MHD_Response *r = vs_http__take_response(&out, ctype);
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
int vs_http__build_pages(struct vs_http *h)
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
        h->master_resp = vs_http__take_response(&b, "text/html");
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
        h->config_resp = vs_http__take_response(&b, "text/xml");
    vs_buf_cleanup(&b);
    if (rc == 0 && (!h->master_resp || !h->config_resp))
        rc = VS_ENOMEM;
    return rc;
}
