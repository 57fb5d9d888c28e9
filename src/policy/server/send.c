/*
 * Filling a work request (seed 004 rule 9): the per-request state, the
 * order the rules run in, what sending a job uses up, when to stop, and the
 * user messages that explain a reply with no work. Pure.
 */
#include <limits.h>
#include <stddef.h>
#include <string.h>

#include "volsched/alloc.h"

#include "policy/server/sp_internal.h"

#define MEGA        1e6
#define MAX_REQ_SEC (28 * VS_SP_DAY) /* BOINC clamps requests to 28 days */

void vs_sp_config_defaults(struct vs_sp_config *c)
{
    memset(c, 0, sizeof *c);
    c->max_wus_to_send = 10;
    c->gpu_multiplier = 1;
    c->max_ncpus = 64;
    /* "7 and later": BOINC 6 clients lack the protocol features we rely on. */
    c->min_core_client_version = 70000;
}

static double clamp_req(double x)
{
    if (!(x > 0)) /* also NaN */
        return 0;
    return x > MAX_REQ_SEC ? MAX_REQ_SEC : x;
}

static double frac(double f)
{
    if (!(f > 0))
        return 1; /* not reported */
    if (f < 0.1)
        return 0.1;
    return f > 1 ? 1 : f;
}

int vs_sp_state_init(struct vs_sp_state *st, const struct vs_sp_config *cfg,
                     const struct vs_sp_host *host, const struct vs_sp_request *req,
                     const struct vs_sp_hav *havs, int n_havs)
{
    if (!st || !cfg || !host || !req || n_havs < 0 || (n_havs > 0 && !havs) ||
        req->n_in_progress < 0 || req->n_ip_results < 0 ||
        (req->n_in_progress > 0 && !req->in_progress) ||
        (req->n_ip_results > 0 && !req->ip_results) || host->n_alt_platforms < 0)
        return VS_EINVAL;
    /* Everything but the tail (the header): arrays read only below their
     * counts. Zeroing sent_wus alone was a third of a simulated host's
     * instructions (one state per scheduler RPC); the rest of the tail was
     * 3.5% of fair's, and more of its wall time. */
    memset(st, 0, offsetof(struct vs_sp_state, lim_app_total));
    st->cfg = cfg;
    st->host = host;
    st->req = req;

    st->ncpus = vs_sp_effective_ncpus(cfg, host);
    st->usable_ram = vs_sp_usable_ram(host);
    st->disk_left = vs_sp_disk_allowed(host);
    st->max_jobs_per_rpc = vs_sp_max_jobs_per_rpc(cfg, host);
    double on = frac(host->on_frac);
    st->avail_frac[VS_SP_CPU] = frac(on * frac(host->active_frac));
    double gpu_active = host->gpu_active_frac > 0 ? host->gpu_active_frac : host->active_frac;
    for (int p = 1; p < VS_SP_NPROC; p++)
        st->avail_frac[p] = frac(on * frac(gpu_active));
    st->hr_class[1] = vs_sp_hr_class(host, 1);
    st->hr_class[2] = vs_sp_hr_class(host, 2);

    /* BOINC-COMPAT: an anonymous-platform client's alternates are ignored. */
    if (host->platform)
        st->platforms[st->n_platforms++] = host->platform;
    bool anon = host->platform && strcmp(host->platform, "anonymous") == 0;
    for (int i = 0; !anon && i < host->n_alt_platforms && host->alt_platforms; i++)
        if (host->alt_platforms[i] && st->n_platforms < VS_SP_MAX_PLATFORMS)
            st->platforms[st->n_platforms++] = host->alt_platforms[i];

    st->seconds_to_fill = clamp_req(req->work_req_seconds);
    for (int p = 0; p < VS_SP_NPROC; p++) {
        /* A GPU the host does not report cannot be asked for. */
        bool present = p == VS_SP_CPU || host->gpu_count[p] > 0;
        st->req_secs[p] = present ? clamp_req(req->req_secs[p]) : 0;
        st->req_instances[p] = present ? clamp_req(req->req_instances[p]) : 0;
        double d = req->estimated_delay[p];
        if (p != VS_SP_CPU && d < 0)
            d = req->estimated_delay[VS_SP_CPU];
        st->est_delay[p] = d > 0 ? d : 0;
        if (st->req_secs[p] > 0)
            st->rsc_spec_request = true;
    }

    vs_sp__limits_init(st);

    if (n_havs > 0) {
        st->cap_havs = n_havs + 4;
        st->havs = vs_xcalloc((size_t)st->cap_havs, sizeof *st->havs);
        memcpy(st->havs, havs, (size_t)n_havs * sizeof *havs);
        st->n_havs = n_havs;
    }
    st->new_day =
        req->prev_rpc_time > 0 && vs_sp_quota_new_day(host->id, req->prev_rpc_time, req->now);
    for (int i = 0; i < st->n_havs; i++) {
        if (st->havs[i].max_jobs_per_day <= 0)
            st->havs[i].max_jobs_per_day = cfg->daily_result_quota;
        if (st->new_day)
            st->havs[i].n_jobs_today = 0;
    }

    st->use_edf = cfg->workload_sim && req->have_ip_results;
    if (st->use_edf)
        vs_sp__edf_init(&st->edf, st->ncpus, req->ip_results, req->n_ip_results,
                        host->work_buf_min > 0 ? host->work_buf_min : 0, st->avail_frac[VS_SP_CPU]);
    return 0;
}

