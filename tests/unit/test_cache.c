/*
 * The job cache against a real (temporary) store (SQLite, or PostgreSQL
 * with VS_TEST_PG: store_backend.h): refill pages
 * through UNSENT results, a job is handed out once, put-back and forget do
 * what they say, claimed results never come back, and the prep hook runs
 * once per loaded job.
 */
#include "store_backend.h"
#include "vs_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/cache.h"
#include "volsched/alloc.h"
#include "volsched/store.h"

struct fixture {
    char dir[64];
    char url[512];
    struct vs_store *st;
    int64_t appid;
    int64_t rid[8];
    int preps, unpreps;
};

/* One workunit named name with one UNSENT result name_0; returns the result's id. */
static int64_t add_job(struct fixture *fx, const char *name)
{
    struct vs_workunit wu;
    vs_workunit_defaults(&wu);
    wu.appid = fx->appid;
    snprintf(wu.name, sizeof(wu.name), "%s", name);
    wu.xml_doc = vs_xstrdup("<workunit>\n</workunit>\n");
    wu.transition_time = VS_TIME_NEVER;
    assert_int_equal(vs_store_workunit_add(fx->st, &wu), 0);
    struct vs_result r = {0};
    r.workunitid = wu.id;
    r.appid = fx->appid;
    r.server_state = VS_RESULT_SERVER_STATE_UNSENT;
    snprintf(r.name, sizeof(r.name), "%s_0", name);
    r.xml_doc_in = vs_xstrdup("<result>\n</result>\n");
    assert_int_equal(vs_store_result_add(fx->st, &r), 0);
    int64_t id = r.id;
    vs_workunit_cleanup(&wu);
    vs_result_cleanup(&r);
    return id;
}

static int setup(void **state)
{
    struct fixture *fx = VS_NEW(struct fixture);
    snprintf(fx->dir, sizeof(fx->dir), "/tmp/vs_cache_XXXXXX");
    assert_non_null(mkdtemp(fx->dir));
    vs_test_store_url(fx->url, sizeof(fx->url), fx->dir, "t.db");
    assert_int_equal(vs_store_open(fx->url, VS_STORE_CREATE, NULL, &fx->st), 0);
    struct vs_app app = {0};
    snprintf(app.name, sizeof(app.name), "primes");
    assert_int_equal(vs_store_app_add(fx->st, &app), 0);
    fx->appid = app.id;
    for (int i = 0; i < 8; i++) {
        char name[32];
        snprintf(name, sizeof(name), "wu_%d", i);
        fx->rid[i] = add_job(fx, name);
    }
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    vs_store_close(fx->st);
    vs_test_store_drop(fx->url);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", fx->dir);
    assert_int_equal(system(cmd), 0);
    vs_free(fx);
    return 0;
}

static enum vs_cache_pick take_all(void *ctx, const struct vs_cache_job *j)
{
    (void)ctx;
    (void)j;
    return VS_PICK_TAKE;
}

static enum vs_cache_pick take_even(void *ctx, const struct vs_cache_job *j)
{
    (void)ctx;
    return j->job.wu.name[3] % 2 == 0 ? VS_PICK_TAKE : VS_PICK_SKIP;
}

static int prep(void *ctx, struct vs_cache_job *j)
{
    struct fixture *fx = ctx;
    fx->preps++;
    /* wu_5 is "broken": the cache must drop it, once. */
    if (strcmp(j->job.wu.name, "wu_5") == 0)
        return VS_EPARSE;
    j->prep = vs_xstrdup(j->job.result.name);
    return 0;
}

static void unprep(void *ctx, void *p)
{
    struct fixture *fx = ctx;
    fx->unpreps++;
    vs_free(p);
}

static void claim(struct fixture *fx, int64_t rid)
{
    struct vs_claim c = {.result_id = rid, .report_deadline = 2000000000};
    size_t n = 0;
    assert_int_equal(vs_store_results_claim(fx->st, 1, 1, 0, 1000, &c, 1, &n), 0);
    assert_int_equal(n, 1);
}

