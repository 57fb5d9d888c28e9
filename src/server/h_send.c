/*
 * Job selection: which cached jobs a scheduler request gets. Every rule is
 * the work-send policy's (include/volsched/server_policy.h, seeds 004, 003
 * and 000); this file only feeds it: the host and request
 * (vs_sp_input_from_request), the apps and versions of the catalog, each
 * cached job, the host's daily-quota rows and, for replicated workunits, the
 * users and hosts that already hold one of its results. It then builds the
 * jobs' part of the reply. See docs/server-policy.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/sched_int.h"
#include "volsched/locality.h"
#include "volsched/log.h"
#include "volsched/policy_input.h"
#include "volsched/store.h"
#include "volsched/str.h"
#include "volsched/submit_tail.h"

/* ------------------------------------------------------------------------ */
/* The catalog as the policy sees it                                          */
/* ------------------------------------------------------------------------ */

static void sp_version_from(struct vs_sp_app_version *v, int64_t id, const char *platform,
                            int version_num, const char *plan_class, double avg_ncpus, int min_core,
                            int max_core, double flops)
{
    memset(v, 0, sizeof(*v));
    v->id = id;
    v->platform = platform;
    v->version_num = version_num;
    v->plan_class = plan_class ? plan_class : "";
    v->proc = vs_sp_plan_class_proc(v->plan_class);
    v->avg_ncpus = v->proc == VS_SP_CPU ? avg_ncpus : (avg_ncpus > 0 ? avg_ncpus : 0.01);
    v->gpu_usage = 1;
    v->min_core_version = min_core;
    v->max_core_version = max_core;
    v->flops = flops;
}

static void sp_app_from(const struct vs_sched *s, struct vs_sp_app *sa, const struct vs_app *app)
{
    memset(sa, 0, sizeof(*sa));
    sa->id = app->id;
    sa->name = app->name;
    sa->user_friendly_name = app->user_friendly_name[0] ? app->user_friendly_name : NULL;
    sa->min_version = app->min_version;
    sa->hr_type = app->homogeneous_redundancy;
    sa->limit_index = vs_sp_limits_app_index(&s->cfg.policy.limits, app->name);
}

void vs_send_catalog(const struct vs_sched *s, struct catalog_snap *c)
{
    size_t na = c->cat.napps;
    c->sp_apps = vs_arena_alloc(&c->arena, (na ? na : 1) * sizeof(*c->sp_apps));
    c->sp_avs = vs_arena_alloc(&c->arena, (c->navs ? c->navs : 1) * sizeof(*c->sp_avs));
    c->sp_av_prep = vs_arena_alloc(&c->arena, (c->navs ? c->navs : 1) * sizeof(*c->sp_av_prep));
    c->n_sp_apps = na;
    c->n_sp_avs = 0;
    /* Versions grouped by app: the policy takes each app's as one array. */
    for (size_t i = 0; i < na; i++) {
        const struct vs_app *app = &c->cat.apps[i];
        struct vs_sp_app *sa = &c->sp_apps[i];
        c->n_loc_full += app->locality_scheduling == VS_LOC_APP_FULL;
        c->n_loc_lite += app->locality_scheduling == VS_LOC_APP_LITE;
        sp_app_from(s, sa, app);
        sa->versions = &c->sp_avs[c->n_sp_avs];
        for (size_t k = 0; k < c->navs; k++) {
            const struct prep_av *p = &c->avs[k];
            if (p->app != app)
                continue;
            sp_version_from(&c->sp_avs[c->n_sp_avs], p->av->id, p->av->platform_name,
                            p->av->version_num, p->av->plan_class, p->pav.avg_ncpus,
                            p->av->min_core_version, p->av->max_core_version, 0);
            c->sp_av_prep[c->n_sp_avs++] = p;
            sa->n_versions++;
        }
    }
}

/* Anonymous platform: the versions are the client's own (<app_version>s of
 * the request), for the apps the project has. Built per request. */
