/*
 * Differential tests of the server's one-pass request reader
 * (vs_proto_request_parse_direct / _fast) against the full tree parser
 * (vs_proto_request_parse), which stays the reference:
 *
 *  - every request captured from the real client (tests/golden/boinc and
 *    tests/data/boinc) and every GPU host's request written as that client
 *    writes it (tests/golden/gpu) is read by the direct reader (not by the
 *    fallback),
 *    and gives the same value for every field the scheduler reads (compared
 *    one by one) and for every other field (both requests written back give
 *    the same bytes);
 *  - documents in the reader's subset with awkward shapes (repeated
 *    elements, empty elements, prefs with entities, stderr with CDATA around
 *    a child, unknown subtrees) agree the same way;
 *  - documents outside the subset are declined by the direct reader, and the
 *    fast parse then answers exactly as the full parser, errors included.
 */
#include "vs_test.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/proto.h"
#include "volsched/str.h"

#define GOLDEN VS_SOURCE_DIR "/tests/golden/boinc"
#define DATA   VS_SOURCE_DIR "/tests/data/boinc"
#define GPU    VS_SOURCE_DIR "/tests/golden/gpu"

static void same_str(const char *a, const char *b, const char *what)
{
    if ((a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0))
        fail_msg("%s differs: '%s' vs '%s'", what, a ? a : "(null)", b ? b : "(null)");
}

#define SAME(x)     assert_true(memcmp(&(a)->x, &(b)->x, sizeof((a)->x)) == 0)
#define SAME_STR(x) same_str((a)->x, (b)->x, #x)

/* Every field src/server reads from a request, one by one. */
static void same_sched_fields(const struct vs_proto_request *a, const struct vs_proto_request *b)
{
    SAME_STR(authenticator);
    SAME(hostid);
    SAME(rpc_seqno);
    SAME(core_client_major_version);
    SAME(core_client_minor_version);
    SAME(core_client_release);
    SAME(dont_send_work);
    SAME(work_req_seconds);
    SAME(cpu_req_secs);
    SAME(cpu_req_instances);
    SAME(estimated_delay);
    SAME_STR(platform_name);
    SAME(n_alt_platforms);
    for (size_t i = 0; i < a->n_alt_platforms; i++)
        SAME_STR(alt_platforms[i]);
    SAME_STR(code_sign_key);
    SAME_STR(working_global_prefs);
    SAME_STR(global_prefs);
    SAME(time_stats.on_frac);
    SAME(time_stats.connected_frac);
    SAME(time_stats.active_frac);
    SAME(time_stats.gpu_active_frac);
    SAME(net_stats.bwup);
    SAME(net_stats.bwdown);
    SAME(host.timezone);
    SAME_STR(host.domain_name);
    SAME_STR(host.ip_addr);
    SAME_STR(host.host_cpid);
    SAME(host.p_ncpus);
    SAME_STR(host.p_vendor);
    SAME_STR(host.p_model);
    SAME(host.p_fpops);
    SAME(host.p_iops);
    SAME(host.p_membw);
    SAME(host.m_nbytes);
    SAME(host.m_swap);
    SAME(host.d_total);
    SAME(host.d_free);
    SAME_STR(host.os_name);
    SAME_STR(host.os_version);
    SAME(disk_usage);
    SAME(n_coprocs);
    for (size_t i = 0; i < a->n_coprocs; i++) {
        SAME_STR(coprocs[i].type);
        SAME(coprocs[i].count);
        SAME(coprocs[i].req_secs);
        SAME(coprocs[i].req_instances);
    }
    SAME(n_results);
    for (size_t i = 0; i < a->n_results; i++) {
        SAME_STR(results[i].name);
        SAME(results[i].exit_status);
        SAME(results[i].state);
        SAME(results[i].final_cpu_time);
        SAME(results[i].final_elapsed_time);
        SAME(results[i].final_peak_working_set_size);
        SAME(results[i].final_peak_swap_size);
        SAME(results[i].final_peak_disk_usage);
        SAME_STR(results[i].stderr_text);
        SAME(results[i].n_files);
        for (size_t j = 0; j < a->results[i].n_files; j++) {
            SAME_STR(results[i].files[j].name);
            SAME(results[i].files[j].nbytes);
            SAME(results[i].files[j].max_nbytes);
            SAME_STR(results[i].files[j].md5_cksum);
        }
    }
    SAME(n_app_versions);
    for (size_t i = 0; i < a->n_app_versions; i++) {
        SAME_STR(app_versions[i].app_name);
        SAME(app_versions[i].version_num);
        SAME_STR(app_versions[i].plan_class);
        SAME(app_versions[i].avg_ncpus);
        SAME(app_versions[i].flops);
    }
    SAME(n_other_results);
    for (size_t i = 0; i < a->n_other_results; i++) {
        SAME_STR(other_results[i].name);
        SAME(other_results[i].app_version);
        SAME_STR(other_results[i].plan_class);
    }
    SAME(has_in_progress_results);
    SAME(n_ip_results);
    for (size_t i = 0; i < a->n_ip_results; i++) {
        SAME_STR(ip_results[i].name);
        SAME(ip_results[i].report_deadline);
        SAME(ip_results[i].time_remaining);
        SAME(ip_results[i].avg_ncpus);
    }
}

