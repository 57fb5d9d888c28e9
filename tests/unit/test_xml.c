/*
 * The bounded XML reader and the writer: tree shape, text and CDATA, raw spans,
 * unclosed documents, byte repair, and every limit (size, depth, element
 * count, text length, DOCTYPE, entities).
 */
#include "vs_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/rng.h"
#include "volsched/xml.h"

static int parse(struct vs_arena *a, const char *s, const struct vs_xml_limits *lim, unsigned flags,
                 struct vs_xml_doc *doc, struct vs_xml_error *err)
{
    return vs_xml_parse(s, strlen(s), lim, flags, a, doc, err);
}

/* Each element's line as expat counts breaks: "\n", "\r\n" and a lone "\r"
 * each one, inside text, comments, CDATA and attribute values too. */
static void test_lines(void **state)
{
    (void)state;
    struct vs_arena a;
    vs_arena_init(&a, 0);
    struct vs_xml_doc doc;
    struct vs_xml_error err;
    const char *plain = "<r>\n<a>x\ny</a>\n\n<!-- \n --><b\nk='1'/><c><![CDATA[\n]]></c><d/></r>";
    assert_int_equal(parse(&a, plain, NULL, 0, &doc, &err), 0);
    assert_int_equal(doc.root->line, 1);
    assert_int_equal(vs_xml_child(doc.root, "a")->line, 2);
    assert_int_equal(vs_xml_child(doc.root, "b")->line, 6);
    assert_int_equal(vs_xml_child(doc.root, "c")->line, 7);
    assert_int_equal(vs_xml_child(doc.root, "d")->line, 8);
    const char *cr = "<r>\r\n<a/>\r<b/>\r\r\n<c>\r\n</c><d/>\n\r<e/></r>";
    assert_int_equal(parse(&a, cr, NULL, 0, &doc, &err), 0);
    assert_int_equal(vs_xml_child(doc.root, "a")->line, 2);
    assert_int_equal(vs_xml_child(doc.root, "b")->line, 3);
    assert_int_equal(vs_xml_child(doc.root, "c")->line, 5);
    assert_int_equal(vs_xml_child(doc.root, "d")->line, 6);
    assert_int_equal(vs_xml_child(doc.root, "e")->line, 8);
    vs_arena_cleanup(&a);
}

static void test_tree(void **state)
{
    (void)state;
    struct vs_arena a;
    vs_arena_init(&a, 0);
    struct vs_xml_doc doc;
    struct vs_xml_error err;
    const char *s = "<?xml version=\"1.0\"?>\n<r>\n  <a x=\"1\" y='two'>hi &amp; &lt;bye&gt;</a>\n"
                    "  <b/>\n  <a>second</a>\n  <c><![CDATA[ <x>&</x> ]]></c>\n"
                    "  <!-- comment --><d>  7  </d>\n</r>";
    assert_int_equal(parse(&a, s, NULL, 0, &doc, &err), 0);
    assert_string_equal(doc.root->name, "r");
    assert_int_equal(doc.n_elements, 6);
    const struct vs_xml_node *n = vs_xml_child(doc.root, "a");
    assert_string_equal(n->text, "hi & <bye>");
    assert_string_equal(vs_xml_attr(n, "y"), "two");
    assert_null(vs_xml_attr(n, "z"));
    assert_string_equal(vs_xml_next_same(n)->text, "second");
    assert_null(vs_xml_next_same(vs_xml_next_same(n)));
    bool flag = false;
    assert_int_equal(vs_xml_get_bool(vs_xml_child(doc.root, "b"), &flag), 0);
    assert_true(flag);
    assert_string_equal(vs_xml_child_text(doc.root, "c"), " <x>&</x> ");
    int64_t v = 0;
    assert_int_equal(vs_xml_get_int64(vs_xml_child(doc.root, "d"), &v), 0);
    assert_int_equal(v, 7);
    assert_string_equal(vs_xml_text_trim(vs_xml_child(doc.root, "d"), &a), "7");
    assert_int_equal(vs_xml_get_int64(vs_xml_child(doc.root, "nope"), &v), VS_ENOTFOUND);
    size_t len;
    const char *raw = vs_xml_raw(&doc, n, &len);
    assert_int_equal(len, strlen("<a x=\"1\" y='two'>hi &amp; &lt;bye&gt;</a>"));
    assert_memory_equal(raw, "<a x=", 5);
    raw = vs_xml_inner_raw(&doc, n, &len);
    assert_int_equal(len, strlen("hi &amp; &lt;bye&gt;"));
    raw = vs_xml_raw(&doc, vs_xml_child(doc.root, "b"), &len);
    assert_int_equal(len, 4);
    assert_memory_equal(raw, "<b/>", 4);
    vs_xml_inner_raw(&doc, vs_xml_child(doc.root, "b"), &len);
    assert_int_equal(len, 0);
    vs_arena_cleanup(&a);
}

