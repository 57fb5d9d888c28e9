/*
 * The simulated host's results and their books: the list of running results,
 * CPU slots, timeline segments, arrival and completion (with the report
 * that completion queues for the server), enforcement's actions carried out
 * on them, and the closing of the books at the end of a run.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host_sim.h"
#include "volsched/alloc.h"

/* A result's task becomes, or stops being, RUNNING (while not done). The
 * list is short (about NCPUS), so a shift is cheap. */
static void run_begin(struct sim *x, size_t r)
{
    size_t k = x->nrun++;
    for (; k > 0 && x->run[k - 1] > r; k--)
        x->run[k] = x->run[k - 1];
    x->run[k] = r;
    x->running[x->st.results[r].project]++;
}

void vs_sim__run_end(struct sim *x, size_t r)
{
    size_t k = 0;
    while (k < x->nrun && x->run[k] != r)
        k++;
    if (VS_NEVER(k == x->nrun))
        return;
    x->nrun--;
    for (; k < x->nrun; k++)
        x->run[k] = x->run[k + 1];
    x->running[x->st.results[r].project]--;
}

/* ---------------------------------------------------------------- timeline */

void vs_sim__seg_emit(struct sim *x, size_t r)
{
    struct job *j = &x->jobs[r];
    if (j->seg_start < 0)
        return;
    struct vs_tl_segment g = {
        .t0 = j->seg_start,
        .t1 = x->st.now,
        .cpu = j->cpu,
        .project = (int32_t)x->st.results[r].project,
        .job = j->id,
    };
    vs_timeline_add_segment(x->tl, &g);
    j->seg_start = -1;
}

/* ---------------------------------------------------------------- CPU slots */

static int slot_take(struct sim *x)
{
    for (int i = 0; i < x->nslots; i++) {
        if (!x->slot_used[i]) {
            x->slot_used[i] = true;
            return i;
        }
    }
    /* More running than CPUs: the policy overcommitted. Draw it on an extra
     * row rather than hide it. */
    x->slot_used = vs_xreallocarray(x->slot_used, (size_t)x->nslots + 1, sizeof(bool));
    x->slot_used[x->nslots] = true;
    return x->nslots++;
}

void vs_sim__slot_give(struct sim *x, int i)
{
    if (i >= 0)
        x->slot_used[i] = false;
}

/* ---------------------------------------------------------------- results */

void vs_sim__add_result(struct sim *x, size_t p, double len, double deadline)
{
    if (x->st.nresults == x->cap) {
        x->cap = x->cap ? x->cap * 2 : 64;
        x->st.results = vs_xreallocarray(x->st.results, x->cap, sizeof(*x->st.results));
        x->jobs = vs_xreallocarray(x->jobs, x->cap, sizeof(*x->jobs));
        x->run = vs_xreallocarray(x->run, x->cap, sizeof(*x->run));
    }
    size_t r = x->st.nresults++;
    struct vs_cresult *res = &x->st.results[r];
    memset(res, 0, sizeof(*res));
    res->name = x->s->projects[p].name;
    res->project = p;
    res->remaining = len;
    if (x->pj[p].estimating)
        res->remaining = x->s->projects[p].est * x->s->projects[p].cpu_time * x->pj[p].dcf;
    res->deadline = deadline;
    res->received = x->st.now;
    res->files = VS_CFILES_READY;
    res->task = VS_CTASK_UNSTARTED;
    x->jobs[r] = (struct job){
        .id = x->next_job_id++, .seg_start = -1, .cpu = -1, .len = len, .left = len, .ext = -1};
    x->pj[p].unfinished++;
    x->have_sched = false;
}

/* Drops finished results from the arrays (they wait in x->reports). */
void vs_sim__compact(struct sim *x)
{
    if (x->ndone == 0)
        return;
    x->ndone = 0;
    /* Nothing moves before the first done result. */
    size_t w = x->done_from;
    size_t k = 0;
    while (k < x->nrun && x->run[k] < w)
        k++;
    x->nrun = k;
    for (size_t r = w + 1; r < x->st.nresults; r++) {
        if (x->st.results[r].done)
            continue;
        x->st.results[w] = x->st.results[r];
        x->jobs[w] = x->jobs[r];
        /* Indexes shift: list the running results again. */
        if (x->st.results[w].task == VS_CTASK_RUNNING)
            x->run[x->nrun++] = w;
        w++;
    }
    x->have_sched = false;
    x->st.nresults = w;
}

/* ---------------------------------------------------------------- estimates */

/*
 * The client's estimate of a result's remaining run time when its project's
 * server misestimates (est != 1), as a BOINC client makes it: the server's
 * estimate (est x C) times the project's duration correction factor, for a
 * started job blended with what its fraction done says (exact here),
 * weighted by that fraction.
 */
