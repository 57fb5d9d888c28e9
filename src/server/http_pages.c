/*
 * The HTTP front end's pages: the master page and get_project_config.php
 * (built once, when the listeners are up), and the GET paths handed to the
 * page handler (status page, dashboard, metrics).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "server/http_int.h"
#include "volsched/alloc.h"

struct query_acc {
    struct vs_buf *b;
    int rc;
};

/* Appends s[0..n) percent-encoded where it would be read as the query's
 * syntax ('%', '&', '=', '+', '#'), a space, or a byte that is not
 * printable ASCII (a NUL too): MHD hands the arguments decoded, and a
 * value holding "&" must not become two arguments, nor one holding %00 be
 * cut short (vs_form_get decodes, and refuses the NUL). */
static int put_query_part(struct vs_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= ' ' || c >= 0x7f || strchr("%&=+#", c)) {
            char e[3] = {'%', hex[c >> 4], hex[c & 15]};
            rc = vs_buf_append(b, e, 3);
        } else {
            rc = vs_buf_append(b, (const char *)&s[i], 1);
        }
    }
    return rc;
}

static enum MHD_Result add_arg(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
                               const char *value, size_t value_size)
{
    (void)kind;
    struct query_acc *q = cls;
    if (q->rc == 0 && q->b->len)
        q->rc = vs_buf_puts(q->b, "&");
    if (q->rc == 0)
        q->rc = put_query_part(q->b, key, key_size);
    if (q->rc == 0 && value) {
        q->rc = vs_buf_puts(q->b, "=");
        if (q->rc == 0)
            q->rc = put_query_part(q->b, value, value_size);
    }
    return q->rc == 0 ? MHD_YES : MHD_NO;
}

/* Copies a header (NULL stays NULL) into pr's string buffer; its offset
 * (+1, 0 for NULL), turned into a pointer once every copy is in. */
static size_t keep(struct vs_http_post *pr, const char *s, int *rc)
{
    if (!s || *rc)
        return 0;
    size_t at = pr->strs.len;
    *rc = vs_buf_append(&pr->strs, s, strlen(s) + 1);
    return at + 1;
}

static const char *at(const struct vs_http_post *pr, size_t off)
{
    return off ? pr->strs.data + off - 1 : NULL;
}

/* Fills pr->get from the connection's request (path, query, headers,
 * listener); 0, or VS_ELIMIT when it does not fit. */
static int fill_get(struct vs_http *h, struct MHD_Connection *c, struct vs_http_post *pr,
                    const char *url)
{
    struct vs_buf query;
    vs_buf_init(&query, 32 * 1024); /* am_set_info's preferences */
    struct query_acc qa = {.b = &query};
    MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, add_arg, &qa);
    int rc = qa.rc;
    size_t o_path = keep(pr, url, &rc);
    size_t o_query = keep(pr, vs_buf_str(&query), &rc);
    size_t o_auth = keep(
        pr, MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION), &rc);
    size_t o_cookie =
        keep(pr, MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_COOKIE), &rc);
    vs_buf_cleanup(&query);
    if (rc != 0)
        return rc;
    enum vs_http_listener l = vs_http__listener(h, c);
    pr->get = (struct vs_http_get){
        .path = at(pr, o_path),
        .query = at(pr, o_query),
        .authorization = at(pr, o_auth),
        .cookie = at(pr, o_cookie),
        .peer = pr->peer,
        .https = l == VS_LISTEN_TLS,
        .ops_listener = l == VS_LISTEN_OPS,
    };
    return 0;
}

/* Queues pr for the page thread: MHD_YES (answered once it ran), or the
 * answer when the queue is full or the threads are stopping. */
static enum MHD_Result queue_page(struct vs_http *h, struct MHD_Connection *c,
                                  struct vs_http_post *pr, const char *method, const char *url)
{
    int d = vs_http__dispatch(&h->page_pool, pr);
    if (d < 0)
        return vs_http__refuse(h, c, MHD_HTTP_SERVICE_UNAVAILABLE, method, url,
                               "too many page requests waiting; try again later");
    if (d > 0)
        return MHD_YES;       /* answered once the page thread resumes it */
    vs_http__page_run(h, pr); /* stopping: no page thread any more */
    pr->state = POST_DONE;
    return vs_http__page_answer(h, c, pr, method, url);
}

/* A GET for a path none of the fixed routes own: the page handler's turn,
 * on the page thread. */
enum MHD_Result vs_http__serve_page(struct vs_http *h, struct MHD_Connection *c, const char *method,
                                    const char *url, void **con_cls)
{
    if (!h->cfg.pages)
        return vs_http__refuse(h, c, MHD_HTTP_NOT_FOUND, method, url, "no such page");
    struct vs_http_post *pr = vs_http__post_new(h, c, VS_ROUTE_PAGE, 0);
    if (fill_get(h, c, pr, url) != 0) {
        vs_http__post_free(pr);
        return vs_http__refuse(h, c, MHD_HTTP_BAD_REQUEST, method, url, "request too large");
    }
    *con_cls = pr; /* freed by the request-completed callback */
    return queue_page(h, c, pr, method, url);
}

