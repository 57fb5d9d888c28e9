/*
 * Leader/follower group commit; see commit.h.
 */
#include "server/commit.h"

#include <pthread.h>
#include <time.h>

#include "server/h_report.h"
#include "volsched/alloc.h"
#include "volsched/log.h"
#include "volsched/store_sched.h"

struct vs_committer {
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* the leader's delay wait: an item arrived or left */
    pthread_cond_t done_cv; /* followers: a batch finished (done, or leader free) */
    struct vs_store *store;
    struct vs_log *log;
    struct vs_commit_item *head, *tail;
    bool busy;          /* a leader is running a batch */
    unsigned announced; /* entered, not yet queued or left */
    unsigned max_delay_us;
    struct vs_commit_stats stats;
};

struct vs_committer *vs_committer_create(struct vs_store *store, struct vs_log *log,
                                         unsigned max_delay_us)
{
    struct vs_committer *c = VS_NEW(struct vs_committer);
    pthread_mutex_init(&c->mu, NULL);
    /* Timed waits measure a delay: use the monotonic clock. */
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_cond_init(&c->done_cv, NULL);
    c->max_delay_us = max_delay_us;
    c->store = store;
    c->log = log;
    return c;
}

void vs_committer_destroy(struct vs_committer *c)
{
    if (!c)
        return;
    vs_store_close(c->store);
    pthread_cond_destroy(&c->cv);
    pthread_cond_destroy(&c->done_cv);
    pthread_mutex_destroy(&c->mu);
    vs_free(c);
}

static void unclaim(struct vs_commit_item *it)
{
    for (size_t i = 0; i < it->nclaims; i++)
        it->claims[i].claimed = false;
    it->nclaimed = 0;
}

static int claim(struct vs_committer *c, struct vs_commit_item *it)
{
    return vs_store_results_claim(c->store, it->host->id, it->userid, it->teamid, it->now,
                                  it->claims, it->nclaims, &it->nclaimed);
}

/* What one request writes, in order. */
static int item_writes(struct vs_committer *c, struct vs_commit_item *it)
{
    if (it->claims_only)
        return claim(c, it); /* the request's first item wrote the rest */
    /* Counted in the transaction, so the limits are exact however many
     * requests of one host or account are in flight (a hoarding account
     * sends them in parallel: docs/security.md). */
    int rc = 0;
    if (it->new_host)
        rc = vs_store_host_add_capped(c->store, it->host, it->now - 86400, it->max_new_hosts);
    else if (it->quota_day_start > 0)
        rc = vs_store_hav_new_day(c->store, it->host->id, it->quota_day_start);
    if (rc == 0 && !it->new_host)
        rc = vs_store_host_update(c->store, it->host);
    /* Reports before sends: BOINC handles results before it chooses work. */
    if (rc == 0 && it->reports)
        rc = vs_reports_apply(c->store, it->reports, it->now);
    if (rc == 0 && it->nresends > 0)
        rc = vs_store_results_resend(c->store, it->host->id, it->now, it->resends, it->nresends);
    if (rc == 0 && it->nclaims > 0)
        rc = claim(c, it);
    if (rc == 0 && it->extra)
        rc = it->extra(c->store, it->host->id, it->now, it->extra_ctx);
    return rc;
}

/* One item inside the batch's transaction, in its own savepoint unless it
 * is alone in the batch (then the batch's transaction is its savepoint, and
 * two statements per RPC are saved). */
static int run_item(struct vs_committer *c, struct vs_commit_item *it, bool alone)
{
    int rc = alone ? 0 : vs_store_begin(c->store);
    if (rc != 0)
        return rc;
    rc = item_writes(c, it);
    if (alone)
        return rc;
    if (rc == 0)
        rc = vs_store_commit(c->store);
    if (rc != 0)
        vs_store_rollback(c->store);
    return rc;
}

/* Opens the batch's transaction, naming its accounts: on PostgreSQL the
 * batches of several instances then commit side by side (store.h). */
static int begin_batch(struct vs_committer *c, const struct vs_commit_item *batch)
{
    enum { MAX_USERS = 64 };
    int64_t users[MAX_USERS];
    size_t n = 0;
    for (const struct vs_commit_item *it = batch; it; it = it->next) {
        if (n == MAX_USERS)
            return vs_store_begin(c->store); /* a plain one: alone */
        users[n++] = it->userid;
    }
    return vs_store_begin_users(c->store, users, n);
}

/* The common case, every item succeeding, without savepoints
 * (vs_store_flat): true when the batch is done (committed, or its commit
 * failed: items' rc say so), false when nothing was written and the batch
 * must run again with savepoints (an item failed, or a level inside one). */
static bool run_flat(struct vs_committer *c, struct vs_commit_item *batch)
{
    if (begin_batch(c, batch) != 0)
        return false; /* the savepoint path reports it */
    bool flat = vs_store_flat(c->store, true);
    int rc = 0;
    for (struct vs_commit_item *it = batch; it && rc == 0; it = it->next) {
        it->nclaimed = 0;
        rc = it->rc = item_writes(c, it);
    }
    if (!vs_store_flat(c->store, false) || !flat || rc != 0) {
        vs_store_rollback(c->store);
        for (struct vs_commit_item *it = batch; it; it = it->next)
            unclaim(it);
        return false;
    }
    rc = vs_store_commit(c->store); /* commits, or (failing) rolls back by itself */
    for (struct vs_commit_item *it = batch; it; it = it->next) {
        it->rc = rc;
        if (rc != 0)
            unclaim(it);
    }
    if (rc != 0)
        VS_LOG(c->log, VS_LOG_ERROR, "commit: batch commit failed: %s", vs_strerror(rc));
    return true;
}

