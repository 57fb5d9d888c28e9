/*
 * The operator's session cookie for /ops/: after one login with the
 * password (HTTP Basic, PBKDF2: ops_auth.h), the dashboard sets a cookie
 * that later requests show instead, so that they cost an HMAC, not a
 * PBKDF2.
 *
 * The cookie's value is "EXPIRY.NONCE.MAC": EXPIRY the Unix time it ends
 * (decimal), NONCE 16 random hex digits, MAC the HMAC-SHA256 (hex) of
 * "EXPIRY.NONCE" under the session key. The session key is the HMAC-SHA256
 * of the stored password line under a secret of 32 random bytes kept in
 * DIR/keys/ops_session_key (0600, made on first use), so that a new
 * operator password ends every session, and serve instances that share the
 * project directory's keys (a copy of it) accept each other's cookies.
 */
#ifndef VOLSCHED_SERVER_OPS_SESSION_H
#define VOLSCHED_SERVER_OPS_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "volsched/error.h"

#define VS_OPS_SESSION_KEY_FILE "keys/ops_session_key"
#define VS_OPS_COOKIE_NAME      "vs_ops"
#define VS_OPS_SESSION_SECS     (8 * 3600) /* a working day */
/* Room for "vs_ops=" + value + the attributes of a Set-Cookie. */
#define VS_OPS_COOKIE_MAX 256

struct vs_ops_session_key {
    unsigned char k[32];
};

/*
 * Reads DIR/keys/ops_session_key, or makes it (32 random bytes as hex, mode
 * 0600, never following a symlink) when it does not exist, and derives the
 * key of the sessions of the password stored as stored_hash. Returns 0 and
 * *out, or -errno / VS_EPARSE (a file that is not 64 hex digits) /
 * VS_ECRYPTO.
 */
VS_MUST_CHECK int vs_ops_session_key_load(const char *dir, const char *stored_hash,
                                          struct vs_ops_session_key *out);

/*
 * Makes a new cookie value (without the name) valid until now +
 * VS_OPS_SESSION_SECS into out. Returns 0, or VS_ECRYPTO / VS_ELIMIT.
 */
VS_MUST_CHECK int vs_ops_cookie_make(const struct vs_ops_session_key *k, int64_t now, char *out,
                                     size_t n);

/*
 * True when the Cookie header cookie_header (NULL: none) holds a
 * VS_OPS_COOKIE_NAME cookie made under k that has not expired at now. A
 * malformed, forged or expired one is false; up to 8 cookies of that name
 * are looked at.
 */
bool vs_ops_cookie_check(const struct vs_ops_session_key *k, const char *cookie_header,
                         int64_t now);

#endif
