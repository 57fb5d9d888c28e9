/*
 * The round-robin simulation (seed 000 "Round-robin simulation", seed 002
 * "The scheduler starts by doing a simulation ..."): weighted round-robin of
 * the queue from now on, to find which results would miss their deadlines
 * and how much of [now, now + min_queue] the queue keeps the CPUs busy.
 *
 * Model. Each project with work gets CPUs in proportion to its resource
 * share among the projects with work; a result can use at most one CPU (a
 * multi-threaded one its job_ncpus), and at most max_concurrent of a
 * project's results run at once, so a project never gets more CPUs than
 * its results can use, and what it cannot use is shared out among the
 * others by share (water-filling): queued work that cannot run does not
 * look like busy CPUs. A project's results share its CPUs equally. A
 * backup project (share 0) gets a millionth of the least positive share:
 * in effect only what the others cannot use. A CPU delivers on_frac * active_frac *
 * cpu_efficiency CPU seconds per second.
 *
 * Event driven: because a project's results all advance at the same rate,
 * the next of them to finish is the one with the least remaining work. The
 * results are sorted once by (project, remaining) (radix sort); each
 * project keeps a cursor and the CPU seconds W every one of its unfinished
 * results has had. An event is the next finish among the projects' cursors,
 * found by a scan of the active projects, so a pass costs O(n * projects)
 * plus the sort (a heap was slower for the handful of projects a host
 * has: at 3 projects its upkeep was 7% of a policy pass).
 */
#include <float.h>
#include <math.h>

#include "internal.h"
#include "volsched/client_policy.h"

static bool simulated(bool nearly, const struct vs_cstate *st, size_t r)
{
    if (st->projects[st->results[r].project].non_cpu_intensive)
        return false;
    /* Seed 000 simulates the nearly runnable results; seed 002 and the old
     * client know only runnable ones. */
    if (nearly)
        return vs_cpolicy__nearly_runnable(st, &st->results[r]);
    return vs_cpolicy__runnable(st, &st->results[r]);
}

/*
 * The simulation state. Projects are updated lazily: between changes of
 * its CPU allocation a project's results advance at a constant rate, so
 * W, the integrals and the time of its next finish are brought up to date
 * only when something about it changes. The active projects are listed
 * in index order (so that sums over them do not depend on the history of
 * the simulation). An array of pointers rather than a linked list:
 * the loops over it then load independently, which at 50 projects and
 * 100,000 results cost a quarter of a pass.
 *
 * The allocations only change when the set of active projects changes, or
 * when a capped project (one with no more results than the CPUs it is
 * owed) loses a result, or an uncapped one drops below its allocation:
 * those events recompute all projects. An uncapped project's allocation
 * does not depend on its own number of results, so any other finish only
 * changes the per-result rate of one project.
 */
struct sim {
    const struct vs_cstate *st;
    struct vs_rrsim_out *out;
    const struct vs_cpkey *keys;
    const struct vs_cresult *results;
    double *finish;
    double now;
    struct vs_rrproj **act; /* the active projects' records, increasing index */
    size_t nact;
    double ncpus, mq, mq_lo, speed;
    double lack_eps; /* see sync_project */
    double tg, idle_rate, used_rate, idle, used;
};

/*
 * frs(P): P's fraction of the resource share among fetchable projects (the
 * old client: among projects that are not suspended). For a project outside
 * that set the fraction it would have if it were in it, so that every
 * project's shortfall is defined; 0 for non-CPU-intensive projects, which
 * use no CPU.
 */
static bool frs_in(const struct vs_cpolicy_rules *rules, const struct vs_cproject *pr,
                   unsigned flags)
{
    return rules->frs_unsuspended ? !pr->suspended : (flags & VS_CPS_FETCHABLE) != 0;
}

/*
 * Rounding. The simulated times are sums and quotients of the queue's
 * numbers, each event adding a relative error of a few ulps; and the
 * snapshot's own numbers come from a driver's clock arithmetic, as precise
 * as absolute times of now's magnitude after many operations (a simulator
 * 12 hours in, two completions that coincide in exact arithmetic land
 * 1e-5 s apart). A result that ends exactly at min_queue in exact
 * arithmetic (a 6-minute job with a 6-minute min_queue) may so end a hair
 * before it and leave a "shortfall" of 1e-13 .. 1e-5 s, which work fetch
 * would turn into a request and a server into a whole job. So the end of
 * the window is a band: a time within 1e-9 * max(min_queue,
 * |now|) of min_queue counts as min_queue (VS_CPOLICY_REL_EPS = 1e-9, internal.h).
 * That is far above the rounding
 * of any realistic run, far below any real gap (0.36 us for a 6-minute
 * min_queue early on, 1.7 ms 20 days into a simulation, 1.7 s at Unix
 * times, all far below a scheduling decision's grain).
 */

