/*
 * Transaction statements held back until the next statement, then sent
 * with it in one round trip (libpq's pipeline mode); see pg_int.h.
 *
 * Why: a scheduler RPC opens a savepoint per request and more inside the
 * domain operations (reports, claims), and the batch opens a transaction
 * with its advisory lock; sent one by one, these were 6 of the 16 round
 * trips of an RPC, each a wake-up of the backend and of the caller. Held
 * back, BEGIN and the lock travel with the batch's first statement, a
 * SAVEPOINT with the first statement inside it, and a RELEASE with the
 * next statement after it (or never: COMMIT releases every savepoint).
 *
 * The order the server sees is the order the domain code asked for, so
 * nothing changes in what commits: a pending statement that fails aborts
 * the pipeline and the transaction, and the statement behind it reports
 * that failure as its own (it did not run).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/pg_int.h"

static int push(struct vs_store *s, const char *sql)
{
    struct vs_pg_pend *q = vs_pg__pend(s);
    if (q->n == VS_PG_PEND_MAX) {
        int rc = vs_pg__pend_flush(s);
        if (rc != VS_DB_OK)
            return VS_ESTORE;
    }
    snprintf(q->sql[q->n++], sizeof(q->sql[0]), "%s", sql);
    return 0;
}

/* Index of the pending "SAVEPOINT spD", or -1 when it was sent already. */
static int pending_save(struct vs_pg_pend *q, int d)
{
    char name[32];
    snprintf(name, sizeof(name), "SAVEPOINT sp%d", d);
    for (int i = q->n - 1; i >= 0; i--)
        if (strcmp(q->sql[i], name) == 0)
            return i;
    return -1;
}

static int cmp_key(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Writes q->users_sql, the account locks of vs_store_begin_users (see
 * VS_PG_USER_LOCK_CLASS): true when there are some and they fit, false
 * for a plain transaction (the exclusive lock). */
static bool account_locks(struct vs_pg_pend *q, const int64_t *users, size_t n)
{
    enum { MAX_USERS = 40 };
    if (n == 0 || n > MAX_USERS)
        return false;
    int32_t keys[MAX_USERS];
    for (size_t i = 0; i < n; i++)
        keys[i] = (int32_t)((uint64_t)users[i] % 2147483648u);
    qsort(keys, n, sizeof(keys[0]), cmp_key);
    size_t len = (size_t)snprintf(q->users_sql, sizeof(q->users_sql), "SELECT");
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && keys[i] == keys[i - 1])
            continue;
        int w = snprintf(q->users_sql + len, sizeof(q->users_sql) - len,
                         "%s pg_advisory_xact_lock(%d, %d)", len > 6 ? "," : "",
                         VS_PG_USER_LOCK_CLASS, (int)keys[i]);
        if (w < 0 || (size_t)w >= sizeof(q->users_sql) - len)
            return false;
        len += (size_t)w;
    }
    return true;
}

int vs_pg__pend_tx(struct vs_store *s, enum vs_db_tx op, int d)
{
    struct vs_pg_pend *q = vs_pg__pend(s);
    char sql[48];
    int i;
    switch (op) {
    case VS_DB_BEGIN:
        q->begin = true;
        q->skip_release = -1;
        if (push(s, "BEGIN") != 0)
            return VS_ESTORE;
        if (account_locks(q, s->begin_users, s->n_begin_users)) {
            snprintf(sql, sizeof(sql), "SELECT pg_advisory_xact_lock_shared(%d)",
                     VS_PG_TXN_LOCK_KEY);
            if (push(s, sql) != 0)
                return VS_ESTORE;
            return push(s, VS_PG_PEND_USERS);
        }
        snprintf(sql, sizeof(sql), "SELECT pg_advisory_xact_lock(%d)", VS_PG_TXN_LOCK_KEY);
        return push(s, sql);
    case VS_DB_SAVE:
        snprintf(sql, sizeof(sql), "SAVEPOINT sp%d", d);
        return push(s, sql);
    case VS_DB_RELEASE:
        if (q->skip_release == d) {
            q->skip_release = -1;
            return 0;
        }
        /* No statement ran inside it: it and whatever was opened and
         * closed after it need never reach the server. */
        if ((i = pending_save(q, d)) >= 0) {
            q->n = i;
            return 0;
        }
        snprintf(sql, sizeof(sql), "RELEASE sp%d", d);
        return push(s, sql);
    case VS_DB_ROLLBACK_TO:
        if ((i = pending_save(q, d)) >= 0) {
            q->n = i;
            q->skip_release = d; /* the RELEASE that follows: nothing to release */
            return 0;
        }
        snprintf(sql, sizeof(sql), "ROLLBACK TO sp%d", d);
        return push(s, sql);
    case VS_DB_COMMIT:
    case VS_DB_ROLLBACK:
        break;
    }
    return VS_EINTERNAL;
}

