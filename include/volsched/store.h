/*
 * The project server's persistent store: ONE interface of domain operations.
 *
 * Callers (scheduler, transitioner, CLI tools) speak in terms of users, hosts,
 * workunits and results, never SQL. Two backends sit behind the same opaque
 * handle, and the URL scheme picks one: SQLite (store_sqlite.c, the default)
 * and PostgreSQL (store_pg*.c, for scale-out). The domain operations are
 * one code on both (store_db.h). The records the operations take and return
 * are in store_types.h.
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
#include "volsched/store_types.h"

struct vs_log;
struct vs_store;

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
 * SQLite store; "postgresql://..." or "postgres://..." (libpq's URI form,
 * store_pg.c) for PostgreSQL; "postgresql:" without the slashes is
 * VS_EINVAL. Without VS_STORE_CREATE a missing database is VS_ENOTFOUND.
 * The schema is created or migrated to the current version. The SQLite
 * backend uses WAL,
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

/*
 * Makes the commits of this handle survive power loss (on: one sync of the
 * log per commit), or puts them back as the URL chose (off: only a crash of
 * the process, unless the URL said "?sync=full"). create_work turns it on
 * for its one batch and off again after it.
 */
VS_MUST_CHECK int vs_store_durable_commits(struct vs_store *s, bool on);

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
/*
 * The same for a transaction that writes only the given accounts' hosts,
 * their results and those results' workunits (the scheduler's group
 * commit). On SQLite it is vs_store_begin (one writer at a time). On
 * PostgreSQL such transactions of different accounts run side by side,
 * while any other transaction still runs alone: the limits the scheduler
 * counts per host and per account (in-progress, daily quota, new hosts,
 * one result per user and workunit) stay exact because two transactions
 * of one account never overlap. Nested, it is a savepoint like
 * vs_store_begin's.
 */
VS_MUST_CHECK int vs_store_begin_users(struct vs_store *s, const int64_t *userids, size_t n);
/*
 * True while a transaction opened with vs_store_begin is still open. False
 * outside one, and after an error that made the backend roll the whole
 * transaction back (disk full, I/O error, a trigger's RAISE(ROLLBACK)):
 * then every nested begin and commit fails without touching the store until
 * the outermost level is committed or rolled back (both report the loss).
 */
bool vs_store_in_transaction(struct vs_store *s);
VS_MUST_CHECK int vs_store_commit(struct vs_store *s);
int vs_store_rollback(struct vs_store *s);
/*
 * Flat nesting, for a batch that expects to succeed (the scheduler's group
 * commit): after vs_store_flat(s, true) inside a transaction, the levels
 * that begin and commit open inside it are not savepoints, so they cost
 * the backend no statements (on PostgreSQL, 4 of an RPC's 11 writes). A
 * level that fails cannot be undone on its own then: vs_store_flat(s,
 * false) returns false when any did (or the transaction was lost), and the
 * caller must roll the whole transaction back and run it again with
 * savepoints. Returns true otherwise; vs_store_flat(s, true) returns false
 * (and changes nothing) outside a transaction.
 */
bool vs_store_flat(struct vs_store *s, bool on);

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
/* Writes every field of a to row a->id; VS_ENOTFOUND if it is gone. */
VS_MUST_CHECK int vs_store_app_update(struct vs_store *s, const struct vs_app *a);

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
 * transition_time (now, or VS_TIME_NEVER for assigned work). The names of
 * its input files are recorded with it ("Input files in use" below), in
 * one transaction; inside the caller's, a failure other than VS_EEXISTS
 * may leave the row without them: roll that level back.
 */
VS_MUST_CHECK int vs_store_workunit_add(struct vs_store *s, struct vs_workunit *wu);
/*
 * The same, for a workunit of locality file near (NULL: as above): on
 * SQLite its id is chosen next to the file's other workunits, so that their
 * rows share pages (store_cluster.c); ids stay increasing per file.
 */
VS_MUST_CHECK int vs_store_workunit_add_near(struct vs_store *s, struct vs_workunit *wu,
                                             const char *near);
