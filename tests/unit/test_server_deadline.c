/* Seed 000's server-side EDF check: a candidate is sent only if it meets its
 * deadline and no queued result misses its deadline by more than before. */
#include "vs_test.h"

#include <string.h>

#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/server_policy.h"

#include "sp_fixture.h"

/* One CPU at 3 GFLOPS with EDF on; the job takes secs of computing. */
static void setup(struct fx *f, struct vs_sp_ip_result *ip, int n)
{
    fx_init(f);
    f->cfg.workload_sim = true;
    f->host.p_ncpus = 1;
    f->req.ip_results = ip;
    f->req.n_ip_results = n;
    f->req.have_ip_results = true;
}

static void job(struct fx *f, double secs, double delay_bound)
{
    f->job.rsc_fpops_est = secs * 3e9;
    f->job.delay_bound = delay_bound;
}

static void test_candidate_vs_queued(void **state)
{
    (void)state;
    struct vs_sp_ip_result ip[] = {{.deadline = 10000, .remaining = 5000}};
    struct fx f;
    setup(&f, ip, 1);
    fx_start(&f, NULL, 0);
    /* The candidate's earlier deadline runs it first; the queued job then
     * finishes at 5000 + 5000 = 10000, exactly on time. */
    job(&f, 5000, 9000);
    assert_int_equal(fx_check(&f, NULL), VS_SP_OK);
    job(&f, 5001, 9000);
    struct vs_sp_verdict v;
    assert_int_equal(fx_check(&f, &v), VS_SP_WORKLOAD);
    /* The candidate itself would miss. */
    job(&f, 4000, 3999);
    assert_int_equal(fx_check(&f, &v), VS_SP_DEADLINE);
    job(&f, 4000, 4000);
    assert_int_equal(fx_check(&f, &v), VS_SP_OK);
    /* A later deadline runs after the queued job. */
    job(&f, 8000, 13000);
    assert_int_equal(fx_check(&f, &v), VS_SP_OK);
    job(&f, 8001, 13000);
    assert_int_equal(fx_check(&f, &v), VS_SP_DEADLINE);
    fx_done(&f);
}

static void test_already_late_queue(void **state)
{
    (void)state;
    /* The queued job already misses by 500 s: that is the baseline. */
    struct vs_sp_ip_result ip[] = {{.deadline = 1000, .remaining = 1500}};
    struct fx f;
    setup(&f, ip, 1);
    fx_start(&f, NULL, 0);
    job(&f, 100, 9000); /* after it: the miss stays 500 */
    assert_int_equal(fx_check(&f, NULL), VS_SP_OK);
    job(&f, 100, 500); /* before it: the miss grows to 600 */
    assert_int_equal(fx_check(&f, NULL), VS_SP_WORKLOAD);
    fx_done(&f);
}

static void test_two_cpus(void **state)
{
    (void)state;
    struct vs_sp_ip_result ip[] = {{.deadline = 10000, .remaining = 9000},
                                   {.deadline = 10000, .remaining = 9000}};
    struct fx f;
    setup(&f, ip, 2);
    f.host.p_ncpus = 2;
    fx_start(&f, NULL, 0);
    job(&f, 1000, 2000);
    assert_int_equal(fx_check(&f, NULL), VS_SP_OK);
    job(&f, 1001, 2000);
    assert_int_equal(fx_check(&f, NULL), VS_SP_WORKLOAD);
    fx_done(&f);
}

static void test_work_buf_min(void **state)
{
    (void)state;
    /* Deadlines are computation deadlines: minus the client's min queue. */
    struct vs_sp_ip_result ip[] = {{.deadline = 13600, .remaining = 5000}};
    struct fx f;
    setup(&f, ip, 1);
    f.host.work_buf_min = 3600;
    fx_start(&f, NULL, 0);
    job(&f, 5000, 12600);
    assert_int_equal(fx_check(&f, NULL), VS_SP_OK);
    job(&f, 5001, 12600);
    assert_int_equal(fx_check(&f, NULL), VS_SP_WORKLOAD);
    /* Seed 000: nothing whose deadline is before now + min_queue. */
    job(&f, 1, 3599);
    assert_int_equal(fx_check(&f, NULL), VS_SP_DEADLINE);
    fx_done(&f);
}

static void test_availability_scales_durations(void **state)
{
    (void)state;
    struct vs_sp_ip_result ip[] = {{.deadline = 10000, .remaining = 2500}};
    struct fx f;
    setup(&f, ip, 1);
    f.host.on_frac = 0.5; /* every duration doubles */
    fx_start(&f, NULL, 0);
    job(&f, 2500, 9000);
    assert_int_equal(fx_check(&f, NULL), VS_SP_OK);
    job(&f, 2501, 9000);
    assert_int_equal(fx_check(&f, NULL), VS_SP_WORKLOAD);
    fx_done(&f);
}

static void test_sent_jobs_join_the_workload(void **state)
{
    (void)state;
    struct vs_sp_ip_result ip[] = {{.deadline = 10000, .remaining = 5000}};
    struct fx f;
    setup(&f, ip, 1);
    fx_start(&f, NULL, 0);
    job(&f, 4000, 9000);
    assert_int_equal(fx_send(&f), VS_SP_OK);
    f.job.wu_id++;
    job(&f, 1000, 9000);
    assert_int_equal(fx_check(&f, NULL), VS_SP_OK); /* 4000+1000+5000 = 10000 */
    job(&f, 1001, 9000);
    assert_int_equal(fx_check(&f, NULL), VS_SP_WORKLOAD);
    fx_done(&f);
}

