/*
 * Batch tail acceleration in `volsched serve` (issue 38), by the rule of
 * volsched/submit_policy.h that popsim runs too. A pass every minute
 * (vs_submit_tail_pass, on the submission handler's store handle) reads
 * what the rule needs from the store: which submitted batches are in
 * their tail, each host's turnaround and failures over the last 30 days,
 * and the quantile of the hosts' turnaround; and for each tail batch, asks
 * for one more instance of every job whose instance is overdue (the
 * transitioner makes it: target_nresults + 1). The scheduler asks
 * vs_submit_tail_allows for every cached job of a submitted batch: a tail
 * job goes only to a fit host. The state is swapped under a lock, so the
 * scheduler's threads read a consistent snapshot.
 */
#ifndef VOLSCHED_SERVER_SUBMIT_TAIL_H
#define VOLSCHED_SERVER_SUBMIT_TAIL_H

#include <stdbool.h>
#include <stdint.h>

#include "volsched/store.h"
#include "volsched/submit_policy.h"

struct vs_log;
struct vs_submit_tail;

/* params is copied (params->enabled false: allows everything, passes do
 * nothing). */
struct vs_submit_tail *vs_submit_tail_create(const struct vs_sp_tail_params *params);
void vs_submit_tail_destroy(struct vs_submit_tail *t);

/* Whether a job of batch may go to host hostid now. Thread-safe; t may be
 * NULL (everything allowed). */
bool vs_submit_tail_allows(struct vs_submit_tail *t, int64_t batch, int64_t hostid);

/* Figures of the last pass. */
struct vs_submit_tail_stats {
    int64_t tail_batches; /* batches in their tail */
    int64_t hosts_fit;    /* hosts the rule lets have tail jobs */
    int64_t replicas;     /* instances asked for overdue jobs, this pass */
    double turnaround_q;  /* the hosts' turnaround quantile, seconds */
};

/* One pass at now on store s (the caller's thread owns s). Returns 0 or a
 * store error; *out_stats (may be NULL) gets its figures. */
VS_MUST_CHECK int vs_submit_tail_pass(struct vs_submit_tail *t, struct vs_store *s, int64_t now,
                                      struct vs_log *log, struct vs_submit_tail_stats *out_stats);

#endif
