/*
 * The transitioner's full rules (boinc-server-notes.md section 1.6), the
 * assimilator, the file deleter and vs_daemons_run_once, on a real store,
 * with results reported through the store and outputs written into the
 * upload hierarchy.
 */
#include "vs_test.h"

#include "volsched/credit.h"

#include <jansson.h>
#include <time.h>

#include "daemon_fixture.h"
#include "volsched/store_project.h"

/* ---- transitioner ------------------------------------------------------ */

static void test_timeout_new_result_and_quota(void **state)
{
    struct project_fixture *f = *state;
    int64_t h = df_host(f);
    df_wu(f, "to", 0, 1, 1, 3, 3, 3, false);
    df_trans(f, NOW);
    df_send(f, "to_0", h, NOW);
    /* At the deadline the WU is due (the claim lowered transition_time). */
    assert_int_equal(df_w(f, "to", "transition_time"), NOW + 1000);
    struct vs_transitioner_stats st;
    assert_int_equal(vs_transitioner_pass(f->s, &f->cfg, NOW + 1001, 0, NULL, &st), 0);
    assert_int_equal(st.ntimed_out, 1);
    assert_int_equal(st.nresults_created, 1);
    assert_int_equal(df_r(f, "to_0", "outcome"), VS_RESULT_OUTCOME_NO_REPLY);
    assert_int_equal(df_r(f, "to_1", "server_state"), VS_RESULT_SERVER_STATE_UNSENT);
    /* The host loses one job of its daily quota, and its streak. */
    struct vs_host_app_version hv;
    assert_int_equal(vs_store_hav_get(f->s, h, df_avid(f), &hv), 0);
    assert_int_equal(hv.max_jobs_per_day, 9);
    assert_int_equal(hv.consecutive_valid, 0);
    assert_true(hv.turnaround_avg == 1000.0);
    /* The late report is still taken; its success is then validated. */
    df_report(f, "to_0", h, NOW + 1100, "late\n");
    df_trans(f, NOW + 1100);
    assert_int_equal(df_w(f, "to", "need_validate"), 1);
}

static void test_error_limits_and_abort(void **state)
{
    struct project_fixture *f = *state;
    int64_t h1 = df_host(f), h2 = df_host(f);
    /* max_error_results 1: two client errors end the WU. */
    df_wu(f, "er", 0, 1, 1, 1, 5, 5, false);
    df_trans(f, NOW);
    df_send(f, "er_0", h1, NOW);
    df_report(f, "er_0", h1, NOW + 1, NULL);
    df_trans(f, NOW + 1);
    assert_int_equal(df_w(f, "er", "error_mask"), 0);
    assert_int_equal(df_r(f, "er_1", "server_state"), VS_RESULT_SERVER_STATE_UNSENT);
    df_send(f, "er_1", h2, NOW + 2);
    df_report(f, "er_1", h2, NOW + 3, NULL);
    df_trans(f, NOW + 3);
    assert_int_equal(df_w(f, "er", "error_mask"), VS_WU_ERROR_TOO_MANY_ERROR_RESULTS);
    assert_int_equal(df_w(f, "er", "assimilate_state"), VS_ASSIMILATE_READY);
    assert_int_equal(df_w(f, "er", "transition_time"), VS_TIME_NEVER);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM result WHERE name LIKE 'er_%'"), 2);

    /* A user's abort (EXIT_ABORTED_VIA_GUI) is not an error of the app. */
    df_wu(f, "ab", 0, 1, 1, 0, 5, 5, false);
    df_trans(f, NOW + 10);
    df_send(f, "ab_0", h1, NOW + 10);
    struct vs_result_report rep;
    memset(&rep, 0, sizeof(rep));
    assert_int_equal(vs_strlcpy(rep.name, "ab_0", sizeof(rep.name)), 0);
    rep.client_state = VS_RESULT_CLIENT_STATE_ABORTED;
    rep.exit_status = 203;
    assert_int_equal(vs_store_result_report(f->s, h1, NOW + 11, &rep, NULL), 0);
    df_trans(f, NOW + 11);
    assert_int_equal(df_w(f, "ab", "error_mask"), 0);
    assert_int_equal(df_r(f, "ab_1", "server_state"), VS_RESULT_SERVER_STATE_UNSENT);
}

static void test_max_total_results(void **state)
{
    struct project_fixture *f = *state;
    int64_t h = df_host(f);
    df_wu(f, "mt", 0, 1, 1, 5, 2, 5, false);
    df_trans(f, NOW);
    df_send(f, "mt_0", h, NOW);
    df_trans(f, NOW + 1001); /* timeout: second and last result */
    df_send(f, "mt_1", h, NOW + 1002);
    df_trans(f, NOW + 2003); /* timeout again: a third is not allowed */
    assert_int_equal(df_w(f, "mt", "error_mask"), VS_WU_ERROR_TOO_MANY_TOTAL_RESULTS);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM result WHERE name LIKE 'mt_%'"), 2);
}

