/*
 * The figures volunteers judge a client by (src/sim/vol_figures.c), by
 * hand on the accumulator and on whole runs, and the fair policy's
 * behaviours that they show (docs/simulator.md).
 */
#include "vs_test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/metrics.h"
#include "volsched/scenario.h"
#include "volsched/sim.h"

#include "sim_fixture.h"

/* 7-day windows: A alone for 7 days, then B alone for 7 days (the marks
 * fall inside the intervals, so they are interpolated). */
static void test_windows_by_hand(void **state)
{
    (void)state;
    struct vs_scenario s;
    simfx_parse("A(1, 10, 1) B(1, 10, 1) NCPUS = 1", &s);
    struct vs_metrics m;
    vs_metrics_init(&m, &s);
    int a[2] = {1, 0}, b[2] = {0, 1};
    /* Odd interval lengths, so that no event falls on a mark. */
    for (double t = 0; t < 7 * 86400.0; t += 1000)
        vs_metrics_interval(&m, fmin(1000, 7 * 86400.0 - t), true, a);
    for (double t = 0; t < 7 * 86400.0; t += 1300)
        vs_metrics_interval(&m, fmin(1300, 7 * 86400.0 - t), true, b);
    vs_metrics_preempt(&m, 1);
    vs_metrics_rollback(&m, 1, 1800);
    vs_metrics_restart_lost(&m, 600); /* a resume cost: not a rollback */
    vs_metrics_late_start(&m, 0);
    vs_metrics_queued(&m, 0, 7200);
    vs_metrics_queued(&m, 0, 3600);
    vs_metrics_sent(&m, 1, 4);
    struct vs_sim_result r;
    vs_metrics_finish(&m, &r);
    /* The first window is all A, the last all B. */
    assert_true(fabs(r.projects[0].share_max_7d - 1) < 1e-9);
    assert_true(fabs(r.projects[0].share_min_7d) < 1e-9);
    assert_true(fabs(r.projects[1].share_max_7d - 1) < 1e-9);
    assert_true(fabs(r.projects[1].share_min_7d) < 1e-9);
    assert_int_equal(r.projects[1].preemptions, 1);
    assert_true(fabs(r.projects[1].preemptions_per_job - 0.25) < 1e-12);
    assert_true(fabs(r.projects[1].rollback - 1800) < 1e-9);
    assert_true(fabs(r.restart_waste - 2400) < 1e-9);
    assert_int_equal(r.projects[0].late_starts, 1);
    assert_true(fabs(r.projects[0].peak_queued - 7200) < 1e-9);
    vs_sim_result_cleanup(&r);
    vs_metrics_cleanup(&m);

    /* Shorter than a window: the run is the window. */
    vs_metrics_init(&m, &s);
    int both[2] = {1, 1};
    vs_metrics_interval(&m, 3600, true, a);
    vs_metrics_interval(&m, 3 * 3600, true, both);
    vs_metrics_finish(&m, &r);
    assert_true(fabs(r.projects[0].share_min_7d - 4.0 / 7) < 1e-12);
    assert_true(fabs(r.projects[0].share_max_7d - 4.0 / 7) < 1e-12);
    vs_sim_result_cleanup(&r);
    vs_metrics_cleanup(&m);
    vs_scenario_cleanup(&s);
}

/* On a whole run every 7-day share brackets the run's share, and the
 * sliding windows of a steady scenario stay near the target. */
static void test_windows_run(void **state)
{
    (void)state;
    struct vs_scenario s;
    simfx_parse("P1(0.1, 1, .5) P2(1, 24, .25) P3(1, 24, .25) NCPUS = 2 cpu_scheduling_period = 1",
                &s);
    struct vs_sim_result r;
    simfx_run(&s, "fair", 30, &r, NULL);
    for (size_t i = 0; i < r.nprojects; i++) {
        const struct vs_sim_project_result *p = &r.projects[i];
        assert_true(p->share_min_7d <= p->cpu_share + 1e-12);
        assert_true(p->share_max_7d >= p->cpu_share - 1e-12);
        assert_true(p->share_min_7d > p->share_target - 0.02);
        assert_true(p->share_max_7d < p->share_target + 0.02);
        assert_true(p->peak_queued > 0);
    }
    vs_sim_result_cleanup(&r);
    vs_scenario_cleanup(&s);
}

/* fair never starts a job from zero after its deadline (b_20d_smallbuf:
 * debt starts 29 such jobs, which only waste the CPU). */
