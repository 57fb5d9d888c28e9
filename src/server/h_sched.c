/*
 * The scheduler request handler. See sched.h for the flow; BOINC's
 * equivalent is sched/handle_request.cpp + sched_send.cpp, whose behaviour
 * (not code) is summarised in ../shared/docs/boinc-server-notes.md 1.3, 2.5
 * and 2.6.
 */
#include "server/sched_int.h"
#include "volsched/sched.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server/auth_limit.h"
#include "server/cache.h"
#include "server/commit.h"
#include "server/h_report.h"
#include "server/trickle.h"
#include "volsched/alloc.h"
#include "volsched/locality.h"
#include "volsched/log.h"
#include "volsched/logsafe.h"
#include "volsched/proto.h"
#include "volsched/store_sched.h"
#include "volsched/str.h"

/* BOINC-COMPAT: request_delay values of sched/handle_request.cpp (seconds). */
#define DELAY_MISSING_KEY  3600
#define DELAY_BAD_REQUEST  600
#define DELAY_PLATFORM     86400
#define DELAY_SERVER_ERROR 120
/* max_new_hosts_per_day (docs/security.md): checked before the work is chosen, and
 * again in the commit, where it is exact. */
#define NEW_HOSTS_LOG "too many new hosts for one account today"
#define NEW_HOSTS_MSG "This account has added too many computers today; try again later"

/*
 * Every RPC reads its user (by authenticator) and its host (by id). These
 * small direct-mapped caches keep the rows this process read or wrote for
 * CACHE_TTL seconds, so a busy server does not query the store twice per
 * request. The scheduler is the only writer of host rows; a change made by
 * another program (a user's name, say) shows after at most CACHE_TTL.
 */
#define CACHE_TTL 10 /* sizes: VS_SCHED_UCACHE_SIZE, VS_SCHED_HCACHE_SIZE (sched_int.h) */

/* ------------------------------------------------------------------------ */
/* Store handles                                                             */
/* ------------------------------------------------------------------------ */

static int pool_get(struct vs_sched *s, struct vs_store **out)
{
    pthread_mutex_lock(&s->pool_mu);
    if (s->npool > 0) {
        *out = s->pool[--s->npool];
        pthread_mutex_unlock(&s->pool_mu);
        return 0;
    }
    pthread_mutex_unlock(&s->pool_mu);
    int rc = vs_store_open(s->cfg.store_url, 0, s->log, out);
    if (rc == 0 && vs_store_sched_tune(*out, false) != 0)
        VS_LOG(s->log, VS_LOG_WARN, "could not tune a store handle (continuing)");
    return rc;
}

static void pool_put(struct vs_sched *s, struct vs_store *st)
{
    pthread_mutex_lock(&s->pool_mu);
    if (s->npool == s->cap_pool) {
        s->cap_pool = s->cap_pool ? s->cap_pool * 2 : 8;
        s->pool = vs_xreallocarray(s->pool, s->cap_pool, sizeof(*s->pool));
    }
    s->pool[s->npool++] = st;
    pthread_mutex_unlock(&s->pool_mu);
}

/* ------------------------------------------------------------------------ */
/* User and host caches                                                      */
/* ------------------------------------------------------------------------ */

static size_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (size_t)h;
}

/* The account of auth (only the fields the scheduler uses are filled from
 * the cache; its global prefs' text only when read from the store, their
 * mod_time always: *out_prefs_mod; BOINC's email_hash into out_hash).
 * VS_ENOTFOUND if there is none. A weak key (BOINC's "ID_md5") opens the
 * account for attaching and scheduling; it is never cached under the
 * account's key. */
