/*
 * The scheduler handler, end to end without HTTP: real requests captured
 * from the BOINC 7.20.5 client (../shared/protocol/samples) go in, replies
 * come out and are checked element by element (parsed back with the
 * protocol's reply parser) and against a golden file; the store is checked
 * for what was recorded. Bad requests must give an error reply, never a
 * crash.
 *
 * VS_UPDATE_GOLDEN=1 rewrites the golden file instead of comparing.
 */
#include "store_backend.h"
#include "vs_test.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sched_project.h"
#include "sched_request.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/md5.h"
#include "volsched/proto.h"
#include "volsched/sched.h"
#include "volsched/store.h"
#include "volsched/str.h"

#define SAMPLES VS_SOURCE_DIR "/tests/data/boinc"
#define AUTH    "0123456789abcdef0123456789abcdef" /* the samples' authenticator */
#define NOW     TP_NOW
#define NWU     6

struct fixture {
    char dir[64];
    struct vs_project_config cfg;
    struct vs_store *st;
    struct vs_sched *s;
    int64_t userid;
};

/* A sample request with some elements rewritten: each pair is (old, new). */
static char *sample(const char *name, const char *const *subst, size_t nsubst)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", SAMPLES, name);
    char *text = vs_test_slurp(path, NULL);
    for (size_t i = 0; i + 1 < nsubst; i += 2)
        text = sr_replace(text, subst[i], subst[i + 1]);
    return text;
}

/* True when one of the reply's messages contains text. */
static bool has_msg(const struct vs_proto_reply *r, const char *text)
{
    for (size_t i = 0; i < r->n_messages; i++)
        if (strstr(r->messages[i].text, text))
            return true;
    return false;
}

static int setup(void **state)
{
    struct fixture *fx = VS_NEW(struct fixture);
    snprintf(fx->dir, sizeof(fx->dir), "/tmp/vs_sched_XXXXXX");
    assert_non_null(mkdtemp(fx->dir));
    struct vs_project_config *c = &fx->cfg;
    tp_config(c, fx->dir, "Test Project");

    assert_int_equal(vs_store_open(c->store_url, VS_STORE_CREATE, NULL, &fx->st), 0);
    struct vs_platform pf = {0};
    snprintf(pf.name, sizeof(pf.name), "x86_64-pc-linux-gnu");
    assert_int_equal(vs_store_platform_add(fx->st, &pf), 0);
    struct vs_app app = {0};
    snprintf(app.name, sizeof(app.name), "primes");
    assert_int_equal(vs_store_app_add(fx->st, &app), 0);
    (void)tp_add_app_version(fx->st, app.id, pf.id, "primes_100_x86_64-pc-linux-gnu");

    struct vs_user u = {0};
    snprintf(u.name, sizeof(u.name), "alice");
    snprintf(u.authenticator, sizeof(u.authenticator), AUTH);
    assert_int_equal(vs_store_user_add(fx->st, &u), 0);
    fx->userid = u.id;
    vs_user_cleanup(&u);

    for (int i = 0; i < NWU; i++) {
        struct vs_workunit wu;
        vs_workunit_defaults(&wu);
        wu.appid = app.id;
        snprintf(wu.name, sizeof(wu.name), "wu_%d", i);
        wu.rsc_fpops_est = 2e10; /* 20 s at the samples' 1e9 flops */
        wu.rsc_fpops_bound = 2e13;
        wu.rsc_memory_bound = 1e8;
        wu.rsc_disk_bound = 1e8;
        wu.delay_bound = 86400;
        wu.transition_time = VS_TIME_NEVER;
        char doc[1024];
        snprintf(doc, sizeof(doc),
                 "<file_info>\n    <name>in_%d</name>\n"
                 "    <url>http://127.0.0.1:8080/test/download/1a/in_%d</url>\n"
                 "    <md5_cksum>00000000000000000000000000000000</md5_cksum>\n"
                 "    <nbytes>12</nbytes>\n</file_info>\n"
                 "<workunit>\n    <file_ref>\n        <file_name>in_%d</file_name>\n"
                 "        <open_name>in</open_name>\n        <copy_file/>\n    </file_ref>\n"
                 "</workunit>\n",
                 i, i, i);
        wu.xml_doc = vs_xstrdup(doc);
        assert_int_equal(vs_store_workunit_add(fx->st, &wu), 0);
        struct vs_result r = {0};
        r.workunitid = wu.id;
        r.appid = app.id;
        r.server_state = VS_RESULT_SERVER_STATE_UNSENT;
        snprintf(r.name, sizeof(r.name), "wu_%d_0", i);
        snprintf(doc, sizeof(doc),
                 "<file_info>\n    <name>wu_%d_0_r0</name>\n"
                 "    <url>http://127.0.0.1:8080/test/file_upload_handler</url>\n"
                 "    <max_nbytes>100000</max_nbytes>\n</file_info>\n"
                 "<result>\n    <file_ref>\n        <file_name>wu_%d_0_r0</file_name>\n"
                 "        <open_name>out</open_name>\n        <copy_file/>\n    </file_ref>\n"
                 "</result>\n",
                 i, i);
        r.xml_doc_in = vs_xstrdup(doc);
        assert_int_equal(vs_store_result_add(fx->st, &r), 0);
        vs_workunit_cleanup(&wu);
        vs_result_cleanup(&r);
    }
    assert_int_equal(vs_sched_create(c, NULL, NULL, &fx->s), 0);
    size_t added = 0;
    assert_int_equal(vs_sched_refill(fx->s, &added), 0);
    assert_int_equal(added, NWU);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    vs_sched_destroy(fx->s);
    vs_store_close(fx->st);
    vs_test_store_drop(fx->cfg.store_url);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", fx->dir);
    assert_int_equal(system(cmd), 0);
    vs_free(fx);
    return 0;
}

