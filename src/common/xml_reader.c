/*
 * Bounded XML reader on expat. See include/volsched/xml.h.
 *
 * expat is the one tree reader of volsched: configuration, templates,
 * replies, upload headers and, whenever the server's one-pass reader
 * (src/proto/request_direct.c) declines, scheduler requests. The tree is
 * built in the caller's arena. Text of the element being parsed is collected
 * in one scratch buffer per nesting level (they are reused across elements),
 * so the arena only receives final strings.
 */
#include "volsched/xml.h"

#include <expat.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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
    /* Line numbers, counted here rather than by XML_GetCurrentLineNumber,
     * which re-scans expat's position on every call (7% of a stored job's
     * parse): the line of byte line_off is line; has_cr says the input
     * holds a '\r' (expat counts "\r\n" and a lone '\r' as one break). */
    const char *data;
    size_t line_off;
    unsigned line;
    bool has_cr;
    int err;
    char msg[120];
};

/* The 1-based line of byte off, for offsets that only grow (each a '<'). */
static unsigned line_at(struct builder *b, size_t off)
{
    const char *s = b->data;
    size_t i = b->line_off;
    unsigned n = b->line;
    if (!b->has_cr) {
        const char *q;
        while (i < off && (q = memchr(s + i, '\n', off - i)) != NULL) {
            n++;
            i = (size_t)(q - s) + 1;
        }
    } else {
        for (; i < off; i++) {
            if (s[i] == '\n') {
                n++;
            } else if (s[i] == '\r') {
                n++;
                if (i + 1 < off && s[i + 1] == '\n')
                    i++;
            }
        }
    }
    b->line_off = off;
    b->line = n;
    return n;
}

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
    n->line = line_at(b, n->raw_off);
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

/* Declared in volsched/xml.h. */
size_t vs_xml_char_len(const unsigned char *s, size_t n)
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
        size_t k = vs_xml_char_len(s + i, len - i);
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

/*
 * True when expat would read data as UTF-16 whatever encoding it was
 * created with: a NUL among the first two bytes, or a UTF-16 byte order
 * mark. Names would then be decoded from UTF-16 while the byte spans count
 * the UTF-16 input (found by fuzz_xml: "<\0<snr>..." gave a root named
 * U+733C U+726E). Neither start is UTF-8 XML.
 */
static bool utf16_start(const char *data, size_t len)
{
    const unsigned char *u = (const unsigned char *)data;
    if (len < 2)
        return false;
    return u[0] == 0 || u[1] == 0 || (u[0] == 0xfe && u[1] == 0xff) ||
           (u[0] == 0xff && u[1] == 0xfe);
}

static int run(struct builder *b, const char *data, size_t len, unsigned flags,
               struct vs_xml_error *out_err)
{
    if (utf16_start(data, len)) {
        /* what expat reading UTF-8 says of those bytes (and the repair pass
         * replaces them, as it does any byte UTF-8 XML forbids) */
        if (out_err) {
            out_err->code = VS_EPARSE;
            out_err->line = 1;
            out_err->column = 0;
            snprintf(out_err->msg, sizeof(out_err->msg), "line 1: %s",
                     XML_ErrorString(XML_ERROR_INVALID_TOKEN));
        }
        return VS_EPARSE;
    }
    XML_Parser p = XML_ParserCreate("UTF-8");
    if (!p)
        return VS_ENOMEM;
    b->p = p;
    b->data = data;
    b->line_off = 0;
    b->line = 1;
    b->has_cr = memchr(data, '\r', len) != NULL;
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
    return 0;
}
