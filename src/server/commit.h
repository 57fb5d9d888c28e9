/*
 * Group commit of the scheduler's writes. Every scheduler RPC ends with a
 * small write (the host row, the results it sends); doing each in its own
 * transaction would make the store's commit the bottleneck. Instead a
 * request thread queues its item and waits: the first waiting thread becomes
 * the leader, takes everything queued so far, runs it as ONE transaction
 * (each item inside its own savepoint, so one bad item does not sink the
 * others) and wakes the batch. The reply of a request leaves only after its
 * item is committed, so "sent" is durable before the client hears of it.
 *
 * The committer owns one store handle for writing; nothing else writes
 * through it.
 */
#ifndef VOLSCHED_SERVER_COMMIT_H
#define VOLSCHED_SERVER_COMMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "volsched/error.h"
#include "volsched/server_policy.h"
#include "volsched/store.h"

struct vs_reports;

struct vs_commit_item {
    /* in */
    struct vs_host *host; /* written: added when new_host (host->id set), else updated */
    bool new_host;
    /* Only the claims (a request's second choice after it lost claims):
     * its first item wrote the host row, reports, resends and extra. */
    bool claims_only;
    int64_t userid, teamid, now;
    struct vs_claim *claims; /* claimed flags are written */
    size_t nclaims;
    /* the start of the host's quota day (0: no daily quota): its counts
     * from an earlier day are reset before the host row is written */
    int64_t quota_day_start;
    /* a new host is refused (rc VS_ELIMIT) when its user created this many
     * in the last 24 hours (0: no limit) */
    int max_new_hosts;
    struct vs_reports *reports; /* reported results to record first; may be NULL */
    /* lost results sent again or expired (resend_lost_results) */
    const struct vs_resend_item *resends;
    size_t nresends;
    /* more writes in the item's transaction (trickle messages), run last; may be NULL */
    int (*extra)(struct vs_store *s, int64_t hostid, int64_t now, void *ctx);
    void *extra_ctx;
    /* out */
    int rc;          /* 0, or the error that rolled this item back */
    size_t nclaimed; /* claims that moved UNSENT -> IN_PROGRESS */
    /* private */
    struct vs_commit_item *next;
    bool done;
};

struct vs_committer;

/*
 * Creates a committer writing through store (taken over: closed on
 * destroy). max_delay_us bounds how long a leader waits for announced items
 * (0: never waits).
 */
struct vs_committer *vs_committer_create(struct vs_store *store, struct vs_log *log,
                                         unsigned max_delay_us);
void vs_committer_destroy(struct vs_committer *c);

/*
 * Announces that the calling request will queue an item soon (it has parsed
 * and authenticated). A leader about to commit waits a little (at most
 * max_delay_us, see vs_committer_create) for announced items, so that
 * concurrent requests share one transaction. Every enter must be followed
 * by exactly one vs_committer_run() or vs_committer_leave().
 */
void vs_committer_enter(struct vs_committer *c);
/* Withdraws an announcement (the request ends without writing). */
void vs_committer_leave(struct vs_committer *c);

/*
 * Queues item and returns once it is committed or rolled back (item->rc).
 * Returns item->rc. Thread-safe; blocks the calling thread. Call it after
 * vs_committer_enter().
 */
VS_MUST_CHECK int vs_committer_run(struct vs_committer *c, struct vs_commit_item *item);

struct vs_commit_stats {
    uint64_t batches;
    uint64_t items;
    uint64_t failed_items;
    uint64_t max_batch;
    uint64_t delayed; /* batches whose leader waited for announced items */
    uint64_t redone;  /* batches run again with savepoints (an item failed) */
};
void vs_committer_get_stats(struct vs_committer *c, struct vs_commit_stats *out_stats);
/* How many requests have announced an item (vs_committer_enter) and not
 * yet queued or withdrawn it: what a delaying leader waits for. */
unsigned vs_committer_announced(struct vs_committer *c);

#endif
