/*
 * Results coming home: reported results in scheduler requests (recorded in
 * the RPC's transaction, acknowledged, idempotent, refused for another
 * user's host, late results taken, CLIENT_ERROR rules) and the file upload
 * handler (good upload, resume, bad certificate, too big, unknown name,
 * path escape, symlink). Runs the real handlers on a throw-away project.
 */
#include "vs_test.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "project_fixture.h"
#include "volsched/buf.h"
#include "volsched/h_upload.h"
#include "volsched/layout.h"
#include "volsched/md5.h"
#include "volsched/proto.h"
#include "volsched/sched.h"

#define NOW 1800000000

struct fx {
    struct project_fixture *pf;
    struct vs_sched *sched;
    struct vs_upload *up;
    char auth_alice[VS_AUTH_MAX], auth_bob[VS_AUTH_MAX];
    int64_t bob;
    int64_t h_alice, h_alice2, h_bob;
};

static int64_t add_host(struct fx *x, int64_t userid)
{
    struct vs_host h;
    memset(&h, 0, sizeof(h));
    h.userid = userid;
    h.p_ncpus = 2;
    h.p_fpops = 1e9;
    h.rpc_seqno = 1;
    assert_int_equal(vs_store_host_add(x->pf->s, &h), 0);
    return h.id;
}

/* A workunit with one result named NAME (output NAME_r7_0), sent to host
 * hostid (claimed) unless hostid is 0. */
static void add_job(struct fx *x, const char *name, int64_t hostid, int64_t userid)
{
    struct vs_workunit wu;
    vs_workunit_defaults(&wu);
    wu.appid = x->pf->appid;
    snprintf(wu.name, sizeof(wu.name), "wu_%s", name);
    wu.transition_time = VS_TIME_NEVER;
    wu.xml_doc = vs_xstrdup("<workunit>\n</workunit>\n");
    assert_int_equal(vs_store_workunit_add(x->pf->s, &wu), 0);
    struct vs_result r;
    memset(&r, 0, sizeof(r));
    r.workunitid = wu.id;
    r.appid = x->pf->appid;
    r.server_state = VS_RESULT_SERVER_STATE_UNSENT;
    snprintf(r.name, sizeof(r.name), "%s", name);
    char doc[1024];
    snprintf(doc, sizeof(doc),
             "<file_info>\n    <name>%s_r7_0</name>\n    <url>http://127.0.0.1:8080/t/"
             "file_upload_handler</url>\n    <max_nbytes>1000</max_nbytes>\n</file_info>\n"
             "<result>\n    <file_ref>\n        <file_name>%s_r7_0</file_name>\n"
             "        <open_name>out</open_name>\n    </file_ref>\n</result>\n",
             name, name);
    r.xml_doc_in = vs_xstrdup(doc);
    assert_int_equal(vs_store_result_add(x->pf->s, &r), 0);
    if (hostid) {
        struct vs_claim c = {.result_id = r.id,
                             .report_deadline = NOW - 3600 + 86400,
                             .app_version_id = pf_sql(x->pf, "SELECT MIN(id) FROM app_version"),
                             .app_version_num = 101};
        size_t n = 0;
        assert_int_equal(vs_store_results_claim(x->pf->s, hostid, userid, 0, NOW - 3600, &c, 1, &n),
                         0);
        assert_int_equal(n, 1);
    }
    vs_workunit_cleanup(&wu);
    vs_result_cleanup(&r);
}

