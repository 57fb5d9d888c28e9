/*
 * BOINC's update_stats (see volsched/db_dump.h): the recent averages of every
 * host, user and team decay to now, so that a volunteer who stopped
 * earning falls on the leaderboards, in the exports and in the client.
 */
#include <math.h>
#include <time.h>

#include "volsched/alloc.h"
#include "volsched/credit.h"
#include "volsched/db_dump.h"
#include "volsched/log.h"
#include "volsched/store_credit.h"

#define DECAY_PAGE 2000

/* Decays the owner's rows page by page, each page read and written in one
 * write transaction (a grant between pages is never undone: the page is
 * read inside the lock that grants take). */
static int decay_owner(struct vs_store *s, enum vs_credit_owner owner, int64_t now,
                       struct vs_credit_row *rows, int64_t *out_n)
{
    int64_t after = 0;
    for (;;) {
        int rc = vs_store_begin(s), n = 0;
        if (rc)
            return rc;
        rc = vs_store_credit_decay_page(s, owner, after, (double)now, rows, DECAY_PAGE, &n);
        for (int i = 0; rc == 0 && i < n; i++) {
            struct vs_credit_totals t = rows[i].t;
            vs_credit_update_average((double)now, 0, 0, VS_CREDIT_HALF_LIFE, &t.expavg,
                                     &t.expavg_time);
            rc = vs_store_credit_totals_set(s, owner, rows[i].id, &t);
        }
        if (rc) {
            (void)vs_store_rollback(s);
            return rc;
        }
        if ((rc = vs_store_commit(s)) != 0)
            return rc;
        *out_n += n;
        if (n < DECAY_PAGE)
            return 0;
        after = rows[n - 1].id;
    }
}

int vs_update_stats(struct vs_store *s, int64_t now, struct vs_log *log,
                    struct vs_update_stats_result *out)
{
    struct vs_update_stats_result res = {0};
    struct vs_credit_row *rows = vs_xcalloc(DECAY_PAGE, sizeof(*rows));
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = decay_owner(s, VS_CREDIT_USER, now, rows, &res.users);
    if (rc == 0)
        rc = decay_owner(s, VS_CREDIT_HOST, now, rows, &res.hosts);
    if (rc == 0)
        rc = decay_owner(s, VS_CREDIT_TEAM, now, rows, &res.teams);
    vs_free(rows);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (rc)
        VS_LOG(log, VS_LOG_ERROR, "update_stats: decaying the recent averages failed: %s",
               vs_strerror(rc));
    else
        VS_LOG(log, VS_LOG_INFO,
               "update_stats: recent averages decayed to now (half-life %.0f days): %lld users, "
               "%lld hosts, %lld teams in %.2f s",
               VS_CREDIT_HALF_LIFE / 86400.0, (long long)res.users, (long long)res.hosts,
               (long long)res.teams, dt);
    if (out)
        *out = res;
    return rc;
}
