/*
 * Remote job submission's tables (store_submit.h). The statements are
 * compiled per call: a submission RPC runs a handful of them, and the
 * per-job work (inserting workunits) goes through create_work's bulk path.
 */
#include <stdio.h>
#include <string.h>

#include "store/store_int.h"
#include "volsched/store_submit.h"

/* Statements compiled per call (vs_store__prep), and a change run to its
 * end (vs_store__run_change): store_accounts.c's helpers. */
static int done(struct vs_store *s, struct vs_stmt *st, const char *what)
{
    return vs_store__run_change(s, st, what, NULL);
}

/* Ends a one-row query: finalizes st; 0 for a row, VS_ENOTFOUND for none. */
static int one_end(struct vs_store *s, struct vs_stmt *st, int rc, const char *what)
{
    vs_db_finalize(st);
    if (rc == VS_DB_ROW)
        return 0;
    return rc == VS_DB_DONE ? VS_ENOTFOUND : vs_store__err(s, rc, what);
}

#define BATCH_COLS                                                                                 \
    "id, user_id, create_time, logical_start_time, logical_end_time, est_completion_time, "        \
    "njobs, fraction_done, nerror_jobs, state, completion_time, credit_estimate, "                 \
    "credit_canonical, credit_total, name, app_id, expire_time, own_hosts, priority"

static void read_batch(struct vs_stmt *st, struct vs_batch *b)
{
    memset(b, 0, sizeof(*b));
    b->id = vs_db_column_int64(st, 0);
    b->user_id = vs_db_column_int64(st, 1);
    b->create_time = vs_db_column_int64(st, 2);
    b->logical_start_time = vs_db_column_double(st, 3);
    b->logical_end_time = vs_db_column_double(st, 4);
    b->est_completion_time = vs_db_column_double(st, 5);
    b->njobs = vs_db_column_int64(st, 6);
    b->fraction_done = vs_db_column_double(st, 7);
    b->nerror_jobs = vs_db_column_int64(st, 8);
    b->state = vs_db_column_int(st, 9);
    b->completion_time = vs_db_column_int64(st, 10);
    b->credit_estimate = vs_db_column_double(st, 11);
    b->credit_canonical = vs_db_column_double(st, 12);
    b->credit_total = vs_db_column_double(st, 13);
    vs_store__copy(b->name, (const char *)vs_db_column_text(st, 14), sizeof(b->name));
    b->app_id = vs_db_column_int64(st, 15);
    b->expire_time = vs_db_column_double(st, 16);
    b->own_hosts = vs_db_column_int(st, 17) != 0;
    b->priority = vs_db_column_int(st, 18);
}

/* Binds the mutable columns of b at ?1..?14 (the order of UPDATE_SQL). */
static void bind_batch(struct vs_stmt *st, const struct vs_batch *b)
{
    vs_db_bind_double(st, 1, b->logical_start_time);
    vs_db_bind_double(st, 2, b->logical_end_time);
    vs_db_bind_double(st, 3, b->est_completion_time);
    vs_db_bind_int64(st, 4, b->njobs);
    vs_db_bind_double(st, 5, b->fraction_done);
    vs_db_bind_int64(st, 6, b->nerror_jobs);
    vs_db_bind_int(st, 7, b->state);
    vs_db_bind_int64(st, 8, b->completion_time);
    vs_db_bind_double(st, 9, b->credit_estimate);
    vs_db_bind_double(st, 10, b->credit_canonical);
    vs_db_bind_double(st, 11, b->credit_total);
    vs_db_bind_text(st, 12, b->name, -1, VS_DB_STATIC);
    vs_db_bind_double(st, 13, b->expire_time);
    vs_db_bind_int(st, 14, b->own_hosts ? 1 : 0);
    vs_db_bind_int(st, 15, b->priority);
}

int vs_store_batch_add(struct vs_store *s, struct vs_batch *b)
{
    struct vs_stmt *st = vs_store__prep(
        s,
        "INSERT INTO batch (logical_start_time, logical_end_time, est_completion_time, "
        "njobs, fraction_done, nerror_jobs, state, completion_time, credit_estimate, "
        "credit_canonical, credit_total, name, expire_time, own_hosts, priority, user_id, "
        "create_time, app_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
        "?13, ?14, ?15, ?16, ?17, ?18) RETURNING id",
        "batch insert");
    if (!st)
        return VS_ESTORE;
    bind_batch(st, b);
    vs_db_bind_int64(st, 16, b->user_id);
    vs_db_bind_int64(st, 17, b->create_time);
    vs_db_bind_int64(st, 18, b->app_id);
    int rc = vs_db_step(st);
    if (rc == VS_DB_ROW)
        b->id = vs_db_column_int64(st, 0);
    return one_end(s, st, rc, "batch insert");
}

