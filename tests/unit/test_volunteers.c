/*
 * Volunteers' accounts (issue 36), module by module on real parts: form
 * arguments (form.h), session cookies with a subject (ops_session.h), the
 * store's account operations on a real project store (store_accounts.h),
 * and the account handler (acct.h) answering requests as the HTTP layer
 * hands them, at an explicit clock.
 */
#include "vs_test.h"

#include "project_fixture.h"

#include <stdio.h>
#include <string.h>

#include "server/form.h"
#include "server/ops_session.h"
#include "volsched/acct.h"
#include "volsched/alloc.h"
#include "volsched/md5.h"
#include "volsched/store_accounts.h"

static void test_form_get(void **state)
{
    (void)state;
    char v[16];
    const char *q = "a=1&name=Ann+%26+Bob&empty=&flag&pct=100%25";
    assert_int_equal(vs_form_get(q, "name", v, sizeof(v)), 0);
    assert_string_equal(v, "Ann & Bob");
    assert_int_equal(vs_form_get(q, "empty", v, sizeof(v)), 0);
    assert_string_equal(v, "");
    assert_int_equal(vs_form_get(q, "flag", v, sizeof(v)), 0);
    assert_true(vs_form_has(q, "flag"));
    assert_int_equal(vs_form_get(q, "pct", v, sizeof(v)), 0);
    assert_string_equal(v, "100%");
    assert_int_equal(vs_form_get(q, "nam", v, sizeof(v)), VS_ENOTFOUND);
    assert_int_equal(vs_form_get("x=%zz", "x", v, sizeof(v)), VS_EPARSE);
    assert_int_equal(vs_form_get("x=%4", "x", v, sizeof(v)), VS_EPARSE);
    assert_int_equal(vs_form_get("x=a%00b", "x", v, sizeof(v)), VS_EPARSE);
    assert_string_equal(v, "");
    assert_int_equal(vs_form_get("x=0123456789abcdefg", "x", v, sizeof(v)), VS_ELIMIT);
}

static void test_session_subject(void **state)
{
    (void)state;
    struct vs_ops_session_key k, k2;
    memset(&k, 7, sizeof(k));
    memset(&k2, 8, sizeof(k2));
    char c[VS_OPS_COOKIE_MAX], hdr[VS_OPS_COOKIE_MAX + 64], subj[24], val[VS_OPS_COOKIE_MAX];
    assert_int_equal(vs_session_cookie_make(&k, "42", 1000, 3600, c, sizeof(c)), 0);
    snprintf(hdr, sizeof(hdr), "other=1; vs_site=%s", c);
    assert_true(vs_session_cookie_find(&k, "vs_site", hdr, 1001, 3600, subj, sizeof(subj), val,
                                       sizeof(val)));
    assert_string_equal(subj, "42");
    assert_string_equal(val, c);
    /* Another key, an expired one, a changed subject: refused. */
    assert_false(
        vs_session_cookie_find(&k2, "vs_site", hdr, 1001, 3600, subj, sizeof(subj), NULL, 0));
    assert_false(
        vs_session_cookie_find(&k, "vs_site", hdr, 4700, 3600, subj, sizeof(subj), NULL, 0));
    snprintf(hdr, sizeof(hdr), "vs_site=43%s", c + 2);
    assert_false(
        vs_session_cookie_find(&k, "vs_site", hdr, 1001, 3600, subj, sizeof(subj), NULL, 0));
    /* A cookie with a subject is no operator's cookie, whatever its name. */
    snprintf(hdr, sizeof(hdr), "%s=%s", VS_OPS_COOKIE_NAME, c);
    assert_false(vs_ops_cookie_check(&k, hdr, 1001));
    assert_int_equal(vs_ops_cookie_make(&k, 1000, c, sizeof(c)), 0);
    snprintf(hdr, sizeof(hdr), "%s=%s", VS_OPS_COOKIE_NAME, c);
    assert_true(vs_ops_cookie_check(&k, hdr, 1001));
    assert_int_equal(vs_session_cookie_make(&k, "4x", 1000, 3600, c, sizeof(c)), VS_EINVAL);
}

static int count_cb(void *ctx, const void *row)
{
    (void)row;
    (*(int *)ctx)++;
    return 0;
}
static int count_team(void *ctx, const struct vs_team *t)
{
    return count_cb(ctx, t);
}
static int count_host(void *ctx, const struct vs_host *h)
{
    return count_cb(ctx, h);
}

