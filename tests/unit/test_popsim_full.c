/* Unit tests of popsim's full host model (model = full: each host runs
 * src/policy/client through src/sim's host simulator): determinism, the
 * books of every result sent, churn, and behaviour that only the real
 * client policy has (its EDF meeting deadlines the lighter model misses). */
#include "vs_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "volsched/alloc.h"
#include "volsched/popsim.h"

static void parse(const char *text, struct vs_pop_scenario *s)
{
    struct vs_scn_error e;
    if (vs_pop_scenario_parse(text, strlen(text), s, &e) != 0)
        fail_msg("%s: %d:%d %s", text, e.line, e.col, e.msg);
}

static void run(const char *text, struct vs_pop_result *r)
{
    struct vs_pop_scenario s;
    parse(text, &s);
    assert_int_equal(vs_popsim_run(&s, NULL, r), 0);
}

/* Every result sent is reported, timed out, or still out at the end; every
 * one reported is counted once (when all workunits are finished). */
static void check_books(const struct vs_pop_result *r)
{
    assert_int_equal(r->sent, r->returned + (r->timed_out - r->late) + r->in_flight_end);
    if (r->wus_open == 0)
        assert_int_equal(r->returned, r->valid + r->invalid + r->invalid_accepted + r->wasted);
    assert_int_equal(r->wus, r->wus_valid + r->wus_failed + r->wus_open);
    assert_true(r->cpu_hours_wasted <= r->cpu_hours + 1e-6);
    assert_true(r->sent > 0);
}

#define SMALL                                                                                      \
    "model = full hosts = 80 batch_size = 400 job_hours = 3 delay_bound = 2d duration = 30\n"

static void test_parse_model(void **state)
{
    (void)state;
    struct vs_pop_scenario s;
    parse("hosts = 5", &s);
    assert_int_equal(s.model, VS_POP_LIGHT);
    parse("model = full client_policy = wrr", &s);
    assert_int_equal(s.model, VS_POP_FULL);
    assert_string_equal(vs_pop_models[s.model], "full");
    struct vs_scn_error e;
    const char *bad = "hosts = 5\n  model = heavy";
    assert_int_equal(vs_pop_scenario_parse(bad, strlen(bad), &s, &e), VS_EPARSE);
    assert_int_equal(e.line, 2);
    assert_int_equal(e.col, 11);
    assert_non_null(strstr(e.msg, "model wants one of: light, full"));
    bad = "client_policy = edf";
    assert_int_equal(vs_pop_scenario_parse(bad, strlen(bad), &s, &e), VS_EPARSE);
    assert_int_equal(e.col, 17);
    assert_non_null(strstr(e.msg, "fair, shortfall, debt, wrr"));
}

static char *json_of(const char *text, uint64_t seed)
{
    struct vs_pop_scenario s;
    parse(text, &s);
    struct vs_pop_options o = {.seed_set = true, .seed = seed};
    struct vs_pop_result r;
    assert_int_equal(vs_popsim_run(&s, &o, &r), 0);
    check_books(&r);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(vs_pop_print_json(f, &s, &r), 0);
    assert_int_equal(vs_pop_write_csv(f, &r), 0);
    fclose(f);
    vs_pop_result_cleanup(&r);
    return buf;
}

/* Same seed, same bytes (figures and timeline), with everything that
 * draws: churn, wrong answers, a quorum, shares below 1, the EDF check. */
static void test_deterministic(void **state)
{
    (void)state;
    const char *t = SMALL "lifetime = 4 error_rate = .05 min_quorum = 2 target_nresults = 2\n"
                          "share = uniform(.3, 1) server_edf_check = true";
    char *a = json_of(t, 3), *b = json_of(t, 3), *c = json_of(t, 4);
    assert_string_equal(a, b);
    assert_true(strcmp(a, c) != 0);
    assert_non_null(strstr(a, "\"full (fair)\""));
    vs_free(a); /* open_memstream buffers: vs_free is free() */
    vs_free(b);
    vs_free(c);
}