/* Runs one request; the reply text goes to *out_text (caller frees). */
static void rpc(struct fixture *fx, const char *body, struct vs_arena *a, struct vs_proto_reply *r,
                char **out_text)
{
    tp_rpc(fx->s, body, a, r, out_text);
}

static int result_state(struct fixture *fx, const char *name, int64_t *out_hostid,
                        int64_t *out_deadline)
{
    struct vs_result r = {0};
    assert_int_equal(vs_store_result_by_name(fx->st, name, &r), 0);
    int state = r.server_state;
    if (out_hostid)
        *out_hostid = r.hostid;
    if (out_deadline)
        *out_deadline = r.report_deadline;
    vs_result_cleanup(&r);
    return state;
}

/* Masks values that depend on the wall clock of the test run, and the
 * account's random CPID. */
static void normalize(char *text)
{
    const char *tags[] = {"<user_create_time>", "<cross_project_id>"};
    for (size_t t = 0; t < 2; t++) {
        for (char *p = strstr(text, tags[t]); p; p = strstr(p + 1, tags[t])) {
            for (char *q = p + strlen(tags[t]); *q && *q != '<'; q++)
                *q = 'X';
        }
    }
}

static void check_golden(const char *text, const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/tests/golden/sched/%s", VS_SOURCE_DIR, name);
    char *norm = vs_xstrdup(text);
    normalize(norm);
    if (getenv("VS_UPDATE_GOLDEN")) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(norm, f);
        fclose(f);
    } else {
        if (access(path, R_OK) != 0)
            fail_msg("missing golden file %s (run with VS_UPDATE_GOLDEN=1)", path);
        char *want = vs_test_slurp(path, NULL);
        if (strcmp(want, norm) != 0)
            fail_msg("reply differs from %s:\n%s", path, norm);
        vs_free(want);
    }
    vs_free(norm);
}