/* Length of [a, b] inside [0, mq] (a <= b), with b snapped to mq when it
 * is within the band (mq_lo = mq minus the band). */
static double overlap(double a, double b, double mq, double mq_lo)
{
    if (a >= mq_lo)
        return 0;
    return (b >= mq_lo ? mq : b) - a;
}

/* After its last result, at t_empty, a project runs on nothing: it lacks
 * its whole share of the CPUs until min_queue. Returns its final
 * shortfall from the one it had until then. */
static double final_shortfall(const struct sim *s, double sf, double nf, double t_empty)
{
    if (t_empty < s->mq_lo)
        sf += nf * (s->mq - t_empty);
    return sf;
}

/*
 * Writes frs and the per-project outputs of a project that never runs in
 * the simulation (no simulated result left after time 0); rrsim_run
 * overwrites them for the projects that do when they finish.
 */
static void init_projects(const struct vs_cpolicy_rules *rules, const struct sim *s,
                          struct vs_rrsim_out *out)
{
    const struct vs_cstate *st = s->st;
    double sum = 0;
    for (size_t p = 0; p < st->nprojects; p++) {
        const struct vs_cproject *pr = &st->projects[p];
        if (frs_in(rules, pr, out->states[p]) && !pr->non_cpu_intensive)
            sum += pr->resource_share;
    }
    for (size_t p = 0; p < st->nprojects; p++) {
        const struct vs_cproject *pr = &st->projects[p];
        double den = frs_in(rules, pr, out->states[p]) ? sum : sum + pr->resource_share;
        if (pr->non_cpu_intensive || !(den > 0))
            out->frs[p] = 0;
        else
            out->frs[p] = pr->resource_share / den;
        out->deadlines_missed[p] = 0;
        out->work_before_minq[p] = 0;
        out->shortfall[p] = final_shortfall(s, 0, s->ncpus * out->frs[p], 0);
    }
}

static size_t left_k(const struct vs_rrproj *e)
{
    return e->end - e->next;
}

/* The CPUs project e's unfinished results can use at once. */
static double usable(const struct vs_rrproj *e)
{
    double n = (double)left_k(e);
    return (n > e->mc ? e->mc : n) * e->kcpu;
}

/* Brings project e to time t at its current rate and allocation. */
static void sync_project(const struct sim *s, struct vs_rrproj *e, double t)
{
    double from = e->tsync;
    if (t > from) {
        e->work += e->rate * (t - from);
        double o = overlap(from, t, s->mq, s->mq_lo);
        if (o > 0) {
            e->wbm += e->alloc * o;
            /* shortfall(P) integrates max(0, ncpus * frs(P) - n_running(P)). */
            /* ncpus * frs(P) is a ratio of shares times an integer, off
             * by a few ulps: a project that has exactly its share of CPUs
             * must not lack 1e-16 of one. */
            double lack = e->nf - usable(e);
            if (lack > s->lack_eps)
                e->sf += lack * o;
        }
    }
    e->tsync = t;
}

static void sync_global(struct sim *s, double t)
{
    double o = overlap(s->tg, t, s->mq, s->mq_lo);
    if (o > 0) {
        s->idle += s->idle_rate * o;
        s->used += s->used_rate * o;
    }
    s->tg = t;
}

/* The position in act of the project whose next result finishes first;
 * the lowest index among equal times, so that the order of events is
 * fixed. (Comparing with the best one's time in memory, not a running
 * minimum in a register: the compiler makes the latter a chain of
 * dependent minsd, a third slower at 50 projects.) */
static size_t next_event(const struct sim *s)
{
    size_t best = 0;
    for (size_t i = 1; i < s->nact; i++) {
        if (s->act[i]->fin < s->act[best]->fin)
            best = i;
    }
    return best;
}

static void set_finish_time(const struct sim *s, struct vs_rrproj *e, double t)
{
    e->rate = e->alloc / ((double)left_k(e) * e->kcpu) * s->speed;
    e->fin = t + (e->nextkey - e->work) / e->rate;
}

/*
 * Brings every active project to time t and recomputes its CPUs:
 * proportional to share, capped at the project's number of unfinished
 * results, water-filling the CPUs the capped ones leave. Only a project
 * with fewer results than CPUs can hit its cap.
 */
