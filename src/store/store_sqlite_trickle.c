/*
 * Trickle messages (SQLite): BOINC's msg_from_host (trickle-ups a client
 * sent) and msg_to_host (trickle-downs waiting for a host). The tables are
 * created on first use (CREATE TABLE IF NOT EXISTS), so a project that
 * never sees a trickle carries no schema change. Trickles are rare: the
 * statements are prepared per call, not cached.
 */
#include <string.h>

#include "store/sqlite_int.h"
#include "store/store_trickle.h"
#include "volsched/alloc.h"

/* BOINC-COMPAT: db/schema.sql msg_from_host / msg_to_host (result_name added) */
static const char *const schema =
    "CREATE TABLE IF NOT EXISTS msg_from_host (id INTEGER PRIMARY KEY, create_time INTEGER NOT "
    "NULL, hostid INTEGER NOT NULL, result_name TEXT NOT NULL, variety TEXT NOT NULL, handled "
    "INTEGER NOT NULL DEFAULT 0, xml TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS msg_from_host_handled ON msg_from_host(handled, id);"
    "CREATE TABLE IF NOT EXISTS msg_to_host (id INTEGER PRIMARY KEY, create_time INTEGER NOT "
    "NULL, hostid INTEGER NOT NULL, variety TEXT NOT NULL, handled INTEGER NOT NULL DEFAULT 0, "
    "xml TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS msg_to_host_host ON msg_to_host(hostid, handled);";

static int ensure(struct vs_store *s)
{
    int rc = vs_db_exec(s, schema);
    return rc == VS_DB_OK ? 0 : vs_sq__err(s, rc, "trickle tables");
}

static int run(struct vs_store *s, const char *sql, struct vs_stmt **out)
{
    int rc = ensure(s);
    if (rc)
        return rc;
    rc = vs_db_prepare(s, sql, out);
    return rc == VS_DB_OK ? 0 : vs_sq__err(s, rc, "trickle statement");
}

static int step_done(struct vs_store *s, struct vs_stmt *st, const char *what)
{
    int rc = vs_db_step(st);
    vs_db_finalize(st);
    return rc == VS_DB_DONE ? 0 : vs_sq__err(s, rc, what);
}

int vs_store_trickle_up_add(struct vs_store *s, int64_t now, int64_t hostid,
                            const char *result_name, const char *variety, const char *xml)
{
    struct vs_stmt *st;
    int rc = run(s,
                 "INSERT INTO msg_from_host (create_time, hostid, result_name, variety, xml) "
                 "VALUES (?1, ?2, ?3, ?4, ?5)",
                 &st);
    if (rc)
        return rc;
    vs_db_bind_int64(st, 1, now);
    vs_db_bind_int64(st, 2, hostid);
    vs_db_bind_text(st, 3, result_name ? result_name : "", -1, VS_DB_STATIC);
    vs_db_bind_text(st, 4, variety ? variety : "", -1, VS_DB_STATIC);
    vs_db_bind_text(st, 5, xml ? xml : "", -1, VS_DB_STATIC);
    return step_done(s, st, "msg_from_host insert");
}

static int each(struct vs_store *s, struct vs_stmt *st, vs_store_trickle_fn fn, void *ctx)
{
    int rc, ret = 0;
    while ((rc = vs_db_step(st)) == VS_DB_ROW) {
        struct vs_trickle t;
        memset(&t, 0, sizeof(t));
        t.id = vs_db_column_int64(st, 0);
        t.create_time = vs_db_column_int64(st, 1);
        t.hostid = vs_db_column_int64(st, 2);
        vs_sq__copy(t.result_name, (const char *)vs_db_column_text(st, 3), sizeof(t.result_name));
        vs_sq__copy(t.variety, (const char *)vs_db_column_text(st, 4), sizeof(t.variety));
        t.xml = (const char *)vs_db_column_text(st, 5);
        if ((ret = fn(ctx, &t)) != 0)
            break;
    }
    vs_db_finalize(st);
    if (ret)
        return ret;
    return rc == VS_DB_DONE || rc == VS_DB_ROW ? 0 : vs_sq__err(s, rc, "trickle select");
}

int vs_store_trickle_ups_unhandled(struct vs_store *s, int limit, vs_store_trickle_fn fn, void *ctx)
{
    struct vs_stmt *st;
    int rc = run(s,
                 "SELECT id, create_time, hostid, result_name, variety, xml FROM msg_from_host "
                 "WHERE handled = 0 ORDER BY id LIMIT ?1",
                 &st);
    if (rc)
        return rc;
    vs_db_bind_int(st, 1, limit > 0 ? limit : 100);
    return each(s, st, fn, ctx);
}

int vs_store_trickle_up_handled(struct vs_store *s, int64_t id)
{
    struct vs_stmt *st;
    int rc = run(s, "UPDATE msg_from_host SET handled = 1 WHERE id = ?1", &st);
    if (rc)
        return rc;
    vs_db_bind_int64(st, 1, id);
    return step_done(s, st, "msg_from_host update");
}

int vs_store_trickle_down_add(struct vs_store *s, int64_t now, int64_t hostid, const char *variety,
                              const char *xml)
{
    struct vs_stmt *st;
    int rc = run(s,
                 "INSERT INTO msg_to_host (create_time, hostid, variety, xml) VALUES (?1, ?2, ?3, "
                 "?4)",
                 &st);
    if (rc)
        return rc;
    vs_db_bind_int64(st, 1, now);
    vs_db_bind_int64(st, 2, hostid);
    vs_db_bind_text(st, 3, variety ? variety : "", -1, VS_DB_STATIC);
    vs_db_bind_text(st, 4, xml ? xml : "", -1, VS_DB_STATIC);
    return step_done(s, st, "msg_to_host insert");
}

int vs_store_trickle_downs_of_host(struct vs_store *s, int64_t hostid, int limit,
                                   vs_store_trickle_fn fn, void *ctx)
{
    struct vs_stmt *st;
    int rc = run(s,
                 "SELECT id, create_time, hostid, '', variety, xml FROM msg_to_host "
                 "WHERE hostid = ?1 AND handled = 0 ORDER BY id LIMIT ?2",
                 &st);
    if (rc)
        return rc;
    vs_db_bind_int64(st, 1, hostid);
    vs_db_bind_int(st, 2, limit > 0 ? limit : 10);
    return each(s, st, fn, ctx);
}

int vs_store_trickle_down_sent(struct vs_store *s, int64_t id)
{
    struct vs_stmt *st;
    int rc = run(s, "UPDATE msg_to_host SET handled = 1 WHERE id = ?1", &st);
    if (rc)
        return rc;
    vs_db_bind_int64(st, 1, id);
    return step_done(s, st, "msg_to_host update");
}
