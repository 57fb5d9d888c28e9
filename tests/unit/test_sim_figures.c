/*
 * The figures volunteers judge a client by (src/sim/vol_figures.c), by
 * hand on the accumulator and on whole runs, and the fair policy's
 * behaviours that they show (issue 20, section 3).
 */
#include "vs_test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/metrics.h"
#include "volsched/scenario.h"
#include "volsched/sim.h"

static void parse(const char *text, struct vs_scenario *s)
{
    struct vs_scn_error e;
    int rc = vs_scenario_parse(text, strlen(text), s, &e);
    if (rc)
        print_error("%d:%d: %s\n", e.line, e.col, e.msg);
    assert_int_equal(rc, 0);
}

static void run(const struct vs_scenario *s, const char *policy, double days,
                struct vs_sim_result *r)
{
    struct vs_sim_options o = {.policy = policy, .duration = days * 86400};
    assert_int_equal(vs_sim_run(s, &o, r, NULL), 0);
}

static const struct vs_sim_project_result *proj(const struct vs_sim_result *r, const char *name)
{
    for (size_t i = 0; i < r->nprojects; i++)
        if (strcmp(r->projects[i].name, name) == 0)
            return &r->projects[i];
    fail_msg("no project %s", name);
    return NULL;
}

/* 7-day windows: A alone for 7 days, then B alone for 7 days (the marks
 * fall inside the intervals, so they are interpolated). */
static void test_windows_by_hand(void **state)
{
    (void)state;
    struct vs_scenario s;
    parse("A(1, 10, 1) B(1, 10, 1) NCPUS = 1", &s);
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
    parse("P1(0.1, 1, .5) P2(1, 24, .25) P3(1, 24, .25) NCPUS = 2 cpu_scheduling_period = 1", &s);
    struct vs_sim_result r;
    run(&s, "fair", 30, &r);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_windows_by_hand),
        cmocka_unit_test(test_windows_run),
    };
    (void)proj;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