static int get_one(struct vs_store *s, const char *sql, int64_t id, const char *name,
                   struct vs_batch *out)
{
    struct vs_stmt *st = vs_store__prep(s, sql, "batch lookup");
    if (!st)
        return VS_ESTORE;
    if (name)
        vs_db_bind_text(st, 1, name, -1, VS_DB_STATIC);
    else
        vs_db_bind_int64(st, 1, id);
    int rc = vs_db_step(st);
    if (rc == VS_DB_ROW)
        read_batch(st, out);
    return one_end(s, st, rc, "batch lookup");
}

int vs_store_batch_get(struct vs_store *s, int64_t id, struct vs_batch *out)
{
    return get_one(s, "SELECT " BATCH_COLS " FROM batch WHERE id = ?1", id, NULL, out);
}

int vs_store_batch_by_name(struct vs_store *s, const char *name, struct vs_batch *out)
{
    return get_one(s, "SELECT " BATCH_COLS " FROM batch WHERE name = ?1 ORDER BY id DESC LIMIT 1",
                   0, name, out);
}

int vs_store_batch_delete(struct vs_store *s, int64_t id)
{
    struct vs_stmt *st = vs_store__prep(s, "DELETE FROM batch WHERE id = ?1", "batch delete");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, id);
    return done(s, st, "batch delete");
}

int vs_store_batch_update(struct vs_store *s, const struct vs_batch *b)
{
    struct vs_stmt *st = vs_store__prep(
        s,
        "UPDATE batch SET logical_start_time = ?1, logical_end_time = ?2, "
        "est_completion_time = ?3, njobs = ?4, fraction_done = ?5, nerror_jobs = ?6, "
        "state = ?7, completion_time = ?8, credit_estimate = ?9, credit_canonical = ?10, "
        "credit_total = ?11, name = ?12, expire_time = ?13, own_hosts = ?14, priority = ?15 "
        "WHERE id = ?16",
        "batch update");
    if (!st)
        return VS_ESTORE;
    bind_batch(st, b);
    vs_db_bind_int64(st, 16, b->id);
    int rc = done(s, st, "batch update");
    if (rc == 0 && vs_db_changes(s) == 0)
        rc = VS_ENOTFOUND;
    return rc;
}

int vs_store_batches_of_user(struct vs_store *s, int64_t user_id,
                             int (*fn)(void *ctx, const struct vs_batch *b), void *ctx)
{
    struct vs_stmt *st = vs_store__prep(
        s, "SELECT " BATCH_COLS " FROM batch WHERE (?1 = 0 OR user_id = ?1) ORDER BY id",
        "batches");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, user_id);
    int rc, ret = 0;
    while ((rc = vs_db_step(st)) == VS_DB_ROW) {
        struct vs_batch b;
        read_batch(st, &b);
        if ((ret = fn(ctx, &b)) != 0)
            break;
    }
    vs_db_finalize(st);
    if (ret)
        return ret;
    return rc == VS_DB_DONE ? 0 : vs_store__err(s, rc, "batches");
}

int vs_store_batches_expired(struct vs_store *s, double now, int64_t *out_ids, size_t max,
                             size_t *out_n)
{
    struct vs_stmt *st =
        vs_store__prep(s,
                       "SELECT id FROM batch WHERE expire_time > 0 AND expire_time < ?1 "
                       "AND state <> 4 ORDER BY id LIMIT ?2",
                       "expired batches");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_double(st, 1, now);
    vs_db_bind_int64(st, 2, (int64_t)max);
    size_t n = 0;
    int rc;
    while ((rc = vs_db_step(st)) == VS_DB_ROW && n < max)
        out_ids[n++] = vs_db_column_int64(st, 0);
    vs_db_finalize(st);
    if (rc != VS_DB_DONE && rc != VS_DB_ROW)
        return vs_store__err(s, rc, "expired batches");
    *out_n = n;
    return 0;
}