/* Both requests written back give the same bytes (every other field). */
static void same_written(const struct vs_proto_request *a, const struct vs_proto_request *b)
{
    struct vs_buf wa, wb;
    vs_buf_init(&wa, VS_BUF_UNLIMITED);
    vs_buf_init(&wb, VS_BUF_UNLIMITED);
    assert_int_equal(vs_proto_request_write(a, &wa), 0);
    assert_int_equal(vs_proto_request_write(b, &wb), 0);
    assert_int_equal(wa.len, wb.len);
    assert_memory_equal(wa.data, wb.data, wa.len);
    vs_buf_cleanup(&wa);
    vs_buf_cleanup(&wb);
}

/* body must be read by the direct reader and agree with the full parser. */
static void check_direct(const char *body, size_t len, const char *what)
{
    struct vs_arena a;
    vs_arena_init(&a, 0);
    struct vs_proto_request full, direct, fast;
    struct vs_proto_error err;
    if (vs_proto_request_parse(body, len, &a, &full, &err) != 0)
        fail_msg("%s: full parser: %s", what, err.msg);
    if (vs_proto_request_parse_direct(body, len, &a, &direct) != 0)
        fail_msg("%s: declined by the direct reader", what);
    same_sched_fields(&full, &direct);
    same_written(&full, &direct);
    assert_int_equal(vs_proto_request_parse_fast(body, len, &a, &fast, &err), 0);
    assert_int_equal(err.code, 0);
    same_written(&full, &fast);
    vs_arena_cleanup(&a);
}

/* body must be declined by the direct reader; the fast parse answers as the full one. */
static void check_declined(const char *body, const char *what)
{
    size_t len = strlen(body);
    struct vs_arena a;
    vs_arena_init(&a, 0);
    struct vs_proto_request full, direct, fast;
    struct vs_proto_error e1, e2;
    if (vs_proto_request_parse_direct(body, len, &a, &direct) != VS_EUNSUPPORTED)
        fail_msg("%s: taken by the direct reader", what);
    int rc = vs_proto_request_parse(body, len, &a, &full, &e1);
    assert_int_equal(vs_proto_request_parse_fast(body, len, &a, &fast, &e2), rc);
    assert_int_equal(e1.code, e2.code);
    assert_string_equal(e1.msg, e2.msg);
    if (rc == 0) {
        same_sched_fields(&full, &fast);
        same_written(&full, &fast);
    }
    vs_arena_cleanup(&a);
}

static int check_dir(const char *dir)
{
    int count = 0;
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!vs_str_has_prefix(e->d_name, "sched_request"))
            continue;
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        size_t len;
        char *body = vs_test_slurp(path, &len);
        check_direct(body, len, path);
        vs_free(body);
        count++;
    }
    closedir(d);
    return count;
}

static void test_captured(void **state)
{
    (void)state;
    int count = check_dir(DATA);
    DIR *top = opendir(GOLDEN);
    assert_non_null(top);
    struct dirent *v;
    while ((v = readdir(top)) != NULL) {
        if (v->d_name[0] == '.' || strchr(v->d_name, '.'))
            continue;
        char dir[512];
        snprintf(dir, sizeof(dir), "%s/%s", GOLDEN, v->d_name);
        count += check_dir(dir);
    }
    closedir(top);
    assert_true(count >= 75 + 3); /* the 75 captured requests and the 3 in tests/data */
}

