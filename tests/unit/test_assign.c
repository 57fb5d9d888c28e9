/*
 * Assigned work end to end without HTTP (seed 003): jobs made with the real
 * create_work into a real project and store, requests through the real
 * scheduler handler, reports through the store, and the real transitioner,
 * validator and assimilator. Targeted jobs (host, user, team) with success,
 * error then retry, and timeout; broadcast jobs (all, user, team) with late
 * joiners and no retry; the usual rules for assigned work; many
 * simultaneous requests of one user's hosts (BOINC's #1937); priority order.
 */
#include "vs_test.h"

#include <pthread.h>

#include "daemon_fixture.h"
#include "volsched/create_work.h"
#include "volsched/proto.h"
#include "volsched/sched.h"

struct afx {
    struct project_fixture *f;
    struct vs_sched *s;
    int64_t bob, carol; /* bob is in team1 with alice; carol has no team */
    char auth[3][VS_AUTH_MAX];
    int ninputs;
};

static void add_user(struct afx *x, const char *name, int64_t teamid, int64_t *out_id, char *auth)
{
    struct vs_user u;
    memset(&u, 0, sizeof(u));
    assert_int_equal(vs_strlcpy(u.name, name, sizeof(u.name)), 0);
    u.teamid = teamid;
    assert_int_equal(vs_store_user_add(x->f->s, &u), 0);
    *out_id = u.id;
    memcpy(auth, u.authenticator, VS_AUTH_MAX);
    vs_user_cleanup(&u);
}

static void start(struct afx *x)
{
    if (x->s)
        vs_sched_destroy(x->s);
    assert_int_equal(vs_sched_create(&x->f->cfg, NULL, NULL, &x->s), 0);
    assert_int_equal(vs_sched_refill(x->s, NULL), 0);
}

static int setup(void **state)
{
    struct afx *x = VS_NEW(struct afx);
    x->f = pf_create();
    x->f->cfg.enable_assignment = true;
    x->f->cfg.enable_assignment_multi = true;
    x->f->cfg.policy.max_new_hosts_per_day = 0; /* the tests make many hosts per user */
    struct vs_user u;
    memset(&u, 0, sizeof(u));
    assert_int_equal(vs_store_user_get(x->f->s, x->f->userid, &u), 0);
    memcpy(x->auth[0], u.authenticator, VS_AUTH_MAX);
    vs_user_cleanup(&u);
    add_user(x, "bob", x->f->teamid, &x->bob, x->auth[1]);
    add_user(x, "carol", 0, &x->carol, x->auth[2]);
    start(x);
    *state = x;
    return 0;
}

static int teardown(void **state)
{
    struct afx *x = *state;
    vs_sched_destroy(x->s);
    pf_destroy(x->f);
    vs_free(x);
    return 0;
}

struct reply {
    int64_t hostid;
    int nresults;
    char names[8][VS_NAME_MAX];
    char msgs[1024];
};

static char *request_text(const char *auth, int64_t hostid, double mem)
{
    char *buf = vs_xmalloc(4096);
    snprintf(buf, 4096,
             "<scheduler_request>\n<authenticator>%s</authenticator>\n"
             "<hostid>%lld</hostid>\n<rpc_seqno>1</rpc_seqno>\n"
             "<core_client_major_version>7</core_client_major_version>\n"
             "<core_client_minor_version>20</core_client_minor_version>\n"
             "<core_client_release>5</core_client_release>\n"
             "<work_req_seconds>1</work_req_seconds>\n<cpu_req_secs>1</cpu_req_secs>\n"
             "<platform_name>x86_64-pc-linux-gnu</platform_name>\n"
             "<host_info>\n<host_cpid>cpid%s%lld</host_cpid>\n<p_ncpus>1</p_ncpus>\n"
             "<p_fpops>1e9</p_fpops>\n<m_nbytes>%g</m_nbytes>\n<d_total>1e11</d_total>\n"
             "<d_free>5e10</d_free>\n</host_info>\n</scheduler_request>\n",
             auth, (long long)hostid, auth, (long long)hostid, mem);
    return buf;
}

/* One scheduler request of user `who` (0 alice, 1 bob, 2 carol) from host
 * hostid (0: a new host) at time now. */
