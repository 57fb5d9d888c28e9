/*
 * The locality tests' project (test_locality.c, test_locality_wait.c): a
 * scheduler over a real SQLite store in a temp directory with a
 * full-locality app "einstein", a plain app, three users, and helpers that
 * build requests from a real BOINC 7.20.5 request (tests/data/boinc) with a
 * sticky-file list and run them through the real handler. Include after
 * vs_test.h.
 */
#ifndef VOLSCHED_TESTS_LOCALITY_FIXTURE_H
#define VOLSCHED_TESTS_LOCALITY_FIXTURE_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "volsched/loc_dirs.h"
#include "volsched/sched.h"
#include "store_backend.h"
#include "server/sched_int.h"
#include "volsched/store.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/locality.h"
#include "volsched/proto.h"
#include "volsched/str.h"
#include <sqlite3.h>

#include "sched_request.h"
#include "sched_project.h"

#define SAMPLES VS_SOURCE_DIR "/tests/data/boinc"
#define AUTH_A  "0123456789abcdef0123456789abcdef" /* the sample's authenticator */
#define AUTH_B  "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define AUTH_C  "cccccccccccccccccccccccccccccccc"
#define NOW     TP_NOW
#define BIG     1.5e8 /* bytes of a locality file */

struct fixture {
    char dir[64];
    struct vs_project_config cfg;
    struct vs_store *st;
    struct vs_sched *s;
    int64_t app_loc, app_plain;
    int64_t users[3];
};


static inline void add_user(struct fixture *fx, int i, const char *name, const char *auth)
{
    struct vs_user u = {0};
    snprintf(u.name, sizeof(u.name), "%s", name);
    snprintf(u.authenticator, sizeof(u.authenticator), "%s", auth);
    assert_int_equal(vs_store_user_add(fx->st, &u), 0);
    fx->users[i] = u.id;
    vs_user_cleanup(&u);
}

/* Adds workunit FILE__idx of the locality app with nres unsent results
 * (FILE__idx_k); returns the workunit id. */
static inline int64_t add_wu(struct vs_store *st, int64_t appid, const char *file, int idx, int nres)
{
    struct vs_workunit wu;
    vs_workunit_defaults(&wu);
    wu.appid = appid;
    snprintf(wu.name, sizeof(wu.name), "%s__%d", file, idx);
    wu.rsc_fpops_est = 2e10;
    wu.rsc_fpops_bound = 2e13;
    wu.rsc_memory_bound = 1e8;
    wu.rsc_disk_bound = BIG + 5e7;
    wu.delay_bound = 86400;
    wu.target_nresults = nres;
    wu.min_quorum = nres;
    wu.transition_time = VS_TIME_NEVER;
    char doc[1024];
    snprintf(doc, sizeof(doc),
             "<file_info>\n    <name>%s</name>\n    <sticky/>\n    <report_on_rpc/>\n"
             "    <url>http://127.0.0.1:8080/test/download/1a/%s</url>\n"
             "    <md5_cksum>00000000000000000000000000000000</md5_cksum>\n"
             "    <nbytes>%.0f</nbytes>\n</file_info>\n"
             "<workunit>\n    <file_ref>\n        <file_name>%s</file_name>\n"
             "        <open_name>in</open_name>\n    </file_ref>\n</workunit>\n",
             file, file, BIG, file);
    wu.xml_doc = vs_xstrdup(doc);
    assert_int_equal(vs_store_workunit_add(st, &wu), 0);
    int64_t id = wu.id;
    for (int k = 0; k < nres; k++) {
        struct vs_result r = {0};
        r.workunitid = wu.id;
        r.appid = appid;
        r.server_state = VS_RESULT_SERVER_STATE_UNSENT;
        assert_true((size_t)snprintf(r.name, sizeof(r.name), "%.200s_%d", wu.name, k) <
                    sizeof(r.name));
        snprintf(doc, sizeof(doc),
                 "<file_info>\n    <name>%s_out</name>\n"
                 "    <url>http://127.0.0.1:8080/test/file_upload_handler</url>\n"
                 "    <max_nbytes>100000</max_nbytes>\n</file_info>\n"
                 "<result>\n    <file_ref>\n        <file_name>%s_out</file_name>\n"
                 "        <open_name>out</open_name>\n    </file_ref>\n</result>\n",
                 r.name, r.name);
        r.xml_doc_in = vs_xstrdup(doc);
        assert_int_equal(vs_store_result_add(st, &r), 0);
        vs_result_cleanup(&r);
    }
    vs_workunit_cleanup(&wu);
    return id;
}

static inline struct fixture *make(int wait_period, bool sorted)
{
    struct fixture *fx = VS_NEW(struct fixture);
    snprintf(fx->dir, sizeof(fx->dir), "/tmp/vs_loc_XXXXXX");
    assert_non_null(mkdtemp(fx->dir));
    struct vs_project_config *c = &fx->cfg;
    tp_config(c, fx->dir, "Locality Test");
    c->policy.one_result_per_user_per_wu = true;
    c->locality_scheduling = true;
    c->locality_scheduling_wait_period = wait_period;
    c->locality_scheduling_sorted_order = sorted;

    assert_int_equal(vs_store_open(c->store_url, VS_STORE_CREATE, NULL, &fx->st), 0);
    struct vs_platform pf = {0};
    snprintf(pf.name, sizeof(pf.name), "x86_64-pc-linux-gnu");
    assert_int_equal(vs_store_platform_add(fx->st, &pf), 0);
    struct vs_app app = {0};
    snprintf(app.name, sizeof(app.name), "einstein");
    app.locality_scheduling = VS_LOC_APP_FULL;
    assert_int_equal(vs_store_app_add(fx->st, &app), 0);
    fx->app_loc = app.id;
    (void)tp_add_app_version(fx->st, app.id, pf.id, "einstein_100");
    struct vs_app plain = {0};
    snprintf(plain.name, sizeof(plain.name), "plain");
    assert_int_equal(vs_store_app_add(fx->st, &plain), 0);
    fx->app_plain = plain.id;
    (void)tp_add_app_version(fx->st, plain.id, pf.id, "plain_100");
    add_user(fx, 0, "alice", AUTH_A);
    add_user(fx, 1, "bob", AUTH_B);
    add_user(fx, 2, "carol", AUTH_C);
    return fx;
}

