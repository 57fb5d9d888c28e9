/*
 * String helpers that replace the banned libc functions (strcpy, atoi ...)
 * with bounded, checked versions.
 */
#ifndef VOLSCHED_STR_H
#define VOLSCHED_STR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "volsched/error.h"

/* Sizes of the fixed string fields of names and paths (including the NUL),
 * shared by the configuration (volsched/config.h) and the store. The store's
 * header repeats them for its records; C accepts only an identical
 * redefinition, so the compiler keeps the two in agreement. */
#define VS_NAME_MAX 256 /* names of apps, users, teams, WUs, results, files */
#define VS_PATH_MAX 1024

/*
 * Copies src into dst of size dstsize, always NUL-terminating. Returns 0, or
 * VS_ELIMIT when src did not fit (dst then holds the truncated prefix).
 */
VS_MUST_CHECK int vs_strlcpy(char *dst, const char *src, size_t dstsize);

/* Parses a whole string (surrounding blanks allowed) as a number. */
VS_MUST_CHECK int vs_parse_double(const char *s, double *out);
VS_MUST_CHECK int vs_parse_int64(const char *s, int64_t *out);
/* "1", "true", "yes", "on" / "0", "false", "no", "off" (case-insensitive). */
VS_MUST_CHECK int vs_parse_bool(const char *s, bool *out);

bool vs_str_has_prefix(const char *s, const char *prefix);
bool vs_str_has_suffix(const char *s, const char *suffix);
/* The value of hex digit c (either case), or -1. */
int vs_hexval(int c);

#endif
