/*
 * Unit tests of create_work: every flag, targeted and broadcast storage,
 * staging into the download hierarchy, and every error case leaving nothing
 * behind (no rows, no staged files).
 */
#include "vs_test.h"

#include "project_fixture.h"
#include "volsched/create_work.h"
#include "volsched/layout.h"
#include "volsched/md5.h"

#define NOW 1700000000

struct cwf {
    struct project_fixture *f;
    char in1[1200], in2[1200];
};

static int setup(void **state)
{
    struct cwf *c = VS_NEW(struct cwf);
    c->f = pf_create();
    snprintf(c->in1, sizeof(c->in1), "%s/input_one.txt", c->f->dir);
    snprintf(c->in2, sizeof(c->in2), "%s/input_two.txt", c->f->dir);
    pf_write(c->f->dir, "input_one.txt", "hello\n");
    pf_write(c->f->dir, "input_two.txt", "world\n");
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    struct cwf *c = *state;
    pf_destroy(c->f);
    vs_free(c);
    return 0;
}

static int run(struct cwf *c, const struct vs_cw_params *p, const struct vs_cw_job *jobs, size_t n,
               char *err, size_t errsize)
{
    struct vs_cw_created *cr = NULL;
    int rc = vs_create_work(&c->f->cfg, c->f->s, p, jobs, n, NOW, NULL, &cr, err, errsize);
    if (rc == 0) {
        assert_non_null(cr);
        for (size_t i = 0; i < n; i++)
            assert_true(cr[i].id > 0);
    } else {
        assert_null(cr);
    }
    vs_free(cr);
    return rc;
}

static void test_basic(void **state)
{
    struct cwf *c = *state;
    struct project_fixture *f = c->f;
    struct vs_cw_params p = {.appname = "app"};
    const char *inputs[] = {c->in1};
    struct vs_cw_job j = {.wu_name = "wu_a", .inputs = inputs, .ninputs = 1};
    char err[512];
    assert_int_equal(run(c, &p, &j, 1, err, sizeof(err)), 0);

    struct vs_workunit wu;
    memset(&wu, 0, sizeof(wu));
    assert_int_equal(vs_store_workunit_by_name(f->s, "wu_a", &wu), 0);
    assert_int_equal(wu.appid, f->appid);
    assert_int_equal(wu.create_time, NOW);
    assert_int_equal(wu.transition_time, NOW); /* the transitioner makes its results */
    assert_int_equal(wu.transitioner_flags, VS_TRANSITION_NORMAL);
    assert_true(wu.rsc_fpops_est == 3.6e12 && wu.rsc_fpops_bound == 8.64e13);
    assert_true(wu.rsc_memory_bound == 5e8 && wu.rsc_disk_bound == 1e9);
    assert_int_equal(wu.delay_bound, 604800);
    assert_int_equal(wu.min_quorum, 1);
    assert_int_equal(wu.target_nresults, 1);
    assert_int_equal(wu.max_error_results, 1);
    assert_int_equal(wu.max_total_results, 1);
    assert_int_equal(wu.max_success_results, 1);
    assert_string_equal(wu.result_template_file, "templates/app_out");
    /* The input was staged into the hierarchy, and the XML points at it. */
    char staged[1200], md5[33], md5s[33], url[600];
    assert_int_equal(
        vs_project_download_path(&f->cfg, "input_one.txt", false, staged, sizeof(staged)), 0);
    assert_int_equal(vs_md5_file(c->in1, md5, NULL), 0);
    assert_int_equal(vs_md5_file(staged, md5s, NULL), 0);
    assert_string_equal(md5, md5s);
    assert_int_equal(vs_project_download_url(&f->cfg, "input_one.txt", url, sizeof(url)), 0);
    assert_non_null(strstr(wu.xml_doc, url));
    assert_non_null(strstr(wu.xml_doc, md5));
    assert_non_null(strstr(wu.xml_doc, "<nbytes>6.000000</nbytes>"));
    assert_non_null(strstr(wu.xml_doc, "<open_name>in</open_name>"));
    vs_workunit_cleanup(&wu);
    /* BOINC-COMPAT: create_work itself creates no results. */
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM result"), 0);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM assignment"), 0);

    /* The same input again by its bare (already staged) name, automatic WU name. */
    const char *bare[] = {"input_one.txt"};
    struct vs_cw_job j2 = {.inputs = bare, .ninputs = 1};
    assert_int_equal(run(c, &p, &j2, 1, err, sizeof(err)), 0);
    char like[128];
    snprintf(like, sizeof(like), "SELECT count(*) FROM workunit WHERE name LIKE 'app_%%_%d_1'",
             NOW);
    assert_int_equal(pf_sql(f, like), 1);
    /* And the same file path again: identical content is fine. */
    j.wu_name = "wu_b";
    assert_int_equal(run(c, &p, &j, 1, err, sizeof(err)), 0);
}

