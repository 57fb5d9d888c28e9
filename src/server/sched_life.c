/*
 * The scheduler's life cycle: creating it (store handles, the writers'
 * committers, the catalog, the job cache and its lease), the feeder's
 * refill, statistics, a new config, maintenance. The request path is in
 * h_sched.c.
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
#include "volsched/alloc.h"
#include "volsched/locality.h"
#include "volsched/log.h"
#include "volsched/store_sched.h"
#include "volsched/str.h"

/* Jobs per RPC when the options set no limit (vs_sched_options). */
#define DEFAULT_MAX_PER_RPC 100

int vs_sched_refill(struct vs_sched *s, size_t *out_added)
{
    pthread_mutex_lock(&s->feed_mu);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* vs_sched__prep_job reads no catalog state, so the feeder needs no catalog lock. */
    int rc = vs_cache_refill(s->cache, s->feed_store, out_added);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (took >= 0.5) {
        /* A slow store starves the cache: say so (several instances on
         * one store wait for each other's write transactions). */
        struct vs_cache_stats cs;
        vs_cache_get_stats(s->cache, &cs);
        VS_LOG(s->log, VS_LOG_WARN,
               "job cache refill took %.1f s (%zu of %zu cached, %llu lost to other instances' "
               "leases)",
               took, cs.present, cs.nslots, (unsigned long long)cs.lost);
    }
    /* The writer does not checkpoint (vs_store_sched_tune): the feeder does,
     * about once a second, off the request path. */
    int64_t now = (int64_t)time(NULL);
    if (rc == 0 && now != s->last_checkpoint) {
        s->last_checkpoint = now;
        rc = vs_store_sched_checkpoint(s->feed_store);
    }
    pthread_mutex_unlock(&s->feed_mu);
    return rc;
}

/*
 * The instance's lease owner id: a positive 63-bit hash (FNV-1a) of the host
 * name and the project directory, never 0 (0 means "no lease" in the
 * store). Each instance has a directory of its own (its pid file holds it),
 * so two live instances never share an id, and an instance restarted in
 * its directory (after kill -9, or a clean stop) is the same owner: it
 * takes its own leases back at once instead of waiting for them to end.
 */
static int64_t lease_owner_id(const char *dir)
{
    char host[256] = "";
    if (gethostname(host, sizeof(host) - 1) != 0)
        host[0] = '\0';
    char real[VS_PATH_MAX];
    const char *d = realpath(dir, real) ? real : dir;
    uint64_t h = 0xcbf29ce484222325ull;
    const char *parts[] = {host, "\n", d};
    for (size_t k = 0; k < sizeof(parts) / sizeof(parts[0]); k++)
        for (const unsigned char *p = (const unsigned char *)parts[k]; *p; p++)
            h = (h ^ *p) * 0x100000001b3ull;
    h &= INT64_MAX;
    return h ? (int64_t)h : 1;
}

static char *read_small_file(const char *path)
{
    struct vs_buf b;
    vs_buf_init(&b, 64 * 1024);
    int rc = vs_buf_append_file(&b, path);
    if (rc != 0 || b.len == 0) {
        vs_buf_cleanup(&b);
        return NULL;
    }
    return vs_buf_take(&b, NULL);
}

