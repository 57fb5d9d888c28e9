/*
 * Client scheduling policies (pure): which results run, when preemption is
 * enforced, and which project to ask for how much work.
 *
 * Three generations of BOINC's client policy are implemented, selected by
 * name, because the simulator compares them:
 *
 *   "fair" (default)       seed 000's scheduler with the work fetch fixed
 *                          (src/policy/client/fair_fetch.c): never queue a
 *                          job the host cannot finish by its deadline (an
 *                          EDF test of the queue at the host's real speed),
 *                          a project keeps no more than its share of the
 *                          buffer and of the CPUs unless CPUs would idle,
 *                          ties broken by share and name, not list order.
 *   "shortfall"            seed 000: nearly-runnable results in the
 *                          round-robin simulation, shortfall(P) and
 *                          total_shortfall, EDF + "keep a result running for
 *                          the scheduling period", X/Y/T enforcement,
 *                          non-CPU-intensive projects.
 *   "debt"                 seed 002: work_before_minq(P), the 8-step CPU
 *                          scheduler, enforcement with the sched_period/2
 *                          grace, work_to_fill_buf(P).
 *   "wrr"                  the older client both seeds replace: weighted
 *                          round-robin by short-term debt among all projects
 *                          with runnable work, no deadline awareness, work
 *                          fetch that keeps at least one result per project
 *                          and min_queue * ncpus of work, by share.
 *
 * Everything here is pure: the caller passes a snapshot (struct vs_cstate)
 * that includes the current time; the functions read it and write decisions
 * into storage owned by a workspace (struct vs_cpolicy_ws). Nothing reads the
 * clock, a file or a global. The only writes into the snapshot are the
 * policy-owned state fields marked "policy-owned" below (debts, the pending
 * preemption mark), which the driver must keep from one call to the next.
 *
 * Times are in seconds. Absolute times (now, deadlines, checkpoint times) are
 * on one axis of the driver's choice (the simulator uses simulated seconds,
 * a real client Unix time, `volsched explain` uses now = 0).
 *
 * HOW A DRIVER CALLS THIS (the simulator's event loop or a real client):
 *
 *   setup:  vs_cpolicy_ws_init(&ws); fill a struct vs_cstate with the host,
 *           the projects (std = ltd = 0 for new projects) and the results.
 *
 *   each step, at time now (an event: result finished, new results ready,
 *   checkpoint, end of the scheduling period, user action, poll tick):
 *
 *   1. Account for the time since the previous step (dt = now - prev;
 *      vs_cpolicy_account does the first part):
 *      for every result whose task is VS_CTASK_RUNNING, add dt to its
 *      wall_since_checkpoint and to its project's wall_cpu_period (wall CPU
 *      time, not actual CPU time), and subtract the CPU it got
 *      (dt * cpu_efficiency while BOINC is on and active) from remaining.
 *      When an app checkpoints, set checkpointed = true, checkpoint_time =
 *      that time and wall_since_checkpoint = 0. When a result finishes, set
 *      done = true (or drop it from the array; indexes then change, so run
 *      a whole pass before enforcing again). Keep suspended, files and
 *      the project flags (min_rpc_time, no_new_work, latency_limited_until,
 *      ...) current. Set st.now = now.
 *   2. Whenever the CPU scheduler is to run (result completed, end of the
 *      scheduling period, new results runnable, user action):
 *        vs_cpolicy_step(policy, &st, &ws, &out), which is
 *        vs_cdebt_update(policy, &st);          debts from wall_cpu_period
 *        vs_cpolicy_pass(policy, &st, &ws, &out) or the four steps:
 *          vs_rrsim_run -> vs_csched_run -> vs_cenforce_run -> vs_cfetch_run
 *      Apply out.enforce.actions in order: START / RESUME set task =
 *      VS_CTASK_RUNNING and running_since = now; SUSPEND_KEEP sets task =
 *      VS_CTASK_SUSPENDED (the process stays in memory); SUSPEND_REMOVE sets
 *      task = VS_CTASK_REMOVED (the process exits; the result restarts from
 *      its last checkpoint, so the driver adds wall_since_checkpoint's worth
 *      of CPU back to remaining and zeroes wall_since_checkpoint). Then set
 *      st.last_sched_time = now.
 *   3. Between scheduler runs, call vs_cenforce_run again (with the same
 *      schedule) when a running result checkpoints and at
 *      out.enforce.recheck_at: the shortfall and debt policies delay some
 *      preemptions until a checkpoint or a grace period ends.
 *   4. When the driver considers a scheduler RPC (BOINC: every few minutes,
 *      or as needed), use out.fetch (or call vs_cfetch_run on a fresh
 *      vs_rrsim_run): if fetch.project >= 0, contact that project asking
 *      for fetch.request_pn project-normalized seconds (work_req_seconds),
 *      which may be 0 when the RPC is forced for another reason.
 *
 * Storage: every output array lives in the workspace and stays valid until
 * the next call that writes the same output on that workspace. A workspace
 * grows to the largest snapshot it has seen; calls allocate only when it
 * grows, never per result.
 */
