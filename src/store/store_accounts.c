/*
 * Volunteers' accounts (store_accounts.h), in the SQL both backends share.
 * Statements are compiled per call: the account pages and RPCs run a few
 * times a minute, never on the scheduler's path.
 */
#include <stdio.h>
#include <string.h>

#include "store/store_int.h"
#include "volsched/alloc.h"
#include "volsched/store_accounts.h"

struct vs_stmt *vs_store__prep(struct vs_store *s, const char *sql, const char *what)
{
    struct vs_stmt *st = NULL;
    int rc = vs_db_prepare(s, sql, &st);
    if (rc != VS_DB_OK) {
        (void)vs_store__err(s, rc, what);
        vs_db_finalize(st);
        return NULL;
    }
    return st;
}

/* "SELECT <t's columns> FROM <t> <rest>" compiled. */
static struct vs_stmt *prep_select(struct vs_store *s, const struct sq_table *t, const char *rest,
                                   const char *what)
{
    char *cols = vs_store__select_list(t, NULL);
    size_t n = strlen(cols) + strlen(t->name) + strlen(rest) + 32;
    char *sql = vs_xmalloc(n);
    snprintf(sql, n, "SELECT %s FROM %s %s", cols, t->name, rest);
    vs_free(cols);
    struct vs_stmt *st = vs_store__prep(s, sql, what);
    vs_free(sql);
    return st;
}

/* Steps st (bound) and hands each row, read as t, to fn; finalizes st. */
static int scan_rows(struct vs_store *s, struct vs_stmt *st, const struct sq_table *t, size_t size,
                     int (*fn)(void *ctx, const void *row), void *ctx, const char *what)
{
    int rc, ret = 0;
    void *row = vs_xmalloc(size);
    while ((rc = vs_db_step(st)) == VS_DB_ROW) {
        memset(row, 0, size);
        vs_store__read_row(st, 0, t, row);
        ret = fn(ctx, row);
        vs_store__free_row(t, row);
        if (ret)
            break;
    }
    vs_free(row);
    vs_db_finalize(st);
    if (ret)
        return ret;
    return rc == VS_DB_DONE ? 0 : vs_store__err(s, rc, what);
}

int vs_store__run_change(struct vs_store *s, struct vs_stmt *st, const char *what, int64_t *out_n)
{
    int rc = vs_db_step(st);
    vs_db_finalize(st);
    if (rc != VS_DB_DONE)
        return vs_store__err(s, rc, what);
    if (out_n)
        *out_n = vs_db_changes(s);
    return 0;
}

/* A change of integers ?1 (a) and, when nparams is 2, ?2 (b); *out_n
 * rows changed. */
static int change(struct vs_store *s, const char *sql, int nparams, int64_t a, int64_t b,
                  const char *what, int64_t *out_n)
{
    struct vs_stmt *st = vs_store__prep(s, sql, what);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, a);
    if (nparams > 1)
        vs_db_bind_int64(st, 2, b);
    return vs_store__run_change(s, st, what, out_n);
}

int vs_store_user_by_email(struct vs_store *s, const char *email, struct vs_user *out)
{
    if (!email || !*email)
        return VS_ENOTFOUND;
    struct vs_stmt *st = prep_select(s, &vs_store__user, "WHERE email_addr = ?1", "user by email");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_text(st, 1, email, -1, VS_DB_TRANSIENT);
    int rc = vs_db_step(st);
    if (rc == VS_DB_ROW) {
        memset(out, 0, sizeof(*out));
        vs_store__read_row(st, 0, &vs_store__user, out);
    }
    vs_db_finalize(st);
    if (rc == VS_DB_ROW)
        return 0;
    return rc == VS_DB_DONE ? VS_ENOTFOUND : vs_store__err(s, rc, "user by email");
}

int vs_store_user_update(struct vs_store *s, const struct vs_user *u)
{
    if (!u->id || !u->name[0])
        return VS_EINVAL;
    struct vs_user cur;
    memset(&cur, 0, sizeof(cur));
    int rc = vs_store__enter(s);
    if (rc != 0)
        return rc;
    /* The team stays the store's: only vs_store_user_set_team moves a user,
     * so that nusers stays right. The credit columns stay the validator's
     * (store_credit.c): the caller's copy was read before, and a grant made
     * meanwhile must not be undone. */
    rc = vs_store_user_get(s, u->id, &cur);
    if (rc == 0) {
        struct vs_user w = *u;
        w.teamid = cur.teamid;
        w.total_credit = cur.total_credit;
        w.expavg_credit = cur.expavg_credit;
        w.expavg_time = cur.expavg_time;
        rc = vs_store__update(s, SQ_USER_UPDATE, &vs_store__user, &w);
    }
    vs_user_cleanup(&cur);
    return vs_store__leave(s, rc);
}

