/*
 * Simulator speed: simulated host-days per wall-clock second, on the seed
 * scenarios and on a 20-project, 10,000-job scenario, under each policy;
 * then fair's speed against shortfall's on seed 000's scenario 1 (the target:
 * at least 5,000 host-days/s) and the CPU time of BOINC's emulator
 * scenarios (examples/scenarios/emulator) against the emulator's own (its
 * column in ../shared/docs/boinc-emulator-figures.md; the target is 1%).
 * One core (the simulator is single-threaded); each figure is the best of a
 * few timed repetitions after one untimed warm-up run, so a figure measures
 * the simulator rather than cold caches or a neighbour's burst. Beside the
 * speed, each row prints what a simulated day holds (jobs and scheduler RPCs
 * per day), which does not depend on the machine and explains why one
 * scenario is slower than another.
 *
 *     build/release/bench_sim [--quick]   (--quick: 2 timed runs instead of 5)
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/scenario.h"
#include "volsched/sim.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* 20 projects of varied shapes, 500 jobs each: 10,000 jobs in all. */
static char *big_scenario(void)
{
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    int rc = 0;
    for (int i = 0; i < 20 && rc == 0; i++) {
        double c = 0.25 + 0.25 * (i % 8); /* 0.25 .. 2 CPU hours */
        double d = 24.0 * (1 + i % 5);    /* 1 .. 5 days */
        double r = 1 + (i % 4);           /* shares 1 .. 4 */
        rc = vs_buf_printf(&b, "P%02d(%g, %g, %g, jobs = 500, job_spread = 0.3)\n", i, c, d, r);
    }
    if (rc == 0)
        rc = vs_buf_puts(&b, "NCPUS = 8\nmin_queue = 0.5\nduration = 60\n");
    if (rc) {
        vs_buf_cleanup(&b);
        return NULL;
    }
    return vs_buf_take(&b, NULL);
}

/* Runs the scenario once untimed, then reps timed times; prints the best
 * and returns it in *speed (host-days/s) when speed is not NULL. */
static int bench_one(const char *label, const struct vs_scenario *s, const char *policy, int reps,
                     double *speed)
{
    double best = 1e30;
    struct vs_sim_result r = {0};
    for (int k = -1; k < reps; k++) {
        struct vs_sim_options o = {.policy = policy};
        double t0 = now_s();
        int rc = vs_sim_run(s, &o, &r, NULL);
        double dt = now_s() - t0;
        if (rc) {
            fprintf(stderr, "%s %s: %s\n", label, policy, vs_strerror(rc));
            return 1;
        }
        if (k >= 0 && dt < best)
            best = dt;
        if (k + 1 < reps)
            vs_sim_result_cleanup(&r);
    }
    double days = r.duration / 86400;
    double jobs = (double)r.jobs_completed;
    printf("%-22s %-10s %5.0f %7lld %8.1f %8.1f %11.0f %9.0f\n", label, policy, days,
           (long long)r.jobs_completed, jobs / days, (double)r.rpcs / days, days / best,
           jobs / best);
    if (speed)
        *speed = days / best;
    vs_sim_result_cleanup(&r);
    return 0;
}

/* BOINC's emulator on its scenarios: name and its CPU seconds (the
 * e_projects rows give 0.7-1.6 s for the six; the least is taken, which
 * makes our ratio the harder one). */
static const struct {
    const char *name;
    double emu_cpu_s;
} emulator_rows[] = {
    {"a_30d", 1.6},
    {"a_120d", 8.7},
    {"a_120d_p2first", 9.6},
    {"b_20d", 1.0},
    {"b_20d_smallbuf", 1.0},
    {"c_stress_20d", 0.9},
    {"c_stress_20d_avail", 0.7},
    {"d_fetch_buf10d", 110},
    {"e_projects_2", 0.7},
    {"e_projects_5", 0.7},
    {"e_projects_10", 0.7},
    {"e_projects_20", 0.7},
    {"e_projects_40", 0.7},
    {"e_projects_80", 0.7},
};

/* Each emulator scenario once under the default policy (best of reps),
 * summed, against the emulator's CPU time. */
