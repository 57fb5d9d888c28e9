/*
 * Whole-store copy (store_copy.h). Tables are described by their columns and
 * each column's kind (integer, real, text), taken from the row descriptors
 * where they exist (store_cols.c) and written out for the tables
 * without one. Values travel through the statement layer (store_db.h), so
 * either backend may be either side; into PostgreSQL a table goes in one
 * COPY (vs_db_ops.copy_*), into SQLite an INSERT a row.
 */
#include "volsched/store_copy.h"

#include <stdio.h>
#include <string.h>

#include "store/store_int.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/log.h"

#define COPY_MAX_COLS 64

struct copy_table {
    const char *name;
    const char *order;  /* ORDER BY */
    bool has_id;        /* an id column the store assigns (identity) */
    const char *prefix; /* columns before the descriptor's: "name:k,..." */
    const struct sq_table *desc;
    const char *cols; /* without a descriptor: "name:k,..." (k: i, d or t) */
};

/* Parents first: the foreign keys of each table point to earlier ones. */
static const struct copy_table tables[] = {
    {"platform", "id", true, NULL, &vs_store__platform, NULL},
    {"app", "id", true, NULL, &vs_store__app, NULL},
    {"app_version", "id", true, NULL, &vs_store__app_version, NULL},
    {"app_version_file", "id", true, "id:i,app_version_id:i,seqno:i", &vs_store__app_version_file,
     NULL},
    {"team", "id", true, NULL, &vs_store__team, NULL},
    {"\"user\"", "id", true, NULL, &vs_store__user, NULL},
    {"host", "id", true, NULL, &vs_store__host, NULL},
    {"workunit", "id", true, NULL, &vs_store__workunit, NULL},
    {"result", "id", true, NULL, &vs_store__result, NULL},
    {"assignment", "id", true, NULL, &vs_store__assignment, NULL},
    {"wu_file", "name, workunitid", false, NULL, NULL, "name:t,workunitid:i"},
    {"host_app_version", "host_id, app_version_id", false, NULL, NULL,
     "host_id:i,app_version_id:i,max_jobs_per_day:i,n_jobs_today:i,consecutive_valid:i,"
     "turnaround_n:d,turnaround_avg:d"},
    {"credit_pfc", "app_version_id, hostid", false, NULL, NULL,
     "app_version_id:i,hostid:i,appid:i,pfc_n:d,pfc_avg:d"},
    {"daemon_status", "name", false, NULL, NULL,
     "name:t,last_run:i,last_work:i,total_work:i,last_error_time:i,last_error:t,retry_time:i"},
    {"msg_from_host", "id", true, NULL, NULL,
     "id:i,create_time:i,hostid:i,result_name:t,variety:t,handled:i,xml:t"},
    {"msg_to_host", "id", true, NULL, NULL,
     "id:i,create_time:i,hostid:i,variety:t,handled:i,xml:t"},
    {"site_session", "id", false, NULL, NULL, "id:t,userid:i,create_time:i,expire_time:i"},
    /* Remote submission (schema v8). */
    {"batch", "id", true, NULL, NULL,
     "id:i,user_id:i,create_time:i,logical_start_time:d,logical_end_time:d,"
     "est_completion_time:d,njobs:i,fraction_done:d,nerror_jobs:i,state:i,completion_time:i,"
     "credit_estimate:d,credit_canonical:d,credit_total:d,name:t,app_id:i,project_state:i,"
     "description:t,expire_time:d,own_hosts:i,priority:i"},
    {"user_submit", "user_id", false, NULL, NULL,
     "user_id:i,quota:d,logical_start_time:d,submit_all:i,manage_all:i,max_jobs_in_progress:i"},
    {"user_submit_app", "user_id, app_id", false, NULL, NULL, "user_id:i,app_id:i,manage:i"},
    {"job_file", "id", true, NULL, NULL, "id:i,name:t,create_time:i,delete_time:i"},
    {"batch_file_assoc", "job_file_id, batch_id", false, NULL, NULL, "job_file_id:i,batch_id:i"},
};

struct cols {
    char names[COPY_MAX_COLS][48];
    char kind[COPY_MAX_COLS];
    size_t n;
};

static void add_spec(struct cols *c, const char *spec)
{
    for (const char *p = spec; p && *p && c->n < COPY_MAX_COLS;) {
        const char *colon = strchr(p, ':');
        if (!colon)
            break;
        snprintf(c->names[c->n], sizeof(c->names[0]), "%.*s", (int)(colon - p), p);
        c->kind[c->n++] = colon[1];
        p = colon + 2;
        if (*p == ',')
            p++;
    }
}

static void columns_of(const struct copy_table *t, struct cols *c)
{
    memset(c, 0, sizeof(*c));
    add_spec(c, t->prefix);
    add_spec(c, t->cols);
    for (size_t i = 0; t->desc && i < t->desc->ncols && c->n < COPY_MAX_COLS; i++) {
        const struct sq_col *k = &t->desc->cols[i];
        snprintf(c->names[c->n], sizeof(c->names[0]), "%s", k->name);
        c->kind[c->n++] = k->type == SQ_DBL                           ? 'd'
                          : (k->type == SQ_STR || k->type == SQ_PSTR) ? 't'
                                                                      : 'i';
    }
}

