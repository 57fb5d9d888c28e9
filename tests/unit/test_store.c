/*
 * Unit tests of the store on a real database: a SQLite file in a temporary
 * directory, or with VS_TEST_PG set a fresh database on the PostgreSQL
 * server tests/pg/run.sh started (store_backend.h): every operation,
 * claim-never-twice across two connections, transactions and savepoints
 * rolling back. The same tests on both backends: the store's contract.
 */
#include "vs_test.h"

#include "store_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "volsched/alloc.h"
#include "volsched/store.h"
#include "volsched/store_ops.h"
#include "volsched/store_sched.h"
#include "volsched/str.h"

/* Counts rows with a raw SQL query on a separate connection (checks what
 * is really stored, not what the handle believes). */
static int64_t count_sql(const struct store_fx *f, const char *sql)
{
    return vs_test_sql_i64(f->url, sql);
}

/* Runs raw SQL on a separate connection (a change no store operation makes). */
static int exec_sql(const struct store_fx *f, const char *sql)
{
    return vs_test_sql_exec(f->url, sql);
}

static int64_t add_app(struct vs_store *s, const char *name)
{
    struct vs_app a;
    memset(&a, 0, sizeof(a));
    assert_int_equal(vs_strlcpy(a.name, name, sizeof(a.name)), 0);
    a.weight = 1;
    assert_int_equal(vs_store_app_add(s, &a), 0);
    assert_true(a.id > 0);
    return a.id;
}

static int64_t add_wu(struct vs_store *s, int64_t appid, const char *name, int flags)
{
    struct vs_workunit wu;
    vs_workunit_defaults(&wu);
    wu.appid = appid;
    assert_int_equal(vs_strlcpy(wu.name, name, sizeof(wu.name)), 0);
    wu.xml_doc = vs_xstrdup("<file_info><name>in1</name></file_info><workunit/>");
    wu.transitioner_flags = flags;
    wu.transition_time = flags ? VS_TIME_NEVER : 100;
    assert_int_equal(vs_store_workunit_add(s, &wu), 0);
    vs_workunit_cleanup(&wu);
    return wu.id;
}

static int64_t add_result(struct vs_store *s, int64_t appid, int64_t wuid, const char *name)
{
    struct vs_result r;
    memset(&r, 0, sizeof(r));
    r.workunitid = wuid;
    r.appid = appid;
    r.server_state = VS_RESULT_SERVER_STATE_UNSENT;
    r.size_class = -1;
    assert_int_equal(vs_strlcpy(r.name, name, sizeof(r.name)), 0);
    r.xml_doc_in = vs_xstrdup("<file_info><name>out</name></file_info><result/>");
    assert_int_equal(vs_store_result_add(s, &r), 0);
    vs_result_cleanup(&r);
    return r.id;
}

static void test_open(void **state)
{
    struct store_fx *f = *state;
    assert_int_equal(count_sql(f, "SELECT value FROM store_meta WHERE key='schema_version'"),
                     vs_store_schema_version());
    const char *tables = vs_test_pg() ? "information_schema.tables WHERE table_schema = 'public'"
                                      : "sqlite_master WHERE type='table'";
    char q[300];
    snprintf(q, sizeof(q),
             "SELECT count(*) FROM %s AND table_name IN ('platform','app','app_version','user',"
             "'team','host','workunit','result','assignment')",
             tables);
    if (!vs_test_pg())
        memcpy(strstr(q, "table_name"), "      name", 10);
    assert_int_equal(count_sql(f, q), 9);
    struct vs_store *s2;
    if (!vs_test_pg()) {
        /* WAL is persistent in the file header. */
        sqlite3 *db;
        assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
        sqlite3_stmt *st;
        assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
        sqlite3_finalize(st);
        sqlite3_close(db);
    }

    /* Reopening an existing store (SQLite: the bare path form) keeps its data. */
    add_app(f->s, "keep");
    assert_int_equal(vs_store_open(vs_test_pg() ? f->url : f->path, 0, NULL, &s2), 0);
    struct vs_app a;
    assert_int_equal(vs_store_app_by_name(s2, "keep", &a), 0);
    vs_store_close(s2);

    char missing[160];
    snprintf(missing, sizeof(missing), "sqlite:%s/none.db", f->dir);
    assert_int_equal(vs_store_open(missing, 0, NULL, &s2), VS_ENOTFOUND);
    /* Nothing listens on port 1: a PostgreSQL store that cannot be reached. */
    assert_int_equal(vs_store_open("postgresql://127.0.0.1:1/x", 0, NULL, &s2), VS_ESTORE);
    assert_int_equal(vs_store_open("postgresql:x", 0, NULL, &s2), VS_EINVAL);
    assert_int_equal(vs_store_open("ftp://x", 0, NULL, &s2), VS_EINVAL);
    assert_int_equal(vs_store_open("", 0, NULL, &s2), VS_EINVAL);

    /* A store written by a newer volsched is refused, not misread. */
    char newer[200], cmd[200];
    vs_test_store_url(newer, sizeof(newer), f->dir, "newer.db");
    assert_int_equal(vs_store_open(newer, VS_STORE_CREATE, NULL, &s2), 0);
    vs_store_close(s2);
    snprintf(cmd, sizeof(cmd), "UPDATE store_meta SET value = '%d'", vs_store_schema_version() + 1);
    assert_int_equal(vs_test_sql_exec(newer, cmd), 0);
    assert_int_equal(vs_store_open(newer, 0, NULL, &s2), VS_ECONFIG);
    vs_test_store_drop(newer);
    char p[200];
    const char *suffix[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof(p), "%s/newer.db%s", f->dir, suffix[i]);
        unlink(p);
    }
}

