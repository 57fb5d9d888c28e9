/*
 * Latency-limited projects (seed 000, "client data structures"): a project
 * is latency-limited when the client's last scheduler RPC to it returned the
 * "no work because of deadlines" flag and the reply's request delay has not
 * yet elapsed. The project has work, but none this host could finish in time
 * with the queue it holds; the work-fetch policy then counts it as
 * potentially runnable (it accumulates long-term debt) without asking it.
 *
 * One home for the rule, because the client daemon (src/client/rpc.c, from
 * the flag volsched's server puts in its reply) and the host simulator
 * (src/sim/sim_server.c, from the simulated server's answer) must mark the
 * project alike. Pure.
 */
#include "volsched/client_policy.h"

double vs_clatency_limited_until(double now, int nsent, bool deadlines, double request_delay)
{
    if (!deadlines || nsent > 0)
        return 0; /* the last RPC did not say so: not latency-limited */
    return now + (request_delay > 0 ? request_delay : 0);
}
