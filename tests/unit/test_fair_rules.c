/*
 * fair's deadline-mode rules at the policy level (src/policy/client/
 * fair_sched.c, cpu_sched.c, enforce.c; whole runs in test_sim_figures.c):
 * the hopeless last, shortest remaining first; no deadline mode when slack
 * is ample, deadline mode when a job's slack is short; no victim that
 * would throw much work away.
 */
#include "vs_test.h"

#include <math.h>
#include <string.h>

#include "volsched/client_policy.h"

#include "cpolicy_fixture.h"

static void sched(struct fx *f, enum vs_cpolicy pol, struct vs_rrsim_out *rr,
                  struct vs_csched_out *sc)
{
    assert_int_equal(vs_rrsim_run(pol, &f->st, &f->ws, rr), 0);
    assert_int_equal(vs_csched_run(pol, &f->st, rr, &f->ws, sc), 0);
}

/*
 * Two started jobs that cannot make their deadlines (H1: 5 hours left, due
 * in half an hour; H2: 1 hour left, due in 0.9) and one that can (OK: 1
 * hour due in 1.5, too close to wait a period). On 2 CPUs seed 000 runs by
 * deadline: H1 and H2. fair runs OK first, then the hopeless by shortest
 * remaining: H2, not H1.
 */
static void test_hopeless_last(void **state)
{
    (void)state;
    for (int ncpus = 2; ncpus <= 6; ncpus += 4) { /* the scan and the heap */
        struct fx f;
        fx_init(&f, ncpus, 0);
        size_t a = fx_project(&f, "A", 1), b = fx_project(&f, "B", 1), c = fx_project(&f, "C", 1);
        size_t h1 = fx_result(&f, NULL, a, 5 * 3600, 0.5 * 3600);
        size_t h2 = fx_result(&f, NULL, b, 3600, 0.9 * 3600);
        size_t ok = fx_result(&f, NULL, c, 3600, 1.5 * 3600);
        f.r[h1].task = f.r[h2].task = VS_CTASK_SUSPENDED;
        f.r[h1].received = f.r[h2].received = f.r[ok].received = -3600;
        f.st.host.ncpus = 2;
        if (ncpus > 2) {
            /* More CPUs than EDF_SCAN_MAX_CPUS: the heap's order, with
             * two far-off jobs, which can make it and so come before the
             * hopeless. */
            f.st.host.ncpus = ncpus;
            for (int k = 0; k < 2; k++)
                fx_result(&f, NULL, a, 3600, 1e9);
        }
        struct vs_rrsim_out rr;
        struct vs_csched_out sc;
        sched(&f, VS_CPOLICY_SHORTFALL, &rr, &sc);
        assert_true(sc.why[h1] == VS_CSCHED_EDF);
        sched(&f, VS_CPOLICY_FAIR, &rr, &sc);
        assert_int_equal(sc.order[0], ok);
        if (ncpus == 2) {
            assert_int_equal(sc.order[1], h2);
            assert_true(sc.why[h1] == VS_CSCHED_NO);
        } else {
            /* ok, the far-off two, then H2 before H1. */
            assert_int_equal(sc.n, 5);
            assert_int_equal(sc.order[3], h2);
            assert_int_equal(sc.order[4], h1);
        }
        fx_cleanup(&f);
    }
}

/* A started job that can no longer make its deadline (A: 10 hours left,
 * due in 5) is lost anyway: fair leaves it out of the round-robin
 * simulation and the work fetch's queue, so B (1-hour jobs due in 4
 * hours) is asked for work, and B's job runs before it. (Counted, it
 * made every job B could send later still: nobody was asked.) */
