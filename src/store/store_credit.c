/*
 * Credit in the store (see store_credit.h). The validator grants credit a
 * few times per workunit, off the scheduler's path: the statements are
 * prepared per call, not kept in the catalogue.
 */
#include <stdio.h>
#include <string.h>

#include "store/store_int.h"
#include "volsched/store_credit.h"

static const char *table_of(enum vs_credit_owner owner)
{
    switch (owner) {
    case VS_CREDIT_HOST:
        return "host";
    case VS_CREDIT_USER:
        return "\"user\"";
    default:
        return "team";
    }
}

static int prep(struct vs_store *s, const char *sql, struct vs_stmt **out)
{
    int rc = vs_db_prepare(s, sql, out);
    if (rc == VS_DB_OK)
        return 0;
    vs_db_finalize(*out);
    *out = NULL;
    return vs_store__err(s, rc, "credit statement");
}

/* Steps a statement that returns no row, and finalizes it. */
static int run_done(struct vs_store *s, struct vs_stmt *st, const char *what)
{
    int rc = vs_db_step(st);
    vs_db_finalize(st);
    return rc == VS_DB_DONE ? 0 : vs_store__err(s, rc, what);
}

int vs_store_credit_totals_get(struct vs_store *s, enum vs_credit_owner owner, int64_t id,
                               struct vs_credit_totals *out)
{
    char sql[160];
    snprintf(sql, sizeof(sql),
             "SELECT total_credit, expavg_credit, expavg_time FROM %s WHERE id = ?1",
             table_of(owner));
    struct vs_stmt *st = NULL;
    int rc = prep(s, sql, &st);
    if (rc)
        return rc;
    vs_db_bind_int64(st, 1, id);
    int step = vs_db_step(st);
    if (step == VS_DB_ROW) {
        out->total = vs_db_column_double(st, 0);
        out->expavg = vs_db_column_double(st, 1);
        out->expavg_time = vs_db_column_double(st, 2);
        rc = 0;
    } else {
        rc = step == VS_DB_DONE ? VS_ENOTFOUND : vs_store__err(s, step, "credit totals");
    }
    vs_db_finalize(st);
    return rc;
}

int vs_store_credit_totals_set(struct vs_store *s, enum vs_credit_owner owner, int64_t id,
                               const struct vs_credit_totals *t)
{
    char sql[200];
    snprintf(sql, sizeof(sql),
             "UPDATE %s SET total_credit = ?1, expavg_credit = ?2, expavg_time = ?3 "
             "WHERE id = ?4",
             table_of(owner));
    struct vs_stmt *st = NULL;
    int rc = prep(s, sql, &st);
    if (rc)
        return rc;
    vs_db_bind_double(st, 1, t->total);
    vs_db_bind_double(st, 2, t->expavg);
    vs_db_bind_double(st, 3, t->expavg_time);
    vs_db_bind_int64(st, 4, id);
    return run_done(s, st, "credit totals update");
}

int vs_store_credit_decay_page(struct vs_store *s, enum vs_credit_owner owner, int64_t after,
                               double before, struct vs_credit_row *rows, int n, int *out_n)
{
    *out_n = 0;
    if (n <= 0)
        return VS_EINVAL;
    char sql[240];
    snprintf(sql, sizeof(sql),
             "SELECT id, total_credit, expavg_credit, expavg_time FROM %s WHERE id > ?1 "
             "AND expavg_credit > 0 AND expavg_time < ?2 ORDER BY id LIMIT ?3",
             table_of(owner));
    struct vs_stmt *st = NULL;
    int rc = prep(s, sql, &st);
    if (rc)
        return rc;
    vs_db_bind_int64(st, 1, after);
    vs_db_bind_double(st, 2, before);
    vs_db_bind_int(st, 3, n);
    int step = VS_DB_DONE;
    while (*out_n < n && (step = vs_db_step(st)) == VS_DB_ROW) {
        struct vs_credit_row *r = &rows[(*out_n)++];
        r->id = vs_db_column_int64(st, 0);
        r->t.total = vs_db_column_double(st, 1);
        r->t.expavg = vs_db_column_double(st, 2);
        r->t.expavg_time = vs_db_column_double(st, 3);
    }
    if (*out_n < n && step != VS_DB_DONE)
        rc = vs_store__err(s, step, "credit decay page");
    vs_db_finalize(st);
    return rc;
}