double vs_sim__estimate(const struct sim *x, size_t r)
{
    const struct vs_cresult *res = &x->st.results[r];
    const struct job *j = &x->jobs[r];
    const struct vs_scn_project *sp = &x->s->projects[res->project];
    double whole = sp->est * sp->cpu_time * x->pj[res->project].dcf;
    double f = j->len > 0 ? 1 - j->left / j->len : 1;
    if (f < 0)
        f = 0;
    return (1 - f) * (1 - f) * whole + f * j->left;
}

void vs_sim__add_work(struct sim *x, size_t r, double w)
{
    struct vs_cresult *res = &x->st.results[r];
    if (x->pj[res->project].estimating) {
        x->jobs[r].left += w;
        res->remaining = vs_sim__estimate(x, r);
    } else {
        res->remaining += w;
    }
}

/*
 * What the client learns from a completed job. Its duration correction
 * factor (est != 1), by BOINC's client rule (PROJECT::
 * update_duration_correction_factor): from the ratio of the job's run time
 * to the server's estimate, up at once when the corrected estimate was
 * more than 10% short, else down slowly (a tenth of the way; a hundredth
 * when the job took less than a tenth of the estimate). And its
 * cpu_efficiency (cpu_eff < 1), as BOINC's TIME_STATS::
 * update_cpu_efficiency: an exponential average of CPU time over wall time
 * with a time constant of a day.
 */
static void learn(struct sim *x, size_t r)
{
    const struct vs_cresult *res = &x->st.results[r];
    const struct job *j = &x->jobs[r];
    size_t p = res->project;
    struct proj *pj = &x->pj[p];
    const struct vs_scn_project *sp = &x->s->projects[p];
    if (pj->estimating) {
        double raw = j->len / (sp->est * sp->cpu_time);
        double adj = raw / pj->dcf;
        if (adj > 1.1)
            pj->dcf = raw;
        else if (adj < 0.1)
            pj->dcf = 0.99 * pj->dcf + 0.01 * raw;
        else
            pj->dcf = 0.9 * pj->dcf + 0.1 * raw;
        pj->dcf = min2(max2(pj->dcf, 0.01), 100);
        x->cp[p].job_est = sp->est * sp->cpu_time * pj->dcf;
        for (size_t i = 0; i < x->st.nresults; i++)
            if (!x->st.results[i].done && x->st.results[i].project == p)
                x->st.results[i].remaining = vs_sim__estimate(x, i);
    }
    if (x->cpu_eff < 1 && j->run_wall > 0) {
        double w = exp(-j->run_wall / 86400);
        double e = j->run_wall * x->cpu_eff / j->run_wall; /* CPU time / wall time */
        double ce = w * x->st.host.cpu_efficiency + (1 - w) * e;
        x->st.host.cpu_efficiency = min2(max2(ce, 0.01), 1);
    }
}

void vs_sim__complete(struct sim *x, size_t r)
{
    struct vs_cresult *res = &x->st.results[r];
    struct job *j = &x->jobs[r];
    double now = x->st.now;
    bool missed = now > res->deadline;
    seg_close(x, r);
    vs_sim__slot_give(x, j->cpu);
    j->cpu = -1;
    vs_sim__run_end(x, r);
    res->done = true;
    res->remaining = 0;
    x->jobs[r].left = 0;
    learn(x, r);
    if (x->ndone++ == 0 || r < x->done_from)
        x->done_from = r;
    x->pj[res->project].unfinished--;
    /* BOINC-COMPAT: a job done (its upload is instant here) clears the
     * project's work backoff, as the client daemon's finished upload
     * does. */
    x->pj[res->project].no_work_n = 0;
    x->cp[res->project].work_backoff_until = 0;
    vs_metrics_job_end(&x->m, (int)res->project, j->cpu_used, true, missed);
    if (missed && x->tl)
        vs_timeline_add_mark(x->tl, now, (int32_t)res->project, j->id);

    /* Report it at the next RPC to its project, or on its own when it is
     * about to be late (or already is). */
    double D = x->s->projects[res->project].delay_bound;
    double due = max2(now, min2(now + 86400, res->deadline - min2(3600, 0.1 * D)));
    if (x->nreports == x->capreports) {
        x->capreports = x->capreports ? x->capreports * 2 : 64;
        x->reports = vs_xreallocarray(x->reports, x->capreports, sizeof(*x->reports));
    }
    x->reports[x->nreports++] = (struct report){
        .project = (int)res->project,
        .id = j->id,
        .deadline = res->deadline,
        .cpu = j->cpu_used,
        .due = due,
        .ext = j->ext,
    };
    if (due <= now)
        x->cp[res->project].report_overdue = true;
    else if (due < x->end)
        vs_eventq_push(&x->q, due, EV_REPORT_DUE, (int)res->project, 0);
}

