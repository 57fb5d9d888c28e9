/*
 * Unit tests of the minimal transitioner: results for new workunits,
 * targeted and broadcast workunits, timeouts, error limits, need_validate,
 * a bad template not blocking the queue, and two concurrent passes never
 * creating a result twice.
 */
#include "vs_test.h"

#include <pthread.h>

#include "project_fixture.h"
#include "volsched/sign.h"
#include "volsched/store_project.h"
#include "volsched/transitioner.h"

#define NOW 1700000000

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

static int64_t wu_add(struct project_fixture *f, const char *name, int flags, int target,
                      int max_total, int max_error)
{
    struct vs_workunit wu;
    vs_workunit_defaults(&wu);
    wu.appid = f->appid;
    assert_int_equal(vs_strlcpy(wu.name, name, sizeof(wu.name)), 0);
    wu.xml_doc = vs_xstrdup("<workunit/>");
    wu.transitioner_flags = flags;
    wu.transition_time = flags ? VS_TIME_NEVER : NOW;
    wu.target_nresults = target;
    wu.max_success_results = target;
    wu.max_total_results = max_total;
    wu.max_error_results = max_error;
    wu.priority = 3;
    assert_int_equal(vs_strlcpy(wu.result_template_file, "templates/app_out", VS_NAME_MAX), 0);
    assert_int_equal(vs_store_workunit_add(f->s, &wu), 0);
    vs_workunit_cleanup(&wu);
    return wu.id;
}

static int64_t res_add(struct project_fixture *f, int64_t wuid, const char *name, int state,
                       int outcome, int64_t deadline)
{
    struct vs_result r;
    memset(&r, 0, sizeof(r));
    r.workunitid = wuid;
    r.appid = f->appid;
    assert_int_equal(vs_strlcpy(r.name, name, sizeof(r.name)), 0);
    r.server_state = state;
    r.outcome = outcome;
    r.report_deadline = deadline;
    r.hostid = state == VS_RESULT_SERVER_STATE_UNSENT ? 0 : 1;
    assert_int_equal(vs_store_result_add(f->s, &r), 0);
    return r.id;
}

static void set_tt(struct project_fixture *f, int64_t wuid, int64_t tt)
{
    struct vs_workunit wu;
    memset(&wu, 0, sizeof(wu));
    assert_int_equal(vs_store_workunit_get(f->s, wuid, &wu), 0);
    wu.transition_time = tt;
    assert_int_equal(vs_store_workunit_update(f->s, &wu), 0);
    vs_workunit_cleanup(&wu);
}

/* Runs "<prefix><id><suffix>". */
static int64_t q3(struct project_fixture *f, const char *prefix, int64_t id, const char *suffix)
{
    char sql[512];
    snprintf(sql, sizeof(sql), "%s%lld%s", prefix, (long long)id, suffix);
    return pf_sql(f, sql);
}

static void test_new_workunits(void **state)
{
    struct project_fixture *f = *state;
    int64_t w = wu_add(f, "wu", 0, 3, 3, 1);
    struct vs_transitioner_stats st;
    assert_int_equal(vs_transitioner_pass(f->s, &f->cfg, NOW, 0, NULL, &st), 0);
    assert_int_equal(st.nwus, 1);
    assert_int_equal(st.nresults_created, 3);
    assert_int_equal(
        q3(f, "SELECT count(*) FROM result WHERE workunitid=", w, " AND server_state=2"), 3);
    struct vs_result r;
    memset(&r, 0, sizeof(r));
    assert_int_equal(vs_store_result_by_name(f->s, "wu_2", &r), 0);
    assert_int_equal(r.priority, 3);
    assert_int_equal(r.appid, f->appid);
    assert_int_equal(r.create_time, NOW);
    /* The output file is named after the result, with a certificate. */
    assert_non_null(strstr(r.xml_doc_in, "<name>wu_2_r"));
    assert_non_null(strstr(r.xml_doc_in, "<xml_signature>"));
    assert_non_null(strstr(r.xml_doc_in, f->cfg.upload_url));
    vs_result_cleanup(&r);
    assert_int_equal(q3(f, "SELECT transition_time FROM workunit WHERE id=", w, ""),
                     NOW + 907200); /* max(10 days, 1.5 x delay_bound) */

    /* Due again (a report arrived) with nothing missing: no new results. */
    set_tt(f, w, NOW + 5);
    assert_int_equal(vs_transitioner_pass(f->s, &f->cfg, NOW + 10, 0, NULL, &st), 0);
    assert_int_equal(st.nwus, 1);
    assert_int_equal(st.nresults_created, 0);
    assert_int_equal(q3(f, "SELECT count(*) FROM result WHERE workunitid=", w, ""), 3);
    /* Not due: not visited. */
    assert_int_equal(vs_transitioner_pass(f->s, &f->cfg, NOW + 20, 0, NULL, &st), 0);
    assert_int_equal(st.nwus, 0);
}

