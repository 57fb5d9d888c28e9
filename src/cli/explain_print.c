/*
 * How `volsched explain` prints one policy pass: a table for people, JSON
 * for scripts (docs/explain.md). The snapshot reader is cmd_explain.c.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "explain_print.h"
#include "volsched/buf.h"
#include "volsched/json.h"

static const char *why_name(uint8_t why)
{
    switch (why) {
    case VS_CSCHED_EDF:
        return "edf";
    case VS_CSCHED_PERIOD:
        return "period";
    case VS_CSCHED_DEBT:
        return "debt";
    case VS_CSCHED_NONCPU:
        return "non_cpu_intensive";
    default:
        return "no";
    }
}

static const char *why_text(uint8_t why)
{
    switch (why) {
    case VS_CSCHED_EDF:
        return "its project would miss deadlines: earliest deadline first";
    case VS_CSCHED_PERIOD:
        return "has run for less than the scheduling period";
    case VS_CSCHED_DEBT:
        return "its project is owed the most CPU time (short-term debt)";
    case VS_CSCHED_NONCPU:
        return "non-CPU-intensive project: always runs";
    default:
        return "waits";
    }
}

static const char *action_name(enum vs_cact_kind k)
{
    switch (k) {
    case VS_CACT_START:
        return "start";
    case VS_CACT_RESUME:
        return "resume";
    case VS_CACT_SUSPEND_KEEP:
        return "suspend_keep_in_memory";
    case VS_CACT_SUSPEND_REMOVE:
        return "suspend_remove_from_memory";
    }
    return "?";
}

static const struct {
    unsigned bit;
    const char *name;
} state_names[] = {
    {VS_CPS_RUNNABLE, "runnable"},     {VS_CPS_DOWNLOADING, "downloading"},
    {VS_CPS_FETCHABLE, "fetchable"},   {VS_CPS_LATENCY_LIMITED, "latency_limited"},
    {VS_CPS_OVERWORKED, "overworked"}, {VS_CPS_POT_RUNNABLE, "potentially_runnable"},
    {VS_CPS_DEFERRED, "deferred"},
};

int vs_explain_print_json(enum vs_cpolicy pol, const struct vs_cstate *st,
                          const struct vs_cpolicy_out *out)
{
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    struct vs_json j;
    vs_json_init(&j, &b, true);
    vs_json_obj_begin(&j);
    vs_json_key(&j, "policy");
    vs_json_str(&j, vs_cpolicy_name(pol));
    vs_json_key(&j, "total_shortfall");
    vs_json_num(&j, out->rr.total_shortfall);
    vs_json_key(&j, "total_work_before_minq");
    vs_json_num(&j, out->rr.total_work_before_minq);

    vs_json_key(&j, "projects");
    vs_json_obj_begin(&j);
    for (size_t p = 0; p < st->nprojects; p++) {
        vs_json_key(&j, st->projects[p].name);
        vs_json_obj_begin(&j);
        vs_json_key(&j, "shortfall");
        vs_json_num(&j, out->rr.shortfall[p]);
        vs_json_key(&j, "deadlines_missed");
        vs_json_int(&j, out->rr.deadlines_missed[p]);
        vs_json_key(&j, "work_before_minq");
        vs_json_num(&j, out->rr.work_before_minq[p]);
        vs_json_key(&j, "frs");
        vs_json_num(&j, out->rr.frs[p]);
        vs_json_key(&j, "std");
        vs_json_num(&j, st->projects[p].std);
        vs_json_key(&j, "ltd");
        vs_json_num(&j, st->projects[p].ltd);
        vs_json_key(&j, "states");
        vs_json_arr_begin(&j);
        for (size_t i = 0; i < sizeof(state_names) / sizeof(state_names[0]); i++) {
            if (out->rr.states[p] & state_names[i].bit)
                vs_json_str(&j, state_names[i].name);
        }
        vs_json_arr_end(&j);
        vs_json_obj_end(&j);
    }
    vs_json_obj_end(&j);

    vs_json_key(&j, "results");
    vs_json_obj_begin(&j);
    for (size_t r = 0; r < st->nresults; r++) {
        vs_json_key(&j, st->results[r].name);
        vs_json_obj_begin(&j);
        vs_json_key(&j, "project");
        vs_json_str(&j, st->projects[st->results[r].project].name);
        vs_json_key(&j, "deadline_missed");
        vs_json_bool(&j, out->rr.deadline_missed[r]);
        vs_json_key(&j, "finish");
        vs_json_num(&j, out->rr.finish[r]); /* null when not simulated */
        vs_json_key(&j, "scheduled");
        vs_json_str(&j, why_name(out->sched.why[r]));
        vs_json_obj_end(&j);
    }
    vs_json_obj_end(&j);

    vs_json_key(&j, "schedule");
    vs_json_arr_begin(&j);
    for (size_t i = 0; i < out->sched.n; i++)
        vs_json_str(&j, st->results[out->sched.order[i]].name);
    vs_json_arr_end(&j);

    vs_json_key(&j, "actions");
    vs_json_arr_begin(&j);
    for (size_t i = 0; i < out->enforce.n; i++) {
        vs_json_obj_begin(&j);
        vs_json_key(&j, "action");
        vs_json_str(&j, action_name(out->enforce.actions[i].kind));
        vs_json_key(&j, "result");
        vs_json_str(&j, st->results[out->enforce.actions[i].result].name);
        vs_json_obj_end(&j);
    }
    vs_json_arr_end(&j);

    vs_json_key(&j, "work_fetch");
    vs_json_obj_begin(&j);
    vs_json_key(&j, "project");
    if (out->fetch.project >= 0)
        vs_json_str(&j, st->projects[out->fetch.project].name);
    else
        vs_json_null(&j);
    vs_json_key(&j, "reason");
    vs_json_str(&j, vs_cfetch_reason_name(out->fetch.reason));
    vs_json_key(&j, "request");
    vs_json_num(&j, out->fetch.request);
    vs_json_key(&j, "request_project_normalized");
    vs_json_num(&j, out->fetch.request_pn);
    vs_json_key(&j, "requests");
    vs_json_obj_begin(&j);
    for (size_t p = 0; p < st->nprojects; p++) {
        vs_json_key(&j, st->projects[p].name);
        vs_json_num(&j, out->fetch.work_request_size[p]);
    }
    vs_json_obj_end(&j);
    vs_json_obj_end(&j);
    vs_json_obj_end(&j);

    int rc = vs_json_error(&j);
    if (rc == 0)
        printf("%s\n", vs_buf_str(&b));
    vs_buf_cleanup(&b);
    return rc;
}