static void test_attach(void **state)
{
    struct fixture *fx = *state;
    char *req = sample("sched_request_01.xml", NULL, 0);
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    char *text = NULL;
    rpc(fx, req, &a, &r, &text);
    check_golden(text, "attach_reply.xml");

    /* A new host: its id, and the key the client does not have yet. */
    assert_true(r.hostid > 0);
    assert_non_null(r.code_sign_key);
    assert_memory_equal(r.code_sign_key, tp_key_text, strlen(tp_key_text) - 1); /* parser trims */
    assert_string_equal(r.master_url, "http://127.0.0.1:8080/test/");
    /* The first request asks for 1 s of CPU: one 20 s job fills it. */
    assert_int_equal(r.n_results, 1);
    assert_int_equal(r.n_workunits, 1);
    assert_int_equal(r.n_apps, 1);
    assert_string_equal(r.apps[0].name, "primes");
    assert_int_equal(r.n_app_versions, 1);
    const struct vs_proto_app_version *av = &r.app_versions[0];
    assert_string_equal(av->app_name, "primes");
    assert_int_equal(av->version_num, 100);
    assert_string_equal(av->platform, "x86_64-pc-linux-gnu");
    assert_int_equal(av->n_file_refs, 1);
    assert_true(av->file_refs[0].main_program);
    /* app file, input, output */
    assert_int_equal(r.n_file_infos, 3);
    const struct vs_proto_file_info *exe = NULL, *out = NULL;
    for (size_t i = 0; i < r.n_file_infos; i++) {
        if (strcmp(r.file_infos[i].name, "primes_100_x86_64-pc-linux-gnu") == 0)
            exe = &r.file_infos[i];
        if (strcmp(r.file_infos[i].name, "wu_0_0_r0") == 0)
            out = &r.file_infos[i];
    }
    assert_non_null(exe);
    assert_true(exe->executable);
    assert_non_null(exe->file_signature);
    assert_memory_equal(exe->file_signature, tp_sig_text, strlen(tp_sig_text) - 1);
    assert_int_equal(exe->n_urls, 1);
    assert_string_equal(exe->urls[0].url,
                        "http://127.0.0.1:8080/test/download/3f/primes_100_x86_64-pc-linux-gnu");
    assert_non_null(out);
    assert_true(out->max_nbytes > 0);
    const struct vs_proto_workunit *wu = &r.workunits[0];
    assert_string_equal(wu->name, "wu_0");
    assert_string_equal(wu->app_name, "primes");
    assert_true(wu->rsc_fpops_est == 2e10);
    assert_int_equal(wu->n_file_refs, 1);
    assert_string_equal(wu->file_refs[0].open_name, "in");
    assert_true(wu->file_refs[0].copy_file);
    const struct vs_proto_result *res = &r.results[0];
    assert_string_equal(res->name, "wu_0_0");
    assert_string_equal(res->wu_name, "wu_0");
    assert_true(res->report_deadline == NOW + 86400);
    assert_string_equal(res->platform, "x86_64-pc-linux-gnu");
    assert_int_equal(res->version_num, 100);

    /* Recorded before the reply: IN_PROGRESS on that host, with the deadline. */
    int64_t hostid = 0, deadline = 0;
    assert_int_equal(result_state(fx, "wu_0_0", &hostid, &deadline),
                     VS_RESULT_SERVER_STATE_IN_PROGRESS);
    assert_int_equal(hostid, r.hostid);
    assert_int_equal(deadline, NOW + 86400);
    assert_int_equal(result_state(fx, "wu_1_0", NULL, NULL), VS_RESULT_SERVER_STATE_UNSENT);
    struct vs_host h = {0};
    assert_int_equal(vs_store_host_get(fx->st, r.hostid, &h), 0);
    assert_int_equal(h.userid, fx->userid);
    assert_int_equal(h.p_ncpus, 2);
    assert_true(h.p_fpops == 1e9);
    assert_string_equal(h.host_cpid, "7e683862f6cd55e19e6a65f2c8c7066d");
    assert_int_equal(h.rpc_time, NOW);

    /* The next RPC of that host: no new hostid, no key (it echoes one), and a
     * bigger request filled by several jobs: 50 s and 2 idle CPUs -> 3 jobs
     * of 20 s (the request shrinks by 20 s and 1 CPU per job). */
    char hid[64];
    snprintf(hid, sizeof(hid), "<hostid>%lld</hostid>", (long long)r.hostid);
    const char *sub[] = {"<hostid>0</hostid>",
                         hid,
                         "<rpc_seqno>0</rpc_seqno>",
                         "<rpc_seqno>1</rpc_seqno>",
                         "<cpu_req_secs>1.000000</cpu_req_secs>",
                         "<cpu_req_secs>50.000000</cpu_req_secs>",
                         "<cpu_req_instances>0.000000</cpu_req_instances>",
                         "<cpu_req_instances>2.000000</cpu_req_instances>",
                         "<cross_project_id>",
                         "<code_sign_key>\nabc\n.\n</code_sign_key>\n<cross_project_id>"};
    char *req2 = sample("sched_request_01.xml", sub, 10);
    struct vs_proto_reply r2;
    rpc(fx, req2, &a, &r2, NULL);
    assert_int_equal(r2.hostid, 0);
    assert_null(r2.code_sign_key);
    assert_int_equal(r2.n_results, 3);
    /* The app and its version are sent once per reply. */
    assert_int_equal(r2.n_apps, 1);
    assert_int_equal(r2.n_app_versions, 1);
    assert_int_equal(r2.n_file_infos, 1 + 3 + 3);
    for (size_t i = 0; i < r2.n_results; i++)
        assert_int_equal(result_state(fx, r2.results[i].name, &hostid, NULL),
                         VS_RESULT_SERVER_STATE_IN_PROGRESS);
    assert_int_equal(vs_store_host_get(fx->st, r.hostid, &h), 0);
    assert_int_equal(h.rpc_seqno, 1);

    /* A copied client state (sequence number going back) gets a new host. */
    const char *sub3[] = {"<hostid>0</hostid>", hid};
    char *req3 = sample("sched_request_01.xml", sub3, 2);
    struct vs_proto_reply r3;
    rpc(fx, req3, &a, &r3, NULL);
    assert_true(r3.hostid > r.hostid);

    vs_free(req);
    vs_free(req2);
    vs_free(req3);
    vs_free(text);
    vs_arena_cleanup(&a);
}

