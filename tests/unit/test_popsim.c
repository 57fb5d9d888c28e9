/* Unit tests of the population simulator (src/popsim): its scenario
 * language, determinism, the bookkeeping of every result sent, and that
 * the server rules of src/policy/server shape what it sends, under the
 * lighter host model and the full one. */
#include "vs_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "volsched/alloc.h"
#include "volsched/popsim.h"

static int parse(const char *text, struct vs_pop_scenario *s, struct vs_scn_error *e)
{
    return vs_pop_scenario_parse(text, strlen(text), s, e);
}

static void test_parse(void **state)
{
    (void)state;
    struct vs_pop_scenario s;
    struct vs_scn_error e;
    assert_int_equal(parse("hosts = 500  # a comment\n"
                           "ncpus = choice(1: 1, 4: 3)\n"
                           "gflops = lognormal(2.5, .3), on_frac = beta(4, 1)\n"
                           "share = uniform(.2, .8) delay_bound = 2d job_hours = 90m\n"
                           "server_edf_check = yes min_quorum = 2 target_nresults = 2\n",
                           &s, &e),
                     0);
    assert_int_equal(s.hosts, 500);
    assert_int_equal(s.ncpus.kind, VS_PD_CHOICE);
    assert_int_equal(s.ncpus.n, 2);
    assert_true(s.ncpus.v[1] == 4 && s.ncpus.w[1] == 3);
    assert_int_equal(s.gflops.kind, VS_PD_LOGNORMAL);
    assert_true(s.gflops.a == 2.5 && s.gflops.b == 0.3);
    assert_int_equal(s.on_frac.kind, VS_PD_BETA);
    assert_int_equal(s.share.kind, VS_PD_UNIFORM);
    assert_true(s.delay_bound == 2 * 86400.0);
    assert_true(s.job_hours == 90 * 60.0);
    assert_true(s.server_edf_check);
    assert_int_equal(s.min_quorum, 2);
    /* Defaults stay where nothing was said. */
    assert_true(s.buffer == 0.1 * 86400);
    assert_int_equal(s.max_wus_to_send, 10);
}

static void expect_error(const char *text, int line, int col, const char *part)
{
    struct vs_pop_scenario s;
    struct vs_scn_error e;
    int rc = parse(text, &s, &e);
    if (rc != VS_EPARSE || e.line != line || e.col != col || !strstr(e.msg, part))
        fail_msg("%s: rc %d at %d:%d '%s', wanted %d:%d '%s'", text, rc, e.line, e.col, e.msg, line,
                 col, part);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("hosts = 10\nbogus = 3\n", 2, 1, "unknown parameter 'bogus'");
    expect_error("hosts 10", 1, 7, "expected '='");
    expect_error("on_frac = 1.5", 1, 11, "between 0 and 1");
    expect_error("gflops = beta(2, 2)", 1, 10, "does not fit a positive quantity");
    expect_error("on_frac = lognormal(1, 1)", 1, 11, "does not fit a fraction");
    expect_error("ncpus = gauss(1, 2)", 1, 9, "unknown distribution 'gauss'");
    expect_error("ncpus = choice(1: 0, 2: 0)", 1, 26, "weights sum to 0");
    expect_error("ncpus = choice(1 2)", 1, 18, "expected ':'");
    expect_error("share = uniform(.8, .2)", 1, 21, "b >= a");
    expect_error("delay_bound = 2w", 1, 15, "unknown time unit 'w'");
    expect_error("hosts = 2.5", 1, 9, "whole number");
    expect_error("min_quorum = 2", 1, 15, "target_nresults (1) is below min_quorum (2)");
    expect_error("hosts = 10 ; ", 1, 12, "unexpected character ';'");
    expect_error("locality = true\n", 2, 1, "needs big input files");
    expect_error("file_mb = 10 file_order = random", 1, 27, "file_order wants one of");
    expect_error("file_mb = 10 wus_per_file = 0", 1, 29, "out of range");
}

/* `volsched sim`'s names, in hours as every time but duration and
 * lifetime; the old spellings still read in days, with one note each. */
