/*
 * The feeder's reader of stored job documents: the one-pass reader
 * (vs_proto_job_doc_parse_direct) reads the shapes the bench, the
 * templates and the tests store, into what the reference
 * (vs_proto_job_doc_parse, the reply parser on expat) gives; outside its
 * subset it declines, and the fast parse then answers exactly as the
 * reference, errors included. The field-by-field comparison on any input
 * is the fuzz target's (tests/fuzz/fuzz_job_doc_diff.c).
 */
#include "vs_test.h"

#include <string.h>

#include "volsched/alloc.h"
#include "volsched/proto.h"

static const char bench_wu[] =
    "<file_info>\n    <name>in_3</name>\n"
    "    <url>http://127.0.0.1:1/bench/download/1a/in_3</url>\n"
    "    <md5_cksum>00000000000000000000000000000000</md5_cksum>\n"
    "    <nbytes>12</nbytes>\n</file_info>\n<workunit>\n    <file_ref>\n"
    "        <file_name>in_3</file_name>\n        <open_name>in</open_name>\n"
    "        <copy_file/>\n    </file_ref>\n</workunit>\n";

static const char template_res[] =
    "<file_info>\n    <name>w_1_r0</name>\n    <generated_locally/>\n"
    "    <upload_when_present/>\n    <max_nbytes>100000</max_nbytes>\n"
    "    <url>http://e.org/cgi/file_upload_handler</url>\n"
    "    <upload_url>http://f.org/cgi/file_upload_handler</upload_url>\n"
    "    <xml_signature>\nabc0\n.\n</xml_signature>\n</file_info>\n"
    "<result>\n    <file_ref>\n        <file_name>w_1_r0</file_name>\n"
    "        <open_name>out</open_name>\n    </file_ref>\n"
    "    <file_ref><file_name>w_1_r1</file_name><optional/></file_ref>\n"
    "    <report_deadline>1700000000.5</report_deadline>\n</result>\n";

static void test_direct_reads(void **state)
{
    (void)state;
    struct vs_arena a;
    vs_arena_init(&a, 0);
    struct vs_proto_reply d, r;
    struct vs_proto_error err;
    assert_int_equal(vs_proto_job_doc_parse_direct(bench_wu, strlen(bench_wu), &a, &d), 0);
    assert_int_equal(vs_proto_job_doc_parse(bench_wu, strlen(bench_wu), &a, &r, &err), 0);
    assert_int_equal(d.n_file_infos, 1);
    assert_int_equal(d.n_workunits, 1);
    assert_int_equal(d.n_results, 0);
    assert_string_equal(d.file_infos[0].name, "in_3");
    assert_int_equal(d.file_infos[0].n_urls, 1);
    assert_int_equal(d.file_infos[0].urls[0].kind, VS_PROTO_URL);
    assert_string_equal(d.file_infos[0].urls[0].url, r.file_infos[0].urls[0].url);
    assert_string_equal(d.file_infos[0].md5_cksum, r.file_infos[0].md5_cksum);
    assert_true(d.file_infos[0].nbytes == 12 && r.file_infos[0].nbytes == 12);
    assert_null(d.workunits[0].name);
    assert_int_equal(d.workunits[0].n_file_refs, 1);
    assert_string_equal(d.workunits[0].file_refs[0].open_name, "in");
    assert_true(d.workunits[0].file_refs[0].copy_file);
    assert_false(d.workunits[0].file_refs[0].main_program);

    assert_int_equal(vs_proto_job_doc_parse_direct(template_res, strlen(template_res), &a, &d), 0);
    assert_int_equal(vs_proto_job_doc_parse(template_res, strlen(template_res), &a, &r, &err), 0);
    assert_int_equal(d.n_file_infos, 1);
    assert_int_equal(d.n_results, 1);
    const struct vs_proto_file_info *fi = &d.file_infos[0];
    assert_int_equal(fi->n_urls, 2);
    assert_int_equal(fi->urls[1].kind, VS_PROTO_URL_UPLOAD);
    assert_string_equal(fi->xml_signature, r.file_infos[0].xml_signature);
    assert_true(fi->max_nbytes == 100000);
    assert_int_equal(d.results[0].n_file_refs, 2);
    assert_true(d.results[0].file_refs[1].optional);
    assert_null(d.results[0].file_refs[1].open_name);
    assert_true(d.results[0].report_deadline == r.results[0].report_deadline);

    /* the test fixtures' minimal documents */
    assert_int_equal(vs_proto_job_doc_parse_direct("<result>\n</result>\n", 19, &a, &d), 0);
    assert_int_equal(d.n_results, 1);
    assert_int_equal(d.results[0].n_file_refs, 0);
    vs_arena_cleanup(&a);
}

/* Declined by the one-pass reader; the fast parse answers as the reference. */
static void check_declined(const char *doc, const char *what)
{
    struct vs_arena a;
    vs_arena_init(&a, 0);
    struct vs_proto_reply d, r, f;
    struct vs_proto_error rerr, ferr;
    size_t len = strlen(doc);
    if (vs_proto_job_doc_parse_direct(doc, len, &a, &d) != VS_EUNSUPPORTED)
        fail_msg("not declined: %s", what);
    int rc = vs_proto_job_doc_parse(doc, len, &a, &r, &rerr);
    int frc = vs_proto_job_doc_parse_fast(doc, len, &a, &f, &ferr);
    assert_int_equal(frc, rc);
    assert_string_equal(ferr.msg, rc ? rerr.msg : "");
    if (rc == 0) {
        assert_int_equal(f.n_file_infos, r.n_file_infos);
        assert_int_equal(f.n_workunits, r.n_workunits);
        assert_int_equal(f.n_results, r.n_results);
    }
    vs_arena_cleanup(&a);
}

static void test_declined(void **state)
{
    (void)state;
    check_declined("", "empty");
    check_declined("<file_info><name>a &amp; b</name></file_info>", "entity in a field");
    check_declined("<file_info><name><![CDATA[a]]></name></file_info>", "CDATA in a field");
    check_declined("<!-- c --><workunit/>", "comment");
    check_declined("<workunit a=\"1\"/>", "attribute");
    check_declined("<app><name>x</name></app><workunit/>", "another reply element");
    check_declined("<result>\r\n</result>", "carriage return");
    check_declined("<workunit/></scheduler_reply>", "the wrapper's end tag");
    check_declined("<workunit/>tail", "text after the last element");
    check_declined("<workunit><rsc_fpops_est>x</rsc_fpops_est></workunit>", "bad number");
    check_declined("<workunit><file_ref></workunit>", "unclosed element");
    check_declined("<result><version_num>99999999999</version_num></result>", "int range");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_direct_reads),
        cmocka_unit_test(test_declined),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