static void test_assigned(void **state)
{
    struct project_fixture *f = *state;
    int64_t targeted = wu_add(f, "tg", VS_TRANSITION_NO_NEW_RESULTS, 1, 5, 5);
    int64_t broadcast = wu_add(f, "bc", VS_TRANSITION_NONE, 1, 5, 5);
    struct vs_transitioner_stats st;
    assert_int_equal(vs_transitioner_pass(f->s, &f->cfg, NOW, 0, NULL, &st), 0);
    assert_int_equal(st.nwus, 0);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM result"), 0);

    /* The scheduler sent the targeted job; its deadline passes. */
    res_add(f, targeted, "tg_1_2_3", VS_RESULT_SERVER_STATE_IN_PROGRESS, 0, NOW + 50);
    set_tt(f, targeted, NOW + 50);
    /* Even a due broadcast WU is never transitioned (BOINC-COMPAT). */
    set_tt(f, broadcast, NOW);
    res_add(f, broadcast, "bc_1", VS_RESULT_SERVER_STATE_IN_PROGRESS, 0, NOW + 50);
    assert_int_equal(vs_transitioner_pass(f->s, &f->cfg, NOW + 100, 0, NULL, &st), 0);
    assert_int_equal(st.nwus, 1);
    assert_int_equal(st.ntimed_out, 1);
    assert_int_equal(st.nresults_created, 0); /* the scheduler makes the retry */
    assert_int_equal(pf_sql(f, "SELECT outcome FROM result WHERE name='tg_1_2_3'"),
                     VS_RESULT_OUTCOME_NO_REPLY);
    assert_int_equal(pf_sql(f, "SELECT server_state FROM result WHERE name='bc_1'"),
                     VS_RESULT_SERVER_STATE_IN_PROGRESS);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM result"), 2);
}

static void test_timeout_and_retry(void **state)
{
    struct project_fixture *f = *state;
    int64_t w = wu_add(f, "w", 0, 1, 3, 2);
    res_add(f, w, "w_0", VS_RESULT_SERVER_STATE_IN_PROGRESS, 0, NOW - 1);
    int64_t w2 = wu_add(f, "w2", 0, 1, 3, 2);
    res_add(f, w2, "w2_0", VS_RESULT_SERVER_STATE_IN_PROGRESS, 0, NOW + 500);
    struct vs_transitioner_stats st;
    assert_int_equal(vs_transitioner_pass(f->s, &f->cfg, NOW, 0, NULL, &st), 0);
    assert_int_equal(st.ntimed_out, 1);
    assert_int_equal(st.nresults_created, 1);
    assert_int_equal(pf_sql(f, "SELECT outcome FROM result WHERE name='w_0'"),
                     VS_RESULT_OUTCOME_NO_REPLY);
    /* The retry takes the next suffix. */
    assert_int_equal(pf_sql(f, "SELECT server_state FROM result WHERE name='w_1'"),
                     VS_RESULT_SERVER_STATE_UNSENT);
    /* A WU with a result in progress wakes up at its deadline. */
    assert_int_equal(q3(f, "SELECT transition_time FROM workunit WHERE id=", w2, ""), NOW + 500);
}

