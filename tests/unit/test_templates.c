/*
 * Unit tests of the job templates (input -> workunit XML and columns, output
 * -> result XML with upload certificates), the download hierarchy and the
 * project config file.
 */
#include "vs_test.h"

#include "project_fixture.h"
#include "volsched/buf.h"
#include "volsched/layout.h"
#include "volsched/md5.h"
#include "volsched/xml.h"

static int setup(void **state)
{
    *state = pf_create();
    return 0;
}

static int teardown(void **state)
{
    pf_destroy(*state);
    return 0;
}

static struct vs_tmpl_input input(const char *name, const char *md5, double nbytes)
{
    struct vs_tmpl_input in;
    memset(&in, 0, sizeof(in));
    assert_int_equal(vs_strlcpy(in.name, name, sizeof(in.name)), 0);
    snprintf(in.url, sizeof(in.url), "http://x/download/%s", name);
    assert_int_equal(vs_strlcpy(in.md5_cksum, md5, sizeof(in.md5_cksum)), 0);
    in.nbytes = nbytes;
    return in;
}

static void test_default_input(void **state)
{
    struct project_fixture *f = *state;
    struct vs_tmpl_input in = input("data_7", "0123456789abcdef0123456789abcdef", 42);
    struct vs_workunit wu;
    vs_workunit_defaults(&wu);
    unsigned set = 99;
    char err[256];
    assert_int_equal(vs_template_input(vs_template_default_in, strlen(vs_template_default_in),
                                       &f->cfg, &in, 1, "--n 5", &wu, &set, err, sizeof(err)),
                     0);
    assert_int_equal(set, 0);
    assert_string_equal(wu.xml_doc, "<file_info>\n"
                                    "    <name>data_7</name>\n"
                                    "    <url>http://x/download/data_7</url>\n"
                                    "    <md5_cksum>0123456789abcdef0123456789abcdef</md5_cksum>\n"
                                    "    <nbytes>42.000000</nbytes>\n"
                                    "</file_info>\n"
                                    "<workunit>\n"
                                    "    <command_line>--n 5</command_line>\n"
                                    "    <file_ref>\n"
                                    "        <file_name>data_7</file_name>\n"
                                    "        <open_name>in</open_name>\n"
                                    "        <copy_file/>\n"
                                    "    </file_ref>\n"
                                    "</workunit>\n");
    vs_workunit_cleanup(&wu);
    assert_int_equal(
        vs_template_input_count(vs_template_default_in, strlen(vs_template_default_in)), 1);
}

static const char rich_in[] =
    "<input_template>\n"
    " <file_info><number>0</number><sticky/></file_info>\n"
    " <file_info><physical_name>const.dat</physical_name></file_info>\n"
    " <file_info><url>http://mirror/x</url><md5_cksum>aaaa</md5_cksum><nbytes>9</nbytes>"
    "</file_info>\n"
    " <workunit>\n"
    "  <file_ref><file_number>0</file_number><open_name>a</open_name></file_ref>\n"
    "  <file_ref><copy_file/></file_ref>\n"
    "  <file_ref><open_name>r</open_name><optional/></file_ref>\n"
    "  <command_line>-x</command_line>\n"
    "  <rsc_fpops_est>1e10</rsc_fpops_est><rsc_fpops_bound>1e11</rsc_fpops_bound>\n"
    "  <rsc_memory_bound>1e7</rsc_memory_bound><rsc_disk_bound>2e7</rsc_disk_bound>\n"
    "  <delay_bound>3600</delay_bound><min_quorum>2</min_quorum>\n"
    "  <target_nresults>3</target_nresults><max_error_results>4</max_error_results>\n"
    "  <max_total_results>9</max_total_results><max_success_results>5</max_success_results>\n"
    "  <credit>12</credit>\n"
    " </workunit>\n"
    "</input_template>\n";

