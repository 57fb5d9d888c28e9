/*
 * PostgreSQL statements with SQLite's step protocol (store_db.h): bind
 * parameters, then the first step sends the statement (one round trip,
 * with the transaction statements held back before it: store_pg_pipe.c;
 * a cached slot runs prepared, prepared on its first run with the
 * parameter types of its first bindings; a one-use statement unnamed) and later steps walk the rows
 * of the result, which libpq holds whole. Values travel as text: PostgreSQL's float8 output is
 * exact (shortest round-trip digits, the default since version 12), and booleans read as 1 and 0.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/pg_int.h"
#include "volsched/alloc.h"
#include "volsched/log.h"

#define PG_MAX_PARAMS 64 /* the widest statement (a host row) binds 47 */

/* Type oids (catalog/pg_type_d.h, stable across versions). */
#define OID_INT8   20
#define OID_TEXT   25
#define OID_FLOAT8 701

struct vs_pgst {
    struct vs_store *s;
    char *sql;          /* translated: $N parameters, PostgreSQL dialect */
    char name[16];      /* "" = one use (unnamed) */
    bool prepared;      /* the named statement exists on this connection */
    bool returns_id;    /* an INSERT ... RETURNING id: its row is the new id */
    bool clash_if_none; /* no row changed = a unique-key clash */
    int nparams;        /* highest bound index */
    char *val[PG_MAX_PARAMS];
    unsigned int type[PG_MAX_PARAMS];
    char num[PG_MAX_PARAMS][32]; /* numbers are printed here, no allocation */
    PGresult *res;
    int row, nrows;
};

struct vs_pgst *vs_pgst_new(struct vs_store *s, const char *sql, int slot, bool returns_id,
                            bool clash_if_none)
{
    struct vs_pgst *p = VS_NEW(struct vs_pgst);
    p->s = s;
    p->sql = vs_xstrdup(sql);
    if (slot >= 0)
        snprintf(p->name, sizeof(p->name), "vs%d", slot);
    p->returns_id = returns_id;
    p->clash_if_none = clash_if_none;
    p->row = -1;
    return p;
}

static void free_val(struct vs_pgst *p, int k)
{
    if (p->val[k] && p->val[k] != p->num[k])
        vs_free(p->val[k]);
    p->val[k] = NULL;
}

void vs_pgst_clear_bindings(struct vs_pgst *p)
{
    for (int k = 0; k < p->nparams; k++)
        free_val(p, k);
    p->nparams = 0;
}

void vs_pgst_reset(struct vs_pgst *p)
{
    if (p->res)
        PQclear(p->res);
    p->res = NULL;
    p->row = -1;
    p->nrows = 0;
}

void vs_pgst_conn_lost(struct vs_pgst *p)
{
    /* Kept (the caller may be inside a step of this very statement), only
     * prepared again on the new connection at its next run. */
    p->prepared = false;
}

void vs_pgst_free(struct vs_pgst *p)
{
    if (!p)
        return;
    vs_pgst_reset(p);
    vs_pgst_clear_bindings(p);
    vs_free(p->sql);
    vs_free(p);
}

/* Slot of parameter i (1-based); NULL when out of range. */
static int slot_of(struct vs_pgst *p, int i)
{
    if (i < 1 || i > PG_MAX_PARAMS)
        return -1;
    int k = i - 1;
    free_val(p, k);
    for (int j = p->nparams; j < i; j++) {
        p->val[j] = NULL;
        p->type[j] = 0;
    }
    if (i > p->nparams)
        p->nparams = i;
    return k;
}

int vs_pgst_bind_i64(struct vs_pgst *p, int i, int64_t v)
{
    int k = slot_of(p, i);
    if (k < 0)
        return VS_DB_RANGE;
    snprintf(p->num[k], sizeof(p->num[k]), "%lld", (long long)v);
    p->val[k] = p->num[k];
    p->type[k] = OID_INT8;
    return VS_DB_OK;
}

