/*
 * Scheduler request, server side: the one-pass reader
 * (vs_proto_request_parse_direct) and the server's parse that tries it first
 * (vs_proto_request_parse_fast). It is the one fast path next to expat in
 * volsched, kept because the scheduler request is the hot message: on the
 * captured requests it reads several times faster than expat plus the tree
 * walk (figures in docs/protocol.md, "Which reader reads what").
 *
 * One pass over the body straight into the struct, no XML tree. It reads a
 * strict subset of XML: elements with ASCII names and without attributes,
 * text and CDATA of valid UTF-8 characters XML allows (tab and newline the
 * only control bytes), the five predefined entities outside the fields it
 * stores, and nothing else (no comments, no processing instructions, no
 * '\r'). Every element the tree reader extracts is read here too (<coprocs>,
 * <msg_from_host> and <client_opaque> included). Every value goes through the
 * same field tables and
 * vs_proto__field_set() as the tree reader (request_parse.c), so a request
 * it accepts gives the very struct vs_proto_request_parse() gives; anything
 * else, any limit near and any malformed value is left to that parser
 * (DP_FALLBACK), which then has the last word, error messages included. The
 * differential fuzz target tests/fuzz/fuzz_request_diff.c holds it to that.
 */
#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "proto/request_int.h"

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

static void dp_ws(struct dp *f)
{
    while (f->pos < f->len && (f->s[f->pos] == ' ' || f->s[f->pos] == '\t' || f->s[f->pos] == '\n'))
        f->pos++;
}

/* Length of the predefined entity at s[i] == '&', 0 if it is none. */
static size_t dp_entity(const char *s, size_t len, size_t i)
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
static int dp_cdata(struct dp *f, size_t *out_a, size_t *out_b)
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

