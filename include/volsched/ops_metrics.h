/*
 * What `volsched serve` measures for its operator, in memory: the scheduler
 * request latency histogram, the daemons' pass durations and outcomes, the
 * last 24 hours of activity in 5-minute buckets (the dashboard's charts),
 * and the most recent warnings and errors of its logs. Counters the
 * scheduler and the upload handler keep themselves (sched.h, h_upload.h)
 * are not repeated here; the pages read both.
 *
 * One object per serve process, created before the threads that feed it and
 * destroyed after they stopped. Every function is thread-safe (one mutex:
 * each call is a few additions).
 */
#ifndef VOLSCHED_SERVER_OPS_METRICS_H
#define VOLSCHED_SERVER_OPS_METRICS_H

#include <stdint.h>

#include "volsched/daemons.h"
#include "volsched/log.h"

struct vs_daemons_stats;

/* Upper bounds (seconds) of the latency histogram's buckets (+Inf after). */
#define VS_OPS_LAT_BUCKETS 10
extern const double vs_ops_lat_bounds[VS_OPS_LAT_BUCKETS];

#define VS_OPS_SERIES_STEP 300 /* seconds per bucket */
#define VS_OPS_SERIES_N    288 /* 24 hours */

enum vs_ops_series {
    VS_SERIES_RPCS = 0, /* scheduler RPCs */
    VS_SERIES_SENT,     /* jobs sent */
    VS_SERIES_RETURNED, /* results reported */
    VS_SERIES_VALID,    /* results validated valid */
    VS_SERIES_INVALID,  /* results validated invalid */
    VS_SERIES__COUNT
};

#define VS_OPS_ERRORS    20
#define VS_OPS_ERROR_LEN 300

/* A copy of everything, for rendering (vs_ops_metrics_snapshot). */
struct vs_ops_snapshot {
    uint64_t lat_buckets[VS_OPS_LAT_BUCKETS + 1]; /* not cumulative; last = +Inf */
    double lat_sum;
    uint64_t lat_count;
    uint64_t pass_count[VS_NDAEMONS]; /* by daemon bit index */
    double pass_seconds[VS_NDAEMONS];
    double pass_last_seconds[VS_NDAEMONS];
    uint64_t valid, invalid, inconclusive, assimilated, assimilate_errors, files_deleted;
    double credit_granted; /* credit the validator granted (docs/credit.md) */
    /* series[k][i]: bucket i (0 = oldest) of the 24 hours ending at the
     * bucket that holds `now` of the snapshot call; series_start is the
     * start time of bucket 0. */
    uint64_t series[VS_SERIES__COUNT][VS_OPS_SERIES_N];
    int64_t series_start;
    int nerrors; /* newest first */
    int64_t error_time[VS_OPS_ERRORS];
    char errors[VS_OPS_ERRORS][VS_OPS_ERROR_LEN];
};

struct vs_ops_metrics;

struct vs_ops_metrics *vs_ops_metrics_create(void);
void vs_ops_metrics_destroy(struct vs_ops_metrics *m);

/* One scheduler request took seconds. */
void vs_ops_metrics_latency(struct vs_ops_metrics *m, double seconds);
/* One pass of daemon index i (0 transitioner .. 3 file deleter) took
 * seconds; st holds that pass's figures. */
void vs_ops_metrics_pass(struct vs_ops_metrics *m, unsigned i, double seconds,
                         const struct vs_daemons_stats *st);
/*
 * Feeds the 24-hour series at time now with cumulative totals: cum[k] for
 * series k except VALID/INVALID, which the metrics count themselves (pass
 * them as 0). The difference from the previous call lands in now's bucket.
 */
void vs_ops_metrics_sample(struct vs_ops_metrics *m, int64_t now,
                           const uint64_t cum[VS_SERIES__COUNT]);
/* A vs_log_tap_fn: ctx is the struct vs_ops_metrics. */
void vs_ops_metrics_tap(void *ctx, enum vs_log_level level, const char *line);

void vs_ops_metrics_snapshot(struct vs_ops_metrics *m, int64_t now, struct vs_ops_snapshot *out);

#endif
