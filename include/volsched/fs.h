/*
 * Filesystem helpers every part of volsched needs: mkdir -p, remove a tree,
 * write a file atomically, copy a file atomically. One copy of each, so
 * that the rules (no link followed, a temporary beside the target, fsync
 * when asked) hold everywhere.
 *
 * Paths are at most 4095 bytes; a longer one is VS_ELIMIT. Errors are
 * negative VS_E* codes, system errors as -errno.
 */
#ifndef VOLSCHED_FS_H
#define VOLSCHED_FS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "volsched/error.h"

#define VS_FS_PATH_MAX 4096

/* flags of vs_fs_write_atomic and vs_fs_copy_file */
#define VS_FS_DURABLE 1u /* fsync the file before it is renamed into place */
#define VS_FS_PID_TMP                                                                              \
    2u /* the temporary's name carries the process id: for a file                                  \
        * that several processes may write at once */

/*
 * Creates directory path and its missing parents (mkdir -p). Parents are
 * made mode 0755, path itself mode (both less the umask); a directory that
 * exists already is left as it is. Returns 0, VS_ELIMIT or -errno.
 */
int vs_fs_mkdir_p(const char *path, mode_t mode);

/*
 * Removes path and, if it is a directory, everything below it (rm -rf).
 * Symbolic links are removed, never followed; a directory without write
 * or search permission for its owner is given them first (an app's
 * read-only directory is ours to empty). A missing path is 0. On an error
 * it removes what it can and returns the last error (callers that clean
 * up best-effort may ignore it).
 */
int vs_fs_rm_tree(const char *path);

/*
 * Writes data[0..len) as path, atomically: to a temporary beside it
 * ("PATH.tmp", or "PATH.tmpPID" with VS_FS_PID_TMP; a stale one is removed
 * first, and a link planted there is never followed), made with mode,
 * fsynced with VS_FS_DURABLE, then renamed over path. On failure path is
 * unchanged and the temporary is gone.
 */
VS_MUST_CHECK int vs_fs_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
                                     unsigned flags);

/*
 * Copies what is left to read of the open descriptor in (which stays open)
 * to dst, atomically as vs_fs_write_atomic writes; *out_nbytes (may be
 * NULL) gets the bytes copied.
 */
VS_MUST_CHECK int vs_fs_copy_fd(int in, const char *dst, mode_t mode, unsigned flags,
                                int64_t *out_nbytes);

/* vs_fs_copy_fd from the file src (opened without following a final
 * symbolic link only if the caller checked it: it is opened plainly). */
VS_MUST_CHECK int vs_fs_copy_file(const char *src, const char *dst, mode_t mode, unsigned flags,
                                  int64_t *out_nbytes);

#endif
