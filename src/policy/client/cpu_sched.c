/*
 * The CPU scheduler: which runnable results run on the NCPUS processors.
 *
 * shortfall (seed 000):
 *   0. anticipated debt := short-term debt
 *   1-3. EDF: among projects with deadlines_missed(P) > 0, schedule the
 *      earliest-deadline runnable result not yet scheduled (ties: least
 *      index), decrement P's anticipated debt (by the expected payoff) and
 *      deadlines_missed(P); repeat while CPUs and such projects remain.
 *   4. stop when all CPUs are scheduled.
 *   5. keep a running result that has run for less than the scheduling
 *      period.
 *   6-7. the project with the greatest anticipated debt gets a CPU for one
 *      of its results (running if possible, else received first); its
 *      anticipated debt drops by the expected payoff, sched_period / NCPUS.
 * debt (seed 002): the same EDF steps without the debt decrement, no step
 *   5, and step 6 picks a running result if possible, else the earliest
 *   deadline.
 * wrr (the older client): steps 6-7 only, running first, else received
 *   first.
 *
 * EDF as written is a single walk over the results sorted by (deadline,
 * index): the result the steps pick next is always the earliest unscheduled
 * one whose project still has deadlines_missed > 0.
 *
 * Results of non-CPU-intensive projects always run and take no CPU.
 */
#include <math.h>

#include "internal.h"
#include "volsched/client_policy.h"

struct sched {
    const struct vs_cstate *st;
    struct vs_csched_out *out;
    size_t *avail; /* per project: runnable CPU-intensive results not scheduled */
    size_t cap;
};

static void take(struct sched *s, size_t r, enum vs_csched_why why)
{
    s->out->order[s->out->n++] = r;
    s->out->why[r] = (uint8_t)why;
    s->out->ncpu++;
    s->avail[s->st->results[r].project]--;
}

/* Is result a preferred over b for step 6 (both unscheduled, same project)? */
static bool better(enum vs_cpolicy policy, const struct vs_cresult *a, size_t ai,
                   const struct vs_cresult *b, size_t bi)
{
    bool ra = a->task == VS_CTASK_RUNNING, rb = b->task == VS_CTASK_RUNNING;
    if (ra != rb)
        return ra;
    if (!ra) {
        double ka = policy == VS_CPOLICY_DEBT ? a->deadline : a->received;
        double kb = policy == VS_CPOLICY_DEBT ? b->deadline : b->received;
        if (ka != kb)
            return ka < kb;
    }
    return ai < bi;
}

int vs_csched__run(enum vs_cpolicy policy, const struct vs_cstate *st,
                   const struct vs_rrsim_out *rr, struct vs_cpolicy_ws *ws,
                   struct vs_csched_out *out)
{
    size_t np = st->nprojects, nr = st->nresults;
    vs_cpolicy__reserve(ws, np, nr);
    struct vs_cpolicy_wsd *d = ws->d;

    out->order = d->sc_order;
    out->why = d->sc_why;
    out->n = 0;
    out->ncpu = 0;

    size_t *gstart = d->pz0, *gfill = d->pz1, *avail = d->pz2;
    size_t *group = d->rz0;
    double *ad = d->pd0;
    int *dm = d->pi0;
    struct sched s = {st, out, avail, (size_t)st->host.ncpus};
    const double payoff = st->host.sched_period / st->host.ncpus;

