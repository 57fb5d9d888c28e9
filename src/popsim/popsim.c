/*
 * The population simulator's event loop. Events (volsched/eventq.h, ties in
 * insertion order, so a run is deterministic): a batch of workunits
 * arrives; a host calls the scheduler, finishes a job, goes on or off, or
 * leaves (and a new host takes its place, so the population stays at
 * `hosts`); a result's deadline passes; an hour ends (the timeline). The
 * run stops when every workunit is finished or at `duration`.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "popsim/pop_int.h"
#include "volsched/alloc.h"

#define HOUR 3600.0

static void push_toggle(struct pop *p, struct pop_host *h, int32_t slot)
{
    if (h->on_frac >= 0.999)
        return; /* always on */
    double mean = p->s->avail_cycle * (h->on ? h->on_frac : 1 - h->on_frac);
    double t = p->now + vs_rng_exp(&p->rng_hosts, mean);
    /* A full host goes on and off by itself (src/sim); the draw is still
     * made, so that both models draw the same first population. */
    if (!p->full)
        vs_eventq_push(&p->q, t, EV_TOGGLE, slot, h->gen_life);
}

static void push_leave(struct pop *p, struct pop_host *h, int32_t slot)
{
    if (p->s->lifetime > 0)
        vs_eventq_push(&p->q, p->now + vs_rng_exp(&p->rng_hosts, p->s->lifetime), EV_LEAVE, slot,
                       h->gen_life);
}

static void host_start(struct pop *p, int32_t slot)
{
    struct pop_host *h = &p->hosts[slot];
    vs_pop__host_init(p, h);
    push_toggle(p, h, slot);
    push_leave(p, h, slot);
    if (p->full)
        vs_pop__full_open(p, slot);
    else
        vs_pop__host_plan_rpc(p, h, slot);
}

static void on_toggle(struct pop *p, struct pop_host *h, int32_t slot)
{
    vs_pop__host_advance(p, h);
    h->on = !h->on;
    if (h->on) {
        vs_pop__host_plan_done(p, h, slot);
        vs_pop__host_plan_rpc(p, h, slot);
    } else {
        h->gen_done++; /* no progress while off */
        h->gen_rpc++;
        h->rpc_at = INFINITY;
    }
    push_toggle(p, h, slot);
}

static void dispatch(struct pop *p, const struct vs_event *e)
{
    struct pop_host *h =
        e->type == EV_RPC || e->type == EV_DONE || e->type == EV_TOGGLE || e->type == EV_LEAVE
            ? &p->hosts[e->a]
            : NULL;
    switch (e->type) {
    case EV_BATCH:
        vs_pop__make_batch(p);
        if (p->batches_made < p->s->batches)
            vs_eventq_push(&p->q, p->now + p->s->batch_interval, EV_BATCH, 0, 0);
        /* Hosts backed off for want of work learn of it at their next call. */
        break;
    case EV_RPC:
        if (e->gen == h->gen_rpc && h->on)
            vs_pop__rpc(p, h, e->a);
        break;
    case EV_DONE:
        if (e->gen == h->gen_done && h->on)
            vs_pop__host_finish(p, h, e->a);
        break;
    case EV_TOGGLE:
        if (e->gen == h->gen_life)
            on_toggle(p, h, e->a);
        break;
    case EV_LEAVE:
        if (e->gen == h->gen_life) {
            if (p->full)
                vs_pop__full_leave(p, e->a);
            else
                vs_pop__host_leave(p, h);
            host_start(p, e->a);
        }
        break;
    case EV_STEP:
        vs_pop__full_step(p, e->a, e->gen);
        break;
    case EV_DEADLINE:
        vs_pop__timeout(p, e->a, e->gen);
        break;
    case EV_WS:
        vs_pop__ws_pass(p);
        vs_eventq_push(&p->q, p->now + POP_WS_PERIOD, EV_WS, 0, 0);
        break;
    case EV_SAMPLE:
        vs_pop__push_sample(p);
        vs_pop__tail_refresh(p);
        vs_eventq_push(&p->q, p->now + HOUR, EV_SAMPLE, 0, 0);
        break;
    default:
        break;
    }
}

