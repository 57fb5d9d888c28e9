/*
 * resend_lost_results (the repair for replies lost with their jobs), through the real
 * scheduler handler on a real SQLite file: a host gets jobs, loses the
 * reply, and asks again listing none of them in <other_results>. With the
 * option it gets them back (new deadline, the same result names); a job
 * that can no longer finish in time is expired so the transitioner
 * replaces it now; without the option nothing changes.
 */
#include "vs_test.h"

#include "project_fixture.h"
#include "sched_request.h"
#include "volsched/sched.h"

#define NOW 1800000000
#define NWU 3

struct env {
    struct project_fixture *f;
    struct vs_sched *s;
    char auth[VS_AUTH_MAX];
};

static struct env *make_env(bool resend)
{
    struct env *e = VS_NEW(struct env);
    e->f = pf_create();
    struct vs_user u;
    assert_int_equal(vs_store_user_by_name(e->f->s, "alice", &u), 0);
    memcpy(e->auth, u.authenticator, sizeof(e->auth));
    vs_user_cleanup(&u);
    pf_add_jobs(e->f, "lost", NWU, 1, 1e10);
    e->f->cfg.resend_lost_results = resend;
    assert_int_equal(vs_sched_create(&e->f->cfg, NULL, NULL, &e->s), 0);
    size_t added = 0;
    assert_int_equal(vs_sched_refill(e->s, &added), 0);
    assert_int_equal(added, NWU);
    return e;
}

static void free_env(struct env *e)
{
    vs_sched_destroy(e->s);
    pf_destroy(e->f);
    vs_free(e);
}

static char *rpc(struct env *e, const char *req, int64_t now)
{
    struct vs_buf out;
    vs_buf_init(&out, 16u << 20);
    assert_int_equal(vs_sched_handle(e->s, req, strlen(req), "127.0.0.1", now, &out), 200);
    return vs_buf_take(&out, NULL);
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p++)
        n++;
    return n;
}

/* The first RPC: all NWU jobs to a new host; returns its id. */
static int64_t first_rpc(struct env *e)
{
    char *req = sr_request(e->auth, "100000.000000", "2");
    char *reply = rpc(e, req, NOW);
    assert_int_equal(count(reply, "<result>"), NWU);
    const char *h = strstr(reply, "<hostid>");
    assert_non_null(h);
    int64_t hostid = strtoll(h + 8, NULL, 10);
    vs_free(req);
    vs_free(reply);
    return hostid;
}

/* The host again, an hour later, holding nothing and asking for nothing. */
static char *second_rpc(struct env *e, int64_t hostid)
{
    char *req = sr_request(e->auth, "0.000000", "2");
    char buf[64];
    snprintf(buf, sizeof(buf), "<hostid>%lld</hostid>", (long long)hostid);
    req = sr_replace(req, "<hostid>0</hostid>", buf);
    req = sr_replace(req, "<rpc_seqno>0</rpc_seqno>", "<rpc_seqno>1</rpc_seqno>");
    req = sr_replace(req, "<work_req_seconds>1.000000</work_req_seconds>",
                     "<work_req_seconds>0.000000</work_req_seconds>");
    char *reply = rpc(e, req, NOW + 3600);
    vs_free(req);
    return reply;
}

static void test_lost_reply_resent(void **state)
{
    (void)state;
    struct env *e = make_env(true);
    int64_t hostid = first_rpc(e);
    /* The reply was lost: the host lists none of the three. */
    char *reply = second_rpc(e, hostid);
    assert_int_equal(count(reply, "<result>"), NWU);
    for (int i = 0; i < NWU; i++) {
        char name[64];
        snprintf(name, sizeof(name), "<name>lost_%d_0</name>", i);
        assert_non_null(strstr(reply, name));
    }
    assert_int_equal(count(reply, "Resent lost task"), NWU);
    /* The store agrees: still this host's, sent again, deadline moved to
     * the resend (half the window from now, but never earlier than the old
     * deadline: here the old one; stored with report_grace_period). */
    char sql[256];
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM result WHERE hostid = %lld AND server_state = %d AND "
             "sent_time = %d AND report_deadline = %d",
             (long long)hostid, VS_RESULT_SERVER_STATE_IN_PROGRESS, NOW + 3600,
             NOW + 7 * 86400 + e->f->cfg.report_grace_period);
    assert_int_equal(pf_sql(e->f, sql), NWU);
    vs_free(reply);
    free_env(e);
}

static void test_lost_and_late_expired(void **state)
{
    (void)state;
    struct env *e = make_env(true);
    int64_t hostid = first_rpc(e);
    /* One job is now far too long for what is left of its window. */
    pf_exec(e->f, "UPDATE workunit SET rsc_fpops_est = 1e18 WHERE name = 'lost_1'");
    char *reply = second_rpc(e, hostid);
    assert_int_equal(count(reply, "<result>"), NWU - 1);
    assert_null(strstr(reply, "<name>lost_1_0</name>"));
    assert_non_null(strstr(reply, "t resend lost task lost_1_0 (expired)"));
    /* Expired now: the transitioner times it out at its next pass. */
    char sql[256];
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM result r JOIN workunit w ON w.id = r.workunitid WHERE "
             "r.name = 'lost_1_0' AND r.report_deadline = %d AND w.transition_time <= %d",
             NOW + 3600 - 1, NOW + 3600 - 1);
    assert_int_equal(pf_sql(e->f, sql), 1);
    vs_free(reply);
    free_env(e);
}

static void test_off_by_default(void **state)
{
    (void)state;
    struct env *e = make_env(false);
    int64_t hostid = first_rpc(e);
    char *reply = second_rpc(e, hostid);
    assert_int_equal(count(reply, "<result>"), 0);
    assert_null(strstr(reply, "lost task"));
    vs_free(reply);
    free_env(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lost_reply_resent),
        cmocka_unit_test(test_lost_and_late_expired),
        cmocka_unit_test(test_off_by_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
