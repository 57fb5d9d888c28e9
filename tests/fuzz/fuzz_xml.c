/*
 * Fuzz target: the tree reader (expat, src/common/xml_reader.c) on arbitrary
 * input, with the properties its callers rely on. A parse either fails with
 * one of the documented codes and a "line N: ..." message, or gives a tree
 * that keeps the limits (depth, element count, text length), counts its
 * elements right, links parents and siblings consistently, and whose byte
 * spans lie inside the input, nested in their parent's, starting with the
 * element's start tag (so vs_xml_raw() can hand a subtree on verbatim). The
 * repairing and unclosed modes keep the same properties. Small limits on
 * half the inputs make the limit paths reachable.
 *
 * (This target replaces the old differential one, fast scanner vs expat:
 * the fast scanner is gone, and the scheduler request's one-pass reader has
 * its own differential target, fuzz_request_diff.c.)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "volsched/alloc.h"
#include "volsched/xml.h"

/* Checks n and its subtree; returns the number of elements in it. */
static size_t check_node(const struct vs_xml_doc *d, const struct vs_xml_limits *lim,
                         const struct vs_xml_node *n, int depth)
{
    CHECK(depth <= lim->max_depth);
    size_t nl = strlen(n->name);
    CHECK(nl > 0 && nl <= VS_XML_MAX_NAME);
    CHECK(n->text && strlen(n->text) == n->text_len && n->text_len <= lim->max_text);
    CHECK(n->n_attrs <= VS_XML_MAX_ATTRS);
    for (size_t i = 0; i < n->n_attrs; i++)
        CHECK(n->attrs[i].name && n->attrs[i].value && *n->attrs[i].name);
    CHECK(n->raw_off <= d->input_len && n->raw_len <= d->input_len - n->raw_off);
    size_t len;
    const char *raw = vs_xml_raw(d, n, &len);
    CHECK(raw == d->input + n->raw_off && len == n->raw_len);
    CHECK(len > nl && raw[0] == '<' && memcmp(raw + 1, n->name, nl) == 0);
    if (n->closed)
        CHECK(raw[len - 1] == '>');
    size_t il;
    const char *inner = vs_xml_inner_raw(d, n, &il);
    CHECK(inner >= raw && inner + il <= raw + len);
    CHECK(n->line >= 1);
    size_t count = 1, prev_end = n->raw_off;
    for (const struct vs_xml_node *c = n->child; c; c = c->next) {
        CHECK(c->parent == n && c->line >= n->line);
        CHECK(c->raw_off >= prev_end && c->raw_off + c->raw_len <= n->raw_off + n->raw_len);
        CHECK(n->closed || !c->next || c->closed); /* only the last child may be open */
        prev_end = c->raw_off + c->raw_len;
        count += check_node(d, lim, c, depth + 1);
    }
    return count;
}

static void check(const char *s, size_t size, const struct vs_xml_limits *lim, unsigned flags,
                  struct vs_arena *a)
{
    struct vs_xml_doc d;
    struct vs_xml_error err;
    int rc = vs_xml_parse(s, size, lim, flags, a, &d, &err);
    if (rc) {
        CHECK(rc == VS_EPARSE || rc == VS_ELIMIT || rc == VS_EUNSUPPORTED);
        /* the size limit is checked before parsing, and has no line */
        const char *want = err.line == 0 && rc == VS_ELIMIT ? "document " : "line ";
        CHECK(err.code == rc && strncmp(err.msg, want, strlen(want)) == 0);
        return;
    }
    CHECK(d.root && !d.root->parent && !d.root->next);
    CHECK(d.input_len == size && (d.repaired ? (flags & VS_XML_REPAIR_BYTES) != 0 : d.input == s));
    CHECK(d.n_elements <= lim->max_elements);
    CHECK(check_node(&d, lim, d.root, 1) == d.n_elements);
    if (!(flags & VS_XML_ALLOW_UNCLOSED))
        CHECK(d.root->closed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vs_xml_limits lim;
    vs_xml_limits_default(&lim);
    if (size > 0 && (data[0] & 1)) {
        lim.max_depth = 4;
        lim.max_elements = 20;
        lim.max_text = 64;
    }
    struct vs_arena a;
    vs_arena_init(&a, 0);
    const char *s = (const char *)data;
    check(s, size, &lim, 0, &a);
    check(s, size, &lim, VS_XML_REPAIR_BYTES, &a);
    check(s, size, &lim, VS_XML_ALLOW_UNCLOSED, &a);
    vs_arena_cleanup(&a);
    return 0;
}