/* Starts the scheduler once the store has its rows. */
static inline void start(struct fixture *fx)
{
    assert_int_equal(vs_sched_create(&fx->cfg, NULL, NULL, &fx->s), 0);
    size_t added = 0;
    assert_int_equal(vs_sched_refill(fx->s, &added), 0);
}

static inline int setup(void **state)
{
    *state = make(0, true);
    return 0;
}

static inline int teardown(void **state)
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

/* A request of user auth from host hostid (0: new) asking for cpu_secs of
 * work, holding the sticky files files[0..n) of BIG bytes each. */
static inline char *request(const char *auth, int64_t hostid, int seqno, double cpu_secs,
                     const char *const *files, size_t n)
{
    char *text = vs_test_slurp(SAMPLES "/sched_request_01.xml", NULL);
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    const char *subst[][2] = {
        {AUTH_A, auth},
        {"<hostid>0</hostid>", NULL},
        {"<rpc_seqno>0</rpc_seqno>", NULL},
        {"<cpu_req_secs>1.000000</cpu_req_secs>", NULL},
        {"</scheduler_request>", NULL},
    };
    char hid[64], seq[64], secs[64];
    snprintf(hid, sizeof(hid), "<hostid>%lld</hostid>", (long long)hostid);
    snprintf(seq, sizeof(seq), "<rpc_seqno>%d</rpc_seqno>", seqno);
    snprintf(secs, sizeof(secs), "<cpu_req_secs>%f</cpu_req_secs>", cpu_secs);
    subst[1][1] = hid;
    subst[2][1] = seq;
    subst[3][1] = secs;
    struct vs_buf tail;
    vs_buf_init(&tail, VS_BUF_UNLIMITED);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(vs_buf_printf(&tail,
                                       "    <file_info>\n        <name>%s</name>\n"
                                       "        <nbytes>%f</nbytes>\n        <status>1</status>\n"
                                       "    </file_info>\n",
                                       files[i], BIG),
                         0);
    assert_int_equal(vs_buf_puts(&tail, "</scheduler_request>"), 0);
    subst[4][1] = vs_buf_str(&tail);
    const char *at = text;
    for (size_t i = 0; i < 5; i++) {
        const char *p = strstr(at, subst[i][0]);
        assert_non_null(p);
        assert_int_equal(vs_buf_append(&b, at, (size_t)(p - at)), 0);
        assert_int_equal(vs_buf_puts(&b, subst[i][1]), 0);
        at = p + strlen(subst[i][0]);
    }
    assert_int_equal(vs_buf_puts(&b, at), 0);
    vs_buf_cleanup(&tail);
    vs_free(text);
    return vs_buf_take(&b, NULL);
}

/* Runs one request; the reply goes to *r (in a), its text to *out_text (may be NULL). */
static inline void rpc(struct fixture *fx, const char *body, struct vs_arena *a,
                       struct vs_proto_reply *r, char **out_text)
{
    tp_rpc(fx->s, body, a, r, out_text);
}

/* One request from a fresh string: the reply in *r. */
static inline void ask(struct fixture *fx, const char *auth, int64_t hostid, int seqno, double secs,
                const char *const *files, size_t n, struct vs_arena *a, struct vs_proto_reply *r)
{
    char *req = request(auth, hostid, seqno, secs, files, n);
    rpc(fx, req, a, r, NULL);
    vs_free(req);
}

static inline void check_golden(const char *text, const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/tests/golden/locality/%s", VS_SOURCE_DIR, name);
    char *norm = vs_xstrdup(text);
    /* wall-clock and random values (the account's CPID) */
    const char *tags[] = {"<user_create_time>", "<cross_project_id>"};
    for (size_t t = 0; t < 2; t++)
        for (char *p = strstr(norm, tags[t]); p; p = strstr(p + 1, tags[t]))
            for (char *q = p + strlen(tags[t]); *q && *q != '<'; q++)
                *q = 'X';
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

/* One number from the store, through a separate connection. */
static inline int64_t sql_count(const struct fixture *fx, const char *sql)
{
    return vs_test_sql_i64(fx->cfg.store_url, sql);
}

static inline bool has_delete(const struct vs_proto_reply *r, const char *f)
{
    for (size_t i = 0; i < r->n_delete_file_infos; i++)
        if (strcmp(r->delete_file_infos[i], f) == 0)
            return true;
    return false;
}

static inline bool trigger(const struct fixture *fx, enum vs_loc_dir d, const char *f)
{
    return vs_loc_exists(fx->cfg.dir, d, f);
}

/* The result ids of a reply, by name lookup. */
static inline void reply_ids(struct fixture *fx, const struct vs_proto_reply *r, int64_t *ids)
{
    for (size_t i = 0; i < r->n_results; i++) {
        struct vs_result res = {0};
        assert_int_equal(vs_store_result_by_name(fx->st, r->results[i].name, &res), 0);
        ids[i] = res.id;
        vs_result_cleanup(&res);
    }
}

#endif
