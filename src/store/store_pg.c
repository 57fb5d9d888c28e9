/*
 * The PostgreSQL backend (scale-out): a libpq connection per handle, the
 * versioned schema in PostgreSQL's types, transactions, and the mapping of
 * its errors onto the store's. The domain operations are the same code as
 * SQLite's (store_db.h); statements are store_pg_stmt.c, the dialect
 * store_pg_sql.c.
 *
 * URLs: "postgresql://[user@][host][:port]/dbname[?param=value...]", libpq's
 * own URI form (a unix socket: "postgresql:///db?host=/run/postgresql").
 * With VS_STORE_CREATE a missing database is created (connecting to the
 * server's "postgres" database for that), as a missing SQLite file is.
 *
 * Transactions: READ COMMITTED, and every transaction that vs_store_begin
 * opens first takes one transaction-scoped advisory lock. The domain code
 * was written for SQLite's BEGIN IMMEDIATE, under which write transactions
 * never interleave (the transitioner re-reads a workunit inside its
 * transaction and writes whole rows, trusting that no claim or report ran
 * between); the lock gives every backend that same order. The scheduler's
 * batches (vs_store_begin_users) take it shared plus one lock per account
 * (store_pg_pipe.c): they write only their accounts' hosts and results and
 * those results' workunits, in single statements (claims, reports) whose
 * WHERE clauses decide under row locks, so batches of different accounts
 * may interleave.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/pg_int.h"
#include "volsched/alloc.h"
#include "volsched/log.h"
#include "volsched/str.h"

/* a followed by b, on the heap. */
static char *concat(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 1;
    char *p = vs_xmalloc(n);
    snprintf(p, n, "%s%s", a, b);
    return p;
}

struct vs_pg {
    PGconn *conn;
    char *conninfo;
    int64_t changes, last_id;
    unsigned conn_gen;  /* incremented when the connection is made again */
    unsigned led_gen;   /* conn_gen when the leader lock was taken; 0: not held */
    char led_role[320]; /* a role name: a daemon, or "workgen:" and an app name */
    int errcode;
    char err[512];
    struct vs_pg_pend pend; /* transaction statements not sent yet */
};

struct vs_pg_pend *vs_pg__pend(struct vs_store *s)
{
    return &s->pg->pend;
}

PGconn *vs_pg__conn(struct vs_store *s)
{
    struct vs_pg *pg = s->pg;
    if (PQstatus(pg->conn) == CONNECTION_OK)
        return pg->conn;
    /* A broken connection lost its transaction and its prepared
     * statements: make a new one (the open transaction reports the loss,
     * store_db.c txn_lost). */
    PQreset(pg->conn);
    /* What was held back of a transaction the server saw is lost with it;
     * a transaction still wholly held back (its BEGIN pending) starts on
     * the new connection as if nothing happened. */
    if (!pg->pend.begin)
        (void)vs_pg__pend_drop(s);
    /* Not freed: a caller may be stepping one of them right now (freeing
     * them here crashed serve when PostgreSQL restarted under load). */
    for (int i = 0; i < SQ__COUNT; i++)
        if (s->stmts[i].pg)
            vs_pgst_conn_lost(s->stmts[i].pg);
    if (PQstatus(pg->conn) != CONNECTION_OK) {
        snprintf(pg->err, sizeof(pg->err), "%s", PQerrorMessage(pg->conn));
        VS_LOG(s->log, VS_LOG_ERROR, "store: PostgreSQL connection lost: %s", pg->err);
        return NULL;
    }
    pg->conn_gen++; /* session locks (vs_store_leader) went with the old one */
    VS_LOG(s->log, VS_LOG_WARN, "store: PostgreSQL connection made again");
    return pg->conn;
}

