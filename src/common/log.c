#include "volsched/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/logsafe.h"
#include "volsched/str.h"

struct vs_log_file {
    int fd;
    char *path;
};

void vs_log_init(struct vs_log *lg, enum vs_log_level level, FILE *out, const char *prefix)
{
    memset(lg, 0, sizeof(*lg));
    lg->level = level;
    lg->out = out;
    lg->prefix = prefix;
}

int vs_log_level_parse(const char *s, enum vs_log_level *out_level)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    for (int i = 0; i < 4; i++) {
        if (strcmp(s, names[i]) == 0) {
            *out_level = (enum vs_log_level)i;
            return 0;
        }
    }
    return VS_EINVAL;
}

static int open_append(const char *path)
{
    return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
}

int vs_log_file_open(const char *path, struct vs_log_file **out)
{
    int fd = open_append(path);
    if (fd < 0)
        return -errno;
    struct vs_log_file *f = VS_NEW(struct vs_log_file);
    f->fd = fd;
    f->path = vs_xstrdup(path);
    *out = f;
    return 0;
}

int vs_log_file_reopen(struct vs_log_file *f)
{
    int fd = open_append(f->path);
    if (fd < 0)
        return -errno;
    /* dup2 swaps the file under the descriptor atomically: a write racing
     * with it lands in the old file or the new one, never in a closed fd. */
    int rc = dup2(fd, f->fd) < 0 ? -errno : 0;
    close(fd);
    return rc;
}

const char *vs_log_file_path(const struct vs_log_file *f)
{
    return f->path;
}

void vs_log_file_close(struct vs_log_file *f)
{
    if (!f)
        return;
    close(f->fd);
    vs_free(f->path);
    vs_free(f);
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* a full disk loses log lines, never the request */
        p += w;
        n -= (size_t)w;
    }
}

void vs_log_write(const struct vs_log *lg, enum vs_log_level level, const char *fmt, ...)
{
    static const char *const tags[] = {"ERROR", "WARN", "INFO", "DEBUG"};
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
    char line[2048];
    int n = snprintf(line, sizeof(line), "%s %s%s%s ", stamp, lg->prefix ? lg->prefix : "",
                     lg->prefix ? " " : "", tags[level]);
    if (n < 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    if ((size_t)n < sizeof(line))
        vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    va_end(ap);
    /* A client's string may carry a newline or a terminal escape: escaped
     * here, so no message can forge a line. */
    if ((size_t)n < sizeof(line))
        vs_logsafe_escape_inplace(line + n, sizeof(line) - (size_t)n);
    size_t len = strlen(line);
    if (lg->tap && level <= VS_LOG_WARN)
        lg->tap(lg->tap_ctx, level, line);
    if (len + 1 < sizeof(line)) {
        line[len++] = '\n';
        line[len] = '\0';
    }
    if (lg->file)
        write_all(lg->file->fd, line, len);
    /* One fputs per line keeps lines whole when threads share a stream. */
    if (!lg->file || lg->tee)
        fputs(line, lg->out ? lg->out : stderr);
}