int vs_store_credit_pfc_get(struct vs_store *s, int64_t app_version_id, int64_t hostid,
                            double *out_n, double *out_avg)
{
    struct vs_stmt *st = NULL;
    int rc = prep(s,
                  "SELECT pfc_n, pfc_avg FROM credit_pfc WHERE app_version_id = ?1 AND "
                  "hostid = ?2",
                  &st);
    if (rc)
        return rc;
    vs_db_bind_int64(st, 1, app_version_id);
    vs_db_bind_int64(st, 2, hostid);
    int step = vs_db_step(st);
    double n = 0, avg = 0;
    if (step == VS_DB_ROW) {
        n = vs_db_column_double(st, 0);
        avg = vs_db_column_double(st, 1);
    }
    vs_db_finalize(st);
    if (step != VS_DB_ROW && step != VS_DB_DONE)
        return vs_store__err(s, step, "credit_pfc");
    *out_n = n;
    *out_avg = avg;
    return 0;
}

int vs_store_credit_pfc_put(struct vs_store *s, int64_t appid, int64_t app_version_id,
                            int64_t hostid, double n, double avg)
{
    struct vs_stmt *st = NULL;
    int rc = prep(s,
                  "INSERT INTO credit_pfc(app_version_id, hostid, appid, pfc_n, pfc_avg) "
                  "VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT(app_version_id, hostid) DO UPDATE "
                  "SET pfc_n = excluded.pfc_n, pfc_avg = excluded.pfc_avg",
                  &st);
    if (rc)
        return rc;
    vs_db_bind_int64(st, 1, app_version_id);
    vs_db_bind_int64(st, 2, hostid);
    vs_db_bind_int64(st, 3, appid);
    vs_db_bind_double(st, 4, n);
    vs_db_bind_double(st, 5, avg);
    return run_done(s, st, "credit_pfc update");
}

/* The one double a single-row query returns (dflt when there is no row). */
static int one_double(struct vs_store *s, struct vs_stmt *st, double dflt, double *out)
{
    int step = vs_db_step(st);
    double v = step == VS_DB_ROW ? vs_db_column_double(st, 0) : dflt;
    vs_db_finalize(st);
    if (step != VS_DB_ROW && step != VS_DB_DONE)
        return vs_store__err(s, step, "credit query");
    *out = v;
    return 0;
}

int vs_store_credit_av_ncpus(struct vs_store *s, int64_t app_version_id, double *out)
{
    struct vs_stmt *st = NULL;
    int rc = prep(s, "SELECT avg_ncpus FROM app_version WHERE id = ?1", &st);
    if (rc)
        return rc;
    vs_db_bind_int64(st, 1, app_version_id);
    return one_double(s, st, 1, out);
}

int vs_store_credit_app_ref(struct vs_store *s, int64_t appid, double min_n, double *out_ref)
{
    struct vs_stmt *st = NULL;
    int rc = prep(s,
                  "SELECT coalesce(min(pfc_avg), 0) FROM credit_pfc WHERE appid = ?1 AND "
                  "hostid = 0 AND pfc_n >= ?2 AND pfc_avg > 0",
                  &st);
    if (rc)
        return rc;
    vs_db_bind_int64(st, 1, appid);
    vs_db_bind_double(st, 2, min_n);
    return one_double(s, st, 0, out_ref);
}

static int sum_of(struct vs_store *s, const char *sql, double *out)
{
    struct vs_stmt *st = NULL;
    int rc = prep(s, sql, &st);
    return rc ? rc : one_double(s, st, 0, out);
}