void vs_sp_state_cleanup(struct vs_sp_state *st)
{
    if (!st)
        return;
    vs_free(st->havs);
    st->havs = NULL;
    st->n_havs = st->cap_havs = 0;
    vs_sp__edf_cleanup(&st->edf); /* all-NULL when EDF is not used */
}

bool vs_sp__requested(const struct vs_sp_state *st, enum vs_sp_proc p)
{
    if ((unsigned)p >= VS_SP_NPROC)
        return false;
    if (st->rsc_spec_request)
        return st->req_secs[p] > 0 || st->req_instances[p] > 0;
    return p == VS_SP_CPU && st->seconds_to_fill > 0;
}

bool vs_sp_need_proc(const struct vs_sp_state *st, enum vs_sp_proc p)
{
    if (!vs_sp__requested(st, p))
        return false;
    /* Over the project limit for this resource: stop asking for it. */
    return st->n_proj_total < st->lim_proj_total && st->n_proj[p] < st->lim_proj[p];
}

bool vs_sp_work_needed(const struct vs_sp_state *st)
{
    if (st->njobs_sent >= st->max_jobs_per_rpc)
        return false;
    for (int p = 0; p < VS_SP_NPROC; p++)
        if (vs_sp_need_proc(st, p))
            return true;
    return false;
}

bool vs_sp_scan_stops(enum vs_sp_reason r, unsigned varies)
{
    switch (r) {
    case VS_SP_CLIENT_VERSION:
    case VS_SP_RPC_LIMIT:
        return true;
    case VS_SP_DUP_USER:
    case VS_SP_DUP_HOST:
    case VS_SP_HR_CLASS:
        return false;
    case VS_SP_NO_WORK_WANTED:
    case VS_SP_HR_UNKNOWN:
    case VS_SP_NO_APP_VERSION:
    case VS_SP_OLD_APP_VERSION:
    case VS_SP_NO_GPU:
    case VS_SP_JOB_LIMIT:
    case VS_SP_DAILY_QUOTA:
        return !(varies & VS_SP_VARIES_APP);
    case VS_SP_MEMORY:
        return !(varies & VS_SP_VARIES_MEMORY);
    case VS_SP_DISK:
        return !(varies & VS_SP_VARIES_DISK);
    case VS_SP_DEADLINE:
    case VS_SP_WORKLOAD:
        return !(varies & (VS_SP_VARIES_APP | VS_SP_VARIES_SIZE));
    case VS_SP_OK:
    case VS_SP__NREASONS:
        break;
    }
    return false;
}

static enum vs_sp_reason refuse(struct vs_sp_state *st, enum vs_sp_reason r,
                                struct vs_sp_verdict *v)
{
    v->reason = r;
    if (st->n_refused[r]++ == 0)
        st->first_refusal[r] = *v;
    return r;
}

enum vs_sp_reason vs_sp_check_job(struct vs_sp_state *st, const struct vs_sp_job *job,
                                  struct vs_sp_verdict *out)
{
    struct vs_sp_verdict v;
    enum vs_sp_reason r;
    memset(&v, 0, sizeof v);
    v.app = job->app;
    if (!job->app) {
        v.reason = VS_SP_NO_APP_VERSION;
        *out = v;
        return v.reason;
    }

    /* Cheapest and most common refusals first; the deadline check (which
     * may simulate) last, as BOINC orders them. */
    if (st->njobs_sent >= st->max_jobs_per_rpc) {
        v.limit = st->max_jobs_per_rpc;
        r = refuse(st, VS_SP_RPC_LIMIT, &v);
        goto out;
    }
    if ((r = vs_sp__check_dup(st, job)) != VS_SP_OK) {
        refuse(st, r, &v);
        goto out;
    }
    if ((r = vs_sp__check_hr(st, job, &v)) != VS_SP_OK) {
        refuse(st, r, &v);
        goto out;
    }
    if ((r = vs_sp__choose_version_memo(st, job, &v)) != VS_SP_OK) {
        refuse(st, r, &v);
        goto out;
    }
    v.est_duration = vs_sp_est_duration(st, job, v.av);
    if ((r = vs_sp__check_memory(st, job, &v)) != VS_SP_OK ||
        (r = vs_sp__check_disk(st, job, &v)) != VS_SP_OK ||
        (r = vs_sp__check_deadline(st, job, &v)) != VS_SP_OK) {
        refuse(st, r, &v);
        goto out;
    }
    v.reason = VS_SP_OK;
out:
    *out = v;
    return r;
}

