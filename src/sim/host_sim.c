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
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eventq.h"
#include "metrics.h"
#include "volsched/alloc.h"
#include "volsched/client_policy.h"
#include "volsched/rng.h"
#include "volsched/sim.h"

const char *const vs_sim_policies[] = {"shortfall", "debt", "wrr", NULL};

/* A server's delay between RPCs (BOINC's request_delay / min_sendwork). */
#define SERVER_REQUEST_DELAY 60.0
/* Client backoff after a failed or empty RPC: 1 minute doubling to 4 hours. */
#define BACKOFF_MIN 60.0
#define BACKOFF_MAX (4 * 3600.0)
/* How long a server that refused work because of deadlines asks the client
 * to wait (the client is latency-limited meanwhile). */
#define LATENCY_LIMIT_DELAY 600.0
/* Most jobs one reply carries. */
#define MAX_JOBS_PER_RPC 1000
/* Most RPCs at one instant, so a confused policy cannot loop forever. */
#define MAX_RPCS_PER_INSTANT 8
/* A result within this many CPU seconds of its end is finished. */
#define DONE_EPS 1e-6

enum ev_type {
    EV_END,
    EV_SCHED_PERIOD,
    EV_ENFORCE,
    EV_HOST_ON,
    EV_HOST_OFF,
    EV_ACTIVE_ON,
    EV_ACTIVE_OFF,
    EV_SERVER_UP,
    EV_SERVER_DOWN,
    EV_WAKE, /* re-run the scheduler and work fetch (RPC deferral ended) */
    EV_REPORT_DUE,
};

/* The simulator's side of one result, parallel to st.results. */
struct job {
    int64_t id;
    double cpu_used;  /* CPU seconds consumed so far, lost work included */
    double seg_start; /* start of the open timeline segment, or -1 */
    int cpu;          /* CPU slot while running, -1 otherwise */
    /* In the last schedule when equal to sim.sched_gen: marking a schedule
     * then touches only the scheduled results, not all of them. */
    uint64_t sched_gen;
};

/* A finished result waiting to be reported to its server. */
struct report {
    int project;
    int64_t id;
    double deadline;
    double cpu;
    double due; /* when it becomes overdue for reporting */
};

struct proj {
    bool server_up;
    int backoff_n;
    int64_t jobs_left;  /* -1: unlimited */
    int64_t unfinished; /* this project's results in st.results not done */
};

struct sim {
    const struct vs_scenario *s;
    enum vs_cpolicy policy;
    double end;
    struct vs_eventq q;
    struct vs_rng rng_host, rng_server, rng_jobs;
    struct vs_metrics m;
    struct vs_timeline *tl; /* may be NULL */

    struct vs_cstate st;
    struct vs_cproject *cp; /* st.projects */
    struct job *jobs;       /* parallel to st.results */
    size_t cap;
    struct proj *pj;
    struct report *reports;
    size_t nreports, capreports;
    int64_t next_job_id;

    bool host_on, active;
    double off_since; /* when the host last stopped computing */
    bool *slot_used;
    int nslots;
    /* The results that are RUNNING and not done: their indexes in
     * increasing order (run[nrun], capacity cap like st.results) and their
     * number per project (for the figures). Kept up to date at every change
     * of task, done or index, so that no event scans all the results. */
    size_t *run;
    size_t nrun;
    int *running;
    size_t ndone;     /* done results still in st.results (compact drops them) */
    size_t done_from; /* with ndone > 0: the least index of a done result */

    struct vs_cpolicy_ws ws;
    struct vs_cpolicy_out out;
    bool validated;     /* the snapshot passed vs_cstate_validate once */
    bool have_sched;    /* out.rr / out.sched describe the current arrays */
    uint64_t sched_gen; /* bumped by each schedule (see job.sched_gen) */
    uint32_t enforce_gen;

    /* Scratch for the server-side deadline check. */
    double *edf_rem, *edf_dl, *edf_late, *edf_free;
    size_t *edf_idx;
    size_t edf_cap;

    int rc; /* first policy error */
};

static bool available(const struct sim *x)
{
    return x->host_on && x->active;
}