static void rpc_mem(struct afx *x, int who, int64_t hostid, int64_t now, double mem,
                    struct reply *out)
{
    char *body = request_text(x->auth[who], hostid, mem);
    struct vs_buf b;
    vs_buf_init(&b, 1u << 20);
    assert_int_equal(vs_sched_handle(x->s, body, strlen(body), "127.0.0.1", now, &b), 200);
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    struct vs_proto_error err = {0};
    if (vs_proto_reply_parse(b.data, b.len, &a, &r, &err) != 0)
        fail_msg("reply does not parse: %s\n%s", err.msg, b.data);
    memset(out, 0, sizeof(*out));
    out->hostid = r.hostid ? r.hostid : hostid;
    for (size_t i = 0; i < r.n_results && i < 8; i++)
        snprintf(out->names[out->nresults++], VS_NAME_MAX, "%s", r.results[i].name);
    for (size_t i = 0; i < r.n_messages; i++) {
        size_t l = strlen(out->msgs);
        snprintf(out->msgs + l, sizeof(out->msgs) - l, "%s|", r.messages[i].text);
    }
    vs_arena_cleanup(&a);
    vs_buf_cleanup(&b);
    vs_free(body);
}

static void rpc(struct afx *x, int who, int64_t hostid, int64_t now, struct reply *out)
{
    rpc_mem(x, who, hostid, now, 8e9, out);
}

static int64_t new_host(struct afx *x, int who, int64_t now)
{
    struct reply r;
    rpc(x, who, 0, now, &r);
    assert_true(r.hostid > 0);
    return r.hostid;
}

/* Creates one job with the given assignment flags; returns its name. */
static void job(struct afx *x, const char *name, struct vs_cw_params *p, struct vs_cw_job *j)
{
    char in[VS_PATH_MAX];
    snprintf(in, sizeof(in), "%s/in_%d", x->f->dir, x->ninputs++);
    df_write_abs(in, name);
    const char *inputs[1] = {in};
    p->appname = "app";
    j->wu_name = name;
    j->inputs = inputs;
    j->ninputs = 1;
    struct vs_cw_created *cr = NULL;
    char err[256];
    int rc = vs_create_work(&x->f->cfg, x->f->s, p, j, 1, NOW, NULL, &cr, err, sizeof(err));
    if (rc)
        fail_msg("create_work %s: %s", name, err);
    vs_free(cr);
}

static void plain_job(struct afx *x, const char *name, int priority)
{
    struct vs_cw_params p = {0};
    struct vs_cw_job j = {0};
    p.priority.set = true;
    p.priority.v = priority;
    job(x, name, &p, &j);
}

/* A targeted job: type 1 host, 2 user, 3 team; retries allowed. */
static void targeted(struct afx *x, const char *name, int type, int64_t id, int nresults)
{
    struct vs_cw_params p = {0};
    struct vs_cw_job j = {0};
    if (type == 1)
        p.target_host = id;
    else if (type == 2)
        p.target_user = id;
    else
        p.target_team = id;
    p.target_nresults = (struct vs_cw_opt){true, nresults};
    p.min_quorum = (struct vs_cw_opt){true, 1};
    p.max_error_results = (struct vs_cw_opt){true, 3};
    p.max_total_results = (struct vs_cw_opt){true, 6};
    p.max_success_results = (struct vs_cw_opt){true, nresults};
    job(x, name, &p, &j);
}

static void broadcast(struct afx *x, const char *name, int type, int64_t id)
{
    struct vs_cw_params p = {0};
    struct vs_cw_job j = {0};
    p.broadcast_all = type == 0;
    if (type == 2)
        p.broadcast_user = id;
    else if (type == 3)
        p.broadcast_team = id;
    job(x, name, &p, &j);
}

