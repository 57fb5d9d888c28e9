/*
 * Locality scheduling's list of the files that have unsent results, for
 * the deterministic scan of seed 001 ("choose a file using a deterministic
 * algorithm that doesn't involve the working set"). No index orders unsent
 * results by file, so listing them reads every unsent result of the
 * project: at full size (100,000 results) that was a third of a locality
 * request's CPU when every scan listed them. One request lists them at most
 * every ttl milliseconds and the others scan that copy; a file in the copy
 * that ran dry since is found dry by its own search and dropped from it.
 * Thread-safe.
 */
#ifndef VOLSCHED_SERVER_LOC_WORK_H
#define VOLSCHED_SERVER_LOC_WORK_H

#include <stddef.h>
#include <stdint.h>

#include "volsched/alloc.h"
#include "volsched/store.h"

struct vs_loc_work;

/* An empty list reloaded when older than ttl_ms; aborts on no memory. */
struct vs_loc_work *vs_loc_work_create(int64_t ttl_ms);
void vs_loc_work_destroy(struct vs_loc_work *w);

/*
 * Up to max files with work (as of at most ttl_ms ago; the listing is made
 * through st when older, now_ms on a monotonic clock) in name order,
 * starting after `after` ("" : from the first) and wrapping around, into
 * out[] as arena copies. Returns how many. A store error leaves the last
 * listing in use (empty at first): the scan is a fallback, never an error.
 */
size_t vs_loc_work_scan(struct vs_loc_work *w, struct vs_store *st, int64_t now_ms,
                        const char *after, struct vs_arena *a, const char **out, size_t max);

/* f was found without unsent results: it leaves the list until the next
 * listing. */
void vs_loc_work_drop(struct vs_loc_work *w, const char *f);

#endif
