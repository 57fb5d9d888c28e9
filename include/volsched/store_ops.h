/*
 * Store operations for operating a project: the figures of the status page
 * and the dashboard (per app, per batch, recent hosts), and the operator's
 * tools (cancel jobs, ban a host, purge finished work). Kept apart from
 * store.h because none of it is on a request path: statements are compiled
 * per call, not cached.
 */
#ifndef VOLSCHED_STORE_STORE_OPS_H
#define VOLSCHED_STORE_STORE_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "volsched/error.h"
#include "volsched/store.h"

/* The server_status figures of one app. */
struct vs_app_counts {
    int64_t appid;
    char name[VS_NAME_MAX];
    int64_t unsent;          /* results ready to send (server_state UNSENT) */
    int64_t in_progress;     /* results IN_PROGRESS */
    int64_t need_validate;   /* workunits waiting for validation */
    int64_t need_assimilate; /* workunits waiting for assimilation */
    int64_t oldest_unsent;   /* create_time of the oldest UNSENT result; 0 = none */
    int64_t success_24h;     /* results returned successfully in the last day */
    int64_t error_24h;       /* results returned with an error in the last day */
};
typedef int (*vs_store_app_counts_fn)(void *ctx, const struct vs_app_counts *c);
/* Calls fn for every app (name order) with its counts at time now. */
VS_MUST_CHECK int vs_store_app_counts(struct vs_store *s, int64_t now, vs_store_app_counts_fn fn,
                                      void *ctx);

/* Calls fn for up to limit hosts whose last RPC was at or after since,
 * newest first. */
VS_MUST_CHECK int vs_store_hosts_since(struct vs_store *s, int64_t since, int limit,
                                       int (*fn)(void *ctx, const struct vs_host *h), void *ctx);

/* The progress of one batch (workunit.batch != 0). */
struct vs_batch_counts {
    int64_t batch;
    int64_t nwus;
    int64_t ndone;       /* assimilated without error */
    int64_t nerror;      /* error_mask set */
    int64_t in_progress; /* results out */
    int64_t create_time; /* of its first workunit */
};
/* Calls fn for up to limit batches, newest first. */
VS_MUST_CHECK int vs_store_batches(struct vs_store *s, int limit,
                                   int (*fn)(void *ctx, const struct vs_batch_counts *b),
                                   void *ctx);

/*
 * BOINC-COMPAT (cancel_jobs): cancels workunit wuid at time now in one
 * transaction: error_mask gets WU_ERROR_CANCELLED, transition_time = now (the
 * transitioner finishes it), and its UNSENT results become OVER with outcome
 * DIDNT_NEED so they are never sent. Results already out are left to the
 * transitioner and the scheduler (send_result_abort). *out_nresults (may be
 * NULL) is the number of results withdrawn. VS_ENOTFOUND if no such WU;
 * VS_ESTATE if it is already finished (canonical result or error).
 */
VS_MUST_CHECK int vs_store_workunit_cancel(struct vs_store *s, int64_t wuid, int64_t now,
                                           int64_t *out_nresults);

/* The ids of up to max workunits of batch, in id order (*out_n of them). */
VS_MUST_CHECK int vs_store_batch_wus(struct vs_store *s, int64_t batch, int64_t *out_ids,
                                     size_t max, size_t *out_n);

/*
 * The purge's candidates: up to max ids of workunits whose files are deleted
 * (file_delete_state DONE), whose results are all OVER, and whose mod_time
 * is before `before`, in id order.
 */
VS_MUST_CHECK int vs_store_purge_candidates(struct vs_store *s, int64_t before, int64_t *out_ids,
                                            size_t max, size_t *out_n);
/* Deletes workunit wuid with its results, assignments and input file uses
 * (wu_file), in one transaction. */
VS_MUST_CHECK int vs_store_workunit_delete(struct vs_store *s, int64_t wuid);

/*
 * Sets host id's max_results_day (-1 bans it, 0 lifts the ban) without
 * touching its other columns. VS_ENOTFOUND if no such host.
 */
VS_MUST_CHECK int vs_store_host_set_max_results_day(struct vs_store *s, int64_t id, int value);

#endif