bool vs_pg__pend_drop(struct vs_store *s)
{
    struct vs_pg_pend *q = vs_pg__pend(s);
    bool begin = q->begin;
    q->n = 0;
    q->begin = false;
    q->skip_release = -1;
    return begin;
}

bool vs_pg__pend_has_rollback(struct vs_store *s)
{
    struct vs_pg_pend *q = vs_pg__pend(s);
    for (int i = 0; i < q->n; i++)
        if (strncmp(q->sql[i], "ROLLBACK TO", 11) == 0)
            return true;
    return false;
}

/* Reads the results of one pipeline: the pending statements' (nsent of
 * them), then the statement's, then the sync. Returns the statement's
 * result, or the first failure before it (the rest cleared). */
static PGresult *collect(PGconn *c, int nsent, bool prepare, bool *prepared)
{
    PGresult *keep = NULL;
    bool failed = false;
    int total = nsent + (prepare ? 1 : 0) + 1;
    for (int k = 0; k < total; k++) {
        PGresult *r = PQgetResult(c);
        if (!r)
            break; /* the connection broke */
        ExecStatusType st = PQresultStatus(r);
        bool ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
        bool last = k == total - 1;
        if (prepare && k == nsent && ok)
            *prepared = true;
        if (!failed && (last || !ok)) {
            keep = r; /* the statement's result, or the first failure */
            failed = !ok;
        } else {
            PQclear(r);
        }
        /* Each query's results end with a NULL. */
        while ((r = PQgetResult(c)) != NULL)
            PQclear(r);
    }
    /* Up to the sync (an aborted pipeline still ends with it). */
    for (PGresult *r; (r = PQgetResult(c)) != NULL;) {
        ExecStatusType st = PQresultStatus(r);
        PQclear(r);
        if (st == PGRES_PIPELINE_SYNC)
            break;
    }
    return keep;
}

PGresult *vs_pg__run(struct vs_store *s, PGconn *c, const char *name, const char *sql,
                     bool *prepared, int n, const Oid *types, const char *const *vals)
{
    struct vs_pg_pend *q = vs_pg__pend(s);
    bool named = name && *name;
    if (q->n == 0 || !c) {
        /* Nothing held back: the plain calls (each one round trip). */
        if (!c)
            return NULL;
        if (!named)
            return PQexecParams(c, sql, n, types, vals, NULL, NULL, 0);
        if (!*prepared) {
            PGresult *r = PQprepare(c, name, sql, n, types);
            if (PQresultStatus(r) != PGRES_COMMAND_OK)
                return r;
            PQclear(r);
            *prepared = true;
        }
        return PQexecPrepared(c, name, n, vals, NULL, NULL, 0);
    }
    if (PQenterPipelineMode(c) != 1)
        return NULL;
    int nsent = 0;
    bool sent = true;
    for (int i = 0; i < q->n && sent; i++, nsent++)
        sent = PQsendQueryParams(
                   c, strcmp(q->sql[i], VS_PG_PEND_USERS) == 0 ? q->users_sql : q->sql[i], 0, NULL,
                   NULL, NULL, NULL, 0) == 1;
    bool prepare = named && !*prepared;
    if (sent && sql) {
        if (prepare)
            sent = PQsendPrepare(c, name, sql, n, types) == 1;
        if (sent && named)
            sent = PQsendQueryPrepared(c, name, n, vals, NULL, NULL, 0) == 1;
        else if (sent)
            sent = PQsendQueryParams(c, sql, n, types, vals, NULL, NULL, 0) == 1;
    } else if (sent) {
        nsent--; /* the pending ones alone: the last of them is "the statement" */
        prepare = false;
    }
    q->n = 0;
    q->begin = false;
    PGresult *r = NULL;
    if (sent && PQpipelineSync(c) == 1)
        r = collect(c, nsent, prepare, prepared);
    (void)PQexitPipelineMode(c);
    return r;
}

int vs_pg__pend_flush(struct vs_store *s)
{
    if (vs_pg__pend(s)->n == 0)
        return VS_DB_OK;
    PGconn *c = vs_pg__conn(s);
    if (!c)
        return vs_pg__fail(s, NULL, "no connection");
    PGresult *r = vs_pg__run(s, c, NULL, NULL, NULL, 0, NULL, NULL);
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
        return vs_pg__fail(s, r, "pending transaction statements");
    PQclear(r);
    return VS_DB_OK;
}
