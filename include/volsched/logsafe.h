/*
 * Making client-supplied text safe to log: a log line must be one
 * line, and a secret must never be written whole.
 *
 *   vs_logsafe_escape   control characters, DEL and '\' become \xNN, so a
 *                       newline or an escape sequence in a client's string
 *                       cannot forge a log line or drive a terminal; the
 *                       logger applies it to every line (log.c).
 *   vs_logsafe_secret   a short, stable fingerprint of a secret (an
 *                       authenticator): "md5:" and the first 8 hex digits of
 *                       its MD5, enough to match two log lines, useless to
 *                       attach with.
 *
 * Both write a NUL-terminated string into a caller's buffer, truncating
 * (never failing); NULL input is written as "(null)".
 */
#ifndef VOLSCHED_LOGSAFE_H
#define VOLSCHED_LOGSAFE_H

#include <stddef.h>

/* Length of the text vs_logsafe_secret writes, without the NUL. */
#define VS_LOGSAFE_SECRET_LEN 12

/* Copies s into out (outsize > 0) with unsafe bytes escaped; returns the
 * number of bytes written (without the NUL). */
size_t vs_logsafe_escape(const char *s, char *out, size_t outsize);

/* Escapes s in place within its buffer of size bufsize (the logger's own
 * line; the result is truncated to fit). */
void vs_logsafe_escape_inplace(char *s, size_t bufsize);

/* Writes the fingerprint of secret (out needs VS_LOGSAFE_SECRET_LEN + 1). */
void vs_logsafe_secret(const char *secret, char *out, size_t outsize);

#endif
