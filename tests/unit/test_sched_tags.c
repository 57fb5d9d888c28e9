/*
 * The config.xml tags that change what the scheduler does (sched_gate.c,
 * h_resend.c), each against the real handler and a real SQLite store, with
 * the tag (as config.xml text, through the config reader) and without it:
 * dont_send_jobs, min_sendwork_interval,
 * next_rpc_delay, maintenance_delay, report_grace_period, report_max,
 * send_result_abort, resend_lost_results.
 */
#include "vs_test.h"

#include "sched_fixture.h"

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
    const char *sub[] = {"<hostid>0</hostid>",       hid,
                         "<rpc_seqno>0</rpc_seqno>", seq,
                         "<app_versions>",           vs_buf_str(&rep),
                         "</other_results>",         vs_buf_str(&oth)};
    char *text = request(sub, 8);
    vs_buf_cleanup(&rep);
    vs_buf_cleanup(&oth);
    return text;
}

/* A project built from p and s and a new host's first RPC at NOW
 * (reporting reported, may be NULL), with stop_sched when maint. */
struct run {
    struct fx f;
    struct vs_arena a;
    struct vs_proto_reply r;
};

static void first_rpc(struct run *x, const struct vs_sp_config *p, const struct spec *s,
                      const char *reported, bool maint)
{
    build(&x->f, p, s);
    if (maint)
        vs_sched_set_maintenance(x->f.s, true);
    vs_arena_init(&x->a, 8192);
    char *req = req_with(0, 0, reported, NULL);
    rpc_at(&x->f, req, NOW, &x->a, &x->r);
    vs_free(req);
}

static void run_end(struct run *x)
{
    vs_arena_cleanup(&x->a);
    destroy(&x->f);
}

static void test_dont_send_jobs(void **state)
{
    (void)state;
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    struct vs_sp_config p = defaults();
    struct spec on = {.nwu = 2, .config_xml = "<dont_send_jobs/>"}, off = {.nwu = 2};
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
    struct spec s = {.nwu = 8, .config_xml = "<min_sendwork_interval>600</min_sendwork_interval>"};
    struct run x;
    first_rpc(&x, &p, &s, NULL, false);
    assert_true(x.r.n_results >= 1); /* a new host: no previous RPC */
    int64_t hid = x.r.hostid;
    char *req = req_with(hid, 1, NULL, NULL);
    rpc_at(&x.f, req, NOW + 10, &x.a, &x.r);
    assert_int_equal(x.r.n_results, 0);
    assert_true(has_msg(&x.r, "last request too recent: 10 sec"));
    assert_int_equal((int)x.r.request_delay, 606); /* 1.01 x 600 */
    vs_free(req);
    req = req_with(hid, 2, NULL, NULL);
    rpc_at(&x.f, req, NOW + 10 + 601, &x.a, &x.r);
    assert_true(x.r.n_results >= 1);
    vs_free(req);
    run_end(&x);
}

static void test_next_rpc_delay(void **state)
{
    (void)state;
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    struct vs_sp_config p = defaults();
    struct spec on = {.nwu = 1, .config_xml = "<next_rpc_delay>3000</next_rpc_delay>"},
                off = {.nwu = 1};
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
        struct spec s = {.nwu = 1,
                         .config_xml = k ? "<maintenance_delay>1234</maintenance_delay>" : NULL};
        struct run x;
        first_rpc(&x, &p, &s, NULL, true);
        assert_int_equal(x.r.n_results, 0);
        assert_true(has_msg(&x.r, "shut down for maintenance"));
        assert_int_equal((int)x.r.request_delay, k ? 1234 : 3600);
        run_end(&x);
    }
}

