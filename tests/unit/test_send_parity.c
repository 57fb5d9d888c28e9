/*
 * One policy path (design.md): the same host and queue through the real
 * server's send path (vs_sched_handle on a store, with a BOINC 7.20.5
 * request) and through the host simulator's server (src/sim/sim_server.c,
 * vs_sim__serve), which must send the same jobs and give the same refusal.
 * The project is the simulator's: its server configuration (struct
 * vs_sp_config, as vs_sim__server_init builds it from the scenario) is the
 * real project's policy, and its jobs (CPU hours, delay bound) are the real
 * project's workunits. The host is the scenario's (CPUs, on and active
 * fractions, min_queue) written into the request; its queue is added to
 * the simulated host and listed in the request (<other_results>, and for
 * the EDF check <in_progress_results>). Both scans follow the shared rule
 * (vs_sp_scan_stops): the server's cache may hold anything and goes on past
 * a refusal, the simulator's jobs are all alike and stop at the first; the
 * jobs sent and the refusal must not differ.
 */
#include "vs_test.h"

#include <math.h>

#include "sched_fixture.h"
#include "sim/host_sim.h"
#include "sim_fixture.h"

#define REQ_SECS 100000.0

struct qjob {
    size_t project;   /* the scenario's project index */
    double remaining; /* CPU seconds */
    double deadline;  /* seconds from now */
    char name[32];
};

struct both {
    struct vs_scenario s;
    struct sim x;
    struct fx f;
    int64_t hostid; /* the real server's host, once it made one */
    int seqno;
};

/* The simulator's project 0 and a real project with its policy and nwu of
 * its jobs. */
static void open_both(struct both *b, const char *scenario, int nwu)
{
    memset(b, 0, sizeof(*b));
    simfx_parse(scenario, &b->s);
    vs_sim__init(&b->x, &b->s, VS_CPOLICY_DEFAULT, 30 * 86400, 1, NULL);
    const struct vs_scn_project *sp = &b->s.projects[0];
    struct spec spec = {.nwu = nwu, .fpops = sp->cpu_time * VS_SIM_FLOPS, .delay = sp->delay_bound};
    build(&b->f, &b->x.pj[0].srv.cfg, &spec);
}

static void close_both(struct both *b)
{
    destroy(&b->f);
    vs_sim__cleanup(&b->x);
    vs_scenario_cleanup(&b->s);
}

static void subst(const char **sv, size_t *n, const char *from, const char *to)
{
    sv[(*n)++] = from;
    sv[(*n)++] = to;
}

/* The request the scenario's host sends with this queue: the real side.
 * est_delay is the client's <estimated_delay>. */