static void test_lost_job_no_block(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 1, 0.1 * 3600);
    size_t a = fx_project(&f, "A", 1), b = fx_project(&f, "B", 1);
    size_t lost = fx_result(&f, NULL, a, 10 * 3600, 5 * 3600);
    f.r[lost].task = VS_CTASK_RUNNING;
    f.r[lost].received = -3600;
    f.p[a].job_est = f.p[b].job_est = 3600;
    f.p[a].job_delay_bound = 100 * 3600;
    f.p[b].job_delay_bound = 4 * 3600;
    f.p[b].ltd = 3600; /* B is owed more: asked first */
    struct vs_cpolicy_out out;
    assert_int_equal(vs_cpolicy_pass(VS_CPOLICY_FAIR, &f.st, &f.ws, &out), 0);
    assert_int_equal(out.fetch.project, (long)b);
    /* Alone, it still runs (nothing else can use the CPU). */
    assert_true(out.sched.why[lost] != VS_CSCHED_NO);
    size_t rb = fx_result(&f, NULL, b, 3600, 4 * 3600);
    assert_int_equal(vs_cpolicy_pass(VS_CPOLICY_FAIR, &f.st, &f.ws, &out), 0);
    assert_true(out.sched.why[rb] != VS_CSCHED_NO);
    assert_true(out.sched.why[lost] == VS_CSCHED_NO);
    fx_cleanup(&f);
}

/* Only a backup project (R = 0) has work: its three unstarted results are
 * the candidates of CPUs nothing else uses, and all three run on 3 CPUs
 * (the list of them, moved to the front over itself, once lost one). */
static void test_backup_only_fills_cpus(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 3, 0);
    size_t z = fx_project(&f, "Z", 0);
    size_t r[3];
    for (int i = 0; i < 3; i++)
        r[i] = fx_result(&f, NULL, z, 3600, 1e6);
    struct vs_rrsim_out rr;
    struct vs_csched_out sc;
    sched(&f, VS_CPOLICY_FAIR, &rr, &sc);
    assert_int_equal(sc.n, 3);
    for (int i = 0; i < 3; i++)
        assert_true(sc.why[r[i]] != VS_CSCHED_NO);
    fx_cleanup(&f);
}

/* A 10-hour job of a tenth-share project due in 50 hours misses under the
 * round-robin simulation (it gets a tenth of the CPU while B's 60 hours
 * last), but a deadline-order
 * schedule starting two periods from now has 38 hours to spare: fair stays
 * out of deadline mode and runs by debt (B, owed more); shortfall runs A by
 * EDF. Due in 11.5 hours (slack under a period) fair runs A by deadline. */
static void test_ample_slack(void **state)
{
    (void)state;
    for (int tight = 0; tight < 2; tight++) {
        struct fx f;
        fx_init(&f, 1, 0);
        size_t a = fx_project(&f, "A", 1), b = fx_project(&f, "B", 9);
        size_t ra = fx_result(&f, NULL, a, 10 * 3600, (tight ? 11.5 : 50) * 3600);
        /* B has 60 hours of far-off work: A gets a tenth of the CPU for
         * longer than its deadline in the round-robin simulation. */
        size_t rb = fx_result(&f, NULL, b, 3600, 200 * 3600);
        for (int k = 1; k < 60; k++)
            fx_result(&f, NULL, b, 3600, 200 * 3600);
        f.r[ra].received = -86400;
        f.p[b].ltd = f.p[b].std = 1e4;
        struct vs_rrsim_out rr;
        struct vs_csched_out sc;
        sched(&f, VS_CPOLICY_SHORTFALL, &rr, &sc);
        assert_int_equal(rr.deadlines_missed[a], 1);
        assert_true(sc.why[ra] == VS_CSCHED_EDF);
        sched(&f, VS_CPOLICY_FAIR, &rr, &sc);
        if (tight) {
            assert_true(sc.why[ra] == VS_CSCHED_EDF);
        } else {
            assert_true(sc.why[rb] == VS_CSCHED_DEBT);
            assert_true(sc.why[ra] == VS_CSCHED_NO);
        }
        fx_cleanup(&f);
    }
}