#ifndef VOLSCHED_CLIENT_POLICY_H
#define VOLSCHED_CLIENT_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "volsched/error.h"

/* ---------------------------------------------------------------- policy */

enum vs_cpolicy {
    VS_CPOLICY_SHORTFALL = 0, /* seed 000 (not the default: see VS_CPOLICY_DEFAULT) */
    VS_CPOLICY_DEBT = 1,      /* seed 002 */
    VS_CPOLICY_WRR = 2,       /* the older client: weighted round-robin */
    VS_CPOLICY_FAIR = 3,      /* seed 000 with deadline- and share-capped work fetch */
};

/* The policy the client, `volsched sim` and popsim use when none is named. */
#define VS_CPOLICY_DEFAULT VS_CPOLICY_FAIR
#define VS_CPOLICY_COUNT   4

/*
 * Parses a policy name ("fair", "shortfall", "debt", "wrr"; exact, lowercase).
 * Returns 0 and writes *out_policy, or VS_EINVAL for any other string or NULL.
 */
VS_MUST_CHECK int vs_cpolicy_parse(const char *name, enum vs_cpolicy *out_policy);

/* Returns the static name of a policy ("shortfall" ...), or "?" if invalid. */
const char *vs_cpolicy_name(enum vs_cpolicy policy);

/* Returns a static comma-separated list of all names, for --help texts. */
const char *vs_cpolicy_names(void);

/* ---------------------------------------------------------------- snapshot */

/* The host and the user's preferences. */
struct vs_chost {
    int ncpus;             /* CPUs BOINC uses (min of physical and max_cpus); >= 1 */
    double on_frac;        /* fraction of time BOINC runs, (0, 1] */
    double active_frac;    /* fraction of that time computing is allowed, (0, 1] */
    double cpu_efficiency; /* actual CPU / wall CPU of BOINC apps, (0, 1] */
    double min_queue;      /* seconds of work to keep queued per CPU (>= 0) */
    double sched_period;   /* the CPU scheduling period, seconds (> 0) */
    bool leave_in_memory;  /* the "leave applications in memory" preference */
    double flops_per_cpu;  /* for vs_cpolicy_pn_flops; 0 when unknown */
    /* work_buf_additional_days, seconds per CPU (>= 0): fair fetches when
     * less than min_queue is queued, then up to min_queue + extra_queue.
     * The seed policies know only min_queue. */
    double extra_queue;
};

/* Where a result's input files are. */
enum vs_cfiles {
    VS_CFILES_READY = 0,       /* all downloaded */
    VS_CFILES_DOWNLOADING = 1, /* some being downloaded, none deferred */
    VS_CFILES_DEFERRED = 2,    /* some download is in a 'download deferred' state */
};

/* What the result's app process is doing (maintained by the driver). */
enum vs_ctask {
    VS_CTASK_UNSTARTED = 0, /* never started */
    VS_CTASK_RUNNING = 1,   /* executing */
    VS_CTASK_SUSPENDED = 2, /* preempted, process kept in memory */
    VS_CTASK_REMOVED = 3,   /* preempted, process gone; restarts from checkpoint */
};

struct vs_cresult {
    const char *name; /* borrowed; may be NULL; only for output */
    size_t project;   /* index into vs_cstate.projects */
    double remaining; /* estimated CPU seconds to completion (at efficiency 1), >= 0 */
    double deadline;  /* absolute report deadline */
    double received;  /* absolute time received: "received first" (ties: least index) */
    enum vs_cfiles files;
    bool suspended; /* suspended by the user */
    bool done;      /* finished computing: every policy ignores it */

