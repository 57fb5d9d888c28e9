/*
 * The client's backoff (src/policy/client/backoff.c), the one rule the
 * client daemon and both simulators call: BOINC's figures at its default
 * bounds, growth by doubling, the cap, RETRY_CAP, and the jitter taken
 * from the caller's draw and nothing else; and the host simulator's client
 * waiting exactly that.
 */
#include "vs_test.h"

#include <math.h>

#include "sim/host_sim.h"
#include "volsched/client_policy.h"
#include "volsched/rng.h"

#include "sim_fixture.h"

static double boinc(int n, double u)
{
    return vs_cbackoff(n, VS_CBACKOFF_MIN, VS_CBACKOFF_MAX, u);
}

/* BOINC 7.20.5's SCHED_RETRY_DELAY_MIN/MAX and RETRY_CAP. */
static void test_boinc_constants(void **state)
{
    (void)state;
    assert_true(VS_CBACKOFF_MIN == 60 && VS_CBACKOFF_MAX == 14400 && VS_CBACKOFF_CAP == 10);
}

/* The first setback waits [min, 2 min] (BOINC counts the setback before
 * it backs off: 60 x 2^1 x [0.5, 1]); n below 1 is the first. */
static void test_first_range(void **state)
{
    (void)state;
    assert_float_equal(boinc(1, 0), 60, 1e-9);
    assert_float_equal(boinc(1, 0.5), 90, 1e-9);
    assert_float_equal(boinc(1, 1), 120, 1e-9);
    assert_float_equal(boinc(0, 0.25), boinc(1, 0.25), 1e-9);
    assert_float_equal(boinc(-7, 0.25), boinc(1, 0.25), 1e-9);
}

/* Each further setback doubles the wait (the same draw) until the cap of
 * 4 hours: 60 x 2^7 = 7,680 s, 60 x 2^8 = 15,360 s is past it. */
static void test_growth_and_cap(void **state)
{
    (void)state;
    for (int n = 1; n < 7; n++)
        assert_float_equal(boinc(n + 1, 0.3), 2 * boinc(n, 0.3), 1e-6);
    for (int n = 8; n < 40; n++)
        assert_float_equal(boinc(n, 0.3), VS_CBACKOFF_MAX * 0.65, 1e-6);
    assert_true(boinc(1000000, 1) <= VS_CBACKOFF_MAX);
    assert_true(boinc(1000000, 0) >= VS_CBACKOFF_MAX / 2);
}

/* RETRY_CAP: with a small minimum and a large maximum, setbacks past the
 * tenth count as the tenth (so the wait stops growing at min x 1024). */
static void test_retry_cap(void **state)
{
    (void)state;
    double at10 = vs_cbackoff(10, 1, 1e9, 0);
    assert_float_equal(at10, 512, 1e-9); /* 1 x 2^10 x 0.5 */
    assert_float_equal(vs_cbackoff(9, 1, 1e9, 0), 256, 1e-9);
    assert_float_equal(vs_cbackoff(11, 1, 1e9, 0), at10, 1e-9);
    assert_float_equal(vs_cbackoff(2000000000, 1, 1e9, 0), at10, 1e-9);
}

/* The jitter is the caller's draw, linear in it, and nothing else: the
 * same draw gives the same wait; a draw outside [0, 1] is clamped, so a
 * broken generator cannot make a wait negative or unbounded. */
static void test_jitter_from_draw(void **state)
{
    (void)state;
    struct vs_rng r;
    vs_rng_seed(&r, 35);
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < 2000; i++) {
        double u = vs_rng_double(&r);
        int n = 1 + (int)vs_rng_below(&r, 12);
        double a = boinc(n, u);
        assert_true(a == boinc(n, u));
        double base = fmin(VS_CBACKOFF_MIN * pow(2, n < 10 ? n : 10), VS_CBACKOFF_MAX);
        assert_float_equal(a, base * (0.5 + 0.5 * u), 1e-6);
        assert_true(a >= 0.5 * base && a <= base);
        if (n == 1) {
            lo = fmin(lo, a);
            hi = fmax(hi, a);
        }
    }
    /* The draws spread the first wait over its range, not a point. */
    assert_true(lo < 65 && hi > 115);
    assert_float_equal(boinc(3, -1), boinc(3, 0), 1e-9);
    assert_float_equal(boinc(3, NAN), boinc(3, 0), 1e-9);
    assert_float_equal(boinc(3, 7), 480, 1e-9);
    assert_float_equal(boinc(3, INFINITY), 480, 1e-9);
}

/* The client's configured bounds (cc_config's sched_retry_delay_min/max)
 * are used as given; a maximum below the minimum caps every wait; bounds
 * that make no sense give 0, never NaN. */
static void test_caller_bounds(void **state)
{
    (void)state;
    assert_float_equal(vs_cbackoff(1, 2, 10, 0), 2, 1e-9);
    assert_float_equal(vs_cbackoff(5, 2, 10, 0), 5, 1e-9);
    assert_float_equal(vs_cbackoff(1, 100, 50, 0), 25, 1e-9);
    assert_float_equal(vs_cbackoff(4, 0, 50, 0.5), 0, 1e-9);
    assert_float_equal(vs_cbackoff(4, NAN, NAN, 0.5), 0, 1e-9);
    assert_float_equal(vs_cbackoff(4, -5, 50, 0.5), 0, 1e-9);
    assert_float_equal(vs_cbackoff(4, 5, -1, 0.5), 0, 1e-9);
}