/* The stored deadline carries the grace period, the client's does not. */
static void test_report_grace_period(void **state)
{
    (void)state;
    struct vs_sp_config p = defaults();
    for (int k = 0; k < 2; k++) {
        struct spec s = {.nwu = 1,
                         .config_xml = k ? "<report_grace_period>7200</report_grace_period>"
                                         : "<report_grace_period>0</report_grace_period>"};
        struct run x;
        first_rpc(&x, &p, &s, NULL, false);
        assert_int_equal(x.r.n_results, 1);
        assert_int_equal((int64_t)x.r.results[0].report_deadline, NOW + 86400);
        struct vs_result res = {0};
        assert_int_equal(vs_store_result_by_name(x.f.st, x.r.results[0].name, &res), 0);
        assert_int_equal(res.report_deadline, NOW + 86400 + (k ? 7200 : 0));
        vs_result_cleanup(&res);
        run_end(&x);
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
        struct spec s = {.nwu = 1, .config_xml = k ? "<report_max>2</report_max>" : NULL};
        struct run x;
        first_rpc(&x, &p, &s, three, false);
        /* Unknown names are acknowledged too (BOINC): only report_max cuts. */
        assert_int_equal(x.r.n_result_acks, k ? 2 : 3);
        run_end(&x);
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
        struct spec s = {.nwu = 1,
                         .config_xml = k ? "<send_result_abort>1</send_result_abort>" : NULL};
        struct run x;
        first_rpc(&x, &p, &s, NULL, false);
        assert_int_equal(x.r.n_results, 1);
        int64_t hid = x.r.hostid;
        char others[2 * VS_NAME_MAX + 128];
        snprintf(others, sizeof(others),
                 "<other_result><name>%s</name></other_result>"
                 "<other_result><name>never_made_0</name></other_result>",
                 x.r.results[0].name);
        char job[VS_NAME_MAX];
        snprintf(job, sizeof(job), "%s", x.r.results[0].name);
        char *req = req_with(hid, 1, NULL, others);
        rpc_at(&x.f, req, NOW + 60, &x.a, &x.r);
        assert_int_equal(x.r.n_result_aborts, k ? 1 : 0);
        if (k) {
            assert_string_equal(x.r.result_aborts[0], "never_made_0");
            assert_true(has_msg(&x.r, "Result never_made_0 is no longer usable"));
        }
        /* Cancelled workunit: its result is aborted too. */
        struct vs_result res = {0};
        assert_int_equal(vs_store_result_by_name(x.f.st, job, &res), 0);
        struct vs_workunit wu;
        assert_int_equal(vs_store_workunit_get(x.f.st, res.workunitid, &wu), 0);
        wu.error_mask |= VS_WU_ERROR_CANCELLED;
        assert_int_equal(vs_store_workunit_update(x.f.st, &wu), 0);
        vs_workunit_cleanup(&wu);
        vs_result_cleanup(&res);
        rpc_at(&x.f, req, NOW + 120, &x.a, &x.r);
        vs_free(req);
        assert_int_equal(x.r.n_result_aborts, k ? 2 : 0);
        if (k)
            assert_true(listed(x.r.result_aborts, x.r.n_result_aborts, job));
        run_end(&x);
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
        struct spec s = {.nwu = 6,
                         .config_xml = k ? "<resend_lost_results>1</resend_lost_results>" : NULL};
        struct run x;
        first_rpc(&x, &p, &s, NULL, false);
        assert_int_equal(x.r.n_results, 2);
        int64_t hid = x.r.hostid;
        char kept[VS_NAME_MAX], lost[VS_NAME_MAX], others[VS_NAME_MAX + 64];
        snprintf(kept, sizeof(kept), "%s", x.r.results[0].name);
        snprintf(lost, sizeof(lost), "%s", x.r.results[1].name);
        snprintf(others, sizeof(others), "<other_result><name>%s</name></other_result>", kept);
        char *req = req_with(hid, 1, NULL, others);
        rpc_at(&x.f, req, NOW + 3600, &x.a, &x.r);
        struct vs_result res = {0};
        assert_int_equal(vs_store_result_by_name(x.f.st, lost, &res), 0);
        assert_int_equal(res.server_state, VS_RESULT_SERVER_STATE_IN_PROGRESS);
        if (k) {
            assert_int_equal(x.r.n_results, 1); /* the lost one, nothing new */
            assert_string_equal(x.r.results[0].name, lost);
            assert_int_equal(x.r.n_workunits, 1);
            assert_int_equal(x.r.n_app_versions, 1);
            assert_true(has_msg(&x.r, "Resent lost task"));
            /* now + half of the day allowed is before the old deadline:
             * the old deadline holds. */
            assert_int_equal((int64_t)x.r.results[0].report_deadline, NOW + 86400);
        } else {
            assert_int_equal(x.r.n_results, 2); /* new work, the lost one untouched */
            assert_false(listed((const char *const *)&x.r.results[0].name, 1, lost));
        }
        int64_t before = res.report_deadline;
        /* Its workunit found a canonical result meanwhile: no use resending
         * it; given up. */
        struct vs_workunit w0;
        assert_int_equal(vs_store_workunit_get(x.f.st, res.workunitid, &w0), 0);
        w0.canonical_resultid = res.id;
        assert_int_equal(vs_store_workunit_update(x.f.st, &w0), 0);
        vs_workunit_cleanup(&w0);
        vs_result_cleanup(&res);
        int64_t late = NOW + 7200;
        rpc_at(&x.f, req, late, &x.a, &x.r);
        vs_free(req);
        assert_int_equal(vs_store_result_by_name(x.f.st, lost, &res), 0);
        if (k) {
            assert_true(has_msg(&x.r, "Didn't resend lost task"));
            assert_false(
                listed((const char *const *)&x.r.results[0].name, x.r.n_results ? 1 : 0, lost));
            assert_int_equal(res.report_deadline, late - 1);
            struct vs_workunit wu;
            assert_int_equal(vs_store_workunit_get(x.f.st, res.workunitid, &wu), 0);
            assert_true(wu.transition_time <= late);
            vs_workunit_cleanup(&wu);
        } else {
            assert_int_equal(res.report_deadline, before);
        }
        vs_result_cleanup(&res);
        run_end(&x);
    }
}

