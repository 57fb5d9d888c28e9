/*
 * The project server's persistent store: ONE interface of domain operations.
 *
 * Callers (scheduler, transitioner, CLI tools) speak in terms of users, hosts,
 * workunits and results, never SQL. The SQLite backend (store_sqlite*.c) is
 * the default; a PostgreSQL backend can implement the same functions behind
 * the same opaque handle (the URL scheme picks it).
 *
 * Tables, columns and enum values follow BOINC's schema (db/schema.sql,
 * db/boinc_db_types.h) where the protocol, the seeds or BOINC's tools need
 * them; such places carry a BOINC-COMPAT comment. Times are UNIX seconds.
 *
 * Threads: a struct vs_store is used by one thread at a time. Open one per
 * thread; SQLite in WAL mode lets readers run beside the single writer, and
 * writers wait (busy timeout) rather than fail.
 *
 * Strings: short strings are fixed arrays inside the structs (values that do
 * not fit are truncated on read, rejected with VS_ELIMIT on write). Large
 * XML blobs are heap strings (char *) owned by the struct: release them with
 * the struct's _cleanup function. Structs handed to a callback are borrowed
 * and valid only during that call.
 *
 * Errors: 0 on success, VS_ENOTFOUND when a looked-up row does not exist,
 * VS_EEXISTS on a unique-name clash, VS_ESTORE (logged detail) on any other
 * backend failure, VS_EINVAL on bad arguments.
 */
#ifndef VOLSCHED_STORE_STORE_H
#define VOLSCHED_STORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "volsched/error.h"

struct vs_log;
struct vs_store;

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

/* Sizes of the fixed string fields (including the NUL). */
#define VS_NAME_MAX  256 /* names of apps, users, teams, WUs, results, files */
#define VS_AUTH_MAX  64  /* authenticators, host_cpid */
#define VS_SHORT_MAX 64  /* platform names, plan classes, IP addresses, md5 */
#define VS_PATH_MAX  1024

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
};