/*
 * Inserts n workunits as vs_store_workunit_add does each (ids, times, the
 * same checks), inside the caller's transaction: create_work's bulk path.
 * On PostgreSQL one COPY for them all (ids drawn from the table's sequence
 * first) instead of a statement each; on SQLite a statement each. A
 * duplicate name fails the whole call with VS_EEXISTS without saying which
 * (on PostgreSQL the transaction then needs its savepoint rolled back: run
 * it inside one, and find the name row by row).
 */
VS_MUST_CHECK int vs_store_workunits_add(struct vs_store *s, struct vs_workunit *const *wus,
                                         size_t n);
VS_MUST_CHECK int vs_store_workunit_get(struct vs_store *s, int64_t id, struct vs_workunit *out);
VS_MUST_CHECK int vs_store_workunit_by_name(struct vs_store *s, const char *name,
                                            struct vs_workunit *out);
/* Writes every field of wu to row wu->id (mod_time = now); VS_ENOTFOUND if gone. */
VS_MUST_CHECK int vs_store_workunit_update(struct vs_store *s, const struct vs_workunit *wu);

/*
 * Releases held workunits (created with create_work --no_transition, whose
 * transition_time is "never"): the one named name, or when name is NULL
 * every one of batch batch, gets transition_time = now, so the transitioner
 * makes their results. *out_n (may be NULL) is how many were released.
 */
VS_MUST_CHECK int vs_store_workunits_release(struct vs_store *s, const char *name, int64_t batch,
                                             int64_t now, int64_t *out_n);

typedef int (*vs_store_workunit_fn)(void *ctx, const struct vs_workunit *wu);
/*
 * Calls fn for up to limit workunits whose input files should still be in
 * the download hierarchy (file_delete_state INIT) with id > after_id, in id
 * order (wu_check's scan; page with the last id seen). The page is read
 * before fn is first called. A non-zero return of fn stops and is returned.
 */
VS_MUST_CHECK int vs_store_workunits_with_inputs(struct vs_store *s, int64_t after_id, int limit,
                                                 vs_store_workunit_fn fn, void *ctx);

/*
 * Sets only transition_time = when (and mod_time = now) of workunit id: a
 * daemon that defers a workunit it could not handle writes no stale copy
 * of the other columns (the scheduler's claim writes hr_class meanwhile).
 * 0 when the row is gone.
 */
VS_MUST_CHECK int vs_store_workunit_retry_at(struct vs_store *s, int64_t id, int64_t when,
                                             int64_t now);

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
/* The same, next to the other results of locality file near (see
 * vs_store_workunit_add_near). */
VS_MUST_CHECK int vs_store_result_add_near(struct vs_store *s, struct vs_result *r,
                                           const char *near);
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

/* The host's results IN_PROGRESS (its in-progress cap). */
VS_MUST_CHECK int vs_store_host_count_in_progress(struct vs_store *s, int64_t hostid, int64_t *out);
/* The user's hosts created after since (new hosts per account per day). */
VS_MUST_CHECK int vs_store_user_count_new_hosts(struct vs_store *s, int64_t userid, int64_t since,
                                                int64_t *out);

/* Number of results of app appid (all apps when appid is 0) in server_state state. */
VS_MUST_CHECK int vs_store_count_results(struct vs_store *s, int64_t appid, int state,
                                         int64_t *out_count);

typedef int (*vs_store_job_fn)(void *ctx, const struct vs_job *job);

/* A position in the feeder's order: priority (higher first), then result
 * id. VS_JOB_KEY_TOP is before every row. */
struct vs_job_key {
    int priority;
    int64_t id;
};
#define VS_JOB_KEY_TOP_PRIORITY 2147483647

/*
 * The feeder's scan: calls fn for up to limit UNSENT results whose workunit
 * has transitioner_flags 0 (assigned work never enters the general cache),
 * after position *after (NULL: from the top), in the feeder's order
 * (priority descending, then id: BOINC's feeder orders by priority too),
 * each joined with its workunit. *out_last (may be NULL) is the position of
 * the last row passed to fn (*after, or the top, if none), so the next page
 * starts there. Stops early if fn returns non-zero.
 */
VS_MUST_CHECK int vs_store_jobs_unsent(struct vs_store *s, const struct vs_job_key *after,
                                       int limit, vs_store_job_fn fn, void *ctx,
                                       struct vs_job_key *out_last);