    enum vs_ctask task;
    double running_since;         /* start of the current uninterrupted run (task RUNNING) */
    bool checkpointed;            /* has checkpointed at least once */
    double checkpoint_time;       /* absolute time of the last checkpoint (if checkpointed) */
    double wall_since_checkpoint; /* wall CPU time run since the last checkpoint (or start) */

    /* Policy-owned (debt policy): preemption decided but delayed (grace). */
    bool preempt_pending;
    double preempt_since; /* when it was first decided */

    void *user; /* the driver's; never touched */
};

struct vs_cproject {
    const char *name;      /* borrowed; may be NULL; only for output */
    double resource_share; /* >= 0; 0 = a backup project (fair: fetched from and run only
                            * when the others leave a CPU idle) */
    /* CPUs each of its jobs uses while running (a multi-threaded app's
     * avg_ncpus; < 1 for a job that mostly feeds a GPU); 0 means 1. Its
     * results' remaining is then run time on that many CPUs. Every policy's
     * CPU schedule and round-robin simulation count CPUs by it. */
    double job_ncpus;
    /* app_config.xml's max_concurrent: at most this many of its jobs run
     * at once; 0 = no limit. */
    int max_concurrent;

    /* Policy-owned debts (seconds of wall CPU time); start at 0. */
    double std; /* short-term debt: CPU scheduler */
    double ltd; /* long-term debt: work fetch */

    /* Driver-accumulated: wall CPU time this project's results ran since
     * the last vs_cdebt_update (which reads it and zeroes it). */
    double wall_cpu_period;

    bool suspended;
    double min_rpc_time; /* no RPC at all while now < min_rpc_time (0: none) */
    /* No work request while now < work_backoff_until (0: none): the
     * backoff after a request that brought nothing. Forced RPCs (trickle,
     * overdue report) still go, asking for no work. */
    double work_backoff_until;
    bool no_new_work;
    bool master_fetch_pending;
    /* The last scheduler RPC returned 'no work because of deadlines': set to
     * the reply time + its requested delay. Latency-limited while now < it. */
    double latency_limited_until;
    bool non_cpu_intensive;

    /* Reasons to force a scheduler RPC to this project (work is then
     * requested from it too); the driver sets and clears them. */
    bool rpc_user_request;
    bool trickle_up_pending;
    bool report_overdue; /* a finished result is overdue for reporting */
    /* Driver-kept: what the client knows of the project's jobs from the
     * last one it received (fair's work fetch): the estimated CPU seconds
     * (at efficiency 1; run seconds on its job_ncpus CPUs) and the delay
     * bound, seconds; 0 = no job yet. */
    double job_est;
    double job_delay_bound;

    void *user; /* the driver's; never touched */
};

struct vs_cstate {
    double now;
    double last_sched_time; /* T: when the CPU scheduler last ran (before now) */
    struct vs_chost host;
    struct vs_cproject *projects;
    size_t nprojects;
    struct vs_cresult *results;
    size_t nresults;
};

/*
 * Checks a snapshot: ncpus >= 1, fractions in (0, 1], sched_period > 0,
 * min_queue >= 0, extra_queue >= 0, shares >= 0, job_ncpus >= 0,
 * max_concurrent >= 0, remaining >= 0, project indexes in range, no
 * NaN. Returns 0 or VS_EINVAL; the entry points below call it too.
 */
VS_MUST_CHECK int vs_cstate_validate(const struct vs_cstate *st);

/* ---------------------------------------------------------------- states */

/* Result states, exactly as seed 000 defines them (done excludes both). */
bool vs_cresult_runnable(const struct vs_cstate *st, size_t r);
bool vs_cresult_nearly_runnable(const struct vs_cstate *st, size_t r);

/* Project state bits (vs_cproject_states). */
#define VS_CPS_RUNNABLE        0x001u /* has a runnable result */
#define VS_CPS_DOWNLOADING     0x002u /* not suspended, a result downloading, none deferred */
#define VS_CPS_FETCHABLE       0x004u /* work fetch may ask it */
#define VS_CPS_LATENCY_LIMITED 0x008u
#define VS_CPS_OVERWORKED      0x010u /* ltd < -sched_period */
#define VS_CPS_POT_RUNNABLE    0x020u /* runnable|downloading|fetchable|overworked|latency-limited */
#define VS_CPS_DEFERRED        0x040u /* now < min_rpc_time or work_backoff_until */
#define VS_CPS_NEARLY_RUNNABLE 0x080u /* has a nearly-runnable result */

/*
 * Computes the state bits of every project into out_flags[nprojects]
 * (caller-provided). O(nresults + nprojects).
 */
