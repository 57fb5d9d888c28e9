/*
 * Bulk inserts on PostgreSQL: COPY ... FROM STDIN in the text format, a
 * stream of rows where a statement costs a round trip per row. The writer
 * (struct vs_db_copy: begin, fields, rows, end) serves `store copy`
 * (store_copy.c, values as text from the source's statements), and
 * vs_db_ops.insert_many (rows of a descriptor, sq_table) create_work's
 * batches (COPY is the fast way to load many rows).
 *
 * The ids come first, from the table's identity sequence (nextval over
 * generate_series: the same numbers an INSERT would have drawn), so that
 * the caller has every row's id as after vs_store__insert, and the rows carry
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

struct vs_db_copy {
    struct vs_store *s;
    PGconn *conn;
    struct vs_buf b;
    const char *table; /* for messages */
    bool row_open;     /* a field was written on this row */
    int rc;            /* the first failure: every later call is a no-op */
};

/* Sends what is buffered as COPY data. */
static void flush(struct vs_db_copy *c)
{
    if (c->rc == 0 && c->b.len > 0 && PQputCopyData(c->conn, c->b.data, (int)c->b.len) != 1)
        c->rc = vs_store__err(c->s, vs_pg__fail(c->s, NULL, "copy: data"), c->table);
    vs_buf_reset(&c->b);
}

int vs_pg__copy_begin(struct vs_store *s, const char *table, const char *cols,
                      struct vs_db_copy **out)
{
    *out = NULL;
    PGconn *conn = vs_pg__conn(s);
    if (!conn)
        return VS_ESTORE;
    /* A BEGIN or SAVEPOINT held back (store_pg_pipe.c) must reach the
     * server first, or the COPY would run outside the transaction. */
    int frc = vs_pg__pend_flush(s);
    if (frc != VS_DB_OK)
        return vs_store__err(s, frc, table);
    struct vs_db_copy *c = VS_NEW(struct vs_db_copy);
    c->s = s;
    c->conn = conn;
    c->table = table;
    vs_buf_init(&c->b, VS_BUF_UNLIMITED);
    if (vs_buf_printf(&c->b, "COPY %s (%s) FROM STDIN", table, cols) != 0) {
        vs_buf_cleanup(&c->b);
        vs_free(c);
        return VS_ENOMEM;
    }
    PGresult *r = PQexec(conn, vs_buf_str(&c->b));
    vs_buf_reset(&c->b);
    if (PQresultStatus(r) != PGRES_COPY_IN) {
        int rc = vs_store__err(s, vs_pg__fail(s, r, "copy"), table);
        vs_buf_cleanup(&c->b);
        vs_free(c);
        return rc;
    }
    PQclear(r);
    *out = c;
    return 0;
}

void vs_pg__copy_field(struct vs_db_copy *c, const char *v, size_t n)
{
    if (c->rc != 0)
        return;
    int rc = c->row_open && vs_buf_append(&c->b, "\t", 1) != 0 ? VS_ENOMEM : 0;
    if (rc == 0)
        rc = v ? put_text(&c->b, v, n) : (vs_buf_append(&c->b, "\\N", 2) != 0 ? VS_ENOMEM : 0);
    c->row_open = true;
    c->rc = rc;
}

void vs_pg__copy_row(struct vs_db_copy *c)
{
    if (c->rc == 0 && vs_buf_append(&c->b, "\n", 1) != 0)
        c->rc = VS_ENOMEM;
    c->row_open = false;
    if (c->b.len >= COPY_CHUNK)
        flush(c);
}

int vs_pg__copy_end(struct vs_db_copy *c, int rc)
{
    if (!c)
        return rc;
    if (rc == 0)
        flush(c);
    if (rc == 0)
        rc = c->rc;
    /* On a failure of our own the server is told, so that it ends the COPY
     * (and the statement fails) rather than waiting for more rows. */
    if (PQputCopyEnd(c->conn, rc == 0 ? NULL : "volsched: copy abandoned") != 1 && rc == 0)
        rc = vs_store__err(c->s, vs_pg__fail(c->s, NULL, "copy: end"), c->table);
    /* The COPY's own result, then the NULL that ends the command. */
    PGresult *r;
    while ((r = PQgetResult(c->conn)) != NULL) {
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            int e = vs_store__err(c->s, vs_pg__fail(c->s, r, "copy"), c->table);
            if (rc == 0)
                rc = e;
            continue;
        }
        PQclear(r);
    }
    vs_buf_cleanup(&c->b);
    vs_free(c);
    return rc;
}

