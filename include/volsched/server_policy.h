/*
 * Server work-send policy (pure): seed 004's work distribution rules, seed
 * 003's job limits and seed 000's server-side deadline check.
 *
 * Everything here is a function of plain structs. No I/O, no clock (the time
 * of the request is a field of struct vs_sp_request), no globals. The server
 * builds one struct vs_sp_state per scheduler RPC, runs vs_sp_check_job() on
 * each candidate job, calls vs_sp_commit() for each job it actually sends,
 * and at the end asks vs_sp_explain() for the user messages of a reply that
 * sent nothing (or less than asked).
 *
 * Naming: vs_sp_ ("server policy"). All strings are borrowed: the caller
 * keeps host, request, app and job strings alive while the state is in use.
 * Apps and app versions must not change during a state's life: the app
 * version chosen for an app is memoized until the next vs_sp_commit().
 */
#ifndef VOLSCHED_SERVER_POLICY_H
#define VOLSCHED_SERVER_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "volsched/buf.h"
#include "volsched/error.h"

/* BOINC-COMPAT: PROC_TYPE_CPU 0, PROC_TYPE_NVIDIA_GPU 1, PROC_TYPE_AMD_GPU 2,
 * PROC_TYPE_INTEL_GPU 3. */
enum vs_sp_proc { VS_SP_CPU = 0, VS_SP_NVIDIA = 1, VS_SP_AMD = 2, VS_SP_INTEL = 3 };
#define VS_SP_NPROC 4

/* Caps that keep per-request state fixed-size. */
#define VS_SP_MAX_APP_LIMITS 64   /* <app> sections in config_aux.xml */
#define VS_SP_MAX_PLATFORMS  8    /* primary + alternates considered */
#define VS_SP_MAX_REPLY_JOBS 1024 /* jobs in one reply, whatever the config says */
#define VS_SP_MAX_NCPUS      1024 /* hard cap on effective CPUs (config max_ncpus is lower) */
#define VS_SP_DAY            86400.0

/* Why a job was not sent (or a request got no work). One code per rule. */
enum vs_sp_reason {
    VS_SP_OK = 0,
    VS_SP_CLIENT_VERSION,  /* core client older than min_core_client_version */
    VS_SP_NO_WORK_WANTED,  /* the request no longer needs this resource */
    VS_SP_RPC_LIMIT,       /* max_wus_to_send x processors reached */
    VS_SP_DUP_USER,        /* one_result_per_user_per_wu */
    VS_SP_DUP_HOST,        /* one_result_per_host_per_wu (or already in this reply) */
    VS_SP_HR_UNKNOWN,      /* host's homogeneous-redundancy class is unknown */
    VS_SP_HR_CLASS,        /* WU committed to another HR class */
    VS_SP_NO_APP_VERSION,  /* no version for the host's platforms */
    VS_SP_OLD_APP_VERSION, /* versions exist but all below app min_version */
    VS_SP_NO_GPU,          /* only GPU versions, host lacks that GPU */
    VS_SP_JOB_LIMIT,       /* max_jobs_in_progress reached */
    VS_SP_DAILY_QUOTA,     /* daily result quota reached */
    VS_SP_MEMORY,          /* rsc_memory_bound > usable RAM */
    VS_SP_DISK,            /* rsc_disk_bound > disk allowed */
    VS_SP_DEADLINE,        /* estimated completion after the delay bound */
    VS_SP_WORKLOAD,        /* EDF: would make queued work miss deadlines */
    VS_SP__NREASONS
};

/* Short stable name of a reason ("memory", "job_limit" ...); never NULL. */
const char *vs_sp_reason_name(enum vs_sp_reason r);

/* ---- configuration (filled by src/config/ from config.xml and config_aux.xml, or by tests) ----
 */

/* One <total_limit>/<cpu_limit>/<gpu_limit>: jobs 0 = no limit. */
struct vs_sp_rsc_limit {
    int jobs;
    bool per_proc;
};