static int user_lookup(struct vs_sched *s, struct vs_store *st, const char *auth, int64_t now,
                       struct vs_user *out, double *out_prefs_mod,
                       char out_hash[VS_MD5_HEX_LEN + 1])
{
    struct ucache_ent *e = &s->ucache[hash_str(auth) & (VS_SCHED_UCACHE_SIZE - 1)];
    pthread_mutex_lock(&s->ucache_mu);
    if (e->expires > now && strcmp(e->authenticator, auth) == 0) {
        memset(out, 0, sizeof(*out));
        out->id = e->id;
        out->teamid = e->teamid;
        out->create_time = e->create_time;
        out->total_credit = e->total_credit;
        out->expavg_credit = e->expavg_credit;
        memcpy(out->name, e->name, sizeof(out->name));
        memcpy(out->authenticator, e->authenticator, sizeof(out->authenticator));
        *out_prefs_mod = e->prefs_mod_time;
        memcpy(out_hash, e->email_hash, VS_MD5_HEX_LEN + 1);
        memcpy(out->cross_project_id, e->cross_project_id, sizeof(out->cross_project_id));
        pthread_mutex_unlock(&s->ucache_mu);
        return 0;
    }
    pthread_mutex_unlock(&s->ucache_mu);
    int rc = vs_store_user_by_auth(st, auth, out);
    if (rc == VS_ENOTFOUND && strchr(auth, '_'))
        rc = vs_sched__weak_auth(st, auth, out);
    if (rc == 0) {
        *out_prefs_mod = vs_sched__prefs_mod_time(out->global_prefs);
        vs_sched__email_hash(out, out_hash);
    }
    if (rc != 0 || strlen(auth) >= VS_AUTH_MAX || strcmp(auth, out->authenticator) != 0)
        return rc;
    pthread_mutex_lock(&s->ucache_mu);
    e->expires = now + CACHE_TTL;
    memcpy(e->authenticator, out->authenticator, sizeof(e->authenticator));
    e->id = out->id;
    e->teamid = out->teamid;
    e->create_time = out->create_time;
    e->total_credit = out->total_credit;
    e->expavg_credit = out->expavg_credit;
    memcpy(e->name, out->name, sizeof(e->name));
    e->prefs_mod_time = *out_prefs_mod;
    memcpy(e->email_hash, out_hash, VS_MD5_HEX_LEN + 1);
    memcpy(e->cross_project_id, out->cross_project_id, sizeof(e->cross_project_id));
    pthread_mutex_unlock(&s->ucache_mu);
    return 0;
}

void vs_sched_forget_user(struct vs_sched *s, const char *auth)
{
    struct ucache_ent *e = &s->ucache[hash_str(auth) & (VS_SCHED_UCACHE_SIZE - 1)];
    pthread_mutex_lock(&s->ucache_mu);
    if (strcmp(e->authenticator, auth) == 0)
        e->expires = 0;
    pthread_mutex_unlock(&s->ucache_mu);
}

void vs_sched_forget_host(struct vs_sched *s, int64_t hostid)
{
    struct hcache_ent *e = &s->hcache[(size_t)hostid & (VS_SCHED_HCACHE_SIZE - 1)];
    pthread_mutex_lock(&s->hcache_mu);
    if (e->host.id == hostid)
        e->expires = 0;
    pthread_mutex_unlock(&s->hcache_mu);
}

/* The host row, and (out_havs, when the cache has them) its quota rows. */
static int host_lookup(struct vs_sched *s, struct vs_store *st, int64_t id, int64_t now,
                       struct vs_host *out, struct host_havs *out_havs)
{
    struct hcache_ent *e = &s->hcache[(size_t)id & (VS_SCHED_HCACHE_SIZE - 1)];
    out_havs->valid = false;
    pthread_mutex_lock(&s->hcache_mu);
    if (e->expires > now && e->host.id == id) {
        *out = e->host;
        *out_havs = e->havs;
        pthread_mutex_unlock(&s->hcache_mu);
        return 0;
    }
    pthread_mutex_unlock(&s->hcache_mu);
    return vs_store_host_get(st, id, out);
}

