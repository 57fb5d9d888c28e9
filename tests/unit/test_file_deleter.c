/*
 * The file deleter and the store's count of input file uses (a
 * shared input was deleted under its other jobs), on a real store (SQLite, and PostgreSQL under
 * tests/pg/run.sh): an input shared by three jobs stays until the last one
 * is done; an app version's file named as a job's input is never deleted;
 * <no_delete/> keeps its use; locality files stay while work may come; a
 * create_work that finds a file the deleter then removes creates nothing;
 * and the v6 migration counts the workunits already in a store.
 */
#include "vs_test.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>

#include "daemon_fixture.h"
#include "volsched/create_work.h"
#include "volsched/file_deleter.h"
#include "volsched/loc_dirs.h"
#include "volsched/store_ops.h"
#include "volsched/store_project.h"

/* Creates jobs through create_work (the operator's path). */
static void cw(struct project_fixture *f, const struct vs_cw_job *jobs, size_t n, int64_t now)
{
    struct vs_cw_params p = {.appname = "app"};
    struct vs_cw_created *cr = NULL;
    char err[512] = "";
    int rc = vs_create_work(&f->cfg, f->s, &p, jobs, n, now, NULL, &cr, err, sizeof(err));
    if (rc)
        fail_msg("create_work: %s", err);
    vs_free(cr);
}

/* Runs workunit wu (whose results the transitioner makes at now) through
 * one successful result, validation and assimilation, then has the
 * transitioner mark its files ready to delete (at now + 4). */
static void finish(struct project_fixture *f, const char *wu, int64_t now)
{
    int64_t h = df_host(f);
    char r0[VS_NAME_MAX];
    snprintf(r0, sizeof(r0), "%s_0", wu);
    df_trans(f, now);
    df_send(f, r0, h, now);
    df_report(f, r0, h, now + 1, "out\n");
    df_trans(f, now + 1);
    assert_int_equal(vs_validator_pass(f->s, &f->cfg, now + 2, 0, NULL, NULL), 1);
    assert_int_equal(vs_assimilator_pass(f->s, &f->cfg, now + 3, 0, NULL, NULL), 1);
    df_trans(f, now + 4);
    assert_int_equal(df_w(f, wu, "file_delete_state"), VS_FILE_DELETE_READY);
}

static int64_t uses(struct project_fixture *f, const char *file)
{
    char sql[256];
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM wu_file WHERE name = '%s'", file);
    return pf_sql(f, sql);
}

static bool in_use(struct project_fixture *f, const char *file)
{
    bool b = false;
    assert_int_equal(vs_store_file_in_use(f->s, file, 0, &b), 0);
    return b;
}

/* A staged input three jobs share survives the first two and goes with
 * the third (the old deleter removed it with the first). */
static void test_shared_input_until_last_user(void **state)
{
    struct project_fixture *f = *state;
    char src[1200], staged[1200];
    snprintf(src, sizeof(src), "%s/shared.dat", f->dir);
    pf_write(f->dir, "shared.dat", "one input for three jobs\n");
    const char *in[] = {src};
    const char *names[] = {"sh_1", "sh_2", "sh_3"};
    struct vs_cw_job jobs[3];
    for (int i = 0; i < 3; i++)
        jobs[i] = (struct vs_cw_job){.wu_name = names[i], .inputs = in, .ninputs = 1};
    cw(f, jobs, 3, NOW);
    df_input_path(f, "shared.dat", staged, sizeof(staged));
    assert_true(df_exists(staged));
    for (int i = 0; i < 3; i++) {
        int64_t t = NOW + 100 * i;
        finish(f, names[i], t);
        struct vs_file_deleter_stats st;
        assert_int_equal(vs_file_deleter_pass(f->s, &f->cfg, t + 5, 0, NULL, &st), 2);
        assert_int_equal(st.nerrors, 0);
        assert_int_equal(df_w(f, names[i], "file_delete_state"), VS_FILE_DELETE_DONE);
        /* The files first, then the store's count of their uses. */
        assert_true(df_exists(staged) == (i < 2));
        assert_int_equal(st.nkept, i < 2 ? 1 : 0);
        assert_int_equal(uses(f, "shared.dat"), 2 - i);
        assert_true(in_use(f, "shared.dat") == (i < 2));
    }
}

