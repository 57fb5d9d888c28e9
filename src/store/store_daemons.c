/*
 * SQLite backend: what the back-end daemons need: their scans of
 * workunits and results (transitioner, validator/assimilator queues, file
 * deleter), the retry of failed deletions, host_app_version records, the
 * daemon_status table and the counts behind `volsched status`.
 */
#include <string.h>

#include "store/store_int.h"
#include "volsched/alloc.h"
#include "volsched/str.h"

int vs_store_file_delete_retry(struct vs_store *s, int64_t *out_n)
{
    int rc = vs_store__enter(s);
    if (rc)
        return rc;
    int64_t n = 0;
    const enum sq_stmt ids[] = {SQ_DELETE_RETRY_WU, SQ_DELETE_RETRY_RESULT};
    for (size_t i = 0; i < 2 && rc == 0; i++) {
        struct vs_stmt *st = vs_store__stmt(s, ids[i]);
        if (!st) {
            rc = VS_ESTORE;
            break;
        }
        rc = vs_store__step_done(s, st, "delete retry");
        if (rc == 0)
            n += vs_db_changes(s);
    }
    rc = vs_store__leave(s, rc);
    if (rc == 0 && out_n)
        *out_n = n;
    return rc;
}

/* ------------------------------------------------------------------------ */
/* host_app_version                                                          */

/* One host_app_version row, in SQ_HAV_GET's and SQ_HAVS_OF_HOST's column
 * order. */
static void read_hav(struct vs_stmt *st, struct vs_host_app_version *out)
{
    out->host_id = vs_db_column_int64(st, 0);
    out->app_version_id = vs_db_column_int64(st, 1);
    out->max_jobs_per_day = vs_db_column_int(st, 2);
    out->n_jobs_today = vs_db_column_int(st, 3);
    out->consecutive_valid = vs_db_column_int(st, 4);
    out->turnaround_n = vs_db_column_double(st, 5);
    out->turnaround_avg = vs_db_column_double(st, 6);
}

int vs_store_hav_get(struct vs_store *s, int64_t host_id, int64_t app_version_id,
                     struct vs_host_app_version *out)
{
    struct vs_stmt *st = vs_store__stmt(s, SQ_HAV_GET);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, host_id);
    vs_db_bind_int64(st, 2, app_version_id);
    int rc = vs_db_step(st);
    if (rc == VS_DB_ROW)
        read_hav(st, out);
    return vs_store__one_row_end(s, st, rc, "host_app_version");
}

int vs_store_hav_put(struct vs_store *s, const struct vs_host_app_version *h)
{
    struct vs_stmt *st = vs_store__stmt(s, SQ_HAV_PUT);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, h->host_id);
    vs_db_bind_int64(st, 2, h->app_version_id);
    vs_db_bind_int(st, 3, h->max_jobs_per_day);
    vs_db_bind_int(st, 4, h->n_jobs_today);
    vs_db_bind_int(st, 5, h->consecutive_valid);
    vs_db_bind_double(st, 6, h->turnaround_n);
    vs_db_bind_double(st, 7, h->turnaround_avg);
    return vs_store__step_done(s, st, "host_app_version");
}

int vs_store_havs_of_host(struct vs_store *s, int64_t host_id, vs_store_hav_fn fn, void *ctx)
{
    struct vs_stmt *st = vs_store__stmt(s, SQ_HAVS_OF_HOST);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, host_id);
    int rc, step;
    /* Rows are copied out one at a time; fn must not use this handle. */
    while ((step = vs_db_step(st)) == VS_DB_ROW) {
        struct vs_host_app_version h;
        read_hav(st, &h);
        if ((rc = fn(ctx, &h)) != 0) {
            vs_db_reset(st);
            return rc;
        }
    }
    vs_db_reset(st);
    return step == VS_DB_DONE ? 0 : vs_store__err(s, step, "host_app_version");
}

int vs_store_hav_new_day(struct vs_store *s, int64_t host_id, int64_t day_start)
{
    struct vs_stmt *st = vs_store__stmt(s, SQ_HAV_NEW_DAY);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, host_id);
    vs_db_bind_int64(st, 2, day_start);
    return vs_store__step_done(s, st, "host_app_version new day");
}

/* ------------------------------------------------------------------------ */
/* daemon_status                                                             */