static void test_targeted_and_broadcast(void **state)
{
    struct project_fixture *f = *state;
    int64_t h = df_host(f);
    df_wu(f, "tg", VS_TRANSITION_NO_NEW_RESULTS, 1, 1, 3, 5, 5, false);
    df_wu(f, "bc", VS_TRANSITION_NONE, 1, 1, 3, 5, 5, false);
    df_trans(f, NOW);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM result"), 0);
    /* The scheduler made a targeted result; it times out: no replacement. */
    struct vs_result r;
    memset(&r, 0, sizeof(r));
    r.workunitid = df_w(f, "tg", "id");
    r.appid = f->appid;
    r.server_state = VS_RESULT_SERVER_STATE_UNSENT;
    assert_int_equal(vs_strlcpy(r.name, "tg_x", sizeof(r.name)), 0);
    r.xml_doc_in = vs_xstrdup("<file_info><name>tg_x_out</name></file_info>");
    assert_int_equal(vs_store_result_add(f->s, &r), 0);
    vs_result_cleanup(&r);
    df_send(f, "tg_x", h, NOW);
    df_trans(f, NOW + 1001);
    assert_int_equal(df_r(f, "tg_x", "outcome"), VS_RESULT_OUTCOME_NO_REPLY);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM result"), 1);
    /* The broadcast WU is never transitioned, even when due with a result
     * past its deadline. */
    struct vs_workunit wu;
    memset(&wu, 0, sizeof(wu));
    assert_int_equal(vs_store_workunit_by_name(f->s, "bc", &wu), 0);
    wu.transition_time = NOW;
    assert_int_equal(vs_store_workunit_update(f->s, &wu), 0);
    vs_workunit_cleanup(&wu);
    memset(&r, 0, sizeof(r));
    r.workunitid = df_w(f, "bc", "id");
    r.appid = f->appid;
    r.server_state = VS_RESULT_SERVER_STATE_UNSENT;
    assert_int_equal(vs_strlcpy(r.name, "bc_h1", sizeof(r.name)), 0);
    assert_int_equal(vs_store_result_add(f->s, &r), 0);
    df_send(f, "bc_h1", h, NOW);
    struct vs_daemons_stats st;
    vs_daemons_run_once(f->s, &f->cfg, NOW + 5000, VS_DAEMON_ALL, NULL, &st);
    assert_int_equal(st.transitioner.nwus, 0);
    assert_int_equal(df_r(f, "bc_h1", "server_state"), VS_RESULT_SERVER_STATE_IN_PROGRESS);
    assert_int_equal(df_w(f, "bc", "transition_time"), NOW);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM result"), 2);
}

static void test_too_late_deferred_assimilation_and_deletion_trigger(void **state)
{
    struct project_fixture *f = *state;
    int64_t h1 = df_host(f), h2 = df_host(f);
    f->cfg.delete_delay_hours = 2;
    df_wu(f, "dd", 0, 1, 2, 3, 5, 5, false);
    df_trans(f, NOW);
    df_send(f, "dd_0", h1, NOW);
    df_send(f, "dd_1", h2, NOW);
    df_report(f, "dd_0", h1, NOW + 10, "ok\n");
    df_trans(f, NOW + 10);
    assert_int_equal(vs_validator_pass(f->s, &f->cfg, NOW + 11, 0, NULL, NULL), 1);
    /* The assimilator defers: back to INIT with a retry time. */
    struct vs_workunit wu;
    memset(&wu, 0, sizeof(wu));
    assert_int_equal(vs_store_workunit_by_name(f->s, "dd", &wu), 0);
    wu.assimilate_state = VS_ASSIMILATE_INIT;
    wu.transition_time = NOW + 100;
    assert_int_equal(vs_store_workunit_update(f->s, &wu), 0);
    vs_workunit_cleanup(&wu);
    /* dd_1 is still out: not everything is over, no assimilation yet. */
    df_trans(f, NOW + 100);
    assert_int_equal(df_w(f, "dd", "assimilate_state"), VS_ASSIMILATE_INIT);
    /* ... but its deadline is still watched with a canonical result. */
    assert_int_equal(df_w(f, "dd", "transition_time"), NOW + 1000);
    df_report(f, "dd_1", h2, NOW + 200, "ok\n");
    df_trans(f, NOW + 200);
    assert_int_equal(vs_validator_pass(f->s, &f->cfg, NOW + 201, 0, NULL, NULL), 1);
    assert_int_equal(df_r(f, "dd_1", "validate_state"), VS_VALIDATE_STATE_VALID);
    df_trans(f, NOW + 201);
    assert_int_equal(df_w(f, "dd", "assimilate_state"), VS_ASSIMILATE_READY);

    assert_int_equal(vs_assimilator_pass(f->s, &f->cfg, NOW + 300, 0, NULL, NULL), 1);
    assert_int_equal(df_w(f, "dd", "assimilate_state"), VS_ASSIMILATE_DONE);
    assert_int_equal(df_w(f, "dd", "transition_time"), NOW + 300);
    /* Two hours after the last report (NOW + 200) the files may go. */
    df_trans(f, NOW + 300);
    assert_int_equal(df_w(f, "dd", "file_delete_state"), VS_FILE_DELETE_INIT);
    assert_int_equal(df_w(f, "dd", "transition_time"), NOW + 200 + 7200);
    df_trans(f, NOW + 200 + 7200);
    assert_int_equal(df_w(f, "dd", "file_delete_state"), VS_FILE_DELETE_READY);
    assert_int_equal(df_r(f, "dd_0", "file_delete_state"), VS_FILE_DELETE_READY);
    assert_int_equal(df_r(f, "dd_1", "file_delete_state"), VS_FILE_DELETE_READY);

    /* Once the canonical files are gone, a late success is TOO_LATE. */
    assert_int_equal(vs_file_deleter_pass(f->s, &f->cfg, NOW + 7500, 0, NULL, NULL), 3);
    struct vs_result r;
    memset(&r, 0, sizeof(r));
    r.workunitid = df_w(f, "dd", "id");
    r.appid = f->appid;
    r.server_state = VS_RESULT_SERVER_STATE_OVER;
    r.outcome = VS_RESULT_OUTCOME_SUCCESS;
    assert_int_equal(vs_strlcpy(r.name, "dd_9", sizeof(r.name)), 0);
    assert_int_equal(vs_store_result_add(f->s, &r), 0);
    wu.id = 0;
    memset(&wu, 0, sizeof(wu));
    assert_int_equal(vs_store_workunit_by_name(f->s, "dd", &wu), 0);
    wu.transition_time = NOW + 7600;
    assert_int_equal(vs_store_workunit_update(f->s, &wu), 0);
    vs_workunit_cleanup(&wu);
    df_trans(f, NOW + 7600);
    assert_int_equal(df_r(f, "dd_9", "validate_state"), VS_VALIDATE_STATE_TOO_LATE);
    assert_int_equal(df_w(f, "dd", "need_validate"), 0);
}

