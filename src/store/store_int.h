/*
 * Internals shared by the store's backend-neutral files (store_<concept>.c,
 * store_db.c) and its two backends (store_sqlite.c, store_pg*.c). Not for
 * use outside src/store/.
 *
 * Rows are mapped to structs through column descriptors (struct sq_col):
 * one table per struct lists each column's name, type and offset, and the
 * generic insert/update/select code builds its SQL and binds or reads
 * values from them. That keeps the column list of a table in one place
 * (the schema in store_schema.c must match; a unit test checks it).
 */
#ifndef VOLSCHED_STORE_STORE_INT_H
#define VOLSCHED_STORE_STORE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store_db.h"
#include "volsched/buf.h"
#include "volsched/store.h"
#include "volsched/str.h"

/* Copies with deliberate truncation (GCC ignores a (void) cast on a
 * warn_unused_result call). */
static inline void vs_store__copy(char *dst, const char *src, size_t dstsize)
{
    if (vs_strlcpy(dst, src, dstsize) != 0)
        return;
}

enum sq_type {
    SQ_I64,  /* int64_t */
    SQ_INT,  /* int */
    SQ_DBL,  /* double */
    SQ_STR,  /* char[size] inside the struct */
    SQ_PSTR, /* char * owned by the struct (NULL = SQL NULL) */
};

struct sq_col {
    const char *name;
    enum sq_type type;
    size_t offset;
    size_t size; /* SQ_STR only */
};

struct sq_table {
    const char *name;          /* SQL table name (quoted where needed) */
    const struct sq_col *cols; /* cols[0] is "id" when has_id */
    size_t ncols;
    int has_id;
};

extern const struct sq_table vs_store__platform;
extern const struct sq_table vs_store__app;
extern const struct sq_table vs_store__app_version;
extern const struct sq_table vs_store__app_version_file;
extern const struct sq_table vs_store__user;
extern const struct sq_table vs_store__team;
extern const struct sq_table vs_store__host;
extern const struct sq_table vs_store__workunit;
extern const struct sq_table vs_store__result;
extern const struct sq_table vs_store__assignment;

