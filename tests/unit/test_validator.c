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

#include <math.h>

#include "store/store_db.h"
#include "volsched/credit.h"
#include "volsched/store_credit.h"

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

/* A double column of the store (pf_sql reads integers). */
static double dcol(struct project_fixture *f, const char *sql)
{
    struct vs_stmt *st = NULL;
    assert_int_equal(vs_db_prepare(f->s, sql, &st), VS_DB_OK);
    assert_int_equal(vs_db_step(st), VS_DB_ROW);
    double v = vs_db_column_double(st, 0);
    vs_db_finalize(st);
    return v;
}

#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

/*
 * Credit is granted with the verdict: every valid result of the quorum the
 * quorum's value, a late result agreeing with the canonical one the
 * canonical credit, host, user and team totals and recent averages moved
 * once; a second pass grants nothing more. A host row the scheduler read
 * before the grant and writes after it does not undo the grant (before
 * issue 39 the scheduler's row update wrote every column back).
 */
static void test_credit_granted(void **state)
{
    struct project_fixture *f = *state;
    f->cfg.validators[0].app[0] = '\0';
    f->cfg.validators[0].method = VS_VALIDATE_BITWISE;
    f->cfg.validators[0].credit = VS_CREDIT_FLOPS;
    f->cfg.nvalidators = 1;
    int64_t a = df_host(f), b = df_host(f), c = df_host(f);
    df_wu(f, "cr", 0, 2, 3, 3, 6, 6, false);
    df_trans(f, NOW);
    df_send(f, "cr_0", a, NOW + 1);
    df_send(f, "cr_1", b, NOW + 1);
    df_send(f, "cr_2", c, NOW + 1);
    df_report(f, "cr_0", a, NOW + 10, "42\n");
    df_report(f, "cr_1", b, NOW + 20, "42\n");
    df_trans(f, NOW + 20);
    struct vs_host stale;
    memset(&stale, 0, sizeof(stale));
    assert_int_equal(vs_store_host_get(f->s, a, &stale), 0);
    struct vs_validator_stats st;
    assert_int_equal(val(f, NOW + 21, &st), 1);
    /* rsc_fpops_est 3.6e12 FLOPs: 3.6e12 * 200 / 86400e9 cobblestones. */
    double each = 3.6e12 * VS_COBBLESTONE_SCALE;
    assert_int_equal(st.ngranted, 2);
    assert_near(st.credit, 2 * each, 1e-9);
    assert_near(dcol(f, "SELECT granted_credit FROM result WHERE name = 'cr_0'"), each, 1e-9);
    assert_near(dcol(f, "SELECT granted_credit FROM result WHERE name = 'cr_1'"), each, 1e-9);
    assert_near(dcol(f, "SELECT canonical_credit FROM workunit WHERE name = 'cr'"), each, 1e-9);
    char sql[200];
    snprintf(sql, sizeof(sql), "SELECT total_credit FROM host WHERE id = %lld", (long long)a);
    assert_near(dcol(f, sql), each, 1e-9);
    assert_near(dcol(f, "SELECT total_credit FROM \"user\""), 2 * each, 1e-9);
    assert_near(dcol(f, "SELECT total_credit FROM team"), 2 * each, 1e-9);
    assert_true(dcol(f, "SELECT expavg_credit FROM \"user\"") > 0);
    assert_near(dcol(f, "SELECT expavg_time FROM team"), NOW + 21, 0);
    /* The scheduler writes its stale copy back: the grant stays. */
    assert_int_equal(vs_store_host_update(f->s, &stale), 0);
    assert_near(dcol(f, sql), each, 1e-9);

    /* Nothing more on a second pass. */
    assert_int_equal(val(f, NOW + 22, &st), 0);
    assert_near(dcol(f, "SELECT total_credit FROM \"user\""), 2 * each, 1e-9);
    /* A late result agreeing with the canonical one: the canonical credit. */
    df_report(f, "cr_2", c, NOW + 30, "42\n");
    df_trans(f, NOW + 30);
    assert_int_equal(val(f, NOW + 31, &st), 1);
    assert_int_equal(st.ngranted, 1);
    assert_near(dcol(f, "SELECT granted_credit FROM result WHERE name = 'cr_2'"), each, 1e-9);
    assert_near(dcol(f, "SELECT total_credit FROM \"user\""), 3 * each, 1e-9);
    struct vs_credit_sums sums;
    assert_int_equal(vs_store_credit_sums(f->s, &sums), 0);
    assert_near(sums.granted, 3 * each, 1e-9);
    assert_near(sums.hosts, 3 * each, 1e-9);
    assert_near(sums.users, 3 * each, 1e-9);
    assert_near(sums.teams, 3 * each, 1e-9);
}

/* The fixed method grants the workunit's credit (create_work --credit);
 * the adaptive default grants a host without history the average. */
static void test_credit_fixed_and_adaptive(void **state)
{
    struct project_fixture *f = *state;
    f->cfg.validators[0].app[0] = '\0';
    f->cfg.validators[0].method = VS_VALIDATE_BITWISE;
    f->cfg.validators[0].credit = VS_CREDIT_FIXED;
    f->cfg.nvalidators = 1;
    int64_t h = df_host(f);
    df_wu(f, "fx", 0, 1, 1, 3, 5, 5, false);
    pf_exec(f, "UPDATE workunit SET canonical_credit = 7.5 WHERE name = 'fx'");
    df_trans(f, NOW);
    df_send(f, "fx_0", h, NOW + 1);
    df_report(f, "fx_0", h, NOW + 10, "1\n");
    df_trans(f, NOW + 10);
    assert_int_equal(val(f, NOW + 11, NULL), 1);
    assert_near(dcol(f, "SELECT granted_credit FROM result WHERE name = 'fx_0'"), 7.5, 1e-12);
    f->cfg.validators[0].credit = VS_CREDIT_ADAPTIVE;
    df_wu(f, "ad", 0, 1, 1, 3, 5, 5, false);
    df_trans(f, NOW + 20);
    df_send(f, "ad_0", h, NOW + 21);
    df_report(f, "ad_0", h, NOW + 30, "1\n");
    df_trans(f, NOW + 30);
    assert_int_equal(val(f, NOW + 31, NULL), 1);
    assert_near(dcol(f, "SELECT granted_credit FROM result WHERE name = 'ad_0'"),
                3.6e12 * VS_COBBLESTONE_SCALE, 1e-9);
    /* Its sample went into the host's average on the version. */
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM credit_pfc WHERE hostid <> 0"), 1);
    assert_near(dcol(f, "SELECT total_credit FROM \"user\""), 7.5 + 3.6e12 * VS_COBBLESTONE_SCALE,
                1e-9);
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
        cmocka_unit_test_setup_teardown(test_credit_granted, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_credit_fixed_and_adaptive, df_setup, df_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
