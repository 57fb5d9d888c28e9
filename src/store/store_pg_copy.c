/*
 * Bulk inserts on PostgreSQL (struct vs_db_ops.insert_many): COPY ... FROM
 * STDIN in the text format, one round trip for the ids and a stream for
 * the rows, where vs_sq__insert costs a round trip per row. create_work's
 * batches go this way (issue 17: "COPY for bulk create_work").
 *
 * The ids come first, from the table's identity sequence (nextval over
 * generate_series: the same numbers an INSERT would have drawn), so that
 * the caller has every row's id as after vs_sq__insert, and the rows carry
 * them. A failed COPY (a duplicate name) aborts the transaction up to its
 * last savepoint, as any failed statement does on PostgreSQL.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/pg_int.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"

/* Rows sent per PQputCopyData: large enough that the calls cost nothing,
 * small enough that a batch of 100,000 workunits is never held whole. */
#define COPY_CHUNK (256u * 1024)

/* Appends text in COPY's text format: backslash, tab, newline and carriage
 * return escaped (the column and row separators, and the escape itself). */
static int put_text(struct vs_buf *b, const char *v, size_t n)
{
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        const char *esc = NULL;
        switch (v[i]) {
        case '\\':
            esc = "\\\\";
            break;
        case '\t':
            esc = "\\t";
            break;
        case '\n':
            esc = "\\n";
            break;
        case '\r':
            esc = "\\r";
            break;
        default:
            continue;
        }
        if (vs_buf_append(b, v + from, i - from) != 0 || vs_buf_append(b, esc, 2) != 0)
            return VS_ENOMEM;
        from = i + 1;
    }
    return vs_buf_append(b, v + from, n - from) != 0 ? VS_ENOMEM : 0;
}

/* Appends one row (every column, id first, as the descriptor lists them). */
static int put_row(struct vs_buf *b, const struct sq_table *t, const void *row)
{
    const char *base = row;
    for (size_t i = 0; i < t->ncols; i++) {
        const struct sq_col *c = &t->cols[i];
        const void *f = base + c->offset;
        char num[40];
        int rc = 0;
        if (i > 0 && vs_buf_append(b, "\t", 1) != 0)
            return VS_ENOMEM;
        switch (c->type) {
        case SQ_I64:
            snprintf(num, sizeof(num), "%" PRId64, *(const int64_t *)f);
            rc = put_text(b, num, strlen(num));
            break;
        case SQ_INT:
            snprintf(num, sizeof(num), "%d", *(const int *)f);
            rc = put_text(b, num, strlen(num));
            break;
        case SQ_DBL:
            /* Exact, as the statements bind doubles (store_pg_stmt.c). */
            snprintf(num, sizeof(num), "%.17g", *(const double *)f);
            rc = put_text(b, num, strlen(num));
            break;
        case SQ_STR:
            rc = put_text(b, f, strnlen(f, c->size));
            break;
        case SQ_PSTR: {
            const char *str = *(char *const *)f;
            rc = str ? put_text(b, str, strlen(str))
                     : (vs_buf_append(b, "\\N", 2) != 0 ? VS_ENOMEM : 0);
            break;
        }
        }
        if (rc != 0)
            return rc;
    }
    return vs_buf_append(b, "\n", 1) != 0 ? VS_ENOMEM : 0;
}

/* Draws n ids from t's identity sequence into the rows. */
static int draw_ids(struct vs_store *s, PGconn *conn, const struct sq_table *t, void *const *rows,
                    size_t n)
{
    char sql[256], count[32];
    snprintf(sql, sizeof(sql),
             "SELECT nextval(pg_get_serial_sequence('%s', 'id')) FROM generate_series(1, $1::bigint)",
             t->name);
    snprintf(count, sizeof(count), "%zu", n);
    const char *params[1] = {count};
    PGresult *r = PQexecParams(conn, sql, 1, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK || (size_t)PQntuples(r) != n)
        return vs_sq__err(s, vs_pg__fail(s, r, "copy: ids"), t->name);
    for (size_t i = 0; i < n; i++)
        *(int64_t *)rows[i] = strtoll(PQgetvalue(r, (int)i, 0), NULL, 10);
    PQclear(r);
    return 0;
}

/* Sends what b holds as COPY data and empties it. */
static int flush(struct vs_store *s, PGconn *conn, struct vs_buf *b, const char *table)
{
    if (b->len == 0)
        return 0;
    if (PQputCopyData(conn, b->data, (int)b->len) != 1)
        return vs_sq__err(s, vs_pg__fail(s, NULL, "copy: data"), table);
    vs_buf_reset(b);
    return 0;
}

int vs_pg__insert_many(struct vs_store *s, const struct sq_table *t, void *const *rows, size_t n)
{
    PGconn *conn = vs_pg__conn(s);
    if (!conn)
        return VS_ESTORE;
    if (n == 0)
        return 0;
    int rc = t->has_id ? draw_ids(s, conn, t, rows, n) : 0;
    if (rc != 0)
        return rc;
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    if (vs_buf_printf(&b, "COPY %s (", t->name) != 0) {
        vs_buf_cleanup(&b);
        return VS_ENOMEM;
    }
    for (size_t i = 0; i < t->ncols; i++)
        if (vs_buf_printf(&b, "%s%s", i ? ", " : "", t->cols[i].name) != 0) {
            vs_buf_cleanup(&b);
            return VS_ENOMEM;
        }
    if (vs_buf_append(&b, ") FROM STDIN", 12) != 0) {
        vs_buf_cleanup(&b);
        return VS_ENOMEM;
    }
    PGresult *r = PQexec(conn, vs_buf_str(&b));
    vs_buf_reset(&b);
    if (PQresultStatus(r) != PGRES_COPY_IN) {
        vs_buf_cleanup(&b);
        return vs_sq__err(s, vs_pg__fail(s, r, "copy"), t->name);
    }
    PQclear(r);
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = put_row(&b, t, rows[i]);
        if (rc == 0 && b.len >= COPY_CHUNK)
            rc = flush(s, conn, &b, t->name);
    }
    if (rc == 0)
        rc = flush(s, conn, &b, t->name);
    vs_buf_cleanup(&b);
    /* On a failure of our own the server is told, so that it ends the COPY
     * (and the statement fails) rather than waiting for more rows. */
    if (PQputCopyEnd(conn, rc == 0 ? NULL : "volsched: row encoding failed") != 1 && rc == 0)
        rc = vs_sq__err(s, vs_pg__fail(s, NULL, "copy: end"), t->name);
    /* The COPY's own result, then the NULL that ends the command. */
    while ((r = PQgetResult(conn)) != NULL) {
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            int e = vs_sq__err(s, vs_pg__fail(s, r, "copy"), t->name);
            if (rc == 0)
                rc = e;
            continue;
        }
        PQclear(r);
    }
    if (rc == 0)
        vs_pg__set_changes(s, (int64_t)n);
    return rc;
}
