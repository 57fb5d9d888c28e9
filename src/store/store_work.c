/*
 * SQLite backend: workunits, assignments and results, the feeder's scan, the
 * scheduler's atomic claim and result reports (the daemons' scans are in
 * store_daemons.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_int.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/str.h"

/* ------------------------------------------------------------------------ */
/* Workunits and assignments                                                 */

/* A new row's create and mod times default to now. */
static void stamp(int64_t *create_time, int64_t *mod_time)
{
    int64_t now = vs_store__now();
    if (!*create_time)
        *create_time = now;
    if (!*mod_time)
        *mod_time = now;
}

int vs_store_workunit_add(struct vs_store *s, struct vs_workunit *wu)
{
    return vs_store_workunit_add_near(s, wu, NULL);
}

int vs_store_workunit_add_near(struct vs_store *s, struct vs_workunit *wu, const char *near)
{
    if (!wu->name[0] || !wu->appid || !wu->xml_doc)
        return VS_EINVAL;
    stamp(&wu->create_time, &wu->mod_time);
    /* The row and its inputs (wu_file) together: a transaction of its own,
     * or the caller's. Inside the caller's no savepoint (on SQLite one
     * cost three times the insert): a clash of the name writes nothing,
     * and after any other failure the caller rolls its level back. */
    bool own = !vs_store_in_transaction(s);
    int rc = own ? vs_store__enter(s) : 0;
    if (rc)
        return rc;
    rc = vs_store__add_near(s, false, wu, near);
    if (rc == 0)
        rc = vs_store__wu_files_add(s, wu);
    return own ? vs_store__leave(s, rc) : rc;
}

int vs_store_workunits_add(struct vs_store *s, struct vs_workunit *const *wus, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!wus[i]->name[0] || !wus[i]->appid || !wus[i]->xml_doc)
            return VS_EINVAL;
        stamp(&wus[i]->create_time, &wus[i]->mod_time);
    }
    int rc = vs_store__enter(s);
    if (rc)
        return rc;
    /* SQLite places rows by id (vs_store__add_near): a statement each, as
     * vs_store_workunit_add; a backend with a bulk step takes them at once,
     * and then their inputs (wu_file) at once too. */
    if (s->ops->cluster_ids || !s->ops->insert_many) {
        for (size_t i = 0; rc == 0 && i < n; i++) {
            rc = vs_store__add_near(s, false, wus[i], NULL);
            if (rc == 0)
                rc = vs_store__wu_files_add(s, wus[i]);
        }
    } else {
        rc = vs_store__insert_many(s, SQ_WORKUNIT_INSERT, &vs_store__workunit, (void *const *)wus,
                                   n);
        if (rc == 0)
            rc = vs_store__wu_files_add_many(s, wus, n);
    }
    return vs_store__leave(s, rc);
}

int vs_store_workunit_get(struct vs_store *s, int64_t id, struct vs_workunit *out)
{
    return vs_store__get_i64(s, SQ_WORKUNIT_GET, &vs_store__workunit, id, out);
}

int vs_store_workunit_by_name(struct vs_store *s, const char *name, struct vs_workunit *out)
{
    return vs_store__get_text(s, SQ_WORKUNIT_BY_NAME, &vs_store__workunit, name, out);
}

int vs_store_workunit_update(struct vs_store *s, const struct vs_workunit *wu)
{
    if (!wu->id || !wu->xml_doc)
        return VS_EINVAL;
    return vs_store__update(s, SQ_WORKUNIT_UPDATE, &vs_store__workunit, wu);
}

int vs_store_assignment_add(struct vs_store *s, struct vs_assignment *a)
{
    if (!a->workunitid || a->target_type < VS_ASSIGN_NONE || a->target_type > VS_ASSIGN_TEAM)
        return VS_EINVAL;
    if (!a->create_time)
        a->create_time = vs_store__now();
    return vs_store__insert(s, SQ_ASSIGNMENT_INSERT, &vs_store__assignment, a);
}

int vs_store_assignments(struct vs_store *s, int target_type, int multi, vs_store_assignment_fn fn,
                         void *ctx)
{
    struct vs_stmt *st = vs_store__stmt(s, SQ_ASSIGNMENTS);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int(st, 1, target_type);
    vs_db_bind_int(st, 2, multi);
    int rc, ret = 0;
    while ((rc = vs_db_step(st)) == VS_DB_ROW) {
        struct vs_assignment a;
        vs_store__read_row(st, 0, &vs_store__assignment, &a);
        if ((ret = fn(ctx, &a)) != 0)
            break;
    }
    vs_db_reset(st);
    if (ret)
        return ret;
    return rc == VS_DB_DONE ? 0 : vs_store__err(s, rc, "assignment");
}