static void test_apps_catalog(void **state)
{
    struct store_fx *f = *state;
    struct vs_platform p;
    memset(&p, 0, sizeof(p));
    assert_int_equal(vs_store_platform_add(f->s, &p), VS_EINVAL);
    assert_int_equal(vs_strlcpy(p.name, "x86_64-pc-linux-gnu", sizeof(p.name)), 0);
    assert_int_equal(vs_store_platform_add(f->s, &p), 0);
    struct vs_platform dup = p;
    assert_int_equal(vs_store_platform_add(f->s, &dup), VS_EEXISTS);
    struct vs_platform got;
    assert_int_equal(vs_store_platform_by_name(f->s, "x86_64-pc-linux-gnu", &got), 0);
    assert_int_equal(got.id, p.id);
    assert_int_equal(vs_store_platform_by_name(f->s, "nope", &got), VS_ENOTFOUND);

    int64_t appid = add_app(f->s, "uppercase");
    struct vs_app a;
    assert_int_equal(vs_store_app_get(f->s, appid, &a), 0);
    assert_string_equal(a.name, "uppercase");
    struct vs_app dupa = a;
    assert_int_equal(vs_store_app_add(f->s, &dupa), VS_EEXISTS);

    struct vs_app_version av;
    memset(&av, 0, sizeof(av));
    av.appid = appid;
    av.platformid = p.id;
    av.version_num = 101;
    av.avg_ncpus = 1;
    av.nfiles = 2;
    av.files = vs_xcalloc(2, sizeof(*av.files));
    assert_int_equal(vs_strlcpy(av.files[0].name, "uppercase_101", VS_NAME_MAX), 0);
    assert_int_equal(vs_strlcpy(av.files[0].path, "1f/uppercase_101", VS_PATH_MAX), 0);
    assert_int_equal(
        vs_strlcpy(av.files[0].md5_cksum, "9cc9989f4fd5c946f532175dc153d9a1", VS_SHORT_MAX), 0);
    av.files[0].nbytes = 16824;
    av.files[0].main_program = 1;
    av.files[0].executable = 1;
    av.files[0].file_signature = vs_xstrdup("abcdef\n.\n");
    assert_int_equal(vs_strlcpy(av.files[1].name, "lib.so", VS_NAME_MAX), 0);
    assert_int_equal(vs_strlcpy(av.files[1].open_name, "lib.so", VS_NAME_MAX), 0);
    av.files[1].copy_file = 1;
    /* Two main programs: refused before anything is written. */
    av.files[1].main_program = 1;
    assert_int_equal(vs_store_app_version_add(f->s, &av), VS_EINVAL);
    av.files[1].main_program = 0;
    assert_int_equal(vs_store_app_version_add(f->s, &av), 0);
    assert_true(av.id > 0);
    /* Same (app, platform, version, plan class): refused, and the failed
     * insert leaves no orphan file rows. */
    int64_t first_id = av.id;
    av.id = 0;
    assert_int_equal(vs_store_app_version_add(f->s, &av), VS_EEXISTS);
    assert_int_equal(count_sql(f, "SELECT count(*) FROM app_version_file"), 2);
    av.id = first_id;
    vs_app_version_cleanup(&av);

    struct vs_catalog c;
    memset(&c, 0, sizeof(c));
    assert_int_equal(vs_store_catalog_load(f->s, &c), 0);
    assert_int_equal(c.nplatforms, 1);
    assert_int_equal(c.napps, 1);
    assert_int_equal(c.napp_versions, 1);
    const struct vs_app_version *l = &c.app_versions[0];
    assert_string_equal(l->app_name, "uppercase");
    assert_string_equal(l->platform_name, "x86_64-pc-linux-gnu");
    assert_int_equal(l->version_num, 101);
    assert_int_equal(l->nfiles, 2);
    assert_string_equal(l->files[0].name, "uppercase_101");
    assert_string_equal(l->files[0].path, "1f/uppercase_101");
    assert_string_equal(l->files[0].file_signature, "abcdef\n.\n");
    assert_true(l->files[0].main_program && l->files[0].executable);
    assert_true(l->files[0].nbytes == 16824);
    assert_null(l->files[1].file_signature);
    assert_true(l->files[1].copy_file && !l->files[1].main_program);
    vs_catalog_cleanup(&c);
}

