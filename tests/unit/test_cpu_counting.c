/*
 * The client policies count CPUs, not results: multi-threaded
 * and fractional jobs, max_concurrent, in the round-robin simulation, the
 * CPU schedule and enforcement; fair's work fetch at a project's limit and
 * with a backup project (share 0).
 */
#include "vs_test.h"

#include <math.h>
#include <string.h>

#include "volsched/client_policy.h"

#include "cpolicy_fixture.h"

static const enum vs_cpolicy all[] = {VS_CPOLICY_FAIR, VS_CPOLICY_SHORTFALL, VS_CPOLICY_DEBT,
                                      VS_CPOLICY_WRR};

/* CPUs the schedule gives CPU-intensive results, and results of project p. */
static double sched_cpus(const struct fx *f, const struct vs_csched_out *o, size_t p, int *n_p)
{
    double used = 0;
    *n_p = 0;
    for (size_t i = 0; i < o->n; i++) {
        const struct vs_cproject *pr = &f->p[f->r[o->order[i]].project];
        if (pr->non_cpu_intensive)
            continue;
        used += pr->job_ncpus > 0 ? pr->job_ncpus : 1;
        if (f->r[o->order[i]].project == p)
            (*n_p)++;
    }
    return used;
}

/* 16 CPUs; MT's 2-CPU jobs, at most 4 at once; ST's one-CPU jobs. */
static void setup_mt(struct fx *f)
{
    fx_init(f, 16, 3600);
    size_t mt = fx_project(f, "MT", 1), st = fx_project(f, "ST", 1);
    f->p[mt].job_ncpus = 2;
    f->p[mt].max_concurrent = 4;
    for (int i = 0; i < 12; i++)
        fx_result(f, "mt", mt, 7200, 1e6);
    for (int i = 0; i < 12; i++)
        fx_result(f, "st", st, 3600, 1e6);
}

static void test_schedule_counts_cpus(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++) {
        struct fx f;
        setup_mt(&f);
        struct vs_cpolicy_out out;
        assert_int_equal(vs_cpolicy_step(all[k], &f.st, &f.ws, &out), 0);
        int n_mt;
        double used = sched_cpus(&f, &out.sched, 0, &n_mt);
        /* 4 MT jobs (8 CPUs, not 4 and not 16) and 8 ST jobs. */
        assert_int_equal(n_mt, 4);
        assert_true(fabs(used - 16) < 1e-9);
        /* Enforcement starts exactly that on the idle host. */
        double started = 0;
        for (size_t i = 0; i < out.enforce.n; i++) {
            const struct vs_caction *a = &out.enforce.actions[i];
            assert_int_equal(a->kind, VS_CACT_START);
            started += f.r[a->result].project == 0 ? 2 : 1;
        }
        assert_true(fabs(started - 16) < 1e-9);
        fx_cleanup(&f);
    }
}

/* Round-robin simulation: MT can use 8 CPUs at most, so the others' lack
 * shows as shortfall instead of MT's long queue hiding it. */
static void test_rrsim_usable_cpus(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 16, 3600);
    size_t mt = fx_project(&f, "MT", 1);
    f.p[mt].job_ncpus = 2;
    f.p[mt].max_concurrent = 4;
    for (int i = 0; i < 40; i++)
        fx_result(&f, "mt", mt, 7200, 1e6);
    struct vs_rrsim_out rr;
    assert_int_equal(vs_rrsim_run(VS_CPOLICY_FAIR, &f.st, &f.ws, &rr), 0);
    /* 8 of 16 CPUs idle through the whole hour of min_queue. */
    assert_true(fabs(rr.total_shortfall - 8 * 3600.0) < 1e-3);
    /* 40 jobs of 2 hours, 4 at a time: 20 hours. */
    assert_true(fabs(rr.end - 20 * 3600.0) < 1e-3);
    fx_cleanup(&f);
}

/* No overcommit in deadline mode: jobs of 4 CPUs that all miss, on 6. */
static void test_no_overcommit_in_edf(void **state)
{
    (void)state;
    for (size_t k = 0; k < 3; k++) {
        struct fx f;
        fx_init(&f, 6, 3600);
        size_t a = fx_project(&f, "A", 1), b = fx_project(&f, "B", 1);
        f.p[a].job_ncpus = 4;
        for (int i = 0; i < 4; i++)
            fx_result(&f, "a", a, 3600, 4000);
        for (int i = 0; i < 4; i++)
            fx_result(&f, "b", b, 3600, 5000);
        struct vs_cpolicy_out out;
        assert_int_equal(vs_cpolicy_step(all[k], &f.st, &f.ws, &out), 0);
        int n_a;
        double used = sched_cpus(&f, &out.sched, a, &n_a);
        assert_true(used <= 6 + 1e-9);
        assert_int_equal(n_a, 1);
        fx_cleanup(&f);
    }
}

/* Fractional jobs: 8 quarter-CPU jobs fill 2 CPUs. */
static void test_fractional(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 2, 3600);
    size_t g = fx_project(&f, "GPU", 1);
    f.p[g].job_ncpus = 0.25;
    for (int i = 0; i < 12; i++)
        fx_result(&f, "g", g, 3600, 1e6);
    struct vs_cpolicy_out out;
    assert_int_equal(vs_cpolicy_step(VS_CPOLICY_FAIR, &f.st, &f.ws, &out), 0);
    int n;
    double used = sched_cpus(&f, &out.sched, g, &n);
    assert_int_equal(n, 8);
    assert_true(fabs(used - 2) < 1e-9);
    fx_cleanup(&f);
}

