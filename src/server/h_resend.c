/*
 * The results a host holds and the ones it lost: the request's
 * <other_results> (every result the client has and is not reporting)
 * against the store (sched_int.h, vs_resend_find).
 *
 * send_result_abort (BOINC-COMPAT handle_request.cpp send_result_abort):
 *   a result the store does not have for this host, or whose workunit was
 *   cancelled: <result_abort> and "Result X is no longer usable"; a result
 *   whose workunit is assimilated, or that timed out (OVER, no reply):
 *   <result_abort_if_not_started>.
 * resend_lost_results (BOINC's behaviour of sched_resend.cpp, not its
 *   code): a result the store says a host has IN PROGRESS but that the
 *   host's request neither reports nor lists among its <other_results> was
 *   lost on the way (the reply that carried it never arrived, or the client
 *   reset). It is sent again when its workunit still needs it (no error, no
 *   canonical result), the version it was sent with is still offered, and
 *   the host can finish it by the new deadline: now + half the original
 *   time allowed, not before the original deadline nor after now +
 *   delay_bound, the run time estimated from the flops recorded at the send
 *   and the host's on_frac * active_frac. The resend keeps server_state IN
 *   PROGRESS and does not count against the daily quota; no new work goes
 *   out in that RPC (h_sched.c). Otherwise it is given up: report_deadline
 *   = now - 1 and the workunit's transition now, so the transitioner times
 *   it out and reissues it at once. Each decision is a message in the reply
 *   ("Resent lost task X", "Didn't resend lost task X (expired)"); both are
 *   written by the request's commit, with its claims (commit.c).
 *
 * Only for hosts whose request carries its list: BOINC clients always send
 * <other_results> (empty when they hold nothing); a request without one
 * tells nothing about what the host has.
 */
#include <stdio.h>
#include <string.h>

#include "server/sched_int.h"
#include "volsched/alloc.h"
#include "volsched/log.h"
#include "volsched/store.h"

/* Lost results looked at in one request (bounds the writes of one RPC). */
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
    for (size_t i = 0; s->cat && i < s->cat->navs; i++)
        if (s->cat->avs[i].av->id == id)
            return &s->cat->avs[i];
    return NULL;
}

/*
 * The new client-side deadline of lost result r if the host can finish it
 * in time, else 0. The stored deadline carries report_grace_period; the
 * window is the one the client was given.
 */
