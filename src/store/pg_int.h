/*
 * Internals of the PostgreSQL backend (store_pg.c, store_pg_stmt.c). Not for
 * use outside src/store/.
 */
#ifndef VOLSCHED_STORE_PG_INT_H
#define VOLSCHED_STORE_PG_INT_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>

#include "store/store_int.h"

/* The advisory lock key every write transaction takes first (store_pg.c):
 * what a test holds to keep the store's writers waiting, as BEGIN
 * IMMEDIATE does on SQLite. */
#define VS_PG_TXN_LOCK_KEY 0x76736368
/* vs_store_begin_users's transactions take VS_PG_TXN_LOCK_KEY shared (so
 * that the others, which take it exclusive, still run alone) and then, in
 * ascending order so that two of them never wait on each other in a
 * circle, one exclusive lock per account: (VS_PG_USER_LOCK_CLASS, the
 * account's id modulo 2^31). Two accounts that share a key only wait on
 * each other. */
#define VS_PG_USER_LOCK_CLASS 0x76736369

/* A statement of connection s; sql is already in PostgreSQL's dialect.
 * slot >= 0 names a statement prepared once per connection. returns_id:
 * its one row is the new id (vs_db_ops.last_insert_id). clash_if_none: a
 * run that changes no row is a unique-key clash (an insert ... ON
 * CONFLICT DO NOTHING). */
struct vs_pgst *vs_pgst_new(struct vs_store *s, const char *sql, int slot, bool returns_id,
                            bool clash_if_none);

/* The open connection of s, or NULL when it is gone and cannot be made
 * again now (logged). */
PGconn *vs_pg__conn(struct vs_store *s);
/* Records a failed statement (r may be NULL; it is cleared) and returns the
 * SQLite code its SQLSTATE maps to. */
int vs_pg__fail(struct vs_store *s, PGresult *r, const char *what);
/* Records a unique-key clash of an ON CONFLICT DO NOTHING insert (r is
 * cleared); VS_DB_CONSTRAINT_UNIQUE. */
int vs_pg__clash(struct vs_store *s, PGresult *r, const char *what);
void vs_pg__set_changes(struct vs_store *s, int64_t n);
void vs_pg__set_last_id(struct vs_store *s, int64_t id);

/* Rewrites SQLite-dialect SQL (the statement catalogue's and the domain
 * files' text) into PostgreSQL's: ?N parameters become $N, and the few
 * spellings that differ (store_pg_sql.c). ddl: also the column types of
 * CREATE TABLE / ALTER TABLE. The caller frees the result. */
char *vs_pg__translate(const char *sql, bool ddl);

/* The PostgreSQL text of a statement slot whose SQLite text PostgreSQL
 * cannot take (store_pg_sql.c), or NULL. The caller frees it. */
char *vs_pg__slot_sql(int slot);

/* struct vs_db_ops.insert_many and .copy_*: COPY (store_pg_copy.c). */
int vs_pg__insert_many(struct vs_store *s, const struct sq_table *t, void *const *rows, size_t n);
int vs_pg__copy_begin(struct vs_store *s, const char *table, const char *cols,
                      struct vs_db_copy **out);
void vs_pg__copy_field(struct vs_db_copy *c, const char *v, size_t n);
void vs_pg__copy_row(struct vs_db_copy *c);
int vs_pg__copy_end(struct vs_db_copy *c, int rc);

/* Transaction statements not sent yet (store_pg_pipe.c): BEGIN (with the
 * advisory lock), SAVEPOINT, RELEASE and ROLLBACK TO wait here and go
 * ahead of the next statement in one round trip (libpq's pipeline mode);
 * a savepoint released before any statement ran inside it is never sent,
 * nor a transaction that ran none. */
#define VS_PG_PEND_MAX 24
/* A pending entry with this text stands for users_sql. */
#define VS_PG_PEND_USERS "-- account locks"
struct vs_pg_pend {
    char sql[VS_PG_PEND_MAX][48];
    /* vs_store_begin_users's account locks: one statement, pending like
     * the BEGIN it follows (up to about 40 accounts; more take the
     * exclusive lock instead). */
    char users_sql[2048];
    int n;
    bool begin;       /* the BEGIN is among them: the transaction is ours, not yet the server's */
    int skip_release; /* depth whose RELEASE is swallowed (its savepoint was never sent) */
};
struct vs_pg_pend *vs_pg__pend(struct vs_store *s);

/* Queues a transaction statement (op, at savepoint depth d); 0 or a store
 * error (the queue was full and flushing it failed). */
int vs_pg__pend_tx(struct vs_store *s, enum vs_db_tx op, int d);
/* Forgets every pending statement (a commit or rollback that makes them moot,
 * a new connection); true when a BEGIN was among them. */
bool vs_pg__pend_drop(struct vs_store *s);
/* Whether a ROLLBACK TO is pending (it must run before a COMMIT is judged). */
bool vs_pg__pend_has_rollback(struct vs_store *s);
/* Sends the pending statements alone; an SQLite code (a failure recorded). */
int vs_pg__pend_flush(struct vs_store *s);
/* Runs one statement behind the pending ones, in one round trip: name ""
 * runs sql unnamed; otherwise the prepared statement name, prepared from
 * sql first unless *prepared (set once it is). Returns the statement's
 * result as PQexecPrepared would, or the first failed pending statement's
 * result (the statement then did not run). */
PGresult *vs_pg__run(struct vs_store *s, PGconn *c, const char *name, const char *sql,
                     bool *prepared, int n, const Oid *types, const char *const *vals);

#endif