/* Remembers a host row as just committed (or forgets it: valid false),
 * with its quota rows when they were read or written (havs may be NULL). */
static void host_remember(struct vs_sched *s, const struct vs_host *h, int64_t now, bool valid,
                          const struct vs_sp_hav *havs, int nhavs)
{
    struct hcache_ent *e = &s->hcache[(size_t)h->id & (VS_SCHED_HCACHE_SIZE - 1)];
    pthread_mutex_lock(&s->hcache_mu);
    if (valid) {
        /* The TTL counts from the store read, not from this RPC: the row
         * kept here is this request's, whose credit columns (the
         * validator's) may be older than the store's, and a host that calls
         * every few seconds would otherwise never see them change. */
        if (!(e->host.id == h->id && e->expires > now))
            e->expires = now + CACHE_TTL;
        e->host = *h;
        /* Rows the validator or transitioner changed show after CACHE_TTL
         * at most, like the host row. */
        e->havs.valid = havs && nhavs <= HCACHE_HAVS;
        e->havs.n = e->havs.valid ? nhavs : 0;
        if (e->havs.valid && nhavs > 0)
            memcpy(e->havs.v, havs, (size_t)nhavs * sizeof(*havs));
    } else if (e->host.id == h->id) {
        e->expires = 0;
    }
    pthread_mutex_unlock(&s->hcache_mu);
}

/* ------------------------------------------------------------------------ */
/* Replies                                                                   */
/* ------------------------------------------------------------------------ */

void vs_sched__add_msg(struct vs_proto_reply *r, struct vs_arena *a, const char *prio,
                       const char *text)
{
    struct vs_proto_message *m = vs_arena_alloc(a, (r->n_messages + 1) * sizeof(*m));
    if (r->n_messages)
        memcpy(m, r->messages, r->n_messages * sizeof(*m));
    m[r->n_messages].priority = prio;
    m[r->n_messages].text = vs_arena_strndup(a, text, strlen(text));
    r->messages = m;
    r->n_messages++;
}

static int write_reply(struct vs_sched *s, const struct vs_proto_reply *r, struct vs_buf *out)
{
    int rc = vs_proto_reply_write(r, out);
    if (rc != 0) {
        VS_LOG(s->log, VS_LOG_ERROR, "cannot write scheduler reply: %s", vs_strerror(rc));
        vs_buf_reset(out);
        if (vs_buf_puts(out, "<scheduler_reply>\n<message priority=\"low\">server error"
                             "</message>\n<request_delay>120</request_delay>\n"
                             "</scheduler_reply>\n") != 0)
            return 500;
    }
    return 200;
}

/* A reply that refuses the request: message + request_delay, no work. */
static int refuse(struct vs_sched *s, const char *peer, const char *why, const char *msg,
                  double delay, struct vs_buf *out)
{
    atomic_fetch_add_explicit(&s->n_bad, 1, memory_order_relaxed);
    VS_LOG(s->log, VS_LOG_WARN, "scheduler: refused request from %s: %s", peer ? peer : "?", why);
    struct vs_arena a;
    vs_arena_init(&a, 1024);
    struct vs_proto_reply r = {0};
    r.request_delay = delay;
    r.project_name = s->cfg.long_name[0] ? s->cfg.long_name : NULL;
    vs_sched__add_msg(&r, &a, "low", msg);
    int status = write_reply(s, &r, out);
    vs_arena_cleanup(&a);
    return status;
}

/* ------------------------------------------------------------------------ */
/* The request                                                               */
/* ------------------------------------------------------------------------ */