static void expect_refusal(struct fixture *fx, const char *body, const char *msg_part, double delay)
{
    struct vs_arena a;
    vs_arena_init(&a, 4096);
    struct vs_proto_reply r;
    rpc(fx, body, &a, &r, NULL);
    assert_int_equal(r.n_results, 0);
    assert_int_equal(r.hostid, 0);
    assert_true(r.n_messages >= 1);
    if (!strstr(r.messages[0].text, msg_part))
        fail_msg("message '%s' lacks '%s'", r.messages[0].text, msg_part);
    assert_true(r.request_delay == delay);
    vs_arena_cleanup(&a);
}

static void test_bad_requests(void **state)
{
    struct fixture *fx = *state;
    expect_refusal(fx, "", "Invalid scheduler request", 600);
    expect_refusal(fx, "<scheduler_request><authenticator>x", "Invalid scheduler request", 600);
    expect_refusal(fx, "not xml at all", "Invalid scheduler request", 600);
    expect_refusal(fx, "<!DOCTYPE x [<!ENTITY a \"b\">]><scheduler_request/>",
                   "Invalid scheduler request", 600);
    expect_refusal(fx, "<scheduler_request></scheduler_request>", "account key", 3600);
    const char *sub[] = {AUTH, "ffffffffffffffffffffffffffffffff"};
    char *req = sample("sched_request_01.xml", sub, 2);
    expect_refusal(fx, req, "account key", 3600);
    vs_free(req);
    /* Nothing was sent by any of these. */
    assert_int_equal(result_state(fx, "wu_0_0", NULL, NULL), VS_RESULT_SERVER_STATE_UNSENT);
    struct vs_sched_stats st;
    vs_sched_get_stats(fx->s, &st);
    assert_int_equal(st.bad_rpcs, 6);
    assert_int_equal(st.jobs_sent, 0);
}