static void reallocate(struct sim *s, double t)
{
    sync_global(s, t);
    double cpus = s->ncpus, shares = 0;
    for (size_t i = 0; i < s->nact; i++) {
        struct vs_rrproj *e = s->act[i];
        sync_project(s, e, t);
        shares += e->share;
    }
    /* Cap every project that has fewer results than its proportional CPUs.
     * The first round also allocates the uncapped ones: when it caps
     * nothing, as it mostly does, that is the answer. */
    double c2 = cpus, s2 = shares;
    bool any_capped = false;
    for (size_t i = 0; i < s->nact; i++) {
        struct vs_rrproj *e = s->act[i];
        double k = usable(e);
        e->capped = k * shares < cpus * e->share;
        if (e->capped) {
            c2 -= k;
            s2 -= e->share;
            any_capped = true;
        } else {
            e->alloc = cpus * (e->share / shares);
            set_finish_time(s, e, t);
        }
    }
    if (!any_capped) {
        s->used_rate = s->nact > 0 ? s->ncpus : 0;
        s->idle_rate = s->ncpus - s->used_rate;
        return;
    }
    /* Capping raises the level for the others, so repeat until none is
     * newly capped (a project over the level stays over it). */
    for (bool changed = true; changed;) {
        changed = false;
        cpus = c2;
        shares = s2;
        for (size_t i = 0; i < s->nact; i++) {
            struct vs_rrproj *e = s->act[i];
            if (e->capped)
                continue;
            double k = usable(e);
            if (k * shares < cpus * e->share) {
                e->capped = 1;
                c2 -= k;
                s2 -= e->share;
                changed = true;
            }
        }
    }
    /* The CPUs in use, exactly: every CPU when some project is uncapped
     * (the uncapped ones share all the capped ones leave), else the capped
     * projects' result counts, integers. Summing the allocations instead
     * would leave an idle rate of 1e-16 CPU when there is none. */
    double capped_k = 0;
    bool any_uncapped = false;
    for (size_t i = 0; i < s->nact; i++) {
        struct vs_rrproj *e = s->act[i];
        if (e->capped) {
            e->alloc = usable(e);
            capped_k += e->alloc;
        } else {
            e->alloc = cpus * (e->share / shares);
            any_uncapped = true;
        }
        set_finish_time(s, e, t);
    }
    s->used_rate = any_uncapped ? s->ncpus : capped_k;
    s->idle_rate = s->ncpus - s->used_rate;
}

/* A result is done when its project's work is within this of its
 * remaining work (several may finish at once: it absorbs rounding). */
static double done_at(double work)
{
    return work + 1e-9 * (1 + work);
}

/* Retires project e's results whose work is done at time t, checking
 * their deadlines on the way. */
static void retire(const struct sim *s, struct vs_rrproj *e, double t)
{
    double done = done_at(e->work);
    double finish = s->now + t;
    const struct vs_cpkey *k = s->keys + e->next, *end = s->keys + e->end;
    for (; k < end && k->key <= done; k++) {
        s->finish[k->idx] = finish;
    }
    e->next = (uint32_t)(k - s->keys);
    if (k < end)
        e->nextkey = k->key;
}

/* Project act[i] has no result left at time t: its outputs are final. */
static void act_remove(struct sim *s, size_t i, double t)
{
    struct vs_rrproj *e = s->act[i];
    s->out->work_before_minq[e->p] = e->wbm;
    s->out->shortfall[e->p] = final_shortfall(s, e->sf, e->nf, t);
    s->nact--;
    for (; i < s->nact; i++)
        s->act[i] = s->act[i + 1];
}

/* A backup project's share in the simulation (see the header): a
 * millionth of the least positive share. */
static double backup_share(const struct vs_cstate *st)
{
    double z = INFINITY;
    for (size_t p = 0; p < st->nprojects; p++)
        if (st->projects[p].resource_share > 0 && st->projects[p].resource_share < z)
            z = st->projects[p].resource_share;
    return isfinite(z) ? 1e-6 * z : 1;
}

static int rrsim_run(enum vs_cpolicy policy, const struct vs_cstate *st, struct vs_cpolicy_ws *ws,
                     struct vs_rrsim_out *out, bool states_ready)
{
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

    struct vs_cpkey *keys = d->keys;
    struct sim s = {
        .st = st,
        .out = out,
        .keys = keys,
        .act = d->rr_act,
        .results = st->results,
        .finish = out->finish,
        .now = st->now,
        .ncpus = st->host.ncpus,
        .mq = st->host.min_queue,
        .mq_lo = st->host.min_queue - vs_cpolicy__time_eps(st),
        .lack_eps = 8 * DBL_EPSILON * st->host.ncpus,
        .speed = vs_cpolicy__speed(&st->host),
    };
    if (!states_ready)
        vs_cproject_states(st, out->states);
    const struct vs_cpolicy_rules *rules = vs_cpolicy__rules(policy);
    init_projects(rules, &s, out);

