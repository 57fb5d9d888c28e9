/*
 * create_work's staging of input files (server; app add uses it too): the plan
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
#include "volsched/store.h"
#include "volsched/str.h"
#include "volsched/strset.h"

/*
 * Opens the input file at path for reading as create_work stages it. Unless
 * follow, no component of path as given may be a symbolic link (a relative
 * path is walked from the current directory, whose own ancestors are not
 * looked at): each is opened without following one, so the file read is
 * the one the path names, not what a link planted in it points to (issue
 * 34: a link to /etc/passwd was published). The file must be a regular
 * file. Returns 0 with the descriptor (O_CLOEXEC, the caller closes it) in
 * *out_fd; -ELOOP for a symbolic link, with the path up to and including
 * that component in link (size linksize); VS_EINVAL for something that is
 * not a regular file; VS_ELIMIT for a path too long; else -errno.
 */
VS_MUST_CHECK int vs_cw_open_input(const char *path, bool follow, int *out_fd, char *link,
                                   size_t linksize);

/*
 * A file create_work's jobs use in the download hierarchy: one to copy
 * there once everything is valid, or one already there (existing). Every
 * one is looked at again after the workunits are inserted
 * (vs_cw_stages_verify), because the file deleter may have removed a file
 * nothing used yet in between.
 */
struct vs_cw_stage {
    char src[VS_PATH_MAX]; /* "" when existing */
    char dst[VS_PATH_MAX];
    char md5[VS_MD5_HEX_LEN + 1];
    int64_t nbytes;
    bool existing; /* already in the hierarchy: not copied, never removed */
    bool done;     /* copied by this call (undo on failure) */
    bool made_dir; /* the fanout directory was created by this call */
};

struct vs_cw_stages {
    struct vs_cw_stage *v;
    size_t n, cap;
    struct vs_strset by_dst;
    bool follow; /* sources may be symbolic links (vs_cw_open_input) */
};

/* The planned staging into dst (or the existing file dst), or NULL. */
const struct vs_cw_stage *vs_cw_stages_find(const struct vs_cw_stages *p, const char *dst);
/* Plans copying src (md5, nbytes) to dst; src NULL: dst is already in the
 * hierarchy with that md5 and size. VS_ELIMIT if a path is too long. */
VS_MUST_CHECK int vs_cw_stages_add(struct vs_cw_stages *p, const char *src, const char *dst,
                                   const char *md5, int64_t nbytes);
/* Forgets the stagings planned from index from on (a skipped job's). */
void vs_cw_stages_truncate(struct vs_cw_stages *p, size_t from);
/*
 * Copies every planned file (each source opened with vs_cw_open_input),
 * then makes them all durable with one syncfs of download_dir's file
 * system. On failure returns the error with a message in err (those copied
 * stay marked done: vs_cw_stages_undo removes them).
 */
VS_MUST_CHECK int vs_cw_stages_run(struct vs_cw_stages *p, const char *download_dir, char *err,
                                   size_t errsize);
/*
 * Checks that every file of the plan is in the hierarchy with its size,
 * after the workunits that use them were inserted and before they are
 * committed: VS_ENOTFOUND with a message in err for one that is gone.
 */
VS_MUST_CHECK int vs_cw_stages_verify(const struct vs_cw_stages *p, char *err, size_t errsize);
/*
 * Removes what this plan copied, in a write transaction of s, except the
 * files something uses by then (vs_store_file_in_use: another create_work
 * may have found one there and given it to its jobs), and the fanout
 * directories it made if empty. When s cannot be written the files stay
 * (logged to log, which may be NULL): a file left over is better than one
 * a job needs gone.
 */
void vs_cw_stages_undo(struct vs_cw_stages *p, struct vs_store *s, struct vs_log *log);
void vs_cw_stages_cleanup(struct vs_cw_stages *p);

#endif
