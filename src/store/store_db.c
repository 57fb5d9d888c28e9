/*
 * The store's backend-neutral core: the error mapping, the prepared
 * statement cache, the generic row code driven by the column descriptors,
 * nested transactions, the versioned schema, and the dispatch to the
 * backend that the URL names (store_sqlite.c, store_pg.c) through its ops
 * table. The SQL text of each statement slot is in store_sql.c; the
 * domain operations are in store_<concept>.c and run unchanged on
 * either backend (store_db.h).
 */
#include <string.h>
#include <time.h>

#include "store/store_int.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/log.h"
#include "volsched/store_sched.h"
#include "volsched/str.h"

int64_t vs_store__now(void)
{
    return (int64_t)time(NULL);
}

int vs_store_schema_version(void)
{
    return VS_SQ_SCHEMA_VERSION;
}

int vs_store__err(struct vs_store *s, int rc, const char *what)
{
    int prim = rc & 0xff;
    VS_LOG(s->log, prim == VS_DB_CONSTRAINT ? VS_LOG_DEBUG : VS_LOG_ERROR, "store: %s: %s (%d)",
           what, vs_db_errmsg(s), rc);
    if (rc == VS_DB_CONSTRAINT_FOREIGNKEY)
        return VS_ENOTFOUND; /* a referenced row (workunit, app ...) is missing */
    if (prim == VS_DB_CONSTRAINT)
        return VS_EEXISTS;
    if (prim == VS_DB_BUSY || prim == VS_DB_LOCKED)
        return VS_EBUSY;
    return VS_ESTORE;
}

int vs_store__step_done(struct vs_store *s, struct vs_stmt *st, const char *what)
{
    int rc = vs_db_step(st);
    vs_db_reset(st);
    return rc == VS_DB_DONE ? 0 : vs_store__err(s, rc, what);
}

int vs_store__one_row_end(struct vs_store *s, struct vs_stmt *st, int rc, const char *what)
{
    vs_db_reset(st);
    if (rc == VS_DB_ROW)
        return 0;
    return rc == VS_DB_DONE ? VS_ENOTFOUND : vs_store__err(s, rc, what);
}

