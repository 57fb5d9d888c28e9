/*
 * Enforcement: turn the CPU schedule into start / resume / suspend actions.
 *
 * Let X be the scheduled results that are not running (in schedule order)
 * and Y the running results that are not scheduled. Scheduled results
 * start at once on idle CPUs; a result in X otherwise waits for a result in
 * Y to be preempted, by the policy's rules:
 *
 * shortfall (seed 000), with T the time the scheduler last ran:
 *   - for R in X with deadline_missed(R): preempt the result in Y with the
 *     least wall CPU time since its checkpoint and run R;
 *   - a result in Y that checkpointed more recently than T is preempted and
 *     a result of X runs; the others in Y keep running until they
 *     checkpoint (the driver calls enforcement again then).
 * debt (seed 002):
 *   - with leave_in_memory, preempt at once;
 *   - otherwise a preempted app may run up to sched_period/2 more seconds
 *     or until it checkpoints, whichever is first (preempt_pending and
 *     preempt_since remember when the decision was made);
 *   - no grace when preempting to run a result R with deadline_missed(R).
 * wrr (the older client): preempt at once.
 * fair: as shortfall, but the deadline rule takes no victim that would
 *   lose more than a tenth of a period of work (loses_much).
 *
 * CPUs are counted, not results (a multi-threaded result takes its
 * job_ncpus): a result of X starts only when it fits in the CPUs free,
 * and a preemption frees its result's CPUs.
 *
 * Suspend mode: kept in memory if leave_in_memory is set; under shortfall
 * and debt also when the app never checkpointed (removing it would throw
 * all its work away, seed 002); otherwise removed from memory.
 */
#include <math.h>
#include <stdint.h>

#include "internal.h"
#include "volsched/client_policy.h"

enum vs_cact_kind vs_cpolicy__suspend_kind(const struct vs_cstate *st, size_t r, bool old_client)
{
    if (st->host.leave_in_memory)
        return VS_CACT_SUSPEND_KEEP;
    if (!old_client && !st->results[r].checkpointed)
        return VS_CACT_SUSPEND_KEEP;
    return VS_CACT_SUSPEND_REMOVE;
}

#define DONE SIZE_MAX

/*
 * The actions are counted here and written to the vs_cenforce_out at the
 * end: kept in *out, the count would be reloaded after every store.
 */
struct enf {
    struct vs_cstate *st;
    struct vs_caction *act;
    size_t nact;
    bool old;
    size_t *x, nx, xi; /* scheduled, not running; x[i] = DONE once started */
    size_t *y, ny;     /* running, not scheduled; y[i] = DONE once preempted */
    double free;       /* CPUs free */
};

static double cpus_of(const struct enf *e, size_t r)
{
    return vs_cpolicy__ncpus(e->st, e->st->results[r].project);
}

/* Whether result r fits in the free CPUs. */
static bool fits_free(const struct enf *e, size_t r)
{
    return cpus_of(e, r) <= e->free + 1e-9;
}

static void act(struct enf *e, enum vs_cact_kind kind, size_t r)
{
    e->act[e->nact++] = (struct vs_caction){kind, r};
}

static void start(struct enf *e, size_t r)
{
    act(e, e->st->results[r].task == VS_CTASK_UNSTARTED ? VS_CACT_START : VS_CACT_RESUME, r);
    if (!e->st->projects[e->st->results[r].project].non_cpu_intensive)
        e->free -= cpus_of(e, r);
}

static void preempt(struct enf *e, size_t yi)
{
    size_t r = e->y[yi];
    e->free += cpus_of(e, r);
    act(e, vs_cpolicy__suspend_kind(e->st, r, e->old), r);
    e->st->results[r].preempt_pending = false;
    e->y[yi] = DONE;
}

/* The next result of X waiting for a CPU, or DONE. */
static size_t next_x(struct enf *e)
{
    while (e->xi < e->nx && e->x[e->xi] == DONE)
        e->xi++;
    return e->xi < e->nx ? e->x[e->xi] : DONE;
}

/* Starts the results of X that wait, in order, while the next one fits. */
static void start_next_x(struct enf *e)
{
    for (size_t r; (r = next_x(e)) != DONE && fits_free(e, r);) {
        start(e, r);
        e->x[e->xi] = DONE;
    }
}

/*
 * fair does not preempt a job that has not checkpointed for long when that
 * throws its work away (removed from memory, more than a tenth of a
 * scheduling period since its checkpoint), not even for a result that
 * would miss its deadline: it gives up its CPU at its next checkpoint, as
 * any preempted job does (the driver runs enforcement then), and the
 * result waits those minutes instead of the host redoing them.
 */
static bool loses_much(const struct enf *e, size_t r)
{
    const struct vs_cstate *st = e->st;
    return vs_cpolicy__suspend_kind(st, r, e->old) == VS_CACT_SUSPEND_REMOVE &&
           st->results[r].wall_since_checkpoint > 0.1 * st->host.sched_period;
}

