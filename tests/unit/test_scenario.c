/* Unit tests of the scenario parser (src/sim/scenario.c). */
#include "vs_test.h"

#include <stdio.h>
#include <string.h>

#include "volsched/scenario.h"

static int parse(const char *text, struct vs_scenario *s, struct vs_scn_error *e)
{
    return vs_scenario_parse(text, strlen(text), s, e);
}

static void test_seed002_one_line(void **state)
{
    (void)state;
    struct vs_scenario s;
    struct vs_scn_error e;
    assert_int_equal(parse("(P1(1000, 2000, .5), P2(1, 10, .5), NCPUS=4)", &s, &e), 0);
    assert_int_equal(s.nprojects, 2);
    assert_string_equal(s.projects[0].name, "P1");
    assert_true(s.projects[0].cpu_time == 1000 * 3600.0);
    assert_true(s.projects[0].delay_bound == 2000 * 3600.0);
    assert_true(s.projects[0].share == 0.5);
    assert_string_equal(s.projects[1].name, "P2");
    assert_true(s.projects[1].cpu_time == 3600.0);
    assert_true(s.projects[1].delay_bound == 36000.0);
    assert_int_equal(s.ncpus, 4);
    /* Defaults. */
    assert_false(s.leave_in_memory);
    assert_true(s.sched_period == 3600);
    assert_true(s.projects[1].checkpoint_period == 60);
    vs_scenario_cleanup(&s);
}

static void test_seed000_several_lines(void **state)
{
    (void)state;
    struct vs_scenario s;
    struct vs_scn_error e;
    const char *text = "P1(0.1, 1, .5)\nP2(1, 24, .25)\nP3(1, 24, .25)\nNCPUS = 2\n"
                       "leave_in_memory = false\ncpu_scheduling_period = 1\n";
    assert_int_equal(parse(text, &s, &e), 0);
    assert_int_equal(s.nprojects, 3);
    assert_true(s.projects[0].cpu_time == 360.0);
    assert_true(s.projects[0].delay_bound == 3600.0);
    assert_int_equal(s.ncpus, 2);
    assert_false(s.leave_in_memory);
    assert_true(s.sched_period == 3600);
    assert_int_equal(vs_scenario_find(&s, "P3"), 2);
    assert_int_equal(vs_scenario_find(&s, "P4"), -1);
    vs_scenario_cleanup(&s);

    /* The same on one line, without commas. */
    const char *one = "P1(0.1, 1, .5) P2(1, 24, .25) P3(1, 24, .25) NCPUS = 2 "
                      "leave_in_memory = true cpu_scheduling_period = 1";
    assert_int_equal(parse(one, &s, &e), 0);
    assert_int_equal(s.nprojects, 3);
    assert_true(s.leave_in_memory);
    vs_scenario_cleanup(&s);
}

static void test_extensions(void **state)
{
    (void)state;
    struct vs_scenario s;
    struct vs_scn_error e;
    const char *text = "# Einstein-like\n"
                       "P1(0.1, 1, .5)   # short tasks\n"
                       "P2(1, 24, .25, resume_cost = 5m, checkpoint_period=20m, job_spread=0.2)\n"
                       "P3(2h, 1d, 1, server_avail = 0.9, server_outage = 30m, jobs = 12)\n"
                       "NET(1, 24, 1, non_cpu_intensive = yes)\n"
                       "resume_cost = 90s  # default for projects that set none\n"
                       "on_frac = 0.8 active_frac = .5 duration = 3 seed = 42 min_queue = 2\n"
                       "avail_cycle = 12 server_edf_check = on\n";
    assert_int_equal(parse(text, &s, &e), 0);
    assert_int_equal(s.nprojects, 4);
    assert_true(s.projects[0].resume_cost == 90);
    assert_true(s.projects[1].resume_cost == 300);
    assert_true(s.projects[1].checkpoint_period == 1200);
    assert_true(s.projects[1].spread == 0.2);
    assert_true(s.projects[2].cpu_time == 7200);
    assert_true(s.projects[2].delay_bound == 86400);
    assert_true(s.projects[2].server_avail == 0.9);
    assert_true(s.projects[2].server_outage == 1800);
    assert_int_equal(s.projects[2].jobs, 12);
    assert_true(s.projects[3].non_cpu_intensive);
    assert_false(s.projects[2].non_cpu_intensive);
    assert_true(s.on_frac == 0.8);
    assert_true(s.active_frac == 0.5);
    assert_true(s.duration == 3 * 86400.0);
    assert_int_equal(s.seed, 42);
    assert_true(s.min_queue == 7200);
    assert_true(s.avail_cycle == 12 * 3600.0);
    assert_true(s.server_deadline_check);
    assert_int_equal(e.nnotes, 0); /* no deprecated names, no notes */

    struct vs_scenario c;
    vs_scenario_copy(&c, &s);
    vs_scenario_cleanup(&s);
    assert_string_equal(c.projects[3].name, "NET");
    vs_scenario_cleanup(&c);
}

