/*
 * Granting credit (issue 39; docs/credit.md). The validator calls this in
 * the transaction that makes results VALID, so a crash can neither lose
 * nor double a grant: the result's granted_credit, the workunit's
 * canonical_credit and the host's, user's and team's totals commit with
 * the verdict or not at all. What a result is worth is the credit policy's
 * (volsched/credit.h); this only reads its inputs and writes its outputs.
 */
#ifndef VOLSCHED_SERVER_CREDIT_GRANT_H
#define VOLSCHED_SERVER_CREDIT_GRANT_H

#include <stddef.h>
#include <stdint.h>

#include "volsched/error.h"
#include "volsched/store.h"

/*
 * Grants credit to results ids[0..n) of wu, just made VALID in the open
 * transaction, under method (enum vs_credit_method). A workunit that
 * already had its canonical result and credit grants that credit;
 * otherwise the quorum's value (vs_credit_quorum of the results' claims)
 * becomes wu->canonical_credit (the caller writes wu). *out_credit (may be
 * NULL) gets the sum granted. Returns 0 or a store error (roll back).
 */
VS_MUST_CHECK int vs_credit_grant(struct vs_store *s, int method, struct vs_workunit *wu,
                                  bool had_canonical, const int64_t *ids, size_t n, int64_t now,
                                  double *out_credit);

struct vs_log;

/* What vs_update_stats decayed. */
struct vs_update_stats_result {
    int64_t users, hosts, teams;
};

/*
 * BOINC's update_stats: decays the recent average (expavg_credit) of
 * every host, user and team that has one to now, by BOINC's update_average
 * with no new credit (vs_credit_update_average, one-week half-life), so a
 * row idle for a week shows half its average. Pages of 2,000 rows, each in
 * its own write transaction; exact whenever it runs (decaying twice to the
 * same instant is decaying once). Logs one line; *out (may be NULL) gets
 * the counts. `serve` runs it daily (config.xml
 * <update_stats_interval_hours>) and before each db_dump.
 */
VS_MUST_CHECK int vs_update_stats(struct vs_store *s, int64_t now, struct vs_log *log,
                                  struct vs_update_stats_result *out);

#endif