/*
 * fmin and fmax without the libm call (the compiler cannot inline them
 * because of their NaN rules; they were a visible share of a run). The
 * simulator's times and amounts are never NaN, and for operands that are not
 * NaN these return the same value as fmin and fmax.
 */
static inline double min2(double a, double b)
{
    return b < a ? b : a;
}

static inline double max2(double a, double b)
{
    return b > a ? b : a;
}

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

static void run_end(struct sim *x, size_t r)
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

static void seg_open(struct sim *x, size_t r)
{
    if (x->tl && x->jobs[r].seg_start < 0)
        x->jobs[r].seg_start = x->st.now;
}

static void seg_emit(struct sim *x, size_t r)
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

/* Ends result r's open timeline segment. The test stays apart from the
 * work, so that a run without a timeline pays only for it. */
static inline void seg_close(struct sim *x, size_t r)
{
    if (x->tl)
        seg_emit(x, r);
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

static void slot_give(struct sim *x, int i)
{
    if (i >= 0)
        x->slot_used[i] = false;
}

/* ---------------------------------------------------------------- results */

static void add_result(struct sim *x, size_t p, double len, double deadline)
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
    res->deadline = deadline;
    res->received = x->st.now;
    res->files = VS_CFILES_READY;
    res->task = VS_CTASK_UNSTARTED;
    x->jobs[r] = (struct job){.id = x->next_job_id++, .seg_start = -1, .cpu = -1};
    x->pj[p].unfinished++;
    x->have_sched = false;
}

/* Drops finished results from the arrays (they wait in x->reports). */
static void compact(struct sim *x)
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

static void push_wake(struct sim *x, double t)
{
    if (t < x->end)
        vs_eventq_push(&x->q, t, EV_WAKE, 0, 0);
}

static void complete(struct sim *x, size_t r)
{
    struct vs_cresult *res = &x->st.results[r];
    struct job *j = &x->jobs[r];
    double now = x->st.now;
    bool missed = now > res->deadline;
    seg_close(x, r);
    slot_give(x, j->cpu);
    j->cpu = -1;
    run_end(x, r);
    res->done = true;
    res->remaining = 0;
    if (x->ndone++ == 0 || r < x->done_from)
        x->done_from = r;
    x->pj[res->project].unfinished--;
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
    };
    if (due <= now)
        x->cp[res->project].report_overdue = true;
    else if (due < x->end)
        vs_eventq_push(&x->q, due, EV_REPORT_DUE, (int)res->project, 0);
}

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
        x->st.now = t;
    }
    if (!avail)
        return;
    for (size_t k = 0; k < x->nrun;) {
        size_t r = x->run[k];
        struct vs_cresult *res = &x->st.results[r];
        if (dt > 0) {
            struct job *j = &x->jobs[r];
            double step = min2(dt, res->remaining);
            res->remaining -= step;
            j->cpu_used += step;
            x->cp[res->project].wall_cpu_period += dt;
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
        if (res->remaining <= DONE_EPS) {
            /* This takes r out of the list: run[k] is now the next one. */
            complete(x, r);
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
        best = min2(best, x->st.now + res->remaining);
        double c = x->s->projects[res->project].checkpoint_period;
        if (x->jobs[r].sched_gen != x->sched_gen && c > 0)
            best = min2(best, x->st.now + max2(c - res->wall_since_checkpoint, 1e-3));
    }
    return best;
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
            res->remaining += sp->resume_cost;
            vs_metrics_restart_lost(&x->m, sp->resume_cost);
        }
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
            run_end(x, r);
        seg_close(x, r);
        slot_give(x, j->cpu);
        j->cpu = -1;
        vs_metrics_preempt(&x->m);
        if (a->kind == VS_CACT_SUSPEND_KEEP) {
            res->task = VS_CTASK_SUSPENDED;
        } else {
            /* The process exits: work since the last checkpoint is lost. */
            double lost = res->wall_since_checkpoint;
            res->remaining += lost;
            vs_metrics_restart_lost(&x->m, lost);
            res->wall_since_checkpoint = 0;
            res->task = VS_CTASK_REMOVED;
        }
        break;
    }
}

/*
 * Carries out enforcement's decisions and arms its re-check. Most passes
 * decide nothing; the loop stays out of line so that such a pass does not
 * pay for saving the registers its body needs (18 instructions a pass).
 */
