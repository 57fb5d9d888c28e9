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

#include "server/sched.h"
#include "store/store.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/config.h"
#include "volsched/proto.h"

#define SAMPLES VS_SOURCE_DIR "/tests/data/boinc"
#define AUTH    "0123456789abcdef0123456789abcdef"
#define AUTH2   "fedcba9876543210fedcba9876543210"
#define NOW     1800000000

/* What one test's project holds. */
struct spec {
    int nwu;
    double mem, disk, fpops, delay; /* per workunit; 0 = defaults below */
    int quorum;                     /* min_quorum = target_nresults; 0 = 1 */
    int app_min_version;
    int app_hr;
    const char *aux;        /* config_aux.xml text, NULL = none */
    const char *plan_class; /* the one app version's; NULL = plain CPU */
};

struct fx {
    char dir[64];
    struct vs_project_config cfg;
    struct vs_store *st;
    struct vs_sched *s;
    int64_t avid;
};

/* sched_request_01.xml with (old, new) pairs substituted. */
static char *request(const char *const *subst, size_t n)
{
    char *text = vs_test_slurp(SAMPLES "/sched_request_01.xml", NULL);
    const char *base[] = {"<cpu_req_secs>1.000000</cpu_req_secs>",
                          "<cpu_req_secs>100000.000000</cpu_req_secs>"};
    for (size_t pass = 0; pass < 2; pass++) {
        const char *const *sv = pass == 0 ? base : subst;
        size_t sn = pass == 0 ? 2 : n;
        for (size_t i = 0; i + 1 < sn; i += 2) {
            char *at = strstr(text, sv[i]);
            if (!at)
                fail_msg("no '%s' in the request", sv[i]);
            struct vs_buf b;
            vs_buf_init(&b, VS_BUF_UNLIMITED);
            assert_int_equal(vs_buf_append(&b, text, (size_t)(at - text)), 0);
            assert_int_equal(vs_buf_puts(&b, sv[i + 1]), 0);
            assert_int_equal(vs_buf_puts(&b, at + strlen(sv[i])), 0);
            vs_free(text);
            text = vs_buf_take(&b, NULL);
        }
    }
    return text;
}

