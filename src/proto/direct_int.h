/*
 * The one-pass XML reader's primitives, shared by the server's two one-pass
 * readers: the scheduler request's (request_direct.c) and the stored job
 * documents' (job_doc.c). Each is a strict subset of XML read straight
 * into a struct through the proto field tables; anything outside it (see
 * request_direct.c's header for the subset) returns DP_FALLBACK, and the
 * caller then leaves the input to the expat-based parser, which has the
 * last word.
 *
 * Static functions in a header, not a .c of their own: the hot ones are
 * inlined into each reader's loops exactly as they were when they lived in
 * request_direct.c (a call across files cost a third of dp_next's time).
 * DP_SHARED marks the ones a reader may not use.
 */
#ifndef VOLSCHED_PROTO_DIRECT_INT_H
#define VOLSCHED_PROTO_DIRECT_INT_H

#include <stdint.h>
#include <string.h>

#include "proto/proto_int.h"
#include "volsched/buf.h"

#define DP_SHARED __attribute__((unused))

#define DP_FALLBACK 1
/*
 * The two functions every element goes through (the byte loops are inlined
 * into them), on a cache line of their own: where the compiler happened to
 * place them moved the figures by ~7% at equal instruction counts.
 */
#define DP_HOT __attribute__((aligned(64)))
/* stricter than VS_XML_MAX_DEPTH, so the tree parser's depth error stays its own */
#define DP_MAX_DEPTH (VS_XML_MAX_DEPTH - 2)

struct dp {
    const char *s;
    size_t len, pos;
    size_t last_lt; /* offset of the last '<' of the body */
    struct vs_proto__ctx *c;
    int depth;
    size_t n_elements;
};

/* Plain character data: tab, newline and printable ASCII but '<', '&', ']'. */
/* clang-format off */
static const bool dp_plain[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};
/* clang-format on */

/*
 * The XML name bytes the reader accepts: bit 1 = may start a name, bit 2 =
 * may continue one. ASCII only; a name with any other byte is expat's.
 */
static const unsigned char dp_name_class[256] = {
    ['-'] = 2, ['.'] = 2, ['0'] = 2, ['1'] = 2, ['2'] = 2, ['3'] = 2, ['4'] = 2, ['5'] = 2,
    ['6'] = 2, ['7'] = 2, ['8'] = 2, ['9'] = 2, [':'] = 3, ['_'] = 3, ['A'] = 3, ['B'] = 3,
    ['C'] = 3, ['D'] = 3, ['E'] = 3, ['F'] = 3, ['G'] = 3, ['H'] = 3, ['I'] = 3, ['J'] = 3,
    ['K'] = 3, ['L'] = 3, ['M'] = 3, ['N'] = 3, ['O'] = 3, ['P'] = 3, ['Q'] = 3, ['R'] = 3,
    ['S'] = 3, ['T'] = 3, ['U'] = 3, ['V'] = 3, ['W'] = 3, ['X'] = 3, ['Y'] = 3, ['Z'] = 3,
    ['a'] = 3, ['b'] = 3, ['c'] = 3, ['d'] = 3, ['e'] = 3, ['f'] = 3, ['g'] = 3, ['h'] = 3,
    ['i'] = 3, ['j'] = 3, ['k'] = 3, ['l'] = 3, ['m'] = 3, ['n'] = 3, ['o'] = 3, ['p'] = 3,
    ['q'] = 3, ['r'] = 3, ['s'] = 3, ['t'] = 3, ['u'] = 3, ['v'] = 3, ['w'] = 3, ['x'] = 3,
    ['y'] = 3, ['z'] = 3,
};

DP_SHARED static void dp_ws(struct dp *f)
{
    while (f->pos < f->len && (f->s[f->pos] == ' ' || f->s[f->pos] == '\t' || f->s[f->pos] == '\n'))
        f->pos++;
}

/* Length of the predefined entity at s[i] == '&', 0 if it is none. */
DP_SHARED static size_t dp_entity(const char *s, size_t len, size_t i)
{
    static const char *const ents[] = {"&lt;", "&gt;", "&amp;", "&quot;", "&apos;"};
    for (size_t k = 0; k < VS_NELEM(ents); k++) {
        size_t n = strlen(ents[k]);
        if (len - i >= n && memcmp(s + i, ents[k], n) == 0)
            return n;
    }
    return 0;
}

