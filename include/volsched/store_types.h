/*
 * The store's records: BOINC's tables as C structs (platform, app, app
 * version, user, team, host, workunit, result, assignment) and the enum
 * values stored in them, with their _cleanup and default functions
 * (store_structs.c). The operations on them are in store.h, which includes
 * this file; include store.h, not this one.
 *
 * BOINC-COMPAT: tables, columns and enum values follow BOINC's schema
 * (db/schema.sql, db/boinc_db_types.h) where the protocol, the seeds or
 * BOINC's tools need them. Times are UNIX seconds.
 */
#ifndef VOLSCHED_STORE_STORE_TYPES_H
#define VOLSCHED_STORE_STORE_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "volsched/str.h"

/* ---------------------------------------------------------------------------
 * Enum values. BOINC-COMPAT: all of these are stored on disk with BOINC's
 * numbers (db/boinc_db_types.h, lib/common_defs.h).
 * ------------------------------------------------------------------------- */

/* result.server_state. BOINC-COMPAT: 3 is unused in BOINC too. */
enum vs_server_state {
    VS_RESULT_SERVER_STATE_INACTIVE = 1,
    VS_RESULT_SERVER_STATE_UNSENT = 2,
    VS_RESULT_SERVER_STATE_IN_PROGRESS = 4,
    VS_RESULT_SERVER_STATE_OVER = 5,
};

/* result.outcome (meaningful when server_state is OVER). BOINC-COMPAT. */
enum vs_outcome {
    VS_RESULT_OUTCOME_INIT = 0,
    VS_RESULT_OUTCOME_SUCCESS = 1,
    VS_RESULT_OUTCOME_COULDNT_SEND = 2,
    VS_RESULT_OUTCOME_CLIENT_ERROR = 3,
    VS_RESULT_OUTCOME_NO_REPLY = 4,
    VS_RESULT_OUTCOME_DIDNT_NEED = 5,
    VS_RESULT_OUTCOME_VALIDATE_ERROR = 6,
    VS_RESULT_OUTCOME_CLIENT_DETACHED = 7,
};

/* result.validate_state. BOINC-COMPAT. */
enum vs_validate_state {
    VS_VALIDATE_STATE_INIT = 0,
    VS_VALIDATE_STATE_VALID = 1,
    VS_VALIDATE_STATE_INVALID = 2,
    VS_VALIDATE_STATE_NO_CHECK = 3,
    VS_VALIDATE_STATE_INCONCLUSIVE = 4,
    VS_VALIDATE_STATE_TOO_LATE = 5,
};

/* result.client_state, as reported by the client. BOINC-COMPAT. */
enum vs_client_state {
    VS_RESULT_CLIENT_STATE_NEW = 0,
    VS_RESULT_CLIENT_STATE_FILES_DOWNLOADING = 1,
    VS_RESULT_CLIENT_STATE_FILES_DOWNLOADED = 2,
    VS_RESULT_CLIENT_STATE_COMPUTE_ERROR = 3,
    VS_RESULT_CLIENT_STATE_FILES_UPLOADING = 4,
    VS_RESULT_CLIENT_STATE_FILES_UPLOADED = 5,
    VS_RESULT_CLIENT_STATE_ABORTED = 6,
    VS_RESULT_CLIENT_STATE_UPLOAD_FAILED = 7,
};

/* workunit.file_delete_state and result.file_delete_state. BOINC-COMPAT. */
enum vs_file_delete_state {
    VS_FILE_DELETE_INIT = 0,
    VS_FILE_DELETE_READY = 1,
    VS_FILE_DELETE_DONE = 2,
    VS_FILE_DELETE_ERROR = 3,
};

/* workunit.assimilate_state. BOINC-COMPAT. */
enum vs_assimilate_state {
    VS_ASSIMILATE_INIT = 0,
    VS_ASSIMILATE_READY = 1,
    VS_ASSIMILATE_DONE = 2,
};