static void test_refill_take(void **state)
{
    struct fixture *fx = *state;
    struct vs_cache *c = vs_cache_create(3, NULL, NULL, NULL);
    size_t added = 0;
    assert_int_equal(vs_cache_refill(c, fx->st, &added), 0);
    assert_int_equal(added, 3);
    /* Full: a refill adds nothing. */
    assert_int_equal(vs_cache_refill(c, fx->st, &added), 0);
    assert_int_equal(added, 0);

    struct vs_cache_job out[8];
    size_t n = vs_cache_take(c, take_all, NULL, out, 8);
    assert_int_equal(n, 3);
    /* Store order: wu_0, wu_1, wu_2. */
    assert_string_equal(out[0].job.wu.name, "wu_0");
    assert_string_equal(out[2].job.result.name, "wu_2_0");
    /* Nothing left to take; a second taker gets nothing. */
    assert_int_equal(vs_cache_take(c, take_all, NULL, out + 3, 5), 0);

    /* wu_0 is claimed; wu_1 is forgotten without a claim (still UNSENT);
     * wu_2 is put back. */
    claim(fx, out[0].job.result.id);
    vs_cache_forget(c, &out[0], false);
    vs_cache_forget(c, &out[1], true);
    vs_cache_put_back(c, &out[2]);
    struct vs_cache_stats st;
    vs_cache_get_stats(c, &st);
    assert_int_equal(st.present, 1);
    assert_int_equal(st.checked_out, 0);

    /* Refill continues after wu_2 (the page stopped there); wu_1 comes back
     * once the scan reaches the end and starts over. */
    assert_int_equal(vs_cache_refill(c, fx->st, &added), 0);
    assert_int_equal(added, 2);
    n = vs_cache_take(c, take_all, NULL, out, 8);
    assert_int_equal(n, 3);
    bool seen[8] = {false};
    for (size_t i = 0; i < n; i++) {
        int k = out[i].job.wu.name[3] - '0';
        assert_false(seen[k]);
        seen[k] = true;
        claim(fx, out[i].job.result.id);
        vs_cache_forget(c, &out[i], false);
    }
    assert_false(seen[0]); /* claimed earlier: never offered again */
    /* Drain the rest: every UNSENT result comes out exactly once. */
    int total = 1 + (int)n;
    for (int round = 0; round < 6; round++) {
        assert_int_equal(vs_cache_refill(c, fx->st, &added), 0);
        n = vs_cache_take(c, take_all, NULL, out, 8);
        for (size_t i = 0; i < n; i++) {
            int k = out[i].job.wu.name[3] - '0';
            assert_false(seen[k]);
            seen[k] = true;
            claim(fx, out[i].job.result.id);
            vs_cache_forget(c, &out[i], false);
        }
        total += (int)n;
    }
    assert_int_equal(total, 8);
    vs_cache_get_stats(c, &st);
    assert_int_equal(st.present, 0);
    vs_cache_destroy(c);
}

/* Sets a result's priority through a second connection (no store
 * operation changes it once made). */
static void set_priority(struct fixture *fx, int64_t rid, int prio)
{
    char sql[128];
    snprintf(sql, sizeof(sql), "UPDATE result SET priority = %d WHERE id = %lld", prio,
             (long long)rid);
    assert_int_equal(vs_test_sql_exec(fx->url, sql), 0);
}

/* The cache fills by priority, then id, like BOINC's feeder, and takers see
 * the higher priorities first; a result of a higher priority than the scan
 * has reached (made later, or raised) is noticed and loaded first. */