/* ------------------------------------------------------------------------ */
/* Results                                                                   */

int vs_store_result_add(struct vs_store *s, struct vs_result *r)
{
    return vs_store_result_add_near(s, r, NULL);
}

int vs_store_result_add_near(struct vs_store *s, struct vs_result *r, const char *near)
{
    if (!r->name[0] || !r->workunitid || !r->appid)
        return VS_EINVAL;
    stamp(&r->create_time, &r->mod_time);
    return vs_store__add_near(s, true, r, near);
}

int vs_store_result_get(struct vs_store *s, int64_t id, struct vs_result *out)
{
    return vs_store__get_i64(s, SQ_RESULT_GET, &vs_store__result, id, out);
}

int vs_store_result_by_name(struct vs_store *s, const char *name, struct vs_result *out)
{
    return vs_store__get_text(s, SQ_RESULT_BY_NAME, &vs_store__result, name, out);
}

int vs_store_result_state_by_name(struct vs_store *s, const char *name, struct vs_result *out)
{
    if (!name || !out)
        return VS_EINVAL;
    memset(out, 0, sizeof(*out));
    struct vs_stmt *q = vs_store__stmt(s, SQ_REPORT_STATE);
    if (!q)
        return VS_ESTORE;
    vs_db_bind_text(q, 1, name, -1, VS_DB_STATIC);
    int qs = vs_db_step(q);
    if (qs == VS_DB_ROW) {
        out->id = vs_db_column_int64(q, 0);
        out->hostid = vs_db_column_int64(q, 1);
        out->server_state = vs_db_column_int(q, 2);
        out->outcome = vs_db_column_int(q, 3);
        out->received_time = vs_db_column_int64(q, 4);
        out->workunitid = vs_db_column_int64(q, 5);
        out->userid = vs_db_column_int64(q, 6);
        out->app_version_id = vs_db_column_int64(q, 7);
    }
    return vs_store__one_row_end(s, q, qs, "result state");
}

int vs_store_result_update(struct vs_store *s, const struct vs_result *r)
{
    if (!r->id)
        return VS_EINVAL;
    return vs_store__update(s, SQ_RESULT_UPDATE, &vs_store__result, r);
}

int vs_store__scan_results(struct vs_store *s, struct vs_stmt *st, vs_store_result_fn fn, void *ctx)
{
    int rc, ret = 0;
    while ((rc = vs_db_step(st)) == VS_DB_ROW) {
        struct vs_result r;
        vs_store__read_row(st, 0, &vs_store__result, &r);
        ret = fn(ctx, &r);
        vs_result_cleanup(&r);
        if (ret)
            break;
    }
    vs_db_reset(st);
    if (ret)
        return ret;
    return rc == VS_DB_DONE ? 0 : vs_store__err(s, rc, "result");
}

int vs_store_results_of_wu(struct vs_store *s, int64_t wuid, vs_store_result_fn fn, void *ctx)
{
    struct vs_stmt *st = vs_store__stmt(s, SQ_RESULTS_OF_WU);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, wuid);
    return vs_store__scan_results(s, st, fn, ctx);
}

int vs_store_results_in_progress(struct vs_store *s, int64_t hostid, vs_store_result_fn fn,
                                 void *ctx)
{
    struct vs_stmt *st = vs_store__stmt(s, SQ_RESULTS_IN_PROGRESS);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, hostid);
    return vs_store__scan_results(s, st, fn, ctx);
}

int vs_store__one_i64(struct vs_store *s, struct vs_stmt *st, int64_t *out)
{
    int rc = vs_db_step(st);
    if (rc == VS_DB_ROW)
        *out = vs_db_column_int64(st, 0);
    vs_db_reset(st);
    return rc == VS_DB_ROW ? 0 : vs_store__err(s, rc, "count");
}

/* One count with one or two int64 keys. */
static int count2(struct vs_store *s, enum sq_stmt id, int64_t a, int64_t b, int64_t *out)
{
    struct vs_stmt *st = vs_store__stmt(s, id);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, a);
    vs_db_bind_int64(st, 2, b);
    return vs_store__one_i64(s, st, out);
}

int vs_store_host_has_wu(struct vs_store *s, int64_t hostid, int64_t wuid, bool *out)
{
    int64_t v = 0;
    int rc = count2(s, SQ_HOST_HAS_WU, hostid, wuid, &v);
    if (rc == 0)
        *out = v != 0;
    return rc;
}