static int setup(void **state)
{
    struct fx *x = VS_NEW(struct fx);
    x->pf = pf_create();
    struct vs_user u;
    memset(&u, 0, sizeof(u));
    assert_int_equal(vs_store_user_get(x->pf->s, x->pf->userid, &u), 0);
    snprintf(x->auth_alice, sizeof(x->auth_alice), "%s", u.authenticator);
    vs_user_cleanup(&u);
    memset(&u, 0, sizeof(u));
    snprintf(u.name, sizeof(u.name), "bob");
    assert_int_equal(vs_store_user_add(x->pf->s, &u), 0);
    x->bob = u.id;
    snprintf(x->auth_bob, sizeof(x->auth_bob), "%s", u.authenticator);
    vs_user_cleanup(&u);
    x->h_alice = add_host(x, x->pf->userid);
    x->h_alice2 = add_host(x, x->pf->userid);
    x->h_bob = add_host(x, x->bob);
    x->pf->cfg.policy.daily_result_quota = 10;
    assert_int_equal(vs_sched_create(&x->pf->cfg, NULL, NULL, &x->sched), 0);
    assert_int_equal(vs_upload_create(&x->pf->cfg, NULL, &x->up), 0);
    *state = x;
    return 0;
}

static int teardown(void **state)
{
    struct fx *x = *state;
    vs_upload_destroy(x->up);
    vs_sched_destroy(x->sched);
    pf_destroy(x->pf);
    vs_free(x);
    return 0;
}

/* ---------------------------------------------------------------- reports */

struct rep {
    const char *name;
    int state, exit_status;
};

/* One scheduler RPC from host hostid of the user with auth, reporting reps
 * and asking for work_secs of work. Returns the parsed reply (arena a). */
