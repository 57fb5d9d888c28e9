/*
 * The credit policy (volsched/credit.h): BOINC's update_average, the three
 * methods, and the adaptive scheme's defences: hosts without history and
 * outliers granted the average, a cheater's inflated runtimes cancelled by
 * its own average, failed benchmarks, multi-threaded jobs counted by the
 * CPUs they used, the cap at rsc_fpops_bound, absurd input, and the
 * quorum's value.
 */
#include "vs_test.h"

#include <math.h>

#include "volsched/credit.h"
#include "volsched/pop_credit.h"

#define EST 3.6e12 /* an hour of a 1 GFLOPS host */
#define CS  VS_COBBLESTONE_SCALE
/* cmocka compares floats in single precision: these are doubles. */
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

static void test_cobblestone(void **state)
{
    (void)state;
    /* A day of 1 GFLOPS is 200 credits. */
    assert_near(86400e9 * CS, 200.0, 1e-9);
    struct vs_credit_job j = {.rsc_fpops_est = 86400e9, .rsc_fpops_bound = 1e20};
    struct vs_credit_claim c;
    vs_credit_claim(VS_CREDIT_FLOPS, &j, &c);
    assert_near(c.credit, 200.0, 1e-9);
}

static void test_update_average(void **state)
{
    (void)state;
    double avg = 0, t = 0;
    /* First grant: 100 credits for a job sent 2 days ago: 50 per day. */
    vs_credit_update_average(10 * 86400.0, 8 * 86400.0, 100, VS_CREDIT_HALF_LIFE, &avg, &t);
    assert_near(avg, 50.0, 1e-9);
    assert_near(t, 10 * 86400.0, 0);
    /* A week without credit halves it. */
    vs_credit_update_average(17 * 86400.0, 0, 0, VS_CREDIT_HALF_LIFE, &avg, &t);
    assert_near(avg, 25.0, 1e-9);
    /* Steady 100 credits a day converges to 100 per day. */
    avg = 0;
    t = 0;
    for (int d = 1; d <= 200; d++)
        vs_credit_update_average(d * 86400.0, (d - 1) * 86400.0, 100, VS_CREDIT_HALF_LIFE, &avg,
                                 &t);
    assert_near(avg, 100.0, 0.5);
    /* Credit at the same instant uses the limit, not 0/0. */
    double before = avg;
    vs_credit_update_average(t, t, 10, VS_CREDIT_HALF_LIFE, &avg, &t);
    assert_true(isfinite(avg));
    assert_near(avg - before, M_LN2 * 10 * 86400.0 / VS_CREDIT_HALF_LIFE, 1e-9);
    /* Absurd work adds nothing; a clock that went back decays nothing. */
    before = avg;
    vs_credit_update_average(t - 1000, 0, NAN, VS_CREDIT_HALF_LIFE, &avg, &t);
    assert_near(avg, before, 1e-9);
    vs_credit_update_average(t, 0, -5, VS_CREDIT_HALF_LIFE, &avg, &t);
    assert_near(avg, before, 1e-9);
}

static void test_fixed_and_cap(void **state)
{
    (void)state;
    struct vs_credit_job j = {.rsc_fpops_est = EST, .rsc_fpops_bound = 2 * EST, .fixed_credit = 7};
    struct vs_credit_claim c;
    vs_credit_claim(VS_CREDIT_FIXED, &j, &c);
    assert_near(c.credit, 7, 0);
    j.fixed_credit = NAN;
    vs_credit_claim(VS_CREDIT_FIXED, &j, &c);
    assert_near(c.credit, 0, 0);
    /* The estimate above the bound is capped at the bound. */
    j.rsc_fpops_est = 1e300;
    vs_credit_claim(VS_CREDIT_FLOPS, &j, &c);
    assert_near(c.credit, 2 * EST * CS, 1e-9);
    j.rsc_fpops_est = -1;
    vs_credit_claim(VS_CREDIT_FLOPS, &j, &c);
    assert_near(c.credit, 0, 0);
}

/* A host of speed fpops running jobs of EST at efficiency eff (actual
 * FLOPS / peak), reporting runtimes multiplied by lie; n jobs through the
 * adaptive scheme with the given version average. Returns the mean credit
 * of the last 10. */