static void test_malformed(void **state)
{
    (void)state;
    struct vs_arena a;
    vs_arena_init(&a, 0);
    struct vs_xml_doc doc;
    struct vs_xml_error err;
    assert_int_equal(parse(&a, "<r><a></r>", NULL, 0, &doc, &err), VS_EPARSE);
    assert_true(strstr(err.msg, "line 1") != NULL);
    assert_int_equal(parse(&a, "", NULL, 0, &doc, &err), VS_EPARSE);
    assert_int_equal(parse(&a, "<r>", NULL, 0, &doc, &err), VS_EPARSE);
    assert_int_equal(parse(&a, "<r>&unknown;</r>", NULL, 0, &doc, &err), VS_EPARSE);
    /* unclosed allowed with the flag; text and spans of open elements kept */
    const char *up = "<r>\n<f>\n<name>x</name>\n<data>\nRAW";
    assert_int_equal(
        parse(&a, "<r>\n<f>\n<name>x</name>\n<data>\n", NULL, VS_XML_ALLOW_UNCLOSED, &doc, &err),
        0);
    assert_false(doc.root->closed);
    assert_string_equal(vs_xml_child_text(vs_xml_child(doc.root, "f"), "name"), "x");
    (void)up;
    vs_arena_cleanup(&a);
}

static void test_limits(void **state)
{
    (void)state;
    struct vs_arena a;
    vs_arena_init(&a, 0);
    struct vs_xml_doc doc;
    struct vs_xml_error err;
    struct vs_xml_limits lim;
    vs_xml_limits_default(&lim);

    /* DOCTYPE and entities: refused before anything is expanded */
    assert_int_equal(parse(&a, "<!DOCTYPE r><r/>", NULL, 0, &doc, &err), VS_EUNSUPPORTED);
    assert_true(strstr(err.msg, "DOCTYPE") != NULL);
    const char *laughs = "<!DOCTYPE r [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;\">]>"
                         "<r>&b;&b;&b;</r>";
    assert_int_equal(parse(&a, laughs, NULL, 0, &doc, &err), VS_EUNSUPPORTED);
    assert_int_equal(
        parse(&a, "<!DOCTYPE r SYSTEM \"file:///etc/passwd\"><r/>", NULL, 0, &doc, &err),
        VS_EUNSUPPORTED);

    /* depth */
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    for (int i = 0; i < VS_XML_MAX_DEPTH + 1; i++)
        assert_int_equal(vs_buf_puts(&b, "<a>"), 0);
    for (int i = 0; i < VS_XML_MAX_DEPTH + 1; i++)
        assert_int_equal(vs_buf_puts(&b, "</a>"), 0);
    assert_int_equal(vs_xml_parse(b.data, b.len, NULL, 0, &a, &doc, &err), VS_ELIMIT);
    assert_true(strstr(err.msg, "nesting") != NULL);
    /* exactly at the limit is fine */
    vs_buf_reset(&b);
    for (int i = 0; i < VS_XML_MAX_DEPTH; i++)
        assert_int_equal(vs_buf_puts(&b, "<a>"), 0);
    for (int i = 0; i < VS_XML_MAX_DEPTH; i++)
        assert_int_equal(vs_buf_puts(&b, "</a>"), 0);
    assert_int_equal(vs_xml_parse(b.data, b.len, NULL, 0, &a, &doc, &err), 0);

    /* element count */
    lim.max_elements = 10;
    vs_buf_reset(&b);
    assert_int_equal(vs_buf_puts(&b, "<r>"), 0);
    for (int i = 0; i < 10; i++)
        assert_int_equal(vs_buf_puts(&b, "<x/>"), 0);
    assert_int_equal(vs_buf_puts(&b, "</r>"), 0);
    assert_int_equal(vs_xml_parse(b.data, b.len, &lim, 0, &a, &doc, &err), VS_ELIMIT);
    assert_true(strstr(err.msg, "elements") != NULL);

    /* text length */
    vs_xml_limits_default(&lim);
    lim.max_text = 100;
    vs_buf_reset(&b);
    assert_int_equal(vs_buf_puts(&b, "<r>"), 0);
    for (int i = 0; i < 101; i++)
        assert_int_equal(vs_buf_puts(&b, "x"), 0);
    assert_int_equal(vs_buf_puts(&b, "</r>"), 0);
    assert_int_equal(vs_xml_parse(b.data, b.len, &lim, 0, &a, &doc, &err), VS_ELIMIT);
    assert_true(strstr(err.msg, "text") != NULL);

    /* input size */
    vs_xml_limits_default(&lim);
    lim.max_input = 50;
    assert_int_equal(vs_xml_parse(b.data, b.len, &lim, 0, &a, &doc, &err), VS_ELIMIT);
    assert_true(strstr(err.msg, "exceeds") != NULL);
    vs_buf_cleanup(&b);
    vs_arena_cleanup(&a);
}