/* The volunteer notation: what volunteers run. */
static void test_volunteer_options(void **state)
{
    (void)state;
    struct vs_scenario s;
    struct vs_scn_error e;
    const char *text = "MT(2, 48, 1, ncpus = 2, max_concurrent = 4)\n"
                       "GPU(1, 24, 1, ncpus = 0.2, est = 10, nowork = 2-3.5)\n"
                       "GAP(1, 24, 1, nowork = 36h - 4d, min_rpc_delay = 2h)\n"
                       "BACKUP(1, 24, 0)\n"
                       "NCPUS = 16 extra_queue = 1d cpu_eff = 0.6 duration = 5\n";
    assert_int_equal(parse(text, &s, &e), 0);
    assert_true(s.projects[0].ncpus == 2);
    assert_int_equal(s.projects[0].max_concurrent, 4);
    assert_true(s.projects[0].est == 1);
    assert_true(s.projects[1].ncpus == 0.2);
    assert_true(s.projects[1].est == 10);
    assert_true(s.projects[1].nowork_from == 2 * 86400.0);
    assert_true(s.projects[1].nowork_to == 3.5 * 86400);
    assert_true(s.projects[2].nowork_from == 36 * 3600.0);
    assert_true(s.projects[2].nowork_to == 4 * 86400.0);
    assert_true(s.projects[2].min_rpc_delay == 7200);
    assert_true(s.projects[3].share == 0);
    assert_true(s.projects[3].ncpus == 1);
    assert_true(s.projects[3].nowork_to == 0);
    assert_true(s.extra_queue == 86400);
    assert_true(s.cpu_eff == 0.6);
    vs_scenario_cleanup(&s);
    /* A top-level default reaches every project (not ncpus: names are
     * case-insensitive, so at the top level that is NCPUS). */
    assert_int_equal(
        parse("P1(1, 2, 1) P2(1, 2, 1, max_concurrent = 1) max_concurrent = 3", &s, &e), 0);
    assert_int_equal(s.projects[0].max_concurrent, 3);
    assert_int_equal(s.projects[1].max_concurrent, 1);
    vs_scenario_cleanup(&s);
    assert_int_equal(parse("P1(1, 2, 1, ncpus = 2) ncpus = 4", &s, &e), 0);
    assert_int_equal(s.ncpus, 4);
    vs_scenario_cleanup(&s);
}

/* The old spellings still read as before, each leaving one note (at its
 * first use) that names the new name; they and the new names are one
 * option, so a project's own value wins over a top-level default whichever
 * spelling each uses. */
static void test_deprecated_names(void **state)
{
    (void)state;
    struct vs_scenario s, t;
    struct vs_scn_error e;
    const char *old = "P1(1, 24, 1, spread = 0.3)\n"
                      "P2(1, 24, 1, job_spread = 0.4)\n"
                      "P3(1, 24, 1)\n"
                      "spread = 0.1 server_deadline_check = yes\n"
                      "P4(1, 24, 1, spread = 0.2) server_deadline_check = true\n";
    assert_int_equal(parse(old, &s, &e), 0);
    assert_true(s.projects[0].spread == 0.3);
    assert_true(s.projects[1].spread == 0.4);
    assert_true(s.projects[2].spread == 0.1);
    assert_true(s.projects[3].spread == 0.2);
    assert_true(s.server_deadline_check);
    assert_int_equal(e.nnotes, 2);
    assert_int_equal(e.notes[0].line, 1);
    assert_int_equal(e.notes[0].col, 14);
    assert_string_equal(e.notes[0].old_name, "spread");
    assert_string_equal(e.notes[0].new_name, "job_spread");
    assert_int_equal(e.notes[1].line, 4);
    assert_int_equal(e.notes[1].col, 14);
    assert_string_equal(e.notes[1].old_name, "server_deadline_check");
    assert_string_equal(e.notes[1].new_name, "server_edf_check");
    vs_scenario_cleanup(&s);

    /* A top-level default in either spelling does not override a project's
     * own value in the other; the last top-level value wins. */
    assert_int_equal(parse("P1(1, 24, 1, spread = 0.3) P2(1, 24, 1) job_spread = 0.1\n"
                           "P3(1, 24, 1, job_spread = 0.5) spread = 0.2",
                           &s, &e),
                     0);
    assert_true(s.projects[0].spread == 0.3);
    assert_true(s.projects[1].spread == 0.2);
    assert_true(s.projects[2].spread == 0.5);
    assert_int_equal(e.nnotes, 1); /* spread, once */
    assert_int_equal(e.notes[0].col, 14);
    vs_scenario_cleanup(&s);

    /* The names now, in the same places: the same scenario, no notes. */
    const char *now = "P1(1, 24, 1, job_spread = 0.3)\n"
                      "P2(1, 24, 1, job_spread = 0.4)\n"
                      "P3(1, 24, 1)\n"
                      "job_spread = 0.1 server_edf_check = yes\n"
                      "P4(1, 24, 1, job_spread = 0.2) server_edf_check = true\n";
    assert_int_equal(parse(old, &s, &e), 0);
    assert_int_equal(parse(now, &t, &e), 0);
    assert_int_equal(e.nnotes, 0);
    assert_int_equal(s.nprojects, t.nprojects);
    for (size_t i = 0; i < s.nprojects; i++)
        assert_true(s.projects[i].spread == t.projects[i].spread);
    assert_true(s.server_deadline_check == t.server_deadline_check);
    vs_scenario_cleanup(&s);
    vs_scenario_cleanup(&t);

    /* An error after an old name keeps the note too. */
    assert_int_equal(parse("P1(1, 24, 1) server_deadline_check = maybe", &s, &e), VS_EPARSE);
    assert_int_equal(e.nnotes, 1);
    assert_non_null(strstr(e.msg, "server_deadline_check wants true or false, not 'maybe'"));
}