static void test_books(void **state)
{
    (void)state;
    struct vs_pop_result r;
    /* Cut short: results are still out at the end, and counted so. */
    run(SMALL "duration = 12h", &r);
    check_books(&r);
    assert_true(r.in_flight_end > 0);
    assert_true(r.wus_open > 0);
    assert_true(r.makespan < 0);
    vs_pop_result_cleanup(&r);

    /* Hosts that leave lose what they hold: it times out and is remade. */
    run(SMALL "lifetime = 2 delay_bound = 1d", &r);
    check_books(&r);
    assert_int_equal(r.wus_open, 0);
    assert_true(r.hosts_seen > 80);
    assert_true(r.timed_out > 0);
    assert_true(r.sent >= 400 + r.timed_out - r.late);
    assert_true(r.cpu_hours_wasted > 0);
    vs_pop_result_cleanup(&r);

    /* A quorum of 2 with wrong answers: found out and replaced. */
    run(SMALL "error_rate = 0.1 min_quorum = 2 target_nresults = 2", &r);
    check_books(&r);
    assert_int_equal(r.wus_open, 0);
    assert_int_equal(r.invalid_accepted, 0);
    assert_true(r.invalid > 30);
    assert_true(r.valid >= 2 * r.wus_valid);
    vs_pop_result_cleanup(&r);
}

/*
 * One-CPU hosts that give this project 30% of their computing, ten-hour
 * jobs and a 24-hour deadline. The lighter model spreads the share evenly,
 * so every job takes 33 hours and misses. The full model runs the real
 * client: its round-robin simulation sees the miss coming and runs the job
 * earliest deadline first, ahead of the other project, so every deadline
 * is met. The same client under plain weighted round-robin (wrr, no EDF)
 * misses every one: the difference is the policy's, not the model's
 * bookkeeping.
 */
static void test_client_edf(void **state)
{
    (void)state;
    const char *t = "hosts = 50 ncpus = 1 gflops = 3 on_frac = 1 active_frac = 1 share = 0.3\n"
                    "batch_size = 100 job_hours = 10 delay_bound = 24h buffer = 0.05\n"
                    "buffer_extra = 0.1 duration = 20\n";
    char text[512];
    struct vs_pop_result light, fair, wrr;
    snprintf(text, sizeof(text), "%s model = light", t);
    run(text, &light);
    snprintf(text, sizeof(text), "%s model = full", t);
    run(text, &fair);
    snprintf(text, sizeof(text), "%s model = full client_policy = wrr", t);
    run(text, &wrr);
    check_books(&light);
    check_books(&fair);
    check_books(&wrr);
    assert_int_equal(light.wus_valid, 100);
    assert_int_equal(fair.wus_valid, 100);
    assert_int_equal(wrr.wus_valid, 100);
    /* light: 10 h / 0.3 = 33 h a job */
    assert_int_equal(light.deadline_misses, 100);
    assert_true(light.turnaround_p50 > 30 * 3600.0);
    /* full, fair (BOINC's policy with EDF): none missed, back within the day */
    assert_int_equal(fair.deadline_misses, 0);
    assert_true(fair.turnaround_p90 < 24 * 3600.0);
    /* the CPU the jobs took is what the client ran: 100 x 10 h, and a
     * little lost to preemption without a checkpoint */
    assert_true(fair.cpu_hours >= 1000 - 1e-6 && fair.cpu_hours < 1030);
    /* full, wrr (no deadline mode): all missed */
    assert_int_equal(wrr.deadline_misses, 100);
    vs_pop_result_cleanup(&light);
    vs_pop_result_cleanup(&fair);
    vs_pop_result_cleanup(&wrr);
}

/* The full client's request is what the server's deadline rule reads: a
 * host whose queue of the other project keeps its CPU busy for longer than
 * the deadline allows gets nothing (seed 004's rule on estimated_delay),
 * where the lighter model, which knows nothing of the other project's
 * queue, is sent work. */
static void test_server_sees_full_queue(void **state)
{
    (void)state;
    const char *t = "hosts = 20 ncpus = 1 gflops = 3 on_frac = 1 active_frac = 1 share = 0.5\n"
                    "batch_size = 40 job_hours = 10 delay_bound = 16h buffer = 0.05\n"
                    "buffer_extra = 0.1 duration = 4\n";
    char text[512];
    struct vs_pop_result light, full;
    snprintf(text, sizeof(text), "%s model = light", t);
    run(text, &light);
    snprintf(text, sizeof(text), "%s model = full", t);
    run(text, &full);
    assert_true(light.sent >= 40);
    assert_int_equal(light.refused_deadline, 0);
    assert_int_equal(full.sent, 0);
    assert_true(full.refused_deadline > 20);
    assert_true(full.rpcs > 0);
    vs_pop_result_cleanup(&light);
    vs_pop_result_cleanup(&full);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_model),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_books),
        cmocka_unit_test(test_client_edf),
        cmocka_unit_test(test_server_sees_full_queue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