static void test_no_work_cases(void **state)
{
    struct fixture *fx = *state;
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    /* "No new tasks" set by the user. */
    const char *s1[] = {"<dont_send_work>0</dont_send_work>", "<dont_send_work>1</dont_send_work>"};
    char *req = sample("sched_request_01.xml", s1, 2);
    rpc(fx, req, &a, &r, NULL);
    assert_int_equal(r.n_results, 0);
    assert_true(r.hostid > 0); /* the host is still recorded */
    vs_free(req);
    /* A host far too slow for the deadline: nothing, and it is told why. */
    const char *s2[] = {"<p_fpops>1000000000.000000</p_fpops>", "<p_fpops>1000.000000</p_fpops>"};
    req = sample("sched_request_01.xml", s2, 2);
    rpc(fx, req, &a, &r, NULL);
    assert_int_equal(r.n_results, 0);
    assert_true(r.n_messages >= 1);
    assert_string_equal(r.messages[0].text, "No tasks sent");
    assert_true(has_msg(&r, "Tasks won't finish in time"));
    vs_free(req);
    /* An unknown platform: nothing. */
    const char *s3[] = {"<platform_name>x86_64-pc-linux-gnu</platform_name>",
                        "<platform_name>sparc-sun-solaris</platform_name>",
                        "<name>i686-pc-linux-gnu</name>", "<name>sparc64-sun-solaris</name>"};
    req = sample("sched_request_01.xml", s3, 4);
    rpc(fx, req, &a, &r, NULL);
    assert_int_equal(r.n_results, 0);
    vs_free(req);
    for (int i = 0; i < NWU; i++) {
        char name[32];
        snprintf(name, sizeof(name), "wu_%d_0", i);
        assert_int_equal(result_state(fx, name, NULL, NULL), VS_RESULT_SERVER_STATE_UNSENT);
    }
    /* Reported results in a request (h_report.c processes them) break nothing;
     * the work request in it is still served. */
    const char *s4[] = {"<hostid>7</hostid>", "<hostid>0</hostid>"};
    req = sample("sched_request_04.xml", s4, 2);
    rpc(fx, req, &a, &r, NULL);
    assert_true(r.n_results >= 1);
    vs_free(req);
    vs_arena_cleanup(&a);
}

static void test_drain(void **state)
{
    struct fixture *fx = *state;
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    const char *s1[] = {"<cpu_req_secs>1.000000</cpu_req_secs>",
                        "<cpu_req_secs>100000.000000</cpu_req_secs>"};
    char *req = sample("sched_request_01.xml", s1, 2);
    rpc(fx, req, &a, &r, NULL);
    /* 2 CPUs x 10 jobs per CPU allowed, but only NWU exist. */
    assert_int_equal(r.n_results, NWU);
    /* Every result went to exactly one host; the next request finds none. */
    rpc(fx, req, &a, &r, NULL);
    assert_int_equal(r.n_results, 0);
    assert_true(has_msg(&r, "Project has no tasks available"));
    size_t added = 9;
    assert_int_equal(vs_sched_refill(fx->s, &added), 0);
    assert_int_equal(added, 0);
    vs_free(req);
    vs_arena_cleanup(&a);
}

/* A replicated workunit (two results) never gives both to one host, in one
 * RPC or over several; another host gets the second. */
