/*
 * The validator's rules (boinc-server-notes.md section 1.7) on a real store,
 * driven through the transitioner as in production: quorum of one, quorum
 * two with one bad host (INCONCLUSIVE raising target_nresults, then the
 * agreeing pair winning), max_success_results, a missing output file
 * (VALIDATE_ERROR), a late result checked against the canonical one, the
 * always-valid method, the operator's per-result and pairwise commands with
 * their transient failures, and the daily quota moving on valid/invalid.
 */
#include "vs_test.h"

#include "daemon_fixture.h"

static int val(struct project_fixture *f, int64_t now, struct vs_validator_stats *st)
{
    return vs_validator_pass(f->s, &f->cfg, now, 0, NULL, st);
}

static struct vs_host_app_version hav(struct project_fixture *f, int64_t host)
{
    struct vs_host_app_version h;
    memset(&h, 0, sizeof(h));
    int rc = vs_store_hav_get(f->s, host, df_avid(f), &h);
    assert_true(rc == 0 || rc == VS_ENOTFOUND);
    return h;
}

static void test_quorum_one(void **state)
{
    struct project_fixture *f = *state;
    int64_t h = df_host(f);
    df_wu(f, "q1", 0, 1, 1, 3, 5, 5, false);
    df_trans(f, NOW);
    df_send(f, "q1_0", h, NOW + 1);
    /* Not reported yet: nothing to validate. */
    assert_int_equal(val(f, NOW + 2, NULL), 0);
    df_report(f, "q1_0", h, NOW + 10, "42\n");
    df_trans(f, NOW + 10);
    assert_int_equal(df_w(f, "q1", "need_validate"), 1);
    struct vs_validator_stats st;
    assert_int_equal(val(f, NOW + 11, &st), 1);
    assert_int_equal(st.ncanonical, 1);
    assert_int_equal(st.nvalid, 1);
    assert_int_equal(df_w(f, "q1", "canonical_resultid"), df_r(f, "q1_0", "id"));
    assert_int_equal(df_w(f, "q1", "need_validate"), 0);
    assert_int_equal(df_w(f, "q1", "assimilate_state"), VS_ASSIMILATE_READY);
    assert_int_equal(df_w(f, "q1", "transition_time"), VS_TIME_NEVER);
    assert_int_equal(df_r(f, "q1_0", "validate_state"), VS_VALIDATE_STATE_VALID);
    /* Valid: the host's quota grows by one past the project's 10. */
    struct vs_host_app_version hv = hav(f, h);
    assert_int_equal(hv.max_jobs_per_day, 11);
    assert_int_equal(hv.consecutive_valid, 1);
    /* Done: a second pass finds nothing. */
    assert_int_equal(val(f, NOW + 12, NULL), 0);
}

static void test_quorum_two_one_bad_host(void **state)
{
    struct project_fixture *f = *state;
    int64_t a = df_host(f), bad = df_host(f), c = df_host(f);
    /* The bad host had earned more than the quota: an invalid result takes one off. */
    struct vs_host_app_version hb = {.host_id = bad,
                                     .app_version_id = df_avid(f),
                                     .max_jobs_per_day = 15,
                                     .consecutive_valid = 4};
    assert_int_equal(vs_store_hav_put(f->s, &hb), 0);
    df_wu(f, "q2", 0, 2, 2, 3, 6, 6, false);
    df_trans(f, NOW);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM result WHERE name LIKE 'q2_%'"), 2);
    df_send(f, "q2_0", a, NOW + 1);
    df_send(f, "q2_1", bad, NOW + 1);
    df_report(f, "q2_0", a, NOW + 10, "42\n");
    df_trans(f, NOW + 10);
    /* One success is below the quorum. */
    assert_int_equal(df_w(f, "q2", "need_validate"), 0);
    df_report(f, "q2_1", bad, NOW + 20, "41\n");
    df_trans(f, NOW + 20);
    assert_int_equal(df_w(f, "q2", "need_validate"), 1);

    /* Two results that disagree: INCONCLUSIVE, and a third replica is wanted. */
    struct vs_validator_stats st;
    assert_int_equal(val(f, NOW + 21, &st), 1);
    assert_int_equal(st.ncanonical, 0);
    assert_int_equal(st.ninconclusive, 2);
    assert_int_equal(df_w(f, "q2", "canonical_resultid"), 0);
    assert_int_equal(df_w(f, "q2", "target_nresults"), 3);
    assert_int_equal(df_r(f, "q2_0", "validate_state"), VS_VALIDATE_STATE_INCONCLUSIVE);
    assert_int_equal(df_r(f, "q2_1", "validate_state"), VS_VALIDATE_STATE_INCONCLUSIVE);
    assert_int_equal(df_w(f, "q2", "transition_time"), NOW + 21);
    df_trans(f, NOW + 21);
    assert_int_equal(df_r(f, "q2_2", "server_state"), VS_RESULT_SERVER_STATE_UNSENT);
    /* INCONCLUSIVE results alone do not wake the validator. */
    assert_int_equal(df_w(f, "q2", "need_validate"), 0);

    df_send(f, "q2_2", c, NOW + 30);
    df_report(f, "q2_2", c, NOW + 40, "42\n");
    df_trans(f, NOW + 40);
    assert_int_equal(df_w(f, "q2", "need_validate"), 1);
    assert_int_equal(val(f, NOW + 41, &st), 1);
    assert_int_equal(st.ncanonical, 1);
    /* The agreeing pair wins; the first of them is canonical. */
    assert_int_equal(df_w(f, "q2", "canonical_resultid"), df_r(f, "q2_0", "id"));
    assert_int_equal(df_r(f, "q2_0", "validate_state"), VS_VALIDATE_STATE_VALID);
    assert_int_equal(df_r(f, "q2_2", "validate_state"), VS_VALIDATE_STATE_VALID);
    assert_int_equal(df_r(f, "q2_1", "validate_state"), VS_VALIDATE_STATE_INVALID);
    assert_int_equal(df_r(f, "q2_1", "outcome"), VS_RESULT_OUTCOME_SUCCESS);
    assert_int_equal(df_w(f, "q2", "assimilate_state"), VS_ASSIMILATE_READY);
    struct vs_host_app_version hv = hav(f, bad);
    assert_int_equal(hv.max_jobs_per_day, 14);
    assert_int_equal(hv.consecutive_valid, 0);
    assert_int_equal(hav(f, a).max_jobs_per_day, 11);
    assert_int_equal(hav(f, c).consecutive_valid, 1);
}

