/*
 * Golden tests over every message the real BOINC 7.20.5 client exchanged
 * (../shared/protocol/samples, copied to tests/golden/boinc so the suite is
 * self-contained):
 *
 *  - every scheduler request parses; its top-level fields equal what a generic
 *    XML read of the same file says; writing the struct back loses no element
 *    (canonical comparison: every element path and value, numbers compared as
 *    numbers); parse -> write -> parse -> write is byte-stable; and a reply
 *    written for it (acks for every reported result) has the expected shape;
 *  - every scheduler reply parses and writes back without losing an element;
 *  - every upload header parses, its certificate verifies with the test key,
 *    and writing it back reproduces the client's bytes; every upload reply
 *    round-trips byte for byte;
 *  - the master page yields its scheduler URL.
 */
#include "vs_test.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto_int.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/proto.h"
#include "volsched/rng.h"
#include "volsched/sign.h"
#include "volsched/str.h"
#include "volsched/xml.h"

#define GOLDEN VS_SOURCE_DIR "/tests/golden/boinc"

/* Calls fn for every file in every variant directory whose name starts with prefix. */
static int for_each(const char *prefix, void (*fn)(const char *variant, const char *path))
{
    int count = 0;
    DIR *top = opendir(GOLDEN);
    assert_non_null(top);
    struct dirent *v;
    while ((v = readdir(top)) != NULL) {
        if (v->d_name[0] == '.')
            continue;
        char dir[512];
        snprintf(dir, sizeof(dir), "%s/%s", GOLDEN, v->d_name);
        DIR *d = opendir(dir);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (!vs_str_has_prefix(e->d_name, prefix))
                continue;
            char path[1024];
            snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
            fn(v->d_name, path);
            count++;
        }
        closedir(d);
    }
    closedir(top);
    return count;
}

/* ---- canonical form: one line per element path and value, sorted ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void canon_walk(const struct vs_xml_node *n, const char *path, struct vs_arena *a,
                       char ***lines, size_t *count, size_t *cap)
{
    char p[1024];
    snprintf(p, sizeof(p), "%s/%s", path, n->name);
    const char *t = vs_xml_text_trim(n, a);
    char val[64];
    double d;
    /* numbers compare as numbers: "1.0", "1.000000" and "1" are the same value */
    if (*t && vs_parse_double(t, &d) == 0) {
        snprintf(val, sizeof(val), "%.15g", d);
        t = val;
    }
    if (*count == *cap) {
        *cap = *cap ? *cap * 2 : 256;
        *lines = vs_xreallocarray(*lines, *cap, sizeof(char *));
    }
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    assert_int_equal(vs_buf_printf(&b, "%s=%s", p, t), 0);
    for (size_t i = 0; i < n->n_attrs; i++)
        assert_int_equal(vs_buf_printf(&b, " @%s=%s", n->attrs[i].name, n->attrs[i].value), 0);
    (*lines)[(*count)++] = vs_buf_take(&b, NULL);
    for (const struct vs_xml_node *c = n->child; c; c = c->next)
        canon_walk(c, p, a, lines, count, cap);
}

static void canon(const char *xml, size_t len, char ***out_lines, size_t *out_n)
{
    struct vs_arena a;
    vs_arena_init(&a, 0);
    struct vs_xml_doc doc;
    struct vs_xml_error err;
    int rc = vs_xml_parse(xml, len, NULL, VS_XML_REPAIR_BYTES, &a, &doc, &err);
    if (rc)
        fail_msg("canonical parse: %s", err.msg);
    char **lines = NULL;
    size_t n = 0, cap = 0;
    canon_walk(doc.root, "", &a, &lines, &n, &cap);
    qsort(lines, n, sizeof(char *), cmp_str);
    vs_arena_cleanup(&a);
    *out_lines = lines;
    *out_n = n;
}

static void free_lines(char **lines, size_t n)
{
    for (size_t i = 0; i < n; i++)
        vs_free(lines[i]);
    vs_free(lines);
}

/* Every element (path and value) of orig must be in written, and nothing extra. */
static void assert_same_canon(const char *what, const char *orig, size_t olen, const char *written,
                              size_t wlen)
{
    char **a, **b;
    size_t na, nb;
    canon(orig, olen, &a, &na);
    canon(written, wlen, &b, &nb);
    size_t i = 0, j = 0;
    int diffs = 0;
    while (i < na || j < nb) {
        int c = i >= na ? 1 : j >= nb ? -1 : strcmp(a[i], b[j]);
        if (c == 0) {
            i++, j++;
            continue;
        }
        if (diffs++ < 5)
            fprintf(stderr, "%s: %s %.200s\n", what, c < 0 ? "lost   " : "added  ",
                    c < 0 ? a[i] : b[j]);
        if (c < 0)
            i++;
        else
            j++;
    }
    free_lines(a, na);
    free_lines(b, nb);
    if (diffs)
        fail_msg("%s: %d element(s) differ after parse + write", what, diffs);
}

/* ---- scheduler requests ---- */

static const char *top_text(const char *xml, size_t len, struct vs_arena *a, const char *name)
{
    struct vs_xml_doc doc;
    if (vs_xml_parse(xml, len, NULL, VS_XML_REPAIR_BYTES, a, &doc, NULL) != 0)
        return NULL;
    const struct vs_xml_node *n = vs_xml_child(doc.root, name);
    return n ? vs_xml_text_trim(n, a) : NULL;
}

