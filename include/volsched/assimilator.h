/*
 * The assimilator (BOINC's sched/assimilator.cpp; boinc-server-notes.md
 * section 1.8): hands each finished workunit (assimilate_state READY: it
 * has a canonical result, or an error) to the project.
 *
 * Per app (config.xml <assimilator>, struct vs_assimilator_config):
 *  - by default, the canonical result's output files are copied into
 *    DIR/results/<wu_name>/, each under its open name (e.g. "out") when
 *    that is a plain, unique file name, else under its physical name, with
 *    summary.json describing the workunit, the canonical result, the files
 *    and every result; an errored workunit gets summary.json alone. The
 *    directory is built beside and renamed into place, so it is complete or
 *    absent, and a repeat replaces it;
 *  - with <command>, the operator's program is run as
 *      COMMAND WU_NAME CANONICAL_RESULT_NAME OUTPUT_PATH...      (success)
 *      COMMAND --error ERROR_MASK WU_NAME                        (error)
 *    and must exit 0. Workunit names never begin with '-' (create_work
 *    refuses them), so no argument before the paths reads as an option; a
 *    workunit so named in an older store is deferred with an error instead
 *    of being passed.
 * On success the WU becomes assimilate_state DONE and the transitioner is
 * woken (transition_time = now) to start file deletion. On failure the
 * assimilation is deferred: assimilate_state goes back to INIT with
 * transition_time = now + assimilator_retry_secs, and the transitioner makes
 * it READY again then (BOINC's DEFER_ASSIMILATION path), so a failing
 * command is retried without blocking the others. A READY WU whose
 * canonical result row is missing gets WU_ERROR_NO_CANONICAL_RESULT.
 */
#ifndef VOLSCHED_SERVER_ASSIMILATOR_H
#define VOLSCHED_SERVER_ASSIMILATOR_H

#include <stdint.h>

#include "volsched/config.h"
#include "volsched/error.h"
#include "volsched/store.h"

struct vs_log;

struct vs_assimilator_stats {
    int nwus;      /* workunits taken */
    int ndone;     /* assimilated (DONE) */
    int nerror;    /* of which errored workunits */
    int ndeferred; /* failures, to be retried */
    char last_error[VS_NAME_MAX];
};

/*
 * One pass at time now over at most limit READY workunits (<= 0: 100).
 * stats may be NULL. Returns the number of workunits taken, or a negative
 * VS_E* store error.
 */
VS_MUST_CHECK int vs_assimilator_pass(struct vs_store *s, const struct vs_project_config *cfg,
                                      int64_t now, int limit, struct vs_log *log,
                                      struct vs_assimilator_stats *stats);

/* The directory where the default assimilator puts wu_name's outputs:
 * DIR/results/<wu_name>. */
VS_MUST_CHECK int vs_assimilator_dir(const struct vs_project_config *cfg, const char *wu_name,
                                     char *out, size_t outsize);

#endif