/* The GPU hosts' requests: taken by the direct reader, with what they hold. */
static void test_gpu(void **state)
{
    (void)state;
    assert_int_equal(check_dir(GPU), 5);
    static const struct {
        const char *file;
        size_t n_coprocs, n_msgs, n_results;
        const char *first_type, *first_name;
        double first_req_secs;
    } want[] = {
        {"sched_request_nvidia.xml", 1, 0, 0, "NVIDIA", "NVIDIA GeForce RTX 3060", 8640},
        {"sched_request_amd.xml", 1, 0, 0, "ATI", "AMD Radeon RX 6800 (gfx1030)", 4320},
        {"sched_request_intel.xml", 1, 0, 0, "intel_gpu", "Intel(R) UHD Graphics 630", 0},
        {"sched_request_all3.xml", 3, 0, 0, "NVIDIA", "NVIDIA GeForce RTX 3060", 8640},
        {"sched_request_trickle.xml", 1, 2, 2, "NVIDIA", "NVIDIA GeForce RTX 3060", 8640},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", GPU, want[i].file);
        size_t len;
        char *body = vs_test_slurp(path, &len);
        struct vs_arena a;
        vs_arena_init(&a, 0);
        struct vs_proto_request r;
        assert_int_equal(vs_proto_request_parse_direct(body, len, &a, &r), 0);
        assert_int_equal(r.n_coprocs, want[i].n_coprocs);
        assert_int_equal(r.n_msgs_from_host, want[i].n_msgs);
        assert_int_equal(r.n_results, want[i].n_results);
        assert_string_equal(r.coprocs[0].type, want[i].first_type);
        assert_int_equal(r.coprocs[0].count, 1);
        assert_true(r.coprocs[0].req_secs == want[i].first_req_secs);
        assert_true(r.coprocs[0].peak_flops > 1e11 && r.coprocs[0].available_ram > 1e9);
        /* the device's <name>, not the one inside <coproc_opencl> */
        assert_string_equal(r.coprocs[0].name, want[i].first_name);
        if (want[i].n_msgs) {
            assert_string_equal(r.msgs_from_host[1].result_name, "wu_1795969703_2_0");
            assert_string_equal(r.msgs_from_host[1].variety, "checkpoint");
            assert_string_equal(r.client_opaque, "\n<![CDATA[\n<session>7f3a</session>\n]]>\n");
            assert_non_null(strstr(r.results[0].stderr_text, "Gr\xc3\xb6\xc3\x9f"
                                                             "e"));
        }
        vs_arena_cleanup(&a);
        vs_free(body);
    }
}

#define REQ(body) "<scheduler_request>\n" body "</scheduler_request>\n"

static void direct_str(const char *body, const char *what)
{
    check_direct(body, strlen(body), what);
}

