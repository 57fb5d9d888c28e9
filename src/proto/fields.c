/* Table-driven field parsing and writing shared by the message modules. */
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "proto/proto_int.h"
#include "volsched/str.h"

int vs_proto__fail(struct vs_proto__ctx *c, int code, const char *fmt, ...)
{
    if (c->rc)
        return c->rc;
    c->rc = code;
    if (c->err) {
        c->err->code = code;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err->msg, sizeof(c->err->msg), fmt, ap);
        va_end(ap);
    }
    return code;
}

const char *vs_proto__str(struct vs_proto__ctx *c, const struct vs_xml_node *n, size_t max)
{
    const char *s = n->text;
    size_t a = 0, e = n->text_len;
    while (a < e && isspace((unsigned char)s[a]))
        a++;
    while (e > a && isspace((unsigned char)s[e - 1]))
        e--;
    if (e - a > max) {
        vs_proto__fail(c, VS_ELIMIT, "line %u: <%s> longer than %zu bytes", n->line, n->name, max);
        return NULL;
    }
    if (a == 0 && e == n->text_len)
        return s; /* already an arena string */
    return vs_arena_strndup(c->arena, s + a, e - a);
}

const char *vs_proto__raw(struct vs_proto__ctx *c, const struct vs_xml_node *n, size_t max)
{
    size_t len;
    const char *raw = vs_xml_raw(c->doc, n, &len);
    if (len > max) {
        vs_proto__fail(c, VS_ELIMIT, "line %u: <%s> longer than %zu bytes", n->line, n->name, max);
        return NULL;
    }
    return vs_arena_strndup(c->arena, raw, len);
}

size_t vs_proto__count(const struct vs_xml_node *parent, const char *name)
{
    size_t k = 0;
    for (const struct vs_xml_node *x = parent->child; x; x = x->next)
        if (!name || strcmp(x->name, name) == 0)
            k++;
    return k;
}

void *vs_proto__array(struct vs_proto__ctx *c, size_t count, size_t size, size_t max,
                      const char *what)
{
    if (count > max) {
        vs_proto__fail(c, VS_ELIMIT, "%zu %s, more than the limit of %zu", count, what, max);
        return NULL;
    }
    return count ? vs_arena_alloc(c->arena, count * size) : NULL;
}

int vs_proto__number(const char *s, size_t len, double *out)
{
    /*
     * Clinger's fast path: "[-]digits[.digits]" with a mantissa below 2^53 and
     * at most 22 decimals is m / 10^k with both operands exact, so one IEEE
     * division gives the correctly rounded value strtod would. Anything else
     * goes to strtod. This is most of the numbers a BOINC client writes (%f).
     */
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    size_t i = 0;
    bool neg = false;
    if (i < len && s[i] == '-') {
        neg = true;
        i++;
    }
    uint64_t m = 0;
    size_t digits = 0, frac = 0;
    bool dot = false;
    for (; i < len; i++) {
        char ch = s[i];
        if (ch >= '0' && ch <= '9') {
            if (m > (UINT64_C(1) << 53) / 10)
                return vs_parse_double(s, out);
            m = m * 10 + (uint64_t)(ch - '0');
            digits++;
            frac += dot;
        } else if (ch == '.' && !dot) {
            dot = true;
        } else {
            return vs_parse_double(s, out);
        }
    }
    if (digits == 0 || (dot && frac == 0) || m >= (UINT64_C(1) << 53) || frac > 22)
        return vs_parse_double(s, out);
    double v = (double)m / pow10[frac];
    *out = neg ? -v : v;
    return 0;
}

static bool num(struct vs_proto__ctx *c, const struct vs_xml_node *n, double *out)
{
    if (vs_proto__number(n->text, n->text_len, out) != 0) {
        vs_proto__fail(c, VS_EPARSE, "line %u: <%s> is not a number", n->line, n->name);
        return false;
    }
    return true;
}

static bool integer(struct vs_proto__ctx *c, const struct vs_xml_node *n, int64_t lo, int64_t hi,
                    int64_t *out)
{
    if (vs_xml_get_int64(n, out) != 0 || *out < lo || *out > hi) {
        vs_proto__fail(c, VS_EPARSE, "line %u: <%s> is not an integer in range", n->line, n->name);
        return false;
    }
    return true;
}

bool vs_proto__field_parse(struct vs_proto__ctx *c, const struct vs_proto__field *tab, size_t n_tab,
                           const struct vs_xml_node *n, void *base)
{
    const struct vs_proto__field *f = NULL;
    for (size_t i = 0; i < n_tab; i++) {
        /* (name[0] matched and is not NUL, so name[1] exists) */
        if (tab[i].name[0] == n->name[0] && tab[i].name[1] == n->name[1] &&
            strcmp(tab[i].name, n->name) == 0) {
            f = &tab[i];
            break;
        }
    }
    if (!f)
        return false;
    vs_proto__field_set(c, f, n, base);
    return true;
}

const struct vs_proto__field *vs_proto__field_find(const struct vs_proto__field *tab, size_t n_tab,
                                                   const char *name, size_t len)
{
    for (size_t i = 0; i < n_tab; i++)
        if (tab[i].name_len == len && tab[i].name[0] == name[0] &&
            memcmp(tab[i].name, name, len) == 0)
            return &tab[i];
    return NULL;
}

