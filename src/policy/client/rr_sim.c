/*
 * The round-robin simulation (seed 000 "Round-robin simulation", seed 002
 * "The scheduler starts by doing a simulation ..."): weighted round-robin of
 * the queue from now on, to find which results would miss their deadlines
 * and how much of [now, now + min_queue] the queue keeps the CPUs busy.
 *
 * Model. Each project with work gets CPUs in proportion to its resource
 * share among the projects with work; a result can use at most one CPU, so
 * a project never gets more CPUs than it has results, and what it cannot
 * use is shared out among the others by share (water-filling). A project's
 * results share its CPUs equally. A CPU delivers on_frac * active_frac *
 * cpu_efficiency CPU seconds per second.
 *
 * Event driven: because a project's results all advance at the same rate,
 * the next of them to finish is the one with the least remaining work. The
 * results are sorted once by (project, remaining); each project keeps a
 * cursor and the CPU seconds W every one of its unfinished results has had.
 * An event is the next finish among the projects' cursors, so a pass costs
 * O(n log n) for the sort plus O(projects) per finish.
 */
#include <math.h>

#include "internal.h"
#include "volsched/client_policy.h"

static bool simulated(enum vs_cpolicy policy, const struct vs_cstate *st, size_t r)
{
    if (st->projects[st->results[r].project].non_cpu_intensive)
        return false;
    /* Seed 000 simulates the nearly runnable results; seed 002 and the old
     * client know only runnable ones. */
    if (policy == VS_CPOLICY_SHORTFALL)
        return vs_cresult_nearly_runnable(st, r);
    return vs_cresult_runnable(st, r);
}

/*
 * frs(P): P's fraction of the resource share among fetchable projects (the
 * old client: among projects that are not suspended). For a project outside
 * that set the fraction it would have if it were in it, so that every
 * project's shortfall is defined; 0 for non-CPU-intensive projects, which
 * use no CPU.
 */
static void compute_frs(enum vs_cpolicy policy, const struct vs_cstate *st, const unsigned *flags,
                        double *frs)
{
    double sum = 0;
    for (size_t p = 0; p < st->nprojects; p++) {
        const struct vs_cproject *pr = &st->projects[p];
        bool in = policy == VS_CPOLICY_WRR ? !pr->suspended : (flags[p] & VS_CPS_FETCHABLE) != 0;
        if (in && !pr->non_cpu_intensive)
            sum += pr->resource_share;
    }
    for (size_t p = 0; p < st->nprojects; p++) {
        const struct vs_cproject *pr = &st->projects[p];
        bool in = policy == VS_CPOLICY_WRR ? !pr->suspended : (flags[p] & VS_CPS_FETCHABLE) != 0;
        if (pr->non_cpu_intensive)
            frs[p] = 0;
        else
            frs[p] = pr->resource_share / (in ? sum : sum + pr->resource_share);
    }
}

/* Insertion sort of the few projects with fewer results than CPUs, by
 * results per unit of share (the order in which water-filling caps them). */
static void sort_small(int *small, size_t n, const size_t *next, const size_t *end,
                       const struct vs_cproject *projects)
{
    for (size_t i = 1; i < n; i++) {
        int v = small[i];
        double kv = (double)(end[v] - next[v]), sv = projects[v].resource_share;
        size_t j = i;
        while (j > 0) {
            int u = small[j - 1];
            double ku = (double)(end[u] - next[u]), su = projects[u].resource_share;
            if (ku * sv <= kv * su)
                break;
            small[j] = u;
            j--;
        }
        small[j] = v;
    }
}

int vs_rrsim_run(enum vs_cpolicy policy, const struct vs_cstate *st, struct vs_cpolicy_ws *ws,
                 struct vs_rrsim_out *out)
{
    if ((int)policy < 0 || (int)policy >= VS_CPOLICY_COUNT || vs_cstate_validate(st) != 0 || !ws ||
        !ws->d)
        return VS_EINVAL;
    size_t np = st->nprojects, nr = st->nresults;
    vs_cpolicy__reserve(ws, np, nr);
    struct vs_cpolicy_wsd *d = ws->d;

    out->finish = d->rr_finish;
    out->deadline_missed = d->rr_missed;
    out->deadlines_missed = d->rr_dm;
    out->shortfall = d->rr_shortfall;
    out->work_before_minq = d->rr_wbm;
    out->frs = d->rr_frs;
    out->states = d->rr_states;

    vs_cproject_states(st, out->states);
    compute_frs(policy, st, out->states, out->frs);

    size_t *start = d->pz0, *next = d->pz1, *end = d->pz2, *active = d->pz3;
    double *work = d->pd0, *alloc = d->pd1, *t_empty = d->pd2;
    int *small = d->pi0;
    struct vs_cpkey *keys = d->keys;