int vs_store_batch_jobs(struct vs_store *s, int64_t batch,
                        int (*fn)(void *ctx, const struct vs_batch_job *j), void *ctx)
{
    /* BOINC-COMPAT numbers: server_state 4 IN_PROGRESS. */
    struct vs_stmt *st = vs_store__prep(
        s,
        "SELECT w.id, w.name, w.canonical_resultid, w.error_mask, w.canonical_credit,"
        " (SELECT count(*) FROM result r WHERE r.workunitid = w.id AND r.server_state = 4),"
        " (SELECT count(*) FROM result r WHERE r.workunitid = w.id),"
        " (SELECT r.cpu_time FROM result r WHERE r.id = w.canonical_resultid)"
        " FROM workunit w WHERE w.batch = ?1 ORDER BY w.id",
        "batch jobs");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, batch);
    int rc, ret = 0;
    while ((rc = vs_db_step(st)) == VS_DB_ROW) {
        struct vs_batch_job j = {
            .id = vs_db_column_int64(st, 0),
            .name = (const char *)vs_db_column_text(st, 1),
            .canonical_resultid = vs_db_column_int64(st, 2),
            .error_mask = vs_db_column_int(st, 3),
            .credit = vs_db_column_double(st, 4),
            .in_progress = vs_db_column_int64(st, 5),
            .nresults = vs_db_column_int64(st, 6),
            .cpu_time = vs_db_column_double(st, 7),
        };
        if (!j.name)
            j.name = "";
        if ((ret = fn(ctx, &j)) != 0)
            break;
    }
    vs_db_finalize(st);
    if (ret)
        return ret;
    return rc == VS_DB_DONE ? 0 : vs_store__err(s, rc, "batch jobs");
}

int vs_store_batch_progress(struct vs_store *s, int64_t batch, struct vs_batch_progress *out)
{
    struct vs_stmt *st = vs_store__prep(
        s,
        "SELECT count(*),"
        " coalesce(sum(CASE WHEN w.canonical_resultid <> 0 AND w.error_mask = 0 THEN 1 ELSE 0"
        " END), 0),"
        " coalesce(sum(CASE WHEN w.error_mask <> 0 THEN 1 ELSE 0 END), 0),"
        " coalesce(sum(CASE WHEN w.error_mask = 0 THEN w.canonical_credit ELSE 0 END), 0)"
        " FROM workunit w WHERE w.batch = ?1",
        "batch progress");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, batch);
    struct vs_batch_progress p;
    memset(&p, 0, sizeof(p));
    int rc = vs_db_step(st);
    if (rc == VS_DB_ROW) {
        p.njobs = vs_db_column_int64(st, 0);
        p.ndone = vs_db_column_int64(st, 1);
        p.nerror = vs_db_column_int64(st, 2);
        p.credit_canonical = vs_db_column_double(st, 3);
    }
    vs_db_finalize(st);
    if (rc != VS_DB_ROW)
        return vs_store__err(s, rc, "batch progress");
    st = vs_store__prep(
        s,
        "SELECT coalesce(sum(CASE WHEN r.server_state = 4 THEN 1 ELSE 0 END), 0),"
        " coalesce(sum(r.cpu_time), 0) FROM workunit w JOIN result r ON r.workunitid = w.id"
        " WHERE w.batch = ?1",
        "batch progress");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, batch);
    rc = vs_db_step(st);
    if (rc == VS_DB_ROW) {
        p.in_progress = vs_db_column_int64(st, 0);
        p.cpu_time = vs_db_column_double(st, 1);
    }
    vs_db_finalize(st);
    if (rc != VS_DB_ROW)
        return vs_store__err(s, rc, "batch progress");
    *out = p;
    return 0;
}

/* ---- submitters ---- */

#define US_COLS "user_id, quota, logical_start_time, submit_all, manage_all, max_jobs_in_progress"

static void read_us(struct vs_stmt *st, struct vs_user_submit *u)
{
    u->user_id = vs_db_column_int64(st, 0);
    u->quota = vs_db_column_double(st, 1);
    u->logical_start_time = vs_db_column_double(st, 2);
    u->submit_all = vs_db_column_int(st, 3) != 0;
    u->manage_all = vs_db_column_int(st, 4) != 0;
    u->max_jobs_in_progress = vs_db_column_int64(st, 5);
}

