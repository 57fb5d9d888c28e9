/*
 * Deadline feasibility. Two forms:
 *
 * - seed 004's check: the queue ahead of the job on its resource
 *   (estimated_delay, grown by each job sent in this reply) plus the job's
 *   estimated wall time must fit in the WU's delay bound;
 * - seed 000's server-side EDF check (config <workload_sim/>, used when the
 *   client lists its queued results): simulate earliest-deadline-first on
 *   the host's CPUs with and without the candidate; send it only if it
 *   meets its deadline and no queued result misses its deadline by more
 *   than it already did.
 *
 * Durations are wall seconds: computing time / (on_frac x active_frac).
 * Deadlines are computation deadlines: report deadline minus the client's
 * minimum queue (work_buf_min), as the client reports early by that much.
 * Each job occupies one CPU in the simulation (BOINC's approximation too).
 */
#include <stdlib.h>
#include <string.h>

#include "volsched/alloc.h"

#include "policy/server/sp_internal.h"

/* Tolerance for "misses by more than before": rounding, not real seconds. */
#define EPS 1e-6

double vs_sp_est_duration(const struct vs_sp_state *st, const struct vs_sp_job *job,
                          const struct vs_sp_app_version *av)
{
    /* BOINC's default when the WU carries no estimate. */
    double fpops = job->rsc_fpops_est > 0 ? job->rsc_fpops_est : 1e12;
    double flops = vs_sp__av_flops(st->host, av);
    enum vs_sp_proc p = (unsigned)av->proc < VS_SP_NPROC ? av->proc : VS_SP_CPU;
    return fpops / flops / st->avail_frac[p];
}

static int cmp_deadline(const void *a, const void *b)
{
    double x = ((const struct vs_sp_edf_job *)a)->deadline;
    double y = ((const struct vs_sp_edf_job *)b)->deadline;
    return (x > y) - (x < y);
}

/* Earliest-free CPU; ncpus is small (<= max_ncpus), a scan is enough. */
static int earliest(const double *cpu_free, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (cpu_free[i] < cpu_free[best])
            best = i;
    return best;
}

/* Snapshots cost (n+1) x ncpus doubles; beyond this the prefix is replayed. */
#define MAX_SNAP 65536u

static void base_misses(struct vs_sp_edf *e)
{
    size_t need = (size_t)(e->n + 1) * (size_t)e->ncpus;
    bool snap = need <= MAX_SNAP;
    if (snap && need > e->snap_cap) {
        size_t cap = e->snap_cap ? e->snap_cap : 256;
        while (cap < need)
            cap *= 2;
        vs_free(e->snap);
        e->snap = vs_xmalloc(cap * sizeof *e->snap);
        e->snap_cap = cap;
    }
    if (!snap) {
        vs_free(e->snap);
        e->snap = NULL;
        e->snap_cap = 0;
    }
    for (int c = 0; c < e->ncpus; c++)
        e->cpu_free[c] = 0;
    for (int i = 0; i < e->n; i++) {
        if (snap)
            memcpy(e->snap + (size_t)i * e->ncpus, e->cpu_free, e->ncpus * sizeof *e->cpu_free);
        int c = earliest(e->cpu_free, e->ncpus);
        double fin = e->cpu_free[c] + e->jobs[i].duration;
        e->cpu_free[c] = fin;
        double miss = fin - e->jobs[i].deadline;
        e->base_miss[i] = miss > 0 ? miss : 0;
    }
    if (snap)
        memcpy(e->snap + (size_t)e->n * e->ncpus, e->cpu_free, e->ncpus * sizeof *e->cpu_free);
}

static void reserve(struct vs_sp_edf *e, int need)
{
    if (need <= e->cap)
        return;
    int cap = e->cap ? e->cap : 16;
    while (cap < need)
        cap *= 2;
    e->jobs = vs_xreallocarray(e->jobs, (size_t)cap, sizeof *e->jobs);
    e->base_miss = vs_xreallocarray(e->base_miss, (size_t)cap, sizeof *e->base_miss);
    e->cap = cap;
}