static void test_every_flag(void **state)
{
    struct cwf *c = *state;
    struct project_fixture *f = c->f;
    /* A custom two-input template and a custom result template. */
    pf_write(f->dir, "templates/two_in",
             "<input_template><file_info/><file_info/><workunit>"
             "<file_ref><open_name>a</open_name></file_ref>"
             "<file_ref><open_name>b</open_name></file_ref>"
             "<rsc_fpops_est>5e9</rsc_fpops_est><min_quorum>1</min_quorum>"
             "</workunit></input_template>");
    pf_write(f->dir, "templates/my_out", vs_template_default_out);
    struct vs_cw_params p = {
        .appname = "app",
        .app_version_num = 101,
        .rsc_fpops_est = {true, 2e10},
        .rsc_fpops_bound = {true, 4e11},
        .rsc_memory_bound = {true, 1e8},
        .rsc_disk_bound = {true, 2e8},
        .delay_bound = {true, 7200},
        .min_quorum = {true, 2},
        .target_nresults = {true, 3},
        .max_error_results = {true, 5},
        .max_total_results = {true, 10},
        .max_success_results = {true, 6},
        .priority = {true, 7},
        .batch = {true, 12},
        .credit = {true, 3.5},
        .hr_class = {true, 2},
        .keywords = "1 5",
        .command_line = "--global",
    };
    const char *inputs[] = {c->in1, c->in2};
    struct vs_cw_job j = {.wu_name = "full",
                          .wu_template = "templates/two_in",
                          .result_template = "templates/my_out",
                          .command_line = "--mine",
                          .inputs = inputs,
                          .ninputs = 2};
    char err[512] = "";
    assert_int_equal(run(c, &p, &j, 1, err, sizeof(err)), 0);
    struct vs_workunit wu;
    memset(&wu, 0, sizeof(wu));
    assert_int_equal(vs_store_workunit_by_name(f->s, "full", &wu), 0);
    assert_int_equal(wu.app_version_num, 101);
    assert_true(wu.rsc_fpops_est == 2e10); /* the flag beats the template's 5e9 */
    assert_true(wu.rsc_fpops_bound == 4e11);
    assert_true(wu.rsc_memory_bound == 1e8 && wu.rsc_disk_bound == 2e8);
    assert_int_equal(wu.delay_bound, 7200);
    assert_int_equal(wu.min_quorum, 2);
    assert_int_equal(wu.target_nresults, 3);
    assert_int_equal(wu.max_error_results, 5);
    assert_int_equal(wu.max_total_results, 10);
    assert_int_equal(wu.max_success_results, 6);
    assert_int_equal(wu.priority, 7);
    assert_int_equal(wu.batch, 12);
    assert_true(wu.canonical_credit == 3.5);
    assert_int_equal(wu.hr_class, 2);
    assert_string_equal(wu.keywords, "1 5");
    assert_string_equal(wu.result_template_file, "templates/my_out");
    assert_non_null(strstr(wu.xml_doc, "<command_line>--global --mine</command_line>"));
    assert_non_null(strstr(wu.xml_doc, "<open_name>b</open_name>"));
    assert_non_null(strstr(wu.xml_doc, "input_two.txt"));
    vs_workunit_cleanup(&wu);

    /* Only target_nresults given: unset maxima are raised to it (BOINC). */
    struct vs_cw_params p2 = {.appname = "app", .target_nresults = {true, 3}};
    const char *one[] = {"input_one.txt"};
    struct vs_cw_job j2 = {.wu_name = "raised", .inputs = one, .ninputs = 1};
    assert_int_equal(run(c, &p2, &j2, 1, err, sizeof(err)), 0);
    assert_int_equal(pf_sql(f, "SELECT max_success_results FROM workunit WHERE name='raised'"), 3);
    assert_int_equal(pf_sql(f, "SELECT max_total_results FROM workunit WHERE name='raised'"), 3);

    /* Several jobs in one call, each with its own priority. */
    struct vs_cw_job jobs[3] = {
        {.wu_name = "m1", .inputs = one, .ninputs = 1, .priority = {true, 1}},
        {.wu_name = "m2", .inputs = one, .ninputs = 1},
        {.wu_name = "m3", .inputs = one, .ninputs = 1, .priority = {true, 9}},
    };
    struct vs_cw_params p3 = {.appname = "app", .priority = {true, 4}};
    assert_int_equal(run(c, &p3, jobs, 3, err, sizeof(err)), 0);
    assert_int_equal(pf_sql(f, "SELECT priority FROM workunit WHERE name='m1'"), 1);
    assert_int_equal(pf_sql(f, "SELECT priority FROM workunit WHERE name='m2'"), 4);
    assert_int_equal(pf_sql(f, "SELECT priority FROM workunit WHERE name='m3'"), 9);
}

