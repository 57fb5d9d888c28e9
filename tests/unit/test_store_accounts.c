/*
 * vs_store_begin_users (store.h), on a real store: a SQLite file, or with
 * VS_TEST_PG the PostgreSQL server of tests/pg/run.sh. On PostgreSQL the
 * scheduler's transactions of different accounts run side by side, one
 * account's wait for each other, and every other transaction waits for
 * them all (the locks are looked at in pg_locks, and the waits are cut by
 * lock_timeout). On SQLite it holds the one write lock, as vs_store_begin.
 */
#include "vs_test.h"

#include "store_fixture.h"

#include <stdio.h>
#include <string.h>

#include "volsched/alloc.h"
#include "volsched/store.h"
#include "volsched/store_accounts.h"

/* One write inside the open transaction (any write takes the locks: the
 * BEGIN is sent with the first statement). */
static int write_one(struct vs_store *s, const char *name)
{
    struct vs_app a;
    memset(&a, 0, sizeof(a));
    snprintf(a.name, sizeof(a.name), "%s", name);
    a.weight = 1;
    return vs_store_app_add(s, &a);
}

/* The store's locks held by other sessions, by mode and key. */
static int64_t pg_locks(const char *url, const char *mode, long classid, long objid, int subid)
{
    char sql[512];
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND "
             "mode = '%s' AND classid = %ld AND objid = %ld AND objsubid = %d AND pid <> "
             "pg_backend_pid()",
             mode, classid, objid, subid);
    return vs_test_sql_i64(url, sql);
}

static void test_accounts_side_by_side(void **state)
{
    struct store_fx *f = *state;
    const int64_t a[] = {9, 7, 9}; /* unsorted, repeated */
    const int64_t b[] = {8};
    assert_int_equal(vs_store_begin_users(f->s, a, 3), 0);
    assert_int_equal(write_one(f->s, "a1"), 0);
    if (!vs_test_pg()) {
        /* SQLite: one writer; another connection cannot begin. */
        sqlite3 *db;
        assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_BUSY);
        sqlite3_close(db);
        assert_int_equal(vs_store_commit(f->s), 0);
        return;
    }
    /* The shared lock on the one key (bigint form: objsubid 1) and one
     * exclusive lock per account (two-key form: objsubid 2), 7 and 9. */
    assert_int_equal(pg_locks(f->url, "ShareLock", 0, 0x76736368, 1), 1);
    assert_int_equal(pg_locks(f->url, "ExclusiveLock", 0x76736369, 7, 2), 1);
    assert_int_equal(pg_locks(f->url, "ExclusiveLock", 0x76736369, 9, 2), 1);
    assert_int_equal(pg_locks(f->url, "ExclusiveLock", 0, 0x76736368, 1), 0);

    /* A second handle (another instance), waits cut at 2 s. */
    char url2[640];
    snprintf(url2, sizeof(url2), "%s&options=-c%%20lock_timeout%%3D2000", f->url);
    struct vs_store *s2;
    assert_int_equal(vs_store_open(url2, 0, NULL, &s2), 0);
    /* Another account: side by side, committed while the first is open. */
    assert_int_equal(vs_store_begin_users(s2, b, 1), 0);
    assert_int_equal(write_one(s2, "b1"), 0);
    assert_int_equal(vs_store_commit(s2), 0);
    /* One of the first's accounts: waits (here: times out). */
    assert_int_equal(vs_store_begin_users(s2, &a[1], 1), 0);
    assert_int_not_equal(write_one(s2, "a2"), 0);
    assert_int_equal(vs_store_rollback(s2), 0);
    /* Any other transaction: waits for every account's. */
    assert_int_equal(vs_store_begin(s2), 0);
    assert_int_not_equal(write_one(s2, "c1"), 0);
    assert_int_equal(vs_store_rollback(s2), 0);
    assert_int_equal(vs_store_commit(f->s), 0);
    /* Once it is done, both go through. */
    assert_int_equal(vs_store_begin_users(s2, &a[1], 1), 0);
    assert_int_equal(write_one(s2, "a2"), 0);
    assert_int_equal(vs_store_commit(s2), 0);
    assert_int_equal(vs_store_begin(s2), 0);
    assert_int_equal(write_one(s2, "c1"), 0);
    assert_int_equal(vs_store_commit(s2), 0);
    vs_store_close(s2);
    assert_int_equal(vs_test_sql_i64(f->url, "SELECT count(*) FROM app"), 4);
}