/* A lost result the host can no longer finish by its new deadline (its
 * estimate grew past it) is given up, not resent. */
static void test_resend_infeasible(void **state)
{
    (void)state;
    struct vs_sp_config p = defaults();
    p.max_wus_to_send = 1;
    struct spec s = {.nwu = 6, .config_xml = "<resend_lost_results>1</resend_lost_results>"};
    struct run x;
    first_rpc(&x, &p, &s, NULL, false);
    assert_int_equal(x.r.n_results, 2);
    char others[VS_NAME_MAX + 64], lost[VS_NAME_MAX];
    snprintf(others, sizeof(others), "<other_result><name>%s</name></other_result>",
             x.r.results[0].name);
    snprintf(lost, sizeof(lost), "%s", x.r.results[1].name);
    struct vs_result res = {0};
    assert_int_equal(vs_store_result_by_name(x.f.st, lost, &res), 0);
    struct vs_workunit wu;
    assert_int_equal(vs_store_workunit_get(x.f.st, res.workunitid, &wu), 0);
    wu.rsc_fpops_est = 1e16; /* 1e7 s on this 1e9 flops host: past any deadline */
    assert_int_equal(vs_store_workunit_update(x.f.st, &wu), 0);
    vs_workunit_cleanup(&wu);
    vs_result_cleanup(&res);
    char *req = req_with(x.r.hostid, 1, NULL, others);
    rpc_at(&x.f, req, NOW + 60, &x.a, &x.r);
    vs_free(req);
    assert_true(has_msg(&x.r, "Didn't resend lost task"));
    for (size_t i = 0; i < x.r.n_results; i++)
        assert_string_not_equal(x.r.results[i].name, lost);
    assert_int_equal(vs_store_result_by_name(x.f.st, lost, &res), 0);
    assert_int_equal(res.report_deadline, NOW + 60 - 1);
    vs_result_cleanup(&res);
    run_end(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dont_send_jobs),      cmocka_unit_test(test_min_sendwork_interval),
        cmocka_unit_test(test_next_rpc_delay),      cmocka_unit_test(test_maintenance_delay),
        cmocka_unit_test(test_report_grace_period), cmocka_unit_test(test_report_max),
        cmocka_unit_test(test_send_result_abort),   cmocka_unit_test(test_resend_lost_results),
        cmocka_unit_test(test_resend_infeasible),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