int vs_store_host_count_in_progress(struct vs_store *s, int64_t hostid, int64_t *out)
{
    return count2(s, SQ_HOST_IN_PROGRESS, hostid, 0, out);
}

int vs_store_user_count_new_hosts(struct vs_store *s, int64_t userid, int64_t since, int64_t *out)
{
    return count2(s, SQ_USER_NEW_HOSTS, userid, since, out);
}

int vs_store_workunit_retry_at(struct vs_store *s, int64_t id, int64_t when, int64_t now)
{
    struct vs_stmt *st = vs_store__stmt(s, SQ_WU_RETRY_AT);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, id);
    vs_db_bind_int64(st, 2, when);
    vs_db_bind_int64(st, 3, now);
    return vs_store__step_done(s, st, "wu retry");
}

int vs_store_host_add_capped(struct vs_store *s, struct vs_host *h, int64_t since, int max_new)
{
    if (max_new <= 0)
        return vs_store_host_add(s, h);
    int rc = vs_store__enter(s);
    if (rc)
        return rc;
    int64_t n = 0;
    rc = count2(s, SQ_USER_NEW_HOSTS, h->userid, since, &n);
    if (rc == 0 && n >= max_new)
        rc = VS_ELIMIT;
    if (rc == 0)
        rc = vs_store_host_add(s, h);
    return vs_store__leave(s, rc);
}

int vs_store_count_results(struct vs_store *s, int64_t appid, int state, int64_t *out_count)
{
    enum sq_stmt id = state == VS_RESULT_SERVER_STATE_UNSENT        ? SQ_COUNT_UNSENT
                      : state == VS_RESULT_SERVER_STATE_IN_PROGRESS ? SQ_COUNT_IN_PROGRESS
                                                                    : SQ_COUNT_RESULTS;
    struct vs_stmt *st = vs_store__stmt(s, id);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int(st, 1, state);
    /* Always bound: the per-state counts test ?2 = 0 for "every app". */
    vs_db_bind_int64(st, 2, appid);
    return vs_store__one_i64(s, st, out_count);
}

int vs_store__job_rows(struct vs_store *s, struct vs_stmt *st, vs_store_job_fn fn, void *ctx,
                       struct vs_job_key *last, int *nrows, const char *what)
{
    int rc, ret = 0;
    while ((rc = vs_db_step(st)) == VS_DB_ROW) {
        struct vs_job job;
        vs_store__read_row(st, 0, &vs_store__result, &job.result);
        vs_store__read_row(st, (int)vs_store__result.ncols, &vs_store__workunit, &job.wu);
        if (last) {
            last->priority = job.result.priority;
            last->id = job.result.id;
        }
        if (nrows)
            (*nrows)++;
        ret = fn(ctx, &job);
        vs_result_cleanup(&job.result);
        vs_workunit_cleanup(&job.wu);
        if (ret)
            break;
    }
    vs_db_reset(st);
    if (ret == 0 && rc != VS_DB_DONE)
        return vs_store__err(s, rc, what);
    return ret;
}

/* One of the two statements of the feeder's scan; *left is decremented
 * per row, *last is the position of the last row. */
static int scan_unsent(struct vs_store *s, enum sq_stmt id, const struct vs_job_key *k, int *left,
                       int64_t owner, int64_t now, vs_store_job_fn fn, void *ctx,
                       struct vs_job_key *last)
{
    struct vs_stmt *st = vs_store__stmt(s, id);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int(st, 1, k->priority);
    vs_db_bind_int64(st, 2, k->id);
    vs_db_bind_int(st, 3, *left);
    vs_db_bind_int64(st, 4, owner);
    vs_db_bind_int64(st, 5, now);
    int n = 0;
    int rc = vs_store__job_rows(s, st, fn, ctx, last, &n, "unsent scan");
    *left -= n;
    return rc;
}

int vs_store_jobs_unsent(struct vs_store *s, const struct vs_job_key *after, int limit,
                         vs_store_job_fn fn, void *ctx, struct vs_job_key *out_last)
{
    /* Every lease is over at the end of time: leases are not looked at. */
    return vs_store_jobs_leasable(s, after, limit, 0, INT64_MAX, fn, ctx, out_last);
}