static int64_t nresults_of(struct afx *x, const char *wu)
{
    char sql[256];
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM result r JOIN workunit w ON w.id = r.workunitid "
             "WHERE w.name = '%s'",
             wu);
    return pf_sql(x->f, sql);
}

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void test_targeted_host(void **state)
{
    struct afx *x = *state;
    int64_t h1 = new_host(x, 0, NOW), h2 = new_host(x, 0, NOW);
    plain_job(x, "plain", 0);
    targeted(x, "th", 1, h1, 1);
    assert_int_equal(df_w(x->f, "th", "transitioner_flags"), VS_TRANSITION_NO_NEW_RESULTS);
    df_trans(x->f, NOW);
    assert_int_equal(nresults_of(x, "th"), 0); /* none until its host asks */
    assert_int_equal(vs_sched_refill(x->s, NULL), 0);
    struct reply r;
    /* Another host of the same user gets the ordinary job only. */
    rpc(x, 0, h2, NOW + 1, &r);
    assert_int_equal(r.nresults, 1);
    assert_true(starts(r.names[0], "plain"));
    /* The target host gets its job, before any other work. */
    plain_job(x, "plain2", 0);
    df_trans(x->f, NOW + 1);
    assert_int_equal(vs_sched_refill(x->s, NULL), 0);
    rpc(x, 0, h1, NOW + 2, &r);
    assert_int_equal(r.nresults, 1);
    assert_string_equal(r.names[0], "th_0");
    assert_int_equal(df_r(x->f, "th_0", "hostid"), h1);
    assert_int_equal(df_r(x->f, "th_0", "server_state"), VS_RESULT_SERVER_STATE_IN_PROGRESS);
    /* It errors: after the transitioner, the same host (its set) retries. */
    df_report(x->f, "th_0", h1, NOW + 3, NULL);
    rpc(x, 0, h1, NOW + 3, &r); /* the transitioner has not looked yet */
    assert_int_equal(nresults_of(x, "th"), 1);
    df_trans(x->f, NOW + 4);
    rpc(x, 0, h1, NOW + 5, &r);
    assert_true(r.nresults >= 1);
    assert_string_equal(r.names[0], "th_1");
    /* Success: validated and assimilated as usual. */
    df_report(x->f, "th_1", h1, NOW + 6, "ok");
    assert_true(vs_daemons_run_once(x->f->s, &x->f->cfg, NOW + 7, VS_DAEMON_ALL, NULL, NULL) > 0);
    assert_true(df_w(x->f, "th", "canonical_resultid") > 0);
    assert_int_equal(df_w(x->f, "th", "assimilate_state"), VS_ASSIMILATE_DONE);
    rpc(x, 0, h1, NOW + 8, &r);
    assert_int_equal(nresults_of(x, "th"), 2);
}

static void test_targeted_user_retry_elsewhere(void **state)
{
    struct afx *x = *state;
    int64_t a1 = new_host(x, 0, NOW), a2 = new_host(x, 0, NOW), c1 = new_host(x, 2, NOW);
    targeted(x, "tu", 2, x->f->userid, 1);
    struct reply r;
    rpc(x, 2, c1, NOW + 1, &r); /* carol is not alice */
    assert_int_equal(r.nresults, 0);
    rpc(x, 0, a1, NOW + 1, &r);
    assert_int_equal(r.nresults, 1);
    assert_string_equal(r.names[0], "tu_0");
    rpc(x, 0, a2, NOW + 1, &r); /* one instance is enough */
    assert_int_equal(r.nresults, 0);
    df_report(x->f, "tu_0", a1, NOW + 2, NULL);
    df_trans(x->f, NOW + 3);
    rpc(x, 0, a1, NOW + 4, &r); /* the host that failed leaves it to another */
    assert_int_equal(r.nresults, 0);
    rpc(x, 0, a2, NOW + 4, &r);
    assert_int_equal(r.nresults, 1);
    assert_string_equal(r.names[0], "tu_1");
    /* Timeout: the deadline passes, the transitioner times it out, and
     * another host of the set gets a new instance. */
    int64_t late = df_r(x->f, "tu_1", "report_deadline") + 1;
    df_trans(x->f, late);
    assert_int_equal(df_r(x->f, "tu_1", "outcome"), VS_RESULT_OUTCOME_NO_REPLY);
    int64_t a3 = new_host(x, 0, late + 1);
    (void)a3;
    assert_int_equal(nresults_of(x, "tu"), 3); /* the new host got tu_2 at once */
    assert_int_equal(df_r(x->f, "tu_2", "hostid"), a3);
    /* The timed-out instance reports late with success: accepted (it gave
     * up its slot), and the workunit completes. */
    df_report(x->f, "tu_2", a3, late + 2, "ok");
    assert_true(vs_daemons_run_once(x->f->s, &x->f->cfg, late + 3, VS_DAEMON_ALL, NULL, NULL) > 0);
    assert_int_equal(df_w(x->f, "tu", "assimilate_state"), VS_ASSIMILATE_DONE);
}

