/*
 * Which backend a store test runs on. By default a SQLite file in the
 * test's directory; with VS_TEST_PG set (libpq conninfo parameters of a
 * server, e.g. "host=/tmp/vs_pg.x&user=postgres", set by tests/pg/run.sh)
 * a fresh PostgreSQL database per store, dropped at teardown. The raw SQL
 * helpers check what is really stored, on a connection of their own.
 */
#ifndef VOLSCHED_TESTS_STORE_BACKEND_H
#define VOLSCHED_TESTS_STORE_BACKEND_H

#include <libpq-fe.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/pg_int.h"
#include "volsched/alloc.h"
#include "volsched/str.h"

static inline bool vs_test_pg(void)
{
    const char *p = getenv("VS_TEST_PG");
    return p && *p;
}

/* The URL of a new store: dir/name on SQLite, a new database on PostgreSQL. */
static inline void vs_test_store_url(char *url, size_t n, const char *dir, const char *name)
{
    if (!vs_test_pg()) {
        snprintf(url, n, "sqlite:%s/%s", dir, name);
        return;
    }
    static int seq;
    snprintf(url, n, "postgresql:///vs_%d_%d?%s", (int)getpid(), seq++, getenv("VS_TEST_PG"));
}

static inline PGconn *vs_test__pg_connect(const char *url)
{
    PGconn *c = PQconnectdb(url);
    if (PQstatus(c) != CONNECTION_OK) {
        fprintf(stderr, "test: cannot connect to %s: %s\n", url, PQerrorMessage(c));
        abort();
    }
    return c;
}

/* Drops a PostgreSQL test database (nothing for SQLite: the directory goes). */
static inline void vs_test_store_drop(const char *url)
{
    if (!vs_str_has_prefix(url, "postgresql:"))
        return;
    const char *db = url + strlen("postgresql:///");
    const char *q = strchr(db, '?');
    char name[64], maint[512];
    snprintf(name, sizeof(name), "%.*s", (int)(q - db), db);
    snprintf(maint, sizeof(maint), "postgresql:///postgres%s", q);
    PGconn *c = vs_test__pg_connect(maint);
    char sql[128];
    snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s WITH (FORCE)", name);
    PQclear(PQexec(c, sql));
    PQfinish(c);
}