static char *select_sql(const struct copy_table *t, const struct cols *c)
{
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    int rc = vs_buf_puts(&b, "SELECT ");
    for (size_t i = 0; i < c->n; i++)
        rc |= vs_buf_printf(&b, "%s%s", i ? ", " : "", c->names[i]);
    rc |= vs_buf_printf(&b, " FROM %s ORDER BY %s", t->name, t->order);
    if (VS_NEVER(rc != 0))
        vs_buf_reset(&b);
    size_t n;
    return vs_buf_take(&b, &n);
}

static char *insert_sql(const struct copy_table *t, const struct cols *c)
{
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    int rc = vs_buf_printf(&b, "INSERT INTO %s(", t->name);
    for (size_t i = 0; i < c->n; i++)
        rc |= vs_buf_printf(&b, "%s%s", i ? ", " : "", c->names[i]);
    rc |= vs_buf_puts(&b, ") VALUES(");
    for (size_t i = 0; i < c->n; i++)
        rc |= vs_buf_printf(&b, "%s?%zu", i ? ", " : "", i + 1);
    rc |= vs_buf_puts(&b, ")");
    if (VS_NEVER(rc != 0))
        vs_buf_reset(&b);
    size_t n;
    return vs_buf_take(&b, &n);
}

static int prepare(struct vs_store *s, const char *sql, struct vs_stmt **st)
{
    int rc = vs_db_prepare(s, sql, st);
    return rc == VS_DB_OK ? 0 : vs_store__err(s, rc, sql);
}

static int count_rows(struct vs_store *s, const struct copy_table *t, int64_t *out)
{
    char sql[96];
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", t->name);
    struct vs_stmt *st = NULL;
    int rc = prepare(s, sql, &st);
    if (rc == 0)
        rc = vs_store__one_i64(s, st, out);
    vs_db_finalize(st);
    return rc;
}

/* copy_table into a destination with a bulk load (PostgreSQL's COPY):
 * every value as text, integers and reals printed exactly. */
static int copy_bulk(struct vs_store *from, struct vs_store *to, const struct copy_table *t,
                     const struct cols *c, int64_t *out_rows)
{
    char *sel = select_sql(t, c);
    struct vs_buf names;
    vs_buf_init(&names, VS_BUF_UNLIMITED);
    int rc = 0;
    for (size_t i = 0; i < c->n; i++)
        rc |= vs_buf_printf(&names, "%s%s", i ? ", " : "", c->names[i]);
    struct vs_stmt *r = NULL;
    struct vs_db_copy *w = NULL;
    rc = rc ? VS_ENOMEM : prepare(from, sel, &r);
    if (rc == 0)
        rc = to->ops->copy_begin(to, t->name, vs_buf_str(&names), &w);
    vs_buf_cleanup(&names);
    int64_t n = 0;
    int step = VS_DB_DONE;
    while (rc == 0 && (step = vs_db_step(r)) == VS_DB_ROW) {
        for (size_t i = 0; i < c->n; i++) {
            int col = (int)i;
            char num[40];
            if (vs_db_column_type(r, col) == VS_DB_NULL)
                to->ops->copy_field(w, NULL, 0);
            else if (c->kind[i] == 'i')
                to->ops->copy_field(w, num,
                                    (size_t)snprintf(num, sizeof(num), "%lld",
                                                     (long long)vs_db_column_int64(r, col)));
            else if (c->kind[i] == 'd')
                to->ops->copy_field(
                    w, num,
                    (size_t)snprintf(num, sizeof(num), "%.17g", vs_db_column_double(r, col)));
            else
                to->ops->copy_field(w, (const char *)vs_db_column_text(r, col),
                                    (size_t)vs_db_column_bytes(r, col));
        }
        to->ops->copy_row(w);
        n++;
    }
    if (rc == 0 && step != VS_DB_DONE)
        rc = vs_store__err(from, step, t->name);
    if (w)
        rc = to->ops->copy_end(w, rc);
    vs_db_finalize(r);
    vs_free(sel);
    if (rc == 0 && t->has_id)
        rc = to->ops->ids_follow(to, t->name);
    *out_rows = n;
    return rc;
}