    size_t m = 0;
    const bool nearly = rules->sim_nearly_runnable, spare = rules->spare_cpus_only;
    double share_sum = spare ? vs_cpolicy__share_sum(st) : 0;
    for (size_t r = 0; r < nr; r++) {
        out->finish[r] = INFINITY;
        out->deadline_missed[r] = false;
        if (simulated(nearly, st, r) && !vs_cpolicy__lost_if(spare, st, &st->results[r], s.speed) &&
            !vs_cpolicy__oversized_if(spare, st, &st->results[r], s.speed, share_sum))
            keys[m++] = (struct vs_cpkey){.group = (uint32_t)st->results[r].project,
                                          .idx = (uint32_t)r,
                                          .key = st->results[r].remaining};
    }
    vs_cpolicy__sort(keys, d->keys2, m);

    /* One record per project with simulated results, in index order. */
    size_t nrec = 0;
    for (size_t i = 0, j; i < m; i = j) {
        uint32_t p = keys[i].group;
        for (j = i + 1; j < m && keys[j].group == p; j++)
            ;
        struct vs_rrproj *e = &d->rr_proj[nrec];
        /* The fields reallocate() does not set. */
        e->work = e->tsync = e->sf = e->wbm = 0;
        e->share = st->projects[p].resource_share;
        if (!(e->share > 0))
            e->share = backup_share(st);
        e->nf = s.ncpus * out->frs[p];
        e->kcpu = vs_cpolicy__ncpus(st, p);
        e->mc =
            st->projects[p].max_concurrent > 0 ? (double)st->projects[p].max_concurrent : INFINITY;
        e->p = p;
        e->next = (uint32_t)i;
        e->end = (uint32_t)j;
        /* Results with nothing left finish now (a retire() at work 0, but
         * mostly there are none). */
        e->nextkey = keys[i].key;
        if (e->nextkey <= done_at(0))
            retire(&s, e, 0);
        if (left_k(e) > 0)
            s.act[s.nact++] = &d->rr_proj[nrec++];
    }
    reallocate(&s, 0);

    double t = 0;
    while (s.nact > 0) {
        size_t i = next_event(&s);
        struct vs_rrproj *e = s.act[i];
        t = e->fin;
        sync_project(&s, e, t);
        /* It defined the event: its next result finishes exactly now,
         * which guarantees progress whatever the rounding. */
        e->work = e->nextkey;
        retire(&s, e, t);
        size_t k_after = left_k(e);
        if (k_after == 0) {
            act_remove(&s, i, t);
        } else if (!e->capped && e->alloc <= usable(e)) {
            /* Allocations unchanged: only its per-result rate moves. */
            set_finish_time(&s, e, t);
            continue;
        }
        reallocate(&s, t);
    }
    sync_global(&s, INFINITY);
    /* In index order: sequential over the results (finish is INFINITY
     * only for results that were not simulated). */
    for (size_t r = 0; r < nr; r++) {
        if (out->finish[r] != INFINITY && out->finish[r] > st->results[r].deadline) {
            out->deadline_missed[r] = true;
            out->deadlines_missed[st->results[r].project]++;
        }
    }

    out->total_shortfall = s.idle;
    out->total_work_before_minq = s.used;
    out->end = st->now + t;
    return 0;
}

int vs_rrsim__run(enum vs_cpolicy policy, const struct vs_cstate *st, struct vs_cpolicy_ws *ws,
                  struct vs_rrsim_out *out)
{
    return rrsim_run(policy, st, ws, out, false);
}

int vs_rrsim__run_states(enum vs_cpolicy policy, const struct vs_cstate *st,
                         struct vs_cpolicy_ws *ws, struct vs_rrsim_out *out)
{
    return rrsim_run(policy, st, ws, out, true);
}

int vs_rrsim_run(enum vs_cpolicy policy, const struct vs_cstate *st, struct vs_cpolicy_ws *ws,
                 struct vs_rrsim_out *out)
{
    if ((int)policy < 0 || (int)policy >= VS_CPOLICY_COUNT || vs_cstate_validate(st) != 0 || !ws ||
        !ws->d)
        return VS_EINVAL;
    return vs_rrsim__run(policy, st, ws, out);
}
