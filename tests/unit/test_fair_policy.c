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

struct fx {
    struct vs_cstate st;
    struct vs_cproject p[4];
    struct vs_cresult r[16];
    struct vs_cpolicy_ws ws;
};

static void fx_init(struct fx *f, int ncpus)
{
    memset(f, 0, sizeof(*f));
    f->st.host = (struct vs_chost){.ncpus = ncpus,
                                   .on_frac = 1,
                                   .active_frac = 1,
                                   .cpu_efficiency = 1,
                                   .min_queue = 0,
                                   .sched_period = 3600};
    f->st.projects = f->p;
    f->st.results = f->r;
    f->st.last_sched_time = -1e9;
    vs_cpolicy_ws_init(&f->ws);
}

static size_t fx_project(struct fx *f, const char *name, double share)
{
    size_t i = f->st.nprojects++;
    f->p[i] = (struct vs_cproject){.name = name, .resource_share = share};
    return i;
}

static size_t fx_result(struct fx *f, size_t project, double remaining, double deadline)
{
    size_t i = f->st.nresults++;
    f->r[i] = (struct vs_cresult){
        .project = project, .remaining = remaining, .deadline = deadline, .received = (double)i};
    return i;
}

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
    fx_init(&f, 1);
    size_t a = fx_project(&f, "A", 1), b = fx_project(&f, "B", 1);
    fx_result(&f, a, 3600, 1e9);
    fx_result(&f, b, 3600, 1e9);
    f.p[a].std = 100;
    f.p[b].ltd = 100;
    struct vs_csched_out sc;
    sched(&f, VS_CPOLICY_SHORTFALL, &sc);
    assert_int_equal(sc.order[0], 0);
    sched(&f, VS_CPOLICY_FAIR, &sc);
    assert_int_equal(sc.order[0], 1);
    vs_cpolicy_ws_cleanup(&f.ws);
}

/* 2 CPUs, A has half the share: A keeps one CPU although B is owed more
 * (seed 000's round-robin gives B both). */
static void test_share_floor(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 2);
    size_t a = fx_project(&f, "A", 2), b = fx_project(&f, "B", 1), c = fx_project(&f, "C", 1);
    fx_result(&f, a, 3600, 1e9);
    fx_result(&f, b, 3600, 1e9);
    fx_result(&f, b, 3600, 1e9);
    fx_result(&f, c, 3600, 1e9);
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
    vs_cpolicy_ws_cleanup(&f.ws);
}

/* Equal debts: fair picks by name whatever the list order. */
static void test_ties_by_name(void **state)
{
    (void)state;
    for (int order = 0; order < 2; order++) {
        struct fx f;
        fx_init(&f, 1);
        size_t x = fx_project(&f, order ? "Z" : "A", 1);
        size_t y = fx_project(&f, order ? "A" : "Z", 1);
        fx_result(&f, x, 3600, 1e9);
        fx_result(&f, y, 3600, 1e9);
        struct vs_csched_out sc;
        sched(&f, VS_CPOLICY_FAIR, &sc);
        assert_string_equal(f.p[f.r[sc.order[0]].project].name, "A");
        vs_cpolicy_ws_cleanup(&f.ws);
    }
}

/* A job that can no longer meet its deadline is not started under fair
 * (shortfall starts it and wastes the CPU); a started one keeps going. */
static void test_no_hopeless_start(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 1);
    size_t a = fx_project(&f, "A", 1);
    fx_result(&f, a, 7200, 3600); /* 2 hours due in 1 */
    struct vs_csched_out sc;
    sched(&f, VS_CPOLICY_SHORTFALL, &sc);
    assert_int_equal(sc.ncpu, 1);
    sched(&f, VS_CPOLICY_FAIR, &sc);
    assert_int_equal(sc.ncpu, 0);
    f.r[0].task = VS_CTASK_SUSPENDED;
    sched(&f, VS_CPOLICY_FAIR, &sc);
    assert_int_equal(sc.ncpu, 1);
    vs_cpolicy_ws_cleanup(&f.ws);
}

/* Once the round-robin simulation sees a miss, fair runs every result by
 * deadline. Only A misses under round-robin; seed 000 then runs A first by
 * EDF among the projects that miss; fair runs B, due first, and A still
 * meets its deadline after it. */
static void test_edf_all(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 1);
    size_t a = fx_project(&f, "A", 1), b = fx_project(&f, "B", 10), c = fx_project(&f, "C", 1);
    fx_result(&f, a, 3600, 1.2 * 3600);
    fx_result(&f, b, 360, 0.3 * 3600);
    fx_result(&f, c, 3600, 1e9);
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
    vs_cpolicy_ws_cleanup(&f.ws);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ltd_not_std),  cmocka_unit_test(test_share_floor),
        cmocka_unit_test(test_ties_by_name), cmocka_unit_test(test_no_hopeless_start),
        cmocka_unit_test(test_edf_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
