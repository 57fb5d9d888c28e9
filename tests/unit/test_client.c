/*
 * The client daemon's pieces that need no network: project directory names,
 * URL and name checks, the lockfile, gui_rpc_auth.cfg, preferences, the
 * state file written and read back (and its fallbacks), and the policy
 * driver's snapshot.
 */
#include "vs_test.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client_fixture.h"
#include "volsched/alloc.h"
#include "volsched/client.h"

static void write_text(const char *dir, const char *name, const char *text)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void fill(struct vs_client *c);

/* The fixture's client (client_fixture.h) with fill()'s state, a clock, and its unfinished result
 * held back so that a policy step starts no process in a unit test. */
static int setup_filled(void **state)
{
    clientfx_setup(state);
    struct client_fx *f = *state;
    fill(f->c);
    f->c->now = 1.6e9;
    f->c->results[0].suspended_via_gui = true;
    return 0;
}

static void test_escape_url(void **state)
{
    (void)state;
    char out[256];
    /* BOINC-COMPAT: the example of boinc-client-notes.md 1.3 */
    vs_client_escape_url("http://127.0.0.1:31477/cproj/", out, sizeof(out));
    assert_string_equal(out, "127.0.0.1_31477_cproj");
    vs_client_escape_url("https://einstein.phys.uwm.edu/", out, sizeof(out));
    assert_string_equal(out, "einstein.phys.uwm.edu");
    vs_client_escape_url("http://a.b/x y/", out, sizeof(out));
    assert_string_equal(out, "a.b_x_y");
}

static void test_canon_url(void **state)
{
    (void)state;
    char out[256];
    assert_int_equal(vs_client_canon_url("http://127.0.0.1:8080/demo", out, sizeof(out)), 0);
    assert_string_equal(out, "http://127.0.0.1:8080/demo/");
    assert_int_equal(vs_client_canon_url("https://x.org/", out, sizeof(out)), 0);
    assert_string_equal(out, "https://x.org/");
    assert_int_equal(vs_client_canon_url("ftp://x.org/", out, sizeof(out)), VS_EINVAL);
    assert_int_equal(vs_client_canon_url("file:///etc/passwd", out, sizeof(out)), VS_EINVAL);
    assert_int_equal(vs_client_canon_url("http://localhost/p/", out, sizeof(out)), VS_EINVAL);
    assert_int_equal(vs_client_canon_url("http://a.b/<x>", out, sizeof(out)), VS_EINVAL);
    assert_int_equal(vs_client_canon_url(NULL, out, sizeof(out)), VS_EINVAL);
}

static void test_safe_name(void **state)
{
    (void)state;
    assert_true(vs_client_safe_name("primes_in_1"));
    assert_true(vs_client_safe_name("a.b-c_d"));
    assert_false(vs_client_safe_name("../etc/passwd"));
    assert_false(vs_client_safe_name(".."));
    assert_false(vs_client_safe_name("a/b"));
    assert_false(vs_client_safe_name("x..y"));
    assert_false(vs_client_safe_name(""));
    assert_false(vs_client_safe_name("a\nb"));
    assert_false(vs_client_safe_name(NULL));
}

static void test_lock_and_password(void **state)
{
    struct client_fx *f = *state;
    const char *dir = f->dir;
    struct vs_client *a = f->c, *b = VS_NEW(struct vs_client);
    vs_client_init(b, dir);
    assert_int_equal(vs_client_lock(a), 0);
    /* fcntl locks are per process: the second holder is checked in a child */
    pid_t pid = fork();
    if (pid == 0)
        _exit(vs_client_lock(b) == VS_EBUSY ? 0 : 1);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    /* a missing gui_rpc_auth.cfg is created with a random password, mode 0600 */
    assert_int_equal(vs_client_gui_password(a), 0);
    assert_int_equal(strlen(a->gui_password), 32);
    char path[4096];
    snprintf(path, sizeof(path), "%s/gui_rpc_auth.cfg", dir);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    /* an existing one: first line, blanks stripped */
    write_text(dir, "gui_rpc_auth.cfg", "  secret pw \nsecond line\n");
    assert_int_equal(vs_client_gui_password(b), 0);
    assert_string_equal(b->gui_password, "secret pw");
    vs_client_cleanup(b);
    vs_free(b);
}

