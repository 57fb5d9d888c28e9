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

#endif