static char *real_request(const struct both *b, double est_delay, const struct qjob *q, size_t nq)
{
    const struct vs_scenario *s = &b->s;
    char req[80], cpu[80], delay[80], ncpus[64], on[64], act[64], wbm[80], hid[64], seq[64];
    snprintf(req, sizeof(req), "<work_req_seconds>%f</work_req_seconds>", REQ_SECS);
    snprintf(cpu, sizeof(cpu), "<cpu_req_secs>%f</cpu_req_secs>", REQ_SECS);
    snprintf(delay, sizeof(delay), "<estimated_delay>%.6f</estimated_delay>", est_delay);
    snprintf(ncpus, sizeof(ncpus), "<p_ncpus>%d</p_ncpus>", s->ncpus);
    snprintf(on, sizeof(on), "<on_frac>%f</on_frac>", s->on_frac);
    snprintf(act, sizeof(act), "<active_frac>%f</active_frac>", s->active_frac);
    snprintf(wbm, sizeof(wbm), "<work_buf_min_days>%.9f</work_buf_min_days>", s->min_queue / 86400);
    snprintf(hid, sizeof(hid), "<hostid>%lld</hostid>", (long long)b->hostid);
    snprintf(seq, sizeof(seq), "<rpc_seqno>%d</rpc_seqno>", b->seqno);
    struct vs_buf lists;
    vs_buf_init(&lists, VS_BUF_UNLIMITED);
    assert_int_equal(vs_buf_puts(&lists, "<other_results>\n"), 0);
    for (size_t i = 0; i < nq; i++)
        if (q[i].project == 0)
            assert_int_equal(
                vs_buf_printf(&lists, "<other_result><name>%s</name></other_result>\n", q[i].name),
                0);
    assert_int_equal(vs_buf_puts(&lists, "</other_results>\n"), 0);
    if (b->x.pj[0].srv.cfg.workload_sim) {
        assert_int_equal(vs_buf_puts(&lists, "<in_progress_results>\n"), 0);
        for (size_t i = 0; i < nq; i++)
            assert_int_equal(
                vs_buf_printf(&lists,
                              "<ip_result><name>%s</name><report_deadline>%.3f</report_deadline>"
                              "<time_remaining>%.3f</time_remaining><avg_ncpus>1</avg_ncpus>"
                              "</ip_result>\n",
                              q[i].name, (double)NOW + q[i].deadline, q[i].remaining),
                0);
        assert_int_equal(vs_buf_puts(&lists, "</in_progress_results>\n"), 0);
    }
    const char *sv[32];
    size_t n = 0;
    subst(sv, &n, "<work_req_seconds>1.000000</work_req_seconds>", req);
    subst(sv, &n, "<cpu_req_secs>100000.000000</cpu_req_secs>", cpu);
    subst(sv, &n, "<estimated_delay>0.000000</estimated_delay>", delay);
    subst(sv, &n, "<p_ncpus>2</p_ncpus>", ncpus);
    subst(sv, &n, "<on_frac>1.000000</on_frac>", on);
    subst(sv, &n, "<active_frac>1.000000</active_frac>", act);
    subst(sv, &n, "<work_buf_min_days>0.000000</work_buf_min_days>", wbm);
    subst(sv, &n, "<hostid>0</hostid>", hid);
    subst(sv, &n, "<rpc_seqno>0</rpc_seqno>", seq);
    subst(sv, &n, "<other_results>\n</other_results>\n", vs_buf_str(&lists));
    char *text = request(sv, n);
    vs_buf_cleanup(&lists);
    return text;
}

/* What one reply gave: the jobs (their deadlines, seconds from now), and
 * the explanation of a reply without work, one line each. */
struct outcome {
    size_t njobs;
    double deadline[64];
    char why[1024];
    bool deadlines;       /* the reply's "no work because of deadlines" flag */
    double request_delay; /* the reply's */
};

static void real_rpc(struct both *b, double est_delay, struct qjob *q, size_t *nq,
                     struct outcome *o)
{
    memset(o, 0, sizeof(*o));
    char *body = real_request(b, est_delay, q, *nq);
    struct vs_arena a;
    vs_arena_init(&a, 1 << 16);
    struct vs_proto_reply r;
    rpc_at(&b->f, body, NOW, &a, &r);
    vs_free(body);
    if (r.hostid > 0)
        b->hostid = r.hostid;
    b->seqno++;
    o->njobs = r.n_results;
    o->deadlines = r.vs_no_work_because_of_deadlines;
    o->request_delay = r.request_delay;
    assert_true(o->njobs <= 64);
    for (size_t i = 0; i < r.n_results; i++) {
        o->deadline[i] = r.results[i].report_deadline - NOW;
        /* The host now holds it. */
        struct qjob *j = &q[(*nq)++];
        *j = (struct qjob){
            .project = 0, .remaining = b->s.projects[0].cpu_time, .deadline = o->deadline[i]};
        snprintf(j->name, sizeof(j->name), "%s", r.results[i].name);
    }
    size_t len = 0;
    for (size_t i = 0; i < r.n_messages; i++)
        len += (size_t)snprintf(o->why + len, sizeof(o->why) - len, "%s\n", r.messages[i].text);
    assert_true(len < sizeof(o->why));
    vs_arena_cleanup(&a);
}

/* The simulated host's request and its server's answer; *refused the
 * reasons the scan met (bit per enum vs_sp_reason). */
static void sim_rpc(struct both *b, struct outcome *o, unsigned *refused)
{
    memset(o, 0, sizeof(*o));
    size_t before = b->x.st.nresults;
    struct vs_buf why;
    vs_buf_init(&why, 4096);
    struct vs_sim_reply y;
    vs_sim__serve(&b->x, 0, REQ_SECS, &why, &y);
    assert_int_equal(b->x.rc, 0);
    o->njobs = (size_t)y.sent;
    assert_int_equal(b->x.st.nresults - before, o->njobs);
    for (size_t i = 0; i < o->njobs; i++)
        o->deadline[i] = b->x.st.results[before + i].deadline - b->x.st.now;
    snprintf(o->why, sizeof(o->why), "%s", why.len ? vs_buf_str(&why) : "");
    vs_buf_cleanup(&why);
    *refused = y.refused;
    o->deadlines = y.deadlines;
    o->request_delay = y.delay;
}