/* <project> or one <app> section of <max_jobs_in_progress>. */
struct vs_sp_limit_set {
    char app_name[64]; /* "" for the project section */
    struct vs_sp_rsc_limit total, cpu, gpu;
};

struct vs_sp_job_limits {
    struct vs_sp_limit_set project;
    struct vs_sp_limit_set apps[VS_SP_MAX_APP_LIMITS];
    int n_apps;
};

struct vs_sp_config {
    bool one_result_per_user_per_wu;
    bool one_result_per_host_per_wu;
    int daily_result_quota;           /* per host and app version per CPU; 0 = no quota */
    int max_wus_to_send;              /* per processor per RPC (default 10) */
    int gpu_multiplier;               /* GPU weight in per-RPC and daily scaling (default 1) */
    int max_ncpus;                    /* cap on a host's CPUs used for scaling (default 64) */
    int homogeneous_redundancy;       /* project-wide HR type: 0 off, 1 fine, 2 coarse */
    int min_core_client_version;      /* major*10000+minor*100+release (default 70000) */
    bool ignore_delay_bound;          /* skip the deadline check entirely */
    bool deadline_exempt_empty_queue; /* BOINC's "everyone gets one job"; off by default */
    bool workload_sim;                /* EDF simulation when the request lists queued results */
    /* Protective limits counted by the server, not taken from the client
     * (docs/security.md; 0 = off here, the project's config turns them on): */
    int host_in_progress_per_cpu; /* results IN_PROGRESS per host, x effective CPUs + GPUs */
    int max_new_hosts_per_day;    /* hosts one account may create in 24 hours */
    struct vs_sp_job_limits limits;
};

/* Fills c with the defaults named above (all rules at their BOINC defaults). */
void vs_sp_config_defaults(struct vs_sp_config *c);

/* ---- the host, the request, apps and jobs ---- */

struct vs_sp_host {
    int64_t id, userid;
    const char *platform;             /* primary platform name */
    const char *const *alt_platforms; /* may be NULL when n_alt_platforms == 0 */
    int n_alt_platforms;
    double p_fpops; /* per CPU; <= 0 means unknown (1e9 used) */
    int p_ncpus;
    double m_nbytes; /* RAM; <= 0 means unknown (64 MB used, as BOINC) */
    double d_total, d_free, d_boinc_used_total;
    /* Preference-derived allowances; <= 0 means "not set". */
    double disk_max_used_gb, disk_max_used_pct, disk_min_free_gb;
    double ram_max_used_busy_frac, ram_max_used_idle_frac; /* 0..1 */
    double work_buf_min;                                   /* seconds; the client's minimum queue */
    double on_frac, active_frac, gpu_active_frac;          /* <= 0 means unknown (1) */
    int core_client_version;                               /* major*10000+minor*100+release */
    const char *os_name, *os_version, *p_vendor, *p_model;
    int gpu_count[VS_SP_NPROC];         /* [VS_SP_CPU] unused */
    double gpu_peak_flops[VS_SP_NPROC]; /* per device; 0 = unknown */
};

/* A job the client says it has in progress (<other_results>). */
struct vs_sp_inprog {
    const char *app_name; /* NULL when the client's app version is unknown */
    enum vs_sp_proc proc;
};

/* A queued result for the EDF check (<in_progress_results><ip_result>). */
struct vs_sp_ip_result {
    double deadline;  /* report deadline, seconds from now */
    double remaining; /* estimated computing seconds left at full speed */
};

struct vs_sp_request {
    double now;              /* time of the request (epoch seconds) */
    double prev_rpc_time;    /* the host's previous RPC; 0 = never */
    double work_req_seconds; /* old clients */
    double req_secs[VS_SP_NPROC], req_instances[VS_SP_NPROC];
    double estimated_delay[VS_SP_NPROC]; /* until that resource frees up */
    const struct vs_sp_inprog *in_progress;
    int n_in_progress;
    const struct vs_sp_ip_result *ip_results;
    int n_ip_results;
    bool have_ip_results; /* the request carried the list (even empty) */
};

