/*
 * The policy driver. Each step builds a struct vs_cstate from the real
 * queue and calls vs_cpolicy_step, the very call `volsched sim` makes
 * (include/volsched/client_policy.h says how a driver calls it); then it
 * applies the enforcement actions to processes. The client adds no
 * scheduling logic of its own: what would make a result not runnable
 * (suspended by the user, its project suspended, run mode "never", a
 * temporary exit still waiting) is given to the policy as the result being
 * suspended, and the policy decides what happens to its process.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/json.h"

/* The CPUs a result's job uses: app_config.xml's avg_ncpus for its
 * project, else its app version's (from the server), else 1. */
double vs_client_result_ncpus(struct vs_client *c, const struct cl_result *r)
{
    const struct cl_project *pr = &c->projects[r->project];
    if (pr->app_ncpus > 0)
        return pr->app_ncpus;
    const struct cl_app_version *av = vs_client_result_av(c, r);
    return av && av->avg_ncpus > 0 ? av->avg_ncpus : 1;
}

void vs_client_sched_account(struct vs_client *c, double dt)
{
    if (!(dt > 0) || dt > 3600)
        return;
    for (size_t i = 0; i < c->n_results; i++) {
        struct cl_result *r = &c->results[i];
        if (r->ctask != VS_CTASK_RUNNING || r->state >= RS_COMPUTE_ERROR || r->pid <= 0 ||
            r->stopped || r->quit_pending)
            continue;
        r->wall_since_checkpoint += dt;
        /* Debts count CPU time: a multi-threaded job holds its CPUs. */
        c->projects[r->project].wall_cpu_period += dt * vs_client_result_ncpus(c, r);
    }
}

/* Per project: whether a download of it waits for a retry (one pass over
 * the files per step, not one per result). */
static void deferred_inputs(const struct vs_client *c, bool *out)
{
    for (size_t i = 0; i < c->n_files; i++) {
        const struct cl_file *f = &c->files[i];
        if (!f->is_output && f->status == FS_NOT_PRESENT && f->nfailures > 0 &&
            f->next_try > c->now)
            out[f->project] = true;
    }
}

