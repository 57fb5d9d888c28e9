/*
 * The results a host holds and the ones it lost: the request's
 * <other_results> (every result the client has and is not reporting)
 * against the store (sched_int.h, vs_sched__other_results).
 *
 * send_result_abort (BOINC-COMPAT handle_request.cpp send_result_abort):
 *   a result the store does not have for this host, or whose workunit was
 *   cancelled: <result_abort> and "Result X is no longer usable"; a result
 *   whose workunit is assimilated, or that timed out (OVER, no reply):
 *   <result_abort_if_not_started>.
 * resend_lost_results (BOINC-COMPAT sched_resend.cpp): a result the store
 *   has in progress on this host that the client does not list is lost. It
 *   is sent again when its workunit still needs it (no error, no canonical
 *   result), the version it was sent with is still offered, and the host
 *   can finish it by the new deadline: now + half the original time
 *   allowed, not before the original deadline nor after now + delay_bound.
 *   The resend keeps server_state IN_PROGRESS and does not count against
 *   the daily quota; no new work goes out in that RPC. Otherwise it is
 *   given up: report_deadline = now - 1 and the workunit's transition now,
 *   so the transitioner times it out and reissues it at once, and the
 *   client reads "Didn't resend lost task X (expired)".
 */
#include "server/sched_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "volsched/alloc.h"
#include "volsched/log.h"