static void check_assigned(struct project_fixture *f, const char *name, int flags, int type,
                           int64_t target, int multi)
{
    struct vs_workunit wu;
    memset(&wu, 0, sizeof(wu));
    assert_int_equal(vs_store_workunit_by_name(f->s, name, &wu), 0);
    assert_int_equal(wu.transitioner_flags, flags);
    assert_int_equal(wu.transition_time, VS_TIME_NEVER);
    char sql[256];
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM assignment WHERE workunitid=%lld AND target_type=%d AND "
             "target_id=%lld AND multi=%d",
             (long long)wu.id, type, (long long)target, multi);
    assert_int_equal(pf_sql(f, sql), 1);
    vs_workunit_cleanup(&wu);
}

static void test_assigned(void **state)
{
    struct cwf *c = *state;
    struct project_fixture *f = c->f;
    struct vs_host h;
    memset(&h, 0, sizeof(h));
    h.userid = f->userid;
    assert_int_equal(vs_store_host_add(f->s, &h), 0);
    const char *one[] = {c->in1};
    char err[512];
    struct {
        const char *name;
        struct vs_cw_params p;
        int flags, type, multi;
        int64_t target;
    } cases[] = {
        {"th", {.appname = "app", .target_host = h.id}, 2, VS_ASSIGN_HOST, 0, h.id},
        {"tu", {.appname = "app", .target_user = f->userid}, 2, VS_ASSIGN_USER, 0, f->userid},
        {"tt", {.appname = "app", .target_team = f->teamid}, 2, VS_ASSIGN_TEAM, 0, f->teamid},
        {"ba", {.appname = "app", .broadcast_all = true}, 1, VS_ASSIGN_NONE, 1, 0},
        {"bu", {.appname = "app", .broadcast_user = f->userid}, 1, VS_ASSIGN_USER, 1, f->userid},
        {"bt", {.appname = "app", .broadcast_team = f->teamid}, 1, VS_ASSIGN_TEAM, 1, f->teamid},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct vs_cw_job j = {.wu_name = cases[i].name, .inputs = one, .ninputs = 1};
        assert_int_equal(run(c, &cases[i].p, &j, 1, err, sizeof(err)), 0);
        check_assigned(f, cases[i].name, cases[i].flags, cases[i].type, cases[i].target,
                       cases[i].multi);
    }
    /* A per-job target (a --stdin line) beats none. */
    struct vs_cw_params p = {.appname = "app"};
    struct vs_cw_job j = {.wu_name = "line", .inputs = one, .ninputs = 1, .target_host = h.id};
    assert_int_equal(run(c, &p, &j, 1, err, sizeof(err)), 0);
    check_assigned(f, "line", 2, VS_ASSIGN_HOST, h.id, 0);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM result"), 0);
}