enum MHD_Result vs_http__form_ready(struct vs_http *h, struct MHD_Connection *c,
                                    struct vs_http_post *pr, const char *method, const char *url)
{
    const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    static const char form_type[] = "application/x-www-form-urlencoded";
    if (!ct || strncasecmp(ct, form_type, sizeof(form_type) - 1) != 0 ||
        (ct[sizeof(form_type) - 1] != '\0' && ct[sizeof(form_type) - 1] != ';'))
        return vs_http__refuse(h, c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, method, url,
                               "forms are application/x-www-form-urlencoded");
    int rc = fill_get(h, c, pr, url);
    size_t o_form = 0;
    if (rc == 0 && vs_buf_append(&pr->body, "", 1) == 0) /* NUL-terminated */
        o_form = 1;
    if (rc != 0 || !o_form)
        return vs_http__refuse(h, c, MHD_HTTP_BAD_REQUEST, method, url, "request too large");
    pr->get.form = pr->body.data;
    pr->route = VS_ROUTE_PAGE; /* answered as a page from here on */
    return queue_page(h, c, pr, method, url);
}

void vs_http__page_run(struct vs_http *h, struct vs_http_post *pr)
{
    pr->page.body = &pr->out;
    pr->page.ctype = "text/plain";
    pr->status = h->cfg.pages(h->cfg.pages_ctx, &pr->get, &pr->page);
}

enum MHD_Result vs_http__page_answer(struct vs_http *h, struct MHD_Connection *c,
                                     struct vs_http_post *pr, const char *method, const char *url)
{
    if (pr->status == MHD_HTTP_NOT_FOUND)
        return vs_http__refuse(h, c, MHD_HTTP_NOT_FOUND, method, url, "no such page");
    struct MHD_Response *r = vs_http__take_response(&pr->out, pr->page.ctype);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (pr->status >= 400)
        atomic_fetch_add_explicit(&h->n_refused, 1, memory_order_relaxed);
    if (pr->status == MHD_HTTP_UNAUTHORIZED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                "Basic realm=\"volsched operator\", charset=\"UTF-8\"");
    if (pr->page.set_cookie[0])
        MHD_add_response_header(r, MHD_HTTP_HEADER_SET_COOKIE, pr->page.set_cookie);
    if (pr->page.location[0])
        MHD_add_response_header(r, MHD_HTTP_HEADER_LOCATION, pr->page.location);
    if (pr->page.retry_after) {
        char ra[16];
        snprintf(ra, sizeof(ra), "%u", pr->page.retry_after);
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, ra);
    }
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)pr->status, r);
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
    bool site = h->cfg.pages && h->cfg.project_config_xml; /* the volunteers' site */
    if (site)
        rc = rc ? rc : vs_buf_puts(&b, "<link rel=\"stylesheet\" href=\"style.css\">\n");
    rc = rc ? rc
            : vs_buf_printf(&b, "</head><body>\n<!-- <scheduler>%s</scheduler> -->\n<h1>", sched);
    rc = rc ? rc : put_escaped(&b, name);
    rc = rc ? rc
            : vs_buf_puts(&b, "</h1>\n<p>A volsched project. Attach a BOINC client with "
                              "this page's URL and your e-mail and password, or your account "
                              "key.</p>\n");
    /* The volunteers' site, when a page handler serves it. */
    if (site)
        rc = rc ? rc
                : vs_buf_puts(&b, "<p><a href=\"signup.php\">Join</a> &middot; <a "
                                  "href=\"login.php\">Log in</a> &middot; <a "
                                  "href=\"home.php\">Your account</a> &middot; <a "
                                  "href=\"teams.php\">Teams</a></p>\n");
    rc = rc ? rc : vs_buf_puts(&b, "</body></html>\n");
    if (rc == 0)
        h->master_resp = vs_http__take_response(&b, "text/html");
    vs_buf_reset(&b);
    rc = rc ? rc : vs_buf_puts(&b, "<project_config>\n    <name>");
    rc = rc ? rc : put_escaped(&b, name);
    rc = rc ? rc : vs_buf_puts(&b, "</name>\n    <master_url>");
    rc = rc ? rc : put_escaped(&b, h->master_url);
    rc = rc ? rc : vs_buf_puts(&b, "</master_url>\n    <web_rpc_url_base>");
    /* BOINC-COMPAT (secure_url_base): with HTTPS, the account RPCs (the
     * passwords' hashes) go over it. */
    if (h->https_base) {
        rc = rc ? rc : put_escaped(&b, h->https_base);
        rc = rc ? rc : put_escaped(&b, h->path);
    } else {
        rc = rc ? rc : put_escaped(&b, h->master_url);
    }
    rc = rc ? rc : vs_buf_puts(&b, "</web_rpc_url_base>\n");
    rc = rc ? rc
            : vs_buf_puts(&b, h->cfg.project_config_xml
                                  ? h->cfg.project_config_xml
                                  : "    <account_creation_disabled/>\n"
                                    "    <client_account_creation_disabled/>\n"
                                    "    <min_passwd_length>6</min_passwd_length>\n");
    rc = rc ? rc : vs_buf_puts(&b, "</project_config>\n");
    if (rc == 0)
        h->config_resp = vs_http__take_response(&b, "text/xml");
    vs_buf_cleanup(&b);
    if (rc == 0 && (!h->master_resp || !h->config_resp))
        rc = VS_ENOMEM;
    return rc;
}
