/*
 * create_work's staging of input files (internal to src/server): the plan
 * of files to copy into the download hierarchy once every job is valid,
 * the copy (parallel for large batches, one file system sync for all), and
 * its undo when the store then refuses the batch.
 */
#ifndef VOLSCHED_SERVER_CW_STAGE_H
#define VOLSCHED_SERVER_CW_STAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "volsched/md5.h"
#include "volsched/str.h"
#include "volsched/strset.h"

/* A file to copy into the download hierarchy once everything is valid. */
struct vs_cw_stage {
    char src[VS_PATH_MAX];
    char dst[VS_PATH_MAX];
    char md5[VS_MD5_HEX_LEN + 1];
    int64_t nbytes;
    bool done;     /* copied by this call (undo on failure) */
    bool made_dir; /* the fanout directory was created by this call */
};

struct vs_cw_stages {
    struct vs_cw_stage *v;
    size_t n, cap;
    struct vs_strset by_dst;
};

/* The planned staging into dst, or NULL. */
const struct vs_cw_stage *vs_cw_stages_find(const struct vs_cw_stages *p, const char *dst);
/* Plans copying src (md5, nbytes) to dst; VS_ELIMIT if a path is too long. */
VS_MUST_CHECK int vs_cw_stages_add(struct vs_cw_stages *p, const char *src, const char *dst,
                                   const char *md5, int64_t nbytes);
/* Forgets the stagings planned from index from on (a skipped job's). */
void vs_cw_stages_truncate(struct vs_cw_stages *p, size_t from);
/*
 * Copies every planned file, then makes them all durable with one syncfs of
 * download_dir's file system. On failure returns the error with a message
 * in err (those copied stay marked done: vs_cw_stages_undo removes them).
 */
VS_MUST_CHECK int vs_cw_stages_run(struct vs_cw_stages *p, const char *download_dir, char *err,
                                   size_t errsize);
/* Removes what this plan copied, and the fanout directories it made if empty. */
void vs_cw_stages_undo(struct vs_cw_stages *p);
void vs_cw_stages_cleanup(struct vs_cw_stages *p);

#endif