static size_t count_top(const char *xml, size_t len, struct vs_arena *a, const char *name)
{
    struct vs_xml_doc doc;
    if (vs_xml_parse(xml, len, NULL, VS_XML_REPAIR_BYTES, a, &doc, NULL) != 0)
        return 0;
    size_t k = 0;
    for (const struct vs_xml_node *n = doc.root->child; n; n = n->next)
        k += strcmp(n->name, name) == 0;
    return k;
}

static void check_request(const char *variant, const char *path)
{
    size_t len;
    char *body = vs_test_slurp(path, &len);
    struct vs_arena a;
    vs_arena_init(&a, 0);
    struct vs_proto_request req;
    struct vs_proto_error err;
    int rc = vs_proto_request_parse(body, len, &a, &req, &err);
    if (rc)
        fail_msg("%s: %s", path, err.msg);

    /* fields against an independent generic read of the same file */
    assert_string_equal(req.authenticator, top_text(body, len, &a, "authenticator"));
    assert_string_equal(req.platform_name, top_text(body, len, &a, "platform_name"));
    int64_t v;
    assert_int_equal(vs_parse_int64(top_text(body, len, &a, "hostid"), &v), 0);
    assert_int_equal(req.hostid, v);
    assert_int_equal(vs_parse_int64(top_text(body, len, &a, "rpc_seqno"), &v), 0);
    assert_int_equal(req.rpc_seqno, v);
    double d;
    assert_int_equal(vs_parse_double(top_text(body, len, &a, "cpu_req_secs"), &d), 0);
    assert_true(req.cpu_req_secs == d);
    assert_int_equal(req.n_results, count_top(body, len, &a, "result"));
    assert_int_equal(req.n_sticky_files, count_top(body, len, &a, "file_info"));
    assert_int_equal(req.n_alt_platforms, count_top(body, len, &a, "alt_platform"));
    assert_int_equal(req.core_client_major_version, 7);
    assert_int_equal(req.core_client_minor_version, 20);
    assert_int_equal(req.core_client_release, 5);
    assert_true(req.host.p_fpops > 0);
    assert_int_equal(req.host.p_ncpus, 2);
    assert_true(req.host.m_nbytes > 0 && req.host.d_free > 0);
    assert_string_equal(req.host.os_name, "Linux Debian");
    assert_true(req.time_stats.on_frac > 0 && req.time_stats.on_frac <= 1);
    assert_true(req.time_stats.connected_frac == -1);
    assert_non_null(req.working_global_prefs);
    assert_true(vs_str_has_prefix(req.working_global_prefs, "<global_preferences>"));
    assert_true(vs_str_has_suffix(req.working_global_prefs, "</global_preferences>"));
    for (size_t i = 0; i < req.n_results; i++) {
        const struct vs_proto_reported_result *r = &req.results[i];
        assert_non_null(r->name);
        assert_string_equal(r->core_client_version, "7.20.5");
        assert_non_null(r->stderr_text);
        assert_true(strstr(r->stderr_text, "<stderr_txt>") || strstr(r->stderr_text, "<message>"));
        assert_true(r->state >= 1 && r->state <= 7);
        for (size_t j = 0; j < r->n_files; j++) {
            assert_int_equal(strlen(r->files[j].md5_cksum), 32);
            assert_true(r->files[j].max_nbytes >= r->files[j].nbytes);
        }
    }
    for (size_t i = 0; i < req.n_other_results; i++)
        assert_true(req.other_results[i].app_version >= 0 &&
                    (size_t)req.other_results[i].app_version < req.n_app_versions);

    /* write back: every element survives */
    struct vs_buf w1, w2;
    vs_buf_init(&w1, VS_PROTO_MAX_REQUEST_BYTES);
    vs_buf_init(&w2, VS_PROTO_MAX_REQUEST_BYTES);
    assert_int_equal(vs_proto_request_write(&req, &w1), 0);
    assert_same_canon(path, body, len, w1.data, w1.len);
    /* struct -> request -> struct -> request is stable byte for byte */
    struct vs_proto_request again;
    rc = vs_proto_request_parse(w1.data, w1.len, &a, &again, &err);
    if (rc)
        fail_msg("%s rewritten: %s", path, err.msg);
    assert_int_equal(vs_proto_request_write(&again, &w2), 0);
    assert_string_equal(w1.data, w2.data);

    /* the reply a server writes for it: acks for every reported result */
    struct vs_proto_reply rep;
    memset(&rep, 0, sizeof(rep));
    const char *acks[VS_PROTO_MAX_RESULTS];
    for (size_t i = 0; i < req.n_results; i++)
        acks[i] = req.results[i].name;
    rep.result_acks = acks;
    rep.n_result_acks = req.n_results;
    rep.project_name = "Golden";
    struct vs_proto_message msg = {"low", "No work available"};
    rep.messages = &msg;
    rep.n_messages = 1;
    vs_buf_reset(&w1);
    assert_int_equal(vs_proto_reply_write(&rep, &w1), 0);
    assert_true(vs_str_has_prefix(w1.data, "<scheduler_reply>\n"));
    assert_true(vs_str_has_suffix(w1.data, "</scheduler_reply>\n"));
    struct vs_proto_reply back;
    assert_int_equal(vs_proto_reply_parse(w1.data, w1.len, &a, &back, &err), 0);
    assert_int_equal(back.n_result_acks, req.n_results);
    for (size_t i = 0; i < req.n_results; i++) {
        char want[512];
        snprintf(want, sizeof(want), "<result_ack>\n    <name>%s</name>\n</result_ack>\n",
                 req.results[i].name);
        assert_non_null(strstr(w1.data, want));
        assert_string_equal(back.result_acks[i], req.results[i].name);
    }
    assert_non_null(strstr(w1.data, "<message priority=\"low\">No work available</message>\n"));
    (void)variant;
    vs_buf_cleanup(&w1);
    vs_buf_cleanup(&w2);
    vs_arena_cleanup(&a);
    vs_free(body);
}