/* ---- assimilator ------------------------------------------------------- */

/* Runs a one-result WU through to assimilate READY; output text. */
static void to_ready(struct project_fixture *f, const char *wu, const char *out, int64_t now)
{
    int64_t h = df_host(f);
    char r0[VS_NAME_MAX];
    snprintf(r0, sizeof(r0), "%s_0", wu);
    df_wu(f, wu, 0, 1, 1, 0, 1, 1, false);
    df_trans(f, now);
    df_send(f, r0, h, now);
    df_report(f, r0, h, now + 1, out);
    df_trans(f, now + 1);
    if (out)
        assert_int_equal(vs_validator_pass(f->s, &f->cfg, now + 2, 0, NULL, NULL), 1);
    assert_int_equal(df_w(f, wu, "assimilate_state"), VS_ASSIMILATE_READY);
}

static void test_assimilate_default_copy(void **state)
{
    struct project_fixture *f = *state;
    to_ready(f, "as", "the answer is 42\n", NOW);
    to_ready(f, "ae", NULL, NOW); /* a client error with max_error_results 0 */
    /* One error > max_error_results 0, and no replica left under max_total 1. */
    assert_int_equal(df_w(f, "ae", "error_mask"),
                     VS_WU_ERROR_TOO_MANY_ERROR_RESULTS | VS_WU_ERROR_TOO_MANY_TOTAL_RESULTS);
    struct vs_assimilator_stats st;
    assert_int_equal(vs_assimilator_pass(f->s, &f->cfg, NOW + 10, 0, NULL, &st), 2);
    assert_int_equal(st.ndone, 2);
    assert_int_equal(st.nerror, 1);
    assert_int_equal(df_w(f, "as", "assimilate_state"), VS_ASSIMILATE_DONE);
    assert_int_equal(df_w(f, "as", "transition_time"), NOW + 10);

    char path[1200];
    assert_int_equal(vs_assimilator_dir(&f->cfg, "as", path, sizeof(path)), 0);
    char file[1300];
    snprintf(file, sizeof(file), "%s/out", path); /* the output's open name */
    char *text = vs_test_slurp(file, NULL);
    assert_string_equal(text, "the answer is 42\n");
    vs_free(text);
    snprintf(file, sizeof(file), "%s/summary.json", path);
    json_error_t jerr;
    json_t *j = json_load_file(file, 0, &jerr);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "workunit"), "name")),
                        "as");
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(j, "workunit"), "error_mask")), 0);
    json_t *canon = json_object_get(j, "canonical_result");
    assert_string_equal(json_string_value(json_object_get(canon, "name")), "as_0");
    json_t *outs = json_object_get(j, "outputs");
    assert_int_equal(json_array_size(outs), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(outs, 0), "file")), "out");
    assert_true(json_number_value(json_object_get(json_array_get(outs, 0), "nbytes")) == 17.0);
    assert_int_equal(json_array_size(json_object_get(j, "results")), 1);
    json_decref(j);

    /* The errored WU: a summary naming the error, no outputs. */
    assert_int_equal(vs_assimilator_dir(&f->cfg, "ae", path, sizeof(path)), 0);
    snprintf(file, sizeof(file), "%s/summary.json", path);
    j = json_load_file(file, 0, &jerr);
    assert_non_null(j);
    json_t *errs = json_object_get(json_object_get(j, "workunit"), "errors");
    assert_int_equal(json_array_size(errs), 2);
    assert_string_equal(json_string_value(json_array_get(errs, 0)), "too_many_error_results");
    assert_string_equal(json_string_value(json_array_get(errs, 1)), "too_many_total_results");
    assert_true(json_is_null(json_object_get(j, "canonical_result")));
    json_decref(j);
    assert_int_equal(pf_nfiles(path), 1);
}

