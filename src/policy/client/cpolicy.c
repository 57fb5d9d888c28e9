/*
 * Client policies: names, snapshot validation, result and project states
 * (seed 000's definitions), the workspace, and the one-pass entry point.
 */
#include <assert.h>
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
    [VS_CPOLICY_FAIR] = "fair",
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
    return "fair, shortfall, debt, wrr";
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
        h->flops_per_cpu < 0 || !isfinite(h->extra_queue) || h->extra_queue < 0)
        return VS_EINVAL;
    if ((st->nprojects && !st->projects) || (st->nresults && !st->results) ||
        st->nprojects > UINT32_MAX || st->nresults > UINT32_MAX)
        return VS_EINVAL;
    for (size_t i = 0; i < st->nprojects; i++) {
        const struct vs_cproject *p = &st->projects[i];
        if (!isfinite(p->resource_share) || p->resource_share < 0 || !isfinite(p->job_ncpus) ||
            p->job_ncpus < 0 || p->max_concurrent < 0 || !isfinite(p->std) || !isfinite(p->ltd) ||
            !isfinite(p->wall_cpu_period) || p->wall_cpu_period < 0 || isnan(p->min_rpc_time) ||
            isnan(p->work_backoff_until) || isnan(p->latency_limited_until))
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
    return vs_cpolicy__runnable(st, &st->results[r]);
}

bool vs_cresult_nearly_runnable(const struct vs_cstate *st, size_t r)
{
    return vs_cpolicy__nearly_runnable(st, &st->results[r]);
}

/* Private bits of the result scan in vs_cproject_states, cleared before
 * the flags are returned: some result's files are downloading / deferred. */
enum { HAS_DOWNLOADING = 0x10000u, HAS_DEFERRED = 0x20000u };

/* The bits that follow from ltd, which the debt update changes. */
#define LTD_BITS (VS_CPS_OVERWORKED | VS_CPS_FETCHABLE | VS_CPS_POT_RUNNABLE)

/* Adds project pr's LTD_BITS to f, which holds all its other bits. */
static inline unsigned with_ltd_bits(const struct vs_cstate *st, const struct vs_cproject *pr,
                                     unsigned f)
{
    if (pr->ltd < -st->host.sched_period)
        f |= VS_CPS_OVERWORKED;
    if (!pr->suspended && !(f & VS_CPS_DEFERRED) && !pr->no_new_work && !(f & VS_CPS_OVERWORKED) &&
        !pr->master_fetch_pending)
        f |= VS_CPS_FETCHABLE;
    if (f & (VS_CPS_RUNNABLE | VS_CPS_DOWNLOADING | VS_CPS_FETCHABLE | VS_CPS_OVERWORKED |
             VS_CPS_LATENCY_LIMITED))
        f |= VS_CPS_POT_RUNNABLE;
    return f;
}

/* vs_cproject_states, and vs_cpolicy__states_sums when sums is not NULL. */
static inline void project_states(const struct vs_cstate *st, unsigned *out_flags,
                                  struct vs_cdebt_sums *sums)
{
    size_t np = st->nprojects;
    const struct vs_cproject *pj = st->projects;
    /* The bits from the projects' own fields, then what the results say
     * about their projects, then the definitions that combine both. */
    for (size_t p = 0; p < np; p++) {
        unsigned f = 0;
        /* Deferred: no work request now (forced RPCs look at min_rpc_time
         * alone: work_fetch.c). */
        if (st->now < pj[p].min_rpc_time || st->now < pj[p].work_backoff_until)
            f |= VS_CPS_DEFERRED;
        if (st->now < pj[p].latency_limited_until)
            f |= VS_CPS_LATENCY_LIMITED;
        out_flags[p] = f;
    }
    for (size_t r = 0; r < st->nresults; r++) {
        const struct vs_cresult *res = &st->results[r];
        if (res->done)
            continue;
        unsigned *f = &out_flags[res->project];
        bool open = !res->suspended && !pj[res->project].suspended;
        if (res->files == VS_CFILES_READY) {
            if (open)
                *f |= VS_CPS_RUNNABLE | VS_CPS_NEARLY_RUNNABLE;
        } else if (res->files == VS_CFILES_DOWNLOADING) {
            *f |= HAS_DOWNLOADING;
            if (open)
                *f |= VS_CPS_NEARLY_RUNNABLE;
        } else {
            *f |= HAS_DEFERRED;
        }
    }
    for (size_t p = 0; p < np; p++) {
        unsigned f = out_flags[p];
        if (!pj[p].suspended && (f & HAS_DOWNLOADING) && !(f & HAS_DEFERRED))
            f |= VS_CPS_DOWNLOADING;
        f = with_ltd_bits(st, &pj[p], f & ~(unsigned)(HAS_DOWNLOADING | HAS_DEFERRED));
        out_flags[p] = f;
        if (sums)
            vs_cdebt__add(sums, &pj[p], f);
    }
}