static void test_users_teams(void **state)
{
    struct store_fx *f = *state;
    struct vs_team t;
    memset(&t, 0, sizeof(t));
    assert_int_equal(vs_strlcpy(t.name, "Crunchers", sizeof(t.name)), 0);
    assert_int_equal(vs_store_team_add(f->s, &t), 0);
    struct vs_team t2 = t;
    assert_int_equal(vs_store_team_add(f->s, &t2), VS_EEXISTS);

    struct vs_user u;
    memset(&u, 0, sizeof(u));
    assert_int_equal(vs_strlcpy(u.name, "alice", sizeof(u.name)), 0);
    u.teamid = t.id;
    assert_int_equal(vs_store_user_add(f->s, &u), 0);
    assert_int_equal(strlen(u.authenticator), 32);
    assert_int_equal(strspn(u.authenticator, "0123456789abcdef"), 32);

    struct vs_user bob;
    memset(&bob, 0, sizeof(bob));
    assert_int_equal(vs_strlcpy(bob.name, "bob", sizeof(bob.name)), 0);
    bob.global_prefs = vs_xstrdup("<global_preferences/>");
    assert_int_equal(vs_store_user_add(f->s, &bob), 0);
    assert_string_not_equal(bob.authenticator, u.authenticator);
    vs_user_cleanup(&bob);

    struct vs_user got;
    assert_int_equal(vs_store_user_by_auth(f->s, u.authenticator, &got), 0);
    assert_int_equal(got.id, u.id);
    assert_string_equal(got.name, "alice");
    assert_int_equal(got.teamid, t.id);
    vs_user_cleanup(&got);
    assert_int_equal(vs_store_user_by_auth(f->s, "0000", &got), VS_ENOTFOUND);
    assert_int_equal(vs_store_user_by_auth(f->s, "", &got), VS_ENOTFOUND);
    assert_int_equal(vs_store_user_by_name(f->s, "bob", &got), 0);
    assert_string_equal(got.global_prefs, "<global_preferences/>");
    assert_null(got.project_prefs);
    vs_user_cleanup(&got);

    struct vs_team tg;
    assert_int_equal(vs_store_team_get(f->s, t.id, &tg), 0);
    assert_int_equal(tg.nusers, 1);
    assert_int_equal(vs_store_team_by_name(f->s, "Crunchers", &tg), 0);

    /* Duplicate name: refused; an unknown team: refused and nothing written. */
    struct vs_user dup;
    memset(&dup, 0, sizeof(dup));
    assert_int_equal(vs_strlcpy(dup.name, "alice", sizeof(dup.name)), 0);
    assert_int_equal(vs_store_user_add(f->s, &dup), VS_EEXISTS);
    assert_int_equal(dup.authenticator[0], '\0');
    assert_int_equal(vs_strlcpy(dup.name, "carol", sizeof(dup.name)), 0);
    dup.teamid = 999;
    assert_int_equal(vs_store_user_add(f->s, &dup), VS_ENOTFOUND);
    assert_int_equal(count_sql(f, "SELECT count(*) FROM \"user\" WHERE name='carol'"), 0);
    /* Two users without e-mail are fine; the same e-mail twice is not. */
    struct vs_user e1, e2;
    memset(&e1, 0, sizeof(e1));
    memset(&e2, 0, sizeof(e2));
    assert_int_equal(vs_strlcpy(e1.name, "e1", sizeof(e1.name)), 0);
    assert_int_equal(vs_strlcpy(e1.email_addr, "x@example.org", sizeof(e1.email_addr)), 0);
    assert_int_equal(vs_store_user_add(f->s, &e1), 0);
    assert_int_equal(vs_strlcpy(e2.name, "e2", sizeof(e2.name)), 0);
    assert_int_equal(vs_strlcpy(e2.email_addr, "x@example.org", sizeof(e2.email_addr)), 0);
    assert_int_equal(vs_store_user_add(f->s, &e2), VS_EEXISTS);
}

static void test_hosts(void **state)
{
    struct store_fx *f = *state;
    struct vs_host h;
    memset(&h, 0, sizeof(h));
    assert_int_equal(vs_store_host_add(f->s, &h), VS_EINVAL); /* no user */
    h.userid = 7;
    h.p_ncpus = 4;
    h.p_fpops = 3.5e9;
    h.m_nbytes = 8e9;
    h.d_free = 1e11;
    h.on_frac = 0.9;
    h.active_frac = 0.75;
    assert_int_equal(vs_strlcpy(h.os_name, "Linux Debian", sizeof(h.os_name)), 0);
    assert_int_equal(vs_strlcpy(h.platform_name, "x86_64-pc-linux-gnu", VS_SHORT_MAX), 0);
    assert_int_equal(vs_store_host_add(f->s, &h), 0);
    assert_true(h.id > 0);

    h.rpc_seqno = 5;
    h.rpc_time = 12345;
    h.nresults_today = 3;
    h.nresults_day = 20000;
    h.max_results_day = -1; /* not written by the row update: the operator's column */
    h.error_rate = 0.25;
    assert_int_equal(vs_store_host_update(f->s, &h), 0);
    assert_int_equal(count_sql(f, "SELECT _max_results_day FROM host"), 0);
    assert_int_equal(vs_store_host_set_max_results_day(f->s, h.id, -1), 0);
    assert_int_equal(vs_store_host_set_max_results_day(f->s, h.id + 1000, -1), VS_ENOTFOUND);
    h.max_results_day = 0; /* a scheduler's stale copy must not lift the ban */
    assert_int_equal(vs_store_host_update(f->s, &h), 0);
    struct vs_host g;
    assert_int_equal(vs_store_host_get(f->s, h.id, &g), 0);
    assert_int_equal(g.userid, 7);
    assert_int_equal(g.p_ncpus, 4);
    assert_true(g.p_fpops == 3.5e9 && g.on_frac == 0.9 && g.active_frac == 0.75);
    assert_string_equal(g.os_name, "Linux Debian");
    assert_string_equal(g.platform_name, "x86_64-pc-linux-gnu");
    assert_int_equal(g.rpc_seqno, 5);
    assert_int_equal(g.rpc_time, 12345);
    assert_int_equal(g.nresults_today, 3);
    assert_int_equal(g.nresults_day, 20000);
    assert_int_equal(g.max_results_day, -1);
    assert_true(g.error_rate == 0.25);
    /* BOINC's column names for the underscored fields. */
    assert_int_equal(count_sql(f, "SELECT _max_results_day FROM host"), -1);

    /* Found again by the client's host_cpid, the newest one first. */
    assert_int_equal(vs_strlcpy(h.host_cpid, "cpid-1", sizeof(h.host_cpid)), 0);
    assert_int_equal(vs_store_host_update(f->s, &h), 0);
    struct vs_host h2 = h;
    h2.id = 0;
    assert_int_equal(vs_store_host_add(f->s, &h2), 0);
    assert_int_equal(vs_store_host_by_cpid(f->s, 7, "cpid-1", &g), 0);
    assert_int_equal(g.id, h2.id);
    assert_int_equal(vs_store_host_by_cpid(f->s, 8, "cpid-1", &g), VS_ENOTFOUND);
    assert_int_equal(vs_store_host_by_cpid(f->s, 7, "", &g), VS_ENOTFOUND);
    /* The index keys (on SQLite a statement of their own, on PostgreSQL in
     * the row update): a new owner is stored and found through host_user,
     * the other columns still are. */
    h.userid = 8;
    h.rpc_seqno = 6;
    assert_int_equal(vs_store_host_update(f->s, &h), 0);
    assert_int_equal(vs_store_host_by_cpid(f->s, 8, "cpid-1", &g), 0);
    assert_int_equal(g.id, h.id);
    assert_int_equal(g.rpc_seqno, 6);
    assert_int_equal(vs_store_host_by_cpid(f->s, 7, "cpid-1", &g), 0);
    assert_int_equal(g.id, h2.id);
    /* Unchanged keys: still one row updated, no error. */
    h.rpc_seqno = 7;
    assert_int_equal(vs_store_host_update(f->s, &h), 0);
    assert_int_equal(vs_store_host_get(f->s, h.id, &g), 0);
    assert_int_equal(g.rpc_seqno, 7);
    assert_int_equal(g.userid, 8);

    g.id = 999;
    assert_int_equal(vs_store_host_update(f->s, &g), VS_ENOTFOUND);
    assert_int_equal(vs_store_host_get(f->s, 999, &g), VS_ENOTFOUND);
}

