/*
 * The full host model (docs/popsim.md): each host is the host `volsched sim`
 * runs (volsched/hsim.h: the client policies of src/policy/client, the
 * host's on/off and computing-allowed periods, checkpoints, reporting
 * rules), stepped on popsim's clock. Its RPCs to this project come here:
 * the reports go to the transitioner and validator, the request the client
 * built goes to pop_server.c's scheduler (src/policy/server), and the jobs
 * it sends are handed to the host. When the host gives this project only a
 * share of its computing, the rest goes to a second project that always
 * has work, served by the simulator's built-in server, and the client's
 * own fair-share scheduling decides what runs.
 *
 * Each host keeps one pending step event; a host's state changes only in
 * its own steps, so stepping hosts in time order with the server's events
 * between keeps every reply causal. A host's clock starts when it joins:
 * global time = joined + host time.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "popsim/pop_int.h"
#include "volsched/alloc.h"
#include "volsched/hsim.h"
#include "volsched/sim.h"

/* The other project of a host that gives this one a share below this; a
 * host on (or allowed to compute) for more than this is always so. */
#define FULL_SHARE   0.999
#define ALWAYS       0.999
#define OTHER_DELAY  (7 * 86400.0) /* its delay bound */
#define CHECKPOINT_S 300.0         /* apps checkpoint every 5 minutes */

struct pop_full {
    struct vs_hsim *hs; /* NULL while the slot has no host */
    struct vs_scenario scn;
    struct vs_scn_project proj[2]; /* scn.projects */
    struct vs_hsim_hooks hooks;
    struct pop *p;
    int32_t slot;
    uint32_t gen; /* bumped when the host leaves: its pending step is stale */
    double joined;
};

static struct pop_host *host_of(const struct pop_full *f)
{
    return &f->p->hosts[f->slot];
}

static void on_report(void *ctx, int64_t ext, double cpu)
{
    struct pop_full *f = ctx;
    struct pop *p = f->p;
    struct pop_host *h = host_of(f);
    if (!VS_ALWAYS(ext >= 0 && (size_t)ext < p->nres))
        return;
    struct pop_result *x = &p->res[ext];
    x->cpu = cpu;
    x->invalid = h->err_rate > 0 && vs_rng_double(&p->rng_run) < h->err_rate;
    vs_pop__report(p, (int32_t)ext);
}

static int on_serve(void *ctx, struct vs_hsim *hs, const struct vs_sp_request *req, bool *deadlines,
                    double *delay)
{
    struct pop_full *f = ctx;
    struct pop *p = f->p;
    struct pop_host *h = host_of(f);
    struct vs_pop_result *o = p->out;
    o->rpcs++;
    p->rpcs_bin++;
    *deadlines = false;
    *delay = 0;
    int sent = 0;
    if (req) {
        o->work_requests++;
        /* The request as the client built it, on the server's clock. */
        struct vs_sp_request rq = *req;
        rq.now = p->now;
        rq.prev_rpc_time = h->prev_rpc;
        sent = vs_pop__send_work(p, h, f->slot, &rq, deadlines, delay);
        if (sent > 0)
            o->work_replies++;
        double est = p->s->job_hours * p->s->ref_gflops * 1e9 / h->flops;
        double deadline = vs_hsim_now(hs) + p->s->delay_bound;
        for (int i = 0; i < p->nsent; i++) {
            int32_t r = p->sent[i];
            vs_hsim_add_job(hs, p->res[r].remaining / h->flops, est, deadline, r);
        }
        p->nsent = 0;
    }
    h->prev_rpc = p->now;
    return sent;
}

void vs_pop__full_init(struct pop *p)
{
    p->full = vs_xcalloc(p->nhosts, sizeof(*p->full));
    for (size_t i = 0; i < p->nhosts; i++) {
        p->full[i].p = p;
        p->full[i].slot = (int32_t)i;
    }
}