int vs_sched_create(const struct vs_project_config *cfg, struct vs_log *log,
                    const struct vs_sched_options *opts, struct vs_sched **out)
{
    struct vs_sched *s = VS_NEW(struct vs_sched);
    s->cfg = *cfg;
    s->log = log;
    if (opts)
        s->opt = *opts;
    if (s->opt.max_jobs_per_rpc <= 0)
        s->opt.max_jobs_per_rpc = DEFAULT_MAX_PER_RPC;
    if (s->opt.commit_delay_us < 0)
        s->opt.commit_delay_us = 0;
    else if (s->opt.commit_delay_us == 0)
        s->opt.commit_delay_us = 1000;
    /* Writer-preferring: glibc's default lets a steady stream of requests
     * (readers) starve the catalog reload's swap, and the main loop that
     * waited there stopped refilling the job cache (seen under 512 hosts on
     * three instances: every cache ran dry). */
    pthread_rwlockattr_t rwa;
    pthread_rwlockattr_init(&rwa);
    pthread_rwlockattr_setkind_np(&rwa, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&s->cat_lock, &rwa);
    pthread_rwlockattr_destroy(&rwa);
    pthread_mutex_init(&s->feed_mu, NULL);
    pthread_mutex_init(&s->pool_mu, NULL);
    pthread_mutex_init(&s->ucache_mu, NULL);
    pthread_mutex_init(&s->hcache_mu, NULL);
    s->ucache = vs_xcalloc(VS_SCHED_UCACHE_SIZE, sizeof(*s->ucache));
    s->hcache = vs_xcalloc(VS_SCHED_HCACHE_SIZE, sizeof(*s->hcache));
    char path[VS_PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/code_sign_public", cfg->key_dir);
    s->code_sign_key = read_small_file(path);
    s->trickle_handler = cfg->trickle_handler[0] != '\0';
    if (!s->code_sign_key)
        VS_LOG(log, VS_LOG_WARN, "no code-signing key at %s: clients will refuse app files", path);
    int rc = vs_store_open(cfg->store_url, 0, log, &s->feed_store);
    if (rc != 0) {
        VS_LOG(log, VS_LOG_ERROR, "cannot open store %s: %s", cfg->store_url, vs_strerror(rc));
        goto fail;
    }
    if (vs_store_sched_tune(s->feed_store, false) != 0)
        VS_LOG(log, VS_LOG_WARN, "could not tune the store handles (continuing)");
    int nw = cfg->sched_writers < 1 ? 1 : cfg->sched_writers;
    if (nw > VS_SCHED_MAX_WRITERS)
        nw = VS_SCHED_MAX_WRITERS;
    if (nw > 1 && !vs_store_sched_parallel(s->feed_store)) {
        VS_LOG(log, VS_LOG_ERROR,
               "<sched_writers>%d</sched_writers> needs a PostgreSQL store: SQLite has one "
               "writer at a time (set it to 1)",
               nw);
        rc = VS_EINVAL;
        goto fail;
    }
    for (int k = 0; k < nw; k++) {
        struct vs_store *w = NULL;
        rc = vs_store_open(cfg->store_url, 0, log, &w);
        if (rc != 0) {
            VS_LOG(log, VS_LOG_ERROR, "cannot open store %s: %s", cfg->store_url, vs_strerror(rc));
            goto fail;
        }
        if (vs_store_sched_tune(w, true) != 0)
            VS_LOG(log, VS_LOG_WARN, "could not tune the writer handle (continuing)");
        s->committers[s->ncommitters++] = vs_committer_create(w, log, s->opt.commit_delay_us);
    }
    if (nw > 1)
        VS_LOG(log, VS_LOG_INFO,
               "scheduler: %d writer connections, batches of different "
               "accounts commit side by side",
               nw);
    if (cfg->failed_auth_burst > 0)
        s->auth_limit = vs_auth_limit_create((unsigned)cfg->failed_auth_burst,
                                             (unsigned)cfg->failed_auth_per_hour);
    rc = vs_sched__load_catalog(s, s->feed_store, &s->cat);
    if (rc != 0) {
        VS_LOG(log, VS_LOG_ERROR, "cannot load apps: %s", vs_strerror(rc));
        goto fail;
    }
    s->cache = vs_cache_create(s->opt.cache_slots, vs_sched__prep_job, vs_sched__unprep_job, s);
    /* Several instances may share the store: the cache leases what it
     * holds, under this instance's id (host and directory). */
    s->lease_owner = lease_owner_id(cfg->dir);
    vs_cache_set_lease(s->cache, s->lease_owner, cfg->job_lease_secs);
    VS_LOG(log, VS_LOG_INFO, "job cache: lease owner %lld, leases of %d s",
           (long long)s->lease_owner, cfg->job_lease_secs);
    s->assign = vs_assign_create(&s->cfg, log);
    if (cfg->locality_scheduling) {
        /* Full-locality apps' jobs go to hosts chosen for their files
         * (h_locality.c), never through the cache. */
        s->loc = vs_locality_create(cfg, log);
        vs_cache_set_keep(s->cache, vs_sched__keep_job);
        if (s->cat->n_loc_full == 0)
            VS_LOG(log, VS_LOG_WARN,
                   "<locality_scheduling/> is on but no app is a locality app "
                   "(volsched app add --locality); see docs/locality.md");
    }
    *out = s;
    return 0;
fail:
    vs_sched_destroy(s);
    return rc;
}

void vs_sched_destroy(struct vs_sched *s)
{
    if (!s)
        return;
    vs_cache_destroy(s->cache);
    vs_assign_destroy(s->assign);
    vs_locality_destroy(s->loc);
    for (size_t k = 0; k < s->ncommitters; k++)
        vs_committer_destroy(s->committers[k]);
    vs_auth_limit_destroy(s->auth_limit);
    for (size_t i = 0; i < s->npool; i++)
        vs_store_close(s->pool[i]);
    vs_free(s->pool);
    if (s->feed_store)
        vs_store_close(s->feed_store);
    vs_sched__snap_free(s->cat);
    vs_free(s->code_sign_key);
    pthread_rwlock_destroy(&s->cat_lock);
    pthread_mutex_destroy(&s->feed_mu);
    pthread_mutex_destroy(&s->pool_mu);
    pthread_mutex_destroy(&s->ucache_mu);
    pthread_mutex_destroy(&s->hcache_mu);
    vs_free(s->ucache);
    vs_free(s->hcache);
    vs_free(s);
}

void vs_sched_get_stats(struct vs_sched *s, struct vs_sched_stats *out_stats)
{
    memset(out_stats, 0, sizeof(*out_stats));
    out_stats->rpcs = atomic_load(&s->n_rpcs);
    out_stats->bad_rpcs = atomic_load(&s->n_bad);
    out_stats->jobs_sent = atomic_load(&s->n_sent);
    out_stats->no_work = atomic_load(&s->n_nowork);
    out_stats->reports = atomic_load(&s->n_reports);
    out_stats->maintenance = atomic_load(&s->n_maint);
    out_stats->claims_lost = atomic_load(&s->n_claims_lost);
    out_stats->rechosen = atomic_load(&s->n_rechosen);
    for (size_t k = 0; k < s->ncommitters; k++) {
        struct vs_commit_stats cs;
        vs_committer_get_stats(s->committers[k], &cs);
        out_stats->commit_batches += cs.batches;
        out_stats->commit_items += cs.items;
        if (cs.max_batch > out_stats->commit_max_batch)
            out_stats->commit_max_batch = cs.max_batch;
        out_stats->commit_delayed += cs.delayed;
        out_stats->commit_redone += cs.redone;
    }
    struct vs_cache_stats c;
    vs_cache_get_stats(s->cache, &c);
    out_stats->cache_present = c.present;
    struct vs_locality_stats ls;
    vs_locality_get_stats(s->loc, &ls);
    out_stats->loc_searched = ls.searched;
    out_stats->loc_deletes = ls.deletes;
    out_stats->loc_need_work = ls.need_work;
    out_stats->loc_waits = ls.waits;
    out_stats->cache_slots = c.nslots;
}

void vs_sched_set_config(struct vs_sched *s, const struct vs_project_config *cfg)
{
    /* Requests read these under the catalog lock (vs_sched_handle). */
    pthread_rwlock_wrlock(&s->cat_lock);
    s->cfg.policy = cfg->policy;
    s->cfg.min_sendwork_interval = cfg->min_sendwork_interval;
    s->cfg.report_grace_period = cfg->report_grace_period;
    s->cfg.next_rpc_delay = cfg->next_rpc_delay;
    s->cfg.maintenance_delay = cfg->maintenance_delay;
    s->cfg.report_max = cfg->report_max;
    s->cfg.resend_lost_results = cfg->resend_lost_results;
    s->cfg.send_result_abort = cfg->send_result_abort;
    s->cfg.dont_send_jobs = cfg->dont_send_jobs;
    pthread_rwlock_unlock(&s->cat_lock);
}

void vs_sched_set_maintenance(struct vs_sched *s, bool on)
{
    atomic_store(&s->maintenance, on);
}

void vs_sched_set_tail(struct vs_sched *s, struct vs_submit_tail *t)
{
    s->tail = t;
}
