/*
 * Group commit on failure paths, on a real SQLite
 * file (and on PostgreSQL, tests/pg): a batch in which one item's statement
 * loses the WHOLE transaction (a trigger that RAISEs ROLLBACK on SQLite, as
 * disk full or an I/O error do; a deferred constraint trigger that fails
 * the COMMIT on PostgreSQL) must not commit a later item while telling its
 * client that it failed. Every item's answer must match the store: rc == 0
 * exactly when its claim is IN_PROGRESS on its host.
 */
#include "vs_test.h"

#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include "project_fixture.h"
#include "server/commit.h"
#include "volsched/store_sched.h"

struct env {
    struct project_fixture *f;
    struct vs_committer *c;
    struct vs_host hosts[3];
    int64_t results[3];
};

static int setup(void **state)
{
    struct env *e = VS_NEW(struct env);
    e->f = pf_create();
    for (int i = 0; i < 3; i++) {
        struct vs_host *h = &e->hosts[i];
        h->userid = e->f->userid;
        snprintf(h->host_cpid, sizeof(h->host_cpid), "host%d", i);
        assert_int_equal(vs_store_host_add(e->f->s, h), 0);
        char prefix[16];
        snprintf(prefix, sizeof(prefix), "wu%d", i);
        e->results[i] = pf_add_jobs(e->f, prefix, 1, 1, 1e9);
    }
    struct vs_store *w = NULL;
    assert_int_equal(vs_project_store_open(&e->f->cfg, false, NULL, &w), 0);
    /* A long delay: the leader waits for every announced item, so the two
     * items of a test are one batch, in the order they were queued. */
    e->c = vs_committer_create(w, NULL, 2000000);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;
    vs_committer_destroy(e->c);
    pf_destroy(e->f);
    vs_free(e);
    return 0;
}

struct job {
    struct env *e;
    struct vs_commit_item item;
    struct vs_claim claim;
    int rc;
};

static void job_init(struct job *j, struct env *e, int i)
{
    memset(j, 0, sizeof(*j));
    j->e = e;
    j->claim.result_id = e->results[i];
    j->claim.report_deadline = 1800086400;
    j->item.host = &e->hosts[i];
    j->item.userid = e->f->userid;
    j->item.now = 1800000000;
    j->item.claims = &j->claim;
    j->item.nclaims = 1;
}

static void *run(void *arg)
{
    struct job *j = arg;
    j->rc = vs_committer_run(j->e->c, &j->item);
    return NULL;
}

/* Runs jobs a then b as one batch (b is queued while a's leader waits).
 * b starts once a has queued its item (one announcement left), whatever
 * the speed of the machine: a's leader then waits for b. */
static void run_pair(struct env *e, struct job *a, struct job *b)
{
    vs_committer_enter(e->c);
    vs_committer_enter(e->c);
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, run, a), 0);
    while (vs_committer_announced(e->c) > 1)
        sched_yield();
    assert_int_equal(pthread_create(&tb, NULL, run, b), 0);
    assert_int_equal(pthread_join(ta, NULL), 0);
    assert_int_equal(pthread_join(tb, NULL), 0);
    struct vs_commit_stats st;
    vs_committer_get_stats(e->c, &st);
    assert_int_equal(st.batches, 1);
    assert_int_equal(st.max_batch, 2);
}

static int64_t state_of(struct env *e, int i)
{
    char sql[128];
    snprintf(sql, sizeof(sql), "SELECT server_state * 1000 + hostid FROM result WHERE id = %lld",
             (long long)e->results[i]);
    return pf_sql(e->f, sql);
}

/* The answer matches the store: committed exactly when it says so. */
static void check_matches(struct env *e, const struct job *j, int i)
{
    int64_t sent = VS_RESULT_SERVER_STATE_IN_PROGRESS * 1000 + e->hosts[i].id;
    int64_t unsent = VS_RESULT_SERVER_STATE_UNSENT * 1000;
    if (j->rc == 0) {
        assert_int_equal(state_of(e, i), sent);
        assert_true(j->claim.claimed);
    } else {
        assert_int_equal(state_of(e, i), unsent);
        assert_false(j->claim.claimed);
        assert_int_equal(j->item.nclaimed, 0);
    }
}

/* Makes host victim's update RAISE(kind) (ROLLBACK: SQLite ends the whole
 * transaction; ABORT: only the statement), then runs the items of hosts 0
 * and 1 as one batch, in that order; checks each reply against the store. */
static void abort_pair(struct env *e, int victim, const char *kind, struct job *a, struct job *b)
{
    char cond[64];
    snprintf(cond, sizeof(cond), "NEW.id = %lld", (long long)e->hosts[victim].id);
    if (vs_test_trigger(e->f->cfg.store_url, "boom", "BEFORE UPDATE", "host", cond, NULL, kind))
        fail_msg("cannot make the failing trigger");
    job_init(a, e, 0);
    job_init(b, e, 1);
    run_pair(e, a, b);
    check_matches(e, a, 0);
    check_matches(e, b, 1);
}

/* Host 0's update RAISEs ROLLBACK: SQLite ends the whole transaction. The
 * next item (host 1) must fail too, without being committed on its own
 * (the bug: its SAVEPOINT opened a fresh transaction and its RELEASE
 * committed it; it was answered "failed" with its job IN_PROGRESS). */