static __attribute__((noinline)) void apply_action_list(struct sim *x,
                                                        const struct vs_cenforce_out *e)
{
    for (size_t i = 0; i < e->n; i++)
        apply_action(x, &e->actions[i]);
}

static void apply_actions(struct sim *x, const struct vs_cenforce_out *e)
{
    if (e->n > 0)
        apply_action_list(x, e);
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
    size_t n = x->out.sched.n, nr = x->st.nresults;
    struct job *jobs = x->jobs;
    for (size_t i = 0; i < n; i++)
        if (order[i] < nr)
            jobs[order[i]].sched_gen = gen;
}

/* ---------------------------------------------------------------- server */

static void backoff(struct sim *x, size_t p)
{
    struct proj *pj = &x->pj[p];
    double d = BACKOFF_MIN * pow(2, pj->backoff_n < 16 ? pj->backoff_n : 16);
    if (pj->backoff_n < 16)
        pj->backoff_n++;
    x->cp[p].min_rpc_time = x->st.now + min2(d, BACKOFF_MAX);
    push_wake(x, x->cp[p].min_rpc_time);
}

static void edf_reserve(struct sim *x, size_t n)
{
    if (n <= x->edf_cap)
        return;
    x->edf_cap = n * 2;
    x->edf_rem = vs_xreallocarray(x->edf_rem, x->edf_cap, sizeof(double));
    x->edf_dl = vs_xreallocarray(x->edf_dl, x->edf_cap, sizeof(double));
    x->edf_late = vs_xreallocarray(x->edf_late, x->edf_cap, sizeof(double));
    x->edf_idx = vs_xreallocarray(x->edf_idx, x->edf_cap, sizeof(size_t));
}

static int edf_cmp(const void *a, const void *b, void *key)
{
    const double *dl = key;
    size_t i = *(const size_t *)a, k = *(const size_t *)b;
    double di = dl[i], dk = dl[k];
    if (di != dk)
        return di < dk ? -1 : 1;
    return i < k ? -1 : (i > k ? 1 : 0);
}

/*
 * Lateness of each of the n jobs (edf_rem, edf_dl) under earliest-deadline-
 * first list scheduling on the host's CPUs at its average speed, into
 * edf_late.
 */
static void edf_simulate(struct sim *x, size_t n)
{
    double speed = x->s->on_frac * x->s->active_frac;
    /* The client runs EDF only once it sees a deadline in danger, so a job
     * may start up to a scheduling period later than EDF would start it:
     * demand that much slack. */
    double margin = x->s->sched_period;
    int ncpu = x->s->ncpus;
    for (size_t i = 0; i < n; i++)
        x->edf_idx[i] = i;
    qsort_r(x->edf_idx, n, sizeof(size_t), edf_cmp, x->edf_dl);
    for (int c = 0; c < ncpu; c++)
        x->edf_free[c] = x->st.now;
    for (size_t k = 0; k < n; k++) {
        size_t i = x->edf_idx[k];
        int best = 0;
        for (int c = 1; c < ncpu; c++)
            if (x->edf_free[c] < x->edf_free[best])
                best = c;
        x->edf_free[best] += x->edf_rem[i] / speed;
        x->edf_late[i] = fmax(0, x->edf_free[best] - (x->edf_dl[i] - margin));
    }
}

/*
 * The server-side deadline check seed 000 describes (and BOINC never built):
 * send a job only if an EDF simulation of the host's queue says it meets its
 * deadline and no queued job misses by more than it did before. The queue
 * is what the request lists (the client's unfinished results). "Meets" here
 * means with a scheduling period to spare (see edf_simulate).
 */
