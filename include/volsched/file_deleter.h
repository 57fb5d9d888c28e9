/*
 * The file deleter (BOINC's sched/file_deleter.cpp; boinc-server-notes.md
 * section 1.9). The transitioner marks files ready to delete
 * (file_delete_state READY) once a workunit is assimilated and
 * delete_delay_hours have passed since its last report; one pass here then
 * deletes:
 *  - a workunit's input files: each <file_info> of its xml_doc, in the
 *    download hierarchy, with its ".md5" and ".gz" siblings, unless
 *    something else still uses it (deleting a shared input broke the
 *    other jobs that named it): another workunit whose inputs
 *    are not dealt with yet, an app version's file of that name, or, for
 *    the big file F of a locality workunit F__*, work that may still come
 *    (need_work/F, or on-demand generation on without no_work_available/F).
 *    The store counts the uses (vs_store_file_in_use); the check, the
 *    deletion and the workunit's new state are one write transaction, so a
 *    create_work running meanwhile either adds its use first (the file
 *    stays) or finds the file gone and creates nothing;
 *  - a result's output files: each <file_info> of its xml_doc_in, in the
 *    upload hierarchy.
 * Files marked <no_delete/> are kept, and so are all the inputs of a
 * workunit with "nodelete" in its name (BOINC-COMPAT); those stay in use,
 * so no other workunit's deletion removes them either. A file already gone
 * counts as deleted. The row becomes DONE, or ERROR when a deletion failed;
 * every file_deleter_retry_secs the errors are put back to READY and tried
 * again (the time of the next retry is kept in daemon_status.retry_time).
 */
#ifndef VOLSCHED_SERVER_FILE_DELETER_H
#define VOLSCHED_SERVER_FILE_DELETER_H

#include <stdint.h>

#include "volsched/config.h"
#include "volsched/error.h"
#include "volsched/store.h"

struct vs_log;

struct vs_file_deleter_stats {
    int nwus;         /* workunits whose inputs were handled */
    int nresults;     /* results whose outputs were handled */
    int nfiles;       /* files actually removed */
    int nkept;        /* inputs kept because something else still uses them */
    int nerrors;      /* rows set to ERROR */
    int64_t nretried; /* ERROR rows put back to READY this pass */
    char last_error[VS_NAME_MAX];
};

/*
 * One pass at time now: up to limit workunits and 3 * limit results
 * (limit <= 0: 500). stats may be NULL. Returns the number of rows handled
 * (workunits + results), or a negative VS_E* store error.
 */
VS_MUST_CHECK int vs_file_deleter_pass(struct vs_store *s, const struct vs_project_config *cfg,
                                       int64_t now, int limit, struct vs_log *log,
                                       struct vs_file_deleter_stats *stats);

#endif
