/*
 * The operator's switches over work sending, in one place (sched_int.h,
 * vs_sched__gate): a banned host and the config.xml tags that hold work
 * back or pace the client (dont_send_jobs, min_sendwork_interval,
 * next_rpc_delay, report_max). Kept out of the request flow of h_sched.c
 * and out of the work-send policy (h_send.c), which decide what to send,
 * not whether to. The results the host holds or lost (resend_lost_results,
 * send_result_abort) are h_resend.c's.
 */
#include "server/sched_int.h"

#include <stdio.h>

void vs_sched__report_max(const struct vs_sched *s, struct vs_proto_request *q)
{
    /* BOINC-COMPAT (sched_result.cpp): the reported list is cut to
     * report_max; the rest is not acknowledged, so the client reports it
     * again next time. */
    if (s->cfg.report_max > 0 && q->n_results > (size_t)s->cfg.report_max)
        q->n_results = (size_t)s->cfg.report_max;
}

bool vs_sched__gate(struct vs_sched *s, const struct vs_host *host, bool new_host,
                    double prev_rpc_time, int64_t now, bool wants, struct vs_arena *a,
                    struct vs_proto_reply *r)
{
    /* BOINC-COMPAT: next_rpc_delay goes in every reply: the client comes
     * back within that many seconds even when it needs nothing. */
    if (s->cfg.next_rpc_delay > 0)
        r->next_rpc_delay = s->cfg.next_rpc_delay;
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
    /* dont_send_jobs: the project takes reports but hands out nothing. */
    if (s->cfg.dont_send_jobs) {
        vs_sched__add_msg(r, a, "low", "This project is not sending tasks at the moment");
        return false;
    }
    /* BOINC-COMPAT (handle_request.cpp): a host asking again sooner than
     * min_sendwork_interval gets nothing, and a delay 1% over the interval
     * in case its clock runs a little fast. */
    double since = (double)now - prev_rpc_time;
    if (s->cfg.min_sendwork_interval > 0 && !new_host && prev_rpc_time > 0 &&
        since < s->cfg.min_sendwork_interval) {
        char msg[96];
        snprintf(msg, sizeof(msg), "Not sending work - last request too recent: %d sec",
                 (int)since);
        vs_sched__add_msg(r, a, "low", msg);
        r->request_delay = 1.01 * s->cfg.min_sendwork_interval;
        return false;
    }
    return true;
}
