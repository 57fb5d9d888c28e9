/*
 * The volsched client daemon's state: the limits on what a project may make
 * it hold, BOINC's state codes, and the structs of projects, files, apps,
 * workunits, results, preferences, host facts and the one struct vs_client
 * that owns them all (one owner, passed down explicitly; single-threaded).
 * client.h declares the functions between the daemon's files; this header
 * is the data they share, apart so that each stays one concept.
 */
#ifndef VOLSCHED_CLIENT_TYPES_H
#define VOLSCHED_CLIENT_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "volsched/buf.h"
#include "volsched/client_policy.h"
#include "volsched/error.h"
#include "volsched/log.h"
#include "volsched/strset.h"

#define VS_CLIENT_MAJOR    7
#define VS_CLIENT_MINOR    20
#define VS_CLIENT_RELEASE  5
#define VS_CLIENT_PLATFORM "x86_64-pc-linux-gnu"
#define VS_CLIENT_PATH_MAX 4096

/* Bounds on what a project may make us hold (hostile replies). RESULTS,
 * WUS and FILES are totals that the attached projects share equally
 * (limits.c: a project may hold TOTAL / n_projects; past the total, only
 * TOTAL / MAX_PROJECTS each), APPS and AVS are per project. */
#define VS_CLIENT_MAX_PROJECTS 64
#define VS_CLIENT_MAX_RESULTS  20000
#define VS_CLIENT_MAX_WUS      20000
#define VS_CLIENT_MAX_FILES    40000
#define VS_CLIENT_MAX_APPS     256 /* per project */
#define VS_CLIENT_MAX_AVS      256 /* per project */
#define VS_CLIENT_MAX_FREFS    64
#define VS_CLIENT_MAX_URLS     8
#define VS_CLIENT_MAX_FILE     (4ll << 30) /* bytes of one file */
#define VS_CLIENT_MAX_SLOTS    256

/* BOINC-COMPAT: result states (client/result.h) */
enum {
    RS_NEW = 0,
    RS_FILES_DOWNLOADING = 1,
    RS_FILES_DOWNLOADED = 2,
    RS_COMPUTE_ERROR = 3,
    RS_FILES_UPLOADING = 4,
    RS_FILES_UPLOADED = 5,
    RS_ABORTED = 6,
    RS_UPLOAD_FAILED = 7,
};

/* BOINC-COMPAT: file status (FILE_NOT_PRESENT ..., negative = error) */
enum { FS_NOT_PRESENT = 0, FS_PRESENT = 1, FS_ERR = -1 };

/* BOINC-COMPAT: active_task_state values */
enum {
    PROCESS_UNINITIALIZED = 0,
    PROCESS_EXECUTING = 1,
    PROCESS_SUSPENDED = 9,
    PROCESS_ABORT_PENDING = 5,
    PROCESS_QUIT_PENDING = 8,
};

/* BOINC-COMPAT: exit codes the client assigns */
#define EXIT_ABORTED_BY_CLIENT 194
#define EXIT_ABORTED_VIA_GUI   203
#define EXIT_ABORTED_BY_PROJ   202
#define ERR_TOO_MANY_EXITS     (-226)
#define ERR_FILE_MISSING       (-161)
#define ERR_RSA_FAILED         (-120) /* a file's signature check failed */
#define ERR_RESULT_START       (-185)

struct cl_fref {
    char *file_name;
    char *open_name;
    bool main_program;
    bool copy_file;
    bool optional;
};

struct cl_file {
    char *name;
    size_t project;
    double nbytes;
    double max_nbytes;
    char md5[33];
    int status;
    bool executable;
    bool signature_required; /* a file of an app version: verified before use */
    bool is_output;
    bool sticky;
    char *file_signature;
    char *xml_signature; /* upload certificate */
    char *urls[VS_CLIENT_MAX_URLS];
    size_t n_urls;
    /* transfer bookkeeping (persisted) */
    int nfailures;
    double next_try;
    bool upload_done;
    double bytes_done; /* for get_file_transfers */
    char *error;       /* why status went negative */
    bool disk_wait;    /* its download waits for disk room (said once; not kept) */
};

struct cl_app {
    char *name;
    size_t project;
    bool non_cpu_intensive;
};

