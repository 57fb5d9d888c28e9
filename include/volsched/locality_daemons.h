/*
 * Locality scheduling's two project daemons (seed 001; docs/locality.md),
 * one bounded pass each, for `volsched locality-gen`, `volsched
 * locality-ws` and `volsched serve`:
 *
 * The on-demand work generator watches locality_scheduling/need_work/ (the
 * scheduler makes need_work/F when a host holds F and F has no unsent
 * result) and runs the operator's command as `CMD F` for each entry. Exit
 * status 0: it made work for F, the entry is removed (the scheduler, which
 * may be waiting for this, looks again). 2: there will be no more work for
 * F: no_work_available/F is made and the entry removed (the scheduler then
 * tells hosts to delete F). Anything else (or a time-out): the entry stays
 * and is tried again on a later pass.
 *
 * The working-set manager keeps locality_scheduling/file_working_set/ at a
 * target size: it drops the files the scheduler reported in
 * files_no_work/, then adds files that have unsent results, in name order,
 * until the target is reached (a file dropped earlier comes back when it
 * has work again, e.g. a retry).
 */
#ifndef VOLSCHED_SERVER_LOCALITY_DAEMONS_H
#define VOLSCHED_SERVER_LOCALITY_DAEMONS_H

#include <stddef.h>
#include <stdint.h>

#include "volsched/config.h"
#include "volsched/store.h"

struct vs_log;

/* BOINC has no convention for the generator's exit status; these are volsched's. */
#define VS_LOC_GEN_MADE_WORK 0
#define VS_LOC_GEN_NO_MORE   2

#define VS_LOC_DAEMON_MAX 1000 /* trigger entries one pass handles */

struct vs_locality_gen_stats {
    size_t triggers;  /* need_work entries seen */
    size_t made;      /* the command made work: entry removed */
    size_t exhausted; /* the command said no more work: no_work_available made */
    size_t failed;    /* the command failed or timed out: entry kept */
    char last_error[VS_NAME_MAX];
};

/*
 * One pass of the generator over DIR/locality_scheduling/need_work/ of
 * cfg->dir, running command (split at blanks, no shell) with the file name
 * as its last argument, each run limited to timeout seconds (<= 0: none).
 * Returns the number of entries handled (made + exhausted), or VS_EINVAL
 * for an empty command, or -errno when the directory cannot be read.
 */
int vs_locality_gen_pass(const struct vs_project_config *cfg, const char *command, int timeout,
                         struct vs_log *log, struct vs_locality_gen_stats *out);

struct vs_locality_ws_stats {
    size_t size;    /* working-set files after the pass */
    size_t removed; /* dropped (files_no_work) */
    size_t added;   /* added (files with work) */
};

/*
 * One pass of the working-set manager: target files (>= 1) in
 * DIR/locality_scheduling/file_working_set/, candidates read from s.
 * Returns removed + added (>= 0), or an error (store, -errno).
 */
int vs_locality_ws_pass(struct vs_store *s, const struct vs_project_config *cfg, size_t target,
                        struct vs_log *log, struct vs_locality_ws_stats *out);

#endif