void vs_cproject_states(const struct vs_cstate *st, unsigned *out_flags)
{
    project_states(st, out_flags, NULL);
}

void vs_cpolicy__states_sums(const struct vs_cstate *st, unsigned *out_flags,
                             struct vs_cdebt_sums *out_sums)
{
    project_states(st, out_flags, out_sums);
}

/* ---------------------------------------------------------------- workspace */

void vs_cpolicy_ws_init(struct vs_cpolicy_ws *ws)
{
    ws->d = VS_NEW(struct vs_cpolicy_wsd);
}

/* clang-format off */
#define P_ARRAYS(X)                                                            \
    X(rr_dm) X(rr_shortfall) X(rr_wbm) X(rr_frs) X(rr_states) X(wf_wrs)        \
    X(wf_prr) X(cs_debt) X(cs_want) X(cs_job_cpus) X(cs_edf_left) X(cs_avail)  \
    X(cs_gstart) X(cs_gend) X(cs_held) X(cs_nsched) X(wf_prio) X(wf_queued)    \
    X(ff_work) X(ff_prio) X(ff_first_free) X(ff_first_dl) X(ff_longest)        \
    X(ff_share) X(ff_count) X(ff_cand) X(ff_memo) X(ff_waits) X(rr_proj)       \
    X(rr_act)
/* clang-format on */
#define R_ARRAYS(X)                                                                                \
    X(rr_finish)                                                                                   \
    X(rr_missed) X(sc_order) X(sc_why) X(en_act) X(keys) X(keys2) X(res_list) X(bt) X(bt2)

void vs_cpolicy_ws_cleanup(struct vs_cpolicy_ws *ws)
{
    struct vs_cpolicy_wsd *d = ws->d;
    if (!d)
        return;
#define FREE_ONE(a) vs_free(d->a);
    P_ARRAYS(FREE_ONE)
    R_ARRAYS(FREE_ONE)
#undef FREE_ONE
    vs_free(d->fair_cpu);
    vs_free(d);
    ws->d = NULL;
}

void vs_cpolicy__grow(struct vs_cpolicy_ws *ws, size_t np, size_t nr)
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

/*
 * The order-preserving map from a double to 64 bits: flip the sign bit of a
 * positive number, every bit of a negative one. -0 becomes +0 first so the
 * two compare equal, as they do as doubles.
 */
static uint64_t order_bits(double x)
{
    x += 0.0;
    uint64_t u;
    memcpy(&u, &x, sizeof(u));
    return (u & 0x8000000000000000ull) ? ~u : u | 0x8000000000000000ull;
}

/*
 * LSD radix sort, 8 bits a pass, stable, so equal keys keep their input
 * order; callers build the keys in index order, which gives the least-index
 * tie-break. Only the digits that differ between keys get a pass (the high
 * bytes usually do not). Groups (project indexes) are sorted last by the
 * same passes over their low bytes.
 */
static uint64_t digit_src(const struct vs_cpkey *k, bool by_group)
{
    return by_group ? (uint64_t)k->group : order_bits(k->key);
}

/* One pass on the digit at shift, whose values all lie in [lo, hi]: only
 * that part of the table is cleared and summed, which for a few hundred
 * keys is most of a pass. */
static void radix_pass(struct vs_cpkey **src, struct vs_cpkey **dst, size_t n, int shift,
                       bool by_group, unsigned lo, unsigned hi)
{
    /* n <= UINT32_MAX (vs_cstate_validate): 32-bit counts. */
    uint32_t count[256];
    memset(&count[lo], 0, (hi - lo + 1) * sizeof(count[0]));
    for (size_t i = 0; i < n; i++)
        count[(digit_src(&(*src)[i], by_group) >> shift) & 0xff]++;
    uint32_t pos = 0;
    for (unsigned b = lo; b <= hi; b++) {
        uint32_t c = count[b];
        count[b] = pos;
        pos += c;
    }
    for (size_t i = 0; i < n; i++)
        (*dst)[count[(digit_src(&(*src)[i], by_group) >> shift) & 0xff]++] = (*src)[i];
    struct vs_cpkey *t = *src;
    *src = *dst;
    *dst = t;
}

