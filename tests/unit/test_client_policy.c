/*
 * Unit tests of src/policy/client: every rule of seeds 000 and 002 and of
 * the old weighted round-robin client, the seed examples, and property
 * tests over random queues.
 */
#include "vs_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy/client/internal.h"
#include "volsched/alloc.h"
#include "volsched/client_policy.h"
#include "volsched/rng.h"

#include "cpolicy_fixture.h"

#define EPS 1e-9

/* ---------------------------------------------------------------- names */

static void test_policy_names(void **state)
{
    (void)state;
    enum vs_cpolicy p;
    assert_int_equal(vs_cpolicy_parse("shortfall", &p), 0);
    assert_int_equal(p, VS_CPOLICY_SHORTFALL);
    assert_int_equal(vs_cpolicy_parse("debt", &p), 0);
    assert_int_equal(p, VS_CPOLICY_DEBT);
    assert_int_equal(vs_cpolicy_parse("wrr", &p), 0);
    assert_int_equal(p, VS_CPOLICY_WRR);
    for (int i = 0; i < VS_CPOLICY_COUNT; i++) {
        assert_int_equal(vs_cpolicy_parse(vs_cpolicy_name((enum vs_cpolicy)i), &p), 0);
        assert_int_equal(p, i);
    }
    assert_int_equal(vs_cpolicy_parse("Debt", &p), VS_EINVAL);
    assert_int_equal(vs_cpolicy_parse("", &p), VS_EINVAL);
    assert_int_equal(vs_cpolicy_parse(NULL, &p), VS_EINVAL);
    assert_string_equal(vs_cpolicy_name((enum vs_cpolicy)7), "?");
    assert_int_equal(VS_CPOLICY_DEFAULT, VS_CPOLICY_FAIR);
    assert_non_null(strstr(vs_cpolicy_names(), "wrr"));
}

static void test_validate(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 1, 10);
    size_t a = fx_project(&f, "a", 1);
    fx_result(&f, "a1", a, 5, 100);
    assert_int_equal(vs_cstate_validate(&f.st), 0);
    f.st.host.ncpus = 0;
    assert_int_equal(vs_cstate_validate(&f.st), VS_EINVAL);
    f.st.host.ncpus = 1;
    f.st.host.on_frac = 1.5;
    assert_int_equal(vs_cstate_validate(&f.st), VS_EINVAL);
    f.st.host.on_frac = 1;
    /* A share of 0 is a backup project; a negative one is invalid. */
    f.p[0].resource_share = 0;
    assert_int_equal(vs_cstate_validate(&f.st), 0);
    f.p[0].resource_share = -1;
    assert_int_equal(vs_cstate_validate(&f.st), VS_EINVAL);
    f.p[0].resource_share = 1;
    f.p[0].job_ncpus = -1;
    assert_int_equal(vs_cstate_validate(&f.st), VS_EINVAL);
    f.p[0].job_ncpus = 0;
    f.p[0].max_concurrent = -1;
    assert_int_equal(vs_cstate_validate(&f.st), VS_EINVAL);
    f.p[0].max_concurrent = 0;
    f.st.host.extra_queue = -1;
    assert_int_equal(vs_cstate_validate(&f.st), VS_EINVAL);
    f.st.host.extra_queue = 0;
    f.r[0].remaining = -1;
    assert_int_equal(vs_cstate_validate(&f.st), VS_EINVAL);
    f.r[0].remaining = 5;
    f.r[0].project = 3;
    assert_int_equal(vs_cstate_validate(&f.st), VS_EINVAL);
    f.r[0].project = 0;
    f.r[0].deadline = NAN;
    assert_int_equal(vs_cstate_validate(&f.st), VS_EINVAL);
    /* Every entry point refuses a bad snapshot. */
    struct vs_rrsim_out rr;
    assert_int_equal(vs_rrsim_run(VS_CPOLICY_SHORTFALL, &f.st, &f.ws, &rr), VS_EINVAL);
    assert_int_equal(vs_cdebt_update(VS_CPOLICY_SHORTFALL, &f.st), VS_EINVAL);
    struct vs_cpolicy_out out;
    assert_int_equal(vs_cpolicy_pass(VS_CPOLICY_DEBT, &f.st, &f.ws, &out), VS_EINVAL);
    fx_cleanup(&f);
}

/* ---------------------------------------------------------------- states */

static void test_result_states(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 1, 10);
    size_t a = fx_project(&f, "a", 1);
    size_t ready = fx_result(&f, "ready", a, 5, 100);
    size_t dl = fx_result(&f, "dl", a, 5, 100);
    size_t deferred = fx_result(&f, "deferred", a, 5, 100);
    size_t susp = fx_result(&f, "susp", a, 5, 100);
    size_t done = fx_result(&f, "done", a, 0, 100);
    f.r[dl].files = VS_CFILES_DOWNLOADING;
    f.r[deferred].files = VS_CFILES_DEFERRED;
    f.r[susp].suspended = true;
    f.r[done].done = true;

    assert_true(vs_cresult_runnable(&f.st, ready));
    assert_true(vs_cresult_nearly_runnable(&f.st, ready));
    assert_false(vs_cresult_runnable(&f.st, dl));
    assert_true(vs_cresult_nearly_runnable(&f.st, dl));
    assert_false(vs_cresult_runnable(&f.st, deferred));
    assert_false(vs_cresult_nearly_runnable(&f.st, deferred));
    assert_false(vs_cresult_runnable(&f.st, susp));
    assert_false(vs_cresult_nearly_runnable(&f.st, susp));
    assert_false(vs_cresult_runnable(&f.st, done));
    assert_false(vs_cresult_nearly_runnable(&f.st, done));
    /* A suspended project suspends its results. */
    f.p[a].suspended = true;
    assert_false(vs_cresult_runnable(&f.st, ready));
    assert_false(vs_cresult_nearly_runnable(&f.st, dl));
    fx_cleanup(&f);
}

static void test_project_states(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 1, 10);
    f.st.now = 1000;
    size_t run = fx_project(&f, "run", 1);
    size_t dl = fx_project(&f, "dl", 1);
    size_t dl_def = fx_project(&f, "dl_def", 1);
    size_t deferred = fx_project(&f, "deferred", 1);
    size_t over = fx_project(&f, "over", 1);
    size_t lat = fx_project(&f, "lat", 1);
    size_t nnw = fx_project(&f, "nnw", 1);
    size_t susp = fx_project(&f, "susp", 1);
    fx_result(&f, "r", run, 5, 2000);
    f.r[fx_result(&f, "d", dl, 5, 2000)].files = VS_CFILES_DOWNLOADING;
    f.r[fx_result(&f, "d1", dl_def, 5, 2000)].files = VS_CFILES_DOWNLOADING;
    f.r[fx_result(&f, "d2", dl_def, 5, 2000)].files = VS_CFILES_DEFERRED;
    f.p[dl_def].no_new_work = true;
    f.p[deferred].min_rpc_time = 1001;
    f.p[deferred].no_new_work = true;
    f.p[over].ltd = -3601; /* sched_period is 3600 */
    f.p[lat].latency_limited_until = 1500;
    f.p[lat].no_new_work = true;
    f.p[nnw].no_new_work = true;
    f.p[susp].suspended = true;
    fx_result(&f, "s", susp, 5, 2000);

    unsigned fl[8];
    vs_cproject_states(&f.st, fl);
    assert_int_equal(fl[run], VS_CPS_RUNNABLE | VS_CPS_NEARLY_RUNNABLE | VS_CPS_FETCHABLE |
                                  VS_CPS_POT_RUNNABLE);
    assert_int_equal(fl[dl], VS_CPS_DOWNLOADING | VS_CPS_NEARLY_RUNNABLE | VS_CPS_FETCHABLE |
                                 VS_CPS_POT_RUNNABLE);
    /* One deferred download: not "downloading", and nothing else holds. */
    assert_int_equal(fl[dl_def], VS_CPS_NEARLY_RUNNABLE);
    assert_int_equal(fl[deferred], VS_CPS_DEFERRED);
    assert_int_equal(fl[over], VS_CPS_OVERWORKED | VS_CPS_POT_RUNNABLE);
    assert_int_equal(fl[lat], VS_CPS_LATENCY_LIMITED | VS_CPS_POT_RUNNABLE);
    assert_int_equal(fl[nnw], 0);
    assert_int_equal(fl[susp], 0);
    /* Deferral and latency limits end. */
    f.st.now = 1600;
    vs_cproject_states(&f.st, fl);
    assert_int_equal(fl[lat], 0);
    assert_int_equal(fl[deferred], 0);
    f.p[deferred].no_new_work = false;
    vs_cproject_states(&f.st, fl);
    assert_int_equal(fl[deferred], VS_CPS_FETCHABLE | VS_CPS_POT_RUNNABLE);
    /* Overworked is strict: ltd == -sched_period is not. */
    f.p[over].ltd = -3600;
    vs_cproject_states(&f.st, fl);
    assert_int_equal(fl[over], VS_CPS_FETCHABLE | VS_CPS_POT_RUNNABLE);
    /* A pending master fetch blocks fetching. */
    f.p[over].master_fetch_pending = true;
    vs_cproject_states(&f.st, fl);
    assert_int_equal(fl[over], 0);
    fx_cleanup(&f);
}

/* ---------------------------------------------------------------- rr sim */

/* Seed 000's example: NCPUS=2, min_queue=10, A (share 2) with A1 = 20/3 and
 * A2 = 8/3 CPU seconds, B (share 1) with B1 = 10. */
static void seed_example(struct fx *f)
{
    fx_init(f, 2, 10);
    size_t a = fx_project(f, "A", 2);
    size_t b = fx_project(f, "B", 1);
    fx_result(f, "A1", a, 20.0 / 3, 100);
    fx_result(f, "A2", a, 8.0 / 3, 100);
    fx_result(f, "B1", b, 10, 100);
}

