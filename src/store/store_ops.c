/*
 * SQLite side of store_ops.h: the figures of the status page and dashboard,
 * and the operator's tools. Statements are compiled per call (these run a
 * few times a minute at most), so they need no slot in the catalogue.
 */
#include <stdio.h>
#include <string.h>

#include "store/store_int.h"
#include "volsched/alloc.h"
#include "volsched/store_ops.h"

/* Runs sql with ?1 = a and ?2 = b (the statements of this file take at
 * most two integers); the number of rows changed. */
static int change2(struct vs_store *s, const char *sql, int64_t a, int64_t b, const char *what,
                   int64_t *out_changed)
{
    struct vs_stmt *st = vs_store__prep(s, sql, what);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, a);
    vs_db_bind_int64(st, 2, b);
    return vs_store__run_change(s, st, what, out_changed);
}

int vs_store_app_counts(struct vs_store *s, int64_t now, vs_store_app_counts_fn fn, void *ctx)
{
    /* BOINC-COMPAT: the figures of BOINC's server_status.php per app. */
    struct vs_stmt *st = vs_store__prep(
        s,
        "SELECT a.id, a.name,"
        " (SELECT count(*) FROM result r WHERE r.appid = a.id AND r.server_state = 2),"
        " (SELECT count(*) FROM result r WHERE r.appid = a.id AND r.server_state = 4),"
        " (SELECT count(*) FROM workunit w WHERE w.appid = a.id AND w.need_validate <> 0),"
        " (SELECT count(*) FROM workunit w WHERE w.appid = a.id AND w.assimilate_state = 1),"
        " (SELECT coalesce(min(r.create_time), 0) FROM result r"
        "   WHERE r.appid = a.id AND r.server_state = 2),"
        " (SELECT count(*) FROM result r WHERE r.appid = a.id AND r.server_state = 5"
        "   AND r.outcome = 1 AND r.received_time >= ?1),"
        " (SELECT count(*) FROM result r WHERE r.appid = a.id AND r.server_state = 5"
        "   AND r.outcome = 3 AND r.received_time >= ?1)"
        " FROM app a ORDER BY a.name",
        "app counts");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, now - 86400);
    int rc, ret = 0;
    while ((rc = vs_db_step(st)) == VS_DB_ROW) {
        struct vs_app_counts c;
        memset(&c, 0, sizeof(c));
        c.appid = vs_db_column_int64(st, 0);
        const unsigned char *name = vs_db_column_text(st, 1);
        vs_store__copy(c.name, name ? (const char *)name : "", sizeof(c.name));
        c.unsent = vs_db_column_int64(st, 2);
        c.in_progress = vs_db_column_int64(st, 3);
        c.need_validate = vs_db_column_int64(st, 4);
        c.need_assimilate = vs_db_column_int64(st, 5);
        c.oldest_unsent = vs_db_column_int64(st, 6);
        c.success_24h = vs_db_column_int64(st, 7);
        c.error_24h = vs_db_column_int64(st, 8);
        ret = fn(ctx, &c);
        if (ret)
            break;
    }
    vs_db_finalize(st);
    if (ret)
        return ret;
    return rc == VS_DB_DONE ? 0 : vs_store__err(s, rc, "app counts");
}

int vs_store_hosts_since(struct vs_store *s, int64_t since, int limit,
                         int (*fn)(void *ctx, const struct vs_host *h), void *ctx)
{
    char *cols = vs_store__select_list(&vs_store__host, NULL);
    size_t n = strlen(cols) + 128;
    char *sql = vs_xmalloc(n);
    snprintf(sql, n, "SELECT %s FROM host WHERE rpc_time >= ?1 ORDER BY rpc_time DESC, id LIMIT ?2",
             cols);
    vs_free(cols);
    struct vs_stmt *st = vs_store__prep(s, sql, "recent hosts");
    vs_free(sql);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, since);
    vs_db_bind_int(st, 2, limit);
    int rc, ret = 0;
    while ((rc = vs_db_step(st)) == VS_DB_ROW) {
        struct vs_host h;
        memset(&h, 0, sizeof(h));
        vs_store__read_row(st, 0, &vs_store__host, &h);
        ret = fn(ctx, &h);
        vs_store__free_row(&vs_store__host, &h);
        if (ret)
            break;
    }
    vs_db_finalize(st);
    if (ret)
        return ret;
    return rc == VS_DB_DONE ? 0 : vs_store__err(s, rc, "recent hosts");
}