static int64_t new_deadline(const struct vs_sched *s, const struct vs_proto_request *q,
                            const struct vs_result *r, const struct vs_workunit *wu, int64_t now)
{
    int64_t orig = r->report_deadline - s->cfg.report_grace_period;
    int64_t d = now + (int64_t)(RESEND_FRAC * (double)(orig - r->sent_time));
    if (d < orig)
        d = orig;
    int64_t bound = wu->delay_bound > 0 ? wu->delay_bound : 7 * 86400;
    if (d > now + bound)
        d = now + bound;
    /* Feasible: the estimated run time, at the share of time BOINC
     * computes, fits before the new deadline. */
    double avail = q->time_stats.on_frac * q->time_stats.active_frac;
    if (avail <= 0.01)
        avail = 0.01;
    double flops =
        r->flops_estimate > 0 ? r->flops_estimate : (q->host.p_fpops > 0 ? q->host.p_fpops : 1e9);
    double est = wu->rsc_fpops_est > 0 ? wu->rsc_fpops_est / flops / avail : 0;
    return est < (double)(d - now) ? d : 0;
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

static void add_name(const char ***list, size_t *n, struct vs_arena *a, const char *name)
{
    const char **v = vs_arena_alloc(a, (*n + 1) * sizeof(*v));
    if (*n)
        memcpy(v, *list, *n * sizeof(*v));
    v[(*n)++] = vs_arena_strndup(a, name, strlen(name));
    *list = v;
}

static void send_aborts(struct vs_sched *s, struct vs_store *st, const struct vs_proto_request *q,
                        int64_t hostid, struct vs_arena *a, struct vs_proto_reply *r)
{
    for (size_t i = 0; i < q->n_other_results; i++) {
        const char *name = q->other_results[i].name;
        if (!name || !name[0])
            continue;
        struct vs_result res;
        memset(&res, 0, sizeof(res));
        int rc = vs_store_result_state_by_name(st, name, &res);
        bool abort = false, if_not_started = false;
        if (rc == VS_ENOTFOUND || (rc == 0 && res.hostid != hostid)) {
            abort = true; /* not ours, or not this host's */
        } else if (rc != 0) {
            VS_LOG(s->log, VS_LOG_WARN, "send_result_abort: %s: %s", name, vs_strerror(rc));
            return; /* like BOINC: a store error sends no aborts */
        } else {
            struct vs_workunit wu;
            memset(&wu, 0, sizeof(wu));
            rc = vs_store_workunit_get(st, res.workunitid, &wu);
            if (rc == VS_ENOTFOUND || (rc == 0 && (wu.error_mask & VS_WU_ERROR_CANCELLED)))
                abort = true;
            else if (rc == 0 && wu.assimilate_state == VS_ASSIMILATE_DONE)
                if_not_started = true;
            else if (rc == 0 && res.server_state == VS_RESULT_SERVER_STATE_OVER &&
                     res.outcome == VS_RESULT_OUTCOME_NO_REPLY)
                if_not_started = true;
            vs_workunit_cleanup(&wu);
            if (rc != 0 && rc != VS_ENOTFOUND) {
                VS_LOG(s->log, VS_LOG_WARN, "send_result_abort: %s: %s", name, vs_strerror(rc));
                return;
            }
        }
        if (abort) {
            add_name(&r->result_aborts, &r->n_result_aborts, a, name);
            char msg[VS_NAME_MAX + 40];
            snprintf(msg, sizeof(msg), "Result %s is no longer usable", name);
            vs_sched__add_msg(r, a, "low", msg);
            VS_LOG(s->log, VS_LOG_INFO, "host %lld: result_abort %s", (long long)hostid, name);
        } else if (if_not_started) {
            add_name(&r->result_aborts_if_not_started, &r->n_result_aborts_if_not_started, a, name);
            VS_LOG(s->log, VS_LOG_INFO, "host %lld: result_abort_if_not_started %s",
                   (long long)hostid, name);
        }
    }
}

static void lost_results(struct vs_sched *s, struct vs_store *st, const struct vs_proto_request *q,
                         int64_t hostid, int64_t now, struct vs_arena *a, struct vs_proto_reply *r,
                         struct vs_resend *rs)
{
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
        int64_t d =
            wu.error_mask || wu.canonical_resultid || !av ? 0 : new_deadline(s, q, res, &wu, now);
        char msg[VS_NAME_MAX + 64];
        if (d > 0) {
            if (!rs->jobs)
                rs->jobs = vs_xcalloc(MAX_LOST, sizeof(*rs->jobs));
            struct vs_resend_job *j = &rs->jobs[rs->njobs];
            j->cj.job.result = *res;
            j->cj.job.wu = wu;
            j->sj.av = av;
            j->sj.flops = res->flops_estimate > 0 ? res->flops_estimate
                                                  : (q->host.p_fpops > 0 ? q->host.p_fpops : 1e9);
            /* Stored, and given to the reply, with the grace period (the
             * reply tells the client the deadline without it). */
            j->deadline = d + s->cfg.report_grace_period;
            if (vs_sched__prep_job(s, &j->cj) == 0) {
                rs->njobs++;
                add_item(rs, a, res, now, j->deadline);
                snprintf(msg, sizeof(msg), "Resent lost task %s", res->name);
                vs_sched__add_msg(r, a, "low", msg);
                continue; /* the job owns the rows now */
            }
            memset(j, 0, sizeof(*j)); /* its documents do not parse (logged): give it up */
        }
        add_item(rs, a, res, res->sent_time, now - 1);
        snprintf(msg, sizeof(msg), "Didn't resend lost task %s (expired)", res->name);
        vs_sched__add_msg(r, a, "low", msg);
        vs_result_cleanup(res);
        vs_workunit_cleanup(&wu);
    }
    if (rs->nitems)
        VS_LOG(s->log, VS_LOG_INFO, "host %lld: %zu lost results, %zu resent", (long long)hostid,
               rs->nitems, rs->njobs);
}

void vs_resend_find(struct vs_sched *s, struct vs_store *st, const struct vs_proto_request *q,
                    int64_t hostid, int64_t now, struct vs_arena *a, struct vs_proto_reply *r,
                    struct vs_resend *rs)
{
    memset(rs, 0, sizeof(*rs));
    if (hostid <= 0)
        return;
    if (s->cfg.resend_lost_results)
        lost_results(s, st, q, hostid, now, a, r, rs);
    if (s->cfg.send_result_abort)
        send_aborts(s, st, q, hostid, a, r);
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