/* The simulated client backs off by this rule, with the draws of its own
 * stream: a server that is down makes every RPC a setback, and each wait
 * is the rule's for the count so far (doubling from 1-2 minutes, then
 * held at the cap). A request that finds the server up again resets it. */
static void test_sim_client_uses_it(void **state)
{
    (void)state;
    struct vs_scenario s;
    simfx_parse("P1(1, 24, 1)", &s);
    struct sim x;
    vs_sim__init(&x, &s, VS_CPOLICY_DEFAULT, 30 * 86400, 1, NULL);
    x.pj[0].server_up = false;
    struct vs_rng r = x.rng_client;
    for (int n = 1; n <= 14; n++) {
        double want = vs_cbackoff(n, VS_CBACKOFF_MIN, VS_CBACKOFF_MAX, vs_rng_double(&r));
        assert_int_equal(vs_sim__rpc(&x, 0, 1000, 1), 0);
        assert_true(fabs(x.cp[0].min_rpc_time - x.st.now - want) < 1e-6);
        x.st.now = x.cp[0].min_rpc_time;
    }
    x.pj[0].server_up = true;
    assert_true(vs_sim__rpc(&x, 0, 1000, 1) > 0);
    assert_int_equal(x.pj[0].backoff_n, 0);
    vs_sim__cleanup(&x);
    vs_scenario_cleanup(&s);
}

/* A work request that brings nothing backs off work requests only, by the
 * same rule from its own count: the simulated client still reports during
 * the wait (the policy forces the RPC and asks for no work), a failed RPC
 * still holds everything back, and a job that finishes ends the wait, as
 * the client daemon's finished upload does. */
static void test_sim_work_backoff(void **state)
{
    (void)state;
    struct vs_scenario s;
    simfx_parse("P1(1, 24, 1)", &s);
    struct sim x;
    vs_sim__init(&x, &s, VS_CPOLICY_DEFAULT, 30 * 86400, 1, NULL);
    x.pj[0].jobs_left = 0; /* the project has no work */
    struct vs_rng r = x.rng_client;
    double want = vs_cbackoff(1, VS_CBACKOFF_MIN, VS_CBACKOFF_MAX, vs_rng_double(&r));
    assert_int_equal(vs_sim__rpc(&x, 0, 1000, 1), 0);
    assert_int_equal(x.pj[0].no_work_n, 1);
    assert_int_equal(x.pj[0].backoff_n, 0);
    assert_true(fabs(x.cp[0].work_backoff_until - x.st.now - want) < 1e-6);
    assert_true(x.cp[0].min_rpc_time < x.cp[0].work_backoff_until);
    want = vs_cbackoff(2, VS_CBACKOFF_MIN, VS_CBACKOFF_MAX, vs_rng_double(&r));
    assert_int_equal(vs_sim__rpc(&x, 0, 1000, 1), 0);
    assert_true(fabs(x.cp[0].work_backoff_until - x.st.now - want) < 1e-6);

    /* During the wait: an overdue report is a forced RPC asking for none. */
    x.st.now += 1;
    x.cp[0].min_rpc_time = 0;
    x.cp[0].report_overdue = true;
    assert_int_equal(vs_cpolicy_step(x.policy, &x.st, &x.ws, &x.out), 0);
    assert_int_equal(x.out.fetch.project, 0);
    assert_int_equal(x.out.fetch.reason, VS_CFETCH_REPORT_OVERDUE);
    assert_true(x.out.fetch.request_pn == 0);
    /* The same report waits out a failed RPC's deferral. */
    x.cp[0].min_rpc_time = x.st.now + 50;
    assert_int_equal(vs_cpolicy_step(x.policy, &x.st, &x.ws, &x.out), 0);
    assert_int_equal(x.out.fetch.project, -1);
    /* Without the wait, work is asked with the report. */
    x.cp[0].min_rpc_time = 0;
    x.cp[0].work_backoff_until = 0;
    assert_int_equal(vs_cpolicy_step(x.policy, &x.st, &x.ws, &x.out), 0);
    assert_int_equal(x.out.fetch.project, 0);
    assert_true(x.out.fetch.request_pn > 0);

    /* A reply with work ends the wait and the count. */
    x.cp[0].report_overdue = false;
    x.cp[0].work_backoff_until = x.st.now + 500;
    x.pj[0].jobs_left = -1;
    assert_true(vs_sim__rpc(&x, 0, 1000, 1) > 0);
    assert_int_equal(x.pj[0].no_work_n, 0);
    assert_true(x.cp[0].work_backoff_until == 0);
    /* So does a job that finishes. */
    x.pj[0].no_work_n = 3;
    x.cp[0].work_backoff_until = x.st.now + 500;
    assert_int_equal(vs_cpolicy_step(x.policy, &x.st, &x.ws, &x.out), 0);
    vs_sim__apply_action_list(&x, &x.out.enforce);
    assert_true(x.st.results[0].task == VS_CTASK_RUNNING);
    vs_sim__complete(&x, 0);
    assert_int_equal(x.pj[0].no_work_n, 0);
    assert_true(x.cp[0].work_backoff_until == 0);
    vs_sim__cleanup(&x);
    vs_scenario_cleanup(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_boinc_constants),    cmocka_unit_test(test_first_range),
        cmocka_unit_test(test_growth_and_cap),     cmocka_unit_test(test_retry_cap),
        cmocka_unit_test(test_jitter_from_draw),   cmocka_unit_test(test_caller_bounds),
        cmocka_unit_test(test_sim_client_uses_it), cmocka_unit_test(test_sim_work_backoff),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
