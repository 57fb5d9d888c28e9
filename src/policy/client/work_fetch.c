/*
 * Work fetch: how many seconds of work to ask each project for, and which
 * project to ask.
 *
 * shortfall (seed 000):
 *   work_request_size(P) = 0 if P is suspended, deferred, overworked or
 *   no-new-work, else shortfall(P). If total_shortfall > 0: when every
 *   request is 0, ask 1 s of every project that is none of those; when
 *   still all 0, of every project that is not suspended, deferred or
 *   no-new-work (overworked ones included); then, if some request is > 0,
 *   scale the requests so they sum to total_shortfall in proportion to
 *   resource share. Choose, among requests > 0, the greatest
 *   ltd + shortfall(P).
 * debt (seed 002): the same with work_to_fill_buf(P) = (min_queue * ncpus -
 *   work_before_minq(P)) / frs(P) (0 when not positive) in place of
 *   shortfall(P), and min_queue * ncpus - total_work_before_minq in place of
 *   total_shortfall.
 * wrr (the older client): keep at least one result per project and the
 *   buffer (min_queue * ncpus) full: a project that is not suspended,
 *   deferred or no-new-work asks for min_queue * ncpus * frs(P) minus its
 *   queued normalized work, and for at least 1 s when it has no result at
 *   all; when every such part is full but the round-robin simulation still
 *   leaves CPUs idle before min_queue (total_shortfall > 0), those projects
 *   ask for total_shortfall by resource share, the ones that would run on
 *   fewer CPUs than their share (shortfall(P) > 0) first (wrr_fill). Projects without
 *   work are asked first, then the greatest ltd. No deadline is consulted.
 *
 * All policies: a non-CPU-intensive project asks for 1 s when it has no
 * nearly-runnable result (seed 000), 0 otherwise. A pending master file
 * fetch does not zero a request (the pseudo-code does not list it; the
 * driver fetches the master file before the RPC). A scheduler RPC
 * forced by a user request, a trickle-up message or an overdue report goes
 * to that project (in that order of reasons, least index first) and asks
 * for its work_request_size too. The request is converted to
 * project-normalized seconds by dividing by the project's share fraction
 * among potentially runnable projects.
 */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "volsched/client_policy.h"

const char *vs_cfetch_reason_name(enum vs_cfetch_reason reason)
{
    switch (reason) {
    case VS_CFETCH_NONE:
        return "none";
    case VS_CFETCH_USER:
        return "user";
    case VS_CFETCH_TRICKLE:
        return "trickle_up";
    case VS_CFETCH_REPORT_OVERDUE:
        return "report_overdue";
    case VS_CFETCH_WORK:
        return "work";
    }
    return "?";
}

static bool blocked(const struct vs_cproject *p, unsigned flags, bool count_overworked)
{
    /* | rather than ||: two tests instead of four branches. */
    unsigned bits = VS_CPS_DEFERRED | (count_overworked ? VS_CPS_OVERWORKED : 0);
    return (p->suspended | p->no_new_work) || (flags & bits);
}

/* Seed 002's work_to_fill_buf(P). */
static double work_to_fill_buf(const struct vs_cstate *st, const struct vs_rrsim_out *rr, size_t p)
{
    double y = st->host.min_queue * st->host.ncpus - rr->work_before_minq[p];
    if (y <= 0 || rr->frs[p] <= 0)
        return 0;
    return y / rr->frs[p];
}

/* The two fallback rounds and the normalization (seeds 000 and 002). */
static void fallback_and_normalize(const struct vs_cstate *st, const struct vs_rrsim_out *rr,
                                   double *wrs, double total)
{
    if (!(total > 0))
        return;
    for (int round = 0; round < 2; round++) {
        bool any = false;
        for (size_t p = 0; p < st->nprojects && !any; p++)
            any = !st->projects[p].non_cpu_intensive && wrs[p] > 0;
        if (any)
            break;
        for (size_t p = 0; p < st->nprojects; p++) {
            const struct vs_cproject *pr = &st->projects[p];
            if (pr->non_cpu_intensive || blocked(pr, rr->states[p], round == 0))
                continue;
            wrs[p] = 1;
        }
    }
    double shares = 0;
    for (size_t p = 0; p < st->nprojects; p++) {
        if (!st->projects[p].non_cpu_intensive && wrs[p] > 0)
            shares += st->projects[p].resource_share;
    }
    if (shares <= 0)
        return;
    for (size_t p = 0; p < st->nprojects; p++) {
        if (!st->projects[p].non_cpu_intensive && wrs[p] > 0)
            wrs[p] = total * (st->projects[p].resource_share / shares);
    }
}

