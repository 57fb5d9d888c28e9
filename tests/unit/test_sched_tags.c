/*
 * The config.xml tags that change what the scheduler does (sched_gate.c,
 * h_resend.c), each against the real handler and a real SQLite store, with
 * the tag and without it: dont_send_jobs, min_sendwork_interval,
 * next_rpc_delay, maintenance_delay, report_grace_period, report_max,
 * send_result_abort, resend_lost_results.
 */
#include "vs_test.h"

#include "sched_fixture.h"

static void tune_dont_send(struct vs_project_config *c) { c->dont_send_jobs = true; }
static void tune_interval(struct vs_project_config *c) { c->min_sendwork_interval = 600; }
static void tune_next_rpc(struct vs_project_config *c) { c->next_rpc_delay = 3000; }
static void tune_maint(struct vs_project_config *c) { c->maintenance_delay = 1234; }
static void tune_grace(struct vs_project_config *c) { c->report_grace_period = 7200; }
static void tune_no_grace(struct vs_project_config *c) { c->report_grace_period = 0; }
static void tune_report_max(struct vs_project_config *c) { c->report_max = 2; }
static void tune_abort(struct vs_project_config *c) { c->send_result_abort = true; }
static void tune_resend(struct vs_project_config *c) { c->resend_lost_results = true; }

/* request of host hostid (seqno) with text inserted before </other_results>
 * (other results) and before <app_versions> (reported results). */
static char *req_with(int64_t hostid, int seqno, const char *reported, const char *others)
{
    char hid[64], seq[64];
    snprintf(hid, sizeof(hid), "<hostid>%lld</hostid>", (long long)hostid);
    snprintf(seq, sizeof(seq), "<rpc_seqno>%d</rpc_seqno>", seqno);
    struct vs_buf rep, oth;
    vs_buf_init(&rep, VS_BUF_UNLIMITED);
    vs_buf_init(&oth, VS_BUF_UNLIMITED);
    assert_int_equal(vs_buf_printf(&rep, "%s<app_versions>", reported ? reported : ""), 0);
    assert_int_equal(vs_buf_printf(&oth, "%s</other_results>", others ? others : ""), 0);
    const char *sub[] = {"<hostid>0</hostid>",     hid, "<rpc_seqno>0</rpc_seqno>",
                         seq,                      "<app_versions>", vs_buf_str(&rep),
                         "</other_results>",       vs_buf_str(&oth)};
    char *text = request(sub, 8);
    vs_buf_cleanup(&rep);
    vs_buf_cleanup(&oth);
    return text;
}

static void test_dont_send_jobs(void **state)
{
    (void)state;
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    struct vs_sp_config p = defaults();
    struct spec on = {.nwu = 2, .tune = tune_dont_send}, off = {.nwu = 2};
    assert_int_equal(one(&p, &on, NULL, 0, &a, &r), 0);
    assert_true(has_msg(&r, "not sending tasks"));
    assert_true(r.hostid > 0); /* the RPC itself still counts */
    assert_true(one(&p, &off, NULL, 0, &a, &r) >= 1);
    assert_false(has_msg(&r, "not sending tasks"));
    vs_arena_cleanup(&a);
}

static void test_min_sendwork_interval(void **state)
{
    (void)state;
    struct vs_sp_config p = defaults();
    p.max_wus_to_send = 1;
    struct spec s = {.nwu = 8, .tune = tune_interval};
    struct fx f;
    build(&f, &p, &s);
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    char *req = req_with(0, 0, NULL, NULL);
    rpc_at(&f, req, NOW, &a, &r);
    vs_free(req);
    assert_true(r.n_results >= 1); /* a new host: no previous RPC */
    int64_t hid = r.hostid;
    req = req_with(hid, 1, NULL, NULL);
    rpc_at(&f, req, NOW + 10, &a, &r);
    assert_int_equal(r.n_results, 0);
    assert_true(has_msg(&r, "last request too recent: 10 sec"));
    assert_int_equal((int)r.request_delay, 606); /* 1.01 x 600 */
    vs_free(req);
    req = req_with(hid, 2, NULL, NULL);
    rpc_at(&f, req, NOW + 10 + 601, &a, &r);
    assert_true(r.n_results >= 1);
    vs_free(req);
    vs_arena_cleanup(&a);
    destroy(&f);
}

static void test_next_rpc_delay(void **state)
{
    (void)state;
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    struct vs_sp_config p = defaults();
    struct spec on = {.nwu = 1, .tune = tune_next_rpc}, off = {.nwu = 1};
    one(&p, &on, NULL, 0, &a, &r);
    assert_int_equal((int)r.next_rpc_delay, 3000);
    one(&p, &off, NULL, 0, &a, &r);
    assert_int_equal((int)r.next_rpc_delay, 0);
    vs_arena_cleanup(&a);
}