void vs_cproject_states(const struct vs_cstate *st, unsigned *out_flags);

/* ---------------------------------------------------------------- workspace */

/*
 * Scratch and output storage, reused from call to call; caller-owned struct,
 * private contents. One workspace per thread; it may serve snapshots of any
 * size (it grows). Cleanup frees everything, after which the output arrays
 * it handed out are invalid.
 */
struct vs_cpolicy_wsd;
struct vs_cpolicy_ws {
    struct vs_cpolicy_wsd *d; /* private */
};

void vs_cpolicy_ws_init(struct vs_cpolicy_ws *ws);
void vs_cpolicy_ws_cleanup(struct vs_cpolicy_ws *ws);

/* ---------------------------------------------------------------- accounting */

/*
 * Wall CPU time accounting for dt seconds during which the running results'
 * processes were runnable (BOINC on and computing allowed): every result
 * whose task is VS_CTASK_RUNNING and not done gets dt more wall time since
 * its checkpoint, its project dt more wall_cpu_period, and dt *
 * cpu_efficiency less remaining (not below 0). Non-CPU-intensive projects
 * are counted too (their debts ignore it). A driver may do this itself;
 * this is the reference. dt < 0 or NaN is ignored.
 */
void vs_cpolicy_account(struct vs_cstate *st, double dt);

/* ---------------------------------------------------------------- debts */

/*
 * The debt update (rule A/R/F/W), at st->now, from each project's
 * wall_cpu_period, which it then zeroes:
 *  - short-term debt over the runnable projects, normalized to minimum 0
 *    and clamped to at most 86,400 s; projects that are not runnable get 0;
 *  - long-term debt over the potentially runnable projects, normalized so
 *    the mean over all projects is 0.
 * Non-CPU-intensive projects take no part (their debts stay 0). Identical
 * for the three policies. Returns 0 or VS_EINVAL (snapshot untouched).
 */
#define VS_CDEBT_STD_MAX 86400.0
VS_MUST_CHECK int vs_cdebt_update(enum vs_cpolicy policy, struct vs_cstate *st);

/* ---------------------------------------------------------------- rr sim */

struct vs_rrsim_out {
    /* per result [nresults] */
    double *finish;        /* absolute simulated finish; INFINITY if not simulated */
    bool *deadline_missed; /* finish > deadline */
    /* per project [nprojects] */
    int *deadlines_missed;         /* count of its results with deadline_missed */
    double *shortfall;             /* seed 000 shortfall(P), seconds */
    double *work_before_minq;      /* seed 002 work_before_minq(P), seconds */
    double *frs;                   /* frs(P): share among fetchable projects (see docs) */
    unsigned *states;              /* VS_CPS_* bits at st->now */
    double total_shortfall;        /* integral of idle CPUs over [now, now+min_queue] */
    double total_work_before_minq; /* CPU seconds used in [now, now+min_queue] */
    double end;                    /* when the last simulated result finishes */
};

/*
 * Simulates weighted round-robin of the (nearly, for shortfall) runnable
 * results of CPU-intensive projects from st->now: each project gets CPUs in
 * proportion to its resource share among projects with work, at most one CPU
 * per result, spare CPUs shared out; a project's results share its CPUs
 * equally; CPUs run at on_frac * active_frac * cpu_efficiency. Event driven,
 * O(n log n). Writes *out (arrays in ws). Returns 0 or VS_EINVAL.
 */
VS_MUST_CHECK int vs_rrsim_run(enum vs_cpolicy policy, const struct vs_cstate *st,
                               struct vs_cpolicy_ws *ws, struct vs_rrsim_out *out);

/*
 * The client's <estimated_delay> for the CPU (BOINC's busy time): seconds
 * from st->now until the CPUs the simulated queue keeps busy (each result
 * its project's job_ncpus) first fall below the host's; 0 when they do not
 * fill it now. rr is the simulation of st that a pass with ws wrote (its
 * arrays are ws's); the same figure for the simulated client, the client
 * daemon and fair's prediction of the server's deadline rule.
 */
double vs_rrsim_busy_time(const struct vs_cstate *st, const struct vs_rrsim_out *rr,
                          struct vs_cpolicy_ws *ws);

/* ---------------------------------------------------------------- CPU sched */

