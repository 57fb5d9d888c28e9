/*
 * The validator (BOINC's sched/validator.cpp with validate_util2.cpp;
 * boinc-server-notes.md section 1.7). One pass takes the workunits with
 * need_validate set and, for each:
 *
 *  - with a canonical result already: compares each new success with it;
 *    VALID results raise their host's daily quota, INVALID ones lower it;
 *  - without one: when at least min_quorum successes are viable, checks each
 *    (a permanent failure, such as a missing output file or the operator's
 *    command answering "invalid", makes it VALIDATE_ERROR/INVALID), then
 *    looks for a result that floor(min_quorum/2)+1 results (itself
 *    included) agree with. That one becomes canonical, the agreeing ones
 *    VALID, the others INVALID, the WU ready to assimilate and its UNSENT
 *    results DIDNT_NEED. Without agreement the results become INCONCLUSIVE
 *    and target_nresults grows so that the transitioner sends another
 *    replica, or, past max_success_results, the WU errors out.
 *
 * How results are compared is configured per app (config.xml <validator>,
 * struct vs_validator_config): bitwise equality of the output files
 * (default), always valid, or the operator's commands. A transient failure
 * (a command that crashes, times out, or exits with another status) leaves
 * the WU for validator_retry_secs. Results made VALID are granted credit
 * in the same transaction (credit_grant.h; docs/credit.md). Output files are read from the
 * project's upload hierarchy by the names in each result's xml_doc_in.
 *
 * Commands run outside any store transaction; the decisions are applied in
 * one transaction per WU that re-reads the rows and leaves alone any result
 * that changed meanwhile.
 */
#ifndef VOLSCHED_SERVER_VALIDATOR_H
#define VOLSCHED_SERVER_VALIDATOR_H

#include <stdint.h>

#include "volsched/config.h"
#include "volsched/error.h"
#include "volsched/store.h"

struct vs_log;

struct vs_validator_stats {
    int nwus;                     /* workunits examined */
    int ncanonical;               /* canonical results found */
    int nvalid;                   /* results made VALID */
    int ninvalid;                 /* results made INVALID (VALIDATE_ERROR included) */
    int ninconclusive;            /* results made INCONCLUSIVE */
    int ndeferred;                /* workunits left for later after a transient failure */
    int ngranted;                 /* results granted credit */
    double credit;                /* credit granted, summed */
    char last_error[VS_NAME_MAX]; /* "" or this pass's last problem */
};

/*
 * Runs one pass at time now over at most limit workunits (<= 0: 100) of
 * every app. stats may be NULL. Returns the number of workunits examined,
 * or a negative VS_E* store error (the WU being applied is rolled back and
 * stays queued).
 */
VS_MUST_CHECK int vs_validator_pass(struct vs_store *s, const struct vs_project_config *cfg,
                                    int64_t now, int limit, struct vs_log *log,
                                    struct vs_validator_stats *stats);

#endif