/* The claims of the chosen jobs send->jobs[from..to). */
static void fill_claims(const struct vs_sched *s, const struct vs_send *send, int64_t now,
                        struct vs_claim *claims, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        const struct vs_job *j = &send->jobs[i].job;
        const struct send_job *sj = &send->sent[i];
        memset(&claims[i], 0, sizeof(claims[i]));
        claims[i].result_id = j->result.id;
        claims[i].workunit_id = j->result.workunitid;
        claims[i].app_version_id = sj->av ? sj->av->av->id : 0;
        claims[i].app_version_num =
            sj->av ? sj->av->av->version_num : (sj->anon_av ? sj->anon_av->version_num : 0);
        int64_t bound = j->wu.delay_bound > 0 ? j->wu.delay_bound : 7 * 86400;
        /* BOINC-COMPAT: the stored deadline includes report_grace_period;
         * the client is told the deadline without it (h_send.c). */
        claims[i].report_deadline = now + bound + s->cfg.report_grace_period;
        claims[i].flops_estimate = sj->flops;
        claims[i].hr_class = sj->hr_class;
        /* The send policy checked the rule against what it read; the claim
         * checks it again against what is committed, since parallel
         * requests of one account all read the store before any commits. */
        /* Assigned instances follow the assignment's own rules (a user's
         * set of hosts is the point of --target_user; a host target retries
         * on its host): the reservation decided them (h_assign.c). */
        claims[i].one_per_user = send->cfg.one_result_per_user_per_wu && !sj->assigned;
        claims[i].one_per_host = send->cfg.one_result_per_host_per_wu && !sj->assigned;
        claims[i].host_max_in_progress = send->host_cap;
        claims[i].day_quota = sj->day_quota;
        claims[i].lease_owner = s->lease_owner;
    }
}

/* Rounds of choosing again after a commit lost claims (rechoose). */
#define RECHOOSE_ROUNDS 2

/*
 * A request that lost claims to others (concurrent requests of the same
 * user or host, another instance, a stale cache copy) and still wants work
 * chooses again from the cache among the jobs it has not tried, through the
 * same rules, and commits those claims, at most RECHOOSE_ROUNDS times.
 * Called after its first item committed (host.id is known then). Returns
 * the claims the rounds added; *claims and send grow in place.
 */
static size_t rechoose(struct vs_sched *s, struct vs_committer *cm,
                       const struct vs_proto_request *q, const struct vs_commit_item *first,
                       struct vs_arena *a, struct vs_send *send, struct vs_claim *claims)
{
    size_t added = 0;
    atomic_fetch_add_explicit(&s->n_claims_lost, send->njobs - first->nclaimed,
                              memory_order_relaxed);
    for (int round = 0; round < RECHOOSE_ROUNDS && first->nclaimed + added < send->njobs; round++) {
        size_t base = vs_send_keep_claimed(s, send, claims, a);
        if (!vs_send_wants_more(send))
            break;
        struct vs_store *st = NULL;
        if (pool_get(s, &st) != 0)
            break;
        /* Announced before choosing, as the first item was: a leader about
         * to commit waits for it. */
        vs_committer_enter(cm);
        size_t more = vs_send_rechoose(s, st, q, first->host->id, a, send);
        pool_put(s, st);
        if (more == 0) {
            vs_committer_leave(cm);
            break;
        }
        atomic_fetch_add_explicit(&s->n_rechosen, 1, memory_order_relaxed);
        fill_claims(s, send, first->now, claims, base, base + more);
        struct vs_commit_item item = {
            .host = first->host,
            .claims_only = true,
            .userid = first->userid,
            .teamid = first->teamid,
            .now = first->now,
            .claims = claims + base,
            .nclaims = more,
        };
        if (vs_committer_run(cm, &item) != 0) {
            for (size_t i = base; i < base + more; i++)
                vs_send_put_back(s, send, i);
            send->njobs = base;
            break;
        }
        added += item.nclaimed;
        atomic_fetch_add_explicit(&s->n_claims_lost, more - item.nclaimed, memory_order_relaxed);
    }
    return added;
}

