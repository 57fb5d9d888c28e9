/*
 * One result per user per workunit under concurrency (issue 19, finding 3),
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
#include "server/sched.h"

#define NUSERS   8
#define PER_USER 4
#define NWU      300
#define NOW      1800000000

struct env {
    struct project_fixture *f;
    struct vs_sched *s;
    char auth[NUSERS][VS_AUTH_MAX];
    pthread_barrier_t go;
};

static int setup(void **state)
{
    struct env *e = VS_NEW(struct env);
    e->f = pf_create();
    struct project_fixture *f = e->f;
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
    struct vs_sched_options opt = {.max_jobs_per_rpc = 100, .commit_delay_us = 500000};
    assert_int_equal(vs_sched_create(&f->cfg, NULL, &opt, &e->s), 0);
    size_t added = 0;
    assert_int_equal(vs_sched_refill(e->s, &added), 0);
    assert_int_equal(added, 2 * NWU);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;
    vs_sched_destroy(e->s);
    pf_destroy(e->f);
    vs_free(e);
    return 0;
}

struct racer {
    struct env *e;
    int user;
    size_t njobs;
    bool lost; /* chosen jobs, all claimed by others first ("No tasks sent") */
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
    /* The race did happen: many jobs went out, to many hosts at once, and
     * requests lost the jobs they chose to the claims of others. How many
     * of the 600 go out depends on when lost jobs return to the cache
     * (530-600 on SQLite here, 300-550 on PostgreSQL, whose claims take a
     * round trip each), so the count asked is half of one replica each. */
    print_message("%zu jobs sent by %d requests, %zu lost all they chose\n", sent, (int)NT, lost);
    assert_true(sent >= NWU / 2);
    assert_true(lost >= 1);
    assert_int_equal(pf_sql(e->f, "SELECT count(*) FROM result WHERE hostid <> 0"), (int64_t)sent);
    /* Every user got work, and more hosts than users. A request that
     * lost every job it chose chooses again from the cache among the jobs
     * it has not tried (h_sched.c rechoose); before it did, on PostgreSQL
     * under load each user's first request sometimes won and its other
     * three lost all (256 sent, 24 lost, 8 hosts), and a fresh clone's run
     * served 12 requests over 7 of the 8 users (issue 17). */
    struct vs_sched_stats ss;
    vs_sched_get_stats(e->s, &ss);
    int64_t hosts = pf_sql(e->f, "SELECT count(DISTINCT hostid) FROM result WHERE hostid <> 0");
    int64_t users = pf_sql(e->f, "SELECT count(DISTINCT userid) FROM result WHERE hostid <> 0");
    print_message(
        "%zu jobs sent to %lld hosts of %lld users; %llu claims lost, %llu chosen again\n", sent,
        (long long)hosts, (long long)users, (unsigned long long)ss.claims_lost,
        (unsigned long long)ss.rechosen);
    assert_true(hosts > NUSERS);
    assert_int_equal(users, NUSERS);
    int64_t pairs = pf_sql(e->f, "SELECT count(*) FROM (SELECT 1 FROM result WHERE hostid <> 0 "
                                 "GROUP BY workunitid, userid HAVING count(*) > 1) AS pairs");
    if (pairs != 0)
        fail_msg("%lld user-workunit pairs hold both replicas", (long long)pairs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_one_result_per_user_concurrent, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