struct vs_team {
    int64_t id;
    int64_t create_time;
    int64_t userid; /* founder, 0 = none */
    char name[VS_NAME_MAX];
    int nusers;
    double total_credit;
    double expavg_credit;
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
void vs_catalog_cleanup(struct vs_catalog *c);

/* Fills a workunit with create_work's defaults (BOINC-COMPAT backend_lib.h):
 * replication counts 1, rsc_fpops_est 3.6e12, rsc_fpops_bound 8.64e13,
 * rsc_memory_bound 5e8, rsc_disk_bound 1e9, delay_bound 7 days,
 * size_class -1. Everything else zero. */
void vs_workunit_defaults(struct vs_workunit *wu);

/* ---------------------------------------------------------------------------
 * Opening
 * ------------------------------------------------------------------------- */

#define VS_STORE_CREATE 1 /* create the store (and its schema) if missing */
/*
 * Do not checkpoint the write-ahead log from this handle's commits. By
 * default SQLite checkpoints inside a commit every ~1000 pages, which costs
 * an fsync on the request path; a server that opens its request handles
 * with this flag calls vs_store_checkpoint() from a background thread (on
 * its own handle) instead.
 */
#define VS_STORE_NO_AUTOCHECKPOINT 2

/*
 * Opens a store by URL: "sqlite:PATH" (or a bare PATH) for the embedded
 * SQLite store; "postgresql://..." is reserved (VS_EUNSUPPORTED for now).
 * Without VS_STORE_CREATE a missing database is VS_ENOTFOUND. The schema is
 * created or migrated to the current version. The SQLite backend uses WAL,
 * synchronous=NORMAL (a committed transaction survives a crash of the
 * process; "?sync=full" at the end of the URL makes it survive power loss
 * too), and prepared statements. log may be NULL; it is borrowed.
 * The caller owns *out_store and closes it with vs_store_close().
 */
VS_MUST_CHECK int vs_store_open(const char *url, int flags, struct vs_log *log,
                                struct vs_store **out_store);
void vs_store_close(struct vs_store *s);

/*
 * Copies committed pages from the write-ahead log into the database without
 * blocking readers or writers (SQLite PASSIVE checkpoint). Safe to call at
 * any time from any handle; a no-op for backends without a WAL.
 */
VS_MUST_CHECK int vs_store_checkpoint(struct vs_store *s);

/* The schema version this code writes (store_meta.schema_version). */
int vs_store_schema_version(void);

/*
 * Transactions. Every operation below is atomic by itself. To make several
 * of them one atomic, durable step (create_work's whole batch, a scheduler
 * RPC's host update + sends), wrap them in begin/commit; they nest (inner
 * levels are savepoints). rollback undoes everything since the matching
 * begin. A failed operation inside a transaction leaves the transaction
 * open: the caller decides to roll back.
 */
VS_MUST_CHECK int vs_store_begin(struct vs_store *s);
VS_MUST_CHECK int vs_store_commit(struct vs_store *s);
int vs_store_rollback(struct vs_store *s);

/* ---------------------------------------------------------------------------
 * Platforms, apps, app versions
 * ------------------------------------------------------------------------- */

/* Finds a platform by name; VS_ENOTFOUND if none. */
VS_MUST_CHECK int vs_store_platform_by_name(struct vs_store *s, const char *name,
                                            struct vs_platform *out);
/* Inserts p (name required); sets p->id and create_time. VS_EEXISTS on a duplicate name. */
VS_MUST_CHECK int vs_store_platform_add(struct vs_store *s, struct vs_platform *p);

VS_MUST_CHECK int vs_store_app_by_name(struct vs_store *s, const char *name, struct vs_app *out);
VS_MUST_CHECK int vs_store_app_get(struct vs_store *s, int64_t id, struct vs_app *out);
/* Inserts a; sets a->id and create_time. VS_EEXISTS on a duplicate name. */
VS_MUST_CHECK int vs_store_app_add(struct vs_store *s, struct vs_app *a);

/*
 * Inserts an app version and its files (av->files) in one transaction;
 * sets av->id and create_time. VS_EEXISTS if (appid, platformid,
 * version_num, plan_class) exists already.
 */
VS_MUST_CHECK int vs_store_app_version_add(struct vs_store *s, struct vs_app_version *av);

/*
 * Loads every platform, app and (non-deprecated or not) app version with its
 * files, for the scheduler's in-memory cache. *out must be zeroed or
 * cleaned; the caller owns the result (vs_catalog_cleanup).
 */
VS_MUST_CHECK int vs_store_catalog_load(struct vs_store *s, struct vs_catalog *out);

/* ---------------------------------------------------------------------------
 * Users and teams
 * ------------------------------------------------------------------------- */

/* Finds the user with this authenticator; VS_ENOTFOUND if none. *out is
 * overwritten (its old heap fields are NOT freed); free with vs_user_cleanup. */
VS_MUST_CHECK int vs_store_user_by_auth(struct vs_store *s, const char *authenticator,
                                        struct vs_user *out);
VS_MUST_CHECK int vs_store_user_get(struct vs_store *s, int64_t id, struct vs_user *out);
VS_MUST_CHECK int vs_store_user_by_name(struct vs_store *s, const char *name, struct vs_user *out);
/*
 * Inserts u; sets u->id, create_time, and a fresh random authenticator if
 * u->authenticator is empty (32 hex digits from the kernel's CSPRNG).
 * email_addr may be empty (many users may have none). VS_EEXISTS on a
 * duplicate name, non-empty e-mail or authenticator. If u->teamid is set,
 * the team's nusers is incremented (VS_ENOTFOUND, nothing written, if
 * there is no such team).
 */
VS_MUST_CHECK int vs_store_user_add(struct vs_store *s, struct vs_user *u);

VS_MUST_CHECK int vs_store_team_get(struct vs_store *s, int64_t id, struct vs_team *out);
VS_MUST_CHECK int vs_store_team_by_name(struct vs_store *s, const char *name, struct vs_team *out);
/* Inserts t; sets t->id and create_time. VS_EEXISTS on a duplicate name. */
VS_MUST_CHECK int vs_store_team_add(struct vs_store *s, struct vs_team *t);

/* ---------------------------------------------------------------------------
 * Hosts
 * ------------------------------------------------------------------------- */

VS_MUST_CHECK int vs_store_host_get(struct vs_store *s, int64_t id, struct vs_host *out);
/*
 * Finds the newest host of user userid with this host_cpid (the client's
 * cross-project host id): how a scheduler recognises a host whose client
 * lost its hostid (BOINC's find_host_by_cpid). VS_ENOTFOUND if none.
 */
VS_MUST_CHECK int vs_store_host_by_cpid(struct vs_store *s, int64_t userid, const char *host_cpid,
                                        struct vs_host *out);
/* Inserts h (userid required); sets h->id (create_time if 0). */
VS_MUST_CHECK int vs_store_host_add(struct vs_store *s, struct vs_host *h);
/* Writes every field of h to the row h->id; VS_ENOTFOUND if it is gone. */
VS_MUST_CHECK int vs_store_host_update(struct vs_store *s, const struct vs_host *h);

/* ---------------------------------------------------------------------------
 * Workunits and assignments
 * ------------------------------------------------------------------------- */

/*
 * Inserts wu (name, appid, xml_doc required); sets wu->id, and create_time
 * and mod_time if 0. VS_EEXISTS on a duplicate name. The caller sets
 * transition_time (now, or VS_TIME_NEVER for assigned work).
 */
VS_MUST_CHECK int vs_store_workunit_add(struct vs_store *s, struct vs_workunit *wu);
VS_MUST_CHECK int vs_store_workunit_get(struct vs_store *s, int64_t id, struct vs_workunit *out);
VS_MUST_CHECK int vs_store_workunit_by_name(struct vs_store *s, const char *name,
                                            struct vs_workunit *out);
/* Writes every field of wu to row wu->id (mod_time = now); VS_ENOTFOUND if gone. */
VS_MUST_CHECK int vs_store_workunit_update(struct vs_store *s, const struct vs_workunit *wu);

/* Inserts a (workunitid required); sets a->id and create_time. */
VS_MUST_CHECK int vs_store_assignment_add(struct vs_store *s, struct vs_assignment *a);

typedef int (*vs_store_assignment_fn)(void *ctx, const struct vs_assignment *a);
/*
 * Calls fn for every assignment row matching target_type (or all types when
 * target_type < 0) and multi (or both when multi < 0), in id order. A
 * non-zero return from fn stops the scan and is returned.
 */
VS_MUST_CHECK int vs_store_assignments(struct vs_store *s, int target_type, int multi,
                                       vs_store_assignment_fn fn, void *ctx);

/* ---------------------------------------------------------------------------
 * Results
 * ------------------------------------------------------------------------- */

/* Inserts r (name, workunitid, appid required); sets r->id (create_time if 0).
 * VS_EEXISTS on a duplicate name. */
VS_MUST_CHECK int vs_store_result_add(struct vs_store *s, struct vs_result *r);
VS_MUST_CHECK int vs_store_result_get(struct vs_store *s, int64_t id, struct vs_result *out);
VS_MUST_CHECK int vs_store_result_by_name(struct vs_store *s, const char *name,
                                          struct vs_result *out);
/*
 * The columns a report is checked against, by result name: fills id,
 * workunitid, hostid, userid, app_version_id, server_state, outcome and
 * received_time of *out (zeroed first; no strings, nothing to clean up).
 * The scheduler's report path reads these on every RPC; the whole row
 * (templates, stderr) costs several times more. VS_ENOTFOUND if none.
 */
VS_MUST_CHECK int vs_store_result_state_by_name(struct vs_store *s, const char *name,
                                                struct vs_result *out);
/* Writes every field of r to row r->id (mod_time = now); VS_ENOTFOUND if gone. */
VS_MUST_CHECK int vs_store_result_update(struct vs_store *s, const struct vs_result *r);

typedef int (*vs_store_result_fn)(void *ctx, const struct vs_result *r);
/* Calls fn for each result of workunit wuid, in id order. */
VS_MUST_CHECK int vs_store_results_of_wu(struct vs_store *s, int64_t wuid, vs_store_result_fn fn,
                                         void *ctx);
/* Calls fn for each IN_PROGRESS result sent to host hostid, in id order. */
VS_MUST_CHECK int vs_store_results_in_progress(struct vs_store *s, int64_t hostid,
                                               vs_store_result_fn fn, void *ctx);
/* Sets *out to true when host hostid has any result of workunit wuid. */
VS_MUST_CHECK int vs_store_host_has_wu(struct vs_store *s, int64_t hostid, int64_t wuid, bool *out);

/* Number of results of app appid (all apps when appid is 0) in server_state state. */
VS_MUST_CHECK int vs_store_count_results(struct vs_store *s, int64_t appid, int state,
                                         int64_t *out_count);

typedef int (*vs_store_job_fn)(void *ctx, const struct vs_job *job);
/*
 * The feeder's scan: calls fn for up to limit UNSENT results whose workunit
 * has transitioner_flags 0 (assigned work never enters the general cache),
 * with id > after_id, in result id order, each joined with its workunit.
 * *out_last_id is the id of the last row passed to fn (after_id if none),
 * so the next page starts there. Stops early if fn returns non-zero.
 */
VS_MUST_CHECK int vs_store_jobs_unsent(struct vs_store *s, int64_t after_id, int limit,
                                       vs_store_job_fn fn, void *ctx, int64_t *out_last_id);

/* One result the scheduler wants to send. */
struct vs_claim {
    int64_t result_id;
    int64_t app_version_id;
    int app_version_num;
    int64_t report_deadline;
    double flops_estimate;
    /* Homogeneous redundancy: commit the workunit to this class when it has
     * none yet (0: leave the workunit's class alone). */
    int hr_class;
    /* The result's workunit when the caller knows it (the workunit update
     * is then keyed by id); 0: looked up from the result row. */
    int64_t workunit_id;
    bool claimed; /* out: true if this call moved it from UNSENT to IN_PROGRESS */
};

/*
 * The scheduler's atomic send: in ONE durable transaction (or inside the
 * caller's), each listed result that is still UNSENT becomes IN_PROGRESS
 * with hostid, userid, teamid, sent_time = now, report_deadline,
 * app_version_id/num and flops_estimate, and its workunit's
 * transition_time becomes min(transition_time, report_deadline) so the
 * transitioner notices a timeout. A result that is no longer UNSENT (sent
 * to another host meanwhile, cancelled) is left alone with claimed = false,
 * so a result is never sent twice. Returns the number claimed in
 * *out_nclaimed.
 */
VS_MUST_CHECK int vs_store_results_claim(struct vs_store *s, int64_t hostid, int64_t userid,
                                         int64_t teamid, int64_t now, struct vs_claim *claims,
                                         size_t n, size_t *out_nclaimed);

/* What a client reported about one result (scheduler, issue 6). */
struct vs_result_report {
    char name[VS_NAME_MAX];
    int client_state;
    int exit_status;
    double cpu_time;
    double elapsed_time;
    double peak_working_set_size;
    double peak_swap_size;
    double peak_disk_usage;
    const char *xml_doc_out; /* borrowed, may be NULL */
    const char *stderr_out;  /* borrowed, may be NULL */
};

/*
 * Records a report from host hostid: the named result must have been sent
 * to that host (else VS_ESTATE; VS_ENOTFOUND for an unknown name). A result
 * already reported is a duplicate: 0 with *out_dup true, nothing changed.
 * An IN_PROGRESS result, or one the transitioner timed out (OVER/NO_REPLY,
 * accepted late as BOINC does), becomes OVER with outcome SUCCESS
 * (client_state FILES_UPLOADED and exit_status 0) or CLIENT_ERROR (with
 * validate_state INVALID),
 * received_time = now, and its workunit's transition_time = now.
 */
VS_MUST_CHECK int vs_store_result_report(struct vs_store *s, int64_t hostid, int64_t now,
                                         const struct vs_result_report *rep, bool *out_dup);

/* ---------------------------------------------------------------------------
 * Transitioner support
 * ------------------------------------------------------------------------- */

/*
 * Calls fn for up to limit workunits with transition_time <= now and
 * transitioner_flags != TRANSITION_NONE, in transition_time order, each
 * with all its results (borrowed arrays). fn may call other store
 * operations (the workunit and results are copies).
 */
typedef int (*vs_store_transition_fn)(void *ctx, struct vs_workunit *wu, struct vs_result *results,
                                      size_t nresults);
VS_MUST_CHECK int vs_store_wus_to_transition(struct vs_store *s, int64_t now, int limit,
                                             vs_store_transition_fn fn, void *ctx);

/* ---------------------------------------------------------------------------
 * Back-end daemons: their work queues (validator, assimilator, file
 * deleter), the per host and app version quota record, their status table,
 * and the counts `volsched status` prints.
 * ------------------------------------------------------------------------- */

/* Which workunits a daemon pass takes (vs_store_wus_in_queue). */
enum vs_wu_queue {
    VS_WU_QUEUE_VALIDATE = 0,    /* need_validate = 1 */
    VS_WU_QUEUE_ASSIMILATE = 1,  /* assimilate_state = READY */
    VS_WU_QUEUE_FILE_DELETE = 2, /* file_delete_state = READY */
};

/*
 * Calls fn for up to limit workunits in queue (enum vs_wu_queue), of app
 * appid (all apps when 0), in id order, each with all its results like
 * vs_store_wus_to_transition (borrowed copies; fn may write to the store).
 * The page is read before fn is first called. A non-zero return of fn stops
 * the scan and is returned.
 */
VS_MUST_CHECK int vs_store_wus_in_queue(struct vs_store *s, int queue, int64_t appid, int limit,
                                        vs_store_transition_fn fn, void *ctx);

/*
 * Calls fn for up to limit results whose output files are ready to delete
 * (file_delete_state READY), in id order. The page is read before fn is
 * first called, so fn may update the rows.
 */
VS_MUST_CHECK int vs_store_results_to_delete(struct vs_store *s, int limit, vs_store_result_fn fn,
                                             void *ctx);

/*
 * Puts every workunit and result whose file deletion failed (file_delete_state
 * ERROR) back to READY, for the file deleter's periodic retry. *out_n (may
 * be NULL) is the number of rows changed.
 */
VS_MUST_CHECK int vs_store_file_delete_retry(struct vs_store *s, int64_t *out_n);

/*
 * BOINC-COMPAT host_app_version: the reliability and daily-quota record of
 * one host running one app version (the generalized id for anonymous
 * platforms). max_jobs_per_day 0 means "the project's daily_result_quota".
 */
struct vs_host_app_version {
    int64_t host_id;
    int64_t app_version_id;
    int max_jobs_per_day;
    int n_jobs_today;
    int consecutive_valid;
    double turnaround_n;   /* number of turnaround samples */
    double turnaround_avg; /* seconds */
};

/* Reads the record of (host_id, app_version_id); VS_ENOTFOUND if none. */
VS_MUST_CHECK int vs_store_hav_get(struct vs_store *s, int64_t host_id, int64_t app_version_id,
                                   struct vs_host_app_version *out);
/* Inserts or replaces the record (host_id, app_version_id) of h. */
VS_MUST_CHECK int vs_store_hav_put(struct vs_store *s, const struct vs_host_app_version *h);
typedef int (*vs_store_hav_fn)(void *ctx, const struct vs_host_app_version *h);
/* Calls fn for every record of host host_id, in app_version_id order. */
VS_MUST_CHECK int vs_store_havs_of_host(struct vs_store *s, int64_t host_id, vs_store_hav_fn fn,
                                        void *ctx);
/*
 * The scheduler's write after sending: sets n_jobs_today of (host_id,
 * app_version_id), creating the record with max_jobs_per_day when it does
 * not exist. An existing record's max_jobs_per_day is left alone (the
 * validator and transitioner own it).
 */
VS_MUST_CHECK int vs_store_hav_set_today(struct vs_store *s, int64_t host_id,
                                         int64_t app_version_id, int n_jobs_today,
                                         int max_jobs_per_day);

/* The last pass and last error of one back-end daemon (volsched). */
struct vs_daemon_status {
    char name[VS_SHORT_MAX];      /* "transitioner", "validator", ... */
    int64_t last_run;             /* time of the last pass; 0 = never ran */
    int64_t last_work;            /* items the last pass handled */
    int64_t total_work;           /* items handled by all passes */
    int64_t last_error_time;      /* 0 = no error recorded */
    char last_error[VS_NAME_MAX]; /* "" = none; kept until the next error */
    int64_t retry_time;           /* daemon's own: e.g. the next retry of failed deletions */
};

/* Reads the status of daemon name; VS_ENOTFOUND if it never ran. */
VS_MUST_CHECK int vs_store_daemon_status_get(struct vs_store *s, const char *name,
                                             struct vs_daemon_status *out);
/* Inserts or replaces the status row d->name. */
VS_MUST_CHECK int vs_store_daemon_status_put(struct vs_store *s, const struct vs_daemon_status *d);
typedef int (*vs_store_daemon_status_fn)(void *ctx, const struct vs_daemon_status *d);
/* Calls fn for every daemon status row, in name order. */
VS_MUST_CHECK int vs_store_daemon_status_list(struct vs_store *s, vs_store_daemon_status_fn fn,
                                              void *ctx);

/*
 * The phase of a workunit's life, for counting (BOINC has no single WU
 * state: this is a reading of error_mask, need_validate, canonical_resultid,
 * assimilate_state and file_delete_state, first match wins).
 */
enum vs_wu_phase {
    VS_WU_PHASE_FILES_DELETED = 0, /* file_delete_state DONE */
    VS_WU_PHASE_ASSIMILATED,       /* assimilate_state DONE, files not yet deleted */
    VS_WU_PHASE_ASSIMILATE_READY,  /* assimilate_state READY */
    VS_WU_PHASE_ERROR,             /* error_mask set, not yet assimilated */
    VS_WU_PHASE_NEED_VALIDATE,     /* need_validate */
    VS_WU_PHASE_VALIDATED,         /* canonical result, assimilation deferred */
    VS_WU_PHASE_IN_PROGRESS,       /* everything else: results out or to send */
    VS_WU_PHASE__COUNT
};
enum vs_wu_phase vs_workunit_phase(const struct vs_workunit *wu);
/* A short name for a phase ("in_progress", ...). */
const char *vs_wu_phase_name(int phase);

/* Counts over the whole store (vs_store_counts). */
struct vs_store_counts {
    int64_t workunits;
    int64_t wu_phase[VS_WU_PHASE__COUNT];
    int64_t wu_error_mask[6];     /* workunits with error_mask bit 1 << i */
    int64_t wu_file_delete_error; /* workunits with file_delete_state ERROR */
    int64_t results;
    /* results by server_state (index 0..5, BOINC's values) and outcome (0..7) */
    int64_t result_state_outcome[6][8];
    int64_t result_validate[6]; /* OVER/SUCCESS results by validate_state */
    int64_t result_file_delete_error;
    int64_t hosts;
    int64_t users;
    int64_t teams;
    int64_t apps;
    int64_t job_cache; /* UNSENT results the feeder may send (transitioner_flags 0) */
};

/* Fills *out with counts of every table (one read transaction). */
VS_MUST_CHECK int vs_store_counts(struct vs_store *s, struct vs_store_counts *out);

#endif