static void test_empty_queue(void **state)
{
    (void)state;
    struct fx f;
    setup(&f, NULL, 0);
    fx_start(&f, NULL, 0);
    job(&f, 2000, 1000);
    assert_int_equal(fx_check(&f, NULL), VS_SP_DEADLINE);
    f.cfg.deadline_exempt_empty_queue = true;
    assert_int_equal(fx_send(&f), VS_SP_OK);
    f.job.wu_id++;
    assert_int_equal(fx_check(&f, NULL), VS_SP_DEADLINE); /* no longer empty */
    fx_done(&f);
}

static void test_no_work_because_of_deadlines(void **state)
{
    (void)state;
    struct vs_sp_ip_result ip[] = {{.deadline = 10000, .remaining = 9000}};
    struct fx f;
    setup(&f, ip, 1);
    fx_start(&f, NULL, 0);
    assert_false(vs_sp_no_work_because_of_deadlines(&f.st));
    job(&f, 2000, 9000);
    assert_int_equal(fx_check(&f, NULL), VS_SP_WORKLOAD);
    assert_true(vs_sp_no_work_because_of_deadlines(&f.st));
    struct vs_buf b;
    vs_buf_init(&b, 4096);
    assert_int_equal(vs_sp_explain(&f.st, &b), 0);
    assert_string_equal(vs_buf_str(&b), "No tasks sent\nTasks won't finish in time: the tasks "
                                        "already queued on this computer would miss their "
                                        "deadlines\n");
    vs_buf_cleanup(&b);
    job(&f, 1000, 20000); /* fits after the queued job */
    assert_int_equal(fx_send(&f), VS_SP_OK);
    assert_false(vs_sp_no_work_because_of_deadlines(&f.st));
    fx_done(&f);
}

static void test_edf_direct(void **state)
{
    (void)state;
    /* The workload alone, without a state. */
    struct vs_sp_edf e;
    memset(&e, 0, sizeof e);
    double cpu_free[1];
    struct vs_sp_edf_job jobs[4];
    double base[4];
    e.ncpus = 1;
    e.cpu_free = cpu_free;
    e.jobs = jobs;
    e.base_miss = base;
    e.cap = 4;
    assert_int_equal(vs_sp_edf_check(&e, 10, 10), VS_SP_OK);
    assert_int_equal(vs_sp_edf_check(&e, 10, 11), VS_SP_DEADLINE);
    vs_sp_edf_add(&e, 10, 10);
    vs_sp_edf_add(&e, 30, 10);
    assert_int_equal(e.n, 2);
    assert_true(e.jobs[0].deadline < e.jobs[1].deadline);
    assert_int_equal(vs_sp_edf_check(&e, 30, 10), VS_SP_OK); /* 10+10+10 = 30 */
    assert_int_equal(vs_sp_edf_check(&e, 25, 11), VS_SP_WORKLOAD);
    vs_free(e.snap); /* the only part the workload allocated here */
}

static void test_edf_long_queue_without_snapshots(void **state)
{
    (void)state;
    /* 2000 queued jobs on 64 CPUs is past the snapshot budget: the prefix
     * is replayed instead, with the same answers. */
    struct vs_sp_ip_result *ip = vs_xcalloc(2000, sizeof *ip);
    for (int i = 0; i < 2000; i++)
        ip[i] = (struct vs_sp_ip_result){.deadline = 1000, .remaining = 3000};
    struct fx f;
    setup(&f, ip, 2000);
    f.host.p_ncpus = 64;
    fx_start(&f, NULL, 0);
    assert_null(f.st.edf.snap);
    /* Every queued job already misses; anything that runs before them
     * makes one CPU's chain miss by more. */
    job(&f, 10, 500);
    assert_int_equal(fx_check(&f, NULL), VS_SP_WORKLOAD);
    job(&f, 10, 3e6);
    assert_int_equal(fx_check(&f, NULL), VS_SP_OK);
    f.host.p_ncpus = 8; /* 2001 x 8 doubles fit: same answers with snapshots */
    f.req.n_ip_results = 100;
    fx_start(&f, NULL, 0);
    assert_non_null(f.st.edf.snap);
    job(&f, 10, 500);
    assert_int_equal(fx_check(&f, NULL), VS_SP_WORKLOAD);
    job(&f, 10, 3e6);
    assert_int_equal(fx_check(&f, NULL), VS_SP_OK);
    fx_done(&f);
    vs_free(ip);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_candidate_vs_queued),
        cmocka_unit_test(test_already_late_queue),
        cmocka_unit_test(test_two_cpus),
        cmocka_unit_test(test_work_buf_min),
        cmocka_unit_test(test_availability_scales_durations),
        cmocka_unit_test(test_sent_jobs_join_the_workload),
        cmocka_unit_test(test_empty_queue),
        cmocka_unit_test(test_no_work_because_of_deadlines),
        cmocka_unit_test(test_edf_direct),
        cmocka_unit_test(test_edf_long_queue_without_snapshots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
