/*
 * Lost results (config.xml <resend_lost_results>, BOINC's behaviour of
 * sched_resend.cpp, not its code): a result the store says a host has IN
 * PROGRESS but that the host's request neither reports nor lists among its
 * <other_results> was lost on the way (the reply that carried it never
 * arrived, or the client reset). It is sent again with a new deadline when
 * it can still be done in time: half the original sending window from now,
 * no earlier than the old deadline and no later than now + delay_bound,
 * with the estimated run time from the flops recorded at the send. When the
 * workunit is finished or in error, or the deadline cannot be met, it is
 * expired instead (deadline now - 1) so the transitioner times it out and
 * makes a replacement at once, not after the deadline. Each decision is a
 * message in the reply ("Resent lost result X", "Didn't resend lost result
 * X (expired)").
 *
 * Only for hosts whose request carries its lists: BOINC clients always send
 * <other_results> (empty when they hold nothing); a request without one
 * tells nothing about what the host has.
 */
#include <stdio.h>
#include <string.h>

#include "server/sched_int.h"
#include "store/store.h"
#include "volsched/log.h"

/* Lost results looked at in one request. */
#define MAX_LOST    64
#define RESEND_FRAC 0.5

struct lost_scan {
    const struct vs_proto_request *q;
    struct vs_result *v;
    size_t n;
};

static bool listed(const struct vs_proto_request *q, const char *name)
{
    for (size_t i = 0; i < q->n_other_results; i++)
        if (q->other_results[i].name && strcmp(q->other_results[i].name, name) == 0)
            return true;
    for (size_t i = 0; i < q->n_results; i++)
        if (q->results[i].name && strcmp(q->results[i].name, name) == 0)
            return true;
    return false;
}

static int lost_add(void *ctx, const struct vs_result *r)
{
    struct lost_scan *ls = ctx;
    if (ls->n >= MAX_LOST || listed(ls->q, r->name))
        return 0;
    struct vs_result *o = &ls->v[ls->n++];
    *o = *r;
    /* Owned copies: the scan frees its row after the callback. */
    o->xml_doc_in = r->xml_doc_in ? vs_xstrdup(r->xml_doc_in) : NULL;
    o->xml_doc_out = NULL;
    o->stderr_out = NULL;
    return 0;
}

static const struct prep_av *find_av(const struct vs_sched *s, int64_t id)
{
    for (size_t i = 0; i < s->cat->navs; i++)
        if (s->cat->avs[i].av->id == id)
            return &s->cat->avs[i];
    return NULL;
}

/* The new deadline, or 0 when the result cannot be done in time. */
static int64_t new_deadline(const struct vs_result *r, const struct vs_workunit *wu, int64_t now)
{
    int64_t d = now + (int64_t)(RESEND_FRAC * (double)(r->report_deadline - r->sent_time));
    if (d < r->report_deadline)
        d = r->report_deadline;
    int64_t bound = wu->delay_bound > 0 ? wu->delay_bound : 7 * 86400;
    if (d > now + bound)
        d = now + bound;
    double flops = r->flops_estimate > 0 ? r->flops_estimate : 1e9;
    double est = wu->rsc_fpops_est > 0 ? wu->rsc_fpops_est / flops : 0;
    return est > (double)(d - now) ? 0 : d;
}

static void add_item(struct vs_resend *rs, struct vs_arena *a, const struct vs_result *r,
                     int64_t sent, int64_t deadline)
{
    if (!rs->items)
        rs->items = vs_arena_alloc(a, MAX_LOST * sizeof(*rs->items));
    struct vs_resend_item *it = &rs->items[rs->nitems++];
    it->result_id = r->id;
    it->workunit_id = r->workunitid;
    it->sent_time = sent;
    it->report_deadline = deadline;
}