static void test_rrsim_seed_example(void **state)
{
    (void)state;
    struct fx f;
    seed_example(&f);
    struct vs_rrsim_out rr;
    assert_int_equal(vs_rrsim_run(VS_CPOLICY_SHORTFALL, &f.st, &f.ws, &rr), 0);
    assert_float_equal(rr.finish[1], 4, EPS); /* A2 */
    assert_float_equal(rr.finish[0], 8, EPS); /* A1 */
    /* B1 ran at 2/3 CPU until 4, then a whole CPU: 10 - 8/3 - 4 left at 8. */
    assert_float_equal(rr.finish[2], 8 + 10.0 / 3, EPS);
    assert_float_equal(rr.shortfall[0], 4, EPS);
    assert_float_equal(rr.shortfall[1], 0, EPS);
    assert_float_equal(rr.total_shortfall, 2, EPS);
    assert_float_equal(rr.frs[0], 2.0 / 3, EPS);
    /* The same run gives seed 002's outputs: CPU seconds in [0, 10]. */
    assert_float_equal(rr.work_before_minq[0], 4.0 / 3 * 4 + 4, EPS);
    assert_float_equal(rr.work_before_minq[1], 2.0 / 3 * 4 + 4 + 2, EPS);
    assert_float_equal(rr.total_work_before_minq, 18, EPS);
    assert_float_equal(rr.end, 8 + 10.0 / 3, EPS);
    assert_int_equal(rr.deadlines_missed[0] + rr.deadlines_missed[1], 0);

    /* The debt policy simulates the same queue the same way. */
    struct vs_rrsim_out rr2;
    assert_int_equal(vs_rrsim_run(VS_CPOLICY_DEBT, &f.st, &f.ws, &rr2), 0);
    assert_float_equal(rr2.total_work_before_minq, 18, EPS);

    /* Shifting now shifts finishes, not the integrals. */
    f.st.now = 1000;
    for (int i = 0; i < 3; i++)
        f.r[i].deadline = 1100;
    assert_int_equal(vs_rrsim_run(VS_CPOLICY_SHORTFALL, &f.st, &f.ws, &rr), 0);
    assert_float_equal(rr.finish[1], 1004, EPS);
    assert_float_equal(rr.shortfall[0], 4, EPS);
    assert_float_equal(rr.total_shortfall, 2, EPS);
    fx_cleanup(&f);
}

static void test_rrsim_fractions_and_deadlines(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 1, 100);
    f.st.host.on_frac = 0.5;
    f.st.host.active_frac = 0.8;
    f.st.host.cpu_efficiency = 0.5;
    size_t a = fx_project(&f, "a", 1);
    fx_result(&f, "a1", a, 10, 49);
    fx_result(&f, "a2", a, 10, 51);
    struct vs_rrsim_out rr;
    assert_int_equal(vs_rrsim_run(VS_CPOLICY_SHORTFALL, &f.st, &f.ws, &rr), 0);
    /* 0.2 CPU seconds per second, shared by two: both end at 100. */
    assert_float_equal(rr.finish[0], 100, EPS);
    assert_float_equal(rr.finish[1], 100, EPS);
    assert_true(rr.deadline_missed[0]);
    assert_true(rr.deadline_missed[1]);
    assert_int_equal(rr.deadlines_missed[a], 2);
    assert_float_equal(rr.total_shortfall, 0, EPS);
    /* A deadline equal to the finish is met. */
    f.r[0].deadline = 100;
    assert_int_equal(vs_rrsim_run(VS_CPOLICY_SHORTFALL, &f.st, &f.ws, &rr), 0);
    assert_false(rr.deadline_missed[0]);
    assert_int_equal(rr.deadlines_missed[a], 1);
    fx_cleanup(&f);
}

static void test_rrsim_which_results(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 1, 10);
    size_t a = fx_project(&f, "a", 1);
    size_t nci = fx_project(&f, "nci", 1);
    f.p[nci].non_cpu_intensive = true;
    size_t dl = fx_result(&f, "dl", a, 4, 100);
    f.r[dl].files = VS_CFILES_DOWNLOADING;
    size_t def = fx_result(&f, "def", a, 4, 100);
    f.r[def].files = VS_CFILES_DEFERRED;
    size_t n = fx_result(&f, "n", nci, 4, 100);
    struct vs_rrsim_out rr;
    /* shortfall: a downloading result counts (nearly runnable). */
    assert_int_equal(vs_rrsim_run(VS_CPOLICY_SHORTFALL, &f.st, &f.ws, &rr), 0);
    assert_float_equal(rr.finish[dl], 4, EPS);
    assert_true(isinf(rr.finish[def]));
    assert_true(isinf(rr.finish[n]));
    assert_float_equal(rr.total_shortfall, 6, EPS);
    assert_float_equal(rr.shortfall[nci], 0, EPS);
    /* debt: only runnable results. */
    assert_int_equal(vs_rrsim_run(VS_CPOLICY_DEBT, &f.st, &f.ws, &rr), 0);
    assert_true(isinf(rr.finish[dl]));
    assert_float_equal(rr.total_work_before_minq, 0, EPS);
    assert_float_equal(rr.total_shortfall, 10, EPS);
    fx_cleanup(&f);
}

static void test_rrsim_waterfill(void **state)
{
    (void)state;
    /* 4 CPUs; A has share 9 but one result: it gets one CPU, B's three
     * results the other three. */
    struct fx f;
    fx_init(&f, 4, 0);
    size_t a = fx_project(&f, "A", 9);
    size_t b = fx_project(&f, "B", 1);
    fx_result(&f, "a", a, 10, 1e9);
    for (int i = 0; i < 3; i++)
        fx_result(&f, "b", b, 6, 1e9);
    struct vs_rrsim_out rr;
    assert_int_equal(vs_rrsim_run(VS_CPOLICY_SHORTFALL, &f.st, &f.ws, &rr), 0);
    assert_float_equal(rr.finish[0], 10, EPS);
    for (int i = 1; i < 4; i++)
        assert_float_equal(rr.finish[i], 6, EPS);
    /* 1 CPU, shares 3:1, one result each: 3/4 and 1/4 of the CPU. */
    fx_cleanup(&f);
    fx_init(&f, 1, 0);
    a = fx_project(&f, "A", 3);
    b = fx_project(&f, "B", 1);
    fx_result(&f, "a", a, 3, 1e9);
    fx_result(&f, "b", b, 3, 1e9);
    assert_int_equal(vs_rrsim_run(VS_CPOLICY_SHORTFALL, &f.st, &f.ws, &rr), 0);
    assert_float_equal(rr.finish[0], 4, EPS);
    /* After 4 s B had 1 CPU second, then the whole CPU for 2 more. */
    assert_float_equal(rr.finish[1], 6, EPS);
    fx_cleanup(&f);
}

static void test_rrsim_empty(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 3, 100);
    size_t a = fx_project(&f, "A", 1);
    fx_project(&f, "B", 3);
    struct vs_rrsim_out rr;
    assert_int_equal(vs_rrsim_run(VS_CPOLICY_SHORTFALL, &f.st, &f.ws, &rr), 0);
    assert_float_equal(rr.total_shortfall, 300, EPS);
    assert_float_equal(rr.shortfall[a], 75, EPS);
    assert_float_equal(rr.shortfall[1], 225, EPS);
    /* A project that is not fetchable keeps a share relative to the
     * fetchable ones: frs(A) = 1 / (3 + 1). */
    f.p[a].no_new_work = true;
    assert_int_equal(vs_rrsim_run(VS_CPOLICY_SHORTFALL, &f.st, &f.ws, &rr), 0);
    assert_float_equal(rr.frs[a], 0.25, EPS);
    assert_float_equal(rr.frs[1], 1, EPS);
    fx_cleanup(&f);
}

/* ---------------------------------------------------------------- debts */

static void test_debt_rule(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 1, 10);
    size_t a = fx_project(&f, "A", 3);
    size_t b = fx_project(&f, "B", 1);
    size_t c = fx_project(&f, "C", 1); /* no results: potentially runnable, not runnable */
    fx_result(&f, "a", a, 100, 1e9);
    fx_result(&f, "b", b, 100, 1e9);
    f.p[a].wall_cpu_period = 100;
    f.p[b].wall_cpu_period = 0;
    assert_int_equal(vs_cdebt_update(VS_CPOLICY_SHORTFALL, &f.st), 0);
    /* STD over {A, B}: A = 100, R = 4: A += 75 - 100, B += 25; then min 0. */
    assert_float_equal(f.p[a].std, 0, EPS);
    assert_float_equal(f.p[b].std, 50, EPS);
    assert_float_equal(f.p[c].std, 0, EPS);
    /* LTD over {A, B, C}: R = 5: A += 60 - 100, B += 20, C += 20, mean 0. */
    assert_float_equal(f.p[a].ltd, -40, EPS);
    assert_float_equal(f.p[b].ltd, 20, EPS);
    assert_float_equal(f.p[c].ltd, 20, EPS);
    /* The period's time is consumed. */
    assert_float_equal(f.p[a].wall_cpu_period, 0, EPS);
    /* Again with no CPU used: nothing changes. */
    assert_int_equal(vs_cdebt_update(VS_CPOLICY_DEBT, &f.st), 0);
    assert_float_equal(f.p[b].std, 50, EPS);
    assert_float_equal(f.p[a].ltd, -40, EPS);

    /* STD is capped at one day. */
    f.p[a].wall_cpu_period = 400000;
    assert_int_equal(vs_cdebt_update(VS_CPOLICY_SHORTFALL, &f.st), 0);
    assert_float_equal(f.p[a].std, 0, EPS);
    assert_float_equal(f.p[b].std, VS_CDEBT_STD_MAX, EPS);

    /* A project that stops being runnable leaves the STD set (0) but stays
     * in LTD's; a suspended one leaves both, keeping its LTD minus the mean
     * shift. */
    f.r[1].done = true;
    f.p[a].wall_cpu_period = 10;
    f.p[b].wall_cpu_period = 10;
    double ltd_b = f.p[b].ltd;
    assert_int_equal(vs_cdebt_update(VS_CPOLICY_SHORTFALL, &f.st), 0);
    assert_float_equal(f.p[b].std, 0, EPS);
    assert_float_equal(f.p[a].std, 0, EPS);
    /* LTD set {A, B, C}, A (all time counted) = 20, R = 5. */
    double sum = f.p[a].ltd + f.p[b].ltd + f.p[c].ltd;
    assert_float_equal(sum, 0, 1e-6);
    assert_float_equal(f.p[b].ltd, ltd_b + 20 * 0.2 - 10, 1e-6);
    fx_cleanup(&f);
}