int vs_store_user_submit_get(struct vs_store *s, int64_t user_id, struct vs_user_submit *out,
                             int64_t *app_ids, size_t max, size_t *out_napps)
{
    struct vs_stmt *st = vs_store__prep(s, "SELECT " US_COLS " FROM user_submit WHERE user_id = ?1",
                                        "user_submit lookup");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, user_id);
    struct vs_user_submit u;
    memset(&u, 0, sizeof(u));
    int rc = vs_db_step(st);
    if (rc == VS_DB_ROW)
        read_us(st, &u);
    rc = one_end(s, st, rc, "user_submit lookup");
    if (rc)
        return rc;
    size_t n = 0;
    st = vs_store__prep(s, "SELECT app_id FROM user_submit_app WHERE user_id = ?1 ORDER BY app_id",
                        "user_submit_app");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, user_id);
    while ((rc = vs_db_step(st)) == VS_DB_ROW) {
        if (n < max)
            app_ids[n] = vs_db_column_int64(st, 0);
        n++;
    }
    vs_db_finalize(st);
    if (rc != VS_DB_DONE)
        return vs_store__err(s, rc, "user_submit_app");
    *out = u;
    if (out_napps)
        *out_napps = n < max ? n : max;
    return 0;
}

int vs_store_user_submit_drop(struct vs_store *s, int64_t user_id)
{
    struct vs_stmt *st =
        vs_store__prep(s, "DELETE FROM user_submit_app WHERE user_id = ?1", "submit drop");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, user_id);
    int rc = done(s, st, "submit drop");
    if (rc)
        return rc;
    st = vs_store__prep(s, "DELETE FROM user_submit WHERE user_id = ?1", "submit drop");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, user_id);
    return done(s, st, "submit drop");
}

int vs_store_user_submit_set(struct vs_store *s, const struct vs_user_submit *u,
                             const int64_t *app_ids, size_t napps)
{
    int rc = vs_store_user_submit_drop(s, u->user_id);
    if (rc)
        return rc;
    struct vs_stmt *st =
        vs_store__prep(s, "INSERT INTO user_submit (" US_COLS ") VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                       "user_submit insert");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, u->user_id);
    vs_db_bind_double(st, 2, u->quota);
    vs_db_bind_double(st, 3, u->logical_start_time);
    vs_db_bind_int(st, 4, u->submit_all ? 1 : 0);
    vs_db_bind_int(st, 5, u->manage_all ? 1 : 0);
    vs_db_bind_int64(st, 6, u->max_jobs_in_progress);
    if ((rc = done(s, st, "user_submit insert")) != 0)
        return rc;
    for (size_t i = 0; i < napps && rc == 0; i++) {
        st = vs_store__prep(s,
                            "INSERT INTO user_submit_app (user_id, app_id) VALUES (?1, ?2) "
                            "ON CONFLICT(user_id, app_id) DO NOTHING",
                            "user_submit_app insert");
        if (!st)
            return VS_ESTORE;
        vs_db_bind_int64(st, 1, u->user_id);
        vs_db_bind_int64(st, 2, app_ids[i]);
        rc = done(s, st, "user_submit_app insert");
    }
    return rc;
}

int vs_store_user_submits(struct vs_store *s, int (*fn)(void *ctx, const struct vs_user_submit *u),
                          void *ctx)
{
    struct vs_stmt *st = vs_store__prep(s, "SELECT " US_COLS " FROM user_submit ORDER BY user_id",
                                        "user_submit list");
    if (!st)
        return VS_ESTORE;
    int rc, ret = 0;
    while ((rc = vs_db_step(st)) == VS_DB_ROW) {
        struct vs_user_submit u;
        read_us(st, &u);
        if ((ret = fn(ctx, &u)) != 0)
            break;
    }
    vs_db_finalize(st);
    if (ret)
        return ret;
    return rc == VS_DB_DONE ? 0 : vs_store__err(s, rc, "user_submit list");
}

/* ---- job files ---- */

int vs_store_job_file_get(struct vs_store *s, const char *name, int64_t *out_id)
{
    struct vs_stmt *st =
        vs_store__prep(s, "SELECT id FROM job_file WHERE name = ?1", "job_file lookup");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_text(st, 1, name, -1, VS_DB_STATIC);
    int rc = vs_db_step(st);
    int64_t id = rc == VS_DB_ROW ? vs_db_column_int64(st, 0) : 0;
    rc = one_end(s, st, rc, "job_file lookup");
    if (rc == 0)
        *out_id = id;
    return rc;
}

int vs_store_job_file_add(struct vs_store *s, const char *name, int64_t now, int64_t delete_time,
                          int64_t *out_id)
{
    struct vs_stmt *st =
        vs_store__prep(s,
                       "INSERT INTO job_file (name, create_time, delete_time) "
                       "VALUES (?1, ?2, ?3) ON CONFLICT(name) DO UPDATE SET "
                       "delete_time = CASE WHEN excluded.delete_time > job_file.delete_time "
                       "THEN excluded.delete_time ELSE job_file.delete_time END "
                       "RETURNING id",
                       "job_file insert");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_text(st, 1, name, -1, VS_DB_STATIC);
    vs_db_bind_int64(st, 2, now);
    vs_db_bind_int64(st, 3, delete_time);
    int rc = vs_db_step(st);
    int64_t id = rc == VS_DB_ROW ? vs_db_column_int64(st, 0) : 0;
    rc = one_end(s, st, rc, "job_file insert");
    if (rc == 0)
        *out_id = id;
    return rc;
}

int vs_store_job_file_drop(struct vs_store *s, int64_t id)
{
    struct vs_stmt *st = vs_store__prep(s, "DELETE FROM job_file WHERE id = ?1", "job_file delete");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, id);
    return done(s, st, "job_file delete");
}

