/*
 * The host simulator: one volunteer host running the client policies of
 * src/policy/client (through their public API only, exactly as a real client
 * drives them) against one simple server per project, on a discrete-event
 * clock.
 *
 * Time jumps from event to event. The queue holds the external events
 * (scheduling-period ends, host and server availability changes, RPC
 * retries, report deadlines, enforcement re-checks); job completions and the
 * checkpoints that enforcement waits for are found by scanning the running
 * results, which are at most NCPUS plus the non-CPU-intensive ones, so they
 * need no cancellation. Progress between two events is linear, so figures
 * are integrated exactly rather than sampled.
 *
 * Determinism: every random draw comes from vs_rng streams seeded from the
 * scenario's seed, the queue breaks ties by insertion order, and nothing
 * reads the clock or iterates over an unordered container.
 *
 * This file is the event loop (time, passes, availability); the results and
 * their books are in sim_jobs.c, the per-project server in sim_server.c, and
 * the state they share in host_sim.h.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host_sim.h"
#include "volsched/alloc.h"

const char *const vs_sim_policies[] = {"fair", "shortfall", "debt", "wrr", NULL};

/* ---------------------------------------------------------------- time */

/*
 * fmod(x, c) for x >= 0, c > 0, without the libm call (1.4% of a run): binary
 * long division by c * 2^k, k falling. Each subtraction takes x in [d, 2d)
 * to x - d, exact by Sterbenz's lemma, and doubling or halving d is exact,
 * so the result is the exact remainder, as fmod's is: the two agree to the
 * bit. x is finite (a sum of finite times).
 */
static double ckpt_rest(double x, double c)
{
    if (x < c)
        return x;
    double d = c;
    /* x - d >= d is x >= 2d (exact for x < 2d by Sterbenz, and rounding is
     * monotone), and it cannot overflow. */
    while (x - d >= d)
        d *= 2;
    for (;;) {
        if (x >= d)
            x -= d;
        if (d == c)
            return x;
        d /= 2;
    }
}

/*
 * Moves the clock to t: the figures integrate the interval, running results
 * progress (when the host can compute), their checkpoints are brought up to
 * date, and those that reached their end complete, all in one scan. Sets
 * *need_enforce when a result that is running but no longer scheduled
 * checkpointed (enforcement may now preempt it), *need_pass when a result
 * completed.
 */
static void advance(struct sim *x, double t, bool *need_enforce, bool *need_pass)
{
    double dt = t - x->st.now;
    bool avail = available(x);
    if (dt > 0) {
        /* What ran during the interval is what runs at its start. */
        vs_metrics_interval(&x->m, dt, avail, avail ? x->running : NULL);
        if (avail && x->edf_mode)
            vs_metrics_edf(&x->m, dt);
        x->st.now = t;
    }
    if (!avail)
        return;
    for (size_t k = 0; k < x->nrun;) {
        size_t r = x->run[k];
        struct vs_cresult *res = &x->st.results[r];
        struct proj *pj = &x->pj[res->project];
        double *left = pj->estimating ? &x->jobs[r].left : &res->remaining;
        if (dt > 0) {
            struct job *j = &x->jobs[r];
            /* A job runs at cpu_eff of its CPUs (another program takes the
             * rest); it holds its kcpu CPUs all the while. */
            double eff = x->cpu_eff, kc = pj->kcpu;
            double step = min2(dt * eff, *left);
            *left -= step;
            j->cpu_used += step / eff * kc;
            j->run_wall += dt;
            x->cp[res->project].wall_cpu_period += dt * kc;
            if (pj->estimating)
                res->remaining = vs_sim__estimate(x, r);
            /* Checkpoints every checkpoint_period of run time, computed
             * lazily: no event per checkpoint. */
            double c = x->s->projects[res->project].checkpoint_period;
            double w = res->wall_since_checkpoint + dt;
            /* (Within a microsecond counts as reached, so that a wake-up
             * computed from it always makes progress.) */
            if (c > 0 && w >= c - 1e-6) {
                double rest = ckpt_rest(w + 1e-6, c);
                res->checkpointed = true;
                res->checkpoint_time = t - rest;
                res->wall_since_checkpoint = rest;
                if (j->sched_gen != x->sched_gen)
                    *need_enforce = true;
            } else {
                res->wall_since_checkpoint = w;
            }
        }
        if (*left <= DONE_EPS) {
            /* This takes r out of the list: run[k] is now the next one. */
            vs_sim__complete(x, r);
            *need_pass = true;
        } else {
            k++;
        }
    }
}