static void test_requests(void **state)
{
    (void)state;
    int n = for_each("sched_request_", check_request);
    assert_true(n >= 75);
}

/* Specific facts of chosen captures. */
static void test_request_facts(void **state)
{
    (void)state;
    struct vs_arena a;
    vs_arena_init(&a, 0);
    struct vs_proto_request r;
    struct vs_proto_error err;
    size_t len;
    char *b = vs_test_slurp(GOLDEN "/signed/sched_request_04.xml", &len);
    assert_int_equal(vs_proto_request_parse(b, len, &a, &r, &err), 0);
    assert_string_equal(r.authenticator, "0123456789abcdef0123456789abcdef");
    assert_int_equal(r.hostid, 7);
    assert_int_equal(r.rpc_seqno, 2);
    assert_true(r.cpu_req_secs == 532.8 && r.work_req_seconds == 532.8);
    assert_true(r.cpu_req_instances == 2);
    assert_true(vs_proto_request_wants_work(&r));
    assert_string_equal(r.alt_platforms[0], "i686-pc-linux-gnu");
    assert_true(vs_str_has_prefix(r.code_sign_key, "1024\nc6c93afb"));
    assert_true(vs_str_has_suffix(r.code_sign_key, "00010001\n."));
    assert_int_equal(r.n_results, 2);
    assert_string_equal(r.results[0].name, "wu_1795969703_1_0");
    assert_int_equal(r.results[0].state, 5);
    assert_int_equal(r.results[0].exit_status, 0);
    assert_true(r.results[0].final_elapsed_time == 3.025320);
    assert_true(r.results[0].final_peak_working_set_size == 4165632);
    assert_true(r.results[1].final_peak_working_set_size == 0); /* absent in the capture */
    assert_int_equal(r.results[0].app_version_num, 101);
    assert_int_equal(r.results[0].n_files, 1);
    assert_string_equal(r.results[0].files[0].md5_cksum, "e0ba10b799d41f78e31204f5472c9751");
    assert_true(r.results[0].files[0].nbytes == 10193);
    assert_string_equal(r.results[0].files[0].upload_url,
                        "http://127.0.0.1:31480/proj/file_upload_handler");
    assert_non_null(strstr(r.results[0].stderr_text, "called boinc_finish(0)"));
    assert_int_equal(r.n_app_versions, 1);
    assert_string_equal(r.app_versions[0].app_name, "uppercase");
    assert_int_equal(r.app_versions[0].version_num, 101);
    assert_string_equal(r.app_versions[0].api_version, "7.20.5");
    assert_string_equal(r.cross_project_id, "");
    assert_true(r.disk_usage.d_project_share > 9e10);
    assert_true(r.net_stats.bwdown > 1e6);
    assert_true(r.time_stats.gpu_active_frac == 1);
    assert_non_null(strstr(r.host.p_features, "avx512f"));
    vs_free(b);

    /* first RPC: no key yet, hostid 0, 1 s of CPU work */
    b = vs_test_slurp(GOLDEN "/signed/sched_request_01.xml", &len);
    assert_int_equal(vs_proto_request_parse(b, len, &a, &r, &err), 0);
    assert_null(r.code_sign_key);
    assert_int_equal(r.hostid, 0);
    assert_true(r.cpu_req_secs == 1.0);
    vs_free(b);

    /* anonymous platform */
    b = vs_test_slurp(GOLDEN "/anon/sched_request_02.xml", &len);
    assert_int_equal(vs_proto_request_parse(b, len, &a, &r, &err), 0);
    assert_string_equal(r.platform_name, "anonymous");
    assert_int_equal(r.n_alt_platforms, 0);
    assert_int_equal(r.n_app_versions, 1);
    assert_int_equal(r.n_other_results, 1);
    assert_string_equal(r.other_results[0].name, "wu_1795968650_1_0");
    vs_free(b);

    /* locality: the sticky file list */
    b = vs_test_slurp(GOLDEN "/sticky/sched_request_03.xml", &len);
    assert_int_equal(vs_proto_request_parse(b, len, &a, &r, &err), 0);
    assert_int_equal(r.n_sticky_files, 1);
    assert_string_equal(r.sticky_files[0].name, "in_1795969060_1.txt");
    assert_true(r.sticky_files[0].nbytes == 37);
    assert_int_equal(r.sticky_files[0].status, 1);
    vs_free(b);

    /* an errored result: state 3, exit 0, the client's message inside the CDATA */
    b = vs_test_slurp(GOLDEN "/plain_nocopy/sched_request_03.xml", &len);
    assert_int_equal(vs_proto_request_parse(b, len, &a, &r, &err), 0);
    assert_int_equal(r.n_results, 1);
    assert_int_equal(r.results[0].state, 3);
    assert_int_equal(r.results[0].exit_status, 0);
    assert_int_equal(r.results[0].n_files, 0);
    assert_non_null(strstr(r.results[0].stderr_text, "<file_xfer_error>"));
    vs_free(b);
    vs_arena_cleanup(&a);
}

/* ---- scheduler replies ---- */

