#include "volsched/log.h"

#include "volsched/logsafe.h"

#include <stdarg.h>
#include <string.h>
#include <time.h>

void vs_log_init(struct vs_log *lg, enum vs_log_level level, FILE *out, const char *prefix)
{
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

void vs_log_write(const struct vs_log *lg, enum vs_log_level level, const char *fmt, ...)
{
    static const char *const tags[] = {"ERROR", "WARN", "INFO", "DEBUG"};
    FILE *f = lg->out ? lg->out : stderr;
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
     * here, so no message can forge a line (issue 19). */
    if ((size_t)n < sizeof(line))
        vs_logsafe_escape_inplace(line + n, sizeof(line) - (size_t)n);
    /* One fputs per line keeps lines whole when threads share a stream. */
    size_t len = strlen(line);
    if (len + 1 < sizeof(line)) {
        line[len] = '\n';
        line[len + 1] = '\0';
    }
    fputs(line, f);
}