/* Prepared-statement slots: one per distinct SQL text the backend runs. */
enum sq_stmt {
#define SQ_TABLE_STMTS(t) SQ_##t##_INSERT, SQ_##t##_UPDATE, SQ_##t##_GET, SQ_##t##_BY_NAME
    SQ_TABLE_STMTS(PLATFORM),
    SQ_TABLE_STMTS(APP),
    SQ_TABLE_STMTS(APP_VERSION),
    SQ_TABLE_STMTS(AVFILE),
    SQ_TABLE_STMTS(USER),
    SQ_TABLE_STMTS(TEAM),
    SQ_TABLE_STMTS(HOST),
    SQ_TABLE_STMTS(WORKUNIT),
    SQ_TABLE_STMTS(RESULT),
    SQ_TABLE_STMTS(ASSIGNMENT),
#undef SQ_TABLE_STMTS
    SQ_USER_BY_AUTH,
    SQ_HOST_BY_CPID,
    SQ_TEAM_NUSERS_INC,
    SQ_AVFILES_OF,
    SQ_PLATFORM_ALL,
    SQ_APP_ALL,
    SQ_APP_VERSION_ALL,
    SQ_ASSIGNMENTS,
    SQ_RESULTS_OF_WU,
    SQ_RESULTS_IN_PROGRESS,
    SQ_HOST_HAS_WU,
    SQ_HOST_IN_PROGRESS, /* the host's in-progress cap */
    SQ_USER_NEW_HOSTS,   /* new hosts per account per day */
    SQ_COUNT_RESULTS,
    SQ_COUNT_UNSENT,
    SQ_COUNT_IN_PROGRESS,
    SQ_JOBS_UNSENT,
    SQ_JOBS_UNSENT_LOWER,
    SQ_UNSENT_NEWER,
    SQ_ASSIGNED_FOR,
    SQ_ASSIGNED_RESULTS,
    SQ_ASSIGNMENT_COUNTS,
    SQ_BROADCAST_RESULTS,
    SQ_WU_RELEASE_NAME,
    SQ_WU_RELEASE_BATCH,
    SQ_WUS_WITH_INPUTS,
    SQ_CLAIM,
    SQ_LEASE, /* the job cache's lease of a result */
    SQ_CLAIM_WU,
    SQ_CLAIM_WU_ID,
    SQ_REPORT,
    SQ_REPORT_STATE,
    SQ_REPORT_WU,
    SQ_WU_RETRY_AT, /* a deferred WU, its other columns untouched */
    SQ_WUS_TO_TRANSITION,
    SQ_WUS_TO_VALIDATE,
    SQ_WUS_TO_ASSIMILATE,
    SQ_WUS_TO_DELETE,
    SQ_RESULTS_TO_DELETE,
    SQ_DELETE_RETRY_WU,
    SQ_DELETE_RETRY_RESULT,
    /* input files in use (schema v6, store_files.c) */
    SQ_WU_FILE_ADD,
    SQ_WU_FILE_IN_USE,
    SQ_WU_FILE_DROP,
    SQ_HOST_UPDATE_KEYS,
    SQ_HAV_GET,
    SQ_HAV_PUT,
    SQ_HAVS_OF_HOST,
    SQ_HAV_CLAIMED, /* the claim counts the day's jobs */
    SQ_HAV_NEW_DAY,
    SQ_DAEMON_GET,
    SQ_DAEMON_PUT,
    SQ_DAEMON_ALL,
    /* locality scheduling (store_locality.c) */
    SQ_LOC_MAX_SENT,
    SQ_LOC_UNSENT,
    SQ_LOC_UNSENT_ALL,
    SQ_LOC_KNOWN,
    SQ_LOC_FILES_WITH_WORK,
    /* row placement by locality file (store_cluster.c) */
    SQ_CL_WU_INSERT_ID,
    SQ_CL_WU_LAST,
    SQ_CL_WU_RESERVE,
    SQ_CL_WU_TAKEN,
    SQ_CL_WU_ABOVE,
    SQ_CL_RES_INSERT_ID,
    SQ_CL_RES_LAST,
    SQ_CL_RES_RESERVE,
    SQ_CL_RES_TAKEN,
    SQ_CL_RES_ABOVE,
    SQ__COUNT
};

#define VS_SQ_TX_DEPTHS 8 /* savepoint depths with prepared statements; deeper ones use exec */

/* Transaction control (struct vs_db_ops.tx). */
enum vs_db_tx {
    VS_DB_BEGIN,
    VS_DB_COMMIT,
    VS_DB_ROLLBACK,
    VS_DB_SAVE,
    VS_DB_RELEASE,
    VS_DB_ROLLBACK_TO
};

/*
 * What a backend does its own way (store_sqlite.c, store_pg.c): everything
 * but the statements' bind/step/column calls, which store_db.h dispatches
 * inline. Return codes: VS_DB_* (SQLite's) for statements, VS_E* for the rest.
 */
struct vs_db_copy; /* a bulk load in progress (store_pg_copy.c) */