static void test_error_limits(void **state)
{
    struct project_fixture *f = *state;
    /* Two client errors with max_error_results 1: the WU errors out. */
    int64_t w = wu_add(f, "e", 0, 1, 5, 1);
    res_add(f, w, "e_0", VS_RESULT_SERVER_STATE_OVER, VS_RESULT_OUTCOME_CLIENT_ERROR, 0);
    res_add(f, w, "e_1", VS_RESULT_SERVER_STATE_OVER, VS_RESULT_OUTCOME_CLIENT_ERROR, 0);
    res_add(f, w, "e_2", VS_RESULT_SERVER_STATE_UNSENT, 0, 0);
    /* Total cap: one no-reply and max_total_results 1. */
    int64_t t = wu_add(f, "t", 0, 1, 1, 1);
    res_add(f, t, "t_0", VS_RESULT_SERVER_STATE_OVER, VS_RESULT_OUTCOME_NO_REPLY, 0);
    struct vs_transitioner_stats st;
    assert_int_equal(vs_transitioner_pass(f->s, &f->cfg, NOW, 0, NULL, &st), 0);
    assert_int_equal(st.nerrored, 2);
    assert_int_equal(st.nresults_created, 0);
    assert_int_equal(q3(f, "SELECT error_mask FROM workunit WHERE id=", w, ""),
                     VS_WU_ERROR_TOO_MANY_ERROR_RESULTS);
    assert_int_equal(q3(f, "SELECT assimilate_state FROM workunit WHERE id=", w, ""),
                     VS_ASSIMILATE_READY);
    assert_int_equal(q3(f, "SELECT transition_time FROM workunit WHERE id=", w, ""), VS_TIME_NEVER);
    assert_int_equal(pf_sql(f, "SELECT outcome FROM result WHERE name='e_2'"),
                     VS_RESULT_OUTCOME_DIDNT_NEED);
    assert_int_equal(pf_sql(f, "SELECT server_state FROM result WHERE name='e_2'"),
                     VS_RESULT_SERVER_STATE_OVER);
    assert_int_equal(q3(f, "SELECT error_mask FROM workunit WHERE id=", t, ""),
                     VS_WU_ERROR_TOO_MANY_TOTAL_RESULTS);
}

static void test_need_validate(void **state)
{
    struct project_fixture *f = *state;
    int64_t w = wu_add(f, "v", 0, 1, 2, 1);
    res_add(f, w, "v_0", VS_RESULT_SERVER_STATE_OVER, VS_RESULT_OUTCOME_SUCCESS, 0);
    assert_int_equal(vs_transitioner_pass(f->s, &f->cfg, NOW, 0, NULL, NULL), 0);
    assert_int_equal(q3(f, "SELECT need_validate FROM workunit WHERE id=", w, ""), 1);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM result"), 1); /* success counts */
}

static void test_bad_template_defers(void **state)
{
    struct project_fixture *f = *state;
    int64_t bad = wu_add(f, "bad", 0, 1, 1, 1);
    struct vs_workunit wu;
    memset(&wu, 0, sizeof(wu));
    assert_int_equal(vs_store_workunit_get(f->s, bad, &wu), 0);
    assert_int_equal(vs_strlcpy(wu.result_template_file, "templates/gone", VS_NAME_MAX), 0);
    assert_int_equal(vs_store_workunit_update(f->s, &wu), 0);
    vs_workunit_cleanup(&wu);
    int64_t good = wu_add(f, "good", 0, 2, 2, 1);
    struct vs_transitioner_stats st;
    assert_int_equal(vs_transitioner_pass(f->s, &f->cfg, NOW, 0, NULL, &st), 0);
    assert_int_equal(q3(f, "SELECT count(*) FROM result WHERE workunitid=", good, ""), 2);
    assert_int_equal(q3(f, "SELECT count(*) FROM result WHERE workunitid=", bad, ""), 0);
    assert_int_equal(q3(f, "SELECT transition_time FROM workunit WHERE id=", bad, ""), NOW + 3600);
}

/*
 * The deferral of a WU with a bad template writes only its transition_time:
 * a column written after the scan read the row (here the scheduler's
 * hr_class, written by a trigger while the transitioner handles the WU
 * before it in the same page) survives. Before, the scan's stale copy was
 * written back whole and the class was lost.
 */
