#include "metrics.h"

#include <math.h>
#include <string.h>

#include "volsched/alloc.h"

void vs_metrics_init(struct vs_metrics *m, const struct vs_scenario *s)
{
    memset(m, 0, sizeof(*m));
    m->s = s;
    m->p = vs_xcalloc(s->nprojects ? s->nprojects : 1, sizeof(*m->p));
    m->np = s->nprojects;
    m->ncpus = (double)s->ncpus;
    for (size_t i = 0; i < s->nprojects; i++)
        m->p[i].cpu_intensive = !s->projects[i].non_cpu_intensive;
    vs_metrics__win_init(m);
    for (size_t i = 0; i < s->nprojects; i++)
        m->p[i].kcpu = s->projects[i].ncpus > 0 ? s->projects[i].ncpus : 1;
}

void vs_metrics_cleanup(struct vs_metrics *m)
{
    vs_free(m->p);
    m->p = NULL;
    vs_free(m->win_ring);
    m->win_ring = NULL;
}

void vs_metrics_interval(struct vs_metrics *m, double dt, bool available, const int *running)
{
    if (dt <= 0)
        return;
    if (m->t + dt >= m->next_mark)
        vs_metrics__win_marks(m, dt, available ? running : NULL);
    m->t += dt;
    /* The emulator keeps computing while its host is off; we do not: F only
     * counts time the host could compute. */
    if (available)
        m->capacity += m->ncpus * dt;
    for (size_t i = 0; i < m->np; i++) {
        struct vs_metrics_proj *p = &m->p[i];
        if (running && running[i] > 0) {
            if (p->cpu_intensive)
                p->used += (double)running[i] * p->kcpu * dt;
            p->since = 0;
        } else {
            /* Exact integral of R^2 while R grows from since to since+dt. */
            double r0 = p->since, r1 = p->since + dt;
            p->sq += (r1 * r1 * r1 - r0 * r0 * r0) / 3.0;
            p->since = r1;
        }
    }
}

void vs_metrics_job_end(struct vs_metrics *m, int p, double cpu, bool completed, bool missed)
{
    struct vs_metrics_proj *mp = &m->p[p];
    if (completed)
        mp->completed++;
    if (missed) {
        mp->missed++;
        mp->wasted += cpu;
    } else if (completed) {
        mp->met++;
    }
}

void vs_metrics_job_reported_late(struct vs_metrics *m, int p, double cpu)
{
    m->p[p].wasted_reported += cpu;
}

void vs_metrics_sent(struct vs_metrics *m, int p, int njobs)
{
    m->p[p].sent += njobs;
}

void vs_metrics_rpc(struct vs_metrics *m, int p)
{
    m->p[p].rpcs++;
}

void vs_metrics_preempt(struct vs_metrics *m, int p)
{
    m->preemptions++;
    m->p[p].preemptions++;
}

void vs_metrics_restart_lost(struct vs_metrics *m, double cpu)
{
    m->restart_waste += cpu;
}

static double ratio(double a, double b)
{
    return b > 0 ? a / b : 0;
}

void vs_metrics_finish(const struct vs_metrics *m, struct vs_sim_result *out)
{
    const struct vs_scenario *s = m->s;
    memset(out, 0, sizeof(*out));
    out->nprojects = s->nprojects;
    out->projects = vs_xcalloc(s->nprojects ? s->nprojects : 1, sizeof(*out->projects));
    out->duration = m->t;
    out->capacity = m->capacity;

    /* Sums in name order: floating-point addition is not associative, and
     * the same scenario with its projects listed in another order must
     * give the same figures (an idle_frac of 1.8e-16 instead of 0 on
     * c_stress_20d_avail listed backwards). Equal names keep list order. */
    size_t *ord = vs_xcalloc(s->nprojects ? s->nprojects : 1, sizeof(*ord));
    for (size_t i = 0; i < s->nprojects; i++) {
        size_t k = i;
        for (; k > 0 && strcmp(s->projects[ord[k - 1]].name, s->projects[i].name) > 0; k--)
            ord[k] = ord[k - 1];
        ord[k] = i;
    }
    double U = 0, share_sum = 0, W = 0, Wr = 0, rms_sum = 0;
    size_t ncpu_proj = 0;
    for (size_t k = 0; k < s->nprojects; k++) {
        size_t i = ord[k];
        if (s->projects[i].non_cpu_intensive)
            continue;
        U += m->p[i].used;
        share_sum += s->projects[i].share;
        ncpu_proj++;
    }
    for (size_t k = 0; k < s->nprojects; k++) {
        size_t i = ord[k];
        const struct vs_metrics_proj *mp = &m->p[i];
        struct vs_sim_project_result *pr = &out->projects[i];
        memcpy(pr->name, s->projects[i].name, sizeof(pr->name));
        pr->cpu_time = mp->used;
        pr->cpu_share = ratio(mp->used, U);
        pr->jobs_sent = mp->sent;
        pr->jobs_completed = mp->completed;
        pr->deadlines_met = mp->met;
        pr->deadline_misses = mp->missed;
        pr->wasted = mp->wasted;
        pr->rpcs = mp->rpcs;
        out->rpcs += mp->rpcs;
        out->jobs_sent += mp->sent;
        out->jobs_completed += mp->completed;
        out->deadline_misses += mp->missed;
        W += mp->wasted;
        Wr += mp->wasted_reported;
        if (s->projects[i].non_cpu_intensive)
            continue;
        pr->share_target = ratio(s->projects[i].share, share_sum);
        out->share_violation += fabs(mp->used - U * pr->share_target);
        rms_sum += sqrt(ratio(mp->sq, m->t));
    }
    vs_free(ord);
    out->used = U;
    out->idle_frac = ratio(fmax(0, m->capacity - U), m->capacity);
    out->wasted_frac = ratio(W, m->capacity);
    out->wasted_frac_reported = ratio(Wr, m->capacity);
    out->share_violation = ratio(out->share_violation, U);
    double n = (double)ncpu_proj;
    double x = n > 0 ? rms_sum / (n * n * s->sched_period) : 0;
    out->monotony = x / (1 + x);
    out->rpcs_per_job = ratio((double)out->rpcs, (double)out->jobs_sent);
    out->preemptions = m->preemptions;
    out->restart_waste = m->restart_waste;
    out->restart_waste_frac = ratio(m->restart_waste, m->capacity);
    vs_metrics__win_finish(m, out);
}

void vs_sim_result_cleanup(struct vs_sim_result *r)
{
    vs_free(r->projects);
    r->projects = NULL;
    r->nprojects = 0;
}
