/* create_work's staging of input files (volsched/cw_stage.h). */
#include "volsched/cw_stage.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/create_work.h"
#include "volsched/error.h"
#include "volsched/fs.h"
#include "volsched/log.h"

static const char *dst_key(const void *ctx, size_t i)
{
    return ((const struct vs_cw_stages *)ctx)->v[i].dst;
}

const struct vs_cw_stage *vs_cw_stages_find(const struct vs_cw_stages *p, const char *dst)
{
    size_t i = vs_strset_find(&p->by_dst, dst, dst_key, p);
    return i == SIZE_MAX ? NULL : &p->v[i];
}

int vs_cw_stages_add(struct vs_cw_stages *p, const char *src, const char *dst, const char *md5,
                     int64_t nbytes)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 8;
        p->v = vs_xreallocarray(p->v, p->cap, sizeof(*p->v));
    }
    struct vs_cw_stage *st = &p->v[p->n];
    memset(st, 0, sizeof(*st));
    st->existing = src == NULL;
    if (vs_strlcpy(st->src, src ? src : "", sizeof(st->src)) ||
        vs_strlcpy(st->dst, dst, sizeof(st->dst)) || vs_strlcpy(st->md5, md5, sizeof(st->md5)))
        return VS_ELIMIT;
    st->nbytes = nbytes;
    vs_strset_add(&p->by_dst, p->n++, dst_key, p);
    return 0;
}

void vs_cw_stages_truncate(struct vs_cw_stages *p, size_t from)
{
    if (from >= p->n)
        return;
    p->n = from;
    vs_strset_cleanup(&p->by_dst);
    for (size_t i = 0; i < p->n; i++)
        vs_strset_add(&p->by_dst, i, dst_key, p);
}