static void test_bad_template_keeps_concurrent_write(void **state)
{
    struct project_fixture *f = *state;
    int64_t good = wu_add(f, "first", 0, 1, 1, 1);
    int64_t bad = wu_add(f, "second", 0, 1, 1, 1);
    char sql[512];
    snprintf(sql, sizeof(sql),
             "UPDATE workunit SET result_template_file = 'templates/gone' WHERE id = %lld",
             (long long)bad);
    pf_exec(f, sql);
    char cond[64], stmt[128];
    snprintf(cond, sizeof(cond), "NEW.workunitid = %lld", (long long)good);
    snprintf(stmt, sizeof(stmt), "UPDATE workunit SET hr_class = 7, mod_time = 5 WHERE id = %lld",
             (long long)bad);
    assert_int_equal(vs_test_trigger(f->cfg.store_url, "claim_meanwhile", "AFTER INSERT", "result",
                                     cond, stmt, NULL),
                     0);
    struct vs_transitioner_stats st;
    assert_int_equal(vs_transitioner_pass(f->s, &f->cfg, NOW, 0, NULL, &st), 0);
    assert_int_equal(q3(f, "SELECT count(*) FROM result WHERE workunitid=", good, ""), 1);
    assert_int_equal(q3(f, "SELECT transition_time FROM workunit WHERE id=", bad, ""), NOW + 3600);
    assert_int_equal(q3(f, "SELECT hr_class FROM workunit WHERE id=", bad, ""), 7);
}

struct thread_arg {
    struct project_fixture *f;
    int rc;
};

static void *pass_thread(void *p)
{
    struct thread_arg *a = p;
    struct vs_store *s;
    a->rc = vs_project_store_open(&a->f->cfg, false, NULL, &s);
    if (a->rc == 0) {
        a->rc = vs_transitioner_pass(s, &a->f->cfg, NOW, 0, NULL, NULL);
        vs_store_close(s);
    }
    return NULL;
}

static void test_concurrent_passes(void **state)
{
    struct project_fixture *f = *state;
    char name[32];
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof(name), "c%d", i);
        wu_add(f, name, 0, 2, 2, 1);
    }
    pthread_t t[2];
    struct thread_arg a[2] = {{f, -1}, {f, -1}};
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, pass_thread, &a[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(a[0].rc, 0);
    assert_int_equal(a[1].rc, 0);
    /* Exactly target_nresults each, none deferred by a clash. */
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM result"), 80);
    assert_int_equal(pf_sql(f, "SELECT max(n) FROM (SELECT count(*) n FROM result GROUP BY "
                               "workunitid) AS per_wu"),
                     2);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM workunit WHERE transition_time <> 1700907200"),
                     0);
}

/* A full-locality app's results go next to the other results of their
 * file (store_cluster.c; SQLite), even for workunits made
 * interleaved: two files' results, each in increasing ids, F0's in one
 * block of 64 adjacent ids. Another app's results are placed as before. */
static void test_locality_results_placed(void **state)
{
    struct project_fixture *f = *state;
    char sql[128];
    snprintf(sql, sizeof(sql), "UPDATE app SET locality_scheduling = 2 WHERE id = %lld",
             (long long)f->appid);
    pf_exec(f, sql);
    for (int k = 0; k < 10; k++) {
        char name[32];
        for (int i = 0; i < 2; i++) {
            snprintf(name, sizeof(name), "F%d__%d", i, k);
            wu_add(f, name, 0, 2, 4, 1);
        }
    }
    struct vs_transitioner_stats st;
    assert_int_equal(vs_transitioner_pass(f->s, &f->cfg, NOW, 0, NULL, &st), 0);
    assert_int_equal(st.nresults_created, 40);
    const char *span = "SELECT max(r.id) - min(r.id) FROM result r WHERE r.name LIKE 'F0%'";
    const char *order = "SELECT count(*) FROM result a JOIN result b ON a.name < b.name AND "
                        "substr(a.name, 1, 2) = substr(b.name, 1, 2) AND length(a.name) = "
                        "length(b.name) AND a.id > b.id";
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM result WHERE name LIKE 'F0%'"), 20);
    if (!vs_test_pg()) {
        assert_int_equal(pf_sql(f, span), 19); /* 20 adjacent ids */
        assert_int_equal(pf_sql(f, order), 0); /* made in name order: ids increase */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_new_workunits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_assigned, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeout_and_retry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_need_validate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_template_defers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_template_keeps_concurrent_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_passes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_locality_results_placed, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