/* A job naming the app version's file (a bare name already in the
 * download hierarchy) as its input: the file stays when the job is done. */
static void test_app_version_file_kept(void **state)
{
    struct project_fixture *f = *state;
    char app[1200];
    df_input_path(f, "app_101", app, sizeof(app)); /* the fixture's app version file */
    df_write_abs(app, "#!/bin/sh\necho app\n");
    const char *in[] = {"app_101"};
    struct vs_cw_job j = {.wu_name = "uses_app", .inputs = in, .ninputs = 1};
    cw(f, &j, 1, NOW);
    finish(f, "uses_app", NOW);
    struct vs_file_deleter_stats st;
    assert_int_equal(vs_file_deleter_pass(f->s, &f->cfg, NOW + 5, 0, NULL, &st), 2);
    assert_int_equal(df_w(f, "uses_app", "file_delete_state"), VS_FILE_DELETE_DONE);
    assert_true(df_exists(app));
    assert_int_equal(st.nkept, 1);
    assert_int_equal(uses(f, "app_101"), 0);
    assert_true(in_use(f, "app_101")); /* by the app version */
}

/* An input one job marks <no_delete/> stays in use after that job: a later
 * job sharing it does not delete it either, until the first is purged. */
static void test_no_delete_keeps_its_use(void **state)
{
    struct project_fixture *f = *state;
    char path[1200];
    df_wu_input(f, "nd", "common.dat", 0, 1, 1, 0, 1, 1, true);
    df_wu_input(f, "pl", "common.dat", 0, 1, 1, 0, 1, 1, false);
    df_input_path(f, "common.dat", path, sizeof(path));
    finish(f, "nd", NOW);
    assert_int_equal(vs_file_deleter_pass(f->s, &f->cfg, NOW + 5, 0, NULL, NULL), 2);
    assert_true(df_exists(path));
    finish(f, "pl", NOW + 100);
    struct vs_file_deleter_stats st;
    assert_int_equal(vs_file_deleter_pass(f->s, &f->cfg, NOW + 105, 0, NULL, &st), 2);
    assert_true(df_exists(path));
    assert_int_equal(st.nkept, 1);
    assert_int_equal(uses(f, "common.dat"), 1); /* nd's */
    /* Purged, nd uses nothing: the next job's end removes the file. */
    assert_int_equal(vs_store_workunit_delete(f->s, df_w(f, "nd", "id")), 0);
    assert_int_equal(uses(f, "common.dat"), 0);
    df_wu_input(f, "p3", "common.dat", 0, 1, 1, 0, 1, 1, false);
    finish(f, "p3", NOW + 200);
    assert_int_equal(vs_file_deleter_pass(f->s, &f->cfg, NOW + 205, 0, NULL, NULL), 2);
    assert_false(df_exists(path));
}

/* The big file of locality workunits F__*: kept while the generator may
 * still make work that names it, deleted once it said no more will come. */