/* Shapes inside the subset whose meaning the tree parser fixes. */
static void test_subset_shapes(void **state)
{
    (void)state;
    direct_str(REQ("<hostid>3</hostid><hostid>4</hostid>"), "a repeated scalar: the last wins");
    direct_str(REQ("<dont_send_work/><authenticator/><platform_name></platform_name>"),
               "empty elements");
    direct_str(REQ("<authenticator>  ab c \n</authenticator ><rpc_seqno>10193.000000</rpc_seqno>"),
               "trimmed text, space in an end tag, an integer written with %f");
    direct_str(REQ("<alt_platform><x>1</x><name>a</name><name>b</name></alt_platform>"
                   "<alt_platform></alt_platform><alt_platform><name> c </name></alt_platform>"),
               "alt_platform: its first name, none, a trimmed one");
    direct_str(REQ("<working_global_preferences>text<other/><global_preferences>\n"
                   "<a>&lt;&amp;</a><b/>\n</global_preferences>"
                   "<global_preferences><c/></global_preferences>"
                   "</working_global_preferences>"
                   "<global_preferences><mod_time>1</mod_time></global_preferences>"),
               "prefs: the first inner subtree verbatim, entities and empty children");
    direct_str(REQ("<app_versions><app_version><app_name>a</app_name></app_version></app_versions>"
                   "<app_versions><app_version><app_name>b</app_name><version_num>7</version_num>"
                   "</app_version><junk><x/></junk><app_version/></app_versions>"
                   "<other_results><other_result><name>r</name></other_result>"
                   "<other_result><name>s</name><app_version>1</app_version></other_result>"
                   "</other_results><in_progress_results/>"),
               "lists: the last element replaces the list; other_result app_version default");
    direct_str(REQ("<result><name>r1</name><exit_status>-1</exit_status><state>3</state>"
                   "<stderr_out>\n<core_client_version>7.20.5</core_client_version>\n"
                   "<![CDATA[\n<stderr_txt>\nx & y ]] > <\n</stderr_txt>\n]]>\n"
                   "<core_client_version>9</core_client_version>tail\n</stderr_out>"
                   "<file_info><name>f</name><nbytes>12</nbytes></file_info>"
                   "<file_info><name>g</name></file_info></result>"
                   "<result><name>r2</name><stderr_out/></result>"),
               "results: stderr text around children and CDATA, output files");
    direct_str(
        REQ("<file_info><name>s</name><nbytes>1e3</nbytes><status>2</status></file_info>"
            "<time_stats><on_frac>0.5</on_frac>x<unknown><deep><er/></deep></unknown>"
            "</time_stats><host_info><p_ncpus>4</p_ncpus><p_fpops>1.5e9</p_fpops>"
            "</host_info><net_stats><bwup>1</bwup></net_stats><unknown_top>&quot;</unknown_top>"
            "<![CDATA[ top-level text ]]>"),
        "sticky files, unknown subtrees, text between children");
    direct_str("\n <scheduler_request></scheduler_request>\n\n", "an empty request, whitespace");
    direct_str(REQ("<coprocs><coproc_cuda><count>1</count><req_secs>5</req_secs>"
                   "<coproc_opencl><name>inner</name><peak_flops>9</peak_flops></coproc_opencl>"
                   "</coproc_cuda><junk><count>x</count></junk><coproc><count>2</count></coproc>"
                   "<coproc><count>3</count><type> apple_gpu </type><type>b</type>"
                   "<name>M1</name><name>M2</name></coproc><coproc_ati/>"
                   "<coproc_intel_gpu><type>ignored</type><count>1</count></coproc_intel_gpu>"
                   "</coprocs><host_info><coprocs><coproc_cuda><count>4</count></coproc_cuda>"
                   "</coprocs><coprocs><coproc_ati><count>5</count></coproc_ati></coprocs>"
                   "<p_ncpus>2</p_ncpus></host_info><coprocs/><coprocs><coproc><type/></coproc>"
                   "</coprocs>"),
               "coprocessors: named and generic, untyped dropped, blocks appended, host_info's "
               "first");
    direct_str(REQ("<msg_from_host><result_name>r</result_name><time>5</time>"
                   "<variety>v</variety><payload><x>1 &amp; 2</x></payload>free text"
                   "</msg_from_host><msg_from_host/><msg_from_host><msg_text> t </msg_text>"
                   "</msg_from_host>"),
               "trickle-up messages as 7.20.5 writes them, and with msg_text");
    direct_str(REQ("<client_opaque>\n<![CDATA[\nopaque <stuff> & \xc3\xa9\n]]>\n</client_opaque>"
                   "<client_opaque><a>x</a><b/></client_opaque ><client_opaque/>"),
               "client_opaque: the inner bytes verbatim, the last wins");
    direct_str(REQ("<client_opaque>first</client_opaque>"), "client_opaque: text");
    direct_str(REQ("<host_info><domain_name>caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80</domain_name>"
                   "</host_info><result><name>r\xc3\xa9</name><stderr_out>\n<![CDATA[\n"
                   "<stderr_txt>\nFehler: \xc3\xbc"
                   "berlauf \xe2\x80\x94 \xe6\x97\xa5\xe6\x9c\xac\n"
                   "</stderr_txt>\n]]>\n</stderr_out></result>"),
               "UTF-8 text and CDATA: names, app stderr");
}

