/*
 * SQLite backend: assigned work (seed 003). The assignments that match a
 * host, the scheduler's atomic reservation of an instance (the policy's
 * decision applied in one transaction under the slot indexes of schema v4),
 * the counts and lists `volsched status` shows, the release of held
 * workunits (create_work --no_transition) and wu_check's scan.
 */
#include <stdio.h>
#include <string.h>

#include "store/store_int.h"
#include "volsched/alloc.h"
#include "volsched/server_policy.h"

/* Results of one assigned workunit the decision looks at. A targeted
 * workunit has at most max_total_results of them, a broadcast one one per
 * host; past this many the decision is made on the first ones, which can
 * only make it refuse (it sees fewer free slots, never more). */
#define MAX_ASSIGNED_RESULTS 4096

int vs_store_assigned_for(struct vs_store *s, int target_type, int64_t target_id, int multi,
                          int64_t hostid, int limit, vs_store_assigned_fn fn, void *ctx)
{
    if (limit <= 0 || !fn)
        return VS_EINVAL;
    struct vs_stmt *st = vs_store__stmt(s, SQ_ASSIGNED_FOR);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int(st, 1, target_type);
    vs_db_bind_int64(st, 2, target_id);
    vs_db_bind_int(st, 3, multi);
    vs_db_bind_int64(st, 4, hostid);
    vs_db_bind_int(st, 5, limit);
    int rc, ret = 0;
    while ((rc = vs_db_step(st)) == VS_DB_ROW) {
        struct vs_assignment a;
        struct vs_workunit wu;
        vs_store__read_row(st, 0, &vs_store__assignment, &a);
        vs_store__read_row(st, (int)vs_store__assignment.ncols, &vs_store__workunit, &wu);
        ret = fn(ctx, &a, &wu);
        vs_workunit_cleanup(&wu);
        if (ret)
            break;
    }
    vs_db_reset(st);
    if (ret)
        return ret;
    return rc == VS_DB_DONE ? 0 : vs_store__err(s, rc, "assigned work");
}

struct asgn_rows {
    struct vs_sp_asgn_result *v;
    int64_t *ids;
    int n, cap;
};

static int read_results(struct vs_store *s, int64_t wuid, struct asgn_rows *rows)
{
    struct vs_stmt *st = vs_store__stmt(s, SQ_ASSIGNED_RESULTS);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, wuid);
    vs_db_bind_int(st, 2, MAX_ASSIGNED_RESULTS);
    int rc;
    while ((rc = vs_db_step(st)) == VS_DB_ROW) {
        if (rows->n == rows->cap) {
            rows->cap = rows->cap ? 2 * rows->cap : 16;
            rows->v = vs_xreallocarray(rows->v, (size_t)rows->cap, sizeof(*rows->v));
            rows->ids = vs_xreallocarray(rows->ids, (size_t)rows->cap, sizeof(*rows->ids));
        }
        struct vs_sp_asgn_result *r = &rows->v[rows->n];
        rows->ids[rows->n++] = vs_db_column_int64(st, 0);
        r->hostid = vs_db_column_int64(st, 1);
        r->server_state = vs_db_column_int(st, 2);
        r->outcome = vs_db_column_int(st, 3);
        r->validate_state = vs_db_column_int(st, 4);
        r->assign_slot = vs_db_column_int(st, 5);
    }
    vs_db_reset(st);
    return rc == VS_DB_DONE ? 0 : vs_store__err(s, rc, "assigned results");
}

/* Inserts the new instance; VS_EEXISTS when a unique index (slot, broadcast
 * host, name) says another request was first. */
static int create_instance(struct vs_store *s, const struct vs_workunit *wu, int64_t hostid,
                           int64_t now, int slot, int nresults, vs_store_make_result_fn make,
                           void *ctx, struct vs_result *out)
{
    memset(out, 0, sizeof(*out));
    /* BOINC-COMPAT: results are named <wu>_<n>, n counting from 0. */
    int k = snprintf(out->name, sizeof(out->name), "%s_%d", wu->name, nresults);
    if (k < 0 || (size_t)k >= sizeof(out->name))
        return VS_ELIMIT;
    int rc = make ? make(ctx, wu, out) : 0;
    if (rc == 0 && !out->xml_doc_in)
        rc = VS_EINVAL;
    if (rc == 0) {
        out->create_time = now;
        out->mod_time = now;
        out->workunitid = wu->id;
        out->appid = wu->appid;
        out->batch = wu->batch;
        out->server_state = VS_RESULT_SERVER_STATE_UNSENT;
        out->hostid = hostid; /* reserved for it until the claim */
        out->priority = wu->priority;
        out->size_class = wu->size_class;
        out->opaque = wu->opaque;
        out->assign_slot = slot;
        rc = vs_store__insert(s, SQ_RESULT_INSERT, &vs_store__result, out);
    }
    if (rc)
        vs_result_cleanup(out);
    return rc;
}

