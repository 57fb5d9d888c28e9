/*
 * Debts (seeds 000 and 002, identical in both): how much wall CPU time each
 * project is owed relative to the others. Short-term debt drives the CPU
 * scheduler, long-term debt the work fetch.
 *
 * Rule A/R/F/W over a set S of (CPU-intensive) projects: A = wall CPU time
 * used by S, R = sum of their shares, and each P in S gets
 * debt += A * share/R - its own wall CPU time. Short-term debt applies it
 * over the runnable projects, long-term debt over the potentially runnable
 * ones. Both sets' sums (A, R) come from the pass that computes the project
 * states (vs_cpolicy__states_sums); the update below makes two passes (rule
 * F/W with the minimum and the sum the normalization needs; the
 * normalization). Every sum runs in project order, so the arithmetic is
 * exactly that of applying the rule set by set.
 */
#include <math.h>

#include "internal.h"
#include "volsched/alloc.h"
#include "volsched/client_policy.h"

bool vs_cdebt__update(struct vs_cstate *st, const unsigned *flags, const struct vs_cdebt_sums *sums)
{
    size_t np = st->nprojects;
    struct vs_cproject *pj = st->projects;
    const double a_std = sums->a_std, r_std = sums->r_std;
    const double a_ltd = sums->a_ltd, r_ltd = sums->r_ltd;

    /* Rule F/W, then the minimum short-term debt of the runnable projects
     * and the sum of the long-term debts of all CPU-intensive projects. A
     * project in a set makes its R at least its share; a set of backup
     * projects only (R = 0) has R = 0 and owes them nothing. */
    double min_std = INFINITY, ltd_sum = 0;
    size_t n = 0;
    for (size_t p = 0; p < np; p++) {
        struct vs_cproject *pr = &pj[p];
        if (pr->non_cpu_intensive)
            continue;
        if (flags[p] & VS_CPS_RUNNABLE) {
            double w = r_std > 0 ? a_std * (pr->resource_share / r_std) : 0;
            pr->std += w - pr->wall_cpu_period;
            if (pr->std < min_std)
                min_std = pr->std;
        }
        if (flags[p] & VS_CPS_POT_RUNNABLE) {
            double w = r_ltd > 0 ? a_ltd * (pr->resource_share / r_ltd) : 0;
            pr->ltd += w - pr->wall_cpu_period;
        }
        ltd_sum += pr->ltd;
        n++;
    }

    /* Short-term debt: min 0 over the runnable projects, at most
     * VS_CDEBT_STD_MAX; a project outside the set is owed nothing now, so
     * it re-enters at the minimum when it becomes runnable again.
     * Long-term debt: mean 0 over the CPU-intensive projects. */
    double mean = n ? ltd_sum / (double)n : 0;
    const double overworked_below = -st->host.sched_period;
    bool changed = false;
    for (size_t p = 0; p < np; p++) {
        struct vs_cproject *pr = &pj[p];
        if (pr->non_cpu_intensive) {
            pr->std = 0;
            pr->ltd = 0;
        } else {
            if (flags[p] & VS_CPS_RUNNABLE) {
                pr->std -= min_std;
                if (pr->std > VS_CDEBT_STD_MAX)
                    pr->std = VS_CDEBT_STD_MAX;
            } else {
                pr->std = 0;
            }
            pr->ltd -= mean;
        }
        pr->wall_cpu_period = 0;
        changed |= (pr->ltd < overworked_below) != ((flags[p] & VS_CPS_OVERWORKED) != 0);
    }
    return changed;
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
    struct vs_cdebt_sums sums = {0};
    vs_cpolicy__states_sums(st, flags, &sums);
    (void)vs_cdebt__update(st, flags, &sums);
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