static void test_rich_input(void **state)
{
    struct project_fixture *f = *state;
    struct vs_tmpl_input in = input("in0", "0123456789abcdef0123456789abcdef", 1);
    struct vs_workunit wu;
    vs_workunit_defaults(&wu);
    unsigned set = 0;
    char err[256] = "";
    /* The constant file is not staged yet. */
    assert_int_equal(vs_template_input(rich_in, strlen(rich_in), &f->cfg, &in, 1, NULL, &wu, &set,
                                       err, sizeof(err)),
                     VS_ENOTFOUND);
    assert_non_null(strstr(err, "const.dat"));
    char path[1200];
    assert_int_equal(vs_project_download_path(&f->cfg, "const.dat", true, path, sizeof(path)), 0);
    FILE *fp = fopen(path, "w");
    fputs("constant", fp);
    fclose(fp);
    assert_int_equal(vs_template_input(rich_in, strlen(rich_in), &f->cfg, &in, 1, NULL, &wu, &set,
                                       err, sizeof(err)),
                     0);
    assert_true(wu.rsc_fpops_est == 1e10 && wu.rsc_fpops_bound == 1e11);
    assert_true(wu.rsc_memory_bound == 1e7 && wu.rsc_disk_bound == 2e7);
    assert_int_equal(wu.delay_bound, 3600);
    assert_int_equal(wu.min_quorum, 2);
    assert_int_equal(wu.target_nresults, 3);
    assert_int_equal(wu.max_error_results, 4);
    assert_int_equal(wu.max_total_results, 9);
    assert_int_equal(wu.max_success_results, 5);
    assert_int_equal(set, VS_TMPL_SET_FPOPS_EST | VS_TMPL_SET_FPOPS_BOUND |
                              VS_TMPL_SET_MEMORY_BOUND | VS_TMPL_SET_DISK_BOUND |
                              VS_TMPL_SET_DELAY_BOUND | VS_TMPL_SET_MIN_QUORUM |
                              VS_TMPL_SET_TARGET | VS_TMPL_SET_MAX_ERROR | VS_TMPL_SET_MAX_TOTAL |
                              VS_TMPL_SET_MAX_SUCCESS);

    /* Parse what was generated and check its shape. */
    struct vs_arena arena;
    vs_arena_init(&arena, 8192);
    struct vs_buf wrapped;
    vs_buf_init(&wrapped, VS_BUF_UNLIMITED);
    assert_int_equal(vs_buf_printf(&wrapped, "<x>%s</x>", wu.xml_doc), 0);
    struct vs_xml_doc doc;
    assert_int_equal(vs_xml_parse(wrapped.data, wrapped.len, NULL, 0, &arena, &doc, NULL), 0);
    const struct vs_xml_node *fi = vs_xml_child(doc.root, "file_info");
    assert_string_equal(vs_xml_child_text(fi, "name"), "in0");
    assert_non_null(vs_xml_child(fi, "sticky"));
    assert_null(vs_xml_child(fi, "number"));
    fi = vs_xml_next_same(fi);
    assert_string_equal(vs_xml_child_text(fi, "name"), "const.dat");
    char md5[33];
    assert_int_equal(vs_md5_hex("constant", 8, md5), 0);
    assert_string_equal(vs_xml_child_text(fi, "md5_cksum"), md5);
    char url[600];
    assert_int_equal(vs_project_download_url(&f->cfg, "const.dat", url, sizeof(url)), 0);
    assert_string_equal(vs_xml_child_text(fi, "url"), url);
    fi = vs_xml_next_same(fi);
    assert_string_equal(vs_xml_child_text(fi, "name"), "jf_aaaa");
    assert_string_equal(vs_xml_child_text(fi, "url"), "http://mirror/x");
    const struct vs_xml_node *w = vs_xml_child(doc.root, "workunit");
    assert_string_equal(vs_xml_child_text(w, "command_line"), "-x");
    assert_string_equal(vs_xml_child_text(w, "credit"), "12");
    assert_null(vs_xml_child(w, "rsc_fpops_est")); /* went to the columns */
    const struct vs_xml_node *ref = vs_xml_child(w, "file_ref");
    assert_string_equal(vs_xml_child_text(ref, "open_name"), "a");
    ref = vs_xml_next_same(ref);
    /* copy_file alone: opened under its own name. */
    assert_string_equal(vs_xml_child_text(ref, "open_name"), "const.dat");
    assert_non_null(vs_xml_child(ref, "copy_file"));
    ref = vs_xml_next_same(ref);
    assert_string_equal(vs_xml_child_text(ref, "file_name"), "jf_aaaa");
    assert_non_null(vs_xml_child(ref, "optional"));
    vs_buf_cleanup(&wrapped);
    vs_arena_cleanup(&arena);

    /* A command line from the flag and the template: refused. */
    assert_int_equal(vs_template_input(rich_in, strlen(rich_in), &f->cfg, &in, 1, "-y", &wu, &set,
                                       err, sizeof(err)),
                     VS_EPARSE);
    assert_non_null(strstr(err, "command_line"));
    vs_workunit_cleanup(&wu);
}