int vs_store_user_set_team(struct vs_store *s, int64_t userid, int64_t teamid)
{
    struct vs_user u;
    memset(&u, 0, sizeof(u));
    int rc = vs_store__enter(s);
    if (rc != 0)
        return rc;
    rc = vs_store_user_get(s, userid, &u);
    int64_t n = 0;
    if (rc == 0 && teamid && u.teamid != teamid) {
        rc = change(s, "UPDATE team SET nusers = nusers + 1 WHERE id = ?1", 1, teamid, 0,
                    "team join", &n);
        if (rc == 0 && n != 1)
            rc = VS_ENOTFOUND;
    }
    if (rc == 0 && u.teamid && u.teamid != teamid)
        rc = change(s, "UPDATE team SET nusers = nusers - 1 WHERE id = ?1 AND nusers > 0", 1,
                    u.teamid, 0, "team leave", NULL);
    if (rc == 0 && u.teamid != teamid)
        rc = change(s, "UPDATE \"user\" SET teamid = ?2 WHERE id = ?1", 2, userid, teamid,
                    "user team", NULL);
    vs_user_cleanup(&u);
    return vs_store__leave(s, rc);
}

int vs_store_user_delete(struct vs_store *s, int64_t userid)
{
    int rc = vs_store_user_set_team(s, userid, 0);
    if (rc != 0)
        return rc;
    char auth[VS_AUTH_MAX], name[64];
    if ((rc = vs_store__make_authenticator(auth, sizeof(auth))) != 0)
        return rc;
    snprintf(name, sizeof(name), "deleted_%lld", (long long)userid);
    if ((rc = vs_store__enter(s)) != 0)
        return rc;
    struct vs_stmt *st = vs_store__prep(
        s,
        "UPDATE \"user\" SET name = ?2, email_addr = '', authenticator = ?3, passwd_hash = '',"
        " country = '', venue = '', cross_project_id = '', global_prefs = NULL,"
        " project_prefs = NULL WHERE id = ?1",
        "user delete");
    int64_t n = 0;
    if (!st) {
        rc = VS_ESTORE;
    } else {
        vs_db_bind_int64(st, 1, userid);
        vs_db_bind_text(st, 2, name, -1, VS_DB_TRANSIENT);
        vs_db_bind_text(st, 3, auth, -1, VS_DB_TRANSIENT);
        rc = vs_store__run_change(s, st, "user delete", &n);
        if (rc == 0 && n != 1)
            rc = VS_ENOTFOUND;
    }
    if (rc == 0)
        rc = change(s,
                    "UPDATE host SET domain_name = '', last_ip_addr = '', external_ip_addr = '',"
                    " host_cpid = '', venue = '' WHERE userid = ?1",
                    1, userid, 0, "user delete hosts", NULL);
    /* The team's founder is gone: the team has none now. */
    if (rc == 0)
        rc = change(s, "UPDATE team SET userid = 0 WHERE userid = ?1", 1, userid, 0,
                    "user delete founder", NULL);
    /* Its web sessions end with it (schema v8). */
    if (rc == 0)
        rc = change(s, "DELETE FROM site_session WHERE userid = ?1", 1, userid, 0,
                    "user delete sessions", NULL);
    explicit_bzero(auth, sizeof(auth));
    return vs_store__leave(s, rc);
}

/* One text column of user userid; VS_ENOTFOUND if no such user. */
static int user_set_text(struct vs_store *s, int64_t userid, const char *sql, const char *what,
                         const char *text)
{
    struct vs_stmt *st = vs_store__prep(s, sql, what);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, userid);
    vs_db_bind_text(st, 2, text, -1, VS_DB_TRANSIENT);
    int64_t n = 0;
    int rc = vs_store__run_change(s, st, what, &n);
    return rc == 0 && n != 1 ? VS_ENOTFOUND : rc;
}

int vs_store_user_set_global_prefs(struct vs_store *s, int64_t userid, const char *prefs)
{
    return user_set_text(s, userid, "UPDATE \"user\" SET global_prefs = ?2 WHERE id = ?1",
                         "user prefs", prefs);
}

int vs_store_user_set_cpid(struct vs_store *s, int64_t userid, const char *cpid)
{
    return user_set_text(s, userid, "UPDATE \"user\" SET cross_project_id = ?2 WHERE id = ?1",
                         "user cpid", cpid);
}

