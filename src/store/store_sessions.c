/*
 * The volunteers' web site's sessions (store_accounts.h, schema v8): one
 * row per logged-in cookie, so that logging out, a new password or a
 * deleted account ends a session on the server, not only in the browser.
 * A few statements per page view, compiled per call like the other account
 * statements.
 */
#include <string.h>

#include "store/store_int.h"
#include "volsched/store_accounts.h"

static bool id_ok(const char *id)
{
    return id && id[0] && strlen(id) < 128;
}

/* sql compiled, with text ?1 when id is not NULL and the integers ?2.. */
static struct vs_stmt *prep(struct vs_store *s, const char *sql, const char *id,
                            const int64_t *ints, int nints, const char *what)
{
    struct vs_stmt *st = vs_store__prep(s, sql, what);
    if (!st)
        return NULL;
    if (id)
        vs_db_bind_text(st, 1, id, -1, VS_DB_TRANSIENT);
    for (int i = 0; i < nints; i++)
        vs_db_bind_int64(st, 2 + i, ints[i]);
    return st;
}

static int change(struct vs_store *s, const char *sql, const char *id, const int64_t *ints,
                  int nints, const char *what, int64_t *out_n)
{
    struct vs_stmt *st = prep(s, sql, id, ints, nints, what);
    return st ? vs_store__run_change(s, st, what, out_n) : VS_ESTORE;
}

int vs_store_session_add(struct vs_store *s, const char *id, int64_t userid, int64_t now,
                         int64_t expire_time)
{
    if (!id_ok(id) || userid <= 0)
        return VS_EINVAL;
    int rc = vs_store__enter(s);
    if (rc != 0)
        return rc;
    const int64_t v[3] = {userid, now, expire_time};
    /* Everyone's expired sessions go: the table holds live ones only. */
    rc = change(s, "DELETE FROM site_session WHERE expire_time <= ?2 AND id <> ?1", id, &v[1], 1,
                "session expiry", NULL);
    if (rc == 0)
        rc = change(s,
                    "INSERT INTO site_session(id, userid, create_time, expire_time) "
                    "VALUES(?1, ?2, ?3, ?4)",
                    id, v, 3, "session add", NULL);
    return vs_store__leave(s, rc);
}

int vs_store_session_check(struct vs_store *s, const char *id, int64_t userid, int64_t now)
{
    if (!id_ok(id) || userid <= 0)
        return VS_ENOTFOUND;
    const int64_t v[2] = {userid, now};
    struct vs_stmt *st =
        prep(s, "SELECT 1 FROM site_session WHERE id = ?1 AND userid = ?2 AND expire_time > ?3", id,
             v, 2, "session check");
    if (!st)
        return VS_ESTORE;
    int rc = vs_db_step(st);
    vs_db_finalize(st);
    if (rc == VS_DB_ROW)
        return 0;
    return rc == VS_DB_DONE ? VS_ENOTFOUND : vs_store__err(s, rc, "session check");
}

int vs_store_session_end(struct vs_store *s, const char *id)
{
    if (!id_ok(id))
        return VS_EINVAL;
    return change(s, "DELETE FROM site_session WHERE id = ?1", id, NULL, 0, "session end", NULL);
}

int vs_store_session_end_user(struct vs_store *s, int64_t userid, const char *keep, int64_t *out_n)
{
    /* ?1 is always bound: "" matches no session. */
    return change(s, "DELETE FROM site_session WHERE userid = ?2 AND id <> ?1", keep ? keep : "",
                  &userid, 1, "session end user", out_n);
}
