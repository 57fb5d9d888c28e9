/*
 * Filesystem helpers (include/volsched/fs.h).
 */
#include "volsched/fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "volsched/str.h"

int vs_fs_mkdir_p(const char *path, mode_t mode)
{
    char tmp[VS_FS_PATH_MAX];
    if (!path || !*path)
        return VS_EINVAL;
    if (vs_strlcpy(tmp, path, sizeof(tmp)) != 0)
        return VS_ELIMIT;
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
            return -errno;
        *p = '/';
    }
    if (mkdir(tmp, mode) != 0 && errno != EEXIST)
        return -errno;
    return 0;
}

/* Removes the directory name in parent (a directory descriptor) with
 * everything in it. Every step goes through descriptors and never follows
 * a link, so a rename under us cannot send the removal elsewhere. */
static int rm_dir_at(int parent, const char *name, int depth)
{
    /* Each level holds a descriptor; this bounds them (and the stack). */
    if (depth > 256)
        return VS_ELIMIT;
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == EACCES) {
        struct stat st;
        if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
            fchmodat(parent, name, st.st_mode | S_IRWXU, 0) == 0)
            fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0)
        return errno == ENOENT ? 0 : -errno;
    struct stat st;
    if (fstat(fd, &st) == 0 && (st.st_mode & S_IRWXU) != S_IRWXU)
        (void)fchmod(fd, st.st_mode | S_IRWXU);
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = -errno;
        close(fd);
        return e;
    }
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        bool dir = e->d_type == DT_DIR;
        if (e->d_type == DT_UNKNOWN) {
            struct stat es;
            dir = fstatat(fd, e->d_name, &es, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(es.st_mode);
        }
        int r = dir ? rm_dir_at(fd, e->d_name, depth + 1)
                    : (unlinkat(fd, e->d_name, 0) == 0 || errno == ENOENT ? 0 : -errno);
        if (r)
            rc = r;
    }
    closedir(d);
    if (unlinkat(parent, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
        rc = -errno;
    return rc;
}

int vs_fs_rm_tree(const char *path)
{
    if (!path || !*path)
        return VS_EINVAL;
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : -errno;
    if (!S_ISDIR(st.st_mode))
        return unlink(path) == 0 || errno == ENOENT ? 0 : -errno;
    return rm_dir_at(AT_FDCWD, path, 0);
}

/* Opens the temporary beside path into *out_fd and its name into tmp. */
static int open_tmp(const char *path, mode_t mode, unsigned flags, char *tmp, size_t size,
                    int *out_fd)
{
    int n = (flags & VS_FS_PID_TMP) ? snprintf(tmp, size, "%s.tmp%d", path, (int)getpid())
                                    : snprintf(tmp, size, "%s.tmp", path);
    if (n < 0 || (size_t)n >= size)
        return VS_ELIMIT;
    /* a stale temporary of another mode (or a link planted there) is not reused */
    (void)unlink(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0)
        return -errno;
    *out_fd = fd;
    return 0;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Syncs (if asked), closes fd and renames tmp to path; removes tmp on
 * failure (and when rc is already an error). */
static int finish(int fd, int rc, const char *tmp, const char *path, unsigned flags)
{
    if (rc == 0 && (flags & VS_FS_DURABLE) && fsync(fd) != 0)
        rc = -errno;
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -errno;
    if (rc)
        (void)unlink(tmp);
    return rc;
}

int vs_fs_write_atomic(const char *path, const void *data, size_t len, mode_t mode, unsigned flags)
{
    char tmp[VS_FS_PATH_MAX + 32];
    int fd = -1;
    int rc = open_tmp(path, mode, flags, tmp, sizeof(tmp), &fd);
    if (rc)
        return rc;
    return finish(fd, write_all(fd, data, len), tmp, path, flags);
}

int vs_fs_copy_fd(int in, const char *dst, mode_t mode, unsigned flags, int64_t *out_nbytes)
{
    char tmp[VS_FS_PATH_MAX + 32];
    int fd = -1;
    int rc = open_tmp(dst, mode, flags, tmp, sizeof(tmp), &fd);
    if (rc)
        return rc;
    char buf[65536];
    int64_t total = 0;
    for (;;) {
        ssize_t r = read(in, buf, sizeof(buf));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = -errno;
            break;
        }
        if (r == 0 || (rc = write_all(fd, buf, (size_t)r)) != 0)
            break;
        total += r;
    }
    rc = finish(fd, rc, tmp, dst, flags);
    if (rc == 0 && out_nbytes)
        *out_nbytes = total;
    return rc;
}

int vs_fs_copy_file(const char *src, const char *dst, mode_t mode, unsigned flags,
                    int64_t *out_nbytes)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -errno;
    int rc = vs_fs_copy_fd(in, dst, mode, flags, out_nbytes);
    close(in);
    return rc;
}