static double run_host(struct vs_credit_stat *av, double fpops, double eff, double lie, int n,
                       double ref)
{
    struct vs_credit_stat hav = {0, 0};
    double sum = 0;
    for (int i = 0; i < n; i++) {
        struct vs_credit_job j = {.rsc_fpops_est = EST,
                                  .rsc_fpops_bound = 100 * EST,
                                  .elapsed_time = EST / (fpops * eff) * lie,
                                  .host_p_fpops = fpops,
                                  .host_p_ncpus = 4,
                                  .av_avg_ncpus = 1,
                                  .av = *av,
                                  .hav = hav,
                                  .app_ref = ref};
        struct vs_credit_claim c;
        vs_credit_claim(VS_CREDIT_ADAPTIVE, &j, &c);
        assert_true(c.credit >= 0 && c.credit <= 100 * EST * CS);
        if (c.update_hav)
            vs_credit_stat_add(&hav, c.sample, VS_CREDIT_HOST_WINDOW);
        if (c.update_av)
            vs_credit_stat_add(av, c.sample, VS_CREDIT_AV_WINDOW);
        if (i >= n - 10)
            sum += c.credit;
    }
    return sum / 10;
}

static void test_adaptive_defences(void **state)
{
    (void)state;
    struct vs_credit_stat av = {0, 0};
    /* Honest hosts 1000x apart in speed, efficiency 0.5: the version
     * settles at 2 peak FLOPs per estimated FLOP. */
    for (int h = 0; h < 30; h++)
        run_host(&av, 1e8 * pow(1000, h / 29.0), 0.5, 1, 12, 0);
    assert_true(av.n >= VS_CREDIT_MIN_AV_SAMPLES);
    assert_near(av.avg, 2.0, 1e-6);
    double ref = av.avg;
    double fair = EST * ref * CS;
    /* A settled honest host earns the fair value, fast or slow. */
    assert_near(run_host(&av, 1e8, 0.5, 1, 30, ref), fair, fair * 1e-6);
    assert_near(run_host(&av, 1e11, 0.5, 1, 30, ref), fair, fair * 1e-6);
    /* A cheater reporting 10x its runtime: an outlier for the version,
     * granted the average, never more. */
    double n_before = av.n, avg_before = av.avg;
    assert_near(run_host(&av, 1e9, 0.5, 10, 50, ref), fair, fair * 1e-6);
    /* ... and its lies did not move the version's average. */
    assert_near(av.avg, avg_before, 1e-9);
    assert_near(av.n, n_before, 0);
    /* 3x (inside the outlier band): its own average absorbs the lie. */
    double g = run_host(&av, 1e9, 0.5, 3, 50, ref);
    assert_true(g < 1.1 * fair);
    assert_near(av.avg, avg_before, 1e-9);
    /* A failed benchmark (exactly 1e9 reported by a 2e10 host): granted the
     * average until its own history forms, then the fair value; never
     * feeds the version's average. */
    double avg0 = av.avg;
    assert_near(run_host(&av, 1e9, 10, 1, 40, ref), fair, fair * 1e-6);
    assert_near(av.avg, avg0, 0);
    assert_true(vs_credit_benchmark_failed(1e9));
    assert_true(vs_credit_benchmark_failed(0));
    assert_true(vs_credit_benchmark_failed(NAN));
    assert_false(vs_credit_benchmark_failed(3.1e9));
}

static void test_adaptive_absurd_input(void **state)
{
    (void)state;
    struct vs_credit_stat av = {100, 2}, hav = {50, 2};
    double bad[] = {NAN, -1, 0, 1e300, INFINITY};
    double fair = EST * 2 * CS;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct vs_credit_job j = {.rsc_fpops_est = EST,
                                  .rsc_fpops_bound = 10 * EST,
                                  .elapsed_time = bad[i],
                                  .cpu_time = bad[i],
                                  .host_p_fpops = 1e9 * 1.5,
                                  .host_p_ncpus = 1,
                                  .av_avg_ncpus = 1,
                                  .av = av,
                                  .hav = hav,
                                  .app_ref = 2};
        struct vs_credit_claim c;
        vs_credit_claim(VS_CREDIT_ADAPTIVE, &j, &c);
        assert_true(c.outlier);
        assert_false(c.update_hav);
        assert_false(c.update_av);
        assert_near(c.credit, fair, fair * 1e-9);
        /* Absurd speed too. */
        j.elapsed_time = 3600;
        j.host_p_fpops = bad[i];
        vs_credit_claim(VS_CREDIT_ADAPTIVE, &j, &c);
        assert_true(c.credit <= 10 * EST * CS && c.credit >= 0);
    }
    /* An estimate of 1e300 is capped at the bound. */
    struct vs_credit_job j = {.rsc_fpops_est = 1e300, .rsc_fpops_bound = 1e13};
    struct vs_credit_claim c;
    vs_credit_claim(VS_CREDIT_ADAPTIVE, &j, &c);
    assert_near(c.credit, 1e13 * CS, 1e-9);
}

