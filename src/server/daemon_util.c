/* Helpers shared by the back-end daemons (see daemon_util.h). */
#include "volsched/daemon_util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "volsched/buf.h"
#include "volsched/fs.h"
#include "volsched/log.h"
#include "volsched/str.h"
#include "volsched/xml.h"

extern char **environ;

#define MAX_ARGV 256

void vs_daemon_msg(char *buf, size_t n, const char *fmt, ...)
{
    if (!n)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    if (k < 0)
        buf[0] = '\0';
}

int vs_daemon_pass_begin(struct vs_daemon_pass *d, struct vs_store *s,
                         const struct vs_project_config *cfg, int64_t now, struct vs_log *log)
{
    if (!s || !cfg)
        return VS_EINVAL;
    d->s = s;
    d->cfg = cfg;
    d->now = now;
    d->log = log;
    vs_arena_init(&d->arena, 16384);
    return 0;
}

int vs_daemon_pass_end(struct vs_daemon_pass *d, int rc, int count, char *last_error,
                       size_t last_error_size)
{
    vs_arena_cleanup(&d->arena);
    if (rc && last_error)
        vs_daemon_msg(last_error, last_error_size, "%s", vs_strerror(rc));
    return rc ? rc : count;
}

int vs_daemon_txn_end(struct vs_store *s, int rc)
{
    if (rc == 0)
        return vs_store_commit(s);
    (void)vs_store_rollback(s);
    return rc;
}

bool vs_daemon_safe_name(const char *name)
{
    return name && *name && !strchr(name, '/') && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

int vs_daemon_files(const char *xml, struct vs_arena *arena, struct vs_daemon_file *files,
                    size_t *out_n)
{
    if (!xml)
        xml = "";
    /* The documents are sequences of elements: give them one root. */
    struct vs_buf b;
    vs_buf_init(&b, 4 * 1024 * 1024);
    int rc = vs_buf_printf(&b, "<doc>%s</doc>", xml);
    if (rc) {
        vs_buf_cleanup(&b);
        return rc;
    }
    /* The tree borrows from its input: keep the text in the arena. */
    char *text = vs_arena_strndup(arena, b.data, b.len);
    size_t len = b.len;
    vs_buf_cleanup(&b);
    struct vs_xml_doc doc;
    if (vs_xml_parse(text, len, NULL, 0, arena, &doc, NULL) != 0)
        return VS_EPARSE;
    size_t n = 0;
    for (const struct vs_xml_node *fi = vs_xml_child(doc.root, "file_info"); fi;
         fi = vs_xml_next_same(fi)) {
        if (n == VS_DAEMON_MAX_FILES)
            return VS_ELIMIT;
        const char *name = vs_xml_text_trim(vs_xml_child(fi, "name"), arena);
        if (!vs_daemon_safe_name(name))
            return VS_EPARSE;
        files[n].name = name;
        files[n].open_name = "";
        files[n].no_delete = vs_xml_child(fi, "no_delete") != NULL;
        const char *md5 = vs_xml_text_trim(vs_xml_child(fi, "md5_cksum"), arena);
        const char *url = vs_xml_text_trim(vs_xml_child(fi, "url"), arena);
        const char *nb = vs_xml_text_trim(vs_xml_child(fi, "nbytes"), arena);
        files[n].md5_cksum = md5 ? md5 : "";
        files[n].url = url ? url : "";
        files[n].nbytes = 0;
        if (nb && vs_parse_double(nb, &files[n].nbytes) != 0)
            files[n].nbytes = 0;
        n++;
    }
    /* Open names come from the file_refs of <result> (outputs) or
     * <workunit> (inputs). */
    const struct vs_xml_node *owner = vs_xml_child(doc.root, "result");
    if (!owner)
        owner = vs_xml_child(doc.root, "workunit");
    for (const struct vs_xml_node *fr = vs_xml_child(owner, "file_ref"); fr;
         fr = vs_xml_next_same(fr)) {
        const char *fname = vs_xml_text_trim(vs_xml_child(fr, "file_name"), arena);
        const char *oname = vs_xml_text_trim(vs_xml_child(fr, "open_name"), arena);
        for (size_t i = 0; i < n; i++)
            if (strcmp(files[i].name, fname) == 0)
                files[i].open_name = oname;
    }
    *out_n = n;
    return 0;
}

int vs_daemon_run(const char *cmdline, const char *const *args, size_t nargs, int timeout,
                  struct vs_log *log, int *out_status)
{
    if (!cmdline)
        return VS_EINVAL;
    char line[VS_CMD_MAX];
    if (vs_strlcpy(line, cmdline, sizeof(line)) != 0)
        return VS_ELIMIT;
    char *argv[MAX_ARGV + 1];
    size_t argc = 0;
    char *save = NULL;
    for (char *tok = strtok_r(line, " \t\r\n", &save); tok;
         tok = strtok_r(NULL, " \t\r\n", &save)) {
        if (argc == MAX_ARGV)
            return VS_ELIMIT;
        argv[argc++] = tok;
    }
    if (argc == 0)
        return VS_EINVAL;
    if (argc + nargs > MAX_ARGV)
        return VS_ELIMIT;
    for (size_t i = 0; i < nargs; i++)
        argv[argc++] = (char *)args[i];
    argv[argc] = NULL;

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, 2, 1);
    pid_t pid;
    int e = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (e != 0) {
        VS_LOG(log, VS_LOG_ERROR, "cannot run %s: %s", argv[0], strerror(e));
        return VS_EIO;
    }
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    int status = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR) {
            VS_LOG(log, VS_LOG_ERROR, "waiting for %s: %s", argv[0], strerror(errno));
            return VS_EIO;
        }
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (timeout > 0 && now.tv_sec - start.tv_sec >= timeout) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            VS_LOG(log, VS_LOG_WARN, "%s killed after %d s", argv[0], timeout);
            return VS_ETIMEOUT;
        }
        /* Short checks first: most commands are quick. */
        double el = (double)(now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9;
        struct timespec ts = {0, el < 0.1 ? 2000000L : 50000000L};
        nanosleep(&ts, NULL);
    }
    if (!WIFEXITED(status)) {
        VS_LOG(log, VS_LOG_WARN, "%s died of signal %d", argv[0],
               WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        return VS_EIO;
    }
    *out_status = WEXITSTATUS(status);
    return 0;
}

