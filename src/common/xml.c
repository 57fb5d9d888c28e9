/*
 * Bounded XML reader on expat, and the XML writer. See include/volsched/xml.h.
 *
 * The reader builds the tree in the caller's arena. Text of the element being
 * parsed is collected in one scratch buffer per nesting level (they are
 * reused across elements), so the arena only receives final strings.
 */
#include "volsched/xml.h"

#include <ctype.h>
#include <expat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "volsched/str.h"

void vs_xml_limits_default(struct vs_xml_limits *l)
{
    l->max_input = VS_XML_MAX_INPUT;
    l->max_depth = VS_XML_MAX_DEPTH;
    l->max_elements = VS_XML_MAX_ELEMENTS;
    l->max_text = VS_XML_MAX_TEXT;
}

struct builder {
    XML_Parser p;
    struct vs_arena *arena;
    struct vs_xml_limits lim;
    struct vs_xml_node *root;
    struct vs_xml_node *cur; /* innermost open element */
    int depth;
    size_t n_elements;
    size_t start_tag_end[VS_XML_MAX_DEPTH + 1];           /* byte after each open start tag */
    struct vs_xml_node *last_child[VS_XML_MAX_DEPTH + 1]; /* of the open element per level */
    struct vs_buf text[VS_XML_MAX_DEPTH + 1];             /* character data per open level */
    int err;
    char msg[120];
};

static void fail(struct builder *b, int code, const char *fmt, ...) VS_PRINTF(3, 4);

static void fail(struct builder *b, int code, const char *fmt, ...)
{
    if (b->err)
        return;
    b->err = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->msg, sizeof(b->msg), fmt, ap);
    va_end(ap);
    XML_StopParser(b->p, XML_FALSE);
}

static void on_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
    struct builder *b = ud;
    if (b->err)
        return;
    if (b->depth >= b->lim.max_depth) {
        fail(b, VS_ELIMIT, "element nesting deeper than %d", b->lim.max_depth);
        return;
    }
    if (b->n_elements >= b->lim.max_elements) {
        fail(b, VS_ELIMIT, "more than %zu elements", b->lim.max_elements);
        return;
    }
    if (b->depth == 0 && b->root) {
        /* expat itself rejects a second root; keep the tree sane regardless */
        fail(b, VS_EPARSE, "more than one root element");
        return;
    }
    size_t nlen = strlen(name);
    if (nlen > VS_XML_MAX_NAME) {
        fail(b, VS_ELIMIT, "element name longer than %d bytes", VS_XML_MAX_NAME);
        return;
    }
    struct vs_xml_node *n = vs_arena_alloc(b->arena, sizeof(*n));
    n->name = vs_arena_strndup(b->arena, name, nlen);
    n->text = "";
    n->line = (unsigned)XML_GetCurrentLineNumber(b->p);
    size_t na = 0;
    while (attrs[2 * na])
        na++;
    if (na > VS_XML_MAX_ATTRS) {
        fail(b, VS_ELIMIT, "element <%s> has more than %d attributes", n->name, VS_XML_MAX_ATTRS);
        return;
    }
    if (na) {
        struct vs_xml_attr *a = vs_arena_alloc(b->arena, na * sizeof(*a));
        for (size_t i = 0; i < na; i++) {
            size_t vl = strlen(attrs[2 * i + 1]);
            if (vl > b->lim.max_text || strlen(attrs[2 * i]) > VS_XML_MAX_NAME) {
                fail(b, VS_ELIMIT, "attribute of <%s> too long", n->name);
                return;
            }
            a[i].name = vs_arena_strndup(b->arena, attrs[2 * i], strlen(attrs[2 * i]));
            a[i].value = vs_arena_strndup(b->arena, attrs[2 * i + 1], vl);
        }
        n->attrs = a;
        n->n_attrs = na;
    }
    XML_Index at = XML_GetCurrentByteIndex(b->p);
    int cnt = XML_GetCurrentByteCount(b->p);
    n->raw_off = at >= 0 ? (size_t)at : 0;
    if (b->cur) {
        n->parent = b->cur;
        if (b->last_child[b->depth])
            b->last_child[b->depth]->next = n;
        else
            b->cur->child = n;
        b->last_child[b->depth] = n;
    } else {
        b->root = n;
    }
    b->cur = n;
    b->depth++;
    b->n_elements++;
    b->start_tag_end[b->depth] = n->raw_off + (cnt > 0 ? (size_t)cnt : 0);
    b->last_child[b->depth] = NULL;
    vs_buf_reset(&b->text[b->depth]);
}