int vs_store_credit_sums(struct vs_store *s, struct vs_credit_sums *out)
{
    struct vs_credit_sums c;
    memset(&c, 0, sizeof(c));
    /* BOINC-COMPAT: validate_state 1 is VALID. */
    int rc = sum_of(s,
                    "SELECT coalesce(sum(granted_credit), 0) FROM result WHERE "
                    "validate_state = 1",
                    &c.granted);
    if (rc == 0)
        rc = sum_of(s, "SELECT coalesce(sum(total_credit), 0) FROM host", &c.hosts);
    if (rc == 0)
        rc = sum_of(s, "SELECT coalesce(sum(total_credit), 0) FROM \"user\"", &c.users);
    if (rc == 0)
        rc = sum_of(s, "SELECT coalesce(sum(total_credit), 0) FROM team", &c.teams);
    if (rc == 0)
        *out = c;
    return rc;
}

/* The columns of each table with credit, in vs_stats_row order (hosts of
 * user 0 left out, as BOINC's db_dump does); tail orders and limits. */
static int stats_sql(enum vs_credit_owner owner, const char *tail, char *out, size_t n)
{
    const char *head;
    switch (owner) {
    case VS_CREDIT_USER:
        head = "SELECT id, create_time, total_credit, expavg_credit, expavg_time, teamid, name, "
               "email_addr, cross_project_id, country FROM \"user\" WHERE total_credit > 0";
        break;
    case VS_CREDIT_TEAM:
        head = "SELECT id, create_time, total_credit, expavg_credit, expavg_time, userid, name "
               "FROM team WHERE total_credit > 0";
        break;
    default:
        head = "SELECT id, create_time, total_credit, expavg_credit, expavg_time, userid, '', "
               "'', '', '', p_vendor, p_model, os_name, os_version FROM host WHERE "
               "total_credit > 0 AND userid <> 0";
        break;
    }
    int m = snprintf(out, n, "%s %s", head, tail);
    return m < 0 || (size_t)m >= n ? VS_ELIMIT : 0;
}

static const char *text_at(struct vs_stmt *st, int col, int ncols)
{
    const char *t = col < ncols ? (const char *)vs_db_column_text(st, col) : NULL;
    return t ? t : "";
}

static int stats_ncols(enum vs_credit_owner owner)
{
    return owner == VS_CREDIT_USER ? 10 : owner == VS_CREDIT_TEAM ? 7 : 14;
}

static void read_stats_row(struct vs_stmt *st, int ncols, struct vs_stats_row *r)
{
    r->id = vs_db_column_int64(st, 0);
    r->create_time = vs_db_column_int64(st, 1);
    r->total = vs_db_column_double(st, 2);
    r->expavg = vs_db_column_double(st, 3);
    r->expavg_time = vs_db_column_double(st, 4);
    r->ref = vs_db_column_int64(st, 5);
    r->name = text_at(st, 6, ncols);
    r->email = text_at(st, 7, ncols);
    r->cpid = text_at(st, 8, ncols);
    r->country = text_at(st, 9, ncols);
    r->p_vendor = text_at(st, 10, ncols);
    r->p_model = text_at(st, 11, ncols);
    r->os_name = text_at(st, 12, ncols);
    r->os_version = text_at(st, 13, ncols);
}

int vs_store_stats_each(struct vs_store *s, enum vs_credit_owner owner, int page,
                        vs_store_stats_fn fn, void *ctx)
{
    if (page <= 0)
        page = 2000;
    int ncols = stats_ncols(owner);
    char sql[512];
    int rc = stats_sql(owner, "AND id > ?1 ORDER BY id LIMIT ?2", sql, sizeof(sql));
    if (rc)
        return rc;
    int64_t last = 0;
    for (;;) {
        struct vs_stmt *st = NULL;
        rc = prep(s, sql, &st);
        if (rc)
            return rc;
        vs_db_bind_int64(st, 1, last);
        vs_db_bind_int(st, 2, page);
        int n = 0, step;
        while ((step = vs_db_step(st)) == VS_DB_ROW) {
            struct vs_stats_row r;
            read_stats_row(st, ncols, &r);
            last = r.id;
            n++;
            if ((rc = fn(ctx, &r)) != 0)
                break;
        }
        vs_db_finalize(st);
        if (rc)
            return rc;
        if (step != VS_DB_DONE && step != VS_DB_ROW)
            return vs_store__err(s, step, "statistics export");
        if (n < page)
            return 0;
    }
}