/* The busy time the client sends (estimated_delay) counts CPUs, as BOINC's
 * busy-time estimator does: one 2-CPU job fills a 2-CPU host until it ends;
 * one 1-CPU job does not; quarter-CPU jobs fill it four to a CPU. */
static double busy_of(struct fx *f)
{
    struct vs_rrsim_out rr;
    assert_int_equal(vs_rrsim_run(VS_CPOLICY_FAIR, &f->st, &f->ws, &rr), 0);
    return vs_rrsim_busy_time(&f->st, &rr, &f->ws);
}

static void test_busy_time_counts_cpus(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 2, 3600);
    size_t a = fx_project(&f, "A", 1);
    f.p[a].job_ncpus = 2;
    fx_result(&f, "a", a, 36000, 1e6);
    assert_true(fabs(busy_of(&f) - 36000) < 1e-6);
    f.p[a].job_ncpus = 1; /* now one CPU idles from the start */
    assert_true(busy_of(&f) == 0);
    fx_result(&f, "a", a, 7200, 1e6); /* two 1-CPU jobs: the shorter one */
    assert_true(fabs(busy_of(&f) - 7200) < 1e-6);
    fx_cleanup(&f);

    fx_init(&f, 2, 3600);
    size_t g = fx_project(&f, "G", 1);
    f.p[g].job_ncpus = 0.25;
    for (int i = 0; i < 7; i++)
        fx_result(&f, "g", g, 3600, 1e6);
    assert_true(busy_of(&f) == 0); /* 7 quarters: 1.75 CPUs */
    fx_result(&f, "g", g, 3600, 1e6);
    assert_true(fabs(busy_of(&f) - 3600) < 1e-6);
    fx_cleanup(&f);
}

/* fair does not ask a project at its max_concurrent with a full buffer for
 * the idle CPUs (BOINC's fetch loop); with a second project it asks that. */
static void test_fetch_at_limit(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 16, 3600);
    size_t mt = fx_project(&f, "MT", 1);
    f.p[mt].job_ncpus = 2;
    f.p[mt].max_concurrent = 4;
    f.p[mt].job_est = 7200;
    f.p[mt].job_delay_bound = 48 * 3600;
    for (int i = 0; i < 6; i++)
        fx_result(&f, "mt", mt, 7200, 48 * 3600);
    struct vs_cpolicy_out out;
    assert_int_equal(vs_cpolicy_step(VS_CPOLICY_FAIR, &f.st, &f.ws, &out), 0);
    assert_int_equal(out.fetch.project, -1);
    size_t st = fx_project(&f, "ST", 1);
    f.p[st].job_est = 3600;
    f.p[st].job_delay_bound = 48 * 3600;
    assert_int_equal(vs_cpolicy_step(VS_CPOLICY_FAIR, &f.st, &f.ws, &out), 0);
    assert_int_equal(out.fetch.project, (long)st);
    fx_cleanup(&f);
}

/* A backup project (share 0) is asked only when a CPU is idle now and no
 * project with a share can be asked; its unstarted job waits while another
 * project's can run. */
static void test_backup_project(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f, 2, 3600);
    size_t p1 = fx_project(&f, "P1", 1), bk = fx_project(&f, "BK", 0);
    f.p[p1].job_est = f.p[bk].job_est = 3600;
    f.p[p1].job_delay_bound = f.p[bk].job_delay_bound = 86400;
    struct vs_cpolicy_out out;
    assert_int_equal(vs_cpolicy_step(VS_CPOLICY_FAIR, &f.st, &f.ws, &out), 0);
    assert_int_equal(out.fetch.project, (long)p1);
    /* P1 deferred (no work): now the backup, for one job. */
    f.p[p1].min_rpc_time = 600;
    assert_int_equal(vs_cpolicy_step(VS_CPOLICY_FAIR, &f.st, &f.ws, &out), 0);
    assert_int_equal(out.fetch.project, (long)bk);
    assert_true(out.fetch.request > 0 && out.fetch.request <= 1);
    assert_true(isfinite(out.fetch.request_pn));
    /* With both CPUs busy it is not asked, even with P1 deferred. */
    fx_result(&f, "p1", p1, 3600, 86400);
    fx_result(&f, "p1", p1, 3600, 86400);
    size_t b = fx_result(&f, "bk", bk, 3600, 86400);
    assert_int_equal(vs_cpolicy_step(VS_CPOLICY_FAIR, &f.st, &f.ws, &out), 0);
    assert_int_equal(out.fetch.project, -1);
    /* Its job does not take a CPU from P1's. */
    assert_int_equal(out.sched.why[b], VS_CSCHED_NO);
    /* The seed policies take a share of 0 without dividing by it. */
    for (size_t k = 1; k < 4; k++)
        assert_int_equal(vs_cpolicy_step(all[k], &f.st, &f.ws, &out), 0);
    for (size_t p = 0; p < 2; p++)
        assert_true(isfinite(f.p[p].ltd) && isfinite(f.p[p].std));
    fx_cleanup(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schedule_counts_cpus),  cmocka_unit_test(test_rrsim_usable_cpus),
        cmocka_unit_test(test_no_overcommit_in_edf),  cmocka_unit_test(test_fractional),
        cmocka_unit_test(test_fetch_at_limit),        cmocka_unit_test(test_backup_project),
        cmocka_unit_test(test_busy_time_counts_cpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