static void on_end(void *ud, const XML_Char *name)
{
    (void)name;
    struct builder *b = ud;
    if (b->err || !b->cur)
        return;
    struct vs_xml_node *n = b->cur;
    struct vs_buf *t = &b->text[b->depth];
    n->text = vs_arena_strndup(b->arena, vs_buf_str(t), t->len);
    n->text_len = t->len;
    XML_Index at = XML_GetCurrentByteIndex(b->p);
    int cnt = XML_GetCurrentByteCount(b->p);
    size_t end = (cnt > 0 && at >= 0) ? (size_t)at + (size_t)cnt : b->start_tag_end[b->depth];
    n->raw_len = end >= n->raw_off ? end - n->raw_off : 0;
    n->closed = true;
    b->cur = n->parent;
    b->depth--;
}

static void on_text(void *ud, const XML_Char *s, int len)
{
    struct builder *b = ud;
    if (b->err || !b->cur || len <= 0)
        return;
    struct vs_buf *t = &b->text[b->depth];
    if (vs_buf_append(t, s, (size_t)len) != 0)
        fail(b, VS_ELIMIT, "text of <%s> longer than %zu bytes", b->cur->name, b->lim.max_text);
}

static void on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid, const XML_Char *pubid,
                       int has_internal_subset)
{
    (void)name, (void)sysid, (void)pubid, (void)has_internal_subset;
    fail(ud, VS_EUNSUPPORTED, "DOCTYPE declarations are not accepted");
}

static void on_entity(void *ud, const XML_Char *name, int is_param, const XML_Char *value,
                      int value_len, const XML_Char *base, const XML_Char *sysid,
                      const XML_Char *pubid, const XML_Char *notation)
{
    (void)name, (void)is_param, (void)value, (void)value_len, (void)base, (void)sysid, (void)pubid,
        (void)notation;
    fail(ud, VS_EUNSUPPORTED, "entity declarations are not accepted");
}

static int external_entity(XML_Parser p, const XML_Char *context, const XML_Char *base,
                           const XML_Char *sysid, const XML_Char *pubid)
{
    (void)p, (void)context, (void)base, (void)sysid, (void)pubid;
    return XML_STATUS_ERROR;
}

/*
 * Length of a valid UTF-8 sequence at s (1..4) that is also a character XML
 * allows, or 0.
 */
