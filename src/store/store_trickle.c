/*
 * Trickle messages: BOINC's msg_from_host (trickle-ups a client
 * sent) and msg_to_host (trickle-downs waiting for a host). The tables are
 * created on first use (CREATE TABLE IF NOT EXISTS), so a project that
 * never sees a trickle carries no schema change. Trickles are rare: the
 * statements are prepared per call, not cached.
 */
#include <stdio.h>
#include <string.h>

#include "store/store_int.h"
#include "volsched/alloc.h"
#include "volsched/store_trickle.h"

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

int vs_store__trickle_ensure(struct vs_store *s)
{
    int rc = vs_db_exec(s, schema);
    return rc == VS_DB_OK ? 0 : vs_store__err(s, rc, "trickle tables");
}

static int run(struct vs_store *s, const char *sql, struct vs_stmt **out)
{
    int rc = vs_store__trickle_ensure(s);
    if (rc)
        return rc;
    rc = vs_db_prepare(s, sql, out);
    return rc == VS_DB_OK ? 0 : vs_store__err(s, rc, "trickle statement");
}

static int step_done(struct vs_store *s, struct vs_stmt *st, const char *what)
{
    int rc = vs_db_step(st);
    vs_db_finalize(st);
    return rc == VS_DB_DONE ? 0 : vs_store__err(s, rc, what);
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
        vs_store__copy(t.result_name, (const char *)vs_db_column_text(st, 3),
                       sizeof(t.result_name));
        vs_store__copy(t.variety, (const char *)vs_db_column_text(st, 4), sizeof(t.variety));
        t.xml = (const char *)vs_db_column_text(st, 5);
        if ((ret = fn(ctx, &t)) != 0)
            break;
    }
    vs_db_finalize(st);
    if (ret)
        return ret;
    return rc == VS_DB_DONE || rc == VS_DB_ROW ? 0 : vs_store__err(s, rc, "trickle select");
}

/* The two mailboxes: trickle-ups from hosts, trickle-downs to them. They
 * differ only in the table and in that a trickle-up names its result. */
struct box {
    const char *table;
    bool up;
};
static const struct box UP = {"msg_from_host", true}, DOWN = {"msg_to_host", false};

static int box_add(struct vs_store *s, const struct box *b, int64_t now, int64_t hostid,
                   const char *result_name, const char *variety, const char *xml)
{
    char sql[200];
    snprintf(sql, sizeof(sql),
             "INSERT INTO %s (create_time, hostid, variety, xml%s) VALUES (?1, ?2, ?3, ?4%s)",
             b->table, b->up ? ", result_name" : "", b->up ? ", ?5" : "");
    struct vs_stmt *st;
    int rc = run(s, sql, &st);
    if (rc)
        return rc;
    vs_db_bind_int64(st, 1, now);
    vs_db_bind_int64(st, 2, hostid);
    vs_db_bind_text(st, 3, variety ? variety : "", -1, VS_DB_STATIC);
    vs_db_bind_text(st, 4, xml ? xml : "", -1, VS_DB_STATIC);
    if (b->up)
        vs_db_bind_text(st, 5, result_name ? result_name : "", -1, VS_DB_STATIC);
    return step_done(s, st, b->up ? "msg_from_host insert" : "msg_to_host insert");
}

/* Calls fn for up to limit unhandled messages, oldest first: a host's
 * (trickle-downs), or all (trickle-ups). */
static int box_list(struct vs_store *s, const struct box *b, int64_t hostid, int limit,
                    vs_store_trickle_fn fn, void *ctx)
{
    char sql[240];
    snprintf(sql, sizeof(sql),
             "SELECT id, create_time, hostid, %s, variety, xml FROM %s WHERE handled = 0%s "
             "ORDER BY id LIMIT ?1",
             b->up ? "result_name" : "''", b->table, b->up ? "" : " AND hostid = ?2");
    struct vs_stmt *st;
    int rc = run(s, sql, &st);
    if (rc)
        return rc;
    vs_db_bind_int(st, 1, limit);
    if (!b->up)
        vs_db_bind_int64(st, 2, hostid);
    return each(s, st, fn, ctx);
}

static int box_handled(struct vs_store *s, const struct box *b, int64_t id)
{
    char sql[96];
    snprintf(sql, sizeof(sql), "UPDATE %s SET handled = 1 WHERE id = ?1", b->table);
    struct vs_stmt *st;
    int rc = run(s, sql, &st);
    if (rc)
        return rc;
    vs_db_bind_int64(st, 1, id);
    return step_done(s, st, b->up ? "msg_from_host update" : "msg_to_host update");
}

int vs_store_trickle_up_add(struct vs_store *s, int64_t now, int64_t hostid,
                            const char *result_name, const char *variety, const char *xml)
{
    return box_add(s, &UP, now, hostid, result_name, variety, xml);
}

int vs_store_trickle_ups_unhandled(struct vs_store *s, int limit, vs_store_trickle_fn fn, void *ctx)
{
    return box_list(s, &UP, 0, limit > 0 ? limit : 100, fn, ctx);
}

int vs_store_trickle_up_handled(struct vs_store *s, int64_t id)
{
    return box_handled(s, &UP, id);
}

int vs_store_trickle_down_add(struct vs_store *s, int64_t now, int64_t hostid, const char *variety,
                              const char *xml)
{
    return box_add(s, &DOWN, now, hostid, NULL, variety, xml);
}

int vs_store_trickle_downs_of_host(struct vs_store *s, int64_t hostid, int limit,
                                   vs_store_trickle_fn fn, void *ctx)
{
    return box_list(s, &DOWN, hostid, limit > 0 ? limit : 10, fn, ctx);
}

int vs_store_trickle_down_sent(struct vs_store *s, int64_t id)
{
    return box_handled(s, &DOWN, id);
}