/*
 * expat reads a document starting with a NUL or a UTF-16 byte order mark as
 * UTF-16 whatever it is told; the reader refuses those starts as UTF-8
 * would (fuzz_xml found "<\0<snr>..." read into a root named U+733C U+726E).
 */
static void test_utf16_start(void **state)
{
    (void)state;
    struct vs_arena a;
    vs_arena_init(&a, 0);
    struct vs_xml_doc doc;
    struct vs_xml_error err;
    static const char le[] = "<\0r\0/\0>\0", be[] = "\0<\0r\0/\0>";
    static const char bom[] = "\xff\xfe<\0r\0/\0>\0", found[] = "<\0<snr>\0\0\3>";
    const struct {
        const char *s;
        size_t n;
    } cases[] = {{le, sizeof(le) - 1},
                 {be, sizeof(be) - 1},
                 {bom, sizeof(bom) - 1},
                 {found, sizeof(found) - 1}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const unsigned modes[] = {0, VS_XML_ALLOW_UNCLOSED};
        for (size_t m = 0; m < 2; m++) {
            assert_int_equal(vs_xml_parse(cases[i].s, cases[i].n, NULL, modes[m], &a, &doc, &err),
                             VS_EPARSE);
            assert_string_equal(err.msg, "line 1: not well-formed (invalid token)");
        }
        /* repaired, the bytes are '?': whatever it then reads is UTF-8 */
        if (vs_xml_parse(cases[i].s, cases[i].n, NULL, VS_XML_REPAIR_BYTES, &a, &doc, &err) == 0)
            assert_true(doc.repaired && doc.input[0] != '\0' && doc.input[1] != '\0');
    }
    vs_arena_cleanup(&a);
}

static void test_repair(void **state)
{
    (void)state;
    struct vs_arena a;
    vs_arena_init(&a, 0);
    struct vs_xml_doc doc;
    struct vs_xml_error err;
    const char bad[] = "<r><e><![CDATA[bin\x01\xff\xc3(]]></e><u>\xc3\xa9</u></r>";
    assert_int_equal(vs_xml_parse(bad, sizeof(bad) - 1, NULL, 0, &a, &doc, &err), VS_EPARSE);
    assert_int_equal(vs_xml_parse(bad, sizeof(bad) - 1, NULL, VS_XML_REPAIR_BYTES, &a, &doc, &err),
                     0);
    assert_true(doc.repaired);
    assert_string_equal(vs_xml_child_text(doc.root, "e"), "bin??"
                                                          "?(");
    assert_string_equal(vs_xml_child_text(doc.root, "u"), "\xc3\xa9"); /* valid UTF-8 kept */
    vs_arena_cleanup(&a);
}

static void test_writer(void **state)
{
    (void)state;
    struct vs_buf b;
    vs_buf_init(&b, 4096);
    struct vs_xml_writer w;
    vs_xml_writer_init(&w, &b);
    vs_xml_open(&w, "r");
    vs_xml_str(&w, "s", "a<b>&\"'");
    vs_xml_str(&w, "none", NULL);
    vs_xml_int(&w, "i", -42);
    vs_xml_double(&w, "d", 1.0);
    vs_xml_double(&w, "e", 1e-9);
    vs_xml_flag(&w, "f");
    vs_xml_str_attr(&w, "message", "priority", "low", "hi");
    vs_xml_open(&w, "c");
    vs_xml_cdata(&w, "x]]>y", 5);
    vs_xml_close(&w);
    vs_xml_close(&w);
    assert_int_equal(vs_xml_writer_error(&w), 0);
    assert_string_equal(vs_buf_str(&b), "<r>\n"
                                        "    <s>a&lt;b&gt;&amp;&quot;&apos;</s>\n"
                                        "    <i>-42</i>\n"
                                        "    <d>1.000000</d>\n"
                                        "    <e>1.0000000000000001e-09</e>\n"
                                        "    <f/>\n"
                                        "    <message priority=\"low\">hi</message>\n"
                                        "    <c>\n"
                                        "<![CDATA[x]]]]><![CDATA[>y]]>    </c>\n"
                                        "</r>\n");
    /* what the writer escapes, the reader restores */
    struct vs_arena a;
    vs_arena_init(&a, 0);
    struct vs_xml_doc doc;
    assert_int_equal(vs_xml_parse(b.data, b.len, NULL, 0, &a, &doc, NULL), 0);
    assert_string_equal(vs_xml_child_text(doc.root, "s"), "a<b>&\"'");
    assert_string_equal(vs_xml_text_trim(vs_xml_child(doc.root, "c"), &a), "x]]>y");
    double d;
    assert_int_equal(vs_xml_get_double(vs_xml_child(doc.root, "e"), &d), 0);
    assert_true(d == 1e-9);
    vs_arena_cleanup(&a);

    /* the buffer cap is a sticky error, and unbalanced close is misuse */
    struct vs_buf small;
    vs_buf_init(&small, 8);
    vs_xml_writer_init(&w, &small);
    vs_xml_str(&w, "long", "0123456789");
    assert_int_equal(vs_xml_writer_error(&w), VS_ELIMIT);
    vs_buf_cleanup(&small);
    vs_buf_reset(&b);
    vs_xml_writer_init(&w, &b);
    vs_xml_close(&w);
    assert_int_equal(vs_xml_writer_error(&w), VS_EINVAL);
    vs_buf_cleanup(&b);
}

