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
 * fair: seed 000's steps with long-term debt for anticipated debt (short-term
 *   debt restarts at zero whenever a project has nothing runnable, so a
 *   project that runs dry between two jobs loses what it was owed; the
 *   share over the run is what long-term debt tracks), ties by name, and
 *   before steps 6-7 each project keeps whole CPUs up to its share of them
 *   (share_floor).
 * wrr (the older client): steps 6-7 only, running first, else received
 *   first.
 *
 * EDF as written is a single walk over the results sorted by (deadline,
 * index): the result the steps pick next is always the earliest unscheduled
 * one whose project still has deadlines_missed > 0. A heap yields that
 * order as far as the walk goes.
 *
 * Results of non-CPU-intensive projects always run and take no CPU.
 *
 * CPUs are counted, not results: a multi-threaded result takes its
 * job_ncpus (a GPU feeder a fraction of one), every step skips a result
 * that does not fit in the CPUs left (no overcommit, in deadline mode
 * too) or whose project has max_concurrent results scheduled already, and
 * looks on for one that does. With one-CPU jobs and no limits (the seeds'
 * model) this is the seeds' count of results.
 */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "volsched/client_policy.h"

/*
 * The schedule being built. The hot loops read and write it through this
 * local copy (written back to the vs_csched_out at the end): the why bytes
 * may alias anything, so counters and pointers kept in *out would be
 * reloaded after every store.
 */
struct sched {
    const struct vs_cresult *res; /* st->results */
    size_t *order;
    uint8_t *why;
    size_t n, ncpu, cap;
    /* CPUs counted (see the header); only when !plain. */
    bool plain;                    /* one-CPU jobs, no max_concurrent: ncpu counts CPUs */
    double used;                   /* CPUs taken */
    const double *kcpu;            /* [nprojects] CPUs a job of each takes */
    const struct vs_cproject *prj; /* for max_concurrent */
    size_t *nsched;                /* [nprojects] results scheduled */
};

/* Whether some CPU is left. */
static inline bool cpus_left(const struct sched *s)
{
    return s->plain ? s->ncpu < s->cap : s->used < (double)s->cap - 1e-9;
}

/* Whether result r fits in the CPUs left and its project's limit. */
static inline bool fits(const struct sched *s, size_t r)
{
    if (s->plain)
        return true;
    size_t p = s->res[r].project;
    return s->used + s->kcpu[p] <= (double)s->cap + 1e-9 &&
           (s->prj[p].max_concurrent <= 0 || s->nsched[p] < (size_t)s->prj[p].max_concurrent);
}

static void take(struct sched *s, size_t r, enum vs_csched_why why)
{
    s->order[s->n++] = r;
    s->why[r] = (uint8_t)why;
    s->ncpu++;
    if (!s->plain) {
        size_t p = s->res[r].project;
        s->used += s->kcpu[p];
        s->nsched[p]++;
    }
}

/* Is result a preferred over b for step 6 (both unscheduled, same project)?
 * A strict total order: deadline and received are never NaN (validated). */
static bool better(const struct vs_cpolicy_rules *rules, const struct vs_cresult *a, size_t ai,
                   const struct vs_cresult *b, size_t bi)
{
    bool ra = a->task == VS_CTASK_RUNNING, rb = b->task == VS_CTASK_RUNNING;
    if (ra != rb)
        return ra;
    if (!ra) {
        double ka = rules->pick_by_deadline ? a->deadline : a->received;
        double kb = rules->pick_by_deadline ? b->deadline : b->received;
        if (ka != kb)
            return ka < kb;
    }
    return ai < bi;
}

/* The EDF walk's order: (group, key, index) ascending; the group and key
 * of a result are edf_group and edf_key. */
static bool edf_before(const struct vs_cpkey *a, const struct vs_cpkey *b)
{
    if (a->group != b->group)
        return a->group < b->group;
    return a->key < b->key || (a->key == b->key && a->idx < b->idx);
}

/* By deadline; but fair puts the hopeless (fair_sched.c) last, shortest
 * remaining first. */
static uint32_t edf_group(bool hopeless_last, const struct vs_cstate *st,
                          const struct vs_cresult *res, double speed)
{
    return hopeless_last && vs_cpolicy__hopeless(st, res, speed);
}

static double edf_key(uint32_t group, const struct vs_cresult *res)
{
    return group ? res->remaining : res->deadline;
}

static void sift_down(struct vs_cpkey *h, size_t n, size_t i)
{
    struct vs_cpkey v = h[i];
    for (size_t c; (c = 2 * i + 1) < n; i = c) {
        if (c + 1 < n && edf_before(&h[c + 1], &h[c]))
            c++;
        if (!edf_before(&h[c], &v))
            break;
        h[i] = h[c];
    }
    h[i] = v;
}

