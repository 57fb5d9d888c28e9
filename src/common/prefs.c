/*
 * Global preferences (include/volsched/prefs.h): the tree reader, and the
 * one-pass reader with its fallback to the tree.
 *
 * The one-pass reader's subset: an optional <?xml ...?> declaration and
 * white space, the root start tag without attributes, then the root's
 * children. A child whose name is a preference must be <name>text</name>
 * or <name/> with no '&' in its text (no entity to decode); any other child
 * (a <venue>, <day_prefs>) is skipped by counting its tags, without looking
 * into its text. Comments, CDATA sections, processing instructions and
 * quotes inside tags send the whole document to vs_xml_parse. It trusts no
 * more than that: a document outside XML that it happens to read gives
 * some values, but never a read outside xml[0..len).
 */
#include "volsched/prefs.h"

#include <ctype.h>
#include <string.h>

#include "volsched/alloc.h"
#include "volsched/str.h"

/* BOINC-COMPAT: lib/prefs.cpp's tag names */
#define GP_NAMES(X)                                                                                \
    X(VS_GP_WORK_BUF_MIN_DAYS, "work_buf_min_days")                                                \
    X(VS_GP_WORK_BUF_ADDITIONAL_DAYS, "work_buf_additional_days")                                  \
    X(VS_GP_CPU_SCHEDULING_PERIOD_MINUTES, "cpu_scheduling_period_minutes")                        \
    X(VS_GP_LEAVE_APPS_IN_MEMORY, "leave_apps_in_memory")                                          \
    X(VS_GP_MAX_NCPUS_PCT, "max_ncpus_pct")                                                        \
    X(VS_GP_CPU_USAGE_LIMIT, "cpu_usage_limit")                                                    \
    X(VS_GP_DISK_INTERVAL, "disk_interval")                                                        \
    X(VS_GP_DISK_MAX_USED_GB, "disk_max_used_gb")                                                  \
    X(VS_GP_DISK_MAX_USED_PCT, "disk_max_used_pct")                                                \
    X(VS_GP_DISK_MIN_FREE_GB, "disk_min_free_gb")                                                  \
    X(VS_GP_RAM_MAX_USED_BUSY_PCT, "ram_max_used_busy_pct")                                        \
    X(VS_GP_RAM_MAX_USED_IDLE_PCT, "ram_max_used_idle_pct")
#define GP_NAME(e, s) [e] = s,
#define GP_LEN(e, s)  [e] = sizeof(s) - 1,
static const char *const names[VS_GP_COUNT] = {GP_NAMES(GP_NAME)};
static const unsigned char lens[VS_GP_COUNT] = {GP_NAMES(GP_LEN)};

const char *vs_gpref_name(enum vs_gpref p)
{
    return (int)p >= 0 && p < VS_GP_COUNT ? names[p] : "";
}

/* The preference named s[0..n) if it is one of want, else -1. */
static int find_name(const char *s, size_t n, uint32_t want)
{
    /* the lengths first: most tags of real preferences are none of ours */
    for (int i = 0; i < VS_GP_COUNT; i++)
        if (lens[i] == n && (want >> i & 1u) && names[i][0] == s[0] && memcmp(names[i], s, n) == 0)
            return i;
    return -1;
}

/* Records preference i with the text s[0..n) (entities already decoded). */
static void set_value(struct vs_gprefs *g, int i, const char *s, size_t n)
{
    while (n > 0 && isspace((unsigned char)*s)) {
        s++;
        n--;
    }
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    g->have |= 1u << i;
    g->bad &= ~(1u << i);
    g->v[i] = 0;
    char num[64];
    bool ok = false;
    double v = 0;
    if (i == VS_GP_LEAVE_APPS_IN_MEMORY && n == 0) {
        ok = true; /* BOINC-COMPAT: <flag/> means set */
        v = 1;
    } else if (n > 0 && n < sizeof(num) && !memchr(s, '\0', n)) {
        memcpy(num, s, n);
        num[n] = '\0';
        bool b = false;
        if (i == VS_GP_LEAVE_APPS_IN_MEMORY) {
            ok = vs_parse_bool(num, &b) == 0;
            v = ok && b ? 1 : 0;
        } else {
            ok = vs_parse_double(num, &v) == 0;
        }
    }
    if (ok)
        g->v[i] = v;
    else
        g->bad |= 1u << i;
}

