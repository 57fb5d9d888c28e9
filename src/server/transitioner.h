/*
 * The minimal transitioner: one pass over the workunits whose
 * transition_time has come (BOINC's sched/transitioner.cpp handle_wu, the
 * parts that issue 5 needs plus timeouts and error limits).
 *
 * For each such workunit (transitioner_flags != TRANSITION_NONE):
 *  - IN_PROGRESS results past their report_deadline become OVER/NO_REPLY;
 *  - error limits set error_mask (too many errors / total results);
 *  - with an error, UNSENT results become OVER/DIDNT_NEED and the WU is
 *    marked ready to assimilate;
 *  - otherwise, unless the WU is targeted (TRANSITION_NO_NEW_RESULTS) or has
 *    a canonical result, target_nresults - unsent - in_progress - success
 *    new UNSENT results are created from the WU's result template;
 *  - the next transition_time is set (earliest report deadline, or never).
 * Each workunit is handled in its own transaction.
 */
#ifndef VOLSCHED_SERVER_TRANSITIONER_H
#define VOLSCHED_SERVER_TRANSITIONER_H

#include <stdint.h>

#include "store/project.h"
#include "store/store.h"
#include "volsched/error.h"

struct vs_log;

struct vs_transitioner_stats {
    int nwus;             /* workunits handled */
    int nresults_created; /* new UNSENT results */
    int ntimed_out;       /* IN_PROGRESS results that became NO_REPLY */
    int nerrored;         /* workunits that got an error_mask this pass */
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