static bool dp_is(const struct dp_el *el, const char *lit)
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
static int dp_close(struct dp *f, const struct dp_el *el)
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
DP_HOT static int dp_next(struct dp *f, const struct dp_el *el, struct vs_buf *own,
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
static int dp_skip(struct dp *f, const struct dp_el *el)
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
DP_HOT static int dp_field(struct dp *f, const struct vs_proto__field *fd, const struct dp_el *el,
                           void *base)
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
static int dp_field_or_skip(struct dp *f, const struct vs_proto__field *tab, size_t n_tab,
                            const struct dp_el *ch, void *base)
{
    const struct vs_proto__field *fd = vs_proto__field_find(tab, n_tab, ch->name, ch->nl);
    return fd ? dp_field(f, fd, ch, base) : dp_skip(f, ch);
}

/* vs_proto__struct_parse(): the table's fields of el, the rest skipped. */
static int dp_struct(struct dp *f, const struct vs_proto__field *tab, size_t n_tab,
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
static void *dp_grow(struct dp *f, void *arr, size_t n, size_t *cap, size_t size, size_t max)
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
static int dp_raw(struct dp *f, size_t a, size_t max, const char **out)
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
static int dp_list(struct dp *f, const struct dp_el *el, const struct vs_proto__list *l, void **out,
                   size_t *out_n)
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

/* <stderr_out>: its own text (trimmed, cut) and its first <core_client_version>. */
static int dp_stderr(struct dp *f, const struct dp_el *el, struct vs_proto_reported_result *res)
{
    static const struct vs_proto__field ccv = {
        "core_client_version", F_STR,
        offsetof(struct vs_proto_reported_result, core_client_version), 19};
    struct vs_buf own;
    vs_buf_init(&own, VS_XML_MAX_TEXT);
    bool got_ccv = false;
    struct dp_el ch;
    int k = DP_END;
    while (!el->empty && (k = dp_next(f, el, &own, &ch)) == DP_CHILD) {
        int rc;
        if (!got_ccv && dp_is(&ch, "core_client_version")) {
            got_ccv = true;
            rc = dp_field(f, &ccv, &ch, res);
        } else {
            rc = dp_skip(f, &ch);
        }
        if (rc) {
            k = DP_FALLBACK;
            break;
        }
    }
    if (k == DP_END) {
        const char *t = own.data ? own.data : "";
        size_t a = 0, e = own.len;
        while (a < e && isspace((unsigned char)t[a]))
            a++;
        while (e > a && isspace((unsigned char)t[e - 1]))
            e--;
        res->stderr_text =
            vs_arena_strndup(f->c->arena, t + a, vs_proto__stderr_keep(t + a, e - a));
    }
    vs_buf_cleanup(&own);
    return k == DP_END ? 0 : DP_FALLBACK;
}

/* parse_result() in request_parse.c: fields, <stderr_out> and output <file_info>s. */
static int dp_result(struct dp *f, const struct dp_el *el, struct vs_proto_reported_result *res)
{
    size_t cap_files = 0;
    struct dp_el ch;
    int k = DP_END;
    while (!el->empty && (k = dp_next(f, el, NULL, &ch)) == DP_CHILD) {
        const struct vs_proto__field *fd =
            vs_proto__field_find(VS_PROTO__TAB(vs_proto__rq_result), ch.name, ch.nl);
        int rc;
        if (fd) {
            rc = dp_field(f, fd, &ch, res);
        } else if (dp_is(&ch, "file_info")) {
            res->files = dp_grow(f, res->files, res->n_files, &cap_files, sizeof(*res->files),
                                 VS_PROTO_MAX_LIST);
            rc = !res->files ? DP_FALLBACK
                             : dp_struct(f, VS_PROTO__TAB(vs_proto__rq_result_file), &ch,
                                         &res->files[res->n_files++]);
        } else if (dp_is(&ch, "stderr_out")) {
            rc = dp_stderr(f, &ch, res);
        } else {
            rc = dp_skip(f, &ch);
        }
        if (rc)
            return DP_FALLBACK;
    }
    if (k != DP_END || !res->name || !*res->name)
        return DP_FALLBACK;
    return 0;
}

/* Capacities of the top-level lists, which grow as their elements come. */
struct dp_lists {
    size_t alt, res, sticky, coproc, msg;
};

/* <alt_platform>: its first <name>, appended to the request's list. */
static int dp_alt_platform(struct dp *f, const struct dp_el *el, struct vs_proto_request *r,
                           struct dp_lists *cap)
{
    static const struct vs_proto__field namef = {"name", F_STR, 0, 4};
    const char *nm = NULL;
    struct dp_el ch;
    int k = DP_END;
    while (!el->empty && (k = dp_next(f, el, NULL, &ch)) == DP_CHILD) {
        int rc =
            (!nm && dp_is(&ch, "name")) ? dp_field(f, &namef, &ch, (void *)&nm) : dp_skip(f, &ch);
        if (rc)
            return DP_FALLBACK;
    }
    if (k != DP_END)
        return DP_FALLBACK;
    if (nm) {
        r->alt_platforms = dp_grow(f, r->alt_platforms, r->n_alt_platforms, &cap->alt,
                                   sizeof(char *), VS_PROTO_MAX_LIST);
        if (!r->alt_platforms)
            return DP_FALLBACK;
        r->alt_platforms[r->n_alt_platforms++] = nm;
    }
    return 0;
}

/* <working_global_preferences>: its first <global_preferences>, verbatim. */
static int dp_working_prefs(struct dp *f, const struct dp_el *el, struct vs_proto_request *r)
{
    bool got = false;
    struct dp_el ch;
    int k = DP_END;
    while (!el->empty && (k = dp_next(f, el, NULL, &ch)) == DP_CHILD) {
        if (dp_skip(f, &ch))
            return DP_FALLBACK;
        if (!got && dp_is(&ch, "global_preferences")) {
            got = true;
            if (dp_raw(f, ch.start, VS_PROTO_MAX_PREFS, &r->working_global_prefs))
                return DP_FALLBACK;
        }
    }
    return k;
}

/* The type a coprocessor element stands for (vs_proto__coproc_type()), or NULL. */
static const char *dp_coproc_type(const struct dp_el *el)
{
    char name[VS_XML_MAX_NAME + 1];
    memcpy(name, el->name, el->nl);
    name[el->nl] = '\0';
    return vs_proto__coproc_type(name);
}

/*
 * <coprocs> (parse_coprocs() in request_parse.c): each child named after a
 * type, or a <coproc> with a <type> (its first), appended to the request's
 * coprocessors; other children skipped. The limit counts every child, as
 * the tree parser's does.
 */
static int dp_coprocs(struct dp *f, const struct dp_el *el, struct vs_proto_request *r,
                      struct dp_lists *cap)
{
    static const struct vs_proto__field typef = {"type", F_STR, 0, 4};
    size_t seen = r->n_coprocs;
    struct dp_el ch, g;
    int k = DP_END;
    while (!el->empty && (k = dp_next(f, el, NULL, &ch)) == DP_CHILD) {
        if (++seen > VS_PROTO_MAX_LIST)
            return DP_FALLBACK;
        const char *type = dp_coproc_type(&ch);
        bool generic = !type && dp_is(&ch, "coproc");
        if (!type && !generic) {
            if (dp_skip(f, &ch))
                return DP_FALLBACK;
            continue;
        }
        struct vs_proto_coproc cp;
        memset(&cp, 0, sizeof(cp));
        bool got_type = false;
        int kk = DP_END;
        while (!ch.empty && (kk = dp_next(f, &ch, NULL, &g)) == DP_CHILD) {
            int rc;
            if (generic && !got_type && dp_is(&g, "type")) {
                got_type = true;
                rc = dp_field(f, &typef, &g, (void *)&type);
            } else {
                rc = dp_field_or_skip(f, VS_PROTO__TAB(vs_proto__rq_coproc), &g, &cp);
            }
            if (rc)
                return DP_FALLBACK;
        }
        if (kk != DP_END)
            return DP_FALLBACK;
        if (!type)
            continue; /* a <coproc> without <type>: dropped, as by the tree parser */
        cp.type = type;
        r->coprocs = dp_grow(f, r->coprocs, r->n_coprocs, &cap->coproc, sizeof(*r->coprocs),
                             VS_PROTO_MAX_LIST);
        if (!r->coprocs)
            return DP_FALLBACK;
        r->coprocs[r->n_coprocs++] = cp;
    }
    return k == DP_END ? 0 : DP_FALLBACK;
}

/* <host_info>: its fields, and its first <coprocs> (some clients put it there). */
static int dp_host_info(struct dp *f, const struct dp_el *el, struct vs_proto_request *r,
                        struct dp_lists *cap)
{
    bool got_coprocs = false;
    struct dp_el ch;
    int k = DP_END;
    while (!el->empty && (k = dp_next(f, el, NULL, &ch)) == DP_CHILD) {
        int rc;
        if (!got_coprocs && dp_is(&ch, "coprocs")) {
            got_coprocs = true;
            rc = dp_coprocs(f, &ch, r, cap);
        } else {
            rc = dp_field_or_skip(f, VS_PROTO__TAB(vs_proto__rq_host), &ch, &r->host);
        }
        if (rc)
            return DP_FALLBACK;
    }
    return k;
}

/* <client_opaque>: the bytes between its tags, verbatim (vs_xml_inner_raw()). */
static int dp_client_opaque(struct dp *f, const struct dp_el *el, struct vs_proto_request *r)
{
    size_t a = f->pos;
    if (dp_skip(f, el))
        return DP_FALLBACK;
    /* (its end tag, "</client_opaque>", holds no other '<') */
    size_t b = el->empty ? a : (size_t)((const char *)memrchr(f->s + a, '<', f->pos - a) - f->s);
    if (b - a > VS_PROTO_MAX_PREFS)
        return DP_FALLBACK;
    r->client_opaque = vs_arena_strndup(f->c->arena, f->s + a, b - a);
    return 0;
}

/* One child of <scheduler_request> (parse_top() in request_parse.c). */
static int dp_top(struct dp *f, const struct dp_el *el, struct vs_proto_request *r,
                  struct dp_lists *cap)
{
    static const struct vs_proto__table *const scalars[] = {&vs_proto__rq_head, &vs_proto__rq_key,
                                                            &vs_proto__rq_mid, &vs_proto__rq_tail};
    for (size_t i = 0; i < VS_NELEM(scalars); i++) {
        const struct vs_proto__field *fd =
            vs_proto__field_find(VS_PROTO__TAB(*scalars[i]), el->name, el->nl);
        if (fd)
            return dp_field(f, fd, el, r);
    }
    void *arr;
    int rc;
    if (dp_is(el, "alt_platform"))
        return dp_alt_platform(f, el, r, cap);
    if (dp_is(el, "working_global_preferences"))
        return dp_working_prefs(f, el, r);
    if (dp_is(el, "global_preferences"))
        return dp_skip(f, el) || dp_raw(f, el->start, VS_PROTO_MAX_PREFS, &r->global_prefs);
    if (dp_is(el, "time_stats"))
        return dp_struct(f, VS_PROTO__TAB(vs_proto__rq_time_stats), el, &r->time_stats);
    if (dp_is(el, "net_stats"))
        return dp_struct(f, VS_PROTO__TAB(vs_proto__rq_net_stats), el, &r->net_stats);
    if (dp_is(el, "disk_usage"))
        return dp_struct(f, VS_PROTO__TAB(vs_proto__rq_disk), el, &r->disk_usage);
    if (dp_is(el, "host_info"))
        return dp_host_info(f, el, r, cap);
    if (dp_is(el, "result")) {
        r->results = dp_grow(f, r->results, r->n_results, &cap->res, sizeof(*r->results),
                             VS_PROTO_MAX_RESULTS);
        if (!r->results)
            return DP_FALLBACK;
        return dp_result(f, el, &r->results[r->n_results++]);
    }
    if (dp_is(el, "file_info")) {
        r->sticky_files = dp_grow(f, r->sticky_files, r->n_sticky_files, &cap->sticky,
                                  sizeof(*r->sticky_files), VS_PROTO_MAX_FILE_INFOS);
        if (!r->sticky_files)
            return DP_FALLBACK;
        return dp_struct(f, VS_PROTO__TAB(vs_proto__rq_sticky), el,
                         &r->sticky_files[r->n_sticky_files++]);
    }
    /* each list container replaces the list read so far, as in the tree parser */
    if (dp_is(el, "app_versions")) {
        rc = dp_list(f, el, &vs_proto__rq_app_versions, &arr, &r->n_app_versions);
        r->app_versions = arr;
        return rc;
    }
    if (dp_is(el, "other_results")) {
        rc = dp_list(f, el, &vs_proto__rq_other_results, &arr, &r->n_other_results);
        r->other_results = arr;
        return rc;
    }
    if (dp_is(el, "in_progress_results")) {
        r->has_in_progress_results = true;
        rc = dp_list(f, el, &vs_proto__rq_ip_results, &arr, &r->n_ip_results);
        r->ip_results = arr;
        return rc;
    }
    /* (rarer than the above: last) */
    if (dp_is(el, "coprocs"))
        return dp_coprocs(f, el, r, cap);
    if (dp_is(el, "msg_from_host")) {
        r->msgs_from_host = dp_grow(f, r->msgs_from_host, r->n_msgs_from_host, &cap->msg,
                                    sizeof(*r->msgs_from_host), VS_PROTO_MAX_LIST);
        if (!r->msgs_from_host)
            return DP_FALLBACK;
        return dp_struct(f, VS_PROTO__TAB(vs_proto__rq_msg), el,
                         &r->msgs_from_host[r->n_msgs_from_host++]);
    }
    if (dp_is(el, "client_opaque"))
        return dp_client_opaque(f, el, r);
    return dp_skip(f, el);
}

int vs_proto_request_parse_direct(const char *body, size_t len, struct vs_arena *arena,
                                  struct vs_proto_request *out)
{
    /* Under VS_XML_MAX_TEXT no element's text can reach that limit. */
    if (len > VS_XML_MAX_TEXT || memchr(body, '\r', len))
        return VS_EUNSUPPORTED;
    struct vs_proto__ctx c = {.arena = arena};
    const char *lt = memrchr(body, '<', len);
    size_t end = len;
    while (end > 0 && (body[end - 1] == ' ' || body[end - 1] == '\t' || body[end - 1] == '\n'))
        end--;
    if (!lt || end == 0 || body[end - 1] != '>')
        return VS_EUNSUPPORTED; /* (so that a name scan always meets a non-name byte) */
    struct dp f = {.s = body, .len = len, .c = &c, .last_lt = (size_t)(lt - body)};
    struct vs_proto_request r;
    memset(&r, 0, sizeof(r));
    struct dp_lists cap = {0};
    struct dp_el root, ch;
    dp_ws(&f);
    if (f.pos >= len || body[f.pos] != '<' || dp_open(&f, &root) || root.empty ||
        !dp_is(&root, "scheduler_request"))
        return VS_EUNSUPPORTED;
    int k;
    while ((k = dp_next(&f, &root, NULL, &ch)) == DP_CHILD)
        if (dp_top(&f, &ch, &r, &cap))
            return VS_EUNSUPPORTED;
    if (k != DP_END)
        return VS_EUNSUPPORTED;
    dp_ws(&f);
    if (f.pos != len)
        return VS_EUNSUPPORTED;
    *out = r;
    return 0;
}

int vs_proto_request_parse_fast(const char *body, size_t len, struct vs_arena *arena,
                                struct vs_proto_request *out, struct vs_proto_error *out_err)
{
    if (vs_proto_request_parse_direct(body, len, arena, out) == 0) {
        vs_proto__error_clear(out_err);
        return 0;
    }
    return vs_proto_request_parse(body, len, arena, out, out_err);
}