int vs_store_jobs_leasable(struct vs_store *s, const struct vs_job_key *after, int limit,
                           int64_t owner, int64_t now, vs_store_job_fn fn, void *ctx,
                           struct vs_job_key *out_last)
{
    if (limit <= 0 || !fn)
        return VS_EINVAL;
    struct vs_job_key k = {VS_JOB_KEY_TOP_PRIORITY, 0};
    if (after)
        k = *after;
    struct vs_job_key last = k;
    int left = limit;
    int ret = scan_unsent(s, SQ_JOBS_UNSENT, &k, &left, owner, now, fn, ctx, &last);
    if (ret == 0 && left > 0)
        ret = scan_unsent(s, SQ_JOBS_UNSENT_LOWER, &k, &left, owner, now, fn, ctx, &last);
    if (ret == 0 && out_last)
        *out_last = last;
    return ret;
}

int vs_store_unsent_newer(struct vs_store *s, int64_t after_id, int64_t *out_max_id,
                          bool *out_have_unsent, int *out_max_priority)
{
    struct vs_stmt *st = vs_store__stmt(s, SQ_UNSENT_NEWER);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, after_id);
    int rc = vs_db_step(st);
    int64_t max_id = 0;
    bool have = false;
    int prio = 0;
    if (rc == VS_DB_ROW) {
        if (vs_db_column_type(st, 0) != VS_DB_NULL)
            max_id = vs_db_column_int64(st, 0);
        have = vs_db_column_type(st, 1) != VS_DB_NULL;
        prio = have ? vs_db_column_int(st, 1) : 0;
    }
    rc = vs_store__one_row_end(s, st, rc, "unsent newer");
    if (rc)
        return rc;
    *out_max_id = max_id;
    *out_have_unsent = have;
    *out_max_priority = prio;
    return 0;
}

int vs_store_results_claim(struct vs_store *s, int64_t hostid, int64_t userid, int64_t teamid,
                           int64_t now, struct vs_claim *claims, size_t n, size_t *out_nclaimed)
{
    if (!hostid || (n && !claims))
        return VS_EINVAL;
    int rc = vs_store__enter(s);
    if (rc)
        return rc;
    size_t nclaimed = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct vs_claim *c = &claims[i];
        c->claimed = false;
        struct vs_stmt *st = vs_store__stmt(s, SQ_CLAIM);
        if (!st) {
            rc = VS_ESTORE;
            break;
        }
        vs_db_bind_int64(st, 1, c->result_id);
        vs_db_bind_int64(st, 2, hostid);
        vs_db_bind_int64(st, 3, userid);
        vs_db_bind_int64(st, 4, teamid);
        vs_db_bind_int64(st, 5, now);
        vs_db_bind_int64(st, 6, c->report_deadline);
        vs_db_bind_int64(st, 7, c->app_version_id);
        vs_db_bind_int(st, 8, c->app_version_num);
        vs_db_bind_double(st, 9, c->flops_estimate);
        vs_db_bind_int(st, 10, c->one_per_user);
        vs_db_bind_int(st, 11, c->host_max_in_progress);
        vs_db_bind_int(st, 12, c->one_per_host);
        vs_db_bind_int(st, 13, c->day_quota);
        vs_db_bind_int64(st, 14, c->lease_owner);
        rc = vs_store__step_done(s, st, "claim");
        if (rc != 0)
            break;
        /* Zero rows changed: it was not UNSENT any more, this host or user
         * holds a result of its workunit already, or the host is at its
         * in-progress cap or daily quota. Not an error. */
        if (vs_db_changes(s) != 1)
            continue;
        if (c->day_quota > 0) {
            st = vs_store__stmt(s, SQ_HAV_CLAIMED);
            if (!st) {
                rc = VS_ESTORE;
                break;
            }
            vs_db_bind_int64(st, 1, hostid);
            vs_db_bind_int64(st, 2, c->app_version_id);
            rc = vs_store__step_done(s, st, "claim quota");
            if (rc != 0)
                break;
        }
        st = vs_store__stmt(s, c->workunit_id > 0 ? SQ_CLAIM_WU_ID : SQ_CLAIM_WU);
        if (!st) {
            rc = VS_ESTORE;
            break;
        }
        vs_db_bind_int64(st, 1, c->workunit_id > 0 ? c->workunit_id : c->result_id);
        vs_db_bind_int64(st, 2, c->report_deadline);
        vs_db_bind_int64(st, 3, now);
        vs_db_bind_int(st, 4, c->hr_class);
        rc = vs_store__step_done(s, st, "claim wu");
        if (rc != 0)
            break;
        c->claimed = true;
        nclaimed++;
    }
    rc = vs_store__leave(s, rc);
    if (rc) {
        /* Rolled back: nothing was claimed, whatever the loop saw. */
        for (size_t i = 0; i < n; i++)
            claims[i].claimed = false;
        return rc;
    }
    if (out_nclaimed)
        *out_nclaimed = nclaimed;
    return 0;
}