/*
 * The same scan for the job cache of one of several `volsched serve` on one
 * store: results leased by another owner whose lease runs past
 * now are passed over (owner is this instance's lease owner id; results it
 * leases itself, never leased ones and expired leases pass). The plain scan
 * above does not look at leases.
 */
VS_MUST_CHECK int vs_store_jobs_leasable(struct vs_store *s, const struct vs_job_key *after,
                                         int limit, int64_t owner, int64_t now, vs_store_job_fn fn,
                                         void *ctx, struct vs_job_key *out_last);

/*
 * The job cache's lease (several serve on one store), in ONE transaction: each result ids[i]
 * that is still UNSENT and free for owner (leased by owner already, never
 * leased, or its lease ended at or before now) becomes leased by owner
 * until `until` (seconds); out_leased[i] says which (*out_n, may be NULL,
 * how many). The same call renews leases. A result another live owner
 * leases is left alone: vs_store_results_claim refuses it to anyone else
 * until its lease ends. owner 0 is VS_EINVAL (0 means "no lease").
 */
VS_MUST_CHECK int vs_store_results_lease(struct vs_store *s, int64_t owner, int64_t now,
                                         int64_t until, const int64_t *ids, size_t n,
                                         bool *out_leased, size_t *out_n);

/*
 * What was added since result id after_id: *out_max_id is the largest
 * result id in the store (0 if none), *out_have_unsent whether a result
 * with a larger id than after_id is UNSENT, and then *out_max_priority the
 * highest priority among those. The feeder asks this to notice new work of
 * a higher priority than where its scan stands. Reads only the new rows
 * (INT64_MAX: none, just the largest id).
 */
VS_MUST_CHECK int vs_store_unsent_newer(struct vs_store *s, int64_t after_id, int64_t *out_max_id,
                                        bool *out_have_unsent, int *out_max_priority);

/* ---------------------------------------------------------------------------
 * Assigned work (seed 003; store_assign.c)
 * ------------------------------------------------------------------------- */

typedef int (*vs_store_assigned_fn)(void *ctx, const struct vs_assignment *a,
                                    const struct vs_workunit *wu);
/*
 * Calls fn for up to limit assignments with this target_type, target_id and
 * multi whose workunit is still open (no error; targeted: no canonical
 * result and not waiting for the validator; broadcast: host hostid has not
 * been sent an instance yet), highest workunit priority first, each with
 * its workunit (borrowed). A non-zero return of fn stops the scan and is
 * returned.
 */
VS_MUST_CHECK int vs_store_assigned_for(struct vs_store *s, int target_type, int64_t target_id,
                                        int multi, int64_t hostid, int limit,
                                        vs_store_assigned_fn fn, void *ctx);

/* Fills r's name-dependent parts for a new instance of wu: r->name is set
 * (BOINC-COMPAT <wu>_<n>); the callback renders r->xml_doc_in (heap,
 * owned by r). A non-zero return aborts the reservation. */
typedef int (*vs_store_make_result_fn)(void *ctx, const struct vs_workunit *wu,
                                       struct vs_result *r);

/*
 * The scheduler's atomic step for assigned work, in ONE transaction (or
 * inside the caller's): reads workunit a->workunitid and its results, asks
 * the policy (vs_sp_assign_decide) whether host hostid gets an instance,
 * and then either returns the existing UNSENT instance to send, or inserts
 * a new UNSENT one reserved for hostid (make fills its XML) in the slot the
 * policy chose. The slot indexes (schema v4) refuse a second live instance
 * of one slot, so requests racing on one workunit cannot exceed
 * target_nresults (BOINC's #1937). The caller then claims the result like
 * any other (vs_store_results_claim).
 *
 * Returns 0 with *out filled (caller cleans it) when there is an instance;
 * 0 with out->id == 0 and *out_why (static text) when there is none now;
 * VS_ENOTFOUND if the workunit is gone; VS_EEXISTS if another request took
 * the slot first (nothing written); other errors as usual.
 */
VS_MUST_CHECK int vs_store_assigned_reserve(struct vs_store *s, const struct vs_assignment *a,
                                            int64_t hostid, int64_t now,
                                            vs_store_make_result_fn make, void *ctx,
                                            struct vs_result *out, const char **out_why);