static void check_reply(const char *variant, const char *path)
{
    size_t len;
    char *body = vs_test_slurp(path, &len);
    struct vs_arena a;
    vs_arena_init(&a, 0);
    struct vs_proto_reply rep;
    struct vs_proto_error err;
    int rc = vs_proto_reply_parse(body, len, &a, &rep, &err);
    if (rc)
        fail_msg("%s: %s", path, err.msg);
    struct vs_buf w1, w2;
    vs_buf_init(&w1, VS_PROTO_MAX_REPLY_BYTES);
    vs_buf_init(&w2, VS_PROTO_MAX_REPLY_BYTES);
    assert_int_equal(vs_proto_reply_write(&rep, &w1), 0);
    assert_same_canon(path, body, len, w1.data, w1.len);
    struct vs_proto_reply again;
    assert_int_equal(vs_proto_reply_parse(w1.data, w1.len, &a, &again, &err), 0);
    assert_int_equal(vs_proto_reply_write(&again, &w2), 0);
    assert_string_equal(w1.data, w2.data);
    /* every app file we sent is signed, and every output file has max_nbytes */
    for (size_t i = 0; i < rep.n_file_infos; i++) {
        const struct vs_proto_file_info *f = &rep.file_infos[i];
        if (f->executable && strcmp(variant, "unsigned_rejected") != 0 &&
            strcmp(variant, "anon") != 0)
            assert_non_null(f->file_signature);
        if (f->xml_signature)
            assert_true(f->max_nbytes > 0);
    }
    vs_buf_cleanup(&w1);
    vs_buf_cleanup(&w2);
    vs_arena_cleanup(&a);
    vs_free(body);
}

static void test_replies(void **state)
{
    (void)state;
    int n = for_each("sched_reply_", check_reply);
    assert_true(n >= 75);
}

static void test_reply_facts(void **state)
{
    (void)state;
    struct vs_arena a;
    vs_arena_init(&a, 0);
    struct vs_proto_reply r;
    struct vs_proto_error err;
    size_t len;
    char *b = vs_test_slurp(GOLDEN "/signed/sched_reply_01.xml", &len);
    assert_int_equal(vs_proto_reply_parse(b, len, &a, &r, &err), 0);
    assert_int_equal(r.scheduler_version, 720);
    assert_string_equal(r.master_url, "http://127.0.0.1:31480/proj/");
    assert_string_equal(r.project_name, "Mock Interop Project");
    assert_true(r.has_user_info);
    assert_int_equal(r.userid, 1);
    assert_string_equal(r.user_name, "tester");
    assert_int_equal(r.hostid, 7);
    assert_int_equal(r.n_apps, 1);
    assert_string_equal(r.apps[0].user_friendly_name, "Uppercase test app");
    assert_int_equal(r.n_file_infos, 3);
    assert_true(r.file_infos[0].executable);
    assert_int_equal(r.file_infos[0].n_urls, 1);
    assert_int_equal(r.file_infos[0].urls[0].kind, VS_PROTO_URL);
    assert_true(r.file_infos[0].nbytes == 16824);
    assert_int_equal(r.n_app_versions, 1);
    assert_int_equal(r.app_versions[0].n_file_refs, 1);
    assert_true(r.app_versions[0].file_refs[0].main_program);
    assert_int_equal(r.n_workunits, 1);
    assert_true(r.workunits[0].rsc_fpops_est == 5e9);
    assert_string_equal(r.workunits[0].file_refs[0].open_name, "in");
    assert_int_equal(r.n_results, 1);
    assert_true(r.results[0].report_deadline == 1796574517);
    assert_string_equal(r.results[0].plan_class, "");
    /* the code-sign key and the app signature verify with the test key */
    struct vs_sign_key *pub = NULL;
    assert_int_equal(vs_sign_key_parse(r.code_sign_key, strlen(r.code_sign_key), false, &pub), 0);
    assert_int_equal(vs_sign_verify_md5hex(pub, r.file_infos[0].md5_cksum,
                                           r.file_infos[0].file_signature,
                                           strlen(r.file_infos[0].file_signature)),
                     0);
    assert_int_equal(vs_sign_verify_upload_cert(
                         pub, r.file_infos[2].name, r.file_infos[2].max_nbytes,
                         r.file_infos[2].xml_signature, strlen(r.file_infos[2].xml_signature)),
                     0);
    vs_sign_key_destroy(pub);
    vs_free(b);

    b = vs_test_slurp(GOLDEN "/sticky/sched_reply_03.xml", &len);
    assert_int_equal(vs_proto_reply_parse(b, len, &a, &r, &err), 0);
    assert_int_equal(r.n_delete_file_infos, 1);
    assert_string_equal(r.delete_file_infos[0], "in_1795969060_1.txt");
    assert_int_equal(r.n_result_acks, 1);
    assert_string_equal(r.messages[0].priority, "low");
    assert_string_equal(r.messages[0].text, "No work available");
    vs_free(b);

    b = vs_test_slurp(GOLDEN "/upload_url_tag/sched_reply_01.xml", &len);
    assert_int_equal(vs_proto_reply_parse(b, len, &a, &r, &err), 0);
    bool seen = false;
    for (size_t i = 0; i < r.n_file_infos; i++)
        for (size_t j = 0; j < r.file_infos[i].n_urls; j++)
            seen |= r.file_infos[i].urls[j].kind == VS_PROTO_URL_UPLOAD;
    assert_true(seen);
    vs_free(b);

    /* the client's rules: text before the start tag skipped, end tag required */
    const char *pre = "Content-type: text/xml\n\n<?xml version=\"1.0\"?>\n"
                      "<scheduler_reply><request_delay>60</request_delay></scheduler_reply>\n";
    assert_int_equal(vs_proto_reply_parse(pre, strlen(pre), &a, &r, &err), 0);
    assert_true(r.request_delay == 60);
    const char *open = "<scheduler_reply><request_delay>60</request_delay>";
    assert_int_equal(vs_proto_reply_parse(open, strlen(open), &a, &r, &err), VS_EPARSE);
    assert_non_null(strstr(err.msg, "close tag"));
    vs_arena_cleanup(&a);
}