struct vs_sp_app_version {
    int64_t id;
    const char *platform;
    int version_num;
    const char *plan_class;                 /* "" or NULL for a plain CPU version */
    enum vs_sp_proc proc;                   /* see vs_sp_plan_class_proc() */
    double avg_ncpus;                       /* CPUs used; <= 0 means 1 */
    double gpu_usage;                       /* GPUs used by a GPU version; <= 0 means 1 */
    int min_core_version, max_core_version; /* 0 = no bound */
    double flops; /* projected FLOPS on this host; 0 = estimate from host */
};

struct vs_sp_app {
    int64_t id;
    const char *name;
    const char *user_friendly_name; /* NULL: name is used in messages */
    int min_version;                /* 0 = none */
    int hr_type;                    /* 0 = use project setting, 1 fine, 2 coarse */
    int limit_index;                /* index into config limits.apps, -1 none */
    const struct vs_sp_app_version *versions;
    int n_versions;
};

struct vs_sp_job {
    int64_t wu_id, result_id;
    const struct vs_sp_app *app;
    double rsc_fpops_est, rsc_memory_bound, rsc_disk_bound;
    double delay_bound;            /* seconds */
    int hr_class;                  /* HR class the WU is committed to; 0 = none */
    int app_version_num;           /* only this version may run it; 0 = any */
    const int64_t *result_userids; /* users that already hold a result of this WU */
    int n_result_userids;
    const int64_t *result_hostids; /* hosts that already hold a result of this WU */
    int n_result_hostids;
};

/* Daily quota state of one (host, app version): BOINC's host_app_version. */
struct vs_sp_hav {
    int64_t app_version_id;
    int max_jobs_per_day; /* 0 = not set yet (daily_result_quota is used) */
    int n_jobs_today;
    int consecutive_valid;
};

/* The outcome of checking one job. On VS_SP_OK, av, proc and est_duration
 * describe how to send it and hr_class is the class to commit the WU to (0
 * when the app does not use HR). On refusal, need/have/limit carry the
 * numbers of the message (MB, seconds, tasks). */
struct vs_sp_verdict {
    enum vs_sp_reason reason;
    const struct vs_sp_app *app;
    const struct vs_sp_app_version *av;
    enum vs_sp_proc proc;
    double est_duration; /* wall seconds on this host */
    int hr_class;
    double need, have;
    int limit;
};

/* ---- per-request state ---- */

struct vs_sp_edf_job {
    double deadline, duration;
};

/* EDF workload of the host (deadline.c). Owned by the state. */
struct vs_sp_edf {
    int ncpus;
    int n, cap;
    struct vs_sp_edf_job *jobs; /* sorted by deadline */
    double *base_miss;          /* per job: miss before the candidate */
    double *cpu_free;           /* scratch: ncpus */
    double *snap;    /* CPU free times after each prefix of jobs: (n+1) x ncpus, or NULL */
    size_t snap_cap; /* doubles allocated in snap */
};

struct vs_sp_state {
    const struct vs_sp_config *cfg;
    const struct vs_sp_host *host;
    const struct vs_sp_request *req;

    /* derived once per request */
    int ncpus;         /* effective CPUs, 1..max_ncpus */
    double usable_ram; /* bytes */
    double disk_left;  /* bytes allowed, minus what was sent */
    double avail_frac[VS_SP_NPROC];
    int max_jobs_per_rpc;
    int hr_class[3]; /* by HR type; 0 = unknown class */
    const char *platforms[VS_SP_MAX_PLATFORMS];
    int n_platforms;

    /* the request, decremented as jobs are sent */
    bool rsc_spec_request;
    double seconds_to_fill;
    double req_secs[VS_SP_NPROC], req_instances[VS_SP_NPROC];
    double est_delay[VS_SP_NPROC];

    /* job limits: scaled limit (INT_MAX = none) and current count; the
     * per-app ones, in the tail below, for the first n_app_limits apps */
    int lim_proj_total, lim_proj[VS_SP_NPROC];
    int n_proj_total, n_proj[VS_SP_NPROC];
    int n_app_limits;

