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

#endif