/* The formatter before its fast path: "%f" when that reads back exactly,
 * else "%.17g". The fast path must print the same text. */
static void ref_format(char *dst, size_t size, double v)
{
    if (!isfinite(v))
        v = 0;
    if (fabs(v) < 1e15) {
        int n = snprintf(dst, size, "%f", v);
        if (n > 0 && (size_t)n < size && strtod(dst, NULL) == v)
            return;
    }
    snprintf(dst, size, "%.17g", v);
}

static void check_format(double v)
{
    char got[64], want[64];
    size_t n = vs_xml_format_double(got, sizeof(got), v);
    ref_format(want, sizeof(want), v);
    if (strcmp(got, want) != 0)
        fail_msg("%.17g: got %s, want %s", v, got, want);
    assert_int_equal(n, strlen(got));
    if (isfinite(v))
        assert_true(strtod(got, NULL) == v); /* exact round trip */
}

static void test_format_double(void **state)
{
    (void)state;
    static const double fixed[] = {0.0,
                                   -0.0,
                                   1.0,
                                   -1.0,
                                   0.5,
                                   1e-6,
                                   -1e-6,
                                   1e-7,
                                   5e-7,
                                   0.1,
                                   0.3,
                                   123.456789,
                                   86400.0,
                                   1e9,
                                   3046847345.623431,
                                   8589934591.999999,
                                   8589934592.0,
                                   8589934592.5,
                                   1e13,
                                   99999999999999.0,
                                   999999999999999.0,
                                   1e15,
                                   9007199254740993.0,
                                   1e300,
                                   -1e-300,
                                   5e-324,
                                   INFINITY,
                                   NAN};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        check_format(fixed[i]);
    struct vs_rng rng;
    vs_rng_seed(&rng, 7);
    for (int i = 0; i < 200000; i++) {
        double v;
        switch (i % 5) {
        case 0: /* six decimals: the common case */
            v = (double)vs_rng_below(&rng, 10000000000000ull) / 1e6;
            break;
        case 1: /* integers up to and past 1e15, fewer decimals */
            if (vs_rng_below(&rng, 2)) {
                v = (double)vs_rng_below(&rng, 4000000000000000ull);
                break;
            }
            v = (double)vs_rng_below(&rng, 100000000ull) / 100 *
                (double)(1 + vs_rng_below(&rng, 1000));
            break;
        case 2: /* any double of any magnitude near the fast path's range */
            v = ldexp(vs_rng_double(&rng), (int)vs_rng_below(&rng, 80) - 40);
            break;
        case 3: { /* a six-decimal value nudged by an ulp */
            double x = (double)vs_rng_below(&rng, 9000000000000000ull) / 1e6;
            v = vs_rng_below(&rng, 2) ? nextafter(x, INFINITY) : nextafter(x, 0);
            break;
        }
        default: { /* random bits */
            uint64_t u = vs_rng_u64(&rng);
            memcpy(&v, &u, sizeof(v));
            break;
        }
        }
        if (vs_rng_below(&rng, 2))
            v = -v;
        check_format(v);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree),      cmocka_unit_test(test_lines),
        cmocka_unit_test(test_malformed), cmocka_unit_test(test_limits),
        cmocka_unit_test(test_repair),    cmocka_unit_test(test_utf16_start),
        cmocka_unit_test(test_writer),    cmocka_unit_test(test_format_double),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