/* SQLSTATE classes onto SQLite's codes (store_db.h). */
static int map_sqlstate(const char *st)
{
    if (!st)
        return VS_DB_IOERR; /* no server answer: the connection broke */
    if (strcmp(st, "23505") == 0)
        return VS_DB_CONSTRAINT_UNIQUE;
    if (strcmp(st, "23503") == 0)
        return VS_DB_CONSTRAINT_FOREIGNKEY;
    if (strncmp(st, "23", 2) == 0)
        return VS_DB_CONSTRAINT;
    if (strcmp(st, "40001") == 0 || strcmp(st, "40P01") == 0 || strcmp(st, "55P03") == 0)
        return VS_DB_BUSY;
    if (strncmp(st, "08", 2) == 0 || strncmp(st, "57P", 3) == 0)
        return VS_DB_IOERR;
    return VS_DB_ERROR;
}

int vs_pg__fail(struct vs_store *s, PGresult *r, const char *what)
{
    struct vs_pg *pg = s->pg;
    const char *msg = r ? PQresultErrorMessage(r) : NULL;
    if (!msg || !*msg)
        msg = PQerrorMessage(pg->conn);
    size_t n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
        n--;
    snprintf(pg->err, sizeof(pg->err), "%.*s [%.160s]", (int)n, msg, what ? what : "");
    pg->errcode = map_sqlstate(r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL);
    if (r)
        PQclear(r);
    return pg->errcode;
}

int vs_pg__clash(struct vs_store *s, PGresult *r, const char *what)
{
    PQclear(r);
    snprintf(s->pg->err, sizeof(s->pg->err), "duplicate key [%.160s]", what);
    s->pg->errcode = VS_DB_CONSTRAINT_UNIQUE;
    return s->pg->errcode;
}

void vs_pg__set_changes(struct vs_store *s, int64_t n)
{
    s->pg->changes = n;
}

void vs_pg__set_last_id(struct vs_store *s, int64_t id)
{
    s->pg->last_id = id;
}

/* A one-row INSERT ... VALUES of the SQLite text, without its own ON
 * CONFLICT clause. */
static bool one_row_insert(const char *sql)
{
    return vs_str_has_prefix(sql, "INSERT INTO ") && strstr(sql, "VALUES") &&
           !strstr(sql, "ON CONFLICT") && !strstr(sql, "SELECT");
}

static int pg_prepare(struct vs_store *s, const char *sql, int slot, struct vs_stmt *out)
{
    out->sq = NULL;
    bool ret_id = slot >= 0 && vs_store__slot_is_insert((enum sq_stmt)slot);
    /* A unique-key clash of a one-row insert is an answer (VS_EEXISTS), not
     * an error: in PostgreSQL a failed statement aborts the whole
     * transaction, while the store's callers may go on inside theirs
     * after it (store.h). ON CONFLICT DO NOTHING leaves the transaction
     * alone; no row inserted is then the clash (store_pg_stmt.c). */
    bool clash = one_row_insert(sql);
    char *t = slot >= 0 ? vs_pg__slot_sql(slot) : NULL;
    if (!t)
        t = vs_pg__translate(sql, false);
    const char *tail =
        clash ? (ret_id ? " ON CONFLICT DO NOTHING RETURNING id" : " ON CONFLICT DO NOTHING")
              : (ret_id ? " RETURNING id" : "");
    char *u = concat(t, tail);
    vs_free(t);
    out->pg = vs_pgst_new(s, u, slot, ret_id, clash);
    vs_free(u);
    return VS_DB_OK;
}

/* Runs SQL through the simple protocol (several statements allowed). */
static int run_simple(struct vs_store *s, const char *sql)
{
    PGconn *c = vs_pg__conn(s);
    if (!c)
        return vs_pg__fail(s, NULL, "no connection");
    int rc = vs_pg__pend_flush(s);
    if (rc != VS_DB_OK)
        return rc;
    PGresult *r = PQexec(c, sql);
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
        return vs_pg__fail(s, r, sql);
    PQclear(r);
    return VS_DB_OK;
}