/* The next time a running result finishes or an unscheduled one checkpoints. */
static double next_internal(const struct sim *x)
{
    double best = INFINITY;
    if (!available(x))
        return best;
    for (size_t k = 0; k < x->nrun; k++) {
        size_t r = x->run[k];
        const struct vs_cresult *res = &x->st.results[r];
        const double *left = x->pj[res->project].estimating ? &x->jobs[r].left : &res->remaining;
        best = min2(best, x->st.now + *left / x->cpu_eff);
        double c = x->s->projects[res->project].checkpoint_period;
        if (x->jobs[r].sched_gen != x->sched_gen && c > 0)
            best = min2(best, x->st.now + max2(c - res->wall_since_checkpoint, 1e-3));
    }
    return best;
}

/* ---------------------------------------------------------------- decisions */

static void apply_actions(struct sim *x, const struct vs_cenforce_out *e)
{
    if (e->n > 0)
        vs_sim__apply_action_list(x, e);
    /* Re-check enforcement when the policy asks to (usually it does not:
     * recheck_at is infinite, which the first test rules out). */
    x->enforce_gen++;
    if (e->recheck_at < x->end && isfinite(e->recheck_at))
        vs_eventq_push(&x->q, max2(e->recheck_at, x->st.now), EV_ENFORCE, 0, x->enforce_gen);
}

static void mark_scheduled(struct sim *x)
{
    /* A new generation unmarks every result at once. (Locals: the stores
     * below would otherwise make the compiler reload each field.) */
    uint64_t gen = ++x->sched_gen;
    const size_t *order = x->out.sched.order;
    const uint8_t *why = x->out.sched.why;
    size_t n = x->out.sched.n, nr = x->st.nresults;
    struct job *jobs = x->jobs;
    bool edf = false;
    for (size_t i = 0; i < n; i++)
        if (order[i] < nr) {
            jobs[order[i]].sched_gen = gen;
            edf |= why[order[i]] == VS_CSCHED_EDF;
        }
    x->edf_mode = edf;
}

/* ---------------------------------------------------------------- passes */

static bool wants_work(const struct sim *x)
{
    const struct vs_rrsim_out *rr = &x->out.rr;
    return rr->total_shortfall > 0 ||
           rr->total_work_before_minq < x->s->min_queue * x->s->ncpus - 1e-9;
}

/*
 * The scheduler at st.now: debts, round-robin simulation, CPU schedule,
 * enforcement, work fetch; RPCs as the fetch policy says, and a new pass
 * after each RPC that brought work.
 */
static void pass(struct sim *x)
{
    for (int iter = 0; iter <= MAX_RPCS_PER_INSTANT; iter++) {
        vs_sim__compact(x);
        /* The host and projects come from the scenario and never change
         * shape; results are built here. One full validation at the first
         * pass catches a scenario the policy cannot take. */
        int rc = x->validated ? 0 : vs_cstate_validate(&x->st);
        x->validated = true;
        if (rc == 0)
            rc = vs_cpolicy_step_trusted(x->policy, &x->st, &x->ws, &x->out);
        if (rc) {
            if (!x->rc)
                x->rc = rc;
            return;
        }
        x->have_sched = true;
        mark_scheduled(x);
        apply_actions(x, &x->out.enforce);
        x->st.last_sched_time = x->st.now;

        const struct vs_cfetch_out *f = &x->out.fetch;
        if (iter == MAX_RPCS_PER_INSTANT || f->project < 0) {
            /* Nobody to ask now; if work is wanted but every candidate is
             * deferred, wake up when the first deferral ends. */
            if (f->project < 0 && wants_work(x)) {
                double t = INFINITY;
                for (size_t p = 0; p < x->st.nprojects; p++) {
                    double until = max2(x->cp[p].min_rpc_time, x->cp[p].work_backoff_until);
                    if (until > x->st.now && x->pj[p].jobs_left != 0)
                        t = min2(t, until);
                }
                if (isfinite(t))
                    push_wake(x, t);
            }
            return;
        }
        size_t p = (size_t)f->project;
        if (x->cp[p].min_rpc_time > x->st.now) {
            /* The policy may force an RPC to a deferred project; the client
             * still waits for the deferral to end. */
            push_wake(x, x->cp[p].min_rpc_time);
            return;
        }
        /* After the RPC, schedule again: new results may run, and if this
         * project had nothing (it is now deferred) work fetch may pick the
         * next one, as a client's next poll would. */
        double frac = f->prr_frac ? f->prr_frac[p] : 0;
        (void)vs_sim__rpc(x, p, f->request_pn, frac);
    }
}