void vs_sp__edf_init(struct vs_sp_edf *e, int ncpus, const struct vs_sp_ip_result *ip, int n,
                     double work_buf_min, double avail_frac)
{
    memset(e, 0, sizeof *e);
    e->ncpus = ncpus < 1 ? 1 : ncpus;
    e->cpu_free = vs_xcalloc((size_t)e->ncpus, sizeof *e->cpu_free);
    reserve(e, n + 16);
    for (int i = 0; i < n; i++) {
        double rem = ip[i].remaining > 0 ? ip[i].remaining : 0;
        e->jobs[i].deadline = ip[i].deadline - work_buf_min;
        e->jobs[i].duration = rem / avail_frac;
    }
    e->n = n;
    qsort(e->jobs, (size_t)n, sizeof *e->jobs, cmp_deadline);
    base_misses(e);
}

void vs_sp__edf_cleanup(struct vs_sp_edf *e)
{
    vs_free(e->jobs);
    vs_free(e->base_miss);
    vs_free(e->cpu_free);
    vs_free(e->snap);
    memset(e, 0, sizeof *e);
}

enum vs_sp_reason vs_sp_edf_check(struct vs_sp_edf *e, double deadline, double duration)
{
    /* The candidate goes after the queued jobs with the same deadline. */
    int k = 0, hi = e->n;
    while (k < hi) {
        int mid = k + (hi - k) / 2;
        if (e->jobs[mid].deadline <= deadline)
            k = mid + 1;
        else
            hi = mid;
    }
    /* Jobs before k run exactly as in the base schedule and their misses
     * cannot change: start from the CPU state after them. */
    if (e->snap) {
        memcpy(e->cpu_free, e->snap + (size_t)k * e->ncpus, e->ncpus * sizeof *e->cpu_free);
    } else {
        for (int c = 0; c < e->ncpus; c++)
            e->cpu_free[c] = 0;
        for (int i = 0; i < k; i++) {
            int c = earliest(e->cpu_free, e->ncpus);
            e->cpu_free[c] += e->jobs[i].duration;
        }
    }
    int c = earliest(e->cpu_free, e->ncpus);
    e->cpu_free[c] += duration;
    if (e->cpu_free[c] > deadline + EPS)
        return VS_SP_DEADLINE;
    for (int i = k; i < e->n; i++) {
        c = earliest(e->cpu_free, e->ncpus);
        double fin = e->cpu_free[c] + e->jobs[i].duration;
        e->cpu_free[c] = fin;
        double miss = fin - e->jobs[i].deadline;
        if (miss > e->base_miss[i] + EPS)
            return VS_SP_WORKLOAD;
    }
    return VS_SP_OK;
}

void vs_sp_edf_add(struct vs_sp_edf *e, double deadline, double duration)
{
    reserve(e, e->n + 1);
    int k = e->n;
    while (k > 0 && e->jobs[k - 1].deadline > deadline) {
        e->jobs[k] = e->jobs[k - 1];
        k--;
    }
    e->jobs[k].deadline = deadline;
    e->jobs[k].duration = duration;
    e->n++;
    base_misses(e);
}

enum vs_sp_reason vs_sp__check_deadline(struct vs_sp_state *st, const struct vs_sp_job *job,
                                        struct vs_sp_verdict *v)
{
    const struct vs_sp_config *cfg = st->cfg;
    if (cfg->ignore_delay_bound)
        return VS_SP_OK;
    double est = v->est_duration;
    enum vs_sp_proc p = v->proc;

    if (st->use_edf && p == VS_SP_CPU) {
        if (cfg->deadline_exempt_empty_queue && st->edf.n == 0)
            return VS_SP_OK;
        double wbm = st->host->work_buf_min > 0 ? st->host->work_buf_min : 0;
        /* Seed 000: no result whose deadline is sooner than now + min_queue. */
        if (job->delay_bound < wbm) {
            v->need = wbm;
            v->have = job->delay_bound;
            return VS_SP_DEADLINE;
        }
        enum vs_sp_reason r = vs_sp_edf_check(&st->edf, job->delay_bound - wbm, est);
        if (r != VS_SP_OK) {
            v->need = est;
            v->have = job->delay_bound;
        }
        return r;
    }
    double delay = st->est_delay[p];
    if (cfg->deadline_exempt_empty_queue && delay <= 0)
        return VS_SP_OK;
    if (delay + est > job->delay_bound) {
        v->need = delay + est;
        v->have = job->delay_bound;
        return VS_SP_DEADLINE;
    }
    return VS_SP_OK;
}