/*
 * Length of the non-ASCII character at s[i], 0 if it is none XML allows
 * (or a control byte): the very check expat's input passes (else the tree
 * parser's repair). Out of line, so that the ASCII loops stay small.
 */
static __attribute__((noinline, cold)) size_t dp_utf8(const char *s, size_t len, size_t i)
{
    const unsigned char *u = (const unsigned char *)s;
    return u[i] >= 0x80 ? vs_xml_char_len(u + i, len - i) : 0;
}

/*
 * Validates character data from f->pos to the next '<' and moves there.
 * *out_amp is set when it holds an entity (its bytes are then not the text).
 */
/* (inlined: called for every element, and the call cost a third of it) */
static inline __attribute__((always_inline)) int dp_text(struct dp *f, bool *out_amp)
{
    const char *s = f->s;
    size_t i = f->pos, len = f->len;
    /* A '<' at f->last_lt or before ends every run below, so the runs need
     * no bounds check: the text before a '<' is the common case. */
    if (i > f->last_lt)
        return DP_FALLBACK; /* an element left open */
    for (;;) {
        /* Most runs are short (indentation, a number): byte by byte; after
         * 16 plain bytes, eight at a time while none is below 0x20, at or
         * above 0x80, '<', '&' or ']' (a word may show a false hit, never
         * misses one). */
        unsigned k = 0;
        while (dp_plain[(unsigned char)s[i]]) {
            i++;
            if (++k == 16) {
                const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
                while (len - i >= 8) {
                    uint64_t w;
                    memcpy(&w, s + i, 8);
                    uint64_t lt = w ^ (ones * '<'), amp = w ^ (ones * '&'), br = w ^ (ones * ']');
                    if ((w | ((w - ones * 0x20) & ~w) | ((lt - ones) & ~lt) |
                         ((amp - ones) & ~amp) | ((br - ones) & ~br)) &
                        high)
                        break;
                    i += 8;
                }
                k = 0; /* (long texts with newlines: the key, the stderr) */
            }
        }
        char ch = s[i];
        if (ch == '<')
            break;
        if (ch == ']') {
            if (i + 2 < len && s[i + 1] == ']' && s[i + 2] == '>')
                return DP_FALLBACK;
            i++;
        } else if (ch == '&') {
            size_t m = dp_entity(s, len, i);
            if (!m)
                return DP_FALLBACK;
            *out_amp = true;
            i += m;
        } else {
            size_t m = dp_utf8(s, len, i);
            if (!m)
                return DP_FALLBACK; /* a control byte: the tree parser's business */
            i += m;
        }
    }
    f->pos = i;
    return 0;
}

/* At "<![CDATA[": validates the section, returns its content span and moves past it. */
DP_SHARED static int dp_cdata(struct dp *f, size_t *out_a, size_t *out_b)
{
    size_t a = f->pos + 9;
    const char *e = memmem(f->s + a, f->len - a, "]]>", 3);
    if (!e)
        return DP_FALLBACK;
    size_t b = (size_t)(e - f->s);
    const unsigned char *u = (const unsigned char *)f->s;
    for (size_t i = a; i < b;) {
        unsigned char ch = u[i];
        if ((ch >= 0x20 && ch < 0x80) || ch == '\t' || ch == '\n') {
            i++; /* (the common case, kept inline) */
            continue;
        }
        size_t m = dp_utf8(f->s, b, i); /* ('\r' is not in the body) */
        if (!m)
            return DP_FALLBACK;
        i += m;
    }
    *out_a = a;
    *out_b = b;
    f->pos = b + 3;
    return 0;
}

/* An element whose start tag the reader has just read. */
struct dp_el {
    const char *name; /* in the body, not NUL-terminated */
    size_t nl;
    bool empty;   /* <x/>: nothing more to read */
    size_t start; /* offset of its '<' */
};