/* Runs a call that must fail and checks that nothing at all was written. */
static void expect_fail(struct cwf *c, const struct vs_cw_params *p, const struct vs_cw_job *jobs,
                        size_t n, int want_rc, const char *msg_part)
{
    struct project_fixture *f = c->f;
    int64_t nwu = pf_sql(f, "SELECT count(*) FROM workunit");
    int64_t nas = pf_sql(f, "SELECT count(*) FROM assignment");
    int nfiles = pf_nfiles(f->cfg.download_dir);
    char err[512] = "";
    int rc = run(c, p, jobs, n, err, sizeof(err));
    if (rc != want_rc)
        fail_msg("rc %d (%s), want %d; err: %s", rc, vs_strerror(rc), want_rc, err);
    if (!strstr(err, msg_part))
        fail_msg("error '%s' does not mention '%s'", err, msg_part);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM workunit"), nwu);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM assignment"), nas);
    assert_int_equal(pf_nfiles(f->cfg.download_dir), nfiles);
}

static void test_errors_write_nothing(void **state)
{
    struct cwf *c = *state;
    struct project_fixture *f = c->f;
    const char *one[] = {c->in1};
    const char *two[] = {c->in1, c->in2};
    char missing[1200];
    snprintf(missing, sizeof(missing), "%s/no_such_file", f->dir);
    const char *miss[] = {missing};
    const char *bare_missing[] = {"never_staged.dat"};
    struct vs_cw_params p = {.appname = "app"};
    struct vs_cw_job ok = {.wu_name = "ok", .inputs = one, .ninputs = 1};

    struct vs_cw_params unknown = {.appname = "nope"};
    expect_fail(c, &unknown, &ok, 1, VS_ENOTFOUND, "no app named 'nope'");
    struct vs_cw_params noapp = {0};
    expect_fail(c, &noapp, &ok, 1, VS_EINVAL, "--appname");
    struct vs_cw_params badver = {.appname = "app", .app_version_num = 999};
    expect_fail(c, &badver, &ok, 1, VS_ENOTFOUND, "no version 999");

    /* Missing inputs, in a batch whose first job is fine: nothing staged. */
    struct vs_cw_job batch[2] = {ok, {.wu_name = "bad", .inputs = miss, .ninputs = 1}};
    expect_fail(c, &p, batch, 2, VS_ENOTFOUND, "job 2: input file");
    struct vs_cw_job bm = {.wu_name = "bm", .inputs = bare_missing, .ninputs = 1};
    expect_fail(c, &p, &bm, 1, VS_ENOTFOUND, "not staged");
    struct vs_cw_job toomany = {.wu_name = "tm", .inputs = two, .ninputs = 2};
    expect_fail(c, &p, &toomany, 1, VS_EPARSE, "takes 1 input");

    /* Templates. */
    struct vs_cw_job nt = {
        .wu_name = "nt", .wu_template = "templates/none", .inputs = one, .ninputs = 1};
    expect_fail(c, &p, &nt, 1, VS_ENOTFOUND, "input template");
    struct vs_cw_job nr = {
        .wu_name = "nr", .result_template = "templates/none", .inputs = one, .ninputs = 1};
    expect_fail(c, &p, &nr, 1, VS_ENOTFOUND, "result template");
    struct vs_cw_job outside = {
        .wu_name = "os", .result_template = "/etc/passwd", .inputs = one, .ninputs = 1};
    expect_fail(c, &p, &outside, 1, VS_EINVAL, "inside the project");
    pf_write(f->dir, "templates/bad_out", "<output_template><file_info><name>x</name>");
    struct vs_cw_job br = {
        .wu_name = "br", .result_template = "templates/bad_out", .inputs = one, .ninputs = 1};
    expect_fail(c, &p, &br, 1, VS_EPARSE, "malformed");

    /* Replication and resource numbers. */
    struct vs_cw_params q1 = {.appname = "app", .min_quorum = {true, 3}};
    expect_fail(c, &q1, &ok, 1, VS_EINVAL, "min_quorum (3) exceeds target_nresults (1)");
    struct vs_cw_params q2 = {
        .appname = "app", .target_nresults = {true, 4}, .max_success_results = {true, 2}};
    expect_fail(c, &q2, &ok, 1, VS_EINVAL, "target_nresults (4) exceeds max_success_results");
    struct vs_cw_params q3 = {
        .appname = "app", .max_error_results = {true, 5}, .max_total_results = {true, 2}};
    expect_fail(c, &q3, &ok, 1, VS_EINVAL, "max_error_results (5) exceeds max_total_results");
    struct vs_cw_params q4 = {
        .appname = "app", .max_success_results = {true, 5}, .max_total_results = {true, 2}};
    expect_fail(c, &q4, &ok, 1, VS_EINVAL, "max_success_results (5) exceeds");
    struct vs_cw_params q5 = {.appname = "app", .target_nresults = {true, 0}};
    expect_fail(c, &q5, &ok, 1, VS_EINVAL, "at least 1");
    struct vs_cw_params q6 = {
        .appname = "app", .rsc_fpops_est = {true, 1e12}, .rsc_fpops_bound = {true, 1e11}};
    expect_fail(c, &q6, &ok, 1, VS_EINVAL, "below rsc_fpops_est");
    struct vs_cw_params q7 = {.appname = "app", .rsc_disk_bound = {true, 0}};
    expect_fail(c, &q7, &ok, 1, VS_EINVAL, "positive");

    /* Assignment targets. */
    struct vs_cw_params t1 = {.appname = "app", .target_user = 999};
    expect_fail(c, &t1, &ok, 1, VS_ENOTFOUND, "no user with id 999");
    struct vs_cw_params t2 = {.appname = "app", .target_host = 999};
    expect_fail(c, &t2, &ok, 1, VS_ENOTFOUND, "no host with id 999");
    struct vs_cw_params t3 = {.appname = "app", .target_user = f->userid, .broadcast_all = true};
    expect_fail(c, &t3, &ok, 1, VS_EINVAL, "at most one");
    struct vs_cw_params t4 = {.appname = "app", .broadcast_team = 999};
    expect_fail(c, &t4, &ok, 1, VS_ENOTFOUND, "no team with id 999");

    /* Names: duplicate in the store, twice in one call, unsafe. */
    assert_int_equal(run(c, &p, &ok, 1, NULL, 0), 0);
    struct vs_cw_job again = {.wu_name = "ok", .inputs = one, .ninputs = 1};
    expect_fail(c, &p, &again, 1, VS_EEXISTS, "already exists");
    /* In a batch (one bulk insert, a COPY on PostgreSQL), the job is named. */
    struct vs_cw_job bulk[3] = {{.wu_name = "b1", .inputs = one, .ninputs = 1},
                                {.wu_name = "ok", .inputs = one, .ninputs = 1},
                                {.wu_name = "b3", .inputs = one, .ninputs = 1}};
    expect_fail(c, &p, bulk, 3, VS_EEXISTS, "job 2: a workunit named 'ok' already exists");
    struct vs_cw_job twice[2] = {{.wu_name = "t", .inputs = one, .ninputs = 1},
                                 {.wu_name = "t", .inputs = one, .ninputs = 1}};
    expect_fail(c, &p, twice, 2, VS_EEXISTS, "given twice");
    struct vs_cw_job unsafe = {.wu_name = "../x", .inputs = one, .ninputs = 1};
    expect_fail(c, &p, &unsafe, 1, VS_EINVAL, "bad workunit name");

    /* A different file under a name that is already staged: refused. */
    char other[1200];
    snprintf(other, sizeof(other), "%s/sub", f->dir);
    assert_int_equal(mkdir(other, 0755), 0);
    pf_write(other, "input_one.txt", "different\n");
    snprintf(other, sizeof(other), "%s/sub/input_one.txt", f->dir);
    const char *clash[] = {other};
    struct vs_cw_job cl = {.wu_name = "cl", .inputs = clash, .ninputs = 1};
    expect_fail(c, &p, &cl, 1, VS_EEXISTS, "different file named 'input_one.txt'");
}

