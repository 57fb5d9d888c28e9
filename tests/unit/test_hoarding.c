/*
 * The protective defaults (docs/security.md) through the real scheduler
 * handler on a real SQLite file, with the configuration a new project gets
 * (vs_project_config_defaults):
 *   - one account claiming 10^6 CPUs, 10^18 FLOPS and 10^12 s of work from
 *     30 made-up host ids, then coming back on the hosts it was given,
 *     holds a bounded share (at most max_new_hosts_per_day hosts, each at
 *     its in-progress cap), and an honest user still gets work;
 *   - a host that only returns errors is throttled, day after day, down to
 *     one job a day (daily_result_quota, BOINC issue #3061).
 */
#include "vs_test.h"

#include "project_fixture.h"
#include "volsched/sched.h"

#define NOW 1800000000

struct env {
    struct project_fixture *f;
    struct vs_sched *s;
};

static struct env *make_env(int njobs)
{
    struct env *e = VS_NEW(struct env);
    e->f = pf_create();
    pf_add_jobs(e->f, "job", njobs, 1, 1e10);
    assert_int_equal(vs_sched_create(&e->f->cfg, NULL, NULL, &e->s), 0);
    size_t added = 0;
    assert_int_equal(vs_sched_refill(e->s, &added), 0);
    return e;
}

static void free_env(struct env *e)
{
    vs_sched_destroy(e->s);
    pf_destroy(e->f);
    vs_free(e);
}

static char *add_user(struct env *e, const char *name)
{
    struct vs_user u;
    memset(&u, 0, sizeof(u));
    assert_int_equal(vs_strlcpy(u.name, name, sizeof(u.name)), 0);
    assert_int_equal(vs_store_user_add(e->f->s, &u), 0);
    char *auth = vs_xstrdup(u.authenticator);
    vs_user_cleanup(&u);
    return auth;
}

/* One request; reports (names, as compute errors) go first. Returns the
 * reply; *out_hostid gets the host id the reply names (or hostid). */
static char *rpc(struct env *e, const char *auth, int64_t hostid, int64_t seqno, bool hostile,
                 const char *const *errs, size_t nerrs, int64_t now, int64_t *out_hostid)
{
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    assert_int_equal(
        vs_buf_printf(&b,
                      "<scheduler_request>\n<authenticator>%s</authenticator>\n"
                      "<hostid>%lld</hostid>\n<rpc_seqno>%lld</rpc_seqno>\n"
                      "<core_client_major_version>7</core_client_major_version>\n"
                      "<core_client_minor_version>20</core_client_minor_version>\n"
                      "<core_client_release>5</core_client_release>\n"
                      "<platform_name>x86_64-pc-linux-gnu</platform_name>\n"
                      "<work_req_seconds>%s</work_req_seconds>\n<cpu_req_secs>%s</cpu_req_secs>\n"
                      "<host_info>\n<p_ncpus>%s</p_ncpus>\n<p_fpops>%s</p_fpops>\n"
                      "<m_nbytes>1e15</m_nbytes>\n<d_total>1e16</d_total>\n"
                      "<d_free>1e16</d_free>\n</host_info>\n",
                      auth, (long long)hostid, (long long)seqno, hostile ? "1e12" : "100000",
                      hostile ? "1e12" : "100000", hostile ? "1000000" : "2",
                      hostile ? "1e18" : "1e9"),
        0);
    for (size_t i = 0; i < nerrs; i++)
        assert_int_equal(
            vs_buf_printf(&b,
                          "<result>\n<name>%s</name>\n<final_cpu_time>1</final_cpu_time>\n"
                          "<exit_status>-1</exit_status>\n<state>3</state>\n"
                          "<platform>x86_64-pc-linux-gnu</platform>\n"
                          "<version_num>101</version_num>\n</result>\n",
                          errs[i]),
            0);
    assert_int_equal(vs_buf_puts(&b, "<other_results>\n</other_results>\n</scheduler_request>\n"),
                     0);
    struct vs_buf out;
    vs_buf_init(&out, 16u << 20);
    assert_int_equal(vs_sched_handle(e->s, b.data, b.len, "127.0.0.1", now, &out), 200);
    vs_buf_cleanup(&b);
    size_t added = 0;
    assert_int_equal(vs_sched_refill(e->s, &added), 0);
    const char *h = strstr(out.data, "<hostid>");
    if (out_hostid)
        *out_hostid = h ? strtoll(h + 8, NULL, 10) : hostid;
    return vs_buf_take(&out, NULL);
}