/*
 * A replica still out when the canonical result is chosen times out at its
 * deadline, whether or not the assimilator has run (BOINC's transitioner
 * visits the WU then). Before, the validator set transition_time to never
 * and the replica stayed IN_PROGRESS past its deadline.
 */
static void test_canonical_keeps_timeout(void **state)
{
    struct project_fixture *f = *state;
    int64_t a = df_host(f), b = df_host(f), c = df_host(f);
    df_wu(f, "out", 0, 2, 3, 3, 6, 6, false);
    df_trans(f, NOW);
    df_send(f, "out_0", a, NOW + 1);
    df_send(f, "out_1", b, NOW + 1);
    df_send(f, "out_2", c, NOW + 5); /* deadline NOW + 1005 */
    df_report(f, "out_0", a, NOW + 10, "42\n");
    df_report(f, "out_1", b, NOW + 20, "42\n");
    df_trans(f, NOW + 20);
    struct vs_validator_stats st;
    assert_int_equal(val(f, NOW + 21, &st), 1);
    assert_int_equal(st.ncanonical, 1);
    assert_int_equal(df_w(f, "out", "transition_time"), NOW + 1005);
    /* No assimilator ran; the transitioner still times the replica out. */
    df_trans(f, NOW + 1006);
    assert_int_equal(df_r(f, "out_2", "server_state"), VS_RESULT_SERVER_STATE_OVER);
    assert_int_equal(df_r(f, "out_2", "outcome"), VS_RESULT_OUTCOME_NO_REPLY);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM result WHERE name LIKE 'out_%'"), 3);
    assert_int_equal(df_w(f, "out", "transition_time"), VS_TIME_NEVER);
}

static void test_max_success_results(void **state)
{
    struct project_fixture *f = *state;
    int64_t h1 = df_host(f), h2 = df_host(f), h3 = df_host(f);
    df_wu(f, "ms", 0, 2, 2, 3, 6, 2, false);
    df_trans(f, NOW);
    df_send(f, "ms_0", h1, NOW);
    df_send(f, "ms_1", h2, NOW);
    df_report(f, "ms_0", h1, NOW + 1, "1\n");
    df_report(f, "ms_1", h2, NOW + 1, "2\n");
    df_trans(f, NOW + 1);
    assert_int_equal(val(f, NOW + 2, NULL), 1);
    assert_int_equal(df_w(f, "ms", "error_mask"), 0);
    df_trans(f, NOW + 2);
    df_send(f, "ms_2", h3, NOW + 3);
    df_report(f, "ms_2", h3, NOW + 4, "3\n");
    df_trans(f, NOW + 4);
    /* Three viable results, no two agree, max_success_results 2: a
     * nondeterministic app; the WU errors out. */
    assert_int_equal(val(f, NOW + 5, NULL), 1);
    assert_int_equal(df_w(f, "ms", "error_mask"), VS_WU_ERROR_TOO_MANY_SUCCESS_RESULTS);
    df_trans(f, NOW + 5);
    assert_int_equal(df_w(f, "ms", "assimilate_state"), VS_ASSIMILATE_READY);
    assert_int_equal(df_r(f, "ms_0", "validate_state"), VS_VALIDATE_STATE_NO_CHECK);
    assert_int_equal(df_r(f, "ms_2", "validate_state"), VS_VALIDATE_STATE_NO_CHECK);
}