/* workunit.error_mask bits. BOINC-COMPAT. */
#define VS_WU_ERROR_COULDNT_SEND_RESULT      1
#define VS_WU_ERROR_TOO_MANY_ERROR_RESULTS   2
#define VS_WU_ERROR_TOO_MANY_SUCCESS_RESULTS 4
#define VS_WU_ERROR_TOO_MANY_TOTAL_RESULTS   8
#define VS_WU_ERROR_CANCELLED                16
#define VS_WU_ERROR_NO_CANONICAL_RESULT      32

/*
 * workunit.transitioner_flags. BOINC-COMPAT: 0 normal; TRANSITION_NONE (1)
 * broadcast WUs, never transitioned; TRANSITION_NO_NEW_RESULTS (2) targeted
 * WUs, transitioned but the transitioner never creates their results (the
 * scheduler does, on demand).
 */
#define VS_TRANSITION_NORMAL         0
#define VS_TRANSITION_NONE           1
#define VS_TRANSITION_NO_NEW_RESULTS 2

/* assignment.target_type. BOINC-COMPAT. */
enum vs_assign_type {
    VS_ASSIGN_NONE = 0, /* all hosts (broadcast only) */
    VS_ASSIGN_HOST = 1,
    VS_ASSIGN_USER = 2,
    VS_ASSIGN_TEAM = 3,
};

/* BOINC-COMPAT: create_work and the transitioner use INT_MAX as "never". */
#define VS_TIME_NEVER ((int64_t)2147483647)

/* Sizes of the fixed string fields (including the NUL). VS_NAME_MAX and
 * VS_PATH_MAX are volsched/str.h's. */
#define VS_AUTH_MAX  64 /* authenticators, host_cpid */
#define VS_SHORT_MAX 64 /* platform names, plan classes, IP addresses, md5 */

/* ---------------------------------------------------------------------------
 * Domain structs. Field names are BOINC's column names.
 * ------------------------------------------------------------------------- */

struct vs_platform {
    int64_t id;
    int64_t create_time;
    char name[VS_SHORT_MAX]; /* e.g. x86_64-pc-linux-gnu */
    char user_friendly_name[VS_NAME_MAX];
    int deprecated;
};

struct vs_app {
    int64_t id;
    int64_t create_time;
    char name[VS_NAME_MAX];
    char user_friendly_name[VS_NAME_MAX];
    int min_version; /* oldest client version allowed, 0 = any */
    int deprecated;
    int beta;
    int homogeneous_redundancy;
    int homogeneous_app_version;
    double weight;
    int non_cpu_intensive;
    int locality_scheduling;
    int n_size_classes;
    int target_nresults; /* adaptive replication, 0 = off */
    int fraction_done_exact;
};

/*
 * One file of an app version. Files live in the download hierarchy; the
 * URL is <download_url>/<path> (see vs_project_download_path()).
 */
struct vs_app_version_file {
    char name[VS_NAME_MAX];      /* physical name, unique in the project */
    char open_name[VS_NAME_MAX]; /* logical name in the slot; "" = none */
    char path[VS_PATH_MAX];      /* relative to download/, e.g. "1a3/name" */
    char md5_cksum[VS_SHORT_MAX];
    double nbytes;
    char *file_signature; /* owned; BOINC hex text ending in ".\n"; NULL = unsigned */
    int main_program;     /* exactly one file per version */
    int executable;
    int copy_file;
};

struct vs_app_version {
    int64_t id;
    int64_t create_time;
    int64_t appid;
    int version_num; /* BOINC-COMPAT: e.g. 101 for 1.01 */
    int64_t platformid;
    char plan_class[VS_SHORT_MAX];
    int min_core_version;
    int max_core_version;
    int deprecated;
    int beta;
    char api_version[VS_SHORT_MAX]; /* "" for plain (non-API) executables */
    double avg_ncpus;               /* default 1 */
    char cmdline[VS_NAME_MAX];
    /* Derived by vs_store_catalog_load (names of appid/platformid). */
    char app_name[VS_NAME_MAX];
    char platform_name[VS_SHORT_MAX];
    struct vs_app_version_file *files; /* owned */
    size_t nfiles;
};

