/*
 * The busy time the client sends as <estimated_delay> for the CPU (BOINC's
 * busy-time estimate, which its round-robin simulation keeps per CPU
 * instance): how long until a CPU first runs out of queued work. The
 * server's deadline rule (seed 004) adds it to a job's runtime, so it
 * decides whether a project gets work at all; one home for it, because the
 * simulated client (src/sim), the client daemon (src/client) and fair's
 * work fetch, which predicts the server's verdict, must all send and
 * expect the same figure.
 *
 * From the simulated finishes: a result still queued at time t keeps its
 * project's job_ncpus CPUs busy (a multi-threaded job all of them), so the
 * host is busy until the CPUs of the results left fall below its count.
 * Sorted by finish, latest first, that is the finish at which the running
 * sum of CPUs reaches ncpus; with one CPU per job, the ncpus-th latest
 * finish. 0 when the queue cannot fill the CPUs now.
 */
#include <math.h>

#include "internal.h"
#include "volsched/client_policy.h"

/* Whether result r still holds CPUs after now in the simulation. */
static bool live(const struct vs_cstate *st, const double *fin, size_t r)
{
    return !st->results[r].done && isfinite(fin[r]) && fin[r] > st->now;
}

/* One CPU per job: the k-th latest finish, with a min-heap of the k latest
 * (O(n log k); most hosts have few CPUs, some 64 or more). */
static double kth_latest(const struct vs_cstate *st, const double *fin, double *h, size_t k)
{
    size_t n = 0;
    for (size_t r = 0; r < st->nresults; r++) {
        if (!live(st, fin, r))
            continue;
        double f = fin[r];
        if (n < k) {
            size_t c = n++;
            while (c > 0 && h[(c - 1) / 2] > f) {
                h[c] = h[(c - 1) / 2];
                c = (c - 1) / 2;
            }
            h[c] = f;
        } else if (f > h[0]) {
            size_t c = 0;
            for (;;) {
                size_t l = 2 * c + 1, m = l + 1, s = c;
                double v = f;
                if (l < n && h[l] < v)
                    s = l, v = h[l];
                if (m < n && h[m] < v)
                    s = m;
                if (s == c)
                    break;
                h[c] = h[s];
                c = s;
            }
            h[c] = f;
        }
    }
    return n < k ? 0 : h[0] - st->now;
}

double vs_rrsim_busy_time(const struct vs_cstate *st, const struct vs_rrsim_out *rr,
                          struct vs_cpolicy_ws *ws)
{
    const double *fin = rr ? rr->finish : NULL;
    size_t k = st->host.ncpus > 0 ? (size_t)st->host.ncpus : 0;
    if (!fin || k == 0 || !ws || !ws->d || st->nresults > ws->d->cap_r)
        return 0;
    struct vs_cpolicy_wsd *d = ws->d;
    if (vs_cpolicy__one_cpu_jobs(st))
        return st->nresults < k ? 0 : kth_latest(st, fin, (double *)d->bt, k);
    /* Latest first: sort by -finish (ascending keys). */
    size_t n = 0;
    for (size_t r = 0; r < st->nresults; r++)
        if (live(st, fin, r))
            d->bt[n++] = (struct vs_cpkey){.group = 0, .idx = (uint32_t)r, .key = -fin[r]};
    vs_cpolicy__sort(d->bt, d->bt2, n);
    double cpus = 0;
    for (size_t i = 0; i < n; i++) {
        size_t r = d->bt[i].idx;
        cpus += vs_cpolicy__ncpus(st, st->results[r].project);
        /* Jobs of a fraction of a CPU: a sum within rounding of k fills k. */
        if (cpus >= (double)k - 1e-9)
            return fin[r] - st->now;
    }
    return 0;
}
