#include "volsched/str.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int vs_strlcpy(char *dst, const char *src, size_t dstsize)
{
    if (dstsize == 0)
        return VS_ELIMIT;
    size_t n = strlen(src);
    if (n >= dstsize) {
        memcpy(dst, src, dstsize - 1);
        dst[dstsize - 1] = '\0';
        return VS_ELIMIT;
    }
    memcpy(dst, src, n + 1);
    return 0;
}

static bool only_space(const char *p)
{
    while (*p && isspace((unsigned char)*p))
        p++;
    return *p == '\0';
}

int vs_parse_double(const char *s, double *out)
{
    if (!s)
        return VS_EINVAL;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno == ERANGE || !only_space(end) || !isfinite(v))
        return VS_EPARSE;
    *out = v;
    return 0;
}

int vs_parse_int64(const char *s, int64_t *out)
{
    if (!s)
        return VS_EINVAL;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || errno == ERANGE || !only_space(end))
        return VS_EPARSE;
    *out = (int64_t)v;
    return 0;
}

int vs_parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"1", "true", "yes", "on"};
    static const char *const no[] = {"0", "false", "no", "off"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = true;
            return 0;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = false;
            return 0;
        }
    }
    return VS_EPARSE;
}

bool vs_str_has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool vs_str_has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

int vs_hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}
