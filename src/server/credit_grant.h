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

#endif