static void test_store_failure_unstages(void **state)
{
    struct cwf *c = *state;
    struct project_fixture *f = c->f;
    /* Make the store refuse one workunit after staging has happened. */
    assert_int_equal(vs_test_trigger(f->cfg.store_url, "boom", "BEFORE INSERT", "workunit",
                                     "NEW.name = 'boom'", NULL, "ABORT"),
                     0);
    const char *in1[] = {c->in1};
    const char *in2[] = {c->in2};
    struct vs_cw_job jobs[2] = {{.wu_name = "first", .inputs = in1, .ninputs = 1},
                                {.wu_name = "boom", .inputs = in2, .ninputs = 1}};
    struct vs_cw_params p = {.appname = "app"};
    assert_int_equal(pf_nfiles(f->cfg.download_dir), 0);
    char err[512] = "";
    assert_int_not_equal(run(c, &p, jobs, 2, err, sizeof(err)), 0);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM workunit"), 0);
    /* The two files staged for this call were removed again. */
    assert_int_equal(pf_nfiles(f->cfg.download_dir), 0);
}

/* A batch large enough to be staged by several threads: every file lands
 * with its content; a failing workunit at the end unstages all of them. */
static void test_large_batch(void **state)
{
    struct cwf *c = *state;
    struct project_fixture *f = c->f;
    enum { N = 600 };
    static char paths[N][1200];
    static const char *ins[N][1];
    struct vs_cw_job *jobs = vs_xcalloc(N + 1, sizeof(*jobs));
    for (int i = 0; i < N; i++) {
        char rel[64], text[64];
        snprintf(rel, sizeof(rel), "big_%d", i);
        snprintf(text, sizeof(text), "content %d\n", i);
        pf_write(f->dir, rel, text);
        snprintf(paths[i], sizeof(paths[i]), "%s/%s", f->dir, rel);
        ins[i][0] = paths[i];
        jobs[i].inputs = ins[i];
        jobs[i].ninputs = 1;
    }
    struct vs_cw_params p = {.appname = "app"};
    char err[512] = "";
    /* First with a last job the store refuses after everything was staged
     * (by several threads): nothing stays staged. */
    assert_int_equal(vs_test_trigger(f->cfg.store_url, "boom", "BEFORE INSERT", "workunit",
                                     "NEW.name = 'boom'", NULL, "ABORT"),
                     0);
    jobs[N].wu_name = "boom";
    jobs[N].inputs = ins[0];
    jobs[N].ninputs = 1;
    assert_int_not_equal(run(c, &p, jobs, N + 1, err, sizeof(err)), 0);
    assert_int_equal(pf_nfiles(f->cfg.download_dir), 0);
    /* Then the good ones. */
    assert_int_equal(run(c, &p, jobs, N, err, sizeof(err)), 0);
    assert_int_equal(pf_nfiles(f->cfg.download_dir), N);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM workunit"), N);
    for (int i = 0; i < N; i += 97) {
        char name[64], path[VS_PATH_MAX], want[64];
        snprintf(name, sizeof(name), "big_%d", i);
        assert_int_equal(vs_project_download_path(&f->cfg, name, false, path, sizeof(path)), 0);
        char *got = vs_test_slurp(path, NULL);
        snprintf(want, sizeof(want), "content %d\n", i);
        assert_string_equal(got, want);
        vs_free(got);
    }
    vs_free(jobs);
}

