/*
 * The operator's password for the /ops/ dashboard: made by `volsched init`,
 * stored hashed in DIR/keys/ops_passwd as one line
 * "pbkdf2-sha256$ITERATIONS$SALT_HEX$HASH_HEX" (PBKDF2-HMAC-SHA256, OpenSSL),
 * never in clear. HTTP Basic with any user name and this password logs in.
 */
#ifndef VOLSCHED_SERVER_OPS_AUTH_H
#define VOLSCHED_SERVER_OPS_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "volsched/error.h"

#define VS_OPS_PASSWD_FILE "keys/ops_passwd"
#define VS_OPS_HASH_MAX    256
/* The shortest operator password `volsched init --ops-password` takes
 * (the random one it makes has 16 characters). */
#define VS_OPS_PASSWORD_MIN 10

/* NULL when password may be the operator's, else why not (a static
 * sentence for the operator). */
const char *vs_ops_password_problem(const char *password);

/* Hashes password with a fresh random salt into out (the stored line,
 * without newline). Returns 0, or VS_ECRYPTO / VS_ELIMIT. */
VS_MUST_CHECK int vs_ops_hash_password(const char *password, char *out, size_t n);
/* True when password matches a stored line made by vs_ops_hash_password. */
bool vs_ops_check_password(const char *stored, const char *password);
/* Makes a random password of 16 letters and digits into out (n >= 17). */
VS_MUST_CHECK int vs_ops_random_password(char *out, size_t n);
/*
 * Checks an HTTP Authorization header ("Basic base64(user:password)")
 * against the stored line. False for NULL, another scheme or bad base64.
 */
bool vs_ops_check_basic(const char *stored, const char *authorization);

/* Lowercase hex of p[0..n) into out (2n + 1 bytes); and back: exactly 2n
 * hex digits of s[0..len) into out[0..n), 0 or -1. For ops_session.c. */
void vs_ops__to_hex(const unsigned char *p, size_t n, char *out);
int vs_ops__from_hex(const char *s, size_t len, unsigned char *out, size_t n);

#endif
