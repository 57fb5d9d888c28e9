/*
 * The work-send rules through the scheduler handler: for each rule a real
 * request (the BOINC 7.20.5 client's, with elements rewritten) against a
 * real SQLite store, once crafted to hit exactly that rule (no job, and the
 * reply says why) and once just inside it (the job is sent). Also: two
 * hosts of one user with one_result_per_user_per_wu, the daily quota over a
 * day boundary (time is a parameter of the handler), job limits from a
 * config_aux.xml, homogeneous redundancy committing the workunit's class.
 */
#include "vs_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/config.h"
#include "volsched/proto.h"
#include "volsched/sched.h"
#include "volsched/store.h"

#include "sched_fixture.h"

/* Refused with msg (and "No tasks sent" first), then inside: sent. */
static void hit_and_inside(const struct vs_sp_config *p_hit, const struct spec *s_hit,
                           const char *const *sub_hit, size_t n_hit,
                           const struct vs_sp_config *p_in, const struct spec *s_in,
                           const char *const *sub_in, size_t n_in, const char *msg)
{
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    assert_int_equal(one(p_hit, s_hit, sub_hit, n_hit, &a, &r), 0);
    assert_true(r.n_messages >= 2);
    assert_string_equal(r.messages[0].text, "No tasks sent");
    if (!has_msg(&r, msg))
        fail_msg("no message '%s' (first: '%s')", msg, r.messages[1].text);
    assert_true(one(p_in, s_in, sub_in, n_in, &a, &r) >= 1);
    assert_false(has_msg(&r, "No tasks sent"));
    vs_arena_cleanup(&a);
}

static void test_platform_and_alternates(void **state)
{
    (void)state;
    struct vs_sp_config p = defaults();
    struct spec s = {.nwu = 1};
    const char *hit[] = {"<platform_name>x86_64-pc-linux-gnu</platform_name>",
                         "<platform_name>sparc-sun-solaris</platform_name>",
                         "<name>i686-pc-linux-gnu</name>", "<name>sparc64-sun-solaris</name>"};
    /* The version's platform only as the host's alternate platform. */
    const char *in[] = {"<platform_name>x86_64-pc-linux-gnu</platform_name>",
                        "<platform_name>sparc-sun-solaris</platform_name>",
                        "<name>i686-pc-linux-gnu</name>", "<name>x86_64-pc-linux-gnu</name>"};
    hit_and_inside(&p, &s, hit, 4, &p, &s, in, 4, "primes is not available for your type");
}

static void test_min_version(void **state)
{
    (void)state;
    struct vs_sp_config p = defaults();
    struct spec hit = {.nwu = 1, .app_min_version = 101}, in = {.nwu = 1, .app_min_version = 100};
    hit_and_inside(&p, &hit, NULL, 0, &p, &in, NULL, 0, "at or above the minimum version 101");
}

static void test_memory(void **state)
{
    (void)state;
    struct vs_sp_config p = defaults();
    /* 25276026880 bytes x 90% (the request's RAM preference) = 22748424192. */
    struct spec hit = {.nwu = 1, .mem = 22748424192.0 + 1e6}, in = {.nwu = 1, .mem = 22748424192.0};
    hit_and_inside(&p, &hit, NULL, 0, &p, &in, NULL, 0, "MB RAM but only 22748.42 MB");
}

static void test_disk(void **state)
{
    (void)state;
    struct vs_sp_config p = defaults();
    /* d_free 83985932288 minus the 0.01 GB the preferences keep free. */
    double allowed = 83985932288.0 - 0.01e9;
    struct spec hit = {.nwu = 1, .disk = allowed + 1e6}, in = {.nwu = 1, .disk = allowed};
    hit_and_inside(&p, &hit, NULL, 0, &p, &in, NULL, 0, "more disk space");
}

static void test_deadline_and_empty_queue_exemption(void **state)
{
    (void)state;
    struct vs_sp_config p = defaults();
    /* 2e10 flops at 1e9 = 20 s, but BOINC runs only part of the time. */
    struct spec hit = {.nwu = 1, .delay = 10}, in = {.nwu = 1, .delay = 86400};
    hit_and_inside(&p, &hit, NULL, 0, &p, &in, NULL, 0, "Tasks won't finish in time");
    /* The optional exemption: a host with nothing queued gets it anyway. */
    struct vs_sp_config ex = defaults();
    ex.deadline_exempt_empty_queue = true;
    hit_and_inside(&p, &hit, NULL, 0, &ex, &hit, NULL, 0, "Tasks won't finish in time");
}