/* A full-locality app's workunits, made interleaved for two files, get
 * adjacent ids per file on SQLite (store_cluster.c): a file's rows
 * share pages, whatever order the generator made them in. */
static void test_locality_placed(void **state)
{
    struct cwf *c = *state;
    struct project_fixture *f = c->f;
    char sql[128];
    snprintf(sql, sizeof(sql), "UPDATE app SET locality_scheduling = 2 WHERE id = %lld",
             (long long)f->appid);
    pf_exec(f, sql);
    struct vs_cw_params p = {.appname = "app"};
    const char *one[] = {c->in1}, *two[] = {c->in2};
    struct vs_cw_job jobs[20];
    char names[20][40];
    for (int i = 0; i < 20; i++) {
        snprintf(names[i], sizeof(names[i]), "input_%s.txt__%d", i % 2 ? "two" : "one", i / 2);
        jobs[i] =
            (struct vs_cw_job){.wu_name = names[i], .inputs = i % 2 ? two : one, .ninputs = 1};
    }
    char err[512];
    assert_int_equal(run(c, &p, jobs, 20, err, sizeof(err)), 0);
    const char *span[2] = {
        "SELECT max(id) - min(id) FROM workunit WHERE name LIKE 'input_one.txt__%'",
        "SELECT max(id) - min(id) FROM workunit WHERE name LIKE 'input_two.txt__%'"};
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM workunit"), 20);
    for (int k = 0; k < 2 && !vs_test_pg(); k++)
        assert_int_equal(pf_sql(f, span[k]), 9); /* 10 adjacent ids */
}