static size_t utf8_ok(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80)
        return (c >= 0x20 || c == '\t' || c == '\n' || c == '\r') ? 1 : 0;
    size_t len;
    unsigned cp;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2, cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3, cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4, cp = c & 0x07;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    if ((cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
        return 0;
    return len;
}

/* Returns an arena copy with bad bytes replaced by '?', or NULL if none was bad. */
static char *repair(const char *data, size_t len, struct vs_arena *arena)
{
    const unsigned char *s = (const unsigned char *)data;
    char *copy = NULL;
    for (size_t i = 0; i < len;) {
        size_t k = utf8_ok(s + i, len - i);
        if (k) {
            i += k;
            continue;
        }
        if (!copy)
            copy = vs_arena_strndup(arena, data, len);
        copy[i++] = '?';
    }
    return copy;
}

/* ---- fast path: a strict-subset scanner that builds the same tree as expat ---- */

/*
 * Returns 0 with *out filled, or 1 when the input is outside the subset (or
 * hits a limit, or is malformed): the caller then runs expat, whose verdict
 * and error message stand. The scanner never reports errors itself.
 */
struct fast {
    const char *s;
    size_t len;
    size_t pos;
    struct vs_arena *arena;
    const struct vs_xml_limits *lim;
    /* text of the open elements, stacked: level d owns text[tstart[d] .. tlen) */
    char *text;
    size_t tlen, tcap;
    size_t tstart[VS_XML_MAX_DEPTH + 1];
    /* bump allocation for nodes, names and texts: one arena allocation per
     * few kilobytes instead of three per element */
    char *bump;
    size_t bump_left;
    unsigned line; /* newlines consumed so far + 1: every step that consumes
                    * bytes which may hold '\n' counts them */
};

#define FALLBACK 1

/* Declared in volsched/xml.h. */
const unsigned char vs_xml_name_class[256] = {
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

static bool name_start(unsigned char c)
{
    return vs_xml_name_class[c] & 1;
}

static bool name_char(unsigned char c)
{
    return vs_xml_name_class[c] & 2;
}

static bool is_ws(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n';
}

static int text_add(struct fast *f, const char *p, size_t n)
{
    if (n == 0)
        return 0; /* f->text may still be NULL */
    if (f->tlen + n > f->tcap) {
        size_t cap = f->tcap ? f->tcap * 2 : 4096;
        while (cap < f->tlen + n)
            cap *= 2;
        f->text = vs_xrealloc(f->text, cap);
        f->tcap = cap;
    }
    memcpy(f->text + f->tlen, p, n);
    f->tlen += n;
    return 0;
}

/* Validates s[a..b) as XML characters (no '\r': rejected up front). */
static bool chars_ok(const char *s, size_t a, size_t b)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = a;
    while (i < b) {
        /* eight plain printable ASCII bytes at a time (no byte < 0x20, none >= 0x80) */
        if (b - i >= 8) {
            uint64_t w;
            memcpy(&w, u + i, 8);
            const uint64_t hi = 0x8080808080808080ull, lo = 0x2020202020202020ull;
            if (((w & hi) | ((w - lo) & ~w & hi)) == 0) {
                i += 8;
                continue;
            }
        }
        if (u[i] >= 0x20 && u[i] < 0x80) {
            i++;
            continue;
        }
        size_t k = utf8_ok(u + i, b - i);
        if (!k)
            return false;
        i += k;
    }
    return true;
}

/* Decodes one of the five predefined entities at s[pos] == '&'; 0 on failure. */
static size_t entity(const char *s, size_t len, size_t pos, char *out)
{
    static const struct {
        const char *ref;
        size_t n;
        char c;
    } ents[] = {{"&lt;", 4, '<'},
                {"&gt;", 4, '>'},
                {"&amp;", 5, '&'},
                {"&quot;", 6, '"'},
                {"&apos;", 6, '\''}};
    for (size_t i = 0; i < 5; i++) {
        if (len - pos >= ents[i].n && memcmp(s + pos, ents[i].ref, ents[i].n) == 0) {
            *out = ents[i].c;
            return ents[i].n;
        }
    }
    return 0;
}

/* Bytes that need no attention in character data: printable ASCII but
 * '<', '&' and ']', and tab. */
/* clang-format off */
static const bool text_plain[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};
/* clang-format on */

/*
 * Returns the end of the run of text_plain bytes at s[i..len): eight bytes
 * at a time while none is below 0x20 (tab and newline included, which the
 * byte loop then takes), at or above 0x80, '<', '&' or ']'. (The zero-byte
 * tests can report a byte after a real hit, never a hit that is not there.)
 */
static size_t plain_run(const char *s, size_t i, size_t len)
{
    const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
    while (len - i >= 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        uint64_t lt = w ^ (ones * '<'), amp = w ^ (ones * '&'), br = w ^ (ones * ']');
        uint64_t bad = (w | ((w - ones * 0x20) & ~w) | ((lt - ones) & ~lt) | ((amp - ones) & ~amp) |
                        ((br - ones) & ~br)) &
                       high;
        if (bad)
            break;
        i += 8;
    }
    while (i < len && text_plain[(unsigned char)s[i]])
        i++;
    return i;
}

/* n bytes from the bump region, aligned for a node when align is set;
 * not zeroed. */
static void *bump_alloc(struct fast *f, size_t n, bool align)
{
    const size_t al = sizeof(void *);
    size_t pad = align ? (al - ((uintptr_t)f->bump & (al - 1))) & (al - 1) : 0;
    if (!f->bump || f->bump_left < n + pad) {
        size_t sz = n + al > 8192 ? n + al : 8192;
        f->bump = vs_arena_alloc_raw(f->arena, sz); /* max_align_t-aligned */
        f->bump_left = sz;
        pad = 0;
    }
    void *p = f->bump + pad;
    f->bump += pad + n;
    f->bump_left -= pad + n;
    return p;
}

static char *bump_strndup(struct fast *f, const char *src, size_t n)
{
    char *d = bump_alloc(f, n + 1, false);
    if (n)
        memcpy(d, src, n);
    d[n] = '\0';
    return d;
}

/* Counts the newlines of s[a..b) into f->line (comments, CDATA). */
static void count_lines(struct fast *f, size_t a, size_t b)
{
    const char *p = f->s + a, *end = f->s + b;
    while (p < end && (p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        f->line++;
        p++;
    }
}

/* Scans a name at f->pos; returns its length (0 when there is none). */
static size_t scan_name(struct fast *f)
{
    size_t p = f->pos;
    if (p >= f->len || !name_start((unsigned char)f->s[p]))
        return 0;
    p++;
    while (p < f->len && name_char((unsigned char)f->s[p]))
        p++;
    return p - f->pos;
}

static void skip_ws(struct fast *f)
{
    while (f->pos < f->len && is_ws((unsigned char)f->s[f->pos])) {
        f->line += f->s[f->pos] == '\n';
        f->pos++;
    }
}

/* Skips a comment at f->pos ("<!--"); FALLBACK when malformed. */
static int skip_comment(struct fast *f)
{
    size_t a = f->pos + 4;
    const char *e = memmem(f->s + a, f->len - a, "--", 2);
    if (!e || (size_t)(e - f->s) + 2 >= f->len || e[2] != '>')
        return FALLBACK; /* "--" inside a comment, or no end */
    size_t b = (size_t)(e - f->s);
    if (!chars_ok(f->s, a, b))
        return FALLBACK;
    count_lines(f, a, b);
    f->pos = b + 3;
    return 0;
}

static int fast_parse(const char *s, size_t len, const struct vs_xml_limits *lim,
                      struct vs_arena *arena, struct vs_xml_doc *out)
{
    if (memchr(s, '\r', len))
        return FALLBACK; /* expat normalises line ends; leave that to it */
    struct fast f = {.s = s, .len = len, .arena = arena, .lim = lim, .line = 1};
    struct vs_xml_node *stack[VS_XML_MAX_DEPTH + 1];
    struct vs_xml_node *last[VS_XML_MAX_DEPTH + 1];
    size_t name_len[VS_XML_MAX_DEPTH + 1];
    struct vs_xml_node *root = NULL;
    int depth = 0;
    size_t n_elements = 0;
    int rc = FALLBACK;

    while (f.pos < len) {
        unsigned char c = (unsigned char)s[f.pos];
        if (c != '<') {
            if (depth == 0) {
                if (!is_ws(c))
                    goto done;
                f.line += c == '\n';
                f.pos++;
                continue;
            }
            /* Character data up to the next '<', in one pass: plain bytes
             * (printable ASCII and tab) by table; newlines counted for
             * line_at; entities decoded; "]]>", control bytes and bad
             * UTF-8 sent to expat. */
            size_t a = f.pos, i = a, run = a;
            unsigned nl = 0;
            for (;;) {
                i = plain_run(s, i, len);
                if (i >= len)
                    break;
                unsigned char ch = (unsigned char)s[i];
                if (ch == '<')
                    break;
                if (ch == '\n') {
                    nl++;
                    i++;
                } else if (ch == ']') {
                    if (i + 2 < len && s[i + 1] == ']' && s[i + 2] == '>')
                        goto done; /* "]]>" is not allowed in text */
                    i++;
                } else if (ch == '&') {
                    char ent;
                    size_t k = entity(s, len, i, &ent);
                    if (!k)
                        goto done;
                    text_add(&f, s + run, i - run);
                    text_add(&f, &ent, 1);
                    i += k;
                    run = i;
                } else if (ch >= 0x80) {
                    size_t k = utf8_ok((const unsigned char *)s + i, len - i);
                    if (!k)
                        goto done;
                    i += k;
                } else {
                    goto done; /* a control byte */
                }
            }
            size_t b = i;
            text_add(&f, s + run, b - run);
            if (f.tlen - f.tstart[depth] > lim->max_text)
                goto done;
            f.line += nl;
            f.pos = b;
            continue;
        }
        if (f.pos + 1 >= len)
            goto done;
        char n1 = s[f.pos + 1];
        if (n1 == '!') {
            if (len - f.pos >= 4 && memcmp(s + f.pos, "<!--", 4) == 0) {
                if (skip_comment(&f))
                    goto done;
                continue;
            }
            if (depth > 0 && len - f.pos >= 9 && memcmp(s + f.pos, "<![CDATA[", 9) == 0) {
                size_t a = f.pos + 9;
                const char *e = memmem(s + a, len - a, "]]>", 3);
                if (!e)
                    goto done;
                size_t b = (size_t)(e - s);
                if (!chars_ok(s, a, b))
                    goto done;
                count_lines(&f, a, b);
                text_add(&f, s + a, b - a);
                if (f.tlen - f.tstart[depth] > lim->max_text)
                    goto done;
                f.pos = b + 3;
                continue;
            }
            goto done; /* DOCTYPE and the rest: expat decides */
        }
        if (n1 == '?')
            goto done;
        if (n1 == '/') {
            /* end tag */
            if (depth == 0)
                goto done;
            size_t start = f.pos;
            f.pos += 2;
            struct vs_xml_node *n = stack[depth - 1];
            size_t nl = name_len[depth - 1];
            if (len - f.pos < nl || memcmp(n->name, s + f.pos, nl) != 0 ||
                (f.pos + nl < len && name_char((unsigned char)s[f.pos + nl])))
                goto done;
            f.pos += nl;
            skip_ws(&f);
            if (f.pos >= len || s[f.pos] != '>')
                goto done;
            f.pos++;
            (void)start;
            size_t tl = f.tlen - f.tstart[depth];
            n->text = tl ? bump_strndup(&f, f.text + f.tstart[depth], tl) : "";
            n->text_len = tl;
            f.tlen = f.tstart[depth];
            n->raw_len = f.pos - n->raw_off;
            n->closed = true;
            depth--;
            continue;
        }
        /* start tag */
        if (depth == 0 && root)
            goto done; /* a second root */
        if (depth >= lim->max_depth || n_elements >= lim->max_elements)
            goto done;
        size_t start = f.pos;
        f.pos++;
        size_t nl = scan_name(&f);
        if (nl == 0 || nl > VS_XML_MAX_NAME)
            goto done;
        struct vs_xml_node *n = bump_alloc(&f, sizeof(*n), true);
        *n = (struct vs_xml_node){
            .name = bump_strndup(&f, s + f.pos, nl),
            .text = "",
            .raw_off = start,
            .line = f.line,
        };
        f.pos += nl;
        struct vs_xml_attr attrs[VS_XML_MAX_ATTRS];
        size_t na = 0;
        bool empty = false;
        for (;;) {
            size_t before = f.pos;
            skip_ws(&f);
            if (f.pos >= len)
                goto done;
            if (s[f.pos] == '>') {
                f.pos++;
                break;
            }
            if (s[f.pos] == '/') {
                if (f.pos + 1 >= len || s[f.pos + 1] != '>')
                    goto done;
                f.pos += 2;
                empty = true;
                break;
            }
            if (f.pos == before || na >= VS_XML_MAX_ATTRS)
                goto done; /* attributes need whitespace before them */
            size_t al = scan_name(&f);
            if (al == 0 || al > VS_XML_MAX_NAME)
                goto done;
            const char *aname = s + f.pos;
            f.pos += al;
            skip_ws(&f);
            if (f.pos >= len || s[f.pos] != '=')
                goto done;
            f.pos++;
            skip_ws(&f);
            if (f.pos >= len || (s[f.pos] != '"' && s[f.pos] != '\''))
                goto done;
            char q = s[f.pos++];
            const char *qe = memchr(s + f.pos, q, len - f.pos);
            if (!qe)
                goto done;
            size_t va = f.pos, vb = (size_t)(qe - s);
            if (vb - va > lim->max_text || !chars_ok(s, va, vb))
                goto done;
            char *val = vs_arena_alloc(arena, vb - va + 1);
            size_t k = 0;
            for (size_t i = va; i < vb; i++) {
                char ch = s[i];
                if (ch == '<' || ch == '\t' || ch == '\n')
                    goto done; /* '<' is an error; tabs and newlines get normalised */
                if (ch == '&') {
                    size_t m = entity(s, vb, i, &ch);
                    if (!m)
                        goto done;
                    i += m - 1;
                }
                val[k++] = ch;
            }
            val[k] = '\0';
            for (size_t i = 0; i < na; i++)
                if (strlen(attrs[i].name) == al && memcmp(attrs[i].name, aname, al) == 0)
                    goto done; /* duplicate attribute */
            attrs[na].name = vs_arena_strndup(arena, aname, al);
            attrs[na].value = val;
            na++;
            f.pos = vb + 1;
        }
        if (na) {
            struct vs_xml_attr *a = vs_arena_alloc(arena, na * sizeof(*a));
            memcpy(a, attrs, na * sizeof(*a));
            n->attrs = a;
            n->n_attrs = na;
        }
        n_elements++;
        if (depth > 0) {
            n->parent = stack[depth - 1];
            if (last[depth - 1])
                last[depth - 1]->next = n;
            else
                n->parent->child = n;
            last[depth - 1] = n;
        } else {
            root = n;
        }
        if (empty) {
            n->raw_len = f.pos - start;
            n->closed = true;
            continue;
        }
        stack[depth] = n;
        name_len[depth] = nl;
        last[depth] = NULL;
        depth++;
        f.tstart[depth] = f.tlen;
    }
    if (root && depth == 0) {
        out->root = root;
        out->input = s;
        out->input_len = len;
        out->n_elements = n_elements;
        out->repaired = false;
        out->fast = true;
        rc = 0;
    }
done:
    vs_free(f.text);
    return rc;
}

static int run(struct builder *b, const char *data, size_t len, unsigned flags,
               struct vs_xml_error *out_err)
{
    XML_Parser p = XML_ParserCreate("UTF-8");
    if (!p)
        return VS_ENOMEM;
    b->p = p;
    XML_SetUserData(p, b);
    XML_SetElementHandler(p, on_start, on_end);
    XML_SetCharacterDataHandler(p, on_text);
    XML_SetStartDoctypeDeclHandler(p, on_doctype);
    XML_SetEntityDeclHandler(p, on_entity);
    XML_SetExternalEntityRefHandler(p, external_entity);
    XML_SetParamEntityParsing(p, XML_PARAM_ENTITY_PARSING_NEVER);
    int is_final = (flags & VS_XML_ALLOW_UNCLOSED) ? 0 : 1;
    enum XML_Status st = XML_Parse(p, data, (int)len, is_final);
    int rc = 0;
    if (b->err) {
        rc = b->err;
    } else if (st != XML_STATUS_OK) {
        rc = VS_EPARSE;
        snprintf(b->msg, sizeof(b->msg), "%s", XML_ErrorString(XML_GetErrorCode(p)));
    } else if (!b->root) {
        rc = VS_EPARSE;
        snprintf(b->msg, sizeof(b->msg), "no root element");
    }
    if (rc && out_err) {
        out_err->code = rc;
        out_err->line = (unsigned)XML_GetCurrentLineNumber(p);
        out_err->column = (unsigned)XML_GetCurrentColumnNumber(p);
        snprintf(out_err->msg, sizeof(out_err->msg), "line %u: %s", out_err->line, b->msg);
    }
    XML_ParserFree(p);
    return rc;
}

static void builder_reset(struct builder *b)
{
    b->root = b->cur = NULL;
    memset(b->last_child, 0, sizeof(b->last_child));
    b->depth = 0;
    b->n_elements = 0;
    b->err = 0;
    b->msg[0] = '\0';
}

int vs_xml_parse(const char *data, size_t len, const struct vs_xml_limits *limits, unsigned flags,
                 struct vs_arena *arena, struct vs_xml_doc *out_doc, struct vs_xml_error *out_err)
{
    struct builder b;
    memset(&b, 0, sizeof(b));
    if (limits)
        b.lim = *limits;
    else
        vs_xml_limits_default(&b.lim);
    if (b.lim.max_depth > VS_XML_MAX_DEPTH || b.lim.max_depth < 1)
        b.lim.max_depth = VS_XML_MAX_DEPTH;
    if (len > b.lim.max_input || len > (size_t)INT32_MAX) {
        if (out_err) {
            out_err->code = VS_ELIMIT;
            out_err->line = out_err->column = 0;
            snprintf(out_err->msg, sizeof(out_err->msg),
                     "document of %zu bytes exceeds the limit of %zu", len, b.lim.max_input);
        }
        return VS_ELIMIT;
    }
    if (!(flags & (VS_XML_NO_FAST | VS_XML_ALLOW_UNCLOSED)) &&
        fast_parse(data, len, &b.lim, arena, out_doc) == 0)
        return 0;
    b.arena = arena;
    for (int i = 0; i <= VS_XML_MAX_DEPTH; i++)
        vs_buf_init(&b.text[i], b.lim.max_text);

    const char *input = data;
    bool repaired = false;
    int rc = run(&b, data, len, flags, out_err);
    if (rc == VS_EPARSE && (flags & VS_XML_REPAIR_BYTES)) {
        char *fixed = repair(data, len, arena);
        if (fixed) {
            builder_reset(&b);
            input = fixed;
            repaired = true;
            rc = run(&b, fixed, len, flags, out_err);
        }
    }
    if (rc == 0) {
        /* Elements left open (VS_XML_ALLOW_UNCLOSED): give them their text and span. */
        int d = b.depth;
        for (struct vs_xml_node *n = b.cur; n; n = n->parent, d--) {
            n->text = vs_arena_strndup(arena, vs_buf_str(&b.text[d]), b.text[d].len);
            n->text_len = b.text[d].len;
            n->raw_len = len - n->raw_off;
            n->closed = false;
        }
    }
    for (int i = 0; i <= VS_XML_MAX_DEPTH; i++)
        vs_buf_cleanup(&b.text[i]);
    if (rc)
        return rc;
    out_doc->root = b.root;
    out_doc->input = input;
    out_doc->input_len = len;
    out_doc->n_elements = b.n_elements;
    out_doc->repaired = repaired;
    out_doc->fast = false;
    return 0;
}

/* ---- tree helpers ---- */

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

/* ---- writer ---- */

void vs_xml_writer_init(struct vs_xml_writer *w, struct vs_buf *out)
{
    memset(w, 0, sizeof(*w));
    w->out = out;
    w->indent = true;
}

static void put(struct vs_xml_writer *w, const char *s, size_t n)
{
    if (w->err)
        return;
    int rc = vs_buf_append(w->out, s, n);
    if (rc)
        w->err = rc;
}

static void puts_(struct vs_xml_writer *w, const char *s)
{
    put(w, s, strlen(s));
}

static void pad(struct vs_xml_writer *w)
{
    static const char spaces[] = "                                                                "
                                 "                                                                ";
    if (!w->indent)
        return;
    size_t n = (size_t)w->depth * 4;
    if (n > sizeof(spaces) - 1)
        n = sizeof(spaces) - 1;
    put(w, spaces, n);
}

int vs_xml_escape(struct vs_buf *b, const char *s, size_t n)
{
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        const char *rep;
        switch (s[i]) {
        case '&':
            rep = "&amp;";
            break;
        case '<':
            rep = "&lt;";
            break;
        case '>':
            rep = "&gt;";
            break;
        case '"':
            rep = "&quot;";
            break;
        case '\'':
            rep = "&apos;";
            break;
        default:
            continue;
        }
        int rc = vs_buf_append(b, s + run, i - run);
        if (!rc)
            rc = vs_buf_puts(b, rep);
        if (rc)
            return rc;
        run = i + 1;
    }
    return vs_buf_append(b, s + run, n - run);
}

static void esc(struct vs_xml_writer *w, const char *s, size_t n)
{
    if (w->err)
        return;
    int rc = vs_xml_escape(w->out, s, n);
    if (rc)
        w->err = rc;
}

static void open_tag(struct vs_xml_writer *w, const char *name, const char *attr, const char *value,
                     bool newline)
{
    pad(w);
    put(w, "<", 1);
    puts_(w, name);
    if (attr) {
        put(w, " ", 1);
        puts_(w, attr);
        put(w, "=\"", 2);
        esc(w, value ? value : "", value ? strlen(value) : 0);
        put(w, "\"", 1);
    }
    put(w, newline ? ">\n" : ">", newline ? 2 : 1);
}

static void push(struct vs_xml_writer *w, const char *name)
{
    if (w->depth >= VS_XML_MAX_DEPTH) {
        if (!w->err)
            w->err = VS_EINVAL;
        return;
    }
    w->stack[w->depth++] = name;
}

void vs_xml_open(struct vs_xml_writer *w, const char *name)
{
    open_tag(w, name, NULL, NULL, true);
    push(w, name);
}

void vs_xml_open_attr(struct vs_xml_writer *w, const char *name, const char *attr,
                      const char *value)
{
    open_tag(w, name, attr, value, true);
    push(w, name);
}

void vs_xml_close(struct vs_xml_writer *w)
{
    if (w->depth <= 0) {
        if (!w->err)
            w->err = VS_EINVAL;
        return;
    }
    const char *name = w->stack[--w->depth];
    pad(w);
    put(w, "</", 2);
    puts_(w, name);
    put(w, ">\n", 2);
}

static void leaf(struct vs_xml_writer *w, const char *name, const char *attr, const char *av,
                 const char *s, size_t n, bool escape)
{
    open_tag(w, name, attr, av, false);
    if (escape)
        esc(w, s, n);
    else
        put(w, s, n);
    put(w, "</", 2);
    puts_(w, name);
    put(w, ">\n", 2);
}

void vs_xml_strn(struct vs_xml_writer *w, const char *name, const char *s, size_t n)
{
    if (s)
        leaf(w, name, NULL, NULL, s, n, true);
}

void vs_xml_str(struct vs_xml_writer *w, const char *name, const char *s)
{
    if (s)
        leaf(w, name, NULL, NULL, s, strlen(s), true);
}

void vs_xml_str_attr(struct vs_xml_writer *w, const char *name, const char *attr,
                     const char *attr_value, const char *s)
{
    if (s)
        leaf(w, name, attr, attr_value, s, strlen(s), true);
}

void vs_xml_int(struct vs_xml_writer *w, const char *name, int64_t v)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof(tmp), "%lld", (long long)v);
    leaf(w, name, NULL, NULL, tmp, (size_t)n, false);
}