int vs_sched_handle(struct vs_sched *s, const char *body, size_t len, const char *peer, int64_t now,
                    struct vs_buf *out)
{
    atomic_fetch_add_explicit(&s->n_rpcs, 1, memory_order_relaxed);
    struct vs_arena a;
    vs_arena_init(&a, 32 * 1024);
    struct vs_store *st = NULL;
    struct vs_user user = {0};
    struct vs_host host = {0};
    struct vs_send send;
    bool have_send = false;
    struct vs_claim *claims = NULL;
    struct vs_resend lost = {0};
    int status;
    bool have_cat_lock = false;

    /* Tell the committer a write is coming, so that a commit about to start
     * waits a moment for this request and shares its transaction. Done
     * first: under load most requests are still parsing when a commit
     * starts. Withdrawn at the end unless the item was queued. */
    struct vs_committer *cm =
        s->committers[atomic_fetch_add_explicit(&s->next_committer, 1, memory_order_relaxed) %
                      s->ncommitters];
    vs_committer_enter(cm);
    bool announced = true;

    if (atomic_load_explicit(&s->maintenance, memory_order_relaxed)) {
        /* BOINC-COMPAT: stop_sched: answer without reading the request. */
        atomic_fetch_add_explicit(&s->n_maint, 1, memory_order_relaxed);
        struct vs_proto_reply mr = {0};
        pthread_rwlock_rdlock(&s->cat_lock); /* vs_sched_set_config */
        mr.request_delay = s->cfg.maintenance_delay;
        pthread_rwlock_unlock(&s->cat_lock);
        mr.project_name = s->cfg.long_name[0] ? s->cfg.long_name : NULL;
        vs_sched__add_msg(&mr, &a, "low", "Project is temporarily shut down for maintenance");
        VS_LOG(s->log, VS_LOG_INFO, "scheduler: %s: down for maintenance (stop_sched)",
               peer ? peer : "?");
        status = write_reply(s, &mr, out);
        goto done;
    }
    struct vs_proto_request q;
    struct vs_proto_error perr = {0};
    int rc = vs_proto_request_parse_fast(body, len, &a, &q, &perr);
    if (rc != 0) {
        char why[300];
        snprintf(why, sizeof(why), "%s: %s", vs_strerror(rc), perr.msg);
        status = refuse(s, peer, why, "Invalid scheduler request", DELAY_BAD_REQUEST, out);
        goto done;
    }
    if (!q.authenticator || !q.authenticator[0]) {
        status = refuse(s, peer, "no authenticator", "Invalid or missing account key",
                        DELAY_MISSING_KEY, out);
        goto done;
    }
    int wait = 0;
    if (!vs_auth_limit_allow(s->auth_limit, peer, now, &wait)) {
        status = refuse(s, peer, "too many failed account keys",
                        "Too many invalid account keys from this address; try later",
                        wait > DELAY_BAD_REQUEST ? wait : DELAY_BAD_REQUEST, out);
        goto done;
    }
    rc = pool_get(s, &st);
    if (rc != 0) {
        VS_LOG(s->log, VS_LOG_ERROR, "scheduler: cannot open store: %s", vs_strerror(rc));
        status = refuse(s, peer, "store unavailable", "Server can't open database",
                        DELAY_SERVER_ERROR, out);
        goto done;
    }
    double prefs_mod = 0;
    char email_hash[VS_MD5_HEX_LEN + 1] = "";
    rc = user_lookup(s, st, q.authenticator, now, &user, &prefs_mod, email_hash);
    if (rc != 0) {
        /* Never the authenticator itself: a mistyped one is one character
         * from the real key, and logs are read by more people than
         * the store. */
        char fp[VS_LOGSAFE_SECRET_LEN + 1], why[160];
        vs_logsafe_secret(q.authenticator, fp, sizeof(fp));
        if (rc == VS_ENOTFOUND)
            vs_auth_limit_failed(s->auth_limit, peer, now);
        snprintf(why, sizeof(why), "%s authenticator %s",
                 rc == VS_ENOTFOUND ? "unknown" : vs_strerror(rc), fp);
        status = refuse(s, peer, why,
                        rc == VS_ENOTFOUND ? "Invalid or missing account key" : "Server error",
                        rc == VS_ENOTFOUND ? DELAY_MISSING_KEY : DELAY_SERVER_ERROR, out);
        goto done;
    }