/* The names of the reply's results (pointers into reply, NUL-cut). */
static size_t result_names(char *reply, const char **names, size_t max)
{
    size_t n = 0;
    for (char *p = reply; n < max && (p = strstr(p, "<result>\n    <name>")) != NULL;) {
        p += strlen("<result>\n    <name>");
        char *end = strchr(p, '<');
        assert_non_null(end);
        *end = '\0';
        names[n++] = p;
        p = end + 1;
    }
    return n;
}

static void test_hoarding_account(void **state)
{
    (void)state;
    enum { NJOBS = 1500 };
    struct env *e = make_env(NJOBS);
    char *mallory = add_user(e, "mallory");
    int64_t mid = pf_sql(e->f, "SELECT id FROM \"user\" WHERE name = 'mallory'");
    int64_t hosts[30];
    int nhosts = 0;
    int64_t t = NOW;
    for (int i = 0; i < 30; i++) {
        int64_t h = 0;
        char *reply = rpc(e, mallory, 900001 + i, 5, true, NULL, 0, t++, &h);
        if (strstr(reply, "<hostid>"))
            hosts[nhosts++] = h;
        vs_free(reply);
    }
    /* Back on every host it was given, three times. */
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < nhosts; i++)
            vs_free(rpc(e, mallory, hosts[i], 6 + round, true, NULL, 0, t++, NULL));
    char sql[256];
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM result WHERE userid = %lld AND server_state = 4",
             (long long)mid);
    int64_t held = pf_sql(e->f, sql);
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM host WHERE userid = %lld", (long long)mid);
    int64_t nh = pf_sql(e->f, sql);
    snprintf(sql, sizeof(sql),
             "SELECT max(c) FROM (SELECT count(*) c FROM result WHERE userid = %lld "
             "AND server_state = 4 GROUP BY hostid) AS per_host",
             (long long)mid);
    int64_t most = pf_sql(e->f, sql);
    print_message("hoarder: %lld hosts, %lld of %d jobs, at most %lld on one host\n", (long long)nh,
                  (long long)held, NJOBS, (long long)most);
    const struct vs_sp_config *p = &e->f->cfg.policy;
    assert_true(nh <= p->max_new_hosts_per_day);
    assert_true(most <= (int64_t)p->host_in_progress_per_cpu * p->max_ncpus);
    assert_true(held <= nh * p->host_in_progress_per_cpu * p->max_ncpus);
    assert_true(held < NJOBS);

    /* The honest volunteer, a 2-CPU computer, still gets work. */
    struct vs_user u;
    assert_int_equal(vs_store_user_by_name(e->f->s, "alice", &u), 0);
    char *reply = rpc(e, u.authenticator, 0, 0, false, NULL, 0, t++, NULL);
    vs_user_cleanup(&u);
    const char *names[64];
    size_t got = result_names(reply, names, 64);
    print_message("honest volunteer: %zu jobs\n", got);
    assert_true(got > 0);
    vs_free(reply);
    vs_free(mallory);
    free_env(e);
}

static void test_error_host_throttled(void **state)
{
    (void)state;
    struct env *e = make_env(300);
    struct vs_user u;
    assert_int_equal(vs_store_user_by_name(e->f->s, "alice", &u), 0);
    int64_t hostid = 0, seq = 0;
    const char *held[64];
    size_t nheld = 0;
    char *prev = NULL;
    int per_day[8] = {0};
    for (int day = 0; day < 8; day++) {
        int64_t t = NOW + (int64_t)day * 86400;
        for (int k = 0; k < 200; k++) {
            /* Report what it holds as errors, ask for more. */
            char *reply =
                rpc(e, u.authenticator, hostid, seq++, false, held, nheld, t + k, &hostid);
            vs_free(prev);
            prev = reply;
            nheld = result_names(reply, held, 64);
            per_day[day] += (int)nheld;
            if (nheld == 0)
                break;
        }
    }
    vs_free(prev);
    vs_user_cleanup(&u);
    print_message("jobs a day to a host that only errs: %d %d %d %d %d %d %d %d\n", per_day[0],
                  per_day[1], per_day[2], per_day[3], per_day[4], per_day[5], per_day[6],
                  per_day[7]);
    /* Bounded on the first day (quota x CPUs), falling, then one a day. */
    assert_true(per_day[0] <= e->f->cfg.policy.daily_result_quota * 2);
    for (int d = 1; d < 8; d++)
        assert_true(per_day[d] <= per_day[d - 1]);
    assert_int_equal(per_day[4], 1);
    assert_int_equal(per_day[6], 1);
    assert_int_equal(per_day[7], 1);
    free_env(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hoarding_account),
        cmocka_unit_test(test_error_host_throttled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