/* ---- upload handler ---- */

static struct vs_sign_key *test_pub;

static void check_upload_request(const char *variant, const char *path)
{
    (void)variant;
    size_t len;
    char *file = vs_test_slurp(path, &len);
    const char *body = strstr(file, "<data_server_request>");
    assert_non_null(body);
    size_t blen = len - (size_t)(body - file);
    struct vs_arena a;
    vs_arena_init(&a, 0);
    struct vs_proto_upload_request u;
    struct vs_proto_error err;
    int rc = vs_proto_upload_parse(body, blen, &a, &u, &err);
    if (rc)
        fail_msg("%s: %s", path, err.msg);
    assert_int_equal(u.core_client_major_version, 7);
    assert_int_equal(u.core_client_release, 5);
    assert_true(vs_str_has_prefix(u.name, "wu_"));
    if (u.kind == VS_PROTO_UPLOAD_FILE) {
        assert_int_equal(u.data_offset, blen); /* the capture stops at "<data>\n" */
        assert_int_equal(strlen(u.md5_cksum), 32);
        assert_true(u.offset >= 0 && u.offset <= u.nbytes);
        assert_true(u.max_nbytes >= (double)u.nbytes);
        if (*u.xml_signature)
            assert_int_equal(vs_sign_verify_upload_cert(test_pub, u.name, u.max_nbytes,
                                                        u.xml_signature, strlen(u.xml_signature)),
                             0);
    } else {
        assert_int_equal(u.kind, VS_PROTO_UPLOAD_GET_FILE_SIZE);
    }
    /* the client side writes the same bytes the real client sent */
    struct vs_buf w;
    vs_buf_init(&w, VS_PROTO_MAX_UPLOAD_HEADER);
    assert_int_equal(vs_proto_upload_write_header(&u, &w), 0);
    assert_int_equal(w.len, blen);
    assert_memory_equal(w.data, body, blen);
    vs_buf_cleanup(&w);
    vs_arena_cleanup(&a);
    vs_free(file);
}

static void check_upload_reply(const char *variant, const char *path)
{
    (void)variant;
    size_t len;
    char *body = vs_test_slurp(path, &len);
    struct vs_arena a;
    vs_arena_init(&a, 0);
    struct vs_proto_upload_reply r;
    struct vs_proto_error err;
    assert_int_equal(vs_proto_upload_reply_parse(body, len, &a, &r, &err), 0);
    struct vs_buf w;
    vs_buf_init(&w, 4096);
    assert_int_equal(vs_proto_upload_reply_write(&r, &w), 0);
    assert_string_equal(w.data, body);
    if (r.status == 0 && r.has_file_size)
        assert_true(r.file_size >= 0);
    vs_buf_cleanup(&w);
    vs_arena_cleanup(&a);
    vs_free(body);
}

static void test_upload(void **state)
{
    (void)state;
    assert_int_equal(
        vs_sign_key_load(VS_SOURCE_DIR "/tests/golden/signing/public_key.txt", false, &test_pub),
        0);
    assert_true(for_each("upload_request_", check_upload_request) >= 40);
    assert_true(for_each("upload_reply_", check_upload_reply) >= 40);
    vs_sign_key_destroy(test_pub);
    test_pub = NULL;

    /* resume: the size query answer and the upload from an offset */
    struct vs_arena a;
    vs_arena_init(&a, 0);
    size_t len;
    char *file = vs_test_slurp(GOLDEN "/resume_upload/upload_request_04_header.txt", &len);
    const char *body = strstr(file, "<data_server_request>");
    struct vs_proto_upload_request u;
    struct vs_proto_error err;
    assert_int_equal(vs_proto_upload_parse(body, strlen(body), &a, &u, &err), 0);
    assert_int_equal(u.offset, 1523456);
    assert_int_equal(u.nbytes, 3046912);
    assert_true(u.max_nbytes == 5e6);
    vs_free(file);
    /* raw bytes after the header stay out of the parse */
    const char *up = "<data_server_request>\n<file_upload>\n<file_info>\n<name>f</name>\n"
                     "<xml_signature>\n</xml_signature>\n<max_nbytes>10</max_nbytes>\n"
                     "</file_info>\n<nbytes>4</nbytes>\n"
                     "<md5_cksum>00112233445566778899aabbccddeeff</md5_cksum>\n<offset>0</offset>\n"
                     "<data>\n<&\x00\xff";
    size_t ulen = strlen(up) + 2; /* the NUL and 0xff */
    assert_int_equal(vs_proto_upload_parse(up, ulen, &a, &u, &err), 0);
    assert_int_equal(u.kind, VS_PROTO_UPLOAD_FILE);
    assert_int_equal(ulen - u.data_offset, 4);
    assert_string_equal(u.xml_signature, "");
    vs_arena_cleanup(&a);
}