static void test_client_version(void **state)
{
    (void)state;
    struct vs_sp_config hit = defaults(), in = defaults();
    hit.min_core_client_version = 72006; /* the client is 7.20.5 */
    in.min_core_client_version = 72005;
    struct spec s = {.nwu = 1};
    hit_and_inside(&hit, &s, NULL, 0, &in, &s, NULL, 0, "7.20.5 is too old");
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    assert_int_equal(one(&hit, &s, NULL, 0, &a, &r), 0);
    assert_int_equal((int)r.request_delay, 86400);
    assert_true(r.hostid > 0); /* the RPC itself (and its reports) still counts */
    vs_arena_cleanup(&a);
}

static void test_max_wus_to_send_and_filling(void **state)
{
    (void)state;
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    struct vs_sp_config p = defaults();
    p.max_wus_to_send = 1; /* x 2 CPUs */
    struct spec s = {.nwu = 6};
    assert_int_equal(one(&p, &s, NULL, 0, &a, &r), 2);
    p.max_wus_to_send = 2;
    assert_int_equal(one(&p, &s, NULL, 0, &a, &r), 4);
    /* Filling: 30 s asked, 20 s jobs (1 CPU, full availability below):
     * two jobs cover it, not three. */
    struct vs_sp_config d = defaults();
    const char *fill2[] = {"<cpu_req_secs>100000.000000</cpu_req_secs>",
                           "<cpu_req_secs>30.000000</cpu_req_secs>"};
    size_t n30 = one(&d, &s, fill2, 2, &a, &r);
    const char *fill3[] = {"<cpu_req_secs>100000.000000</cpu_req_secs>",
                           "<cpu_req_secs>90.000000</cpu_req_secs>"};
    size_t n90 = one(&d, &s, fill3, 2, &a, &r);
    assert_true(n30 >= 1);
    assert_true(n90 > n30); /* more seconds asked, more jobs */
    assert_true(n90 < 6);   /* and the request, not the cache, bounds it */
    vs_arena_cleanup(&a);
}

/* Two hosts of one user: with the rule the second gets nothing of the
 * workunit; without it, it gets the second result. */
static void test_one_result_per_user_two_hosts(void **state)
{
    (void)state;
    for (int on = 1; on >= 0; on--) {
        struct vs_sp_config p = defaults();
        p.one_result_per_user_per_wu = on;
        struct spec s = {.nwu = 1, .quorum = 2};
        struct fx f;
        build(&f, &p, &s);
        struct vs_arena a;
        vs_arena_init(&a, 8192);
        struct vs_proto_reply r;
        char *req = host_request(AUTH, 0, 0);
        rpc_at(&f, req, NOW, &a, &r);
        assert_int_equal(r.n_results, 1); /* never both to one host */
        int64_t host_a = r.hostid;
        rpc_at(&f, req, NOW, &a, &r); /* hostid 0 again: a second host of the user */
        assert_true(r.hostid != host_a);
        if (on) {
            assert_int_equal(r.n_results, 0);
            assert_true(has_msg(&r, "at most one task of a workunit"));
        } else {
            assert_int_equal(r.n_results, 1);
        }
        vs_free(req);
        vs_arena_cleanup(&a);
        destroy(&f);
    }
}

/* Results the scheduler's cache holds are sent by someone else first (an
 * instance whose lease ran out, a stale copy): the request that chose them
 * loses its claims and chooses again among the jobs it has not tried, two
 * more times at most (h_sched.c rechoose). */
static void test_choose_again_after_lost_claims(void **state)
{
    (void)state;
    struct vs_sp_config p = defaults();
    p.max_wus_to_send = 1; /* x 2 CPUs: two jobs per RPC */
    struct spec s = {.nwu = 10};
    for (int stale = 4; stale <= 6; stale += 2) {
        struct fx f;
        build(&f, &p, &s); /* the cache holds all ten, in result id order */
        struct vs_host other;
        memset(&other, 0, sizeof(other));
        other.userid = 2;
        assert_int_equal(vs_store_host_add(f.st, &other), 0);
        for (int64_t id = 1; id <= stale; id++) {
            struct vs_claim c = {.result_id = id, .report_deadline = NOW + 86400};
            size_t n = 0;
            assert_int_equal(vs_store_results_claim(f.st, other.id, 2, 0, NOW, &c, 1, &n), 0);
            assert_int_equal(n, 1);
        }
        struct vs_arena a;
        vs_arena_init(&a, 8192);
        struct vs_proto_reply r;
        char *req = host_request(AUTH, 0, 0);
        rpc_at(&f, req, NOW, &a, &r);
        struct vs_sched_stats ss;
        vs_sched_get_stats(f.s, &ss);
        if (stale == 4) {
            /* Lost results 1-2, then 3-4, then claimed 5-6. */
            assert_int_equal(r.n_results, 2);
            assert_string_equal(r.results[0].name, "wu_4_0");
            assert_string_equal(r.results[1].name, "wu_5_0");
            assert_false(has_msg(&r, "No tasks sent"));
            assert_int_equal(ss.rechosen, 2);
            int64_t mine = 0;
            assert_int_equal(vs_store_host_count_in_progress(f.st, r.hostid, &mine), 0);
            assert_int_equal(mine, 2);
        } else {
            /* Three choices, all lost: the rounds are bounded. */
            assert_int_equal(r.n_results, 0);
            assert_true(has_msg(&r, "No tasks sent"));
            assert_int_equal(ss.rechosen, 2);
        }
        assert_int_equal(ss.claims_lost, (uint64_t)stale);
        assert_int_equal(ss.jobs_sent, stale == 4 ? 2 : 0);
        vs_free(req);
        vs_arena_cleanup(&a);
        destroy(&f);
    }
}