static void test_account(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 2, 0);
    f.st.host.cpu_efficiency = 0.5;
    size_t a = fx_project(&f, "A", 1);
    size_t b = fx_project(&f, "B", 1);
    fx_result(&f, "a_run", a, 100, 1e9);
    fx_result(&f, "a_wait", a, 100, 1e9);
    fx_result(&f, "b_run", b, 3, 1e9);
    f.r[0].task = VS_CTASK_RUNNING;
    f.r[2].task = VS_CTASK_RUNNING;
    f.r[2].wall_since_checkpoint = 1;
    vs_cpolicy_account(&f.st, 10);
    assert_float_equal(f.r[0].remaining, 95, EPS);
    assert_float_equal(f.r[0].wall_since_checkpoint, 10, EPS);
    assert_float_equal(f.r[1].remaining, 100, EPS);
    assert_float_equal(f.r[1].wall_since_checkpoint, 0, EPS);
    assert_float_equal(f.r[2].remaining, 0, EPS); /* never below 0 */
    assert_float_equal(f.r[2].wall_since_checkpoint, 11, EPS);
    assert_float_equal(f.p[a].wall_cpu_period, 10, EPS);
    assert_float_equal(f.p[b].wall_cpu_period, 10, EPS);
    vs_cpolicy_account(&f.st, -5);
    vs_cpolicy_account(&f.st, NAN);
    assert_float_equal(f.p[a].wall_cpu_period, 10, EPS);
    /* The accounted time drives the debts: A and B ran equally. */
    assert_int_equal(vs_cdebt_update(VS_CPOLICY_SHORTFALL, &f.st), 0);
    assert_float_equal(f.p[a].std, 0, EPS);
    fx_cleanup(&f);
}

/* ---------------------------------------------------------------- CPU sched */

static size_t run_sched(struct fx *f, enum vs_cpolicy pol, struct vs_rrsim_out *rr,
                        struct vs_csched_out *sc)
{
    assert_int_equal(vs_rrsim_run(pol, &f->st, &f->ws, rr), 0);
    assert_int_equal(vs_csched_run(pol, &f->st, rr, &f->ws, sc), 0);
    return sc->n;
}

static void test_sched_edf(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 2, 0);
    size_t a = fx_project(&f, "A", 1);
    size_t b = fx_project(&f, "B", 100);
    /* A's results miss their deadlines under round-robin. */
    fx_result(&f, "a_late", a, 100, 150);
    fx_result(&f, "a_early", a, 100, 120);
    fx_result(&f, "a_tie", a, 100, 120);
    fx_result(&f, "b", b, 100, 1e9);
    fx_result(&f, "b2", b, 100, 1e9);
    f.p[b].std = 1000;
    struct vs_rrsim_out rr;
    struct vs_csched_out sc;
    run_sched(&f, VS_CPOLICY_SHORTFALL, &rr, &sc);
    assert_int_equal(rr.deadlines_missed[a], 3);
    assert_int_equal(sc.ncpu, 2);
    /* Earliest deadline first, ties by least index. */
    assert_int_equal(sc.order[0], 1);
    assert_int_equal(sc.order[1], 2);
    assert_int_equal(sc.why[1], VS_CSCHED_EDF);
    assert_int_equal(sc.why[4], VS_CSCHED_NO);

    /* With one missing result, EDF takes one CPU and debt the other. */
    f.r[0].deadline = 1e9;
    f.r[1].deadline = 1e9;
    f.r[2].remaining = 1;
    f.r[2].deadline = 1.5;
    run_sched(&f, VS_CPOLICY_DEBT, &rr, &sc);
    assert_int_equal(rr.deadlines_missed[a], 1);
    assert_int_equal(sc.order[0], 2);
    assert_int_equal(sc.why[2], VS_CSCHED_EDF);
    assert_int_equal(sc.order[1], 3); /* B: greatest debt, earliest deadline, least index */
    assert_int_equal(sc.why[3], VS_CSCHED_DEBT);

    /* wrr ignores deadlines: B has the debt, then after the payoff
     * (1800 s) B still leads A (0). */
    run_sched(&f, VS_CPOLICY_WRR, &rr, &sc);
    assert_int_equal(sc.order[0], 3);
    assert_int_equal(sc.order[1], 0);
    assert_int_equal(sc.why[0], VS_CSCHED_DEBT);
    fx_cleanup(&f);
}

static void test_sched_debt_and_payoff(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 2, 0);
    f.st.host.sched_period = 1000; /* payoff 500 */
    size_t a = fx_project(&f, "A", 1);
    size_t b = fx_project(&f, "B", 1);
    fx_result(&f, "a1", a, 10, 1e9);
    fx_result(&f, "a2", a, 10, 1e9);
    fx_result(&f, "b1", b, 10, 1e9);
    struct vs_rrsim_out rr;
    struct vs_csched_out sc;
    /* A's debt exceeds B's by more than a payoff: both CPUs to A. */
    f.p[a].std = 600;
    run_sched(&f, VS_CPOLICY_SHORTFALL, &rr, &sc);
    assert_int_equal(sc.order[0], 0);
    assert_int_equal(sc.order[1], 1);
    /* By less than a payoff: one each. */
    f.p[a].std = 400;
    run_sched(&f, VS_CPOLICY_SHORTFALL, &rr, &sc);
    assert_int_equal(sc.order[0], 0);
    assert_int_equal(sc.order[1], 2);
    /* Equal debts: least project index first. */
    f.p[a].std = 0;
    run_sched(&f, VS_CPOLICY_WRR, &rr, &sc);
    assert_int_equal(sc.order[0], 0);
    fx_cleanup(&f);
}

static void test_sched_result_choice(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 1, 0);
    size_t a = fx_project(&f, "A", 1);
    fx_result(&f, "late_deadline_first_received", a, 10, 1e6);
    fx_result(&f, "early_deadline", a, 10, 1e5);
    f.r[0].received = 5;
    f.r[1].received = 9;
    struct vs_rrsim_out rr;
    struct vs_csched_out sc;
    /* Seed 000: received first; seed 002: earliest deadline. */
    run_sched(&f, VS_CPOLICY_SHORTFALL, &rr, &sc);
    assert_int_equal(sc.order[0], 0);
    run_sched(&f, VS_CPOLICY_DEBT, &rr, &sc);
    assert_int_equal(sc.order[0], 1);
    run_sched(&f, VS_CPOLICY_WRR, &rr, &sc);
    assert_int_equal(sc.order[0], 0);
    /* A running result is preferred by all. */
    f.r[1].task = VS_CTASK_RUNNING;
    f.r[1].running_since = -1e6;
    run_sched(&f, VS_CPOLICY_SHORTFALL, &rr, &sc);
    assert_int_equal(sc.order[0], 1);
    f.r[1].task = VS_CTASK_SUSPENDED;
    f.r[0].task = VS_CTASK_RUNNING;
    run_sched(&f, VS_CPOLICY_DEBT, &rr, &sc);
    assert_int_equal(sc.order[0], 0);
    fx_cleanup(&f);
}

static void test_sched_keep_for_period(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 1, 0);
    f.st.now = 10000;
    f.st.host.sched_period = 3600;
    size_t a = fx_project(&f, "A", 1);
    size_t b = fx_project(&f, "B", 1);
    fx_result(&f, "a", a, 1e5, 1e9);
    fx_result(&f, "b", b, 1e5, 1e9);
    f.p[a].std = 5000;
    f.r[1].task = VS_CTASK_RUNNING;
    f.r[1].running_since = 10000 - 3599;
    struct vs_rrsim_out rr;
    struct vs_csched_out sc;
    /* Seed 000 step 5: b ran less than a period: it keeps the CPU. */
    run_sched(&f, VS_CPOLICY_SHORTFALL, &rr, &sc);
    assert_int_equal(sc.n, 1);
    assert_int_equal(sc.order[0], 1);
    assert_int_equal(sc.why[1], VS_CSCHED_PERIOD);
    /* Seed 002 has no such rule: debt wins. */
    run_sched(&f, VS_CPOLICY_DEBT, &rr, &sc);
    assert_int_equal(sc.order[0], 0);
    /* A full period: debt decides. */
    f.r[1].running_since = 10000 - 3600;
    run_sched(&f, VS_CPOLICY_SHORTFALL, &rr, &sc);
    assert_int_equal(sc.order[0], 0);
    assert_int_equal(sc.why[0], VS_CSCHED_DEBT);
    fx_cleanup(&f);
}

static void test_sched_noncpu(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 1, 0);
    size_t a = fx_project(&f, "A", 1);
    size_t n = fx_project(&f, "N", 1);
    f.p[n].non_cpu_intensive = true;
    fx_result(&f, "a", a, 10, 1e9);
    fx_result(&f, "n", n, 10, 1e9);
    struct vs_rrsim_out rr;
    struct vs_csched_out sc;
    run_sched(&f, VS_CPOLICY_SHORTFALL, &rr, &sc);
    assert_int_equal(sc.n, 2);
    assert_int_equal(sc.ncpu, 1);
    assert_int_equal(sc.why[1], VS_CSCHED_NONCPU);
    assert_int_equal(sc.why[0], VS_CSCHED_DEBT);
    fx_cleanup(&f);
}

/* ---------------------------------------------------------------- enforcement */

static const struct vs_caction *find_action(const struct vs_cenforce_out *en, size_t r)
{
    for (size_t i = 0; i < en->n; i++) {
        if (en->actions[i].result == r)
            return &en->actions[i];
    }
    return NULL;
}

static void enforce(struct fx *f, enum vs_cpolicy pol, struct vs_cenforce_out *en)
{
    struct vs_rrsim_out rr;
    struct vs_csched_out sc;
    run_sched(f, pol, &rr, &sc);
    assert_int_equal(vs_cenforce_run(pol, &f->st, &rr, &sc, &f->ws, en), 0);
}

/* One CPU: R0 of A runs, unscheduled because B's debt is larger. */
static void preempt_setup(struct fx *f)
{
    fx_init(f, 1, 0);
    f->st.now = 10000;
    f->st.last_sched_time = 9000;
    f->st.host.sched_period = 1000;
    size_t a = fx_project(f, "A", 1);
    size_t b = fx_project(f, "B", 1);
    fx_result(f, "a", a, 1e5, 1e9);
    fx_result(f, "b", b, 1e5, 1e9);
    f->p[b].std = 5000;
    f->r[0].task = VS_CTASK_RUNNING;
    f->r[0].running_since = 0;
    f->r[0].checkpointed = true;
    f->r[0].checkpoint_time = 8000;
    f->r[0].wall_since_checkpoint = 2000;
}

static void test_enforce_idle_and_start_kinds(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 3, 0);
    size_t a = fx_project(&f, "A", 1);
    fx_result(&f, "new", a, 10, 1e9);
    fx_result(&f, "mem", a, 10, 1e9);
    fx_result(&f, "disk", a, 10, 1e9);
    f.r[1].task = VS_CTASK_SUSPENDED;
    f.r[2].task = VS_CTASK_REMOVED;
    for (int pol = 0; pol < VS_CPOLICY_COUNT; pol++) {
        struct vs_cenforce_out en;
        enforce(&f, (enum vs_cpolicy)pol, &en);
        assert_int_equal(en.n, 3);
        assert_int_equal(find_action(&en, 0)->kind, VS_CACT_START);
        assert_int_equal(find_action(&en, 1)->kind, VS_CACT_RESUME);
        assert_int_equal(find_action(&en, 2)->kind, VS_CACT_RESUME);
    }
    fx_cleanup(&f);
}