static void build(struct fx *f, const struct vs_sp_config *pol, const struct spec *sp)
{
    memset(f, 0, sizeof(*f));
    snprintf(f->dir, sizeof(f->dir), "/tmp/vs_rules_XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    struct vs_project_config *c = &f->cfg;
    assert_int_equal(vs_project_config_defaults(c, f->dir, "Rules", "http://127.0.0.1:8080/r/"), 0);
    snprintf(c->store_url, sizeof(c->store_url), "sqlite:%s/t.db", f->dir);
    c->policy = *pol;
    /* The requests here list none of the host's jobs in <other_results>:
     * with resend_lost_results (a project's default) they would come back
     * as lost. These tests are about the send rules. */
    c->resend_lost_results = false;
    if (sp->aux) {
        /* Job limits come from config_aux.xml through the config reader. */
        char path[256];
        snprintf(path, sizeof(path), "%s/config_aux.xml", f->dir);
        FILE *fp = fopen(path, "w");
        assert_non_null(fp);
        fputs(sp->aux, fp);
        fclose(fp);
        snprintf(path, sizeof(path), "%s/config.xml", f->dir);
        fp = fopen(path, "w");
        assert_non_null(fp);
        fputs("<boinc><config></config></boinc>\n", fp);
        fclose(fp);
        struct vs_project_config *vc = VS_NEW(struct vs_project_config);
        struct vs_config_error ce;
        assert_int_equal(vs_project_config_load(f->dir, NULL, vc, &ce), 0);
        c->policy.limits = vc->policy.limits;
        vs_free(vc);
    }
    assert_int_equal(mkdir(c->key_dir, 0700), 0);
    assert_int_equal(vs_store_open(c->store_url, VS_STORE_CREATE, NULL, &f->st), 0);
    struct vs_platform pf = {0};
    snprintf(pf.name, sizeof(pf.name), "x86_64-pc-linux-gnu");
    assert_int_equal(vs_store_platform_add(f->st, &pf), 0);
    struct vs_app app = {0};
    snprintf(app.name, sizeof(app.name), "primes");
    app.min_version = sp->app_min_version;
    app.homogeneous_redundancy = sp->app_hr;
    assert_int_equal(vs_store_app_add(f->st, &app), 0);
    struct vs_app_version av = {0};
    av.appid = app.id;
    av.platformid = pf.id;
    av.version_num = 100;
    av.avg_ncpus = 1;
    if (sp->plan_class)
        snprintf(av.plan_class, sizeof(av.plan_class), "%s", sp->plan_class);
    struct vs_app_version_file file = {0};
    snprintf(file.name, sizeof(file.name), "primes_100");
    snprintf(file.path, sizeof(file.path), "3f/primes_100");
    file.nbytes = 1000;
    file.file_signature = vs_xstrdup("aa\n.\n");
    file.main_program = 1;
    av.files = &file;
    av.nfiles = 1;
    assert_int_equal(vs_store_app_version_add(f->st, &av), 0);
    vs_free(file.file_signature);
    f->avid = av.id;
    const char *auths[] = {AUTH, AUTH2};
    for (int k = 0; k < 2; k++) {
        struct vs_user u = {0};
        snprintf(u.name, sizeof(u.name), "user%d", k);
        snprintf(u.authenticator, sizeof(u.authenticator), "%s", auths[k]);
        assert_int_equal(vs_store_user_add(f->st, &u), 0);
        vs_user_cleanup(&u);
    }
    for (int i = 0; i < sp->nwu; i++) {
        struct vs_workunit wu;
        vs_workunit_defaults(&wu);
        wu.appid = app.id;
        snprintf(wu.name, sizeof(wu.name), "wu_%d", i);
        wu.rsc_fpops_est = sp->fpops > 0 ? sp->fpops : 2e10; /* 20 s at 1e9 */
        wu.rsc_memory_bound = sp->mem > 0 ? sp->mem : 1e8;
        wu.rsc_disk_bound = sp->disk > 0 ? sp->disk : 1e8;
        wu.delay_bound = sp->delay > 0 ? (int)sp->delay : 86400;
        wu.min_quorum = wu.target_nresults = sp->quorum > 0 ? sp->quorum : 1;
        wu.transition_time = VS_TIME_NEVER;
        wu.xml_doc = vs_xstrdup("<workunit>\n</workunit>\n");
        assert_int_equal(vs_store_workunit_add(f->st, &wu), 0);
        for (int k = 0; k < wu.target_nresults; k++) {
            struct vs_result r = {0};
            r.workunitid = wu.id;
            r.appid = app.id;
            r.server_state = VS_RESULT_SERVER_STATE_UNSENT;
            snprintf(r.name, sizeof(r.name), "wu_%d_%d", i, k);
            r.xml_doc_in = vs_xstrdup("<result>\n</result>\n");
            assert_int_equal(vs_store_result_add(f->st, &r), 0);
            vs_result_cleanup(&r);
        }
        vs_workunit_cleanup(&wu);
    }
    assert_int_equal(vs_sched_create(c, NULL, NULL, &f->s), 0);
    size_t added = 0;
    assert_int_equal(vs_sched_refill(f->s, &added), 0);
}

static void destroy(struct fx *f)
{
    vs_sched_destroy(f->s);
    vs_store_close(f->st);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
}

static void rpc_at(struct fx *f, const char *body, int64_t now, struct vs_arena *a,
                   struct vs_proto_reply *r)
{
    struct vs_buf out;
    vs_buf_init(&out, 16u << 20);
    assert_int_equal(vs_sched_handle(f->s, body, strlen(body), "127.0.0.1", now, &out), 200);
    struct vs_proto_error err = {0};
    if (vs_proto_reply_parse(out.data, out.len, a, r, &err) != 0)
        fail_msg("reply does not parse: %s", err.msg);
    vs_buf_cleanup(&out);
}

static bool has_msg(const struct vs_proto_reply *r, const char *text)
{
    for (size_t i = 0; i < r->n_messages; i++)
        if (strstr(r->messages[i].text, text))
            return true;
    return false;
}

/* One request on a fresh project: the number of jobs sent; *r the reply. */
static size_t one(const struct vs_sp_config *pol, const struct spec *sp, const char *const *subst,
                  size_t n, struct vs_arena *a, struct vs_proto_reply *r)
{
    struct fx f;
    build(&f, pol, sp);
    char *req = request(subst, n);
    rpc_at(&f, req, NOW, a, r);
    vs_free(req);
    destroy(&f);
    return r->n_results;
}

static struct vs_sp_config defaults(void)
{
    struct vs_sp_config c;
    vs_sp_config_defaults(&c);
    return c;
}

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

static char *host_request(const char *auth, int64_t hostid, int seqno)
{
    char hid[64], seq[64], au[80];
    snprintf(hid, sizeof(hid), "<hostid>%lld</hostid>", (long long)hostid);
    snprintf(seq, sizeof(seq), "<rpc_seqno>%d</rpc_seqno>", seqno);
    snprintf(au, sizeof(au), "<authenticator>%s</authenticator>", auth);
    const char *sub[] = {"<hostid>0</hostid>",
                         hid,
                         "<rpc_seqno>0</rpc_seqno>",
                         seq,
                         "<authenticator>" AUTH "</authenticator>",
                         au};
    return request(sub, 6);
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
        cmocka_unit_test(test_daily_quota_day_boundary),
        cmocka_unit_test(test_job_limits_config_aux),
        cmocka_unit_test(test_homogeneous_redundancy),
        cmocka_unit_test(test_gpu_plan_class),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