static void test_master_page(void **state)
{
    (void)state;
    struct vs_arena a;
    vs_arena_init(&a, 0);
    size_t len;
    char *page = vs_test_slurp(GOLDEN "/master_page.html", &len);
    const char **urls;
    size_t n;
    assert_int_equal(vs_proto_master_urls_parse(page, len, &a, &urls, &n), 0);
    assert_int_equal(n, 1); /* the link and the commented <scheduler> are merged */
    assert_string_equal(urls[0], "http://127.0.0.1:31480/proj/cgi");
    vs_free(page);
    struct vs_buf b;
    vs_buf_init(&b, 4096);
    const char *mine[] = {"http://127.0.0.1:8080/p/sched", "http://10.0.0.1/p/sched"};
    assert_int_equal(vs_proto_master_page_write("A & B", mine, 2, &b), 0);
    assert_non_null(strstr(b.data, "<link rel=\"boinc_scheduler\" "
                                   "href=\"http://127.0.0.1:8080/p/sched\">\n"));
    assert_non_null(strstr(b.data, "<title>A &amp; B</title>"));
    assert_int_equal(vs_proto_master_urls_parse(b.data, b.len, &a, &urls, &n), 0);
    assert_int_equal(n, 2);
    assert_string_equal(urls[1], mine[1]);
    const char *bad[] = {"http://x/\"><script>"};
    vs_buf_reset(&b);
    assert_int_equal(vs_proto_master_page_write("p", bad, 1, &b), VS_EINVAL);
    vs_buf_cleanup(&b);
    vs_arena_cleanup(&a);
}

/* The fast number path gives exactly what strtod gives. */
static void test_numbers(void **state)
{
    (void)state;
    static const char *const fixed[] = {"0",
                                        "-0",
                                        "1.000000",
                                        "1795969704.142258",
                                        "92371822247.936005",
                                        "0.945130",
                                        "9007199254740993",
                                        "9007199254740992",
                                        "-3.25",
                                        "5.000000e+09",
                                        "1e-9",
                                        ".5",
                                        "5.",
                                        "1..2",
                                        "",
                                        "-",
                                        "12a",
                                        " 7 ",
                                        "0x10",
                                        "0.0000000000000000000001",
                                        "123456789012345678901234"};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        double a = -1, b = -1;
        int ra = vs_proto__number(fixed[i], strlen(fixed[i]), &a);
        int rb = vs_parse_double(fixed[i], &b);
        assert_int_equal(ra, rb);
        if (ra == 0)
            assert_memory_equal(&a, &b, sizeof(a));
    }
    struct vs_rng rng;
    vs_rng_seed(&rng, 42);
    for (int i = 0; i < 200000; i++) {
        char tmp[64];
        int ip = (int)vs_rng_below(&rng, 18), fp = (int)vs_rng_below(&rng, 20);
        size_t k = 0;
        if (vs_rng_below(&rng, 4) == 0)
            tmp[k++] = '-';
        for (int d = 0; d <= ip; d++)
            tmp[k++] = (char)('0' + vs_rng_below(&rng, 10));
        if (fp) {
            tmp[k++] = '.';
            for (int d = 0; d < fp; d++)
                tmp[k++] = (char)('0' + vs_rng_below(&rng, 10));
        }
        tmp[k] = '\0';
        double a, b;
        assert_int_equal(vs_proto__number(tmp, k, &a), 0);
        assert_int_equal(vs_parse_double(tmp, &b), 0);
        if (memcmp(&a, &b, sizeof(a)) != 0)
            fail_msg("%s: fast %.17g, strtod %.17g", tmp, a, b);
    }
}

/* Every element the library models, from hand-written messages. */
static void test_synthetic(void **state)
{
    (void)state;
    check_request("synthetic", VS_SOURCE_DIR "/tests/golden/synthetic/sched_request_full.xml");
    check_reply("synthetic", VS_SOURCE_DIR "/tests/golden/synthetic/sched_reply_full.xml");

    struct vs_arena a;
    vs_arena_init(&a, 0);
    size_t len;
    char *b = vs_test_slurp(VS_SOURCE_DIR "/tests/golden/synthetic/sched_request_full.xml", &len);
    struct vs_proto_request r;
    struct vs_proto_error err;
    assert_int_equal(vs_proto_request_parse(b, len, &a, &r, &err), 0);
    assert_int_equal(r.n_coprocs, 2);
    assert_string_equal(r.coprocs[0].type, "NVIDIA");
    assert_string_equal(r.coprocs[0].name, "NVIDIA GeForce RTX 3060");
    assert_true(r.coprocs[0].req_secs == 3600 && r.coprocs[0].peak_flops == 12e12);
    assert_string_equal(r.coprocs[1].type, "apple_gpu");
    assert_int_equal(r.coprocs[1].count, 2);
    assert_string_equal(r.host.p_model, "Intel(R) Core(TM) i7 & friends");
    assert_true(r.allow_multiple_clients && r.sandbox && !r.dont_send_work);
    assert_int_equal(r.n_results, 1);
    assert_int_equal(r.results[0].n_files, 2);
    assert_null(r.results[0].files[1].upload_url);
    assert_non_null(strstr(r.results[0].stderr_text, "app wrote </result> and ]] and & and"));
    assert_int_equal(r.n_msgs_from_host, 1);
    assert_string_equal(r.msgs_from_host[0].variety, "progress");
    assert_int_equal(r.n_sticky_files, 2);
    assert_true(r.has_in_progress_results);
    assert_int_equal(r.n_ip_results, 2);
    assert_true(r.ip_results[1].ncudas == 1 && r.ip_results[1].report_deadline == 1796574600.5);
    assert_string_equal(r.other_results[1].plan_class, "cuda");
    assert_true(vs_str_has_prefix(r.global_prefs, "<global_preferences>"));
    assert_non_null(strstr(r.global_prefs, "<venue name=\"home\">"));
    assert_string_equal(r.client_opaque, "<a>opaque</a><b x=\"1\"/>");
    assert_string_equal(r.client_brand, "volsched");
    assert_string_equal(r.host.virtualbox_version, "7.0.10");
    vs_free(b);

    b = vs_test_slurp(VS_SOURCE_DIR "/tests/golden/synthetic/sched_reply_full.xml", &len);
    struct vs_proto_reply p;
    assert_int_equal(vs_proto_reply_parse(b, len, &a, &p, &err), 0);
    assert_string_equal(p.project_name, "Full & Complete");
    assert_int_equal(p.teamid, 3);
    assert_true(p.next_rpc_delay == 3600 && p.request_delay == 60);
    assert_true(p.dont_use_dcf && p.send_full_workload && p.message_ack);
    assert_false(p.project_is_down);
    assert_true(p.no_cuda_apps && !p.no_cpu_apps && !p.no_ati_apps);
    assert_int_equal(p.n_no_rsc_apps, 2);
    assert_int_equal(p.file_infos[0].n_urls, 3);
    assert_int_equal(p.file_infos[0].urls[1].kind, VS_PROTO_URL_DOWNLOAD);
    assert_int_equal(p.file_infos[0].urls[2].kind, VS_PROTO_URL_GZIPPED);
    assert_true(p.file_infos[1].sticky && p.file_infos[1].sticky_lifetime == 864000);
    assert_string_equal(p.app_versions[0].coproc_type, "NVIDIA");
    assert_true(p.app_versions[0].coproc_count == 1);
    assert_true(p.app_versions[0].file_refs[0].copy_file);
    assert_true(p.results[0].report_immediately);
    assert_true(p.results[0].file_refs[0].optional);
    assert_string_equal(p.result_aborts[0], "wu_7_0");
    assert_string_equal(p.result_aborts_if_not_started[0], "wu_8_0");
    assert_string_equal(p.messages[0].priority, "notice");
    assert_string_equal(p.messages[0].text, "Welcome <alice>");
    assert_true(vs_str_has_prefix(p.project_prefs, "<project_preferences>"));
    vs_free(b);
    vs_arena_cleanup(&a);
}