struct cl_app_version {
    char *app_name;
    size_t project;
    int version_num;
    char *platform;
    char *plan_class;
    char *api_version;
    double avg_ncpus;
    double flops;
    char *cmdline;
    struct cl_fref frefs[VS_CLIENT_MAX_FREFS];
    size_t n_frefs;
};

struct cl_wu {
    char *name;
    size_t project;
    char *app_name;
    int version_num;
    char *command_line;
    double rsc_fpops_est, rsc_fpops_bound, rsc_memory_bound, rsc_disk_bound;
    struct cl_fref frefs[VS_CLIENT_MAX_FREFS];
    size_t n_frefs;
};

struct cl_result {
    char *name;
    size_t project;
    char *wu_name;
    char *platform;
    int version_num;
    char *plan_class;
    double report_deadline;
    double received_time;
    bool report_immediately;
    struct cl_fref frefs[VS_CLIENT_MAX_FREFS];
    size_t n_frefs;

    int state;
    int exit_status;
    double final_cpu_time, final_elapsed_time;
    double completed_time;
    bool ready_to_report;
    bool suspended_via_gui;
    bool abort_requested; /* by the user or the project: done at the next tick */
    int abort_code;
    char *stderr_out; /* the report's stderr text (last 63 KB of stderr.txt + messages) */

    /* the task (BOINC's ACTIVE_TASK), persisted in <active_task_set> */
    int slot; /* -1 = none */
    int task_state;
    pid_t pid;
    double checkpoint_cpu_time, checkpoint_elapsed_time, checkpoint_fraction_done;
    double current_cpu_time, elapsed_time, fraction_done;
    double cpu_base;      /* CPU time of earlier runs counted in current_cpu_time */
    double restart_after; /* temporary exit: not before this time */
    int premature_exits;
    double quit_sent_at; /* quit/abort sent (0 none): kill 60 s later */
    bool quit_pending, abort_pending;
    bool exit_seen;       /* exited, not yet handled (its elapsed time is counted) */
    bool stopped;         /* SIGSTOP'd (plain apps have no channel to suspend them) */
    bool api;             /* api_version >= 6: the mmap channel */
    char pending_msg[64]; /* process control message not yet delivered */
    double last_status_cpu;
    double checkpoint_seen_at;
    void *shm; /* the mapping (8192 bytes) or NULL */

    /* where its workunit and app version were last found (a hint, checked) */
    size_t wu_hint, av_hint;

    /* the policy's view, kept between steps */
    enum vs_ctask ctask;
    double running_since;
    bool checkpointed;
    double checkpoint_time;
    double wall_since_checkpoint;
    bool preempt_pending;
    double preempt_since;
};

struct cl_project {
    char *master_url;
    char *authenticator;
    char *project_name;
    char *user_name;
    char *team_name;
    char *cross_project_id;
    /* The host's venue at this project (the reply's <host_venue>; NULL:
     * none), and whether the global prefs in use came from this project:
     * then that venue's section of them applies (prefs.c) */
    char *host_venue;
    bool prefs_source;
    int64_t hostid, userid, teamid;
    int64_t rpc_seqno;
    double resource_share;
    char *scheduler_urls[VS_CLIENT_MAX_URLS];
    size_t n_scheduler_urls;
    char *code_sign_key;
    double user_total_credit, user_expavg_credit, host_total_credit, host_expavg_credit;
    int nrpc_failures, master_fetch_failures;
    int no_work_count;         /* RPCs in a row that asked for work and got none (backoff) */
    double work_backoff_until; /* no work request before this (reports may go) */
    double min_rpc_time, next_rpc_time, last_rpc_time;
    double std, ltd, wall_cpu_period;
    bool suspended_via_gui, dont_request_more_work, sched_rpc_pending;
    bool master_url_fetch_pending;
    bool https_pinned; /* never http again (https_pin.h) */
    bool attached_via_gui;
    bool trickle_up_pending;
    bool send_full_workload;
    bool non_cpu_intensive;
    double latency_limited_until;
    /* the last job received: estimated CPU seconds and delay bound (fair's fetch) */
    double job_est, job_delay_bound;
    /* From its app_config.xml (app_config.c): the most of its jobs running
     * at once (0 = no limit) and the CPUs a job uses (0 = its app
     * versions' avg_ncpus). */
    int max_concurrent;
    double app_ncpus;
    double cpu_time, elapsed_time; /* totals of finished tasks */
    int njobs_success, njobs_error;
    bool detached;         /* detach requested: removed at the next tick */
    bool detach_when_done; /* detached once it holds no task (GUI RPC) */
    bool ever_rpc;         /* the first RPC asks for 1 s of work */
    char *project_prefs;
    char **trickle_downs; /* msg_to_host texts waiting for the app */
    size_t n_trickle_downs;
    /* disk.c, not kept: bytes of its files and its tasks' slots, and its
     * share of the allowed disk (BOINC's disk_usage, disk_share) */
    double disk_usage, disk_share, slot_usage;
    /* stats.c: its credit at the end of each day (statistics_<URL>.xml) */
    struct cl_daily_stats *stats;
    size_t n_stats;
};