DP_SHARED static bool dp_is(const struct dp_el *el, const char *lit)
{
    return strncmp(el->name, lit, el->nl) == 0 && lit[el->nl] == '\0';
}

/* At '<' of a start tag: reads it (no attributes); opens it unless it is empty. */
static inline __attribute__((always_inline)) int dp_open(struct dp *f, struct dp_el *out)
{
    if (f->depth >= DP_MAX_DEPTH || f->n_elements >= VS_XML_MAX_ELEMENTS - 1)
        return DP_FALLBACK;
    out->start = f->pos;
    size_t p = f->pos + 1;
    if (p >= f->len || !(dp_name_class[(unsigned char)f->s[p]] & 1))
        return DP_FALLBACK;
    size_t a = p;
    /* stops at the body's last '>' at worst */
    while (dp_name_class[(unsigned char)f->s[p]] & 2)
        p++;
    if (p - a > VS_XML_MAX_NAME)
        return DP_FALLBACK;
    out->name = f->s + a;
    out->nl = p - a;
    f->pos = p;
    dp_ws(f);
    if (f->pos < f->len && f->s[f->pos] == '>') {
        f->pos++;
        out->empty = false;
        f->depth++;
    } else if (f->pos + 1 < f->len && f->s[f->pos] == '/' && f->s[f->pos + 1] == '>') {
        f->pos += 2;
        out->empty = true;
    } else {
        return DP_FALLBACK; /* attributes, or garbage */
    }
    f->n_elements++;
    return 0;
}

/* At "</": reads the end tag of the open element el and closes it. */
DP_SHARED static int dp_close(struct dp *f, const struct dp_el *el)
{
    size_t p = f->pos + 2;
    if (f->len - p < el->nl || memcmp(f->s + p, el->name, el->nl) != 0)
        return DP_FALLBACK;
    f->pos = p + el->nl;
    dp_ws(f);
    if (f->pos >= f->len || f->s[f->pos] != '>')
        return DP_FALLBACK;
    f->pos++;
    f->depth--;
    return 0;
}

enum { DP_END = 0, DP_CHILD = 2 };

/*
 * Moves to the next child of the open element el: DP_CHILD with the child's
 * start tag read into *out, or DP_END with el's end tag read, or
 * DP_FALLBACK. When own is not NULL el's own text (CDATA included) is
 * appended to it.
 */
DP_HOT DP_SHARED static int dp_next(struct dp *f, const struct dp_el *el, struct vs_buf *own,
                                    struct dp_el *out)
{
    for (;;) {
        size_t a = f->pos;
        bool amp = false;
        if (dp_text(f, &amp))
            return DP_FALLBACK;
        if (own && f->pos > a && (amp || vs_buf_append(own, f->s + a, f->pos - a) != 0))
            return DP_FALLBACK;
        if (f->pos + 1 >= f->len)
            return DP_FALLBACK;
        char n1 = f->s[f->pos + 1];
        if (n1 == '/')
            return dp_close(f, el) ? DP_FALLBACK : DP_END;
        if (n1 == '!') {
            size_t ca, cb;
            if (f->len - f->pos < 9 || memcmp(f->s + f->pos, "<![CDATA[", 9) != 0 ||
                dp_cdata(f, &ca, &cb))
                return DP_FALLBACK; /* comments and the rest */
            if (own && cb > ca && vs_buf_append(own, f->s + ca, cb - ca) != 0)
                return DP_FALLBACK;
            continue;
        }
        return dp_open(f, out) ? DP_FALLBACK : DP_CHILD;
    }
}

/* Skips (validating) the element el. */
DP_SHARED static int dp_skip(struct dp *f, const struct dp_el *el)
{
    if (el->empty)
        return 0;
    struct dp_el ch;
    int k;
    while ((k = dp_next(f, el, NULL, &ch)) == DP_CHILD)
        if (dp_skip(f, &ch))
            return DP_FALLBACK;
    return k;
}