    /* BOINC-COMPAT (authenticate_user): reuse the host row when the id is
     * known, belongs to this user and the sequence number did not go back
     * (a copied client state would); otherwise make a new host, whose id the
     * reply carries and whose rpc_seqno restarts at 0. */
    bool new_host = true;
    struct host_havs cached_havs = {.valid = false};
    if (q.hostid > 0) {
        rc = host_lookup(s, st, q.hostid, now, &host, &cached_havs);
        if (rc == 0 && host.userid == user.id && q.rpc_seqno >= host.rpc_seqno)
            new_host = false;
        else if (rc != 0 && rc != VS_ENOTFOUND) {
            status = refuse(s, peer, "host lookup failed", "Server error", DELAY_SERVER_ERROR, out);
            goto done;
        }
    }
    if (new_host && !vs_sched__new_host_allowed(s, st, user.id, now)) {
        status = refuse(s, peer, NEW_HOSTS_LOG, NEW_HOSTS_MSG, DELAY_MISSING_KEY, out);
        goto done;
    }
    if (new_host) {
        memset(&host, 0, sizeof(host));
        host.create_time = now;
        host.rpc_seqno = 0;
    } else {
        host.rpc_seqno = (int)q.rpc_seqno;
    }
    /* The daily quota's day boundary is between two RPCs of the host. */
    double prev_rpc_time = new_host ? 0 : (double)host.rpc_time;
    vs_sched__host_from_request(&host, &q, &user, peer, now);
    struct vs_reports reports;
    pthread_rwlock_rdlock(&s->cat_lock); /* s->cfg's rules (vs_sched_set_config) */
    have_cat_lock = true;
    vs_sched__report_max(s, &q);
    rc = vs_reports_prepare(st, &q, user.id, &a, s->log, &reports);
    reports.daily_quota = s->cfg.policy.daily_result_quota;
    if (rc != 0) {
        status = refuse(s, peer, "reported results lookup failed", "Server error",
                        DELAY_SERVER_ERROR, out);
        goto done;
    }

    struct vs_proto_reply r = {0};
    r.project_name = s->cfg.long_name[0] ? s->cfg.long_name : NULL;
    r.master_url = s->cfg.master_url;
    r.has_user_info = true;
    r.userid = user.id;
    r.user_name = vs_arena_strndup(&a, user.name, strlen(user.name));
    r.user_create_time = (double)user.create_time;
    r.user_total_credit = user.total_credit;
    r.user_expavg_credit = user.expavg_credit;
    r.host_total_credit = host.total_credit;
    r.host_expavg_credit = host.expavg_credit;
    r.host_create_time = (double)host.create_time;
    r.host_venue = host.venue; /* BOINC-COMPAT: always sent */
    /* BOINC-COMPAT (handle_global_prefs): the account's newer prefs are
     * also the ones this request's work is chosen by, unless the client
     * sent working prefs (a local override). */
    if (vs_sched__prefs_reply(st, &q, &user, prefs_mod, now, &a, &r) && !q.working_global_prefs)
        q.global_prefs = r.global_prefs;
    else if (vs_sched__prefs_store(st, &q, &user, email_hash, prefs_mod, now, s->log, host.id))
        vs_sched_forget_user(s, user.authenticator);
    /* BOINC-COMPAT: the client sends it back as global_prefs_source_email_hash
     * with the preferences this project gave it. */
    r.email_hash = email_hash[0] ? email_hash : NULL;
    /* BOINC-COMPAT: the client keeps the account's CPID per project and
     * sends the oldest one of the volunteer's projects (same e-mail hash)
     * in its requests; the account takes it (authenticate_user). */
    if (vs_sched__cpid_adopt(st, &q, &user, s->log, host.id))
        vs_sched_forget_user(s, user.authenticator);
    r.cross_project_id = user.cross_project_id[0] ? user.cross_project_id : NULL;
    /* BOINC-COMPAT: the key goes only to clients that do not echo one. */
    if (!q.code_sign_key && s->code_sign_key)
        r.code_sign_key = s->code_sign_key;
    struct vs_sched_trickle trickle = {.ups = q.msgs_from_host, .n_ups = q.n_msgs_from_host};
    if (s->trickle_handler && !new_host &&
        vs_trickle_downs_load(st, host.id, &a, &r, &trickle) != 0)
        VS_LOG(s->log, VS_LOG_WARN, "host %lld: cannot read its trickle-downs", (long long)host.id);