/* BOINC-COMPAT: DAILY_STATS, one per UTC day (day = its midnight) */
struct cl_daily_stats {
    double day, user_total_credit, user_expavg_credit, host_total_credit, host_expavg_credit;
};

/* BOINC-COMPAT: DAILY_XFER, bytes moved on one day (when = days since 1970, local) */
struct cl_daily_xfer {
    int when;
    double up, down;
};

/* GUI RPC set_proxy_settings (gui_cfg_ops.c), kept in proxy_info.xml; net.c uses it. */
struct cl_proxy {
    bool use_http, use_socks, use_http_auth;
    char http_server[256], socks_server[256];
    int http_port, socks_port;
    char http_user[128], http_passwd[128], socks5_user[128], socks5_passwd[128];
    char no_proxy[256];
};

struct cl_gui_acct; /* gui_acct.c: the account web RPCs in flight */

struct cl_old_result {
    char project_url[256], result_name[256], app_name[128];
    int exit_status;
    double elapsed_time, cpu_time, completed_time, create_time;
};

struct cl_msg {
    int seqno;
    int pri; /* 1 info, 2 user alert, 3 internal error */
    double time;
    char project[96];
    char *body;
};

#define VS_CLIENT_MSG_KEEP 2000

struct cl_prefs {
    double work_buf_min_days;
    double work_buf_additional_days;
    double cpu_scheduling_period_minutes;
    bool leave_apps_in_memory;
    double max_ncpus_pct;
    double cpu_usage_limit;
    double disk_interval;
    /* cc_config */
    int ncpus; /* <ncpus>: 0 = all */
    bool report_results_immediately;
    bool no_priority_change; /* BOINC-COMPAT: cc_config: apps keep the client's priority */
    double sched_retry_delay_min, sched_retry_delay_max;
    double pers_retry_delay_min, pers_retry_delay_max;
    double quit_timeout; /* seconds from <quit/>/<abort/> to SIGKILL (cc_config <quit_timeout>) */
    bool allow_remote_gui_rpc;
    /* BOINC's disk preferences (0 = that limit is off; min_free applies always) */
    double disk_max_used_gb, disk_max_used_pct, disk_min_free_gb;
    /* BOINC-COMPAT: cc_config transfer options, BOINC's names and defaults */
    int max_file_xfers;               /* transfers at once (8) */
    int max_file_xfers_per_project;   /* of one project (2) */
    double http_transfer_timeout_bps; /* a transfer slower than this (10 B/s) ... */
    double http_transfer_timeout;     /* ... for this long (300 s) fails */
};

struct cl_host {
    int p_ncpus; /* measured */
    char p_vendor[128], p_model[256], p_features[1024];
    double p_fpops, p_iops, p_membw, p_calculated;
    double m_nbytes, m_cache, m_swap, d_total, d_free;
    char os_name[64], os_version[256];
    char domain_name[256];
    char host_cpid[33];
    int timezone;
};

struct cl_time_stats {
    double on_frac, connected_frac, cpu_and_network_available_frac, active_frac, gpu_active_frac;
    double client_start_time, total_start_time, total_duration, total_active_duration;
    double last_update, previous_uptime, session_active_duration;
    bool first; /* first update of this session */
    /* CPU time / wall time of the running tasks, averaged (host.c); in
     * client_state.xml's <time_stats> and the scheduler request's */
    double cpu_efficiency;
    double eff_wall, eff_cpu; /* the polls' pieces not folded in yet (not kept) */
};

struct cl_net_stats {
    double bwup, avg_up, avg_time_up, bwdown, avg_down, avg_time_down;
};