static void test_deprecated_names(void **state)
{
    (void)state;
    struct vs_pop_scenario s;
    struct vs_scn_error e;
    assert_int_equal(parse("min_queue = 6 extra_queue = 0.5d", &s, &e), 0);
    assert_true(s.buffer == 6 * 3600.0);
    assert_true(s.buffer_extra == 0.5 * 86400);
    assert_int_equal(e.nnotes, 0);
    assert_int_equal(parse("hosts = 5\n  buffer = 0.25 buffer_extra = 1\nbuffer = 0.5", &s, &e), 0);
    assert_true(s.buffer == 0.5 * 86400);
    assert_true(s.buffer_extra == 86400);
    assert_int_equal(e.nnotes, 2); /* buffer once, at its first use */
    assert_int_equal(e.notes[0].line, 2);
    assert_int_equal(e.notes[0].col, 3);
    assert_string_equal(e.notes[0].old_name, "buffer");
    assert_string_equal(e.notes[0].new_name, "min_queue");
    assert_non_null(strstr(e.notes[0].note, "in hours"));
    assert_int_equal(e.notes[1].col, 17);
    assert_string_equal(e.notes[1].new_name, "extra_queue");
    /* The same limits as before: at most 10 days, in either spelling. */
    expect_error("buffer = 11", 1, 10, "buffer out of range");
    expect_error("min_queue = 241", 1, 13, "min_queue out of range");
    /* Booleans say what they got, as sim's do. */
    expect_error("locality = maybe", 1, 12, "locality wants true or false, not 'maybe'");
}

static void run(const char *text, struct vs_pop_result *r)
{
    struct vs_pop_scenario s;
    struct vs_scn_error e;
    if (parse(text, &s, &e) != 0)
        fail_msg("%d:%d %s", e.line, e.col, e.msg);
    assert_int_equal(vs_popsim_run(&s, NULL, r), 0);
}

/* Every result sent is reported, timed out, or still out; every one
 * reported is counted once as valid, invalid, accepted or wasted (when all
 * workunits are finished). */
static void check_books(const struct vs_pop_result *r)
{
    assert_int_equal(r->sent, r->returned + (r->timed_out - r->late) + r->in_flight_end);
    if (r->wus_open == 0)
        assert_int_equal(r->returned, r->valid + r->invalid + r->invalid_accepted + r->wasted);
    assert_int_equal(r->wus, r->wus_valid + r->wus_failed + r->wus_open);
    assert_true(r->cpu_hours_wasted <= r->cpu_hours + 1e-6);
}

#define BASE "hosts = 300 batch_size = 1500 job_hours = 3 delay_bound = 2d duration = 40\n"

static void test_books_and_quorum(void **state)
{
    (void)state;
    struct vs_pop_result r;
    run(BASE "error_rate = 0.1", &r);
    check_books(&r);
    assert_int_equal(r.wus_open, 0);
    /* Without a quorum about a tenth of the answers are wrong and taken. */
    assert_in_range(r.invalid_accepted, 75, 225);
    assert_int_equal(r.invalid, 0);
    vs_pop_result_cleanup(&r);

    run(BASE "error_rate = 0.1 min_quorum = 2 target_nresults = 2", &r);
    check_books(&r);
    assert_int_equal(r.invalid_accepted, 0);
    assert_true(r.invalid > 150);
    assert_true(r.valid >= 2 * r.wus_valid);
    assert_true(r.sent >= 2 * 1500 + r.invalid);
    vs_pop_result_cleanup(&r);
}

static void test_churn(void **state)
{
    (void)state;
    struct vs_pop_result r;
    run(BASE "lifetime = 3 delay_bound = 1d", &r);
    check_books(&r);
    assert_true(r.hosts_seen > 300);
    /* Hosts that left took results with them: they time out and are remade. */
    assert_true(r.timed_out > 0);
    assert_true(r.sent > 1500);
    vs_pop_result_cleanup(&r);
}

