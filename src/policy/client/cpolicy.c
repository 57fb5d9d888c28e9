/*
 * Client policies: names, snapshot validation, result and project states
 * (seed 000's definitions), the workspace, and the one-pass entry point.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "volsched/alloc.h"
#include "volsched/client_policy.h"

static const char *const policy_names[VS_CPOLICY_COUNT] = {
    [VS_CPOLICY_SHORTFALL] = "shortfall",
    [VS_CPOLICY_DEBT] = "debt",
    [VS_CPOLICY_WRR] = "wrr",
};

int vs_cpolicy_parse(const char *name, enum vs_cpolicy *out_policy)
{
    if (!name)
        return VS_EINVAL;
    for (int i = 0; i < VS_CPOLICY_COUNT; i++) {
        if (strcmp(name, policy_names[i]) == 0) {
            *out_policy = (enum vs_cpolicy)i;
            return 0;
        }
    }
    return VS_EINVAL;
}

const char *vs_cpolicy_name(enum vs_cpolicy policy)
{
    if ((int)policy < 0 || (int)policy >= VS_CPOLICY_COUNT)
        return "?";
    return policy_names[policy];
}

const char *vs_cpolicy_names(void)
{
    return "shortfall, debt, wrr";
}

static bool fraction_ok(double f)
{
    return isfinite(f) && f > 0 && f <= 1;
}

int vs_cstate_validate(const struct vs_cstate *st)
{
    if (!st || !isfinite(st->now) || isnan(st->last_sched_time))
        return VS_EINVAL;
    const struct vs_chost *h = &st->host;
    if (h->ncpus < 1 || !fraction_ok(h->on_frac) || !fraction_ok(h->active_frac) ||
        !fraction_ok(h->cpu_efficiency) || !isfinite(h->min_queue) || h->min_queue < 0 ||
        !isfinite(h->sched_period) || h->sched_period <= 0 || !isfinite(h->flops_per_cpu) ||
        h->flops_per_cpu < 0)
        return VS_EINVAL;
    if ((st->nprojects && !st->projects) || (st->nresults && !st->results))
        return VS_EINVAL;
    for (size_t i = 0; i < st->nprojects; i++) {
        const struct vs_cproject *p = &st->projects[i];
        if (!isfinite(p->resource_share) || p->resource_share <= 0 || !isfinite(p->std) ||
            !isfinite(p->ltd) || !isfinite(p->wall_cpu_period) || p->wall_cpu_period < 0 ||
            isnan(p->min_rpc_time) || isnan(p->latency_limited_until))
            return VS_EINVAL;
    }
    for (size_t i = 0; i < st->nresults; i++) {
        const struct vs_cresult *r = &st->results[i];
        if (r->project >= st->nprojects || !isfinite(r->remaining) || r->remaining < 0 ||
            isnan(r->deadline) || isnan(r->received) || (unsigned)r->files > VS_CFILES_DEFERRED ||
            (unsigned)r->task > VS_CTASK_REMOVED || isnan(r->running_since) ||
            isnan(r->checkpoint_time) || !isfinite(r->wall_since_checkpoint) ||
            r->wall_since_checkpoint < 0 || isnan(r->preempt_since))
            return VS_EINVAL;
    }
    return 0;
}

bool vs_cresult_runnable(const struct vs_cstate *st, size_t r)
{
    const struct vs_cresult *res = &st->results[r];
    return !res->done && !res->suspended && !st->projects[res->project].suspended &&
           res->files == VS_CFILES_READY;
}

bool vs_cresult_nearly_runnable(const struct vs_cstate *st, size_t r)
{
    const struct vs_cresult *res = &st->results[r];
    return !res->done && !res->suspended && !st->projects[res->project].suspended &&
           res->files != VS_CFILES_DEFERRED;
}

void vs_cproject_states(const struct vs_cstate *st, unsigned *out_flags)
{
    /* First the per-result facts, then the definitions that combine them. */
    enum { HAS_DOWNLOADING = 0x10000u, HAS_DEFERRED = 0x20000u };
    for (size_t p = 0; p < st->nprojects; p++)
        out_flags[p] = 0;
    for (size_t r = 0; r < st->nresults; r++) {
        const struct vs_cresult *res = &st->results[r];
        if (res->done)
            continue;
        unsigned *f = &out_flags[res->project];
        if (vs_cresult_runnable(st, r))
            *f |= VS_CPS_RUNNABLE;
        if (vs_cresult_nearly_runnable(st, r))
            *f |= VS_CPS_NEARLY_RUNNABLE;
        if (res->files == VS_CFILES_DOWNLOADING)
            *f |= HAS_DOWNLOADING;
        else if (res->files == VS_CFILES_DEFERRED)
            *f |= HAS_DEFERRED;
    }
    for (size_t p = 0; p < st->nprojects; p++) {
        const struct vs_cproject *pr = &st->projects[p];
        unsigned f = out_flags[p];
        if (!pr->suspended && (f & HAS_DOWNLOADING) && !(f & HAS_DEFERRED))
            f |= VS_CPS_DOWNLOADING;
        if (st->now < pr->min_rpc_time)
            f |= VS_CPS_DEFERRED;
        if (pr->ltd < -st->host.sched_period)
            f |= VS_CPS_OVERWORKED;
        if (!pr->suspended && !(f & VS_CPS_DEFERRED) && !pr->no_new_work &&
            !(f & VS_CPS_OVERWORKED) && !pr->master_fetch_pending)
            f |= VS_CPS_FETCHABLE;
        if (st->now < pr->latency_limited_until)
            f |= VS_CPS_LATENCY_LIMITED;
        if (f & (VS_CPS_RUNNABLE | VS_CPS_DOWNLOADING | VS_CPS_FETCHABLE | VS_CPS_OVERWORKED |
                 VS_CPS_LATENCY_LIMITED))
            f |= VS_CPS_POT_RUNNABLE;
        out_flags[p] = f & ~(unsigned)(HAS_DOWNLOADING | HAS_DEFERRED);
    }
}