static void test_maintenance_delay(void **state)
{
    (void)state;
    struct vs_sp_config p = defaults();
    for (int k = 0; k < 2; k++) {
        struct spec s = {.nwu = 1, .tune = k ? tune_maint : NULL};
        struct fx f;
        build(&f, &p, &s);
        vs_sched_set_maintenance(f.s, true);
        struct vs_arena a;
        vs_arena_init(&a, 8192);
        struct vs_proto_reply r;
        char *req = req_with(0, 0, NULL, NULL);
        rpc_at(&f, req, NOW, &a, &r);
        vs_free(req);
        assert_int_equal(r.n_results, 0);
        assert_true(has_msg(&r, "shut down for maintenance"));
        assert_int_equal((int)r.request_delay, k ? 1234 : 3600);
        vs_arena_cleanup(&a);
        destroy(&f);
    }
}

/* The stored deadline carries the grace period, the client's does not. */
static void test_report_grace_period(void **state)
{
    (void)state;
    struct vs_sp_config p = defaults();
    for (int k = 0; k < 2; k++) {
        struct spec s = {.nwu = 1, .tune = k ? tune_grace : tune_no_grace};
        struct fx f;
        build(&f, &p, &s);
        struct vs_arena a;
        vs_arena_init(&a, 8192);
        struct vs_proto_reply r;
        char *req = req_with(0, 0, NULL, NULL);
        rpc_at(&f, req, NOW, &a, &r);
        vs_free(req);
        assert_int_equal(r.n_results, 1);
        assert_int_equal((int64_t)r.results[0].report_deadline, NOW + 86400);
        struct vs_result res = {0};
        assert_int_equal(vs_store_result_by_name(f.st, r.results[0].name, &res), 0);
        assert_int_equal(res.report_deadline, NOW + 86400 + (k ? 7200 : 0));
        vs_result_cleanup(&res);
        vs_arena_cleanup(&a);
        destroy(&f);
    }
}

static void test_report_max(void **state)
{
    (void)state;
    const char *three = "<result><name>gone_1</name><state>5</state></result>\n"
                        "<result><name>gone_2</name><state>5</state></result>\n"
                        "<result><name>gone_3</name><state>5</state></result>\n";
    struct vs_sp_config p = defaults();
    for (int k = 0; k < 2; k++) {
        struct spec s = {.nwu = 1, .tune = k ? tune_report_max : NULL};
        struct fx f;
        build(&f, &p, &s);
        struct vs_arena a;
        vs_arena_init(&a, 8192);
        struct vs_proto_reply r;
        char *req = req_with(0, 0, three, NULL);
        rpc_at(&f, req, NOW, &a, &r);
        vs_free(req);
        /* Unknown names are acknowledged too (BOINC): only report_max cuts. */
        assert_int_equal(r.n_result_acks, k ? 2 : 3);
        vs_arena_cleanup(&a);
        destroy(&f);
    }
}

static bool listed(const char *const *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], name) == 0)
            return true;
    return false;
}

/* A host gets one job; then it lists that job and one the project never
 * made; then the job's workunit is cancelled. */
static void test_send_result_abort(void **state)
{
    (void)state;
    struct vs_sp_config p = defaults();
    p.max_wus_to_send = 1;
    for (int k = 0; k < 2; k++) {
        struct spec s = {.nwu = 1, .tune = k ? tune_abort : NULL};
        struct fx f;
        build(&f, &p, &s);
        struct vs_arena a;
        vs_arena_init(&a, 8192);
        struct vs_proto_reply r;
        char *req = req_with(0, 0, NULL, NULL);
        rpc_at(&f, req, NOW, &a, &r);
        vs_free(req);
        assert_int_equal(r.n_results, 1);
        int64_t hid = r.hostid;
        char others[2 * VS_NAME_MAX + 128];
        snprintf(others, sizeof(others),
                 "<other_result><name>%s</name></other_result>"
                 "<other_result><name>never_made_0</name></other_result>",
                 r.results[0].name);
        char job[VS_NAME_MAX];
        snprintf(job, sizeof(job), "%s", r.results[0].name);
        req = req_with(hid, 1, NULL, others);
        rpc_at(&f, req, NOW + 60, &a, &r);
        assert_int_equal(r.n_result_aborts, k ? 1 : 0);
        if (k) {
            assert_string_equal(r.result_aborts[0], "never_made_0");
            assert_true(has_msg(&r, "Result never_made_0 is no longer usable"));
        }
        /* Cancelled workunit: its result is aborted too. */
        struct vs_result res = {0};
        assert_int_equal(vs_store_result_by_name(f.st, job, &res), 0);
        struct vs_workunit wu;
        assert_int_equal(vs_store_workunit_get(f.st, res.workunitid, &wu), 0);
        wu.error_mask |= VS_WU_ERROR_CANCELLED;
        assert_int_equal(vs_store_workunit_update(f.st, &wu), 0);
        vs_workunit_cleanup(&wu);
        vs_result_cleanup(&res);
        rpc_at(&f, req, NOW + 120, &a, &r);
        vs_free(req);
        assert_int_equal(r.n_result_aborts, k ? 2 : 0);
        if (k)
            assert_true(listed(r.result_aborts, r.n_result_aborts, job));
        vs_arena_cleanup(&a);
        destroy(&f);
    }
}