static void test_assimilate_command_and_retry(void **state)
{
    struct project_fixture *f = *state;
    char cmd[256], log[300], flag[300], body[1024];
    snprintf(log, sizeof(log), "%s/assim.log", f->dir);
    snprintf(flag, sizeof(flag), "%s/fail", f->dir);
    snprintf(body, sizeof(body), "[ -e %s ] && exit 4\necho \"$@\" >> %s\ncat \"$3\" >> %s", flag,
             log, log);
    df_script(f, "assim.sh", body, cmd, sizeof(cmd));
    f->cfg.nassimilators = 1;
    assert_int_equal(vs_strlcpy(f->cfg.assimilators[0].command, cmd, VS_CMD_MAX), 0);
    to_ready(f, "ac", "payload\n", NOW);

    /* The command fails: deferred, the error recorded, retried later. */
    df_write_abs(flag, "");
    assert_int_equal(
        vs_daemons_run_once(f->s, &f->cfg, NOW + 10, VS_DAEMON_ASSIMILATOR, NULL, NULL), 1);
    assert_int_equal(df_w(f, "ac", "assimilate_state"), VS_ASSIMILATE_INIT);
    assert_int_equal(df_w(f, "ac", "transition_time"), NOW + 10 + f->cfg.assimilator_retry_secs);
    struct vs_daemon_status ds;
    assert_int_equal(vs_store_daemon_status_get(f->s, "assimilator", &ds), 0);
    assert_true(strstr(ds.last_error, "exited with 4") != NULL);
    assert_int_equal(ds.last_error_time, NOW + 10);
    assert_false(df_exists(log));

    /* Not READY before the retry time; the transitioner makes it READY then. */
    assert_int_equal(vs_assimilator_pass(f->s, &f->cfg, NOW + 20, 0, NULL, NULL), 0);
    assert_int_equal(unlink(flag), 0);
    df_trans(f, NOW + 10 + f->cfg.assimilator_retry_secs);
    assert_int_equal(df_w(f, "ac", "assimilate_state"), VS_ASSIMILATE_READY);
    assert_int_equal(
        vs_assimilator_pass(f->s, &f->cfg, NOW + 11 + f->cfg.assimilator_retry_secs, 0, NULL, NULL),
        1);
    assert_int_equal(df_w(f, "ac", "assimilate_state"), VS_ASSIMILATE_DONE);
    char *text = vs_test_slurp(log, NULL);
    /* WU name, canonical result name, output path; then the output itself. */
    assert_true(strncmp(text, "ac ac_0 /", 9) == 0);
    assert_non_null(strstr(text, "/upload/"));
    assert_non_null(strstr(text, "\npayload\n"));
    vs_free(text);
    /* The default copy was not made. */
    char path[1200];
    assert_int_equal(vs_assimilator_dir(&f->cfg, "ac", path, sizeof(path)), 0);
    assert_false(df_exists(path));
}

/* ---- file deleter ------------------------------------------------------ */

static void to_assimilated(struct project_fixture *f, const char *wu, bool keep, int64_t now)
{
    int64_t h = df_host(f);
    char r0[VS_NAME_MAX];
    snprintf(r0, sizeof(r0), "%s_0", wu);
    df_wu(f, wu, 0, 1, 1, 0, 1, 1, keep);
    df_trans(f, now);
    df_send(f, r0, h, now);
    df_report(f, r0, h, now + 1, "out\n");
    df_trans(f, now + 1);
    assert_int_equal(vs_validator_pass(f->s, &f->cfg, now + 2, 0, NULL, NULL), 1);
    assert_int_equal(vs_assimilator_pass(f->s, &f->cfg, now + 3, 0, NULL, NULL), 1);
}

static void input_path(struct project_fixture *f, const char *wu, char *out, size_t n)
{
    char nm[VS_NAME_MAX];
    snprintf(nm, sizeof(nm), "%s_in", wu);
    df_input_path(f, nm, out, n);
}

static void test_file_deleter(void **state)
{
    struct project_fixture *f = *state;
    to_assimilated(f, "fd", false, NOW);
    to_assimilated(f, "kp", true, NOW); /* input marked <no_delete/> */
    char in[1200], in_md5[1300], out[1200], kin[1200], kout[1200];
    input_path(f, "fd", in, sizeof(in));
    snprintf(in_md5, sizeof(in_md5), "%s.md5", in);
    df_output_path(f, "fd_0", 0, out, sizeof(out));
    input_path(f, "kp", kin, sizeof(kin));
    df_output_path(f, "kp_0", 0, kout, sizeof(kout));
    assert_true(df_exists(in) && df_exists(in_md5) && df_exists(out));
    /* Nothing is ready before the transitioner says so. */
    assert_int_equal(vs_file_deleter_pass(f->s, &f->cfg, NOW + 4, 0, NULL, NULL), 0);
    assert_true(df_exists(out));
    df_trans(f, NOW + 4);
    struct vs_file_deleter_stats st;
    assert_int_equal(vs_file_deleter_pass(f->s, &f->cfg, NOW + 5, 0, NULL, &st), 4);
    assert_int_equal(st.nwus, 2);
    assert_int_equal(st.nresults, 2);
    assert_false(df_exists(in));
    assert_false(df_exists(in_md5));
    assert_false(df_exists(out));
    assert_true(df_exists(kin)); /* no_delete honoured */
    assert_false(df_exists(kout));
    assert_int_equal(df_w(f, "fd", "file_delete_state"), VS_FILE_DELETE_DONE);
    assert_int_equal(df_w(f, "kp", "file_delete_state"), VS_FILE_DELETE_DONE);
    assert_int_equal(df_r(f, "fd_0", "file_delete_state"), VS_FILE_DELETE_DONE);
    /* The assimilated copy stays. */
    char res[1200];
    assert_int_equal(vs_assimilator_dir(&f->cfg, "fd", res, sizeof(res)), 0);
    assert_int_equal(pf_nfiles(res), 2);
}