/*
 * The fast exact path of vs_xml_format_double, for integers below 1e15
 * (FLOP counts, byte sizes: "%f" prints them exactly, then ".000000") and
 * for |v| < 2^33 (most of the rest a scheduler writes: times, fractions).
 * There one ulp is below 1e-6, so a six-decimal number that reads back as v
 * lies within half an ulp (< 0.5e-6) of v and is therefore the six-decimal
 * rounding of v that "%f" prints; and m / 1e6 with an integer m < 2^53 is
 * correctly rounded by one IEEE division (both operands exact), which is
 * what strtod returns for that text. So: take the integer m nearest
 * |v| * 1e6 (the product's rounding may put it one off: try m - 1 and
 * m + 1 too) and accept it when m / 1e6 == |v|. Writes "%f"'s text and
 * returns its length, or returns 0 when no six-decimal reads back as v
 * (then "%f" would not either, and the caller falls back to "%.17g").
 */
static size_t format_fixed6(char *dst, size_t size, double v)
{
    double a = fabs(v);
    if (size < 32)
        return 0;
    uint64_t ip, fp;
    if (a < 1e15 && a == floor(a)) {
        /* an integer (FLOPS, bytes): "%f" prints it exactly, ".000000" */
        ip = (uint64_t)a;
        fp = 0;
    } else if (a < 8589934592.0) {
        double m0 = nearbyint(a * 1e6);
        bool found = false;
        uint64_t m = 0;
        for (int d = -1; d <= 1 && !found; d++) {
            double mm = m0 + d;
            if (mm >= 0 && mm / 1e6 == a) {
                m = (uint64_t)mm;
                found = true;
            }
        }
        if (!found)
            return 0;
        ip = m / 1000000;
        fp = m % 1000000;
    } else {
        return 0;
    }
    char tmp[32];
    size_t k = sizeof(tmp);
    for (int i = 0; i < 6; i++) {
        tmp[--k] = (char)('0' + fp % 10);
        fp /= 10;
    }
    tmp[--k] = '.';
    do {
        tmp[--k] = (char)('0' + ip % 10);
        ip /= 10;
    } while (ip);
    if (signbit(v))
        tmp[--k] = '-';
    size_t n = sizeof(tmp) - k;
    memcpy(dst, tmp + k, n);
    dst[n] = '\0';
    return n;
}