/* A host gets two jobs, then lists only the first: the second is lost and
 * sent again (no new job with it); once its workunit no longer needs it
 * (a canonical result) it is given up instead, due at once for the
 * transitioner. Without the tag nothing happens to it. */
static void test_resend_lost_results(void **state)
{
    (void)state;
    struct vs_sp_config p = defaults();
    p.max_wus_to_send = 1; /* x 2 CPUs: two jobs */
    for (int k = 0; k < 2; k++) {
        struct spec s = {.nwu = 6, .tune = k ? tune_resend : NULL};
        struct fx f;
        build(&f, &p, &s);
        struct vs_arena a;
        vs_arena_init(&a, 8192);
        struct vs_proto_reply r;
        char *req = req_with(0, 0, NULL, NULL);
        rpc_at(&f, req, NOW, &a, &r);
        vs_free(req);
        assert_int_equal(r.n_results, 2);
        int64_t hid = r.hostid;
        char kept[VS_NAME_MAX], lost[VS_NAME_MAX], others[VS_NAME_MAX + 64];
        snprintf(kept, sizeof(kept), "%s", r.results[0].name);
        snprintf(lost, sizeof(lost), "%s", r.results[1].name);
        snprintf(others, sizeof(others), "<other_result><name>%s</name></other_result>", kept);
        req = req_with(hid, 1, NULL, others);
        rpc_at(&f, req, NOW + 3600, &a, &r);
        struct vs_result res = {0};
        assert_int_equal(vs_store_result_by_name(f.st, lost, &res), 0);
        assert_int_equal(res.server_state, VS_RESULT_SERVER_STATE_IN_PROGRESS);
        if (k) {
            assert_int_equal(r.n_results, 1); /* the lost one, nothing new */
            assert_string_equal(r.results[0].name, lost);
            assert_int_equal(r.n_workunits, 1);
            assert_int_equal(r.n_app_versions, 1);
            assert_true(has_msg(&r, "Resent lost task"));
            /* now + half of the day allowed is before the old deadline:
             * the old deadline holds. */
            assert_int_equal((int64_t)r.results[0].report_deadline, NOW + 86400);
        } else {
            assert_int_equal(r.n_results, 2); /* new work, the lost one untouched */
            assert_false(listed((const char *const *)&r.results[0].name, 1, lost));
        }
        int64_t before = res.report_deadline;
        /* Its workunit found a canonical result meanwhile: no use resending
         * it; given up. */
        struct vs_workunit w0;
        assert_int_equal(vs_store_workunit_get(f.st, res.workunitid, &w0), 0);
        w0.canonical_resultid = res.id;
        assert_int_equal(vs_store_workunit_update(f.st, &w0), 0);
        vs_workunit_cleanup(&w0);
        vs_result_cleanup(&res);
        int64_t late = NOW + 7200;
        rpc_at(&f, req, late, &a, &r);
        vs_free(req);
        assert_int_equal(vs_store_result_by_name(f.st, lost, &res), 0);
        if (k) {
            assert_true(has_msg(&r, "Didn't resend lost task"));
            assert_false(listed((const char *const *)&r.results[0].name,
                                r.n_results ? 1 : 0, lost));
            assert_int_equal(res.report_deadline, late - 1);
            struct vs_workunit wu;
            assert_int_equal(vs_store_workunit_get(f.st, res.workunitid, &wu), 0);
            assert_true(wu.transition_time <= late);
            vs_workunit_cleanup(&wu);
        } else {
            assert_int_equal(res.report_deadline, before);
        }
        vs_result_cleanup(&res);
        vs_arena_cleanup(&a);
        destroy(&f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dont_send_jobs),        cmocka_unit_test(test_min_sendwork_interval),
        cmocka_unit_test(test_next_rpc_delay),        cmocka_unit_test(test_maintenance_delay),
        cmocka_unit_test(test_report_grace_period),   cmocka_unit_test(test_report_max),
        cmocka_unit_test(test_send_result_abort),     cmocka_unit_test(test_resend_lost_results),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