static void test_file_deleter_delay(void **state)
{
    struct project_fixture *f = *state;
    f->cfg.delete_delay_hours = 1;
    to_assimilated(f, "dl", false, NOW); /* reported at NOW + 1 */
    char out[1200];
    df_output_path(f, "dl_0", 0, out, sizeof(out));
    df_trans(f, NOW + 4);
    assert_int_equal(vs_file_deleter_pass(f->s, &f->cfg, NOW + 5, 0, NULL, NULL), 0);
    assert_true(df_exists(out));
    df_trans(f, NOW + 1 + 3600);
    assert_int_equal(vs_file_deleter_pass(f->s, &f->cfg, NOW + 3602, 0, NULL, NULL), 2);
    assert_false(df_exists(out));
}

static void test_file_deleter_error_retry(void **state)
{
    struct project_fixture *f = *state;
    to_assimilated(f, "fe", false, NOW);
    char out[1200], inner[1300];
    df_output_path(f, "fe_0", 0, out, sizeof(out));
    /* Make the output undeletable by unlink: a non-empty directory. */
    assert_int_equal(unlink(out), 0);
    assert_int_equal(mkdir(out, 0755), 0);
    snprintf(inner, sizeof(inner), "%s/x", out);
    df_write_abs(inner, "x");
    df_trans(f, NOW + 4);
    assert_int_equal(
        vs_daemons_run_once(f->s, &f->cfg, NOW + 5, VS_DAEMON_FILE_DELETER, NULL, NULL), 2);
    assert_int_equal(df_r(f, "fe_0", "file_delete_state"), VS_FILE_DELETE_ERROR);
    assert_int_equal(df_w(f, "fe", "file_delete_state"), VS_FILE_DELETE_DONE);
    struct vs_daemon_status ds;
    assert_int_equal(vs_store_daemon_status_get(f->s, "file_deleter", &ds), 0);
    assert_non_null(strstr(ds.last_error, "fe_0"));
    assert_int_equal(ds.retry_time, NOW + 5 + f->cfg.file_deleter_retry_secs);
    /* Fixed, but not retried before the retry time. */
    assert_int_equal(unlink(inner), 0);
    assert_int_equal(rmdir(out), 0);
    df_write_abs(out, "o");
    assert_int_equal(vs_file_deleter_pass(f->s, &f->cfg, NOW + 6, 0, NULL, NULL), 0);
    assert_true(df_exists(out));
    struct vs_file_deleter_stats st;
    assert_int_equal(
        vs_file_deleter_pass(f->s, &f->cfg, NOW + 5 + f->cfg.file_deleter_retry_secs, 0, NULL, &st),
        1);
    assert_int_equal(st.nretried, 1);
    assert_false(df_exists(out));
    assert_int_equal(df_r(f, "fe_0", "file_delete_state"), VS_FILE_DELETE_DONE);
}

/* ---- all together ------------------------------------------------------ */

static void test_run_once_pipeline_and_counts(void **state)
{
    struct project_fixture *f = *state;
    int64_t h = df_host(f);
    df_wu(f, "p1", 0, 1, 1, 1, 2, 2, false);
    df_wu(f, "p2", 0, 1, 1, 1, 2, 2, false);
    struct vs_daemons_stats st;
    assert_int_equal(vs_daemons_run_once(f->s, &f->cfg, NOW, VS_DAEMON_ALL, NULL, &st), 2);
    assert_int_equal(st.transitioner.nresults_created, 2);
    struct vs_store_counts c;
    assert_int_equal(vs_store_counts(f->s, &c), 0);
    assert_int_equal(c.workunits, 2);
    assert_int_equal(c.wu_phase[VS_WU_PHASE_IN_PROGRESS], 2);
    assert_int_equal(c.job_cache, 2);
    assert_int_equal(c.result_state_outcome[VS_RESULT_SERVER_STATE_UNSENT][0], 2);
    df_send(f, "p1_0", h, NOW + 1);
    df_report(f, "p1_0", h, NOW + 2, "r\n");
    /* One call: transition, validate, assimilate; then the next call
     * transitions (deletion ready) and deletes. */
    assert_true(vs_daemons_run_once(f->s, &f->cfg, NOW + 3, VS_DAEMON_ALL, NULL, &st) >= 3);
    assert_int_equal(st.validator.ncanonical, 1);
    assert_int_equal(st.assimilator.ndone, 1);
    assert_true(vs_daemons_run_once(f->s, &f->cfg, NOW + 4, VS_DAEMON_ALL, NULL, &st) >= 2);
    assert_int_equal(st.file_deleter.nresults, 1);
    assert_int_equal(df_w(f, "p1", "file_delete_state"), VS_FILE_DELETE_DONE);
    assert_int_equal(vs_store_counts(f->s, &c), 0);
    assert_int_equal(c.wu_phase[VS_WU_PHASE_FILES_DELETED], 1);
    assert_int_equal(c.wu_phase[VS_WU_PHASE_IN_PROGRESS], 1);
    assert_int_equal(c.job_cache, 1);
    assert_int_equal(c.result_validate[VS_VALIDATE_STATE_VALID], 1);
    assert_int_equal(c.hosts, 1);
    assert_int_equal(c.users, 1);
    struct vs_daemon_status ds;
    assert_int_equal(vs_store_daemon_status_get(f->s, "validator", &ds), 0);
    assert_int_equal(ds.last_run, NOW + 4);
    assert_int_equal(ds.total_work, 1);
    assert_string_equal(ds.last_error, "");
    assert_int_equal(vs_daemon_by_name("file_deleter"), VS_DAEMON_FILE_DELETER);
    assert_int_equal(vs_daemon_by_name("feeder"), 0);
    assert_string_equal(vs_daemon_name(VS_DAEMON_VALIDATOR), "validator");
}