struct vs_db_ops {
    const char *name;
    /* Compiles sql into *out; slot >= 0 for a statement kept for the handle's
     * life (vs_store__stmt's cache), -1 for one use (vs_db_prepare). */
    int (*prepare)(struct vs_store *s, const char *sql, int slot, struct vs_stmt *out);
    int (*exec)(struct vs_store *s, const char *sql);
    int64_t (*changes)(struct vs_store *s);
    int64_t (*last_insert_id)(struct vs_store *s);
    int (*errcode)(struct vs_store *s);
    const char *(*errmsg)(struct vs_store *s);
    /* Runs transaction control op (savepoints at depth); VS_E* codes. */
    int (*tx)(struct vs_store *s, enum vs_db_tx op, int depth);
    /* True when the backend holds no transaction open (it ended ours). */
    bool (*txn_gone)(struct vs_store *s);
    int (*checkpoint)(struct vs_store *s);
    int (*durable)(struct vs_store *s, bool on);
    int (*sched_tune)(struct vs_store *s, bool writer);
    /* vs_store_sched_wal_trim (store_sched.h); NULL: nothing to do. */
    int (*wal_trim)(struct vs_store *s);
    /* After rows were inserted with their ids (a store copy): new ids of
     * table continue after the largest one. */
    int (*ids_follow)(struct vs_store *s, const char *table);
    /* Rows are kept in id order, so that choosing ids places them
     * (store_cluster.c): SQLite. */
    bool cluster_ids;
    /* vs_store_sched_parallel: batches of different accounts commit side
     * by side (vs_store_begin_users); false: one writer at a time. */
    bool parallel_writes;
    /* vs_store_host_update: one statement, SQ_HOST_UPDATE with the host's
     * keys in it (PostgreSQL: an unchanged indexed column keeps its index
     * untouched, HOT), instead of SQLite's row update plus SQ_HOST_UPDATE_KEYS
     * when they changed (SQLite rewrites the index entries of every column
     * an UPDATE sets). */
    bool host_keys_in_update;
    /* Inserts n rows of table t (rows[i] each; ids set) in the open
     * transaction, in one bulk step; NULL: a statement each
     * (vs_store__insert_many). */
    int (*insert_many)(struct vs_store *s, const struct sq_table *t, void *const *rows, size_t n);
    /* A bulk load of table's columns cols ("a, b, c") in the open
     * transaction: begin, then per row its fields as text (NULL: SQL NULL)
     * and the row's end, then end (rc != 0 abandons it; returns the first
     * failure). NULL copy_begin: rows go one statement each (store_copy.c). */
    int (*copy_begin)(struct vs_store *s, const char *table, const char *cols,
                      struct vs_db_copy **out);
    void (*copy_field)(struct vs_db_copy *c, const char *v, size_t n);
    void (*copy_row)(struct vs_db_copy *c);
    int (*copy_end)(struct vs_db_copy *c, int rc);
    /* vs_store_leader (store_sched.h). */
    int (*leader)(struct vs_store *s, const char *role, bool *out);
    void (*close)(struct vs_store *s);
};

extern const struct vs_db_ops vs_store__sqlite_ops; /* store_sqlite.c */
extern const struct vs_db_ops vs_store__pg_ops;     /* store_pg.c */

struct sqlite3; /* store_sqlite.c */
struct vs_pg;   /* store_pg.c: the connection and its state */

struct vs_store {
    const struct vs_db_ops *ops;
    struct sqlite3 *db; /* SQLite (store_sqlite.c) */
    struct vs_pg *pg;   /* PostgreSQL */
    struct vs_log *log;
    bool sync_full;   /* the URL asked for synchronous=FULL */
    int wal_frames;   /* SQLite scheduler writer: frames in the WAL after its last commit */
    int mod_n, mod_i; /* vs_store_set_mod: the daemons' queues keep id % mod_n == mod_i */
    struct vs_stmt stmts[SQ__COUNT];
    int txn_depth;
    /* vs_store_begin_users: the accounts of the transaction being opened,
     * read by the backend's BEGIN only (borrowed for that call). */
    const int64_t *begin_users;
    size_t n_begin_users;
    bool txn_lost; /* the backend rolled the open transaction back (store_db.c, txn_lost) */
    /* vs_store_flat: levels deeper than flat_base are not savepoints (0:
     * off); flat_failed: one of them failed. */
    int flat_base;
    bool flat_failed;
    /* SQLite's transaction control, prepared once (store_sqlite.c, run_tx):
     * BEGIN IMMEDIATE, COMMIT, ROLLBACK, and per savepoint depth SAVEPOINT
     * spN, RELEASE spN, ROLLBACK TO spN. Compiling their text on every call
     * was a fifth of the scheduler's commit cost. */
    struct sqlite3_stmt *tx[3];
    struct sqlite3_stmt *sp[VS_SQ_TX_DEPTHS][3];
};