static int pg_exec(struct vs_store *s, const char *sql)
{
    /* DDL is written in SQLite's types (store_schema.c). */
    bool ddl = strstr(sql, "CREATE TABLE") || strstr(sql, "ALTER TABLE");
    char *t = vs_pg__translate(sql, ddl);
    int rc = run_simple(s, t);
    vs_free(t);
    return rc;
}

static int64_t pg_changes(struct vs_store *s)
{
    return s->pg->changes;
}

static int64_t pg_last_insert_id(struct vs_store *s)
{
    return s->pg->last_id;
}

static int pg_errcode(struct vs_store *s)
{
    return s->pg->errcode;
}

static const char *pg_errmsg(struct vs_store *s)
{
    return s->pg->err;
}

static int tx_sql(struct vs_store *s, const char *sql)
{
    int rc = run_simple(s, sql);
    if (rc == VS_DB_OK)
        return 0;
    VS_LOG(s->log, VS_LOG_ERROR, "store: %s: %s", sql, s->pg->err);
    return (rc & 0xff) == VS_DB_BUSY ? VS_EBUSY : VS_ESTORE;
}

static int pg_tx(struct vs_store *s, enum vs_db_tx op, int d)
{
    switch (op) {
    case VS_DB_BEGIN:
    case VS_DB_SAVE:
    case VS_DB_RELEASE:
    case VS_DB_ROLLBACK_TO:
        /* Sent ahead of the next statement (store_pg_pipe.c). */
        return vs_pg__pend_tx(s, op, d);
    case VS_DB_COMMIT:
        if (vs_pg__pend(s)->begin) {
            (void)vs_pg__pend_drop(s); /* no statement ran: nothing to commit */
            return 0;
        }
        /* A pending ROLLBACK TO decides whether the transaction is still
         * good; pending savepoints and releases are moot (COMMIT releases
         * them all). */
        if (vs_pg__pend_has_rollback(s))
            (void)vs_pg__pend_flush(s);
        (void)vs_pg__pend_drop(s);
        /* COMMIT of a transaction that a failed statement aborted only
         * rolls it back (and says so in its status, not as an error). */
        if (PQtransactionStatus(s->pg->conn) == PQTRANS_INERROR) {
            (void)tx_sql(s, "ROLLBACK");
            snprintf(s->pg->err, sizeof(s->pg->err), "commit of an aborted transaction");
            VS_LOG(s->log, VS_LOG_ERROR, "store: commit: a failed statement aborted it");
            return VS_ESTORE;
        }
        return tx_sql(s, "COMMIT");
    case VS_DB_ROLLBACK: {
        if (vs_pg__pend_drop(s))
            return 0; /* the server never saw it */
        PGTransactionStatusType ts = PQtransactionStatus(s->pg->conn);
        if (ts == PQTRANS_IDLE || ts == PQTRANS_UNKNOWN)
            return 0;
        return tx_sql(s, "ROLLBACK");
    }
    }
    return VS_EINTERNAL;
}

static bool pg_txn_gone(struct vs_store *s)
{
    if (s->pg->pend.begin)
        return false; /* ours, not sent yet */
    PGTransactionStatusType ts = PQtransactionStatus(s->pg->conn);
    return ts == PQTRANS_IDLE || ts == PQTRANS_UNKNOWN;
}

static int pg_nothing(struct vs_store *s)
{
    (void)s;
    return 0; /* PostgreSQL checkpoints by itself */
}

static int pg_durable(struct vs_store *s, bool on)
{
    (void)s;
    (void)on;
    return 0; /* every commit is durable (synchronous_commit = on) */
}

static int pg_sched_tune(struct vs_store *s, bool writer)
{
    (void)s;
    (void)writer;
    return 0;
}

static void pg_close(struct vs_store *s)
{
    if (!s->pg)
        return;
    PQfinish(s->pg->conn);
    vs_free(s->pg->conninfo);
    vs_free(s->pg);
    s->pg = NULL;
}