void vs_gprefs_from_node(const struct vs_xml_node *root, struct vs_gprefs *out)
{
    memset(out, 0, sizeof(*out));
    for (const struct vs_xml_node *c = root ? root->child : NULL; c; c = c->next) {
        int i = find_name(c->name, strlen(c->name), VS_GP_ALL);
        if (i >= 0)
            set_value(out, i, c->text, c->text_len);
    }
}

/* ---------------------------------------------------------------- one pass */

#define FALLBACK 1

struct scan {
    const char *s;
    size_t len, pos;
};

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Ends a name in a tag: white space, '>', '/' and '<'. */
/* clang-format off */
static const bool name_stop[256] = {
    ['\t'] = 1, ['\n'] = 1, ['\r'] = 1, [' '] = 1, ['/'] = 1, ['<'] = 1, ['>'] = 1,
};
/* clang-format on */

static size_t name_len(const char *s, size_t i, size_t len)
{
    size_t n = 0;
    while (i + n < len && !name_stop[(unsigned char)s[i + n]])
        n++;
    return n;
}

/* At a '<' that opens a start tag (not "</", "<!", "<?"): moves past its
 * '>', into *out_empty whether it was "/>". FALLBACK on quotes (an
 * attribute value may hold '>') or the end of the text. */
static int past_tag(struct scan *sc, bool *out_empty)
{
    for (size_t i = sc->pos + 1; i < sc->len; i++) {
        char c = sc->s[i];
        if (c == '"' || c == '\'' || c == '<')
            return FALLBACK;
        if (c == '>') {
            *out_empty = sc->s[i - 1] == '/';
            sc->pos = i + 1;
            return 0;
        }
    }
    return FALLBACK;
}

/* Skips the element whose start tag begins at sc->pos, whole. */
static int skip_element(struct scan *sc)
{
    bool empty;
    if (past_tag(sc, &empty))
        return FALLBACK;
    for (int depth = empty ? 0 : 1; depth > 0;) {
        const char *lt = memchr(sc->s + sc->pos, '<', sc->len - sc->pos);
        if (!lt)
            return FALLBACK;
        sc->pos = (size_t)(lt - sc->s);
        if (sc->pos + 1 >= sc->len)
            return FALLBACK;
        char c = sc->s[sc->pos + 1];
        if (c == '!' || c == '?')
            return FALLBACK;
        if (c == '/') {
            const char *gt = memchr(sc->s + sc->pos, '>', sc->len - sc->pos);
            if (!gt)
                return FALLBACK;
            sc->pos = (size_t)(gt - sc->s) + 1;
            depth--;
            continue;
        }
        if (past_tag(sc, &empty))
            return FALLBACK;
        if (!empty)
            depth++;
    }
    return 0;
}