    /* daily quota rows, copied from the caller and updated on commit */
    struct vs_sp_hav *havs;
    int n_havs, cap_havs;
    bool new_day;

    /* this reply */
    int njobs_sent;
    struct vs_sp_edf edf;
    bool use_edf;
    int n_memo;

    /* refusals: count per reason (the first one's details below) */
    int n_refused[VS_SP__NREASONS];

    /*
     * The tail: arrays read only below a count kept above (n_app_limits,
     * njobs_sent, n_memo, n_refused[r] > 0), which vs_sp_state_init does not
     * clear (12 KB: clearing them was most of a simulated RPC's cost). Keep
     * lim_app_total first: it marks where the tail starts.
     */
    int lim_app_total[VS_SP_MAX_APP_LIMITS], lim_app[VS_SP_MAX_APP_LIMITS][VS_SP_NPROC];
    int n_app_total[VS_SP_MAX_APP_LIMITS], n_app[VS_SP_MAX_APP_LIMITS][VS_SP_NPROC];
    int64_t sent_wus[VS_SP_MAX_REPLY_JOBS];
    /* app version choice per (app, pinned version), valid until a commit */
    struct {
        const struct vs_sp_app *app;
        int app_version_num;
        enum vs_sp_reason reason;
        const struct vs_sp_app_version *av;
        enum vs_sp_proc proc;
        int limit;
    } memo[8];
    struct vs_sp_verdict first_refusal[VS_SP__NREASONS];
};

/*
 * Prepares the state for one request: effective CPUs, usable RAM and disk,
 * availability, HR classes, job limits (scaled and counted from the jobs
 * the client has in progress), the daily-quota rows (havs, n_havs: copied;
 * the day rollover of req->prev_rpc_time..req->now applied) and the EDF
 * workload. cfg, host and req are borrowed and must outlive the state.
 * Returns 0, or VS_EINVAL on a NULL argument or a negative count. Free
 * with vs_sp_state_cleanup().
 */
VS_MUST_CHECK int vs_sp_state_init(struct vs_sp_state *st, const struct vs_sp_config *cfg,
                                   const struct vs_sp_host *host, const struct vs_sp_request *req,
                                   const struct vs_sp_hav *havs, int n_havs);
void vs_sp_state_cleanup(struct vs_sp_state *st);

/*
 * Request-level gate (rule 8): returns VS_SP_CLIENT_VERSION when the core
 * client is older than min_core_client_version (work is refused, reported
 * results are still to be accepted), else VS_SP_OK. Fills *out when not NULL.
 */
enum vs_sp_reason vs_sp_check_client(const struct vs_sp_config *cfg, const struct vs_sp_host *host,
                                     struct vs_sp_verdict *out);

/*
 * Runs every rule on one candidate, cheapest first, and returns VS_SP_OK or
 * the first reason that refuses it; *out gets the details. A refusal is
 * tallied in st for vs_sp_explain(). Does not change what has been sent:
 * call vs_sp_commit() when the job is actually added to the reply.
 */
enum vs_sp_reason vs_sp_check_job(struct vs_sp_state *st, const struct vs_sp_job *job,
                                  struct vs_sp_verdict *out);

/*
 * Records that job was sent with the verdict vs_sp_check_job() gave:
 * decrements the request (estimated duration x CPUs or GPUs used), adds to
 * the estimated queue, the disk used, the job-limit counters, the daily
 * quota row and the EDF workload.
 */
void vs_sp_commit(struct vs_sp_state *st, const struct vs_sp_job *job,
                  const struct vs_sp_verdict *v);

/*
 * When a scan of candidate jobs stops. A refusal is either the job's own
 * (skip it and go on to the next candidate) or the request's (every further
 * candidate would be refused the same way: stop scanning). Which one
 * depends on what may differ between the candidates, as the caller knows
 * them: a bit below set means that property may change from one candidate
 * to the next. The server's job cache sets them all (VS_SP_VARIES_ALL);
 * a simulator whose project has one app and one job shape sets only what
 * its jobs really vary in (popsim: the disk need, when a host holds some
 * jobs' input files and not others').
 */
