/*
 * Private to src/policy/client: the workspace layout and helpers shared by
 * the policy files. Not a public header.
 */
#ifndef VOLSCHED_POLICY_CLIENT_INTERNAL_H
#define VOLSCHED_POLICY_CLIENT_INTERNAL_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rules.h"
#include "volsched/alloc.h"
#include "volsched/client_policy.h"

/* A sort key: (group, key, index) ascending. 16 bytes: the radix passes
 * over 100,000 keys are bound by memory traffic (vs_cstate_validate
 * guarantees indexes below 2^32). */
struct vs_cpkey {
    uint32_t group;
    uint32_t idx;
    double key;
};

/* One project of the round-robin simulation (rr_sim.c), scratch: all of
 * its state in one record, so that an event's loops over the few active
 * projects walk one array. */
struct vs_rrproj {
    double work;        /* CPU seconds each of its unfinished results has had */
    double alloc;       /* CPUs */
    double rate;        /* CPU seconds per second each of its results gets */
    double tsync;       /* when work and the integrals were last brought up */
    double fin;         /* when its next result finishes */
    double nextkey;     /* the work at which that result is done */
    double share;       /* resource share */
    double nf;          /* ncpus * frs(P) */
    double sf, wbm;     /* its shortfall and work_before_minq so far */
    uint32_t p;         /* project index */
    uint32_t next, end; /* its unfinished results: keys[next .. end) */
    uint32_t capped;    /* it got as many CPUs as its results can use */
    double kcpu;        /* CPUs each of its results uses (vs_cpolicy__ncpus) */
    double mc;          /* most of its results running at once (INFINITY: no limit) */
};

struct vs_cpolicy_wsd {
    size_t cap_p, cap_r;

    /* outputs, per project */
    int *rr_dm;
    double *rr_shortfall, *rr_wbm, *rr_frs;
    unsigned *rr_states;
    double *wf_wrs, *wf_prr;
    /* outputs, per result */
    double *rr_finish;
    bool *rr_missed;
    size_t *sc_order;
    uint8_t *sc_why;
    struct vs_caction *en_act;

    /* Scratch, per project: contents do not outlive one call of a step.
     * Each step has its own arrays, named for what they hold. */
    /* the CPU scheduler (cpu_sched.c) */
    double *cs_debt;     /* anticipated debt: the debt less the CPUs given this schedule */
    double *cs_want;     /* share_floor: whole CPUs each project keeps (0: nothing runnable) */
    double *cs_job_cpus; /* CPUs one job of each project uses (only when jobs differ) */
    int *cs_edf_left;    /* EDF picks a project missing deadlines has left */
    size_t *cs_avail;    /* debt_many: unscheduled candidates of each project */
    size_t *cs_gstart, *cs_gend; /* debt_many: each project's group in the candidate list */
    size_t *cs_held;             /* share_floor: results each project has scheduled */
    size_t *cs_nsched;           /* results scheduled, for max_concurrent (only when jobs differ) */
    /* the work fetch (work_fetch.c) */
    double *wf_prio;   /* the priority among projects with a request */
    double *wf_queued; /* wrr: the work each project has queued */
    /* fair's work fetch (fair_fetch.c) */
    double *ff_work;       /* CPU seconds each project has queued */
    double *ff_prio;       /* the order in which projects are asked */
    double *ff_first_free; /* when edf_fits found a CPU free for a new job */
    double *ff_first_dl;   /* each project's earliest queued deadline */
    double *ff_longest;    /* each project's longest queued job, CPU seconds */
    double *ff_share;      /* share among the CPU-intensive projects not suspended */
    size_t *ff_count;      /* results each project has queued */
    size_t *ff_cand;       /* the candidate projects, in the order they are asked */
    size_t *ff_memo;       /* the M_* tests already run for each candidate */
    size_t *ff_waits;      /* a queued job needing the whole host, not running */
    struct vs_rrproj *rr_proj, **rr_act;
    /* scratch, per result */
    struct vs_cpkey *keys, *keys2;
    struct vs_cpkey *bt, *bt2; /* vs_rrsim_busy_time's own, so it may run beside the others */
    /* One list of result indexes the steps use in turn (one array, not
     * three: at 100,000 results it stays in cache from step to step): the
     * CPU scheduler's candidates, the enforcement's results to start, and
     * fair's work fetch keeps each queued job's duration in it (a double,
     * the size of a size_t). */
    size_t *res_list;
    /* scratch, per CPU (fair's work fetch) */
    double *fair_cpu;
    size_t cap_cpu;
};