static void read_status(struct vs_stmt *st, struct vs_daemon_status *d)
{
    memset(d, 0, sizeof(*d));
    const char *t = (const char *)vs_db_column_text(st, 0);
    vs_store__copy(d->name, t ? t : "", sizeof(d->name));
    d->last_run = vs_db_column_int64(st, 1);
    d->last_work = vs_db_column_int64(st, 2);
    d->total_work = vs_db_column_int64(st, 3);
    d->last_error_time = vs_db_column_int64(st, 4);
    t = (const char *)vs_db_column_text(st, 5);
    vs_store__copy(d->last_error, t ? t : "", sizeof(d->last_error));
    d->retry_time = vs_db_column_int64(st, 6);
}

int vs_store_daemon_status_get(struct vs_store *s, const char *name, struct vs_daemon_status *out)
{
    if (!name || !*name)
        return VS_EINVAL;
    struct vs_stmt *st = vs_store__stmt(s, SQ_DAEMON_GET);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_text(st, 1, name, -1, VS_DB_STATIC);
    int rc = vs_db_step(st);
    if (rc == VS_DB_ROW)
        read_status(st, out);
    return vs_store__one_row_end(s, st, rc, "daemon_status");
}

int vs_store_daemon_status_put(struct vs_store *s, const struct vs_daemon_status *d)
{
    if (!d->name[0])
        return VS_EINVAL;
    struct vs_stmt *st = vs_store__stmt(s, SQ_DAEMON_PUT);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_text(st, 1, d->name, -1, VS_DB_STATIC);
    vs_db_bind_int64(st, 2, d->last_run);
    vs_db_bind_int64(st, 3, d->last_work);
    vs_db_bind_int64(st, 4, d->total_work);
    vs_db_bind_int64(st, 5, d->last_error_time);
    vs_db_bind_text(st, 6, d->last_error, -1, VS_DB_STATIC);
    vs_db_bind_int64(st, 7, d->retry_time);
    return vs_store__step_done(s, st, "daemon_status");
}

int vs_store_daemon_status_list(struct vs_store *s, vs_store_daemon_status_fn fn, void *ctx)
{
    struct vs_stmt *st = vs_store__stmt(s, SQ_DAEMON_ALL);
    if (!st)
        return VS_ESTORE;
    int rc, ret = 0;
    while ((rc = vs_db_step(st)) == VS_DB_ROW) {
        struct vs_daemon_status d;
        read_status(st, &d);
        if ((ret = fn(ctx, &d)) != 0)
            break;
    }
    vs_db_reset(st);
    if (ret)
        return ret;
    return rc == VS_DB_DONE ? 0 : vs_store__err(s, rc, "daemon_status");
}

/* ------------------------------------------------------------------------ */
/* Counts                                                                    */

/* Runs sql (not cached: status is rare) and calls row() for each row. */
static int each_row(struct vs_store *s, const char *sql,
                    void (*row)(struct vs_stmt *st, struct vs_store_counts *c),
                    struct vs_store_counts *c)
{
    struct vs_stmt *st = NULL;
    int rc = vs_db_prepare(s, sql, &st);
    if (rc != VS_DB_OK)
        return vs_store__err(s, rc, "counts");
    while ((rc = vs_db_step(st)) == VS_DB_ROW)
        row(st, c);
    vs_db_finalize(st);
    return rc == VS_DB_DONE ? 0 : vs_store__err(s, rc, "counts");
}

static void wu_row(struct vs_stmt *st, struct vs_store_counts *c)
{
    struct vs_workunit wu;
    memset(&wu, 0, sizeof(wu));
    wu.need_validate = vs_db_column_int(st, 0);
    wu.canonical_resultid = vs_db_column_int64(st, 1);
    wu.error_mask = vs_db_column_int(st, 2);
    wu.assimilate_state = vs_db_column_int(st, 3);
    wu.file_delete_state = vs_db_column_int(st, 4);
    int64_t n = vs_db_column_int64(st, 5);
    c->workunits += n;
    c->wu_phase[vs_workunit_phase(&wu)] += n;
    for (int b = 0; b < 6; b++)
        if (wu.error_mask & (1 << b))
            c->wu_error_mask[b] += n;
    if (wu.file_delete_state == VS_FILE_DELETE_ERROR)
        c->wu_file_delete_error += n;
}