static void test_targeted_team(void **state)
{
    struct afx *x = *state;
    int64_t c1 = new_host(x, 2, NOW), b1 = new_host(x, 1, NOW);
    targeted(x, "tt", 3, x->f->teamid, 2); /* two instances, within the team */
    struct reply r;
    rpc(x, 2, c1, NOW + 1, &r);
    assert_int_equal(r.nresults, 0);
    rpc(x, 1, b1, NOW + 1, &r);
    assert_int_equal(r.nresults, 1);
    rpc(x, 1, b1, NOW + 2, &r); /* never two on one host */
    assert_int_equal(r.nresults, 0);
    int64_t a1 = new_host(x, 0, NOW + 3); /* alice, a team member */
    (void)a1;
    assert_int_equal(nresults_of(x, "tt"), 2);
    int64_t a2 = new_host(x, 0, NOW + 4);
    assert_int_equal(nresults_of(x, "tt"), 2); /* target_nresults reached */
    /* Bob's instance errs: another member's host (not bob's, not one that
     * holds one) retries it. */
    assert_int_equal(df_r(x->f, "tt_0", "hostid"), b1);
    df_report(x->f, "tt_0", b1, NOW + 5, NULL);
    df_trans(x->f, NOW + 6);
    rpc(x, 1, b1, NOW + 7, &r);
    assert_int_equal(r.nresults, 0);
    rpc(x, 0, a2, NOW + 7, &r);
    assert_int_equal(r.nresults, 1);
    assert_string_equal(r.names[0], "tt_2");
    /* Timeout of alice's first instance: a new member's host takes it. */
    int64_t late = df_r(x->f, "tt_1", "report_deadline") + 1;
    df_trans(x->f, late);
    assert_int_equal(df_r(x->f, "tt_1", "outcome"), VS_RESULT_OUTCOME_NO_REPLY);
    int64_t dave;
    add_user(x, "dave", x->f->teamid, &dave, x->auth[2]);
    new_host(x, 2, late + 1);
    assert_int_equal(nresults_of(x, "tt"), 4);
    /* Both live instances succeed: validated (quorum 1) and assimilated. */
    df_report(x->f, "tt_2", a2, late + 2, "ok");
    df_report(x->f, "tt_3", df_r(x->f, "tt_3", "hostid"), late + 2, "ok");
    assert_true(vs_daemons_run_once(x->f->s, &x->f->cfg, late + 3, VS_DAEMON_ALL, NULL, NULL) > 0);
    assert_int_equal(df_w(x->f, "tt", "assimilate_state"), VS_ASSIMILATE_DONE);
}

static void test_targeted_host_timeout(void **state)
{
    struct afx *x = *state;
    int64_t h = new_host(x, 2, NOW);
    targeted(x, "tht", 1, h, 1);
    struct reply r;
    rpc(x, 2, h, NOW + 1, &r);
    assert_int_equal(r.nresults, 1);
    int64_t late = df_r(x->f, "tht_0", "report_deadline") + 1;
    rpc(x, 2, h, late - 10, &r); /* still out: nothing new */
    assert_int_equal(nresults_of(x, "tht"), 1);
    df_trans(x->f, late);
    rpc(x, 2, h, late + 1, &r); /* timed out: its host gets a new instance */
    assert_int_equal(r.nresults, 1);
    assert_string_equal(r.names[0], "tht_1");
}

static void test_targeted_rules_apply(void **state)
{
    struct afx *x = *state;
    int64_t h = new_host(x, 2, NOW);
    struct vs_cw_params p = {0};
    struct vs_cw_job j = {0};
    p.target_host = h;
    p.rsc_memory_bound = (struct vs_cw_opt){true, 4e9};
    job(x, "big", &p, &j);
    struct reply r;
    rpc_mem(x, 2, h, NOW + 1, 1e9, &r); /* 1 GB of RAM: told why */
    assert_int_equal(r.nresults, 0);
    assert_non_null(strstr(r.msgs, "Job big was assigned to this computer but not sent"));
    if (!strstr(r.msgs, "RAM"))
        fail_msg("messages: %s", r.msgs);
    assert_int_equal(nresults_of(x, "big"), 0);
    rpc_mem(x, 2, h, NOW + 2, 8e9, &r);
    assert_int_equal(r.nresults, 1);
}