#define VS_SP_VARIES_APP    0x1u /* the app or pinned version: version, proc, limits, quota */
#define VS_SP_VARIES_SIZE   0x2u /* rsc_fpops_est or delay_bound: the deadline rules */
#define VS_SP_VARIES_MEMORY 0x4u /* rsc_memory_bound */
#define VS_SP_VARIES_DISK   0x8u /* rsc_disk_bound (net of files the host holds) */
#define VS_SP_VARIES_ALL    0xfu

/*
 * True when a scan must stop after a candidate was refused for r, given
 * what varies (the bits above). Always: the client's version, and the
 * reply's job cap. Never: a workunit's own (one result per user or host,
 * the HR class it is committed to). Otherwise the rule's input: the app's
 * rules (no version, no GPU, HR unknown, job limits, daily quota, the
 * resource no longer wanted) stop unless the app varies; memory and disk
 * unless that need varies; the deadline rules unless the app or the
 * size varies. Sound because what a request has left only shrinks as jobs
 * are sent (request, disk, limits, quota, the queue the deadline rules
 * see), so a candidate like a refused one is refused too. VS_SP_OK and
 * unknown codes: false.
 */
bool vs_sp_scan_stops(enum vs_sp_reason r, unsigned varies);

/* True while the request still wants work that may be sent (rule 9). */
bool vs_sp_work_needed(const struct vs_sp_state *st);
/* True when resource p is still requested and not over its job limits. */
bool vs_sp_need_proc(const struct vs_sp_state *st, enum vs_sp_proc p);

/*
 * Seed 000's flag: the request got no work and at least one job was refused
 * only because of deadlines ("no work because of deadlines").
 */
bool vs_sp_no_work_because_of_deadlines(const struct vs_sp_state *st);

/*
 * Appends the user message for one refusal, in BOINC's wording, to out (no
 * newline). Returns 0 or the vs_buf error.
 */
VS_MUST_CHECK int vs_sp_verdict_message(const struct vs_sp_state *st, const struct vs_sp_verdict *v,
                                        struct vs_buf *out);

/*
 * Composes the explanation of a reply that sent no work: "No tasks sent"
 * then one line per rule that refused jobs, in a fixed order, each ending in
 * '\n'. Appends nothing when jobs were sent. Returns 0 or the vs_buf error.
 */
VS_MUST_CHECK int vs_sp_explain(const struct vs_sp_state *st, struct vs_buf *out);

/*
 * The <request_delay> (seconds) BOINC sends with a refusal: one day for a
 * client that is too old or of an unknown HR class (nothing will change
 * soon), 0 otherwise (the client's own back-off applies).
 */
int vs_sp_reason_delay(enum vs_sp_reason r);
/* The largest vs_sp_reason_delay() over the refusals of a reply that sent
 * nothing; 0 when jobs were sent. */
int vs_sp_explain_delay(const struct vs_sp_state *st);

/* How long a reply that sent nothing because of deadlines asks the client to
 * wait (seed 000: the project is latency-limited until this delay has
 * passed; by then its queue is shorter and a job may fit). */
#define VS_SP_DEADLINE_DELAY 600

/* The request_delay of a reply: vs_sp_explain_delay(), and at least
 * VS_SP_DEADLINE_DELAY when nothing was sent because of deadlines. What the
 * server's reply carries and both simulated servers answer. */
int vs_sp_reply_delay(const struct vs_sp_state *st);

/* ---- single rules, pure, for the server and for tests ---- */

/* BOINC's version encoding: major*10000+minor*100+release. */
int vs_sp_version_encode(int major, int minor, int release);
/* The processor a plan class uses: cuda*, nvidia* -> NVIDIA; ati*, amd* ->
 * AMD; intel_gpu* -> INTEL (also as opencl_<vendor>...); else CPU. */
enum vs_sp_proc vs_sp_plan_class_proc(const char *plan_class);
/* Usable RAM in bytes: m_nbytes x max(busy, idle frac), frac capped at 1. */
double vs_sp_usable_ram(const struct vs_sp_host *h);
/* Disk the prefs allow the project, in bytes (may be <= 0);
 * VS_SP_DISK_UNKNOWN when the host reports neither d_total nor d_free. */
