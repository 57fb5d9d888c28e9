/*
 * The lighter host model (docs/popsim.md, "The host model"). A host has
 * ncpus CPUs of one speed, is on for on_frac of the time in exponential
 * stretches, and gives this project active_frac x share of its computing
 * while on, spread evenly (a fluid stand-in for suspensions and for the
 * other projects it runs). Its results run first-come first-served, ncpus
 * at a time. It asks for work the way BOINC's client does: when the queued
 * work, in wall time at its availability, falls below work_buf_min (or a
 * CPU would idle), it asks for enough to reach work_buf_min +
 * work_buf_additional; it reports finished results at its next request, or
 * report_delay after they finished, whichever is sooner; a request that
 * brings nothing backs it off exponentially.
 */
#include <math.h>
#include <string.h>

#include "popsim/pop_int.h"
#include "volsched/alloc.h"

/* A job is finished when less than this much of its running time is left:
 * far above the rounding of simulated times (days in seconds), so a finish
 * event always moves the clock. */
#define DONE_EPS_S 1e-3

void vs_pop__host_init(struct pop *p, struct pop_host *h)
{
    const struct vs_pop_scenario *s = p->s;
    struct vs_rng *r = &p->rng_hosts;
    int32_t *q = h->q, *done = h->done;
    int capq = h->capq, capdone = h->capdone;
    struct pop_hfile *hf = h->hf;
    int caphf = h->caphf;
    uint32_t gd = h->gen_done, gr = h->gen_rpc, gl = h->gen_life;
    memset(h, 0, sizeof(*h));
    h->q = q;
    h->capq = capq;
    h->done = done;
    h->capdone = capdone;
    h->hf = hf; /* a new host: no files yet */
    h->caphf = caphf;
    h->gen_done = gd + 1;
    h->gen_rpc = gr + 1;
    h->gen_life = gl + 1;
    h->id = ++p->next_host_id;
    double nc = floor(vs_pop__draw(&s->ncpus, r) + 0.5);
    h->ncpus = nc < 1 ? 1 : nc > VS_SP_MAX_NCPUS ? VS_SP_MAX_NCPUS : (int)nc;
    h->flops = vs_pop__draw(&s->gflops, r) * 1e9;
    if (h->flops < 1e6)
        h->flops = 1e6;
    h->on_frac = fmax(0.01, vs_pop__draw(&s->on_frac, r));
    h->active_frac = fmax(0.01, vs_pop__draw(&s->active_frac, r));
    h->share = fmax(0.001, vs_pop__draw(&s->share, r));
    h->err_rate = vs_pop__draw(&s->error_rate, r);
    h->ram = vs_pop__draw(&s->ram_gb, r) * 1e9;
    h->disk = vs_pop__draw(&s->disk_gb, r) * 1e9;
    h->rate = h->flops * h->active_frac * h->share;
    h->on = vs_rng_double(r) < h->on_frac;
    h->last = p->now;
    h->joined = p->now;
    h->rpc_at = INFINITY;
    h->report_at = INFINITY;
    /* The first population does not call all in one second. */
    h->min_rpc = p->now == 0 ? vs_rng_double(r) * 3600 : p->now;
    h->hav = (struct vs_sp_hav){.app_version_id = p->av.id};
    p->out->hosts_seen++;
}

void vs_pop__host_advance(struct pop *p, struct pop_host *h)
{
    double dt = p->now - h->last;
    h->last = p->now;
    if (!h->on || dt <= 0)
        return;
    int n = h->nq < h->ncpus ? h->nq : h->ncpus;
    double work = h->rate * dt, cpu = work / h->flops;
    for (int i = 0; i < n; i++) {
        struct pop_result *x = &p->res[h->q[i]];
        double w = work < x->remaining ? work : x->remaining;
        x->remaining -= w;
        x->cpu += w == work ? cpu : w / h->flops;
    }
}