    size_t m = 0;
    for (size_t r = 0; r < nr; r++) {
        out->finish[r] = INFINITY;
        out->deadline_missed[r] = false;
        if (simulated(policy, st, r))
            keys[m++] = (struct vs_cpkey){st->results[r].project, st->results[r].remaining, r};
    }
    vs_cpolicy__sort(keys, m);

    for (size_t p = 0; p < np; p++) {
        start[p] = next[p] = end[p] = 0;
        work[p] = alloc[p] = t_empty[p] = 0;
        out->deadlines_missed[p] = 0;
        out->shortfall[p] = 0;
        out->work_before_minq[p] = 0;
    }
    for (size_t i = 0; i < m; i++) {
        size_t p = keys[i].group;
        if (i == 0 || keys[i - 1].group != p)
            start[p] = next[p] = i;
        end[p] = i + 1;
    }
    size_t nact = 0;
    for (size_t p = 0; p < np; p++) {
        if (end[p] > start[p])
            active[nact++] = p;
    }

    const double ncpus = st->host.ncpus, mq = st->host.min_queue;
    const double speed = vs_cpolicy__speed(&st->host);
    double t = 0, idle = 0, used_total = 0;

    for (;;) {
        /* Retire every result whose work is done (several may finish at
         * once; the tolerance absorbs rounding in W). */
        size_t keep = 0;
        for (size_t a = 0; a < nact; a++) {
            size_t p = active[a];
            double tol = 1e-9 * (1 + work[p]);
            while (next[p] < end[p] && keys[next[p]].key <= work[p] + tol) {
                out->finish[keys[next[p]].idx] = st->now + t;
                next[p]++;
            }
            if (next[p] < end[p])
                active[keep++] = p;
            else
                t_empty[p] = t;
        }
        nact = keep;
        if (nact == 0)
            break;

        /* CPUs per project: proportional to share, capped at the project's
         * number of unfinished results. Only a project with fewer results
         * than CPUs can hit its cap. */
        double cpus = ncpus, shares = 0;
        size_t nsmall = 0;
        for (size_t a = 0; a < nact; a++) {
            size_t p = active[a];
            shares += st->projects[p].resource_share;
            alloc[p] = -1;
            if ((double)(end[p] - next[p]) < ncpus)
                small[nsmall++] = (int)p;
        }
        if (nsmall) {
            sort_small(small, nsmall, next, end, st->projects);
            for (size_t i = 0; i < nsmall; i++) {
                size_t p = (size_t)small[i];
                double k = (double)(end[p] - next[p]), sh = st->projects[p].resource_share;
                if (!(k * shares < cpus * sh))
                    break;
                alloc[p] = k;
                cpus -= k;
                shares -= sh;
            }
        }

        /* The next finish: the least time for a project's cursor result. */
        double dt = INFINITY;
        size_t arg = active[0];
        for (size_t a = 0; a < nact; a++) {
            size_t p = active[a];
            if (alloc[p] < 0)
                alloc[p] = cpus * (st->projects[p].resource_share / shares);
            double rate = alloc[p] / (double)(end[p] - next[p]) * speed;
            double need = (keys[next[p]].key - work[p]) / rate;
            if (need < dt) {
                dt = need;
                arg = p;
            }
        }

        /* Integrate over the part of [t, t + dt] inside [0, min_queue]. */
        if (t < mq) {
            double ov = fmin(t + dt, mq) - t;
            double used = 0;
            for (size_t a = 0; a < nact; a++) {
                size_t p = active[a];
                out->work_before_minq[p] += alloc[p] * ov;
                used += alloc[p];
                double lack = ncpus * out->frs[p] - (double)(end[p] - next[p]);
                if (lack > 0)
                    out->shortfall[p] += lack * ov;
            }
            used_total += used * ov;
            if (ncpus - used > 0)
                idle += (ncpus - used) * ov;
        }

        for (size_t a = 0; a < nact; a++) {
            size_t p = active[a];
            work[p] += alloc[p] / (double)(end[p] - next[p]) * speed * dt;
        }
        /* The project that defined the event finishes exactly now: this
         * guarantees progress whatever the rounding. */
        work[arg] = keys[next[arg]].key;
        t += dt;
    }

    if (t < mq)
        idle += ncpus * (mq - t);
    for (size_t p = 0; p < np; p++) {
        /* After its last result a project runs on nothing: it lacks its
         * whole share of the CPUs until min_queue. */
        if (t_empty[p] < mq)
            out->shortfall[p] += ncpus * out->frs[p] * (mq - t_empty[p]);
    }
    for (size_t i = 0; i < m; i++) {
        size_t r = keys[i].idx;
        if (out->finish[r] > st->results[r].deadline) {
            out->deadline_missed[r] = true;
            out->deadlines_missed[st->results[r].project]++;
        }
    }
    out->total_shortfall = idle;
    out->total_work_before_minq = used_total;
    out->end = st->now + t;
    return 0;
}