struct vs_user {
    int64_t id;
    int64_t create_time;
    char email_addr[VS_NAME_MAX];
    char name[VS_NAME_MAX];
    char authenticator[VS_AUTH_MAX]; /* 32 hex chars; generated if "" on add */
    int64_t teamid;
    char country[VS_SHORT_MAX];
    double total_credit;
    double expavg_credit;
    double expavg_time;
    char cross_project_id[VS_AUTH_MAX];
    char venue[VS_SHORT_MAX];
    int64_t seti_id;     /* BOINC-COMPAT: nonzero = "only run my own (targeted) jobs" */
    char *global_prefs;  /* owned XML or NULL */
    char *project_prefs; /* owned XML or NULL */
    /* "pbkdf2-sha256$..." of the client's md5 password hash; "" = none
     * (an operator's account: it logs in with its key). Schema v7. */
    char passwd_hash[VS_NAME_MAX];
};

struct vs_team {
    int64_t id;
    int64_t create_time;
    int64_t userid; /* founder, 0 = none */
    char name[VS_NAME_MAX];
    int nusers;
    double total_credit;
    double expavg_credit;
    char description[VS_NAME_MAX]; /* what its founder wrote (schema v7) */
    double expavg_time;            /* schema v8 */
};

struct vs_host {
    int64_t id;
    int64_t create_time;
    int64_t userid;
    int rpc_seqno;
    int64_t rpc_time; /* time of the last scheduler RPC */
    char host_cpid[VS_AUTH_MAX];
    char domain_name[VS_NAME_MAX];
    char last_ip_addr[VS_SHORT_MAX];
    char external_ip_addr[VS_SHORT_MAX];
    char venue[VS_SHORT_MAX];
    int64_t teamid; /* copy of the user's team at the last RPC */
    /* Availability fractions from the client's time stats. */
    double on_frac;
    double connected_frac;
    double active_frac;
    double gpu_active_frac;
    /* Hardware and OS. */
    int p_ncpus;
    char p_vendor[VS_NAME_MAX];
    char p_model[VS_NAME_MAX];
    double p_fpops;
    double p_iops;
    double p_membw;
    char os_name[VS_NAME_MAX];
    char os_version[VS_NAME_MAX];
    char platform_name[VS_SHORT_MAX]; /* primary platform (not a BOINC column) */
    double m_nbytes;
    double m_swap;
    double d_total;
    double d_free;
    double d_boinc_used_total;
    double d_boinc_used_project;
    double d_boinc_max;
    double n_bwup;
    double n_bwdown;
    int p_ngpus;
    double p_gpu_fpops;
    /* Statistics and quotas. */
    double avg_turnaround;
    double total_credit;
    double expavg_credit;
    double expavg_time;
    double error_rate;
    int max_results_day;  /* BOINC-COMPAT: _max_results_day, -1 = blacklisted, 0 = default */
    int nresults_today;   /* results sent on day nresults_day */
    int64_t nresults_day; /* UTC day number (time / 86400) the counter applies to */
};

struct vs_workunit {
    int64_t id;
    int64_t create_time;
    int64_t appid;
    char name[VS_NAME_MAX];
    /*
     * owned. BOINC-COMPAT: the processed input template: one <file_info>
     * per input file (<name>, <url>, <md5_cksum>, <nbytes>, extra tags),
     * then <workunit> with <file_ref>s (<file_name>, <open_name>,
     * <copy_file/>), <command_line> and other copied elements. The
     * scheduler adds <name>, <app_name> and the rsc_* values when sending.
     */
    char *xml_doc;
    int64_t batch;
    double rsc_fpops_est;
    double rsc_fpops_bound;
    double rsc_memory_bound;
    double rsc_disk_bound;
    double rsc_bandwidth_bound;
    int need_validate;
    int64_t canonical_resultid;
    double canonical_credit;
    int64_t transition_time;
    int delay_bound; /* seconds; report deadline = send time + delay_bound */
    int error_mask;
    int file_delete_state;
    int assimilate_state;
    int hr_class;
    double opaque;
    int priority;
    int64_t app_version_id; /* HAV commitment, 0 = none */
    int app_version_num;    /* only this version may run it, 0 = any */
    int transitioner_flags;
    int size_class; /* -1 = none */
    char keywords[VS_NAME_MAX];
    int min_quorum;
    int target_nresults;
    int max_error_results;
    int max_total_results;
    int max_success_results;
    char result_template_file[VS_NAME_MAX]; /* relative to the project dir */
    int64_t mod_time;
};

