/*
 * A realistic host, request, app and job for the server-policy tests: a
 * 4-CPU Linux box at 3 GFLOPS per CPU, 8 GB RAM, 100 GB free, BOINC 7.20.5,
 * asking for one day of CPU work; an app with one x86_64 CPU version; a job
 * of 3.6e12 FLOPs (1200 s on this host), 500 MB RAM, 1 GB disk, 7-day bound.
 * Tests change single fields to reach the edge of one rule.
 */
#ifndef VOLSCHED_TESTS_SP_FIXTURE_H
#define VOLSCHED_TESTS_SP_FIXTURE_H

#include <string.h>

#include "volsched/server_policy.h"

struct fx {
    struct vs_sp_config cfg;
    struct vs_sp_host host;
    struct vs_sp_request req;
    struct vs_sp_app_version av[4];
    struct vs_sp_app app;
    struct vs_sp_job job;
    struct vs_sp_state st;
    bool st_live;
};

static inline void fx_init(struct fx *f)
{
    memset(f, 0, sizeof *f);
    vs_sp_config_defaults(&f->cfg);
    struct vs_sp_host *h = &f->host;
    h->id = 17;
    h->userid = 5;
    h->platform = "x86_64-pc-linux-gnu";
    h->p_fpops = 3e9;
    h->p_ncpus = 4;
    h->m_nbytes = 8e9;
    h->d_total = 500e9;
    h->d_free = 100e9;
    h->on_frac = 1;
    h->active_frac = 1;
    h->gpu_active_frac = 1;
    h->core_client_version = 72005;
    h->os_name = "Linux Debian";
    h->os_version = "6.1.0";
    h->p_vendor = "GenuineIntel";
    h->p_model = "Intel(R) Core(TM) i7-8650U CPU @ 1.90GHz";
    f->req.now = 1.8e9;
    f->req.prev_rpc_time = 1.8e9; /* same quota day */
    f->req.req_secs[VS_SP_CPU] = 86400;
    f->req.req_instances[VS_SP_CPU] = 4;
    f->av[0] = (struct vs_sp_app_version){.id = 101,
                                          .platform = "x86_64-pc-linux-gnu",
                                          .version_num = 710,
                                          .plan_class = "",
                                          .proc = VS_SP_CPU,
                                          .avg_ncpus = 1};
    f->app = (struct vs_sp_app){.id = 1,
                                .name = "uppercase",
                                .user_friendly_name = "Upper Case",
                                .limit_index = -1,
                                .versions = f->av,
                                .n_versions = 1};
    f->job = (struct vs_sp_job){.wu_id = 1000,
                                .result_id = 2000,
                                .app = &f->app,
                                .rsc_fpops_est = 3.6e12,
                                .rsc_memory_bound = 5e8,
                                .rsc_disk_bound = 1e9,
                                .delay_bound = 7 * 86400.0};
}

/* (Re)builds the state from the fixture's current fields. */
static inline void fx_start(struct fx *f, const struct vs_sp_hav *havs, int n)
{
    if (f->st_live)
        vs_sp_state_cleanup(&f->st);
    assert_int_equal(vs_sp_state_init(&f->st, &f->cfg, &f->host, &f->req, havs, n), 0);
    f->st_live = true;
}

static inline void fx_done(struct fx *f)
{
    if (f->st_live)
        vs_sp_state_cleanup(&f->st);
    f->st_live = false;
}

static inline enum vs_sp_reason fx_check(struct fx *f, struct vs_sp_verdict *v)
{
    struct vs_sp_verdict tmp;
    return vs_sp_check_job(&f->st, &f->job, v ? v : &tmp);
}

/* Checks and, when OK, commits; returns the reason. */
static inline enum vs_sp_reason fx_send(struct fx *f)
{
    struct vs_sp_verdict v;
    enum vs_sp_reason r = vs_sp_check_job(&f->st, &f->job, &v);
    if (r == VS_SP_OK)
        vs_sp_commit(&f->st, &f->job, &v);
    return r;
}

#endif