/*
 * Steps 1-3: the next pick is the earliest unscheduled candidate whose
 * project still has deadlines_missed > 0. On a few CPUs one scan of the
 * list per pick is cheapest (the list is in index order, so the first of
 * equal deadlines is the least index). On many, a binary heap over the
 * candidates of projects that miss deadlines yields the walk's (deadline,
 * index) order as far as the walk goes: O(m + k log m) for k of m results,
 * where a full sort cost O(m) radix passes of a large constant.
 */
#define EDF_SCAN_MAX_CPUS 4

static void edf(struct sched *s, const struct vs_cpolicy_rules *rules, const struct vs_cstate *st,
                const struct vs_rrsim_out *rr, const size_t *el, size_t ne,
                struct vs_cpolicy_wsd *d, double payoff, double speed)
{
    int *dm = d->cs_edf_left;
    double *ad = d->cs_debt;
    const bool hopeless_last = rules->edf_hopeless_last, pays = rules->edf_pays_debt;
    /* fair: once any deadline is in danger, EDF over every result (its
     * work fetch admitted jobs by an EDF schedule of the whole queue). */
    for (size_t p = 0; p < st->nprojects; p++)
        dm[p] = rules->own_deadline_mode ? (int)s->cap : rr->deadlines_missed[p];
    if (s->cap <= EDF_SCAN_MAX_CPUS) {
        while (cpus_left(s)) {
            size_t pick = SIZE_MAX;
            uint32_t pg = 0;
            double dl = 0;
            for (size_t i = 0; i < ne; i++) {
                size_t r = el[i];
                if (s->why[r] != VS_CSCHED_NO || dm[s->res[r].project] <= 0 || !fits(s, r))
                    continue;
                uint32_t g = edf_group(hopeless_last, st, &s->res[r], speed);
                double k = edf_key(g, &s->res[r]);
                if (pick == SIZE_MAX || g < pg || (g == pg && k < dl)) {
                    pick = r;
                    pg = g;
                    dl = k;
                }
            }
            if (pick == SIZE_MAX)
                break;
            size_t p = s->res[pick].project;
            take(s, pick, VS_CSCHED_EDF);
            dm[p]--;
            if (pays)
                ad[p] -= payoff;
        }
        return;
    }
    struct vs_cpkey *h = d->keys;
    size_t m = 0;
    for (size_t i = 0; i < ne; i++) {
        const struct vs_cresult *res = &s->res[el[i]];
        if (dm[res->project] > 0) {
            uint32_t g = edf_group(hopeless_last, st, res, speed);
            h[m++] = (struct vs_cpkey){.group = g, .idx = (uint32_t)el[i], .key = edf_key(g, res)};
        }
    }
    for (size_t i = m / 2; i-- > 0;)
        sift_down(h, m, i);
    while (m > 0 && cpus_left(s)) {
        size_t r = h[0].idx, p = s->res[r].project;
        h[0] = h[--m];
        sift_down(h, m, 0);
        /* A result that does not fit now never will: CPUs only fill up. */
        if (dm[p] <= 0 || !fits(s, r))
            continue;
        take(s, r, VS_CSCHED_EDF);
        dm[p]--;
        if (pays)
            ad[p] -= payoff;
    }
}

/*
 * Steps 6-7 over a short list: each pick is one scan of the unscheduled
 * candidates for the project with the greatest anticipated debt (ties: least
 * index) and its preferred result. A project that loses to the leader when
 * its first result is seen never leads later (the order of projects is
 * strict and total: ad is never NaN), so the leader's pick was compared
 * with all its results.
 */
/* Whether project a goes before b on equal anticipated debt: the least
 * index, but for fair the name (never the position in the list). */
static bool tie_first(const struct vs_cstate *st, const struct vs_cpolicy_rules *rules, size_t a,
                      size_t b)
{
    if (rules->ties_by_name) {
        const char *na = st->projects[a].name, *nb = st->projects[b].name;
        int c = strcmp(na ? na : "", nb ? nb : "");
        if (c != 0)
            return c < 0;
    }
    return a < b;
}

/* One candidate of a step 6 scan: result r becomes the pick when its
 * project leads (the greatest anticipated debt, ties by tie_first) or it is
 * the leading project's preferred result (better). best == np: none yet. */
