/*
 * Locality scheduling's trigger directories (seed 001), under
 * DIR/locality_scheduling/ of a project:
 *
 *   need_work/F          the scheduler asks the on-demand generator for work for F
 *   no_work_available/F  the generator says no more work will come for F
 *   file_working_set/F   F is in the working set (hosts without files get F)
 *   files_no_work/F      the scheduler found no unsent result for F
 *
 * Each entry is an empty file named after a locality file; only names that
 * pass vs_loc_file_name_ok() are ever made or read, so an entry is always a
 * single path component. files_no_work/ is the English original's path
 * (the Japanese text says sched_locality/files_no_work/; design.md).
 */
#ifndef VOLSCHED_SERVER_LOC_DIRS_H
#define VOLSCHED_SERVER_LOC_DIRS_H

#include <stdbool.h>
#include <stddef.h>

#include "volsched/error.h"
#include "volsched/loc_pass.h" /* enum vs_loc_dir */

/* "need_work", "no_work_available", "file_working_set", "files_no_work". */
const char *vs_loc_dir_name(enum vs_loc_dir d);

/* Creates DIR/locality_scheduling/ and the four directories (existing ones are fine). */
VS_MUST_CHECK int vs_loc_dirs_create(const char *project_dir);

/* DIR/locality_scheduling/<d>/<name> into out. VS_EINVAL for a bad name, VS_ELIMIT if too long. */
VS_MUST_CHECK int vs_loc_path(const char *project_dir, enum vs_loc_dir d, const char *name,
                              char *out, size_t size);

/* Creates the entry (an existing one is fine). Returns 0, VS_EINVAL, or -errno. */
VS_MUST_CHECK int vs_loc_touch(const char *project_dir, enum vs_loc_dir d, const char *name);
/* True when the entry exists (false for a bad name). */
bool vs_loc_exists(const char *project_dir, enum vs_loc_dir d, const char *name);
/* Removes the entry (a missing one is fine). Returns 0, VS_EINVAL, or -errno. */
VS_MUST_CHECK int vs_loc_remove(const char *project_dir, enum vs_loc_dir d, const char *name);

typedef int (*vs_loc_name_fn)(void *ctx, const char *name);
/*
 * Calls fn for each valid entry of directory d (at most max; others, such
 * as an operator's editor files, are skipped), in directory order. A
 * non-zero return of fn stops and is returned. -errno if the directory
 * cannot be read (a missing one is empty: 0).
 */
VS_MUST_CHECK int vs_loc_list(const char *project_dir, enum vs_loc_dir d, size_t max,
                              vs_loc_name_fn fn, void *ctx);

#endif