struct vs_stmt *vs_store__stmt(struct vs_store *s, enum sq_stmt id)
{
    if (VS_NEVER(id < 0 || id >= SQ__COUNT))
        return NULL;
    struct vs_stmt *st = &s->stmts[id];
    if (st->sq || st->pg) {
        vs_db_reset(st);
        vs_db_clear_bindings(st);
        return st;
    }
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    if (vs_store__build_sql(id, &b) != 0) {
        vs_buf_cleanup(&b);
        return NULL;
    }
    if (s->ops->prepare(s, vs_buf_str(&b), (int)id, st) != VS_DB_OK) {
        VS_LOG(s->log, VS_LOG_ERROR, "store: prepare %d: %s: %s", (int)id, vs_db_errmsg(s),
               vs_buf_str(&b));
        vs_buf_cleanup(&b);
        return NULL;
    }
    vs_buf_cleanup(&b);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Generic row code                                                          */

int vs_store__bind_row(struct vs_stmt *st, int first, const struct sq_table *t, const void *row,
                       int with_id)
{
    const char *base = row;
    int p = first;
    int rc = VS_DB_OK;
    for (size_t i = t->has_id ? 1 : 0; i < t->ncols && rc == VS_DB_OK; i++, p++) {
        const struct sq_col *c = &t->cols[i];
        const void *f = base + c->offset;
        switch (c->type) {
        case SQ_I64:
            rc = vs_db_bind_int64(st, p, *(const int64_t *)f);
            break;
        case SQ_INT:
            rc = vs_db_bind_int(st, p, *(const int *)f);
            break;
        case SQ_DBL:
            rc = vs_db_bind_double(st, p, *(const double *)f);
            break;
        case SQ_STR:
            rc = vs_db_bind_text(st, p, f, (int)strnlen(f, c->size), VS_DB_STATIC);
            break;
        case SQ_PSTR: {
            const char *str = *(char *const *)f;
            rc = str ? vs_db_bind_text(st, p, str, -1, VS_DB_STATIC) : vs_db_bind_null(st, p);
            break;
        }
        }
    }
    if (rc == VS_DB_OK && with_id && t->has_id)
        rc = vs_db_bind_int64(st, p++, *(const int64_t *)base);
    return rc == VS_DB_OK ? p : -1;
}

void vs_store__read_row(struct vs_stmt *st, int first, const struct sq_table *t, void *row)
{
    char *base = row;
    for (size_t i = 0; i < t->ncols; i++) {
        const struct sq_col *c = &t->cols[i];
        void *f = base + c->offset;
        int col = first + (int)i;
        switch (c->type) {
        case SQ_I64:
            *(int64_t *)f = vs_db_column_int64(st, col);
            break;
        case SQ_INT:
            *(int *)f = vs_db_column_int(st, col);
            break;
        case SQ_DBL:
            *(double *)f = vs_db_column_double(st, col);
            break;
        case SQ_STR: {
            const char *txt = (const char *)vs_db_column_text(st, col);
            /* Truncation of an over-long stored value is deliberate here. */
            vs_store__copy(f, txt ? txt : "", c->size);
            break;
        }
        case SQ_PSTR: {
            const char *txt = (const char *)vs_db_column_text(st, col);
            *(char **)f = txt ? vs_xstrndup(txt, (size_t)vs_db_column_bytes(st, col)) : NULL;
            break;
        }
        }
    }
}

void vs_store__free_row(const struct sq_table *t, void *row)
{
    char *base = row;
    for (size_t i = 0; i < t->ncols; i++) {
        if (t->cols[i].type == SQ_PSTR) {
            char **p = (char **)(base + t->cols[i].offset);
            vs_free(*p);
            *p = NULL;
        }
    }
}

int vs_store__insert(struct vs_store *s, enum sq_stmt id, const struct sq_table *t, void *row)
{
    struct vs_stmt *st = vs_store__stmt(s, id);
    if (!st)
        return VS_ESTORE;
    if (vs_store__bind_row(st, 1, t, row, 0) < 0)
        return vs_store__err(s, vs_db_errcode(s), "bind");
    int rc = vs_db_step(st);
    if (rc != VS_DB_DONE) {
        int e = vs_store__err(s, rc, t->name);
        vs_db_reset(st);
        return e;
    }
    vs_db_reset(st);
    *(int64_t *)row = s->ops->last_insert_id(s);
    return 0;
}

int vs_store__insert_many(struct vs_store *s, enum sq_stmt slot, const struct sq_table *t,
                          void *const *rows, size_t n)
{
    if (n == 0)
        return 0;
    if (s->ops->insert_many)
        return s->ops->insert_many(s, t, rows, n);
    for (size_t i = 0; i < n; i++) {
        int rc = vs_store__insert(s, slot, t, rows[i]);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int vs_store__update(struct vs_store *s, enum sq_stmt id, const struct sq_table *t, const void *row)
{
    struct vs_stmt *st = vs_store__stmt(s, id);
    if (!st)
        return VS_ESTORE;
    if (vs_store__bind_row(st, 1, t, row, 1) < 0)
        return vs_store__err(s, vs_db_errcode(s), "bind");
    /* mod_time is the store's to keep, whatever the caller's copy says. */
    for (size_t i = 1; i < t->ncols; i++) {
        if (strcmp(t->cols[i].name, "mod_time") == 0)
            vs_db_bind_int64(st, (int)i, vs_store__now());
    }
    int rc = vs_db_step(st);
    vs_db_reset(st);
    if (rc != VS_DB_DONE)
        return vs_store__err(s, rc, t->name);
    return vs_db_changes(s) == 1 ? 0 : VS_ENOTFOUND;
}

static int get_row(struct vs_store *s, struct vs_stmt *st, const struct sq_table *t, void *row)
{
    int rc = vs_db_step(st);
    if (rc == VS_DB_ROW) {
        vs_store__read_row(st, 0, t, row);
        vs_db_reset(st);
        return 0;
    }
    vs_db_reset(st);
    if (rc == VS_DB_DONE)
        return VS_ENOTFOUND;
    return vs_store__err(s, rc, t->name);
}

int vs_store__get_i64(struct vs_store *s, enum sq_stmt id, const struct sq_table *t, int64_t key,
                      void *row)
{
    struct vs_stmt *st = vs_store__stmt(s, id);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, key);
    return get_row(s, st, t, row);
}

int vs_store__get_text(struct vs_store *s, enum sq_stmt id, const struct sq_table *t,
                       const char *key, void *row)
{
    if (!key)
        return VS_EINVAL;
    struct vs_stmt *st = vs_store__stmt(s, id);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_text(st, 1, key, -1, VS_DB_STATIC);
    return get_row(s, st, t, row);
}

/* ------------------------------------------------------------------------ */
/* Transactions                                                              */

/* True when the backend ended our transaction on its own: in SQLite a
 * statement error such as a full disk or VS_DB_IOERR, or a trigger's
 * RAISE(ROLLBACK), rolls the whole transaction back and puts the connection
 * in autocommit mode; a PostgreSQL connection that broke mid-transaction
 * lost it likewise. txn_depth still counts the levels our callers opened.
 * From then on every level fails without running SQL until the outermost
 * one is left: a SAVEPOINT would otherwise open a fresh transaction that
 * its RELEASE commits, behind the back of a caller that believes it is
 * inside one. */
static bool txn_lost(struct vs_store *s)
{
    if (s->txn_depth == 0)
        return false;
    if (!s->txn_lost && s->ops->txn_gone(s)) {
        VS_LOG(s->log, VS_LOG_ERROR, "store: an error rolled the whole transaction back");
        s->txn_lost = true;
    }
    return s->txn_lost;
}

bool vs_store_in_transaction(struct vs_store *s)
{
    return s->txn_depth > 0 && !txn_lost(s);
}

int vs_store__enter(struct vs_store *s)
{
    int rc;
    if (txn_lost(s))
        return VS_ESTORE;
    if (s->txn_depth == 0) {
        s->flat_base = 0; /* a flat batch left open ends with its transaction */
        rc = s->ops->tx(s, VS_DB_BEGIN, 0);
    } else if (s->flat_base > 0) {
        rc = 0; /* vs_store_flat: no savepoint */
    } else {
        rc = s->ops->tx(s, VS_DB_SAVE, s->txn_depth);
    }
    if (rc == 0)
        s->txn_depth++;
    return rc;
}

int vs_store__leave(struct vs_store *s, int rc)
{
    if (VS_NEVER(s->txn_depth <= 0))
        return rc ? rc : VS_ESTATE;
    if (txn_lost(s)) {
        /* Nothing left to release or roll back; the outermost level
         * clears the state for the next transaction. */
        if (--s->txn_depth == 0) {
            s->txn_lost = false;
            (void)s->ops->tx(s, VS_DB_ROLLBACK, 0); /* a no-op if nothing is open */
        }
        return rc ? rc : VS_ESTORE;
    }
    s->txn_depth--;
    if (s->flat_base > 0 && s->txn_depth >= s->flat_base) {
        if (rc != 0)
            s->flat_failed = true; /* its writes stay: the caller redoes all */
        return rc;
    }
    if (s->txn_depth == 0) {
        if (rc == 0) {
            int c = s->ops->tx(s, VS_DB_COMMIT, 0);
            if (c != 0) {
                (void)s->ops->tx(s, VS_DB_ROLLBACK, 0);
                return c;
            }
            return 0;
        }
        (void)s->ops->tx(s, VS_DB_ROLLBACK, 0);
        return rc;
    }
    if (rc == 0)
        return s->ops->tx(s, VS_DB_RELEASE, s->txn_depth);
    (void)s->ops->tx(s, VS_DB_ROLLBACK_TO, s->txn_depth);
    (void)s->ops->tx(s, VS_DB_RELEASE, s->txn_depth);
    return rc;
}

bool vs_store_flat(struct vs_store *s, bool on)
{
    if (on) {
        if (s->txn_depth == 0 || s->flat_base > 0)
            return false;
        s->flat_base = s->txn_depth;
        s->flat_failed = false;
        return true;
    }
    bool clean = s->flat_base > 0 && !s->flat_failed && vs_store_in_transaction(s);
    s->flat_base = 0;
    s->flat_failed = false;
    return clean;
}

int vs_store_begin(struct vs_store *s)
{
    return vs_store__enter(s);
}

int vs_store_begin_users(struct vs_store *s, const int64_t *userids, size_t n)
{
    if (n > 0 && !userids)
        return VS_EINVAL;
    s->begin_users = userids;
    s->n_begin_users = n;
    int rc = vs_store__enter(s);
    s->begin_users = NULL;
    s->n_begin_users = 0;
    return rc;
}

int vs_store_commit(struct vs_store *s)
{
    if (s->txn_depth <= 0)
        return VS_ESTATE;
    return vs_store__leave(s, 0);
}

int vs_store_rollback(struct vs_store *s)
{
    if (s->txn_depth <= 0)
        return VS_ESTATE;
    (void)vs_store__leave(s, VS_ESTATE);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* The schema                                                                */

static int read_version(struct vs_store *s, int *out)
{
    struct vs_stmt *st = NULL;
    int rc = vs_db_prepare(s, "SELECT value FROM store_meta WHERE key = 'schema_version'", &st);
    if (rc != VS_DB_OK) {
        vs_db_finalize(st);
        return vs_store__err(s, rc, "schema version");
    }
    rc = vs_db_step(st);
    *out = rc == VS_DB_ROW ? vs_db_column_int(st, 0) : 0;
    vs_db_finalize(st);
    return rc == VS_DB_ROW || rc == VS_DB_DONE ? 0 : VS_ESTORE;
}

static int exec_logged(struct vs_store *s, const char *sql)
{
    int rc = vs_db_exec(s, sql);
    if (rc == VS_DB_OK)
        return 0;
    VS_LOG(s->log, VS_LOG_ERROR, "store: %s: %s", sql, vs_db_errmsg(s));
    return (rc & 0xff) == VS_DB_BUSY ? VS_EBUSY : VS_ESTORE;
}

int vs_store__ensure_schema(struct vs_store *s)
{
    int rc =
        exec_logged(s, "CREATE TABLE IF NOT EXISTS store_meta (key TEXT PRIMARY KEY, value TEXT)");
    if (rc)
        return rc;
    int version;
    if ((rc = read_version(s, &version)) != 0)
        return rc;
    if (version == VS_SQ_SCHEMA_VERSION)
        return 0;
    if (version > VS_SQ_SCHEMA_VERSION) {
        VS_LOG(s->log, VS_LOG_ERROR,
               "store: schema version %d is newer than this volsched (%d); upgrade volsched",
               version, VS_SQ_SCHEMA_VERSION);
        return VS_ECONFIG;
    }
    if ((rc = vs_store__enter(s)) != 0)
        return rc;
    /* Re-read inside the write lock: another process may have won the race. */
    rc = read_version(s, &version);
    static const char *const *const versions[] = {
        vs_store__schema_v1, vs_store__schema_v2, vs_store__schema_v3,
        vs_store__schema_v4, vs_store__schema_v5, vs_store__schema_v6,
        vs_store__schema_v7, vs_store__schema_v8, vs_store__schema_v9};
    /* A version whose migration also moves data, after its SQL: v6 fills
     * wu_file from the workunits already there. */
    static int (*const data_step[])(struct vs_store *) = {
        NULL, NULL, NULL, NULL, NULL, vs_store__wu_files_backfill, NULL, NULL, NULL};
    _Static_assert(sizeof(data_step) / sizeof(data_step[0]) == VS_SQ_SCHEMA_VERSION &&
                       sizeof(versions) / sizeof(versions[0]) == VS_SQ_SCHEMA_VERSION,
                   "one migration (and data step) per schema version");
    for (int v = version; rc == 0 && v < VS_SQ_SCHEMA_VERSION; v++) {
        for (size_t i = 0; rc == 0 && versions[v][i]; i++)
            rc = exec_logged(s, versions[v][i]);
        if (rc == 0 && data_step[v])
            rc = data_step[v](s);
    }
    if (rc == 0 && version < VS_SQ_SCHEMA_VERSION) {
        char sql[160];
        snprintf(sql, sizeof(sql),
                 "INSERT INTO store_meta(key, value) VALUES('schema_version', %d) "
                 "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                 VS_SQ_SCHEMA_VERSION);
        rc = exec_logged(s, sql);
    }
    return vs_store__leave(s, rc);
}

/* ------------------------------------------------------------------------ */
/* Opening, and what the backends do their own way                           */

int vs_store_open(const char *url, int flags, struct vs_log *log, struct vs_store **out_store)
{
    if (!url || !*url || !out_store)
        return VS_EINVAL;
    /* libpq takes both URI spellings; the whole URL is its conninfo. */
    if (vs_str_has_prefix(url, "postgresql://") || vs_str_has_prefix(url, "postgres://"))
        return vs_store__open_pg(url, flags, log, out_store);
    if (vs_str_has_prefix(url, "postgresql:") || vs_str_has_prefix(url, "postgres:")) {
        VS_LOG(log, VS_LOG_ERROR, "store: a PostgreSQL URL starts with postgresql://: %s", url);
        return VS_EINVAL;
    }
    return vs_store__open_sqlite(url, flags, log, out_store);
}

void vs_store_close(struct vs_store *s)
{
    if (!s)
        return;
    if (s->txn_depth > 0) {
        s->txn_depth = 1;
        (void)vs_store__leave(s, VS_ESTATE);
    }
    for (int i = 0; i < SQ__COUNT; i++) {
        if (s->stmts[i].sq)
            vs_sqst_finalize(s->stmts[i].sq);
        if (s->stmts[i].pg)
            vs_pgst_free(s->stmts[i].pg);
    }
    s->ops->close(s);
    vs_free(s);
}

int vs_store_checkpoint(struct vs_store *s)
{
    return s->ops->checkpoint(s);
}

int vs_store_durable_commits(struct vs_store *s, bool on)
{
    return s->ops->durable(s, on);
}

int vs_store_sched_tune(struct vs_store *s, bool writer)
{
    return s->ops->sched_tune(s, writer);
}

int vs_store_set_mod(struct vs_store *s, int n, int i)
{
    if (n < 1 || i < 0 || i >= n)
        return VS_EINVAL;
    s->mod_n = n;
    s->mod_i = i;
    return 0;
}

int vs_store_mod_n(const struct vs_store *s)
{
    return s->mod_n;
}

int vs_store_leader(struct vs_store *s, const char *role, bool *out_leader)
{
    if (!role || !*role || !out_leader)
        return VS_EINVAL;
    return s->ops->leader(s, role, out_leader);
}

int vs_store_sched_checkpoint(struct vs_store *s)
{
    return s->ops->checkpoint(s);
}

bool vs_store_sched_parallel(struct vs_store *s)
{
    return s->ops->parallel_writes;
}

int vs_store_sched_wal_trim(struct vs_store *s)
{
    return s->ops->wal_trim ? s->ops->wal_trim(s) : 0;
}

int vs_db_prepare(struct vs_store *s, const char *sql, struct vs_stmt **out)
{
    struct vs_stmt *st = VS_NEW(struct vs_stmt);
    *out = st;
    return s->ops->prepare(s, sql, -1, st);
}

void vs_db_finalize(struct vs_stmt *st)
{
    if (!st)
        return;
    if (st->sq)
        vs_sqst_finalize(st->sq);
    if (st->pg)
        vs_pgst_free(st->pg);
    vs_free(st);
}

int vs_db_exec(struct vs_store *s, const char *sql)
{
    return s->ops->exec(s, sql);
}

int64_t vs_db_changes(struct vs_store *s)
{
    return s->ops->changes(s);
}

int vs_db_errcode(struct vs_store *s)
{
    return s->ops->errcode(s);
}

const char *vs_db_errmsg(struct vs_store *s)
{
    return s->ops->errmsg(s);
}