static void test_enforce_shortfall_xyt(void **state)
{
    (void)state;
    struct fx f;
    preempt_setup(&f);
    struct vs_cenforce_out en;
    /* Y = {a}, X = {b}; a last checkpointed before T: keeps running. */
    enforce(&f, VS_CPOLICY_SHORTFALL, &en);
    assert_int_equal(en.n, 0);
    assert_true(isinf(en.recheck_at));
    /* a checkpoints after T: preempted, b runs. Removed from memory as
     * leave_in_memory is off. */
    f.r[0].checkpoint_time = 9500;
    f.r[0].wall_since_checkpoint = 500;
    enforce(&f, VS_CPOLICY_SHORTFALL, &en);
    assert_int_equal(en.n, 2);
    assert_int_equal(en.actions[0].result, 0);
    assert_int_equal(en.actions[0].kind, VS_CACT_SUSPEND_REMOVE);
    assert_int_equal(en.actions[1].result, 1);
    assert_int_equal(en.actions[1].kind, VS_CACT_START);
    f.st.host.leave_in_memory = true;
    enforce(&f, VS_CPOLICY_SHORTFALL, &en);
    assert_int_equal(en.actions[0].kind, VS_CACT_SUSPEND_KEEP);
    fx_cleanup(&f);
}

static void test_enforce_deadline_preempts(void **state)
{
    (void)state;
    /* Two CPUs both running A's results; B's result misses its deadline:
     * the running one with the least wall time since checkpoint goes. */
    struct fx f;
    fx_init(&f, 2, 0);
    f.st.now = 100;
    f.st.last_sched_time = 99;
    size_t a = fx_project(&f, "A", 1);
    size_t b = fx_project(&f, "B", 1);
    fx_result(&f, "a0", a, 1e4, 1e9);
    fx_result(&f, "a1", a, 1e4, 1e9);
    fx_result(&f, "b", b, 50, 110);
    fx_result(&f, "b2", b, 50, 120);
    for (int i = 0; i < 2; i++) {
        f.r[i].task = VS_CTASK_RUNNING;
        f.r[i].running_since = -1e6;
        f.r[i].checkpointed = true;
        f.r[i].checkpoint_time = 0;
    }
    f.r[0].wall_since_checkpoint = 70;
    f.r[1].wall_since_checkpoint = 30;
    for (int pol = VS_CPOLICY_SHORTFALL; pol <= VS_CPOLICY_DEBT; pol++) {
        struct vs_cenforce_out en;
        enforce(&f, (enum vs_cpolicy)pol, &en);
        /* Both b results are EDF-scheduled (B misses 2); each preempts one
         * running result at once, least wall time since checkpoint first. */
        assert_int_equal(en.n, 4);
        assert_int_equal(en.actions[0].result, 1);
        assert_int_equal(en.actions[0].kind, VS_CACT_SUSPEND_REMOVE);
        assert_int_equal(en.actions[1].result, 2);
        assert_int_equal(en.actions[1].kind, VS_CACT_START);
        assert_int_equal(en.actions[2].result, 0);
        assert_int_equal(en.actions[3].result, 3);
        assert_false(f.r[0].preempt_pending);
    }
    fx_cleanup(&f);
}

static void test_enforce_debt_grace(void **state)
{
    (void)state;
    struct fx f;
    preempt_setup(&f);
    struct vs_cenforce_out en;
    /* Not in memory, no deadline: a runs on for sched_period/2. */
    enforce(&f, VS_CPOLICY_DEBT, &en);
    assert_int_equal(en.n, 0);
    assert_true(f.r[0].preempt_pending);
    assert_float_equal(f.r[0].preempt_since, 10000, EPS);
    assert_float_equal(en.recheck_at, 10500, EPS);
    /* Later, still within the grace: the decision time is kept. */
    f.st.now = 10400;
    enforce(&f, VS_CPOLICY_DEBT, &en);
    assert_int_equal(en.n, 0);
    assert_float_equal(f.r[0].preempt_since, 10000, EPS);
    /* Grace over: preempted, b starts. */
    f.st.now = 10500;
    enforce(&f, VS_CPOLICY_DEBT, &en);
    assert_int_equal(en.n, 2);
    assert_int_equal(en.actions[0].kind, VS_CACT_SUSPEND_REMOVE);
    assert_int_equal(en.actions[1].kind, VS_CACT_START);
    assert_false(f.r[0].preempt_pending);

    /* A checkpoint during the grace ends it early. */
    f.st.now = 10000;
    enforce(&f, VS_CPOLICY_DEBT, &en);
    assert_int_equal(en.n, 0);
    f.st.now = 10100;
    f.r[0].checkpoint_time = 10050;
    enforce(&f, VS_CPOLICY_DEBT, &en);
    assert_int_equal(en.n, 2);

    /* Never checkpointed: grace, then kept in memory. */
    f.r[0].checkpointed = false;
    f.st.now = 20000;
    enforce(&f, VS_CPOLICY_DEBT, &en);
    assert_int_equal(en.n, 0);
    f.st.now = 21000;
    enforce(&f, VS_CPOLICY_DEBT, &en);
    assert_int_equal(en.actions[0].kind, VS_CACT_SUSPEND_KEEP);

    /* leave_in_memory: no grace at all. */
    f.r[0].preempt_pending = false;
    f.st.host.leave_in_memory = true;
    enforce(&f, VS_CPOLICY_DEBT, &en);
    assert_int_equal(en.n, 2);
    assert_int_equal(en.actions[0].kind, VS_CACT_SUSPEND_KEEP);

    /* Rescheduled during its grace: the mark is cleared. */
    f.st.host.leave_in_memory = false;
    f.st.now = 30000;
    enforce(&f, VS_CPOLICY_DEBT, &en);
    assert_true(f.r[0].preempt_pending);
    f.p[0].std = 1e5;
    enforce(&f, VS_CPOLICY_DEBT, &en);
    assert_false(f.r[0].preempt_pending);
    assert_int_equal(en.n, 0);
    fx_cleanup(&f);
}

static void test_enforce_wrr_and_unrunnable(void **state)
{
    (void)state;
    struct fx f;
    preempt_setup(&f);
    struct vs_cenforce_out en;
    /* The old client preempts at once, and removes even a never
     * checkpointed app unless leave_in_memory. */
    f.r[0].checkpointed = false;
    enforce(&f, VS_CPOLICY_WRR, &en);
    assert_int_equal(en.n, 2);
    assert_int_equal(en.actions[0].kind, VS_CACT_SUSPEND_REMOVE);
    /* A running result the user suspends stops now under every policy. */
    f.r[0].suspended = true;
    for (int pol = 0; pol < VS_CPOLICY_COUNT; pol++) {
        enforce(&f, (enum vs_cpolicy)pol, &en);
        assert_int_equal(en.actions[0].result, 0);
        assert_int_equal(en.actions[0].kind,
                         pol == VS_CPOLICY_WRR ? VS_CACT_SUSPEND_REMOVE : VS_CACT_SUSPEND_KEEP);
        assert_int_equal(en.actions[1].kind, VS_CACT_START);
    }
    fx_cleanup(&f);
}

/* ---------------------------------------------------------------- work fetch */

static void fetch(struct fx *f, enum vs_cpolicy pol, struct vs_rrsim_out *rr,
                  struct vs_cfetch_out *wf)
{
    assert_int_equal(vs_rrsim_run(pol, &f->st, &f->ws, rr), 0);
    assert_int_equal(vs_cfetch_run(pol, &f->st, rr, &f->ws, wf), 0);
}

static void test_fetch_seed_example(void **state)
{
    (void)state;
    struct fx f;
    seed_example(&f);
    struct vs_rrsim_out rr;
    struct vs_cfetch_out wf;
    fetch(&f, VS_CPOLICY_SHORTFALL, &rr, &wf);
    /* Only A has a shortfall; normalized to total_shortfall = 2. */
    assert_float_equal(wf.work_request_size[0], 2, EPS);
    assert_float_equal(wf.work_request_size[1], 0, EPS);
    assert_int_equal(wf.project, 0);
    assert_int_equal(wf.reason, VS_CFETCH_WORK);
    assert_float_equal(wf.request, 2, EPS);
    /* Project-normalized: divided by A's fraction among potentially
     * runnable projects, 2/3. */
    assert_float_equal(wf.request_pn, 3, EPS);

    /* Seed 002: work_to_fill_buf(A) = (20 - 28/3) / (2/3) = 16,
     * work_to_fill_buf(B) = (20 - 26/3) / (1/3) = 34; normalized to
     * 20 - 18 = 2 by share: A 4/3, B 2/3. B chosen: ltd 0 + 34 > 16. */
    fetch(&f, VS_CPOLICY_DEBT, &rr, &wf);
    assert_float_equal(wf.work_request_size[0], 4.0 / 3, EPS);
    assert_float_equal(wf.work_request_size[1], 2.0 / 3, EPS);
    assert_int_equal(wf.project, 1);
    /* LTD moves the choice. */
    f.p[0].ltd = 20;
    f.p[1].ltd = -20;
    fetch(&f, VS_CPOLICY_DEBT, &rr, &wf);
    assert_int_equal(wf.project, 0);
    fx_cleanup(&f);
}

static void test_fetch_fallbacks(void **state)
{
    (void)state;
    struct fx f;
    /* Nothing queued, 2 CPUs, min_queue 100: total_shortfall 200. */
    fx_init(&f, 2, 100);
    size_t a = fx_project(&f, "A", 1);
    size_t b = fx_project(&f, "B", 3);
    size_t c = fx_project(&f, "C", 4);
    struct vs_rrsim_out rr;
    struct vs_cfetch_out wf;
    fetch(&f, VS_CPOLICY_SHORTFALL, &rr, &wf);
    assert_float_equal(rr.total_shortfall, 200, EPS);
    assert_float_equal(wf.work_request_size[a], 25, EPS);
    assert_float_equal(wf.work_request_size[b], 75, EPS);
    assert_float_equal(wf.work_request_size[c], 100, EPS);
    /* Suspended, deferred and no-new-work projects ask for nothing; the
     * others share total_shortfall by resource share. */
    f.p[c].no_new_work = true;
    fetch(&f, VS_CPOLICY_SHORTFALL, &rr, &wf);
    assert_float_equal(wf.work_request_size[c], 0, EPS);
    assert_float_equal(wf.work_request_size[a], 50, EPS);
    assert_float_equal(wf.work_request_size[b], 150, EPS);
    /* Overworked projects are skipped by the first rounds... */
    f.p[a].ltd = -1e5;
    f.p[b].ltd = 1e5;
    fetch(&f, VS_CPOLICY_SHORTFALL, &rr, &wf);
    assert_float_equal(wf.work_request_size[a], 0, EPS);
    assert_float_equal(wf.work_request_size[b], 200, EPS);
    /* ... but asked in the second fallback round when nobody else can. */
    f.p[b].min_rpc_time = 1e9;
    fetch(&f, VS_CPOLICY_SHORTFALL, &rr, &wf);
    assert_float_equal(wf.work_request_size[a], 200, EPS);
    assert_float_equal(wf.work_request_size[b], 0, EPS);
    assert_int_equal(wf.project, a);
    /* Nobody at all: no RPC. */
    f.p[a].suspended = true;
    fetch(&f, VS_CPOLICY_SHORTFALL, &rr, &wf);
    assert_int_equal(wf.project, -1);
    assert_int_equal(wf.reason, VS_CFETCH_NONE);
    fx_cleanup(&f);
}