/* The CPUs each job of project p uses: job_ncpus (0 means 1), at most the
 * host's. */
static inline double vs_cpolicy__ncpus(const struct vs_cstate *st, size_t p)
{
    double k = st->projects[p].job_ncpus;
    if (!(k > 0))
        return 1;
    return k < st->host.ncpus ? k : (double)st->host.ncpus;
}

/* Whether every project's jobs use one CPU each without a max_concurrent
 * (the seeds' model): the CPU counting then reduces to counting results. */
static inline bool vs_cpolicy__one_cpu_jobs(const struct vs_cstate *st)
{
    for (size_t p = 0; p < st->nprojects; p++) {
        const struct vs_cproject *pr = &st->projects[p];
        if ((pr->job_ncpus > 0 && pr->job_ncpus != 1) || pr->max_concurrent > 0)
            return false;
    }
    return true;
}

/* Seed 000's result states, inline for the per-result loops (the public
 * vs_cresult_runnable / _nearly_runnable call these). */
static inline bool vs_cpolicy__runnable(const struct vs_cstate *st, const struct vs_cresult *res)
{
    return !res->done && !res->suspended && res->files == VS_CFILES_READY &&
           !st->projects[res->project].suspended;
}

static inline bool vs_cpolicy__nearly_runnable(const struct vs_cstate *st,
                                               const struct vs_cresult *res)
{
    return !res->done && !res->suspended && res->files != VS_CFILES_DEFERRED &&
           !st->projects[res->project].suspended;
}

/* fair never starts a job that can no longer meet its deadline even if it
 * ran alone from now (at speed, vs_cpolicy__speed): it would only waste
 * the CPU, and, queued, make the servers see a longer queue. Such a result
 * is left out of fair's round-robin simulation, CPU schedule and work
 * fetch queue. */
static inline bool vs_cpolicy__hopeless(const struct vs_cstate *st, const struct vs_cresult *res,
                                        double speed)
{
    return res->remaining > speed * (res->deadline - st->now);
}

/* rules->spare_cpus_only is passed as spare: the steps keep it in a local
 * in their per-result loops (a load through a pointer would be repeated
 * after every store to the schedule's bytes). */
static inline bool vs_cpolicy__abandoned_if(bool spare, const struct vs_cstate *st,
                                            const struct vs_cresult *res, double speed)
{
    return spare && res->task == VS_CTASK_UNSTARTED && vs_cpolicy__hopeless(st, res, speed);
}

static inline bool vs_cpolicy__abandoned(enum vs_cpolicy policy, const struct vs_cstate *st,
                                         const struct vs_cresult *res, double speed)
{
    return vs_cpolicy__abandoned_if(vs_cpolicy__rules(policy)->spare_cpus_only, st, res, speed);
}

/* A hopeless result of fair that has started: lost anyway, it runs only on
 * a CPU nothing else can use (cpu_sched.c), and is left out of the
 * round-robin simulation and the work fetch's queue, as an unstarted one
 * is. Counted as queued work it would stop every fetch (a new job makes it
 * later still, which the work fetch's host cap refuses) while it ran alone
 * to its late end (c_stress_20d_avail: S07's 48-hour job, hopeless after
 * 32 hours of host-off in its 72, ran alone for 23 hours). */
static inline bool vs_cpolicy__lost_if(bool spare, const struct vs_cstate *st,
                                       const struct vs_cresult *res, double speed)
{
    return spare && vs_cpolicy__hopeless(st, res, speed);
}

static inline bool vs_cpolicy__lost(enum vs_cpolicy policy, const struct vs_cstate *st,
                                    const struct vs_cresult *res, double speed)
{
    return vs_cpolicy__lost_if(vs_cpolicy__rules(policy)->spare_cpus_only, st, res, speed);
}