/*
 * wrr's second rule: keep the buffer full. Each project's own part of the
 * buffer (min_queue * ncpus * frs(P)) can be full while CPUs still go idle
 * before min_queue: one long job fills a project's part but runs on one
 * CPU. Then (the round-robin simulation leaves total_shortfall > 0 and no
 * project asks for anything) the projects that may be asked (not
 * suspended, deferred or no-new-work), those short of their share of CPUs
 * first, ask for total_shortfall in proportion to resource share. No
 * deadline plays any part.
 */
static void wrr_fill(const struct vs_cstate *st, const struct vs_rrsim_out *rr, double *wrs,
                     double eps)
{
    if (!(rr->total_shortfall > eps))
        return;
    /* The projects that would run on fewer CPUs than their share (rr
     * shortfall(P) > 0) are the ones to fill, so that long jobs of one
     * project do not take the idle CPUs from the others; while one of them
     * is deferred, the others wait for it. Only when there is none, any
     * project that may be asked. */
    bool any_short = false;
    for (size_t p = 0; p < st->nprojects; p++) {
        const struct vs_cproject *pr = &st->projects[p];
        if (pr->non_cpu_intensive)
            continue;
        if (wrs[p] > 0)
            return;
        if (!pr->suspended && !pr->no_new_work && rr->shortfall[p] > eps)
            any_short = true;
    }
    double shares = 0;
    for (size_t p = 0; p < st->nprojects; p++) {
        const struct vs_cproject *pr = &st->projects[p];
        if (!pr->non_cpu_intensive && !blocked(pr, rr->states[p], false) &&
            (!any_short || rr->shortfall[p] > eps))
            shares += pr->resource_share;
    }
    if (shares <= 0)
        return;
    for (size_t p = 0; p < st->nprojects; p++) {
        const struct vs_cproject *pr = &st->projects[p];
        if (!pr->non_cpu_intensive && !blocked(pr, rr->states[p], false) &&
            (!any_short || rr->shortfall[p] > eps))
            wrs[p] = rr->total_shortfall * (pr->resource_share / shares);
    }
}

/* wrr: each project's queued (nearly runnable) work in wall seconds. */
static void queued_work(const struct vs_cstate *st, double *queued)
{
    const double speed = vs_cpolicy__speed(&st->host);
    for (size_t p = 0; p < st->nprojects; p++)
        queued[p] = 0;
    for (size_t r = 0; r < st->nresults; r++) {
        const struct vs_cresult *res = &st->results[r];
        if (vs_cpolicy__nearly_runnable(st, res))
            queued[res->project] += res->remaining / speed;
    }
}

/* The most urgent reason to force an RPC to project pr (user request,
 * trickle-up, overdue report, in that order), or VS_CFETCH_NONE. */
static enum vs_cfetch_reason forced_reason(const struct vs_cproject *pr, double now)
{
    if (pr->rpc_user_request)
        return VS_CFETCH_USER;
    /* A backed-off project waits out its deferral; a work backoff holds
     * back only work (the request is then 0: the project is deferred for
     * work, so blocked() gives it none). */
    if (pr->suspended || now < pr->min_rpc_time)
        return VS_CFETCH_NONE;
    if (pr->trickle_up_pending)
        return VS_CFETCH_TRICKLE;
    return pr->report_overdue ? VS_CFETCH_REPORT_OVERDUE : VS_CFETCH_NONE;
}

int vs_cfetch__run(enum vs_cpolicy policy, const struct vs_cstate *st,
                   const struct vs_rrsim_out *rr, struct vs_cpolicy_ws *ws,
                   struct vs_cfetch_out *out)
{
    size_t np = st->nprojects;
    const struct vs_cproject *pj = st->projects;
    const unsigned *states = rr->states;
    struct vs_cpolicy_wsd *d = ws->d;
    const struct vs_cpolicy_rules *rules = vs_cpolicy__rules(policy);
    const enum vs_cfetch_rule rule = rules->fetch;
    double *wrs = d->wf_wrs, *prr = d->wf_prr, *prio = d->wf_prio, *queued = d->wf_queued;
    out->work_request_size = wrs;
    out->prr_frac = prr;
    out->project = -1;
    out->reason = VS_CFETCH_NONE;
    out->request = 0;
    out->request_pn = 0;

    double buffer = 0, eps = 0;
    if (rule == VS_CFETCH_RULE_WRR) {
        queued_work(st, queued);
        buffer = st->host.min_queue * st->host.ncpus;
        /* Below this a difference of work is clock rounding (internal.h). */
        eps = st->host.ncpus * vs_cpolicy__time_eps(st);
    }

