/*
 * One result per user per workunit under concurrency,
 * on a real SQLite file (and PostgreSQL, tests/pg) through the real
 * scheduler handler: 8 users each
 * send 4 simultaneous new-host requests for 300 workunits of quorum 2.
 * Before the claim checked the rule itself, the holders of a workunit were
 * read before the commit and two hosts of one user could both take a
 * replica (the quorum then validates its own output).
 */
#include "vs_test.h"

#include <pthread.h>

#include "project_fixture.h"
#include "sched_request.h"
#include "volsched/sched.h"

#define NUSERS   8
#define PER_USER 4
#define NWU      300
#define PER_RPC  16 /* 32 requests x 16 < 600: every request can be served */
#define NOW      1800000000

struct env {
    struct project_fixture *f;
    struct vs_sched *s;
    char auth[NUSERS][VS_AUTH_MAX];
    pthread_barrier_t go;
};

static int setup_writers(void **state, int writers)
{
    struct env *e = VS_NEW(struct env);
    e->f = pf_create();
    struct project_fixture *f = e->f;
    f->cfg.sched_writers = writers;
    for (int u = 0; u < NUSERS; u++) {
        struct vs_user user;
        memset(&user, 0, sizeof(user));
        snprintf(user.name, sizeof(user.name), "user%d", u);
        assert_int_equal(vs_store_user_add(f->s, &user), 0);
        memcpy(e->auth[u], user.authenticator, sizeof(e->auth[u]));
        vs_user_cleanup(&user);
    }
    pf_add_jobs(f, "rep", NWU, 2, 1e9);
    /* A commit waits up to 0.5 s for announced requests: the 32 requests
     * read who holds what, then commit together (as a busy server's batch
     * does), which is the interleaving that broke the rule. */
    struct vs_sched_options opt = {.max_jobs_per_rpc = PER_RPC, .commit_delay_us = 500000};
    assert_int_equal(vs_sched_create(&f->cfg, NULL, &opt, &e->s), 0);
    size_t added = 0;
    assert_int_equal(vs_sched_refill(e->s, &added), 0);
    assert_int_equal(added, 2 * NWU);
    *state = e;
    return 0;
}

static int setup(void **state)
{
    return setup_writers(state, 1);
}

/* Four writer connections, each with its own group commit
 * (<sched_writers>): on PostgreSQL their batches of different accounts
 * commit side by side, and the rule must hold all the same. SQLite has
 * one writer at a time: the option is refused there. */
static int setup_four(void **state)
{
    if (vs_test_pg())
        return setup_writers(state, 4);
    struct project_fixture *f = pf_create();
    f->cfg.sched_writers = 2;
    struct vs_sched *s = NULL;
    assert_int_equal(vs_sched_create(&f->cfg, NULL, NULL, &s), VS_EINVAL);
    assert_null(s);
    pf_destroy(f);
    *state = NULL;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;
    if (!e)
        return 0; /* setup_four on SQLite */
    vs_sched_destroy(e->s);
    pf_destroy(e->f);
    vs_free(e);
    return 0;
}

struct racer {
    struct env *e;
    int user;
    size_t njobs;
    bool lost; /* answered without work ("No tasks sent") */
};

static void *race(void *arg)
{
    struct racer *r = arg;
    char *req = sr_request(r->e->auth[r->user], "1000000.000000", "8");
    pthread_barrier_wait(&r->e->go);
    struct vs_buf out;
    vs_buf_init(&out, 16u << 20);
    int st = vs_sched_handle(r->e->s, req, strlen(req), "127.0.0.1", NOW, &out);
    assert_int_equal(st, 200);
    for (const char *p = out.data; (p = strstr(p, "<result>")) != NULL; p++)
        r->njobs++;
    r->lost = strstr(out.data, "No tasks sent") != NULL;
    vs_buf_cleanup(&out);
    vs_free(req);
    return NULL;
}

static void test_one_result_per_user_concurrent(void **state)
{
    struct env *e = *state;
    if (!e)
        return; /* setup_four on SQLite checked the refusal */
    enum { NT = NUSERS * PER_USER };
    assert_int_equal(pthread_barrier_init(&e->go, NULL, NT), 0);
    pthread_t t[NT];
    struct racer r[NT];
    for (int i = 0; i < NT; i++) {
        r[i] = (struct racer){.e = e, .user = i % NUSERS};
        assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
    }
    size_t sent = 0, lost = 0;
    for (int i = 0; i < NT; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        sent += r[i].njobs;
        lost += r[i].lost;
    }
    pthread_barrier_destroy(&e->go);
    /* The race did happen: many jobs went out, to many hosts at once,
     * requests committed together after reading who held what (a batch
     * of several), and most runs lose claims to the store's check (the
     * user held the workunit's other result by then; 0-56 here). How many
     * of the 600 go out depends on when lost jobs return to the cache, so
     * the count asked is half of one replica each. */
    struct vs_sched_stats ss;
    vs_sched_get_stats(e->s, &ss);
    int64_t hosts = pf_sql(e->f, "SELECT count(DISTINCT hostid) FROM result WHERE hostid <> 0");
    int64_t users = pf_sql(e->f, "SELECT count(DISTINCT userid) FROM result WHERE hostid <> 0");
    print_message("%zu jobs sent by %d requests to %lld hosts of %lld users; %llu claims lost, "
                  "%llu chosen again, %zu requests without work\n",
                  sent, (int)NT, (long long)hosts, (long long)users,
                  (unsigned long long)ss.claims_lost, (unsigned long long)ss.rechosen, lost);
    assert_true(sent >= NWU / 2);
    assert_true(ss.commit_max_batch > 1);
    assert_int_equal(pf_sql(e->f, "SELECT count(*) FROM result WHERE hostid <> 0"), (int64_t)sent);
    /* Every user got work, and more hosts than users. A request that lost
     * the jobs it chose chooses again from the cache among the jobs it has
     * not tried (h_sched.c rechoose), and one whose looked-up workunits
     * were all taken meanwhile looks up more (h_send.c take_from_cache).
     * Before, on PostgreSQL under load each user's first request sometimes
     * won and its other three lost all (256 sent, 24 lost, 8 hosts), and a
     * fresh clone's run served 12 requests over 7 of the 8 users (issue
     * 17). PER_RPC keeps the 32 requests' wish under the 600 jobs, so that
     * a user left without work is a lost choice, not a drained cache. */
    assert_true(hosts > NUSERS);
    assert_int_equal(users, NUSERS);
    /* And nearly every request: without the second choices 2-5 of the 32
     * went without work on SQLite and 2-16 on PostgreSQL; with them none
     * on SQLite (20 runs) and 0-1 on PostgreSQL (the rounds are bounded:
     * under load one request can lose them all). */
    assert_true(lost <= 1);
    int64_t pairs = pf_sql(e->f, "SELECT count(*) FROM (SELECT 1 FROM result WHERE hostid <> 0 "
                                 "GROUP BY workunitid, userid HAVING count(*) > 1) AS pairs");
    if (pairs != 0)
        fail_msg("%lld user-workunit pairs hold both replicas", (long long)pairs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_one_result_per_user_concurrent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_result_per_user_concurrent, setup_four, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
