/* In-memory operating figures of a serve process (ops_metrics.h). */
#include "volsched/ops_metrics.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "volsched/alloc.h"
#include "volsched/daemons.h"

const double vs_ops_lat_bounds[VS_OPS_LAT_BUCKETS] = {0.001, 0.0025, 0.005, 0.01, 0.025,
                                                      0.05,  0.1,    0.25,  1.0,  5.0};

struct vs_ops_metrics {
    pthread_mutex_t mu;
    struct vs_ops_snapshot s; /* series kept as a ring below, not in s.series */
    int64_t slot_start[VS_OPS_SERIES_N];
    uint64_t ring[VS_SERIES__COUNT][VS_OPS_SERIES_N];
    uint64_t last_cum[VS_SERIES__COUNT];
    uint64_t own_cum[VS_SERIES__COUNT]; /* VALID, INVALID: counted here */
    int err_head;
};

struct vs_ops_metrics *vs_ops_metrics_create(void)
{
    struct vs_ops_metrics *m = VS_NEW(struct vs_ops_metrics);
    pthread_mutex_init(&m->mu, NULL);
    return m;
}

void vs_ops_metrics_destroy(struct vs_ops_metrics *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->mu);
    vs_free(m);
}

void vs_ops_metrics_latency(struct vs_ops_metrics *m, double seconds)
{
    int b = 0;
    while (b < VS_OPS_LAT_BUCKETS && seconds > vs_ops_lat_bounds[b])
        b++;
    pthread_mutex_lock(&m->mu);
    m->s.lat_buckets[b]++;
    m->s.lat_sum += seconds;
    m->s.lat_count++;
    pthread_mutex_unlock(&m->mu);
}

void vs_ops_metrics_pass(struct vs_ops_metrics *m, unsigned i, double seconds,
                         const struct vs_daemons_stats *st)
{
    if (i >= VS_NDAEMONS)
        return;
    pthread_mutex_lock(&m->mu);
    m->s.pass_count[i]++;
    m->s.pass_seconds[i] += seconds;
    m->s.pass_last_seconds[i] = seconds;
    if (st) {
        uint64_t v = st->validator.nvalid > 0 ? (uint64_t)st->validator.nvalid : 0;
        uint64_t inv = st->validator.ninvalid > 0 ? (uint64_t)st->validator.ninvalid : 0;
        m->s.valid += v;
        m->s.invalid += inv;
        m->own_cum[VS_SERIES_VALID] += v;
        m->own_cum[VS_SERIES_INVALID] += inv;
        if (st->validator.ninconclusive > 0)
            m->s.inconclusive += (uint64_t)st->validator.ninconclusive;
        if (st->validator.credit > 0)
            m->s.credit_granted += st->validator.credit;
        if (st->assimilator.ndone > 0)
            m->s.assimilated += (uint64_t)st->assimilator.ndone;
        if (st->assimilator.nerror > 0)
            m->s.assimilate_errors += (uint64_t)st->assimilator.nerror;
        if (st->file_deleter.nfiles > 0)
            m->s.files_deleted += (uint64_t)st->file_deleter.nfiles;
    }
    pthread_mutex_unlock(&m->mu);
}

/* The ring slot of time t, cleared when it last held an older period. */
static int slot_of(struct vs_ops_metrics *m, int64_t t)
{
    int64_t start = t - t % VS_OPS_SERIES_STEP;
    int i = (int)((t / VS_OPS_SERIES_STEP) % VS_OPS_SERIES_N);
    if (m->slot_start[i] != start) {
        m->slot_start[i] = start;
        for (int k = 0; k < VS_SERIES__COUNT; k++)
            m->ring[k][i] = 0;
    }
    return i;
}

void vs_ops_metrics_sample(struct vs_ops_metrics *m, int64_t now,
                           const uint64_t cum[VS_SERIES__COUNT])
{
    pthread_mutex_lock(&m->mu);
    int i = slot_of(m, now);
    for (int k = 0; k < VS_SERIES__COUNT; k++) {
        uint64_t c = (k == VS_SERIES_VALID || k == VS_SERIES_INVALID) ? m->own_cum[k] : cum[k];
        /* Counters only grow; a smaller value (a restarted source) counts
         * from zero. */
        uint64_t d = c >= m->last_cum[k] ? c - m->last_cum[k] : c;
        m->ring[k][i] += d;
        m->last_cum[k] = c;
    }
    pthread_mutex_unlock(&m->mu);
}

void vs_ops_metrics_tap(void *ctx, enum vs_log_level level, const char *line)
{
    (void)level;
    struct vs_ops_metrics *m = ctx;
    pthread_mutex_lock(&m->mu);
    int i = m->err_head;
    m->err_head = (m->err_head + 1) % VS_OPS_ERRORS;
    snprintf(m->s.errors[i], VS_OPS_ERROR_LEN, "%s", line);
    m->s.error_time[i] = (int64_t)time(NULL);
    if (m->s.nerrors < VS_OPS_ERRORS)
        m->s.nerrors++;
    pthread_mutex_unlock(&m->mu);
}

void vs_ops_metrics_snapshot(struct vs_ops_metrics *m, int64_t now, struct vs_ops_snapshot *out)
{
    pthread_mutex_lock(&m->mu);
    *out = m->s;
    /* Errors newest first. */
    for (int j = 0; j < m->s.nerrors; j++) {
        int i = (m->err_head - 1 - j + 2 * VS_OPS_ERRORS) % VS_OPS_ERRORS;
        memcpy(out->errors[j], m->s.errors[i], VS_OPS_ERROR_LEN);
        out->error_time[j] = m->s.error_time[i];
    }
    int64_t last = now - now % VS_OPS_SERIES_STEP;
    out->series_start = last - (int64_t)(VS_OPS_SERIES_N - 1) * VS_OPS_SERIES_STEP;
    for (int j = 0; j < VS_OPS_SERIES_N; j++) {
        int64_t t = out->series_start + (int64_t)j * VS_OPS_SERIES_STEP;
        int i = (int)((t / VS_OPS_SERIES_STEP) % VS_OPS_SERIES_N);
        for (int k = 0; k < VS_SERIES__COUNT; k++)
            out->series[k][j] = m->slot_start[i] == t ? m->ring[k][i] : 0;
    }
    pthread_mutex_unlock(&m->mu);
}