static void test_locality_file_while_work_may_come(void **state)
{
    struct project_fixture *f = *state;
    f->cfg.locality_scheduling = true;
    f->cfg.locality_scheduling_wait_period = 10;
    assert_int_equal(vs_loc_dirs_create(f->dir), 0);
    char path[1200];
    df_wu_input(f, "big.dat__1", "big.dat", 0, 1, 1, 0, 1, 1, false);
    df_input_path(f, "big.dat", path, sizeof(path));
    finish(f, "big.dat__1", NOW);
    struct vs_file_deleter_stats st;
    assert_int_equal(vs_file_deleter_pass(f->s, &f->cfg, NOW + 5, 0, NULL, &st), 2);
    assert_true(df_exists(path));
    assert_int_equal(st.nkept, 1);
    /* Without on-demand generation, a pending need_work/F keeps it too. */
    f->cfg.locality_scheduling_wait_period = 0;
    assert_int_equal(vs_loc_touch(f->dir, VS_LOC_NEED_WORK, "big.dat"), 0);
    df_wu_input(f, "big.dat__2", "big.dat", 0, 1, 1, 0, 1, 1, false);
    finish(f, "big.dat__2", NOW + 100);
    assert_int_equal(vs_file_deleter_pass(f->s, &f->cfg, NOW + 105, 0, NULL, NULL), 2);
    assert_true(df_exists(path));
    /* The generator said no more: the last job's end removes it. */
    f->cfg.locality_scheduling_wait_period = 10;
    assert_int_equal(vs_loc_remove(f->dir, VS_LOC_NEED_WORK, "big.dat"), 0);
    assert_int_equal(vs_loc_touch(f->dir, VS_LOC_NO_WORK_AVAILABLE, "big.dat"), 0);
    df_wu_input(f, "big.dat__3", "big.dat", 0, 1, 1, 0, 1, 1, false);
    finish(f, "big.dat__3", NOW + 200);
    assert_int_equal(vs_file_deleter_pass(f->s, &f->cfg, NOW + 205, 0, NULL, NULL), 2);
    assert_false(df_exists(path));
}

/* ---- a create_work racing with the deleter ----------------------------- */

struct racer {
    struct project_fixture *f;
    struct vs_store *s; /* its own handle (one thread each) */
    struct vs_log log;  /* DEBUG lines into a pipe the test reads */
    int rc;
    char err[512];
};

static void *racer_main(void *arg)
{
    struct racer *r = arg;
    struct vs_cw_params p = {.appname = "app"};
    const char *in[] = {"shared.dat"};
    struct vs_cw_job j = {.wu_name = "late", .inputs = in, .ninputs = 1};
    struct vs_cw_created *cr = NULL;
    r->rc =
        vs_create_work(&r->f->cfg, r->s, &p, &j, 1, NOW + 50, &r->log, &cr, r->err, sizeof(r->err));
    vs_free(cr);
    fclose(r->log.out); /* the reader sees the end */
    return NULL;
}

/* Reads lines of fp until one holds what (true), or the end or 60 s. */
static bool wait_line(FILE *fp, const char *what)
{
    char line[1024];
    for (;;) {
        struct pollfd pfd = {.fd = fileno(fp), .events = POLLIN};
        if (poll(&pfd, 1, 60000) != 1 || !fgets(line, sizeof(line), fp))
            return false;
        if (strstr(line, what))
            return true;
    }
}

/*
 * create_work prepares a job naming a staged input (it is there), then the
 * deleter, holding the store's write lock first, removes it for the last
 * job that used it; create_work's insert waits for that lock, then finds
 * the file gone and creates nothing (the old code made a job whose input
 * did not exist).
 */
static void test_create_work_racing_the_deleter(void **state)
{
    struct project_fixture *f = *state;
    char src[1200], staged[1200];
    snprintf(src, sizeof(src), "%s/shared.dat", f->dir);
    pf_write(f->dir, "shared.dat", "the input\n");
    const char *in[] = {src};
    struct vs_cw_job j = {.wu_name = "early", .inputs = in, .ninputs = 1};
    cw(f, &j, 1, NOW);
    df_input_path(f, "shared.dat", staged, sizeof(staged));
    finish(f, "early", NOW);

    struct racer r = {.f = f};
    assert_int_equal(vs_project_store_open(&f->cfg, false, NULL, &r.s), 0);
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    vs_log_init(&r.log, VS_LOG_DEBUG, fdopen(pfd[1], "w"), "create_work");
    FILE *rd = fdopen(pfd[0], "r");
    assert_non_null(r.log.out);
    assert_non_null(rd);
    setvbuf(r.log.out, NULL, _IOLBF, 0); /* each line as it is written */
    /* The deleter's handle takes the write lock (a statement makes
     * PostgreSQL's held-back BEGIN and lock go out now). */
    assert_int_equal(vs_store_begin(f->s), 0);
    int64_t n;
    assert_int_equal(vs_store_count_results(f->s, 0, VS_RESULT_SERVER_STATE_UNSENT, &n), 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, racer_main, &r), 0);
    bool seen = wait_line(rd, "inserting");
    /* create_work has read the file and waits for the lock: delete now. */
    struct vs_file_deleter_stats st;
    int drc = vs_file_deleter_pass(f->s, &f->cfg, NOW + 5, 0, NULL, &st);
    assert_int_equal(vs_store_commit(f->s), 0);
    while (wait_line(rd, "\n"))
        ;
    pthread_join(th, NULL);
    fclose(rd);
    vs_store_close(r.s);
    assert_true(seen);
    assert_int_equal(drc, 2);
    assert_false(df_exists(staged));
    /* No job whose input is gone: the old code made "late" here. */
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM workunit WHERE name = 'late'"), 0);
    if (r.rc != VS_ENOTFOUND)
        fail_msg("create_work returned %s: %s", vs_strerror(r.rc), r.err);
    assert_non_null(strstr(r.err, "left the download hierarchy"));
    assert_int_equal(uses(f, "shared.dat"), 0);
}

