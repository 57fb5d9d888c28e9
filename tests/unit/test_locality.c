/*
 * Locality scheduling (seed 001) end to end without HTTP: requests built
 * from a real BOINC 7.20.5 request (tests/data/boinc) with sticky-file
 * lists go into the real handler over a real SQLite store and the real
 * trigger directories; replies are parsed back and checked, and some
 * against golden files in tests/golden/locality/ (VS_UPDATE_GOLDEN=1
 * rewrites them). Also the pure decisions of volsched/locality.h.
 */
#include "vs_test.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "server/loc_dirs.h"
#include "server/sched.h"
#include "server/sched_int.h"
#include "store/store.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/locality.h"
#include "volsched/proto.h"
#include "volsched/str.h"

#define SAMPLES VS_SOURCE_DIR "/tests/data/boinc"
#define AUTH_A  "0123456789abcdef0123456789abcdef" /* the sample's authenticator */
#define AUTH_B  "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define AUTH_C  "cccccccccccccccccccccccccccccccc"
#define NOW     1800000000
#define BIG     1.5e8 /* bytes of a locality file */

static const char key_text[] = "1024\n"
                               "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n"
                               ".\n";
static const char sig_text[] = "aabbccdd\n.\n";

struct fixture {
    char dir[64];
    struct vs_project_config cfg;
    struct vs_store *st;
    struct vs_sched *s;
    int64_t app_loc, app_plain;
    int64_t users[3];
};

/* ------------------------------------------------------------------------ */
/* The pure decisions                                                        */
/* ------------------------------------------------------------------------ */

static void test_names(void **state)
{
    (void)state;
    assert_true(vs_loc_file_name_ok("h1_0050.20_S5R4", 15));
    assert_false(vs_loc_file_name_ok("a__b", 4));
    assert_false(vs_loc_file_name_ok("../etc", 6));
    assert_false(vs_loc_file_name_ok("a/b", 3));
    assert_false(vs_loc_file_name_ok("", 0));
    assert_false(vs_loc_file_name_ok("a b", 3));
    char f[64], lo[64], hi[64];
    assert_int_equal(vs_loc_file_of_wu("h1_0050__12_3", f, sizeof(f)), 0);
    assert_string_equal(f, "h1_0050");
    assert_int_equal(vs_loc_file_of_wu("nounderscores", f, sizeof(f)), VS_EINVAL);
    assert_int_equal(vs_loc_file_of_wu("__x", f, sizeof(f)), VS_EINVAL);
    assert_int_equal(vs_loc_file_of_wu("a/b__x", f, sizeof(f)), VS_EINVAL);
    assert_int_equal(vs_loc_wu_range("F", lo, hi, sizeof(lo)), 0);
    assert_string_equal(lo, "F__");
    assert_true(strcmp("F__zzz~~~", hi) < 0 && strcmp("F__", lo) >= 0);
    assert_true(strcmp("F_a", lo) > 0 && strcmp("F_a", hi) > 0); /* not F's */
    assert_true(strcmp("F0__1", lo) < 0);                        /* file F0, not F */
}

static void test_order(void **state)
{
    (void)state;
    const char *in[] = {"c", "a", "bad/x", "b", "a", "..", "d"};
    const char *out[7];
    size_t bad = 0;
    size_t n = vs_loc_order_files(in, 7, true, 0, out, 7, &bad);
    assert_int_equal(n, 4);
    assert_int_equal(bad, 2);
    assert_string_equal(out[0], "a");
    assert_string_equal(out[3], "d");
    n = vs_loc_order_files(in, 7, false, 2, out, 7, NULL);
    assert_int_equal(n, 4);
    assert_string_equal(out[0], "c"); /* rotated to start at index 2 */
    assert_string_equal(out[1], "d");
    assert_string_equal(out[2], "a");
    n = vs_loc_order_files(in, 7, true, 0, out, 2, NULL);
    assert_int_equal(n, 2);
    const char *held[] = {"a", "b"};
    const char *names[] = {"a", "x"};
    double sizes[] = {100, 50};
    assert_true(vs_loc_disk_credit(names, sizes, 2, held, 2, 1000) == 100);
    assert_true(vs_loc_disk_credit(names, sizes, 2, held, 2, 30) == 30);
    assert_int_equal(vs_loc_working_set_target(10000, 2), 5000);
    assert_int_equal(vs_loc_working_set_target(3, 2), 2);
    assert_int_equal(vs_loc_working_set_target(0, 2), 1);
}