static void test_runner_thread(void **state)
{
    struct project_fixture *f = *state;
    int64_t h = df_host(f);
    /* Jobs are created "now" by the clock, since the runner uses it. */
    int64_t now = (int64_t)time(NULL);
    df_wu(f, "rt", 0, 1, 1, 1, 2, 2, false);
    struct vs_daemons_runner *r = NULL;
    struct vs_daemons_runner_opts ropts = {.which = VS_DAEMON_ALL, .interval_ms = 20};
    assert_int_equal(vs_daemons_runner_start(&f->cfg, &ropts, &r), 0);
    /* The runner's transitioner makes the result. */
    for (int i = 0; i < 500 && pf_sql(f, "SELECT count(*) FROM result") == 0; i++)
        usleep(10000);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM result"), 1);
    df_send(f, "rt_0", h, now);
    df_report(f, "rt_0", h, now, "x\n");
    /* ... and takes it all the way to deleted files. */
    for (int i = 0; i < 500 && df_w(f, "rt", "file_delete_state") != VS_FILE_DELETE_DONE; i++)
        usleep(10000);
    assert_int_equal(df_w(f, "rt", "file_delete_state"), VS_FILE_DELETE_DONE);
    assert_true(vs_daemons_runner_passes(r) >= 2);
    vs_daemons_runner_stop(r);
    vs_daemons_runner_stop(NULL);
}

/* ---- config and schema ------------------------------------------------- */

static void test_config_blocks(void **state)
{
    struct project_fixture *f = *state;
    pf_write(f->dir, "config.xml",
             "<boinc><config>\n<upload_dir>upload</upload_dir>\n"
             "<validator><app>a1</app><command>/bin/check -x</command></validator>\n"
             "<validator><method>always_valid</method><credit>flops</credit></validator>\n"
             "<assimilator><app>a1</app><command>/bin/take</command></assimilator>\n"
             "<assimilator_retry_secs>30</assimilator_retry_secs>\n"
             "<delete_delay_hours>5</delete_delay_hours>\n"
             "<reliable_priority_on_over>7</reliable_priority_on_over>\n"
             "</config></boinc>\n");
    struct vs_project_config cfg;
    assert_int_equal(vs_project_config_load(f->dir, NULL, &cfg, NULL), 0);
    assert_int_equal(cfg.nvalidators, 2);
    const struct vs_validator_config *v = vs_project_validator(&cfg, "a1");
    assert_int_equal(v->method, VS_VALIDATE_COMMAND);
    assert_string_equal(v->command, "/bin/check -x");
    assert_int_equal(vs_project_validator(&cfg, "a2")->method, VS_VALIDATE_ALWAYS);
    assert_string_equal(vs_project_assimilator(&cfg, "a1")->command, "/bin/take");
    assert_string_equal(vs_project_assimilator(&cfg, "a2")->command, "");
    assert_int_equal(cfg.assimilator_retry_secs, 30);
    assert_int_equal(cfg.validator_retry_secs, 6 * 3600); /* default */
    assert_int_equal(cfg.delete_delay_hours, 5);
    assert_int_equal(cfg.reliable_priority_on_over, 7);
    /* Written and read back the same. */
    assert_int_equal(vs_project_config_write(&cfg), 0);
    struct vs_project_config again;
    assert_int_equal(vs_project_config_load(f->dir, NULL, &again, NULL), 0);
    assert_int_equal(again.nvalidators, 2);
    assert_int_equal(again.nassimilators, 1);
    assert_string_equal(again.validators[0].command, "/bin/check -x");
    assert_int_equal(again.validators[1].method, VS_VALIDATE_ALWAYS);
    /* <credit>: flops kept, adaptive the default. */
    assert_int_equal(again.validators[1].credit, VS_CREDIT_FLOPS);
    assert_int_equal(again.validators[0].credit, VS_CREDIT_ADAPTIVE);
    assert_int_equal(again.assimilator_retry_secs, 30);
    /* Without a validator block: bitwise. */
    struct vs_project_config none;
    assert_int_equal(vs_project_config_defaults(&none, f->dir, "x", "http://h/"), 0);
    assert_int_equal(vs_project_validator(&none, "a1")->method, VS_VALIDATE_BITWISE);
    /* A bad method, or command mode without a command, is refused. */
    pf_write(f->dir, "config.xml",
             "<boinc><config><validator><method>magic</method></validator></config></boinc>");
    /* A bad value is a configuration error, with file and line (config.h). */
    struct vs_config_error ce;
    assert_int_equal(vs_project_config_load(f->dir, NULL, &cfg, &ce), VS_ECONFIG);
    assert_int_equal(ce.line, 1);
    assert_non_null(strstr(ce.msg, "magic"));
    pf_write(f->dir, "config.xml",
             "<boinc><config><validator><method>command</method></validator></config></boinc>");
    assert_int_equal(vs_project_config_load(f->dir, NULL, &cfg, NULL), VS_ECONFIG);
    pf_write(f->dir, "config.xml",
             "<boinc><config><validator><credit>lots</credit></validator></config></boinc>");
    assert_int_equal(vs_project_config_load(f->dir, NULL, &cfg, &ce), VS_ECONFIG);
    assert_non_null(strstr(ce.msg, "<credit> must be adaptive, flops or fixed"));
}