static void expect_input_error(struct project_fixture *f, const char *tmpl, size_t nin,
                               const char *msg_part)
{
    struct vs_tmpl_input in[2] = {input("a", "0123456789abcdef0123456789abcdef", 1),
                                  input("b", "0123456789abcdef0123456789abcdef", 1)};
    struct vs_workunit wu;
    vs_workunit_defaults(&wu);
    char err[256] = "";
    int rc =
        vs_template_input(tmpl, strlen(tmpl), &f->cfg, in, nin, NULL, &wu, NULL, err, sizeof(err));
    assert_int_equal(rc, VS_EPARSE);
    assert_null(wu.xml_doc);
    if (!strstr(err, msg_part))
        fail_msg("error '%s' does not mention '%s'", err, msg_part);
}

static void test_input_errors(void **state)
{
    struct project_fixture *f = *state;
    /* More inputs than the template takes, and fewer. */
    expect_input_error(f, vs_template_default_in, 2, "takes 1 input");
    expect_input_error(f, vs_template_default_in, 0, "more input files");
    expect_input_error(f, "<input_template><file_info/><workunit/></input_template>", 1,
                       "1 <file_info> but 0 <file_ref>");
    expect_input_error(f,
                       "<input_template><file_info/><workunit><file_ref/></workunit>"
                       "</input_template>",
                       1, "open_name");
    expect_input_error(f, "<input_template><file_info/></input_template>", 1, "no <workunit>");
    expect_input_error(f, "<output_template/>", 1, "not <input_template>");
    expect_input_error(f, "<input_template><workunit>", 0, "malformed");
    expect_input_error(f,
                       "<input_template><workunit><rsc_fpops_est>lots</rsc_fpops_est>"
                       "</workunit></input_template>",
                       0, "rsc_fpops_est");
    expect_input_error(f,
                       "<input_template><file_info><gzip/></file_info><workunit><file_ref>"
                       "<open_name>x</open_name></file_ref></workunit></input_template>",
                       1, "gzip");
    assert_int_equal(vs_template_input_count("<nope", 5), -1);
}