/*
 * An input that is a symbolic link (to /etc/passwd), or whose
 * path passes through one, is refused with a message naming the link and
 * nothing is staged or created; follow_symlinks (--follow-symlinks) allows
 * it, and then the target's bytes are what is staged.
 */
static void test_symlinks_refused(void **state)
{
    struct cwf *c = *state;
    struct project_fixture *f = c->f;
    char link[1200], dir[1200], dirlink[1200], through[1300];
    snprintf(link, sizeof(link), "%s/innocent.txt", f->dir);
    assert_int_equal(symlink("/etc/passwd", link), 0);
    snprintf(dir, sizeof(dir), "%s/realdir", f->dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    pf_write(f->dir, "realdir/data.txt", "data\n");
    snprintf(dirlink, sizeof(dirlink), "%s/linkdir", f->dir);
    assert_int_equal(symlink(dir, dirlink), 0);
    snprintf(through, sizeof(through), "%s/data.txt", dirlink);

    struct vs_cw_params p = {.appname = "app"};
    const char *in1[] = {link}, *in2[] = {through};
    struct vs_cw_job j1 = {.wu_name = "pw", .inputs = in1, .ninputs = 1};
    struct vs_cw_job j2 = {.wu_name = "thru", .inputs = in2, .ninputs = 1};
    char err[512] = "";
    assert_int_equal(run(c, &p, &j1, 1, err, sizeof(err)), VS_EINVAL);
    assert_non_null(strstr(err, "innocent.txt is a symbolic link"));
    assert_non_null(strstr(err, "--follow-symlinks"));
    assert_int_equal(run(c, &p, &j2, 1, err, sizeof(err)), VS_EINVAL);
    assert_non_null(strstr(err, "linkdir is a symbolic link"));
    assert_int_equal(pf_nfiles(f->cfg.download_dir), 0);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM workunit"), 0);

    /* The operator says so: both go in, with the targets' bytes. */
    p.follow_symlinks = true;
    assert_int_equal(run(c, &p, &j1, 1, err, sizeof(err)), 0);
    assert_int_equal(run(c, &p, &j2, 1, err, sizeof(err)), 0);
    char staged[VS_PATH_MAX];
    assert_int_equal(
        vs_project_download_path(&f->cfg, "innocent.txt", false, staged, sizeof(staged)), 0);
    char *got = vs_test_slurp(staged, NULL), *want = vs_test_slurp("/etc/passwd", NULL);
    assert_string_equal(got, want);
    vs_free(got);
    vs_free(want);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM workunit"), 2);
}

/* A workunit name beginning with '-' would reach the
 * assimilator's command as an option ("--error"): refused, nothing made. */
static void test_dash_names_refused(void **state)
{
    struct cwf *c = *state;
    struct project_fixture *f = c->f;
    struct vs_cw_params p = {.appname = "app"};
    const char *in[] = {c->in1};
    const char *bad[] = {"--error", "-x"};
    char err[512] = "";
    for (int i = 0; i < 2; i++) {
        struct vs_cw_job j = {.wu_name = bad[i], .inputs = in, .ninputs = 1};
        assert_int_equal(run(c, &p, &j, 1, err, sizeof(err)), VS_EINVAL);
        assert_non_null(strstr(err, "may not begin with '-'"));
    }
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM workunit"), 0);
    assert_int_equal(pf_nfiles(f->cfg.download_dir), 0);
    /* Inside a name it is fine. */
    struct vs_cw_job ok = {.wu_name = "a--error", .inputs = in, .ninputs = 1};
    assert_int_equal(run(c, &p, &ok, 1, err, sizeof(err)), 0);
}

/*
 * A call that fails after staging removes what it staged, but not a file
 * another workunit names by then (here one inserted before, as a second
 * create_work that found the file staged would have): the old undo
 * removed it under that job.
 */
static void test_failed_call_keeps_files_in_use(void **state)
{
    struct cwf *c = *state;
    struct project_fixture *f = c->f;
    struct vs_workunit other;
    vs_workunit_defaults(&other);
    other.appid = f->appid;
    assert_int_equal(vs_strlcpy(other.name, "other", sizeof(other.name)), 0);
    other.xml_doc = vs_xstrdup("<file_info>\n<name>input_one.txt</name>\n</file_info>\n");
    assert_int_equal(vs_store_workunit_add(f->s, &other), 0);
    vs_workunit_cleanup(&other);
    assert_int_equal(vs_test_trigger(f->cfg.store_url, "boom", "BEFORE INSERT", "workunit",
                                     "NEW.name = 'boom'", NULL, "ABORT"),
                     0);
    struct vs_cw_params p = {.appname = "app"};
    const char *in1[] = {c->in1}, *in2[] = {c->in2};
    struct vs_cw_job jobs[2] = {{.wu_name = "fine", .inputs = in1, .ninputs = 1},
                                {.wu_name = "boom", .inputs = in2, .ninputs = 1}};
    char err[512] = "";
    assert_int_not_equal(run(c, &p, jobs, 2, err, sizeof(err)), 0);
    char one[VS_PATH_MAX], two[VS_PATH_MAX];
    assert_int_equal(vs_project_download_path(&f->cfg, "input_one.txt", false, one, sizeof(one)),
                     0);
    assert_int_equal(vs_project_download_path(&f->cfg, "input_two.txt", false, two, sizeof(two)),
                     0);
    assert_int_equal(access(one, F_OK), 0); /* "other" names it */
    assert_int_not_equal(access(two, F_OK), 0);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM workunit WHERE name <> 'other'"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_basic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_flag, setup, teardown),
        cmocka_unit_test_setup_teardown(test_assigned, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors_write_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_failure_unstages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_large_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_locality_placed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlinks_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dash_names_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_call_keeps_files_in_use, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