int vs_store_stats_top(struct vs_store *s, enum vs_credit_owner owner, bool by_recent,
                       int64_t offset, int limit, vs_store_stats_fn fn, void *ctx)
{
    if (offset < 0 || limit <= 0)
        return VS_EINVAL;
    char sql[512];
    int rc = stats_sql(owner,
                       by_recent ? "ORDER BY expavg_credit DESC, id LIMIT ?2 OFFSET ?1"
                                 : "ORDER BY total_credit DESC, id LIMIT ?2 OFFSET ?1",
                       sql, sizeof(sql));
    struct vs_stmt *st = NULL;
    if (rc || (rc = prep(s, sql, &st)) != 0)
        return rc;
    vs_db_bind_int64(st, 1, offset);
    vs_db_bind_int(st, 2, limit);
    int ncols = stats_ncols(owner), step;
    while ((step = vs_db_step(st)) == VS_DB_ROW) {
        struct vs_stats_row r;
        read_stats_row(st, ncols, &r);
        if ((rc = fn(ctx, &r)) != 0)
            break;
    }
    vs_db_finalize(st);
    if (rc == 0 && step != VS_DB_DONE)
        rc = vs_store__err(s, step, "leaderboard");
    return rc;
}

/* The count a single-row query returns. */
static int count_of(struct vs_store *s, const char *sql, int64_t since, int64_t *out)
{
    struct vs_stmt *st = NULL;
    int rc = prep(s, sql, &st);
    if (rc)
        return rc;
    if (since >= 0)
        vs_db_bind_int64(st, 1, since);
    double v = 0;
    rc = one_double(s, st, 0, &v);
    *out = (int64_t)v;
    return rc;
}

int vs_store_credit_counts(struct vs_store *s, int64_t now, struct vs_credit_counts *out)
{
    struct vs_credit_counts c;
    memset(&c, 0, sizeof(c));
    /* BOINC-COMPAT: server_status.php's "with recent credit" is an average
     * above 1, its FLOPS the users' averages over 200 (a GigaFLOPS-day is
     * 200 cobblestones). */
    int rc =
        count_of(s, "SELECT count(*) FROM \"user\" WHERE expavg_credit > 1", -1, &c.users_recent);
    rc = rc ? rc
            : count_of(s, "SELECT count(*) FROM \"user\" WHERE total_credit > 0", -1,
                       &c.users_credit);
    rc = rc ? rc
            : count_of(s, "SELECT count(*) FROM \"user\" WHERE create_time > ?1", now - 86400,
                       &c.users_24h);
    rc = rc ? rc
            : count_of(s, "SELECT count(*) FROM host WHERE expavg_credit > 1", -1, &c.hosts_recent);
    rc = rc ? rc
            : count_of(s, "SELECT count(*) FROM host WHERE total_credit > 0", -1, &c.hosts_credit);
    rc = rc ? rc
            : count_of(s, "SELECT count(*) FROM host WHERE create_time > ?1", now - 86400,
                       &c.hosts_24h);
    rc = rc ? rc
            : count_of(s, "SELECT count(*) FROM team WHERE total_credit > 0", -1, &c.teams_credit);
    rc = rc ? rc
            : sum_of(s, "SELECT coalesce(sum(expavg_credit), 0) / 200 FROM \"user\"", &c.gflops);
    if (rc == 0)
        *out = c;
    return rc;
}