static void test_prefs(void **state)
{
    struct client_fx *f = *state;
    const char *dir = f->dir;
    struct vs_client *c = f->c;
    vs_client_prefs_read(c);
    /* BOINC's defaults */
    assert_true(c->prefs.work_buf_min_days == 0.1);
    assert_true(c->prefs.work_buf_additional_days == 0.5);
    assert_true(c->prefs.cpu_scheduling_period_minutes == 60);
    assert_false(c->prefs.leave_apps_in_memory);
    write_text(dir, "global_prefs.xml",
               "<global_preferences><work_buf_min_days>1</work_buf_min_days>"
               "<max_ncpus_pct>50</max_ncpus_pct></global_preferences>");
    write_text(dir, "global_prefs_override.xml",
               "<global_preferences><work_buf_min_days>0.25</work_buf_min_days>"
               "<leave_apps_in_memory>1</leave_apps_in_memory>"
               "<cpu_usage_limit>-5</cpu_usage_limit></global_preferences>");
    write_text(dir, "cc_config.xml", "<cc_config><options><ncpus>4</ncpus></options></cc_config>");
    vs_client_prefs_read(c);
    assert_true(c->prefs.work_buf_min_days == 0.25); /* the override wins */
    assert_true(c->prefs.max_ncpus_pct == 50);       /* the project's stays */
    assert_true(c->prefs.leave_apps_in_memory);
    assert_true(c->prefs.cpu_usage_limit == 100); /* out of range: ignored with a message */
    assert_int_equal(c->prefs.ncpus, 4);
    assert_int_equal(vs_client_ncpus(c), 2); /* 4 CPUs at 50 % */
    assert_true(c->n_msgs >= 1);
    /* a malformed file is reported, defaults kept */
    write_text(dir, "global_prefs_override.xml", "<global_preferences><oops>");
    int before = c->msg_seqno;
    vs_client_prefs_read(c);
    assert_true(c->msg_seqno > before);
    assert_true(c->prefs.work_buf_min_days == 1);
}

/* A state with one project, its app, files, app version, workunit and two results. */
static void fill(struct vs_client *c)
{
    assert_int_equal(vs_client_attach(c, "http://127.0.0.1:9/p", "authkey", false), 0);
    struct cl_project *p = &c->projects[0];
    p->hostid = 7;
    p->rpc_seqno = 3;
    p->resource_share = 200;
    p->ltd = -12.5;
    p->code_sign_key = vs_xstrdup("1024\nabcdef\n.\n");
    p->scheduler_urls[p->n_scheduler_urls++] = vs_xstrdup("http://127.0.0.1:9/p/cgi");
    p->master_url_fetch_pending = false;
    struct cl_app *ap = vs_client_add_app(c);
    ap->name = vs_xstrdup("app");
    struct cl_file *f = vs_client_add_file(c);
    f->name = vs_xstrdup("app_1");
    f->status = FS_PRESENT;
    f->executable = f->signature_required = true;
    f->file_signature = vs_xstrdup("00ff\n.\n");
    f->urls[f->n_urls++] = vs_xstrdup("http://127.0.0.1:9/p/download/app_1");
    struct cl_app_version *av = vs_client_add_av(c);
    av->app_name = vs_xstrdup("app");
    av->version_num = 101;
    av->api_version = vs_xstrdup("7.20.5");
    av->frefs[0].file_name = vs_xstrdup("app_1");
    av->frefs[0].main_program = true;
    av->n_frefs = 1;
    struct cl_wu *w = vs_client_add_wu(c);
    w->name = vs_xstrdup("wu1");
    w->app_name = vs_xstrdup("app");
    w->rsc_fpops_est = 1e12;
    for (int i = 0; i < 2; i++) {
        struct cl_result *r = vs_client_add_result(c);
        r->name = vs_xstrdup(i ? "wu1_1" : "wu1_0");
        r->wu_name = vs_xstrdup("wu1");
        r->version_num = 101;
        r->report_deadline = 2e9;
        r->state = i ? RS_FILES_UPLOADED : RS_FILES_DOWNLOADED;
        r->ready_to_report = i == 1;
        r->stderr_out = i ? vs_xstrdup("<stderr_txt>\nhello & <bye>\n</stderr_txt>") : NULL;
    }
    struct cl_result *r0 = &c->results[0];
    r0->slot = 0;
    r0->checkpoint_cpu_time = 12.5;
    r0->checkpointed = true;
    r0->checkpoint_time = 1.5e9;
    r0->ctask = VS_CTASK_REMOVED;
}