    /* ---- choose work (h_send.c: the work-send policy) ---- */
    bool wants = vs_proto_request_wants_work(&q) && !q.dont_send_work;
    bool anonymous = q.platform_name && strcmp(q.platform_name, "anonymous") == 0;
    if (wants && !anonymous && !(q.platform_name && q.platform_name[0])) {
        vs_sched__add_msg(&r, &a, "low", "This project doesn't support computers of this type");
        r.request_delay = DELAY_PLATFORM;
        wants = false;
    }
    /* Assigned work reserves an instance for the host by its id, and a
     * team member's new host is in the team's set from its first request:
     * with assigned work on, a new host's row is made now, not in the
     * commit. Capped as the commit caps it (max_new_hosts_per_day, in the
     * insert): when the cap refuses, the commit refuses the same way. */
    bool made_host = false;
    if (new_host && wants && s->assign &&
        vs_store_host_add_capped(st, &host, now - 86400, s->cfg.policy.max_new_hosts_per_day) ==
            0) {
        new_host = false;
        made_host = true;
    }
    send.teamid = user.teamid;
    bool asked = wants;
    wants = vs_sched__gate(s, &host, new_host, prev_rpc_time, now, wants, &a, &r);
    /* The parser keeps no mark of an empty <other_results/>: the body
     * tells whether the client sent its list (h_resend.c). Not when the
     * operator's gate held work back from a host that asked for it. */
    if (!new_host && !(asked && !wants) && memmem(body, len, "<other_results", 14))
        vs_resend_find(s, st, &q, host.id, now, &a, &r, &lost);
    /* BOINC-COMPAT: when a lost result is resent, no new work in this RPC. */
    if (lost.njobs > 0)
        wants = false;
    send.n_reporting = 0;
    for (size_t i = 0; !new_host && i < reports.n; i++)
        send.n_reporting += reports.e[i].skip == VS_REPORT_RECORD && reports.e[i].hostid == host.id;
    vs_send_choose(s, st, &q, new_host ? 0 : host.id, user.id, prev_rpc_time, now, wants,
                   new_host ? NULL : &cached_havs, &a, &r, &send);
    have_send = true;
    pool_put(s, st);
    st = NULL;
    size_t njobs = send.njobs;

