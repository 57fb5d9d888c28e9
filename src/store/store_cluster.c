/*
 * Row placement for locality scheduling (for its speed): the workunits of one
 * locality file, and their results, get ids next to each other, so that
 * their rows share table pages whatever order a generator makes them in.
 *
 * Why: SQLite keeps a table's rows in id (rowid) order. A locality request
 * reads a file's workunits and results, then claims up to 50 of them; when
 * creation interleaved many files, those rows sat on as many pages as
 * jobs, each read twice (the search's connection, then the writer's, whose
 * caches another connection's commit empties) and written to the log and
 * the checkpoint: locality cost 2.1-2.4x plain's CPU per request at the
 * issue's size, against 1.2x when the rows of a file were adjacent.
 *
 * How: ids come in aligned blocks of CL_BLOCK. A file's next row takes the
 * id after the file's last one while that stays in its block; otherwise a
 * new block is reserved above both the table's largest id and the highest
 * id reserved before (kept in store_meta as "id_top.TABLE"), in one
 * statement, so two writers never get the same block. Rows made without a
 * file (other apps, or no locality) are placed above the reserved top too,
 * so they do not land in a file's block. A clash anyway (a writer outside
 * this code took the id) is retried on a new block, a bounded number of
 * times. Only the ids change: nothing reads meaning into them beyond their
 * order, which stays increasing per file (a retry's result comes after the
 * file's earlier ones, as seed 001's per-user order needs).
 *
 * SQLite only (vs_db_ops.cluster_ids). On PostgreSQL an identity column
 * hands out ids and explicit ones would collide with it; rows there are
 * placed by the table's storage anyway, not by id.
 */
#include <string.h>

#include "store/store_int.h"
#include "volsched/locality.h"

#define CL_BLOCK   64 /* ids per block: a file's 50-job request fits one */
#define CL_RETRIES 4

struct cl_table {
    const struct sq_table *t;
    enum sq_stmt insert_id, last, reserve, taken, above;
    const char *top_key;
};

static const struct cl_table cl_tables[2] = {
    {&vs_store__workunit, SQ_CL_WU_INSERT_ID, SQ_CL_WU_LAST, SQ_CL_WU_RESERVE, SQ_CL_WU_TAKEN,
     SQ_CL_WU_ABOVE, "id_top.workunit"},
    {&vs_store__result, SQ_CL_RES_INSERT_ID, SQ_CL_RES_LAST, SQ_CL_RES_RESERVE, SQ_CL_RES_TAKEN,
     SQ_CL_RES_ABOVE, "id_top.result"},
};

static const struct cl_table *cl_of(enum sq_stmt id, int *kind)
{
    for (size_t i = 0; i < 2; i++) {
        const struct cl_table *c = &cl_tables[i];
        enum sq_stmt ids[5] = {c->insert_id, c->last, c->reserve, c->taken, c->above};
        for (int k = 0; k < 5; k++) {
            if (ids[k] == id) {
                *kind = k;
                return c;
            }
        }
    }
    return NULL;
}

int vs_store__build_sql_cluster(enum sq_stmt id, struct vs_buf *b)
{
    int kind = 0;
    const struct cl_table *c = cl_of(id, &kind);
    if (!c)
        return VS_EINTERNAL;
    const struct sq_table *t = c->t;
    int rc = 0;
    switch (kind) {
    case 0: /* INSERT with the id last, as vs_store__bind_row(with_id) binds it */
        rc |= vs_buf_printf(b, "INSERT INTO %s(", t->name);
        for (size_t i = 1; i < t->ncols; i++)
            rc |= vs_buf_printf(b, "%s, ", t->cols[i].name);
        rc |= vs_buf_puts(b, "id) VALUES(");
        for (size_t i = 1; i < t->ncols; i++)
            rc |= vs_buf_printf(b, "?%zu, ", i);
        rc |= vs_buf_printf(b, "?%zu)", t->ncols);
        break;
    case 1: /* the file's last id: its rows are a range of the name index */
        rc = vs_buf_printf(b, "SELECT coalesce(max(id), 0) FROM %s WHERE name >= ?1 AND name < ?2",
                           t->name);
        break;
    case 2: /* a new block above everything: returns its last id */
        rc = vs_buf_printf(b,
                           "INSERT INTO store_meta(key, value) SELECT '%s', "
                           "CAST((max(coalesce((SELECT max(id) FROM %s), 0), coalesce((SELECT "
                           "CAST(value AS INTEGER) FROM store_meta WHERE key = '%s'), 0)) / %d + "
                           "2) * %d - 1 AS TEXT) WHERE true ON CONFLICT(key) DO UPDATE SET value "
                           "= excluded.value RETURNING CAST(value AS INTEGER)",
                           c->top_key, t->name, c->top_key, CL_BLOCK, CL_BLOCK);
        break;
    case 3:
        rc = vs_buf_printf(b, "SELECT EXISTS(SELECT 1 FROM %s WHERE id = ?1)", t->name);
        break;
    case 4: /* where a row without a file goes: above the reserved top, or
             * no row (the store's own next id) when nothing is reserved
             * above the table's end */
        rc = vs_buf_printf(b,
                           "SELECT t + 1 FROM (SELECT CAST(value AS INTEGER) AS t FROM "
                           "store_meta WHERE key = '%s') WHERE t >= coalesce((SELECT max(id) "
                           "FROM %s), 0)",
                           c->top_key, t->name);
        break;
    }
    return rc;
}