/* A hash index over one array of the state (index.c): items [0, n) are in
 * it; a lookup first adds items appended since, and rebuilds it all when
 * stale (set by every removal, which moves items). */
struct cl_index {
    struct vs_strset set; /* by name; the project is checked on a match */
    size_t n;
    bool stale;
};

/* The data directory's disk (disk.c), BOINC's names. */
struct cl_disk {
    double d_total, d_free; /* the file system's, when last measured */
    double client_usage;    /* the client's own files (state, logs): GUI RPC d_boinc */
    double total_usage;     /* every project's and the client's: d_boinc_used_total */
    double allowed;         /* the least of the three preferences */
    double walked_at;       /* when slots and the client's files were last measured */
    double state_bytes;     /* the last state file written */
};

/* BOINC-COMPAT: run modes (1 always, 2 auto, 3 never) */
enum { RUN_MODE_ALWAYS = 1, RUN_MODE_AUTO = 2, RUN_MODE_NEVER = 3, RUN_MODE_RESTORE = 4 };

struct gui_conn;
struct cl_net;
struct pollfd;

struct vs_client {
    char dir[VS_CLIENT_PATH_MAX]; /* absolute */
    struct vs_log log;
    FILE *logf;
    int lock_fd;
    enum vs_cpolicy policy;
    enum vs_cpolicy saved_policy; /* the one the last run used (client explain) */
    double now;
    pid_t pid;

    struct cl_project *projects;
    size_t n_projects;
    struct cl_app *apps;
    size_t n_apps;
    struct cl_file *files;
    size_t n_files;
    struct cl_app_version *avs;
    size_t n_avs;
    struct cl_wu *wus;
    size_t n_wus;
    struct cl_result *results;
    size_t n_results;
    struct cl_index ix_results, ix_wus, ix_files;
    struct cl_disk disk;

    struct cl_prefs prefs;
    char *global_prefs_xml; /* the project's, verbatim; NULL none */
    struct cl_host host;
    struct cl_time_stats ts;
    struct cl_net_stats ns;
    int run_mode, run_mode_perm;
    double run_mode_until;
    int network_mode;

    bool dirty;   /* the state file needs writing */
    bool resched; /* the CPU scheduler should run now */
    double last_sched_time;
    double last_enforce_recheck;
    double last_state_write;
    double last_task_poll; /* elapsed time of running tasks advances from here */
    bool quit_requested;
    double quit_started;

    /* messages */
    struct cl_msg *msgs;
    size_t n_msgs, msgs_head;
    int msg_seqno;

    /* old results (reported this session), a ring of the last 64 */
    struct cl_old_result old[64];
    size_t n_old;

    /* policy */
    struct vs_cpolicy_ws ws;
    struct vs_cstate cst;
    struct vs_cproject *cprojects;
    struct vs_cresult *cresults;
    size_t cap_cprojects, cap_cresults;
    size_t *cmap; /* cresults[i] -> results index */
    bool have_out;
    struct vs_cpolicy_out pout;
    double fetch_wanted_at;

    /* GUI RPC */
    int gui_port;
    int gui_fd;
    struct gui_conn *conns;
    size_t n_conns;
    char gui_password[256];
    char nonce[64];
    char remote_hosts[16][64];
    size_t n_remote_hosts;
    bool allow_remote_cmdline; /* run --allow_remote_gui_rpc */
    unsigned gui_evicted;      /* connections that made room since gui_evict_said */
    double gui_evict_said;
    bool foreground;

    /* transfers and scheduler RPCs in flight (net.c); NULL before the first */
    struct cl_net *net;

    /* stats.c: bytes moved per day, the last 365 days (daily_xfer_history.xml) */
    struct cl_daily_xfer *xfers;
    size_t n_xfers;
    bool xfers_dirty;
    /* gui_cfg_ops.c / gui_misc_ops.c */
    struct cl_proxy proxy;
    char language[64];
    char unknown_ops[16][48]; /* unrecognized GUI RPC ops already logged (once each) */
    size_t n_unknown_ops;
    struct cl_gui_acct *acct; /* gui_acct.c; NULL when none was asked */
    double web_refused_said;  /* webui.c: a refused request last told (once a minute) */
    unsigned web_refused;     /* refused since */
};

#endif