/* Why a result was scheduled (for `volsched explain`). */
enum vs_csched_why {
    VS_CSCHED_NO = 0,     /* not scheduled */
    VS_CSCHED_EDF = 1,    /* its project misses deadlines: earliest deadline first */
    VS_CSCHED_PERIOD = 2, /* running for less than the scheduling period */
    VS_CSCHED_DEBT = 3,   /* greatest anticipated short-term debt */
    VS_CSCHED_NONCPU = 4, /* non-CPU-intensive project: always runs */
};

struct vs_csched_out {
    size_t *order; /* [n] result indexes, in the order chosen */
    size_t n;      /* entries in order (CPU-intensive ones <= ncpus) */
    size_t ncpu;   /* how many of them use a CPU */
    uint8_t *why;  /* [nresults] enum vs_csched_why */
};

/*
 * Runs the CPU scheduler of the policy over the runnable results, using the
 * round-robin simulation's deadlines_missed (rr may be NULL for wrr, which
 * ignores deadlines). Never leaves a CPU idle while a runnable result is
 * unscheduled. Returns 0 or VS_EINVAL.
 */
VS_MUST_CHECK int vs_csched_run(enum vs_cpolicy policy, const struct vs_cstate *st,
                                const struct vs_rrsim_out *rr, struct vs_cpolicy_ws *ws,
                                struct vs_csched_out *out);

/* ---------------------------------------------------------------- enforcement */

enum vs_cact_kind {
    VS_CACT_START = 0,          /* task UNSTARTED -> RUNNING */
    VS_CACT_RESUME = 1,         /* SUSPENDED or REMOVED -> RUNNING */
    VS_CACT_SUSPEND_KEEP = 2,   /* RUNNING -> SUSPENDED (stays in memory) */
    VS_CACT_SUSPEND_REMOVE = 3, /* RUNNING -> REMOVED (leaves memory) */
};

struct vs_caction {
    enum vs_cact_kind kind;
    size_t result;
};

struct vs_cenforce_out {
    struct vs_caction *actions; /* [n], suspensions before the starts they free CPUs for */
    size_t n;
    double recheck_at; /* call enforcement again by then (INFINITY: no need) */
};

/*
 * Turns a schedule into actions on processes, by the policy's enforcement
 * rules (seed 000: X/Y/T; seed 002: leave_in_memory, sched_period/2 grace or
 * until checkpoint, no grace for a deadline-missed result, never-checkpointed
 * apps kept in memory; wrr: preempt at once). Running results that are no
 * longer runnable are suspended at once. May set or clear results'
 * preempt_pending/preempt_since (policy-owned). Returns 0 or VS_EINVAL.
 */
VS_MUST_CHECK int vs_cenforce_run(enum vs_cpolicy policy, struct vs_cstate *st,
                                  const struct vs_rrsim_out *rr, const struct vs_csched_out *sched,
                                  struct vs_cpolicy_ws *ws, struct vs_cenforce_out *out);

/* ---------------------------------------------------------------- work fetch */

enum vs_cfetch_reason {
    VS_CFETCH_NONE = 0,           /* no RPC wanted */
    VS_CFETCH_USER = 1,           /* user request */
    VS_CFETCH_TRICKLE = 2,        /* outstanding trickle-up message */
    VS_CFETCH_REPORT_OVERDUE = 3, /* a result overdue for reporting */
    VS_CFETCH_WORK = 4,           /* work fetch chose it */
};

/* Returns "none", "user", "trickle_up", "report_overdue" or "work". */
const char *vs_cfetch_reason_name(enum vs_cfetch_reason reason);

struct vs_cfetch_out {
    double *work_request_size; /* [nprojects] normalized CPU seconds */
    double *prr_frac;          /* [nprojects] share among potentially runnable */
    long project;              /* the project to contact, or -1 */
    enum vs_cfetch_reason reason;
    double request;    /* work_request_size of that project (normalized s) */
    double request_pn; /* the same in project-normalized seconds (work_req) */
};

/*
 * The work-fetch policy: work_request_size for every project, the project
 * to contact (forced reasons first: user request, trickle-up, overdue
 * report, lowest project index within a reason; else the greatest
 * ltd + shortfall(P) (shortfall), ltd + work_to_fill_buf(P) (debt) or ltd
 * (wrr) among projects with work_request_size > 0) and the request converted
 * to project-normalized seconds (divided by the share fraction among
 * potentially runnable projects). Returns 0 or VS_EINVAL.
 */