static void enforce_only(struct sim *x)
{
    if (!x->have_sched) {
        pass(x);
        return;
    }
    int rc = vs_cenforce_run(x->policy, &x->st, &x->out.rr, &x->out.sched, &x->ws, &x->out.enforce);
    if (rc) {
        if (!x->rc)
            x->rc = rc;
        return;
    }
    apply_actions(x, &x->out.enforce);
}

/* ---------------------------------------------------------------- availability */

static double draw(struct vs_rng *rng, double mean)
{
    return mean > 0 ? vs_rng_exp(rng, mean) : 0;
}

static void schedule_toggle(struct sim *x, enum ev_type ev, double frac, bool now_on, int a,
                            double cycle, struct vs_rng *rng)
{
    double mean = now_on ? frac * cycle : (1 - frac) * cycle;
    double t = x->st.now + max2(1.0, draw(rng, mean));
    if (t < x->end)
        vs_eventq_push(&x->q, t, ev, a, 0);
}

/* The host stops computing: running results stop; when the host itself goes
 * off, their processes exit and will restart from their checkpoints. */
static void host_stops(struct sim *x, bool power_off, bool was_available)
{
    for (size_t r = 0; r < x->st.nresults; r++) {
        struct vs_cresult *res = &x->st.results[r];
        if (res->done || res->task != VS_CTASK_RUNNING)
            continue;
        seg_close(x, r);
        if (power_off) {
            vs_sim__run_end(x, r);
            double lost = res->wall_since_checkpoint;
            vs_sim__add_work(x, r, lost * x->cpu_eff);
            vs_metrics_rollback(&x->m, (int)res->project, lost * x->pj[res->project].kcpu);
            res->wall_since_checkpoint = 0;
            res->task = VS_CTASK_REMOVED;
            vs_sim__slot_give(x, x->jobs[r].cpu);
            x->jobs[r].cpu = -1;
        }
    }
    if (was_available)
        x->off_since = x->st.now;
}

/* ---------------------------------------------------------------- run */

void vs_sim__init(struct sim *x, const struct vs_scenario *s, enum vs_cpolicy policy,
                  double duration, uint64_t seed, struct vs_timeline *tl)
{
    memset(x, 0, sizeof(*x));
    x->s = s;
    x->policy = policy;
    x->end = duration;
    x->tl = tl;
    vs_eventq_init(&x->q);
    vs_rng_seed(&x->rng_host, seed);
    vs_rng_seed(&x->rng_server, seed ^ 0x5e5e5e5e5e5e5e5eULL);
    vs_rng_seed(&x->rng_jobs, seed ^ 0xa5a5a5a5a5a5a5a5ULL);
    vs_rng_seed(&x->rng_client, seed ^ 0x3c3c3c3c3c3c3c3cULL);
    vs_metrics_init(&x->m, s);
    vs_cpolicy_ws_init(&x->ws);

    x->st.host = (struct vs_chost){
        .ncpus = s->ncpus,
        .on_frac = s->on_frac,
        .active_frac = s->active_frac,
        .cpu_efficiency = 1,
        .min_queue = s->min_queue,
        .sched_period = s->sched_period,
        .leave_in_memory = s->leave_in_memory,
        .flops_per_cpu = 1,
        .extra_queue = s->extra_queue,
    };
    x->cpu_eff = s->cpu_eff > 0 ? s->cpu_eff : 1;
    x->cp = vs_xcalloc(s->nprojects, sizeof(*x->cp));
    x->pj = vs_xcalloc(s->nprojects, sizeof(*x->pj));
    for (size_t p = 0; p < s->nprojects; p++) {
        x->cp[p].name = s->projects[p].name;
        x->cp[p].resource_share = s->projects[p].share;
        x->cp[p].non_cpu_intensive = s->projects[p].non_cpu_intensive;
        x->cp[p].job_ncpus = s->projects[p].ncpus;
        x->cp[p].max_concurrent = (int)s->projects[p].max_concurrent;
        x->pj[p].estimating = s->projects[p].est != 1;
        x->pj[p].dcf = 1;
        x->pj[p].kcpu = s->projects[p].ncpus > 0 ? s->projects[p].ncpus : 1;
        x->pj[p].server_up = true;
        x->pj[p].jobs_left = s->projects[p].jobs > 0 ? s->projects[p].jobs : -1;
    }
    x->st.projects = x->cp;
    x->st.nprojects = s->nprojects;
    x->nslots = s->ncpus;
    x->slot_used = vs_xcalloc((size_t)s->ncpus, sizeof(bool));
    x->running = vs_xcalloc(s->nprojects, sizeof(int));
    x->sp_host = (struct vs_sp_host){
        .id = 1,
        .userid = 1,
        .platform = VS_SIM_PLATFORM,
        .p_fpops = VS_SIM_FLOPS,
        .p_ncpus = s->ncpus,
        .work_buf_min = s->min_queue,
        .on_frac = s->on_frac,
        .active_frac = s->active_frac,
        .core_client_version = 71600, /* 7.16.0 */
    };
    for (size_t p = 0; p < s->nprojects; p++)
        vs_sim__server_init(x, p);
    x->host_on = x->active = true;
    x->sched_gen = 1; /* a new result's 0 then means "not scheduled" */
    if (tl) {
        vs_timeline_init(tl);
        tl->duration = duration;
        tl->ncpus = s->ncpus;
    }
}

