/*
 * Seed 003's job limits: config.xml max_wus_in_progress(_gpu) and
 * config_aux.xml <max_jobs_in_progress>, project and per-app, total / cpu /
 * gpu, with per_proc scaling. Counted from the jobs the client says it has
 * in progress plus the jobs sent in this reply. Pure.
 */
#include <limits.h>
#include <string.h>

#include "policy/server/sp_internal.h"

int vs_sp_limits_app_index(const struct vs_sp_job_limits *l, const char *app_name)
{
    if (!l || !app_name)
        return -1;
    for (int i = 0; i < l->n_apps && i < VS_SP_MAX_APP_LIMITS; i++)
        if (strcmp(l->apps[i].app_name, app_name) == 0)
            return i;
    return -1;
}

/* The limit for a host with n processors of the kind; INT_MAX = none. A
 * per-processor limit on a host without that processor allows nothing. */
static int scale(const struct vs_sp_rsc_limit *l, int n)
{
    if (l->jobs <= 0)
        return INT_MAX;
    if (!l->per_proc)
        return l->jobs;
    long long s = (long long)l->jobs * (n > 0 ? n : 0);
    return s > INT_MAX ? INT_MAX : (int)s;
}

static void scale_set(const struct vs_sp_limit_set *set, const int *ninst, int nall, int *out_total,
                      int *out_proc)
{
    /* BOINC never scales the total; here <per_proc/> on a total scales it by
     * all processors (CPUs + GPUs), which is what the seed's wording says. */
    *out_total = scale(&set->total, nall);
    out_proc[VS_SP_CPU] = scale(&set->cpu, ninst[VS_SP_CPU]);
    /* <gpu_limit> applies to each GPU type separately, with its own count. */
    for (int p = 1; p < VS_SP_NPROC; p++)
        out_proc[p] = scale(&set->gpu, ninst[p]);
}

void vs_sp__limits_init(struct vs_sp_state *st)
{
    const struct vs_sp_job_limits *l = &st->cfg->limits;
    int ninst[VS_SP_NPROC];
    int nall = st->ncpus;
    ninst[VS_SP_CPU] = st->ncpus;
    for (int p = 1; p < VS_SP_NPROC; p++) {
        int g = st->host->gpu_count[p];
        ninst[p] = g > 0 && g < 1024 ? g : 0;
        nall += ninst[p];
    }
    scale_set(&l->project, ninst, nall, &st->lim_proj_total, st->lim_proj);
    int napps = l->n_apps < VS_SP_MAX_APP_LIMITS ? l->n_apps : VS_SP_MAX_APP_LIMITS;
    /* Only the apps with limits: the others' rows are never read (an app
     * without a limit set has index -1, vs_sp_limits_app_index), and
     * vs_sp_state_init leaves them uncleared. */
    for (int i = 0; i < napps; i++) {
        scale_set(&l->apps[i], ninst, nall, &st->lim_app_total[i], st->lim_app[i]);
        st->n_app_total[i] = 0;
        for (int p = 0; p < VS_SP_NPROC; p++)
            st->n_app[i][p] = 0;
    }
    st->n_app_limits = napps;

    /* What the client says it holds, not what the store thinks it sent:
     * ghost jobs the client never got do not block it. */
    const struct vs_sp_request *req = st->req;
    for (int i = 0; i < req->n_in_progress; i++) {
        const struct vs_sp_inprog *ip = &req->in_progress[i];
        enum vs_sp_proc p = (unsigned)ip->proc < VS_SP_NPROC ? ip->proc : VS_SP_CPU;
        vs_sp_limits_register(st, vs_sp_limits_app_index(l, ip->app_name), p);
    }
}

bool vs_sp_limits_exceeded(const struct vs_sp_state *st, int idx, enum vs_sp_proc p)
{
    if ((unsigned)p >= VS_SP_NPROC)
        p = VS_SP_CPU;
    if (st->n_proj_total >= st->lim_proj_total || st->n_proj[p] >= st->lim_proj[p])
        return true;
    /* An index past the apps with limits has none (INT_MAX before). */
    if (idx >= 0 && idx < st->n_app_limits &&
        (st->n_app_total[idx] >= st->lim_app_total[idx] ||
         st->n_app[idx][p] >= st->lim_app[idx][p]))
        return true;
    return false;
}

void vs_sp_limits_register(struct vs_sp_state *st, int idx, enum vs_sp_proc p)
{
    if ((unsigned)p >= VS_SP_NPROC)
        p = VS_SP_CPU;
    st->n_proj_total++;
    st->n_proj[p]++;
    if (idx >= 0 && idx < st->n_app_limits) {
        st->n_app_total[idx]++;
        st->n_app[idx][p]++;
    }
}