void vs_resend_find(struct vs_sched *s, struct vs_store *st, const struct vs_proto_request *q,
                    int64_t hostid, int64_t now, struct vs_arena *a, struct vs_proto_reply *r,
                    struct vs_resend *rs)
{
    memset(rs, 0, sizeof(*rs));
    struct vs_result found[MAX_LOST];
    struct lost_scan ls = {q, found, 0};
    if (vs_store_results_in_progress(st, hostid, lost_add, &ls) != 0) {
        VS_LOG(s->log, VS_LOG_WARN, "host %lld: cannot read its results in progress",
               (long long)hostid);
        ls.n = 0; /* what was copied is freed below; nothing is decided */
    }
    for (size_t i = 0; i < ls.n; i++) {
        struct vs_result *res = &found[i];
        struct vs_workunit wu;
        memset(&wu, 0, sizeof(wu));
        if (vs_store_workunit_get(st, res->workunitid, &wu) != 0) {
            vs_result_cleanup(res);
            continue;
        }
        const struct prep_av *av = find_av(s, res->app_version_id);
        int64_t d = wu.error_mask || wu.canonical_resultid ? 0 : new_deadline(res, &wu, now);
        char msg[VS_NAME_MAX + 64];
        if (d > 0 && av) {
            if (!rs->jobs)
                rs->jobs = vs_xcalloc(MAX_LOST, sizeof(*rs->jobs));
            struct vs_resend_job *j = &rs->jobs[rs->njobs];
            j->cj.job.result = *res;
            j->cj.job.wu = wu;
            j->sj.av = av;
            j->sj.flops = res->flops_estimate;
            j->deadline = d;
            if (vs_sched__prep_job(s, &j->cj) == 0) {
                rs->njobs++;
                add_item(rs, a, res, now, d);
                snprintf(msg, sizeof(msg), "Resent lost result %s", res->name);
                vs_sched__add_msg(r, a, "high", msg);
                continue; /* the job owns the rows now */
            }
            memset(j, 0, sizeof(*j));
        } else if (d == 0) {
            add_item(rs, a, res, res->sent_time, now - 1);
            snprintf(msg, sizeof(msg), "Didn't resend lost result %s (expired)", res->name);
            vs_sched__add_msg(r, a, "high", msg);
        }
        /* else: no app version to send it with (as BOINC: left alone) */
        vs_result_cleanup(res);
        vs_workunit_cleanup(&wu);
    }
    if (rs->nitems)
        VS_LOG(s->log, VS_LOG_INFO, "host %lld: %zu lost results, %zu resent", (long long)hostid,
               rs->nitems, rs->njobs);
}

void vs_resend_reply(const struct vs_sched *s, const struct vs_send *x,
                     const struct vs_claim *claims, const struct vs_resend *rs, struct vs_arena *a,
                     struct vs_proto_reply *r)
{
    if (rs->njobs == 0) {
        vs_send_reply_jobs(s, x, claims, a, r);
        return;
    }
    /* One reply part for both: the chosen jobs, then the resent ones. */
    size_t n = x->njobs + rs->njobs;
    struct vs_send all = *x;
    all.jobs = vs_xmalloc(n * sizeof(*all.jobs));
    all.sent = vs_arena_alloc(a, n * sizeof(*all.sent));
    struct vs_claim *c = vs_arena_alloc(a, n * sizeof(*c));
    if (x->njobs) {
        memcpy(all.jobs, x->jobs, x->njobs * sizeof(*all.jobs));
        memcpy(all.sent, x->sent, x->njobs * sizeof(*all.sent));
        memcpy(c, claims, x->njobs * sizeof(*c));
    }
    for (size_t i = 0; i < rs->njobs; i++) {
        size_t k = x->njobs + i;
        all.jobs[k] = rs->jobs[i].cj;
        all.sent[k] = rs->jobs[i].sj;
        memset(&c[k], 0, sizeof(c[k]));
        c[k].claimed = true;
        c[k].report_deadline = rs->jobs[i].deadline;
    }
    all.njobs = n;
    vs_send_reply_jobs(s, &all, c, a, r);
    vs_free(all.jobs);
}

void vs_resend_cleanup(struct vs_sched *s, struct vs_resend *rs)
{
    for (size_t i = 0; i < rs->njobs; i++) {
        vs_sched__unprep_job(s, rs->jobs[i].cj.prep);
        vs_result_cleanup(&rs->jobs[i].cj.job.result);
        vs_workunit_cleanup(&rs->jobs[i].cj.job.wu);
    }
    vs_free(rs->jobs);
    memset(rs, 0, sizeof(*rs));
}
