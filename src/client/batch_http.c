/* The submission API over libcurl, for `volsched batch` (batch_http.h). */
#include "volsched/batch_http.h"

#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

#include "volsched/md5.h"

/* Replies larger than this are refused (a query of a huge batch fits). */
#define BH_MAX_REPLY (256u * 1024u * 1024u)

void vs_bh_init(struct vs_bh *h, const char *url, const char *auth, bool progress)
{
    memset(h, 0, sizeof(*h));
    vs_arena_init(&h->arena, 64 * 1024);
    size_t n = strlen(url);
    char *u = vs_xmalloc(n + 2);
    memcpy(u, url, n);
    if (n == 0 || u[n - 1] != '/')
        u[n++] = '/';
    u[n] = '\0';
    h->url = u;
    h->auth = auth;
    h->progress = progress;
    vs_buf_init(&h->reply, BH_MAX_REPLY);
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

void vs_bh_cleanup(struct vs_bh *h)
{
    vs_buf_cleanup(&h->reply);
    vs_arena_cleanup(&h->arena);
    vs_free(h->url);
    curl_global_cleanup();
}

void vs_bh_bar(const struct vs_bh *h, const char *label, double done, double total)
{
    if (!h->progress)
        return;
    int width = 30;
    int fill = total > 0 ? (int)(width * (done / total)) : 0;
    if (fill > width)
        fill = width;
    char bar[64];
    for (int i = 0; i < width; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[width] = '\0';
    fprintf(stderr, "\r%-12s [%s] %.0f/%.0f%s", label, bar, done, total, done >= total ? "\n" : "");
    fflush(stderr);
}

static size_t on_data(char *p, size_t size, size_t n, void *ctx)
{
    struct vs_bh *h = ctx;
    return vs_buf_append(&h->reply, p, size * n) == 0 ? size * n : 0;
}

struct prog {
    struct vs_bh *h;
    const char *what;
};

static int on_progress(void *ctx, curl_off_t dlt, curl_off_t dln, curl_off_t ult, curl_off_t uln)
{
    (void)dlt;
    (void)dln;
    struct prog *p = ctx;
    if (p->what && ult > 0)
        vs_bh_bar(p->h, p->what, (double)uln / 1e6, (double)ult / 1e6);
    return 0;
}

/* Runs the prepared handle c; the reply in h->reply, parsed. */
static const struct vs_xml_node *perform(struct vs_bh *h, CURL *c, const char *what)
{
    struct prog pg = {.h = h, .what = what};
    vs_buf_reset(&h->reply);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, h);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &pg);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "volsched batch");
    CURLcode cc = curl_easy_perform(c);
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(c);
    if (cc != CURLE_OK) {
        snprintf(h->err, sizeof(h->err), "%s", curl_easy_strerror(cc));
        return NULL;
    }
    vs_arena_reset(&h->arena);
    struct vs_xml_limits lim;
    vs_xml_limits_default(&lim);
    lim.max_input = h->reply.len + 1;
    lim.max_elements = 64u * 1024u * 1024u;
    struct vs_xml_error xe;
    memset(&xe, 0, sizeof(xe));
    const char *data = h->reply.data ? h->reply.data : "";
    if (vs_xml_parse(data, h->reply.len, &lim, 0, &h->arena, &h->doc, &xe) != 0) {
        snprintf(h->err, sizeof(h->err), "HTTP %ld, and the reply is not XML: %.200s", code, data);
        return NULL;
    }
    const struct vs_xml_node *root = h->doc.root;
    const struct vs_xml_node *e =
        strcmp(root->name, "error") == 0 ? root : vs_xml_child(root, "error");
    if (e) {
        snprintf(h->err, sizeof(h->err), "%s", vs_xml_child_text(e, "error_msg"));
        return NULL;
    }
    if (code != 200) {
        snprintf(h->err, sizeof(h->err), "HTTP %ld", code);
        return NULL;
    }
    return root;
}

static CURL *handle(struct vs_bh *h, const char *handler)
{
    CURL *c = curl_easy_init();
    if (!c)
        return NULL;
    size_t n = strlen(h->url) + strlen(handler) + 1;
    char *u = vs_xmalloc(n);
    snprintf(u, n, "%s%s", h->url, handler);
    curl_easy_setopt(c, CURLOPT_URL, u);
    vs_free(u);
    return c;
}

const struct vs_xml_node *vs_bh_rpc(struct vs_bh *h, const char *handler, const char *request,
                                    size_t len, const char *what)
{
    CURL *c = handle(h, handler);
    if (!c) {
        snprintf(h->err, sizeof(h->err), "libcurl could not start");
        return NULL;
    }
    char *enc = curl_easy_escape(c, request, (int)len);
    if (!enc) {
        curl_easy_cleanup(c);
        snprintf(h->err, sizeof(h->err), "the request could not be encoded");
        return NULL;
    }
    size_t elen = strlen(enc);
    char *body = vs_xmalloc(elen + 9);
    memcpy(body, "request=", 8);
    memcpy(body + 8, enc, elen + 1);
    curl_free(enc);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(elen + 8));
    const struct vs_xml_node *root = perform(h, c, what);
    vs_free(body);
    return root;
}

const struct vs_xml_node *vs_bh_upload(struct vs_bh *h, const char *request,
                                       const char *const *paths, const char *const *names, size_t n)
{
    CURL *c = handle(h, "job_file.php");
    if (!c) {
        snprintf(h->err, sizeof(h->err), "libcurl could not start");
        return NULL;
    }
    curl_mime *mime = curl_mime_init(c);
    curl_mimepart *part = curl_mime_addpart(mime);
    curl_mime_name(part, "request");
    curl_mime_data(part, request, CURL_ZERO_TERMINATED);
    for (size_t i = 0; i < n; i++) {
        char field[32];
        snprintf(field, sizeof(field), "file_%zu", i);
        part = curl_mime_addpart(mime);
        curl_mime_name(part, field);
        if (curl_mime_filedata(part, paths[i]) != CURLE_OK) {
            snprintf(h->err, sizeof(h->err), "cannot read %s", paths[i]);
            curl_mime_free(mime);
            curl_easy_cleanup(c);
            return NULL;
        }
        curl_mime_filename(part, names[i]);
    }
    curl_easy_setopt(c, CURLOPT_MIMEPOST, mime);
    const struct vs_xml_node *root = perform(h, c, "upload");
    curl_mime_free(mime);
    return root;
}

static size_t to_file(char *p, size_t size, size_t n, void *ctx)
{
    return fwrite(p, size, n, ctx);
}

int vs_bh_get(struct vs_bh *h, const char *query, FILE *out)
{
    size_t n = strlen(query) + 16;
    char *rel = vs_xmalloc(n);
    snprintf(rel, n, "get_output.php?%s", query);
    CURL *c = handle(h, rel);
    vs_free(rel);
    if (!c) {
        snprintf(h->err, sizeof(h->err), "libcurl could not start");
        return -1;
    }
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, to_file);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "volsched batch");
    CURLcode cc = curl_easy_perform(c);
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(c);
    if (cc != CURLE_OK) {
        snprintf(h->err, sizeof(h->err), "get_output.php: HTTP %ld (%s)", code,
                 curl_easy_strerror(cc));
        return -1;
    }
    return 0;
}

void vs_bh_auth_str(const struct vs_bh *h, const char *what, char out[33])
{
    char buf[600];
    int n = snprintf(buf, sizeof(buf), "%s%s", h->auth, what);
    if (n < 0 || (size_t)n >= sizeof(buf) || vs_md5_hex(buf, (size_t)n, out) != 0)
        out[0] = '\0';
}
