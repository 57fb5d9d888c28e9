/*
 * Locality scheduling's on-demand generation (seed 001) through the real
 * handler: a request for a file without unsent results makes
 * need_work/FILE and waits, once, up to <locality_scheduling_wait_period>;
 * a generator thread (real trigger files, its own store handle) that
 * answers within the period, and no generator at all, then
 * no_work_available/FILE.
 *
 * The pass waits by a virtual clock (vs_locality_set_clock): its sleeps
 * advance virtual time, and while a generator is expected a sleep returns
 * only once the generator has answered. What is asserted is virtual time,
 * so a slow or loaded machine cannot make the tests fail or pass.
 */
#include "vs_test.h"

#include <pthread.h>
#include <time.h>

#include "locality_fixture.h"

/* ------------------------------------------------------------------------ */
/* On-demand generation                                                      */
/* ------------------------------------------------------------------------ */

/* The virtual clock: now advances only by the pass's sleeps. With
 * wait_answer, a sleep returns once the generator has answered. */
struct vclock {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int64_t now;
    int sleeps;
    bool wait_answer;
    bool answered;
};

static int64_t vnow(void *ctx)
{
    struct vclock *v = ctx;
    pthread_mutex_lock(&v->mu);
    int64_t t = v->now;
    pthread_mutex_unlock(&v->mu);
    return t;
}

static void vsleep(void *ctx, int64_t ms)
{
    struct vclock *v = ctx;
    pthread_mutex_lock(&v->mu);
    v->now += ms;
    v->sleeps++;
    while (v->wait_answer && !v->answered)
        pthread_cond_wait(&v->cv, &v->mu);
    pthread_mutex_unlock(&v->mu);
}

static void vclock_use(struct vclock *v, struct fixture *fx, bool wait_answer)
{
    memset(v, 0, sizeof(*v));
    pthread_mutex_init(&v->mu, NULL);
    pthread_cond_init(&v->cv, NULL);
    v->now = 1000000;
    v->wait_answer = wait_answer;
    struct vs_locality_clock c = {.now_ms = vnow, .sleep_ms = vsleep, .ctx = v};
    vs_locality_set_clock(fx->s->loc, &c);
}

static void vclock_done(struct vclock *v, struct fixture *fx)
{
    vs_locality_set_clock(fx->s->loc, NULL);
    pthread_cond_destroy(&v->cv);
    pthread_mutex_destroy(&v->mu);
}

/* A generator thread: watches need_work/FILE, then makes two workunits for
 * it through its own store handle and removes the trigger, as `volsched
 * locality-gen` with a create_work command does, and tells the clock. */
struct gen {
    struct fixture *fx;
    const char *file;
    struct vclock *clock;
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
            add_wu(st, g->fx->app_loc, g->file, 100, 1);
            add_wu(st, g->fx->app_loc, g->file, 101, 1);
            assert_int_equal(vs_loc_remove(g->fx->cfg.dir, VS_LOC_NEED_WORK, g->file), 0);
            g->answered = 1;
            break;
        }
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
    }
    /* Answered or given up: the pass's sleep returns either way (a
     * generator that never saw the trigger fails the test, not hangs it). */
    pthread_mutex_lock(&g->clock->mu);
    g->clock->answered = true;
    pthread_cond_broadcast(&g->clock->cv);
    pthread_mutex_unlock(&g->clock->mu);
    vs_store_close(st);
    return NULL;
}

static int setup_wait(void **state)
{
    *state = make(2, true);
    return 0;
}

/* The generator answers inside the wait period: the same request gets the
 * new work after one wait step (100 ms of the 2 s period). */
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
    struct vclock vc;
    vclock_use(&vc, fx, true);
    struct gen g = {.fx = fx, .file = "W1", .clock = &vc};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, gen_main, &g), 0);
    int64_t t0 = vnow(&vc);
    ask(fx, AUTH_B, 0, 0, 1, w, 1, &a, &r);
    int64_t el = vnow(&vc) - t0;
    g.stop = 1;
    pthread_join(th, NULL);
    assert_int_equal(g.answered, 1);
    assert_int_equal(r.n_results, 1);
    assert_string_equal(r.results[0].name, "W1__100_0");
    assert_int_equal(r.n_delete_file_infos, 0);
    assert_false(trigger(fx, VS_LOC_NEED_WORK, "W1"));
    assert_int_equal(vc.sleeps, 1); /* answered during the first step */
    assert_int_equal(el, 100);
    vclock_done(&vc, fx);
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
    struct vclock vc;
    vclock_use(&vc, fx, false);
    int64_t t0 = vnow(&vc);
    ask(fx, AUTH_B, 0, 0, 1, s1, 1, &a, &r);
    int64_t el = vnow(&vc) - t0;
    assert_int_equal(el, 2000); /* the whole period, in steps of 100 ms */
    assert_int_equal(vc.sleeps, 20);
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
    t0 = vnow(&vc);
    ask(fx, AUTH_C, 0, 0, 1, s1, 1, &a, &r);
    el = vnow(&vc) - t0;
    assert_int_equal(el, 0); /* no wait at all */
    assert_int_equal(vc.sleeps, 20);
    assert_true(has_delete(&r, "S1"));
    assert_false(trigger(fx, VS_LOC_NEED_WORK, "S1"));
    vs_locality_get_stats(fx->s->loc, &ls);
    assert_int_equal(ls.waits, 1);
    vclock_done(&vc, fx);
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