/* Host slot's scenario for src/sim, from the attributes popsim drew. */
static void build_scenario(const struct pop *p, struct pop_full *f)
{
    const struct vs_pop_scenario *s = p->s;
    const struct pop_host *h = host_of(f);
    struct vs_scenario *scn = &f->scn;
    vs_scenario_defaults(scn);
    scn->ncpus = h->ncpus;
    scn->on_frac = h->on_frac >= ALWAYS ? 1 : h->on_frac;
    scn->active_frac = h->active_frac >= ALWAYS ? 1 : h->active_frac;
    scn->avail_cycle = s->avail_cycle;
    scn->min_queue = s->buffer;
    scn->extra_queue = s->buffer_extra;
    scn->duration = p->end - p->now;
    double len = s->job_hours * s->ref_gflops * 1e9 / h->flops;
    struct vs_scn_project *pr = f->proj;
    vs_scn_project_defaults(&pr[0]);
    /* The name the scheduler's app has: the request's in-progress jobs
     * carry it, and the server's job limits count by it. */
    snprintf(pr[0].name, sizeof(pr[0].name), "%s", p->app.name);
    pr[0].cpu_time = len;
    pr[0].delay_bound = s->delay_bound;
    pr[0].share = h->share;
    pr[0].checkpoint_period = CHECKPOINT_S;
    pr[0].workload_sim = s->server_edf_check; /* the client then lists its queue */
    scn->projects = pr;
    scn->nprojects = 1;
    if (h->share < FULL_SHARE) {
        vs_scn_project_defaults(&pr[1]);
        snprintf(pr[1].name, sizeof(pr[1].name), "other");
        pr[1].cpu_time = len;
        pr[1].delay_bound = OTHER_DELAY;
        pr[1].share = 1 - h->share;
        pr[1].checkpoint_period = CHECKPOINT_S;
        scn->nprojects = 2;
    }
}

static void push_step(struct pop *p, struct pop_full *f)
{
    vs_eventq_push(&p->q, f->joined + vs_hsim_next(f->hs), EV_STEP, f->slot, f->gen);
}

void vs_pop__full_open(struct pop *p, int32_t slot)
{
    struct pop_full *f = &p->full[slot];
    struct pop_host *h = &p->hosts[slot];
    build_scenario(p, f);
    f->hooks =
        (struct vs_hsim_hooks){.project = 0, .ctx = f, .report = on_report, .serve = on_serve};
    f->joined = p->now;
    /* Each host its own stream, from the run's seed and the host's id. */
    uint64_t seed = (p->seed + 1) * 0x9e3779b97f4a7c15ULL ^ (uint64_t)h->id * 0xbf58476d1ce4e5b9ULL;
    f->hs = vs_hsim_open(&f->scn, vs_sim_policies[p->s->client_policy], f->scn.duration, seed,
                         &f->hooks);
    if (!f->hs) {
        p->rc = VS_EINTERNAL;
        return;
    }
    push_step(p, f);
}

void vs_pop__full_step(struct pop *p, int32_t slot, uint32_t gen)
{
    struct pop_full *f = &p->full[slot];
    if (gen != f->gen || !f->hs)
        return;
    int rc = vs_hsim_step(f->hs);
    if (rc < 0)
        p->rc = rc;
    else if (rc > 0)
        push_step(p, f);
}

static void lose(void *ctx, int64_t ext, double cpu)
{
    struct pop *p = ctx;
    struct vs_pop_result *o = p->out;
    o->cpu_hours += cpu / 3600;
    o->cpu_hours_wasted += cpu / 3600;
    p->res[ext].cpu = cpu;
    vs_pop__lost(p, (int32_t)ext);
}

static void count_cpu(void *ctx, int64_t ext, double cpu)
{
    (void)ext;
    struct pop *p = ctx;
    p->out->cpu_hours += cpu / 3600;
}

/* The host detaches: what it holds is lost, and times out at its deadline. */
void vs_pop__full_leave(struct pop *p, int32_t slot)
{
    struct pop_full *f = &p->full[slot];
    if (f->hs)
        vs_hsim_held(f->hs, lose, p);
    vs_hsim_close(f->hs);
    f->hs = NULL;
    f->gen++;
    p->out->host_days += (p->now - p->hosts[slot].joined) / 86400;
}

void vs_pop__full_end(struct pop *p, int32_t slot)
{
    struct pop_full *f = &p->full[slot];
    if (f->hs)
        vs_hsim_held(f->hs, count_cpu, p);
}

void vs_pop__full_cleanup(struct pop *p)
{
    if (!p->full)
        return;
    for (size_t i = 0; i < p->nhosts; i++)
        vs_hsim_close(p->full[i].hs);
    vs_free(p->full);
    p->full = NULL;
}