/* Assignments by kind (target_type 0..3, multi 0..1): all, and those whose
 * workunit is still open (no error, no canonical result, not assimilated). */
struct vs_assignment_counts {
    int64_t n[4][2];
    int64_t open[4][2];
};
VS_MUST_CHECK int vs_store_assignment_counts(struct vs_store *s, struct vs_assignment_counts *out);

/* Calls fn for up to limit reported (OVER) broadcast instances with id >
 * after_id, in id order: the results an operator's own daemon collects,
 * since broadcast work skips validation and assimilation. */
VS_MUST_CHECK int vs_store_broadcast_results(struct vs_store *s, int64_t after_id, int limit,
                                             vs_store_result_fn fn, void *ctx);

/* ---------------------------------------------------------------------------
 * Locality scheduling (seed 001). The workunits of file F are the ones
 * named F__* (F is a valid locality file name, include/volsched/locality.h;
 * VS_EINVAL otherwise). Only workunits with transitioner_flags 0 count
 * (assigned work is sent by its own path).
 * ------------------------------------------------------------------------- */

/* The largest id of a result of F's workunits sent to user userid, or 0. */
VS_MUST_CHECK int vs_store_loc_max_sent(struct vs_store *s, const char *file, int64_t userid,
                                        int64_t *out_id);
/*
 * Calls fn for up to limit UNSENT results of F's workunits with id >
 * after_id, in increasing id order, each joined with its workunit; of each
 * workunit only its lowest-id one (a host takes one result of a workunit).
 * Workunits of which user excl_userid (when > 0) or host excl_hostid (when
 * > 0) already holds a result are left out (one result per user / host
 * per workunit). A non-zero return of fn stops the scan and is returned.
 */
VS_MUST_CHECK int vs_store_loc_unsent(struct vs_store *s, const char *file, int64_t after_id,
                                      int64_t excl_userid, int64_t excl_hostid, int limit,
                                      vs_store_job_fn fn, void *ctx);
/* Sets *out to true when some workunit is named F__* (the project has had F). */
VS_MUST_CHECK int vs_store_loc_file_known(struct vs_store *s, const char *file, bool *out);

typedef int (*vs_store_name_fn)(void *ctx, const char *name);
/*
 * Calls fn for up to limit distinct files whose workunits have UNSENT
 * results, in ascending name order, each > after ("" or NULL: from the
 * first). Reads every unsent result (no index orders them by file): for
 * daemons and for the scheduler's rare deterministic scan, not per file.
 */
VS_MUST_CHECK int vs_store_loc_files_with_work(struct vs_store *s, const char *after, int limit,
                                               vs_store_name_fn fn, void *ctx);

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
    /* Refuse it when a result of the same workunit is held by this host
     * (one_result_per_host_per_wu) or this user (one_result_per_user_per_wu).
     * The scheduler sets them; tools that place results by hand need not. */
    bool one_per_host, one_per_user;
    /* Refuse it when the host already has this many results IN_PROGRESS
     * (0: no cap). Counted inside the claim, so parallel requests of one
     * host cannot pass the cap together. */
    int host_max_in_progress;
    /* The daily quota (0: none): refuse it when the host's n_jobs_today of
     * app_version_id is at day_quota; a claim adds one to that count. Both
     * in the claim, so parallel requests of one host cannot pass the quota
     * together. */
    int day_quota;
    /* The claiming instance's job-cache lease owner (0: none). A
     * result another owner leases past now is refused (claimed = false). */
    int64_t lease_owner;
    bool claimed; /* out: true if this call moved it from UNSENT to IN_PROGRESS */
};

/*
 * The scheduler's atomic send: in ONE durable transaction (or inside the
 * caller's), each listed result that is still UNSENT becomes IN_PROGRESS
 * with hostid, userid, teamid, sent_time = now, report_deadline,
 * app_version_id/num and flops_estimate, and its workunit's
 * transition_time becomes min(transition_time, report_deadline) so the
 * transitioner notices a timeout. A result that is no longer UNSENT (sent
 * to another host meanwhile, cancelled), one whose workunit has a result on
 * this host or user already (with one_per_host, one_per_user), or one over the host's
 * host_max_in_progress is left alone with claimed = false, so a result is
 * never sent twice and the rules hold however requests interleave. These
 * checks are in the claiming statement itself, and so is the lease: a
 * result leased by an owner other than claims[i].lease_owner whose lease
 * runs past now is left alone too. Returns the number claimed in
 * *out_nclaimed.
 */