static bool key_less(const struct vs_cpkey *a, const struct vs_cpkey *b)
{
    if (a->group != b->group)
        return a->group < b->group;
    if (a->key != b->key)
        return a->key < b->key;
    return a->idx < b->idx;
}

static int key_cmp(const void *a, const void *b)
{
    const struct vs_cpkey *x = a, *y = b;
    return key_less(x, y) ? -1 : key_less(y, x) ? 1 : 0;
}

static void insertion_sort(struct vs_cpkey *keys, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        struct vs_cpkey v = keys[i];
        size_t j = i;
        while (j > 0 && key_less(&v, &keys[j - 1])) {
            keys[j] = keys[j - 1];
            j--;
        }
        keys[j] = v;
    }
}

/*
 * A queue changes little from one pass to the next and grows by appending
 * a server's batch of alike results, so the keys, built in index order,
 * mostly come as a few ascending runs. Up to this many runs a natural merge
 * sort (log2(runs) merging passes, a handful of instructions a key each)
 * beats the radix passes (several passes, each clearing and summing a
 * count table).
 */
#define MERGE_MAX_RUNS 16

/* Stable merge of the sorted a[0..na) and b[0..nb) into out. */
static void merge(const struct vs_cpkey *a, size_t na, const struct vs_cpkey *b, size_t nb,
                  struct vs_cpkey *out)
{
    size_t i = 0, j = 0, o = 0;
    while (i < na && j < nb)
        out[o++] = key_less(&b[j], &a[i]) ? b[j++] : a[i++];
    while (i < na)
        out[o++] = a[i++];
    while (j < nb)
        out[o++] = b[j++];
}

/* Merges the runs that start at start[0 .. nruns) (start[nruns] = n),
 * pairwise, until one is left; tmp holds n keys. */
static void merge_runs(struct vs_cpkey *keys, struct vs_cpkey *tmp, size_t n, size_t *start,
                       size_t nruns)
{
    struct vs_cpkey *src = keys, *dst = tmp;
    while (nruns > 1) {
        size_t w = 0;
        for (size_t r = 0; r < nruns; r += 2) {
            /* start[nruns] = n: an odd last run is copied over. */
            size_t a = start[r], b = start[r + 1], e = r + 2 <= nruns ? start[r + 2] : n;
            merge(src + a, b - a, src + b, e - b, dst + a);
            start[w++] = a;
        }
        start[w] = n;
        nruns = w;
        struct vs_cpkey *t = src;
        src = dst;
        dst = t;
    }
    if (src != keys)
        memcpy(keys, src, n * sizeof(*keys));
}

void vs_cpolicy__sort(struct vs_cpkey *keys, struct vs_cpkey *tmp, size_t n)
{
    if (n < 64) {
        /* Few keys: insertion sort beats the radix passes' fixed cost. */
        insertion_sort(keys, n);
        return;
    }
    /* Find the ascending runs; give up on the first one too many (a
     * shuffled queue gives up within a few dozen keys). */
    size_t start[MERGE_MAX_RUNS + 1] = {0}, nruns = 1;
    for (size_t i = 1; i < n && nruns <= MERGE_MAX_RUNS; i++) {
        if (key_less(&keys[i], &keys[i - 1])) {
            if (nruns < MERGE_MAX_RUNS)
                start[nruns] = i;
            nruns++;
        }
    }
    if (nruns <= MERGE_MAX_RUNS) {
        start[nruns] = n;
        merge_runs(keys, tmp, n, start, nruns);
        return;
    }
    /* Radix passes over the high 32 bits of the key (sign, exponent and 20
     * bits of mantissa: a relative resolution near 1e-6), then the group.
     * A digit that is the same in the AND and the OR of all keys is the
     * same in every key: its pass would move nothing. Else its values lie
     * between its value in the AND and in the OR. */
    uint32_t hand = UINT32_MAX, hor = 0, gand = UINT32_MAX, gor = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t hi = (uint32_t)(order_bits(keys[i].key) >> 32);
        hand &= hi;
        hor |= hi;
        gand &= keys[i].group;
        gor |= keys[i].group;
    }
    struct vs_cpkey *src = keys, *dst = tmp;
    for (int shift = 0; shift < 32; shift += 8) {
        unsigned lo = (hand >> shift) & 0xff, hi = (hor >> shift) & 0xff;
        if (lo != hi)
            radix_pass(&src, &dst, n, 32 + shift, false, lo, hi);
    }
    for (int shift = 0; shift < 32; shift += 8) {
        unsigned lo = (gand >> shift) & 0xff, hi = (gor >> shift) & 0xff;
        if (lo != hi)
            radix_pass(&src, &dst, n, shift, true, lo, hi);
    }
    if (src != keys)
        memcpy(keys, src, n * sizeof(*keys));
    /* Keys equal in (group, high bits) are adjacent and, the passes being
     * stable, in input order; such runs are rare and short except for
     * exactly equal keys, which are already in place (many unstarted
     * results have the same remaining work): finish each run that is not
     * in order already. */
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        uint64_t hi = order_bits(keys[i].key) >> 32;
        bool ordered = true;
        for (; j < n && keys[j].group == keys[i].group && (order_bits(keys[j].key) >> 32) == hi;
             j++) {
            if (key_less(&keys[j], &keys[j - 1]))
                ordered = false;
        }
        if (ordered)
            ;
        else if (j - i > 32)
            qsort(keys + i, j - i, sizeof(*keys), key_cmp);
        else
            insertion_sort(keys + i, j - i);
        i = j;
    }
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

