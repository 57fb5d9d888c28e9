/*
 * The in-process job cache: BOINC's feeder and shared-memory array, inside
 * the server process. A refill step pages UNSENT results (joined with their
 * workunits) from the store into a fixed number of slots; scheduler threads
 * take jobs out of the slots under a mutex, so a request never scans the
 * store and no two requests are offered the same job.
 *
 * Every result the cache has handed out stays "known" (checked out) until
 * the caller says what happened: vs_cache_forget() once the send is decided
 * (claimed, or found no longer UNSENT), vs_cache_put_back() if the request
 * could not use it after all. A known result is never loaded twice, even if
 * a refill reads an older snapshot of the store. The store's claim is a
 * compare-and-set on server_state anyway, so a stale copy can at worst be
 * refused there, never sent twice.
 */
#ifndef VOLSCHED_SERVER_CACHE_H
#define VOLSCHED_SERVER_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "volsched/error.h"
#include "volsched/store.h"

struct vs_cache;

/*
 * A cached job: the store's row plus what the owner derived from it once,
 * at load time (the scheduler keeps the parsed XML of the workunit and
 * result templates there, so that no request parses them again).
 */
struct vs_cache_job {
    struct vs_job job;
    void *prep; /* owned through the cache's prep/unprep hooks; may be NULL */
};

/* Derives job->prep from job->job; a non-zero return drops the job (logged by the hook). */
typedef int (*vs_cache_prep_fn)(void *ctx, struct vs_cache_job *job);
/* Frees what prep made. */
typedef void (*vs_cache_unprep_fn)(void *ctx, void *prep);

/*
 * Creates a cache of nslots slots (0: 1000). prep/unprep may be NULL; ctx is
 * passed to them (borrowed). The caller owns the cache.
 */
struct vs_cache *vs_cache_create(size_t nslots, vs_cache_prep_fn prep, vs_cache_unprep_fn unprep,
                                 void *ctx);
/* Frees the cache and the jobs still in it. NULL is a no-op. */
void vs_cache_destroy(struct vs_cache *c);

/* Whether a refill loads a job row; rows it refuses are passed over (the
 * scan moves on, and they are read again only by a rescan). */
typedef bool (*vs_cache_keep_fn)(void *ctx, const struct vs_job *job);
/* Sets the filter (ctx is the one given to vs_cache_create); NULL keeps
 * every row. The scheduler keeps full-locality jobs out this way. */
void vs_cache_set_keep(struct vs_cache *c, vs_cache_keep_fn keep);

/*
 * Leases (several `volsched serve` on one store, docs/scale-out.md). With owner != 0
 * (this instance's random id), every row a refill loads is first leased in
 * the store for secs seconds (vs_store_results_lease; <= 0: 60), rows
 * another instance leases are not read, the present jobs' leases are
 * renewed every secs/3 seconds (a job whose lease could not be renewed
 * leaves the cache), and every secs/2 seconds the scan starts over to find
 * the jobs of an instance that died once their leases end. The scheduler's
 * claim names the same owner (vs_claim.lease_owner), so no two instances
 * send one result. Set before the first refill.
 */
void vs_cache_set_lease(struct vs_cache *c, int64_t owner, int secs);

/*
 * One feeder step: fills empty slots with UNSENT results read from s, in
 * result id order, continuing where the previous step stopped (new results
 * have higher ids); it starts over from the first id only after an UNSENT
 * result was let go (see vs_cache_forget). s is used only during the call, by this
 * thread. Returns 0 and the number of jobs added in *out_added (may be
 * NULL), or a store error.
 */
VS_MUST_CHECK int vs_cache_refill(struct vs_cache *c, struct vs_store *s, size_t *out_added);
/* The same at time now (seconds; the leases' clock). vs_cache_refill uses time(NULL). */
VS_MUST_CHECK int vs_cache_refill_at(struct vs_cache *c, struct vs_store *s, int64_t now,
                                     size_t *out_added);

/*
 * The decision of a vs_cache_take() picker for one job: skip it, take it and
 * go on, take it and stop, or stop without it.
 */
enum vs_cache_pick { VS_PICK_SKIP = 0, VS_PICK_TAKE, VS_PICK_TAKE_STOP, VS_PICK_STOP };
typedef enum vs_cache_pick (*vs_cache_pick_fn)(void *ctx, const struct vs_cache_job *job);

/*
 * Offers the present jobs to pick (under the cache lock: pick must be quick
 * and must not call back into the cache) and moves those it takes into
 * out[0..max). Returns how many were taken. The caller owns the taken jobs'
 * heap strings until it hands each back with vs_cache_forget() or
 * vs_cache_put_back().
 */
size_t vs_cache_take(struct vs_cache *c, vs_cache_pick_fn pick, void *ctx, struct vs_cache_job *out,
                     size_t max);

/* Returns a taken job to the cache (or frees it if the cache is full). Takes ownership. */
void vs_cache_put_back(struct vs_cache *c, struct vs_cache_job *job);

/*
 * Ends the cache's tracking of a taken job and frees it (heap strings and
 * prep). still_unsent says the result may still be UNSENT in the store (not
 * claimed): the next refill then rescans the table from the start so that
 * it comes back.
 */
void vs_cache_forget(struct vs_cache *c, struct vs_cache_job *job, bool still_unsent);

/* Snapshot of the counters. */
struct vs_cache_stats {
    size_t present;     /* jobs in slots */
    size_t checked_out; /* taken and not yet forgotten or put back */
    size_t nslots;
    uint64_t loaded;  /* jobs ever loaded */
    uint64_t taken;   /* jobs ever taken */
    uint64_t dropped; /* rows prep refused */
    uint64_t lost;    /* rows another instance leased first, or leases that could not be renewed */
    uint64_t scanned; /* rows the refills' scans read */
    uint64_t rescans; /* scans started over from the top */
};
void vs_cache_get_stats(struct vs_cache *c, struct vs_cache_stats *out_stats);

#endif
