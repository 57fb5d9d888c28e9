/*
 * Unit tests of fair's own rules in src/policy/client (the emulator
 * scenarios test them end to end in tests/integration/test_sim_emulator.sh):
 * its CPU scheduler (long-term debt, whole CPUs up to each share, EDF over
 * every result once a deadline is in danger, ties by name, no start of a
 * job that can no longer meet its deadline) and its work fetch (the
 * server's verdict from the client's own estimated_delay).
 */
#include "vs_test.h"

#include <math.h>
#include <string.h>

#include "volsched/client_policy.h"

#include "cpolicy_fixture.h"

static void sched(struct fx *f, enum vs_cpolicy pol, struct vs_csched_out *sc)
{
    struct vs_rrsim_out rr;
    assert_int_equal(vs_rrsim_run(pol, &f->st, &f->ws, &rr), 0);
    assert_int_equal(vs_csched_run(pol, &f->st, &rr, &f->ws, sc), 0);
}

/* fair ranks by long-term debt, shortfall by short-term debt. */
static void test_ltd_not_std(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 1, 0);
    size_t a = fx_project(&f, "A", 1), b = fx_project(&f, "B", 1);
    fx_result(&f, NULL, a, 3600, 1e9);
    fx_result(&f, NULL, b, 3600, 1e9);
    f.p[a].std = 100;
    f.p[b].ltd = 100;
    struct vs_csched_out sc;
    sched(&f, VS_CPOLICY_SHORTFALL, &sc);
    assert_int_equal(sc.order[0], 0);
    sched(&f, VS_CPOLICY_FAIR, &sc);
    assert_int_equal(sc.order[0], 1);
    fx_cleanup(&f);
}

/* 2 CPUs, A has half the share: A keeps one CPU although B is owed more
 * (seed 000's round-robin gives B both). */
static void test_share_floor(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 2, 0);
    size_t a = fx_project(&f, "A", 2), b = fx_project(&f, "B", 1), c = fx_project(&f, "C", 1);
    fx_result(&f, NULL, a, 3600, 1e9);
    fx_result(&f, NULL, b, 3600, 1e9);
    fx_result(&f, NULL, b, 3600, 1e9);
    fx_result(&f, NULL, c, 3600, 1e9);
    f.p[b].ltd = f.p[b].std = 1e5;
    f.p[c].ltd = f.p[c].std = 5e4;
    f.p[a].ltd = f.p[a].std = -1e5;
    struct vs_csched_out sc;
    sched(&f, VS_CPOLICY_SHORTFALL, &sc);
    assert_int_equal(sc.ncpu, 2);
    assert_true(sc.why[0] == VS_CSCHED_NO); /* A gets nothing */
    sched(&f, VS_CPOLICY_FAIR, &sc);
    assert_int_equal(sc.ncpu, 2);
    assert_true(sc.why[0] != VS_CSCHED_NO); /* A keeps its CPU */
    assert_true(sc.why[1] != VS_CSCHED_NO); /* B, the most owed, the other */
    fx_cleanup(&f);
}

/* Equal debts: fair picks by name whatever the list order. */
static void test_ties_by_name(void **state)
{
    (void)state;
    for (int order = 0; order < 2; order++) {
        struct fx f;
        fx_init(&f, 1, 0);
        size_t x = fx_project(&f, order ? "Z" : "A", 1);
        size_t y = fx_project(&f, order ? "A" : "Z", 1);
        fx_result(&f, NULL, x, 3600, 1e9);
        fx_result(&f, NULL, y, 3600, 1e9);
        struct vs_csched_out sc;
        sched(&f, VS_CPOLICY_FAIR, &sc);
        assert_string_equal(f.p[f.r[sc.order[0]].project].name, "A");
        fx_cleanup(&f);
    }
}

/* A job that can no longer meet its deadline is not started under fair
 * (shortfall starts it and wastes the CPU); a started one keeps going. */
static void test_no_hopeless_start(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 1, 0);
    size_t a = fx_project(&f, "A", 1);
    fx_result(&f, NULL, a, 7200, 3600); /* 2 hours due in 1 */
    struct vs_csched_out sc;
    sched(&f, VS_CPOLICY_SHORTFALL, &sc);
    assert_int_equal(sc.ncpu, 1);
    sched(&f, VS_CPOLICY_FAIR, &sc);
    assert_int_equal(sc.ncpu, 0);
    f.r[0].task = VS_CTASK_SUSPENDED;
    sched(&f, VS_CPOLICY_FAIR, &sc);
    assert_int_equal(sc.ncpu, 1);
    fx_cleanup(&f);
}

/* Once the round-robin simulation sees a miss, fair runs every result by
 * deadline. Only A misses under round-robin; seed 000 then runs A first by
 * EDF among the projects that miss; fair runs B, due first, and A still
 * meets its deadline after it. */
static void test_edf_all(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 1, 0);
    size_t a = fx_project(&f, "A", 1), b = fx_project(&f, "B", 10), c = fx_project(&f, "C", 1);
    fx_result(&f, NULL, a, 3600, 1.2 * 3600);
    fx_result(&f, NULL, b, 360, 0.3 * 3600);
    fx_result(&f, NULL, c, 3600, 1e9);
    f.p[c].ltd = f.p[c].std = 1e4;
    struct vs_csched_out sc;
    struct vs_rrsim_out rr;
    assert_int_equal(vs_rrsim_run(VS_CPOLICY_FAIR, &f.st, &f.ws, &rr), 0);
    assert_int_equal(rr.deadlines_missed[a], 1);
    assert_int_equal(rr.deadlines_missed[b], 0);
    sched(&f, VS_CPOLICY_SHORTFALL, &sc);
    assert_int_equal(sc.order[0], 0);
    sched(&f, VS_CPOLICY_FAIR, &sc);
    assert_int_equal(sc.order[0], 1);
    assert_int_equal(sc.why[1], VS_CSCHED_EDF);
    fx_cleanup(&f);
}

/* The server's verdict: P1's next six-minute job, due in an hour, is asked
 * for only while the client's own estimated_delay (when the CPU runs out of
 * queued work) leaves room for it; otherwise P1 asks for nothing at all. */
static void test_fetch_server_verdict(void **state)
{
    (void)state;
    for (int long_queue = 0; long_queue < 2; long_queue++) {
        struct fx f;
        fx_init(&f, 1, 7200);
        size_t p1 = fx_project(&f, "P1", 1), p2 = fx_project(&f, "P2", 1);
        f.p[p1].job_est = 360;
        f.p[p1].job_delay_bound = 3600;
        f.p[p2].job_est = 3600;
        f.p[p2].job_delay_bound = 86400;
        fx_result(&f, NULL, p2, long_queue ? 3600 : 1200, 86400);
        struct vs_rrsim_out rr;
        struct vs_cfetch_out fo;
        assert_int_equal(vs_rrsim_run(VS_CPOLICY_FAIR, &f.st, &f.ws, &rr), 0);
        assert_int_equal(vs_cfetch_run(VS_CPOLICY_FAIR, &f.st, &rr, &f.ws, &fo), 0);
        if (long_queue) {
            assert_true(fo.project != (long)p1);
            assert_true(fo.work_request_size[p1] == 0);
        } else {
            assert_int_equal(fo.project, (long)p1);
            assert_true(fo.request > 0);
        }
        fx_cleanup(&f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ltd_not_std),  cmocka_unit_test(test_share_floor),
        cmocka_unit_test(test_ties_by_name), cmocka_unit_test(test_no_hopeless_start),
        cmocka_unit_test(test_edf_all),      cmocka_unit_test(test_fetch_server_verdict),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