void vs_sp_commit(struct vs_sp_state *st, const struct vs_sp_job *job,
                  const struct vs_sp_verdict *v)
{
    const struct vs_sp_app_version *av = v->av;
    if (!VS_ALWAYS(av && v->reason == VS_SP_OK))
        return;
    enum vs_sp_proc p = v->proc;
    double est = v->est_duration;

    st->n_memo = 0; /* what is left of the request, limits and quota change */
    if (st->njobs_sent < VS_SP_MAX_REPLY_JOBS)
        st->sent_wus[st->njobs_sent] = job->wu_id;
    st->njobs_sent++;

    /* Rule 9: a job covers its duration times the processors it keeps busy
     * (an 8-thread job fills 8 CPU-seconds per second), BOINC issue #4151. */
    if (p == VS_SP_CPU) {
        double ncpus = av->avg_ncpus > 0 ? av->avg_ncpus : 1;
        st->req_secs[p] -= est * ncpus;
        st->req_instances[p] -= ncpus;
        st->est_delay[p] += est * ncpus / st->ncpus;
    } else {
        double use = av->gpu_usage > 0 ? av->gpu_usage : 1;
        int ng = st->host->gpu_count[p] > 0 ? st->host->gpu_count[p] : 1;
        st->req_secs[p] -= est * use;
        st->req_instances[p] -= use;
        st->est_delay[p] += est * use / ng;
    }
    if (st->req_secs[p] < 0)
        st->req_secs[p] = 0;
    if (st->req_instances[p] < 0)
        st->req_instances[p] = 0;
    st->seconds_to_fill -= est;
    if (st->seconds_to_fill < 0)
        st->seconds_to_fill = 0;
    st->disk_left -= job->rsc_disk_bound;

    vs_sp_limits_register(st, job->app->limit_index, p);

    struct vs_sp_hav *hav = vs_sp__hav_find(st, av->id);
    if (!hav) {
        if (st->n_havs == st->cap_havs) {
            st->cap_havs = st->cap_havs ? st->cap_havs * 2 : 8;
            st->havs = vs_xreallocarray(st->havs, (size_t)st->cap_havs, sizeof *st->havs);
        }
        hav = &st->havs[st->n_havs++];
        memset(hav, 0, sizeof *hav);
        hav->app_version_id = av->id;
        hav->max_jobs_per_day = st->cfg->daily_result_quota;
    }
    hav->n_jobs_today++;

    if (st->use_edf && p == VS_SP_CPU) {
        double wbm = st->host->work_buf_min > 0 ? st->host->work_buf_min : 0;
        vs_sp_edf_add(&st->edf, job->delay_bound - wbm, est);
    }
}

bool vs_sp_no_work_because_of_deadlines(const struct vs_sp_state *st)
{
    return st->njobs_sent == 0 &&
           (st->n_refused[VS_SP_DEADLINE] > 0 || st->n_refused[VS_SP_WORKLOAD] > 0);
}

/* ---- messages ---- */

static const char *app_label(const struct vs_sp_app *app)
{
    if (!app)
        return "this application";
    if (app->user_friendly_name && *app->user_friendly_name)
        return app->user_friendly_name;
    return app->name ? app->name : "this application";
}

static const char *gpu_name(enum vs_sp_proc p)
{
    switch (p) {
    case VS_SP_NVIDIA:
        return "NVIDIA";
    case VS_SP_AMD:
        return "AMD";
    case VS_SP_INTEL:
        return "Intel";
    default:
        return "CPU";
    }
}

static int version_str(struct vs_buf *out, int v)
{
    return vs_buf_printf(out, "%d.%d.%d", v / 10000, (v / 100) % 100, v % 100);
}