/* ---- schema v6 on an older store (SQLite file) -------------------------- */

static void test_schema_v5_migrates(void **state)
{
    struct project_fixture *f = *state;
    df_wu_input(f, "live", "live.dat", 0, 1, 1, 0, 1, 1, false);
    df_wu_input(f, "kept", "kept.dat", 0, 1, 1, 0, 1, 1, true);
    df_wu_input(f, "gone", "gone.dat", 0, 1, 1, 0, 1, 1, false);
    df_wu_input(f, "x_nodelete", "nd.dat", 0, 1, 1, 0, 1, 1, false);
    vs_store_close(f->s);
    f->s = NULL;
    char path[1200];
    snprintf(path, sizeof(path), "%s/volsched.db", f->cfg.dir);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "DROP TABLE wu_file; DROP INDEX avf_name;"
                                  "UPDATE workunit SET file_delete_state = 2 WHERE name <> 'live';"
                                  "ALTER TABLE \"user\" DROP COLUMN passwd_hash;"
                                  "ALTER TABLE team DROP COLUMN description;"
                                  "ALTER TABLE team DROP COLUMN expavg_time;"
                                  "DROP TABLE credit_pfc; DROP TABLE site_session;"
                                  "DROP TABLE batch; DROP TABLE user_submit;"
                                  "DROP TABLE user_submit_app; DROP TABLE job_file;"
                                  "DROP TABLE batch_file_assoc; DROP INDEX IF EXISTS wu_batch;"
                                  "UPDATE store_meta SET value = 5 WHERE key = 'schema_version'",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(vs_project_store_open(&f->cfg, false, NULL, &f->s), 0);
    assert_int_equal(pf_sql(f, "SELECT value FROM store_meta WHERE key = 'schema_version'"),
                     vs_store_schema_version());
    /* The live job's input, and the files finished jobs keep for good. */
    assert_int_equal(uses(f, "live.dat"), 1);
    assert_int_equal(uses(f, "kept.dat"), 1);
    assert_int_equal(uses(f, "nd.dat"), 1);
    assert_int_equal(uses(f, "gone.dat"), 0);
    assert_true(in_use(f, "app_101"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_shared_input_until_last_user, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_app_version_file_kept, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_no_delete_keeps_its_use, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_locality_file_while_work_may_come, df_setup,
                                        df_teardown),
        cmocka_unit_test_setup_teardown(test_create_work_racing_the_deleter, df_setup, df_teardown),
        /* Last: SQLite only. */
        cmocka_unit_test_setup_teardown(test_schema_v5_migrates, df_setup, df_teardown),
    };
    size_t n = sizeof(tests) / sizeof(tests[0]);
    if (vs_test_pg()) {
        print_message("on PostgreSQL: not run: test_schema_v5_migrates (a SQLite file of an "
                      "older schema version)\n");
        n -= 1;
    }
    return _cmocka_run_group_tests("test_file_deleter", tests, n, NULL, NULL);
}
