/*
 * The scheduler handler's test fixture (test_sched_rules.c, test_sched_tags.c):
 * a project in a temporary directory with a real SQLite store, one app with
 * one version, two users and a number of workunits, a scheduler on it, and
 * requests made from the BOINC 7.20.5 client's sched_request_01.xml with
 * elements rewritten. Include after vs_test.h.
 */
#ifndef VS_TEST_SCHED_FIXTURE_H
#define VS_TEST_SCHED_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "volsched/sched.h"
#include "store_backend.h"
#include "volsched/store.h"
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
    /* config.xml tags read on top of the defaults through the config
     * reader, e.g. "<dont_send_jobs/>" (NULL: none) */
    const char *config_xml;
};

struct fx {
    char dir[64];
    struct vs_project_config cfg;
    struct vs_store *st;
    struct vs_sched *s;
    int64_t avid;
};

/* sched_request_01.xml with (old, new) pairs substituted. */
static inline char *request(const char *const *subst, size_t n)
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

static inline void build(struct fx *f, const struct vs_sp_config *pol, const struct spec *sp)
{
    memset(f, 0, sizeof(*f));
    snprintf(f->dir, sizeof(f->dir), "/tmp/vs_rules_XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    struct vs_project_config *c = &f->cfg;
    assert_int_equal(vs_project_config_defaults(c, f->dir, "Rules", "http://127.0.0.1:8080/r/"), 0);
    vs_test_store_url(c->store_url, sizeof(c->store_url), f->dir, "t.db");
    c->policy = *pol;
    /* The requests here list none of the host's jobs in <other_results>:
     * with resend_lost_results (a project's default) they would come back
     * as lost. These tests are about the send rules; a test of the tag
     * turns it on in its config.xml. */
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
    if (sp->config_xml) {
        char *xml = NULL;
        assert_true(asprintf(&xml, "<boinc><config>%s</config></boinc>", sp->config_xml) > 0);
        struct vs_config_error ce;
        if (vs_project_config_parse(c, xml, strlen(xml), "config.xml", NULL, &ce) != 0)
            fail_msg("config.xml: %s", ce.msg);
        free(xml);
    }
    assert_int_equal(vs_sched_create(c, NULL, NULL, &f->s), 0);
    size_t added = 0;
    assert_int_equal(vs_sched_refill(f->s, &added), 0);
}

static inline void destroy(struct fx *f)
{
    vs_sched_destroy(f->s);
    vs_store_close(f->st);
    vs_test_store_drop(f->cfg.store_url);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
}

static inline void rpc_at(struct fx *f, const char *body, int64_t now, struct vs_arena *a,
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

static inline bool has_msg(const struct vs_proto_reply *r, const char *text)
{
    for (size_t i = 0; i < r->n_messages; i++)
        if (strstr(r->messages[i].text, text))
            return true;
    return false;
}

/* One request on a fresh project: the number of jobs sent; *r the reply. */
static inline size_t one(const struct vs_sp_config *pol, const struct spec *sp, const char *const *subst,
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

static inline struct vs_sp_config defaults(void)
{
    struct vs_sp_config c;
    vs_sp_config_defaults(&c);
    return c;
}

static inline char *host_request(const char *auth, int64_t hostid, int seqno)
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

#endif