static inline void consider(const struct sched *s, const struct vs_cstate *st,
                            const struct vs_cpolicy_rules *rules, const double *ad, size_t np,
                            size_t r, size_t *best, size_t *pick)
{
    size_t p = s->res[r].project, b = *best;
    if (b == np || ad[p] > ad[b] || (ad[p] == ad[b] && p != b && tie_first(st, rules, p, b))) {
        *best = p;
        *pick = r;
    } else if (p == b && better(rules, &s->res[r], r, &s->res[*pick], *pick)) {
        *pick = r;
    }
}

static void debt_few(struct sched *s, const struct vs_cstate *st,
                     const struct vs_cpolicy_rules *rules, size_t np, const size_t *el, size_t ne,
                     double *ad, double payoff)
{
    while (cpus_left(s)) {
        size_t best = np, pick = 0;
        for (size_t i = 0; i < ne; i++) {
            size_t r = el[i];
            if (s->why[r] != VS_CSCHED_NO || !fits(s, r))
                continue;
            consider(s, st, rules, ad, np, r, &best, &pick);
        }
        if (best == np)
            break;
        take(s, pick, VS_CSCHED_DEBT);
        ad[best] -= payoff;
    }
}

/*
 * Steps 6-7 over a long list: the unscheduled candidates grouped by project
 * (a counting sort, index order kept), then each pick scans the projects
 * and one group.
 */
static void debt_many(struct sched *s, const struct vs_cstate *st,
                      const struct vs_cpolicy_rules *rules, size_t np, const size_t *el, size_t ne,
                      struct vs_cpolicy_wsd *d, double payoff)
{
    size_t *avail = d->cs_avail, *gstart = d->cs_gstart, *gfill = d->cs_gend;
    /* keys is free once EDF is done; a vs_cpkey is larger than a size_t,
     * so its storage holds nresults indexes. */
    size_t *group = (size_t *)d->keys;
    double *ad = d->cs_debt;
    for (size_t p = 0; p < np; p++)
        avail[p] = 0;
    for (size_t i = 0; i < ne; i++) {
        if (s->why[el[i]] == VS_CSCHED_NO)
            avail[s->res[el[i]].project]++;
    }
    size_t off = 0;
    for (size_t p = 0; p < np; p++) {
        gstart[p] = gfill[p] = off;
        off += avail[p];
    }
    for (size_t i = 0; i < ne; i++) {
        if (s->why[el[i]] == VS_CSCHED_NO)
            group[gfill[s->res[el[i]].project]++] = el[i];
    }
    while (cpus_left(s)) {
        size_t best = np;
        for (size_t p = 0; p < np; p++) {
            if (avail[p] > 0 &&
                (best == np || ad[p] > ad[best] ||
                 (rules->ties_by_name && ad[p] == ad[best] && tie_first(st, rules, p, best))))
                best = p;
        }
        if (best == np)
            break;
        size_t pick = SIZE_MAX;
        for (size_t i = gstart[best]; i < gfill[best]; i++) {
            size_t r = group[i];
            if (s->why[r] != VS_CSCHED_NO)
                continue;
            if (pick == SIZE_MAX || better(rules, &s->res[r], r, &s->res[pick], pick))
                pick = r;
        }
        if (pick != SIZE_MAX && !fits(s, pick)) {
            /* Its jobs no longer fit (CPUs or max_concurrent): none of
             * them will in this schedule. */
            avail[best] = 0;
            continue;
        }
        if (VS_NEVER(pick == SIZE_MAX))
            break;
        take(s, pick, VS_CSCHED_DEBT);
        avail[best]--;
        ad[best] -= payoff;
    }
}

/*
 * fair, before the round-robin: each project with runnable results keeps
 * whole CPUs up to its share of them, floor(ncpus x share / the shares of
 * the projects with runnable results), greatest anticipated debt first.
 * Its work fetch queued only what that share finishes by the deadlines; a
 * CPU the round-robin handed to a project owed a little more (a 1-hour job
 * then keeps it for its period) would make those jobs miss.
 */