/* Opens the backends (the URL's scheme was read by vs_store_open). */
int vs_store__open_sqlite(const char *url, int flags, struct vs_log *log, struct vs_store **out);
int vs_store__open_pg(const char *conninfo, int flags, struct vs_log *log, struct vs_store **out);
/* Creates or migrates the schema (store_db.c); the backends' open calls it. */
int vs_store__ensure_schema(struct vs_store *s);
/* Creates the trickle tables if missing (store_trickle.c). */
int vs_store__trickle_ensure(struct vs_store *s);
/* True when slot id is a table's INSERT whose new id the caller reads. */
bool vs_store__slot_is_insert(enum sq_stmt id);

/* Returns the prepared statement for slot id (prepared on first use), reset
 * and with its bindings cleared; NULL on error (logged). */
struct vs_stmt *vs_store__stmt(struct vs_store *s, enum sq_stmt id);

/* Logs the SQLite error for what and maps rc to a VS_E* code
 * (VS_DB_CONSTRAINT -> VS_EEXISTS, else VS_ESTORE). */
int vs_store__err(struct vs_store *s, int rc, const char *what);

/* Runs a statement that returns no rows and resets it. Returns 0 when it ran
 * to completion, else the mapped error (vs_store__err, logged with what). */
int vs_store__step_done(struct vs_store *s, struct vs_stmt *st, const char *what);

/* Ends a one-row lookup whose vs_db_step returned rc: resets st and
 * returns 0 for a row, VS_ENOTFOUND for none, else vs_store__err's code. The
 * caller reads the row's columns before calling this. */
int vs_store__one_row_end(struct vs_store *s, struct vs_stmt *st, int rc, const char *what);

/* Runs a one-value query (a count, an EXISTS, a max) into *out and resets
 * st. A query without a row is an error (they always return one). */
int vs_store__one_i64(struct vs_store *s, struct vs_stmt *st, int64_t *out);

/* Binds the columns of row except id to ?first, ?first+1, ...; then, when
 * with_id, the id to the next parameter. Returns the next free parameter. */
int vs_store__bind_row(struct vs_stmt *st, int first, const struct sq_table *t, const void *row,
                       int with_id);
/* Reads t->ncols columns starting at result column first into row (heap
 * strings are duplicated; fixed strings truncated to fit). */
void vs_store__read_row(struct vs_stmt *st, int first, const struct sq_table *t, void *row);
/* Frees the SQ_PSTR fields of row and sets them to NULL. */
void vs_store__free_row(const struct sq_table *t, void *row);

/* Steps st (already bound) and hands each result row to fn (borrowed);
 * fn's non-zero return stops the scan and is returned. */
int vs_store__scan_results(struct vs_store *s, struct vs_stmt *st, vs_store_result_fn fn,
                           void *ctx);
/* Steps st (already bound) for up to limit workunit rows into a new array
 * (*out, caller cleans each and frees it; allocated even on error), reset
 * after. Returns 0 or the mapped error, logged with what. */
int vs_store__read_wu_page(struct vs_store *s, struct vs_stmt *st, int limit, const char *what,
                           struct vs_workunit **out, size_t *out_n);

/* Generic operations built on the descriptors. */
int vs_store__insert(struct vs_store *s, enum sq_stmt id, const struct sq_table *t, void *row);
int vs_store__update(struct vs_store *s, enum sq_stmt id, const struct sq_table *t,
                     const void *row);
/* Runs a one-row select (statement id with ?1 bound to the given key) into row. */
int vs_store__get_i64(struct vs_store *s, enum sq_stmt id, const struct sq_table *t, int64_t key,
                      void *row);
int vs_store__get_text(struct vs_store *s, enum sq_stmt id, const struct sq_table *t,
                       const char *key, void *row);

/* Builds "SELECT <cols of t, prefixed with alias.> " into a heap string. */
char *vs_store__select_list(const struct sq_table *t, const char *alias);
/* SQ_HOST_UPDATE with userid and host_cpid in it too, bound the same way:
 * for a backend whose updates leave an unchanged key's index alone
 * (vs_db_ops.host_keys_in_update). */
char *vs_store__host_update_keyed_sql(void);

/* Runs st (bound by the caller; rows are result columns then workunit
 * columns) and calls fn for each row as a struct vs_job; *last (may be
 * NULL) is the (priority, id) of the last row passed, *nrows (may be NULL)
 * is incremented per row. Resets st. A non-zero return of fn stops the
 * scan and is returned. */