static void test_broadcast(void **state)
{
    struct afx *x = *state;
    int64_t a1 = new_host(x, 0, NOW), b1 = new_host(x, 1, NOW), c1 = new_host(x, 2, NOW);
    broadcast(x, "ball", 0, 0);
    broadcast(x, "buser", 2, x->carol);
    broadcast(x, "bteam", 3, x->f->teamid);
    assert_int_equal(df_w(x->f, "ball", "transitioner_flags"), VS_TRANSITION_NONE);
    struct reply r;
    int got[3] = {0};
    int64_t hosts[3] = {a1, b1, c1};
    for (int round = 0; round < 3; round++) {
        for (int who = 0; who < 3; who++) {
            rpc(x, who, hosts[who], NOW + 1 + round, &r);
            got[who] += r.nresults;
            if (getenv("VS_DEBUG"))
                fprintf(stderr, "round %d who %d: %d %s | %s\n", round, who, r.nresults,
                        r.nresults ? r.names[0] : "", r.msgs);
        }
    }
    /* all: everyone once; user carol: carol; team: alice and bob. */
    assert_int_equal(got[0], 2);
    assert_int_equal(got[1], 2);
    assert_int_equal(got[2], 2);
    assert_int_equal(nresults_of(x, "ball"), 3);
    assert_int_equal(nresults_of(x, "buser"), 1);
    assert_int_equal(nresults_of(x, "bteam"), 2);
    /* Late joiners: a new host of carol, and a new team member's host. */
    int64_t c2 = new_host(x, 2, NOW + 10); /* one job per request here */
    rpc(x, 2, c2, NOW + 10, &r);
    assert_int_equal(nresults_of(x, "ball"), 4);
    assert_int_equal(nresults_of(x, "buser"), 2);
    int64_t dave;
    add_user(x, "dave", x->f->teamid, &dave, x->auth[2]); /* who 2 is dave now */
    int64_t d1 = new_host(x, 2, NOW + 11);
    rpc(x, 2, d1, NOW + 12, &r);
    rpc(x, 2, d1, NOW + 13, &r);
    assert_int_equal(nresults_of(x, "ball"), 5);
    assert_int_equal(nresults_of(x, "bteam"), 3);
    assert_int_equal(nresults_of(x, "buser"), 2); /* not dave's */
    /* A failure is not retried; success skips validation and assimilation
     * and is listed for the operator's own daemon. */
    char name[VS_NAME_MAX];
    snprintf(name, sizeof(name), "ball_0");
    int64_t h0 = df_r(x->f, name, "hostid");
    df_report(x->f, "ball_0", h0, NOW + 20, NULL);
    df_report(x->f, "ball_1", df_r(x->f, "ball_1", "hostid"), NOW + 20, "ok");
    vs_daemons_run_once(x->f->s, &x->f->cfg, NOW + 21, VS_DAEMON_ALL, NULL, NULL);
    assert_int_equal(df_w(x->f, "ball", "need_validate"), 0);
    assert_int_equal(df_w(x->f, "ball", "assimilate_state"), 0);
    assert_int_equal(df_r(x->f, "ball_1", "validate_state"), 0);
    int64_t before = nresults_of(x, "ball");
    for (int who = 0; who < 2; who++)
        rpc(x, who, hosts[who], NOW + 22, &r);
    assert_int_equal(nresults_of(x, "ball"), before);
    struct vs_assignment_counts ac;
    assert_int_equal(vs_store_assignment_counts(x->f->s, &ac), 0);
    assert_int_equal(ac.n[VS_ASSIGN_NONE][1], 1);
    assert_int_equal(ac.n[VS_ASSIGN_USER][1], 1);
    assert_int_equal(ac.n[VS_ASSIGN_TEAM][1], 1);
}

static int count_result(void *ctx, const struct vs_result *r)
{
    (void)r;
    (*(int *)ctx)++;
    return 0;
}

static void test_broadcast_results_listed(void **state)
{
    struct afx *x = *state;
    int64_t a1 = new_host(x, 0, NOW);
    broadcast(x, "bl", 0, 0);
    struct reply r;
    rpc(x, 0, a1, NOW + 1, &r);
    assert_int_equal(r.nresults, 1);
    df_report(x->f, "bl_0", a1, NOW + 2, "ok");
    int n = 0;
    assert_int_equal(vs_store_broadcast_results(x->f->s, 0, 10, count_result, &n), 0);
    assert_int_equal(n, 1);
}

/* ---- many simultaneous requests of one user's hosts (BOINC's #1937) ---- */

#define NCONC 16

struct conc {
    struct afx *x;
    int64_t hostid;
    pthread_barrier_t *bar;
    int got;
};