void vs_explain_print_table(enum vs_cpolicy pol, const struct vs_cstate *st,
                            const struct vs_cpolicy_out *out)
{
    printf("policy %s, %d CPU%s, min_queue %g s, scheduling period %g s\n", vs_cpolicy_name(pol),
           st->host.ncpus, st->host.ncpus == 1 ? "" : "s", st->host.min_queue,
           st->host.sched_period);
    if (st->host.extra_queue > 0 || st->host.cpu_efficiency < 1)
        printf("extra_queue %g s, cpu_efficiency %g\n", st->host.extra_queue,
               st->host.cpu_efficiency);
    printf("total_shortfall %.6g s (idle CPU time in the next min_queue seconds)\n\n",
           out->rr.total_shortfall);
    printf("%-20s %8s %10s %10s %12s %9s %12s  %s\n", "project", "share", "std", "ltd", "shortfall",
           "dl_missed", "request", "states");
    for (size_t p = 0; p < st->nprojects; p++) {
        char states[160] = "";
        size_t n = 0;
        for (size_t k = 0; k < sizeof(state_names) / sizeof(state_names[0]); k++)
            if ((out->rr.states[p] & state_names[k].bit) && n < sizeof(states))
                n += (size_t)snprintf(states + n, sizeof(states) - n, "%s%s", n ? "," : "",
                                      state_names[k].name);
        printf("%-20s %8.4g %10.6g %10.6g %12.6g %9d %12.6g  %s\n", st->projects[p].name,
               st->projects[p].resource_share, st->projects[p].std, st->projects[p].ltd,
               out->rr.shortfall[p], out->rr.deadlines_missed[p], out->fetch.work_request_size[p],
               n ? states : "-");
    }
    printf("\n%-20s %-20s %10s %10s %10s %-7s %s\n", "result", "project", "remaining", "deadline",
           "finish", "missed", "runs?");
    for (size_t r = 0; r < st->nresults; r++) {
        const struct vs_cresult *res = &st->results[r];
        char fin[32];
        if (isinf(out->rr.finish[r]))
            snprintf(fin, sizeof(fin), "-");
        else
            snprintf(fin, sizeof(fin), "%.6g", out->rr.finish[r]);
        printf("%-20s %-20s %10.6g %10.6g %10s %-7s %s\n", res->name,
               st->projects[res->project].name, res->remaining, res->deadline, fin,
               out->rr.deadline_missed[r] ? "MISSED" : "ok",
               out->sched.why[r] ? why_text(out->sched.why[r]) : "no");
    }
    printf("\nschedule:");
    for (size_t i = 0; i < out->sched.n; i++)
        printf(" %s", st->results[out->sched.order[i]].name);
    printf("%s\nactions:", out->sched.n ? "" : " (nothing runnable)");
    for (size_t i = 0; i < out->enforce.n; i++)
        printf("%s %s %s", i ? "," : "", action_name(out->enforce.actions[i].kind),
               st->results[out->enforce.actions[i].result].name);
    printf("%s\n", out->enforce.n ? "" : " none");
    if (out->fetch.project >= 0)
        printf("work fetch: ask %s for %.6g s of work (%.6g project-normalized s), reason: %s\n",
               st->projects[out->fetch.project].name, out->fetch.request, out->fetch.request_pn,
               vs_cfetch_reason_name(out->fetch.reason));
    else
        printf("work fetch: no project to ask\n");
}