static void test_missing_output_and_late_result(void **state)
{
    struct project_fixture *f = *state;
    int64_t h1 = df_host(f), h2 = df_host(f), h3 = df_host(f);
    df_wu(f, "mo", 0, 1, 2, 3, 6, 6, false);
    df_trans(f, NOW);
    df_send(f, "mo_0", h1, NOW);
    df_send(f, "mo_1", h2, NOW);
    /* mo_0 claims success but its file never arrived. */
    df_report(f, "mo_0", h1, NOW + 1, "x\n");
    char p0[VS_PATH_MAX + VS_NAME_MAX];
    df_output_path(f, "mo_0", 0, p0, sizeof(p0));
    assert_int_equal(unlink(p0), 0);
    df_trans(f, NOW + 1);
    assert_int_equal(val(f, NOW + 2, NULL), 1);
    assert_int_equal(df_r(f, "mo_0", "outcome"), VS_RESULT_OUTCOME_VALIDATE_ERROR);
    assert_int_equal(df_r(f, "mo_0", "validate_state"), VS_VALIDATE_STATE_INVALID);
    assert_int_equal(df_w(f, "mo", "canonical_resultid"), 0);
    /* The transitioner replaces it. */
    df_trans(f, NOW + 2);
    assert_int_equal(df_r(f, "mo_2", "server_state"), VS_RESULT_SERVER_STATE_UNSENT);
    df_report(f, "mo_1", h2, NOW + 3, "y\n");
    df_trans(f, NOW + 3);
    assert_int_equal(val(f, NOW + 4, NULL), 1);
    assert_int_equal(df_w(f, "mo", "canonical_resultid"), df_r(f, "mo_1", "id"));
    /* The extra replica went unsent: not needed any more. */
    assert_int_equal(df_r(f, "mo_2", "outcome"), VS_RESULT_OUTCOME_DIDNT_NEED);
    /* Once assimilated, the failed result's files go too. */
    assert_int_equal(vs_assimilator_pass(f->s, &f->cfg, NOW + 5, 0, NULL, NULL), 1);
    df_trans(f, NOW + 5);
    assert_int_equal(df_r(f, "mo_0", "file_delete_state"), VS_FILE_DELETE_READY);
    assert_int_equal(df_r(f, "mo_1", "file_delete_state"), VS_FILE_DELETE_READY);
    assert_int_equal(df_r(f, "mo_2", "file_delete_state"), VS_FILE_DELETE_INIT);

    /* A WU whose canonical result exists gets late results checked against it. */
    df_wu(f, "lt", 0, 1, 2, 3, 6, 6, false);
    df_trans(f, NOW + 10);
    df_send(f, "lt_0", h1, NOW + 10);
    df_send(f, "lt_1", h3, NOW + 10);
    df_report(f, "lt_0", h1, NOW + 11, "same\n");
    df_trans(f, NOW + 11);
    assert_int_equal(val(f, NOW + 12, NULL), 1);
    assert_int_equal(df_w(f, "lt", "canonical_resultid"), df_r(f, "lt_0", "id"));
    df_report(f, "lt_1", h3, NOW + 13, "different\n");
    df_trans(f, NOW + 13);
    assert_int_equal(df_w(f, "lt", "need_validate"), 1);
    struct vs_validator_stats st;
    assert_int_equal(val(f, NOW + 14, &st), 1);
    assert_int_equal(st.ninvalid, 1);
    assert_int_equal(df_r(f, "lt_1", "validate_state"), VS_VALIDATE_STATE_INVALID);
    assert_int_equal(df_w(f, "lt", "transition_time"), NOW + 14);
}

static void test_always_valid(void **state)
{
    struct project_fixture *f = *state;
    int64_t h1 = df_host(f), h2 = df_host(f);
    f->cfg.nvalidators = 1;
    f->cfg.validators[0].method = VS_VALIDATE_ALWAYS;
    df_wu(f, "av", 0, 2, 2, 3, 6, 6, false);
    df_trans(f, NOW);
    df_send(f, "av_0", h1, NOW);
    df_send(f, "av_1", h2, NOW);
    df_report(f, "av_0", h1, NOW + 1, "a\n");
    df_report(f, "av_1", h2, NOW + 1, "b\n");
    df_trans(f, NOW + 1);
    assert_int_equal(val(f, NOW + 2, NULL), 1);
    assert_int_equal(df_w(f, "av", "canonical_resultid"), df_r(f, "av_0", "id"));
    assert_int_equal(df_r(f, "av_1", "validate_state"), VS_VALIDATE_STATE_VALID);
}