/* Most lost results one RPC gives up (bounds the writes of one request). */
#define MAX_LOST_PER_RPC 100

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The client's result names, sorted, in the arena (for bsearch). */
static const char **held_names(const struct vs_proto_request *q, struct vs_arena *a, size_t *n)
{
    const char **v = vs_arena_alloc(a, (q->n_other_results + 1) * sizeof(*v));
    size_t k = 0;
    for (size_t i = 0; i < q->n_other_results; i++)
        if (q->other_results[i].name && q->other_results[i].name[0])
            v[k++] = q->other_results[i].name;
    qsort(v, k, sizeof(*v), cmp_name);
    *n = k;
    return v;
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

/* The host's in-progress results that the client does not hold. */
struct lost {
    const char **held;
    size_t nheld;
    int64_t ids[MAX_LOST_PER_RPC];
    size_t n;
};

static int collect_lost(void *ctx, const struct vs_result *res)
{
    struct lost *l = ctx;
    const char *name = res->name;
    if (bsearch(&name, l->held, l->nheld, sizeof(*l->held), cmp_name))
        return 0;
    if (l->n < MAX_LOST_PER_RPC)
        l->ids[l->n++] = res->id;
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
 * The new client-side deadline of a lost result if it can be sent again,
 * else 0. flops: the speed the result was sent with (else the host's).
 */
static int64_t resend_deadline(const struct vs_sched *s, const struct vs_proto_request *q,
                               const struct vs_job *j, double flops, int64_t now)
{
    const struct vs_workunit *wu = &j->wu;
    if (wu->error_mask || wu->canonical_resultid || !find_av(s, j->result.app_version_id))
        return 0;
    int64_t orig = j->result.report_deadline - s->cfg.report_grace_period;
    int64_t bound = wu->delay_bound > 0 ? wu->delay_bound : 7 * 86400;
    int64_t dl = now + (orig - j->result.sent_time) / 2;
    if (dl < orig)
        dl = orig;
    if (dl > now + bound)
        dl = now + bound;
    /* Feasible: the estimated run time, at the share of time BOINC computes,
     * fits before the new deadline. */
    double avail = q->time_stats.on_frac * q->time_stats.active_frac;
    if (avail <= 0.01)
        avail = 0.01;
    if (flops <= 0)
        flops = q->host.p_fpops > 0 ? q->host.p_fpops : 1e9;
    double secs = wu->rsc_fpops_est / flops / avail;
    return (double)now + secs < (double)dl ? dl : 0;
}

/* Stores a lost result's fate: the new deadline (resend: dl > 0, stored
 * with the grace period) or now - 1 (given up), and wakes its workunit's
 * transitioner by then. */
static int store_fate(const struct vs_sched *s, struct vs_store *st, struct vs_job *j, int64_t dl,
                      int64_t now)
{
    j->result.report_deadline = dl > 0 ? dl + s->cfg.report_grace_period : now - 1;
    int rc = vs_store_result_update(st, &j->result);
    if (rc == 0 && j->wu.transition_time > j->result.report_deadline) {
        j->wu.transition_time = dl > 0 ? j->result.report_deadline : now;
        rc = vs_store_workunit_update(st, &j->wu);
    }
    return rc;
}

static void lost_results(struct vs_sched *s, struct vs_store *st, const struct vs_proto_request *q,
                         int64_t hostid, int64_t now, struct vs_arena *a, struct vs_proto_reply *r,
                         struct vs_resend *out)
{
    struct lost *l = vs_arena_alloc(a, sizeof(*l));
    memset(l, 0, sizeof(*l));
    l->held = held_names(q, a, &l->nheld);
    int rc = vs_store_results_in_progress(st, hostid, collect_lost, l);
    if (rc != 0) {
        VS_LOG(s->log, VS_LOG_WARN, "resend_lost_results: host %lld: %s", (long long)hostid,
               vs_strerror(rc));
        return;
    }
    if (l->n == 0)
        return;
    out->jobs = vs_xcalloc(l->n, sizeof(*out->jobs));
    out->sent = vs_arena_alloc(a, l->n * sizeof(*out->sent));
    out->claims = vs_arena_alloc(a, l->n * sizeof(*out->claims));
    for (size_t i = 0; i < l->n; i++) {
        struct vs_cache_job *cj = &out->jobs[out->n];
        memset(cj, 0, sizeof(*cj));
        rc = vs_store_result_get(st, l->ids[i], &cj->job.result);
        if (rc == 0 && cj->job.result.server_state != VS_RESULT_SERVER_STATE_IN_PROGRESS)
            rc = VS_ENOTFOUND; /* reported or timed out meanwhile */
        if (rc == 0)
            rc = vs_store_workunit_get(st, cj->job.result.workunitid, &cj->job.wu);
        double flops = cj->job.result.flops_estimate;
        int64_t dl = rc == 0 ? resend_deadline(s, q, &cj->job, flops, now) : 0;
        if (dl > 0 && vs_sched__prep_job(s, cj) != 0)
            dl = 0; /* its stored documents do not parse (logged): give it up */
        if (rc == 0)
            rc = store_fate(s, st, &cj->job, dl, now);
        char msg[VS_NAME_MAX + 64];
        if (rc == 0 && dl > 0) {
            struct send_job *sj = &out->sent[out->n];
            memset(sj, 0, sizeof(*sj));
            sj->av = find_av(s, cj->job.result.app_version_id);
            sj->flops = flops > 0 ? flops : (q->host.p_fpops > 0 ? q->host.p_fpops : 1e9);
            struct vs_claim *c = &out->claims[out->n];
            memset(c, 0, sizeof(*c));
            c->claimed = true;
            c->report_deadline = cj->job.result.report_deadline;
            out->n++;
            snprintf(msg, sizeof(msg), "Resent lost task %s", cj->job.result.name);
            VS_LOG(s->log, VS_LOG_INFO, "host %lld lost result %s: resent", (long long)hostid,
                   cj->job.result.name);
            vs_sched__add_msg(r, a, "low", msg);
            continue;
        }
        if (rc == 0) {
            snprintf(msg, sizeof(msg), "Didn't resend lost task %s (expired)", cj->job.result.name);
            VS_LOG(s->log, VS_LOG_INFO, "host %lld lost result %s: expired for reissue",
                   (long long)hostid, cj->job.result.name);
            vs_sched__add_msg(r, a, "low", msg);
        } else if (rc != VS_ENOTFOUND) {
            VS_LOG(s->log, VS_LOG_WARN, "resend_lost_results: result %lld: %s",
                   (long long)l->ids[i], vs_strerror(rc));
        }
        if (cj->prep)
            vs_sched__unprep_job(s, cj->prep);
        vs_workunit_cleanup(&cj->job.wu);
        vs_result_cleanup(&cj->job.result);
        memset(cj, 0, sizeof(*cj));
    }
}

void vs_sched__other_results(struct vs_sched *s, struct vs_store *st,
                             const struct vs_proto_request *q, const struct vs_host *host,
                             int64_t now, bool *wants, struct vs_arena *a, struct vs_proto_reply *r,
                             struct vs_resend *out)
{
    memset(out, 0, sizeof(*out));
    if (host->id <= 0)
        return;
    /* BOINC-COMPAT: lost results only when the client asks for work; when
     * any is resent, no new work in this RPC. */
    if (s->cfg.resend_lost_results && *wants) {
        lost_results(s, st, q, host->id, now, a, r, out);
        if (out->n > 0)
            *wants = false;
    }
    if (s->cfg.send_result_abort)
        send_aborts(s, st, q, host->id, a, r);
}

void vs_sched__resend_reply(const struct vs_sched *s, const struct vs_resend *x, struct vs_arena *a,
                            struct vs_proto_reply *r)
{
    if (x->n == 0)
        return;
    /* The same elements as new jobs (h_send.c); no new job went out. */
    struct vs_send v;
    memset(&v, 0, sizeof(v));
    v.jobs = x->jobs;
    v.sent = x->sent;
    v.njobs = x->n;
    vs_send_reply_jobs(s, &v, x->claims, a, r);
}

void vs_sched__resend_cleanup(struct vs_sched *s, struct vs_resend *x)
{
    for (size_t i = 0; i < x->n; i++) {
        if (x->jobs[i].prep)
            vs_sched__unprep_job(s, x->jobs[i].prep);
        vs_workunit_cleanup(&x->jobs[i].job.wu);
        vs_result_cleanup(&x->jobs[i].job.result);
    }
    vs_free(x->jobs);
    memset(x, 0, sizeof(*x));
}