static void *conc_main(void *arg)
{
    struct conc *c = arg;
    char *body = request_text(c->x->auth[0], c->hostid, 8e9);
    struct vs_buf b;
    vs_buf_init(&b, 1u << 20);
    pthread_barrier_wait(c->bar);
    int st = vs_sched_handle(c->x->s, body, strlen(body), "127.0.0.1", NOW + 5, &b);
    if (st == 200) {
        for (const char *p = b.data; (p = strstr(p, "<result>")) != NULL; p++)
            c->got++;
    }
    vs_buf_cleanup(&b);
    vs_free(body);
    return NULL;
}

static void test_concurrent_targeted(void **state)
{
    struct afx *x = *state;
    struct conc c[NCONC];
    for (int i = 0; i < NCONC; i++) {
        c[i].x = x;
        c[i].hostid = new_host(x, 0, NOW);
        c[i].got = 0;
    }
    targeted(x, "race1", 2, x->f->userid, 1);
    targeted(x, "race3", 2, x->f->userid, 3);
    for (int round = 0; round < 3; round++) {
        pthread_barrier_t bar;
        pthread_barrier_init(&bar, NULL, NCONC);
        pthread_t th[NCONC];
        for (int i = 0; i < NCONC; i++) {
            c[i].bar = &bar;
            pthread_create(&th[i], NULL, conc_main, &c[i]);
        }
        for (int i = 0; i < NCONC; i++)
            pthread_join(th[i], NULL);
        pthread_barrier_destroy(&bar);
    }
    int total = 0;
    for (int i = 0; i < NCONC; i++)
        total += c[i].got;
    /* Never more instances than target_nresults, each sent exactly once. */
    assert_int_equal(nresults_of(x, "race1"), 1);
    assert_int_equal(nresults_of(x, "race3"), 3);
    assert_int_equal(total, 4);
    assert_int_equal(pf_sql(x->f, "SELECT count(*) FROM result WHERE server_state = 4"), 4);
    assert_int_equal(pf_sql(x->f, "SELECT count(DISTINCT hostid) FROM result r JOIN workunit w "
                                  "ON w.id = r.workunitid WHERE w.name = 'race3'"),
                     3);
    /* By construction: a second live instance in a held slot, or a second
     * broadcast instance for one host, is refused by the store itself. */
    struct vs_result dup;
    memset(&dup, 0, sizeof(dup));
    snprintf(dup.name, sizeof(dup.name), "race1_dup");
    dup.workunitid = df_w(x->f, "race1", "id");
    dup.appid = x->f->appid;
    dup.server_state = VS_RESULT_SERVER_STATE_UNSENT;
    dup.assign_slot = 1;
    dup.xml_doc_in = vs_xstrdup("<result/>");
    assert_int_equal(vs_store_result_add(x->f->s, &dup), VS_EEXISTS);
    dup.server_state = VS_RESULT_SERVER_STATE_OVER;
    dup.outcome = VS_RESULT_OUTCOME_CLIENT_ERROR;
    dup.assign_slot = 1; /* a failed instance holds no slot */
    assert_int_equal(vs_store_result_add(x->f->s, &dup), 0);
    vs_result_cleanup(&dup);
}

/* ---- priority: a job submitted at a higher priority goes first ---- */

static void test_priority_order(void **state)
{
    struct afx *x = *state;
    int64_t h = new_host(x, 2, NOW);
    for (int i = 0; i < 5; i++) {
        char n[32];
        snprintf(n, sizeof(n), "old%d", i);
        plain_job(x, n, 0);
    }
    df_trans(x->f, NOW);
    assert_int_equal(vs_sched_refill(x->s, NULL), 0);
    plain_job(x, "urgent", 10);
    plain_job(x, "lowly", -5);
    df_trans(x->f, NOW);
    assert_int_equal(vs_sched_refill(x->s, NULL), 0);
    struct reply r;
    rpc(x, 2, h, NOW + 1, &r);
    assert_int_equal(r.nresults, 1);
    assert_string_equal(r.names[0], "urgent_0");
    rpc(x, 2, h, NOW + 2, &r);
    assert_string_equal(r.names[0], "old0_0");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_targeted_host, setup, teardown),
        cmocka_unit_test_setup_teardown(test_targeted_user_retry_elsewhere, setup, teardown),
        cmocka_unit_test_setup_teardown(test_targeted_team, setup, teardown),
        cmocka_unit_test_setup_teardown(test_targeted_host_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_targeted_rules_apply, setup, teardown),
        cmocka_unit_test_setup_teardown(test_broadcast, setup, teardown),
        cmocka_unit_test_setup_teardown(test_broadcast_results_listed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_targeted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_priority_order, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