static int scan(const char *xml, size_t len, uint32_t want, struct vs_gprefs *g)
{
    struct scan sc = {xml, len, 0};
    while (sc.pos < len && is_space(xml[sc.pos]))
        sc.pos++;
    if (len - sc.pos >= 5 && memcmp(xml + sc.pos, "<?xml", 5) == 0) {
        const char *end = NULL;
        for (size_t i = sc.pos + 5; i + 1 < len && !end; i++)
            if (xml[i] == '?' && xml[i + 1] == '>')
                end = xml + i;
        if (!end)
            return FALLBACK;
        sc.pos = (size_t)(end - xml) + 2;
        while (sc.pos < len && is_space(xml[sc.pos]))
            sc.pos++;
    }
    /* the root start tag, without attributes */
    if (sc.pos >= len || xml[sc.pos] != '<')
        return FALLBACK;
    size_t root = sc.pos + 1, rn = name_len(xml, root, len);
    if (rn == 0 || root + rn >= len || xml[root + rn] != '>' || xml[root] == '!' ||
        xml[root] == '?')
        return FALLBACK;
    sc.pos = root + rn + 1;
    for (;;) {
        const char *lt = memchr(xml + sc.pos, '<', len - sc.pos);
        if (!lt)
            return FALLBACK;
        sc.pos = (size_t)(lt - xml);
        if (sc.pos + 1 >= len)
            return FALLBACK;
        char c = xml[sc.pos + 1];
        if (c == '!' || c == '?')
            return FALLBACK;
        if (c == '/') {
            /* the root's end tag, then only white space */
            size_t e = sc.pos + 2;
            if (len - e < rn + 1 || memcmp(xml + e, xml + root, rn) != 0 || xml[e + rn] != '>')
                return FALLBACK;
            for (e += rn + 1; e < len; e++)
                if (!is_space(xml[e]))
                    return FALLBACK;
            return 0;
        }
        size_t name = sc.pos + 1, n = name_len(xml, name, len);
        int i = n > 0 ? find_name(xml + name, n, want) : -1;
        size_t after = name + n; /* what follows the name */
        if (after + 1 < len && xml[after] == '/' && xml[after + 1] == '>') {
            if (i >= 0)
                set_value(g, i, "", 0);
            sc.pos = after + 2;
            continue;
        }
        if (after >= len || xml[after] != '>') {
            /* attributes, or the end of the text */
            if (i >= 0 || skip_element(&sc))
                return FALLBACK;
            continue;
        }
        size_t t = after + 1;
        const char *end = memchr(xml + t, '<', len - t);
        if (!end)
            return FALLBACK;
        size_t e = (size_t)(end - xml);
        if (e + 1 >= len || xml[e + 1] != '/') {
            /* an element inside: skipped whole, unless it is ours */
            if (i >= 0 || skip_element(&sc))
                return FALLBACK;
            continue;
        }
        if (i < 0) {
            /* a leaf of another name: its end tag is the next one */
            const char *gt = memchr(end, '>', len - e);
            if (!gt)
                return FALLBACK;
            sc.pos = (size_t)(gt - xml) + 1;
            continue;
        }
        if (memchr(xml + t, '&', e - t) || len - e < n + 3 ||
            memcmp(xml + e + 2, xml + name, n) != 0 || xml[e + 2 + n] != '>')
            return FALLBACK;
        set_value(g, i, xml + t, e - t);
        sc.pos = e + 3 + n;
    }
}

/* The venue section of root for venue (NULL: none). */
static const struct vs_xml_node *venue_node(const struct vs_xml_node *root, const char *venue)
{
    if (!root || !venue || !venue[0])
        return NULL;
    for (const struct vs_xml_node *c = root->child; c; c = c->next) {
        const char *vn = strcmp(c->name, "venue") == 0 ? vs_xml_attr(c, "name") : NULL;
        if (vn && strcmp(vn, venue) == 0)
            return c;
    }
    return NULL;
}

void vs_gprefs_from_node_venue(const struct vs_xml_node *root, const char *venue,
                               struct vs_gprefs *out, bool *out_found)
{
    const struct vs_xml_node *v = venue_node(root, venue);
    *out_found = v != NULL;
    vs_gprefs_from_node(v ? v : root, out);
}

/* The tree's reading of xml for venue, less what is not in want. */
static int tree_read(const char *xml, size_t len, uint32_t want, const char *venue,
                     struct vs_gprefs *out, bool *out_found)
{
    memset(out, 0, sizeof(*out));
    *out_found = false;
    struct vs_arena a;
    vs_arena_init(&a, 4096);
    struct vs_xml_doc doc;
    int rc = vs_xml_parse(xml, len, NULL, 0, &a, &doc, NULL);
    if (rc == 0) {
        vs_gprefs_from_node_venue(doc.root, venue, out, out_found);
        out->have &= want;
        out->bad &= want;
        for (int i = 0; i < VS_GP_COUNT; i++)
            if (!(want >> i & 1u))
                out->v[i] = 0;
    }
    vs_arena_cleanup(&a);
    return rc == 0 ? 0 : VS_EPARSE;
}

int vs_gprefs_parse(const char *xml, size_t len, uint32_t want, struct vs_gprefs *out)
{
    memset(out, 0, sizeof(*out));
    if (!xml)
        return VS_EPARSE;
    if (scan(xml, len, want, out) == 0)
        return 0;
    bool found;
    return tree_read(xml, len, want, NULL, out, &found);
}

int vs_gprefs_parse_venue(const char *xml, size_t len, uint32_t want, const char *venue,
                          struct vs_gprefs *out, bool *out_found)
{
    *out_found = false;
    /* No venue section can apply: the one-pass reader's answer. */
    if (!xml || !venue || !venue[0] || !memmem(xml, len, "<venue", 6))
        return vs_gprefs_parse(xml, len, want, out);
    return tree_read(xml, len, want, venue, out, out_found);
}
