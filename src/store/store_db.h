/*
 * The statement layer the store's domain code runs on, under both backends
 * (internal to src/store/).
 *
 * The domain operations (store_<concept>.c: claims, reports, the
 * daemons' queues ...) are written once, against prepared statements: bind
 * parameters, step through rows, read columns. This header is that API. A
 * statement is either SQLite's own (st->sq) or a PostgreSQL one (st->pg,
 * store_pg_stmt.c, which speaks the same step/column protocol over libpq).
 * Each call tests one pointer and goes to that backend's statement
 * (store_sqlite_stmt.c or store_pg_stmt.c); this file, and the domain code
 * on it, includes neither backend's header. Everything a backend does
 * differently besides statements (opening, transactions, DDL, checkpoints)
 * goes through the backend's ops table (struct vs_db_ops) in struct
 * vs_store, so that no code outside src/store ever asks which backend it
 * runs on.
 *
 * Return codes are the VS_DB_* below, numbered as SQLite numbers its own
 * (the SQLite statements hand theirs through unchanged, and
 * store_sqlite_stmt.c checks at compile time that the numbers agree; the
 * PostgreSQL statements map SQLSTATEs onto them), so vs_store__err means
 * the same on both.
 */
#ifndef VOLSCHED_STORE_STORE_DB_H
#define VOLSCHED_STORE_STORE_DB_H

#include <stdbool.h>
#include <stdint.h>

#define VS_DB_OK         0
#define VS_DB_ERROR      1
#define VS_DB_BUSY       5
#define VS_DB_LOCKED     6
#define VS_DB_IOERR      10
#define VS_DB_CONSTRAINT 19
#define VS_DB_RANGE      25
#define VS_DB_ROW        100
#define VS_DB_DONE       101
/* Extended codes: the primary code in the low byte. */
#define VS_DB_CONSTRAINT_FOREIGNKEY (VS_DB_CONSTRAINT | (3 << 8))
#define VS_DB_CONSTRAINT_UNIQUE     (VS_DB_CONSTRAINT | (8 << 8))
/* Column types (vs_db_column_type). */
#define VS_DB_INTEGER 1
#define VS_DB_NULL    5
/* Text binding lifetimes (vs_db_bind_text). */
#define VS_DB_STATIC    ((void (*)(void *))0)
#define VS_DB_TRANSIENT ((void (*)(void *)) - 1)

struct vs_store;
struct sqlite3_stmt; /* store_sqlite_stmt.c */
struct vs_pgst;      /* store_pg_stmt.c */

struct vs_stmt {
    struct sqlite3_stmt *sq; /* SQLite; NULL on PostgreSQL */
    struct vs_pgst *pg;      /* PostgreSQL; NULL on SQLite */
};

/* The SQLite statement's side of each call (store_sqlite_stmt.c). */
int vs_sqst_bind_i64(struct sqlite3_stmt *q, int i, int64_t v);
int vs_sqst_bind_int(struct sqlite3_stmt *q, int i, int v);
int vs_sqst_bind_double(struct sqlite3_stmt *q, int i, double v);
int vs_sqst_bind_text(struct sqlite3_stmt *q, int i, const char *v, int n,
                      void (*destructor)(void *));
int vs_sqst_bind_null(struct sqlite3_stmt *q, int i);
int vs_sqst_step(struct sqlite3_stmt *q);
void vs_sqst_reset(struct sqlite3_stmt *q);
void vs_sqst_clear_bindings(struct sqlite3_stmt *q);
int64_t vs_sqst_column_int64(struct sqlite3_stmt *q, int col);
int vs_sqst_column_int(struct sqlite3_stmt *q, int col);
double vs_sqst_column_double(struct sqlite3_stmt *q, int col);
const unsigned char *vs_sqst_column_text(struct sqlite3_stmt *q, int col);
int vs_sqst_column_bytes(struct sqlite3_stmt *q, int col);
int vs_sqst_column_type(struct sqlite3_stmt *q, int col);
void vs_sqst_finalize(struct sqlite3_stmt *q);

/* The PostgreSQL statement's side of each call (store_pg_stmt.c). */
int vs_pgst_bind_i64(struct vs_pgst *p, int i, int64_t v);
int vs_pgst_bind_double(struct vs_pgst *p, int i, double v);
int vs_pgst_bind_text(struct vs_pgst *p, int i, const char *v, int n);
int vs_pgst_bind_null(struct vs_pgst *p, int i);
int vs_pgst_step(struct vs_pgst *p);
void vs_pgst_reset(struct vs_pgst *p);
void vs_pgst_clear_bindings(struct vs_pgst *p);
int64_t vs_pgst_column_int64(struct vs_pgst *p, int col);
double vs_pgst_column_double(struct vs_pgst *p, int col);
const char *vs_pgst_column_text(struct vs_pgst *p, int col);
int vs_pgst_column_bytes(struct vs_pgst *p, int col);
bool vs_pgst_column_null(struct vs_pgst *p, int col);
void vs_pgst_free(struct vs_pgst *p);
/* The connection was made again: the statement is no longer prepared there. */
void vs_pgst_conn_lost(struct vs_pgst *p);