static void share_floor(struct sched *s, const struct vs_cstate *st,
                        const struct vs_cpolicy_rules *rules, size_t np, const size_t *el,
                        size_t ne, struct vs_cpolicy_wsd *d, double payoff)
{
    size_t *held = d->cs_held;
    double *want = d->cs_want, *ad = d->cs_debt, shares = 0;
    for (size_t p = 0; p < np; p++) {
        held[p] = 0;
        want[p] = 0;
    }
    for (size_t i = 0; i < ne; i++) {
        size_t p = s->res[el[i]].project;
        if (want[p] == 0) {
            want[p] = 1;
            shares += st->projects[p].resource_share;
        }
        if (s->why[el[i]] != VS_CSCHED_NO)
            held[p]++;
    }
    if (!(shares > 0))
        return;
    /* (In CPUs: a multi-threaded project's whole CPUs are jobs of its
     * job_ncpus each.) */
    for (size_t p = 0; p < np; p++)
        if (want[p] > 0)
            want[p] = floor(s->cap * st->projects[p].resource_share / shares + 1e-9);
    if (!s->plain)
        for (size_t p = 0; p < np; p++)
            if (want[p] > 0)
                want[p] = floor(want[p] / s->kcpu[p] + 1e-9);
    while (cpus_left(s)) {
        size_t best = np, pick = 0;
        for (size_t i = 0; i < ne; i++) {
            size_t r = el[i], p = s->res[r].project;
            if (s->why[r] != VS_CSCHED_NO || (double)held[p] >= want[p] || !fits(s, r))
                continue;
            consider(s, st, rules, ad, np, r, &best, &pick);
        }
        if (best == np)
            break;
        take(s, pick, VS_CSCHED_DEBT);
        held[best]++;
        ad[best] -= payoff;
    }
}

int vs_csched__run(enum vs_cpolicy policy, const struct vs_cstate *st,
                   const struct vs_rrsim_out *rr, struct vs_cpolicy_ws *ws,
                   struct vs_csched_out *out)
{
    size_t np = st->nprojects, nr = st->nresults;
    struct vs_cpolicy_wsd *d = ws->d;
    vs_cpolicy__reserve(ws, np, nr);
    const struct vs_cpolicy_rules *rules = vs_cpolicy__rules(policy);

    struct sched s = {
        .res = st->results, .order = d->sc_order, .why = d->sc_why, .cap = (size_t)st->host.ncpus};
    s.plain = vs_cpolicy__one_cpu_jobs(st);
    if (!s.plain) {
        double *kc = d->cs_job_cpus;
        for (size_t p = 0; p < np; p++) {
            kc[p] = vs_cpolicy__ncpus(st, p);
            d->cs_nsched[p] = 0;
        }
        s.kcpu = kc;
        s.nsched = d->cs_nsched;
        s.prj = st->projects;
    }
    const struct vs_cproject *prj = st->projects;
    const double now = st->now, period = st->host.sched_period;
    const double payoff = period / st->host.ncpus;
    const double speed = vs_cpolicy__speed(&st->host);
    /* Anticipated debts: short-term debt, less the payoff of each CPU
     * given below. Never NaN: std is a number and payoff finite. */
    double *ad = d->cs_debt;
    for (size_t p = 0; p < np; p++)
        ad[p] = rules->debt_is_ltd ? prj[p].ltd : prj[p].std;
    /* The candidates: runnable results of CPU-intensive projects, in index
     * order. Every later step walks this list, not the whole queue; step 5
     * walks the shorter list of those inside their first period (keys2 is
     * free: nothing here sorts). */
    size_t *el = d->res_list, ne = 0;
    size_t *young = (size_t *)d->keys2, nyoung = 0;
    const bool period_rule = rules->period_rule, spare = rules->spare_cpus_only;
    const bool keep_finishing = rules->keep_finishing;
    /* fair's oversized results (internal.h) run only on CPUs left free at
     * the end, unless nothing else can run: then they are the candidates.
     * They are kept at the tail of el (el has room for every result). */
    const double share_sum =
        rules->spare_cpus_only || rules->own_deadline_mode ? vs_cpolicy__share_sum(st) : 0;
    size_t nbig = 0;

    /* Steps 1-3 are needed when the simulation says some project misses
     * deadlines (checked per project, not per result: when no such project
     * has a candidate, edf() finds none and picks nothing, as if never
     * called); for fair only when the slack is not ample (fair_sched.c,
     * which uses the sort keys: before the candidate loop below). */
    bool any_dm = false;
    if (rr && rules->deadline_aware) {
        const int *dmv = rr->deadlines_missed;
        for (size_t p = 0; p < np && !any_dm; p++)
            any_dm = dmv[p] > 0;
    }
    if (rules->own_deadline_mode) {
        if (any_dm && vs_csched__fair_slack_ample(st, d, speed, share_sum))
            any_dm = false;
        if (!any_dm && rr)
            any_dm = vs_csched__fair_urgent(st, speed, share_sum);
    }