void vs_pop__host_plan_done(struct pop *p, struct pop_host *h, int32_t slot)
{
    h->gen_done++;
    if (!h->on || h->nq == 0)
        return;
    int n = h->nq < h->ncpus ? h->nq : h->ncpus;
    double least = INFINITY;
    for (int i = 0; i < n; i++)
        least = fmin(least, p->res[h->q[i]].remaining);
    vs_eventq_push(&p->q, p->now + fmax(least / h->rate, DONE_EPS_S), EV_DONE, slot, h->gen_done);
}

static void add_done(struct pop_host *h, int32_t r)
{
    if (h->ndone == h->capdone) {
        h->capdone = h->capdone ? h->capdone * 2 : 8;
        h->done = vs_xreallocarray(h->done, (size_t)h->capdone, sizeof(*h->done));
    }
    h->done[h->ndone++] = r;
}

void vs_pop__host_finish(struct pop *p, struct pop_host *h, int32_t slot)
{
    vs_pop__host_advance(p, h);
    int n = h->nq < h->ncpus ? h->nq : h->ncpus, w = 0;
    for (int i = 0; i < h->nq; i++) {
        int32_t r = h->q[i];
        struct pop_result *x = &p->res[r];
        if (i < n && x->remaining < h->rate * DONE_EPS_S) {
            x->state = R_DONE;
            x->invalid = h->err_rate > 0 && vs_rng_double(&p->rng_run) < h->err_rate;
            add_done(h, r);
            /* Reported within report_delay, and a minute before the
             * deadline if that comes sooner (BOINC's client reports a
             * result near its deadline at once). */
            h->report_at = fmin(h->report_at,
                                fmin(p->now + p->s->report_delay, fmax(p->now, x->deadline - 60)));
        } else {
            h->q[w++] = r;
        }
    }
    h->nq = w;
    vs_pop__host_plan_done(p, h, slot);
    vs_pop__host_plan_rpc(p, h, slot);
}

double vs_pop__host_request(const struct pop *p, const struct pop_host *h)
{
    const struct vs_pop_scenario *s = p->s;
    double queued = 0;
    for (int i = 0; i < h->nq; i++)
        queued += p->res[h->q[i]].remaining / h->flops;
    double avail = h->on_frac * h->active_frac * h->share;
    double low = s->buffer * h->ncpus * avail;
    double high = (s->buffer + s->buffer_extra) * h->ncpus * avail;
    if (queued >= low && h->nq >= h->ncpus)
        return 0;
    return fmax(high - queued, 1);
}

void vs_pop__host_plan_rpc(struct pop *p, struct pop_host *h, int32_t slot)
{
    if (!h->on)
        return;
    double t = vs_pop__host_request(p, h) > 0 ? p->now : INFINITY;
    if (h->ndone > 0)
        t = fmin(t, h->report_at);
    t = fmax(t, h->min_rpc);
    if (!isfinite(t) || t >= h->rpc_at)
        return;
    h->rpc_at = t;
    h->gen_rpc++;
    vs_eventq_push(&p->q, t, EV_RPC, slot, h->gen_rpc);
}

/* The host detaches: what it holds is lost, and times out at its deadline. */
void vs_pop__host_leave(struct pop *p, struct pop_host *h)
{
    vs_pop__host_advance(p, h);
    struct vs_pop_result *o = p->out;
    for (int pass = 0; pass < 2; pass++) {
        int32_t *v = pass ? h->done : h->q;
        int n = pass ? h->ndone : h->nq;
        for (int i = 0; i < n; i++) {
            struct pop_result *x = &p->res[v[i]];
            o->cpu_hours += x->cpu / 3600;
            o->cpu_hours_wasted += x->cpu / 3600;
            vs_pop__lost(p, v[i]);
        }
    }
    h->nq = h->ndone = 0;
    o->host_days += (p->now - h->joined) / 86400;
}

void vs_pop__host_cleanup(struct pop_host *h)
{
    vs_free(h->q);
    vs_free(h->done);
    vs_free(h->hf);
    h->q = h->done = NULL;
    h->hf = NULL;
}
