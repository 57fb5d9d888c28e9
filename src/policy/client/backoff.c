/*
 * The client's scheduler-RPC backoff: how long a client leaves a project
 * alone after a scheduler RPC or master-file fetch that failed, or a work
 * request that brought nothing. One home for it, because the client daemon
 * (src/client/rpc.c), the host simulator (src/sim/sim_server.c) and the
 * population simulator's lighter hosts (src/popsim/pop_light.c) must wait
 * the same: the simulators' RPC counts and delays are only the client's if
 * they do.
 *
 * BOINC's rule (7.20.5: scheduler_op.cpp's project_rpc_backoff with
 * client_state.cpp's calculate_exponential_backoff): after the n-th
 * setback in a row, min x 2^n (n capped at RETRY_CAP, 10), capped at max,
 * times a draw in [0.5, 1]; min and max are cc_config's
 * sched_retry_delay_min/max, 60 seconds and 4 hours by default.
 *
 * Two kinds of setback, counted apart, as BOINC does:
 * - a scheduler RPC or master-file fetch that failed: nothing goes to the
 *   project until the wait is over (min_rpc_time);
 * - a work request that brought nothing: no work is asked until the wait
 *   is over (work_backoff_until), but reports and trickles still go, and
 *   the wait ends early when a job of the project finishes uploading (a
 *   project's limit on jobs in progress may then let a request through)
 *   or a reply brings work.
 * For the second, BOINC 7.20 uses other bounds (work_fetch.cpp's
 * resource_backoff: 10 minutes doubling to a day, times [0.5, 1.5)). We
 * keep this rule's bounds on purpose: a host comes back to a project
 * within 4 hours of its work returning rather than up to 36 hours
 * (test_sim_volunteer's nowork gap), for at most six requests a day from a
 * host to a project that has none, which a volsched server answers
 * without touching its store. docs/simulator.md has the comparison.
 *
 * Pure: the draw is the caller's, from the caller's generator.
 */
#include "volsched/client_policy.h"

double vs_cbackoff(int n, double min, double max, double u)
{
    if (n < 1)
        n = 1;
    if (n > VS_CBACKOFF_CAP)
        n = VS_CBACKOFF_CAP;
    if (!(u >= 0)) /* also NaN */
        u = 0;
    if (u > 1)
        u = 1;
    if (!(min > 0))
        min = 0;
    if (!(max > 0))
        max = 0;
    double d = min * (double)(1u << n);
    if (d > max)
        d = max;
    return d * (0.5 + 0.5 * u);
}
