/* Pid files with locks, stop files and the serve state file (proc_ctl.h). */
#include "volsched/proc_ctl.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/fs.h"
#include "volsched/str.h"

#define CTL_PATH_MAX 4200

struct vs_pidlock {
    int fd;
    char path[CTL_PATH_MAX];
};

static int pid_path(const char *dir, const char *name, char *out, size_t n)
{
    int m = snprintf(out, n, "%s/run/%s.pid", dir, name);
    return m < 0 || (size_t)m >= n ? VS_ELIMIT : 0;
}

static pid_t read_pid(int fd)
{
    char buf[32];
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    int64_t v = 0;
    char *nl = strchr(buf, '\n');
    if (nl)
        *nl = '\0';
    if (vs_parse_int64(buf, &v) != 0 || v <= 0)
        return 0;
    return (pid_t)v;
}

int vs_pidlock_acquire(const char *dir, const char *name, struct vs_pidlock **out,
                       pid_t *out_other_pid)
{
    char rundir[CTL_PATH_MAX];
    int m = snprintf(rundir, sizeof(rundir), "%s/run", dir);
    if (m < 0 || (size_t)m >= sizeof(rundir))
        return VS_ELIMIT;
    if (mkdir(rundir, 0755) != 0 && errno != EEXIST)
        return -errno;
    struct vs_pidlock *p = VS_NEW(struct vs_pidlock);
    int rc = pid_path(dir, name, p->path, sizeof(p->path));
    if (rc != 0)
        goto fail;
    /* O_CREAT without O_TRUNC: the file may belong to a running process. */
    p->fd = open(p->path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (p->fd < 0) {
        rc = -errno;
        goto fail;
    }
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(p->fd, F_OFD_SETLK, &fl) != 0) {
        rc = errno == EAGAIN || errno == EACCES ? VS_EBUSY : -errno;
        if (out_other_pid)
            *out_other_pid = read_pid(p->fd);
        close(p->fd);
        goto fail;
    }
    char text[32];
    int len = snprintf(text, sizeof(text), "%ld\n", (long)getpid());
    if (ftruncate(p->fd, 0) != 0 || pwrite(p->fd, text, (size_t)len, 0) != len) {
        rc = -errno;
        close(p->fd);
        goto fail;
    }
    *out = p;
    return 0;
fail:
    vs_free(p);
    return rc;
}

void vs_pidlock_release(struct vs_pidlock *p)
{
    if (!p)
        return;
    /* Unlink while still holding the lock, so a starting process never
     * locks a file that is about to disappear. */
    unlink(p->path);
    close(p->fd);
    vs_free(p);
}

int vs_pidlock_probe(const char *dir, const char *name, pid_t *out_pid)
{
    char path[CTL_PATH_MAX];
    int rc = pid_path(dir, name, path, sizeof(path));
    if (rc != 0)
        return rc;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : -errno;
    /* F_OFD_GETLK only asks: probing never takes the lock, so it cannot make
     * a starting serve believe another one runs. */
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(fd, F_OFD_GETLK, &fl) != 0) {
        rc = -errno;
        close(fd);
        return rc;
    }
    int up = fl.l_type != F_UNLCK;
    if (up && out_pid)
        *out_pid = read_pid(fd);
    close(fd);
    return up;
}

static int ctl_path(const char *dir, const char *file, char *out, size_t n)
{
    int m = snprintf(out, n, "%s/%s", dir, file);
    return m < 0 || (size_t)m >= n ? VS_ELIMIT : 0;
}

bool vs_ctl_file_exists(const char *dir, const char *file)
{
    char path[CTL_PATH_MAX];
    return ctl_path(dir, file, path, sizeof(path)) == 0 && access(path, F_OK) == 0;
}

int vs_ctl_file_set(const char *dir, const char *file, bool on)
{
    char path[CTL_PATH_MAX];
    int rc = ctl_path(dir, file, path, sizeof(path));
    if (rc != 0)
        return rc;
    if (!on)
        return unlink(path) == 0 || errno == ENOENT ? 0 : -errno;
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    close(fd);
    return 0;
}

int vs_ctl_check_writable_dir(const char *dir)
{
    char path[CTL_PATH_MAX];
    int m = snprintf(path, sizeof(path), "%s/.volsched_write_check.%ld", dir, (long)getpid());
    if (m < 0 || (size_t)m >= sizeof(path))
        return VS_ELIMIT;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    close(fd);
    return unlink(path) == 0 ? 0 : -errno;
}

int vs_serve_state_write(const char *dir, const struct vs_serve_state *st)
{
    char path[CTL_PATH_MAX];
    int m = snprintf(path, sizeof(path), "%s/run/serve.state", dir);
    if (m < 0 || (size_t)m >= sizeof(path))
        return VS_ELIMIT;
    char text[1024 + CTL_PATH_MAX];
    int n = snprintf(text, sizeof(text),
                     "pid %" PRId64 "\nstarted %" PRId64 "\nupdated %" PRId64 "\nlisten %s\n"
                     "cache_present %" PRId64 "\ncache_slots %" PRId64 "\nrpcs %" PRId64
                     "\njobs_sent %" PRId64 "\ndaemons %" PRId64 "\n",
                     st->pid, st->started, st->updated, st->listen, st->cache_present,
                     st->cache_slots, st->rpcs, st->jobs_sent, st->daemons);
    if (n < 0 || (size_t)n >= sizeof(text))
        return VS_ELIMIT;
    return vs_fs_write_atomic(path, text, (size_t)n, 0644, 0);
}

int vs_serve_state_read(const char *dir, struct vs_serve_state *out)
{
    char path[CTL_PATH_MAX];
    int m = snprintf(path, sizeof(path), "%s/run/serve.state", dir);
    if (m < 0 || (size_t)m >= sizeof(path))
        return VS_ELIMIT;
    FILE *f = fopen(path, "r");
    if (!f)
        return errno == ENOENT ? VS_ENOTFOUND : -errno;
    struct vs_serve_state st;
    memset(&st, 0, sizeof(st));
    char line[256];
    /* Bounded: a state file has a handful of lines; stop at 64. */
    for (int i = 0; i < 64 && fgets(line, sizeof(line), f); i++) {
        line[strcspn(line, "\n")] = '\0';
        char *sp = strchr(line, ' ');
        if (!sp)
            continue;
        *sp = '\0';
        const char *v = sp + 1;
        int64_t n = 0;
        if (strcmp(line, "listen") == 0) {
            snprintf(st.listen, sizeof(st.listen), "%s", v);
            continue;
        }
        if (vs_parse_int64(v, &n) != 0)
            continue;
        if (strcmp(line, "pid") == 0)
            st.pid = n;
        else if (strcmp(line, "started") == 0)
            st.started = n;
        else if (strcmp(line, "updated") == 0)
            st.updated = n;
        else if (strcmp(line, "cache_present") == 0)
            st.cache_present = n;
        else if (strcmp(line, "cache_slots") == 0)
            st.cache_slots = n;
        else if (strcmp(line, "rpcs") == 0)
            st.rpcs = n;
        else if (strcmp(line, "jobs_sent") == 0)
            st.jobs_sent = n;
        else if (strcmp(line, "daemons") == 0)
            st.daemons = n;
    }
    fclose(f);
    *out = st;
    return 0;
}