/* Daily quota over a day boundary: the count is stored with the host, the
 * next RPC of the same day is refused, the next day's is served. */
static void test_daily_quota_day_boundary(void **state)
{
    (void)state;
    struct vs_sp_config p = defaults();
    p.daily_result_quota = 2; /* x 2 CPUs = 4 a day */
    struct spec s = {.nwu = 12};
    struct fx f;
    build(&f, &p, &s);
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    char *req = host_request(AUTH, 0, 0);
    rpc_at(&f, req, NOW, &a, &r);
    vs_free(req);
    assert_int_equal(r.n_results, 4);
    int64_t hid = r.hostid;
    struct vs_host_app_version hav;
    assert_int_equal(vs_store_hav_get(f.st, hid, f.avid, &hav), 0);
    assert_int_equal(hav.n_jobs_today, 4);
    /* A second later the rows come from the scheduler's host cache, not
     * the store: the same answer. */
    assert_false(vs_sp_quota_new_day(hid, NOW, NOW + 1));
    req = host_request(AUTH, hid, 1);
    rpc_at(&f, req, NOW + 1, &a, &r);
    vs_free(req);
    assert_int_equal(r.n_results, 0);
    assert_true(has_msg(&r, "daily quota of 4 tasks"));
    /* The host's day ends somewhere in the next 24 h: find a time just
     * before and just after its boundary. */
    int64_t t = NOW + 60;
    while (!vs_sp_quota_new_day(hid, NOW, (double)t + 60))
        t += 60;
    req = host_request(AUTH, hid, 2);
    rpc_at(&f, req, t, &a, &r);
    vs_free(req);
    assert_int_equal(r.n_results, 0);
    assert_true(has_msg(&r, "daily quota of 4 tasks"));
    req = host_request(AUTH, hid, 3);
    rpc_at(&f, req, t + 120, &a, &r);
    vs_free(req);
    assert_int_equal(r.n_results, 4);
    assert_int_equal(vs_store_hav_get(f.st, hid, f.avid, &hav), 0);
    assert_int_equal(hav.n_jobs_today, 4);
    vs_arena_cleanup(&a);
    destroy(&f);
}

/* Job limits from config_aux.xml, counted from the client's in-progress
 * jobs plus the reply's. */
static void test_job_limits_config_aux(void **state)
{
    (void)state;
    struct vs_sp_config p = defaults();
    struct spec s = {.nwu = 6,
                     .aux = "<config><max_jobs_in_progress><project><cpu_limit><jobs>1</jobs>"
                            "<per_proc/></cpu_limit></project></max_jobs_in_progress></config>"};
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    assert_int_equal(one(&p, &s, NULL, 0, &a, &r), 2); /* 1 per CPU x 2 */
    const char *one_held[] = {"<other_results>\n</other_results>",
                              "<other_results><other_result><name>x_0</name>"
                              "<plan_class></plan_class></other_result></other_results>"};
    assert_int_equal(one(&p, &s, one_held, 2, &a, &r), 1);
    const char *two_held[] = {"<other_results>\n</other_results>",
                              "<other_results><other_result><name>x_0</name></other_result>"
                              "<other_result><name>x_1</name></other_result></other_results>"};
    assert_int_equal(one(&p, &s, two_held, 2, &a, &r), 0);
    assert_true(has_msg(&r, "reached a limit on tasks in progress"));
    /* An <app> section: its total limit binds below the project's. */
    struct spec app = {.nwu = 6,
                       .aux = "<config><max_jobs_in_progress><app><app_name>primes</app_name>"
                              "<total_limit><jobs>3</jobs></total_limit></app>"
                              "</max_jobs_in_progress></config>"};
    assert_int_equal(one(&p, &app, NULL, 0, &a, &r), 3);
    /* Two held jobs of primes (the client names their app version). */
    const char *two_primes[] = {
        "<other_results>\n</other_results>",
        "<app_versions><app_version><app_name>primes</app_name><version_num>100</version_num>"
        "<platform>x86_64-pc-linux-gnu</platform><avg_ncpus>1</avg_ncpus></app_version>"
        "</app_versions><other_results><other_result><name>x_0</name><app_version>0</app_version>"
        "</other_result><other_result><name>x_1</name><app_version>0</app_version>"
        "</other_result></other_results>"};
    assert_int_equal(one(&p, &app, two_primes, 2, &a, &r), 1);
    assert_int_equal(one(&p, &app, two_held, 2, &a, &r), 3); /* other apps' jobs: not counted */
    /* The same app limit per processor: 1 x 2 CPUs. */
    struct spec per = {.nwu = 6,
                       .aux = "<config><max_jobs_in_progress><app><app_name>primes</app_name>"
                              "<cpu_limit><jobs>1</jobs><per_proc/></cpu_limit></app>"
                              "</max_jobs_in_progress></config>"};
    assert_int_equal(one(&p, &per, NULL, 0, &a, &r), 2);
    vs_arena_cleanup(&a);
}

