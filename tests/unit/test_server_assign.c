/*
 * The pure assigned-work policy (policy/server/assign.c): which hosts an
 * assignment reaches, and when a host gets an instance, on hand-made
 * result lists (BOINC's numeric states).
 */
#include "vs_test.h"

#include "volsched/server_policy.h"

#define UNSENT 2
#define INPROG 4
#define OVER   5
#define SUCC   1
#define ERR    3

static void test_matches(void **state)
{
    (void)state;
    struct vs_sp_assignment host = {VS_SP_ASGN_HOST, 7, false};
    struct vs_sp_assignment user = {VS_SP_ASGN_USER, 3, false};
    struct vs_sp_assignment team = {VS_SP_ASGN_TEAM, 9, true};
    struct vs_sp_assignment all = {VS_SP_ASGN_ALL, 0, true};
    struct vs_sp_assignment bad_all = {VS_SP_ASGN_ALL, 0, false};
    assert_true(vs_sp_assign_matches(&host, 7, 1, 0));
    assert_false(vs_sp_assign_matches(&host, 8, 1, 0));
    assert_true(vs_sp_assign_matches(&user, 8, 3, 0));
    assert_false(vs_sp_assign_matches(&user, 8, 4, 9));
    assert_true(vs_sp_assign_matches(&team, 1, 1, 9));
    assert_false(vs_sp_assign_matches(&team, 1, 1, 0)); /* no team: not a member of team 0 */
    assert_true(vs_sp_assign_matches(&all, 1, 1, 0));
    assert_false(vs_sp_assign_matches(&bad_all, 1, 1, 0));
}

static void test_targeted(void **state)
{
    (void)state;
    struct vs_sp_assignment a = {VS_SP_ASGN_USER, 3, false};
    struct vs_sp_asgn_wu wu = {.target_nresults = 2, .max_total_results = 4};
    struct vs_sp_asgn_decision d;
    /* Nothing yet: slot 1. */
    vs_sp_assign_decide(&a, &wu, 10, NULL, 0, &d);
    assert_int_equal(d.action, VS_SP_ASGN_CREATE);
    assert_int_equal(d.slot, 1);
    /* One out on host 10: another host gets slot 2; host 10 nothing. */
    struct vs_sp_asgn_result r[4] = {{10, INPROG, 0, 0, 1}};
    vs_sp_assign_decide(&a, &wu, 11, r, 1, &d);
    assert_int_equal(d.action, VS_SP_ASGN_CREATE);
    assert_int_equal(d.slot, 2);
    vs_sp_assign_decide(&a, &wu, 10, r, 1, &d);
    assert_int_equal(d.action, VS_SP_ASGN_NOTHING);
    /* Two out: enough. */
    r[1] = (struct vs_sp_asgn_result){11, INPROG, 0, 0, 2};
    vs_sp_assign_decide(&a, &wu, 12, r, 2, &d);
    assert_int_equal(d.action, VS_SP_ASGN_NOTHING);
    assert_string_equal(d.why, "enough instances");
    /* Slot 1 errs: its slot is free for a third host, not for host 10. */
    r[0].server_state = OVER;
    r[0].outcome = ERR;
    vs_sp_assign_decide(&a, &wu, 10, r, 2, &d);
    assert_int_equal(d.action, VS_SP_ASGN_NOTHING);
    vs_sp_assign_decide(&a, &wu, 12, r, 2, &d);
    assert_int_equal(d.action, VS_SP_ASGN_CREATE);
    assert_int_equal(d.slot, 1);
    /* A host target retries on its host. */
    struct vs_sp_assignment h = {VS_SP_ASGN_HOST, 10, false};
    vs_sp_assign_decide(&h, &wu, 10, r, 2, &d);
    assert_int_equal(d.action, VS_SP_ASGN_CREATE);
    /* An UNSENT instance (reserved, never sent) is reused first. */
    r[2] = (struct vs_sp_asgn_result){12, UNSENT, 0, 0, 1};
    vs_sp_assign_decide(&a, &wu, 13, r, 3, &d);
    assert_int_equal(d.action, VS_SP_ASGN_REUSE);
    assert_int_equal(d.index, 2);
    /* max_total_results bounds the retries. */
    r[2].server_state = OVER;
    r[2].outcome = ERR;
    r[3] = (struct vs_sp_asgn_result){13, OVER, ERR, 2, 1};
    vs_sp_assign_decide(&a, &wu, 14, r, 4, &d);
    assert_int_equal(d.action, VS_SP_ASGN_NOTHING);
    assert_string_equal(d.why, "max_total_results reached");
    /* Done, errored, or waiting for the transitioner: nothing. */
    struct vs_sp_asgn_wu done = wu;
    done.has_canonical = true;
    vs_sp_assign_decide(&a, &done, 20, NULL, 0, &d);
    assert_int_equal(d.action, VS_SP_ASGN_NOTHING);
    struct vs_sp_asgn_wu due = wu;
    due.transition_due = true;
    vs_sp_assign_decide(&a, &due, 20, NULL, 0, &d);
    assert_string_equal(d.why, "waiting for the transitioner");
    struct vs_sp_asgn_wu errd = wu;
    errd.error_mask = true;
    vs_sp_assign_decide(&a, &errd, 20, NULL, 0, &d);
    assert_int_equal(d.action, VS_SP_ASGN_NOTHING);
    /* A success counts; an invalid one does not. */
    struct vs_sp_asgn_result s2[2] = {{10, OVER, SUCC, 1, 1}, {11, OVER, SUCC, 2, 2}};
    vs_sp_assign_decide(&a, &wu, 12, s2, 2, &d);
    assert_int_equal(d.action, VS_SP_ASGN_CREATE);
    assert_int_equal(d.slot, 2);
}

static void test_broadcast(void **state)
{
    (void)state;
    struct vs_sp_assignment a = {VS_SP_ASGN_ALL, 0, true};
    struct vs_sp_asgn_wu wu = {.target_nresults = 1, .max_total_results = 1};
    struct vs_sp_asgn_decision d;
    struct vs_sp_asgn_result r[2] = {{10, OVER, ERR, 2, VS_SP_ASGN_SLOT_BROADCAST},
                                     {11, UNSENT, 0, 0, VS_SP_ASGN_SLOT_BROADCAST}};
    /* Every host once, beyond target/max_total (those are per instance). */
    vs_sp_assign_decide(&a, &wu, 12, r, 2, &d);
    assert_int_equal(d.action, VS_SP_ASGN_CREATE);
    assert_int_equal(d.slot, VS_SP_ASGN_SLOT_BROADCAST);
    /* A failure is not retried. */
    vs_sp_assign_decide(&a, &wu, 10, r, 2, &d);
    assert_int_equal(d.action, VS_SP_ASGN_NOTHING);
    /* Its reserved, unsent instance is reused. */
    vs_sp_assign_decide(&a, &wu, 11, r, 2, &d);
    assert_int_equal(d.action, VS_SP_ASGN_REUSE);
    assert_int_equal(d.index, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches),
        cmocka_unit_test(test_targeted),
        cmocka_unit_test(test_broadcast),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