/* ---------------------------------------------------------------- workspace */

void vs_cpolicy_ws_init(struct vs_cpolicy_ws *ws)
{
    ws->d = VS_NEW(struct vs_cpolicy_wsd);
}

#define P_ARRAYS(X)                                                                                \
    X(rr_dm)                                                                                       \
    X(rr_shortfall) X(rr_wbm) X(rr_frs) X(rr_states) X(wf_wrs) X(wf_prr) X(pd0) X(pd1) X(pd2)      \
        X(pd3) X(pz0) X(pz1) X(pz2) X(pz3) X(pi0)
#define R_ARRAYS(X) X(rr_finish) X(rr_missed) X(sc_order) X(sc_why) X(en_act) X(keys) X(rz0)

void vs_cpolicy_ws_cleanup(struct vs_cpolicy_ws *ws)
{
    struct vs_cpolicy_wsd *d = ws->d;
    if (!d)
        return;
#define FREE_ONE(a) vs_free(d->a);
    P_ARRAYS(FREE_ONE)
    R_ARRAYS(FREE_ONE)
#undef FREE_ONE
    vs_free(d);
    ws->d = NULL;
}

void vs_cpolicy__reserve(struct vs_cpolicy_ws *ws, size_t np, size_t nr)
{
    struct vs_cpolicy_wsd *d = ws->d;
    if (np > d->cap_p) {
        size_t cap = np < 16 ? 16 : np + np / 2;
#define GROW(a) d->a = vs_xreallocarray(d->a, cap, sizeof(*d->a));
        P_ARRAYS(GROW)
        d->cap_p = cap;
    }
    if (nr > d->cap_r) {
        size_t cap = nr < 64 ? 64 : nr + nr / 2;
        R_ARRAYS(GROW)
#undef GROW
        d->cap_r = cap;
    }
}

static int key_cmp(const void *a, const void *b)
{
    const struct vs_cpkey *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

void vs_cpolicy__sort(struct vs_cpkey *keys, size_t n)
{
    if (n > 1)
        qsort(keys, n, sizeof(*keys), key_cmp);
}

double vs_cpolicy__speed(const struct vs_chost *h)
{
    return h->on_frac * h->active_frac * h->cpu_efficiency;
}

/* ---------------------------------------------------------------- misc */

double vs_cpolicy_pn_rate(const struct vs_chost *host, double share_frac)
{
    return host->flops_per_cpu * share_frac * host->on_frac * host->active_frac *
           host->cpu_efficiency;
}

double vs_cpolicy_pn_flops(const struct vs_chost *host, double share_frac, double pn_seconds)
{
    return pn_seconds * vs_cpolicy_pn_rate(host, share_frac);
}

int vs_cpolicy_pass(enum vs_cpolicy policy, struct vs_cstate *st, struct vs_cpolicy_ws *ws,
                    struct vs_cpolicy_out *out)
{
    int rc = vs_rrsim_run(policy, st, ws, &out->rr);
    if (rc == 0)
        rc = vs_csched_run(policy, st, &out->rr, ws, &out->sched);
    if (rc == 0)
        rc = vs_cenforce_run(policy, st, &out->rr, &out->sched, ws, &out->enforce);
    if (rc == 0)
        rc = vs_cfetch_run(policy, st, &out->rr, ws, &out->fetch);
    return rc;
}