/* ncpus doubles of scratch in the workspace (fair's schedules). */
static inline double *vs_cpolicy__cpu_scratch(struct vs_cpolicy_wsd *d, size_t ncpus)
{
    if (ncpus > d->cap_cpu) {
        d->fair_cpu = vs_xreallocarray(d->fair_cpu, ncpus, sizeof(double));
        d->cap_cpu = ncpus;
    }
    return d->fair_cpu;
}

/* fair's share horizon: a user judges a project's share over about a
 * month. A job of more than twice its project's share of that (at the
 * host's real speed) puts the project further above its share by running
 * than below it by not running, so fair runs such a job only on a CPU
 * nothing else can use, and does not fetch more of it (BOINC's emulator,
 * c_stress_20d: one 192-hour job of a tenth-share project took 40% of the
 * CPU for 20 days). */
#define VS_FAIR_SHARE_HORIZON (30 * 86400.0)

/* The share sum vs_cpolicy__oversized divides by: the CPU-intensive
 * projects that are not suspended. */
static inline double vs_cpolicy__share_sum(const struct vs_cstate *st)
{
    double sum = 0;
    for (size_t p = 0; p < st->nprojects; p++) {
        const struct vs_cproject *pr = &st->projects[p];
        if (!pr->non_cpu_intensive && !pr->suspended)
            sum += pr->resource_share;
    }
    return sum;
}

/*
 * Whether a job of project p needing cpu CPU seconds (at efficiency 1) in
 * the time window (wall seconds to its deadline) is oversized for fair: more
 * than twice the project's share of the horizon, and more than its share
 * of the window (so it could only meet its deadline by taking more than
 * its share; a long job with a distant deadline is time-sliced like any
 * other). Never for a project alone or without a share.
 */
static inline bool vs_cpolicy__too_big(const struct vs_cstate *st, size_t p, double cpu,
                                       double window, double speed, double share_sum)
{
    double f = share_sum > 0 ? st->projects[p].resource_share / share_sum : 1;
    if (!(f < 1) || !(f > 0))
        return false;
    double rate = f * st->host.ncpus * speed;
    return cpu > 2 * rate * VS_FAIR_SHARE_HORIZON && cpu > rate * window;
}

/* An unstarted result of fair that is oversized (above). */
static inline bool vs_cpolicy__oversized_if(bool spare, const struct vs_cstate *st,
                                            const struct vs_cresult *res, double speed,
                                            double share_sum)
{
    return spare && res->task == VS_CTASK_UNSTARTED &&
           vs_cpolicy__too_big(st, res->project, res->remaining, res->deadline - st->now, speed,
                               share_sum);
}

static inline bool vs_cpolicy__oversized(enum vs_cpolicy policy, const struct vs_cstate *st,
                                         const struct vs_cresult *res, double speed,
                                         double share_sum)
{
    return vs_cpolicy__oversized_if(vs_cpolicy__rules(policy)->spare_cpus_only, st, res, speed,
                                    share_sum);
}

/* Rule A and R of the debt update (debt.c) for its two sets: the wall CPU
 * time and the share sum of the runnable and of the potentially runnable
 * CPU-intensive projects. Zero it, then add every project in index order. */
struct vs_cdebt_sums {
    double a_std, r_std, a_ltd, r_ltd;
};

static inline void vs_cdebt__add(struct vs_cdebt_sums *s, const struct vs_cproject *pr,
                                 unsigned flags)
{
    if (pr->non_cpu_intensive)
        return;
    if (flags & VS_CPS_RUNNABLE) {
        s->a_std += pr->wall_cpu_period;
        s->r_std += pr->resource_share;
    }
    if (flags & VS_CPS_POT_RUNNABLE) {
        s->a_ltd += pr->wall_cpu_period;
        s->r_ltd += pr->resource_share;
    }
}

/* vs_cproject_states that also sums *out_sums over the states it computes
 * (so the debt update needs no pass of its own for them). */
void vs_cpolicy__states_sums(const struct vs_cstate *st, unsigned *out_flags,
                             struct vs_cdebt_sums *out_sums);