void vs_sim__cleanup(struct sim *x)
{
    vs_eventq_cleanup(&x->q);
    vs_metrics_cleanup(&x->m);
    vs_cpolicy_ws_cleanup(&x->ws);
    vs_free(x->cp);
    vs_free(x->pj);
    vs_free(x->st.results);
    vs_free(x->jobs);
    vs_free(x->reports);
    vs_free(x->slot_used);
    vs_free(x->running);
    vs_free(x->run);
    vs_free(x->req_inprog);
    vs_free(x->req_ip);
}

/* The run's first events: its end, the first scheduling period, the host's
 * first availability changes and the servers' first outages. */
void vs_sim__start(struct sim *x)
{
    const struct vs_scenario *s = x->s;
    double duration = x->end;
    x->last_t = -1;
    vs_eventq_push(&x->q, duration, EV_END, 0, 0);
    vs_eventq_push(&x->q, 0, EV_SCHED_PERIOD, 0, 0);
    if (s->on_frac < 1)
        schedule_toggle(x, EV_HOST_OFF, s->on_frac, true, 0, s->avail_cycle, &x->rng_host);
    if (s->active_frac < 1)
        schedule_toggle(x, EV_ACTIVE_OFF, s->active_frac, true, 0, s->avail_cycle, &x->rng_host);
    for (size_t p = 0; p < s->nprojects; p++) {
        const struct vs_scn_project *sp = &s->projects[p];
        if (sp->server_avail < 1) {
            double up_mean = sp->server_outage * sp->server_avail / (1 - sp->server_avail);
            double t = fmax(1.0, draw(&x->rng_server, up_mean));
            if (t < duration)
                vs_eventq_push(&x->q, t, EV_SERVER_DOWN, (int)p, 0);
        }
    }
}

double vs_sim__next(const struct sim *x)
{
    return min2(min2(vs_eventq_peek_time(&x->q), next_internal(x)), x->end);
}

/*
 * The next instant: the clock moves to it, every event due then is
 * handled, and the scheduler runs if something calls for it. Returns 1
 * while the run goes on, 0 at its end, x->rc after a policy error.
 */
