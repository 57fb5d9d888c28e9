/*
 * The project's master page: the HTML the client fetches at attach to find
 * the scheduler URL. BOINC-COMPAT: the client scans it as plain text for
 * <link rel="boinc_scheduler" href="URL"> (attribute order and quoting exactly
 * so) and for the older <scheduler>URL</scheduler>, one per short line.
 */
#include <string.h>

#include "proto/proto_int.h"

#define LINK_OPEN  "<link rel=\"boinc_scheduler\" href=\""
#define LINK_CLOSE "\">"
#define OLD_OPEN   "<scheduler>"
#define OLD_CLOSE  "</scheduler>"

int vs_proto_master_page_write(const char *project_name, const char *const *urls, size_t n_urls,
                               struct vs_buf *out)
{
    if (n_urls == 0 || n_urls > VS_PROTO_MAX_MASTER_URLS)
        return VS_EINVAL;
    int rc = vs_buf_puts(out, "<html><head><title>");
    if (!rc)
        rc = vs_xml_escape(out, project_name ? project_name : "",
                           project_name ? strlen(project_name) : 0);
    if (!rc)
        rc = vs_buf_puts(out, "</title>\n");
    for (size_t i = 0; i < n_urls && !rc; i++) {
        /* a URL with a quote or angle bracket would break the client's plain-text scan */
        if (strpbrk(urls[i], "\"<>\n\r") || strlen(urls[i]) > 200)
            return VS_EINVAL;
        rc = vs_buf_printf(out, LINK_OPEN "%s" LINK_CLOSE "\n", urls[i]);
    }
    if (!rc)
        rc = vs_buf_puts(out, "</head><body>\n");
    for (size_t i = 0; i < n_urls && !rc; i++)
        rc = vs_buf_printf(out, "<!-- " OLD_OPEN "%s" OLD_CLOSE " -->\n", urls[i]);
    if (!rc)
        rc = vs_buf_puts(out, "<h1>");
    if (!rc)
        rc = vs_xml_escape(out, project_name ? project_name : "",
                           project_name ? strlen(project_name) : 0);
    if (!rc)
        rc = vs_buf_puts(out, "</h1>\n</body></html>\n");
    return rc;
}

static void add_url(struct vs_arena *arena, const char **urls, size_t *n, const char *s, size_t len)
{
    while (len && (*s == ' ' || *s == '\t')) {
        s++;
        len--;
    }
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
    if (len == 0 || len > VS_PROTO_MAX_STRING || *n >= VS_PROTO_MAX_MASTER_URLS)
        return;
    for (size_t i = 0; i < *n; i++)
        if (strlen(urls[i]) == len && memcmp(urls[i], s, len) == 0)
            return; /* duplicates are merged */
    urls[(*n)++] = vs_arena_strndup(arena, s, len);
}

/* Finds open ... close pairs on each line (close must be on the same line). */
static void scan(const char *page, size_t len, const char *open, const char *close,
                 struct vs_arena *arena, const char **urls, size_t *n)
{
    size_t ol = strlen(open), cl = strlen(close);
    const char *p = page, *end = page + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *q = p;
        while (q < le) {
            const char *a = memmem(q, (size_t)(le - q), open, ol);
            if (!a)
                break;
            a += ol;
            const char *b = memmem(a, (size_t)(le - a), close, cl);
            if (!b)
                break;
            add_url(arena, urls, n, a, (size_t)(b - a));
            q = b + cl;
        }
        p = le + 1;
    }
}

int vs_proto_master_urls_parse(const char *page, size_t len, struct vs_arena *arena,
                               const char ***out_urls, size_t *out_n)
{
    const char **urls = vs_arena_alloc(arena, VS_PROTO_MAX_MASTER_URLS * sizeof(char *));
    size_t n = 0;
    scan(page, len, LINK_OPEN, LINK_CLOSE, arena, urls, &n);
    scan(page, len, OLD_OPEN, OLD_CLOSE, arena, urls, &n);
    *out_urls = urls;
    *out_n = n;
    return 0;
}