static void report_rpc(struct fx *x, const char *auth, int64_t hostid, const struct rep *reps,
                       size_t n, double work_secs, struct vs_arena *a, struct vs_proto_reply *r)
{
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    assert_int_equal(
        vs_buf_printf(&b,
                      "<scheduler_request>\n<authenticator>%s</authenticator>\n"
                      "<hostid>%lld</hostid>\n<rpc_seqno>5</rpc_seqno>\n"
                      "<core_client_major_version>7</core_client_major_version>\n"
                      "<core_client_minor_version>20</core_client_minor_version>\n"
                      "<core_client_release>5</core_client_release>\n"
                      "<platform_name>x86_64-pc-linux-gnu</platform_name>\n"
                      "<work_req_seconds>%f</work_req_seconds>\n<cpu_req_secs>%f</cpu_req_secs>\n"
                      "<cpu_req_instances>%d</cpu_req_instances>\n"
                      "<host_info>\n<p_ncpus>2</p_ncpus>\n<p_fpops>1e9</p_fpops>\n"
                      "<m_nbytes>1e10</m_nbytes>\n<d_free>1e11</d_free>\n</host_info>\n",
                      auth, (long long)hostid, work_secs, work_secs, work_secs > 0 ? 1 : 0),
        0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(
            vs_buf_printf(&b,
                          "<result>\n<name>%s</name>\n<final_cpu_time>2.5</final_cpu_time>\n"
                          "<final_elapsed_time>3.0</final_elapsed_time>\n"
                          "<exit_status>%d</exit_status>\n<state>%d</state>\n"
                          "<platform>x86_64-pc-linux-gnu</platform>\n"
                          "<version_num>101</version_num>\n<app_version_num>101</app_version_num>\n"
                          "<stderr_out>\n<core_client_version>7.20.5</core_client_version>\n"
                          "<![CDATA[\n<stderr_txt>\nhello\n</stderr_txt>\n]]>\n</stderr_out>\n"
                          "<file_info>\n<name>%s_r7_0</name>\n<nbytes>5</nbytes>\n"
                          "<max_nbytes>1000</max_nbytes>\n"
                          "<md5_cksum>00000000000000000000000000000000</md5_cksum>\n</file_info>\n"
                          "</result>\n",
                          reps[i].name, reps[i].exit_status, reps[i].state, reps[i].name),
            0);
    assert_int_equal(vs_buf_puts(&b, "</scheduler_request>\n"), 0);
    struct vs_buf out;
    vs_buf_init(&out, 16u << 20);
    assert_int_equal(vs_sched_handle(x->sched, b.data, b.len, "127.0.0.1", NOW, &out), 200);
    struct vs_proto_error err = {0};
    if (vs_proto_reply_parse(out.data, out.len, a, r, &err) != 0)
        fail_msg("reply does not parse: %s\n%s", err.msg, out.data);
    vs_buf_cleanup(&out);
    vs_buf_cleanup(&b);
}

static bool acked(const struct vs_proto_reply *r, const char *name)
{
    for (size_t i = 0; i < r->n_result_acks; i++)
        if (strcmp(r->result_acks[i], name) == 0)
            return true;
    return false;
}

static struct vs_result get_result(struct fx *x, const char *name)
{
    struct vs_result r;
    memset(&r, 0, sizeof(r));
    assert_int_equal(vs_store_result_by_name(x->pf->s, name, &r), 0);
    return r;
}

static void test_report_success_idempotent(void **state)
{
    struct fx *x = *state;
    add_job(x, "ok1", x->h_alice, x->pf->userid);
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    const struct rep rep = {"ok1", VS_RESULT_CLIENT_STATE_FILES_UPLOADED, 0};
    /* No work asked for (and none exists): the ack comes anyway. */
    report_rpc(x, x->auth_alice, x->h_alice, &rep, 1, 0, &a, &r);
    assert_true(acked(&r, "ok1"));
    assert_int_equal(r.n_results, 0);
    struct vs_result res = get_result(x, "ok1");
    assert_int_equal(res.server_state, VS_RESULT_SERVER_STATE_OVER);
    assert_int_equal(res.outcome, VS_RESULT_OUTCOME_SUCCESS);
    assert_int_equal(res.received_time, NOW);
    assert_true(res.cpu_time == 2.5);
    assert_true(res.elapsed_time == 3.0);
    assert_non_null(res.stderr_out);
    assert_non_null(strstr(res.stderr_out, "hello"));
    assert_non_null(res.xml_doc_out);
    assert_non_null(strstr(res.xml_doc_out, "<name>ok1_r7_0</name>"));
    int64_t mod = res.mod_time;
    vs_result_cleanup(&res);
    struct vs_workunit wu;
    memset(&wu, 0, sizeof(wu));
    assert_int_equal(vs_store_workunit_by_name(x->pf->s, "wu_ok1", &wu), 0);
    assert_int_equal(wu.transition_time, NOW); /* the transitioner looks at it now */
    vs_workunit_cleanup(&wu);

    /* The same report again (the client lost our reply): acked, nothing changes,
     * even when it now claims an error. */
    vs_arena_reset(&a);
    const struct rep again = {"ok1", VS_RESULT_CLIENT_STATE_COMPUTE_ERROR, 1};
    report_rpc(x, x->auth_alice, x->h_alice, &again, 1, 100, &a, &r);
    assert_true(acked(&r, "ok1"));
    res = get_result(x, "ok1");
    assert_int_equal(res.outcome, VS_RESULT_OUTCOME_SUCCESS);
    assert_int_equal(res.mod_time, mod);
    vs_result_cleanup(&res);
    assert_int_equal(pf_sql(x->pf, "SELECT COUNT(*) FROM result WHERE name = 'ok1'"), 1);
    vs_arena_cleanup(&a);
}

static void test_report_client_errors(void **state)
{
    struct fx *x = *state;
    add_job(x, "e_exit", x->h_alice, x->pf->userid);
    add_job(x, "e_state", x->h_alice, x->pf->userid);
    add_job(x, "e_upfail", x->h_alice, x->pf->userid);
    add_job(x, "e_abort", x->h_alice, x->pf->userid);
    add_job(x, "e_proj", x->h_alice, x->pf->userid);
    const struct rep reps[] = {
        {"e_exit", VS_RESULT_CLIENT_STATE_FILES_UPLOADED, 1},
        {"e_state", VS_RESULT_CLIENT_STATE_COMPUTE_ERROR, 0},
        {"e_upfail", VS_RESULT_CLIENT_STATE_UPLOAD_FAILED, 0},
        {"e_abort", VS_RESULT_CLIENT_STATE_ABORTED, -221},
        {"e_proj", VS_RESULT_CLIENT_STATE_ABORTED, 202}, /* aborted by the project */
    };
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    report_rpc(x, x->auth_alice, x->h_alice, reps, 5, 0, &a, &r);
    for (size_t i = 0; i < 5; i++) {
        assert_true(acked(&r, reps[i].name));
        struct vs_result res = get_result(x, reps[i].name);
        assert_int_equal(res.server_state, VS_RESULT_SERVER_STATE_OVER);
        assert_int_equal(res.outcome, VS_RESULT_OUTCOME_CLIENT_ERROR);
        assert_int_equal(res.client_state, reps[i].state);
        assert_int_equal(res.exit_status, reps[i].exit_status);
        assert_int_equal(res.validate_state, VS_VALIDATE_STATE_INVALID);
        vs_result_cleanup(&res);
    }
    /* BOINC's got_bad_result: quota 10 -> 9 -> 8 -> 7 -> 6; the project's
     * own abort (202) does not count against the host. */
    struct vs_host_app_version hav;
    assert_int_equal(vs_store_hav_get(x->pf->s, x->h_alice,
                                      pf_sql(x->pf, "SELECT MIN(id) FROM app_version"), &hav),
                     0);
    assert_int_equal(hav.max_jobs_per_day, 6);
    assert_int_equal(hav.consecutive_valid, 0);
    vs_arena_cleanup(&a);
}

static void test_report_other_user_refused(void **state)
{
    struct fx *x = *state;
    add_job(x, "bobs", x->h_bob, x->bob);
    add_job(x, "alices", x->h_alice, x->pf->userid);
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    /* Alice's host reports Bob's result: not recorded (acked so the client
     * stops sending it, as BOINC does). */
    const struct rep rb = {"bobs", VS_RESULT_CLIENT_STATE_FILES_UPLOADED, 0};
    report_rpc(x, x->auth_alice, x->h_alice, &rb, 1, 0, &a, &r);
    assert_true(acked(&r, "bobs"));
    struct vs_result res = get_result(x, "bobs");
    assert_int_equal(res.server_state, VS_RESULT_SERVER_STATE_IN_PROGRESS);
    assert_int_equal(res.received_time, 0);
    vs_result_cleanup(&res);
    /* Bob's own host still can. */
    vs_arena_reset(&a);
    report_rpc(x, x->auth_bob, x->h_bob, &rb, 1, 0, &a, &r);
    assert_true(acked(&r, "bobs"));
    res = get_result(x, "bobs");
    assert_int_equal(res.outcome, VS_RESULT_OUTCOME_SUCCESS);
    vs_result_cleanup(&res);
    /* Another host of the SAME user is accepted (a client that lost its id). */
    vs_arena_reset(&a);
    const struct rep ra = {"alices", VS_RESULT_CLIENT_STATE_FILES_UPLOADED, 0};
    report_rpc(x, x->auth_alice, x->h_alice2, &ra, 1, 0, &a, &r);
    assert_true(acked(&r, "alices"));
    res = get_result(x, "alices");
    assert_int_equal(res.outcome, VS_RESULT_OUTCOME_SUCCESS);
    assert_int_equal(res.hostid, x->h_alice);
    vs_result_cleanup(&res);
    /* An unknown name is acked and changes nothing. */
    vs_arena_reset(&a);
    const struct rep ru = {"no_such_result", VS_RESULT_CLIENT_STATE_FILES_UPLOADED, 0};
    report_rpc(x, x->auth_alice, x->h_alice, &ru, 1, 0, &a, &r);
    assert_true(acked(&r, "no_such_result"));
    assert_int_equal(pf_sql(x->pf, "SELECT COUNT(*) FROM result WHERE name = 'no_such_result'"), 0);
    vs_arena_cleanup(&a);
}

static void test_report_late(void **state)
{
    struct fx *x = *state;
    add_job(x, "late", x->h_alice, x->pf->userid);
    /* The transitioner timed it out. */
    struct vs_result res = get_result(x, "late");
    res.server_state = VS_RESULT_SERVER_STATE_OVER;
    res.outcome = VS_RESULT_OUTCOME_NO_REPLY;
    assert_int_equal(vs_store_result_update(x->pf->s, &res), 0);
    vs_result_cleanup(&res);
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    const struct rep rl = {"late", VS_RESULT_CLIENT_STATE_FILES_UPLOADED, 0};
    report_rpc(x, x->auth_alice, x->h_alice, &rl, 1, 0, &a, &r);
    assert_true(acked(&r, "late"));
    res = get_result(x, "late");
    assert_int_equal(res.server_state, VS_RESULT_SERVER_STATE_OVER);
    assert_int_equal(res.outcome, VS_RESULT_OUTCOME_SUCCESS);
    assert_int_equal(res.received_time, NOW);
    vs_result_cleanup(&res);
    vs_arena_cleanup(&a);
}

/* ---------------------------------------------------------------- uploads */

struct up_reply {
    int status;
    bool has_size;
    int64_t size;
};

static struct up_reply upload_call(struct fx *x, const char *body, size_t len)
{
    struct vs_buf out;
    vs_buf_init(&out, 1u << 20);
    assert_int_equal(vs_upload_http(x->up, body, len, "127.0.0.1", &out), 200);
    struct vs_arena a;
    vs_arena_init(&a, 4096);
    struct vs_proto_upload_reply r;
    struct vs_proto_error err = {0};
    if (vs_proto_upload_reply_parse(out.data, out.len, &a, &r, &err) != 0)
        fail_msg("upload reply does not parse: %s\n%s", err.msg, out.data);
    struct up_reply u = {r.status, r.has_file_size, r.file_size};
    vs_arena_cleanup(&a);
    vs_buf_cleanup(&out);
    return u;
}

/* A file upload of data[offset..offset+ndata) of a file of nbytes whose MD5
 * is md5, with a certificate for (cert_name, cert_max) signed with the
 * project's upload key (or garbage when bad_sig). */
static struct up_reply upload_file(struct fx *x, const char *name, double max_nbytes,
                                   const char *cert_name, double cert_max, bool bad_sig,
                                   const char *data, int64_t nbytes, int64_t offset, size_t ndata)
{
    struct vs_sign_key *key = NULL;
    char path[VS_PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/%s", x->pf->cfg.key_dir, VS_SIGN_UPLOAD_PRIVATE);
    assert_int_equal(vs_sign_key_load(path, true, &key), 0);
    struct vs_buf sig;
    vs_buf_init(&sig, 8192);
    assert_int_equal(vs_sign_upload_cert(key, cert_name, cert_max, &sig), 0);
    vs_sign_key_destroy(key);
    if (bad_sig)
        sig.data[0] = sig.data[0] == 'a' ? 'b' : 'a';
    char md5[VS_MD5_HEX_LEN + 1];
    assert_int_equal(vs_md5_hex(data, (size_t)nbytes, md5), 0);
    struct vs_proto_upload_request q = {
        .kind = VS_PROTO_UPLOAD_FILE,
        .core_client_major_version = 7,
        .core_client_minor_version = 20,
        .core_client_release = 5,
        .name = name,
        .xml_signature = sig.data,
        .max_nbytes = max_nbytes,
        .nbytes = nbytes,
        .md5_cksum = md5,
        .offset = offset,
    };
    struct vs_buf b;
    vs_buf_init(&b, 1u << 20);
    assert_int_equal(vs_proto_upload_write_header(&q, &b), 0);
    assert_int_equal(vs_buf_append(&b, data + offset, ndata), 0);
    struct up_reply r = upload_call(x, b.data, b.len);
    vs_buf_cleanup(&b);
    vs_buf_cleanup(&sig);
    return r;
}

static struct up_reply size_query(struct fx *x, const char *name)
{
    struct vs_proto_upload_request q = {.kind = VS_PROTO_UPLOAD_GET_FILE_SIZE,
                                        .core_client_major_version = 7,
                                        .core_client_minor_version = 20,
                                        .core_client_release = 5,
                                        .name = name};
    struct vs_buf b;
    vs_buf_init(&b, 1u << 20);
    assert_int_equal(vs_proto_upload_write_header(&q, &b), 0);
    struct up_reply r = upload_call(x, b.data, b.len);
    vs_buf_cleanup(&b);
    return r;
}

/* Size of name in the upload hierarchy, -1 if absent. */
static int64_t stored_size(struct fx *x, const char *name)
{
    char path[VS_PATH_MAX + 64];
    assert_int_equal(vs_project_upload_path(&x->pf->cfg, name, false, path, sizeof(path)), 0);
    struct stat sb;
    return lstat(path, &sb) == 0 ? (int64_t)sb.st_size : -1;
}

static const char payload[] = "2 3 5 7 11 13 17 19 23 29 31 37 41 43 47 53 59 61 67 71 73 79\n";

static void test_upload_good_and_resume(void **state)
{
    struct fx *x = *state;
    add_job(x, "up1", x->h_alice, x->pf->userid);
    add_job(x, "up2", x->h_alice, x->pf->userid);
    int64_t n = (int64_t)strlen(payload);
    /* Nothing yet: size 0. */
    struct up_reply r = size_query(x, "up1_r7_0");
    assert_int_equal(r.status, 0);
    assert_true(r.has_size);
    assert_int_equal(r.size, 0);
    /* Whole file in one go. */
    r = upload_file(x, "up1_r7_0", 1000, "up1_r7_0", 1000, false, payload, n, 0, (size_t)n);
    assert_int_equal(r.status, 0);
    assert_int_equal(stored_size(x, "up1_r7_0"), n);
    r = size_query(x, "up1_r7_0");
    assert_int_equal(r.status, 0);
    assert_int_equal(r.size, n);

    /* Resume: the first body ends half way (transient), the size query says
     * how much we hold, the second body carries the rest from there. */
    r = upload_file(x, "up2_r7_0", 1000, "up2_r7_0", 1000, false, payload, n, 0, 20);
    assert_int_equal(r.status, 1);
    assert_int_equal(stored_size(x, "up2_r7_0"), 20);
    r = size_query(x, "up2_r7_0");
    assert_int_equal(r.size, 20);
    /* An offset past what we hold is transient (the client asks again). */
    r = upload_file(x, "up2_r7_0", 1000, "up2_r7_0", 1000, false, payload, n, 30, (size_t)n - 30);
    assert_int_equal(r.status, 1);
    assert_int_equal(stored_size(x, "up2_r7_0"), 20);
    r = upload_file(x, "up2_r7_0", 1000, "up2_r7_0", 1000, false, payload, n, 20, (size_t)n - 20);
    assert_int_equal(r.status, 0);
    char path[VS_PATH_MAX + 64];
    assert_int_equal(vs_project_upload_path(&x->pf->cfg, "up2_r7_0", false, path, sizeof(path)), 0);
    char md5a[VS_MD5_HEX_LEN + 1], md5b[VS_MD5_HEX_LEN + 1];
    assert_int_equal(vs_md5_file(path, md5a, NULL), 0);
    assert_int_equal(vs_md5_hex(payload, (size_t)n, md5b), 0);
    assert_string_equal(md5a, md5b);
    struct vs_upload_stats st;
    vs_upload_get_stats(x->up, &st);
    assert_int_equal(st.files_done, 2);
}

static void test_upload_refusals(void **state)
{
    struct fx *x = *state;
    add_job(x, "bad", x->h_alice, x->pf->userid);
    int64_t n = (int64_t)strlen(payload);
    /* Bad certificate: a flipped digit. */
    struct up_reply r =
        upload_file(x, "bad_r7_0", 1000, "bad_r7_0", 1000, true, payload, n, 0, (size_t)n);
    assert_int_equal(r.status, -1);
    assert_int_equal(stored_size(x, "bad_r7_0"), -1);
    /* A certificate for another name. */
    r = upload_file(x, "bad_r7_0", 1000, "other_r7_0", 1000, false, payload, n, 0, (size_t)n);
    assert_int_equal(r.status, -1);
    /* A larger max_nbytes than the certificate says. */
    r = upload_file(x, "bad_r7_0", 100000, "bad_r7_0", 1000, false, payload, n, 0, (size_t)n);
    assert_int_equal(r.status, -1);
    assert_int_equal(stored_size(x, "bad_r7_0"), -1);
    /* Too big: a genuine certificate for max_nbytes 10, and more bytes. */
    r = upload_file(x, "bad_r7_0", 10, "bad_r7_0", 10, false, payload, n, 0, (size_t)n);
    assert_int_equal(r.status, -1);
    assert_int_equal(stored_size(x, "bad_r7_0"), -1);
    /* Unknown name, validly signed: not an output of any result. */
    r = upload_file(x, "stray_r7_0", 1000, "stray_r7_0", 1000, false, payload, n, 0, (size_t)n);
    assert_int_equal(r.status, -1);
    assert_int_equal(stored_size(x, "stray_r7_0"), -1);
    /* An output of a result that is over (reported): refused. */
    add_job(x, "done", x->h_alice, x->pf->userid);
    struct vs_result res = get_result(x, "done");
    res.server_state = VS_RESULT_SERVER_STATE_OVER;
    res.outcome = VS_RESULT_OUTCOME_SUCCESS;
    res.received_time = NOW;
    assert_int_equal(vs_store_result_update(x->pf->s, &res), 0);
    vs_result_cleanup(&res);
    r = upload_file(x, "done_r7_0", 1000, "done_r7_0", 1000, false, payload, n, 0, (size_t)n);
    assert_int_equal(r.status, -1);
    /* An unsent result's output: refused. */
    add_job(x, "unsent", 0, 0);
    r = upload_file(x, "unsent_r7_0", 1000, "unsent_r7_0", 1000, false, payload, n, 0, (size_t)n);
    assert_int_equal(r.status, -1);

    struct vs_upload_stats st;
    vs_upload_get_stats(x->up, &st);
    assert_int_equal(st.files_done, 0);
}

static void test_upload_path_escape(void **state)
{
    struct fx *x = *state;
    /* Hand-written headers: the client library would not write these names. */
    const char *names[] = {"../../etc/passwd", "a/b", "..", "%2e%2e", ".hidden_r7_0"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char body[1024];
        int len = snprintf(body, sizeof(body),
                           "<data_server_request>\n<core_client_major_version>7"
                           "</core_client_major_version>\n<file_upload>\n<file_info>\n"
                           "<name>%s</name>\n<xml_signature>\n</xml_signature>\n"
                           "<max_nbytes>1000</max_nbytes>\n</file_info>\n<nbytes>3</nbytes>\n"
                           "<md5_cksum>00000000000000000000000000000000</md5_cksum>\n"
                           "<offset>0</offset>\n<data>\nabc",
                           names[i]);
        struct up_reply r = upload_call(x, body, (size_t)len);
        assert_int_equal(r.status, -1);
        len = snprintf(body, sizeof(body),
                       "<data_server_request>\n<core_client_major_version>7"
                       "</core_client_major_version>\n<get_file_size>%s</get_file_size>\n"
                       "</data_server_request>\n",
                       names[i]);
        r = upload_call(x, body, (size_t)len);
        assert_int_equal(r.status, -1);
    }
    /* A symlink planted in the hierarchy is not followed. */
    add_job(x, "sym", x->h_alice, x->pf->userid);
    char path[VS_PATH_MAX + 64];
    assert_int_equal(vs_project_upload_path(&x->pf->cfg, "sym_r7_0", true, path, sizeof(path)), 0);
    assert_int_equal(symlink("/tmp/vs_should_not_exist", path), 0);
    int64_t n = (int64_t)strlen(payload);
    struct up_reply r =
        upload_file(x, "sym_r7_0", 1000, "sym_r7_0", 1000, false, payload, n, 0, (size_t)n);
    assert_int_equal(r.status, -1);
    assert_int_equal(access("/tmp/vs_should_not_exist", F_OK), -1);
    r = size_query(x, "sym_r7_0");
    assert_int_equal(r.status, -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_report_success_idempotent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_client_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_other_user_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_late, setup, teardown),
        cmocka_unit_test_setup_teardown(test_upload_good_and_resume, setup, teardown),
        cmocka_unit_test_setup_teardown(test_upload_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_upload_path_escape, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