/* In deadline mode fair takes no victim that has run 40 minutes since its
 * checkpoint and would be removed from memory: the job that misses waits
 * for the next checkpoint. One 2 minutes past its checkpoint is taken. */
static void test_no_costly_victim(void **state)
{
    (void)state;
    for (int fresh = 0; fresh < 2; fresh++) {
        struct fx f;
        fx_init(&f, 1, 0);
        size_t a = fx_project(&f, "A", 1), b = fx_project(&f, "B", 1);
        size_t run = fx_result(&f, NULL, a, 5 * 3600, 1e9);
        size_t urgent = fx_result(&f, NULL, b, 3600, 1.05 * 3600);
        f.r[run].task = VS_CTASK_RUNNING;
        f.r[run].running_since = -7200;
        f.r[run].checkpointed = true;
        f.r[run].wall_since_checkpoint = fresh ? 120 : 2400;
        f.r[run].checkpoint_time = -f.r[run].wall_since_checkpoint;
        f.r[urgent].received = -3600;
        f.st.last_sched_time = 0;
        struct vs_rrsim_out rr;
        struct vs_csched_out sc;
        struct vs_cenforce_out en;
        sched(&f, VS_CPOLICY_FAIR, &rr, &sc);
        assert_true(rr.deadline_missed[urgent]);
        assert_true(sc.why[urgent] == VS_CSCHED_EDF);
        assert_int_equal(vs_cenforce_run(VS_CPOLICY_FAIR, &f.st, &rr, &sc, &f.ws, &en), 0);
        assert_int_equal(en.n, fresh ? 2 : 0);
        /* shortfall takes it anyway. */
        sched(&f, VS_CPOLICY_SHORTFALL, &rr, &sc);
        assert_int_equal(vs_cenforce_run(VS_CPOLICY_SHORTFALL, &f.st, &rr, &sc, &f.ws, &en), 0);
        assert_int_equal(en.n, 2);
        fx_cleanup(&f);
    }
}

/* One CPU, P1's 30-minute jobs due in 1.5 hours and P2's 10-hour jobs due
 * in 100 (equal shares). A P2 job alone holds the CPU past P1's slack, so
 * P1's server refuses P1 while it runs: the others'-deadlines rule, which
 * never let P2 ask beside P1, starved it (one P2 job in 10 days). Owed
 * more, with nothing queued, P2 is asked under its share cap (its turn);
 * owed less, it is not. */
static void test_long_job_takes_turn(void **state)
{
    (void)state;
    for (int owed = 0; owed < 2; owed++) {
        struct fx f;
        fx_init(&f, 1, 0.1 * 86400);
        size_t p1 = fx_project(&f, "P1", 0.5), p2 = fx_project(&f, "P2", 0.5);
        size_t r = fx_result(&f, NULL, p1, 1800, 1.5 * 3600);
        f.r[r].task = VS_CTASK_RUNNING;
        fx_result(&f, NULL, p1, 1800, 1.5 * 3600);
        f.p[p1].job_est = 1800;
        f.p[p1].job_delay_bound = 1.5 * 3600;
        f.p[p2].job_est = 10 * 3600;
        f.p[p2].job_delay_bound = 100 * 3600;
        f.p[p2].ltd = owed ? 6 * 3600 : 3600;
        f.p[p1].ltd = -f.p[p2].ltd;
        struct vs_cpolicy_out out;
        assert_int_equal(vs_cpolicy_pass(VS_CPOLICY_FAIR, &f.st, &f.ws, &out), 0);
        if (owed)
            assert_int_equal(out.fetch.project, (long)p2);
        else
            assert_true(out.fetch.project != (long)p2);
        fx_cleanup(&f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hopeless_last),     cmocka_unit_test(test_backup_only_fills_cpus),
        cmocka_unit_test(test_lost_job_no_block), cmocka_unit_test(test_ample_slack),
        cmocka_unit_test(test_no_costly_victim),  cmocka_unit_test(test_long_job_takes_turn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