/* ---------------------------------------------------------------- actions */

/* Carries out one of enforcement's decisions. */
static void apply_action(struct sim *x, const struct vs_caction *a)
{
    size_t r = a->result;
    if (!VS_ALWAYS(r < x->st.nresults))
        return;
    struct vs_cresult *res = &x->st.results[r];
    struct job *j = &x->jobs[r];
    const struct vs_scn_project *sp = &x->s->projects[res->project];
    switch (a->kind) {
    case VS_CACT_START:
    case VS_CACT_RESUME:
        if (res->task == VS_CTASK_RUNNING)
            break;
        if (res->task == VS_CTASK_REMOVED && sp->resume_cost > 0) {
            /* Restarting from a checkpoint costs the app this much CPU
             * before it makes progress again (seed 000's Einstein@home). */
            vs_sim__add_work(x, r, sp->resume_cost);
            vs_metrics_restart_lost(&x->m, sp->resume_cost);
            vs_sim__note_queued(x, res->project);
        }
        if (res->task == VS_CTASK_UNSTARTED && x->st.now > res->deadline)
            vs_metrics_late_start(&x->m, (int)res->project);
        res->task = VS_CTASK_RUNNING;
        if (!res->done)
            run_begin(x, r);
        res->running_since = x->st.now;
        j->cpu = sp->non_cpu_intensive ? -1 : slot_take(x);
        if (available(x))
            seg_open(x, r);
        break;
    case VS_CACT_SUSPEND_KEEP:
    case VS_CACT_SUSPEND_REMOVE:
        if (res->task != VS_CTASK_RUNNING)
            break;
        if (!res->done)
            vs_sim__run_end(x, r);
        seg_close(x, r);
        vs_sim__slot_give(x, j->cpu);
        j->cpu = -1;
        vs_metrics_preempt(&x->m, (int)res->project);
        if (a->kind == VS_CACT_SUSPEND_KEEP) {
            res->task = VS_CTASK_SUSPENDED;
        } else {
            /* The process exits: work since the last checkpoint is lost. */
            double lost = res->wall_since_checkpoint;
            vs_sim__add_work(x, r, lost * x->cpu_eff);
            vs_metrics_rollback(&x->m, (int)res->project, lost * x->pj[res->project].kcpu);
            res->wall_since_checkpoint = 0;
            res->task = VS_CTASK_REMOVED;
        }
        break;
    }
}

/*
 * Carries out enforcement's decisions. Most passes decide nothing; the loop
 * stays out of line so that such a pass does not pay for saving the
 * registers its body needs (18 instructions a pass).
 */
__attribute__((noinline)) void vs_sim__apply_action_list(struct sim *x,
                                                         const struct vs_cenforce_out *e)
{
    for (size_t i = 0; i < e->n; i++)
        apply_action(x, &e->actions[i]);
}

void vs_sim__note_queued(struct sim *x, size_t p)
{
    double q = 0;
    for (size_t r = 0; r < x->st.nresults; r++) {
        const struct vs_cresult *res = &x->st.results[r];
        if (res->project == p && !res->done)
            q += res->remaining;
    }
    vs_metrics_queued(&x->m, (int)p, q);
}

/* Closes the books at the end of the run. */
void vs_sim__finish(struct sim *x)
{
    for (size_t r = 0; r < x->st.nresults; r++) {
        struct vs_cresult *res = &x->st.results[r];
        if (res->done)
            continue;
        seg_close(x, r);
        if (res->deadline < x->end) {
            vs_metrics_job_end(&x->m, (int)res->project, x->jobs[r].cpu_used, false, true);
            if (x->tl)
                vs_timeline_add_mark(x->tl, res->deadline, (int32_t)res->project, x->jobs[r].id);
        }
    }
    if (x->tl && !available(x))
        vs_timeline_add_off(x->tl, x->off_since, x->end);
    if (x->tl && x->tl->nmark) {
        /* Colour every segment of a job that missed its deadline. */
        bool *missed = vs_xcalloc((size_t)x->next_job_id + 1, sizeof(bool));
        for (size_t i = 0; i < x->tl->nmark; i++)
            missed[x->tl->mark[i].job] = true;
        for (size_t i = 0; i < x->tl->nseg; i++)
            x->tl->seg[i].missed = missed[x->tl->seg[i].job];
        vs_free(missed);
    }
    if (x->tl && x->nslots > x->tl->ncpus)
        x->tl->ncpus = x->nslots;
}