/* Runs a one-value query (SQLite's dialect) on a connection of its own. */
static inline int64_t vs_test_sql_i64(const char *url, const char *sql)
{
    if (vs_str_has_prefix(url, "postgresql:")) {
        PGconn *c = vs_test__pg_connect(url);
        char *t = vs_pg__translate(sql, false);
        PGresult *r = PQexec(c, t);
        if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) < 1) {
            fprintf(stderr, "test: %s: %s\n", t, PQresultErrorMessage(r));
            abort();
        }
        const char *v = PQgetvalue(r, 0, 0);
        int64_t x = v[0] == 't' ? 1 : v[0] == 'f' ? 0 : strtoll(v, NULL, 10);
        PQclear(r);
        vs_free(t);
        PQfinish(c);
        return x;
    }
    sqlite3 *db;
    const char *path = url + (vs_str_has_prefix(url, "sqlite:") ? 7 : 0);
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        abort();
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW)
        abort();
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* Runs SQL (SQLite's dialect) on a connection of its own; 0 or -1. */
static inline int vs_test_sql_exec(const char *url, const char *sql)
{
    if (vs_str_has_prefix(url, "postgresql:")) {
        PGconn *c = vs_test__pg_connect(url);
        char *t = vs_pg__translate(sql, false);
        PGresult *r = PQexec(c, t);
        int rc = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK
                     ? 0
                     : -1;
        if (rc)
            fprintf(stderr, "test: %s: %s\n", t, PQresultErrorMessage(r));
        PQclear(r);
        vs_free(t);
        PQfinish(c);
        return rc;
    }
    sqlite3 *db;
    const char *path = url + (vs_str_has_prefix(url, "sqlite:") ? 7 : 0);
    if (sqlite3_open(path, &db) != SQLITE_OK)
        abort();
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}

/* Runs SQL as it is (PostgreSQL's dialect, several statements allowed) on
 * a connection of its own; 0 or -1. */
static inline int vs_test__pg_exec_raw(const char *url, const char *sql)
{
    PGconn *c = vs_test__pg_connect(url);
    PGresult *r = PQexec(c, sql);
    int rc = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK ? 0 : -1;
    if (rc)
        fprintf(stderr, "test: %s: %s\n", sql, PQresultErrorMessage(r));
    PQclear(r);
    PQfinish(c);
    return rc;
}

/*
 * A trigger for fault injection and interleavings, on either backend: on
 * table, at timing ("BEFORE INSERT", "AFTER INSERT", "BEFORE UPDATE"), for
 * each row where cond (SQL over NEW, the same text in both dialects)
 * holds, runs stmt (one statement, both dialects) or, with stmt NULL,
 * fails with message name. fail_kind is SQLite's RAISE kind: "ABORT"
 * fails the statement (on PostgreSQL an error the store's savepoint
 * undoes alone, the same), "ROLLBACK" loses the whole transaction (on
 * PostgreSQL a deferred constraint trigger, which fails the COMMIT, as a
 * serialization failure or a lost connection at commit would). 0 or -1.
 */
static inline int vs_test_trigger(const char *url, const char *name, const char *timing,
                                  const char *table, const char *cond, const char *stmt,
                                  const char *fail_kind)
{
    char sql[2048], act[512];
    if (vs_str_has_prefix(url, "postgresql:")) {
        if (stmt)
            snprintf(act, sizeof(act), "%s;", stmt);
        else
            snprintf(act, sizeof(act), "RAISE EXCEPTION '%s';", name);
        bool at_commit = !stmt && fail_kind && strcmp(fail_kind, "ROLLBACK") == 0;
        const char *event = strchr(timing, ' '); /* " INSERT", " UPDATE" */
        char when[64];
        snprintf(when, sizeof(when), "%s%s", at_commit ? "AFTER" : "", at_commit ? event : timing);
        snprintf(sql, sizeof(sql),
                 "CREATE FUNCTION %s_fn() RETURNS trigger LANGUAGE plpgsql AS $vs$ BEGIN "
                 "IF %s THEN %s END IF; RETURN NEW; END $vs$; "
                 "CREATE %sTRIGGER %s %s ON %s %sFOR EACH ROW EXECUTE FUNCTION %s_fn()",
                 name, cond, act, at_commit ? "CONSTRAINT " : "", name, when, table,
                 at_commit ? "DEFERRABLE INITIALLY DEFERRED " : "", name);
        return vs_test__pg_exec_raw(url, sql);
    }
    if (stmt)
        snprintf(act, sizeof(act), "%s;", stmt);
    else
        snprintf(act, sizeof(act), "SELECT RAISE(%s, '%s');", fail_kind ? fail_kind : "ABORT",
                 name);
    snprintf(sql, sizeof(sql), "CREATE TRIGGER %s %s ON %s WHEN %s BEGIN %s END", name, timing,
             table, cond, act);
    return vs_test_sql_exec(url, sql);
}

/* Holds the store's write lock from a connection of its own, so that its
 * writers wait (SQLite: BEGIN IMMEDIATE; PostgreSQL: the advisory lock
 * every write transaction takes first), until vs_test_write_lock_release. */
struct vs_test_write_lock {
    sqlite3 *db;
    PGconn *pg;
};

static inline void vs_test_write_lock_hold(const char *url, struct vs_test_write_lock *l)
{
    memset(l, 0, sizeof(*l));
    if (vs_str_has_prefix(url, "postgresql:")) {
        l->pg = vs_test__pg_connect(url);
        char sql[96];
        snprintf(sql, sizeof(sql), "BEGIN; SELECT pg_advisory_xact_lock(%d)", VS_PG_TXN_LOCK_KEY);
        PGresult *r = PQexec(l->pg, sql);
        if (PQresultStatus(r) != PGRES_TUPLES_OK)
            abort();
        PQclear(r);
        return;
    }
    const char *path = url + (vs_str_has_prefix(url, "sqlite:") ? 7 : 0);
    if (sqlite3_open_v2(path, &l->db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
        sqlite3_exec(l->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        abort();
}

static inline void vs_test_write_lock_release(struct vs_test_write_lock *l)
{
    if (l->pg) {
        PQclear(PQexec(l->pg, "COMMIT"));
        PQfinish(l->pg);
    }
    if (l->db) {
        if (sqlite3_exec(l->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
            abort();
        sqlite3_close(l->db);
    }
    memset(l, 0, sizeof(*l));
}

#endif