static void test_schema_v1_migrates(void **state)
{
    struct project_fixture *f = *state;
    /* Make the store look like a version 1 store, then reopen it. */
    vs_store_close(f->s);
    f->s = NULL;
    char path[1200];
    snprintf(path, sizeof(path), "%s/volsched.db", f->cfg.dir);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "DROP TABLE host_app_version; DROP TABLE daemon_status;"
                                  "DROP INDEX res_asgn_slot; DROP INDEX res_asgn_bcast;"
                                  "ALTER TABLE result DROP COLUMN assign_slot;"
                                  "ALTER TABLE result DROP COLUMN lease_owner;"
                                  "ALTER TABLE result DROP COLUMN lease_until;"
                                  "ALTER TABLE team DROP COLUMN expavg_time;"
                                  "DROP TABLE credit_pfc; DROP TABLE site_session;"
                                  "ALTER TABLE \"user\" DROP COLUMN passwd_hash;"
                                  "ALTER TABLE team DROP COLUMN description;"
                                  "DROP TABLE batch; DROP TABLE user_submit;"
                                  "DROP TABLE user_submit_app; DROP TABLE job_file;"
                                  "DROP TABLE batch_file_assoc; DROP INDEX IF EXISTS wu_batch;"
                                  "UPDATE store_meta SET value = 1 WHERE key = 'schema_version'",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(vs_project_store_open(&f->cfg, false, NULL, &f->s), 0);
    assert_int_equal(pf_sql(f, "SELECT value FROM store_meta WHERE key = 'schema_version'"),
                     vs_store_schema_version());
    struct vs_daemon_status d = {.name = "x", .last_run = 5};
    assert_int_equal(vs_store_daemon_status_put(f->s, &d), 0);
    assert_int_equal(pf_sql(f, "SELECT last_run FROM daemon_status WHERE name = 'x'"), 5);
    /* v8: the remote submission tables are back */
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM sqlite_master WHERE name IN ('batch', "
                               "'user_submit', 'user_submit_app', 'job_file', "
                               "'batch_file_assoc', 'wu_batch')"),
                     6);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM app"), 1); /* data kept */
}

/* A version 2 store (the full result indexes) gets the partial ones on
 * open; results are kept and the feeder's and a host's queries use the new
 * indexes. */