int vs_daemon_hav_event(struct vs_store *s, int64_t hostid, int64_t app_version_id, int quota,
                        enum vs_hav_event ev, double delay_bound)
{
    if (!hostid || !app_version_id)
        return 0;
    struct vs_host_app_version h;
    int rc = vs_store_hav_get(s, hostid, app_version_id, &h);
    if (rc == VS_ENOTFOUND) {
        memset(&h, 0, sizeof(h));
        h.host_id = hostid;
        h.app_version_id = app_version_id;
    } else if (rc) {
        return rc;
    }
    /* 0 stands for "the project's quota". */
    int eff = h.max_jobs_per_day > 0 ? h.max_jobs_per_day : quota;
    switch (ev) {
    case VS_HAV_TIMEOUT:
        h.consecutive_valid = 0;
        if (quota > 0) {
            int m = eff < quota ? eff : quota;
            h.max_jobs_per_day = m - 1 < 1 ? 1 : m - 1;
        }
        h.turnaround_n += 1;
        h.turnaround_avg += (delay_bound - h.turnaround_avg) / h.turnaround_n;
        break;
    case VS_HAV_VALID:
        /* BOINC's validator raises it by one, past the quota if need be. */
        h.consecutive_valid++;
        if (quota > 0 && eff < INT_MAX)
            h.max_jobs_per_day = eff + 1;
        break;
    case VS_HAV_INVALID:
        h.consecutive_valid = 0;
        if (quota > 0 && h.max_jobs_per_day > quota)
            h.max_jobs_per_day--;
        break;
    }
    return vs_store_hav_put(s, &h);
}

int vs_daemon_copy_file(const char *src, const char *dst, double *out_nbytes)
{
    int64_t n = 0;
    int rc = vs_fs_copy_file(src, dst, 0644, VS_FS_DURABLE, &n);
    if (rc == 0 && out_nbytes)
        *out_nbytes = (double)n;
    return rc;
}

int vs_daemon_write_file(const char *path, const char *data, size_t len)
{
    return vs_fs_write_atomic(path, data, len, 0644, VS_FS_DURABLE);
}

int vs_daemon_sync_dir(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = fsync(fd) == 0 ? 0 : -errno;
    close(fd);
    return rc;
}