static void test_state_round_trip(void **state)
{
    struct client_fx *f = *state;
    const char *dir = f->dir;
    struct vs_client *c = f->c;
    fill(c);
    assert_int_equal(vs_client_state_write(c), 0);
    assert_int_equal(vs_client_state_write(c), 0); /* second write: current -> prev */
    char path[4096];
    snprintf(path, sizeof(path), "%s/client_state_prev.xml", dir);
    struct stat st_prev, st_cur;
    assert_int_equal(stat(path, &st_prev), 0);
    snprintf(path, sizeof(path), "%s/client_state_next.xml", dir);
    assert_int_not_equal(access(path, F_OK), 0);
    /* prev is kept by a hard link during the write; after it, prev and
     * current are two files, each with one name */
    snprintf(path, sizeof(path), "%s/client_state.xml", dir);
    assert_int_equal(stat(path, &st_cur), 0);
    assert_true(st_prev.st_ino != st_cur.st_ino);
    assert_int_equal((int)st_prev.st_nlink, 1);
    assert_int_equal((int)st_cur.st_nlink, 1);
    /* the authenticator lives in the account file, not the state file */
    struct vs_buf b;
    vs_buf_init(&b, 1u << 20);
    snprintf(path, sizeof(path), "%s/client_state.xml", dir);
    assert_int_equal(vs_client_read_file(path, 1u << 20, &b), 0);
    assert_null(strstr(b.data, "authkey"));
    vs_buf_cleanup(&b);

    struct vs_client *d = VS_NEW(struct vs_client);
    vs_client_init(d, dir);
    assert_int_equal(vs_client_load(d), 0);
    assert_int_equal(d->n_projects, 1);
    assert_string_equal(d->projects[0].authenticator, "authkey");
    assert_int_equal(d->projects[0].hostid, 7);
    assert_int_equal(d->projects[0].rpc_seqno, 3);
    assert_true(d->projects[0].resource_share == 200);
    assert_true(d->projects[0].ltd == -12.5);
    assert_string_equal(d->projects[0].code_sign_key, "1024\nabcdef\n.\n");
    assert_int_equal(d->n_files, 1);
    assert_true(d->files[0].signature_required && d->files[0].status == FS_PRESENT);
    assert_string_equal(d->files[0].file_signature, "00ff\n.\n");
    assert_int_equal(d->n_avs, 1);
    assert_string_equal(d->avs[0].api_version, "7.20.5");
    assert_true(d->avs[0].frefs[0].main_program);
    assert_int_equal(d->n_results, 2);
    assert_int_equal(d->results[0].slot, 0);
    assert_true(d->results[0].checkpoint_cpu_time == 12.5);
    assert_int_equal(d->results[0].ctask, VS_CTASK_REMOVED);
    assert_true(d->results[1].ready_to_report);
    assert_string_equal(d->results[1].stderr_out, "<stderr_txt>\nhello & <bye>\n</stderr_txt>");

    /* a truncated current file: the previous one is read instead */
    vs_client_cleanup(d);
    write_text(dir, "client_state.xml", "<client_state>\n<project>\n<master_url>");
    vs_client_init(d, dir);
    assert_int_equal(vs_client_load(d), 0);
    assert_int_equal(d->n_results, 2);
    vs_client_cleanup(d);
    /* an account file without any state: attached, nothing else */
    snprintf(path, sizeof(path), "%s/client_state.xml", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/client_state_prev.xml", dir);
    unlink(path);
    vs_client_init(d, dir);
    assert_int_equal(vs_client_load(d), 0);
    assert_int_equal(d->n_projects, 1);
    assert_int_equal(d->n_results, 0);
    vs_client_cleanup(d);
    vs_free(d);
}

static void test_drop_and_detach(void **state)
{
    struct client_fx *f = *state;
    const char *dir = f->dir;
    struct vs_client *c = f->c;
    fill(c);
    /* dropping one result keeps the workunit and files the other needs */
    vs_client_drop_result(c, 1);
    assert_int_equal(c->n_results, 1);
    assert_int_equal(c->n_wus, 1);
    vs_client_drop_result(c, 0);
    assert_int_equal(c->n_wus, 0);
    assert_int_equal(c->n_files, 1); /* still referenced by the app version */
    vs_client_drop_project(c, 0);
    assert_int_equal(c->n_projects, 0);
    assert_int_equal(c->n_files + c->n_avs + c->n_apps, 0);
    char path[4096];
    snprintf(path, sizeof(path), "%s/account_127.0.0.1_9_p.xml", dir);
    assert_int_not_equal(access(path, F_OK), 0);
    /* attach refuses bad input, with a message */
    int before = c->msg_seqno;
    assert_int_equal(vs_client_attach(c, "ftp://x.org/", "a", true), VS_EINVAL);
    assert_int_equal(vs_client_attach(c, "http://x.org/", "", true), VS_EINVAL);
    assert_int_equal(vs_client_attach(c, "http://x.org/", "a<b", true), VS_EINVAL);
    assert_int_equal(c->msg_seqno, before + 3);
    assert_int_equal(vs_client_attach(c, "http://x.org", "k", true), 0);
    assert_int_equal(vs_client_attach(c, "http://x.org/", "k", true), VS_EEXISTS);
}

static void test_explain_snapshot(void **state)
{
    struct client_fx *f = *state;
    struct vs_client *c = f->c;
    fill(c);
    c->now = 1.6e9;
    struct vs_buf b;
    vs_buf_init(&b, 1u << 20);
    assert_int_equal(vs_client_explain_json(c, &b), 0);
    /* only the unfinished result is in the snapshot; times are relative */
    assert_non_null(strstr(b.data, "\"wu1_0\""));
    assert_null(strstr(b.data, "\"wu1_1\""));
    assert_non_null(strstr(b.data, "\"task\": \"removed\""));
    assert_non_null(strstr(b.data, "\"deadline\": 400000000"));
    vs_buf_cleanup(&b);
    /* the policy step accepts the driver's snapshot */
    c->host.p_ncpus = 2;
    c->results[0].suspended_via_gui = true; /* nothing to start: no process in a unit test */
    assert_int_equal(vs_client_sched_step(c), 0);
    assert_true(c->have_out);
}

/* app_config.xml reaches the policy snapshot: max_concurrent and
 * avg_ncpus (else the app version's avg_ncpus); debts count CPU time. */
static void test_app_config(void **state)
{
    struct client_fx *f = *state;
    struct vs_client *c = f->c;
    c->host.p_ncpus = 8;
    /* Without the file: the app version's avg_ncpus, no limit. */
    c->avs[0].avg_ncpus = 4;
    vs_client_prefs_read(c);
    assert_int_equal(vs_client_sched_step(c), 0);
    assert_true(c->cst.projects[0].job_ncpus == 4);
    assert_int_equal(c->cst.projects[0].max_concurrent, 0);
    char pdir[VS_CLIENT_PATH_MAX];
    assert_int_equal(vs_client_project_dir(c, 0, pdir, sizeof(pdir)), 0);
    write_text(pdir, "app_config.xml",
               "<app_config>\n"
               "  <app><name>app</name><max_concurrent>3</max_concurrent></app>\n"
               "  <app><name>other</name><max_concurrent>5</max_concurrent></app>\n"
               "  <app_version><app_name>app</app_name><avg_ncpus>2</avg_ncpus></app_version>\n"
               "</app_config>\n");
    vs_client_prefs_read(c);
    assert_int_equal(c->projects[0].max_concurrent, 3);
    assert_true(c->projects[0].app_ncpus == 2);
    assert_int_equal(vs_client_sched_step(c), 0);
    assert_true(c->cst.projects[0].job_ncpus == 2);
    assert_int_equal(c->cst.projects[0].max_concurrent, 3);
    /* project_max_concurrent wins over the apps' limits. */
    write_text(pdir, "app_config.xml",
               "<app_config><app><name>app</name><max_concurrent>3</max_concurrent></app>"
               "<project_max_concurrent>6</project_max_concurrent></app_config>");
    vs_client_prefs_read(c);
    assert_int_equal(c->projects[0].max_concurrent, 6);
    assert_true(c->projects[0].app_ncpus == 0);
    /* A running 4-CPU job adds 4 CPU-seconds a second to its project's
     * debt accounting. */
    c->results[0].ctask = VS_CTASK_RUNNING;
    c->results[0].pid = 12345;
    double before = c->projects[0].wall_cpu_period;
    vs_client_sched_account(c, 10);
    assert_true(c->projects[0].wall_cpu_period - before == 40);
    c->results[0].ctask = VS_CTASK_UNSTARTED;
    c->results[0].pid = 0;
    /* A malformed file is reported and ignored. */
    write_text(pdir, "app_config.xml", "<app_config><app>");
    int seq = c->msg_seqno;
    vs_client_prefs_read(c);
    assert_true(c->msg_seqno > seq);
    assert_int_equal(c->projects[0].max_concurrent, 0);
}

/* A zero share (a backup project) from the account's project preferences
 * reaches the policy as 0 and survives the state file; a negative or
 * non-numeric one is refused and the share kept. CPU efficiency and both
 * buffer preferences reach the snapshot; the efficiency is BOINC's
 * exponential average over wall time and survives the state file. */
static void test_share_eff_buffers(void **state)
{
    struct client_fx *f = *state;
    const char *dir = f->dir;
    struct vs_client *c = f->c;
    struct cl_project *p = &c->projects[0];
    const char *bad[] = {"-5", "abc", "", "1e10", "nan"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char prefs[128];
        snprintf(prefs, sizeof(prefs),
                 "<project_preferences><resource_share>%s</resource_share>"
                 "</project_preferences>",
                 bad[i]);
        vs_client_setstr(&p->project_prefs, prefs);
        vs_client_share_from_prefs(c, 0);
        assert_true(p->resource_share == 200);
    }
    vs_client_setstr(
        &p->project_prefs,
        "<project_preferences><resource_share> 0 </resource_share></project_preferences>");
    vs_client_share_from_prefs(c, 0);
    assert_true(p->resource_share == 0);
    /* read as XML: a share in a comment or nested deeper does not count */
    vs_client_setstr(&p->project_prefs,
                     "<project_preferences><!-- <resource_share>5</resource_share> -->"
                     "<venue name=\"home\"><resource_share>7</resource_share></venue>"
                     "<resource_share>300</resource_share></project_preferences>");
    vs_client_share_from_prefs(c, 0);
    assert_true(p->resource_share == 300);
    vs_client_setstr(
        &p->project_prefs,
        "<project_preferences><resource_share>0</resource_share></project_preferences>");
    vs_client_share_from_prefs(c, 0);
    assert_true(p->resource_share == 0);

    c->prefs.work_buf_min_days = 0.25;
    c->prefs.work_buf_additional_days = 0.5;
    /* 60 s of wall time at half the CPU: BOINC's w = exp(-60/86400) */
    for (int i = 0; i < 30; i++)
        vs_client_cpu_eff_account(c, 2, 1);
    double w = exp(-10 / 86400.0), want = 1;
    for (int i = 0; i < 6; i++)
        want = w * want + (1 - w) * 0.5;
    assert_true(fabs(c->ts.cpu_efficiency - want) < 1e-12);
    assert_int_equal(vs_client_sched_step(c), 0);
    assert_true(c->cst.projects[0].resource_share == 0);
    assert_true(c->cst.host.min_queue == 0.25 * 86400);
    assert_true(c->cst.host.extra_queue == 0.5 * 86400);
    assert_true(c->cst.host.cpu_efficiency == c->ts.cpu_efficiency);

    /* the state file alone keeps the 0: an account file without a share */
    vs_client_setstr(&p->project_prefs, NULL);
    assert_int_equal(vs_client_write_account(c, 0), 0);
    assert_int_equal(vs_client_state_write(c), 0);
    struct vs_client *d = VS_NEW(struct vs_client);
    vs_client_init(d, dir);
    assert_int_equal(vs_client_load(d), 0);
    assert_true(d->projects[0].resource_share == 0);
    assert_true(fabs(d->ts.cpu_efficiency - want) < 1e-5);
    vs_client_cleanup(d);
    /* BOINC-COMPAT: a value out of (0, 1] in the state file is read as 1 */
    vs_client_init(d, dir);
    c->ts.cpu_efficiency = 7;
    assert_int_equal(vs_client_state_write(c), 0);
    assert_int_equal(vs_client_load(d), 0);
    assert_true(d->ts.cpu_efficiency == 1);
    vs_client_cleanup(d);
    vs_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape_url),
        cmocka_unit_test(test_canon_url),
        cmocka_unit_test(test_safe_name),
        cmocka_unit_test_setup_teardown(test_lock_and_password, clientfx_setup, clientfx_teardown),
        cmocka_unit_test_setup_teardown(test_prefs, clientfx_setup, clientfx_teardown),
        cmocka_unit_test_setup_teardown(test_state_round_trip, clientfx_setup, clientfx_teardown),
        cmocka_unit_test_setup_teardown(test_drop_and_detach, clientfx_setup, clientfx_teardown),
        cmocka_unit_test_setup_teardown(test_explain_snapshot, clientfx_setup, clientfx_teardown),
        cmocka_unit_test_setup_teardown(test_app_config, setup_filled, clientfx_teardown),
        cmocka_unit_test_setup_teardown(test_share_eff_buffers, setup_filled, clientfx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
