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
 * Not modelled yet: BOINC 7.20 answers an empty reply with a second,
 * per-resource backoff instead (work_fetch.cpp's resource_backoff: 10
 * minutes doubling to a day, times [0.5, 1.5)), which holds back work
 * requests only (reports still go) and which it clears whenever a job of
 * that resource finishes uploading, so that a host held by a project's
 * limit on jobs in progress asks again at once. The client daemon does
 * neither of the last two; adopting that rule without them would leave
 * such a host idle for up to a day and a half, so all three callers use
 * this one until the client has them.
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
