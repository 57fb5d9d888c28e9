/*
 * Batch tail acceleration in popsim (issue 38): the rule of
 * src/policy/server/submit_policy.c, the one `volsched serve` runs, shortens
 * a batch's makespan on a population whose speeds and reliability spread
 * wide, for little more CPU; with the rule off nothing is replicated and
 * nothing kept from a host. Over three seeds, each paired (the same hosts
 * and jobs with and without).
 */
#include "vs_test.h"

#include <string.h>

#include "volsched/popsim.h"

static const char scenario[] = "hosts = 400\n"
                               "gflops = lognormal(3, 1.2)\n"
                               "on_frac = beta(2, 1)\n"
                               "active_frac = beta(4, 1)\n"
                               "error_rate = choice(0: .9, .3: .1)\n"
                               "lifetime = 30\n"
                               "batch_size = 2000\n"
                               "job_hours = 4\n"
                               "job_spread = .5\n"
                               "delay_bound = 7d\n"
                               "max_total_results = 8\n"
                               "duration = 60\n";

static void run(bool tail, uint64_t seed, struct vs_pop_result *out)
{
    struct vs_pop_scenario s;
    struct vs_scn_error e;
    assert_int_equal(vs_pop_scenario_parse(scenario, strlen(scenario), &s, &e), 0);
    s.tail_acceleration = tail;
    struct vs_pop_options o = {.seed_set = true, .seed = seed};
    assert_int_equal(vs_popsim_run(&s, &o, out), 0);
    assert_true(out->makespan > 0); /* the batch finished */
}

static void test_tail_shortens_makespan(void **state)
{
    (void)state;
    double ratio_ms = 0, ratio_cpu = 0;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        struct vs_pop_result off, on;
        run(false, seed, &off);
        run(true, seed, &on);
        assert_int_equal(off.tail_replicas, 0);
        assert_int_equal(off.tail_refused, 0);
        assert_true(on.tail_replicas > 0);
        ratio_ms += on.makespan / off.makespan / 3;
        ratio_cpu += on.cpu_hours_to_end / off.cpu_hours_to_end / 3;
        print_message("seed %llu: makespan %.1f h -> %.1f h, CPU %.0f h -> %.0f h, %lld extra\n",
                      (unsigned long long)seed, off.makespan / 3600, on.makespan / 3600,
                      off.cpu_hours_to_end, on.cpu_hours_to_end, (long long)on.tail_replicas);
        vs_pop_result_cleanup(&off);
        vs_pop_result_cleanup(&on);
    }
    /* The goal: down by at least a third, for at most 5% more CPU. */
    assert_true(ratio_ms < 2.0 / 3.0);
    assert_true(ratio_cpu < 1.05);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tail_shortens_makespan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
