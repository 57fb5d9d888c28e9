/*
 * The figures volunteers judge a client by, beside the emulator's
 * (docs/simulator.md "Figures"): each project's least and greatest CPU share
 * over any 7-day window, its peak queued work, preemptions per job, CPU lost
 * to checkpoint rollback, jobs started from zero after their deadline, and
 * the fraction of time the host spent in deadline (EDF) mode.
 *
 * The 7-day windows slide by the hour: at each hour mark the cumulative CPU
 * time of every project (and their sum) goes into a ring of the last 169
 * marks, and each window that closes at a mark gives every CPU-intensive
 * project its share U_p / U of that window. The marks fall between events,
 * so the cumulative values are interpolated exactly (CPU use is constant
 * between two events). A run shorter than 7 days has one window, the run.
 */
#include <math.h>
#include <string.h>

#include "metrics.h"
#include "volsched/alloc.h"

/* Ring slots: VS_WIN_MARKS + 1 marks, each np + 1 values (U last). */
static double *slot(const struct vs_metrics *m, int64_t k)
{
    return m->win_ring + (size_t)(k % (VS_WIN_MARKS + 1)) * (m->np + 1);
}

void vs_metrics__win_init(struct vs_metrics *m)
{
    m->win_ring = vs_xcalloc((size_t)(VS_WIN_MARKS + 1) * (m->np + 1), sizeof(double));
    m->nmarks = 0;
    m->next_mark = 0;
    for (size_t i = 0; i < m->np; i++) {
        m->p[i].win_min = 2;
        m->p[i].win_max = -1;
    }
}

/* Records the mark at d seconds into the coming interval. */
static void mark(struct vs_metrics *m, double d, const int *running)
{
    int64_t k = m->nmarks++;
    double *v = slot(m, k), total = 0;
    for (size_t i = 0; i < m->np; i++) {
        const struct vs_metrics_proj *p = &m->p[i];
        double u = p->used;
        if (running && running[i] > 0 && p->cpu_intensive)
            u += (double)running[i] * d;
        v[i] = u;
        if (p->cpu_intensive)
            total += u;
    }
    v[m->np] = total;
    if (k < VS_WIN_MARKS)
        return;
    const double *o = slot(m, k - VS_WIN_MARKS);
    double U = total - o[m->np];
    if (!(U > 0))
        return; /* nothing ran in the window: no share to speak of */
    for (size_t i = 0; i < m->np; i++) {
        struct vs_metrics_proj *p = &m->p[i];
        if (!p->cpu_intensive)
            continue;
        double f = (v[i] - o[i]) / U;
        if (f < p->win_min)
            p->win_min = f;
        if (f > p->win_max)
            p->win_max = f;
    }
}

void vs_metrics__win_marks(struct vs_metrics *m, double dt, const int *running)
{
    double t1 = m->t + dt;
    while (m->next_mark <= t1) {
        mark(m, m->next_mark - m->t, running);
        m->next_mark = (double)m->nmarks * VS_WIN_STEP;
    }
}

void vs_metrics__win_finish(const struct vs_metrics *m, struct vs_sim_result *out)
{
    double avail = m->ncpus > 0 ? m->capacity / m->ncpus : 0;
    out->edf_frac = avail > 0 ? m->edf_time / avail : 0;
    for (size_t i = 0; i < m->np; i++) {
        const struct vs_metrics_proj *mp = &m->p[i];
        struct vs_sim_project_result *pr = &out->projects[i];
        pr->preemptions = mp->preemptions;
        pr->preemptions_per_job = mp->sent > 0 ? (double)mp->preemptions / (double)mp->sent : 0;
        pr->rollback = mp->rollback;
        pr->late_starts = mp->late_starts;
        pr->peak_queued = mp->peak_queued;
        if (!mp->cpu_intensive)
            continue;
        if (mp->win_max >= 0) {
            pr->share_min_7d = mp->win_min;
            pr->share_max_7d = mp->win_max;
        } else {
            /* No 7-day window closed (a shorter run): the run is the one. */
            pr->share_min_7d = pr->share_max_7d = pr->cpu_share;
        }
    }
}

void vs_metrics_rollback(struct vs_metrics *m, int p, double cpu)
{
    m->p[p].rollback += cpu;
    vs_metrics_restart_lost(m, cpu);
}

void vs_metrics_late_start(struct vs_metrics *m, int p)
{
    m->p[p].late_starts++;
}

void vs_metrics_queued(struct vs_metrics *m, int p, double cpu)
{
    if (cpu > m->p[p].peak_queued)
        m->p[p].peak_queued = cpu;
}

void vs_metrics_edf(struct vs_metrics *m, double dt)
{
    m->edf_time += dt;
}