static void build(struct vs_client *c)
{
    if (c->cap_cprojects < c->n_projects + 1) {
        c->cap_cprojects = c->n_projects + 8;
        c->cprojects = vs_xreallocarray(c->cprojects, c->cap_cprojects, sizeof(*c->cprojects));
    }
    if (c->cap_cresults < c->n_results + 1) {
        c->cap_cresults = c->n_results + 64;
        c->cresults = vs_xreallocarray(c->cresults, c->cap_cresults, sizeof(*c->cresults));
        c->cmap = vs_xreallocarray(c->cmap, c->cap_cresults, sizeof(*c->cmap));
    }
    struct vs_cstate *st = &c->cst;
    memset(st, 0, sizeof(*st));
    st->now = c->now;
    st->last_sched_time = c->last_sched_time > 0 ? c->last_sched_time : c->now;
    st->host.ncpus = vs_client_ncpus(c);
    st->host.on_frac = c->ts.on_frac;
    st->host.active_frac = c->ts.active_frac;
    st->host.cpu_efficiency = vs_client_cpu_efficiency(c);
    /* BOINC's two buffer preferences, as the simulator passes min_queue and
     * extra_queue: fetch below the first, up to the sum */
    st->host.min_queue = c->prefs.work_buf_min_days * 86400.0;
    st->host.extra_queue = c->prefs.work_buf_additional_days * 86400.0;
    st->host.sched_period = c->prefs.cpu_scheduling_period_minutes * 60.0;
    st->host.leave_in_memory = c->prefs.leave_apps_in_memory;
    st->host.flops_per_cpu = c->host.p_fpops;
    bool compute = vs_client_can_compute(c);
    size_t held[VS_CLIENT_MAX_PROJECTS + 1] = {0};
    bool deferred[VS_CLIENT_MAX_PROJECTS + 1] = {false};
    for (size_t i = 0; i < c->n_results; i++)
        if (c->results[i].project < VS_CLIENT_MAX_PROJECTS)
            held[c->results[i].project]++;
    deferred_inputs(c, deferred);
    for (size_t p = 0; p < c->n_projects; p++) {
        const struct cl_project *pr = &c->projects[p];
        struct vs_cproject *cp = &c->cprojects[p];
        memset(cp, 0, sizeof(*cp));
        cp->name = pr->master_url;
        /* 0 is a backup project: the policy's rule for it applies (fetched
         * from and run only when the others leave a CPU idle) */
        cp->resource_share = pr->resource_share;
        cp->std = pr->std;
        cp->ltd = pr->ltd;
        cp->wall_cpu_period = pr->wall_cpu_period;
        cp->suspended = pr->suspended_via_gui;
        /* the work backoff holds back work requests only: the policy
         * still forces a report or a trickle while it lasts */
        cp->min_rpc_time = pr->min_rpc_time;
        cp->work_backoff_until = pr->work_backoff_until;
        /* a project at its cap on tasks (limits.c), or whose files already
         * fill its disk share (disk.c), is not asked for work: what it sent
         * could not be kept, or its inputs not downloaded */
        cp->no_new_work = pr->dont_request_more_work ||
                          (p < VS_CLIENT_MAX_PROJECTS && vs_client_results_full(c, held[p])) ||
                          (pr->disk_share > 0 && pr->disk_usage >= pr->disk_share);
        cp->master_fetch_pending = pr->master_url_fetch_pending;
        cp->latency_limited_until = pr->latency_limited_until;
        cp->non_cpu_intensive = pr->non_cpu_intensive;
        cp->rpc_user_request = pr->sched_rpc_pending;
        cp->trickle_up_pending = pr->trickle_up_pending;
        cp->report_overdue = vs_client_report_due(c, p);
        cp->job_est = fmax(0, pr->job_est);
        cp->job_delay_bound = fmax(0, pr->job_delay_bound);
        cp->max_concurrent = pr->max_concurrent;
        cp->job_ncpus = pr->app_ncpus; /* else from its results, below */
    }
    size_t n = 0;
    for (size_t i = 0; i < c->n_results; i++) {
        struct cl_result *r = &c->results[i];
        if (r->state >= RS_COMPUTE_ERROR || r->abort_pending)
            continue;
        struct vs_cresult *cr = &c->cresults[n];
        memset(cr, 0, sizeof(*cr));
        cr->name = r->name;
        cr->project = r->project;
        cr->remaining = vs_client_remaining(c, r);
        cr->deadline = r->report_deadline;
        cr->received = r->received_time;
        cr->files = r->state == RS_FILES_DOWNLOADED ? VS_CFILES_READY
                    : deferred[r->project]          ? VS_CFILES_DEFERRED
                                                    : VS_CFILES_DOWNLOADING;
        cr->suspended = r->suspended_via_gui || c->projects[r->project].suspended_via_gui ||
                        !compute || c->now < r->restart_after;
        cr->task = r->ctask;
        cr->running_since = r->running_since;
        cr->checkpointed = r->checkpointed;
        cr->checkpoint_time = r->checkpoint_time;
        cr->wall_since_checkpoint = r->wall_since_checkpoint;
        cr->preempt_pending = r->preempt_pending;
        cr->preempt_since = r->preempt_since;
        /* One CPU count per project in the policy: the largest of its
         * results' (a project rarely mixes them). */
        struct vs_cproject *cp = &c->cprojects[r->project];
        if (c->projects[r->project].app_ncpus <= 0) {
            double k = vs_client_result_ncpus(c, r);
            if (k > cp->job_ncpus)
                cp->job_ncpus = k;
        }
        c->cmap[n++] = i;
    }
    st->projects = c->cprojects;
    st->nprojects = c->n_projects;
    st->results = c->cresults;
    st->nresults = n;
}

