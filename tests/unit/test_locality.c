/*
 * Locality scheduling (seed 001) end to end without HTTP: requests built
 * from a real BOINC 7.20.5 request (tests/data/boinc) with sticky-file
 * lists go into the real handler over a real SQLite store and the real
 * trigger directories; replies are parsed back and checked, and some
 * against golden files in tests/golden/locality/ (VS_UPDATE_GOLDEN=1
 * rewrites them). Also the pure decisions of volsched/locality.h. The
 * on-demand generation (the wait) is test_locality_wait.c.
 */
#include "vs_test.h"

#include "locality_fixture.h"
#include "server/loc_work.h"

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

/* A host holding F1 gets F1's results (one per workunit, ids increasing),
 * the file_info of F1 marked sticky and report_on_rpc, and nothing of F2
 * although it wants more: a host that got work for a file it holds is not
 * sent a new file too (seed 001's working set is for hosts with none of
 * the files); the golden reply pins the whole wire form. */
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
    /* F1's three, and no F2 although the host still wants work. */
    assert_int_equal(r.n_results, 3);
    int64_t ids[8];
    reply_ids(fx, &r, ids);
    for (size_t i = 0; i < r.n_results; i++) {
        assert_int_equal(strncmp(r.results[i].name, "F1__", 4), 0);
        if (i > 0)
            assert_true(ids[i] > ids[i - 1]);
    }
    for (size_t i = 0; i < r.n_file_infos; i++)
        assert_string_not_equal(r.file_infos[i].name, "F2");
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

/* Seed 001: a working-set file that is excluded for the user (she holds
 * its workunit) sends the host to the deterministic scan, which finds the
 * next file with work in name order; the excluded file is not reported as
 * without work (it has some, for others), and another user gets it. */
static void test_ws_excluded(void **state)
{
    struct fixture *fx = *state;
    add_wu(fx->st, fx->app_loc, "X1", 0, 2);
    add_wu(fx->st, fx->app_loc, "Y1", 0, 1);
    add_wu(fx->st, fx->app_loc, "Y1", 1, 1);
    start(fx);
    assert_int_equal(vs_loc_touch(fx->cfg.dir, VS_LOC_WORKING_SET, "X1"), 0);
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_reply r;
    ask(fx, AUTH_A, 0, 0, 1, NULL, 0, &a, &r);
    assert_int_equal(r.n_results, 1);
    assert_string_equal(r.results[0].name, "X1__0_0");
    /* alice's second host: X1 is excluded for her; the scan from X1 finds Y1. */
    ask(fx, AUTH_A, 0, 0, 1, NULL, 0, &a, &r);
    assert_int_equal(r.n_results, 1);
    assert_string_equal(r.results[0].name, "Y1__0_0");
    assert_false(trigger(fx, VS_LOC_FILES_NO_WORK, "X1"));
    ask(fx, AUTH_B, 0, 0, 1, NULL, 0, &a, &r);
    assert_int_equal(r.n_results, 1);
    assert_string_equal(r.results[0].name, "X1__0_1");
    vs_arena_cleanup(&a);
}

/* The scan's listing of files with work (loc_work.c): name order from a
 * start, wrapping around; reused within its ttl (a new file shows only
 * after it), and a file found dry leaves it at once. */
static void test_scan_listing(void **state)
{
    struct fixture *fx = *state;
    add_wu(fx->st, fx->app_loc, "A1", 0, 1);
    add_wu(fx->st, fx->app_loc, "B1", 0, 1);
    add_wu(fx->st, fx->app_loc, "C1", 0, 1);
    struct vs_loc_work *w = vs_loc_work_create(1000);
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    const char *out[8];
    assert_int_equal(vs_loc_work_scan(w, fx->st, 5000, "B1", &a, out, 8), 3);
    assert_string_equal(out[0], "C1");
    assert_string_equal(out[1], "A1");
    assert_string_equal(out[2], "B1");
    assert_int_equal(vs_loc_work_scan(w, fx->st, 5000, "", &a, out, 2), 2);
    assert_string_equal(out[0], "A1");
    assert_string_equal(out[1], "B1");
    add_wu(fx->st, fx->app_loc, "D1", 0, 1);
    assert_int_equal(vs_loc_work_scan(w, fx->st, 5900, "C1", &a, out, 8), 3);
    assert_string_equal(out[0], "A1");
    vs_loc_work_drop(w, "B1");
    vs_loc_work_drop(w, "never_listed");
    assert_int_equal(vs_loc_work_scan(w, fx->st, 5999, "", &a, out, 8), 2);
    assert_string_equal(out[1], "C1");
    /* After the ttl: listed anew (D1 comes, B1 is back: it still has work). */
    assert_int_equal(vs_loc_work_scan(w, fx->st, 6001, "C1", &a, out, 8), 4);
    assert_string_equal(out[0], "D1");
    assert_string_equal(out[1], "A1");
    vs_loc_work_destroy(w);
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
    char *small =
        sr_replace(request(AUTH_A, 0, 0, 1, NULL, 0), dfree, "<d_free>130000000</d_free>");
    rpc(fx, small, &a, &r, NULL);
    assert_int_equal(r.n_results, 0);
    bool disk_msg = false;
    for (size_t i = 0; i < r.n_messages; i++)
        disk_msg |= strstr(r.messages[i].text, "disk") != NULL;
    assert_true(disk_msg);
    /* The same host holding K1: both jobs fit (the file is charged once). */
    char *small_with =
        sr_replace(request(AUTH_A, 0, 0, 100000, k, 1), dfree, "<d_free>130000000</d_free>");
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
    req = sr_replace(req, "<other_results>\n</other_results>",
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_after_search),
        cmocka_unit_test_setup_teardown(test_host_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_host, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ws_excluded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scan_listing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_id_order_retries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mixed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lite, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