static void test_workunits_assignments(void **state)
{
    struct store_fx *f = *state;
    int64_t appid = add_app(f->s, "a");
    int64_t wuid = add_wu(f->s, appid, "wu1", 0);
    struct vs_workunit wu;
    vs_workunit_defaults(&wu);
    wu.appid = appid;
    assert_int_equal(vs_strlcpy(wu.name, "wu1", sizeof(wu.name)), 0);
    wu.xml_doc = vs_xstrdup("<workunit/>");
    assert_int_equal(vs_store_workunit_add(f->s, &wu), VS_EEXISTS);
    vs_workunit_cleanup(&wu);
    assert_int_equal(vs_store_workunit_add(f->s, &wu), VS_EINVAL); /* no xml_doc */

    assert_int_equal(vs_store_workunit_get(f->s, wuid, &wu), 0);
    assert_string_equal(wu.name, "wu1");
    assert_string_equal(wu.xml_doc, "<file_info><name>in1</name></file_info><workunit/>");
    assert_true(wu.rsc_fpops_est == 3.6e12 && wu.rsc_disk_bound == 1e9);
    assert_int_equal(wu.delay_bound, 7 * 86400);
    assert_int_equal(wu.size_class, -1);
    wu.error_mask = VS_WU_ERROR_CANCELLED;
    wu.priority = 9;
    assert_int_equal(vs_store_workunit_update(f->s, &wu), 0);
    vs_workunit_cleanup(&wu);
    assert_int_equal(vs_store_workunit_by_name(f->s, "wu1", &wu), 0);
    assert_int_equal(wu.error_mask, VS_WU_ERROR_CANCELLED);
    assert_int_equal(wu.priority, 9);
    vs_workunit_cleanup(&wu);
    assert_int_equal(vs_store_workunit_by_name(f->s, "none", &wu), VS_ENOTFOUND);

    struct vs_assignment a = {.target_type = VS_ASSIGN_HOST, .target_id = 3, .workunitid = wuid};
    assert_int_equal(vs_store_assignment_add(f->s, &a), 0);
    struct vs_assignment b = {.target_type = VS_ASSIGN_NONE, .multi = 1, .workunitid = wuid};
    assert_int_equal(vs_store_assignment_add(f->s, &b), 0);
    struct vs_assignment bad = {.target_type = 9, .workunitid = wuid};
    assert_int_equal(vs_store_assignment_add(f->s, &bad), VS_EINVAL);
}

static int count_assign(void *ctx, const struct vs_assignment *a)
{
    int *n = ctx;
    (*n)++;
    return a->target_id == 42 ? 77 : 0;
}

static void test_assignment_scan(void **state)
{
    struct store_fx *f = *state;
    int64_t appid = add_app(f->s, "a");
    int64_t w = add_wu(f->s, appid, "w", VS_TRANSITION_NO_NEW_RESULTS);
    struct vs_assignment a1 = {.target_type = VS_ASSIGN_USER, .target_id = 5, .workunitid = w};
    struct vs_assignment a2 = {.target_type = VS_ASSIGN_TEAM, .target_id = 6, .workunitid = w};
    struct vs_assignment a3 = {
        .target_type = VS_ASSIGN_USER, .target_id = 42, .multi = 1, .workunitid = w};
    assert_int_equal(vs_store_assignment_add(f->s, &a1), 0);
    assert_int_equal(vs_store_assignment_add(f->s, &a2), 0);
    assert_int_equal(vs_store_assignment_add(f->s, &a3), 0);
    int n = 0;
    assert_int_equal(vs_store_assignments(f->s, -1, 0, count_assign, &n), 0);
    assert_int_equal(n, 2);
    n = 0;
    assert_int_equal(vs_store_assignments(f->s, VS_ASSIGN_USER, -1, count_assign, &n), 77);
    assert_int_equal(n, 2); /* stopped at the callback's non-zero return */
}

struct collect {
    int64_t ids[64];
    int n;
    int stop_after;
};

static int collect_job(void *ctx, const struct vs_job *job)
{
    struct collect *c = ctx;
    assert_int_equal(job->result.workunitid, job->wu.id);
    assert_int_equal(job->result.server_state, VS_RESULT_SERVER_STATE_UNSENT);
    assert_non_null(job->wu.xml_doc);
    assert_non_null(job->result.xml_doc_in);
    c->ids[c->n++] = job->result.id;
    return c->stop_after && c->n >= c->stop_after ? 1 : 0;
}