int vs_store_batch_file_add(struct vs_store *s, int64_t job_file_id, int64_t batch)
{
    struct vs_stmt *st =
        vs_store__prep(s,
                       "INSERT INTO batch_file_assoc (job_file_id, batch_id) VALUES (?1, ?2) "
                       "ON CONFLICT(job_file_id, batch_id) DO NOTHING",
                       "batch_file_assoc insert");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, job_file_id);
    vs_db_bind_int64(st, 2, batch);
    return done(s, st, "batch_file_assoc insert");
}

int vs_store_batch_files(struct vs_store *s, int64_t batch,
                         int (*fn)(void *ctx, int64_t id, const char *name), void *ctx)
{
    struct vs_stmt *st =
        vs_store__prep(s,
                       "SELECT f.id, f.name FROM batch_file_assoc a JOIN job_file f ON "
                       "f.id = a.job_file_id WHERE a.batch_id = ?1 ORDER BY f.id",
                       "batch files");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, batch);
    int rc, ret = 0;
    while ((rc = vs_db_step(st)) == VS_DB_ROW) {
        const char *name = (const char *)vs_db_column_text(st, 1);
        if ((ret = fn(ctx, vs_db_column_int64(st, 0), name ? name : "")) != 0)
            break;
    }
    vs_db_finalize(st);
    if (ret)
        return ret;
    return rc == VS_DB_DONE ? 0 : vs_store__err(s, rc, "batch files");
}

int vs_store_batch_files_drop(struct vs_store *s, int64_t batch)
{
    struct vs_stmt *st = vs_store__prep(s, "DELETE FROM batch_file_assoc WHERE batch_id = ?1",
                                        "batch_file_assoc delete");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, batch);
    return done(s, st, "batch_file_assoc delete");
}

int vs_store_job_file_nbatches(struct vs_store *s, int64_t id, int64_t *out_n)
{
    struct vs_stmt *st = vs_store__prep(
        s, "SELECT count(*) FROM batch_file_assoc WHERE job_file_id = ?1", "job file uses");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, id);
    int rc = vs_db_step(st);
    int64_t n = rc == VS_DB_ROW ? vs_db_column_int64(st, 0) : 0;
    rc = one_end(s, st, rc, "job file uses");
    if (rc == 0)
        *out_n = n;
    return rc;
}

int vs_store_submit_clock(struct vs_store *s, bool *out_any, int *out_priority, double *out_vt_max)
{
    /* BOINC-COMPAT numbers: server_state 4 IN_PROGRESS, 5 OVER. */
    struct vs_stmt *st = vs_store__prep(
        s,
        "SELECT max(w.priority) FROM workunit w WHERE w.batch <> 0 AND w.priority < 0 "
        "AND w.canonical_resultid = 0 AND w.error_mask = 0 AND NOT EXISTS (SELECT 1 FROM "
        "result r WHERE r.workunitid = w.id AND r.server_state >= 4)",
        "submit clock");
    if (!st)
        return VS_ESTORE;
    int rc = vs_db_step(st);
    bool any = rc == VS_DB_ROW && vs_db_column_type(st, 0) != VS_DB_NULL;
    int prio = any ? vs_db_column_int(st, 0) : 0;
    vs_db_finalize(st);
    if (rc != VS_DB_ROW)
        return vs_store__err(s, rc, "submit clock");
    st = vs_store__prep(s, "SELECT coalesce(max(logical_start_time), 0) FROM user_submit",
                        "submit clock");
    if (!st)
        return VS_ESTORE;
    rc = vs_db_step(st);
    double vt = rc == VS_DB_ROW ? vs_db_column_double(st, 0) : 0;
    vs_db_finalize(st);
    if (rc != VS_DB_ROW)
        return vs_store__err(s, rc, "submit clock");
    *out_any = any;
    *out_priority = prio;
    *out_vt_max = vt;
    return 0;
}