static inline int vs_db_bind_int64(struct vs_stmt *st, int i, int64_t v)
{
    return st->sq ? vs_sqst_bind_i64(st->sq, i, v) : vs_pgst_bind_i64(st->pg, i, v);
}
static inline int vs_db_bind_int(struct vs_stmt *st, int i, int v)
{
    return st->sq ? vs_sqst_bind_int(st->sq, i, v) : vs_pgst_bind_i64(st->pg, i, v);
}
static inline int vs_db_bind_double(struct vs_stmt *st, int i, double v)
{
    return st->sq ? vs_sqst_bind_double(st->sq, i, v) : vs_pgst_bind_double(st->pg, i, v);
}
/* destructor: VS_DB_STATIC (the text outlives the step) or VS_DB_TRANSIENT
 * (copied now); PostgreSQL always copies. */
static inline int vs_db_bind_text(struct vs_stmt *st, int i, const char *v, int n,
                                  void (*destructor)(void *))
{
    return st->sq ? vs_sqst_bind_text(st->sq, i, v, n, destructor)
                  : vs_pgst_bind_text(st->pg, i, v, n);
}
static inline int vs_db_bind_null(struct vs_stmt *st, int i)
{
    return st->sq ? vs_sqst_bind_null(st->sq, i) : vs_pgst_bind_null(st->pg, i);
}
/* VS_DB_ROW with a row to read, VS_DB_DONE at the end, else an error code. */
static inline int vs_db_step(struct vs_stmt *st)
{
    return st->sq ? vs_sqst_step(st->sq) : vs_pgst_step(st->pg);
}
static inline void vs_db_reset(struct vs_stmt *st)
{
    if (st->sq)
        vs_sqst_reset(st->sq);
    else
        vs_pgst_reset(st->pg);
}
static inline void vs_db_clear_bindings(struct vs_stmt *st)
{
    if (st->sq)
        vs_sqst_clear_bindings(st->sq);
    else
        vs_pgst_clear_bindings(st->pg);
}
static inline int64_t vs_db_column_int64(struct vs_stmt *st, int col)
{
    return st->sq ? vs_sqst_column_int64(st->sq, col) : vs_pgst_column_int64(st->pg, col);
}
static inline int vs_db_column_int(struct vs_stmt *st, int col)
{
    return st->sq ? vs_sqst_column_int(st->sq, col) : (int)vs_pgst_column_int64(st->pg, col);
}
static inline double vs_db_column_double(struct vs_stmt *st, int col)
{
    return st->sq ? vs_sqst_column_double(st->sq, col) : vs_pgst_column_double(st->pg, col);
}
/* NULL for SQL NULL. */
static inline const unsigned char *vs_db_column_text(struct vs_stmt *st, int col)
{
    return st->sq ? vs_sqst_column_text(st->sq, col)
                  : (const unsigned char *)vs_pgst_column_text(st->pg, col);
}
static inline int vs_db_column_bytes(struct vs_stmt *st, int col)
{
    return st->sq ? vs_sqst_column_bytes(st->sq, col) : vs_pgst_column_bytes(st->pg, col);
}
/* VS_DB_NULL for SQL NULL (other values: some other type code). */
static inline int vs_db_column_type(struct vs_stmt *st, int col)
{
    if (st->sq)
        return vs_sqst_column_type(st->sq, col);
    return vs_pgst_column_null(st->pg, col) ? VS_DB_NULL : VS_DB_INTEGER;
}

/* Compiles sql for one use (not cached: operator and daemon statements);
 * VS_DB_OK or an error code. The caller finalizes *out (also on error). */
int vs_db_prepare(struct vs_store *s, const char *sql, struct vs_stmt **out);
void vs_db_finalize(struct vs_stmt *st);
/* Runs SQL without parameters or rows (may be several statements);
 * VS_DB_OK or an error code (the message is vs_db_errmsg). */
int vs_db_exec(struct vs_store *s, const char *sql);
/* Rows changed by the last INSERT, UPDATE or DELETE of s. */
int64_t vs_db_changes(struct vs_store *s);
/* The last error of s: its code and message. */
int vs_db_errcode(struct vs_store *s);
const char *vs_db_errmsg(struct vs_store *s);

#endif