static bool deadline_check(struct sim *x, double len, double deadline)
{
    if (deadline < x->st.now + x->s->min_queue)
        return false;
    size_t n = 0;
    edf_reserve(x, x->st.nresults + 1);
    for (size_t r = 0; r < x->st.nresults; r++) {
        const struct vs_cresult *res = &x->st.results[r];
        if (res->done || x->s->projects[res->project].non_cpu_intensive)
            continue;
        x->edf_rem[n] = res->remaining;
        x->edf_dl[n] = res->deadline;
        n++;
    }
    edf_simulate(x, n);
    double before_late[64];
    size_t keep = n < 64 ? n : 64;
    /* Only the first 64 are compared one by one; the rest by their sum. */
    double before_rest = 0;
    for (size_t i = 0; i < n; i++) {
        if (i < keep)
            before_late[i] = x->edf_late[i];
        else
            before_rest += x->edf_late[i];
    }
    x->edf_rem[n] = len;
    x->edf_dl[n] = deadline;
    edf_simulate(x, n + 1);
    if (x->edf_late[n] > 0)
        return false;
    double after_rest = 0;
    for (size_t i = 0; i < n; i++) {
        if (i < keep) {
            if (x->edf_late[i] > before_late[i] + 1e-9)
                return false;
        } else {
            after_rest += x->edf_late[i];
        }
    }
    return after_rest <= before_rest + 1e-9;
}

/*
 * One scheduler RPC to project p asking for request_pn project-normalized
 * seconds. Reports the project's finished results, then the server answers
 * with jobs of the project's shape. Returns the number of jobs received.
 */
static int rpc(struct sim *x, size_t p, double request_pn, double share_frac)
{
    struct vs_cproject *cp = &x->cp[p];
    struct proj *pj = &x->pj[p];
    const struct vs_scn_project *sp = &x->s->projects[p];
    double now = x->st.now;

    vs_metrics_rpc(&x->m, (int)p);
    cp->rpc_user_request = false;
    if (!pj->server_up) {
        backoff(x, p);
        return 0;
    }
    /* Report. */
    size_t w = 0;
    for (size_t i = 0; i < x->nreports; i++) {
        struct report *rep = &x->reports[i];
        if ((size_t)rep->project != p) {
            x->reports[w++] = *rep;
            continue;
        }
        if (now > rep->deadline)
            vs_metrics_job_reported_late(&x->m, (int)p, rep->cpu);
    }
    x->nreports = w;
    cp->report_overdue = false;

    int sent = 0, refused = 0;
    /* The server's job limit (BOINC's max_wus_in_progress): it counts this
     * host's unfinished jobs of the project. */
    int64_t room = INT64_MAX;
    if (sp->max_in_progress > 0)
        room = sp->max_in_progress - pj->unfinished;
    if (request_pn > 0 && pj->jobs_left != 0 && room > 0) {
        struct vs_chost h = x->st.host;
        double cpu_req = request_pn * vs_cpolicy_pn_rate(&h, share_frac > 0 ? share_frac : 1);
        double nd = ceil(cpu_req / sp->cpu_time);
        int n = nd < 1 ? 1 : (nd > MAX_JOBS_PER_RPC ? MAX_JOBS_PER_RPC : (int)nd);
        if (sp->non_cpu_intensive)
            n = 1;
        if (n > room)
            n = (int)room;
        for (int k = 0; k < n && pj->jobs_left != 0; k++) {
            double len = sp->cpu_time;
            if (sp->spread > 0)
                len *= 1 + sp->spread * (2 * vs_rng_double(&x->rng_jobs) - 1);
            double deadline = now + sp->delay_bound;
            if (x->s->server_deadline_check && !sp->non_cpu_intensive &&
                !deadline_check(x, len, deadline)) {
                refused++;
                break;
            }
            add_result(x, p, len, deadline);
            if (pj->jobs_left > 0)
                pj->jobs_left--;
            sent++;
        }
        vs_metrics_sent(&x->m, (int)p, sent);
    }
    if (request_pn > 0 && sent == 0) {
        if (refused) {
            /* "No work because of deadlines": latency-limited until the
             * request delay has passed. */
            cp->latency_limited_until = now + LATENCY_LIMIT_DELAY;
            cp->min_rpc_time = now + LATENCY_LIMIT_DELAY;
            push_wake(x, cp->min_rpc_time);
        } else {
            backoff(x, p);
        }
    } else {
        pj->backoff_n = 0;
        cp->min_rpc_time = now + SERVER_REQUEST_DELAY;
    }
    return sent;
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
        compact(x);
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
                for (size_t p = 0; p < x->st.nprojects; p++)
                    if (x->cp[p].min_rpc_time > x->st.now && x->pj[p].jobs_left != 0)
                        t = min2(t, x->cp[p].min_rpc_time);
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
        (void)rpc(x, p, f->request_pn, frac);
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
            run_end(x, r);
            double lost = res->wall_since_checkpoint;
            res->remaining += lost;
            vs_metrics_restart_lost(&x->m, lost);
            res->wall_since_checkpoint = 0;
            res->task = VS_CTASK_REMOVED;
            slot_give(x, x->jobs[r].cpu);
            x->jobs[r].cpu = -1;
        }
    }
    if (was_available)
        x->off_since = x->st.now;
}