VS_MUST_CHECK int vs_cfetch_run(enum vs_cpolicy policy, const struct vs_cstate *st,
                                const struct vs_rrsim_out *rr, struct vs_cpolicy_ws *ws,
                                struct vs_cfetch_out *out);

/*
 * The expected processing rate per CPU for a project, in FLOPS:
 * flops_per_cpu * share_frac * on_frac * active_frac * cpu_efficiency.
 * A request of S project-normalized seconds asks for at least
 * S * this many floating-point operations (vs_cpolicy_pn_flops).
 */
double vs_cpolicy_pn_rate(const struct vs_chost *host, double share_frac);
double vs_cpolicy_pn_flops(const struct vs_chost *host, double share_frac, double pn_seconds);

/* ---------------------------------------------------------------- one pass */

struct vs_cpolicy_out {
    struct vs_rrsim_out rr;
    struct vs_csched_out sched;
    struct vs_cenforce_out enforce;
    struct vs_cfetch_out fetch;
};

/*
 * One whole pass: round-robin simulation, CPU schedule, enforcement, work
 * fetch (not the debt update, which the driver calls when it accounts
 * time). Returns 0 or VS_EINVAL (then nothing was written).
 */
VS_MUST_CHECK int vs_cpolicy_pass(enum vs_cpolicy policy, struct vs_cstate *st,
                                  struct vs_cpolicy_ws *ws, struct vs_cpolicy_out *out);

/*
 * The debt update followed by a whole pass: the same decisions as
 * vs_cdebt_update then vs_cpolicy_pass, with one validation and one scan
 * of the results for the project states instead of three. What a driver
 * calls at each scheduler run. Returns 0 or VS_EINVAL (then nothing was
 * written, debts included).
 */
VS_MUST_CHECK int vs_cpolicy_step(enum vs_cpolicy policy, struct vs_cstate *st,
                                  struct vs_cpolicy_ws *ws, struct vs_cpolicy_out *out);

/*
 * vs_cpolicy_step for a driver that builds the snapshot itself and keeps it
 * valid (the simulator): the same decisions without the validation of every
 * result, which costs as much as a pass's scheduling on a small queue.
 * Only debug builds validate (an assertion). Returns 0, or VS_EINVAL for a
 * bad policy or missing workspace/output.
 */
VS_MUST_CHECK int vs_cpolicy_step_trusted(enum vs_cpolicy policy, struct vs_cstate *st,
                                          struct vs_cpolicy_ws *ws, struct vs_cpolicy_out *out);

/* ---------------------------------------------------------------- backoff */

/* BOINC-COMPAT: SCHED_RETRY_DELAY_MIN and _MAX (the defaults of cc_config's
 * sched_retry_delay_min/max) and RETRY_CAP (setbacks counted). */
#define VS_CBACKOFF_MIN 60.0
#define VS_CBACKOFF_MAX (4 * 3600.0)
#define VS_CBACKOFF_CAP 10

/*
 * How long, in seconds, the client leaves a project alone after the n-th
 * setback in a row (backoff.c), BOINC's rule:
 *   min(min x 2^min(n, 10), max) x (0.5 + 0.5 u)
 * n < 1 counts as 1, so the first setback waits [min, 2 min]. min and max
 * are the bounds (VS_CBACKOFF_MIN/MAX, or a client's configured
 * sched_retry_delay_min/max; <= 0 or NaN count as 0); u is a draw uniform
 * in [0, 1) from the caller's generator, clamped into [0, 1]: the same u
 * gives the same wait. The one rule the client daemon and both simulators
 * call, for two kinds of setback counted apart: a scheduler RPC or master
 * fetch that failed (nothing goes to the project meanwhile: min_rpc_time)
 * and a work request that brought nothing (no work is asked meanwhile, but
 * reports and trickles go: work_backoff_until, cleared when a reply brings
 * work or a job of the project finishes uploading). Pure; never NaN.
 */
double vs_cbackoff(int n, double min, double max, double u);

/*
 * The project's latency_limited_until after a scheduler reply that sent
 * nsent jobs, with the "no work because of deadlines" flag (deadlines) and
 * the reply's request delay in seconds: now + request_delay when the reply
 * sent nothing and said so, else 0 (not latency-limited: only the last
 * RPC's flag counts). The rule the client daemon and the host simulator
 * both apply (src/policy/client/latency.c). Pure.
 */
double vs_clatency_limited_until(double now, int nsent, bool deadlines, double request_delay);

#endif