static void test_jobs_unsent_paging(void **state)
{
    struct store_fx *f = *state;
    int64_t appid = add_app(f->s, "a");
    int64_t w1 = add_wu(f->s, appid, "w1", 0);
    int64_t w2 = add_wu(f->s, appid, "w2", VS_TRANSITION_NO_NEW_RESULTS);
    int64_t r[5];
    char name[32];
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof(name), "w1_%d", i);
        r[i] = add_result(f->s, appid, w1, name);
    }
    /* Results of a targeted WU never enter the general cache. */
    add_result(f->s, appid, w2, "w2_0");

    struct collect c = {0};
    struct vs_job_key last = {-1, -1};
    assert_int_equal(vs_store_jobs_unsent(f->s, NULL, 3, collect_job, &c, &last), 0);
    assert_int_equal(c.n, 3);
    assert_int_equal(c.ids[0], r[0]);
    assert_int_equal(last.id, r[2]);
    assert_int_equal(last.priority, 0);
    assert_int_equal(vs_store_jobs_unsent(f->s, &last, 3, collect_job, &c, &last), 0);
    assert_int_equal(c.n, 5);
    assert_int_equal(c.ids[4], r[4]);
    struct vs_job_key before = last;
    assert_int_equal(vs_store_jobs_unsent(f->s, &last, 3, collect_job, &c, &last), 0);
    assert_int_equal(c.n, 5);
    assert_int_equal(last.id, before.id);
    /* A callback's non-zero return stops the scan and is returned. */
    struct collect c2 = {.stop_after = 2};
    assert_int_equal(vs_store_jobs_unsent(f->s, NULL, 10, collect_job, &c2, &last), 1);
    assert_int_equal(c2.n, 2);
    assert_int_equal(vs_store_jobs_unsent(f->s, NULL, 0, collect_job, &c2, &last), VS_EINVAL);

    /* The feeder's order is priority first (higher first), then id: a
     * result of priority 5 made last comes first; one of priority -1 last.
     * A scan positioned in priority 0 continues within it and then goes to
     * the lower priorities, never back up. */
    int64_t w3 = add_wu(f->s, appid, "w3", 0);
    int64_t hi = add_result(f->s, appid, w3, "w3_0");
    int64_t lo = add_result(f->s, appid, w3, "w3_1");
    assert_int_equal(exec_sql(f, "UPDATE result SET priority = 5 WHERE name = 'w3_0'"), 0);
    assert_int_equal(exec_sql(f, "UPDATE result SET priority = -1 WHERE name = 'w3_1'"), 0);
    struct collect c3 = {0};
    assert_int_equal(vs_store_jobs_unsent(f->s, NULL, 100, collect_job, &c3, &last), 0);
    assert_int_equal(c3.n, 7);
    assert_int_equal(c3.ids[0], hi);
    assert_int_equal(c3.ids[1], r[0]);
    assert_int_equal(c3.ids[6], lo);
    assert_int_equal(last.priority, -1);
    struct vs_job_key mid = {0, r[3]};
    struct collect c4 = {0};
    assert_int_equal(vs_store_jobs_unsent(f->s, &mid, 100, collect_job, &c4, &last), 0);
    assert_int_equal(c4.n, 2);
    assert_int_equal(c4.ids[0], r[4]);
    assert_int_equal(c4.ids[1], lo);
    /* What is new since an id: the table's end and the top new priority. */
    int64_t max_id;
    bool have;
    int prio;
    assert_int_equal(vs_store_unsent_newer(f->s, r[4], &max_id, &have, &prio), 0);
    assert_int_equal(max_id, lo);
    assert_true(have);
    assert_int_equal(prio, 5);
    assert_int_equal(vs_store_unsent_newer(f->s, INT64_MAX, &max_id, &have, &prio), 0);
    assert_int_equal(max_id, lo);
    assert_false(have);

    int64_t n;
    assert_int_equal(vs_store_count_results(f->s, appid, VS_RESULT_SERVER_STATE_UNSENT, &n), 0);
    assert_int_equal(n, 8);
    assert_int_equal(vs_store_count_results(f->s, 0, VS_RESULT_SERVER_STATE_UNSENT, &n), 0);
    assert_int_equal(n, 8);
    assert_int_equal(vs_store_count_results(f->s, appid + 1, VS_RESULT_SERVER_STATE_UNSENT, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(vs_store_count_results(f->s, 0, VS_RESULT_SERVER_STATE_OVER, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(vs_store_count_results(f->s, appid, VS_RESULT_SERVER_STATE_OVER, &n), 0);
    assert_int_equal(n, 0);
}

static int count_result(void *ctx, const struct vs_result *r)
{
    int *n = ctx;
    (*n)++;
    assert_int_equal(r->server_state, VS_RESULT_SERVER_STATE_IN_PROGRESS);
    return 0;
}

static void test_claim_never_twice(void **state)
{
    struct store_fx *f = *state;
    int64_t appid = add_app(f->s, "a");
    int64_t w = add_wu(f->s, appid, "w", 0);
    int64_t r0 = add_result(f->s, appid, w, "w_0");
    int64_t r1 = add_result(f->s, appid, w, "w_1");

    struct vs_claim c[2] = {
        {.result_id = r0, .app_version_id = 4, .app_version_num = 101, .report_deadline = 50},
        {.result_id = r1, .app_version_id = 4, .app_version_num = 101, .report_deadline = 60},
    };
    size_t n = 99;
    assert_int_equal(vs_store_results_claim(f->s, 11, 21, 31, 10, c, 2, &n), 0);
    assert_int_equal(n, 2);
    assert_true(c[0].claimed && c[1].claimed);

    struct vs_result r;
    assert_int_equal(vs_store_result_get(f->s, r0, &r), 0);
    assert_int_equal(r.server_state, VS_RESULT_SERVER_STATE_IN_PROGRESS);
    assert_int_equal(r.hostid, 11);
    assert_int_equal(r.userid, 21);
    assert_int_equal(r.teamid, 31);
    assert_int_equal(r.sent_time, 10);
    assert_int_equal(r.report_deadline, 50);
    assert_int_equal(r.app_version_id, 4);
    assert_int_equal(r.app_version_num, 101);
    vs_result_cleanup(&r);
    /* The WU's transition_time came down to the earliest deadline. */
    struct vs_workunit wu;
    assert_int_equal(vs_store_workunit_get(f->s, w, &wu), 0);
    assert_int_equal(wu.transition_time, 50);
    vs_workunit_cleanup(&wu);

    /* A second host (on its own connection) asks for the same results:
     * nothing is claimed, and the first host keeps them. */
    struct vs_store *s2;
    assert_int_equal(vs_store_open(f->url, 0, NULL, &s2), 0);
    c[0].claimed = c[1].claimed = true;
    assert_int_equal(vs_store_results_claim(s2, 12, 22, 0, 20, c, 2, &n), 0);
    assert_int_equal(n, 0);
    assert_false(c[0].claimed || c[1].claimed);
    vs_store_close(s2);
    assert_int_equal(count_sql(f, "SELECT count(*) FROM result WHERE hostid = 11"), 2);

    int cnt = 0;
    assert_int_equal(vs_store_results_in_progress(f->s, 11, count_result, &cnt), 0);
    assert_int_equal(cnt, 2);
    cnt = 0;
    assert_int_equal(vs_store_results_in_progress(f->s, 12, count_result, &cnt), 0);
    assert_int_equal(cnt, 0);
    bool has;
    assert_int_equal(vs_store_host_has_wu(f->s, 11, w, &has), 0);
    assert_true(has);
    assert_int_equal(vs_store_host_has_wu(f->s, 12, w, &has), 0);
    assert_false(has);
    assert_int_equal(vs_store_results_claim(f->s, 0, 1, 1, 1, c, 2, &n), VS_EINVAL);
}

static void test_claim_inside_rolled_back_txn(void **state)
{
    struct store_fx *f = *state;
    int64_t appid = add_app(f->s, "a");
    int64_t w = add_wu(f->s, appid, "w", 0);
    int64_t r0 = add_result(f->s, appid, w, "w_0");
    assert_int_equal(vs_store_begin(f->s), 0);
    struct vs_claim c = {.result_id = r0, .report_deadline = 5};
    size_t n;
    assert_int_equal(vs_store_results_claim(f->s, 1, 1, 0, 1, &c, 1, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(vs_store_rollback(f->s), 0);
    /* The RPC failed before its reply left: the result is UNSENT again. */
    assert_int_equal(count_sql(f, "SELECT server_state FROM result"),
                     VS_RESULT_SERVER_STATE_UNSENT);
}

static void test_transactions(void **state)
{
    struct store_fx *f = *state;
    int64_t appid = add_app(f->s, "a");
    assert_int_equal(vs_store_commit(f->s), VS_ESTATE);
    assert_int_equal(vs_store_rollback(f->s), VS_ESTATE);

    assert_int_equal(vs_store_begin(f->s), 0);
    add_wu(f->s, appid, "t1", 0);
    assert_int_equal(vs_store_rollback(f->s), 0);
    assert_int_equal(count_sql(f, "SELECT count(*) FROM workunit"), 0);

    /* Nested: the inner level rolls back alone, the outer commits. */
    assert_int_equal(vs_store_begin(f->s), 0);
    add_wu(f->s, appid, "t2", 0);
    assert_int_equal(vs_store_begin(f->s), 0);
    add_wu(f->s, appid, "t3", 0);
    assert_int_equal(vs_store_rollback(f->s), 0);
    /* A failing operation inside the transaction leaves it open. */
    struct vs_workunit wu;
    vs_workunit_defaults(&wu);
    wu.appid = appid;
    assert_int_equal(vs_strlcpy(wu.name, "t2", sizeof(wu.name)), 0);
    wu.xml_doc = vs_xstrdup("<workunit/>");
    assert_int_equal(vs_store_workunit_add(f->s, &wu), VS_EEXISTS);
    vs_workunit_cleanup(&wu);
    assert_int_equal(vs_store_commit(f->s), 0);
    assert_int_equal(count_sql(f, "SELECT count(*) FROM workunit"), 1);
    assert_int_equal(count_sql(f, "SELECT count(*) FROM workunit WHERE name='t2'"), 1);
}

static void test_report(void **state)
{
    struct store_fx *f = *state;
    int64_t appid = add_app(f->s, "a");
    int64_t w = add_wu(f->s, appid, "w", 0);
    int64_t r0 = add_result(f->s, appid, w, "w_0");
    int64_t r1 = add_result(f->s, appid, w, "w_1");
    struct vs_claim c[2] = {{.result_id = r0, .report_deadline = 500},
                            {.result_id = r1, .report_deadline = 500}};
    size_t n;
    assert_int_equal(vs_store_results_claim(f->s, 3, 4, 0, 100, c, 2, &n), 0);

    struct vs_result_report rep;
    memset(&rep, 0, sizeof(rep));
    assert_int_equal(vs_strlcpy(rep.name, "w_0", sizeof(rep.name)), 0);
    rep.client_state = VS_RESULT_CLIENT_STATE_FILES_UPLOADED;
    rep.cpu_time = 12.5;
    rep.elapsed_time = 13;
    rep.stderr_out = "<stderr_txt>ok</stderr_txt>";
    bool dup = true;
    /* Wrong host: refused, nothing changes. */
    assert_int_equal(vs_store_result_report(f->s, 9, 200, &rep, &dup), VS_ESTATE);
    assert_int_equal(vs_store_result_report(f->s, 3, 200, &rep, &dup), 0);
    assert_false(dup);
    struct vs_result r;
    assert_int_equal(vs_store_result_get(f->s, r0, &r), 0);
    assert_int_equal(r.server_state, VS_RESULT_SERVER_STATE_OVER);
    assert_int_equal(r.outcome, VS_RESULT_OUTCOME_SUCCESS);
    assert_int_equal(r.received_time, 200);
    assert_true(r.cpu_time == 12.5);
    assert_string_equal(r.stderr_out, "<stderr_txt>ok</stderr_txt>");
    vs_result_cleanup(&r);
    struct vs_workunit wu;
    assert_int_equal(vs_store_workunit_get(f->s, w, &wu), 0);
    assert_int_equal(wu.transition_time, 200);
    vs_workunit_cleanup(&wu);
    /* The same report again (the client did not get our ack): a duplicate. */
    assert_int_equal(vs_store_result_report(f->s, 3, 201, &rep, &dup), 0);
    assert_true(dup);

    /* A compute error. */
    assert_int_equal(vs_strlcpy(rep.name, "w_1", sizeof(rep.name)), 0);
    rep.client_state = VS_RESULT_CLIENT_STATE_COMPUTE_ERROR;
    rep.exit_status = 1;
    assert_int_equal(vs_store_result_report(f->s, 3, 210, &rep, &dup), 0);
    assert_int_equal(vs_store_result_by_name(f->s, "w_1", &r), 0);
    assert_int_equal(r.outcome, VS_RESULT_OUTCOME_CLIENT_ERROR);
    assert_int_equal(r.exit_status, 1);
    r.validate_state = VS_VALIDATE_STATE_INVALID;
    assert_int_equal(vs_store_result_update(f->s, &r), 0);
    vs_result_cleanup(&r);
    assert_int_equal(count_sql(f, "SELECT validate_state FROM result WHERE name='w_1'"),
                     VS_VALIDATE_STATE_INVALID);
    assert_int_equal(vs_strlcpy(rep.name, "nope", sizeof(rep.name)), 0);
    assert_int_equal(vs_store_result_report(f->s, 3, 210, &rep, &dup), VS_ENOTFOUND);

    /* A result timed out by the transitioner is accepted late, once. */
    int64_t r2 = add_result(f->s, appid, w, "w_2");
    struct vs_claim c2 = {.result_id = r2, .report_deadline = 300};
    assert_int_equal(vs_store_results_claim(f->s, 3, 4, 0, 100, &c2, 1, &n), 0);
    assert_int_equal(vs_store_result_get(f->s, r2, &r), 0);
    r.server_state = VS_RESULT_SERVER_STATE_OVER;
    r.outcome = VS_RESULT_OUTCOME_NO_REPLY;
    assert_int_equal(vs_store_result_update(f->s, &r), 0);
    vs_result_cleanup(&r);
    assert_int_equal(vs_strlcpy(rep.name, "w_2", sizeof(rep.name)), 0);
    rep.client_state = VS_RESULT_CLIENT_STATE_FILES_UPLOADED;
    rep.exit_status = 0;
    assert_int_equal(vs_store_result_report(f->s, 3, 400, &rep, &dup), 0);
    assert_false(dup);
    assert_int_equal(count_sql(f, "SELECT outcome FROM result WHERE name='w_2'"),
                     VS_RESULT_OUTCOME_SUCCESS);
    assert_int_equal(vs_store_result_report(f->s, 3, 401, &rep, &dup), 0);
    assert_true(dup);
    /* An UNSENT result cannot be reported by anyone. */
    add_result(f->s, appid, w, "w_3");
    assert_int_equal(vs_strlcpy(rep.name, "w_3", sizeof(rep.name)), 0);
    assert_int_equal(vs_store_result_report(f->s, 0, 402, &rep, &dup), VS_ESTATE);

    /* A result of a workunit that does not exist: refused as not found. */
    struct vs_result orphan;
    memset(&orphan, 0, sizeof(orphan));
    orphan.workunitid = 99999;
    orphan.appid = appid;
    assert_int_equal(vs_strlcpy(orphan.name, "orphan", sizeof(orphan.name)), 0);
    assert_int_equal(vs_store_result_add(f->s, &orphan), VS_ENOTFOUND);
}

struct trans_seen {
    int64_t wuids[8];
    size_t nresults[8];
    int n;
};

static int seen_wu(void *ctx, struct vs_workunit *wu, struct vs_result *results, size_t n)
{
    struct trans_seen *t = ctx;
    t->wuids[t->n] = wu->id;
    t->nresults[t->n] = n;
    t->n++;
    for (size_t i = 0; i < n; i++)
        assert_int_equal(results[i].workunitid, wu->id);
    return 0;
}

static void test_wus_to_transition(void **state)
{
    struct store_fx *f = *state;
    int64_t appid = add_app(f->s, "a");
    int64_t w1 = add_wu(f->s, appid, "normal", 0);        /* transition_time 100 */
    add_wu(f->s, appid, "broadcast", VS_TRANSITION_NONE); /* never */
    int64_t w3 = add_wu(f->s, appid, "targeted", VS_TRANSITION_NO_NEW_RESULTS);
    add_result(f->s, appid, w1, "normal_0");
    add_result(f->s, appid, w1, "normal_1");
    /* The targeted WU is due too (the scheduler sent an instance). */
    struct vs_workunit wu;
    assert_int_equal(vs_store_workunit_get(f->s, w3, &wu), 0);
    wu.transition_time = 150;
    assert_int_equal(vs_store_workunit_update(f->s, &wu), 0);
    vs_workunit_cleanup(&wu);

    struct trans_seen t = {0};
    assert_int_equal(vs_store_wus_to_transition(f->s, 99, 10, seen_wu, &t), 0);
    assert_int_equal(t.n, 0);
    assert_int_equal(vs_store_wus_to_transition(f->s, 1000, 10, seen_wu, &t), 0);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.wuids[0], w1);
    assert_int_equal(t.nresults[0], 2);
    assert_int_equal(t.wuids[1], w3);
    assert_int_equal(t.nresults[1], 0);
    t.n = 0;
    assert_int_equal(vs_store_wus_to_transition(f->s, 1000, 1, seen_wu, &t), 0);
    assert_int_equal(t.n, 1);
}

static int collect_result_ids(void *ctx, const struct vs_result *r)
{
    int64_t *ids = ctx;
    ids[ids[0] + 1] = r->id;
    ids[0]++;
    return 0;
}

/* BOINC's --mod N I: three handles with --mod 3 0/1/2 see disjoint shares
 * of every daemon queue (by workunit id; the file deleter's results by
 * result id), together all of it; bad values are refused. */
static void test_mod_shards(void **state)
{
    struct store_fx *f = *state;
    int64_t appid = add_app(f->s, "m");
    int64_t ids[7];
    for (int k = 0; k < 7; k++) {
        char name[16];
        snprintf(name, sizeof(name), "m%d", k);
        ids[k] = add_wu(f->s, appid, name, 0);
        add_result(f->s, appid, ids[k], name);
    }
    char sql[200];
    snprintf(sql, sizeof(sql),
             "UPDATE workunit SET need_validate = 1, file_delete_state = %d WHERE appid = %lld",
             VS_FILE_DELETE_READY, (long long)appid);
    assert_int_equal(exec_sql(f, sql), 0);
    snprintf(sql, sizeof(sql), "UPDATE result SET file_delete_state = %d", VS_FILE_DELETE_READY);
    assert_int_equal(exec_sql(f, sql), 0);
    assert_int_equal(vs_store_set_mod(f->s, 0, 0), VS_EINVAL);
    assert_int_equal(vs_store_set_mod(f->s, 3, 3), VS_EINVAL);
    assert_int_equal(vs_store_set_mod(f->s, 3, -1), VS_EINVAL);
    int seen_tr[7] = {0}, seen_val[7] = {0}, nres = 0;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(vs_store_set_mod(f->s, 3, i), 0);
        struct trans_seen t = {0}, v = {0};
        assert_int_equal(vs_store_wus_to_transition(f->s, 1000, 8, seen_wu, &t), 0);
        assert_int_equal(vs_store_wus_in_queue(f->s, VS_WU_QUEUE_VALIDATE, 0, 8, seen_wu, &v), 0);
        for (int k = 0; k < t.n; k++) {
            assert_int_equal(t.wuids[k] % 3, i);
            for (int j = 0; j < 7; j++)
                seen_tr[j] += ids[j] == t.wuids[k];
        }
        for (int k = 0; k < v.n; k++) {
            assert_int_equal(v.wuids[k] % 3, i);
            for (int j = 0; j < 7; j++)
                seen_val[j] += ids[j] == v.wuids[k];
        }
        int64_t rids[16] = {0};
        assert_int_equal(vs_store_results_to_delete(f->s, 8, collect_result_ids, rids), 0);
        for (int64_t k = 0; k < rids[0]; k++)
            assert_int_equal(rids[k + 1] % 3, i);
        nres += (int)rids[0];
    }
    for (int j = 0; j < 7; j++) {
        assert_int_equal(seen_tr[j], 1);
        assert_int_equal(seen_val[j], 1);
    }
    assert_int_equal(nres, 7);
}

static void test_checkpoint(void **state)
{
    struct store_fx *f = *state;
    struct vs_store *s2;
    assert_int_equal(vs_store_open(f->url, VS_STORE_NO_AUTOCHECKPOINT, NULL, &s2), 0);
    int64_t appid = add_app(s2, "cp");
    char name[32];
    assert_int_equal(vs_store_begin(s2), 0);
    for (int i = 0; i < 300; i++) {
        snprintf(name, sizeof(name), "cp%d", i);
        add_wu(s2, appid, name, 0);
    }
    assert_int_equal(vs_store_commit(s2), 0);
    if (!vs_test_pg()) {
        /* Without automatic checkpoints everything is still in the WAL
         * (PostgreSQL checkpoints by itself: vs_store_checkpoint is a no-op). */
        char wal[200];
        snprintf(wal, sizeof(wal), "%s-wal", f->path);
        struct stat sb;
        assert_int_equal(stat(wal, &sb), 0);
        assert_true(sb.st_size > 0);
    }
    assert_int_equal(vs_store_checkpoint(f->s), 0);
    assert_int_equal(vs_store_checkpoint(s2), 0);
    vs_store_close(s2);
    assert_int_equal(count_sql(f, "SELECT count(*) FROM workunit"), 300);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_open, storefx_open, storefx_teardown),
        cmocka_unit_test_setup_teardown(test_apps_catalog, storefx_open, storefx_teardown),
        cmocka_unit_test_setup_teardown(test_users_teams, storefx_open, storefx_teardown),
        cmocka_unit_test_setup_teardown(test_hosts, storefx_open, storefx_teardown),
        cmocka_unit_test_setup_teardown(test_workunits_assignments, storefx_open, storefx_teardown),
        cmocka_unit_test_setup_teardown(test_assignment_scan, storefx_open, storefx_teardown),
        cmocka_unit_test_setup_teardown(test_jobs_unsent_paging, storefx_open, storefx_teardown),
        cmocka_unit_test_setup_teardown(test_claim_never_twice, storefx_open, storefx_teardown),
        cmocka_unit_test_setup_teardown(test_claim_inside_rolled_back_txn, storefx_open,
                                        storefx_teardown),
        cmocka_unit_test_setup_teardown(test_transactions, storefx_open, storefx_teardown),
        cmocka_unit_test_setup_teardown(test_report, storefx_open, storefx_teardown),
        cmocka_unit_test_setup_teardown(test_wus_to_transition, storefx_open, storefx_teardown),
        cmocka_unit_test_setup_teardown(test_mod_shards, storefx_open, storefx_teardown),
        cmocka_unit_test_setup_teardown(test_checkpoint, storefx_open, storefx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