int vs_client_sched_decide(struct vs_client *c)
{
    build(c);
    int rc = vs_cpolicy_step(c->policy, &c->cst, &c->ws, &c->pout);
    if (rc) {
        vs_client_msg(c, -1, 3, "client policy refused the snapshot: %s", vs_strerror(rc));
        c->have_out = false;
        c->pout.rr.finish = NULL; /* sized for another snapshot (rpc.c reads it) */
        return rc;
    }
    c->have_out = true;
    /* policy-owned state back into the client */
    for (size_t p = 0; p < c->n_projects; p++) {
        c->projects[p].std = c->cprojects[p].std;
        c->projects[p].ltd = c->cprojects[p].ltd;
        c->projects[p].wall_cpu_period = c->cprojects[p].wall_cpu_period;
    }
    for (size_t k = 0; k < c->cst.nresults; k++) {
        struct cl_result *r = &c->results[c->cmap[k]];
        r->preempt_pending = c->cresults[k].preempt_pending;
        r->preempt_since = c->cresults[k].preempt_since;
    }
    return 0;
}

int vs_client_sched_step(struct vs_client *c)
{
    int rc = vs_client_sched_decide(c);
    if (rc)
        return rc;
    const struct vs_cenforce_out *en = &c->pout.enforce;
    for (size_t a = 0; a < en->n; a++) {
        size_t k = en->actions[a].result;
        if (k >= c->cst.nresults)
            continue;
        size_t ri = c->cmap[k];
        struct cl_result *r = &c->results[ri];
        switch (en->actions[a].kind) {
        case VS_CACT_START:
            if (vs_client_task_start(c, ri) != 0) {
                c->results[ri].restart_after = c->now + 60;
                break;
            }
            r = &c->results[ri];
            r->ctask = VS_CTASK_RUNNING;
            r->running_since = c->now;
            break;
        case VS_CACT_RESUME:
            vs_client_task_resume(c, ri);
            r = &c->results[ri];
            r->ctask = VS_CTASK_RUNNING;
            r->running_since = c->now;
            break;
        case VS_CACT_SUSPEND_KEEP:
        case VS_CACT_SUSPEND_REMOVE:
            /* a process that has exited, its exit not yet handled (the
             * next step's event), is not there to preempt: a <quit/> now
             * would make its finished result restart */
            if (r->exit_seen)
                break;
            if (en->actions[a].kind == VS_CACT_SUSPEND_REMOVE) {
                vs_client_task_suspend(c, ri, true);
                r->ctask = VS_CTASK_REMOVED;
                r->wall_since_checkpoint = 0;
                break;
            }
            vs_client_task_suspend(c, ri, false);
            r->ctask = VS_CTASK_SUSPENDED;
            break;
        }
        c->dirty = true;
    }
    c->last_sched_time = c->now;
    c->last_enforce_recheck = isfinite(en->recheck_at) ? en->recheck_at : 0;
    return 0;
}

static const char *files_name(enum vs_cfiles f)
{
    return f == VS_CFILES_READY ? "ready" : f == VS_CFILES_DEFERRED ? "deferred" : "downloading";
}

static const char *task_name(enum vs_ctask t)
{
    switch (t) {
    case VS_CTASK_RUNNING:
        return "running";
    case VS_CTASK_SUSPENDED:
        return "suspended";
    case VS_CTASK_REMOVED:
        return "removed";
    default:
        return "unstarted";
    }
}