/* The queue on both hosts before the first request. */
static void queue_both(struct both *b, struct qjob *q, size_t nq)
{
    for (size_t i = 0; i < nq; i++) {
        snprintf(q[i].name, sizeof(q[i].name), "queued_%zu", i);
        vs_sim__add_result(&b->x, q[i].project, q[i].remaining, q[i].deadline);
    }
}

/* The client's <estimated_delay> for the queue it holds now: its
 * round-robin simulation's busy time (src/policy/client), as the
 * simulated client sends it. */
static double client_estimated_delay(struct both *b)
{
    struct sim *x = &b->x;
    assert_int_equal(vs_cpolicy_step_trusted(x->policy, &x->st, &x->ws, &x->out), 0);
    x->have_sched = true;
    return vs_rrsim_busy_time(&x->st, &x->out.rr, &x->ws);
}

static void assert_same(const struct outcome *real, const struct outcome *sim)
{
    if (real->njobs != sim->njobs)
        fail_msg("real server sent %zu jobs, simulated server %zu", real->njobs, sim->njobs);
    for (size_t i = 0; i < real->njobs; i++)
        assert_float_equal(real->deadline[i], sim->deadline[i], 1.0);
    if (strcmp(real->why, sim->why) != 0)
        fail_msg("real server says:\n%s\nsimulated server says:\n%s", real->why, sim->why);
    assert_int_equal(real->deadlines, sim->deadlines);
    assert_float_equal(real->request_delay, sim->request_delay, 1e-9);
}

/* One request of the host, with its queue q and <estimated_delay>, to
 * both servers: the same jobs and the same refusal, and what each test
 * expects of them (want_why: a part of the explanation; NULL: none). The
 * jobs sent join the queue. */
static void same_answer(struct both *b, double est_delay, struct qjob *q, size_t *nq,
                        size_t want_jobs, unsigned want_refused, const char *want_why)
{
    struct outcome real, sim;
    unsigned refused;
    real_rpc(b, est_delay, q, nq, &real);
    sim_rpc(b, &sim, &refused);
    assert_same(&real, &sim);
    assert_int_equal(real.njobs, want_jobs);
    assert_int_equal(refused, want_refused);
    if (want_why)
        assert_non_null(strstr(real.why, want_why));
    else
        assert_string_equal(real.why, "");
}

/* Seed 004's deadline rule refuses every job: a 30-hour job with a 24-hour
 * delay bound on a host on half the time. Nothing sent, and both say why in
 * the same words. The server looks at all 20 cached jobs; the simulator
 * stops at its first. */
static void test_deadline_refuses_all(void **state)
{
    (void)state;
    struct both b;
    open_both(&b, "P1(30, 24, 1) NCPUS = 2 on_frac = 0.5 min_queue = 0", 20);
    struct qjob q[64];
    size_t nq = 0;
    same_answer(&b, 0, q, &nq, 0, 1u << VS_SP_DEADLINE,
                "Tasks won't finish in time: BOINC runs 50.0% of the time");
    close_both(&b);
}

/* Seed 000's latency-limited project: the real server's reply to a host
 * whose every job would miss its deadline carries the flag and the request
 * delay, and the volsched client's rule (vs_clatency_limited_until, which
 * src/client/rpc.c applies to that reply) marks the project latency-limited
 * until exactly the time the simulated client does after the simulator's
 * whole RPC (vs_sim__rpc); neither backs the project off beyond it. */