static void result_row(struct vs_stmt *st, struct vs_store_counts *c)
{
    int state = vs_db_column_int(st, 0);
    int outcome = vs_db_column_int(st, 1);
    int validate = vs_db_column_int(st, 2);
    int fds = vs_db_column_int(st, 3);
    int64_t n = vs_db_column_int64(st, 4);
    c->results += n;
    if (state >= 0 && state < 6 && outcome >= 0 && outcome < 8)
        c->result_state_outcome[state][outcome] += n;
    if (state == VS_RESULT_SERVER_STATE_OVER && outcome == VS_RESULT_OUTCOME_SUCCESS &&
        validate >= 0 && validate < 6)
        c->result_validate[validate] += n;
    if (fds == VS_FILE_DELETE_ERROR)
        c->result_file_delete_error += n;
}

static int count_one(struct vs_store *s, const char *sql, int64_t *out)
{
    struct vs_stmt *st = NULL;
    int rc = vs_db_prepare(s, sql, &st);
    if (rc != VS_DB_OK)
        return vs_store__err(s, rc, "counts");
    rc = vs_db_step(st);
    if (rc == VS_DB_ROW)
        *out = vs_db_column_int64(st, 0);
    vs_db_finalize(st);
    return rc == VS_DB_ROW ? 0 : vs_store__err(s, rc, "counts");
}

int vs_store_counts(struct vs_store *s, struct vs_store_counts *out)
{
    struct vs_store_counts c;
    memset(&c, 0, sizeof(c));
    /* One read transaction: the counts are of one moment. */
    int rc = vs_db_exec(s, s->txn_depth ? "SAVEPOINT counts" : "BEGIN");
    if (rc != VS_DB_OK)
        return vs_store__err(s, rc, "counts");
    rc = each_row(s,
                  "SELECT need_validate, canonical_resultid <> 0, error_mask, assimilate_state, "
                  "file_delete_state, count(*) FROM workunit GROUP BY 1, 2, 3, 4, 5",
                  wu_row, &c);
    if (rc == 0)
        rc = each_row(s,
                      "SELECT server_state, outcome, validate_state, file_delete_state, count(*) "
                      "FROM result GROUP BY 1, 2, 3, 4",
                      result_row, &c);
    if (rc == 0)
        rc = count_one(s, "SELECT count(*) FROM host", &c.hosts);
    if (rc == 0)
        rc = count_one(s, "SELECT count(*) FROM \"user\"", &c.users);
    if (rc == 0)
        rc = count_one(s, "SELECT count(*) FROM team", &c.teams);
    if (rc == 0)
        rc = count_one(s, "SELECT count(*) FROM app", &c.apps);
    if (rc == 0)
        rc = count_one(s,
                       "SELECT count(*) FROM result r JOIN workunit w ON w.id = r.workunitid "
                       "WHERE r.server_state = 2 AND w.transitioner_flags = 0",
                       &c.job_cache);
    (void)vs_db_exec(s, s->txn_depth ? "RELEASE counts" : "COMMIT");
    if (rc == 0)
        *out = c;
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Transitioner scan                                                         */

int vs_store__read_wu_page(struct vs_store *s, struct vs_stmt *st, int limit, const char *what,
                           struct vs_workunit **out, size_t *out_n)
{
    struct vs_workunit *wus = vs_xcalloc((size_t)limit, sizeof(*wus));
    size_t nwus = 0;
    int rc = VS_DB_DONE;
    while (nwus < (size_t)limit && (rc = vs_db_step(st)) == VS_DB_ROW)
        vs_store__read_row(st, 0, &vs_store__workunit, &wus[nwus++]);
    if (nwus == (size_t)limit)
        rc = VS_DB_DONE;
    vs_db_reset(st);
    *out = wus;
    *out_n = nwus;
    return rc == VS_DB_DONE ? 0 : vs_store__err(s, rc, what);
}

/* Calls fn for each of the page's workunits with its results, then frees the
 * page. The page was read first because fn writes to the rows its scan
 * reads. */
static int each_wu_with_results(struct vs_store *s, struct vs_workunit *wus, size_t nwus, int ret,
                                vs_store_transition_fn fn, void *ctx)
{
    for (size_t i = 0; ret == 0 && i < nwus; i++) {
        struct vs_result_vec rv = {0};
        ret = vs_store_results_of_wu(s, wus[i].id, vs_result_vec_add, &rv);
        if (ret == 0)
            ret = fn(ctx, &wus[i], rv.v, rv.n);
        vs_result_vec_cleanup(&rv);
    }
    for (size_t i = 0; i < nwus; i++)
        vs_workunit_cleanup(&wus[i]);
    vs_free(wus);
    return ret;
}

int vs_store_wus_to_transition(struct vs_store *s, int64_t now, int limit,
                               vs_store_transition_fn fn, void *ctx)
{
    if (limit <= 0 || !fn)
        return VS_EINVAL;
    struct vs_stmt *st = vs_store__stmt(s, SQ_WUS_TO_TRANSITION);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, now);
    vs_db_bind_int(st, 2, limit);
    vs_db_bind_int(st, 3, s->mod_n);
    vs_db_bind_int(st, 4, s->mod_i);
    /* Collect the page first: fn writes to the rows this scan reads. */
    struct vs_workunit *wus;
    size_t nwus;
    int ret = vs_store__read_wu_page(s, st, limit, "transition scan", &wus, &nwus);
    return each_wu_with_results(s, wus, nwus, ret, fn, ctx);
}