int vs_cw_stages_verify(const struct vs_cw_stages *p, char *err, size_t errsize)
{
    for (size_t i = 0; i < p->n; i++) {
        const struct vs_cw_stage *st = &p->v[i];
        struct stat sb;
        if (stat(st->dst, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == st->nbytes)
            continue;
        snprintf(err, errsize,
                 "input %s left the download hierarchy while create_work ran (the file "
                 "deleter removed it: nothing used it yet); run create_work again",
                 st->dst);
        return VS_ENOTFOUND;
    }
    return 0;
}

/* Whether something uses file name; when the store cannot say, yes. */
static bool in_use(struct vs_store *s, const char *name)
{
    bool used = true;
    return vs_store_file_in_use(s, name, 0, &used) != 0 || used;
}

void vs_cw_stages_undo(struct vs_cw_stages *p, struct vs_store *s, struct vs_log *log)
{
    bool copied = false;
    for (size_t i = 0; i < p->n; i++)
        copied |= p->v[i].done || p->v[i].made_dir;
    if (!copied)
        return;
    if (vs_store_begin(s) != 0) {
        VS_LOG(log, VS_LOG_WARN,
               "create_work: store busy: the files staged stay in the download "
               "hierarchy");
        return;
    }
    for (size_t i = 0; i < p->n; i++) {
        struct vs_cw_stage *st = &p->v[i];
        if (st->done && !in_use(s, strrchr(st->dst, '/') + 1))
            unlink(st->dst);
        if (st->made_dir) {
            char d[VS_PATH_MAX];
            if (vs_strlcpy(d, st->dst, sizeof(d)) == 0) {
                *strrchr(d, '/') = '\0';
                rmdir(d); /* only succeeds if empty: another stage may share it */
            }
        }
    }
    if (vs_store_commit(s) != 0)
        VS_LOG(log, VS_LOG_WARN,
               "create_work: store commit failed after removing the files "
               "staged");
}

void vs_cw_stages_cleanup(struct vs_cw_stages *p)
{
    vs_free(p->v);
    vs_strset_cleanup(&p->by_dst);
    memset(p, 0, sizeof(*p));
}

int vs_cw_open_input(const char *path, bool follow, int *out_fd, char *link, size_t linksize)
{
    /* O_NONBLOCK: a FIFO must not hang the open; it is refused below. */
    const int rd = O_RDONLY | O_CLOEXEC | O_NONBLOCK;
    int fd = -1, rc = 0;
    if (follow) {
        fd = open(path, rd);
        rc = fd < 0 ? -errno : 0;
    } else {
        char buf[VS_PATH_MAX];
        if (vs_strlcpy(buf, path, sizeof(buf)) != 0)
            return VS_ELIMIT;
        int dir = AT_FDCWD;
        if (buf[0] == '/' && (dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
            return -errno;
        char *c = buf;
        while (*c == '/')
            c++;
        while (rc == 0) {
            char *end = strchr(c, '/');
            if (end)
                *end = '\0';
            bool last = !end || end[1 + strspn(end + 1, "/")] == '\0';
            /* A directory is opened as a path only (a directory one may pass
             * through but not list); O_NOFOLLOW refuses a link either way. */
            int next = openat(
                dir, c, last ? rd | O_NOFOLLOW : O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (next < 0) {
                rc = -errno;
                struct stat sb;
                if (fstatat(dir, c, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(sb.st_mode)) {
                    rc = -ELOOP;
                    snprintf(link, linksize, "%.*s", (int)(c - buf + (ptrdiff_t)strlen(c)), path);
                }
            }
            if (dir != AT_FDCWD)
                close(dir);
            dir = next;
            if (rc || last)
                break;
            for (c = end + 1; *c == '/';)
                c++;
        }
        fd = rc == 0 ? dir : -1;
    }
    struct stat sb;
    if (rc == 0 && (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)))
        rc = VS_EINVAL;
    if (rc) {
        if (fd >= 0)
            close(fd);
        return rc;
    }
    *out_fd = fd;
    return 0;
}

/* Copies what is left of descriptor in (closed here) to dst, as
 * vs_create_work_copy does. */
static int copy_fd(int in, const char *dst, bool durable)
{
    /* create_work syncs its whole batch once (do_stage) instead. */
    int rc = vs_fs_copy_fd(in, dst, 0644, VS_FS_PID_TMP | (durable ? VS_FS_DURABLE : 0), NULL);
    close(in);
    return rc;
}

int vs_create_work_copy(const char *src, const char *dst, bool durable)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -errno;
    return copy_fd(in, dst, durable);
}

/* Copies every planned file into the hierarchy, then makes them all durable
 * with one syncfs of the download directory's file system (the data, the
 * renames and the new fanout directories), instead of one fsync per file:
 * those cost a disk flush each, 5 ms here, and made a batch of 10,000 new
 * inputs take minutes. */
/* Stagings [from, to) of one thread: the first failure stops it. */
struct stager {
    struct vs_cw_stage *stages;
    size_t from, to;
    bool follow;
    int rc;
    size_t failed;
    bool dir_failed;
};

static void *stage_range(void *arg)
{
    struct stager *g = arg;
    for (size_t i = g->from; i < g->to && g->rc == 0; i++) {
        struct vs_cw_stage *st = &g->stages[i];
        if (st->existing)
            continue;
        char d[VS_PATH_MAX];
        if (vs_strlcpy(d, st->dst, sizeof(d)) != 0) {
            g->rc = VS_ELIMIT;
            g->failed = i;
            break;
        }
        *strrchr(d, '/') = '\0';
        if (mkdir(d, 0755) == 0) {
            st->made_dir = true;
        } else if (errno != EEXIST) {
            g->rc = -errno;
            g->failed = i;
            g->dir_failed = true;
            break;
        }
        /* A copy, not a hard link: a link would be cheaper (no new inode)
         * but an operator rewriting the source file in place would then
         * change a staged input under jobs that record its md5. */
        int in = -1;
        char link[VS_PATH_MAX];
        int rc = vs_cw_open_input(st->src, g->follow, &in, link, sizeof(link));
        if (rc == 0)
            rc = copy_fd(in, st->dst, false);
        if (rc) {
            g->rc = rc;
            g->failed = i;
            break;
        }
        st->done = true;
    }
    return NULL;
}

/* Threads that copy a large batch: creating a file is kernel work per file
 * (an inode, a directory entry), which parallel threads overlap. */
#define STAGE_THREADS      4
#define STAGE_PARALLEL_MIN 256

int vs_cw_stages_run(struct vs_cw_stages *p, const char *download_dir, char *err, size_t errsize)
{
    struct stager g[STAGE_THREADS];
    size_t nt = 1;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (p->n >= STAGE_PARALLEL_MIN && ncpu > 1)
        nt = ncpu < STAGE_THREADS ? (size_t)ncpu : STAGE_THREADS;
    pthread_t th[STAGE_THREADS];
    bool started[STAGE_THREADS] = {false};
    for (size_t t = 0; t < nt; t++) {
        g[t] = (struct stager){p->v, p->n * t / nt, p->n * (t + 1) / nt, p->follow, 0, 0, false};
        if (t > 0)
            started[t] = pthread_create(&th[t], NULL, stage_range, &g[t]) == 0;
        if (t > 0 && !started[t])
            stage_range(&g[t]); /* no thread: copy them here */
    }
    stage_range(&g[0]);
    for (size_t t = 1; t < nt; t++)
        if (started[t])
            pthread_join(th[t], NULL);
    for (size_t t = 0; t < nt; t++) {
        if (g[t].rc == 0)
            continue;
        const struct vs_cw_stage *st = &p->v[g[t].failed];
        if (g[t].dir_failed)
            snprintf(err, errsize, "cannot create the directory of %s: %s", st->dst,
                     vs_strerror(g[t].rc));
        else
            snprintf(err, errsize, "cannot stage %s into %s: %s", st->src, st->dst,
                     vs_strerror(g[t].rc));
        return g[t].rc;
    }
    size_t ncopied = 0;
    for (size_t i = 0; i < p->n; i++)
        ncopied += p->v[i].done;
    if (ncopied == 0)
        return 0;
    int fd = open(download_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        int e = -errno;
        snprintf(err, errsize, "cannot open %s: %s", download_dir, vs_strerror(e));
        return e;
    }
    int rc = syncfs(fd) == 0 ? 0 : -errno;
    close(fd);
    if (rc)
        snprintf(err, errsize, "cannot sync the staged files: %s", vs_strerror(rc));
    return rc;
}