static void test_output(void **state)
{
    struct project_fixture *f = *state;
    struct vs_sign_key *key, *pub;
    char path[1200];
    snprintf(path, sizeof(path), "%s/%s", f->cfg.key_dir, VS_SIGN_UPLOAD_PRIVATE);
    assert_int_equal(vs_sign_key_load(path, true, &key), 0);
    snprintf(path, sizeof(path), "%s/%s", f->cfg.key_dir, VS_SIGN_UPLOAD_PUBLIC);
    assert_int_equal(vs_sign_key_load(path, false, &pub), 0);

    char *out = NULL;
    char err[256];
    assert_int_equal(vs_template_output(vs_template_default_out, strlen(vs_template_default_out),
                                        "wu_0", 77, "http://h/cgi-bin/file_upload_handler", key,
                                        &out, err, sizeof(err)),
                     0);
    struct vs_arena arena;
    vs_arena_init(&arena, 8192);
    struct vs_buf wrapped;
    vs_buf_init(&wrapped, VS_BUF_UNLIMITED);
    assert_int_equal(vs_buf_printf(&wrapped, "<x>%s</x>", out), 0);
    struct vs_xml_doc doc;
    assert_int_equal(vs_xml_parse(wrapped.data, wrapped.len, NULL, 0, &arena, &doc, NULL), 0);
    const struct vs_xml_node *fi = vs_xml_child(doc.root, "file_info");
    assert_string_equal(vs_xml_child_text(fi, "name"), "wu_0_r77_0");
    assert_string_equal(vs_xml_child_text(fi, "url"), "http://h/cgi-bin/file_upload_handler");
    assert_string_equal(vs_xml_child_text(fi, "max_nbytes"), "5000000");
    /* The upload certificate verifies with the public upload key. */
    const char *sig = vs_xml_child_text(fi, "xml_signature");
    assert_non_null(sig);
    assert_int_equal(vs_sign_verify_upload_cert(pub, "wu_0_r77_0", 5000000, sig, strlen(sig)), 0);
    assert_int_equal(vs_sign_verify_upload_cert(pub, "wu_0_r78_0", 5000000, sig, strlen(sig)),
                     VS_EAUTH);
    const struct vs_xml_node *ref = vs_xml_child(vs_xml_child(doc.root, "result"), "file_ref");
    assert_string_equal(vs_xml_child_text(ref, "file_name"), "wu_0_r77_0");
    assert_string_equal(vs_xml_child_text(ref, "open_name"), "out");
    assert_non_null(vs_xml_child(ref, "copy_file"));
    assert_null(strstr(out, "output_template"));
    vs_buf_cleanup(&wrapped);
    vs_arena_cleanup(&arena);
    vs_free(out);

    /* Without a key: no certificate. */
    assert_int_equal(vs_template_output(vs_template_default_out, strlen(vs_template_default_out),
                                        "r", 1, "http://u", NULL, &out, err, sizeof(err)),
                     0);
    assert_null(strstr(out, "xml_signature"));
    assert_non_null(strstr(out, "<name>r_r1_0</name>"));
    vs_free(out);

    /* Errors: no max_nbytes (the client would fail the output), no <result>. */
    const char *nomax = "<output_template><file_info><name><OUTFILE_0/></name></file_info>"
                        "<result/></output_template>";
    out = NULL;
    assert_int_equal(
        vs_template_output(nomax, strlen(nomax), "r", 1, "u", NULL, &out, err, sizeof(err)),
        VS_EPARSE);
    assert_null(out);
    assert_non_null(strstr(err, "max_nbytes"));
    const char *nores = "<output_template><file_info><name>n</name><max_nbytes>5</max_nbytes>"
                        "</file_info></output_template>";
    assert_int_equal(
        vs_template_output(nores, strlen(nores), "r", 1, "u", NULL, &out, err, sizeof(err)),
        VS_EPARSE);
    assert_int_equal(
        vs_template_output("<input_template/>", 17, "r", 1, "u", NULL, &out, err, sizeof(err)),
        VS_EPARSE);
    vs_sign_key_destroy(key);
    vs_sign_key_destroy(pub);
}

static void test_hier(void **state)
{
    (void)state;
    /* Values computed with BOINC's rule (hex digits 1..7 of md5(name), mod
     * fanout) by an independent implementation (python hashlib). */
    char rel[256];
    assert_int_equal(vs_project_hier_rel(1024, "upper_101_x86_64-pc-linux-gnu", rel, sizeof(rel)),
                     0);
    assert_string_equal(rel, "158/upper_101_x86_64-pc-linux-gnu");
    assert_int_equal(vs_project_hier_rel(1024, "in1.txt", rel, sizeof(rel)), 0);
    assert_string_equal(rel, "23f/in1.txt");
    assert_int_equal(vs_project_hier_rel(0, "in1.txt", rel, sizeof(rel)), 0);
    assert_string_equal(rel, "in1.txt");
    assert_int_equal(vs_project_hier_rel(1024, "in1.txt", rel, 5), VS_ELIMIT);
    assert_int_equal(vs_project_hier_rel(1024, "", rel, sizeof(rel)), VS_EINVAL);
}