static void test_fetch_master_pending(void **state)
{
    (void)state;
    /* Seed 000's pseudo-code zeroes requests only for suspended, deferred,
     * overworked and no-new-work projects: a project whose master file is
     * pending still gets its shortfall (the driver fetches the master file
     * before the RPC), but it is not fetchable, so it is left out of the
     * others' frs. */
    struct fx f;
    fx_init(&f, 1, 10);
    size_t a = fx_project(&f, "A", 1);
    size_t m = fx_project(&f, "M", 1);
    f.p[m].master_fetch_pending = true;
    struct vs_rrsim_out rr;
    struct vs_cfetch_out wf;
    fetch(&f, VS_CPOLICY_SHORTFALL, &rr, &wf);
    assert_float_equal(rr.frs[a], 1, EPS);
    assert_float_equal(rr.frs[m], 0.5, EPS);
    assert_float_equal(rr.shortfall[a], 10, EPS);
    assert_float_equal(rr.shortfall[m], 5, EPS);
    /* Both ask; normalized to total_shortfall 10 by share. */
    assert_float_equal(wf.work_request_size[a], 5, EPS);
    assert_float_equal(wf.work_request_size[m], 5, EPS);
    assert_int_equal(wf.project, a); /* ltd + shortfall: 10 > 5 */
    fx_cleanup(&f);
}

static void test_fetch_noncpu_forced_and_pn(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 1, 0); /* min_queue 0: no CPU project wants work */
    size_t a = fx_project(&f, "A", 1);
    size_t n = fx_project(&f, "N", 1);
    f.p[n].non_cpu_intensive = true;
    fx_result(&f, "a", a, 10, 1e9);
    struct vs_rrsim_out rr;
    struct vs_cfetch_out wf;
    fetch(&f, VS_CPOLICY_SHORTFALL, &rr, &wf);
    /* The non-CPU-intensive project has no result: it asks for 1. */
    assert_float_equal(wf.work_request_size[n], 1, EPS);
    assert_float_equal(wf.work_request_size[a], 0, EPS);
    assert_int_equal(wf.project, n);
    fx_result(&f, "n", n, 10, 1e9);
    fetch(&f, VS_CPOLICY_SHORTFALL, &rr, &wf);
    assert_float_equal(wf.work_request_size[n], 0, EPS);
    assert_int_equal(wf.project, -1);

    /* Forced RPCs: user first, then trickle-up, then overdue report; work
     * is requested from that project as well. */
    f.p[a].report_overdue = true;
    fetch(&f, VS_CPOLICY_SHORTFALL, &rr, &wf);
    assert_int_equal(wf.project, a);
    assert_int_equal(wf.reason, VS_CFETCH_REPORT_OVERDUE);
    assert_float_equal(wf.request, 0, EPS);
    f.p[n].trickle_up_pending = true;
    fetch(&f, VS_CPOLICY_SHORTFALL, &rr, &wf);
    assert_int_equal(wf.project, n);
    assert_int_equal(wf.reason, VS_CFETCH_TRICKLE);
    f.p[a].rpc_user_request = true;
    fetch(&f, VS_CPOLICY_SHORTFALL, &rr, &wf);
    assert_int_equal(wf.project, a);
    assert_int_equal(wf.reason, VS_CFETCH_USER);
    assert_string_equal(vs_cfetch_reason_name(wf.reason), "user");
    /* A deferred project's trickle waits; the overdue report elsewhere
     * goes first. */
    f.p[a].rpc_user_request = false;
    f.p[n].min_rpc_time = 1e9;
    fetch(&f, VS_CPOLICY_SHORTFALL, &rr, &wf);
    assert_int_equal(wf.project, a);
    assert_int_equal(wf.reason, VS_CFETCH_REPORT_OVERDUE);
    fx_cleanup(&f);
}

static void test_rate_example(void **state)
{
    (void)state;
    /* Seed 000: 1 GFLOPS CPU, share fraction 0.5, on 0.8, active 0.9. */
    struct vs_chost h = {.ncpus = 1,
                         .on_frac = 0.8,
                         .active_frac = 0.9,
                         .cpu_efficiency = 1,
                         .sched_period = 3600,
                         .flops_per_cpu = 1e9};
    assert_float_equal(vs_cpolicy_pn_rate(&h, 0.5), 0.36e9, 1e-3);
    assert_true(vs_cpolicy_pn_flops(&h, 0.5, 1000) >= 360e9 - 1e-3);
    assert_float_equal(vs_cpolicy_pn_flops(&h, 0.5, 1000), 360e9, 1e-3);

    /* The same through work fetch: a project with share fraction 0.5 among
     * potentially runnable projects asking 500 normalized seconds asks 1000
     * project-normalized seconds, i.e. 360 GFLOP on this host. */
    struct fx f;
    fx_init(&f, 1, 1000);
    f.st.host = h;
    f.st.host.min_queue = 1000;
    size_t a = fx_project(&f, "A", 1);
    fx_project(&f, "B", 1);
    struct vs_rrsim_out rr;
    struct vs_cfetch_out wf;
    fetch(&f, VS_CPOLICY_SHORTFALL, &rr, &wf);
    assert_int_equal(wf.project, a);
    assert_float_equal(wf.request, 500, EPS);
    assert_float_equal(wf.prr_frac[a], 0.5, EPS);
    assert_float_equal(wf.request_pn, 1000, EPS);
    assert_float_equal(vs_cpolicy_pn_flops(&f.st.host, wf.prr_frac[a], wf.request_pn), 360e9, 1e-3);
    fx_cleanup(&f);
}

static void test_fetch_wrr(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 1, 100);
    size_t a = fx_project(&f, "A", 1);
    size_t b = fx_project(&f, "B", 1);
    size_t c = fx_project(&f, "C", 2);
    fx_result(&f, "a", a, 1000, 1e9); /* plenty */
    fx_result(&f, "b", b, 10, 1e9);   /* 10 s of its 25 */
    f.p[a].ltd = 50;
    f.p[c].ltd = -1e6; /* "overworked" means nothing to the old client */
    struct vs_rrsim_out rr;
    struct vs_cfetch_out wf;
    fetch(&f, VS_CPOLICY_WRR, &rr, &wf);
    assert_float_equal(wf.work_request_size[a], 0, EPS);
    assert_float_equal(wf.work_request_size[b], 15, EPS);
    assert_float_equal(wf.work_request_size[c], 50, EPS);
    /* C has no result at all: asked first despite its debt. */
    assert_int_equal(wf.project, c);
    /* Even with min_queue 0 a project without work asks for 1 s. */
    f.st.host.min_queue = 0;
    fetch(&f, VS_CPOLICY_WRR, &rr, &wf);
    assert_float_equal(wf.work_request_size[c], 1, EPS);
    assert_float_equal(wf.work_request_size[b], 0, EPS);
    fx_result(&f, "c", c, 10, 1e9);
    fetch(&f, VS_CPOLICY_WRR, &rr, &wf);
    assert_int_equal(wf.project, -1);
    fx_cleanup(&f);
}

/*
 * Rounding is not work (seed 000's shortfall): a 6-minute result that ends
 * at min_queue in exact arithmetic but 1e-13 s before it in doubles, or a
 * share ratio that sums to 2 - 1e-16 CPUs, asks for nothing; a real gap
 * of a second still does.
 */
static void test_rrsim_rounding_band(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 2, 360);
    size_t a = fx_project(&f, "A", .5);
    size_t b = fx_project(&f, "B", .25);
    size_t c = fx_project(&f, "C", .25);
    size_t ra = fx_result(&f, "a", a, 360 - 1e-13, 1e9);
    fx_result(&f, "b", b, 3600, 1e9);
    fx_result(&f, "c", c, 3600, 1e9);
    struct vs_rrsim_out rr;
    struct vs_cfetch_out wf;
    for (int pol = 0; pol < 2; pol++) {
        fetch(&f, (enum vs_cpolicy)pol, &rr, &wf);
        assert_true(rr.total_shortfall == 0);
        assert_true(rr.shortfall[a] == 0);
        assert_true(rr.total_work_before_minq == 720);
        /* (debt still asks: seed 002's work_to_fill_buf is positive for a
         * project with share < 1 even when the buffer is full; see
         * docs/client-policies.md) */
        if (pol == VS_CPOLICY_SHORTFALL)
            assert_int_equal(wf.project, -1);
    }
    /* Later on the clock the band widens with the clock's own precision
     * (1e-9 of now): 1e-4 s at now = 1e6 is rounding too... */
    f.st.now = 1e6;
    f.r[ra].remaining = 360 - 1e-4;
    fetch(&f, VS_CPOLICY_SHORTFALL, &rr, &wf);
    assert_true(rr.shortfall[a] == 0);
    assert_int_equal(wf.project, -1);
    /* ...but a second is a real shortfall: A lacks its CPU for 1 s. */
    f.r[ra].remaining = 359;
    fetch(&f, VS_CPOLICY_SHORTFALL, &rr, &wf);
    assert_float_equal(rr.shortfall[a], 1, EPS);
    assert_int_equal(wf.project, (long)a);
    fx_cleanup(&f);

    /* Thirds: 2 CPUs shared by three projects of share 1 with plenty of
     * work; the allocations sum to 2 only approximately, the idle rate is
     * exactly 0. */
    fx_init(&f, 2, 1000);
    for (int p = 0; p < 3; p++) {
        fx_project(&f, "P", 1);
        for (int k = 0; k < 3; k++)
            fx_result(&f, "r", (size_t)p, 5000 + 7 * k, 1e9);
    }
    for (int pol = 0; pol < 3; pol++) {
        fetch(&f, (enum vs_cpolicy)pol, &rr, &wf);
        assert_true(rr.total_shortfall == 0);
        assert_true(rr.total_work_before_minq == 2000);
        for (int p = 0; p < 3; p++)
            assert_true(rr.shortfall[p] == 0);
    }
    fx_cleanup(&f);
}