static int one_i64(struct vs_store *s, enum sq_stmt id, const char *lo, const char *hi, int64_t arg,
                   int64_t *out)
{
    struct vs_stmt *st = vs_store__stmt(s, id);
    if (!st)
        return VS_ESTORE;
    if (lo) {
        vs_db_bind_text(st, 1, lo, -1, VS_DB_TRANSIENT);
        vs_db_bind_text(st, 2, hi, -1, VS_DB_TRANSIENT);
    } else if (arg) {
        vs_db_bind_int64(st, 1, arg);
    }
    return vs_store__one_i64(s, st, out);
}

/* The next id of a row without a file: 0 for the store's own choice. */
static int id_above(struct vs_store *s, const struct cl_table *c, int64_t *out)
{
    struct vs_stmt *st = vs_store__stmt(s, c->above);
    if (!st)
        return VS_ESTORE;
    int rc = vs_db_step(st);
    *out = rc == VS_DB_ROW ? vs_db_column_int64(st, 0) : 0;
    rc = vs_store__one_row_end(s, st, rc, "cluster above");
    return rc == VS_ENOTFOUND ? 0 : rc;
}

/* A fresh block's first id. */
static int reserve(struct vs_store *s, const struct cl_table *c, int64_t *out)
{
    int64_t last = 0;
    int rc = one_i64(s, c->reserve, NULL, NULL, 0, &last);
    if (rc == 0)
        *out = last - CL_BLOCK + 1;
    return rc;
}

static int insert_id(struct vs_store *s, const struct cl_table *c, void *row, int64_t id)
{
    struct vs_stmt *st = vs_store__stmt(s, c->insert_id);
    if (!st)
        return VS_ESTORE;
    *(int64_t *)row = id;
    if (vs_store__bind_row(st, 1, c->t, row, 1) < 0)
        return vs_store__err(s, vs_db_errcode(s), "bind");
    return vs_store__step_done(s, st, c->t->name);
}

int vs_store__add_near(struct vs_store *s, bool result, void *row, const char *near)
{
    const struct cl_table *c = &cl_tables[result ? 1 : 0];
    enum sq_stmt plain = result ? SQ_RESULT_INSERT : SQ_WORKUNIT_INSERT;
    if (!s->ops->cluster_ids)
        return vs_store__insert(s, plain, c->t, row);
    char lo[VS_LOC_NAME_MAX + 3], hi[VS_LOC_NAME_MAX + 3];
    if (near && vs_loc_wu_range(near, lo, hi, sizeof(lo)) != 0)
        near = NULL; /* not a locality file name: placed as any other row */
    int64_t id = 0;
    int rc;
    if (near) {
        int64_t last = 0;
        if ((rc = one_i64(s, c->last, lo, hi, 0, &last)) != 0)
            return rc;
        if (last > 0 && (last + 1) % CL_BLOCK != 0)
            id = last + 1;
        else if ((rc = reserve(s, c, &id)) != 0)
            return rc;
    } else if ((rc = id_above(s, c, &id)) != 0) {
        return rc;
    }
    if (id == 0)
        return vs_store__insert(s, plain, c->t, row);
    for (int tries = 0;; tries++) {
        rc = insert_id(s, c, row, id);
        if (rc != VS_EEXISTS || tries == CL_RETRIES)
            break;
        /* A clash: the name (the caller's answer) or the id (another
         * writer took it: a new block). */
        int64_t taken = 0;
        int rc2 = one_i64(s, c->taken, NULL, NULL, id, &taken);
        if (rc2 != 0)
            return rc2;
        if (!taken)
            break;
        if ((rc2 = reserve(s, c, &id)) != 0)
            return rc2;
    }
    if (rc != 0)
        *(int64_t *)row = 0;
    return rc;
}