/* Results of Y give their CPUs to results of X, by the policy's rules. */
static void preempt_y(struct enf *e, const struct vs_cpolicy_rules *rules,
                      const struct vs_rrsim_out *rr, double *recheck_at)
{
    struct vs_cstate *st = e->st;
    /* A result that would miss its deadline runs now, in place of the
     * result of Y that loses least by stopping (no grace). */
    if (rules->deadline_aware) {
        for (size_t i = e->xi; i < e->nx; i++) {
            size_t r = e->x[i];
            if (r == DONE || !rr->deadline_missed[r])
                continue;
            bool none = false;
            while (!fits_free(e, r)) {
                size_t victim = DONE;
                for (size_t j = 0; j < e->ny; j++) {
                    if (e->y[j] == DONE || (rules->spare_unsaved && loses_much(e, e->y[j])))
                        continue;
                    if (victim == DONE || st->results[e->y[j]].wall_since_checkpoint <
                                              st->results[e->y[victim]].wall_since_checkpoint)
                        victim = j;
                }
                if (victim == DONE) {
                    none = true;
                    break;
                }
                preempt(e, victim);
            }
            if (none)
                break;
            start(e, r);
            e->x[i] = DONE;
        }
    }

    for (size_t j = 0; j < e->ny; j++) {
        size_t r = e->y[j];
        if (r == DONE)
            continue;
        struct vs_cresult *res = &st->results[r];
        if (next_x(e) == DONE) {
            /* Nothing waits for its CPU: let it run. */
            res->preempt_pending = false;
            continue;
        }
        bool now_ok;
        switch (rules->preempt) {
        case VS_CPREEMPT_CHECKPOINT:
            now_ok = res->checkpointed && res->checkpoint_time > st->last_sched_time;
            break;
        case VS_CPREEMPT_GRACE:
            if (st->host.leave_in_memory) {
                now_ok = true;
                break;
            }
            if (!res->preempt_pending) {
                res->preempt_pending = true;
                res->preempt_since = st->now;
            }
            double until = res->preempt_since + st->host.sched_period / 2;
            now_ok = (res->checkpointed && res->checkpoint_time >= res->preempt_since) ||
                     st->now >= until;
            if (!now_ok && until < *recheck_at)
                *recheck_at = until;
            break;
        case VS_CPREEMPT_NOW:
        default:
            now_ok = true;
            break;
        }
        if (now_ok) {
            preempt(e, j);
            start_next_x(e);
        }
    }
}

int vs_cenforce__run(enum vs_cpolicy policy, struct vs_cstate *st, const struct vs_rrsim_out *rr,
                     const struct vs_csched_out *sched, struct vs_cpolicy_ws *ws,
                     struct vs_cenforce_out *out)
{
    size_t nr = st->nresults;
    struct vs_cpolicy_wsd *d = ws->d;
    vs_cpolicy__reserve(ws, st->nprojects, nr);
    const struct vs_cpolicy_rules *rules = vs_cpolicy__rules(policy);
    out->actions = d->en_act;
    out->recheck_at = INFINITY;

    /* keys is only scratch here: reuse its storage as a second index list
     * (a vs_cpkey is larger than a size_t, so it holds nr of them). */
    struct enf e = {.st = st,
                    .act = d->en_act,
                    .old = rules->old_client,
                    .x = d->res_list,
                    .y = (size_t *)d->keys};
    struct vs_cresult *results = st->results;
    const struct vs_cproject *prj = st->projects;
    const uint8_t *why = sched->why;
    double nrun = 0; /* CPUs in use */
    for (size_t r = 0; r < nr; r++) {
        struct vs_cresult *res = &results[r];
        if (res->task != VS_CTASK_RUNNING || res->done) {
            res->preempt_pending = false;
            continue;
        }
        if (!vs_cpolicy__runnable(st, res)) {
            /* Suspended by the user or lost its files: stop it now. */
            act(&e, vs_cpolicy__suspend_kind(st, r, e.old), r);
            res->preempt_pending = false;
            continue;
        }
        if (prj[res->project].non_cpu_intensive)
            continue;
        nrun += vs_cpolicy__ncpus(st, res->project);
        if (why[r] == VS_CSCHED_NO)
            e.y[e.ny++] = r;
        else
            res->preempt_pending = false;
    }
    const size_t *order = sched->order;
    for (size_t i = 0, n = sched->n; i < n; i++) {
        size_t r = order[i];
        const struct vs_cresult *res = &results[r];
        if (res->task == VS_CTASK_RUNNING)
            continue;
        if (prj[res->project].non_cpu_intensive)
            start(&e, r);
        else
            e.x[e.nx++] = r;
    }

    /* Idle CPUs need no preemption (nothing in X has started yet). */
    e.free = st->host.ncpus - nrun;
    while (e.xi < e.nx && fits_free(&e, e.x[e.xi]))
        start(&e, e.x[e.xi++]);
    /* Without a running result to preempt, the rest has nothing to do. */
    if (e.ny > 0)
        preempt_y(&e, rules, rr, &out->recheck_at);
    out->n = e.nact;
    return 0;
}

int vs_cenforce_run(enum vs_cpolicy policy, struct vs_cstate *st, const struct vs_rrsim_out *rr,
                    const struct vs_csched_out *sched, struct vs_cpolicy_ws *ws,
                    struct vs_cenforce_out *out)
{
    if ((int)policy < 0 || (int)policy >= VS_CPOLICY_COUNT || vs_cstate_validate(st) != 0 || !ws ||
        !ws->d || !sched || (!rr && vs_cpolicy__rules(policy)->deadline_aware))
        return VS_EINVAL;
    return vs_cenforce__run(policy, st, rr, sched, ws, out);
}