void vs_proto__field_set(struct vs_proto__ctx *c, const struct vs_proto__field *f,
                         const struct vs_xml_node *n, void *base)
{
    char *p = (char *)base + f->off;
    double d;
    int64_t v;
    bool b;
    switch (f->type) {
    case F_STR:
    case F_BLOCK:
        *(const char **)p = vs_proto__str(c, n, VS_PROTO_MAX_STRING);
        break;
    case F_DBL:
    case F_DBL_OPT:
        if (num(c, n, &d))
            *(double *)p = d;
        break;
    case F_INT:
    case F_INT_OPT:
        if (integer(c, n, INT32_MIN, INT32_MAX, &v))
            *(int *)p = (int)v;
        break;
    case F_I64:
    case F_I64_OPT:
        if (integer(c, n, INT64_MIN, INT64_MAX, &v))
            *(int64_t *)p = v;
        break;
    case F_BOOL:
    case F_FLAG:
        if (vs_xml_get_bool(n, &b) == 0) {
            *(bool *)p = b;
        } else if (num(c, n, &d)) {
            *(bool *)p = d != 0; /* BOINC reads flags with atoi: any number */
        }
        break;
    }
}

void vs_proto__block_write(struct vs_xml_writer *w, const char *name, const char *text)
{
    if (!text)
        return;
    struct vs_xml_writer *ww = w;
    /* BOINC-COMPAT: key and signature bodies start on their own line, unindented */
    vs_xml_raw_write(ww, "<", 1);
    vs_xml_raw_write(ww, name, strlen(name));
    vs_xml_raw_write(ww, ">\n", 2);
    if (ww->err == 0) {
        int rc = vs_xml_escape(ww->out, text, strlen(text));
        if (rc)
            ww->err = rc;
    }
    vs_xml_raw_write(ww, "\n</", 3);
    vs_xml_raw_write(ww, name, strlen(name));
    vs_xml_raw_write(ww, ">\n", 2);
}

void vs_proto__fields_write(struct vs_xml_writer *w, const struct vs_proto__field *tab,
                            size_t n_tab, const void *base)
{
    for (size_t i = 0; i < n_tab; i++) {
        const struct vs_proto__field *f = &tab[i];
        const char *p = (const char *)base + f->off;
        switch (f->type) {
        case F_STR:
            vs_xml_str(w, f->name, *(const char *const *)p);
            break;
        case F_BLOCK:
            vs_proto__block_write(w, f->name, *(const char *const *)p);
            break;
        case F_DBL_OPT:
        case F_DBL:
            if (f->type == F_DBL || *(const double *)p != 0)
                vs_xml_double(w, f->name, *(const double *)p);
            break;
        case F_INT_OPT:
        case F_INT:
            if (f->type == F_INT || *(const int *)p != 0)
                vs_xml_int(w, f->name, *(const int *)p);
            break;
        case F_I64_OPT:
        case F_I64:
            if (f->type == F_I64 || *(const int64_t *)p != 0)
                vs_xml_int(w, f->name, *(const int64_t *)p);
            break;
        case F_BOOL:
            vs_xml_int(w, f->name, *(const bool *)p ? 1 : 0);
            break;
        case F_FLAG:
            if (*(const bool *)p)
                vs_xml_flag(w, f->name);
            break;
        }
    }
}

void vs_proto__struct_parse(struct vs_proto__ctx *c, const struct vs_proto__field *tab,
                            size_t n_tab, const struct vs_xml_node *n, void *base)
{
    for (const struct vs_xml_node *x = n->child; x && !c->rc; x = x->next)
        vs_proto__field_parse(c, tab, n_tab, x, base);
}

void vs_proto__struct_write(struct vs_xml_writer *w, const char *name,
                            const struct vs_proto__field *tab, size_t n_tab, const void *base)
{
    vs_xml_open(w, name);
    vs_proto__fields_write(w, tab, n_tab, base);
    vs_xml_close(w);
}

void *vs_proto__list_parse(struct vs_proto__ctx *c, const struct vs_xml_node *n,
                           const struct vs_proto__list *l, size_t *out_n)
{
    char *a = vs_proto__array(c, vs_proto__count(n, l->inner), l->size, l->max, l->what);
    size_t i = 0;
    for (const struct vs_xml_node *x = n->child; x && !c->rc; x = x->next) {
        if (strcmp(x->name, l->inner) != 0)
            continue;
        void *e = a + i++ * l->size;
        if (l->init)
            l->init(e);
        vs_proto__struct_parse(c, VS_PROTO__TAB(l->fields), x, e);
    }
    *out_n = i;
    return a;
}

void vs_proto__error_clear(struct vs_proto_error *err)
{
    if (err) {
        err->code = 0;
        err->msg[0] = '\0';
    }
}

int vs_proto__parse_xml(struct vs_proto__ctx *c, const char *body, size_t len, size_t max_len,
                        unsigned flags, struct vs_xml_doc *doc)
{
    if (len > max_len)
        return vs_proto__fail(c, VS_ELIMIT, "message of %zu bytes exceeds the limit of %zu", len,
                              max_len);
    struct vs_xml_limits lim;
    vs_xml_limits_default(&lim);
    lim.max_input = max_len;
    struct vs_xml_error xe;
    int rc = vs_xml_parse(body, len, &lim, flags, c->arena, doc, &xe);
    if (rc)
        return vs_proto__fail(c, rc, "%s", xe.msg);
    c->doc = doc;
    return 0;
}
