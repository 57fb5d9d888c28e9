/*
 * Debts (seeds 000 and 002, identical in both): how much wall CPU time each
 * project is owed relative to the others. Short-term debt drives the CPU
 * scheduler, long-term debt the work fetch.
 */
#include <math.h>

#include "internal.h"
#include "volsched/alloc.h"
#include "volsched/client_policy.h"

/*
 * Rule A/R/F/W over the set S (projects whose bit `in_set` is set):
 * A = wall CPU time used by S, R = sum of their shares, and each P in S gets
 * debt += A * share/R - its own wall CPU time.
 */
static void adjust(struct vs_cstate *st, const unsigned *flags, unsigned in_set, bool is_std)
{
    double a = 0, rsum = 0;
    for (size_t p = 0; p < st->nprojects; p++) {
        if (!(flags[p] & in_set) || st->projects[p].non_cpu_intensive)
            continue;
        a += st->projects[p].wall_cpu_period;
        rsum += st->projects[p].resource_share;
    }
    if (rsum <= 0)
        return;
    for (size_t p = 0; p < st->nprojects; p++) {
        struct vs_cproject *pr = &st->projects[p];
        if (!(flags[p] & in_set) || pr->non_cpu_intensive)
            continue;
        double w = a * (pr->resource_share / rsum);
        if (is_std)
            pr->std += w - pr->wall_cpu_period;
        else
            pr->ltd += w - pr->wall_cpu_period;
    }
}

void vs_cdebt__update(struct vs_cstate *st, const unsigned *flags)
{
    size_t np = st->nprojects;
    /* Short-term: over runnable projects; min 0, max VS_CDEBT_STD_MAX. */
    adjust(st, flags, VS_CPS_RUNNABLE, true);
    double min_std = INFINITY;
    for (size_t p = 0; p < np; p++) {
        if ((flags[p] & VS_CPS_RUNNABLE) && !st->projects[p].non_cpu_intensive &&
            st->projects[p].std < min_std)
            min_std = st->projects[p].std;
    }
    for (size_t p = 0; p < np; p++) {
        struct vs_cproject *pr = &st->projects[p];
        if (!(flags[p] & VS_CPS_RUNNABLE) || pr->non_cpu_intensive) {
            /* Not in the set: owed nothing now, so it re-enters at the
             * minimum when it becomes runnable again. */
            pr->std = 0;
            continue;
        }
        pr->std -= min_std;
        if (pr->std > VS_CDEBT_STD_MAX)
            pr->std = VS_CDEBT_STD_MAX;
    }

    /* Long-term: over potentially runnable projects; mean 0 over all
     * (CPU-intensive) projects. */
    adjust(st, flags, VS_CPS_POT_RUNNABLE, false);
    double sum = 0;
    size_t n = 0;
    for (size_t p = 0; p < np; p++) {
        if (st->projects[p].non_cpu_intensive)
            continue;
        sum += st->projects[p].ltd;
        n++;
    }
    double mean = n ? sum / (double)n : 0;
    for (size_t p = 0; p < np; p++) {
        struct vs_cproject *pr = &st->projects[p];
        if (pr->non_cpu_intensive)
            pr->ltd = 0;
        else
            pr->ltd -= mean;
        pr->wall_cpu_period = 0;
    }
}

int vs_cdebt_update(enum vs_cpolicy policy, struct vs_cstate *st)
{
    if ((int)policy < 0 || (int)policy >= VS_CPOLICY_COUNT || vs_cstate_validate(st) != 0)
        return VS_EINVAL;
    size_t np = st->nprojects;
    if (np == 0)
        return 0;
    /* Called once per scheduling step, outside any inner loop: a heap
     * array is fine when the stack one is too small. */
    unsigned flags_small[64];
    unsigned *flags = np <= 64 ? flags_small : vs_xmalloc(np * sizeof(*flags));
    vs_cproject_states(st, flags);
    vs_cdebt__update(st, flags);
    if (flags != flags_small)
        vs_free(flags);
    return 0;
}

void vs_cpolicy_account(struct vs_cstate *st, double dt)
{
    if (!(dt > 0))
        return;
    for (size_t r = 0; r < st->nresults; r++) {
        struct vs_cresult *res = &st->results[r];
        if (res->task != VS_CTASK_RUNNING || res->done)
            continue;
        res->wall_since_checkpoint += dt;
        st->projects[res->project].wall_cpu_period += dt;
        res->remaining -= dt * st->host.cpu_efficiency;
        if (res->remaining < 0)
            res->remaining = 0;
    }
}