/* Clients add fields: unknown elements anywhere are skipped, not fatal. */
static void test_unknown_elements(void **state)
{
    (void)state;
    struct vs_arena a;
    vs_arena_init(&a, 0);
    struct vs_proto_request r;
    struct vs_proto_error err;
    const char *req = "<scheduler_request><future_field>x<deep><er/></deep></future_field>"
                      "<hostid>5</hostid><host_info><new_thing>1</new_thing><p_ncpus>8</p_ncpus>"
                      "</host_info><result><name>r1</name><new_result_field>9</new_result_field>"
                      "</result></scheduler_request>";
    assert_int_equal(vs_proto_request_parse(req, strlen(req), &a, &r, &err), 0);
    assert_int_equal(r.hostid, 5);
    assert_int_equal(r.host.p_ncpus, 8);
    assert_int_equal(r.n_results, 1);
    struct vs_proto_reply p;
    const char *rep = "<scheduler_reply><brand_new/><hostid>9</hostid>"
                      "<app><name>x</name><icon>y</icon></app></scheduler_reply>";
    assert_int_equal(vs_proto_reply_parse(rep, strlen(rep), &a, &p, &err), 0);
    assert_int_equal(p.hostid, 9);
    assert_string_equal(p.apps[0].name, "x");
    vs_arena_cleanup(&a);
}

static int parse_req(struct vs_arena *a, const struct vs_buf *b, struct vs_proto_error *err)
{
    struct vs_proto_request r;
    return vs_proto_request_parse(b->data, b->len, a, &r, err);
}

