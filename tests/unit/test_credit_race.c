/*
 * Credit under concurrency (issue 39): several validators, each on its own
 * store handle (as several `volsched serve` instances on one PostgreSQL
 * store run them; tests/pg runs this binary there too), validate the same
 * queue at once. Every valid result is granted exactly once, and the
 * host, user and team totals each equal the sum of the granted credit:
 * no grant lost to a concurrent read-modify-write, none doubled by two
 * validators taking the same workunit; nor undone by update_stats decaying
 * the averages at the same time.
 */
#include "vs_test.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>

#include "daemon_fixture.h"
#include "volsched/credit.h"
#include "volsched/db_dump.h"
#include "volsched/store_accounts.h"
#include "volsched/store_credit.h"

#define NWUS     60
#define NHOSTS   6
#define NTHREADS 4

struct racer {
    struct project_fixture *f;
    pthread_barrier_t *go;
    int examined;
    int granted;
    int rc;
};

static void *race(void *arg)
{
    struct racer *r = arg;
    struct vs_store *s = NULL;
    r->rc = vs_project_store_open(&r->f->cfg, false, NULL, &s);
    pthread_barrier_wait(r->go);
    for (int i = 0; i < 200 && r->rc == 0; i++) {
        struct vs_validator_stats st;
        int n = vs_validator_pass(s, &r->f->cfg, NOW + 100, 3, NULL, &st);
        if (n < 0) {
            r->rc = n;
            break;
        }
        r->examined += n;
        r->granted += st.ngranted;
        if (n == 0)
            break;
    }
    vs_store_close(s);
    return NULL;
}

/* BOINC's update_stats on its own handle, over and over while the
 * validators grant: its read-decay-write of a page must never undo a
 * grant (a lost grant shows in the sums). */
struct decayer {
    struct project_fixture *f;
    pthread_barrier_t *go;
    atomic_bool *done;
    int runs;
    int rc;
};

static void *decay(void *arg)
{
    struct decayer *d = arg;
    struct vs_store *s = NULL;
    d->rc = vs_project_store_open(&d->f->cfg, false, NULL, &s);
    pthread_barrier_wait(d->go);
    while (d->rc == 0 && !atomic_load(d->done)) {
        d->rc = vs_update_stats(s, NOW + 100 + d->runs, NULL, NULL);
        d->runs++;
    }
    vs_store_close(s);
    return NULL;
}

static void test_parallel_validators(void **state)
{
    struct project_fixture *f = *state;
    f->cfg.validators[0].app[0] = '\0';
    f->cfg.validators[0].method = VS_VALIDATE_ALWAYS;
    f->cfg.validators[0].credit = VS_CREDIT_FLOPS;
    f->cfg.nvalidators = 1;
    int64_t hosts[NHOSTS];
    for (int i = 0; i < NHOSTS; i++)
        hosts[i] = df_host(f);
    for (int w = 0; w < NWUS; w++) {
        char name[32], res[40];
        snprintf(name, sizeof(name), "race%d", w);
        df_wu(f, name, 0, 1, 1, 3, 5, 5, false);
        /* Estimates differ per job, so a lost or doubled grant shows. */
        char sql[160];
        snprintf(sql, sizeof(sql), "UPDATE workunit SET rsc_fpops_est = %de12 WHERE name = '%s'",
                 w + 1, name);
        pf_exec(f, sql);
        df_trans(f, NOW);
        snprintf(res, sizeof(res), "%s_0", name);
        df_send(f, res, hosts[w % NHOSTS], NOW + 1);
        df_report(f, res, hosts[w % NHOSTS], NOW + 10, "1\n");
    }
    df_trans(f, NOW + 10);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM workunit WHERE need_validate = 1"), NWUS);

    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, NTHREADS + 1);
    struct racer r[NTHREADS];
    pthread_t t[NTHREADS], td;
    atomic_bool done = false;
    struct decayer d = {.f = f, .go = &go, .done = &done};
    assert_int_equal(pthread_create(&td, NULL, decay, &d), 0);
    for (int i = 0; i < NTHREADS; i++) {
        r[i] = (struct racer){.f = f, .go = &go};
        assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
    }
    int granted = 0;
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(r[i].rc, 0);
        granted += r[i].granted;
    }
    atomic_store(&done, true);
    pthread_join(td, NULL);
    assert_int_equal(d.rc, 0);
    assert_true(d.runs > 0);
    pthread_barrier_destroy(&go);
    assert_int_equal(granted, NWUS);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM result WHERE validate_state = 1 AND "
                               "granted_credit > 0"),
                     NWUS);
    /* sum over w of (w + 1) e12 FLOPs. */
    double want = (double)NWUS * (NWUS + 1) / 2 * 1e12 * VS_COBBLESTONE_SCALE;
    struct vs_credit_sums sums;
    assert_int_equal(vs_store_credit_sums(f->s, &sums), 0);
    assert_true(fabs(sums.granted - want) < 1e-6);
    assert_true(fabs(sums.hosts - want) < 1e-6);
    assert_true(fabs(sums.users - want) < 1e-6);
    assert_true(fabs(sums.teams - want) < 1e-6);
}

/* The web site and the account manager RPC write a user's row from a copy
 * they read earlier (vs_store_user_update): credit granted by a validator
 * in between must stay, as the scheduler's host update keeps it. */
static void test_user_update_keeps_credit(void **state)
{
    struct project_fixture *f = *state;
    struct vs_user u;
    memset(&u, 0, sizeof(u));
    snprintf(u.name, sizeof(u.name), "keeper");
    assert_int_equal(vs_store_user_add(f->s, &u), 0);
    struct vs_user stale;
    memset(&stale, 0, sizeof(stale));
    assert_int_equal(vs_store_user_get(f->s, u.id, &stale), 0);
    const struct vs_credit_totals granted = {.total = 123.5, .expavg = 7.25, .expavg_time = 9e8};
    assert_int_equal(vs_store_credit_totals_set(f->s, VS_CREDIT_USER, u.id, &granted), 0);
    snprintf(stale.country, sizeof(stale.country), "Chile");
    assert_int_equal(vs_store_user_update(f->s, &stale), 0);
    struct vs_credit_totals now;
    assert_int_equal(vs_store_credit_totals_get(f->s, VS_CREDIT_USER, u.id, &now), 0);
    assert_true(now.total == granted.total);
    assert_true(now.expavg == granted.expavg);
    assert_true(now.expavg_time == granted.expavg_time);
    struct vs_user back;
    memset(&back, 0, sizeof(back));
    assert_int_equal(vs_store_user_get(f->s, u.id, &back), 0);
    assert_string_equal(back.country, "Chile"); /* the rest of the update took */
    vs_user_cleanup(&stale);
    vs_user_cleanup(&back);
    vs_user_cleanup(&u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_parallel_validators, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_user_update_keeps_credit, df_setup, df_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