static void anon_catalog(const struct vs_sched *s, const struct catalog_snap *c,
                         const struct vs_proto_request *q, struct pick_ctx *pc)
{
    size_t na = c->cat.napps, nv = q->n_app_versions;
    struct vs_sp_app *apps = vs_arena_alloc(pc->arena, (na ? na : 1) * sizeof(*apps));
    struct vs_sp_app_version *avs = vs_arena_alloc(pc->arena, (nv ? nv : 1) * sizeof(*avs));
    pc->anon = vs_arena_alloc(pc->arena, (nv ? nv : 1) * sizeof(*pc->anon));
    size_t n = 0;
    for (size_t i = 0; i < na; i++) {
        const struct vs_app *app = &c->cat.apps[i];
        sp_app_from(s, &apps[i], app);
        apps[i].versions = &avs[n];
        for (size_t k = 0; k < nv; k++) {
            const struct vs_proto_client_app_version *cav = &q->app_versions[k];
            if (!cav->app_name || strcmp(cav->app_name, app->name) != 0)
                continue;
            /* Generalized ids (negative): no stored version, no quota row. */
            sp_version_from(&avs[n], -(int64_t)(k + 1), q->platform_name, cav->version_num,
                            cav->plan_class, cav->avg_ncpus > 0 ? cav->avg_ncpus : 1, 0, 0,
                            cav->flops > 0 ? cav->flops : 0);
            pc->anon[n++] = cav;
            apps[i].n_versions++;
        }
    }
    pc->apps = apps;
    pc->napps = na;
    pc->avs = avs;
}