struct lease_pos {
    int64_t id;
    size_t at;
};

static int cmp_lease_pos(const void *x, const void *y)
{
    const struct lease_pos *a = x, *b = y;
    return a->id < b->id ? -1 : a->id > b->id;
}

int vs_store_results_lease(struct vs_store *s, int64_t owner, int64_t now, int64_t until,
                           const int64_t *ids, size_t n, bool *out_leased, size_t *out_n)
{
    if (owner == 0 || (n && (!ids || !out_leased)))
        return VS_EINVAL;
    if (out_n)
        *out_n = 0;
    if (n == 0)
        return 0;
    struct vs_buf list;
    vs_buf_init(&list, VS_BUF_UNLIMITED);
    struct lease_pos *pos = vs_xreallocarray(NULL, n, sizeof(*pos));
    int brc = vs_buf_puts(&list, "[");
    for (size_t i = 0; i < n; i++) {
        out_leased[i] = false;
        pos[i].id = ids[i];
        pos[i].at = i;
        brc |= vs_buf_printf(&list, "%s%lld", i ? "," : "", (long long)ids[i]);
    }
    brc |= vs_buf_puts(&list, "]");
    qsort(pos, n, sizeof(*pos), cmp_lease_pos);
    /* An unlimited buffer cannot refuse (OOM aborts in the allocator). */
    int rc = VS_NEVER(brc != 0) ? VS_EINTERNAL : vs_store__enter(s);
    if (brc) {
        vs_buf_cleanup(&list);
        vs_free(pos);
        return rc;
    }
    size_t nleased = 0;
    bool entered = rc == 0; /* leave only what was entered */
    if (rc == 0) {
        struct vs_stmt *st = vs_store__stmt(s, SQ_LEASE);
        if (!st) {
            rc = VS_ESTORE;
        } else {
            vs_db_bind_text(st, 1, vs_buf_str(&list), (int)list.len, VS_DB_STATIC);
            vs_db_bind_int64(st, 2, owner);
            vs_db_bind_int64(st, 3, now);
            vs_db_bind_int64(st, 4, until);
            int step;
            while ((step = vs_db_step(st)) == VS_DB_ROW) {
                struct lease_pos key = {.id = vs_db_column_int64(st, 0)};
                struct lease_pos *hit = bsearch(&key, pos, n, sizeof(*pos), cmp_lease_pos);
                if (hit && !out_leased[hit->at]) {
                    out_leased[hit->at] = true;
                    nleased++;
                }
            }
            vs_db_reset(st);
            if (step != VS_DB_DONE)
                rc = vs_store__err(s, step, "lease");
        }
    }
    if (entered)
        rc = vs_store__leave(s, rc);
    vs_buf_cleanup(&list);
    vs_free(pos);
    if (rc) {
        for (size_t i = 0; i < n; i++)
            out_leased[i] = false;
        return rc;
    }
    if (out_n)
        *out_n = nleased;
    return 0;
}

int vs_store_results_resend(struct vs_store *s, int64_t hostid, int64_t now,
                            const struct vs_resend_item *items, size_t n)
{
    if (n == 0)
        return 0;
    /* A rare path (a client lost a reply): statements prepared per call. */
    struct vs_stmt *res = NULL, *wu = NULL;
    char sql[256];
    snprintf(sql, sizeof(sql),
             "UPDATE result SET sent_time = ?3, report_deadline = ?4, mod_time = ?5 "
             "WHERE id = ?1 AND hostid = ?2 AND server_state = %d",
             VS_RESULT_SERVER_STATE_IN_PROGRESS);
    int rc = vs_store__enter(s);
    if (rc)
        return rc;
    if (vs_db_prepare(s, sql, &res) != VS_DB_OK ||
        vs_db_prepare(s,
                      "UPDATE workunit SET transition_time = min(transition_time, ?2), "
                      "mod_time = ?3 WHERE id = ?1",
                      &wu) != VS_DB_OK)
        rc = vs_store__err(s, vs_db_errcode(s), "resend");
    for (size_t i = 0; i < n && rc == 0; i++) {
        vs_db_bind_int64(res, 1, items[i].result_id);
        vs_db_bind_int64(res, 2, hostid);
        vs_db_bind_int64(res, 3, items[i].sent_time);
        vs_db_bind_int64(res, 4, items[i].report_deadline);
        vs_db_bind_int64(res, 5, now);
        rc = vs_store__step_done(s, res, "resend");
        if (rc != 0 || vs_db_changes(s) != 1)
            continue;
        vs_db_bind_int64(wu, 1, items[i].workunit_id);
        vs_db_bind_int64(wu, 2, items[i].report_deadline);
        vs_db_bind_int64(wu, 3, now);
        rc = vs_store__step_done(s, wu, "resend wu");
    }
    vs_db_finalize(res);
    vs_db_finalize(wu);
    return vs_store__leave(s, rc);
}