/* Homogeneous redundancy: the first result commits the workunit to the
 * host's class (stored); a host of another class is refused. */
static void test_homogeneous_redundancy(void **state)
{
    (void)state;
    struct vs_sp_config p = defaults();
    p.homogeneous_redundancy = 2;
    struct spec s = {.nwu = 1, .quorum = 2};
    struct fx f;
    build(&f, &p, &s);
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    char *req = host_request(AUTH, 0, 0);
    rpc_at(&f, req, NOW, &a, &r);
    vs_free(req);
    assert_int_equal(r.n_results, 1);
    struct vs_workunit wu;
    assert_int_equal(vs_store_workunit_by_name(f.st, "wu_0", &wu), 0);
    assert_true(wu.hr_class != 0);
    vs_workunit_cleanup(&wu);
    /* Another user's Windows host: another class. */
    const char *win[] = {
        "<authenticator>" AUTH "</authenticator>", "<authenticator>" AUTH2 "</authenticator>",
        "<os_name>Linux Debian</os_name>", "<os_name>Microsoft Windows 10</os_name>"};
    req = request(win, 4);
    rpc_at(&f, req, NOW, &a, &r);
    vs_free(req);
    assert_int_equal(r.n_results, 0);
    assert_true(has_msg(&r, "committed to other platforms"));
    /* Another user's Linux host: same class, gets it. */
    req = host_request(AUTH2, 0, 0);
    rpc_at(&f, req, NOW, &a, &r);
    vs_free(req);
    assert_int_equal(r.n_results, 1);
    vs_arena_cleanup(&a);
    destroy(&f);
}

/* A GPU plan class goes only to a host with that GPU that asks for GPU
 * work, and fills the GPU request. */
static void test_gpu_plan_class(void **state)
{
    (void)state;
    struct vs_sp_config p = defaults();
    struct spec s = {.nwu = 1, .plan_class = "cuda"};
    const char *gpu[] = {"</host_info>",
                         "<coprocs><coproc_cuda><count>1</count><name>GTX 1080</name>"
                         "<peak_flops>1e12</peak_flops><req_secs>1000</req_secs>"
                         "<req_instances>1</req_instances><estimated_delay>0</estimated_delay>"
                         "</coproc_cuda></coprocs></host_info>"};
    hit_and_inside(&p, &s, NULL, 0, &p, &s, gpu, 2, "primes needs an NVIDIA GPU");
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    assert_int_equal(one(&p, &s, gpu, 2, &a, &r), 1);
    assert_string_equal(r.results[0].plan_class, "cuda");
    vs_arena_cleanup(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_platform_and_alternates),
        cmocka_unit_test(test_min_version),
        cmocka_unit_test(test_memory),
        cmocka_unit_test(test_disk),
        cmocka_unit_test(test_deadline_and_empty_queue_exemption),
        cmocka_unit_test(test_client_version),
        cmocka_unit_test(test_max_wus_to_send_and_filling),
        cmocka_unit_test(test_one_result_per_user_two_hosts),
        cmocka_unit_test(test_choose_again_after_lost_claims),
        cmocka_unit_test(test_daily_quota_day_boundary),
        cmocka_unit_test(test_job_limits_config_aux),
        cmocka_unit_test(test_homogeneous_redundancy),
        cmocka_unit_test(test_gpu_plan_class),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