static void test_priority_order(void **state)
{
    struct fixture *fx = *state;
    set_priority(fx, fx->rid[6], 5);
    set_priority(fx, fx->rid[7], 3);
    struct vs_cache *c = vs_cache_create(3, NULL, NULL, NULL);
    size_t added = 0;
    assert_int_equal(vs_cache_refill(c, fx->st, &added), 0);
    assert_int_equal(added, 3);
    struct vs_cache_job out[8];
    size_t n = vs_cache_take(c, take_all, NULL, out, 8);
    assert_int_equal(n, 3);
    assert_string_equal(out[0].job.wu.name, "wu_6");
    assert_string_equal(out[1].job.wu.name, "wu_7");
    assert_string_equal(out[2].job.wu.name, "wu_0");
    for (size_t i = 0; i < n; i++) {
        claim(fx, out[i].job.result.id);
        vs_cache_forget(c, &out[i], false);
    }
    /* The scan stands in priority 0; wu_4 gets priority 9 (as a new result
     * would): the next refill starts over and takes it first. */
    assert_int_equal(vs_cache_refill(c, fx->st, &added), 0);
    assert_int_equal(added, 3); /* wu_1, wu_2, wu_3 */
    n = vs_cache_take(c, take_all, NULL, out, 1);
    assert_string_equal(out[0].job.wu.name, "wu_1");
    claim(fx, out[0].job.result.id);
    vs_cache_forget(c, &out[0], false);
    struct vs_result r = {0};
    r.workunitid = out[0].job.result.workunitid;
    r.appid = fx->appid;
    r.server_state = VS_RESULT_SERVER_STATE_UNSENT;
    r.priority = 9;
    snprintf(r.name, sizeof(r.name), "urgent");
    r.xml_doc_in = vs_xstrdup("<result>\n</result>\n");
    assert_int_equal(vs_store_result_add(fx->st, &r), 0);
    vs_result_cleanup(&r);
    /* Slots are free enough for a refill only when most are empty. */
    n = vs_cache_take(c, take_all, NULL, out, 8);
    assert_int_equal(n, 2);
    for (size_t i = 0; i < n; i++) {
        claim(fx, out[i].job.result.id);
        vs_cache_forget(c, &out[i], false);
    }
    assert_int_equal(vs_cache_refill(c, fx->st, &added), 0);
    n = vs_cache_take(c, take_all, NULL, out, 8);
    assert_true(n >= 1);
    assert_string_equal(out[0].job.result.name, "urgent");
    for (size_t i = 0; i < n; i++)
        vs_cache_forget(c, &out[i], true);
    vs_cache_destroy(c);
}

static void test_pick_and_prep(void **state)
{
    struct fixture *fx = *state;
    struct vs_cache *c = vs_cache_create(100, prep, unprep, fx);
    size_t added = 0;
    assert_int_equal(vs_cache_refill(c, fx->st, &added), 0);
    assert_int_equal(added, 7); /* wu_5 dropped by prep */
    assert_int_equal(fx->preps, 8);
    /* The dropped row is remembered: not prepared (or logged) again. */
    assert_int_equal(vs_cache_refill(c, fx->st, &added), 0);
    assert_int_equal(added, 0);
    struct vs_cache_stats st;
    vs_cache_get_stats(c, &st);
    assert_int_equal(st.dropped, 1);

    struct vs_cache_job out[8];
    size_t n = vs_cache_take(c, take_even, NULL, out, 8);
    assert_int_equal(n, 4); /* wu_0, 2, 4, 6 */
    for (size_t i = 0; i < n; i++) {
        assert_int_equal((out[i].job.wu.name[3] - '0') % 2, 0);
        assert_string_equal(out[i].prep, out[i].job.result.name);
        vs_cache_forget(c, &out[i], true);
    }
    assert_int_equal(fx->unpreps, 4 + 0);
    vs_cache_destroy(c); /* frees the 3 still present */
    assert_int_equal(fx->unpreps, 7);
}

/* Two instances' caches on one store: the first leases every
 * job it loads, the second finds none and cannot claim one, until the
 * first one's leases run out (it "died": no renewals); then the second
 * loads them and the first, back, loses them at its renewal. */