/* Outside the subset, or malformed: the full parser answers, errors included. */
static void test_declined(void **state)
{
    (void)state;
    check_declined("<?xml version=\"1.0\"?>\n" REQ("<hostid>1</hostid>"), "XML declaration");
    check_declined(REQ("<hostid a=\"1\">1</hostid>"), "an attribute");
    check_declined(REQ("<!-- c --><hostid>1</hostid>"), "a comment");
    check_declined("<scheduler_request>\r\n<hostid>1</hostid>\r\n</scheduler_request>",
                   "CR LF line ends");
    check_declined(REQ("<host_info><p_model>A &amp; B</p_model></host_info>"),
                   "an entity in a stored field");
    check_declined(REQ("<host_info><domain_name>caf\xc3\xa9\xef\xbf\xbe</domain_name></host_info>"),
                   "U+FFFE, which XML does not allow (repaired by the full parser)");
    check_declined(REQ("<result><name>r</name><stderr_out><![CDATA[\xed\xa0\x80]]></stderr_out>"
                       "</result>"),
                   "a UTF-16 surrogate in CDATA");
    check_declined(REQ("<x\xc3\xa9>1</x\xc3\xa9>"), "a non-ASCII element name");
    check_declined(REQ("<host_info><domain_name>a\xff</domain_name></host_info>"),
                   "a byte that is not UTF-8 (repaired by the full parser)");
    check_declined(REQ("<client_opaque><a x=\"1\"/></client_opaque>"),
                   "an attribute inside client_opaque");
    check_declined(REQ("<coprocs><coproc><type>"
                       "\x01"
                       "</type></coproc></coprocs>"),
                   "a control byte in a coprocessor type");
    check_declined(REQ("<hostid><x/>1</hostid>"), "a child inside a field");
    check_declined(REQ("<hostid>x</hostid>"), "a malformed number");
    check_declined(REQ("<result><exit_status>0</exit_status></result>"), "a result without name");
    check_declined("<scheduler_request><hostid>1</hostid>", "unclosed");
    check_declined(REQ("<hostid>1</hostidx>"), "a mismatched end tag");
    check_declined(REQ("<a>]]></a>"), "]]> in text");
    check_declined(REQ("<a>&bogus;</a>"), "an unknown entity");
    check_declined("<scheduler_reply></scheduler_reply>", "another root");
    check_declined(REQ("") "<x/>", "a second root");
    check_declined("", "empty");
}

/* A long string and too many results: declined, and the full parser's limit error. */
static void test_declined_limits(void **state)
{
    (void)state;
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    assert_int_equal(vs_buf_puts(&b, "<scheduler_request><authenticator>"), 0);
    for (unsigned i = 0; i <= VS_PROTO_MAX_STRING; i++)
        assert_int_equal(vs_buf_puts(&b, "a"), 0);
    assert_int_equal(vs_buf_puts(&b, "</authenticator></scheduler_request>"), 0);
    check_declined(b.data, "a string over the limit");
    vs_buf_reset(&b);
    assert_int_equal(vs_buf_puts(&b, "<scheduler_request>"), 0);
    for (unsigned i = 0; i <= VS_PROTO_MAX_RESULTS; i++)
        assert_int_equal(vs_buf_printf(&b, "<result><name>r%u</name></result>", i), 0);
    assert_int_equal(vs_buf_puts(&b, "</scheduler_request>"), 0);
    check_declined(b.data, "too many results");
    vs_buf_reset(&b);
    assert_int_equal(vs_buf_puts(&b, "<scheduler_request>"), 0);
    for (unsigned i = 0; i < 40; i++)
        assert_int_equal(vs_buf_puts(&b, "<a>"), 0);
    for (unsigned i = 0; i < 40; i++)
        assert_int_equal(vs_buf_puts(&b, "</a>"), 0);
    assert_int_equal(vs_buf_puts(&b, "</scheduler_request>"), 0);
    check_declined(b.data, "nesting too deep");
    vs_buf_cleanup(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_captured),        cmocka_unit_test(test_gpu),
        cmocka_unit_test(test_subset_shapes),   cmocka_unit_test(test_declined),
        cmocka_unit_test(test_declined_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