/* Writes one row of a descriptor (every column, id first, as it lists them). */
static void put_row(struct vs_db_copy *w, const struct sq_table *t, const void *row)
{
    const char *base = row;
    for (size_t i = 0; i < t->ncols; i++) {
        const struct sq_col *c = &t->cols[i];
        const void *f = base + c->offset;
        char num[40];
        switch (c->type) {
        case SQ_I64:
            vs_pg__copy_field(w, num,
                              (size_t)snprintf(num, sizeof(num), "%" PRId64, *(const int64_t *)f));
            break;
        case SQ_INT:
            vs_pg__copy_field(w, num, (size_t)snprintf(num, sizeof(num), "%d", *(const int *)f));
            break;
        case SQ_DBL:
            /* Exact, as the statements bind doubles (store_pg_stmt.c). */
            vs_pg__copy_field(w, num,
                              (size_t)snprintf(num, sizeof(num), "%.17g", *(const double *)f));
            break;
        case SQ_STR:
            vs_pg__copy_field(w, f, strnlen(f, c->size));
            break;
        case SQ_PSTR: {
            const char *str = *(char *const *)f;
            vs_pg__copy_field(w, str, str ? strlen(str) : 0);
            break;
        }
        }
    }
    vs_pg__copy_row(w);
}

/* Draws n ids from t's identity sequence into the rows. */
static int draw_ids(struct vs_store *s, PGconn *conn, const struct sq_table *t, void *const *rows,
                    size_t n)
{
    char sql[256], count[32];
    snprintf(
        sql, sizeof(sql),
        "SELECT nextval(pg_get_serial_sequence('%s', 'id')) FROM generate_series(1, $1::bigint)",
        t->name);
    snprintf(count, sizeof(count), "%zu", n);
    const char *params[1] = {count};
    PGresult *r = PQexecParams(conn, sql, 1, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK || (size_t)PQntuples(r) != n)
        return vs_store__err(s, vs_pg__fail(s, r, "copy: ids"), t->name);
    for (size_t i = 0; i < n; i++)
        *(int64_t *)rows[i] = strtoll(PQgetvalue(r, (int)i, 0), NULL, 10);
    PQclear(r);
    return 0;
}

int vs_pg__insert_many(struct vs_store *s, const struct sq_table *t, void *const *rows, size_t n)
{
    PGconn *conn = vs_pg__conn(s);
    if (!conn)
        return VS_ESTORE;
    if (n == 0)
        return 0;
    int frc = vs_pg__pend_flush(s); /* as in vs_pg__copy_begin */
    if (frc != VS_DB_OK)
        return vs_store__err(s, frc, t->name);
    int rc = t->has_id ? draw_ids(s, conn, t, rows, n) : 0;
    if (rc != 0)
        return rc;
    struct vs_buf cols;
    vs_buf_init(&cols, VS_BUF_UNLIMITED);
    for (size_t i = 0; i < t->ncols && rc == 0; i++)
        rc = vs_buf_printf(&cols, "%s%s", i ? ", " : "", t->cols[i].name) != 0 ? VS_ENOMEM : 0;
    struct vs_db_copy *w = NULL;
    if (rc == 0)
        rc = vs_pg__copy_begin(s, t->name, vs_buf_str(&cols), &w);
    vs_buf_cleanup(&cols);
    for (size_t i = 0; rc == 0 && i < n; i++)
        put_row(w, t, rows[i]);
    rc = vs_pg__copy_end(w, rc);
    if (rc == 0)
        vs_pg__set_changes(s, (int64_t)n);
    return rc;
}
