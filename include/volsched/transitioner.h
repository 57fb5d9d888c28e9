/*
 * The transitioner: BOINC's state machine over workunits and their results
 * (sched/transitioner.cpp handle_wu; boinc-server-notes.md section 1.6).
 * One pass handles the workunits whose transition_time has come
 * (transitioner_flags != TRANSITION_NONE: broadcast workunits are never
 * transitioned), each in its own transaction:
 *  - IN_PROGRESS results past their report_deadline become OVER/NO_REPLY
 *    and cost their host quota (host_app_version);
 *  - a success arriving after the canonical result's files were deleted is
 *    TOO_LATE; need_validate is set once min_quorum successes exist and one
 *    is new;
 *  - error_mask bits: COULDNT_SEND, TOO_MANY_ERROR_RESULTS (errors >
 *    max_error_results), TOO_MANY_TOTAL_RESULTS (max_total_results);
 *  - with an error, UNSENT results become OVER/DIDNT_NEED, unvalidated
 *    successes NO_CHECK, and the WU is made ready to assimilate;
 *  - otherwise, unless the WU is targeted (TRANSITION_NO_NEW_RESULTS) or
 *    has a canonical result, target_nresults - unsent - in_progress -
 *    success new UNSENT results are created from the WU's result template;
 *  - a deferred assimilation is made READY again; once assimilated and
 *    delete_delay_hours after the last report, input and output files are
 *    marked ready for the file deleter;
 *  - the next transition_time: never with a canonical result or an error,
 *    else a safety net, and never later than an outstanding deadline or
 *    the delayed deletion.
 */
#ifndef VOLSCHED_SERVER_TRANSITIONER_H
#define VOLSCHED_SERVER_TRANSITIONER_H

#include <stdint.h>

#include "volsched/config.h"
#include "volsched/error.h"
#include "volsched/store.h"

struct vs_log;

struct vs_transitioner_stats {
    int nwus;             /* workunits handled */
    int nresults_created; /* new UNSENT results */
    int ntimed_out;       /* IN_PROGRESS results that became NO_REPLY */
    int nerrored;         /* workunits that got an error_mask this pass */
    int nneed_validate;   /* workunits handed to the validator */
    int ntoo_late;        /* successes that came after the canonical files were deleted */
    int nfile_delete;     /* workunits and results whose files became ready to delete */
};

/*
 * Runs one pass at time now over at most limit workunits (<= 0: 1000).
 * cfg gives the project directory (result templates are read from
 * cfg->dir/<wu.result_template_file>) and the upload URL. stats may be
 * NULL. Returns 0 or the first error (the WU that failed is rolled back and
 * left for the next pass).
 */
VS_MUST_CHECK int vs_transitioner_pass(struct vs_store *s, const struct vs_project_config *cfg,
                                       int64_t now, int limit, struct vs_log *log,
                                       struct vs_transitioner_stats *stats);

#endif