    /* ---- commit: host row + claims + quota rows, durable before the reply ---- */
    /* Room for a second choice too (rechoose): at most max_jobs in all. */
    claims = vs_xcalloc((njobs > send.max_jobs ? njobs : send.max_jobs) + 1, sizeof(*claims));
    fill_claims(s, &send, now, claims, 0, njobs);
    struct vs_commit_item item = {
        .host = &host,
        .new_host = new_host,
        .userid = user.id,
        .teamid = user.teamid,
        .now = now,
        .claims = claims,
        .nclaims = njobs,
        .quota_day_start =
            s->cfg.policy.daily_result_quota > 0 ? vs_sp_quota_day_start(host.id, (double)now) : 0,
        .max_new_hosts = s->cfg.policy.max_new_hosts_per_day,
        .reports = reports.n ? &reports : NULL,
        .resends = lost.items,
        .nresends = lost.nitems,
        .extra = trickle.n_ups || trickle.n_downs ? vs_trickle_commit : NULL,
        .extra_ctx = &trickle,
    };
    announced = false; /* vs_committer_run takes the announcement over */
    rc = vs_committer_run(cm, &item);
    size_t nclaimed = item.nclaimed;
    if (rc == 0 && wants && nclaimed < njobs)
        nclaimed += rechoose(s, cm, &q, &item, &a, &send, claims);
    /* Reported errors lowered max_jobs_per_day in the store after the
     * quota rows were read: those rows are not cached (a host that only
     * errs must meet its lowered quota on its next RPC, not 10 s later). */
    bool havs_fresh = send.havs_read && reports.nrecorded == 0;
    if (host.id > 0)
        host_remember(s, &host, now, rc == 0, havs_fresh ? send.st.havs : NULL,
                      havs_fresh ? send.st.n_havs : 0);
    if (rc != 0) {
        for (size_t i = 0; i < njobs; i++)
            vs_send_put_back(s, &send, i);
        send.njobs = 0;
        pthread_rwlock_unlock(&s->cat_lock);
        have_cat_lock = false;
        if (new_host && rc == VS_ELIMIT) /* the account's last new host raced this one */
            status = refuse(s, peer, NEW_HOSTS_LOG, NEW_HOSTS_MSG, DELAY_MISSING_KEY, out);
        else
            status = refuse(s, peer, "commit failed", "Server error; try again later",
                            DELAY_SERVER_ERROR, out);
        goto done;
    }
    if (new_host || made_host)
        r.hostid = host.id;

    vs_reports_ack(&reports, &r, &a); /* durable now: the client may forget them */
    vs_resend_reply(s, &send, claims, &lost, &a, &r);
    atomic_fetch_add_explicit(&s->n_sent, nclaimed, memory_order_relaxed);
    if (wants && nclaimed == 0) {
        atomic_fetch_add_explicit(&s->n_nowork, 1, memory_order_relaxed);
        if (njobs > 0) /* chosen, but other hosts claimed them first */
            vs_sched__add_msg(&r, &a, "low", "No tasks sent");
    }
    status = write_reply(s, &r, out);
    atomic_fetch_add_explicit(&s->n_reports, reports.nrecorded, memory_order_relaxed);
    /* One line per RPC, as an operator reads BOINC's scheduler log: who,
     * what was reported, what was sent, and why nothing when nothing. */
    VS_LOG(s->log, VS_LOG_INFO,
           "rpc host %lld%s user %lld (%s) from %s: reported %zu (%zu new), sent %zu%s%s%s",
           (long long)host.id, new_host || made_host ? " (new)" : "", (long long)user.id, user.name,
           peer ? peer : "?", reports.n, reports.nrecorded, nclaimed,
           !asked ? ", no work requested" : "", wants && nclaimed == 0 && r.n_messages ? ": " : "",
           wants && nclaimed == 0 && r.n_messages ? r.messages[r.n_messages - 1].text : "");
done:
    if (announced)
        vs_committer_leave(cm);
    if (have_cat_lock)
        pthread_rwlock_unlock(&s->cat_lock);
    for (size_t i = 0; have_send && i < send.njobs; i++)
        vs_send_release(s, &send, i, claims[i].claimed);
    if (have_send)
        vs_send_cleanup(&send);
    vs_resend_cleanup(s, &lost);
    vs_free(claims);
    if (st)
        pool_put(s, st);
    vs_user_cleanup(&user);
    vs_arena_cleanup(&a);
    return status;
}

int vs_sched_http(void *ctx, const char *body, size_t len, const char *peer, struct vs_buf *out)
{
    return vs_sched_handle(ctx, body, len, peer, (int64_t)time(NULL), out);
}