int vs_client_explain_json(struct vs_client *c, struct vs_buf *out)
{
    build(c);
    c->pout.rr.finish = NULL; /* for another snapshot now */
    const struct vs_cstate *st = &c->cst;
    struct vs_json j;
    vs_json_init(&j, out, true);
    vs_json_obj_begin(&j);
    vs_json_key(&j, "ncpus");
    vs_json_int(&j, st->host.ncpus);
    vs_json_key(&j, "min_queue");
    vs_json_num(&j, st->host.min_queue);
    vs_json_key(&j, "extra_queue");
    vs_json_num(&j, st->host.extra_queue);
    vs_json_key(&j, "sched_period");
    vs_json_num(&j, st->host.sched_period);
    vs_json_key(&j, "on_frac");
    vs_json_num(&j, st->host.on_frac);
    vs_json_key(&j, "active_frac");
    vs_json_num(&j, st->host.active_frac);
    vs_json_key(&j, "cpu_efficiency");
    vs_json_num(&j, st->host.cpu_efficiency);
    vs_json_key(&j, "leave_in_memory");
    vs_json_bool(&j, st->host.leave_in_memory);
    vs_json_key(&j, "flops_per_cpu");
    vs_json_num(&j, st->host.flops_per_cpu);
    vs_json_key(&j, "last_sched_ago");
    vs_json_num(&j, fmax(0, st->now - st->last_sched_time));
    vs_json_key(&j, "projects");
    vs_json_arr_begin(&j);
    for (size_t p = 0; p < st->nprojects; p++) {
        const struct vs_cproject *cp = &st->projects[p];
        vs_json_obj_begin(&j);
        vs_json_key(&j, "name");
        vs_json_str(&j, cp->name);
        vs_json_key(&j, "resource_share");
        vs_json_num(&j, cp->resource_share);
        vs_json_key(&j, "std");
        vs_json_num(&j, fmin(fmax(cp->std, 0), 86400));
        vs_json_key(&j, "ltd");
        vs_json_num(&j, cp->ltd);
        vs_json_key(&j, "suspended");
        vs_json_bool(&j, cp->suspended);
        vs_json_key(&j, "no_new_work");
        vs_json_bool(&j, cp->no_new_work);
        vs_json_key(&j, "master_fetch_pending");
        vs_json_bool(&j, cp->master_fetch_pending);
        vs_json_key(&j, "non_cpu_intensive");
        vs_json_bool(&j, cp->non_cpu_intensive);
        vs_json_key(&j, "deferred_for");
        vs_json_num(&j, fmax(0, cp->min_rpc_time - st->now));
        vs_json_key(&j, "work_backoff_for");
        vs_json_num(&j, fmax(0, cp->work_backoff_until - st->now));
        vs_json_key(&j, "latency_limited_for");
        vs_json_num(&j, fmax(0, cp->latency_limited_until - st->now));
        vs_json_key(&j, "rpc_user_request");
        vs_json_bool(&j, cp->rpc_user_request);
        vs_json_key(&j, "trickle_up_pending");
        vs_json_bool(&j, cp->trickle_up_pending);
        vs_json_key(&j, "report_overdue");
        vs_json_bool(&j, cp->report_overdue);
        vs_json_key(&j, "job_est");
        vs_json_num(&j, cp->job_est);
        vs_json_key(&j, "job_delay_bound");
        vs_json_num(&j, cp->job_delay_bound);
        vs_json_key(&j, "job_ncpus");
        vs_json_num(&j, cp->job_ncpus);
        vs_json_key(&j, "max_concurrent");
        vs_json_int(&j, cp->max_concurrent);
        vs_json_obj_end(&j);
    }
    vs_json_arr_end(&j);
    vs_json_key(&j, "results");
    vs_json_arr_begin(&j);
    for (size_t k = 0; k < st->nresults; k++) {
        const struct vs_cresult *cr = &st->results[k];
        vs_json_obj_begin(&j);
        vs_json_key(&j, "name");
        vs_json_str(&j, cr->name);
        vs_json_key(&j, "project");
        vs_json_str(&j, st->projects[cr->project].name);
        vs_json_key(&j, "remaining");
        vs_json_num(&j, cr->remaining);
        vs_json_key(&j, "deadline");
        vs_json_num(&j, fmax(0, cr->deadline - st->now));
        vs_json_key(&j, "received");
        vs_json_num(&j, fmax(0, st->now - cr->received));
        vs_json_key(&j, "files");
        vs_json_str(&j, files_name(cr->files));
        vs_json_key(&j, "suspended");
        vs_json_bool(&j, cr->suspended);
        vs_json_key(&j, "task");
        vs_json_str(&j, task_name(cr->task));
        if (cr->task == VS_CTASK_RUNNING) {
            vs_json_key(&j, "running_for");
            vs_json_num(&j, fmax(0, st->now - cr->running_since));
        }
        vs_json_key(&j, "checkpointed");
        vs_json_bool(&j, cr->checkpointed);
        if (cr->checkpointed) {
            vs_json_key(&j, "checkpoint_age");
            vs_json_num(&j, fmax(0, st->now - cr->checkpoint_time));
        }
        vs_json_key(&j, "wall_since_checkpoint");
        vs_json_num(&j, cr->wall_since_checkpoint);
        vs_json_obj_end(&j);
    }
    vs_json_arr_end(&j);
    vs_json_obj_end(&j);
    return vs_json_error(&j);
}
