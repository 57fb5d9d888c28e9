/*
 * Tree helpers over the reader's nodes (see include/volsched/xml.h): lookups
 * by name, trimmed text, numbers and booleans, verbatim spans. Every one
 * accepts a NULL node, so a caller can chain lookups of optional elements.
 */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "volsched/str.h"
#include "volsched/xml.h"

const struct vs_xml_node *vs_xml_child(const struct vs_xml_node *n, const char *name)
{
    if (!n)
        return NULL;
    for (const struct vs_xml_node *c = n->child; c; c = c->next)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

const struct vs_xml_node *vs_xml_next_same(const struct vs_xml_node *n)
{
    if (!n)
        return NULL;
    for (const struct vs_xml_node *c = n->next; c; c = c->next)
        if (strcmp(c->name, n->name) == 0)
            return c;
    return NULL;
}

const char *vs_xml_attr(const struct vs_xml_node *n, const char *name)
{
    if (!n)
        return NULL;
    for (size_t i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0)
            return n->attrs[i].value;
    return NULL;
}

const char *vs_xml_child_text(const struct vs_xml_node *n, const char *name)
{
    const struct vs_xml_node *c = vs_xml_child(n, name);
    return c ? c->text : NULL;
}

static void trim_span(const char *s, size_t len, size_t *out_start, size_t *out_len)
{
    size_t a = 0, e = len;
    while (a < e && isspace((unsigned char)s[a]))
        a++;
    while (e > a && isspace((unsigned char)s[e - 1]))
        e--;
    *out_start = a;
    *out_len = e - a;
}

const char *vs_xml_text_trim(const struct vs_xml_node *n, struct vs_arena *arena)
{
    if (!n)
        return "";
    size_t a, l;
    trim_span(n->text, n->text_len, &a, &l);
    if (a == 0 && l == n->text_len)
        return n->text;
    return vs_arena_strndup(arena, n->text + a, l);
}

int vs_xml_get_double(const struct vs_xml_node *n, double *out)
{
    if (!n)
        return VS_ENOTFOUND;
    return vs_parse_double(n->text, out);
}

int vs_xml_get_int64(const struct vs_xml_node *n, int64_t *out)
{
    if (!n)
        return VS_ENOTFOUND;
    int64_t v;
    if (vs_parse_int64(n->text, &v) == 0) {
        *out = v;
        return 0;
    }
    /* BOINC writes some integers with %f ("10193.000000"): accept integral values */
    double d;
    if (vs_parse_double(n->text, &d) != 0 || d != floor(d) || fabs(d) > 9.0e15)
        return VS_EPARSE;
    *out = (int64_t)d;
    return 0;
}

int vs_xml_get_bool(const struct vs_xml_node *n, bool *out)
{
    if (!n)
        return VS_ENOTFOUND;
    size_t a, l;
    trim_span(n->text, n->text_len, &a, &l);
    if (l == 0) {
        *out = true; /* BOINC-COMPAT: <flag/> means set */
        return 0;
    }
    char tmp[8];
    if (l >= sizeof(tmp))
        return VS_EPARSE;
    memcpy(tmp, n->text + a, l);
    tmp[l] = '\0';
    return vs_parse_bool(tmp, out);
}

const char *vs_xml_raw(const struct vs_xml_doc *doc, const struct vs_xml_node *n, size_t *out_len)
{
    if (!n || n->raw_off > doc->input_len || n->raw_len > doc->input_len - n->raw_off) {
        *out_len = 0;
        return "";
    }
    *out_len = n->raw_len;
    return doc->input + n->raw_off;
}

const char *vs_xml_inner_raw(const struct vs_xml_doc *doc, const struct vs_xml_node *n,
                             size_t *out_len)
{
    size_t len;
    const char *raw = vs_xml_raw(doc, n, &len);
    /* start tag ends at the first '>' outside quotes; end tag starts at the last '<' */
    size_t i = 0;
    char q = 0;
    for (; i < len; i++) {
        if (q) {
            if (raw[i] == q)
                q = 0;
        } else if (raw[i] == '"' || raw[i] == '\'') {
            q = raw[i];
        } else if (raw[i] == '>') {
            break;
        }
    }
    if (i >= len || (i > 0 && raw[i - 1] == '/')) {
        *out_len = 0;
        return raw + (i < len ? i : len);
    }
    size_t start = i + 1, end = len;
    if (n->closed) {
        while (end > start && raw[end - 1] != '<')
            end--;
        end = end > start ? end - 1 : start;
    }
    *out_len = end - start;
    return raw + start;
}