int vs_pgst_bind_double(struct vs_pgst *p, int i, double v)
{
    int k = slot_of(p, i);
    if (k < 0)
        return VS_DB_RANGE;
    snprintf(p->num[k], sizeof(p->num[k]), "%.17g", v);
    p->val[k] = p->num[k];
    p->type[k] = OID_FLOAT8;
    return VS_DB_OK;
}

int vs_pgst_bind_text(struct vs_pgst *p, int i, const char *v, int n)
{
    int k = slot_of(p, i);
    if (k < 0)
        return VS_DB_RANGE;
    if (!v)
        return VS_DB_OK; /* NULL */
    p->val[k] = n < 0 ? vs_xstrdup(v) : vs_xstrndup(v, (size_t)n);
    p->type[k] = OID_TEXT;
    return VS_DB_OK;
}

int vs_pgst_bind_null(struct vs_pgst *p, int i)
{
    return slot_of(p, i) < 0 ? VS_DB_RANGE : VS_DB_OK;
}

/* Sends the statement and keeps its result; an SQLite code. */
static int run(struct vs_pgst *p)
{
    PGconn *c = vs_pg__conn(p->s);
    if (!c)
        return vs_pg__fail(p->s, NULL, "no connection");
    const char *const *vals = (const char *const *)p->val;
    /* Behind the transaction statements held back, if any (store_pg_pipe.c). */
    PGresult *r = vs_pg__run(p->s, c, p->name, p->sql, &p->prepared, p->nparams, p->type, vals);
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK)
        return vs_pg__fail(p->s, r, p->sql);
    const char *n = PQcmdTuples(r);
    int64_t changed = n && *n ? strtoll(n, NULL, 10) : 0;
    vs_pg__set_changes(p->s, changed);
    if (p->clash_if_none && changed == 0)
        return vs_pg__clash(p->s, r, p->sql);
    if (p->returns_id && st == PGRES_TUPLES_OK) {
        if (PQntuples(r) == 1)
            vs_pg__set_last_id(p->s, strtoll(PQgetvalue(r, 0, 0), NULL, 10));
        PQclear(r);
        r = NULL;
    }
    p->res = r;
    p->nrows = r && st == PGRES_TUPLES_OK ? PQntuples(r) : 0;
    p->row = -1;
    return VS_DB_OK;
}

int vs_pgst_step(struct vs_pgst *p)
{
    if (p->row < 0 && !p->res) {
        int rc = run(p);
        if (rc != VS_DB_OK)
            return rc;
    }
    if (p->row + 1 < p->nrows) {
        p->row++;
        return VS_DB_ROW;
    }
    p->row = p->nrows;
    return VS_DB_DONE;
}

static const char *value(struct vs_pgst *p, int col)
{
    if (!p->res || p->row < 0 || p->row >= p->nrows || col < 0 || col >= PQnfields(p->res) ||
        PQgetisnull(p->res, p->row, col))
        return NULL;
    return PQgetvalue(p->res, p->row, col);
}

int64_t vs_pgst_column_int64(struct vs_pgst *p, int col)
{
    const char *v = value(p, col);
    if (!v)
        return 0;
    if (v[0] == 't' && !v[1])
        return 1;
    if (v[0] == 'f' && !v[1])
        return 0;
    /* A numeric (sum, avg) may carry a fraction: SQLite truncates too. */
    if (strpbrk(v, ".eE"))
        return (int64_t)strtod(v, NULL);
    return strtoll(v, NULL, 10);
}

double vs_pgst_column_double(struct vs_pgst *p, int col)
{
    const char *v = value(p, col);
    if (!v)
        return 0;
    if (v[0] == 't' && !v[1])
        return 1;
    return strtod(v, NULL);
}

const char *vs_pgst_column_text(struct vs_pgst *p, int col)
{
    return value(p, col);
}

int vs_pgst_column_bytes(struct vs_pgst *p, int col)
{
    return value(p, col) ? PQgetlength(p->res, p->row, col) : 0;
}

bool vs_pgst_column_null(struct vs_pgst *p, int col)
{
    return value(p, col) == NULL;
}
