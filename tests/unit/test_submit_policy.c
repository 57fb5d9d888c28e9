/*
 * Remote submission's pure policies (volsched/submit_policy.h): the fair
 * share's virtual times and priorities, and the tail rule's three
 * questions (is the batch in its tail, is the host fit, is the instance
 * overdue).
 */
#include "vs_test.h"

#include "volsched/submit_policy.h"

/* Quotas 1 and 3 starting together: in priority order (higher first) the
 * first 40 jobs split 10:30. */
static void test_fair_interleaves_by_quota(void **state)
{
    (void)state;
    int pa[40], pb[40];
    double sa = vs_sp_fair_start(0, 0), sb = vs_sp_fair_start(0, 0);
    for (size_t i = 0; i < 40; i++) {
        pa[i] = vs_sp_fair_priority(vs_sp_fair_vtime(sa, 1, i));
        pb[i] = vs_sp_fair_priority(vs_sp_fair_vtime(sb, 3, i));
    }
    /* Merge by priority (ties: a first, as the cache's id order would). */
    size_t ia = 0, ib = 0, na = 0;
    for (int k = 0; k < 40; k++) {
        if (pa[ia] >= pb[ib]) {
            ia++;
            na++;
        } else {
            ib++;
        }
    }
    assert_int_equal(na, 10);
    assert_true(pa[0] > pa[1]); /* later jobs later */
}

/* A submitter idle for long starts at the project's clock, not before it:
 * no credit saved up; one ahead of the clock stays ahead. */
static void test_fair_no_saved_credit(void **state)
{
    (void)state;
    assert_true(vs_sp_fair_start(5, 100) == 100);
    assert_true(vs_sp_fair_start(150, 100) == 150);
    assert_true(vs_sp_fair_vtime(100, 2, 0) == 100.5);
    assert_true(vs_sp_fair_vt_of_priority(vs_sp_fair_priority(100.5)) >= 100.5);
    assert_true(vs_sp_fair_vt_of_priority(vs_sp_fair_priority(100.5)) < 100.5 + 0.1);
    /* Bounded at the int range, never positive. */
    assert_int_equal(vs_sp_fair_priority(1e300), INT32_MIN + 1);
    assert_int_equal(vs_sp_fair_priority(-5), 0);
    /* A zero quota is a tiny share, not a division by zero. */
    assert_true(vs_sp_fair_vtime(0, 0, 0) > 1e5);
}

static void test_tail_rule(void **state)
{
    (void)state;
    struct vs_sp_tail_params p;
    vs_sp_tail_defaults(&p);
    struct vs_sp_tail_batch b = {.njobs = 10000, .nunfinished = 1001};
    assert_false(vs_sp_tail_active(&p, &b));
    b.nunfinished = 1000;
    assert_true(vs_sp_tail_active(&p, &b));
    b.nunfinished = 0;
    assert_false(vs_sp_tail_active(&p, &b)); /* done: no tail */
    p.enabled = false;
    b.nunfinished = 5;
    assert_false(vs_sp_tail_active(&p, &b));
    p.enabled = true;

    struct vs_sp_tail_host h = {.turnaround = 3000, .error_rate = 0.01, .turnaround_q = 3600};
    assert_true(vs_sp_tail_host_fit(&p, &h));
    h.turnaround = 4000; /* slower than the quantile */
    assert_false(vs_sp_tail_host_fit(&p, &h));
    h.turnaround = 3000;
    h.error_rate = 0.2; /* unreliable */
    assert_false(vs_sp_tail_host_fit(&p, &h));
    h.error_rate = 0;
    h.turnaround = -1; /* unknown */
    assert_false(vs_sp_tail_host_fit(&p, &h));

    /* Overdue: twice the expected time, and at least min_overdue. */
    assert_false(vs_sp_tail_overdue(&p, 1000 + 1999, 1000, 1000, 0));
    assert_true(vs_sp_tail_overdue(&p, 1000 + 2001, 1000, 1000, 0));
    assert_false(vs_sp_tail_overdue(&p, 1000 + 500, 1000, 10, 0)); /* under min_overdue */
    assert_false(vs_sp_tail_overdue(&p, 1e9, 1000, 1000, 1));      /* max_extra reached */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fair_interleaves_by_quota),
        cmocka_unit_test(test_fair_no_saved_credit),
        cmocka_unit_test(test_tail_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