static void test_leases(void **state)
{
    struct fixture *fx = *state;
    struct vs_cache *a = vs_cache_create(16, NULL, NULL, fx);
    struct vs_cache *b = vs_cache_create(16, NULL, NULL, fx);
    vs_cache_set_lease(a, 111, 30);
    vs_cache_set_lease(b, 222, 30);
    size_t added = 0;
    assert_int_equal(vs_cache_refill_at(a, fx->st, 1000, &added), 0);
    assert_int_equal(added, 8);
    assert_int_equal(vs_cache_refill_at(b, fx->st, 1001, &added), 0);
    assert_int_equal(added, 0);

    /* Another owner's claim is refused while the lease lasts; no owner
     * (a tool) neither. */
    struct vs_claim c = {
        .result_id = fx->rid[0], .report_deadline = 2000000000, .lease_owner = 222};
    size_t n = 9;
    assert_int_equal(vs_store_results_claim(fx->st, 1, 1, 0, 1010, &c, 1, &n), 0);
    assert_int_equal(n, 0);
    assert_false(c.claimed);
    c.lease_owner = 0;
    assert_int_equal(vs_store_results_claim(fx->st, 1, 1, 0, 1010, &c, 1, &n), 0);
    assert_int_equal(n, 0);
    /* The owner's own claim passes. */
    struct vs_cache_job out[8];
    assert_int_equal(vs_cache_take(a, take_all, NULL, out, 1), 1);
    c.result_id = out[0].job.result.id;
    c.lease_owner = 111;
    assert_int_equal(vs_store_results_claim(fx->st, 1, 1, 0, 1010, &c, 1, &n), 0);
    assert_int_equal(n, 1);
    vs_cache_forget(a, &out[0], false);

    /* Renewed while alive (every 10 s here): still A's at 1035. */
    assert_int_equal(vs_cache_refill_at(a, fx->st, 1020, &added), 0);
    assert_int_equal(vs_cache_refill_at(b, fx->st, 1035, &added), 0);
    assert_int_equal(added, 0);
    /* A stops renewing: its leases (to 1050) end; B's rescan finds the 7. */
    assert_int_equal(vs_cache_refill_at(b, fx->st, 1050, &added), 0);
    assert_int_equal(added, 7);
    /* A comes back: its renewal fails for all of them, and they leave A. */
    assert_int_equal(vs_cache_refill_at(a, fx->st, 1051, &added), 0);
    assert_int_equal(added, 0);
    struct vs_cache_stats st;
    vs_cache_get_stats(a, &st);
    assert_int_equal(st.present, 0);
    assert_int_equal(st.lost, 7);
    assert_int_equal(vs_cache_take(a, take_all, NULL, out, 8), 0);
    /* B sends them. */
    n = vs_cache_take(b, take_all, NULL, out, 8);
    assert_int_equal(n, 7);
    for (size_t i = 0; i < n; i++) {
        struct vs_claim cb = {
            .result_id = out[i].job.result.id, .report_deadline = 2000000000, .lease_owner = 222};
        size_t k = 0;
        assert_int_equal(vs_store_results_claim(fx->st, 2, 2, 0, 1052, &cb, 1, &k), 0);
        assert_int_equal(k, 1);
        vs_cache_forget(b, &out[i], false);
    }
    int64_t unsent = -1;
    assert_int_equal(vs_store_count_results(fx->st, 0, VS_RESULT_SERVER_STATE_UNSENT, &unsent), 0);
    assert_int_equal(unsent, 0);
    vs_cache_destroy(a);
    vs_cache_destroy(b);
}

/* Three instances' caches draining one store: each keeps
 * finding jobs while free ones are left, and together they send every
 * job once. */
static void test_leases_three_drain(void **state)
{
    struct fixture *fx = *state;
    for (int i = 0; i < 200; i++) {
        char name[32];
        snprintf(name, sizeof(name), "d_%d", i);
        add_job(fx, name);
    }
    struct vs_cache *c[3];
    for (int k = 0; k < 3; k++) {
        c[k] = vs_cache_create(24, NULL, NULL, fx);
        vs_cache_set_lease(c[k], 100 + k, 4);
    }
    int sent[3] = {0}, total = 0;
    int64_t now = 5000;
    for (int round = 0; round < 200 && total < 208; round++) {
        for (int k = 0; k < 3; k++) {
            size_t added;
            assert_int_equal(vs_cache_refill_at(c[k], fx->st, now, &added), 0);
            struct vs_cache_job out[3];
            size_t n = vs_cache_take(c[k], take_all, NULL, out, 3);
            for (size_t i = 0; i < n; i++) {
                struct vs_claim cl = {.result_id = out[i].job.result.id,
                                      .report_deadline = 2000000000,
                                      .lease_owner = 100 + k};
                size_t got = 0;
                assert_int_equal(vs_store_results_claim(fx->st, 1 + k, 1, 0, now, &cl, 1, &got), 0);
                assert_int_equal(got, 1); /* what a cache holds is its own to send */
                sent[k]++;
                total++;
                vs_cache_forget(c[k], &out[i], false);
            }
        }
        if (round % 5 == 4)
            now++;
    }
    assert_int_equal(total, 208);
    for (int k = 0; k < 3; k++) {
        assert_true(sent[k] > 30); /* nobody starved */
        vs_cache_destroy(c[k]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_refill_take, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pick_and_prep, setup, teardown),
        cmocka_unit_test_setup_teardown(test_priority_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leases_three_drain, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