static void test_command(void **state)
{
    struct project_fixture *f = *state;
    int64_t h1 = df_host(f), h2 = df_host(f);
    char check[256], flag[300];
    /* Valid when the output holds "42"; exit 3 (transient) while DIR/down exists. */
    snprintf(flag, sizeof(flag), "%s/down", f->dir);
    char body[1024];
    snprintf(body, sizeof(body), "[ -e %s ] && exit 3\ngrep -q 42 \"$1\"", flag);
    df_script(f, "check.sh", body, check, sizeof(check));
    f->cfg.nvalidators = 1;
    f->cfg.validators[0].method = VS_VALIDATE_COMMAND;
    assert_int_equal(vs_strlcpy(f->cfg.validators[0].command, check, VS_CMD_MAX), 0);
    /* Another app's block does not apply to "app". */
    f->cfg.nvalidators = 2;
    assert_int_equal(vs_strlcpy(f->cfg.validators[1].app, "other", VS_NAME_MAX), 0);
    f->cfg.validators[1].method = VS_VALIDATE_ALWAYS;

    df_wu(f, "cm", 0, 1, 1, 3, 6, 6, false);
    df_trans(f, NOW);
    df_send(f, "cm_0", h1, NOW);
    df_report(f, "cm_0", h1, NOW + 1, "41\n");
    df_trans(f, NOW + 1);
    assert_int_equal(val(f, NOW + 2, NULL), 1);
    /* The command said invalid: a validate error, replaced by the transitioner. */
    assert_int_equal(df_r(f, "cm_0", "outcome"), VS_RESULT_OUTCOME_VALIDATE_ERROR);
    df_trans(f, NOW + 2);
    df_send(f, "cm_1", h2, NOW + 3);
    df_report(f, "cm_1", h2, NOW + 4, "42\n");
    df_trans(f, NOW + 4);

    /* While the command fails transiently the WU waits validator_retry_secs. */
    df_write_abs(flag, "");
    struct vs_validator_stats st;
    assert_int_equal(val(f, NOW + 5, &st), 1);
    assert_int_equal(st.ndeferred, 1);
    assert_true(strstr(st.last_error, "cm") != NULL);
    assert_int_equal(df_w(f, "cm", "need_validate"), 0);
    assert_int_equal(df_r(f, "cm_1", "validate_state"), VS_VALIDATE_STATE_INIT);
    assert_int_equal(df_w(f, "cm", "transition_time"), NOW + 5 + f->cfg.validator_retry_secs);
    assert_int_equal(unlink(flag), 0);
    df_trans(f, NOW + 5 + f->cfg.validator_retry_secs);
    assert_int_equal(df_w(f, "cm", "need_validate"), 1);
    assert_int_equal(val(f, NOW + 6 + f->cfg.validator_retry_secs, NULL), 1);
    assert_int_equal(df_w(f, "cm", "canonical_resultid"), df_r(f, "cm_1", "id"));
}

static void test_compare_command(void **state)
{
    struct project_fixture *f = *state;
    int64_t h1 = df_host(f), h2 = df_host(f);
    char cmp[256];
    /* Equivalent when equal ignoring case: A -- B. */
    df_script(f, "cmp.sh",
              "[ \"$2\" = \"--\" ] || exit 9\n"
              "a=$(tr a-z A-Z < \"$1\"); b=$(tr a-z A-Z < \"$3\"); [ \"$a\" = \"$b\" ] || exit 1",
              cmp, sizeof(cmp));
    f->cfg.nvalidators = 1;
    assert_int_equal(vs_strlcpy(f->cfg.validators[0].app, "app", VS_NAME_MAX), 0);
    f->cfg.validators[0].method = VS_VALIDATE_COMMAND;
    assert_int_equal(vs_strlcpy(f->cfg.validators[0].compare_command, cmp, VS_CMD_MAX), 0);
    df_wu(f, "cc", 0, 2, 2, 3, 6, 6, false);
    df_trans(f, NOW);
    df_send(f, "cc_0", h1, NOW);
    df_send(f, "cc_1", h2, NOW);
    df_report(f, "cc_0", h1, NOW + 1, "abc\n");
    df_report(f, "cc_1", h2, NOW + 1, "ABC\n");
    df_trans(f, NOW + 1);
    assert_int_equal(val(f, NOW + 2, NULL), 1);
    assert_int_equal(df_w(f, "cc", "canonical_resultid"), df_r(f, "cc_0", "id"));
    assert_int_equal(df_r(f, "cc_1", "validate_state"), VS_VALIDATE_STATE_VALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_quorum_one, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_quorum_two_one_bad_host, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_canonical_keeps_timeout, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_max_success_results, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_missing_output_and_late_result, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_always_valid, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_command, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_compare_command, df_setup, df_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
