/*
 * fair's deadline mode (docs/client-policies.md): when it is entered, and what
 * it does with the jobs that are lost anyway.
 *
 * - No deadline mode when slack is ample. The round-robin simulation flags
 *   a result that would miss at its project's share, however far off the
 *   deadline: BOINC's clients then run "high priority" for days and the
 *   shares suffer. fair enters deadline mode for it only when a list
 *   schedule in deadline order of every runnable result that can still
 *   meet its deadline, on CPUs that all start two scheduling periods from
 *   now, misses one. If it does not, waiting costs nothing (what runs
 *   meanwhile only shortens the queue; a job started now keeps its CPU for
 *   at most a period, and the scheduler asks again before the second).
 *   (With one period of room instead of two, a 20-hour job whose project
 *   the debt order did not run missed by a minute.)
 * - Deadline mode when a job's slack is short, whatever the simulation
 *   says: under a period, or under a quarter of the job's delay bound when
 *   that is less (a one-hour deadline does not put every job in deadline
 *   mode). The simulation gives a small-share project its share, which the
 *   debt order need not give it.
 * - The hopeless (a result that cannot meet its deadline even if it ran
 *   alone from now) are left out of that test, and in deadline mode they
 *   come after every result that can still make it, shortest remaining
 *   first (cpu_sched.c's edf): losing them is certain, and the short ones
 *   free the queue soonest. (An unstarted one is never started at all:
 *   vs_cpolicy__abandoned.)
 */
#include <math.h>

#include "internal.h"
#include "volsched/client_policy.h"

/* Whether result res may enter fair's deadline tests: it runs on a CPU and
 * can still meet its deadline (and is not oversized, internal.h). */
static bool counted(const struct vs_cstate *st, const struct vs_cresult *res, double speed,
                    double share_sum)
{
    return vs_cpolicy__runnable(st, res) && !st->projects[res->project].non_cpu_intensive &&
           !vs_cpolicy__hopeless(st, res, speed) &&
           !vs_cpolicy__oversized(VS_CPOLICY_FAIR, st, res, speed, share_sum);
}

bool vs_csched__fair_urgent(const struct vs_cstate *st, double speed, double share_sum)
{
    double period = st->host.sched_period;
    for (size_t r = 0; r < st->nresults; r++) {
        const struct vs_cresult *res = &st->results[r];
        double slack = res->deadline - st->now - res->remaining / speed;
        double lim = 0.25 * (res->deadline - res->received);
        if (lim > period)
            lim = period;
        if (slack < lim && counted(st, res, speed, share_sum))
            return true;
    }
    return false;
}

bool vs_csched__fair_slack_ample(const struct vs_cstate *st, struct vs_cpolicy_wsd *d, double speed,
                                 double share_sum)
{
    struct vs_cpkey *keys = d->keys;
    size_t n = 0;
    for (size_t r = 0; r < st->nresults; r++) {
        const struct vs_cresult *res = &st->results[r];
        if (!counted(st, res, speed, share_sum))
            continue;
        keys[n++] = (struct vs_cpkey){.group = 0, .idx = (uint32_t)r, .key = res->deadline};
    }
    vs_cpolicy__sort(keys, d->keys2, n);
    size_t ncpus = (size_t)st->host.ncpus;
    double *cpu = vs_cpolicy__cpu_scratch(d, ncpus);
    for (size_t c = 0; c < ncpus; c++)
        cpu[c] = st->now + 2 * st->host.sched_period;
    for (size_t i = 0; i < n; i++) {
        size_t best = 0;
        for (size_t c = 1; c < ncpus; c++)
            if (cpu[c] < cpu[best])
                best = c;
        cpu[best] += st->results[keys[i].idx].remaining / speed;
        if (cpu[best] > keys[i].key)
            return false;
    }
    return true;
}