static void test_multithreaded(void **state)
{
    (void)state;
    /* An 8-CPU version on a 4-CPU host is paid for 4 at most, and a job
     * whose CPU time shows it used 1 is paid for 1. */
    struct vs_credit_job j = {.rsc_fpops_est = EST,
                              .rsc_fpops_bound = 1e20,
                              .elapsed_time = 1000,
                              .host_p_fpops = 2e9,
                              .host_p_ncpus = 4,
                              .av_avg_ncpus = 8};
    struct vs_credit_claim c;
    vs_credit_claim(VS_CREDIT_ADAPTIVE, &j, &c);
    assert_near(c.sample, 1000 * 2e9 * 4 / EST, 1e-9);
    j.cpu_time = 1000; /* one CPU's worth */
    vs_credit_claim(VS_CREDIT_ADAPTIVE, &j, &c);
    assert_near(c.sample, 1000 * 2e9 / EST, 1e-9);
    j.cpu_time = 2500;
    vs_credit_claim(VS_CREDIT_ADAPTIVE, &j, &c);
    assert_near(c.sample, 1000 * 2e9 * 2.5 / EST, 1e-9);
}

static void test_quorum_and_ref(void **state)
{
    (void)state;
    double one[] = {5};
    double two[] = {9, 4};
    double three[] = {3, 100, 5};
    double junk[] = {NAN, 4};
    assert_near(vs_credit_quorum(one, 0), 0, 0);
    assert_near(vs_credit_quorum(one, 1), 5, 0);
    assert_near(vs_credit_quorum(two, 2), 4, 0);
    /* Three or more: the mean without the highest claim. */
    assert_near(vs_credit_quorum(three, 3), 4, 0);
    assert_near(vs_credit_quorum(junk, 2), 0, 0);
    struct vs_credit_stat avs[] = {{5, 1.0}, {30, 3.0}, {25, 2.0}, {40, NAN}};
    assert_near(vs_credit_app_ref(avs, 4), 2.0, 0);
    assert_near(vs_credit_app_ref(avs, 1), 0, 0);
    assert_int_equal(vs_credit_method_parse("flops"), VS_CREDIT_FLOPS);
    assert_int_equal(vs_credit_method_parse("nope"), -1);
    assert_string_equal(vs_credit_method_name(VS_CREDIT_ADAPTIVE), "adaptive");
}

/* The study's goals (docs/credit.md), on a small population: the adaptive
 * scheme spreads credit per CPU-hour no more than the FLOP estimate does,
 * over hosts and over apps; cheaters and failed benchmarks gain < 1.1x; a
 * new version settles. */
static void test_study_goals(void **state)
{
    (void)state;
    struct vs_pop_credit_options o = {.seed = 7, .nhosts = 400, .nresults = 60000};
    struct vs_pop_credit_result r;
    assert_int_equal(vs_pop_credit_run(&o, &r), 0);
    const struct vs_pop_credit_scheme *ad = &r.scheme[VS_CREDIT_ADAPTIVE];
    const struct vs_pop_credit_scheme *fl = &r.scheme[VS_CREDIT_FLOPS];
    assert_true(ad->cv_hosts <= fl->cv_hosts);
    assert_true(ad->cv_apps <= fl->cv_apps);
    assert_true(ad->cheat_gain > 0 && ad->cheat_gain < 1.1);
    assert_true(ad->failed_gain > 0.9 && ad->failed_gain < 1.1);
    assert_true(ad->settle_results > 0 && ad->settle_results < 1000);
    /* Cobblestones: the adaptive scheme pays about 200 a day per peak
     * GFLOPS of the most efficient version. */
    assert_true(ad->credit_per_hour > 200.0 / 24 * 0.8 && ad->credit_per_hour < 200.0 / 24 * 1.2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cobblestone),           cmocka_unit_test(test_update_average),
        cmocka_unit_test(test_fixed_and_cap),         cmocka_unit_test(test_adaptive_defences),
        cmocka_unit_test(test_adaptive_absurd_input), cmocka_unit_test(test_multithreaded),
        cmocka_unit_test(test_quorum_and_ref),        cmocka_unit_test(test_study_goals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