static void test_config_roundtrip(void **state)
{
    struct project_fixture *f = *state;
    struct vs_project_config c = f->cfg;
    c.policy.limits.project.cpu.jobs = 7;
    c.enable_assignment_multi = false;
    c.uldl_dir_fanout = 256;
    assert_int_equal(vs_strlcpy(c.long_name, "A & B <project>", sizeof(c.long_name)), 0);
    assert_int_equal(vs_project_config_write(&c), 0);
    struct vs_project_config l;
    assert_int_equal(vs_project_config_load(f->dir, NULL, &l, NULL), 0);
    assert_string_equal(l.long_name, "A & B <project>");
    assert_string_equal(l.master_url, "http://127.0.0.1:8080/t/");
    assert_string_equal(l.download_url, "http://127.0.0.1:8080/t/download");
    assert_string_equal(l.upload_url, "http://127.0.0.1:8080/t/cgi-bin/file_upload_handler");
    assert_string_equal(l.store_url, f->cfg.store_url);
    assert_string_equal(l.download_dir, f->cfg.download_dir);
    assert_int_equal(l.policy.limits.project.cpu.jobs, 7);
    assert_int_equal(l.uldl_dir_fanout, 256);
    assert_false(l.enable_assignment_multi);
    assert_true(l.enable_assignment);
    char sched[600];
    assert_int_equal(vs_project_scheduler_url(&l, sched, sizeof(sched)), 0);
    assert_string_equal(sched, "http://127.0.0.1:8080/t/cgi-bin/cgi");

    /* BOINC's own style: <tag/> booleans, relative dirs, unknown tags. */
    pf_write(f->dir, "config.xml",
             "<boinc><config><enable_assignment/><download_dir>dl</download_dir>"
             "<shmem_key>0x1111</shmem_key><max_wus_in_progress>3</max_wus_in_progress>"
             "</config><daemons/></boinc>");
    assert_int_equal(vs_project_config_load(f->dir, NULL, &l, NULL), 0);
    assert_true(l.enable_assignment);
    assert_int_equal(l.policy.limits.project.cpu.jobs, 3);
    char want[1200];
    snprintf(want, sizeof(want), "%s/dl", f->dir);
    assert_string_equal(l.download_dir, want);

    pf_write(f->dir, "config.xml", "<boinc><config><uldl_dir_fanout>x</uldl_dir_fanout>");
    assert_int_equal(vs_project_config_load(f->dir, NULL, &l, NULL), VS_EPARSE); /* malformed XML */
    pf_write(f->dir, "config.xml",
             "<boinc><config><uldl_dir_fanout>x</uldl_dir_fanout></config></boinc>");
    struct vs_config_error ce;
    assert_int_equal(vs_project_config_load(f->dir, NULL, &l, &ce), VS_ECONFIG);
    assert_int_equal(ce.line, 1);
    assert_non_null(strstr(ce.msg, "uldl_dir_fanout"));
    pf_write(f->dir, "config.xml", "<boinc><something/></boinc>");
    assert_int_equal(vs_project_config_load(f->dir, NULL, &l, NULL), VS_ECONFIG);
    assert_int_equal(vs_project_config_load("/nonexistent/dir", NULL, &l, NULL), VS_ENOTFOUND);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_default_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rich_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_input_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output, setup, teardown),
        cmocka_unit_test(test_hier),
        cmocka_unit_test_setup_teardown(test_config_roundtrip, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
