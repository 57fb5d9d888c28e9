/*
 * Locality scheduling's on-demand generation (seed 001) through the real
 * handler: a request for a file without unsent results makes
 * need_work/FILE and waits, once, up to <locality_scheduling_wait_period>;
 * a generator thread (real trigger files, its own store handle) that
 * answers within the period, and no generator at all, then
 * no_work_available/FILE.
 */
#include "vs_test.h"

#include <pthread.h>
#include <time.h>

#include "locality_fixture.h"

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
        cmocka_unit_test_setup_teardown(test_generator_answers, setup_wait, teardown),
        cmocka_unit_test_setup_teardown(test_generator_silent, setup_wait, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