/*
 * The old client keeps the buffer full, not only one result per project:
 * seed 002's example on 4 CPUs, one 1000-hour P1 job and one 1-hour P2 job
 * leave two CPUs idle; each project's own part of the buffer (720 s) is
 * full, so the idle CPUs' 720 s go to the projects short of their share of
 * CPUs, by share, and never by deadline.
 */
static void test_fetch_wrr_fills_buffer(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 4, 360);
    size_t p1 = fx_project(&f, "P1", .5);
    size_t p2 = fx_project(&f, "P2", .5);
    fx_result(&f, "a", p1, 3.6e6, 7.2e6);
    fx_result(&f, "b", p2, 3600, 36000);
    struct vs_rrsim_out rr;
    struct vs_cfetch_out wf;
    fetch(&f, VS_CPOLICY_WRR, &rr, &wf);
    assert_float_equal(rr.total_shortfall, 720, EPS);
    assert_float_equal(wf.work_request_size[p1], 360, EPS);
    assert_float_equal(wf.work_request_size[p2], 360, EPS);
    assert_int_equal(wf.project, (long)p1); /* equal ltd: least index */
    /* Deadlines play no part. */
    f.r[0].deadline = 10;
    f.r[1].deadline = 10;
    fetch(&f, VS_CPOLICY_WRR, &rr, &wf);
    assert_float_equal(wf.work_request_size[p1], 360, EPS);
    assert_float_equal(wf.work_request_size[p2], 360, EPS);

    /* P1 got a second job: it has its two CPUs. P2 is short but deferred:
     * P1 must not take P2's CPU meanwhile, nobody is asked... */
    fx_result(&f, "a2", p1, 3.6e6, 7.2e6);
    f.p[p2].min_rpc_time = f.st.now + 60;
    fetch(&f, VS_CPOLICY_WRR, &rr, &wf);
    assert_float_equal(rr.total_shortfall, 360, EPS);
    assert_int_equal(wf.project, -1);
    /* ...and when the deferral ends, P2 gets it all. */
    f.p[p2].min_rpc_time = 0;
    fetch(&f, VS_CPOLICY_WRR, &rr, &wf);
    assert_int_equal(wf.project, (long)p2);
    assert_float_equal(wf.work_request_size[p2], 360, EPS);
    assert_float_equal(wf.work_request_size[p1], 0, EPS);
    /* Full: four results on four CPUs, nothing asked. */
    fx_result(&f, "b2", p2, 3600, 36000);
    fetch(&f, VS_CPOLICY_WRR, &rr, &wf);
    assert_true(rr.total_shortfall == 0);
    assert_int_equal(wf.project, -1);
    fx_cleanup(&f);
}

static void random_state(struct fx *f, struct vs_rng *rng);

/* vs_cpolicy_step (and vs_cpolicy_step_trusted, every other iteration)
 * decides exactly as vs_cdebt_update + vs_cpolicy_pass. */
static void test_prop_step_equals_pass(void **state)
{
    (void)state;
    struct vs_rng rng;
    vs_rng_seed(&rng, 4242);
    struct vs_cpolicy_ws ws2;
    vs_cpolicy_ws_init(&ws2);
    for (int it = 0; it < 1500; it++) {
        struct fx f;
        random_state(&f, &rng);
        static struct fx g;
        g = f;
        g.st.projects = g.p;
        g.st.results = g.r;
        enum vs_cpolicy pol = (enum vs_cpolicy)(it % 3);
        struct vs_cpolicy_out o1, o2;
        if ((it / 3) % 2)
            assert_int_equal(vs_cpolicy_step_trusted(pol, &f.st, &f.ws, &o1), 0);
        else
            assert_int_equal(vs_cpolicy_step(pol, &f.st, &f.ws, &o1), 0);
        if (it == 0) {
            /* The trusted step still refuses a bad policy or workspace. */
            assert_int_equal(vs_cpolicy_step_trusted(VS_CPOLICY_COUNT, &f.st, &f.ws, &o2),
                             VS_EINVAL);
            assert_int_equal(vs_cpolicy_step_trusted(pol, &f.st, NULL, &o2), VS_EINVAL);
        }
        assert_int_equal(vs_cdebt_update(pol, &g.st), 0);
        assert_int_equal(vs_cpolicy_pass(pol, &g.st, &ws2, &o2), 0);
        for (size_t p = 0; p < f.st.nprojects; p++) {
            assert_true(f.p[p].std == g.p[p].std && f.p[p].ltd == g.p[p].ltd);
            assert_int_equal(o1.rr.states[p], o2.rr.states[p]);
            assert_true(o1.rr.shortfall[p] == o2.rr.shortfall[p]);
            assert_true(o1.fetch.work_request_size[p] == o2.fetch.work_request_size[p]);
        }
        assert_int_equal(o1.sched.n, o2.sched.n);
        for (size_t i = 0; i < o1.sched.n; i++)
            assert_int_equal(o1.sched.order[i], o2.sched.order[i]);
        assert_int_equal(o1.enforce.n, o2.enforce.n);
        for (size_t i = 0; i < o1.enforce.n; i++) {
            assert_int_equal(o1.enforce.actions[i].result, o2.enforce.actions[i].result);
            assert_int_equal(o1.enforce.actions[i].kind, o2.enforce.actions[i].kind);
        }
        assert_int_equal(o1.fetch.project, o2.fetch.project);
        assert_true(o1.fetch.request_pn == o2.fetch.request_pn);
        fx_cleanup(&f);
    }
    vs_cpolicy_ws_cleanup(&ws2);
}

/*
 * The documented driver protocol, end to end: account, debt update, pass,
 * apply the actions, every scheduling period. Over many periods the CPU
 * time follows the resource shares (3:1 on one CPU, then 1:1:2 on two),
 * for every policy.
 */
static void drive(enum vs_cpolicy pol, int ncpus, const double *shares, size_t np, double *out_cpu)
{
    struct fx f;
    fx_init(&f, ncpus, 600);
    f.st.host.leave_in_memory = true;
    for (size_t p = 0; p < np; p++) {
        fx_project(&f, "p", shares[p]);
        for (int k = 0; k < 3; k++)
            fx_result(&f, "r", p, 1e12, 1e15);
        out_cpu[p] = 0;
    }
    struct vs_cpolicy_out out;
    double period = f.st.host.sched_period;
    for (int step = 0; step < 400; step++) {
        f.st.now = step * period;
        if (step > 0)
            vs_cpolicy_account(&f.st, period);
        for (size_t r = 0; r < f.st.nresults; r++) {
            if (f.r[r].task == VS_CTASK_RUNNING) {
                f.r[r].checkpointed = true;
                f.r[r].checkpoint_time = f.st.now;
                f.r[r].wall_since_checkpoint = 0;
            }
        }
        for (size_t p = 0; p < np; p++)
            out_cpu[p] += f.p[p].wall_cpu_period;
        assert_int_equal(vs_cdebt_update(pol, &f.st), 0);
        assert_int_equal(vs_cpolicy_pass(pol, &f.st, &f.ws, &out), 0);
        for (size_t i = 0; i < out.enforce.n; i++) {
            struct vs_cresult *r = &f.r[out.enforce.actions[i].result];
            switch (out.enforce.actions[i].kind) {
            case VS_CACT_START:
            case VS_CACT_RESUME:
                r->task = VS_CTASK_RUNNING;
                r->running_since = f.st.now;
                break;
            case VS_CACT_SUSPEND_KEEP:
                r->task = VS_CTASK_SUSPENDED;
                break;
            case VS_CACT_SUSPEND_REMOVE:
                r->task = VS_CTASK_REMOVED;
                break;
            }
        }
        int running = 0;
        for (size_t r = 0; r < f.st.nresults; r++)
            running += f.r[r].task == VS_CTASK_RUNNING;
        assert_int_equal(running, ncpus);
        f.st.last_sched_time = f.st.now;
    }
    fx_cleanup(&f);
}

/*
 * fair's oversized jobs: a 192-hour job due in 240 hours of a tenth-share
 * project on one CPU runs only when nothing else can; a two-hour job of
 * the other project takes the CPU. With the other project's job gone it
 * runs; the same job due in a year (time-sliced at its share) is not
 * oversized. shortfall runs by its own rules.
 */
static void test_fair_oversized(void **state)
{
    (void)state;
    const double h = 3600;
    for (int round = 0; round < 3; round++) {
        struct fx f;
        fx_init(&f, 1, 0.1 * 86400);
        fx_project(&f, "big", 0.1);
        fx_project(&f, "small", 0.9);
        double dl = round == 2 ? 8760 * h : 240 * h;
        size_t big = fx_result(&f, "b", 0, 192 * h, dl);
        if (round != 1)
            fx_result(&f, "s", 1, 2 * h, 48 * h);
        struct vs_cpolicy_out out;
        assert_int_equal(vs_cpolicy_pass(VS_CPOLICY_FAIR, &f.st, &f.ws, &out), 0);
        assert_int_equal(out.sched.ncpu, 1);
        bool big_runs = false;
        for (size_t i = 0; i < out.sched.n; i++)
            big_runs = big_runs || out.sched.order[i] == big;
        /* round 0: the small job runs; 1: the big one alone; 2: not
         * oversized, equal debts, and "big" comes first by name. */
        assert_int_equal(big_runs, round != 0);
        fx_cleanup(&f);
    }
}

static void test_driver_shares(void **state)
{
    (void)state;
    for (int pol = 0; pol < VS_CPOLICY_COUNT; pol++) {
        double cpu[3];
        const double two[] = {3, 1};
        drive((enum vs_cpolicy)pol, 1, two, 2, cpu);
        double total = cpu[0] + cpu[1];
        assert_true(total > 0);
        assert_float_equal(cpu[0] / total, 0.75, 0.02);
        const double three[] = {1, 1, 2};
        drive((enum vs_cpolicy)pol, 2, three, 3, cpu);
        total = cpu[0] + cpu[1] + cpu[2];
        assert_float_equal(cpu[0] / total, 0.25, 0.02);
        assert_float_equal(cpu[2] / total, 0.5, 0.02);
    }
}

/* ---------------------------------------------------------------- properties */

static void random_state_n(struct fx *f, struct vs_rng *rng, size_t max_results);

static void random_state(struct fx *f, struct vs_rng *rng)
{
    random_state_n(f, rng, 64);
}

/* A random snapshot: up to 8 projects, up to max_results results, random
 * states. Remaining times are sometimes drawn from a few values so that
 * exact ties (results finishing together) happen. */