struct host_scan {
    int (*fn)(void *ctx, const struct vs_host *h);
    void *ctx;
};

static int host_row(void *ctx, const void *row)
{
    struct host_scan *h = ctx;
    return h->fn(h->ctx, row);
}

int vs_store_user_hosts(struct vs_store *s, int64_t userid, int limit,
                        int (*fn)(void *ctx, const struct vs_host *h), void *ctx)
{
    struct vs_stmt *st =
        prep_select(s, &vs_store__host,
                    "WHERE userid = ?1 ORDER BY rpc_time DESC, id DESC LIMIT ?2", "user hosts");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, userid);
    vs_db_bind_int(st, 2, limit);
    struct host_scan h = {fn, ctx};
    return scan_rows(s, st, &vs_store__host, sizeof(struct vs_host), host_row, &h, "user hosts");
}

struct result_scan {
    vs_store_result_fn fn;
    void *ctx;
};

static int result_row(void *ctx, const void *row)
{
    struct result_scan *r = ctx;
    return r->fn(r->ctx, row);
}

int vs_store_user_results(struct vs_store *s, int64_t userid, int limit, vs_store_result_fn fn,
                          void *ctx)
{
    struct vs_stmt *st =
        prep_select(s, &vs_store__result,
                    "WHERE userid = ?1 AND sent_time > 0 ORDER BY sent_time DESC, id DESC LIMIT ?2",
                    "user results");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, userid);
    vs_db_bind_int(st, 2, limit);
    struct result_scan r = {fn, ctx};
    return scan_rows(s, st, &vs_store__result, sizeof(struct vs_result), result_row, &r,
                     "user results");
}

struct user_scan {
    int (*fn)(void *ctx, const struct vs_user *u);
    void *ctx;
};

static int user_row(void *ctx, const void *row)
{
    struct user_scan *u = ctx;
    return u->fn(u->ctx, row);
}

int vs_store_team_members(struct vs_store *s, int64_t teamid, int limit,
                          int (*fn)(void *ctx, const struct vs_user *u), void *ctx)
{
    struct vs_stmt *st =
        prep_select(s, &vs_store__user, "WHERE teamid = ?1 ORDER BY id LIMIT ?2", "team members");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, teamid);
    vs_db_bind_int(st, 2, limit);
    struct user_scan u = {fn, ctx};
    return scan_rows(s, st, &vs_store__user, sizeof(struct vs_user), user_row, &u, "team members");
}

struct team_scan {
    int (*fn)(void *ctx, const struct vs_team *t);
    void *ctx;
};

static int team_row(void *ctx, const void *row)
{
    struct team_scan *t = ctx;
    return t->fn(t->ctx, row);
}

int vs_store_teams_find(struct vs_store *s, const char *part, int limit,
                        int (*fn)(void *ctx, const struct vs_team *t), void *ctx)
{
    /* LIKE's pattern: part with its wildcards escaped ('!' is the escape). */
    size_t n = strlen(part ? part : "");
    char *pat = vs_xmalloc(2 * n + 3);
    size_t k = 0;
    pat[k++] = '%';
    for (size_t i = 0; i < n; i++) {
        if (part[i] == '%' || part[i] == '_' || part[i] == '!')
            pat[k++] = '!';
        pat[k++] = part[i];
    }
    pat[k++] = '%';
    pat[k] = '\0';
    struct vs_stmt *st = prep_select(
        s, &vs_store__team, "WHERE lower(name) LIKE lower(?1) ESCAPE '!' ORDER BY name LIMIT ?2",
        "teams find");
    if (!st) {
        vs_free(pat);
        return VS_ESTORE;
    }
    vs_db_bind_text(st, 1, pat, -1, VS_DB_TRANSIENT);
    vs_db_bind_int(st, 2, limit);
    vs_free(pat);
    struct team_scan t = {fn, ctx};
    return scan_rows(s, st, &vs_store__team, sizeof(struct vs_team), team_row, &t, "teams find");
}

int vs_store_host_set_venue(struct vs_store *s, int64_t hostid, int64_t userid, const char *venue)
{
    struct vs_stmt *st =
        vs_store__prep(s, "UPDATE host SET venue = ?3 WHERE id = ?1 AND userid = ?2", "host venue");
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, hostid);
    vs_db_bind_int64(st, 2, userid);
    vs_db_bind_text(st, 3, venue ? venue : "", -1, VS_DB_TRANSIENT);
    int64_t n = 0;
    int rc = vs_store__run_change(s, st, "host venue", &n);
    return rc == 0 && n != 1 ? VS_ENOTFOUND : rc;
}