/* The four steps in order, on a reserved workspace; states_ready: the
 * workspace's rr_states hold st's project states already. */
static int run_steps(enum vs_cpolicy policy, struct vs_cstate *st, struct vs_cpolicy_ws *ws,
                     struct vs_cpolicy_out *out, bool states_ready)
{
    int rc = states_ready ? vs_rrsim__run_states(policy, st, ws, &out->rr)
                          : vs_rrsim__run(policy, st, ws, &out->rr);
    if (rc == 0)
        rc = vs_csched__run(policy, st, &out->rr, ws, &out->sched);
    if (rc == 0)
        rc = vs_cenforce__run(policy, st, &out->rr, &out->sched, ws, &out->enforce);
    if (rc == 0)
        rc = vs_cfetch__run(policy, st, &out->rr, ws, &out->fetch);
    return rc;
}

int vs_cpolicy_pass(enum vs_cpolicy policy, struct vs_cstate *st, struct vs_cpolicy_ws *ws,
                    struct vs_cpolicy_out *out)
{
    if ((int)policy < 0 || (int)policy >= VS_CPOLICY_COUNT || !ws || !ws->d || !out ||
        vs_cstate_validate(st) != 0)
        return VS_EINVAL;
    vs_cpolicy__reserve(ws, st->nprojects, st->nresults);
    return run_steps(policy, st, ws, out, false);
}

static int step(enum vs_cpolicy policy, struct vs_cstate *st, struct vs_cpolicy_ws *ws,
                struct vs_cpolicy_out *out)
{
    vs_cpolicy__reserve(ws, st->nprojects, st->nresults);
    unsigned *states = ws->d->rr_states;
    /* One scan of the results for the states of the debt update and of the
     * pass: the update changes ltd, no other input of the states, so only
     * the bits that follow from ltd may change, and only in a project
     * whose OVERWORKED bit flips. */
    struct vs_cdebt_sums sums = {0};
    project_states(st, states, &sums);
    if (vs_cdebt__update(st, states, &sums)) {
        for (size_t p = 0; p < st->nprojects; p++) {
            const struct vs_cproject *pr = &st->projects[p];
            bool ow = pr->ltd < -st->host.sched_period;
            if (ow != ((states[p] & VS_CPS_OVERWORKED) != 0))
                states[p] = with_ltd_bits(st, pr, states[p] & ~LTD_BITS);
        }
    }
    return run_steps(policy, st, ws, out, true);
}

int vs_cpolicy_step(enum vs_cpolicy policy, struct vs_cstate *st, struct vs_cpolicy_ws *ws,
                    struct vs_cpolicy_out *out)
{
    if ((int)policy < 0 || (int)policy >= VS_CPOLICY_COUNT || !ws || !ws->d || !out ||
        vs_cstate_validate(st) != 0)
        return VS_EINVAL;
    return step(policy, st, ws, out);
}

int vs_cpolicy_step_trusted(enum vs_cpolicy policy, struct vs_cstate *st, struct vs_cpolicy_ws *ws,
                            struct vs_cpolicy_out *out)
{
    if ((int)policy < 0 || (int)policy >= VS_CPOLICY_COUNT || !ws || !ws->d || !out || !st)
        return VS_EINVAL;
    /* The caller vouches for the snapshot; debug builds still check it, so
     * the tests catch a driver that breaks the promise. */
    assert(vs_cstate_validate(st) == 0);
    return step(policy, st, ws, out);
}