/* Every limit ends in a clear error, never a crash or a silent cut. */
static void test_limits(void **state)
{
    (void)state;
    struct vs_arena a;
    vs_arena_init(&a, 0);
    struct vs_proto_error err;
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);

    /* number of reported results */
    assert_int_equal(vs_buf_puts(&b, "<scheduler_request>"), 0);
    for (unsigned i = 0; i <= VS_PROTO_MAX_RESULTS; i++)
        assert_int_equal(vs_buf_printf(&b, "<result><name>r%u</name></result>", i), 0);
    assert_int_equal(vs_buf_puts(&b, "</scheduler_request>"), 0);
    assert_int_equal(parse_req(&a, &b, &err), VS_ELIMIT);
    assert_non_null(strstr(err.msg, "reported results"));

    /* string length */
    vs_buf_reset(&b);
    assert_int_equal(vs_buf_puts(&b, "<scheduler_request><authenticator>"), 0);
    for (unsigned i = 0; i <= VS_PROTO_MAX_STRING; i++)
        assert_int_equal(vs_buf_puts(&b, "a"), 0);
    assert_int_equal(vs_buf_puts(&b, "</authenticator></scheduler_request>"), 0);
    assert_int_equal(parse_req(&a, &b, &err), VS_ELIMIT);
    assert_non_null(strstr(err.msg, "<authenticator> longer than"));

    /* body size */
    vs_buf_reset(&b);
    assert_int_equal(vs_buf_puts(&b, "<scheduler_request>"), 0);
    while (b.len <= VS_PROTO_MAX_REQUEST_BYTES)
        assert_int_equal(
            vs_buf_puts(&b, "<x>yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy</x>"), 0);
    assert_int_equal(vs_buf_puts(&b, "</scheduler_request>"), 0);
    assert_int_equal(parse_req(&a, &b, &err), VS_ELIMIT);
    assert_non_null(strstr(err.msg, "exceeds the limit"));

    /* depth */
    vs_buf_reset(&b);
    for (int i = 0; i < 40; i++)
        assert_int_equal(vs_buf_puts(&b, i ? "<a>" : "<scheduler_request>"), 0);
    for (int i = 39; i >= 0; i--)
        assert_int_equal(vs_buf_puts(&b, i ? "</a>" : "</scheduler_request>"), 0);
    assert_int_equal(parse_req(&a, &b, &err), VS_ELIMIT);
    assert_non_null(strstr(err.msg, "nesting"));

    /* element count */
    vs_buf_reset(&b);
    assert_int_equal(vs_buf_puts(&b, "<scheduler_request>"), 0);
    for (unsigned i = 0; i < VS_XML_MAX_ELEMENTS; i++)
        assert_int_equal(vs_buf_puts(&b, "<x/>"), 0);
    assert_int_equal(vs_buf_puts(&b, "</scheduler_request>"), 0);
    assert_int_equal(parse_req(&a, &b, &err), VS_ELIMIT);
    assert_non_null(strstr(err.msg, "elements"));

    /* DOCTYPE and entities */
    vs_buf_reset(&b);
    assert_int_equal(vs_buf_puts(&b, "<!DOCTYPE scheduler_request [<!ENTITY x \"y\">]>"
                                     "<scheduler_request><hostid>&x;</hostid></scheduler_request>"),
                     0);
    assert_int_equal(parse_req(&a, &b, &err), VS_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "DOCTYPE"));

    /* malformed: wrong root, bad number, truncated */
    vs_buf_reset(&b);
    assert_int_equal(vs_buf_puts(&b, "<scheduler_reply/>"), 0);
    assert_int_equal(parse_req(&a, &b, &err), VS_EPARSE);
    assert_non_null(strstr(err.msg, "not <scheduler_request>"));
    vs_buf_reset(&b);
    assert_int_equal(vs_buf_puts(&b, "<scheduler_request><hostid>7x</hostid></scheduler_request>"),
                     0);
    assert_int_equal(parse_req(&a, &b, &err), VS_EPARSE);
    assert_non_null(strstr(err.msg, "<hostid>"));
    vs_buf_reset(&b);
    assert_int_equal(vs_buf_puts(&b, "<scheduler_request><hostid>7</hostid>"), 0);
    assert_int_equal(parse_req(&a, &b, &err), VS_EPARSE);

    /* a huge stderr is cut (on a UTF-8 boundary), not refused: the result must be acked */
    vs_buf_reset(&b);
    assert_int_equal(vs_buf_puts(&b, "<scheduler_request><result><name>r</name><stderr_out>"
                                     "<![CDATA[x"),
                     0);
    for (unsigned i = 0; i < VS_PROTO_MAX_STDERR; i += 2)
        assert_int_equal(vs_buf_puts(&b, "\xc3\xa9"), 0);
    assert_int_equal(vs_buf_puts(&b, "x\xc3\xa9]]></stderr_out></result></scheduler_request>"), 0);
    {
        struct vs_proto_request r;
        assert_int_equal(vs_proto_request_parse(b.data, b.len, &a, &r, &err), 0);
        size_t sl = strlen(r.results[0].stderr_text);
        /* "x" then whole two-byte characters: byte MAX would split one */
        assert_int_equal(sl, VS_PROTO_MAX_STDERR - 1);
    }

    /* upload: header size, bad names, offsets, sizes over max_nbytes */
    struct vs_proto_upload_request u;
    vs_buf_reset(&b);
    assert_int_equal(vs_buf_puts(&b, "<data_server_request><get_file_size>"), 0);
    while (b.len <= VS_PROTO_MAX_UPLOAD_HEADER)
        assert_int_equal(vs_buf_puts(&b, "xxxxxxxxxxxxxxxx"), 0);
    assert_int_equal(vs_proto_upload_parse(b.data, b.len, &a, &u, &err), VS_ELIMIT);
    static const char *const bad[] = {
        "<data_server_request><get_file_size>../etc/passwd</get_file_size></data_server_request>",
        "<data_server_request><get_file_size>a/b</get_file_size></data_server_request>",
        "<data_server_request><get_file_size></get_file_size></data_server_request>",
        "<data_server_request></data_server_request>",
        "<data_server_request><file_upload><file_info><name>f</name><max_nbytes>10</max_nbytes>"
        "</file_info><nbytes>4</nbytes><md5_cksum>00112233445566778899aabbccddeeff</md5_cksum>"
        "<offset>5</offset><data>\n",
        "<data_server_request><file_upload><file_info><name>f</name><max_nbytes>10</max_nbytes>"
        "</file_info><nbytes>4</nbytes><md5_cksum>xyz</md5_cksum><offset>0</offset><data>\n",
        "<data_server_request><file_upload><file_info><name>f</name></file_info>"
        "<md5_cksum>00112233445566778899aabbccddeeff</md5_cksum><offset>0</offset><data>\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(vs_proto_upload_parse(bad[i], strlen(bad[i]), &a, &u, &err), VS_EPARSE);
    const char *big = "<data_server_request><file_upload><file_info><name>f</name>"
                      "<max_nbytes>10</max_nbytes></file_info><nbytes>11</nbytes>"
                      "<md5_cksum>00112233445566778899aabbccddeeff</md5_cksum><offset>0</offset>"
                      "<data>\n";
    assert_int_equal(vs_proto_upload_parse(big, strlen(big), &a, &u, &err), VS_ELIMIT);
    assert_non_null(strstr(err.msg, "max_nbytes"));
    vs_buf_cleanup(&b);
    vs_arena_cleanup(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_requests),  cmocka_unit_test(test_request_facts),
        cmocka_unit_test(test_replies),   cmocka_unit_test(test_reply_facts),
        cmocka_unit_test(test_upload),    cmocka_unit_test(test_master_page),
        cmocka_unit_test(test_synthetic), cmocka_unit_test(test_unknown_elements),
        cmocka_unit_test(test_limits),    cmocka_unit_test(test_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
