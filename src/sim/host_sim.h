/*
 * The host simulator's shared state, for its three parts: the event loop
 * (host_sim.c), the host's results and their books (sim_jobs.c) and the
 * per-project server model (sim_server.c). Internal to src/sim.
 */
#ifndef VOLSCHED_SIM_HOST_SIM_H
#define VOLSCHED_SIM_HOST_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics.h"
#include "volsched/buf.h"
#include "volsched/client_policy.h"
#include "volsched/eventq.h"
#include "volsched/hsim.h"
#include "volsched/rng.h"
#include "volsched/server_policy.h"
#include "volsched/sim.h"

/* The simulated host's speed per CPU as the server sees it, its platform,
 * and the offset of simulated time on the server's clock. */
#define VS_SIM_FLOPS    1e9
#define VS_SIM_PLATFORM "x86_64-pc-linux-gnu"
#define VS_SIM_EPOCH    1.0e9
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
    double len;       /* its true run time on its CPUs at full speed, seconds */
    /* With the project's est != 1: the true run time left (res->remaining
     * is then the client's estimate, see vs_sim__estimate). */
    double left;
    double run_wall; /* wall seconds it ran (for the learned cpu_efficiency) */
    /* In the last schedule when equal to sim.sched_gen: marking a schedule
     * then touches only the scheduled results, not all of them. */
    uint64_t sched_gen;
    int64_t ext; /* the hooked server's id of it (hsim.h); -1 otherwise */
};

/* A finished result waiting to be reported to its server. */
struct report {
    int project;
    int64_t id;
    double deadline;
    double cpu;
    double due; /* when it becomes overdue for reporting */
    int64_t ext;
};

/* One project's server: its configuration and what it keeps per host. */
struct vs_sim_server {
    struct vs_sp_config cfg;
    struct vs_sp_app app;
    struct vs_sp_app_version av;
    struct vs_sp_hav hav; /* the daily quota row of this host */
    double prev_rpc;      /* the host's previous RPC (simulated s); 0 = never */
};

struct proj {
    struct vs_sim_server srv;
    bool server_up;
    int backoff_n;      /* RPCs in a row that failed (vs_cbackoff) */
    int no_work_n;      /* work requests in a row that brought nothing (vs_cbackoff) */
    int64_t jobs_left;  /* -1: unlimited */
    int64_t unfinished; /* this project's results in st.results not done */
    /* est != 1: the client sees the server's estimate (est x C) corrected
     * by its duration correction factor, not the true length. */
    bool estimating;
    double dcf;
    double kcpu; /* CPUs each job uses (the scenario's ncpus) */
};

struct sim {
    const struct vs_scenario *s;
    enum vs_cpolicy policy;
    double end;
    struct vs_eventq q;
    struct vs_rng rng_host, rng_server, rng_jobs;
    struct vs_rng rng_client; /* the client's own draws (its backoff's jitter) */
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
    double cpu_eff;   /* the CPU a job really gets per wall second (the client learns it) */
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
    bool edf_mode; /* the last schedule ran some result earliest deadline first */

    /* The host as the servers see it, and scratch for the requests. */
    struct vs_sp_host sp_host;
    struct vs_sp_inprog *req_inprog;
    struct vs_sp_ip_result *req_ip;
    size_t req_cap;

    int rc; /* first policy error */
    /* The project hooks serve (hsim.h), or NULL: every server built in. */
    const struct vs_hsim_hooks *hooks;
    /* The step loop's guard against spinning at one instant. */
    double last_t;
    int stuck;
};

/* What hsim.h hands out: the simulator itself. */
struct vs_hsim {
    struct sim x;
};

/* host_sim.c: the run's set-up, its instants, and its end. */
void vs_sim__init(struct sim *x, const struct vs_scenario *s, enum vs_cpolicy policy,
                  double duration, uint64_t seed, struct vs_timeline *tl);
void vs_sim__start(struct sim *x);
double vs_sim__next(const struct sim *x);
int vs_sim__step(struct sim *x);
void vs_sim__cleanup(struct sim *x);

/* sim_jobs.c: the host's results, their CPU slots and timeline segments. */
void vs_sim__run_end(struct sim *x, size_t r);
void vs_sim__seg_emit(struct sim *x, size_t r);
void vs_sim__slot_give(struct sim *x, int i);
void vs_sim__add_result(struct sim *x, size_t p, double len, double deadline);
void vs_sim__compact(struct sim *x);
void vs_sim__complete(struct sim *x, size_t r);
/* Carries out enforcement's decisions (out of line: most passes have none). */
void vs_sim__apply_action_list(struct sim *x, const struct vs_cenforce_out *e);
void vs_sim__finish(struct sim *x);
/* Records project p's queued work for its peak (after jobs arrive). */
void vs_sim__note_queued(struct sim *x, size_t p);
/* The client's estimate of result r's remaining run time (est != 1). */
double vs_sim__estimate(const struct sim *x, size_t r);
/* Result r's true run time left. */
static inline double *vs_sim__left(struct sim *x, size_t r)
{
    return x->pj[x->st.results[r].project].estimating ? &x->jobs[r].left
                                                      : &x->st.results[r].remaining;
}
/* Gives back w seconds of result r's progress (lost work, a restart's
 * cost), in its truth and the client's estimate. */
void vs_sim__add_work(struct sim *x, size_t r, double w);

/* sim_server.c: project p's server, and one scheduler RPC to it. */
void vs_sim__server_init(struct sim *x, size_t p);
int vs_sim__rpc(struct sim *x, size_t p, double request_pn, double share_frac);

/* What project p's built-in server answered to one work request. */
struct vs_sim_reply {
    int sent;         /* jobs sent (added to the host's results) */
    bool deadlines;   /* nothing sent because of deadlines (seed 000) */
    double delay;     /* the reply's request delay, seconds */
    unsigned refused; /* bit 1 << r for each enum vs_sp_reason r that refused a job */
};
/* The built-in server's answer to a request for `request` instance-seconds
 * of work, built from the host's state now (the request the client sends):
 * the jobs go to the host, the reply's explanation (vs_sp_explain) is
 * appended to explain unless it is NULL. No report, no backoff:
 * vs_sim__rpc does those. */
void vs_sim__serve(struct sim *x, size_t p, double request, struct vs_buf *explain,
                   struct vs_sim_reply *out);

static inline bool available(const struct sim *x)
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

static inline void push_wake(struct sim *x, double t)
{
    if (t < x->end)
        vs_eventq_push(&x->q, t, EV_WAKE, 0, 0);
}

static inline void seg_open(struct sim *x, size_t r)
{
    if (x->tl && x->jobs[r].seg_start < 0)
        x->jobs[r].seg_start = x->st.now;
}

/* Ends result r's open timeline segment. The test stays apart from the
 * work, so that a run without a timeline pays only for it. */
static inline void seg_close(struct sim *x, size_t r)
{
    if (x->tl)
        vs_sim__seg_emit(x, r);
}

#endif