static int pg_ids_follow(struct vs_store *s, const char *table)
{
    /* An identity column's sequence does not see ids given explicitly. */
    char sql[256];
    snprintf(sql, sizeof(sql),
             "SELECT setval(pg_get_serial_sequence('%s', 'id'), coalesce(max(id), 0) + 1, false) "
             "FROM %s",
             table, table);
    return tx_sql(s, sql);
}

static int pg_leader(struct vs_store *s, const char *role, bool *out)
{
    struct vs_pg *pg = s->pg;
    *out = false;
    PGconn *c = vs_pg__conn(s);
    if (!c)
        return VS_ESTORE;
    if (pg->led_gen == pg->conn_gen + 1 && strcmp(pg->led_role, role) == 0) {
        *out = true; /* held since this connection took it */
        return 0;
    }
    /* Session-level (not transaction-level): held until the connection
     * ends. Key: (the store's lock class, the role's name hashed by the
     * server); two-int keys never meet the one-bigint transaction lock. */
    char sql[96];
    snprintf(sql, sizeof(sql), "SELECT pg_try_advisory_lock(%d, hashtext($1))", VS_PG_TXN_LOCK_KEY);
    const char *vals[1] = {role};
    if (vs_pg__pend_flush(s) != VS_DB_OK) {
        VS_LOG(s->log, VS_LOG_ERROR, "store: leader lock: %s", pg->err);
        return VS_ESTORE;
    }
    PGresult *r = PQexecParams(c, sql, 1, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        (void)vs_pg__fail(s, r, "leader");
        VS_LOG(s->log, VS_LOG_ERROR, "store: leader lock: %s", pg->err);
        return VS_ESTORE;
    }
    *out = PQntuples(r) == 1 && PQgetvalue(r, 0, 0)[0] == 't';
    PQclear(r);
    if (*out) {
        pg->led_gen = pg->conn_gen + 1;
        snprintf(pg->led_role, sizeof(pg->led_role), "%s", role);
    }
    return 0;
}

const struct vs_db_ops vs_store__pg_ops = {
    .name = "postgresql",
    .parallel_writes = true, /* vs_store_begin_users: account locks */
    .host_keys_in_update = true,
    .prepare = pg_prepare,
    .exec = pg_exec,
    .changes = pg_changes,
    .last_insert_id = pg_last_insert_id,
    .errcode = pg_errcode,
    .errmsg = pg_errmsg,
    .tx = pg_tx,
    .txn_gone = pg_txn_gone,
    .checkpoint = pg_nothing,
    .durable = pg_durable,
    .sched_tune = pg_sched_tune,
    .ids_follow = pg_ids_follow,
    .insert_many = vs_pg__insert_many,
    .copy_begin = vs_pg__copy_begin,
    .copy_field = vs_pg__copy_field,
    .copy_row = vs_pg__copy_row,
    .copy_end = vs_pg__copy_end,
    .leader = pg_leader,
    .close = pg_close,
};

/* Connects to conninfo with its dbname replaced by db (NULL: as it is). */
static PGconn *connect_to(const char *conninfo, const char *db)
{
    char *err = NULL;
    PQconninfoOption *opts = PQconninfoParse(conninfo, &err);
    if (!opts) {
        PQfreemem(err);
        return NULL;
    }
    size_t n = 0;
    for (PQconninfoOption *o = opts; o->keyword; o++)
        n++;
    const char **kw = vs_xcalloc(n + 2, sizeof(*kw));
    const char **val = vs_xcalloc(n + 2, sizeof(*val));
    size_t k = 0;
    for (PQconninfoOption *o = opts; o->keyword; o++) {
        if (!o->val || (db && strcmp(o->keyword, "dbname") == 0))
            continue;
        kw[k] = o->keyword;
        val[k++] = o->val;
    }
    if (db) {
        kw[k] = "dbname";
        val[k++] = db;
    }
    PGconn *c = PQconnectdbParams(kw, val, 0);
    vs_free(kw);
    vs_free(val);
    PQconninfoFree(opts);
    return c;
}