static void test_store_accounts_ops(void **state)
{
    (void)state;
    struct project_fixture *f = pf_create();
    struct vs_user u;
    memset(&u, 0, sizeof(u));
    snprintf(u.name, sizeof(u.name), "ann");
    snprintf(u.email_addr, sizeof(u.email_addr), "ann@example.org");
    snprintf(u.passwd_hash, sizeof(u.passwd_hash), "pbkdf2-sha256$x");
    assert_int_equal(vs_store_user_add(f->s, &u), 0);
    struct vs_user got;
    assert_int_equal(vs_store_user_by_email(f->s, "ann@example.org", &got), 0);
    assert_int_equal(got.id, u.id);
    assert_string_equal(got.passwd_hash, "pbkdf2-sha256$x");
    vs_user_cleanup(&got);
    assert_int_equal(vs_store_user_by_email(f->s, "bob@example.org", &got), VS_ENOTFOUND);
    assert_int_equal(vs_store_user_by_email(f->s, "", &got), VS_ENOTFOUND);

    /* Teams: nusers follows moves; a name with LIKE's wildcards. */
    struct vs_team t = {.userid = u.id};
    snprintf(t.name, sizeof(t.name), "100%% crunch_ers");
    assert_int_equal(vs_store_team_add(f->s, &t), 0);
    assert_int_equal(vs_store_user_set_team(f->s, u.id, t.id), 0);
    assert_int_equal(pf_sql(f, "SELECT nusers FROM team WHERE name = '100% crunch_ers'"), 1);
    assert_int_equal(vs_store_user_set_team(f->s, u.id, 999), VS_ENOTFOUND);
    assert_int_equal(pf_sql(f, "SELECT nusers FROM team WHERE name = '100% crunch_ers'"), 1);
    int n = 0;
    assert_int_equal(vs_store_teams_find(f->s, "0% CRUNCH_", 10, count_team, &n), 0);
    assert_int_equal(n, 1);
    n = 0;
    assert_int_equal(vs_store_teams_find(f->s, "0%%crunch", 10, count_team, &n), 0);
    assert_int_equal(n, 0); /* '%' is a character, not a wildcard */
    /* An update never moves the user between teams (nusers would drift). */
    u.teamid = 0;
    snprintf(u.country, sizeof(u.country), "Chile");
    assert_int_equal(vs_store_user_update(f->s, &u), 0);
    assert_int_equal(pf_sql(f, "SELECT teamid FROM \"user\" WHERE name = 'ann'"), t.id);

    /* A host's venue: only its owner's; the scheduler's row update keeps it. */
    struct vs_host h = {.userid = u.id, .p_ncpus = 2};
    snprintf(h.domain_name, sizeof(h.domain_name), "annpc");
    assert_int_equal(vs_store_host_add(f->s, &h), 0);
    assert_int_equal(vs_store_host_set_venue(f->s, h.id, u.id + 1000, "work"), VS_ENOTFOUND);
    assert_int_equal(vs_store_host_set_venue(f->s, h.id, u.id, "work"), 0);
    h.rpc_seqno = 5; /* h.venue is still "" in this copy, as in a cached row */
    assert_int_equal(vs_store_host_update(f->s, &h), 0);
    struct vs_host hg;
    assert_int_equal(vs_store_host_get(f->s, h.id, &hg), 0);
    assert_string_equal(hg.venue, "work");
    assert_int_equal(hg.rpc_seqno, 5);
    n = 0;
    assert_int_equal(vs_store_user_hosts(f->s, u.id, 10, count_host, &n), 0);
    assert_int_equal(n, 1);

    /* Delete: the row stays (results keep their userid), the data goes. */
    pf_exec(f, "INSERT INTO workunit(id, appid, name, xml_doc) VALUES(77, 1, 'wu77', '')");
    char sql[256];
    snprintf(sql, sizeof(sql),
             "INSERT INTO result(workunitid, name, appid, server_state, outcome, hostid, userid, "
             "sent_time) VALUES(77, 'r77', 1, 5, 1, %lld, %lld, 10)",
             (long long)h.id, (long long)u.id);
    pf_exec(f, sql);
    assert_int_equal(vs_store_user_delete(f->s, u.id), 0);
    assert_int_equal(vs_store_user_get(f->s, u.id, &got), 0);
    assert_string_equal(got.email_addr, "");
    assert_string_equal(got.passwd_hash, "");
    assert_string_equal(got.country, "");
    assert_int_equal(got.teamid, 0);
    assert_string_not_equal(got.authenticator, u.authenticator);
    assert_non_null(strstr(got.name, "deleted_"));
    vs_user_cleanup(&got);
    assert_int_equal(pf_sql(f, "SELECT nusers FROM team WHERE name = '100% crunch_ers'"), 0);
    assert_int_equal(pf_sql(f, "SELECT userid FROM team WHERE name = '100% crunch_ers'"), 0);
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM result WHERE userid = %lld", (long long)u.id);
    assert_int_equal(pf_sql(f, sql), 1);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM host WHERE domain_name = 'annpc'"), 0);
    assert_int_equal(vs_store_user_delete(f->s, 9999), VS_ENOTFOUND);
    pf_destroy(f);
}