/* Reads the text-only element el as field fd of base. */
DP_HOT DP_SHARED static int dp_field(struct dp *f, const struct vs_proto__field *fd,
                                     const struct dp_el *el, void *base)
{
    size_t a = f->pos;
    if (!el->empty) {
        bool amp = false;
        if (dp_text(f, &amp) || amp || f->pos + 1 >= f->len || f->s[f->pos + 1] != '/')
            return DP_FALLBACK; /* entities, children, CDATA, comments: the tree parser */
    }
    size_t b = el->empty ? a : f->pos;
    if (!el->empty && dp_close(f, el))
        return DP_FALLBACK;
    char num[128];
    const char *text;
    if (b == a) {
        text = ""; /* as the tree parser's empty text */
    } else if (fd->type == F_STR || fd->type == F_BLOCK || b - a >= sizeof(num)) {
        text = vs_arena_strndup(f->c->arena, f->s + a, b - a);
    } else {
        memcpy(num, f->s + a, b - a);
        num[b - a] = '\0';
        text = num;
    }
    /* (fd->name is this element's name: the table's copy, NUL-terminated) */
    struct vs_xml_node n = {.name = fd->name, .text = text, .text_len = b - a};
    vs_proto__field_set(f->c, fd, &n, base);
    return f->c->rc ? DP_FALLBACK : 0;
}

/* The element ch: as its field of tab into base when tab names it, else skipped. */
DP_SHARED static int dp_field_or_skip(struct dp *f, const struct vs_proto__field *tab, size_t n_tab,
                                      const struct dp_el *ch, void *base)
{
    const struct vs_proto__field *fd = vs_proto__field_find(tab, n_tab, ch->name, ch->nl);
    return fd ? dp_field(f, fd, ch, base) : dp_skip(f, ch);
}

/* vs_proto__struct_parse(): the table's fields of el, the rest skipped. */
DP_SHARED static int dp_struct(struct dp *f, const struct vs_proto__field *tab, size_t n_tab,
                               const struct dp_el *el, void *base)
{
    if (el->empty)
        return 0;
    struct dp_el ch;
    int k;
    while ((k = dp_next(f, el, NULL, &ch)) == DP_CHILD)
        if (dp_field_or_skip(f, tab, n_tab, &ch, base))
            return DP_FALLBACK;
    return k;
}

/* Room for one more element of an arena array (grown by doubling), or NULL over max. */
DP_SHARED static void *dp_grow(struct dp *f, void *arr, size_t n, size_t *cap, size_t size,
                               size_t max)
{
    if (n + 1 > max)
        return NULL;
    if (n < *cap)
        return arr;
    size_t nc = *cap ? *cap * 2 : 4;
    char *p = vs_arena_alloc(f->c->arena, nc * size);
    if (n)
        memcpy(p, arr, n * size);
    *cap = nc;
    return p;
}

/* Verbatim copy of s[a..f->pos) (an element just skipped) into *out, within max. */
DP_SHARED static int dp_raw(struct dp *f, size_t a, size_t max, const char **out)
{
    if (f->pos - a > max)
        return DP_FALLBACK;
    *out = vs_arena_strndup(f->c->arena, f->s + a, f->pos - a);
    return 0;
}

/*
 * vs_proto__list_parse(): the entries of the list container el into a new
 * array (*out, *out_n), the other children skipped.
 */
DP_SHARED static int dp_list(struct dp *f, const struct dp_el *el, const struct vs_proto__list *l,
                             void **out, size_t *out_n)
{
    char *arr = NULL;
    size_t n = 0, cap = 0;
    struct dp_el ch;
    int k = DP_END;
    while (!el->empty && (k = dp_next(f, el, NULL, &ch)) == DP_CHILD) {
        if (!dp_is(&ch, l->inner)) {
            if (dp_skip(f, &ch))
                return DP_FALLBACK;
            continue;
        }
        arr = dp_grow(f, arr, n, &cap, l->size, l->max);
        if (!arr)
            return DP_FALLBACK;
        void *e = arr + n++ * l->size;
        if (l->init)
            l->init(e);
        if (dp_struct(f, VS_PROTO__TAB(l->fields), &ch, e))
            return DP_FALLBACK;
    }
    if (k != DP_END)
        return DP_FALLBACK;
    *out = arr;
    *out_n = n;
    return 0;
}

#endif