static void test_no_late_start(void **state)
{
    (void)state;
    struct vs_scenario s;
    simfx_parse("P1(0.1, 1, .5) P2(1, 24, .25) P3(1, 24, .25) NCPUS=2 leave_in_memory=false "
                "cpu_scheduling_period=1 min_queue=0.24",
                &s);
    struct vs_sim_result r;
    simfx_run(&s, "debt", 20, &r, NULL);
    int64_t late = 0;
    for (size_t i = 0; i < r.nprojects; i++)
        late += r.projects[i].late_starts;
    assert_true(late > 10); /* the scenario does tempt a policy */
    vs_sim_result_cleanup(&r);
    simfx_run(&s, "fair", 20, &r, NULL);
    for (size_t i = 0; i < r.nprojects; i++)
        assert_int_equal(r.projects[i].late_starts, 0);
    vs_sim_result_cleanup(&r);
    vs_scenario_cleanup(&s);
}

/* P2's apps checkpoint hourly and are removed from memory when preempted;
 * P1's half-hour jobs due in two hours put fair in deadline mode now and
 * then. fair takes no victim that would throw much work away (more than
 * a tenth of a period): P2 waits for its checkpoint (it lost 11.5 CPU
 * hours in 111 preemptions before the rule; 0.5 in 9 with it), and P1
 * still meets every deadline. */
static void test_no_costly_preemption(void **state)
{
    (void)state;
    struct vs_scenario s;
    simfx_parse("P1(0.5, 2, .5) P2(10, 100, .5, checkpoint_period = 1h) NCPUS=2 "
                "leave_in_memory=false min_queue=2.4",
                &s);
    struct vs_sim_result r;
    simfx_run(&s, "fair", 20, &r, NULL);
    const struct vs_sim_project_result *p2 = simfx_proj(&r, "P2");
    assert_true(p2->rollback < 3600);
    assert_true(p2->preemptions_per_job < 1);
    assert_int_equal(r.deadline_misses, 0);
    vs_sim_result_cleanup(&r);
    vs_scenario_cleanup(&s);
}

/* c_stress_20d_avail: the round-robin simulation flags misses most of the
 * time (at a tenth of one part-time CPU, a 16-hour job due in 24 looks
 * late), but the deadline-order schedule mostly has room: fair spends
 * under a tenth of the time in deadline mode (29% without the rule, with
 * the same misses), where shortfall spends more. */
static void test_no_needless_deadline_mode(void **state)
{
    (void)state;
    struct vs_scenario s;
    simfx_parse("S01(1, 2, .1) S02(2, 4, .1) S03(4, 8, .1) S04(8, 12, .1) S05(16, 24, .1) "
                "S06(32, 48, .1) S07(48, 72, .1) S08(96, 120, .1) S09(0.4, 1.5, .1) "
                "S10(192, 240, .1) NCPUS=1 min_queue=2.4 on_frac=0.8 active_frac=0.9",
                &s);
    struct vs_sim_result fair, sf;
    simfx_run(&s, "fair", 20, &fair, NULL);
    simfx_run(&s, "shortfall", 20, &sf, NULL);
    assert_true(fair.edf_frac < 0.1);
    assert_true(fair.edf_frac < sf.edf_frac);
    /* Out of deadline mode it wastes less, not more (a job lost to the
     * host's off time is left, not run to its late end). */
    assert_true(fair.wasted_frac < 0.5 * sf.wasted_frac);
    vs_sim_result_cleanup(&fair);
    vs_sim_result_cleanup(&sf);
    vs_scenario_cleanup(&s);
}

/* extra_queue with min_queue = 0 (BOINC's work_buf_additional_days with
 * no minimum): once a CPU would run dry the client asks for enough to hold
 * extra_queue, so it holds several hours of work and contacts the servers
 * far less often than with no extra_queue (one job a CPU, one RPC a job). */
static void test_extra_queue_without_min(void **state)
{
    (void)state;
    struct vs_scenario s0, s1;
    simfx_parse("P1(1, 240, 1) P2(1, 240, 1) NCPUS = 2 min_queue = 0", &s0);
    simfx_parse("P1(1, 240, 1) P2(1, 240, 1) NCPUS = 2 min_queue = 0 extra_queue = 1d", &s1);
    struct vs_sim_result r0, r1;
    simfx_run(&s0, "fair", 10, &r0, NULL);
    simfx_run(&s1, "fair", 10, &r1, NULL);
    assert_true(r1.idle_frac < 0.005);
    assert_int_equal(r1.deadline_misses, 0);
    assert_true(r1.rpcs * 5 < r0.rpcs);
    /* Each holds up to its share of the buffer (a day a CPU), not 2 hours. */
    assert_true(simfx_proj(&r1, "P1")->peak_queued > 8 * 3600.0);
    assert_true(simfx_proj(&r1, "P2")->peak_queued > 8 * 3600.0);
    vs_sim_result_cleanup(&r0);
    vs_sim_result_cleanup(&r1);
    vs_scenario_cleanup(&s0);
    vs_scenario_cleanup(&s1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_windows_by_hand),
        cmocka_unit_test(test_windows_run),
        cmocka_unit_test(test_no_late_start),
        cmocka_unit_test(test_no_costly_preemption),
        cmocka_unit_test(test_no_needless_deadline_mode),
        cmocka_unit_test(test_extra_queue_without_min),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