static void random_state_n(struct fx *f, struct vs_rng *rng, size_t max_results)
{
    fx_init(f, 1 + (int)vs_rng_below(rng, 8), vs_rng_double(rng) * 20000);
    f->st.now = 1e6 * vs_rng_double(rng);
    f->st.last_sched_time = f->st.now - 3000 * vs_rng_double(rng);
    f->st.host.on_frac = 0.1 + 0.9 * vs_rng_double(rng);
    f->st.host.active_frac = 0.1 + 0.9 * vs_rng_double(rng);
    f->st.host.cpu_efficiency = 0.5 + 0.5 * vs_rng_double(rng);
    f->st.host.sched_period = 60 + 7200 * vs_rng_double(rng);
    f->st.host.leave_in_memory = vs_rng_below(rng, 2);
    size_t np = 1 + vs_rng_below(rng, 8);
    for (size_t p = 0; p < np; p++) {
        size_t i = fx_project(f, "p", 1 + (double)vs_rng_below(rng, 100));
        struct vs_cproject *pr = &f->p[i];
        pr->std = 1000 * vs_rng_double(rng);
        pr->ltd = 20000 * (vs_rng_double(rng) - 0.5);
        pr->wall_cpu_period = vs_rng_below(rng, 3) ? 5000 * vs_rng_double(rng) : 0;
        pr->suspended = vs_rng_below(rng, 10) == 0;
        pr->no_new_work = vs_rng_below(rng, 8) == 0;
        pr->non_cpu_intensive = vs_rng_below(rng, 12) == 0;
        if (vs_rng_below(rng, 6) == 0)
            pr->min_rpc_time = f->st.now + 100;
        if (vs_rng_below(rng, 6) == 0)
            pr->latency_limited_until = f->st.now + 100;
    }
    size_t nr = vs_rng_below(rng, max_results + 1);
    bool few_sizes = vs_rng_below(rng, 4) == 0;
    for (size_t k = 0; k < nr; k++) {
        double u = few_sizes ? (double)(1 + vs_rng_below(rng, 3)) / 3 : vs_rng_double(rng);
        size_t i = fx_result(f, "r", vs_rng_below(rng, np), 20000 * u * u * u,
                             f->st.now + 1e5 * vs_rng_double(rng));
        struct vs_cresult *r = &f->r[i];
        r->received = f->st.now - 1e4 * vs_rng_double(rng);
        r->files = (enum vs_cfiles)(vs_rng_below(rng, 6) == 0 ? vs_rng_below(rng, 3) : 0);
        r->suspended = vs_rng_below(rng, 15) == 0;
        r->task = (enum vs_ctask)vs_rng_below(rng, 4);
        r->running_since = f->st.now - 5000 * vs_rng_double(rng);
        r->checkpointed = vs_rng_below(rng, 4) != 0;
        r->checkpoint_time = f->st.now - 4000 * vs_rng_double(rng);
        r->wall_since_checkpoint = 4000 * vs_rng_double(rng);
    }
}

static void test_prop_debt_normalization(void **state)
{
    (void)state;
    struct vs_rng rng;
    vs_rng_seed(&rng, 42);
    for (int it = 0; it < 2000; it++) {
        struct fx f;
        random_state(&f, &rng);
        for (int step = 0; step < 3; step++) {
            assert_int_equal(vs_cdebt_update((enum vs_cpolicy)(it % 3), &f.st), 0);
            unsigned fl[8];
            vs_cproject_states(&f.st, fl);
            double min = INFINITY, sum = 0;
            size_t n = 0;
            for (size_t p = 0; p < f.st.nprojects; p++) {
                const struct vs_cproject *pr = &f.p[p];
                assert_float_equal(pr->wall_cpu_period, 0, 0);
                assert_true(pr->std >= 0 && pr->std <= VS_CDEBT_STD_MAX);
                if ((fl[p] & VS_CPS_RUNNABLE) && !pr->non_cpu_intensive && pr->std < min)
                    min = pr->std;
                if (!pr->non_cpu_intensive) {
                    sum += pr->ltd;
                    n++;
                } else {
                    assert_float_equal(pr->ltd, 0, 0);
                }
            }
            if (isfinite(min))
                assert_float_equal(min, 0, 1e-9);
            if (n)
                assert_float_equal(sum / (double)n, 0, 1e-6);
            for (size_t p = 0; p < f.st.nprojects; p++)
                f.p[p].wall_cpu_period = 3000 * vs_rng_double(&rng);
        }
        fx_cleanup(&f);
    }
}

static void test_prop_requests_sum(void **state)
{
    (void)state;
    struct vs_rng rng;
    vs_rng_seed(&rng, 7);
    int checked = 0;
    for (int it = 0; it < 3000; it++) {
        struct fx f;
        random_state(&f, &rng);
        for (int pol = VS_CPOLICY_SHORTFALL; pol <= VS_CPOLICY_DEBT; pol++) {
            struct vs_rrsim_out rr;
            struct vs_cfetch_out wf;
            fetch(&f, (enum vs_cpolicy)pol, &rr, &wf);
            double total = pol == VS_CPOLICY_SHORTFALL
                               ? rr.total_shortfall
                               : f.st.host.min_queue * f.st.host.ncpus - rr.total_work_before_minq;
            double sum = 0, shares = 0;
            bool any = false;
            for (size_t p = 0; p < f.st.nprojects; p++) {
                assert_true(wf.work_request_size[p] >= 0);
                if (f.p[p].non_cpu_intensive || wf.work_request_size[p] <= 0)
                    continue;
                any = true;
                sum += wf.work_request_size[p];
                shares += f.p[p].resource_share;
                /* Never from a suspended, deferred or no-new-work project. */
                assert_false(f.p[p].suspended || f.p[p].no_new_work ||
                             f.st.now < f.p[p].min_rpc_time);
            }
            if (total > 1e-9 && any) {
                assert_float_equal(sum, total, 1e-6 * (1 + total));
                for (size_t p = 0; p < f.st.nprojects; p++) {
                    if (f.p[p].non_cpu_intensive || wf.work_request_size[p] <= 0)
                        continue;
                    assert_float_equal(wf.work_request_size[p],
                                       total * f.p[p].resource_share / shares, 1e-6 * (1 + total));
                }
                checked++;
            }
            /* Shortfall bounded by the buffer: total in [0, ncpus*mq]. */
            assert_true(rr.total_shortfall >= -1e-9);
            assert_true(rr.total_shortfall <= f.st.host.ncpus * f.st.host.min_queue + 1e-6);
            assert_float_equal(rr.total_shortfall + rr.total_work_before_minq,
                               f.st.host.ncpus * f.st.host.min_queue,
                               1e-6 * (1 + f.st.host.min_queue));
        }
        fx_cleanup(&f);
    }
    print_message("requests-sum property checked on %d snapshots\n", checked);
    assert_true(checked > 500);
}

static void test_prop_no_idle_cpu(void **state)
{
    (void)state;
    struct vs_rng rng;
    vs_rng_seed(&rng, 99);
    for (int it = 0; it < 3000; it++) {
        struct fx f;
        random_state(&f, &rng);
        for (int pol = 0; pol < VS_CPOLICY_COUNT; pol++) {
            struct vs_cpolicy_out out;
            assert_int_equal(vs_cpolicy_pass((enum vs_cpolicy)pol, &f.st, &f.ws, &out), 0);
            size_t runnable = 0;
            double speed = vs_cpolicy__speed(&f.st.host);
            for (size_t r = 0; r < f.st.nresults; r++) {
                /* fair never starts a job that can no longer meet its
                 * deadline: not a CPU left idle. */
                if (vs_cresult_runnable(&f.st, r) && !f.p[f.r[r].project].non_cpu_intensive &&
                    !vs_cpolicy__abandoned((enum vs_cpolicy)pol, &f.st, &f.r[r], speed))
                    runnable++;
                /* Scheduled means runnable. */
                if (out.sched.why[r] != VS_CSCHED_NO)
                    assert_true(vs_cresult_runnable(&f.st, r));
            }
            size_t want = runnable < (size_t)f.st.host.ncpus ? runnable : (size_t)f.st.host.ncpus;
            assert_int_equal(out.sched.ncpu, want);
            /* Every result appears at most once in the schedule and in the
             * actions; actions match task states. */
            for (size_t i = 0; i < out.sched.n; i++)
                for (size_t j = i + 1; j < out.sched.n; j++)
                    assert_true(out.sched.order[i] != out.sched.order[j]);
            for (size_t i = 0; i < out.enforce.n; i++) {
                const struct vs_caction *a = &out.enforce.actions[i];
                enum vs_ctask t = f.r[a->result].task;
                if (a->kind == VS_CACT_START)
                    assert_int_equal(t, VS_CTASK_UNSTARTED);
                else if (a->kind == VS_CACT_RESUME)
                    assert_true(t == VS_CTASK_SUSPENDED || t == VS_CTASK_REMOVED);
                else
                    assert_int_equal(t, VS_CTASK_RUNNING);
                for (size_t j = i + 1; j < out.enforce.n; j++)
                    assert_true(a->result != out.enforce.actions[j].result);
            }
            /* Applying the actions never runs more CPU results than CPUs
             * when we started within the limit. */
            long running = 0;
            for (size_t r = 0; r < f.st.nresults; r++)
                if (f.r[r].task == VS_CTASK_RUNNING && vs_cresult_runnable(&f.st, r) &&
                    !f.p[f.r[r].project].non_cpu_intensive)
                    running++;
            for (size_t i = 0; i < out.enforce.n; i++) {
                size_t r = out.enforce.actions[i].result;
                if (f.p[f.r[r].project].non_cpu_intensive || !vs_cresult_runnable(&f.st, r))
                    continue;
                running += out.enforce.actions[i].kind <= VS_CACT_RESUME ? 1 : -1;
            }
            if (running > f.st.host.ncpus) {
                /* Only possible if the snapshot already ran too many. */
                long before = 0;
                for (size_t r = 0; r < f.st.nresults; r++)
                    if (f.r[r].task == VS_CTASK_RUNNING && vs_cresult_runnable(&f.st, r) &&
                        !f.p[f.r[r].project].non_cpu_intensive)
                        before++;
                assert_true(before > f.st.host.ncpus);
            }
        }
        fx_cleanup(&f);
    }
}

/* The simulation's finish times do not depend on the order of the results
 * in the array, and each deadlines_missed(P) counts its results. */