static int bench_emulator(int reps)
{
    double ours = 0, theirs = 0;
    for (size_t i = 0; i < sizeof(emulator_rows) / sizeof(emulator_rows[0]); i++) {
        char path[512];
        struct vs_scenario s;
        struct vs_scn_error e;
        snprintf(path, sizeof(path), "%s/examples/scenarios/emulator/%s.scn", VS_SOURCE_DIR,
                 emulator_rows[i].name);
        if (vs_scenario_load(path, &s, &e) != 0) {
            fprintf(stderr, "%s:%d:%d: %s\n", path, e.line, e.col, e.msg);
            return 1;
        }
        double best = 1e30;
        for (int k = 0; k < reps; k++) {
            struct vs_sim_options o = {.policy = NULL};
            struct vs_sim_result r = {0};
            double t0 = now_s();
            int rc = vs_sim_run(&s, &o, &r, NULL);
            double dt = now_s() - t0;
            vs_sim_result_cleanup(&r);
            if (rc) {
                fprintf(stderr, "%s: %s\n", path, vs_strerror(rc));
                vs_scenario_cleanup(&s);
                return 1;
            }
            if (dt < best)
                best = dt;
        }
        vs_scenario_cleanup(&s);
        ours += best;
        theirs += emulator_rows[i].emu_cpu_s;
    }
    printf("emulator scenarios (%zu, default policy): %.3f s in all, %.2f%% of the emulator's "
           "%.1f s (target < 1%%)\n",
           sizeof(emulator_rows) / sizeof(emulator_rows[0]), ours, 100 * ours / theirs, theirs);
    return 0;
}

int main(int argc, char **argv)
{
    bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    int reps = quick ? 2 : 5;
    static const char *const files[] = {"seed000_scenario1.scn", "seed002_typical.scn",
                                        "seed000_example.scn", "einstein_resume.scn",
                                        "tight_deadline.scn"};
    static const char *const policies[] = {"fair", "shortfall", "debt", "wrr"};
    enum { NPOL = sizeof(policies) / sizeof(policies[0]) };
    double s1[NPOL] = {0}; /* seed 000 scenario 1, host-days/s */
    int status = 0;
    printf("bench_sim: one core (single-threaded), each speed the best of %d timed runs after "
           "one warm-up run\n",
           reps);
    printf("%-22s %-10s %5s %7s %8s %8s %11s %9s\n", "scenario", "policy", "days", "jobs",
           "jobs/day", "RPCs/day", "host-days/s", "jobs/s");
    for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
        char path[512];
        struct vs_scenario s;
        struct vs_scn_error e;
        snprintf(path, sizeof(path), "%s/examples/scenarios/%s", VS_SOURCE_DIR, files[f]);
        if (vs_scenario_load(path, &s, &e) != 0) {
            fprintf(stderr, "%s:%d:%d: %s\n", path, e.line, e.col, e.msg);
            return 1;
        }
        /* Long enough to time. */
        s.duration = 100 * 86400.0;
        for (size_t p = 0; p < NPOL; p++)
            status |= bench_one(files[f], &s, policies[p], reps, f == 0 ? &s1[p] : NULL);
        vs_scenario_cleanup(&s);
    }
    char *text = big_scenario();
    struct vs_scenario s;
    struct vs_scn_error e;
    if (!text || vs_scenario_parse(text, strlen(text), &s, &e) != 0) {
        fprintf(stderr, "big scenario: %d:%d: %s\n", e.line, e.col, e.msg);
        vs_free(text);
        return 1;
    }
    for (size_t p = 0; p < NPOL; p++)
        status |= bench_one("20 projects, 10k jobs", &s, policies[p], reps, NULL);
    vs_scenario_cleanup(&s);
    vs_free(text);
    printf("seed000_scenario1: fair %.0f host-days/s (target >= 5000), %.2f x shortfall's %.0f\n",
           s1[0], s1[1] > 0 ? s1[0] / s1[1] : 0, s1[1]);
    status |= bench_emulator(reps);
    return status;
}
