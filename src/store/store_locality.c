/*
 * Locality scheduling's queries (seed 001; see store.h). A file's
 * workunits are a range of the unique workunit name index, so every query
 * starts from that range (CROSS JOIN keeps SQLite from starting at the
 * unsent-results index instead, which would read every unsent result of
 * the project to find the few of one file).
 */
#include <string.h>

#include "store/store_int.h"
#include "volsched/alloc.h"
#include "volsched/locality.h"

int vs_store__build_sql_locality(enum sq_stmt id, struct vs_buf *b)
{
    char *r = NULL, *w = NULL;
    int rc;
    switch (id) {
    case SQ_LOC_MAX_SENT:
        rc = vs_buf_puts(b, "SELECT coalesce(max(r.id), 0) FROM workunit w CROSS JOIN result r "
                            "ON r.workunitid = w.id WHERE w.name >= ?1 AND w.name < ?2 AND "
                            "r.userid = ?3");
        break;
    case SQ_LOC_UNSENT:
    case SQ_LOC_UNSENT_ALL: {
        /* Each workunit's lowest unsent result after ?3 is chosen over ids
         * alone (SQLite's bare column beside min() in the GROUP BY), then
         * the chosen rows are read whole: grouping and sorting the whole
         * rows of every result of the file (their XML documents) was a
         * quarter of the query's time. SQ_LOC_UNSENT leaves out the
         * workunits the user (?4) or host (?5) holds a result of; without
         * anyone to leave out (SQ_LOC_UNSENT_ALL) there is no per-row
         * subquery and the limit is ?4. */
        bool excl = id == SQ_LOC_UNSENT;
        r = vs_store__select_list(&vs_store__result, "r");
        w = vs_store__select_list(&vs_store__workunit, "w");
        rc = vs_buf_printf(b,
                           "SELECT %s, %s, r.id FROM (SELECT min(u.id) AS rid FROM workunit v "
                           "CROSS JOIN result u ON u.workunitid = v.id WHERE v.name >= ?1 AND "
                           "v.name < ?2 AND v.transitioner_flags = 0 AND u.server_state = %d AND "
                           "u.id > ?3 %s GROUP BY v.id ORDER BY rid LIMIT %s) AS pick CROSS JOIN "
                           "result r ON r.id = pick.rid CROSS JOIN workunit w ON "
                           "w.id = r.workunitid ORDER BY r.id",
                           r, w, VS_RESULT_SERVER_STATE_UNSENT,
                           excl ? "AND NOT EXISTS (SELECT 1 FROM result x WHERE x.workunitid = "
                                  "v.id AND ((?4 > 0 AND x.userid = ?4) OR (?5 > 0 AND "
                                  "x.hostid = ?5)))"
                                : "",
                           excl ? "?6" : "?4");
        break;
    }
    case SQ_LOC_KNOWN:
        rc = vs_buf_puts(b, "SELECT EXISTS(SELECT 1 FROM workunit WHERE name >= ?1 AND "
                            "name < ?2)");
        break;
    case SQ_LOC_FILES_WITH_WORK:
        /* The unsent-results index (res_unsent) gives the candidates; the
         * file is the workunit name's part before the first "__". */
        rc = vs_buf_printf(b,
                           "SELECT f FROM (SELECT substr(w.name, 1, instr(w.name, '__') - 1) "
                           "AS f FROM result r JOIN workunit w ON w.id = r.workunitid WHERE "
                           "r.server_state = %d AND w.transitioner_flags = 0 AND "
                           "instr(w.name, '__') > 1) WHERE f > ?1 GROUP BY f ORDER BY f "
                           "LIMIT ?2",
                           VS_RESULT_SERVER_STATE_UNSENT);
        break;
    default:
        rc = vs_store__build_sql_cluster(id, b);
    }
    vs_free(r);
    vs_free(w);
    return rc;
}

/* Prepares slot id with the workunit-name range of file bound to ?1, ?2. */
static int range_stmt(struct vs_store *s, enum sq_stmt id, const char *file, struct vs_stmt **out)
{
    char lo[VS_LOC_NAME_MAX + 3], hi[VS_LOC_NAME_MAX + 3];
    if (vs_loc_wu_range(file, lo, hi, sizeof(lo)) != 0)
        return VS_EINVAL;
    struct vs_stmt *st = vs_store__stmt(s, id);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_text(st, 1, lo, -1, VS_DB_TRANSIENT);
    vs_db_bind_text(st, 2, hi, -1, VS_DB_TRANSIENT);
    *out = st;
    return 0;
}

int vs_store_loc_max_sent(struct vs_store *s, const char *file, int64_t userid, int64_t *out_id)
{
    struct vs_stmt *st;
    int rc = range_stmt(s, SQ_LOC_MAX_SENT, file, &st);
    if (rc)
        return rc;
    vs_db_bind_int64(st, 3, userid);
    return vs_store__one_i64(s, st, out_id);
}

int vs_store_loc_unsent(struct vs_store *s, const char *file, int64_t after_id, int64_t excl_userid,
                        int64_t excl_hostid, int limit, vs_store_job_fn fn, void *ctx)
{
    if (limit <= 0 || !fn)
        return VS_EINVAL;
    struct vs_stmt *st;
    bool excl = excl_userid > 0 || excl_hostid > 0;
    int rc = range_stmt(s, excl ? SQ_LOC_UNSENT : SQ_LOC_UNSENT_ALL, file, &st);
    if (rc)
        return rc;
    vs_db_bind_int64(st, 3, after_id);
    if (excl) {
        vs_db_bind_int64(st, 4, excl_userid);
        vs_db_bind_int64(st, 5, excl_hostid);
    }
    vs_db_bind_int(st, excl ? 6 : 4, limit);
    return vs_store__job_rows(s, st, fn, ctx, NULL, NULL, "locality unsent");
}

int vs_store_loc_file_known(struct vs_store *s, const char *file, bool *out)
{
    struct vs_stmt *st;
    int rc = range_stmt(s, SQ_LOC_KNOWN, file, &st);
    if (rc)
        return rc;
    int64_t v = 0;
    rc = vs_store__one_i64(s, st, &v);
    if (rc == 0)
        *out = v != 0;
    return rc;
}

int vs_store_loc_files_with_work(struct vs_store *s, const char *after, int limit,
                                 vs_store_name_fn fn, void *ctx)
{
    if (limit <= 0 || !fn)
        return VS_EINVAL;
    struct vs_stmt *st = vs_store__stmt(s, SQ_LOC_FILES_WITH_WORK);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_text(st, 1, after ? after : "", -1, VS_DB_TRANSIENT);
    vs_db_bind_int(st, 2, limit);
    int rc, ret = 0;
    while ((rc = vs_db_step(st)) == VS_DB_ROW) {
        const char *f = (const char *)vs_db_column_text(st, 0);
        if (f && (ret = fn(ctx, f)) != 0)
            break;
    }
    vs_db_reset(st);
    if (ret == 0 && rc != VS_DB_DONE)
        return vs_store__err(s, rc, "locality files with work");
    return ret;
}