/* Runs a batch; true when it had to be run again with savepoints. */
static bool run_batch(struct vs_committer *c, struct vs_commit_item *batch)
{
    if (run_flat(c, batch))
        return false;
    int rc = begin_batch(c, batch);
    bool began = rc == 0;
    bool alone = batch->next == NULL;
    for (struct vs_commit_item *it = batch; it; it = it->next) {
        it->nclaimed = 0;
        it->rc = rc == 0 ? run_item(c, it, alone) : rc;
        if (it->rc != 0) {
            unclaim(it);
            VS_LOG(c->log, VS_LOG_WARN, "commit: host %lld rolled back: %s",
                   (long long)it->host->id, vs_strerror(it->rc));
            /* Some errors (disk full, I/O, RAISE(ROLLBACK)) take the whole
             * transaction with them, the items before this one included.
             * The rest of the batch is then failed without running: run
             * outside the transaction, an item would be committed on its
             * own while its client is told it failed. */
            if (rc == 0 && !vs_store_in_transaction(c->store))
                rc = it->rc;
        }
    }
    if (alone && batch->rc != 0)
        rc = batch->rc; /* its failure must not be committed: the whole transaction goes */
    if (began && rc != 0) {
        vs_store_rollback(c->store);
    } else if (began) {
        /* Commits, or (failing) rolls back by itself. */
        rc = vs_store_commit(c->store);
        if (rc != 0)
            VS_LOG(c->log, VS_LOG_ERROR, "commit: batch commit failed: %s", vs_strerror(rc));
    }
    if (rc != 0) {
        for (struct vs_commit_item *it = batch; it; it = it->next) {
            if (it->rc == 0)
                it->rc = rc;
            unclaim(it);
        }
    }
    return true;
}

void vs_committer_enter(struct vs_committer *c)
{
    pthread_mutex_lock(&c->mu);
    c->announced++;
    pthread_mutex_unlock(&c->mu);
}

void vs_committer_leave(struct vs_committer *c)
{
    pthread_mutex_lock(&c->mu);
    if (c->announced > 0)
        c->announced--;
    if (c->busy)
        pthread_cond_signal(&c->cv); /* only a delaying leader waits on cv */
    pthread_mutex_unlock(&c->mu);
}

/* The leader's commit delay (PostgreSQL's commit_delay idea): while other
 * requests have announced an item and the queue does not hold them yet,
 * wait a little for them. Called with the mutex held. */
static void wait_for_announced(struct vs_committer *c)
{
    if (c->max_delay_us == 0 || c->announced == 0)
        return;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += (long)c->max_delay_us * 1000L;
    while (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    c->stats.delayed++;
    while (c->announced > 0) {
        if (pthread_cond_timedwait(&c->cv, &c->mu, &until) != 0)
            break;
    }
}

int vs_committer_run(struct vs_committer *c, struct vs_commit_item *item)
{
    item->next = NULL;
    item->done = false;
    item->rc = 0;
    pthread_mutex_lock(&c->mu);
    if (c->announced > 0)
        c->announced--;
    /* A delaying leader may take us along. Followers wait on done_cv, so
     * an arrival wakes one thread, not every waiting request. */
    if (c->busy)
        pthread_cond_signal(&c->cv);
    if (c->tail)
        c->tail->next = item;
    else
        c->head = item;
    c->tail = item;
    while (!item->done) {
        if (c->busy) {
            pthread_cond_wait(&c->done_cv, &c->mu);
            continue;
        }
        /* Become the leader for everything queued so far (our item included). */
        c->busy = true;
        wait_for_announced(c);
        struct vs_commit_item *batch = c->head;
        c->head = c->tail = NULL;
        pthread_mutex_unlock(&c->mu);
        bool redone = run_batch(c, batch);
        pthread_mutex_lock(&c->mu);
        c->stats.redone += redone;
        uint64_t n = 0;
        for (struct vs_commit_item *it = batch, *nx; it; it = nx) {
            nx = it->next; /* it may be freed by its owner once done */
            if (it->rc != 0)
                c->stats.failed_items++;
            it->done = true;
            n++;
        }
        c->stats.batches++;
        c->stats.items += n;
        if (n > c->stats.max_batch)
            c->stats.max_batch = n;
        /* The batch's replies go now; the WAL is trimmed after them, still
         * as the leader (nothing else may use the writer meanwhile), and
         * what arrives in the meantime makes the next batch larger. */
        pthread_cond_broadcast(&c->done_cv);
        pthread_mutex_unlock(&c->mu);
        int trc = vs_store_sched_wal_trim(c->store);
        if (trc != 0)
            VS_LOG(c->log, VS_LOG_WARN, "commit: WAL checkpoint failed: %s", vs_strerror(trc));
        pthread_mutex_lock(&c->mu);
        c->busy = false;
        pthread_cond_broadcast(&c->done_cv);
    }
    int rc = item->rc;
    pthread_mutex_unlock(&c->mu);
    return rc;
}

unsigned vs_committer_announced(struct vs_committer *c)
{
    pthread_mutex_lock(&c->mu);
    unsigned n = c->announced;
    pthread_mutex_unlock(&c->mu);
    return n;
}

void vs_committer_get_stats(struct vs_committer *c, struct vs_commit_stats *out_stats)
{
    pthread_mutex_lock(&c->mu);
    *out_stats = c->stats;
    pthread_mutex_unlock(&c->mu);
}
