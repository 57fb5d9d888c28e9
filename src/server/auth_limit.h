/*
 * Rate limit on failed account-key lookups, per client address:
 * without it a scheduler answers thousands of guesses a second. Each address
 * has a bucket of `burst` failures that refills at `per_hour` an hour; an
 * address with an empty bucket is refused before any lookup, whatever key it
 * sends, until the bucket refills (a correct key behind the same address
 * waits too: otherwise the lookup itself would keep answering guesses).
 *
 * A fixed table of slots, direct-mapped by a hash of the address: memory
 * does not grow with the number of addresses; two addresses that share a
 * slot share a bucket until one of them is forgotten (a full bucket frees
 * its slot). Thread-safe.
 */
#ifndef VOLSCHED_SERVER_AUTH_LIMIT_H
#define VOLSCHED_SERVER_AUTH_LIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The defaults (config.xml <failed_auth_burst>, <failed_auth_per_hour>) are
 * 20 failures at once, then 60 an hour (one a minute). */
struct vs_auth_limit;

/* burst 0 turns the limit off (every call allows). */
struct vs_auth_limit *vs_auth_limit_create(unsigned burst, unsigned per_hour);
void vs_auth_limit_destroy(struct vs_auth_limit *l);

/* May addr try a lookup at time now (seconds)? When not, *out_wait (may be
 * NULL) is the number of seconds until it may. */
bool vs_auth_limit_allow(struct vs_auth_limit *l, const char *addr, int64_t now, int *out_wait);

/* Records a failed lookup from addr at now. */
void vs_auth_limit_failed(struct vs_auth_limit *l, const char *addr, int64_t now);

/* The throttle's key for a client address peer (NULL: "?"): the address,
 * or its /64 for IPv6 (one host holds a whole /64, and would otherwise get
 * a bucket per address). n >= 64. */
void vs_auth_limit_key(const char *peer, char *out, size_t n);

#endif