#define VS_SP_DISK_UNKNOWN 1e18

double vs_sp_disk_allowed(const struct vs_sp_host *h);
/* Effective CPUs: p_ncpus capped by max_ncpus, at least 1. */
int vs_sp_effective_ncpus(const struct vs_sp_config *cfg, const struct vs_sp_host *h);
/* The host's cap on results in progress: host_in_progress_per_cpu x (effective
 * CPUs + gpu_multiplier x GPUs); 0 when the limit is off. The processor
 * counts are the client's, each capped (max_ncpus, 1024 GPUs). */
int vs_sp_host_in_progress_cap(const struct vs_sp_config *cfg, const struct vs_sp_host *h);
/* max_wus_to_send x (ncpus + gpu_multiplier x GPUs), capped at MAX_REPLY_JOBS. */
int vs_sp_max_jobs_per_rpc(const struct vs_sp_config *cfg, const struct vs_sp_host *h);
/* BOINC-COMPAT: HR class (os code + cpu code) of a host for HR type 1 (fine)
 * or 2 (coarse); 0 when the class is unknown (no HR jobs for that host). */
int vs_sp_hr_class(const struct vs_sp_host *h, int hr_type);

/* Daily quota: the per-host day number, with the boundary spread per host by
 * an offset in [0, 1 day) derived from the host id. */
int64_t vs_sp_quota_day(int64_t hostid, double t);
/* True when prev and now fall on different quota days of this host. */
bool vs_sp_quota_new_day(int64_t hostid, double prev, double now);
/* Scaled daily limit of a quota row for a version on proc (0 = no quota). */
int vs_sp_quota_limit(const struct vs_sp_config *cfg, const struct vs_sp_host *h,
                      const struct vs_sp_hav *hav, enum vs_sp_proc proc, int ncpus);
/* The time (seconds) at which host hostid's quota day containing t began. */
int64_t vs_sp_quota_day_start(int64_t hostid, double t);
/* The daily limit of app version app_version_id on proc for the state's
 * host (its quota row as st holds it); 0 when the quota is off. */
int vs_sp_state_day_quota(const struct vs_sp_state *st, int64_t app_version_id,
                          enum vs_sp_proc proc);
/* Quota adaptation, as BOINC's scheduler, transitioner and validator do. */
void vs_sp_hav_on_success(struct vs_sp_hav *hav, int daily_result_quota);
void vs_sp_hav_on_error(struct vs_sp_hav *hav, int daily_result_quota);
void vs_sp_hav_on_timeout(struct vs_sp_hav *hav, int daily_result_quota);
void vs_sp_hav_on_valid(struct vs_sp_hav *hav, int daily_result_quota);
void vs_sp_hav_on_invalid(struct vs_sp_hav *hav, int daily_result_quota);

/* Estimated wall seconds of job with version av on the state's host. */
double vs_sp_est_duration(const struct vs_sp_state *st, const struct vs_sp_job *job,
                          const struct vs_sp_app_version *av);

/* Job limits (limits.c). Index of an <app> section by app name, or -1. */
int vs_sp_limits_app_index(const struct vs_sp_job_limits *l, const char *app_name);
/* True when one more job of (limit_index, proc) would pass a limit. */
bool vs_sp_limits_exceeded(const struct vs_sp_state *st, int limit_index, enum vs_sp_proc proc);
/* Counts one job of (limit_index, proc) against the limits. */
void vs_sp_limits_register(struct vs_sp_state *st, int limit_index, enum vs_sp_proc proc);

/* EDF check (deadline.c) of a job of this duration (wall seconds) and
 * computation deadline (seconds from now) against the workload e: returns
 * VS_SP_DEADLINE when the job itself would miss, VS_SP_WORKLOAD when a
 * queued job would miss by more than it already does, else VS_SP_OK. */
