/*
 * Error codes shared by every volsched module.
 *
 * A fallible function returns int: 0 on success, a negative VS_E* code on
 * failure. System errors are returned as -errno; every VS_E* value is below
 * VS_E__BASE so the two ranges never collide. The table below is the single
 * source of the codes and of their messages (vs_strerror()).
 */
#ifndef VOLSCHED_ERROR_H
#define VOLSCHED_ERROR_H

#if defined(__GNUC__) || defined(__clang__)
#define VS_MUST_CHECK   __attribute__((warn_unused_result))
#define VS_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define VS_MUST_CHECK
#define VS_PRINTF(f, a)
#endif

/* X(name, message) */
#define VS_ERROR_TABLE(X)                                                                          \
    X(INVAL, "invalid argument")                                                                   \
    X(NOMEM, "out of memory")                                                                      \
    X(LIMIT, "size or count limit exceeded")                                                       \
    X(PARSE, "malformed input")                                                                    \
    X(NOTFOUND, "not found")                                                                       \
    X(EXISTS, "already exists")                                                                    \
    X(IO, "input/output error")                                                                    \
    X(STORE, "store error")                                                                        \
    X(CRYPTO, "cryptographic error")                                                               \
    X(AUTH, "authentication failed")                                                               \
    X(CONFIG, "bad configuration")                                                                 \
    X(STATE, "operation not valid in the current state")                                           \
    X(UNSUPPORTED, "not supported")                                                                \
    X(NET, "network error")                                                                        \
    X(TIMEOUT, "timed out")                                                                        \
    X(BUSY, "resource busy")                                                                       \
    X(INTERNAL, "internal error")

enum vs_error {
    VS_OK = 0,
    VS_E__BASE = -10000,
#define VS_X_ENUM(name, msg) VS_E##name,
    /* Starts at VS_E__BASE + 1 and counts up: all below -9000. */
    VS_ERROR_TABLE(VS_X_ENUM)
#undef VS_X_ENUM
        VS_E__END
};

/*
 * Returns a static, human-readable message for a code returned by any
 * volsched function: a VS_E* code, a -errno value, or 0. Never NULL.
 */
const char *vs_strerror(int code);

/*
 * VS_ALWAYS(x) / VS_NEVER(x) mark defensive checks of conditions that should
 * never happen. In debug builds they assert; in release builds they evaluate
 * to the condition so the defensive branch still runs (SQLite's idiom).
 */
#ifdef NDEBUG
#define VS_ALWAYS(x) (x)
#define VS_NEVER(x)  (x)
#else
#include <assert.h>
#define VS_ALWAYS(x) ((x) ? 1 : (assert(0 && #x), 0))
#define VS_NEVER(x)  ((x) ? (assert(0 && #x), 1) : 0)
#endif

#endif
