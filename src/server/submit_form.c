/* Form bodies of the submission API (submit_form.h). */
#include "server/submit_form.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "volsched/str.h"

/* Decodes s[0..n) (%XX and '+') into an arena copy; *out_len its length. */
static int url_decode(struct vs_arena *a, const char *s, size_t n, char **out, size_t *out_len)
{
    char *d = vs_arena_alloc_raw(a, n + 1);
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '+') {
            d[j++] = ' ';
        } else if (s[i] == '%') {
            int hi = i + 2 < n ? vs_hexval(s[i + 1]) : -1;
            int lo = i + 2 < n ? vs_hexval(s[i + 2]) : -1;
            if (hi < 0 || lo < 0)
                return VS_EPARSE;
            d[j++] = (char)(hi * 16 + lo);
            i += 2;
        } else {
            d[j++] = s[i];
        }
    }
    d[j] = '\0';
    *out = d;
    *out_len = j;
    return 0;
}

static int add(struct vs_form *f, const char *name, const char *value, size_t len,
               const char *filename)
{
    if (f->n >= VS_FORM_MAX_FIELDS)
        return VS_ELIMIT;
    f->f[f->n++] =
        (struct vs_form_field){.name = name, .value = value, .len = len, .filename = filename};
    return 0;
}

static int parse_urlencoded(const char *body, size_t len, struct vs_arena *a, struct vs_form *out,
                            char *err, size_t errsize)
{
    const char *p = body, *end = body + len;
    while (p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *stop = amp ? amp : end;
        if (stop > p) {
            const char *eq = memchr(p, '=', (size_t)(stop - p));
            const char *nend = eq ? eq : stop;
            char *name, *value;
            size_t nl, vl;
            int rc = url_decode(a, p, (size_t)(nend - p), &name, &nl);
            if (rc == 0)
                rc = eq ? url_decode(a, eq + 1, (size_t)(stop - eq - 1), &value, &vl)
                        : url_decode(a, "", 0, &value, &vl);
            if (rc) {
                snprintf(err, errsize, "the form has a malformed %%-escape");
                return rc;
            }
            if ((rc = add(out, name, value, vl, NULL)) != 0) {
                snprintf(err, errsize, "the form has more than %d fields", VS_FORM_MAX_FIELDS);
                return rc;
            }
        }
        p = stop + 1;
    }
    return 0;
}

/* The value of parameter key= in a header value ("form-data; name=\"x\""),
 * unquoted, as an arena copy; NULL if absent. */
static const char *param(struct vs_arena *a, const char *h, size_t hlen, const char *key)
{
    size_t kl = strlen(key);
    for (size_t i = 0; i + kl + 1 <= hlen; i++) {
        bool start = i == 0 || h[i - 1] == ';' || h[i - 1] == ' ' || h[i - 1] == '\t';
        if (!start || strncasecmp(h + i, key, kl) != 0 || h[i + kl] != '=')
            continue;
        const char *v = h + i + kl + 1;
        const char *e = h + hlen;
        if (v < e && *v == '"') {
            v++;
            const char *q = memchr(v, '"', (size_t)(e - v));
            return q ? vs_arena_strndup(a, v, (size_t)(q - v)) : NULL;
        }
        const char *q = v;
        while (q < e && *q != ';' && *q != ' ' && *q != '\r' && *q != '\n')
            q++;
        return vs_arena_strndup(a, v, (size_t)(q - v));
    }
    return NULL;
}

static const char *find(const char *hay, size_t n, const char *needle, size_t nl)
{
    if (nl == 0 || n < nl)
        return NULL;
    return memmem(hay, n, needle, nl);
}

static int parse_multipart(const char *ctype, const char *body, size_t len, struct vs_arena *a,
                           struct vs_form *out, char *err, size_t errsize)
{
    const char *b = param(a, ctype, strlen(ctype), "boundary");
    if (!b || !*b || strlen(b) > 200) {
        snprintf(err, errsize, "multipart/form-data without a usable boundary");
        return VS_EPARSE;
    }
    char delim[208];
    int dl = snprintf(delim, sizeof(delim), "--%s", b);
    const char *end = body + len;
    const char *p = find(body, len, delim, (size_t)dl);
    if (!p) {
        snprintf(err, errsize, "multipart body without its first boundary");
        return VS_EPARSE;
    }
    p += dl;
    for (;;) {
        if (end - p >= 2 && p[0] == '-' && p[1] == '-')
            return 0; /* the closing delimiter */
        if (end - p >= 2 && p[0] == '\r' && p[1] == '\n')
            p += 2;
        else if (p < end && *p == '\n')
            p++;
        const char *hend = find(p, (size_t)(end - p), "\r\n\r\n", 4);
        size_t hsep = 4;
        if (!hend) {
            hend = find(p, (size_t)(end - p), "\n\n", 2);
            hsep = 2;
        }
        if (!hend) {
            snprintf(err, errsize, "multipart part without the end of its headers");
            return VS_EPARSE;
        }
        const char *name = NULL, *filename = NULL;
        for (const char *h = p; h < hend;) {
            const char *nl = memchr(h, '\n', (size_t)(hend - h));
            const char *he = nl ? nl : hend;
            size_t hl = (size_t)(he - h);
            if (hl > 20 && strncasecmp(h, "content-disposition:", 20) == 0) {
                name = param(a, h + 20, hl - 20, "name");
                filename = param(a, h + 20, hl - 20, "filename");
            }
            h = he + 1;
        }
        const char *data = hend + hsep;
        const char *next = find(data, (size_t)(end - data), delim, (size_t)dl);
        if (!next) {
            snprintf(err, errsize, "multipart part without a closing boundary");
            return VS_EPARSE;
        }
        const char *dend = next;
        if (dend - data >= 2 && dend[-2] == '\r' && dend[-1] == '\n')
            dend -= 2;
        else if (dend > data && dend[-1] == '\n')
            dend--;
        if (!name) {
            snprintf(err, errsize, "multipart part without a name");
            return VS_EPARSE;
        }
        size_t vl = (size_t)(dend - data);
        char *v = vs_arena_alloc_raw(a, vl + 1);
        memcpy(v, data, vl);
        v[vl] = '\0';
        if (add(out, name, v, vl, filename) != 0) {
            snprintf(err, errsize, "the form has more than %d fields", VS_FORM_MAX_FIELDS);
            return VS_ELIMIT;
        }
        p = next + dl;
    }
}

int vs_form_parse(const char *ctype, const char *body, size_t len, struct vs_arena *arena,
                  struct vs_form *out, char *err, size_t errsize)
{
    out->n = 0;
    if (!ctype || strncasecmp(ctype, "application/x-www-form-urlencoded", 33) == 0)
        return parse_urlencoded(body, len, arena, out, err, errsize);
    if (strncasecmp(ctype, "multipart/form-data", 19) == 0)
        return parse_multipart(ctype, body, len, arena, out, err, errsize);
    snprintf(err, errsize,
             "unsupported Content-Type '%.80s' (send an HTML form: "
             "application/x-www-form-urlencoded or multipart/form-data)",
             ctype);
    return VS_EUNSUPPORTED;
}

const struct vs_form_field *vs_form_field_get(const struct vs_form *f, const char *name)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->f[i].name, name) == 0)
            return &f->f[i];
    return NULL;
}
