/*
 * The lighter host model (model = light, the default): a documented
 * approximation of the host `volsched sim` runs, kept because it is about
 * 5 times faster (docs/popsim.md, "What is simulated" and "Speed"). How far
 * its figures are from the full model's, measured figure by figure, is the
 * table in docs/popsim.md, "How far the lighter model is from the full one"
 * (docs/popsim.md#how-far-the-lighter-model-is-from-the-full-one): good
 * for makespan, CPU and bytes when hosts give the project all their
 * computing; biased for turnaround and deadline misses.
 *
 * What is approximate is the host: it has ncpus CPUs of one speed, is on
 * for on_frac of the time in exponential stretches, and gives this project
 * active_frac x share of its computing while on, spread evenly (a fluid
 * stand-in for suspensions and for the other projects it runs). Its
 * results run first-come first-served, ncpus at a time. It asks for work
 * the way BOINC's client does: when the queued work, in wall time at its
 * availability, falls below work_buf_min (or a CPU would idle), it asks
 * for enough to reach work_buf_min + work_buf_additional; it reports
 * finished results at its next request, or report_delay after they
 * finished, whichever is sooner. What is not approximate is shared with
 * the daemons: its request is answered by pop_server.c's scheduler
 * (src/policy/server, with the shared scan rule), and a request that
 * brings nothing backs off its work requests by the client's own rule
 * (src/policy/client's vs_cbackoff: BOINC's 1-2 minutes doubling to 4
 * hours, randomised), while its reports still go, until a reply brings
 * work or one of its jobs is done.
 */
#include <math.h>
#include <string.h>

#include "popsim/pop_int.h"
#include "volsched/alloc.h"

/* A job is finished when less than this much of its running time is left:
 * far above the rounding of simulated times (days in seconds), so a finish
 * event always moves the clock. */
#define DONE_EPS_S 1e-3

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
            /* BOINC-COMPAT: a job done (uploaded at once here) clears the
             * work backoff, as the client daemon's finished upload does. */
            h->work_backoff = 0;
            h->no_work_n = 0;
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
    double t = vs_pop__host_request(p, h) > 0 ? fmax(p->now, h->work_backoff) : INFINITY;
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

/*
 * The client's <estimated_delay> for the CPU: when its first CPU would run
 * out of queued work, first-come first-served at its wall-clock rate.
 */
static double estimated_delay(const struct pop *p, const struct pop_host *h)
{
    double wall_rate = h->rate * h->on_frac;
    double cpu_free[64] = {0};
    int n = h->ncpus < 1 ? 1 : h->ncpus < 64 ? h->ncpus : 64;
    for (int i = 0; i < h->nq; i++) {
        int best = 0;
        for (int c = 1; c < n; c++)
            if (cpu_free[c] < cpu_free[best])
                best = c;
        cpu_free[best] += p->res[h->q[i]].remaining / wall_rate;
    }
    double least = cpu_free[0];
    for (int c = 1; c < n; c++)
        least = fmin(least, cpu_free[c]);
    return least;
}

static void reserve(struct pop *p, int n)
{
    if (n <= p->req_cap)
        return;
    p->req_cap = n * 2;
    p->inprog = vs_xreallocarray(p->inprog, (size_t)p->req_cap, sizeof(*p->inprog));
    p->ip = vs_xreallocarray(p->ip, (size_t)p->req_cap, sizeof(*p->ip));
}

/* The lighter host's request: what its queue says, built here. */
static void build(struct pop *p, const struct pop_host *h, double request, struct vs_sp_request *rq)
{
    memset(rq, 0, sizeof(*rq));
    rq->now = p->now;
    rq->prev_rpc_time = h->prev_rpc;
    rq->work_req_seconds = request;
    rq->req_secs[VS_SP_CPU] = request;
    rq->estimated_delay[VS_SP_CPU] = estimated_delay(p, h);
    int n = h->nq < VS_POP_MAX_EDF_QUEUE ? h->nq : VS_POP_MAX_EDF_QUEUE;
    reserve(p, n + 1);
    for (int i = 0; i < n; i++) {
        const struct pop_result *x = &p->res[h->q[i]];
        p->inprog[i] = (struct vs_sp_inprog){.app_name = p->app.name, .proc = VS_SP_CPU};
        p->ip[i] = (struct vs_sp_ip_result){.deadline = x->deadline - p->now,
                                            .remaining = x->remaining / h->flops};
    }
    rq->in_progress = p->inprog;
    rq->n_in_progress = n;
    rq->ip_results = p->ip;
    rq->n_ip_results = p->cfg.workload_sim ? n : 0;
    rq->have_ip_results = p->cfg.workload_sim;
}

/* One scheduler RPC of lighter host h: its reports, its request (built
 * here from its queue), pop_server.c's answer, and when it calls next. */
void vs_pop__rpc(struct pop *p, struct pop_host *h, int32_t slot)
{
    struct vs_pop_result *o = p->out;
    vs_pop__host_advance(p, h);
    o->rpcs++;
    p->rpcs_bin++;
    /* Report first, as the scheduler handles <result>s before sending. */
    for (int i = 0; i < h->ndone; i++)
        vs_pop__report(p, h->done[i]);
    h->ndone = 0;
    h->report_at = INFINITY;
    /* During a work backoff the RPC only reports. */
    double request = p->now >= h->work_backoff ? vs_pop__host_request(p, h) : 0;
    int sent = 0;
    if (request > 0) {
        o->work_requests++;
        struct vs_sp_request rq;
        build(p, h, request, &rq);
        sent = vs_pop__send_work(p, h, slot, &rq, NULL, NULL);
    }
    h->prev_rpc = p->now;
    h->rpc_at = INFINITY;
    h->min_rpc = p->now + POP_MIN_RPC_DELAY;
    if (sent > 0) {
        o->work_replies++;
        h->no_work_n = 0;
        h->work_backoff = 0;
        vs_pop__host_plan_done(p, h, slot);
    } else if (request > 0) {
        /* The client's rule (BOINC's, randomised so that hosts do not
         * call in step): no work asked for a while; reports still go. */
        if (h->no_work_n < VS_CBACKOFF_CAP)
            h->no_work_n++;
        h->work_backoff = p->now + vs_cbackoff(h->no_work_n, VS_CBACKOFF_MIN, VS_CBACKOFF_MAX,
                                               vs_rng_double(&p->rng_run));
    }
    vs_pop__host_plan_rpc(p, h, slot);
}