static void test_replicas(void **state)
{
    struct fixture *fx = *state;
    struct vs_workunit wu;
    vs_workunit_defaults(&wu);
    struct vs_app app;
    assert_int_equal(vs_store_app_by_name(fx->st, "primes", &app), 0);
    wu.appid = app.id;
    snprintf(wu.name, sizeof(wu.name), "rep");
    wu.rsc_fpops_est = 2e10;
    wu.delay_bound = 86400;
    wu.min_quorum = 2;
    wu.target_nresults = 2;
    wu.transition_time = VS_TIME_NEVER;
    wu.xml_doc = vs_xstrdup("<workunit>\n</workunit>\n");
    assert_int_equal(vs_store_workunit_add(fx->st, &wu), 0);
    for (int k = 0; k < 2; k++) {
        struct vs_result r = {.workunitid = wu.id, .appid = app.id};
        r.server_state = VS_RESULT_SERVER_STATE_UNSENT;
        snprintf(r.name, sizeof(r.name), "rep_%d", k);
        r.xml_doc_in = vs_xstrdup("<result>\n</result>\n");
        assert_int_equal(vs_store_result_add(fx->st, &r), 0);
        vs_result_cleanup(&r);
    }
    vs_workunit_cleanup(&wu);
    size_t added = 0;
    assert_int_equal(vs_sched_refill(fx->s, &added), 0);
    assert_int_equal(added, 2);

    /* Host A asks for everything: all plain jobs and one replica. */
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    const char *s1[] = {"<cpu_req_secs>1.000000</cpu_req_secs>",
                        "<cpu_req_secs>100000.000000</cpu_req_secs>"};
    char *req = sample("sched_request_01.xml", s1, 2);
    rpc(fx, req, &a, &r, NULL);
    int reps = 0;
    for (size_t i = 0; i < r.n_results; i++)
        reps += strncmp(r.results[i].name, "rep_", 4) == 0;
    assert_int_equal(reps, 1);
    assert_int_equal(r.n_results, NWU + 1);
    /* Host A again (same hostid, next seqno): the other replica is not for it. */
    char hid[64];
    snprintf(hid, sizeof(hid), "<hostid>%lld</hostid>", (long long)r.hostid);
    const char *s2[] = {"<hostid>0</hostid>",
                        hid,
                        "<rpc_seqno>0</rpc_seqno>",
                        "<rpc_seqno>1</rpc_seqno>",
                        "<cpu_req_secs>1.000000</cpu_req_secs>",
                        "<cpu_req_secs>100000.000000</cpu_req_secs>"};
    char *req2 = sample("sched_request_01.xml", s2, 6);
    rpc(fx, req2, &a, &r, NULL);
    assert_int_equal(r.n_results, 0);
    /* Host B (a new one) gets it. */
    rpc(fx, req, &a, &r, NULL);
    assert_int_equal(r.n_results, 1);
    assert_int_equal(strncmp(r.results[0].name, "rep_", 4), 0);
    vs_free(req);
    vs_free(req2);
    vs_arena_cleanup(&a);
}

/* Many hosts at once, more demand than jobs: every job goes to exactly one
 * host, and what the hosts were told matches what the store recorded. */
struct racer {
    struct fixture *fx;
    int nrpcs;
    char names[16][64];
    int nnames;
};

static void *race(void *arg)
{
    struct racer *r = arg;
    char *req = sample("sched_request_01.xml", NULL, 0);
    for (int k = 0; k < r->nrpcs; k++) {
        struct vs_buf out;
        vs_buf_init(&out, 16u << 20);
        int st = vs_sched_handle(r->fx->s, req, strlen(req), "127.0.0.1", NOW, &out);
        if (st == 200) {
            const char *p = out.data;
            while ((p = strstr(p, "<result>\n    <name>")) != NULL) {
                p += strlen("<result>\n    <name>");
                size_t n = strcspn(p, "<");
                if (r->nnames < 16 && n < 64) {
                    memcpy(r->names[r->nnames], p, n);
                    r->names[r->nnames][n] = '\0';
                    r->nnames++;
                }
            }
        }
        vs_buf_cleanup(&out);
    }
    vs_free(req);
    return NULL;
}

static void test_concurrent_hosts(void **state)
{
    struct fixture *fx = *state;
    enum { NT = 8 };
    pthread_t t[NT];
    struct racer r[NT];
    for (int i = 0; i < NT; i++) {
        memset(&r[i], 0, sizeof(r[i]));
        r[i].fx = fx;
        r[i].nrpcs = 3;
        assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
    }
    int total = 0;
    char seen[NWU] = {0};
    for (int i = 0; i < NT; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        for (int k = 0; k < r[i].nnames; k++) {
            int w = -1;
            assert_int_equal(sscanf(r[i].names[k], "wu_%d_0", &w), 1);
            assert_true(w >= 0 && w < NWU);
            assert_int_equal(seen[w], 0); /* never sent twice */
            seen[w] = 1;
            total++;
        }
    }
    assert_int_equal(total, NWU);
    int64_t n = 0;
    assert_int_equal(vs_store_count_results(fx->st, 0, VS_RESULT_SERVER_STATE_IN_PROGRESS, &n), 0);
    assert_int_equal(n, NWU);
    struct vs_sched_stats st;
    vs_sched_get_stats(fx->s, &st);
    assert_int_equal(st.rpcs, NT * 3);
    assert_int_equal(st.jobs_sent, NWU);
    assert_int_equal(st.commit_items, NT * 3);
}

