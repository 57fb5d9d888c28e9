/*
 * Batch tail acceleration in the server (server/submit_tail.h) on a real
 * store: a submitted batch of 10 jobs with 9 done is in its tail; a host
 * with fast, good returns may take its jobs and a slow one may not (jobs
 * of other batches stay open to both); its one job whose instance has been
 * out on the slow host for ten days gets one more instance (target_nresults
 * + 1, transition now), once; with the rule off, nothing changes.
 */
#include "vs_test.h"

#include "project_fixture.h"
#include "volsched/store_submit.h"
#include "volsched/submit_tail.h"

#define T0 1700000000

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

static int64_t host(struct project_fixture *f)
{
    struct vs_host h;
    memset(&h, 0, sizeof(h));
    h.userid = f->userid;
    h.create_time = T0;
    assert_int_equal(vs_store_host_add(f->s, &h), 0);
    return h.id;
}

/* The batch: 10 jobs (one result each) of which 9 are done; the open one's
 * result is out on slow since T0 - 10 days. fast returned 20 results in an
 * hour each, slow 20 in two days each. */
static int64_t make(struct project_fixture *f, int64_t fast, int64_t slow)
{
    struct vs_batch b = {.user_id = f->userid,
                         .app_id = f->appid,
                         .create_time = T0 - 20 * 86400,
                         .state = VS_BATCH_IN_PROGRESS,
                         .njobs = 10};
    assert_int_equal(vs_store_batch_add(f->s, &b), 0);
    int64_t r0 = pf_add_jobs(f, "tb", 10, 1, 1e12);
    char q[400];
    snprintf(q, sizeof(q), "UPDATE workunit SET batch = %lld WHERE name LIKE 'tb_%%'",
             (long long)b.id);
    pf_exec(f, q);
    snprintf(q, sizeof(q), "UPDATE result SET batch = %lld WHERE name LIKE 'tb_%%'",
             (long long)b.id);
    pf_exec(f, q);
    pf_exec(f, "UPDATE workunit SET canonical_resultid = 1 WHERE name LIKE 'tb_%' AND name <> "
               "'tb_9'");
    snprintf(q, sizeof(q),
             "UPDATE result SET server_state = 4, hostid = %lld, sent_time = %lld WHERE id = %lld",
             (long long)slow, (long long)(T0 - 10 * 86400), (long long)(r0 + 9));
    pf_exec(f, q);
    /* The hosts' records: done results of another, finished batch. */
    int64_t first = pf_add_jobs(f, "rec", 40, 1, 1e12);
    for (int i = 0; i < 40; i++) {
        bool quick = i < 20;
        snprintf(q, sizeof(q),
                 "UPDATE result SET server_state = 5, outcome = 1, validate_state = 1, "
                 "hostid = %lld, sent_time = %lld, received_time = %lld WHERE id = %lld",
                 (long long)(quick ? fast : slow), (long long)(T0 - 5 * 86400),
                 (long long)(T0 - 5 * 86400 + (quick ? 3600 : 2 * 86400)), (long long)(first + i));
        pf_exec(f, q);
    }
    return b.id;
}

static void test_tail_pass(void **state)
{
    struct project_fixture *f = *state;
    int64_t fast = host(f), slow = host(f);
    int64_t batch = make(f, fast, slow);
    struct vs_sp_tail_params p;
    vs_sp_tail_defaults(&p);
    struct vs_submit_tail *t = vs_submit_tail_create(&p);
    /* Before the first pass, nothing is known: everything is allowed. */
    assert_true(vs_submit_tail_allows(t, batch, slow));
    struct vs_submit_tail_stats st;
    assert_int_equal(vs_submit_tail_pass(t, f->s, T0, NULL, &st), 0);
    assert_int_equal(st.tail_batches, 1);
    assert_int_equal(st.hosts_fit, 1);
    assert_int_equal(st.replicas, 1);
    assert_true(vs_submit_tail_allows(t, batch, fast));
    assert_false(vs_submit_tail_allows(t, batch, slow));
    assert_false(vs_submit_tail_allows(t, batch, 999));     /* unknown host */
    assert_true(vs_submit_tail_allows(t, batch + 1, slow)); /* another batch */
    assert_true(vs_submit_tail_allows(t, 0, slow));         /* no batch */
    assert_int_equal(pf_sql(f, "SELECT target_nresults FROM workunit WHERE name = 'tb_9'"), 2);
    assert_int_equal(pf_sql(f, "SELECT transition_time FROM workunit WHERE name = 'tb_9'"), T0);
    /* Once: the job has its extra instance. */
    assert_int_equal(vs_submit_tail_pass(t, f->s, T0 + 60, NULL, &st), 0);
    assert_int_equal(st.replicas, 0);
    assert_int_equal(pf_sql(f, "SELECT target_nresults FROM workunit WHERE name = 'tb_9'"), 2);
    vs_submit_tail_destroy(t);

    p.enabled = false;
    t = vs_submit_tail_create(&p);
    assert_int_equal(vs_submit_tail_pass(t, f->s, T0 + 120, NULL, &st), 0);
    assert_int_equal(st.tail_batches, 0);
    assert_true(vs_submit_tail_allows(t, batch, slow));
    vs_submit_tail_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tail_pass, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