/* ---------------------------------------------------------------- run */

static void sim_init(struct sim *x, const struct vs_scenario *s, enum vs_cpolicy policy,
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
    };
    x->cp = vs_xcalloc(s->nprojects, sizeof(*x->cp));
    x->pj = vs_xcalloc(s->nprojects, sizeof(*x->pj));
    for (size_t p = 0; p < s->nprojects; p++) {
        x->cp[p].name = s->projects[p].name;
        x->cp[p].resource_share = s->projects[p].share;
        x->cp[p].non_cpu_intensive = s->projects[p].non_cpu_intensive;
        x->pj[p].server_up = true;
        x->pj[p].jobs_left = s->projects[p].jobs > 0 ? s->projects[p].jobs : -1;
    }
    x->st.projects = x->cp;
    x->st.nprojects = s->nprojects;
    x->nslots = s->ncpus;
    x->slot_used = vs_xcalloc((size_t)s->ncpus, sizeof(bool));
    x->running = vs_xcalloc(s->nprojects, sizeof(int));
    x->edf_free = vs_xcalloc((size_t)s->ncpus, sizeof(double));
    x->host_on = x->active = true;
    x->sched_gen = 1; /* a new result's 0 then means "not scheduled" */
    if (tl) {
        vs_timeline_init(tl);
        tl->duration = duration;
        tl->ncpus = s->ncpus;
    }
}

static void sim_cleanup(struct sim *x)
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
    vs_free(x->edf_rem);
    vs_free(x->edf_dl);
    vs_free(x->edf_late);
    vs_free(x->edf_idx);
    vs_free(x->edf_free);
}

/* Closes the books at the end of the run. */
static void finish(struct sim *x)
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

int vs_sim_run(const struct vs_scenario *s, const struct vs_sim_options *o,
               struct vs_sim_result *out, struct vs_timeline *tl)
{
    struct vs_sim_options defaults = {0};
    if (!o)
        o = &defaults;
    enum vs_cpolicy policy;
    if (vs_cpolicy_parse(o->policy ? o->policy : "shortfall", &policy) != 0)
        return VS_EINVAL;
    if (!s || s->nprojects == 0 || s->ncpus < 1)
        return VS_EINVAL;
    double duration = o->duration > 0 ? o->duration : s->duration;
    uint64_t seed = o->seed_set ? o->seed : s->seed;

    struct sim *x = VS_NEW(struct sim);
    sim_init(x, s, policy, duration, seed, tl);

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

    double next_progress = 0;
    double last_t = -1;
    int stuck = 0;
    for (;;) {
        double t = min2(vs_eventq_peek_time(&x->q), next_internal(x));
        if (t > duration)
            t = duration;
        /* Many steps at one instant mean a bug (events rescheduling each
         * other at the same time); stop rather than spin. */
        stuck = t > last_t ? 0 : stuck + 1;
        last_t = t;
        if (VS_NEVER(stuck > 100000)) {
            x->rc = VS_EINTERNAL;
            break;
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
            break;
        if (available(x)) {
            if (need_pass)
                pass(x);
            else if (need_enforce)
                enforce_only(x);
        }
        if (x->rc)
            break;
        if (o->progress && t >= next_progress) {
            o->progress(o->progress_ctx, t / duration);
            next_progress = t + duration / 200;
        }
    }
    int rc = x->rc;
    if (rc == 0) {
        finish(x);
        vs_metrics_finish(&x->m, out);
        if (o->progress)
            o->progress(o->progress_ctx, 1.0);
    } else if (tl) {
        vs_timeline_cleanup(tl);
    }
    sim_cleanup(x);
    vs_free(x);
    return rc;
}