int vs_store_assigned_reserve(struct vs_store *s, const struct vs_assignment *a, int64_t hostid,
                              int64_t now, vs_store_make_result_fn make, void *ctx,
                              struct vs_result *out, const char **out_why)
{
    if (!a || !out || hostid <= 0)
        return VS_EINVAL;
    int rc = vs_store__enter(s);
    if (rc)
        return rc;
    struct vs_workunit wu;
    memset(&wu, 0, sizeof(wu));
    struct asgn_rows rows = {0};
    const char *why = NULL;
    rc = vs_store_workunit_get(s, a->workunitid, &wu);
    if (rc == 0)
        rc = read_results(s, wu.id, &rows);
    if (rc == 0) {
        struct vs_sp_assignment pa = {a->target_type, a->target_id, a->multi != 0};
        struct vs_sp_asgn_wu pw = {
            .target_nresults = wu.target_nresults,
            .max_total_results = wu.max_total_results,
            .error_mask = wu.error_mask != 0,
            .need_validate = wu.need_validate != 0,
            .has_canonical = wu.canonical_resultid != 0,
            .transition_due = !a->multi && wu.transition_time <= now,
        };
        struct vs_sp_asgn_decision d;
        vs_sp_assign_decide(&pa, &pw, hostid, rows.v, rows.n, &d);
        if (d.action == VS_SP_ASGN_REUSE) {
            rc = vs_store_result_get(s, rows.ids[d.index], out);
        } else if (d.action == VS_SP_ASGN_CREATE) {
            rc = create_instance(s, &wu, hostid, now, d.slot, rows.n, make, ctx, out);
        } else {
            memset(out, 0, sizeof(*out));
            why = d.why ? d.why : "no instance";
        }
    }
    vs_workunit_cleanup(&wu);
    vs_free(rows.v);
    vs_free(rows.ids);
    rc = vs_store__leave(s, rc);
    if (rc == 0 && out_why)
        *out_why = why;
    return rc;
}

int vs_store_workunits_release(struct vs_store *s, const char *name, int64_t batch, int64_t now,
                               int64_t *out_n)
{
    struct vs_stmt *st = vs_store__stmt(s, name ? SQ_WU_RELEASE_NAME : SQ_WU_RELEASE_BATCH);
    if (!st)
        return VS_ESTORE;
    if (name)
        vs_db_bind_text(st, 1, name, -1, VS_DB_STATIC);
    else
        vs_db_bind_int64(st, 1, batch);
    vs_db_bind_int64(st, 2, now);
    int rc = vs_store__step_done(s, st, "release");
    if (rc == 0 && out_n)
        *out_n = vs_db_changes(s);
    return rc;
}

int vs_store_workunits_with_inputs(struct vs_store *s, int64_t after_id, int limit,
                                   vs_store_workunit_fn fn, void *ctx)
{
    if (limit <= 0 || !fn)
        return VS_EINVAL;
    struct vs_stmt *st = vs_store__stmt(s, SQ_WUS_WITH_INPUTS);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, after_id);
    vs_db_bind_int(st, 2, limit);
    struct vs_workunit *wus;
    size_t n;
    int ret = vs_store__read_wu_page(s, st, limit, "workunit scan", &wus, &n);
    for (size_t i = 0; ret == 0 && i < n; i++)
        ret = fn(ctx, &wus[i]);
    for (size_t i = 0; i < n; i++)
        vs_workunit_cleanup(&wus[i]);
    vs_free(wus);
    return ret;
}

int vs_store_assignment_counts(struct vs_store *s, struct vs_assignment_counts *out)
{
    struct vs_stmt *st = vs_store__stmt(s, SQ_ASSIGNMENT_COUNTS);
    if (!st)
        return VS_ESTORE;
    struct vs_assignment_counts c;
    memset(&c, 0, sizeof(c));
    int rc;
    while ((rc = vs_db_step(st)) == VS_DB_ROW) {
        int t = vs_db_column_int(st, 0), m = vs_db_column_int(st, 1) != 0;
        if (t < 0 || t > 3)
            continue;
        c.n[t][m] += vs_db_column_int64(st, 2);
        c.open[t][m] += vs_db_column_int64(st, 3);
    }
    vs_db_reset(st);
    if (rc != VS_DB_DONE)
        return vs_store__err(s, rc, "assignment counts");
    *out = c;
    return 0;
}

int vs_store_broadcast_results(struct vs_store *s, int64_t after_id, int limit,
                               vs_store_result_fn fn, void *ctx)
{
    if (limit <= 0 || !fn)
        return VS_EINVAL;
    struct vs_stmt *st = vs_store__stmt(s, SQ_BROADCAST_RESULTS);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, after_id);
    vs_db_bind_int(st, 2, limit);
    return vs_store__scan_results(s, st, fn, ctx);
}