enum vs_sp_reason vs_sp_edf_check(struct vs_sp_edf *e, double deadline, double duration);
/* Adds a sent job to the workload and recomputes the base misses. */
void vs_sp_edf_add(struct vs_sp_edf *e, double deadline, double duration);

/* ---- assigned work (assign.c, seed 003) ---- */

/* BOINC-COMPAT assignment.target_type: 0 all hosts (broadcast only), 1 one
 * host, 2 the hosts of one user, 3 the hosts of one team's members. */
enum vs_sp_asgn_target {
    VS_SP_ASGN_ALL = 0,
    VS_SP_ASGN_HOST = 1,
    VS_SP_ASGN_USER = 2,
    VS_SP_ASGN_TEAM = 3
};

/* One assignment row as the policy sees it. */
struct vs_sp_assignment {
    int target_type; /* enum vs_sp_asgn_target */
    int64_t target_id;
    bool multi; /* false: targeted (retried within the set); true: broadcast */
};

/* True when the host (hostid, userid, teamid; teamid 0 = no team) is in the
 * assignment's set. A targeted assignment never matches "all". */
bool vs_sp_assign_matches(const struct vs_sp_assignment *a, int64_t hostid, int64_t userid,
                          int64_t teamid);

/*
 * Instances of assigned workunits carry a slot (result.assign_slot, a
 * volsched column): 0 for results that are not assigned instances,
 * 1..target_nresults for the instances of a targeted workunit, and
 * VS_SP_ASGN_SLOT_BROADCAST for broadcast instances. The store keeps at most
 * one live or successful instance per (workunit, slot) and one broadcast
 * instance per (workunit, host) with unique indexes, so that two requests
 * deciding at the same moment cannot both add one (BOINC's bug #1937).
 */
#define VS_SP_ASGN_SLOT_BROADCAST (-1)

/* One existing result of an assigned workunit (BOINC's numeric states). */
struct vs_sp_asgn_result {
    int64_t hostid; /* 0: not sent, not reserved */
    int server_state;
    int outcome;
    int validate_state;
    int assign_slot;
};

/* The workunit's state that the decision needs. */
struct vs_sp_asgn_wu {
    int target_nresults;
    int max_total_results;
    bool error_mask;     /* any error bit */
    bool need_validate;  /* enough results are in: the validator's turn */
    bool has_canonical;  /* a canonical result exists: done */
    bool transition_due; /* transition_time <= now: the transitioner's turn first */
};

enum vs_sp_asgn_action {
    VS_SP_ASGN_NOTHING = 0, /* no instance for this host now (why says which) */
    VS_SP_ASGN_REUSE,       /* send the existing UNSENT instance res[index] */
    VS_SP_ASGN_CREATE,      /* create an instance in slot `slot` for this host */
};

struct vs_sp_asgn_decision {
    enum vs_sp_asgn_action action;
    int index;       /* REUSE */
    int slot;        /* CREATE: 1..target_nresults, or VS_SP_ASGN_SLOT_BROADCAST */
    const char *why; /* NOTHING: a short reason for the log ("enough instances") */
};

/*
 * Decides whether host hostid gets an instance of an assigned workunit,
 * given all the workunit's results res[0..n). BOINC's rules
 * (sched_assign.cpp), with its holes closed:
 *  - broadcast: a host gets exactly one instance, once; a failure is not
 *    retried; an instance reserved for it but never sent is reused.
 *  - targeted: nothing once the workunit is done, errored, waiting for the
 *    validator or for the transitioner (so error limits are applied before
 *    a retry); a host never holds two live or successful instances; a
 *    user's or team's host that failed the workunit leaves the retry to
 *    another host of the set (a host target retries on its host); an UNSENT
 *    instance is reused before a new one is made; a new one only while
 *    live + successful instances are fewer than target_nresults and the
 *    total stays within max_total_results, in the lowest free slot.
 */
void vs_sp_assign_decide(const struct vs_sp_assignment *a, const struct vs_sp_asgn_wu *wu,
                         int64_t hostid, const struct vs_sp_asgn_result *res, int n,
                         struct vs_sp_asgn_decision *out);

#endif