static void test_after_search(void **state)
{
    (void)state;
    struct vs_loc_file_action a;
    struct vs_loc_file_facts f = {.work_needed = true, .known = true};
    /* No generator, nothing left: delete, and tell the working-set manager. */
    vs_loc_after_search(&f, &a);
    assert_true(a.delete_file && a.files_no_work && !a.need_work && !a.wait);
    /* Only results this user may not have: delete, keep it in the working set. */
    f.any_unsent = true;
    vs_loc_after_search(&f, &a);
    assert_true(a.delete_file && !a.files_no_work);
    /* A generator: ask it, wait once, keep the file. */
    f.any_unsent = false;
    f.on_demand = true;
    vs_loc_after_search(&f, &a);
    assert_true(a.need_work && a.wait && !a.delete_file);
    f.waited = true;
    vs_loc_after_search(&f, &a);
    assert_true(a.need_work && !a.wait && !a.delete_file);
    /* The generator said there is no more. */
    f.no_work_available = true;
    vs_loc_after_search(&f, &a);
    assert_true(!a.need_work && a.delete_file);
    /* Sent something, stopped, host full, unknown file: nothing. */
    struct vs_loc_file_facts g[] = {
        {.work_needed = true, .known = true, .sent = 1},
        {.work_needed = true, .known = true, .stopped = true},
        {.work_needed = false, .known = true},
        {.work_needed = true, .known = false},
    };
    for (size_t i = 0; i < 4; i++) {
        vs_loc_after_search(&g[i], &a);
        assert_false(a.need_work || a.wait || a.files_no_work || a.delete_file);
    }
}

/* ------------------------------------------------------------------------ */
/* The handler                                                               */
/* ------------------------------------------------------------------------ */

static void add_user(struct fixture *fx, int i, const char *name, const char *auth)
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
static int64_t add_wu(struct vs_store *st, int64_t appid, const char *file, int idx, int nres)
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

static void add_av(struct fixture *fx, int64_t appid, int64_t platformid, const char *name)
{
    struct vs_app_version av = {0};
    av.appid = appid;
    av.platformid = platformid;
    av.version_num = 100;
    av.avg_ncpus = 1;
    struct vs_app_version_file file = {0};
    snprintf(file.name, sizeof(file.name), "%s_100", name);
    snprintf(file.path, sizeof(file.path), "3f/%s_100", name);
    snprintf(file.md5_cksum, sizeof(file.md5_cksum), "0123456789abcdef0123456789abcdef");
    file.nbytes = 17000;
    file.file_signature = vs_xstrdup(sig_text);
    file.main_program = 1;
    file.executable = 1;
    av.files = &file;
    av.nfiles = 1;
    assert_int_equal(vs_store_app_version_add(fx->st, &av), 0);
    vs_free(file.file_signature);
}