static int copy_table(struct vs_store *from, struct vs_store *to, const struct copy_table *t,
                      const struct cols *c, int64_t *out_rows)
{
    if (to->ops->copy_begin)
        return copy_bulk(from, to, t, c, out_rows);
    char *sel = select_sql(t, c), *ins = insert_sql(t, c);
    struct vs_stmt *r = NULL, *w = NULL;
    int rc = prepare(from, sel, &r);
    if (rc == 0)
        rc = prepare(to, ins, &w);
    int64_t n = 0;
    int step = VS_DB_DONE;
    while (rc == 0 && (step = vs_db_step(r)) == VS_DB_ROW) {
        for (size_t i = 0; i < c->n; i++) {
            int col = (int)i, p = (int)i + 1;
            if (vs_db_column_type(r, col) == VS_DB_NULL)
                vs_db_bind_null(w, p);
            else if (c->kind[i] == 'i')
                vs_db_bind_int64(w, p, vs_db_column_int64(r, col));
            else if (c->kind[i] == 'd')
                vs_db_bind_double(w, p, vs_db_column_double(r, col));
            else
                vs_db_bind_text(w, p, (const char *)vs_db_column_text(r, col),
                                vs_db_column_bytes(r, col), VS_DB_TRANSIENT);
        }
        rc = vs_store__step_done(to, w, t->name);
        vs_db_clear_bindings(w);
        n++;
    }
    if (rc == 0 && step != VS_DB_DONE)
        rc = vs_store__err(from, step, t->name);
    vs_db_finalize(r);
    vs_db_finalize(w);
    vs_free(sel);
    vs_free(ins);
    if (rc == 0 && t->has_id)
        rc = to->ops->ids_follow(to, t->name);
    *out_rows = n;
    return rc;
}

/* Reads both sides in key order and compares every value. */
static int check_table(struct vs_store *a, struct vs_store *b, const struct copy_table *t,
                       const struct cols *c, int64_t rows)
{
    char *sel = select_sql(t, c);
    struct vs_stmt *x = NULL, *y = NULL;
    int rc = prepare(a, sel, &x);
    if (rc == 0)
        rc = prepare(b, sel, &y);
    int64_t n = 0;
    while (rc == 0) {
        int sx = vs_db_step(x), sy = vs_db_step(y);
        if (sx == VS_DB_DONE && sy == VS_DB_DONE)
            break;
        if (sx != VS_DB_ROW || sy != VS_DB_ROW) {
            VS_LOG(a->log, VS_LOG_ERROR, "store copy: %s: the copy has a different number of rows",
                   t->name);
            rc = VS_ESTATE;
            break;
        }
        for (size_t i = 0; i < c->n && rc == 0; i++) {
            int col = (int)i;
            bool nx = vs_db_column_type(x, col) == VS_DB_NULL;
            bool ny = vs_db_column_type(y, col) == VS_DB_NULL;
            bool same;
            if (nx || ny)
                same = nx == ny;
            else if (c->kind[i] == 'i')
                same = vs_db_column_int64(x, col) == vs_db_column_int64(y, col);
            else if (c->kind[i] == 'd')
                same = vs_db_column_double(x, col) == vs_db_column_double(y, col);
            else
                same = vs_db_column_bytes(x, col) == vs_db_column_bytes(y, col) &&
                       memcmp(vs_db_column_text(x, col), vs_db_column_text(y, col),
                              (size_t)vs_db_column_bytes(x, col)) == 0;
            if (!same) {
                VS_LOG(a->log, VS_LOG_ERROR, "store copy: %s row %lld: %s differs in the copy",
                       t->name, (long long)n + 1, c->names[i]);
                rc = VS_ESTATE;
            }
        }
        n++;
    }
    if (rc == 0 && n != rows)
        rc = VS_ESTATE;
    vs_db_finalize(x);
    vs_db_finalize(y);
    vs_free(sel);
    return rc;
}

int vs_store_copy(struct vs_store *from, struct vs_store *to, vs_store_copy_fn fn, void *ctx)
{
    /* The trickle tables are made on first use: make sure both sides have
     * them. */
    int rc = vs_store__trickle_ensure(from);
    if (rc == 0)
        rc = vs_store__trickle_ensure(to);
    const size_t nt = sizeof(tables) / sizeof(tables[0]);
    for (size_t i = 0; rc == 0 && i < nt; i++) {
        int64_t n = 0;
        rc = count_rows(to, &tables[i], &n);
        if (rc == 0 && n != 0) {
            VS_LOG(to->log, VS_LOG_ERROR, "store copy: the destination's %s is not empty",
                   tables[i].name);
            rc = VS_EEXISTS;
        }
    }
    if (rc)
        return rc;
    int64_t rows[sizeof(tables) / sizeof(tables[0])] = {0};
    struct cols c;
    if ((rc = vs_store_begin(to)) != 0)
        return rc;
    for (size_t i = 0; rc == 0 && i < nt; i++) {
        columns_of(&tables[i], &c);
        rc = copy_table(from, to, &tables[i], &c, &rows[i]);
    }
    if (rc == 0)
        rc = vs_store_commit(to);
    else
        (void)vs_store_rollback(to);
    for (size_t i = 0; rc == 0 && i < nt; i++) {
        columns_of(&tables[i], &c);
        rc = check_table(from, to, &tables[i], &c, rows[i]);
        if (rc == 0 && fn)
            fn(ctx, tables[i].name, rows[i]);
    }
    return rc;
}