int vs_sim__step(struct sim *x)
{
    const struct vs_scenario *s = x->s;
    double duration = x->end;
    double t = min2(vs_eventq_peek_time(&x->q), next_internal(x));
    if (t > duration)
        t = duration;
    /* Many steps at one instant mean a bug (events rescheduling each
     * other at the same time); stop rather than spin. */
    x->stuck = t > x->last_t ? 0 : x->stuck + 1;
    x->last_t = t;
    if (VS_NEVER(x->stuck > 100000)) {
        x->rc = VS_EINTERNAL;
        return x->rc;
    }
    bool need_enforce = false, need_pass = false, end = false;
    advance(x, t, &need_enforce, &need_pass);
    struct vs_event ev;
    while (vs_eventq_peek_time(&x->q) <= t && vs_eventq_pop(&x->q, &ev)) {
        switch ((enum ev_type)ev.type) {
        case EV_END:
            end = true;
            break;
        case EV_SCHED_PERIOD:
            need_pass = true;
            if (ev.t + s->sched_period < duration)
                vs_eventq_push(&x->q, ev.t + s->sched_period, EV_SCHED_PERIOD, 0, 0);
            break;
        case EV_ENFORCE:
            if (ev.gen == x->enforce_gen)
                need_enforce = true;
            break;
        case EV_HOST_OFF:
        case EV_ACTIVE_OFF: {
            bool was = available(x);
            if (ev.type == EV_HOST_OFF)
                x->host_on = false;
            else
                x->active = false;
            if (was || ev.type == EV_HOST_OFF)
                host_stops(x, ev.type == EV_HOST_OFF, was);
            schedule_toggle(x, ev.type == EV_HOST_OFF ? EV_HOST_ON : EV_ACTIVE_ON,
                            ev.type == EV_HOST_OFF ? s->on_frac : s->active_frac, false, 0,
                            s->avail_cycle, &x->rng_host);
            break;
        }
        case EV_HOST_ON:
        case EV_ACTIVE_ON:
            if (ev.type == EV_HOST_ON)
                x->host_on = true;
            else
                x->active = true;
            if (available(x)) {
                if (x->tl)
                    vs_timeline_add_off(x->tl, x->off_since, x->st.now);
                for (size_t r = 0; r < x->st.nresults; r++)
                    if (!x->st.results[r].done && x->st.results[r].task == VS_CTASK_RUNNING)
                        seg_open(x, r);
                need_pass = true;
            }
            schedule_toggle(x, ev.type == EV_HOST_ON ? EV_HOST_OFF : EV_ACTIVE_OFF,
                            ev.type == EV_HOST_ON ? s->on_frac : s->active_frac, true, 0,
                            s->avail_cycle, &x->rng_host);
            break;
        case EV_SERVER_DOWN: {
            const struct vs_scn_project *sp = &s->projects[ev.a];
            x->pj[ev.a].server_up = false;
            double t2 = ev.t + fmax(1.0, draw(&x->rng_server, sp->server_outage));
            if (t2 < duration)
                vs_eventq_push(&x->q, t2, EV_SERVER_UP, ev.a, 0);
            break;
        }
        case EV_SERVER_UP: {
            const struct vs_scn_project *sp = &s->projects[ev.a];
            x->pj[ev.a].server_up = true;
            double up_mean = sp->server_outage * sp->server_avail / (1 - sp->server_avail);
            double t2 = ev.t + fmax(1.0, draw(&x->rng_server, up_mean));
            if (t2 < duration)
                vs_eventq_push(&x->q, t2, EV_SERVER_DOWN, ev.a, 0);
            break;
        }
        case EV_WAKE:
            need_pass = true;
            break;
        case EV_REPORT_DUE:
            for (size_t i = 0; i < x->nreports; i++)
                if (x->reports[i].project == ev.a && x->reports[i].due <= t)
                    x->cp[ev.a].report_overdue = true;
            need_pass = true;
            break;
        }
    }
    if (end || t >= duration)
        return 0;
    if (available(x)) {
        if (need_pass)
            pass(x);
        else if (need_enforce)
            enforce_only(x);
    }
    return x->rc ? x->rc : 1;
}

int vs_sim_run(const struct vs_scenario *s, const struct vs_sim_options *o,
               struct vs_sim_result *out, struct vs_timeline *tl)
{
    struct vs_sim_options defaults = {0};
    if (!o)
        o = &defaults;
    enum vs_cpolicy policy;
    if (vs_cpolicy_parse(o->policy ? o->policy : "fair", &policy) != 0)
        return VS_EINVAL;
    if (!s || s->nprojects == 0 || s->ncpus < 1)
        return VS_EINVAL;
    double duration = o->duration > 0 ? o->duration : s->duration;
    uint64_t seed = o->seed_set ? o->seed : s->seed;

    struct sim *x = VS_NEW(struct sim);
    vs_sim__init(x, s, policy, duration, seed, tl);
    vs_sim__start(x);
    double next_progress = 0;
    while (vs_sim__step(x) > 0) {
        double t = x->st.now;
        if (o->progress && t >= next_progress) {
            o->progress(o->progress_ctx, t / duration);
            next_progress = t + duration / 200;
        }
    }
    int rc = x->rc;
    if (rc == 0) {
        vs_sim__finish(x);
        vs_metrics_finish(&x->m, out);
        if (o->progress)
            o->progress(o->progress_ctx, 1.0);
    } else if (tl) {
        vs_timeline_cleanup(tl);
    }
    vs_sim__cleanup(x);
    vs_free(x);
    return rc;
}