int vs_store_batches(struct vs_store *s, int limit,
                     int (*fn)(void *ctx, const struct vs_batch_counts *b), void *ctx)
{
    struct vs_stmt *st = vs_store__prep(
        s,
        "SELECT w.batch, count(*),"
        " sum(CASE WHEN w.assimilate_state = 2 AND w.error_mask = 0 THEN 1 ELSE 0 END),"
        " sum(CASE WHEN w.error_mask <> 0 THEN 1 ELSE 0 END),"
        " (SELECT count(*) FROM result r WHERE r.batch = w.batch AND r.server_state = 4),"
        " min(w.create_time)"
        " FROM workunit w WHERE w.batch <> 0 GROUP BY w.batch ORDER BY w.batch DESC LIMIT ?1",
        "batches");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int(st, 1, limit);
    int rc, ret = 0;
    while ((rc = vs_db_step(st)) == VS_DB_ROW) {
        struct vs_batch_counts b = {
            .batch = vs_db_column_int64(st, 0),
            .nwus = vs_db_column_int64(st, 1),
            .ndone = vs_db_column_int64(st, 2),
            .nerror = vs_db_column_int64(st, 3),
            .in_progress = vs_db_column_int64(st, 4),
            .create_time = vs_db_column_int64(st, 5),
        };
        ret = fn(ctx, &b);
        if (ret)
            break;
    }
    vs_db_finalize(st);
    if (ret)
        return ret;
    return rc == VS_DB_DONE ? 0 : vs_store__err(s, rc, "batches");
}

int vs_store_workunit_cancel(struct vs_store *s, int64_t wuid, int64_t now, int64_t *out_nresults)
{
    int rc = vs_store__enter(s);
    if (rc)
        return rc;
    struct vs_workunit wu;
    memset(&wu, 0, sizeof(wu));
    rc = vs_store_workunit_get(s, wuid, &wu);
    if (rc == 0 && (wu.canonical_resultid != 0 || wu.error_mask != 0))
        rc = VS_ESTATE;
    vs_workunit_cleanup(&wu);
    int64_t n = 0;
    if (rc == 0)
        rc = change2(s,
                     "UPDATE workunit SET error_mask = error_mask | 16,"
                     " transition_time = ?2, mod_time = ?2 WHERE id = ?1",
                     wuid, now, "cancel", NULL);
    /* BOINC-COMPAT: unsent results of a cancelled WU are OVER/DIDNT_NEED. */
    if (rc == 0)
        rc = change2(s,
                     "UPDATE result SET server_state = 5, outcome = 5, mod_time = ?2"
                     " WHERE workunitid = ?1 AND server_state IN (1, 2)",
                     wuid, now, "cancel results", &n);
    rc = vs_store__leave(s, rc);
    if (rc == 0 && out_nresults)
        *out_nresults = n;
    return rc;
}

/* Collects the first column of every row of st (finalized) into ids. */
static int collect_ids(struct vs_store *s, struct vs_stmt *st, int64_t *ids, size_t max,
                       size_t *out_n, const char *what)
{
    size_t n = 0;
    int rc;
    while (n < max && (rc = vs_db_step(st)) == VS_DB_ROW)
        ids[n++] = vs_db_column_int64(st, 0);
    if (n == max)
        rc = VS_DB_DONE;
    vs_db_finalize(st);
    if (rc != VS_DB_DONE)
        return vs_store__err(s, rc, what);
    *out_n = n;
    return 0;
}

int vs_store_batch_wus(struct vs_store *s, int64_t batch, int64_t *out_ids, size_t max,
                       size_t *out_n)
{
    struct vs_stmt *st =
        vs_store__prep(s, "SELECT id FROM workunit WHERE batch = ?1 ORDER BY id", "batch");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, batch);
    return collect_ids(s, st, out_ids, max, out_n, "batch");
}

int vs_store_purge_candidates(struct vs_store *s, int64_t before, int64_t *out_ids, size_t max,
                              size_t *out_n)
{
    /* BOINC-COMPAT (db_purge): only workunits whose files are gone. */
    struct vs_stmt *st =
        vs_store__prep(s,
                       "SELECT w.id FROM workunit w WHERE w.file_delete_state = 2"
                       " AND w.mod_time < ?1 AND NOT EXISTS (SELECT 1 FROM result r"
                       "  WHERE r.workunitid = w.id AND r.server_state <> 5)"
                       " ORDER BY w.id LIMIT ?2",
                       "purge");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, before);
    vs_db_bind_int64(st, 2, (int64_t)max);
    return collect_ids(s, st, out_ids, max, out_n, "purge");
}

int vs_store_workunit_delete(struct vs_store *s, int64_t wuid)
{
    static const char *const sql[] = {
        "DELETE FROM result WHERE workunitid = ?1",
        "DELETE FROM assignment WHERE workunitid = ?1",
        "DELETE FROM wu_file WHERE workunitid = ?1",
        "DELETE FROM workunit WHERE id = ?1",
    };
    int rc = vs_store__enter(s);
    if (rc)
        return rc;
    for (size_t i = 0; rc == 0 && i < sizeof(sql) / sizeof(sql[0]); i++)
        rc = change2(s, sql[i], wuid, 0, "delete workunit", NULL);
    return vs_store__leave(s, rc);
}

int vs_store_host_set_max_results_day(struct vs_store *s, int64_t id, int value)
{
    int64_t n = 0;
    int rc = change2(s, "UPDATE host SET _max_results_day = ?2 WHERE id = ?1", id, value,
                     "host ban", &n);
    if (rc == 0 && n == 0)
        rc = VS_ENOTFOUND;
    return rc;
}
