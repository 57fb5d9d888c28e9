/*
 * Population simulator speed (the target: at least 10,000 simulated
 * host-days per wall second per core with the lighter host model, so a
 * million hosts for 30 days run in under an hour). A busy project: every
 * day a batch with about as many jobs as the population computes in a day,
 * so hosts are never starved (a starved host costs almost nothing, which
 * would flatter the figure). Prints host-days per second, events behind
 * it (RPCs and results per host-day, which do not depend on the machine),
 * the process's peak RSS, and the ratio to the target. The full host model
 * (model = full) runs beside it on the same populations, and both again on
 * a locality-scheduled workload (study 2's shape). The simulator is
 * single-threaded: one core.
 *
 *     build/release/bench_popsim [--full]   (--full adds 1,000,000 hosts x 30 days)
 */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "volsched/popsim.h"

#define TARGET 10000.0

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static long peak_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024;
}

/* loc: an Einstein-like workload sent by locality scheduling (study 2's
 * shape: 100 MB files of 50 workunits, quorum 2 of 2). */
static int run(long hosts, int days, bool edf, bool full, bool loc)
{
    char text[1024];
    /* The default population computes about 19 four-hour jobs per host-day:
     * a batch of 20 per host each day keeps it busy. */
    snprintf(text, sizeof(text),
             "hosts = %ld\nbatches = %d\nbatch_size = %ld\nbatch_interval = 1d\n"
             "job_hours = 4\ndelay_bound = 4d\nlifetime = 60\nerror_rate = 0.01\n"
             "min_quorum = %d\ntarget_nresults = %d\nduration = %d\nserver_edf_check = %s\n"
             "model = %s\n%s",
             hosts, days, hosts * (loc ? 10 : 20), loc ? 2 : 1, loc ? 2 : 1, days,
             edf ? "true" : "false", full ? "full" : "light",
             loc ? "file_mb = 100\nwus_per_file = 50\nlocality = true\n" : "");
    struct vs_pop_scenario s;
    struct vs_scn_error e;
    if (vs_pop_scenario_parse(text, strlen(text), &s, &e) != 0) {
        fprintf(stderr, "bench_popsim: scenario: %d:%d %s\n", e.line, e.col, e.msg);
        return 1;
    }
    struct vs_pop_result r;
    double t0 = now_s(), c0 = cpu_s();
    if (vs_popsim_run(&s, NULL, &r) != 0) {
        fprintf(stderr, "bench_popsim: run failed\n");
        return 1;
    }
    double wall = now_s() - t0, cpu = cpu_s() - c0;
    double hd_s = r.host_days / cpu;
    printf("%-5s %9ld hosts x %2d days  EDF %-3s%s  %9.0f host-days/s per core (wall %6.1f s)  "
           "%5.2f RPCs and %5.2f results per host-day  peak RSS %5ld MB  %.2fx target\n",
           full ? "full" : "light", hosts, days, edf ? "on" : "off", loc ? "  locality" : "", hd_s,
           wall, (double)r.rpcs / r.host_days, (double)r.sent / r.host_days, peak_rss_mb(),
           hd_s / TARGET);
    fflush(stdout);
    vs_pop_result_cleanup(&r);
    return 0;
}

int main(int argc, char **argv)
{
    bool full = argc > 1 && strcmp(argv[1], "--full") == 0;
    if (argc > 1 && !full) {
        fprintf(stderr, "usage: bench_popsim [--full]\n");
        return 2;
    }
    /* The full host model (each host src/policy/client through src/sim)
     * beside the lighter one, on the same population; the target is the
     * lighter model's. */
    int rc = run(1000, 30, false, false, false);
    rc |= run(1000, 30, false, true, false);
    rc |= run(10000, 30, false, false, false);
    rc |= run(10000, 30, false, true, false);
    rc |= run(10000, 30, true, false, false);
    rc |= run(10000, 30, true, true, false);
    rc |= run(10000, 30, false, false, true);
    rc |= run(10000, 30, false, true, true);
    rc |= run(100000, 30, false, false, false);
    if (full)
        rc |= run(1000000, 30, false, false, false);
    return rc;
}