static struct fixture *make(int wait_period, bool sorted)
{
    struct fixture *fx = VS_NEW(struct fixture);
    snprintf(fx->dir, sizeof(fx->dir), "/tmp/vs_loc_XXXXXX");
    assert_non_null(mkdtemp(fx->dir));
    struct vs_project_config *c = &fx->cfg;
    snprintf(c->dir, sizeof(c->dir), "%s", fx->dir);
    snprintf(c->long_name, sizeof(c->long_name), "Locality Test");
    snprintf(c->master_url, sizeof(c->master_url), "http://127.0.0.1:8080/test/");
    snprintf(c->download_url, sizeof(c->download_url), "http://127.0.0.1:8080/test/download");
    snprintf(c->upload_url, sizeof(c->upload_url),
             "http://127.0.0.1:8080/test/file_upload_handler");
    snprintf(c->cgi_url, sizeof(c->cgi_url), "http://127.0.0.1:8080/test/");
    snprintf(c->download_dir, sizeof(c->download_dir), "%s/download", fx->dir);
    snprintf(c->key_dir, sizeof(c->key_dir), "%s/keys", fx->dir);
    snprintf(c->store_url, sizeof(c->store_url), "sqlite:%s/t.db", fx->dir);
    vs_sp_config_defaults(&c->policy);
    c->policy.one_result_per_user_per_wu = true;
    c->locality_scheduling = true;
    c->locality_scheduling_wait_period = wait_period;
    c->locality_scheduling_sorted_order = sorted;
    assert_int_equal(mkdir(c->key_dir, 0700), 0);
    char path[VS_PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/code_sign_public", c->key_dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(key_text, f);
    fclose(f);

    assert_int_equal(vs_store_open(c->store_url, VS_STORE_CREATE, NULL, &fx->st), 0);
    struct vs_platform pf = {0};
    snprintf(pf.name, sizeof(pf.name), "x86_64-pc-linux-gnu");
    assert_int_equal(vs_store_platform_add(fx->st, &pf), 0);
    struct vs_app app = {0};
    snprintf(app.name, sizeof(app.name), "einstein");
    app.locality_scheduling = VS_LOC_APP_FULL;
    assert_int_equal(vs_store_app_add(fx->st, &app), 0);
    fx->app_loc = app.id;
    add_av(fx, app.id, pf.id, "einstein");
    struct vs_app plain = {0};
    snprintf(plain.name, sizeof(plain.name), "plain");
    assert_int_equal(vs_store_app_add(fx->st, &plain), 0);
    fx->app_plain = plain.id;
    add_av(fx, plain.id, pf.id, "plain");
    add_user(fx, 0, "alice", AUTH_A);
    add_user(fx, 1, "bob", AUTH_B);
    add_user(fx, 2, "carol", AUTH_C);
    return fx;
}

/* Starts the scheduler once the store has its rows. */
static void start(struct fixture *fx)
{
    assert_int_equal(vs_sched_create(&fx->cfg, NULL, NULL, &fx->s), 0);
    size_t added = 0;
    assert_int_equal(vs_sched_refill(fx->s, &added), 0);
}

static int setup(void **state)
{
    *state = make(0, true);
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    vs_sched_destroy(fx->s);
    vs_store_close(fx->st);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", fx->dir);
    assert_int_equal(system(cmd), 0);
    vs_free(fx);
    return 0;
}

/* A request of user auth from host hostid (0: new) asking for cpu_secs of
 * work, holding the sticky files files[0..n) of BIG bytes each. */
static char *request(const char *auth, int64_t hostid, int seqno, double cpu_secs,
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

/* Replaces the first old in text (taken over) by new. */
static char *subst(char *text, const char *old, const char *new_text)
{
    char *at = strstr(text, old);
    assert_non_null(at);
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    assert_int_equal(vs_buf_append(&b, text, (size_t)(at - text)), 0);
    assert_int_equal(vs_buf_puts(&b, new_text), 0);
    assert_int_equal(vs_buf_puts(&b, at + strlen(old)), 0);
    vs_free(text);
    return vs_buf_take(&b, NULL);
}

/* Runs one request; the reply goes to *r (in a), its text to *out_text (may be NULL). */
static void rpc(struct fixture *fx, const char *body, struct vs_arena *a, struct vs_proto_reply *r,
                char **out_text)
{
    struct vs_buf out;
    vs_buf_init(&out, 16u << 20);
    assert_int_equal(vs_sched_handle(fx->s, body, strlen(body), "127.0.0.1", NOW, &out), 200);
    struct vs_proto_error err = {0};
    if (vs_proto_reply_parse(out.data, out.len, a, r, &err) != 0)
        fail_msg("reply does not parse: %s\n%s", err.msg, out.data);
    if (out_text)
        *out_text = vs_buf_take(&out, NULL);
    vs_buf_cleanup(&out);
}

/* One request from a fresh string: the reply in *r. */
static void ask(struct fixture *fx, const char *auth, int64_t hostid, int seqno, double secs,
                const char *const *files, size_t n, struct vs_arena *a, struct vs_proto_reply *r)
{
    char *req = request(auth, hostid, seqno, secs, files, n);
    rpc(fx, req, a, r, NULL);
    vs_free(req);
}

static void check_golden(const char *text, const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/tests/golden/locality/%s", VS_SOURCE_DIR, name);
    char *norm = vs_xstrdup(text);
    const char *tag = "<user_create_time>";
    for (char *p = strstr(norm, tag); p; p = strstr(p + 1, tag))
        for (char *q = p + strlen(tag); *q && *q != '<'; q++)
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

/* One number from the store file, through a separate read-only connection. */
#include <sqlite3.h>
static int64_t sql_count(const struct fixture *fx, const char *sql)
{
    char path[200];
    snprintf(path, sizeof(path), "%s/t.db", fx->dir);
    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static bool has_delete(const struct vs_proto_reply *r, const char *f)
{
    for (size_t i = 0; i < r->n_delete_file_infos; i++)
        if (strcmp(r->delete_file_infos[i], f) == 0)
            return true;
    return false;
}

static bool trigger(const struct fixture *fx, enum vs_loc_dir d, const char *f)
{
    return vs_loc_exists(fx->cfg.dir, d, f);
}

/* The result ids of a reply, by name lookup. */
static void reply_ids(struct fixture *fx, const struct vs_proto_reply *r, int64_t *ids)
{
    for (size_t i = 0; i < r->n_results; i++) {
        struct vs_result res = {0};
        assert_int_equal(vs_store_result_by_name(fx->st, r->results[i].name, &res), 0);
        ids[i] = res.id;
        vs_result_cleanup(&res);
    }
}

/* A host holding F1 gets F1's results (one per workunit, ids increasing),
 * the file_info of F1 marked sticky and report_on_rpc, and nothing of F2;
 * the golden reply pins the whole wire form. */
static void test_host_file(void **state)
{
    struct fixture *fx = *state;
    for (int i = 0; i < 3; i++) {
        add_wu(fx->st, fx->app_loc, "F1", i, 2);
        add_wu(fx->st, fx->app_loc, "F2", i, 2);
    }
    start(fx);
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    const char *files[] = {"F1"};
    char *req = request(AUTH_A, 0, 0, 100000, files, 1);
    char *text = NULL;
    rpc(fx, req, &a, &r, &text);
    /* F1's three first, then (the host still wants work) another file's. */
    assert_int_equal(r.n_results, 6);
    int64_t ids[8];
    reply_ids(fx, &r, ids);
    for (size_t i = 0; i < r.n_results; i++) {
        assert_int_equal(strncmp(r.results[i].name, i < 3 ? "F1__" : "F2__", 4), 0);
        if (i > 0 && i != 3)
            assert_true(ids[i] > ids[i - 1]);
    }
    bool found = false;
    for (size_t i = 0; i < r.n_file_infos; i++)
        if (strcmp(r.file_infos[i].name, "F1") == 0)
            found = r.file_infos[i].sticky && r.file_infos[i].report_on_rpc;
    assert_true(found);
    assert_int_equal(r.n_delete_file_infos, 0);
    check_golden(text, "host_file_reply.xml");
    vs_free(text);
    vs_free(req);
    vs_arena_cleanup(&a);
}

/* A host with no files gets a working-set file first; while it still
 * wants work, the deterministic scan finds the next file with work. */
static void test_new_host(void **state)
{
    struct fixture *fx = *state;
    for (int i = 0; i < 2; i++) {
        add_wu(fx->st, fx->app_loc, "A1", i, 1);
        add_wu(fx->st, fx->app_loc, "B1", i, 1);
    }
    start(fx);
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    assert_int_equal(vs_loc_touch(fx->cfg.dir, VS_LOC_WORKING_SET, "B1"), 0);
    ask(fx, AUTH_A, 0, 0, 100000, NULL, 0, &a, &r);
    /* B1's first; the host still wants work, so the scan adds A1's. */
    assert_int_equal(r.n_results, 4);
    for (size_t i = 0; i < r.n_results; i++)
        assert_int_equal(strncmp(r.results[i].name, i < 2 ? "B1__" : "A1__", 4), 0);
    /* Both used up: the next host finds B1 without work and tells the
     * working-set manager (files_no_work/B1); nothing to send. */
    ask(fx, AUTH_B, 0, 0, 100000, NULL, 0, &a, &r);
    assert_int_equal(r.n_results, 0);
    assert_true(trigger(fx, VS_LOC_FILES_NO_WORK, "B1"));
    vs_arena_cleanup(&a);
}

/* No generator: a host holding a used-up file is told to delete it, the
 * working-set manager is told the file has no work. */
static void test_delete(void **state)
{
    struct fixture *fx = *state;
    add_wu(fx->st, fx->app_loc, "D1", 0, 1);
    add_wu(fx->st, fx->app_loc, "D2", 0, 1);
    start(fx);
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    const char *d1[] = {"D1"};
    ask(fx, AUTH_A, 0, 0, 1, d1, 1, &a, &r);
    assert_int_equal(r.n_results, 1);
    assert_int_equal(r.n_delete_file_infos, 0);
    /* The next host with D1: nothing left for D1, so delete it; it gets D2. */
    char *req = request(AUTH_B, 0, 0, 1, d1, 1);
    char *text = NULL;
    rpc(fx, req, &a, &r, &text);
    assert_true(has_delete(&r, "D1"));
    assert_true(trigger(fx, VS_LOC_FILES_NO_WORK, "D1"));
    assert_int_equal(r.n_results, 1);
    assert_int_equal(strncmp(r.results[0].name, "D2__", 4), 0);
    check_golden(text, "delete_reply.xml");
    vs_free(text);
    vs_free(req);
    vs_arena_cleanup(&a);
}

/* one_result_per_user_per_wu and the ID-order invariant with retries:
 * each user's results of a file go out in increasing id order, never two
 * of one workunit, and a retry (a new result with a higher id) reaches a
 * user who has none of its workunit. */
static void test_id_order_retries(void **state)
{
    struct fixture *fx = *state;
    int64_t wa = add_wu(fx->st, fx->app_loc, "R1", 0, 2);
    add_wu(fx->st, fx->app_loc, "R1", 1, 2);
    start(fx);
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    const char *f[] = {"R1"};
    int64_t ids[8];
    /* alice: one of each workunit, in id order. */
    ask(fx, AUTH_A, 0, 0, 100000, f, 1, &a, &r);
    assert_int_equal(r.n_results, 2);
    reply_ids(fx, &r, ids);
    assert_true(ids[0] < ids[1]);
    assert_string_equal(r.results[0].name, "R1__0_0");
    assert_string_equal(r.results[1].name, "R1__1_0");
    int64_t alice_host = r.hostid;
    /* alice's second host: nothing (she holds both workunits). */
    ask(fx, AUTH_A, 0, 0, 100000, f, 1, &a, &r);
    assert_int_equal(r.n_results, 0);
    /* bob: the other two. */
    ask(fx, AUTH_B, 0, 0, 100000, f, 1, &a, &r);
    assert_int_equal(r.n_results, 2);
    assert_string_equal(r.results[0].name, "R1__0_1");
    assert_string_equal(r.results[1].name, "R1__1_1");
    /* alice's first result fails; the transitioner's retry has a higher id. */
    struct vs_result res = {0};
    res.workunitid = wa;
    res.appid = fx->app_loc;
    res.server_state = VS_RESULT_SERVER_STATE_UNSENT;
    snprintf(res.name, sizeof(res.name), "R1__0_2");
    res.xml_doc_in = vs_xstrdup("<result>\n</result>\n");
    assert_int_equal(vs_store_result_add(fx->st, &res), 0);
    int64_t retry_id = res.id;
    vs_result_cleanup(&res);
    assert_true(retry_id > ids[1]);
    /* alice and bob hold workunit 0: the retry is not theirs. */
    ask(fx, AUTH_A, alice_host, 1, 100000, f, 1, &a, &r);
    assert_int_equal(r.n_results, 0);
    ask(fx, AUTH_B, 0, 0, 100000, f, 1, &a, &r);
    assert_int_equal(r.n_results, 0);
    /* carol gets it, although her search starts from nothing. */
    ask(fx, AUTH_C, 0, 0, 100000, f, 1, &a, &r);
    assert_int_equal(r.n_results, 1);
    assert_string_equal(r.results[0].name, "R1__0_2");
    /* The store agrees: no user holds two results of one workunit. */
    assert_int_equal(sql_count(fx, "SELECT count(*) FROM result a JOIN result b ON "
                                   "a.userid = b.userid AND a.workunitid = b.workunitid AND "
                                   "a.id < b.id WHERE a.userid > 0"),
                     0);
    vs_arena_cleanup(&a);
}

/* Disk accounting: a job whose big file the host holds is charged only the
 * rest of its disk bound; the same job for a host without the file does
 * not fit. */
static void test_disk(void **state)
{
    struct fixture *fx = *state;
    add_wu(fx->st, fx->app_loc, "K1", 0, 1);
    add_wu(fx->st, fx->app_loc, "K1", 1, 1);
    start(fx);
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    /* Room for 1.2e8 bytes (free space minus the 0.01 GB the preferences
     * keep free): a job's bound is 2e8, of which 1.5e8 is the file. */
    const char *k[] = {"K1"};
    const char *dfree = "<d_free>83985932288.000000</d_free>";
    char *small = subst(request(AUTH_A, 0, 0, 1, NULL, 0), dfree, "<d_free>130000000</d_free>");
    rpc(fx, small, &a, &r, NULL);
    assert_int_equal(r.n_results, 0);
    bool disk_msg = false;
    for (size_t i = 0; i < r.n_messages; i++)
        disk_msg |= strstr(r.messages[i].text, "disk") != NULL;
    assert_true(disk_msg);
    /* The same host holding K1: both jobs fit (the file is charged once). */
    char *small_with =
        subst(request(AUTH_A, 0, 0, 100000, k, 1), dfree, "<d_free>130000000</d_free>");
    rpc(fx, small_with, &a, &r, NULL);
    assert_int_equal(r.n_results, 2);
    vs_free(small);
    vs_free(small_with);
    vs_arena_cleanup(&a);
}

/* Locality jobs pass the job limits too: with a project limit of 2 jobs in
 * progress the host holding the file gets 2 of its 5, and nothing more on
 * its next request (the 2 are still in progress). */
static void test_limits(void **state)
{
    struct fixture *fx = *state;
    for (int i = 0; i < 5; i++)
        add_wu(fx->st, fx->app_loc, "Q1", i, 1);
    fx->cfg.policy.limits.project.total.jobs = 2;
    start(fx);
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    const char *q[] = {"Q1"};
    ask(fx, AUTH_A, 0, 0, 100000, q, 1, &a, &r);
    assert_int_equal(r.n_results, 2);
    assert_string_equal(r.results[0].name, "Q1__0_0");
    assert_string_equal(r.results[1].name, "Q1__1_0");
    /* Its next request lists the two as in progress (<other_results>). */
    char *req = request(AUTH_A, r.hostid, 1, 100000, q, 1);
    req = subst(req, "<other_results>\n</other_results>",
                "<other_results>\n<other_result><name>Q1__0_0</name></other_result>\n"
                "<other_result><name>Q1__1_0</name></other_result>\n</other_results>");
    rpc(fx, req, &a, &r, NULL);
    assert_int_equal(r.n_results, 0);
    assert_int_equal(r.n_delete_file_infos, 0); /* Q1 still has work, just not now */
    vs_free(req);
    vs_arena_cleanup(&a);
}

/* A project with a locality app and a plain app: the plain job comes from
 * the cache to anybody, the locality jobs only by file. */
static void test_mixed(void **state)
{
    struct fixture *fx = *state;
    add_wu(fx->st, fx->app_loc, "M1", 0, 1);
    struct vs_workunit wu;
    vs_workunit_defaults(&wu);
    wu.appid = fx->app_plain;
    snprintf(wu.name, sizeof(wu.name), "plain_0");
    wu.rsc_fpops_est = 2e10;
    wu.rsc_disk_bound = 1e6;
    wu.delay_bound = 86400;
    wu.transition_time = VS_TIME_NEVER;
    wu.xml_doc = vs_xstrdup("<workunit>\n</workunit>\n");
    assert_int_equal(vs_store_workunit_add(fx->st, &wu), 0);
    struct vs_result res = {.workunitid = wu.id, .appid = fx->app_plain};
    res.server_state = VS_RESULT_SERVER_STATE_UNSENT;
    snprintf(res.name, sizeof(res.name), "plain_0_0");
    res.xml_doc_in = vs_xstrdup("<result>\n</result>\n");
    assert_int_equal(vs_store_result_add(fx->st, &res), 0);
    vs_result_cleanup(&res);
    vs_workunit_cleanup(&wu);
    start(fx);
    struct vs_sched_stats ss;
    vs_sched_get_stats(fx->s, &ss);
    assert_int_equal(ss.cache_present, 1); /* the locality job is not cached */
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    const char *m[] = {"M1"};
    ask(fx, AUTH_A, 0, 0, 100000, m, 1, &a, &r);
    assert_int_equal(r.n_results, 2);
    assert_string_equal(r.results[0].name, "M1__0_0"); /* locality first */
    assert_string_equal(r.results[1].name, "plain_0_0");
    vs_arena_cleanup(&a);
}

/* Hostile sticky lists: 10,000 entries of unknown names, names with '/' or
 * '..', duplicates, over-long names. The reply is clean, nothing is made in
 * the trigger directories, no delete is sent for a file the project never
 * had, and at most VS_LOC_MAX_HOST_FILES names are searched. */
static void test_bad_input(void **state)
{
    struct fixture *fx = *state;
    add_wu(fx->st, fx->app_loc, "G1", 0, 1);
    start(fx);
    enum { N = 10000 };
    char(*names)[300] = vs_xcalloc(N, 300);
    const char **files = vs_xcalloc(N, sizeof(*files));
    for (int i = 0; i < N; i++) {
        switch (i % 5) {
        case 0:
            snprintf(names[i], 300, "never_had_%d", i);
            break;
        case 1:
            snprintf(names[i], 300, "../../etc/passwd%d", i);
            break;
        case 2:
            snprintf(names[i], 300, "dir/sub%d", i);
            break;
        case 3:
            memset(names[i], 'x', 260);
            names[i][260] = '\0';
            break;
        default:
            snprintf(names[i], 300, "never_had_%d", i - 4); /* duplicates */
        }
        files[i] = names[i];
    }
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    char *req = request(AUTH_A, 0, 0, 100000, files, N);
    rpc(fx, req, &a, &r, NULL);
    /* The host still gets work (G1 through the scan), and nothing else. */
    assert_int_equal(r.n_results, 1);
    assert_int_equal(r.n_delete_file_infos, 0);
    int nfiles = 0;
    for (int d = 0; d < VS_LOC__NDIRS; d++) {
        char p[600];
        snprintf(p, sizeof(p), "%s/locality_scheduling/%s", fx->dir,
                 vs_loc_dir_name((enum vs_loc_dir)d));
        char cmd[700];
        snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A %s)\"", p);
        nfiles += system(cmd) != 0;
    }
    assert_int_equal(nfiles, 0);
    struct vs_locality_stats ls;
    vs_locality_get_stats(fx->s->loc, &ls);
    assert_int_equal(ls.bad_names, 3 * N / 5);
    assert_true(ls.searched <= VS_LOC_MAX_HOST_FILES + VS_LOC_SCAN_FILES + VS_LOC_WS_TRIES);
    vs_free(req);
    vs_free(names);
    vs_free(files);
    vs_arena_cleanup(&a);
}

/* Locality scheduling lite (app.locality_scheduling = 1): jobs come from
 * the cache, but a job whose sticky input the host holds goes first; a
 * host without it gets them in cache (id) order. */
static void test_lite(void **state)
{
    struct fixture *fx = *state;
    struct vs_app app = {0};
    assert_int_equal(vs_store_app_by_name(fx->st, "plain", &app), 0);
    app.locality_scheduling = VS_LOC_APP_LITE;
    assert_int_equal(vs_store_app_update(fx->st, &app), 0);
    /* Workunits named freely (lite has no naming rule), each with one
     * sticky input: X first (lower ids), then Y. */
    const char *inputs[] = {"X", "X", "Y"};
    for (int i = 0; i < 3; i++) {
        struct vs_workunit wu;
        vs_workunit_defaults(&wu);
        wu.appid = app.id;
        snprintf(wu.name, sizeof(wu.name), "lite_%d", i);
        wu.rsc_fpops_est = 2e10;
        wu.rsc_disk_bound = 1e6;
        wu.delay_bound = 86400;
        wu.transition_time = VS_TIME_NEVER;
        char doc[512];
        snprintf(doc, sizeof(doc),
                 "<file_info>\n    <name>%s</name>\n    <sticky/>\n"
                 "    <url>http://127.0.0.1:8080/test/download/1a/%s</url>\n"
                 "    <nbytes>1000</nbytes>\n</file_info>\n<workunit>\n    <file_ref>\n"
                 "        <file_name>%s</file_name>\n        <open_name>in</open_name>\n"
                 "    </file_ref>\n</workunit>\n",
                 inputs[i], inputs[i], inputs[i]);
        wu.xml_doc = vs_xstrdup(doc);
        assert_int_equal(vs_store_workunit_add(fx->st, &wu), 0);
        struct vs_result res = {.workunitid = wu.id, .appid = app.id};
        res.server_state = VS_RESULT_SERVER_STATE_UNSENT;
        snprintf(res.name, sizeof(res.name), "lite_%d_0", i);
        res.xml_doc_in = vs_xstrdup("<result>\n</result>\n");
        assert_int_equal(vs_store_result_add(fx->st, &res), 0);
        vs_result_cleanup(&res);
        vs_workunit_cleanup(&wu);
    }
    start(fx);
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    const char *y[] = {"Y"};
    ask(fx, AUTH_A, 0, 0, 1, y, 1, &a, &r); /* room for one job */
    assert_int_equal(r.n_results, 1);
    assert_string_equal(r.results[0].name, "lite_2_0");
    ask(fx, AUTH_B, 0, 0, 1, NULL, 0, &a, &r);
    assert_int_equal(r.n_results, 1);
    assert_string_equal(r.results[0].name, "lite_0_0");
    vs_arena_cleanup(&a);
}

/* ------------------------------------------------------------------------ */
/* On-demand generation                                                      */
/* ------------------------------------------------------------------------ */

/* A generator thread: watches need_work/FILE, then (after delay_ms) makes
 * two workunits for it through its own store handle and removes the
 * trigger, as `volsched locality-gen` with a create_work command does. */
struct gen {
    struct fixture *fx;
    const char *file;
    int delay_ms;
    int answered; /* 1 once it made work */
    volatile int stop;
};

static void *gen_main(void *arg)
{
    struct gen *g = arg;
    struct vs_store *st = NULL;
    assert_int_equal(vs_store_open(g->fx->cfg.store_url, 0, NULL, &st), 0);
    for (int i = 0; i < 1000 && !g->stop; i++) {
        if (vs_loc_exists(g->fx->cfg.dir, VS_LOC_NEED_WORK, g->file)) {
            struct timespec ts = {g->delay_ms / 1000, (long)(g->delay_ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
            add_wu(st, g->fx->app_loc, g->file, 100, 1);
            add_wu(st, g->fx->app_loc, g->file, 101, 1);
            assert_int_equal(vs_loc_remove(g->fx->cfg.dir, VS_LOC_NEED_WORK, g->file), 0);
            g->answered = 1;
            break;
        }
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
    }
    vs_store_close(st);
    return NULL;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static int setup_wait(void **state)
{
    *state = make(2, true);
    return 0;
}

/* The generator answers inside the wait period: the same request gets the
 * new work, well before the period ends. */
static void test_generator_answers(void **state)
{
    struct fixture *fx = *state;
    add_wu(fx->st, fx->app_loc, "W1", 0, 1);
    start(fx);
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    const char *w[] = {"W1"};
    ask(fx, AUTH_A, 0, 0, 1, w, 1, &a, &r); /* takes W1__0 */
    assert_int_equal(r.n_results, 1);
    struct gen g = {.fx = fx, .file = "W1", .delay_ms = 300};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, gen_main, &g), 0);
    double t0 = now_s();
    ask(fx, AUTH_B, 0, 0, 1, w, 1, &a, &r);
    double el = now_s() - t0;
    g.stop = 1;
    pthread_join(th, NULL);
    assert_int_equal(g.answered, 1);
    assert_int_equal(r.n_results, 1);
    assert_string_equal(r.results[0].name, "W1__100_0");
    assert_int_equal(r.n_delete_file_infos, 0);
    assert_false(trigger(fx, VS_LOC_NEED_WORK, "W1"));
    assert_true(el < 1.9); /* answered at ~0.3 s of the 2 s period */
    vs_arena_cleanup(&a);
}

/* The generator does not answer: the request waits the whole period once,
 * sends nothing of that file, leaves need_work/ for the generator and
 * keeps the file on the host. After no_work_available/ appears, the next
 * request does not wait and tells the host to delete the file. */
static void test_generator_silent(void **state)
{
    struct fixture *fx = *state;
    add_wu(fx->st, fx->app_loc, "S1", 0, 1);
    start(fx);
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    const char *s1[] = {"S1"};
    ask(fx, AUTH_A, 0, 0, 1, s1, 1, &a, &r);
    assert_int_equal(r.n_results, 1);
    double t0 = now_s();
    ask(fx, AUTH_B, 0, 0, 1, s1, 1, &a, &r);
    double el = now_s() - t0;
    assert_true(el >= 1.9);
    assert_true(el < 10);
    assert_int_equal(r.n_results, 0);
    assert_int_equal(r.n_delete_file_infos, 0);
    assert_true(trigger(fx, VS_LOC_NEED_WORK, "S1"));
    assert_true(trigger(fx, VS_LOC_FILES_NO_WORK, "S1"));
    struct vs_locality_stats ls;
    vs_locality_get_stats(fx->s->loc, &ls);
    assert_int_equal(ls.waits, 1);
    /* The generator gives up on S1. */
    assert_int_equal(vs_loc_remove(fx->cfg.dir, VS_LOC_NEED_WORK, "S1"), 0);
    assert_int_equal(vs_loc_touch(fx->cfg.dir, VS_LOC_NO_WORK_AVAILABLE, "S1"), 0);
    t0 = now_s();
    ask(fx, AUTH_C, 0, 0, 1, s1, 1, &a, &r);
    el = now_s() - t0;
    assert_true(el < 1.5);
    assert_true(has_delete(&r, "S1"));
    assert_false(trigger(fx, VS_LOC_NEED_WORK, "S1"));
    vs_locality_get_stats(fx->s->loc, &ls);
    assert_int_equal(ls.waits, 1);
    vs_arena_cleanup(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_after_search),
        cmocka_unit_test_setup_teardown(test_host_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_host, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_id_order_retries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mixed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lite, setup, teardown),
        cmocka_unit_test_setup_teardown(test_generator_answers, setup_wait, teardown),
        cmocka_unit_test_setup_teardown(test_generator_silent, setup_wait, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