static void finish_figures(struct pop *p)
{
    struct vs_pop_result *o = p->out;
    o->duration = p->now;
    o->returned = p->returned;
    o->in_flight_end = p->in_flight;
    for (size_t i = 0; i < p->nhosts; i++) {
        struct pop_host *h = &p->hosts[i];
        o->host_days += (p->now - h->joined) / 86400;
        /* Work done but not reported by the end counts as spent. */
        for (int k = 0; k < h->nq; k++) {
            o->cpu_hours += p->res[h->q[k]].cpu / 3600;
            /* ... and what it would take to its end (nothing aborts it). */
            o->cpu_hours_to_end += p->res[h->q[k]].remaining / h->flops / 3600;
        }
        for (int k = 0; k < h->ndone; k++)
            o->cpu_hours += p->res[h->done[k]].cpu / 3600;
        if (p->full)
            vs_pop__full_end(p, (int32_t)i);
    }
    o->cpu_hours_to_end += o->cpu_hours;
    o->wus_open = p->wus_open + (p->s->batches - p->batches_made) * p->s->batch_size;
    o->turnaround_p50 = vs_pop__hist_pct(&p->turn, 0.5);
    o->turnaround_p90 = vs_pop__hist_pct(&p->turn, 0.9);
    o->turnaround_p99 = vs_pop__hist_pct(&p->turn, 0.99);
    o->wu_p50 = vs_pop__hist_pct(&p->wut, 0.5);
    o->wu_p90 = vs_pop__hist_pct(&p->wut, 0.9);
    o->wu_p99 = vs_pop__hist_pct(&p->wut, 0.99);
    o->makespan = o->wus_open == 0 ? 0 : -1;
    double sum = 0;
    int64_t nb = 0;
    for (int64_t b = 0; b < p->batches_made; b++) {
        const struct pop_batch *bt = &p->batches[b];
        if (bt->open > 0 || bt->last_done < 0)
            continue;
        double m = bt->last_done - bt->created;
        sum += m;
        nb++;
        o->batch_makespan_max = fmax(o->batch_makespan_max, m);
        if (o->makespan >= 0)
            o->makespan = fmax(o->makespan, bt->last_done);
    }
    o->batch_makespan_mean = nb ? sum / (double)nb : 0;
    o->bytes_per_valid = o->wus_valid ? o->bytes_down / (double)o->wus_valid : 0;
    if (o->files > 0) {
        /* Each result sent carries its own small input once, at least. */
        o->bytes_bound += (double)o->wus * p->s->target_nresults * p->s->input_mb * 1e6;
        o->bytes_vs_bound = o->bytes_bound > 0 ? o->bytes_down / o->bytes_bound : 0;
    }
    o->cache_hit_rate = o->work_requests ? (double)o->work_replies / (double)o->work_requests : 0;
    double peak = 0;
    for (size_t i = 0; i < o->nsamples; i++)
        peak = fmax(peak, (double)o->samples[i].rpcs / HOUR);
    o->rpc_rate_peak = peak;
    o->rpc_rate_mean = p->now > 0 ? (double)o->rpcs / p->now : 0;
}

static void cleanup(struct pop *p)
{
    for (size_t i = 0; i < p->nhosts; i++)
        vs_pop__host_cleanup(&p->hosts[i]);
    vs_free(p->hosts);
    vs_free(p->wus);
    vs_free(p->res);
    vs_free(p->batches);
    vs_free(p->free_wus);
    vs_free(p->free_res);
    vs_pop__full_cleanup(p);
    vs_pop__server_cleanup(p);
    vs_pop__files_cleanup(p);
    vs_pop__tail_cleanup(p);
    vs_eventq_cleanup(&p->q);
}

int vs_popsim_run(const struct vs_pop_scenario *s, const struct vs_pop_options *o,
                  struct vs_pop_result *out)
{
    struct pop p;
    memset(&p, 0, sizeof(p));
    memset(out, 0, sizeof(*out));
    p.s = s;
    p.out = out;
    p.unsent_head = p.unsent_tail = -1;
    uint64_t seed = o && o->seed_set ? o->seed : s->seed;
    /* Separate streams, so a change in one part does not reshuffle the rest. */
    vs_rng_seed(&p.rng_hosts, seed * 3 + 1);
    vs_rng_seed(&p.rng_jobs, seed * 3 + 2);
    vs_rng_seed(&p.rng_run, seed * 3 + 3);
    p.end = o && o->duration > 0 ? o->duration : s->duration;
    vs_eventq_init(&p.q);
    vs_pop__server_init(&p);
    vs_pop__files_init(&p);
    vs_pop__tail_init(&p);
    p.batches = vs_xcalloc((size_t)s->batches, sizeof(*p.batches));
    p.nhosts = (size_t)s->hosts;
    p.hosts = vs_xcalloc(p.nhosts, sizeof(*p.hosts));
    p.seed = seed;
    if (s->model == VS_POP_FULL)
        vs_pop__full_init(&p);
    for (size_t i = 0; i < p.nhosts; i++)
        host_start(&p, (int32_t)i);
    vs_eventq_push(&p.q, 0, EV_BATCH, 0, 0);
    vs_eventq_push(&p.q, HOUR, EV_SAMPLE, 0, 0);
    if (s->locality)
        vs_eventq_push(&p.q, 0, EV_WS, 0, 0);
    double next_progress = 0;
    struct vs_event e;
    while (p.rc == 0 && vs_eventq_pop(&p.q, &e)) {
        if (e.t > p.end) {
            p.now = p.end;
            break;
        }
        p.now = e.t;
        dispatch(&p, &e);
        if (p.batches_made == s->batches && p.wus_open == 0)
            break;
        if (o && o->progress && p.now >= next_progress) {
            o->progress(o->progress_ctx, p.now / p.end);
            next_progress = p.now + p.end / 100;
        }
    }
    if (p.rc == 0) {
        vs_pop__push_sample(&p);
        finish_figures(&p);
        if (o && o->progress)
            o->progress(o->progress_ctx, 1.0);
    }
    int rc = p.rc;
    cleanup(&p);
    if (rc != 0)
        vs_pop_result_cleanup(out);
    return rc;
}

void vs_pop_result_cleanup(struct vs_pop_result *r)
{
    vs_free(r->samples);
    r->samples = NULL;
    r->nsamples = 0;
}