int vs_store__job_rows(struct vs_store *s, struct vs_stmt *st, vs_store_job_fn fn, void *ctx,
                       struct vs_job_key *last, int *nrows, const char *what);

/* The SQL text of the locality slots (SQ_LOC_MAX_SENT ...
 * SQ_LOC_FILES_WITH_WORK), store_locality.c; VS_EINTERNAL for others. */
int vs_store__build_sql_locality(enum sq_stmt id, struct vs_buf *b);
/* The SQL text of the SQ_CL_* slots (store_cluster.c). */
int vs_store__build_sql_cluster(enum sq_stmt id, struct vs_buf *b);
/* Inserts a workunit (result false) or result row, its id next to the other
 * rows of locality file near (NULL: above every reserved block), when the
 * backend places rows by id (cluster_ids); else as vs_store__insert. */
int vs_store__add_near(struct vs_store *s, bool result, void *row, const char *near);
/* Inserts rows[0..n) of table t, ids set: the backend's bulk step, or
 * vs_store__insert with slot each. VS_E* codes. */
int vs_store__insert_many(struct vs_store *s, enum sq_stmt slot, const struct sq_table *t,
                          void *const *rows, size_t n);

/* Appends the SQL text of statement slot id to b (store_sql.c).
 * Returns 0, or VS_EINTERNAL for a slot without text. */
int vs_store__build_sql(enum sq_stmt id, struct vs_buf *b);

/* Transaction helpers for single operations: enter starts a transaction or a
 * savepoint; leave commits/releases on rc == 0, else rolls back. Returns rc
 * or the commit error. */
int vs_store__enter(struct vs_store *s);
int vs_store__leave(struct vs_store *s, int rc);

/* The current time (seconds). */
int64_t vs_store__now(void);

/* A fresh authenticator into out: 32 lowercase hex digits from the
 * kernel's CSPRNG, like BOINC's make_secure_random_string
 * (store_users.c). VS_ELIMIT if outsize < 33, VS_EIO. */
int vs_store__make_authenticator(char *out, size_t outsize);
/* Compiles sql for one call (statements off the request paths need no
 * slot); NULL on error (logged with what). store_accounts.c. */
struct vs_stmt *vs_store__prep(struct vs_store *s, const char *sql, const char *what);
/* Steps st (bound) to its end and finalizes it; *out_n (may be NULL) the
 * rows it changed. 0 or the mapped error (logged with what). */
int vs_store__run_change(struct vs_store *s, struct vs_stmt *st, const char *what, int64_t *out_n);

/* The schema (store_schema.c). */
extern const char *const vs_store__schema_v1[];  /* NULL-terminated */
extern const char *const vs_store__schema_v2[];  /* v1 -> v2 */
extern const char *const vs_store__schema_v3[];  /* v2 -> v3 */
extern const char *const vs_store__schema_v4[];  /* v3 -> v4 */
extern const char *const vs_store__schema_v5[];  /* v4 -> v5 */
extern const char *const vs_store__schema_v6[];  /* v5 -> v6 */
extern const char *const vs_store__schema_v7[];  /* v6 -> v7 */
extern const char *const vs_store__schema_v8[];  /* v7 -> v8 */
extern const char *const vs_store__schema_v9[];  /* v8 -> v9 */
extern const char *const vs_store__schema_v10[]; /* v9 -> v10 */
#define VS_SQ_SCHEMA_VERSION 10

/* Input files in use (store_files.c). */
/* Records the inputs of workunit wu (its id set) in wu_file, inside the
 * caller's transaction; a statement per file. */
int vs_store__wu_files_add(struct vs_store *s, const struct vs_workunit *wu);
/* The same for n workunits at once: the backend's bulk step when it has
 * one. */
int vs_store__wu_files_add_many(struct vs_store *s, struct vs_workunit *const *wus, size_t n);
/* Schema v6's migration: the rows of the workunits already in the store
 * (inside the migration's transaction). */
int vs_store__wu_files_backfill(struct vs_store *s);

#endif