static void test_prop_rrsim_order(void **state)
{
    (void)state;
    struct vs_rng rng;
    vs_rng_seed(&rng, 5);
    for (int it = 0; it < 500; it++) {
        struct fx f, g;
        random_state(&f, &rng);
        g = f;
        vs_cpolicy_ws_init(&g.ws);
        g.st.projects = g.p;
        g.st.results = g.r;
        /* reverse the results */
        for (size_t i = 0; i < f.st.nresults; i++)
            g.r[i] = f.r[f.st.nresults - 1 - i];
        struct vs_rrsim_out a, b;
        assert_int_equal(vs_rrsim_run(VS_CPOLICY_SHORTFALL, &f.st, &f.ws, &a), 0);
        assert_int_equal(vs_rrsim_run(VS_CPOLICY_SHORTFALL, &g.st, &g.ws, &b), 0);
        for (size_t i = 0; i < f.st.nresults; i++) {
            double x = a.finish[i], y = b.finish[f.st.nresults - 1 - i];
            if (isinf(x))
                assert_true(isinf(y));
            else
                assert_float_equal(x, y, 1e-6 * (1 + fabs(x)));
        }
        for (size_t p = 0; p < f.st.nprojects; p++) {
            int n = 0;
            for (size_t i = 0; i < f.st.nresults; i++)
                n += f.r[i].project == p && a.deadline_missed[i];
            assert_int_equal(a.deadlines_missed[p], n);
            assert_float_equal(a.shortfall[p], b.shortfall[p], 1e-6 * (1 + a.shortfall[p]));
        }
        fx_cleanup(&f);
        fx_cleanup(&g);
    }
}

/*
 * A reference round-robin simulation written straight from the model, in
 * O(n^2): every phase recomputes every result. The event-driven one must
 * agree with it on every random queue.
 */
static void ref_rrsim(const struct vs_cstate *st, const double *frs, double *finish,
                      double *shortfall, double *wbm, double *total_shortfall)
{
    size_t np = st->nprojects, nr = st->nresults;
    double rem[512], alloc[8], k[8];
    bool live[512], capped[8];
    const double ncpus = st->host.ncpus, mq = st->host.min_queue;
    const double speed = st->host.on_frac * st->host.active_frac * st->host.cpu_efficiency;
    for (size_t r = 0; r < nr; r++) {
        live[r] = vs_cresult_nearly_runnable(st, r) &&
                  !st->projects[st->results[r].project].non_cpu_intensive;
        rem[r] = st->results[r].remaining;
        finish[r] = INFINITY;
        if (live[r] && rem[r] == 0) {
            live[r] = false;
            finish[r] = st->now;
        }
    }
    for (size_t p = 0; p < np; p++)
        shortfall[p] = wbm[p] = 0;
    double t = 0, idle = 0;
    for (;;) {
        double cpus = ncpus, shares = 0;
        bool any = false;
        for (size_t p = 0; p < np; p++)
            k[p] = 0;
        for (size_t r = 0; r < nr; r++)
            if (live[r])
                k[st->results[r].project]++;
        for (size_t p = 0; p < np; p++) {
            capped[p] = false;
            if (k[p] > 0) {
                shares += st->projects[p].resource_share;
                any = true;
            }
        }
        if (!any)
            break;
        for (bool changed = true; changed;) {
            changed = false;
            double c2 = cpus, s2 = shares;
            for (size_t p = 0; p < np; p++) {
                if (k[p] > 0 && !capped[p] &&
                    k[p] * shares < cpus * st->projects[p].resource_share) {
                    capped[p] = true;
                    c2 -= k[p];
                    s2 -= st->projects[p].resource_share;
                    changed = true;
                }
            }
            cpus = c2;
            shares = s2;
        }
        double used = 0, dt = INFINITY;
        for (size_t p = 0; p < np; p++) {
            alloc[p] = k[p] == 0   ? 0
                       : capped[p] ? k[p]
                                   : cpus * st->projects[p].resource_share / shares;
            used += alloc[p];
        }
        for (size_t r = 0; r < nr; r++) {
            if (!live[r])
                continue;
            size_t p = st->results[r].project;
            double need = rem[r] / (alloc[p] / k[p] * speed);
            if (need < dt)
                dt = need;
        }
        if (t < mq) {
            double ov = fmin(t + dt, mq) - t;
            for (size_t p = 0; p < np; p++) {
                wbm[p] += alloc[p] * ov;
                if (ncpus * frs[p] - k[p] > 0)
                    shortfall[p] += (ncpus * frs[p] - k[p]) * ov;
            }
            idle += fmax(0, ncpus - used) * ov;
        }
        for (size_t r = 0; r < nr; r++) {
            if (!live[r])
                continue;
            size_t p = st->results[r].project;
            rem[r] -= alloc[p] / k[p] * speed * dt;
            if (rem[r] <= 1e-9 * (1 + st->results[r].remaining)) {
                live[r] = false;
                finish[r] = st->now + t + dt;
            }
        }
        t += dt;
    }
    if (t < mq) {
        idle += ncpus * (mq - t);
        for (size_t p = 0; p < np; p++)
            shortfall[p] += ncpus * frs[p] * (mq - t);
    }
    *total_shortfall = idle;
}

static void test_prop_rrsim_reference(void **state)
{
    (void)state;
    struct vs_rng rng;
    vs_rng_seed(&rng, 2024);
    for (int it = 0; it < 1500; it++) {
        struct fx f;
        /* Some queues above 64 results, where the radix sort is used. */
        random_state_n(&f, &rng, it % 10 == 0 ? 500 : 64);
        struct vs_rrsim_out rr;
        assert_int_equal(vs_rrsim_run(VS_CPOLICY_SHORTFALL, &f.st, &f.ws, &rr), 0);
        double finish[512], sf[8], wbm[8], total;
        ref_rrsim(&f.st, rr.frs, finish, sf, wbm, &total);
        for (size_t r = 0; r < f.st.nresults; r++) {
            if (isinf(finish[r])) {
                assert_true(isinf(rr.finish[r]));
                continue;
            }
            assert_float_equal(rr.finish[r], finish[r], 1e-6 * (1 + fabs(finish[r])));
        }
        for (size_t p = 0; p < f.st.nprojects; p++) {
            assert_float_equal(rr.shortfall[p], sf[p], 1e-6 * (1 + sf[p]));
            assert_float_equal(rr.work_before_minq[p], wbm[p], 1e-6 * (1 + wbm[p]));
        }
        assert_float_equal(rr.total_shortfall, total, 1e-6 * (1 + total));
        fx_cleanup(&f);
    }
}

/* The internal sort: (group, key, index) order, against qsort. */
static int ref_key_cmp(const void *a, const void *b)
{
    const struct vs_cpkey *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

static void test_sort(void **state)
{
    (void)state;
    struct vs_rng rng;
    vs_rng_seed(&rng, 11);
    size_t cap = 6000;
    struct vs_cpkey *a = vs_xcalloc(cap, sizeof(*a)), *b = vs_xcalloc(cap, sizeof(*b));
    struct vs_cpkey *tmp = vs_xcalloc(cap, sizeof(*tmp));
    for (int it = 0; it < 60; it++) {
        size_t n = it < 10 ? (size_t)it * 13 : 50 + vs_rng_below(&rng, cap - 50);
        int mode = it % 6;
        for (size_t i = 0; i < n; i++) {
            double x;
            switch (mode) {
            case 0: /* wide range, both signs */
                x = (vs_rng_double(&rng) - 0.5) * 1e6;
                break;
            case 1: /* a few exact values: long runs of ties */
                x = (double)vs_rng_below(&rng, 4) * 3600;
                break;
            case 2: /* differ only in the low mantissa bits */
                x = 3600 + (double)vs_rng_below(&rng, 1000) * 1e-9;
                break;
            case 3: /* zeros of both signs and tiny numbers */
                x = vs_rng_below(&rng, 3) == 0 ? -0.0 : vs_rng_below(&rng, 2) ? 0.0 : 1e-300;
                break;
            case 4: /* huge magnitudes */
                x = (vs_rng_double(&rng) - 0.5) * 1e300;
                break;
            default:
                x = 1e5 * vs_rng_double(&rng);
                break;
            }
            size_t g = it % 2 ? vs_rng_below(&rng, 300) : 0;
            a[i] = (struct vs_cpkey){.group = (uint32_t)g, .idx = (uint32_t)i, .key = x};
        }
        memcpy(b, a, n * sizeof(*a));
        vs_cpolicy__sort(a, tmp, n);
        qsort(b, n, sizeof(*b), ref_key_cmp);
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(a[i].idx, b[i].idx);
            assert_int_equal(a[i].group, b[i].group);
        }
    }
    vs_free(a);
    vs_free(b);
    vs_free(tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_names),
        cmocka_unit_test(test_validate),
        cmocka_unit_test(test_result_states),
        cmocka_unit_test(test_project_states),
        cmocka_unit_test(test_rrsim_seed_example),
        cmocka_unit_test(test_rrsim_fractions_and_deadlines),
        cmocka_unit_test(test_rrsim_which_results),
        cmocka_unit_test(test_rrsim_waterfill),
        cmocka_unit_test(test_rrsim_empty),
        cmocka_unit_test(test_debt_rule),
        cmocka_unit_test(test_account),
        cmocka_unit_test(test_sched_edf),
        cmocka_unit_test(test_sched_debt_and_payoff),
        cmocka_unit_test(test_sched_result_choice),
        cmocka_unit_test(test_sched_keep_for_period),
        cmocka_unit_test(test_sched_noncpu),
        cmocka_unit_test(test_enforce_idle_and_start_kinds),
        cmocka_unit_test(test_enforce_shortfall_xyt),
        cmocka_unit_test(test_enforce_deadline_preempts),
        cmocka_unit_test(test_enforce_debt_grace),
        cmocka_unit_test(test_enforce_wrr_and_unrunnable),
        cmocka_unit_test(test_fetch_seed_example),
        cmocka_unit_test(test_fetch_fallbacks),
        cmocka_unit_test(test_fetch_master_pending),
        cmocka_unit_test(test_fetch_noncpu_forced_and_pn),
        cmocka_unit_test(test_rate_example),
        cmocka_unit_test(test_fetch_wrr),
        cmocka_unit_test(test_fetch_wrr_fills_buffer),
        cmocka_unit_test(test_rrsim_rounding_band),
        cmocka_unit_test(test_prop_step_equals_pass),
        cmocka_unit_test(test_driver_shares),
        cmocka_unit_test(test_fair_oversized),
        cmocka_unit_test(test_prop_debt_normalization),
        cmocka_unit_test(test_prop_requests_sum),
        cmocka_unit_test(test_prop_no_idle_cpu),
        cmocka_unit_test(test_prop_rrsim_order),
        cmocka_unit_test(test_prop_rrsim_reference),
        cmocka_unit_test(test_sort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