int vs_sp_verdict_message(const struct vs_sp_state *st, const struct vs_sp_verdict *v,
                          struct vs_buf *out)
{
    const char *app = app_label(v->app);
    int rc = 0;
    switch (v->reason) {
    case VS_SP_OK:
        return vs_buf_puts(out, "OK");
    case VS_SP_CLIENT_VERSION:
        if ((rc = vs_buf_puts(out, "Your BOINC client ")) ||
            (rc = version_str(out, (int)v->have)) ||
            (rc = vs_buf_puts(out, " is too old: this project needs version ")) ||
            (rc = version_str(out, (int)v->need)) ||
            (rc = vs_buf_puts(out, " or later. Please install the current version of BOINC.")))
            return rc;
        return 0;
    case VS_SP_NO_WORK_WANTED:
        return vs_buf_puts(out, "The request for this resource is already filled");
    case VS_SP_RPC_LIMIT:
        return vs_buf_printf(out, "Reached the limit of %d tasks per scheduler request", v->limit);
    case VS_SP_DUP_USER:
        return vs_buf_puts(out, "This project sends each user at most one task of a workunit; "
                                "your account already has the tasks that are available");
    case VS_SP_DUP_HOST:
        return vs_buf_puts(out, "This project sends each computer at most one task of a "
                                "workunit; this computer already has the tasks that are "
                                "available");
    case VS_SP_HR_UNKNOWN:
        return vs_buf_puts(out, "Your computer type is not supported by this project");
    case VS_SP_HR_CLASS:
        return vs_buf_puts(out, "Tasks are committed to other platforms");
    case VS_SP_NO_APP_VERSION:
        return vs_buf_printf(out, "%s is not available for your type of computer.", app);
    case VS_SP_OLD_APP_VERSION:
        return vs_buf_printf(out,
                             "%s has no version for your type of computer at or above the "
                             "minimum version %d.",
                             app, v->limit);
    case VS_SP_NO_GPU:
        return vs_buf_printf(out, "%s needs an %s GPU; none was found on this computer.", app,
                             gpu_name(v->proc));
    case VS_SP_JOB_LIMIT:
        return vs_buf_puts(out, "This computer has reached a limit on tasks in progress");
    case VS_SP_DAILY_QUOTA:
        return vs_buf_printf(out, "This computer has finished a daily quota of %d tasks", v->limit);
    case VS_SP_MEMORY:
        return vs_buf_printf(out, "%s needs %.2f MB RAM but only %.2f MB is available for use.",
                             app, v->need / MEGA, v->have / MEGA);
    case VS_SP_DISK: {
        double have = v->have > 0 ? v->have : 0;
        return vs_buf_printf(out,
                             "%s needs %.2f MB more disk space. You currently have %.2f MB "
                             "available and it needs %.2f MB.",
                             app, (v->need - have) / MEGA, have / MEGA, v->need / MEGA);
    }
    case VS_SP_DEADLINE: {
        double on = st ? frac(st->host->on_frac) : 1, act = st ? frac(st->host->active_frac) : 1;
        return vs_buf_printf(out,
                             "Tasks won't finish in time: BOINC runs %.1f%% of the time; "
                             "computation is enabled %.1f%% of that",
                             100 * on, 100 * act);
    }
    case VS_SP_WORKLOAD:
        return vs_buf_puts(out, "Tasks won't finish in time: the tasks already queued on this "
                                "computer would miss their deadlines");
    case VS_SP__NREASONS:
        break;
    }
    return vs_buf_puts(out, "Unknown reason");
}

int vs_sp_explain(const struct vs_sp_state *st, struct vs_buf *out)
{
    int rc;
    if (st->njobs_sent > 0)
        return 0;
    if ((rc = vs_buf_puts(out, "No tasks sent\n")))
        return rc;
    for (int r = VS_SP_OK + 1; r < VS_SP__NREASONS; r++) {
        /* Internal stops, not something the volunteer can act on. */
        if (r == VS_SP_NO_WORK_WANTED || r == VS_SP_RPC_LIMIT || st->n_refused[r] == 0)
            continue;
        if ((rc = vs_sp_verdict_message(st, &st->first_refusal[r], out)) ||
            (rc = vs_buf_puts(out, "\n")))
            return rc;
    }
    return 0;
}

int vs_sp_reason_delay(enum vs_sp_reason r)
{
    /* BOINC-COMPAT: DELAY_BAD_CLIENT_VERSION and DELAY_NO_WORK_PERM are a
     * day; the temporary no-work delays are 0. */
    return r == VS_SP_CLIENT_VERSION || r == VS_SP_HR_UNKNOWN ? 86400 : 0;
}

int vs_sp_explain_delay(const struct vs_sp_state *st)
{
    int d = 0;
    if (st->njobs_sent > 0)
        return 0;
    for (int r = VS_SP_OK + 1; r < VS_SP__NREASONS; r++)
        if (st->n_refused[r] > 0 && vs_sp_reason_delay(r) > d)
            d = vs_sp_reason_delay(r);
    return d;
}

int vs_sp_reply_delay(const struct vs_sp_state *st)
{
    int d = vs_sp_explain_delay(st);
    if (vs_sp_no_work_because_of_deadlines(st) && d < VS_SP_DEADLINE_DELAY)
        d = VS_SP_DEADLINE_DELAY;
    return d;
}
