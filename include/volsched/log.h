/*
 * Logging. A logger is a plain struct owned by the program's context and
 * passed down; there is no global logger. The VS_LOG macro tests the level
 * before evaluating its arguments, so a disabled debug line costs a compare.
 *
 * A logger writes each line either to a stream (out, default stderr) or to
 * a log file (file, see vs_log_file_open), or to both (tee). Log files are
 * reopened in place on request (vs_log_file_reopen, after logrotate renamed
 * them and sent SIGHUP): the new file takes over the old descriptor number
 * with dup2(), so threads writing at that moment never see a closed file and
 * need no lock. A line is one write() on an O_APPEND descriptor, so lines of
 * several threads and processes stay whole.
 */
#ifndef VOLSCHED_LOG_H
#define VOLSCHED_LOG_H

#include <stdbool.h>
#include <stdio.h>

#include "volsched/error.h"

enum vs_log_level { VS_LOG_ERROR = 0, VS_LOG_WARN, VS_LOG_INFO, VS_LOG_DEBUG };

struct vs_log_file;

/* Called with every line written at WARN or ERROR (without its newline), for
 * a "recent errors" view; runs on the logging thread, must be thread-safe. */
typedef void (*vs_log_tap_fn)(void *ctx, enum vs_log_level level, const char *line);

struct vs_log {
    enum vs_log_level level;
    FILE *out;                /* borrowed; NULL means stderr */
    const char *prefix;       /* borrowed, e.g. "serve"; may be NULL */
    struct vs_log_file *file; /* borrowed; NULL: lines go to out */
    bool tee;                 /* with file: also write every line to out */
    vs_log_tap_fn tap;        /* may be NULL */
    void *tap_ctx;
};

void vs_log_init(struct vs_log *lg, enum vs_log_level level, FILE *out, const char *prefix);
/* Parses "error", "warn", "info" or "debug"; returns VS_EINVAL otherwise. */
VS_MUST_CHECK int vs_log_level_parse(const char *s, enum vs_log_level *out_level);
void vs_log_write(const struct vs_log *lg, enum vs_log_level level, const char *fmt, ...)
    VS_PRINTF(3, 4);

/* Opens (creating, mode 0644) path for appending. Returns 0 and *out (the
 * caller owns it: vs_log_file_close), or -errno. */
VS_MUST_CHECK int vs_log_file_open(const char *path, struct vs_log_file **out);
/* Opens the file's path again (a new file if it was renamed away) on the
 * same descriptor. On failure the old file stays in use; returns -errno. */
VS_MUST_CHECK int vs_log_file_reopen(struct vs_log_file *f);
/* The file's path (for messages). */
const char *vs_log_file_path(const struct vs_log_file *f);
/* Closes and frees f. NULL is a no-op. No logger may use it afterwards. */
void vs_log_file_close(struct vs_log_file *f);

#define VS_LOG(lg, lvl, ...)                                                                       \
    do {                                                                                           \
        if ((lg) && (lvl) <= (lg)->level)                                                          \
            vs_log_write((lg), (lvl), __VA_ARGS__);                                                \
    } while (0)

#endif