/* ------------------------------------------------------------------------ */
/* Daemon queues                                                             */

int vs_store_wus_in_queue(struct vs_store *s, int queue, int64_t appid, int limit,
                          vs_store_transition_fn fn, void *ctx)
{
    if (limit <= 0 || !fn)
        return VS_EINVAL;
    enum sq_stmt id;
    switch (queue) {
    case VS_WU_QUEUE_VALIDATE:
        id = SQ_WUS_TO_VALIDATE;
        break;
    case VS_WU_QUEUE_ASSIMILATE:
        id = SQ_WUS_TO_ASSIMILATE;
        break;
    case VS_WU_QUEUE_FILE_DELETE:
        id = SQ_WUS_TO_DELETE;
        break;
    default:
        return VS_EINVAL;
    }
    struct vs_stmt *st = vs_store__stmt(s, id);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, appid);
    vs_db_bind_int(st, 2, limit);
    vs_db_bind_int(st, 3, s->mod_n);
    vs_db_bind_int(st, 4, s->mod_i);
    struct vs_workunit *wus = NULL;
    size_t nwus = 0, cap = 0;
    int rc;
    while ((rc = vs_db_step(st)) == VS_DB_ROW) {
        if (nwus == cap) {
            cap = cap ? 2 * cap : 16;
            wus = vs_xreallocarray(wus, cap, sizeof(*wus));
        }
        vs_store__read_row(st, 0, &vs_store__workunit, &wus[nwus++]);
    }
    vs_db_reset(st);
    int ret = rc == VS_DB_DONE ? 0 : vs_store__err(s, rc, "queue scan");
    return each_wu_with_results(s, wus, nwus, ret, fn, ctx);
}

int vs_store_results_to_delete(struct vs_store *s, int limit, vs_store_result_fn fn, void *ctx)
{
    if (limit <= 0 || !fn)
        return VS_EINVAL;
    struct vs_stmt *st = vs_store__stmt(s, SQ_RESULTS_TO_DELETE);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int(st, 1, limit);
    vs_db_bind_int(st, 2, s->mod_n);
    vs_db_bind_int(st, 3, s->mod_i);
    struct vs_result_vec rv = {0};
    int rc;
    while ((rc = vs_db_step(st)) == VS_DB_ROW) {
        struct vs_result r;
        vs_store__read_row(st, 0, &vs_store__result, &r);
        /* Takes ownership of r's heap strings (no copy, no free). */
        if (rv.n == rv.cap) {
            rv.cap = rv.cap ? 2 * rv.cap : 16;
            rv.v = vs_xreallocarray(rv.v, rv.cap, sizeof(*rv.v));
        }
        rv.v[rv.n++] = r;
    }
    vs_db_reset(st);
    int ret = rc == VS_DB_DONE ? 0 : vs_store__err(s, rc, "delete scan");
    for (size_t i = 0; ret == 0 && i < rv.n; i++)
        ret = fn(ctx, &rv.v[i]);
    vs_result_vec_cleanup(&rv);
    return ret;
}