static void test_whole_transaction_abort(void **state)
{
    struct env *e = *state;
    struct job a, b;
    abort_pair(e, 0, "ROLLBACK", &a, &b);
    assert_int_not_equal(a.rc, 0);
    assert_int_not_equal(b.rc, 0);
    /* The handle is usable afterwards: a lone item commits. */
    struct job c;
    job_init(&c, e, 2);
    vs_committer_enter(e->c);
    run(&c);
    assert_int_equal(c.rc, 0);
    check_matches(e, &c, 2);
}

/* A statement-level error (RAISE(ABORT)) undoes only that item's
 * savepoint: the other item of the batch still commits. */
static void test_item_abort_spares_the_batch(void **state)
{
    struct env *e = *state;
    struct job a, b;
    abort_pair(e, 0, "ABORT", &a, &b);
    assert_int_not_equal(a.rc, 0);
    assert_int_equal(b.rc, 0);
    /* Run first without savepoints (vs_store_flat), then again with. */
    struct vs_commit_stats st;
    vs_committer_get_stats(e->c, &st);
    assert_int_equal(st.redone, 1);
}

/* Two good items: one transaction without savepoints, both committed. */
static void test_clean_batch_is_flat(void **state)
{
    struct env *e = *state;
    struct job a, b;
    job_init(&a, e, 0);
    job_init(&b, e, 1);
    run_pair(e, &a, &b);
    assert_int_equal(a.rc, 0);
    assert_int_equal(b.rc, 0);
    check_matches(e, &a, 0);
    check_matches(e, &b, 1);
    struct vs_commit_stats st;
    vs_committer_get_stats(e->c, &st);
    assert_int_equal(st.redone, 0);
}

/* An item that undoes a level of its own and carries on (it returns 0):
 * without savepoints that write would stay, so the batch is run again
 * with them, and the store holds exactly what a savepoint would leave. */
static int undo_own_write(struct vs_store *s, int64_t hostid, int64_t now, void *ctx)
{
    (void)now;
    struct env *e = ctx;
    int rc = vs_store_begin(s);
    if (rc != 0)
        return rc;
    struct vs_host h = e->hosts[0];
    h.id = hostid;
    h.rpc_seqno = 777;
    rc = vs_store_host_update(s, &h);
    vs_store_rollback(s);
    return rc;
}

static void test_undone_level_is_redone(void **state)
{
    struct env *e = *state;
    struct job a, b;
    job_init(&a, e, 0);
    job_init(&b, e, 1);
    a.item.extra = undo_own_write;
    a.item.extra_ctx = e;
    run_pair(e, &a, &b);
    assert_int_equal(a.rc, 0);
    assert_int_equal(b.rc, 0);
    check_matches(e, &a, 0);
    check_matches(e, &b, 1);
    char sql[96];
    snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM host WHERE rpc_seqno = 777");
    assert_int_equal(pf_sql(e->f, sql), 0);
    struct vs_commit_stats st;
    vs_committer_get_stats(e->c, &st);
    assert_int_equal(st.redone, 1);
    /* Outside a transaction there is nothing to flatten. */
    assert_false(vs_store_flat(e->f->s, true));
    assert_false(vs_store_flat(e->f->s, false));
}

/* The aborting item second: the first item, already done inside the lost
 * transaction, is rolled back with it and must be told so. */
static void test_abort_after_a_good_item(void **state)
{
    struct env *e = *state;
    struct job a, b;
    abort_pair(e, 1, "ROLLBACK", &a, &b);
    assert_int_not_equal(a.rc, 0);
    assert_int_not_equal(b.rc, 0);
}

/* A steady stream of commits on the scheduler's writer (its own
 * checkpoints off, as the server tunes it) keeps its WAL short: the leader
 * checkpoints after a batch once the WAL is long, so that the next write
 * starts it over. Without that nothing ever starts the WAL over and the
 * file grows with every commit (856 MB in a 5 s bench_server run). */
static void test_wal_stays_short(void **state)
{
    struct env *e = *state;
    if (vs_test_pg())
        return; /* PostgreSQL has no WAL file of ours */
    struct vs_store *w = NULL;
    assert_int_equal(vs_project_store_open(&e->f->cfg, false, NULL, &w), 0);
    assert_int_equal(vs_store_sched_tune(w, true), 0);
    struct vs_committer *c = vs_committer_create(w, NULL, 0);
    /* Each commit rewrites the host row: one frame at least, so 10,000
     * commits would leave a WAL of 40 MB or more. */
    for (int k = 0; k < 10000; k++) {
        struct vs_commit_item it = {.host = &e->hosts[0], .userid = e->f->userid, .now = k};
        e->hosts[0].rpc_seqno = k;
        vs_committer_enter(c);
        assert_int_equal(vs_committer_run(c, &it), 0);
    }
    vs_committer_destroy(c);
    char wal[2600];
    snprintf(wal, sizeof(wal), "%s/volsched.db-wal", e->f->dir);
    struct stat sb;
    assert_int_equal(stat(wal, &sb), 0);
    if (sb.st_size > 24 * 1024 * 1024)
        fail_msg("the WAL grew to %lld bytes", (long long)sb.st_size);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_whole_transaction_abort, setup, teardown),
        cmocka_unit_test_setup_teardown(test_item_abort_spares_the_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abort_after_a_good_item, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clean_batch_is_flat, setup, teardown),
        cmocka_unit_test_setup_teardown(test_undone_level_is_redone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wal_stays_short, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