    /* Each project's request and priority before the fallback rounds, the
     * share sum among potentially runnable (CPU-intensive) projects, and
     * the forced RPC: the most urgent reason, the least index within it.
     * "Has no nearly-runnable result" is the VS_CPS_NEARLY_RUNNABLE bit
     * unset (rr->states are st's). */
    double prr_sum = 0;
    for (size_t p = 0; p < np; p++) {
        const struct vs_cproject *pr = &pj[p];
        unsigned f = states[p];
        if (pr->rpc_user_request || pr->trickle_up_pending || pr->report_overdue) {
            enum vs_cfetch_reason why = forced_reason(pr, st->now);
            /* fair: within a reason, by name, not by list position. */
            bool first = out->project < 0 || why < out->reason ||
                         (why == out->reason && rules->ties_by_name && pr->name &&
                          pj[out->project].name && strcmp(pr->name, pj[out->project].name) < 0);
            if (why != VS_CFETCH_NONE && first) {
                out->project = (long)p;
                out->reason = why;
            }
        }
        double w = 0, pri = pr->ltd;
        if (pr->non_cpu_intensive) {
            if (!blocked(pr, f, false) && !(f & VS_CPS_NEARLY_RUNNABLE))
                w = 1;
            wrs[p] = w;
            prio[p] = pri;
            continue;
        }
        if (f & VS_CPS_POT_RUNNABLE)
            prr_sum += pr->resource_share;
        switch (rule) {
        case VS_CFETCH_RULE_SHORTFALL:
            if (!blocked(pr, f, true))
                w = rr->shortfall[p];
            pri += rr->shortfall[p];
            break;
        case VS_CFETCH_RULE_FAIR:
            break; /* vs_cfetch__fair_choose below */
        case VS_CFETCH_RULE_DEBT: {
            double fill = work_to_fill_buf(st, rr, p);
            if (!blocked(pr, f, true))
                w = fill;
            pri += fill;
            break;
        }
        case VS_CFETCH_RULE_WRR:
        default: {
            if (blocked(pr, f, false))
                break;
            double want = buffer * rr->frs[p] - queued[p];
            if (!(f & VS_CPS_NEARLY_RUNNABLE)) {
                /* The old client's first rule: one result per project. */
                w = fmax(want, 1);
                pri = INFINITY;
            } else if (want > eps) {
                w = want;
            }
            break;
        }
        }
        wrs[p] = w;
        prio[p] = pri;
    }
    if (rule == VS_CFETCH_RULE_WRR)
        wrr_fill(st, rr, wrs, eps);
    if (rule == VS_CFETCH_RULE_SHORTFALL)
        fallback_and_normalize(st, rr, wrs, rr->total_shortfall);
    else if (rule == VS_CFETCH_RULE_DEBT)
        fallback_and_normalize(st, rr, wrs,
                               st->host.min_queue * st->host.ncpus - rr->total_work_before_minq);

    /* The share fractions, and the work fetch choice: the greatest
     * priority among the final requests > 0, least index on ties. */
    long best = -1;
    for (size_t p = 0; p < np; p++) {
        const struct vs_cproject *pr = &pj[p];
        bool in_prr = (states[p] & VS_CPS_POT_RUNNABLE) && !pr->non_cpu_intensive;
        double den = in_prr ? prr_sum : prr_sum + pr->resource_share;
        prr[p] = den > 0 ? pr->resource_share / den : 0; /* backup projects (R = 0): 0 */
        if (rule != VS_CFETCH_RULE_FAIR && wrs[p] > 0 && (best < 0 || prio[p] > prio[best]))
            best = (long)p;
    }
    if (rule == VS_CFETCH_RULE_FAIR) {
        best = vs_cfetch__fair_choose(st, rr, ws, wrs);
        /* Non-CPU-intensive projects: seed 000's rule, by index. */
        for (size_t p = 0; p < np && best < 0; p++)
            if (pj[p].non_cpu_intensive && wrs[p] > 0)
                best = (long)p;
    }
    /* A forced RPC comes first. */
    if (out->project < 0 && best >= 0) {
        out->project = best;
        out->reason = VS_CFETCH_WORK;
    }
    /* fair asks a forced RPC's project for work only when its work fetch
     * chose that project: the share-cap request alone has passed none of
     * its deadline caps (a 32-hour job with a 48-hour deadline, asked for
     * with every report, shut out the short-deadline projects). */
    if (rule == VS_CFETCH_RULE_FAIR && out->project >= 0 && out->project != best &&
        !pj[out->project].non_cpu_intensive)
        wrs[out->project] = 0;
    if (out->project >= 0) {
        out->request = wrs[out->project];
        /* A backup project (R = 0) has no share to normalize by. */
        double f = prr[out->project];
        out->request_pn = f > 0 ? out->request / f : out->request;
    }
    return 0;
}

int vs_cfetch_run(enum vs_cpolicy policy, const struct vs_cstate *st, const struct vs_rrsim_out *rr,
                  struct vs_cpolicy_ws *ws, struct vs_cfetch_out *out)
{
    if ((int)policy < 0 || (int)policy >= VS_CPOLICY_COUNT || vs_cstate_validate(st) != 0 || !ws ||
        !ws->d || !rr)
        return VS_EINVAL;
    vs_cpolicy__reserve(ws, st->nprojects, st->nresults);
    return vs_cfetch__run(policy, st, rr, ws, out);
}