static const struct vs_sp_app *find_sp_app(const struct pick_ctx *pc, int64_t appid)
{
    for (size_t i = 0; i < pc->napps; i++)
        if (pc->apps[i].id == appid)
            return &pc->apps[i];
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Picking                                                                    */
/* ------------------------------------------------------------------------ */

static bool replicated(const struct vs_workunit *wu)
{
    return wu->target_nresults > 1 || wu->min_quorum > 1;
}

static const struct holders *holders_find(const struct pick_ctx *pc, int64_t wuid)
{
    for (size_t i = 0; i < pc->nhold; i++)
        if (pc->hold[i].wuid == wuid)
            return &pc->hold[i];
    return NULL;
}

void vs_send__sp_job(const struct pick_ctx *pc, const struct vs_workunit *wu, int64_t result_id,
                     struct vs_sp_job *job)
{
    memset(job, 0, sizeof(*job));
    job->wu_id = wu->id;
    job->result_id = result_id;
    job->app = find_sp_app(pc, wu->appid);
    job->rsc_fpops_est = wu->rsc_fpops_est;
    job->rsc_memory_bound = wu->rsc_memory_bound;
    job->rsc_disk_bound = wu->rsc_disk_bound;
    job->delay_bound = wu->delay_bound;
    job->hr_class = wu->hr_class;
    job->app_version_num = wu->app_version_num;
}

void vs_send__commit(struct pick_ctx *pc, const struct vs_workunit *wu, const struct prep_job *pj,
                     const struct vs_sp_job *job, const struct vs_sp_verdict *v, bool assigned)
{
    struct vs_send *x = pc->x;
    vs_sp_commit(&x->st, job, v);
    if (pj)
        vs_loc_held_add_job(&pc->held, pc->arena, pj);
    struct send_job *sj = &x->sent[x->njobs++];
    size_t idx = (size_t)(v->av - pc->avs);
    sj->av = pc->av_prep ? pc->av_prep[idx] : NULL;
    sj->anon_av = pc->anon ? pc->anon[idx] : NULL;
    double fpops = wu->rsc_fpops_est > 0 ? wu->rsc_fpops_est : 1e12;
    double af = x->st.avail_frac[v->proc] > 0 ? x->st.avail_frac[v->proc] : 1;
    sj->flops = v->est_duration > 0 ? fpops / (v->est_duration * af) : 1e9;
    sj->hr_class = wu->hr_class == 0 ? v->hr_class : 0;
    /* Generalized (anonymous platform) versions have no quota row. */
    sj->day_quota = sj->av ? vs_sp_state_day_quota(&x->st, sj->av->av->id, v->proc) : 0;
    sj->assigned = assigned;
    /* An assigned instance was read from the store, like the locality
     * pass's jobs: unclaimed, it stays UNSENT there (vs_send_release). */
    sj->from_store = assigned;
    sj->job = *job;
    sj->v = *v;
}

/* The app's locality mode (app.locality_scheduling): pc->apps[i] is the
 * catalog's apps[i] in both catalogs (h_send.c builds them that way). */
static int app_locality(const struct pick_ctx *pc, const struct vs_sp_app *sa)
{
    size_t i = sa ? (size_t)(sa - pc->apps) : pc->napps;
    int mode =
        i < pc->napps && i < pc->cat->cat.napps ? pc->cat->cat.apps[i].locality_scheduling : 0;
    /* <locality_scheduling_lite/>: every app that is not full-locality is lite. */
    return mode == VS_LOC_APP_NONE && pc->lite_all ? VS_LOC_APP_LITE : mode;
}

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static bool tried(const struct vs_send *x, int64_t result_id)
{
    return x->ntried > 0 &&
           bsearch(&result_id, x->tried, x->ntried, sizeof(*x->tried), cmp_id) != NULL;
}

static enum vs_cache_pick pick(void *ctx, const struct vs_cache_job *cj)
{
    struct pick_ctx *pc = ctx;
    struct vs_send *x = pc->x;
    if (x->njobs >= pc->max_jobs || !vs_sp_work_needed(&x->st))
        return VS_PICK_STOP;
    /* A second choice: what this request lost once is not chosen again
     * (a refill may have brought it back meanwhile). */
    if (tried(x, cj->job.result.id))
        return VS_PICK_SKIP;
    /* A job of a submitted batch in its tail goes only to a fit host. */
    if (pc->tail && !vs_submit_tail_allows(pc->tail, cj->job.result.batch, pc->hostid))
        return VS_PICK_SKIP;
    const struct vs_workunit *wu = &cj->job.wu;
    const struct prep_job *pj = cj->prep;
    struct vs_sp_job job;
    vs_send__sp_job(pc, wu, cj->job.result.id, &job);
    if (pc->lite_only &&
        (app_locality(pc, job.app) != VS_LOC_APP_LITE || !pj || !vs_loc_held_match(&pc->held, pj)))
        return VS_PICK_SKIP;
    /* A file the host already holds (or that this reply brings) is not
     * charged against its disk again (seed 001). */
    if (pj && pc->held.n > 0)
        job.rsc_disk_bound -= vs_loc_held_credit(&pc->held, pj, wu->rsc_disk_bound);
    if (replicated(wu)) {
        /* Rules 4 and 7 need the workunit's other results: looked up in the
         * store outside the cache lock, then offered again (second pass). */
        const struct holders *h = holders_find(pc, wu->id);
        if (!h) {
            /* Also in a last pass: its pending ones are looked up if the
             * pass takes nothing (take_from_cache). */
            if (pc->npending < MAX_PENDING)
                pc->pending[pc->npending++] = wu->id;
            return VS_PICK_SKIP;
        }
        job.result_userids = h->users;
        job.n_result_userids = h->n;
        job.result_hostids = h->hosts;
        job.n_result_hostids = h->n;
        job.hr_class = h->hr_class;
    }
    struct vs_sp_verdict v;
    if (vs_sp_check_job(&x->st, &job, &v) != VS_SP_OK) {
        pc->last_reason = v.reason;
        /* The cache's jobs may differ in everything: only a refusal of the
         * host or of the reply ends the scan (the shared rule). */
        return vs_sp_scan_stops(v.reason, VS_SP_VARIES_ALL) ? VS_PICK_STOP : VS_PICK_SKIP;
    }
    vs_send__commit(pc, wu, pj, &job, &v, false);
    return VS_PICK_TAKE;
}

struct holder_scan {
    struct pick_ctx *pc;
    struct holders *h;
    size_t cap;
};

static int holder_add(void *ctx, const struct vs_result *r)
{
    struct holder_scan *hs = ctx;
    if (r->hostid == 0)
        return 0; /* not sent */
    struct holders *h = hs->h;
    if ((size_t)h->n == hs->cap) {
        size_t ncap = hs->cap ? hs->cap * 2 : 8;
        int64_t *u = vs_arena_alloc(hs->pc->arena, ncap * sizeof(*u));
        int64_t *o = vs_arena_alloc(hs->pc->arena, ncap * sizeof(*o));
        if (h->n) {
            memcpy(u, h->users, (size_t)h->n * sizeof(*u));
            memcpy(o, h->hosts, (size_t)h->n * sizeof(*o));
        }
        h->users = u;
        h->hosts = o;
        hs->cap = ncap;
    }
    h->users[h->n] = r->userid;
    h->hosts[h->n] = r->hostid;
    h->n++;
    return 0;
}

/* Reads who holds results of the pending workunits. A lookup that fails
 * leaves the workunit unknown, so it is not sent (the safe side). */
static void lookup_pending(struct vs_sched *s, struct vs_store *st, struct pick_ctx *pc)
{
    size_t cap = pc->nhold + pc->npending;
    struct holders *nh = vs_arena_alloc(pc->arena, (cap ? cap : 1) * sizeof(*nh));
    if (pc->nhold)
        memcpy(nh, pc->hold, pc->nhold * sizeof(*nh));
    pc->hold = nh;
    bool hr = s->cfg.policy.homogeneous_redundancy > 0;
    for (size_t i = 0; i < pc->napps; i++)
        hr |= pc->apps[i].hr_type > 0;
    for (size_t i = 0; i < pc->npending; i++) {
        struct holders *h = &pc->hold[pc->nhold];
        memset(h, 0, sizeof(*h));
        h->wuid = pc->pending[i];
        struct holder_scan hs = {pc, h, 0};
        if (!st || vs_store_results_of_wu(st, h->wuid, holder_add, &hs) != 0)
            continue;
        if (hr) {
            struct vs_workunit wu;
            memset(&wu, 0, sizeof(wu));
            if (vs_store_workunit_get(st, h->wuid, &wu) != 0)
                continue;
            h->hr_class = wu.hr_class;
            vs_workunit_cleanup(&wu);
        }
        pc->nhold++;
    }
    pc->npending = 0;
}

struct hav_read {
    struct vs_arena *arena;
    struct vs_sp_hav *v;
    int n, cap;
};

static int hav_add(void *ctx, const struct vs_host_app_version *h)
{
    struct hav_read *hr = ctx;
    if (hr->n == hr->cap) {
        int ncap = hr->cap ? hr->cap * 2 : 8;
        struct vs_sp_hav *nv = vs_arena_alloc(hr->arena, (size_t)ncap * sizeof(*nv));
        if (hr->n)
            memcpy(nv, hr->v, (size_t)hr->n * sizeof(*nv));
        hr->v = nv;
        hr->cap = ncap;
    }
    struct vs_sp_hav *o = &hr->v[hr->n++];
    o->app_version_id = h->app_version_id;
    o->max_jobs_per_day = h->max_jobs_per_day;
    o->n_jobs_today = h->n_jobs_today;
    o->consecutive_valid = h->consecutive_valid;
    return 0;
}

/* Splits the policy's explanation into one reply message per line. */
static void add_lines(struct vs_proto_reply *r, struct vs_arena *a, const char *text)
{
    char line[512];
    while (*text) {
        const char *nl = strchr(text, '\n');
        size_t n = nl ? (size_t)(nl - text) : strlen(text);
        size_t k = n < sizeof(line) - 1 ? n : sizeof(line) - 1;
        memcpy(line, text, k);
        line[k] = '\0';
        if (k)
            vs_sched__add_msg(r, a, "low", line);
        text += n + (nl ? 1 : 0);
    }
}

/* True when a resource the request asks for is at a project job limit. */
static bool at_project_limit(const struct vs_sp_state *st)
{
    for (int p = 0; p < VS_SP_NPROC; p++) {
        bool asked = st->req_secs[p] > 0 || st->req_instances[p] > 0 ||
                     (p == VS_SP_CPU && st->seconds_to_fill > 0);
        if (asked && (st->n_proj_total >= st->lim_proj_total || st->n_proj[p] >= st->lim_proj[p]))
            return true;
    }
    return false;
}

/* The host's in-progress cap (docs/security.md), counted in the store, not taken
 * from the client's list: lowers *max_jobs to what is left under it, or
 * answers "limit reached" and returns false. The claim counts again. */
static bool host_cap_allows(struct vs_sched *s, struct vs_store *st, struct vs_send *x,
                            int64_t hostid, struct vs_arena *a, struct vs_proto_reply *r,
                            size_t *max_jobs)
{
    x->host_cap = vs_sp_host_in_progress_cap(&x->cfg, &x->host);
    if (x->host_cap <= 0)
        return true;
    int64_t n = 0;
    if (hostid > 0 && vs_store_host_count_in_progress(st, hostid, &n) != 0) {
        VS_LOG(s->log, VS_LOG_WARN, "host %lld: cannot count its jobs; no work", (long long)hostid);
        return false;
    }
    /* Results this request reports leave IN_PROGRESS in the commit, before
     * the claim (BOINC handles reports before it sends). */
    n -= x->n_reporting;
    if (n >= x->host_cap) {
        /* No request_delay: it would hold back the host's reports too;
         * the client backs off its work requests by itself. */
        vs_sched__add_msg(r, a, "low", "This computer has reached a limit on tasks in progress");
        return false;
    }
    if ((int64_t)*max_jobs > x->host_cap - n)
        *max_jobs = (size_t)(x->host_cap - n);
    return true;
}

/* The locality pass's door into pick(): the job comes from the store, not
 * the cache, so the holders of a replicated workunit are read at once. */
struct offer_ctx {
    struct pick_ctx *pc;
    struct vs_sched *s;
    struct vs_store *st;
};

static enum vs_offer offer(void *ctx, struct vs_cache_job *cj)
{
    struct offer_ctx *oc = ctx;
    struct pick_ctx *pc = oc->pc;
    struct vs_send *x = pc->x;
    if (replicated(&cj->job.wu) && !holders_find(pc, cj->job.wu.id)) {
        pc->pending[0] = cj->job.wu.id;
        pc->npending = 1;
        lookup_pending(oc->s, oc->st, pc);
    }
    pc->last_reason = VS_SP_OK;
    enum vs_cache_pick d = pick(pc, cj);
    if (d == VS_PICK_TAKE) {
        x->jobs[x->njobs - 1] = *cj;
        x->sent[x->njobs - 1].from_store = true;
        memset(cj, 0, sizeof(*cj));
        return VS_OFFER_TAKEN;
    }
    if (d == VS_PICK_STOP)
        return VS_OFFER_STOP;
    return pc->last_reason == VS_SP_DUP_USER || pc->last_reason == VS_SP_DUP_HOST
               ? VS_OFFER_SKIP_DUP
               : VS_OFFER_SKIP;
}

bool vs_send_wants_more(const struct vs_send *x)
{
    return x->have_state && x->njobs < x->max_jobs && vs_sp_work_needed(&x->st);
}

/* The request's view of the catalog (its own versions on the anonymous
 * platform) and the reply's cap, for one round of choosing. */
static void pick_ctx_init(struct vs_sched *s, const struct vs_proto_request *q, struct vs_send *x,
                          struct vs_arena *a, struct pick_ctx *pc)
{
    *pc = (struct pick_ctx){.x = x,
                            .arena = a,
                            .cat = s->cat,
                            .lite_all = s->cfg.locality_scheduling_lite,
                            .tail = s->tail,
                            .hostid = x->st.host ? x->st.host->id : 0};
    const struct catalog_snap *c = s->cat;
    if (q->platform_name && strcmp(q->platform_name, "anonymous") == 0) {
        anon_catalog(s, c, q, pc);
    } else {
        pc->apps = c->sp_apps;
        pc->napps = c->n_sp_apps;
        pc->avs = c->sp_avs;
        pc->av_prep = c->sp_av_prep;
    }
    pc->max_jobs = (size_t)x->st.max_jobs_per_rpc;
    if (pc->max_jobs > (size_t)s->opt.max_jobs_per_rpc)
        pc->max_jobs = (size_t)s->opt.max_jobs_per_rpc;
}

/* Holder lookups and passes over them in one round of choosing. Each
 * costs a store read per workunit (MAX_PENDING of them): a host that can
 * take none of the cache's replicated jobs now pays up to five times the
 * one lookup it paid before; a request that takes something stops there. */
#define LOOKUP_ROUNDS 5

/* The job cache's passes: locality lite's jobs whose sticky file the host
 * has, then every job, then the replicated ones whose holders the first
 * pass asked for. pick() counts x->njobs itself; each take fills from
 * there. */
static void take_from_cache(struct vs_sched *s, struct vs_store *st, struct pick_ctx *pc)
{
    struct vs_send *x = pc->x;
    const struct catalog_snap *c = s->cat;
    if ((c->n_loc_lite > 0 || pc->lite_all) && pc->held.n > 0 && vs_send_wants_more(x)) {
        pc->lite_only = true;
        size_t base = x->njobs;
        x->njobs = base + vs_cache_take(s->cache, pick, pc, x->jobs + base, pc->max_jobs - base);
        pc->lite_only = false;
    }
    size_t base = x->njobs;
    if (base < pc->max_jobs)
        x->njobs = base + vs_cache_take(s->cache, pick, pc, x->jobs + base, pc->max_jobs - base);
    /* The holders of the replicated workunits the pass met, then a pass
     * over those. When concurrent requests took every job of the looked-up
     * workunits meanwhile, that pass takes nothing: the request chooses
     * again among the workunits it met then, a bounded number of times
     * (the store reads are per workunit). A pass that took something ends
     * it, as it always did. */
    size_t got = 0;
    for (int round = 0; round < LOOKUP_ROUNDS; round++) {
        if (pc->npending == 0 || x->njobs >= pc->max_jobs || !vs_sp_work_needed(&x->st) ||
            (round > 0 && got > 0))
            break;
        lookup_pending(s, st, pc);
        base = x->njobs;
        x->njobs = base + vs_cache_take(s->cache, pick, pc, x->jobs + base, pc->max_jobs - base);
        got = x->njobs - base;
    }
}

void vs_send_choose(struct vs_sched *s, struct vs_store *st, const struct vs_proto_request *q,
                    int64_t hostid, int64_t userid, double prev_rpc_time, int64_t now, bool wants,
                    const struct host_havs *cached, struct vs_arena *a, struct vs_proto_reply *r,
                    struct vs_send *x)
{
    /* Not memset: st is large (the reply's workunit ids) and
     * vs_sp_state_init() clears it anyway. */
    x->have_state = x->client_refused = x->havs_read = false;
    x->havs0 = NULL;
    x->n_havs0 = 0;
    x->tried = NULL;
    x->ntried = 0;
    x->jobs = NULL;
    x->sent = NULL;
    x->njobs = 0;
    x->host_cap = 0;
    x->max_jobs = 0;
    x->cfg = s->cfg.policy;
    /* volsched never sends two results of one workunit to one host, as
     * before the rules were configurable (BOINC's scheduler does the same
     * for a host's own results). */
    x->cfg.one_result_per_host_per_wu = true;
    if (vs_sp_input_from_request(q, hostid, userid, (double)now, prev_rpc_time, a, &x->host,
                                 &x->req) != 0)
        return;

    /* Rule 8 (the reported results are still handled by the caller). */
    struct vs_sp_verdict cv;
    if (wants && vs_sp_check_client(&x->cfg, &x->host, &cv) != VS_SP_OK) {
        struct vs_buf b;
        vs_buf_init(&b, 1024);
        if (vs_buf_puts(&b, "No tasks sent\n") == 0 && vs_sp_verdict_message(NULL, &cv, &b) == 0)
            add_lines(r, a, vs_buf_str(&b));
        vs_buf_cleanup(&b);
        int d = vs_sp_reason_delay(cv.reason);
        if (d > r->request_delay)
            r->request_delay = d;
        x->client_refused = true;
        return;
    }

    /* The host's daily-quota rows (only read when a quota is configured). */
    struct hav_read hr = {a, NULL, 0, 0};
    if (wants && x->cfg.daily_result_quota > 0) {
        if (hostid == 0) {
            x->havs_read = true; /* a new host has none */
        } else if (cached && cached->valid) {
            hr.v = vs_arena_alloc(a, (size_t)(cached->n ? cached->n : 1) * sizeof(*hr.v));
            memcpy(hr.v, cached->v, (size_t)cached->n * sizeof(*hr.v));
            hr.n = cached->n;
            x->havs_read = true;
        } else if (vs_store_havs_of_host(st, hostid, hav_add, &hr) == 0) {
            x->havs_read = true;
        } else {
            VS_LOG(s->log, VS_LOG_WARN, "host %lld: cannot read quota rows; no work",
                   (long long)hostid);
            wants = false;
        }
    }
    if (vs_sp_state_init(&x->st, &x->cfg, &x->host, &x->req, hr.v, hr.n) != 0)
        return;
    x->havs0 = hr.v;
    x->n_havs0 = hr.n;
    x->have_state = true;
    if (!wants)
        return;

    struct pick_ctx pc;
    pick_ctx_init(s, q, x, a, &pc);
    if (!host_cap_allows(s, st, x, hostid, a, r, &pc.max_jobs))
        return;
    /* Not zeroed: vs_cache_take writes every entry it returns. */
    x->jobs = vs_xmalloc((pc.max_jobs + 1) * sizeof(*x->jobs));
    x->sent = vs_arena_alloc(a, (pc.max_jobs + 1) * sizeof(*x->sent));
    memset(x->sent, 0, (pc.max_jobs + 1) * sizeof(*x->sent));
    x->max_jobs = pc.max_jobs;
    vs_loc_held_from_request(&pc.held, q, a);
    /* Assigned work first (h_assign.c); pick() and take() count x->njobs
     * themselves. */
    vs_assign_choose(s, st, &pc, now, r);
    /* Seed 001 (after assigned work, before the job cache): jobs for the
     * files the host has, or for a working-set file. */
    if (s->loc && s->cat->n_loc_full > 0) {
        struct offer_ctx oc = {&pc, s, st};
        vs_locality_send(s, st, q, hostid, userid, offer, &oc, a, r, x);
    }
    take_from_cache(s, st, &pc);
    if (x->njobs == 0) {
        struct vs_buf b;
        vs_buf_init(&b, 16 * 1024);
        if (vs_sp_explain(&x->st, &b) == 0) {
            bool refused = false;
            for (int k = VS_SP_OK + 1; k < VS_SP__NREASONS; k++)
                refused |=
                    x->st.n_refused[k] > 0 && k != VS_SP_NO_WORK_WANTED && k != VS_SP_RPC_LIMIT;
            /* Nothing was even tried: the host is at a project job limit
             * for every resource it asks for, or the cache is empty. */
            const char *why = at_project_limit(&x->st)
                                  ? "This computer has reached a limit on tasks in progress\n"
                                  : "Project has no tasks available\n";
            if (refused || vs_buf_puts(&b, why) == 0)
                add_lines(r, a, vs_buf_str(&b));
        }
        vs_buf_cleanup(&b);
        /* Seed 000: work the host could not finish in time is "no work
         * because of deadlines", a flag and a request delay during which
         * the client counts the project latency-limited. */
        r->vs_no_work_because_of_deadlines = vs_sp_no_work_because_of_deadlines(&x->st);
        int d = vs_sp_reply_delay(&x->st);
        if (d > r->request_delay)
            r->request_delay = d;
    }
}

void vs_send_release(struct vs_sched *s, struct vs_send *x, size_t i, bool claimed)
{
    struct vs_cache_job *j = &x->jobs[i];
    if (!x->sent[i].from_store) {
        vs_cache_forget(s->cache, j, !claimed);
        return;
    }
    /* Read from the store by the locality pass: nothing to tell the cache
     * (an unclaimed result is still UNSENT there for the next request). */
    if (j->prep)
        vs_sched__unprep_job(s, j->prep);
    j->prep = NULL;
    vs_job_cleanup(&j->job);
}

void vs_send_put_back(struct vs_sched *s, struct vs_send *x, size_t i)
{
    if (x->sent[i].from_store)
        vs_send_release(s, x, i, false);
    else
        vs_cache_put_back(s->cache, &x->jobs[i]);
}

size_t vs_send_keep_claimed(struct vs_sched *s, struct vs_send *x, struct vs_claim *claims,
                            struct vs_arena *a)
{
    size_t n = x->njobs, kept = 0;
    int64_t *ids = vs_arena_alloc(a, (x->ntried + n + 1) * sizeof(*ids));
    if (x->ntried)
        memcpy(ids, x->tried, x->ntried * sizeof(*ids));
    size_t nids = x->ntried;
    for (size_t i = 0; i < n; i++) {
        if (!claims[i].claimed) {
            ids[nids++] = x->jobs[i].job.result.id;
            vs_send_release(s, x, i, false);
            continue;
        }
        if (kept != i) {
            x->jobs[kept] = x->jobs[i];
            x->sent[kept] = x->sent[i];
            claims[kept] = claims[i];
        }
        kept++;
    }
    qsort(ids, nids, sizeof(*ids), cmp_id);
    x->tried = ids;
    x->ntried = nids;
    x->njobs = kept;
    if (!x->have_state || kept == n)
        return kept;
    /* The state counted the lost jobs against the request's wish, the
     * limits and the quota: start it again and count only what was sent. */
    vs_sp_state_cleanup(&x->st);
    x->have_state = false;
    if (vs_sp_state_init(&x->st, &x->cfg, &x->host, &x->req, x->havs0, x->n_havs0) != 0)
        return kept; /* no state: the request wants nothing more */
    x->have_state = true;
    for (size_t i = 0; i < kept; i++)
        vs_sp_commit(&x->st, &x->sent[i].job, &x->sent[i].v);
    return kept;
}

size_t vs_send_rechoose(struct vs_sched *s, struct vs_store *st, const struct vs_proto_request *q,
                        int64_t hostid, struct vs_arena *a, struct vs_send *x)
{
    if (!vs_send_wants_more(x))
        return 0;
    struct pick_ctx pc;
    pick_ctx_init(s, q, x, a, &pc);
    if (pc.max_jobs > x->max_jobs)
        pc.max_jobs = x->max_jobs;
    if (x->host_cap > 0) {
        /* The store now holds this request's claims and reports: what is
         * left under the cap is counted there, not estimated. */
        int64_t n = 0;
        if (vs_store_host_count_in_progress(st, hostid, &n) != 0 || n >= x->host_cap)
            return 0;
        if ((int64_t)(pc.max_jobs - x->njobs) > x->host_cap - n)
            pc.max_jobs = x->njobs + (size_t)(x->host_cap - n);
    }
    vs_loc_held_from_request(&pc.held, q, a);
    /* The claimed jobs' sticky files are on their way to the host. */
    for (size_t i = 0; i < x->njobs; i++)
        if (x->jobs[i].prep)
            vs_loc_held_add_job(&pc.held, a, x->jobs[i].prep);
    size_t base = x->njobs;
    take_from_cache(s, st, &pc);
    return x->njobs - base;
}

void vs_send_cleanup(struct vs_send *x)
{
    if (x->have_state)
        vs_sp_state_cleanup(&x->st);
    x->have_state = false;
    vs_free(x->jobs);
    x->jobs = NULL;
}

/* ------------------------------------------------------------------------ */
/* The jobs' part of the reply                                                */
/* ------------------------------------------------------------------------ */

static bool have_name(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

void vs_send_reply_jobs(const struct vs_sched *s, const struct vs_send *x,
                        const struct vs_claim *claims, struct vs_arena *a, struct vs_proto_reply *r)
{
    size_t n = x->njobs;
    size_t max_fi = 0;
    for (size_t i = 0; i < n; i++) {
        const struct prep_job *pj = x->jobs[i].prep;
        max_fi += pj->n_in + pj->n_out + (x->sent[i].av ? x->sent[i].av->nfis : 0);
    }
    r->apps = vs_arena_alloc(a, (n + 1) * sizeof(*r->apps));
    r->app_versions = vs_arena_alloc(a, (n + 1) * sizeof(*r->app_versions));
    r->file_infos = vs_arena_alloc(a, (max_fi + 1) * sizeof(*r->file_infos));
    r->workunits = vs_arena_alloc(a, (n + 1) * sizeof(*r->workunits));
    r->results = vs_arena_alloc(a, (n + 1) * sizeof(*r->results));
    const char **fi_names = vs_arena_alloc(a, (max_fi + 1) * sizeof(*fi_names));
    const struct prep_av **avs_sent = vs_arena_alloc(a, (n + 1) * sizeof(*avs_sent));
    size_t n_avs_sent = 0;
    for (size_t i = 0; i < n; i++) {
        if (!claims[i].claimed)
            continue;
        const struct prep_job *pj = x->jobs[i].prep;
        const struct send_job *sj = &x->sent[i];
        if (sj->av) {
            bool seen = false;
            for (size_t k = 0; k < n_avs_sent; k++)
                seen |= avs_sent[k] == sj->av;
            if (!seen) {
                avs_sent[n_avs_sent++] = sj->av;
                bool app_seen = false;
                for (size_t k = 0; k < r->n_apps; k++)
                    app_seen |= strcmp(r->apps[k].name, sj->av->papp.name) == 0;
                if (!app_seen)
                    r->apps[r->n_apps++] = sj->av->papp;
                for (size_t f = 0; f < sj->av->nfis; f++) {
                    if (have_name(fi_names, r->n_file_infos, sj->av->fis[f].name))
                        continue;
                    fi_names[r->n_file_infos] = sj->av->fis[f].name;
                    r->file_infos[r->n_file_infos++] = sj->av->fis[f];
                }
                struct vs_proto_app_version *pav = &r->app_versions[r->n_app_versions++];
                *pav = sj->av->pav;
                pav->flops = sj->flops;
            }
        }
        for (size_t f = 0; f < pj->n_in; f++) {
            if (have_name(fi_names, r->n_file_infos, pj->in_fis[f].name))
                continue;
            fi_names[r->n_file_infos] = pj->in_fis[f].name;
            r->file_infos[r->n_file_infos++] = pj->in_fis[f];
        }
        for (size_t f = 0; f < pj->n_out; f++) {
            fi_names[r->n_file_infos] = pj->out_fis[f].name;
            r->file_infos[r->n_file_infos++] = pj->out_fis[f];
        }
        struct vs_proto_workunit *w = &r->workunits[r->n_workunits++];
        *w = pj->wu;
        const struct vs_app *app = vs_sched__find_app(&s->cat->cat, x->jobs[i].job.wu.appid);
        w->app_name = app ? app->name : "";
        struct vs_proto_result *res = &r->results[r->n_results++];
        *res = pj->res;
        res->report_deadline = (double)(claims[i].report_deadline - s->cfg.report_grace_period);
        if (sj->av) {
            res->platform = sj->av->pav.platform;
            res->version_num = sj->av->pav.version_num;
            res->plan_class = sj->av->pav.plan_class;
        } else if (sj->anon_av) {
            res->platform = sj->anon_av->platform;
            res->version_num = sj->anon_av->version_num;
            res->plan_class = sj->anon_av->plan_class;
        }
    }
}
