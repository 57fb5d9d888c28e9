/*
 * Differential fuzz target: the fast scanner and expat must agree. For any
 * input, vs_xml_parse() with and without VS_XML_NO_FAST returns the same code,
 * and on success the same tree: names, attributes, text, byte spans, line
 * numbers, shape. (The fast path hands anything unusual to expat, so a
 * disagreement means it accepted something expat rejects or read it
 * differently.) Small limits make the limit paths reachable.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "volsched/alloc.h"
#include "volsched/xml.h"

static void same(const struct vs_xml_node *a, const struct vs_xml_node *b)
{
    for (; a || b; a = a->next, b = b->next) {
        CHECK(a && b);
        CHECK(strcmp(a->name, b->name) == 0);
        CHECK(a->text_len == b->text_len && memcmp(a->text, b->text, a->text_len) == 0);
        CHECK(a->raw_off == b->raw_off && a->raw_len == b->raw_len);
        CHECK(a->line == b->line && a->closed == b->closed);
        CHECK(a->n_attrs == b->n_attrs);
        for (size_t i = 0; i < a->n_attrs; i++) {
            CHECK(strcmp(a->attrs[i].name, b->attrs[i].name) == 0);
            CHECK(strcmp(a->attrs[i].value, b->attrs[i].value) == 0);
        }
        same(a->child, b->child);
    }
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
    struct vs_xml_doc d1, d2;
    const char *s = (const char *)data;
    int r1 = vs_xml_parse(s, size, &lim, 0, &a, &d1, NULL);
    int r2 = vs_xml_parse(s, size, &lim, VS_XML_NO_FAST, &a, &d2, NULL);
    CHECK(r1 == r2);
    if (r1 == 0) {
        CHECK(d1.n_elements == d2.n_elements);
        CHECK(d1.input == d2.input && d1.input_len == d2.input_len);
        same(d1.root, d2.root);
    }
    vs_arena_cleanup(&a);
    return 0;
}