/* The debt update without validation, from states and sums computed by
 * the caller (vs_cdebt_update computes them). Returns whether the
 * OVERWORKED bit of some project changed with its ltd (its flags then need
 * computing again). */
bool vs_cdebt__update(struct vs_cstate *st, const unsigned *flags,
                      const struct vs_cdebt_sums *sums);

/* The rounding band of the client policies' times (see rr_sim.c): a time
 * difference within this many seconds of the min_queue horizon is
 * rounding, not work. */
#define VS_CPOLICY_REL_EPS 1e-9
static inline double vs_cpolicy__time_eps(const struct vs_cstate *st)
{
    double m = st->host.min_queue, n = st->now < 0 ? -st->now : st->now;
    return VS_CPOLICY_REL_EPS * (m > n ? m : n);
}

/* Grows the workspace to hold np projects and nr results. */
void vs_cpolicy__grow(struct vs_cpolicy_ws *ws, size_t np, size_t nr);

/* Makes the workspace hold np projects and nr results. Inline: every entry
 * point calls it and it almost never grows. */
static inline void vs_cpolicy__reserve(struct vs_cpolicy_ws *ws, size_t np, size_t nr)
{
    const struct vs_cpolicy_wsd *d = ws->d;
    if (np > d->cap_p || nr > d->cap_r)
        vs_cpolicy__grow(ws, np, nr);
}

/* Sorts keys by (group, key, idx); tmp holds n keys. O(n) radix sort. */
void vs_cpolicy__sort(struct vs_cpkey *keys, struct vs_cpkey *tmp, size_t n);

/* The CPU speed factor of the round-robin simulation. */
double vs_cpolicy__speed(const struct vs_chost *h);

/* Suspend kind for a preempted result: kept in memory when the preference
 * says so or when it never checkpointed (removing it would lose all work). */
enum vs_cact_kind vs_cpolicy__suspend_kind(const struct vs_cstate *st, size_t r, bool old_client);

/* The entry points without the snapshot validation (the caller did it):
 * vs_cpolicy_pass validates once for the four steps. */
int vs_rrsim__run(enum vs_cpolicy policy, const struct vs_cstate *st, struct vs_cpolicy_ws *ws,
                  struct vs_rrsim_out *out);
/* The same when the caller has already written the project states of st
 * into the workspace's rr_states (vs_cpolicy_step does). */
int vs_rrsim__run_states(enum vs_cpolicy policy, const struct vs_cstate *st,
                         struct vs_cpolicy_ws *ws, struct vs_rrsim_out *out);
int vs_csched__run(enum vs_cpolicy policy, const struct vs_cstate *st,
                   const struct vs_rrsim_out *rr, struct vs_cpolicy_ws *ws,
                   struct vs_csched_out *out);
int vs_cenforce__run(enum vs_cpolicy policy, struct vs_cstate *st, const struct vs_rrsim_out *rr,
                     const struct vs_csched_out *sched, struct vs_cpolicy_ws *ws,
                     struct vs_cenforce_out *out);
/* fair's requests (into wrs, for the CPU-intensive projects) and the
 * project to ask, or -1 (fair_fetch.c). */
long vs_cfetch__fair_choose(const struct vs_cstate *st, const struct vs_rrsim_out *rr,
                            struct vs_cpolicy_ws *ws, double *wrs);
/* fair_sched.c: whether fair can stay out of deadline mode this period
 * (every result that can still meet its deadline meets it in a
 * deadline-order schedule that starts two periods from now). */
bool vs_csched__fair_slack_ample(const struct vs_cstate *st, struct vs_cpolicy_wsd *d, double speed,
                                 double share_sum);
/* Whether some result fair_sched.c counts has less slack (deadline less
 * now less its remaining time) than a period or a quarter of its delay
 * bound:
 * deadline mode then, whatever the round-robin simulation says. */
bool vs_csched__fair_urgent(const struct vs_cstate *st, double speed, double share_sum);
/* The work fetch when the caller has also reserved the workspace. */
int vs_cfetch__run(enum vs_cpolicy policy, const struct vs_cstate *st,
                   const struct vs_rrsim_out *rr, struct vs_cpolicy_ws *ws,
                   struct vs_cfetch_out *out);

#endif