struct bad_case {
    const char *text;
    int line, col;
    const char *msg_part;
};

static void test_errors(void **state)
{
    (void)state;
    static const struct bad_case cases[] = {
        {"P1(1, 2)", 1, 8, "R (resource share)"},
        {"P1(1, 2, .5) NCPUS=0", 1, 20, "out of range"},
        {"P1(1, 2, .5)\n  bogus = 3", 2, 3, "unknown parameter 'bogus'"},
        {"P1(1, 2, .5)\nP1(2, 3, 1)", 2, 1, "listed twice"},
        {"(P1(1, 2, .5), NCPUS=4", 1, 1, "never closed"},
        {"P1(1, 2, .5))", 1, 13, "unmatched"},
        {"P1(1, x, .5)", 1, 7, "expected a number"},
        {"P1(1, 2, -1)", 1, 10, "cannot be negative"},
        {"P1(1, 2, 0) P2(1, 2, 0)", 1, 1, "every project has R = 0"},
        {"P1(1, 2, .5, ncpus = 4) NCPUS = 2", 1, 14, "more than NCPUS"},
        {"max_concurrent = 2\nP1(1, 2, .5, ncpus = 1.5)", 2, 14, "more than NCPUS"},
        {"P1(1, 2, .5, nowork = 5-12) duration = 10", 1, 14, "nowork ends after"},
        {"P1(1, 2, .5, nowork = 5-3)", 1, 23, "D1 must come before D2"},
        {"P1(1, 2, .5, nowork = 5)", 1, 24, "wants D1-D2"},
        {"P1(1, 2, .5, threads = 2)", 1, 14, "unknown project option 'threads'"},
        {"P1(1, 2, .5) cpu_eff = 0", 1, 24, "out of range"},
        {"P1(1, 2, .5, est = 0)", 1, 20, "greater than 0"},
        {"P1(1, 2, .5, wobble = 3)", 1, 14, "unknown project option"},
        {"P1(1, 2, .5) leave_in_memory = maybe", 1, 32, "true or false"},
        {"P1(1, 2, .5) min_queue = 3w", 1, 26, "unknown time unit"},
        {"P1(1, 2, .5) NCPUS 4", 1, 20, "expected '='"},
        {"NCPUS = 2 # no projects\n", 2, 1, "at least one project"},
        {"P1(1, 2, .5) $", 1, 14, "unexpected character"},
        {"P1(1 2, .5)", 1, 6, "expected ','"},
        {"P1(1, 2, .5) on_frac = 1.5", 1, 24, "between 0 and 1"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct vs_scenario s;
        struct vs_scn_error e;
        int rc = parse(cases[i].text, &s, &e);
        if (rc != VS_EPARSE || e.line != cases[i].line || e.col != cases[i].col ||
            !strstr(e.msg, cases[i].msg_part))
            print_error("case %zu '%s': rc %d at %d:%d '%s'\n", i, cases[i].text, rc, e.line, e.col,
                        e.msg);
        assert_int_equal(rc, VS_EPARSE);
        assert_int_equal(e.line, cases[i].line);
        assert_int_equal(e.col, cases[i].col);
        assert_non_null(strstr(e.msg, cases[i].msg_part));
    }
}

static void test_example_files(void **state)
{
    (void)state;
    static const char *const files[] = {"seed000_scenario1.scn", "seed000_example.scn",
                                        "seed002_typical.scn", "einstein_resume.scn"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char path[512];
        snprintf(path, sizeof(path), "%s/examples/scenarios/%s", VS_SOURCE_DIR, files[i]);
        struct vs_scenario s;
        struct vs_scn_error e;
        int rc = vs_scenario_load(path, &s, &e);
        if (rc)
            print_error("%s:%d:%d: %s\n", files[i], e.line, e.col, e.msg);
        assert_int_equal(rc, 0);
        assert_true(s.nprojects >= 2);
        assert_int_equal(e.nnotes, 0); /* the examples use the names of now */
        vs_scenario_cleanup(&s);
    }
    struct vs_scenario s;
    struct vs_scn_error e;
    assert_true(vs_scenario_load("/nonexistent/x.scn", &s, &e) < 0);
    assert_non_null(strstr(e.msg, "/nonexistent/x.scn"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed002_one_line),  cmocka_unit_test(test_seed000_several_lines),
        cmocka_unit_test(test_extensions),        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_volunteer_options), cmocka_unit_test(test_example_files),
        cmocka_unit_test(test_deprecated_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