static char *json_of(const char *text, uint64_t seed)
{
    struct vs_pop_scenario s;
    struct vs_scn_error e;
    assert_int_equal(parse(text, &s, &e), 0);
    struct vs_pop_options o = {.seed_set = true, .seed = seed};
    struct vs_pop_result r;
    assert_int_equal(vs_popsim_run(&s, &o, &r), 0);
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

static void test_deterministic(void **state)
{
    (void)state;
    const char *t = BASE "lifetime = 5 error_rate = .05 min_quorum = 2 target_nresults = 2";
    char *a = json_of(t, 7), *b = json_of(t, 7), *c = json_of(t, 8);
    assert_string_equal(a, b);
    assert_true(strcmp(a, c) != 0);
    vs_free(a); /* open_memstream buffers: vs_free is free() */
    vs_free(b);
    vs_free(c);
}

/* The server's rules are src/policy/server's: a per-CPU in-progress limit
 * of 1 on one-CPU hosts keeps at most one result per host out. */
static void test_server_rules_apply(void **state)
{
    (void)state;
    struct vs_pop_result r;
    run(BASE "ncpus = 1 min_queue = 1d", &r);
    int64_t peak = 0;
    for (size_t i = 0; i < r.nsamples; i++)
        peak = r.samples[i].in_flight > peak ? r.samples[i].in_flight : peak;
    assert_true(peak > 300); /* a one-day buffer holds several jobs a host */
    vs_pop_result_cleanup(&r);

    run(BASE "ncpus = 1 min_queue = 1d max_wus_in_progress = 1", &r);
    for (size_t i = 0; i < r.nsamples; i++)
        assert_true(r.samples[i].in_flight <= 300);
    check_books(&r);
    vs_pop_result_cleanup(&r);
}

/* Part-time hosts and a deadline close to the job's length: the deadline
 * rule refuses jobs; seed 000's EDF check, when on, refuses more. */
static void test_edf_check(void **state)
{
    (void)state;
    const char *t = "hosts = 300 batch_size = 3000 job_hours = 6 delay_bound = 20h\n"
                    "on_frac = uniform(.3, 1) ncpus = 2 min_queue = .5d duration = 20\n";
    struct vs_pop_result off, on;
    run(t, &off);
    char text[512];
    snprintf(text, sizeof(text), "%s server_edf_check = true", t);
    run(text, &on);
    check_books(&off);
    check_books(&on);
    assert_int_equal(off.refused_workload, 0);
    assert_true(off.refused_deadline > 0);
    /* The EDF check sees the whole queue, so it refuses more, and fewer of
     * the results sent miss their deadline. */
    assert_true(on.refused_deadline + on.refused_workload > off.refused_deadline);
    assert_true(on.deadline_misses * 2 < off.deadline_misses);
    vs_pop_result_cleanup(&off);
    vs_pop_result_cleanup(&on);
}

/* The full host model (model = full: each host runs src/policy/client
 * through src/sim's host simulator): determinism, the books of every result
 * sent, churn, and behaviour only the real client policy has (its EDF
 * meeting deadlines the lighter model misses). */

#define SMALL                                                                                      \
    "model = full hosts = 80 batch_size = 400 job_hours = 3 delay_bound = 2d duration = 30\n"

static void test_parse_model(void **state)
{
    (void)state;
    struct vs_pop_scenario s;
    struct vs_scn_error e;
    assert_int_equal(parse("hosts = 5", &s, &e), 0);
    assert_int_equal(s.model, VS_POP_LIGHT);
    assert_int_equal(parse("model = full client_policy = wrr", &s, &e), 0);
    assert_int_equal(s.model, VS_POP_FULL);
    assert_string_equal(vs_pop_models[s.model], "full");
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

/* Same seed, same bytes (figures and timeline), with everything that
 * draws: churn, wrong answers, a quorum, shares below 1, the EDF check. */
static void test_full_deterministic(void **state)
{
    (void)state;
    const char *t = SMALL "lifetime = 4 error_rate = .05 min_quorum = 2 target_nresults = 2\n"
                          "share = uniform(.3, 1) server_edf_check = true";
    char *a = json_of(t, 3), *b = json_of(t, 3), *c = json_of(t, 4);
    assert_non_null(strstr(a, "\"results_sent\""));
    assert_string_equal(a, b);
    assert_true(strcmp(a, c) != 0);
    assert_non_null(strstr(a, "\"full (fair)\""));
    vs_free(a); /* open_memstream buffers: vs_free is free() */
    vs_free(b);
    vs_free(c);
}

static void test_full_books(void **state)
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
                    "batch_size = 100 job_hours = 10 delay_bound = 24h min_queue = 0.05d\n"
                    "extra_queue = 0.1d duration = 20\n";
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
                    "batch_size = 40 job_hours = 10 delay_bound = 16h min_queue = 0.05d\n"
                    "extra_queue = 0.1d duration = 4\n";
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

/* Locality scheduling (seed 001) through the server's own pass: two
 * hosts, two files of 50 workunits, two results each, every workunit made
 * one per file in turn. Each host downloads each file once: the lower
 * bound exactly, and the server tells them to delete the files once no
 * work is left for them. Without locality the same work is far dearer on
 * a bigger population. */
#define LOC                                                                                        \
    "on_frac = 1 active_frac = 1 ncpus = 4 disk_gb = 1000 job_hours = 2 "                          \
    "min_quorum = 2 target_nresults = 2 file_mb = 100 wus_per_file = 50 duration = 60 "

static void test_locality_bound(void **state)
{
    (void)state;
    struct vs_pop_result r;
    run(LOC "hosts = 2 batch_size = 100 locality = true", &r);
    check_books(&r);
    assert_int_equal(r.wus_valid, 100);
    assert_int_equal(r.files, 2);
    assert_int_equal(r.file_downloads, 4);
    assert_true(fabs(r.bytes_vs_bound - 1.0) < 1e-9);
    assert_true(r.loc_deletes >= 2 && r.loc_deletes <= 4);
    vs_pop_result_cleanup(&r);

    /* 300 hosts, 60 files: each file's 100 results go to a few hosts with
     * locality, to nearly every host that runs one without it. */
    struct vs_pop_result loc, plain, grouped;
    run(LOC "hosts = 300 batch_size = 3000 locality = true", &loc);
    run(LOC "hosts = 300 batch_size = 3000 locality = false", &plain);
    run(LOC "hosts = 300 batch_size = 3000 file_order = grouped", &grouped);
    check_books(&loc);
    check_books(&plain);
    assert_int_equal(loc.wus_valid, 3000);
    assert_int_equal(plain.wus_valid, 3000);
    assert_true(loc.file_downloads >= 120);
    assert_true(loc.bytes_vs_bound < 6);
    assert_true(plain.bytes_vs_bound > 4 * loc.bytes_vs_bound);
    assert_int_equal(plain.loc_deletes, 0);
    /* Grouped creation gives plain scheduling some locality by accident. */
    assert_true(grouped.bytes_vs_bound < plain.bytes_vs_bound);
    vs_pop_result_cleanup(&loc);
    vs_pop_result_cleanup(&plain);
    vs_pop_result_cleanup(&grouped);
}

/* The disk rule sees the files: a host with less room than one file gets
 * nothing; the same host once it has room gets work. Deterministic with
 * locality, under both host models. */
static void test_locality_disk_and_determinism(void **state)
{
    (void)state;
    struct vs_pop_result r;
    run(LOC "hosts = 20 batch_size = 200 locality = true disk_gb = 0.05 duration = 2", &r);
    assert_int_equal(r.sent, 0);
    assert_true(r.work_requests > 0);
    vs_pop_result_cleanup(&r);
    run(LOC "hosts = 20 batch_size = 200 locality = true disk_gb = 0.5 duration = 2", &r);
    assert_true(r.sent > 0);
    vs_pop_result_cleanup(&r);

    const char *t = LOC "hosts = 200 batch_size = 2000 locality = true lifetime = 5 "
                        "on_frac = beta(4, 1.5)";
    char *a = json_of(t, 3), *b = json_of(t, 3);
    assert_string_equal(a, b);
    assert_non_null(strstr(a, "\"bytes_vs_bound\""));
    vs_free(a);
    vs_free(b);
    char full[512];
    snprintf(full, sizeof(full), "%s model = full duration = 10", t);
    a = json_of(full, 3);
    b = json_of(full, 3);
    assert_string_equal(a, b);
    vs_free(a);
    vs_free(b);
    /* Without files the figures are not shown. */
    a = json_of(BASE, 1);
    assert_null(strstr(a, "bytes_vs_bound"));
    vs_free(a);
}

/*
 * The shared scan rule (vs_sp_scan_stops) with big files and plain
 * scheduling: hosts with room for three 100 MB files, a batch made one
 * workunit per file in turn. A job of a file the host lacks is refused for
 * disk, but the next of a file it holds fits: popsim's disk need varies per
 * job, so the scan skips the refused one and goes on, as the server does.
 * When a disk refusal stopped the scan (popsim's old "request-wide" list),
 * a host took work only when the first unsent job happened to be of a file
 * it held, and files were fetched again and again: 3,654 downloads of the
 * 80 files (the skip: 635), and a 67-hour makespan (40).
 */
static void test_disk_refusal_skips_one_job(void **state)
{
    (void)state;
    struct vs_pop_result r;
    run("hosts = 200 batch_size = 4000 job_hours = 4 delay_bound = 7d file_mb = 100 "
        "wus_per_file = 50 disk_gb = 0.35 ncpus = 4 on_frac = 1 active_frac = 1 duration = 10",
        &r);
    check_books(&r);
    assert_int_equal(r.wus_open, 0);
    assert_int_equal(r.files, 80);
    assert_true(r.file_downloads < 1500);
    assert_true(r.makespan < 55 * 3600.0);
    vs_pop_result_cleanup(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_deprecated_names),
        cmocka_unit_test(test_books_and_quorum),
        cmocka_unit_test(test_churn),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_server_rules_apply),
        cmocka_unit_test(test_edf_check),
        cmocka_unit_test(test_parse_model),
        cmocka_unit_test(test_full_deterministic),
        cmocka_unit_test(test_full_books),
        cmocka_unit_test(test_client_edf),
        cmocka_unit_test(test_server_sees_full_queue),
        cmocka_unit_test(test_locality_bound),
        cmocka_unit_test(test_locality_disk_and_determinism),
        cmocka_unit_test(test_disk_refusal_skips_one_job),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