    for (size_t p = 0; p < np; p++) {
        avail[p] = 0;
        ad[p] = st->projects[p].std;
        dm[p] = (rr && policy != VS_CPOLICY_WRR) ? rr->deadlines_missed[p] : 0;
    }
    /* Non-CPU-intensive results first: they always run, beside the CPUs. */
    for (size_t r = 0; r < nr; r++) {
        out->why[r] = VS_CSCHED_NO;
        if (!vs_cpolicy__runnable(st, &st->results[r]))
            continue;
        size_t p = st->results[r].project;
        if (st->projects[p].non_cpu_intensive) {
            out->order[out->n++] = r;
            out->why[r] = VS_CSCHED_NONCPU;
        } else {
            avail[p]++;
        }
    }
    /* Group the runnable CPU-intensive results by project, in index order. */
    size_t off = 0;
    for (size_t p = 0; p < np; p++) {
        gstart[p] = gfill[p] = off;
        off += avail[p];
    }
    for (size_t r = 0; r < nr; r++) {
        if (out->why[r] == VS_CSCHED_NO && vs_cpolicy__runnable(st, &st->results[r]))
            group[gfill[st->results[r].project]++] = r;
    }

    /* Steps 1-3: EDF for projects that the simulation says miss deadlines. */
    bool any_dm = false;
    for (size_t p = 0; p < np && !any_dm; p++)
        any_dm = dm[p] > 0 && avail[p] > 0;
    if (any_dm) {
        struct vs_cpkey *keys = d->keys;
        size_t m = 0;
        /* Built in index order: the stable sort keeps that for ties. */
        for (size_t r = 0; r < nr; r++) {
            size_t p = st->results[r].project;
            if (dm[p] > 0 && out->why[r] == VS_CSCHED_NO && !st->projects[p].non_cpu_intensive &&
                vs_cpolicy__runnable(st, &st->results[r]))
                keys[m++] = (struct vs_cpkey){
                    .group = 0, .idx = (uint32_t)r, .key = st->results[r].deadline};
        }
        vs_cpolicy__sort(keys, d->keys2, m);
        for (size_t i = 0; i < m && out->ncpu < s.cap; i++) {
            size_t r = keys[i].idx, p = st->results[r].project;
            if (dm[p] <= 0)
                continue;
            take(&s, r, VS_CSCHED_EDF);
            dm[p]--;
            if (policy == VS_CPOLICY_SHORTFALL)
                ad[p] -= payoff;
        }
    }

    /* Step 5 (seed 000): a result keeps its CPU for a whole period. */
    if (policy == VS_CPOLICY_SHORTFALL) {
        for (size_t r = 0; r < nr && out->ncpu < s.cap; r++) {
            const struct vs_cresult *res = &st->results[r];
            if (out->why[r] == VS_CSCHED_NO && res->task == VS_CTASK_RUNNING &&
                st->now - res->running_since < st->host.sched_period &&
                vs_cpolicy__runnable(st, &st->results[r]) &&
                !st->projects[res->project].non_cpu_intensive)
                take(&s, r, VS_CSCHED_PERIOD);
        }
    }

    /* Steps 6-7: weighted round-robin by anticipated debt. */
    while (out->ncpu < s.cap) {
        size_t best = np;
        for (size_t p = 0; p < np; p++) {
            if (avail[p] > 0 && (best == np || ad[p] > ad[best]))
                best = p;
        }
        if (best == np)
            break;
        size_t pick = nr;
        for (size_t i = gstart[best]; i < gfill[best]; i++) {
            size_t r = group[i];
            if (out->why[r] != VS_CSCHED_NO)
                continue;
            if (pick == nr || better(policy, &st->results[r], r, &st->results[pick], pick))
                pick = r;
        }
        if (VS_NEVER(pick == nr))
            break;
        take(&s, pick, VS_CSCHED_DEBT);
        ad[best] -= payoff;
    }
    return 0;
}

int vs_csched_run(enum vs_cpolicy policy, const struct vs_cstate *st, const struct vs_rrsim_out *rr,
                  struct vs_cpolicy_ws *ws, struct vs_csched_out *out)
{
    if ((int)policy < 0 || (int)policy >= VS_CPOLICY_COUNT || vs_cstate_validate(st) != 0 || !ws ||
        !ws->d || (!rr && policy != VS_CPOLICY_WRR))
        return VS_EINVAL;
    return vs_csched__run(policy, st, rr, ws, out);
}