    /* One pass: non-CPU-intensive results first, as they always run beside
     * the CPUs; the others become candidates. */
    for (size_t r = 0; r < nr; r++) {
        const struct vs_cresult *res = &s.res[r];
        s.why[r] = VS_CSCHED_NO;
        if (!vs_cpolicy__runnable(st, res) || vs_cpolicy__abandoned_if(spare, st, res, speed))
            continue;
        /* fair starts a backup project's (R = 0) results, like oversized
         * ones, only on CPUs nothing else uses; once started, they are
         * scheduled like any other (step 5 keeps them for a period). A
         * lost result (internal.h) runs only there too. */
        if (vs_cpolicy__oversized_if(spare, st, res, speed, share_sum) ||
            (spare && !prj[res->project].non_cpu_intensive &&
             (vs_cpolicy__lost_if(spare, st, res, speed) ||
              (res->task == VS_CTASK_UNSTARTED && !(prj[res->project].resource_share > 0))))) {
            el[nr - 1 - nbig++] = r;
            continue;
        }
        size_t p = res->project;
        if (prj[p].non_cpu_intensive) {
            s.order[s.n++] = r;
            s.why[r] = VS_CSCHED_NONCPU;
            continue;
        }
        /* fair does not preempt a result about to end (a hundredth of a
         * period): it would wait out another's period for a moment's
         * work, and miss a deadline it was meeting. */
        if (keep_finishing && res->task == VS_CTASK_RUNNING &&
            res->remaining <= 0.01 * period * speed && cpus_left(&s) && fits(&s, r)) {
            take(&s, r, VS_CSCHED_PERIOD);
            continue;
        }
        el[ne++] = r;
        if (period_rule && res->task == VS_CTASK_RUNNING && now - res->running_since < period)
            young[nyoung++] = r;
    }

    if (ne == 0 && nbig > 0) {
        /* The tail holds them in descending index order and may overlap
         * the front (nbig > nr / 2): copying one at a time would read
         * places already written. Move the block, then reverse it. */
        memmove(el, el + (nr - nbig), nbig * sizeof(*el));
        for (size_t i = 0, j = nbig - 1; i < j; i++, j--) {
            size_t t = el[i];
            el[i] = el[j];
            el[j] = t;
        }
        ne = nbig;
        nbig = 0;
    }

    /* Steps 1-3: EDF for projects that the simulation says miss deadlines.
     * Checked per project, not per result: when no such project has a
     * candidate, edf() finds none and picks nothing, as if never called. */
    if (any_dm && ne > 0)
        edf(&s, rules, st, rr, el, ne, d, payoff, speed);

    /* Step 5 (seed 000): a result keeps its CPU for a whole period. */
    if (period_rule) {
        for (size_t i = 0; i < nyoung && cpus_left(&s); i++) {
            if (s.why[young[i]] == VS_CSCHED_NO && fits(&s, young[i]))
                take(&s, young[i], VS_CSCHED_PERIOD);
        }
    }

    if (rules->share_floor && cpus_left(&s))
        share_floor(&s, st, rules, np, el, ne, d, payoff);

    /* Steps 6-7: weighted round-robin by anticipated debt. A scan of the
     * list per pick costs about ne; grouping costs about 2 ne + 3 np once,
     * then np plus a group per pick. Both pick the same results. */
    if (cpus_left(&s)) {
        if ((s.cap - (s.ncpu < s.cap ? s.ncpu : s.cap)) * ne <= 4 * (ne + np))
            debt_few(&s, st, rules, np, el, ne, ad, payoff);
        else
            debt_many(&s, st, rules, np, el, ne, d, payoff);
    }
    /* CPUs nothing else uses run oversized results, least first. */
    while (nbig > 0 && cpus_left(&s)) {
        size_t pick = nbig;
        for (size_t i = 0; i < nbig; i++) {
            size_t k = el[nr - 1 - i];
            if (s.why[k] == VS_CSCHED_NO && fits(&s, k) &&
                (pick == nbig || s.res[k].remaining < s.res[el[nr - 1 - pick]].remaining))
                pick = i;
        }
        if (pick == nbig)
            break;
        take(&s, el[nr - 1 - pick], VS_CSCHED_DEBT);
    }
    out->order = s.order;
    out->why = s.why;
    out->n = s.n;
    out->ncpu = s.ncpu;
    return 0;
}

int vs_csched_run(enum vs_cpolicy policy, const struct vs_cstate *st, const struct vs_rrsim_out *rr,
                  struct vs_cpolicy_ws *ws, struct vs_csched_out *out)
{
    if ((int)policy < 0 || (int)policy >= VS_CPOLICY_COUNT || vs_cstate_validate(st) != 0 || !ws ||
        !ws->d || (!rr && vs_cpolicy__rules(policy)->deadline_aware))
        return VS_EINVAL;
    return vs_csched__run(policy, st, rr, ws, out);
}