size_t vs_xml_format_double(char *dst, size_t size, double v)
{
    if (!isfinite(v))
        v = 0; /* XML readers (BOINC's too) cannot take inf/nan */
    size_t fast = format_fixed6(dst, size, v);
    if (fast)
        return fast;
    int n = -1;
    if (fabs(v) < 1e15) {
        n = snprintf(dst, size, "%f", v);
        if (n > 0 && (size_t)n < size && strtod(dst, NULL) == v)
            return (size_t)n;
    }
    n = snprintf(dst, size, "%.17g", v);
    return n > 0 ? (size_t)n : 0;
}

void vs_xml_double(struct vs_xml_writer *w, const char *name, double v)
{
    char tmp[400];
    size_t n = vs_xml_format_double(tmp, sizeof(tmp), v);
    leaf(w, name, NULL, NULL, tmp, n, false);
}

void vs_xml_flag(struct vs_xml_writer *w, const char *name)
{
    pad(w);
    put(w, "<", 1);
    puts_(w, name);
    put(w, "/>\n", 3);
}

void vs_xml_raw_write(struct vs_xml_writer *w, const char *s, size_t n)
{
    put(w, s, n);
}

void vs_xml_cdata(struct vs_xml_writer *w, const char *s, size_t n)
{
    puts_(w, "<![CDATA[");
    size_t run = 0;
    for (size_t i = 0; i + 2 < n; i++) {
        if (s[i] == ']' && s[i + 1] == ']' && s[i + 2] == '>') {
            /* end the section between "]]" and ">" and open a new one */
            put(w, s + run, i + 2 - run);
            puts_(w, "]]><![CDATA[");
            run = i + 2;
        }
    }
    put(w, s + run, n - run);
    puts_(w, "]]>");
}

int vs_xml_writer_error(const struct vs_xml_writer *w)
{
    if (w->err)
        return w->err;
    return w->depth == 0 ? 0 : VS_EINVAL;
}