struct vs_result {
    int64_t id;
    int64_t create_time;
    int64_t workunitid;
    char name[VS_NAME_MAX];
    int64_t appid;
    int64_t batch;
    int server_state;
    int outcome;
    int client_state;
    int validate_state;
    int file_delete_state;
    int64_t hostid;
    int64_t userid;
    int64_t teamid;
    int64_t report_deadline;
    int64_t sent_time;
    int64_t received_time;
    /*
     * owned. BOINC-COMPAT: the processed output template: <file_info>s
     * (<name>, <url> of the upload handler, <max_nbytes>, ...) then
     * <result> with <file_ref>s (<file_name>, <open_name>, <copy_file/>).
     * The scheduler adds <name>, <wu_name>, <report_deadline>, platform
     * and version when sending.
     */
    char *xml_doc_in;
    char *xml_doc_out; /* owned, may be NULL: the client's report */
    char *stderr_out;  /* owned, may be NULL */
    int exit_status;
    double cpu_time;
    double elapsed_time;
    double claimed_credit;
    double granted_credit;
    double flops_estimate;
    int64_t app_version_id;
    int app_version_num;
    int random;
    int priority;
    int size_class;
    double opaque;
    double peak_working_set_size;
    double peak_swap_size;
    double peak_disk_usage;
    int runtime_outlier;
    int64_t mod_time;
    /* volsched: 0 ordinary; 1..target_nresults the slot of a targeted
     * instance; -1 a broadcast instance (VS_SP_ASGN_SLOT_BROADCAST). */
    int assign_slot;
};

struct vs_assignment {
    int64_t id;
    int64_t create_time;
    int64_t target_id; /* host, user or team id; 0 = all */
    int target_type;   /* enum vs_assign_type */
    int multi;         /* 0 targeted, 1 broadcast */
    int64_t workunitid;
};

/* A UNSENT result joined with its workunit (one row of the job cache). */
struct vs_job {
    struct vs_result result;
    struct vs_workunit wu;
};

/* Everything the scheduler caches in memory about apps (the feeder's copy). */
struct vs_catalog {
    struct vs_platform *platforms;
    size_t nplatforms;
    struct vs_app *apps;
    size_t napps;
    struct vs_app_version *app_versions; /* with files, app_name, platform_name */
    size_t napp_versions;
};

void vs_user_cleanup(struct vs_user *u);
void vs_app_version_cleanup(struct vs_app_version *av);
void vs_workunit_cleanup(struct vs_workunit *wu);
void vs_result_cleanup(struct vs_result *r);

/* A growable array of results that owns deep copies of them. Start it
 * zeroed; vs_result_vec_add has the shape of a vs_store_result_fn (pass the
 * vector as its ctx) and always returns 0; _cleanup frees every copy. */
struct vs_result_vec {
    struct vs_result *v;
    size_t n, cap;
};
int vs_result_vec_add(void *ctx, const struct vs_result *r);
void vs_result_vec_cleanup(struct vs_result_vec *rv);
void vs_catalog_cleanup(struct vs_catalog *c);
/* Copies a job row (src is often a store callback's borrowed row): the heap
 * strings are duplicated, dst owns them (vs_job_cleanup). */
void vs_job_copy(struct vs_job *dst, const struct vs_job *src);
void vs_job_cleanup(struct vs_job *j);

/* Fills a workunit with create_work's defaults (BOINC-COMPAT backend_lib.h):
 * replication counts 1, rsc_fpops_est 3.6e12, rsc_fpops_bound 8.64e13,
 * rsc_memory_bound 5e8, rsc_disk_bound 1e9, delay_bound 7 days,
 * size_class -1. Everything else zero. */
void vs_workunit_defaults(struct vs_workunit *wu);

#endif
