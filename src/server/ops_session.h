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
 * The same mechanism for other sessions (the volunteers' site): a value
 * "[SUBJECT.]EXPIRY.NONCE.MAC" whose SUBJECT (up to 18 decimal digits, ""
 * = none: a visitor not logged in) is covered by the MAC, valid until now
 * + secs. A key of its own keeps them apart from the operator's:
 * vs_ops_session_key_load with a purpose string in place of the password
 * line. 0, or VS_EINVAL (subject not digits), VS_ECRYPTO, VS_ELIMIT.
 */
VS_MUST_CHECK int vs_session_cookie_make(const struct vs_ops_session_key *k, const char *subject,
                                         int64_t now, int secs, char *out, size_t n);
/* The HMAC-SHA256 (64 hex digits) of data under k into out (n >= 65): a
 * session's CSRF token. 0, VS_ECRYPTO or VS_ELIMIT. */
VS_MUST_CHECK int vs_session_tag(const struct vs_ops_session_key *k, const char *data, char *out,
                                 size_t n);
/*
 * The first valid cookie named name in cookie_header (NULL: none) made
 * under k, unexpired at now (secs its lifetime): true, with its subject in
 * out_subject (sn bytes) and the whole value in out_value (vn bytes; may
 * be NULL). Up to 8 cookies of that name are looked at.
 */
bool vs_session_cookie_find(const struct vs_ops_session_key *k, const char *name,
                            const char *cookie_header, int64_t now, int secs, char *out_subject,
                            size_t sn, char *out_value, size_t vn);

/*
 * True when the Cookie header cookie_header (NULL: none) holds a
 * VS_OPS_COOKIE_NAME cookie made under k that has not expired at now. A
 * malformed, forged or expired one is false; up to 8 cookies of that name
 * are looked at.
 */
bool vs_ops_cookie_check(const struct vs_ops_session_key *k, const char *cookie_header,
                         int64_t now);

#endif