int vs_store_user_submit_set_clock(struct vs_store *s, int64_t user_id, double vt)
{
    struct vs_stmt *st =
        vs_store__prep(s, "UPDATE user_submit SET logical_start_time = ?1 WHERE user_id = ?2",
                       "submit clock update");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_double(st, 1, vt);
    vs_db_bind_int64(st, 2, user_id);
    return done(s, st, "submit clock update");
}

int vs_store_host_records(struct vs_store *s, int64_t since,
                          int (*fn)(void *ctx, int64_t hostid, double turnaround, int64_t nok,
                                    int64_t nfail),
                          void *ctx)
{
    /* BOINC-COMPAT numbers: server_state 5 OVER; outcome 1 SUCCESS;
     * validate_state 2 INVALID. */
    struct vs_stmt *st = vs_store__prep(
        s,
        "SELECT hostid, avg(CASE WHEN outcome = 1 THEN received_time - sent_time END),"
        " sum(CASE WHEN outcome = 1 AND validate_state <> 2 THEN 1 ELSE 0 END),"
        " sum(CASE WHEN outcome <> 1 OR validate_state = 2 THEN 1 ELSE 0 END)"
        " FROM result WHERE server_state = 5 AND hostid <> 0 AND sent_time > 0"
        " AND received_time >= ?1 AND outcome IN (1, 3, 4, 6) GROUP BY hostid",
        "host records");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, since);
    int rc, ret = 0;
    while ((rc = vs_db_step(st)) == VS_DB_ROW) {
        double turn = vs_db_column_type(st, 1) == VS_DB_NULL ? -1 : vs_db_column_double(st, 1);
        if ((ret = fn(ctx, vs_db_column_int64(st, 0), turn, vs_db_column_int64(st, 2),
                      vs_db_column_int64(st, 3))) != 0)
            break;
    }
    vs_db_finalize(st);
    if (ret)
        return ret;
    return rc == VS_DB_DONE ? 0 : vs_store__err(s, rc, "host records");
}

int vs_store_batch_results_out(struct vs_store *s, int64_t batch,
                               int (*fn)(void *ctx, const struct vs_batch_out *o), void *ctx)
{
    struct vs_stmt *st = vs_store__prep(
        s,
        "SELECT r.id, r.workunitid, r.hostid, r.sent_time, w.target_nresults, w.min_quorum"
        " FROM workunit w JOIN result r ON r.workunitid = w.id WHERE w.batch = ?1"
        " AND w.canonical_resultid = 0 AND w.error_mask = 0 AND r.server_state = 4",
        "batch results out");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, batch);
    int rc, ret = 0;
    while ((rc = vs_db_step(st)) == VS_DB_ROW) {
        struct vs_batch_out o = {
            .result_id = vs_db_column_int64(st, 0),
            .wuid = vs_db_column_int64(st, 1),
            .hostid = vs_db_column_int64(st, 2),
            .sent_time = vs_db_column_int64(st, 3),
            .target_nresults = vs_db_column_int(st, 4),
            .min_quorum = vs_db_column_int(st, 5),
        };
        if ((ret = fn(ctx, &o)) != 0)
            break;
    }
    vs_db_finalize(st);
    if (ret)
        return ret;
    return rc == VS_DB_DONE ? 0 : vs_store__err(s, rc, "batch results out");
}

int vs_store_wu_add_instance(struct vs_store *s, int64_t wuid, int target, int64_t now,
                             bool *out_done)
{
    struct vs_stmt *st =
        vs_store__prep(s,
                       "UPDATE workunit SET target_nresults = target_nresults + 1,"
                       " transition_time = ?3 WHERE id = ?1 AND target_nresults = ?2",
                       "add instance");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, wuid);
    vs_db_bind_int(st, 2, target);
    vs_db_bind_int64(st, 3, now);
    int rc = done(s, st, "add instance");
    if (rc == 0)
        *out_done = vs_db_changes(s) > 0;
    return rc;
}