/* The account's CPID as the store holds it. */
static void stored_cpid(struct fixture *fx, char *out, size_t n)
{
    struct vs_user u = {0};
    assert_int_equal(vs_store_user_get(fx->st, fx->userid, &u), 0);
    snprintf(out, n, "%s", u.cross_project_id);
    vs_user_cleanup(&u);
}

/* One RPC of the sample with the account key auth and the request's
 * <cross_project_id> cpid; the reply's CPID into got (n bytes). */
static void cpid_rpc(struct fixture *fx, const char *auth, const char *cpid, char *got, size_t n)
{
    char key[128], tag[160];
    snprintf(key, sizeof(key), "<authenticator>%s</authenticator>", auth);
    snprintf(tag, sizeof(tag), "<cross_project_id>%s</cross_project_id>", cpid);
    const char *sub[] = {"<authenticator>" AUTH "</authenticator>", key,
                         "<cross_project_id></cross_project_id>", tag};
    char *req = sample("sched_request_01.xml", sub, 4);
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    rpc(fx, req, &a, &r, NULL);
    snprintf(got, n, "%s", r.cross_project_id ? r.cross_project_id : "");
    vs_arena_cleanup(&a);
    vs_free(req);
}

/* BOINC-COMPAT (authenticate_user): the CPID a client brings from the
 * volunteer's other projects becomes the account's, so one volunteer has
 * one CPID on every project; not on a weak key, not when malformed. */
static void test_cpid_adopt(void **state)
{
    struct fixture *fx = *state;
    char own[VS_AUTH_MAX], got[VS_AUTH_MAX], now[VS_AUTH_MAX];
    stored_cpid(fx, own, sizeof(own));
    assert_int_equal(strlen(own), 32);
    /* The client does not know it yet: the reply tells it. */
    cpid_rpc(fx, AUTH, "", got, sizeof(got));
    assert_string_equal(got, own);

    const char *other = "fedcba9876543210fedcba9876543210";
    cpid_rpc(fx, AUTH, other, got, sizeof(got));
    stored_cpid(fx, now, sizeof(now));
    assert_string_equal(now, other);
    assert_string_equal(got, other);
    /* The next request (the cached account) still says the adopted one. */
    cpid_rpc(fx, AUTH, "", got, sizeof(got));
    assert_string_equal(got, other);

    /* A weak key ("ID_" md5(key + password hash)) opens the account but
     * does not change its CPID. */
    struct vs_user u = {0};
    assert_int_equal(vs_store_user_get(fx->st, fx->userid, &u), 0);
    char both[VS_AUTH_MAX + VS_NAME_MAX], md5[VS_MD5_HEX_LEN + 1], weak[80];
    snprintf(both, sizeof(both), "%s%s", u.authenticator, u.passwd_hash);
    vs_user_cleanup(&u);
    assert_int_equal(vs_md5_hex(both, strlen(both), md5), 0);
    snprintf(weak, sizeof(weak), "%lld_%s", (long long)fx->userid, md5);
    cpid_rpc(fx, weak, "00000000000000000000000000000001", got, sizeof(got));
    stored_cpid(fx, now, sizeof(now));
    assert_string_equal(now, other);

    /* Not 32 lowercase hex digits: refused. */
    const char *bad[] = {"FEDCBA9876543210FEDCBA9876543210", "abc",
                         "fedcba9876543210fedcba9876543210ff",
                         "fedcba9876543210fedcba987654321&amp;"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cpid_rpc(fx, AUTH, bad[i], got, sizeof(got));
        stored_cpid(fx, now, sizeof(now));
        assert_string_equal(now, other);
        assert_string_equal(got, other);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_attach, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_requests, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_work_cases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_hosts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replicas, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpid_adopt, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