static void test_latency_limited(void **state)
{
    (void)state;
    struct both b;
    open_both(&b, "P1(30, 24, 1) NCPUS = 2 on_frac = 0.5 min_queue = 0", 20);
    struct qjob q[64];
    size_t nq = 0;
    struct outcome real;
    real_rpc(&b, 0, q, &nq, &real);
    assert_int_equal(real.njobs, 0);
    assert_true(real.deadlines);
    assert_float_equal(real.request_delay, VS_SP_DEADLINE_DELAY, 1e-9);
    double real_until =
        vs_clatency_limited_until(NOW, (int)real.njobs, real.deadlines, real.request_delay);

    double sim_now = b.x.st.now;
    assert_int_equal(vs_sim__rpc(&b.x, 0, REQ_SECS, 1), 0);
    assert_int_equal(b.x.rc, 0);
    const struct vs_cproject *cp = &b.x.cp[0];
    /* (cmocka's float assert casts its unparenthesized arguments to float:
     * differences first) */
    double sim_for = cp->latency_limited_until - sim_now, real_for = real_until - NOW;
    double sim_wait = cp->min_rpc_time - sim_now;
    assert_true(real_for > 0);
    assert_float_equal(sim_for, real_for, 1e-6);
    assert_float_equal(sim_wait, real.request_delay, 1e-6);
    /* A later reply without the flag ends it, on both sides. */
    assert_float_equal(vs_clatency_limited_until(NOW, 0, false, 0), 0, 0);
    assert_float_equal(vs_clatency_limited_until(NOW, 3, true, 600), 0, 0);
    close_both(&b);
}

/* The deadline rule part way: 4-hour jobs, a 10-hour delay bound, 2 CPUs.
 * Each job sent adds 2 hours to the host's estimated delay, so the fifth
 * would end after 12 hours: both send four. The next request, with those
 * four queued and the busy time the client computes for them (8 hours),
 * gets nothing, and both explain it the same way. */
static void test_deadline_part_way(void **state)
{
    (void)state;
    struct both b;
    open_both(&b, "P1(4, 10, 1) NCPUS = 2 min_queue = 0", 20);
    struct qjob q[64];
    size_t nq = 0;
    same_answer(&b, 0, q, &nq, 4, 1u << VS_SP_DEADLINE, NULL);
    double delay = client_estimated_delay(&b);
    assert_float_equal(delay, 8 * 3600, 1e-6);
    same_answer(&b, delay, q, &nq, 0, 1u << VS_SP_DEADLINE, "Tasks won't finish in time");
    close_both(&b);
}

/* Seed 000's EDF check (workload_sim): a job of the other project, 4 hours
 * left and due in 5, is queued. A 2-hour job due in 3 would run first and
 * push it past its deadline: refused by both as a threat to the queue. */
static void test_edf_workload(void **state)
{
    (void)state;
    struct both b;
    open_both(&b, "P1(2, 3, 1, workload_sim = true) P2(4, 5, 1) NCPUS = 1 min_queue = 0", 10);
    struct qjob q[64] = {{.project = 1, .remaining = 4 * 3600, .deadline = 5 * 3600}};
    size_t nq = 1;
    queue_both(&b, q, nq);
    same_answer(&b, 0, q, &nq, 0, 1u << VS_SP_WORKLOAD,
                "the tasks already queued on this computer would miss");
    close_both(&b);
}

/* The daily quota: 2 jobs per CPU per day on 2 CPUs. Both send 4 and stop
 * there; the next request the same day gets nothing, and both say the
 * quota is reached. */
static void test_daily_quota(void **state)
{
    (void)state;
    struct both b;
    open_both(&b, "P1(1, 100, 1, daily_result_quota = 2) NCPUS = 2 min_queue = 0", 10);
    struct qjob q[64];
    size_t nq = 0;
    same_answer(&b, 0, q, &nq, 4, 1u << VS_SP_DAILY_QUOTA, NULL);
    same_answer(&b, client_estimated_delay(&b), q, &nq, 0, 1u << VS_SP_DAILY_QUOTA,
                "daily quota of 4 tasks");
    close_both(&b);
}

/* No refusal at all: max_wus_to_send = 3 on 2 CPUs caps the reply at 6
 * short jobs in both, and a request that 6 jobs do not fill is no reason
 * to explain anything. */
static void test_reply_cap(void **state)
{
    (void)state;
    struct both b;
    open_both(&b, "P1(0.5, 100, 1, max_wus_to_send = 3) NCPUS = 2 min_queue = 0", 20);
    struct qjob q[64];
    size_t nq = 0;
    same_answer(&b, 0, q, &nq, 6, 0, NULL);
    close_both(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deadline_refuses_all), cmocka_unit_test(test_deadline_part_way),
        cmocka_unit_test(test_latency_limited),      cmocka_unit_test(test_edf_workload),
        cmocka_unit_test(test_daily_quota),          cmocka_unit_test(test_reply_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