/* More accounts than one statement holds: a plain transaction (alone). */
static void test_many_accounts_alone(void **state)
{
    struct store_fx *f = *state;
    int64_t users[200];
    for (int i = 0; i < 200; i++)
        users[i] = 1000 + i;
    assert_int_equal(vs_store_begin_users(f->s, users, 200), 0);
    assert_int_equal(write_one(f->s, "many"), 0);
    if (vs_test_pg())
        assert_int_equal(pg_locks(f->url, "ExclusiveLock", 0, 0x76736368, 1), 1);
    assert_int_equal(vs_store_commit(f->s), 0);
    assert_int_equal(vs_store_begin_users(f->s, NULL, 1), VS_EINVAL);
}

/* The web site's sessions (schema v8): a row per logged-in cookie, ended
 * one by one, all of a user's but one, with the account, and by time. */
static void test_site_sessions(void **state)
{
    struct store_fx *f = *state;
    struct vs_user u;
    memset(&u, 0, sizeof(u));
    snprintf(u.name, sizeof(u.name), "sam");
    snprintf(u.email_addr, sizeof(u.email_addr), "sam@example.org");
    assert_int_equal(vs_store_user_add(f->s, &u), 0);
    assert_int_equal(vs_store_session_add(f->s, "s1", u.id, 1000, 2000), 0);
    assert_int_equal(vs_store_session_add(f->s, "s2", u.id, 1000, 2000), 0);
    assert_int_equal(vs_store_session_add(f->s, "s3", u.id, 1000, 1500), 0);
    assert_int_not_equal(vs_store_session_add(f->s, "s1", u.id, 1000, 2000), 0); /* once */
    assert_int_equal(vs_store_session_add(f->s, "", u.id, 1000, 2000), VS_EINVAL);
    assert_int_equal(vs_store_session_check(f->s, "s1", u.id, 1001), 0);
    assert_int_equal(vs_store_session_check(f->s, "s1", u.id + 1, 1001), VS_ENOTFOUND);
    assert_int_equal(vs_store_session_check(f->s, "s3", u.id, 1500), VS_ENOTFOUND); /* expired */
    assert_int_equal(vs_store_session_check(f->s, "nope", u.id, 1001), VS_ENOTFOUND);
    /* A new session drops the expired ones of everyone. */
    assert_int_equal(vs_store_session_add(f->s, "s4", u.id, 1600, 3000), 0);
    assert_int_equal(vs_test_sql_i64(f->url, "SELECT count(*) FROM site_session WHERE id = 's3'"),
                     0);
    assert_int_equal(vs_store_session_end(f->s, "s1"), 0);
    assert_int_equal(vs_store_session_check(f->s, "s1", u.id, 1001), VS_ENOTFOUND);
    assert_int_equal(vs_store_session_check(f->s, "s2", u.id, 1001), 0);
    int64_t n = 0;
    assert_int_equal(vs_store_session_end_user(f->s, u.id, "s4", &n), 0);
    assert_int_equal(n, 1); /* s2 */
    assert_int_equal(vs_store_session_check(f->s, "s4", u.id, 1700), 0);
    assert_int_equal(vs_store_user_delete(f->s, u.id), 0);
    assert_int_equal(vs_store_session_check(f->s, "s4", u.id, 1700), VS_ENOTFOUND);
    assert_int_equal(vs_test_sql_i64(f->url, "SELECT count(*) FROM site_session"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_accounts_side_by_side, storefx_open, storefx_teardown),
        cmocka_unit_test_setup_teardown(test_many_accounts_alone, storefx_open, storefx_teardown),
        cmocka_unit_test_setup_teardown(test_site_sessions, storefx_open, storefx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