static void test_schema_v2_migrates(void **state)
{
    struct project_fixture *f = *state;
    vs_store_close(f->s);
    f->s = NULL;
    char path[1200];
    snprintf(path, sizeof(path), "%s/volsched.db", f->cfg.dir);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "DROP INDEX res_unsent_prio; DROP INDEX res_host_ip;"
                                  "DROP INDEX res_asgn_slot; DROP INDEX res_asgn_bcast;"
                                  "ALTER TABLE result DROP COLUMN assign_slot;"
                                  "ALTER TABLE result DROP COLUMN lease_owner;"
                                  "ALTER TABLE result DROP COLUMN lease_until;"
                                  "ALTER TABLE team DROP COLUMN expavg_time;"
                                  "DROP TABLE credit_pfc; DROP TABLE site_session;"
                                  "CREATE INDEX ind_res_st ON result(server_state, id);"
                                  "CREATE INDEX res_hostid ON result(hostid, id);"
                                  "INSERT INTO workunit(id, appid, name, xml_doc) "
                                  "VALUES(900, 1, 'wu900', '');"
                                  "INSERT INTO result(workunitid, name, appid, server_state, "
                                  "hostid) VALUES(900, 'r1', 1, 2, 0), (900, 'r2', 1, 4, 3);"
                                  "ALTER TABLE \"user\" DROP COLUMN passwd_hash;"
                                  "ALTER TABLE team DROP COLUMN description;"
                                  "DROP TABLE batch; DROP TABLE user_submit;"
                                  "DROP TABLE user_submit_app; DROP TABLE job_file;"
                                  "DROP TABLE batch_file_assoc; DROP INDEX IF EXISTS wu_batch;"
                                  "UPDATE store_meta SET value = 2 WHERE key = 'schema_version'",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(vs_project_store_open(&f->cfg, false, NULL, &f->s), 0);
    assert_int_equal(pf_sql(f, "SELECT value FROM store_meta WHERE key = 'schema_version'"),
                     vs_store_schema_version());
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM sqlite_master WHERE name IN "
                               "('ind_res_st', 'res_hostid')"),
                     0);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM sqlite_master WHERE name IN "
                               "('res_unsent_prio', 'res_host_ip', 'res_asgn_slot', "
                               "'res_asgn_bcast')"),
                     4);
    int64_t n;
    assert_int_equal(vs_store_count_results(f->s, 0, VS_RESULT_SERVER_STATE_UNSENT, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(vs_store_count_results(f->s, 0, VS_RESULT_SERVER_STATE_IN_PROGRESS, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM result WHERE workunitid = 900"), 2);
}

/* The pass helpers every daemon shares (daemon_util.c). */
static void test_pass_helpers(void **state)
{
    struct project_fixture *f = *state;
    /* No store or config: VS_EINVAL from every pass, stats untouched. */
    struct vs_daemon_pass d;
    assert_int_equal(vs_daemon_pass_begin(&d, NULL, &f->cfg, NOW, NULL), VS_EINVAL);
    assert_int_equal(vs_daemon_pass_begin(&d, f->s, NULL, NOW, NULL), VS_EINVAL);
    struct vs_validator_stats vst;
    memset(&vst, 0x5a, sizeof(vst));
    assert_int_equal(vs_validator_pass(NULL, &f->cfg, NOW, 0, NULL, &vst), VS_EINVAL);
    assert_int_equal((unsigned char)vst.last_error[0], 0x5a);
    struct vs_assimilator_stats ast;
    memset(&ast, 0x5a, sizeof(ast));
    assert_int_equal(vs_assimilator_pass(f->s, NULL, NOW, 0, NULL, &ast), VS_EINVAL);
    assert_int_equal((unsigned char)ast.last_error[0], 0x5a);
    assert_int_equal(vs_file_deleter_pass(NULL, NULL, NOW, 0, NULL, NULL), VS_EINVAL);
    assert_int_equal(vs_transitioner_pass(NULL, &f->cfg, NOW, 0, NULL, NULL), VS_EINVAL);

    /* begin fills the pass; end returns the count, or the error and its text. */
    assert_int_equal(vs_daemon_pass_begin(&d, f->s, &f->cfg, NOW, NULL), 0);
    assert_ptr_equal(d.s, f->s);
    assert_ptr_equal(d.cfg, &f->cfg);
    assert_int_equal(d.now, NOW);
    assert_non_null(vs_arena_strndup(&d.arena, "freed by end", 12));
    assert_int_equal(vs_daemon_pass_end(&d, 0, 7, NULL, 0), 7);
    char err[64] = "";
    assert_int_equal(vs_daemon_pass_begin(&d, f->s, &f->cfg, NOW, NULL), 0);
    assert_int_equal(vs_daemon_pass_end(&d, 0, 3, err, sizeof(err)), 3);
    assert_string_equal(err, "");
    assert_int_equal(vs_daemon_pass_begin(&d, f->s, &f->cfg, NOW, NULL), 0);
    assert_int_equal(vs_daemon_pass_end(&d, VS_EBUSY, 3, err, sizeof(err)), VS_EBUSY);
    assert_string_equal(err, vs_strerror(VS_EBUSY));
    char tiny[4];
    assert_int_equal(vs_daemon_pass_begin(&d, f->s, &f->cfg, NOW, NULL), 0);
    assert_int_equal(vs_daemon_pass_end(&d, VS_EBUSY, 0, tiny, sizeof(tiny)), VS_EBUSY);
    assert_int_equal(strlen(tiny), 3); /* cut, terminated */

    /* txn_end: commit on 0, roll back and pass the error on otherwise. */
    struct vs_team t;
    memset(&t, 0, sizeof(t));
    assert_int_equal(vs_strlcpy(t.name, "kept", sizeof(t.name)), 0);
    assert_int_equal(vs_store_begin(f->s), 0);
    assert_int_equal(vs_store_team_add(f->s, &t), 0);
    assert_int_equal(vs_daemon_txn_end(f->s, 0), 0);
    memset(&t, 0, sizeof(t));
    assert_int_equal(vs_strlcpy(t.name, "dropped", sizeof(t.name)), 0);
    assert_int_equal(vs_store_begin(f->s), 0);
    assert_int_equal(vs_store_team_add(f->s, &t), 0);
    assert_int_equal(vs_daemon_txn_end(f->s, VS_EINVAL), VS_EINVAL);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM team WHERE name='kept'"), 1);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM team WHERE name='dropped'"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_timeout_new_result_and_quota, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_error_limits_and_abort, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_max_total_results, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_targeted_and_broadcast, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_too_late_deferred_assimilation_and_deletion_trigger,
                                        df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_assimilate_default_copy, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_assimilate_command_and_retry, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_file_deleter, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_file_deleter_delay, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_file_deleter_error_retry, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_run_once_pipeline_and_counts, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_runner_thread, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_config_blocks, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_pass_helpers, df_setup, df_teardown),
        /* Last: the SQLite-only ones. */
        cmocka_unit_test_setup_teardown(test_schema_v2_migrates, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_schema_v1_migrates, df_setup, df_teardown),
    };
    size_t n = sizeof(tests) / sizeof(tests[0]);
    if (vs_test_pg()) {
        /* They turn a SQLite file back into schema versions 1 and 2, which
         * a PostgreSQL store never had (its schema starts at the version
         * of the backend's first release). */
        print_message("on PostgreSQL: not run: test_schema_v2_migrates, test_schema_v1_migrates "
                      "(SQLite files of old schema versions)\n");
        n -= 2;
    }
    return _cmocka_run_group_tests("test_daemons", tests, n, NULL, NULL);
}
