/*
 * BOINC's update_stats (issue 39; src/server/update_stats.c): the recent
 * averages of users, hosts and teams decay to now by update_average with
 * no credit. A row idle for a week shows half its average, a day
 * 2^(-1/7) of it; totals never change; rows without an average stay as
 * they are; running again later decays from the last run exactly; more
 * rows than one page (2,000) are all decayed.
 */
#include "vs_test.h"

#include <math.h>

#include "daemon_fixture.h"
#include "volsched/credit.h"
#include "volsched/db_dump.h"
#include "volsched/store_credit.h"

#define DAY    86400.0
#define NEXTRA 2100 /* past one page */

static void set(struct project_fixture *f, enum vs_credit_owner o, int64_t id, double total,
                double avg, double t)
{
    const struct vs_credit_totals v = {.total = total, .expavg = avg, .expavg_time = t};
    assert_int_equal(vs_store_credit_totals_set(f->s, o, id, &v), 0);
}

static struct vs_credit_totals get(struct project_fixture *f, enum vs_credit_owner o, int64_t id)
{
    struct vs_credit_totals v;
    assert_int_equal(vs_store_credit_totals_get(f->s, o, id, &v), 0);
    return v;
}

static void near(double got, double want)
{
    if (!(fabs(got - want) <= 1e-9 * fabs(want) + 1e-12))
        fail_msg("got %.12g, want %.12g", got, want);
}

static int64_t add_user(struct project_fixture *f, int i)
{
    struct vs_user u;
    memset(&u, 0, sizeof(u));
    snprintf(u.name, sizeof(u.name), "u%d", i);
    assert_int_equal(vs_store_user_add(f->s, &u), 0);
    int64_t id = u.id;
    vs_user_cleanup(&u);
    return id;
}

static void test_decay(void **state)
{
    struct project_fixture *f = *state;
    const double now = NOW;
    int64_t host = df_host(f);
    int64_t week = add_user(f, 0), day = add_user(f, 1), none = add_user(f, 2);
    set(f, VS_CREDIT_USER, week, 500, 100, now - 7 * DAY);
    set(f, VS_CREDIT_USER, day, 40, 100, now - DAY);
    set(f, VS_CREDIT_USER, none, 5, 0, now - 30 * DAY);
    set(f, VS_CREDIT_HOST, host, 300, 80, now - 14 * DAY);
    set(f, VS_CREDIT_TEAM, f->teamid, 900, 64, now - 7 * DAY);
    int64_t extra[NEXTRA];
    assert_int_equal(vs_store_begin(f->s), 0);
    for (int i = 0; i < NEXTRA; i++) {
        extra[i] = add_user(f, 10 + i);
        set(f, VS_CREDIT_USER, extra[i], 1, 10, now - 7 * DAY);
    }
    assert_int_equal(vs_store_commit(f->s), 0);

    struct vs_update_stats_result res;
    assert_int_equal(vs_update_stats(f->s, (int64_t)now, NULL, &res), 0);
    assert_int_equal(res.users, 2 + NEXTRA);
    assert_int_equal(res.hosts, 1);
    assert_int_equal(res.teams, 1);

    struct vs_credit_totals v = get(f, VS_CREDIT_USER, week);
    near(v.expavg, 50); /* a week: half */
    assert_true(v.total == 500 && v.expavg_time == now);
    v = get(f, VS_CREDIT_USER, day);
    near(v.expavg, 100 * pow(2, -1.0 / 7));
    assert_true(v.total == 40);
    v = get(f, VS_CREDIT_USER, none);
    assert_true(v.expavg == 0 && v.total == 5 && v.expavg_time == now - 30 * DAY);
    v = get(f, VS_CREDIT_HOST, host);
    near(v.expavg, 20); /* two weeks: a quarter */
    assert_true(v.total == 300);
    near(get(f, VS_CREDIT_TEAM, f->teamid).expavg, 32);
    for (int i = 0; i < NEXTRA; i++)
        near(get(f, VS_CREDIT_USER, extra[i]).expavg, 5);

    /* A day later: from the last run, as if it had never run. */
    assert_int_equal(vs_update_stats(f->s, (int64_t)(now + DAY), NULL, &res), 0);
    near(get(f, VS_CREDIT_USER, week).expavg, 100 * pow(2, -8.0 / 7));
    /* Run again at the same instant: nothing left to decay. */
    assert_int_equal(vs_update_stats(f->s, (int64_t)(now + DAY), NULL, &res), 0);
    assert_int_equal(res.users + res.hosts + res.teams, 0);
    near(get(f, VS_CREDIT_USER, week).expavg, 100 * pow(2, -8.0 / 7));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_decay, df_setup, df_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