/* Why a report that changed no row changed none: VS_ENOTFOUND, VS_ESTATE
 * (another host's, or not sent), or 0 with *dup (already reported). */
static int report_refused(struct vs_store *s, int64_t hostid, const char *name, bool *dup)
{
    struct vs_result r;
    memset(&r, 0, sizeof(r));
    /* Only the columns the checks need. */
    int rc = vs_store_result_state_by_name(s, name, &r);
    if (rc == 0 && r.hostid != hostid)
        rc = VS_ESTATE;
    /* BOINC-COMPAT: a result the transitioner timed out (NO_REPLY) is still
     * accepted when it finally arrives; any other OVER result is a repeat. */
    else if (rc == 0 && r.server_state == VS_RESULT_SERVER_STATE_OVER)
        *dup = true;
    else if (rc == 0)
        rc = VS_ESTATE; /* not sent, or (on a shared store) changed meanwhile */
    vs_result_cleanup(&r);
    return rc;
}

int vs_store_result_report(struct vs_store *s, int64_t hostid, int64_t now,
                           const struct vs_result_report *rep, bool *out_dup)
{
    if (!rep || !rep->name[0])
        return VS_EINVAL;
    int rc = vs_store__enter(s);
    if (rc)
        return rc;
    bool dup = false;
    bool ok = rep->client_state == VS_RESULT_CLIENT_STATE_FILES_UPLOADED && rep->exit_status == 0;
    /* The update checks the result's host and state itself (SQ_REPORT);
     * only a report it refuses is read, to say why. */
    struct vs_stmt *st = vs_store__stmt(s, SQ_REPORT);
    if (!st) {
        rc = VS_ESTORE;
        goto done;
    }
    vs_db_bind_text(st, 1, rep->name, -1, VS_DB_STATIC);
    vs_db_bind_int(st, 2, ok ? VS_RESULT_OUTCOME_SUCCESS : VS_RESULT_OUTCOME_CLIENT_ERROR);
    vs_db_bind_int(st, 3, rep->client_state);
    vs_db_bind_int(st, 4, rep->exit_status);
    vs_db_bind_double(st, 5, rep->cpu_time);
    vs_db_bind_double(st, 6, rep->elapsed_time);
    vs_db_bind_double(st, 7, rep->peak_working_set_size);
    vs_db_bind_double(st, 8, rep->peak_swap_size);
    vs_db_bind_double(st, 9, rep->peak_disk_usage);
    if (rep->xml_doc_out)
        vs_db_bind_text(st, 10, rep->xml_doc_out, -1, VS_DB_STATIC);
    if (rep->stderr_out)
        vs_db_bind_text(st, 11, rep->stderr_out, -1, VS_DB_STATIC);
    vs_db_bind_int64(st, 12, now);
    vs_db_bind_int64(st, 13, hostid);
    int step = vs_db_step(st);
    int64_t wuid = step == VS_DB_ROW ? vs_db_column_int64(st, 0) : 0;
    bool updated = step == VS_DB_ROW;
    if (updated)
        step = vs_db_step(st); /* names are unique: the one row */
    vs_db_reset(st);
    if (step != VS_DB_DONE) {
        rc = vs_store__err(s, step, "report");
        goto done;
    }
    if (!updated) {
        rc = report_refused(s, hostid, rep->name, &dup);
        goto done;
    }
    st = vs_store__stmt(s, SQ_REPORT_WU);
    if (!st) {
        rc = VS_ESTORE;
        goto done;
    }
    vs_db_bind_int64(st, 1, wuid);
    vs_db_bind_int64(st, 2, now);
    rc = vs_store__step_done(s, st, "report wu");
done:
    rc = vs_store__leave(s, rc);
    if (rc == 0 && out_dup)
        *out_dup = dup;
    return rc;
}