/* The database conninfo names (libpq's default: the user's name). */
static char *dbname_of(const char *conninfo)
{
    PQconninfoOption *opts = PQconninfoParse(conninfo, NULL);
    char *db = NULL;
    for (PQconninfoOption *o = opts; o && o->keyword; o++) {
        if (strcmp(o->keyword, "dbname") == 0 && o->val && *o->val)
            db = vs_xstrdup(o->val);
    }
    PQconninfoFree(opts);
    return db;
}

/* CREATE DATABASE db through the server's maintenance database. */
static int create_database(const char *conninfo, const char *db, struct vs_log *log)
{
    PGconn *c = connect_to(conninfo, "postgres");
    if (!c || PQstatus(c) != CONNECTION_OK) {
        VS_LOG(log, VS_LOG_ERROR, "store: cannot connect to create database %s: %s", db,
               c ? PQerrorMessage(c) : "bad conninfo");
        PQfinish(c);
        return VS_ESTORE;
    }
    char *q = PQescapeIdentifier(c, db, strlen(db));
    char *head = concat("CREATE DATABASE ", q ? q : "\"\"");
    char *sql = concat(head, " TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'");
    vs_free(head);
    PQfreemem(q);
    PGresult *r = PQexec(c, sql);
    vs_free(sql);
    int rc = 0;
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        const char *st = PQresultErrorField(r, PG_DIAG_SQLSTATE);
        /* 42P04: another process created it first. */
        if (!st || strcmp(st, "42P04") != 0) {
            VS_LOG(log, VS_LOG_ERROR, "store: CREATE DATABASE %s: %s", db, PQresultErrorMessage(r));
            rc = VS_ESTORE;
        }
    }
    PQclear(r);
    PQfinish(c);
    return rc;
}

int vs_store__open_pg(const char *conninfo, int flags, struct vs_log *log, struct vs_store **out)
{
    char *err = NULL;
    PQconninfoOption *opts = PQconninfoParse(conninfo, &err);
    if (!opts) {
        VS_LOG(log, VS_LOG_ERROR, "store: bad PostgreSQL URL: %s", err ? err : conninfo);
        PQfreemem(err);
        return VS_EINVAL;
    }
    PQconninfoFree(opts);
    PGconn *c = connect_to(conninfo, NULL);
    if (c && PQstatus(c) != CONNECTION_OK && (flags & VS_STORE_CREATE)) {
        char *db = dbname_of(conninfo);
        /* Only a missing database is ours to create (3D000 is not given
         * before connecting, so ask the server). */
        bool missing = db && strstr(PQerrorMessage(c), "does not exist");
        PQfinish(c);
        c = NULL;
        int rc = missing ? create_database(conninfo, db, log) : VS_ESTORE;
        vs_free(db);
        if (rc == 0)
            c = connect_to(conninfo, NULL);
        else if (!missing)
            c = connect_to(conninfo, NULL); /* for its error message */
    }
    if (!c || PQstatus(c) != CONNECTION_OK) {
        const char *m = c ? PQerrorMessage(c) : "out of memory";
        bool missing = c && strstr(m, "does not exist");
        VS_LOG(log, missing ? VS_LOG_DEBUG : VS_LOG_ERROR, "store: cannot connect to %s: %s",
               conninfo, m);
        PQfinish(c);
        return missing ? VS_ENOTFOUND : VS_ESTORE;
    }
    struct vs_store *s = VS_NEW(struct vs_store);
    s->ops = &vs_store__pg_ops;
    s->log = log;
    s->pg = VS_NEW(struct vs_pg);
    s->pg->conn = c;
    s->pg->conninfo = vs_xstrdup(conninfo);
    s->pg->pend.skip_release = -1;
    /* Notices (e.g. "relation already exists, skipping") are not errors. */
    int rc = tx_sql(s, "SET client_min_messages = warning");
    if (rc == 0)
        rc = vs_store__ensure_schema(s);
    if (rc != 0) {
        vs_store_close(s);
        return rc;
    }
    *out = s;
    return 0;
}
