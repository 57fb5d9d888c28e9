/*
 * Logging. A logger is a plain struct owned by the program's context and
 * passed down; there is no global logger. The VS_LOG macro tests the level
 * before evaluating its arguments, so a disabled debug line costs a compare.
 */
#ifndef VOLSCHED_LOG_H
#define VOLSCHED_LOG_H

#include <stdio.h>

#include "volsched/error.h"

enum vs_log_level { VS_LOG_ERROR = 0, VS_LOG_WARN, VS_LOG_INFO, VS_LOG_DEBUG };

struct vs_log {
    enum vs_log_level level;
    FILE *out;          /* borrowed; NULL means stderr */
    const char *prefix; /* borrowed, e.g. "serve"; may be NULL */
};

void vs_log_init(struct vs_log *lg, enum vs_log_level level, FILE *out, const char *prefix);
/* Parses "error", "warn", "info" or "debug"; returns VS_EINVAL otherwise. */
VS_MUST_CHECK int vs_log_level_parse(const char *s, enum vs_log_level *out_level);
void vs_log_write(const struct vs_log *lg, enum vs_log_level level, const char *fmt, ...)
    VS_PRINTF(3, 4);

#define VS_LOG(lg, lvl, ...)                                                                       \
    do {                                                                                           \
        if ((lg) && (lvl) <= (lg)->level)                                                          \
            vs_log_write((lg), (lvl), __VA_ARGS__);                                                \
    } while (0)

#endif