VS_MUST_CHECK int vs_store_results_claim(struct vs_store *s, int64_t hostid, int64_t userid,
                                         int64_t teamid, int64_t now, struct vs_claim *claims,
                                         size_t n, size_t *out_nclaimed);

/* A result sent to a host that the host no longer lists (BOINC's
 * resend_lost_results): sent again with a new deadline, or expired. */
struct vs_resend_item {
    int64_t result_id, workunit_id;
    int64_t sent_time;       /* unchanged when expiring */
    int64_t report_deadline; /* the new one; in the past to expire it */
};

/*
 * Records resends of lost results in one transaction (or inside the
 * caller's): each result still IN_PROGRESS on hostid gets the item's
 * sent_time and report_deadline, and its workunit's transition_time becomes
 * min(transition_time, report_deadline), so an expired one times out at the
 * transitioner's next pass. Rows no longer IN_PROGRESS on the host are left
 * alone. Returns 0 or a store error.
 */
VS_MUST_CHECK int vs_store_results_resend(struct vs_store *s, int64_t hostid, int64_t now,
                                          const struct vs_resend_item *items, size_t n);

/* What a client reported about one result (scheduler). */
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
 * Input files in use (schema v6, because the file deleter removed inputs
 * other jobs and app versions still named). Every workunit insert
 * (vs_store_workunit_add and its near and bulk forms) records the names of
 * the <file_info>s of its xml_doc in the same transaction as the row (table
 * wu_file), so every way of making work is counted.
 *
 * vs_store_file_in_use sets *out to true when file name is used by
 * something other than workunit except_wuid (0: by anything): a workunit
 * whose use of it has not been dropped, or a file of an app version (of
 * any app version: a deprecated one is still in the catalogue). The file
 * deleter asks it inside the write transaction in which it then deletes
 * the file and drops its own use; store writers run one at a time (SQLite:
 * BEGIN IMMEDIATE; PostgreSQL: the transaction lock), so a create_work
 * that adds a user either committed before the answer, or inserts after
 * the deletion and then finds the file gone (vs_create_work checks).
 */
VS_MUST_CHECK int vs_store_file_in_use(struct vs_store *s, const char *name, int64_t except_wuid,
                                       bool *out);
/* Drops workunit wuid's use of file name (the file deleter, done with it).
 * Dropping a use that is not recorded is not an error. */
VS_MUST_CHECK int vs_store_file_use_drop(struct vs_store *s, int64_t wuid, const char *name);

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
 * The host's quota day turned: sets n_jobs_today of every record of host
 * host_id to 0 if the host's stored rpc_time is before day_start (its last
 * RPC was on an earlier day). The scheduler calls it before it writes the
 * host row, in the same transaction, so of parallel requests on the new
 * day only the first resets the count (the claims count from there).
 */
VS_MUST_CHECK int vs_store_hav_new_day(struct vs_store *s, int64_t host_id, int64_t day_start);

/*
 * Inserts h like vs_store_host_add, unless user h->userid has max_new hosts
 * created after since already (then VS_ELIMIT, nothing written): the count
 * and the insert in one transaction (or inside the caller's), so parallel
 * requests of one account cannot pass the limit together. max_new <= 0: no
 * limit.
 */
VS_MUST_CHECK int vs_store_host_add_capped(struct vs_store *s, struct vs_host *h, int64_t since,
                                           int max_new);

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
/* The names of workunit.error_mask's bits: [i] names bit 1 << i
 * ("couldnt_send_result", ..., "no_canonical_result"). */
#define VS_WU_ERROR_BITS 6
extern const char *const vs_wu_error_names[VS_WU_ERROR_BITS];

/* Counts over the whole store (vs_store_counts). */
struct vs_store_counts {
    int64_t workunits;
    int64_t wu_phase[VS_WU_PHASE__COUNT];
    int64_t wu_error_mask[VS_WU_ERROR_BITS]; /* workunits with error_mask bit 1 << i */
    int64_t wu_file_delete_error;            /* workunits with file_delete_state ERROR */
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