/* One GET of the account handler at time now: status, body in *out_body
 * (caller frees). */
static int get(struct vs_acct *a, const char *path, const char *query, int64_t now, char **out_body)
{
    struct vs_buf b;
    vs_buf_init(&b, 1u << 20);
    struct vs_http_page pg = {.body = &b, .ctype = "text/plain"};
    struct vs_http_get rq = {.path = path, .query = query, .peer = "192.0.2.1"};
    int st = vs_acct_handle(a, &rq, now, &pg);
    size_t n;
    *out_body = b.data ? vs_buf_take(&b, &n) : vs_xstrdup("");
    vs_buf_cleanup(&b);
    return st;
}

static void test_acct_rpcs(void **state)
{
    (void)state;
    struct project_fixture *f = pf_create();
    f->cfg.account_rpc_burst = 5;
    f->cfg.account_rpc_per_hour = 3600; /* one a second */
    struct vs_acct *a = NULL;
    assert_int_equal(vs_acct_create(&f->cfg, NULL, NULL, NULL, &a), 0);
    char hash[VS_MD5_HEX_LEN + 1], q[256];
    assert_int_equal(vs_md5_hex("pw123456zoe@example.org", 23, hash), 0);
    char *body;
    snprintf(q, sizeof(q), "email_addr=Zoe%%40Example.org&passwd_hash=%s&user_name=Zoe", hash);
    assert_int_equal(get(a, "/t/create_account.php", q, 1000, &body), 200);
    assert_non_null(strstr(body, "<account_out>"));
    vs_free(body);
    /* The store keeps a PBKDF2 of the hash, never the hash. */
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM \"user\" WHERE email_addr = 'zoe@example.org' "
                               "AND passwd_hash LIKE 'pbkdf2-sha256$%'"),
                     1);
    char want[160];
    snprintf(want, sizeof(want), "SELECT count(*) FROM \"user\" WHERE passwd_hash LIKE '%%%s%%'",
             hash);
    assert_int_equal(pf_sql(f, want), 0);
    snprintf(q, sizeof(q), "email_addr=zoe%%40example.org&passwd_hash=%s", hash);
    assert_int_equal(get(a, "/t/lookup_account.php", q, 1000, &body), 200);
    assert_non_null(strstr(body, "<authenticator>"));
    vs_free(body);
    assert_int_equal(
        get(a, "/t/lookup_account.php",
            "email_addr=zoe%40example.org&passwd_hash=00000000000000000000000000000000", 1000,
            &body),
        200);
    assert_non_null(strstr(body, "<error_num>-206</error_num>"));
    vs_free(body);
    /* Three spent, two left of the burst of 5; then 429 until refilled. */
    assert_int_equal(get(a, "/t/lookup_account.php", "email_addr=zoe%40example.org", 1000, &body),
                     200);
    assert_non_null(strstr(body, "<success/>"));
    vs_free(body);
    assert_int_equal(get(a, "/t/lookup_account.php", "email_addr=x%40example.org", 1000, &body),
                     200);
    assert_non_null(strstr(body, "<error_num>-136</error_num>"));
    vs_free(body);
    assert_int_equal(get(a, "/t/lookup_account.php", q, 1000, &body), 429);
    vs_free(body);
    assert_int_equal(get(a, "/t/lookup_account.php", q, 1002, &body), 200);
    assert_non_null(strstr(body, "<authenticator>"));
    vs_free(body);
    /* Not an account path: the next handler's (none here: 404). */
    assert_int_equal(get(a, "/t/nothing.php", "", 1002, &body), 404);
    vs_free(body);
    vs_acct_destroy(a);
    pf_destroy(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_form_get),
        cmocka_unit_test(test_session_subject),
        cmocka_unit_test(test_store_accounts_ops),
        cmocka_unit_test(test_acct_rpcs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
