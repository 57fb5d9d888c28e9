/*
 * Trickle messages in the store (BOINC's msg_from_host and msg_to_host),
 * beside the domain operations of store.h. Same rules: 0 or a VS_E* code,
 * one thread per handle; the writes join the caller's transaction.
 */
#ifndef VOLSCHED_STORE_TRICKLE_H
#define VOLSCHED_STORE_TRICKLE_H

#include <stdint.h>

#include "volsched/store.h"

struct vs_trickle {
    int64_t id;
    int64_t create_time;
    int64_t hostid;
    char result_name[256]; /* trickle-ups only */
    char variety[256];
    const char *xml; /* borrowed during the callback */
};

typedef int (*vs_store_trickle_fn)(void *ctx, const struct vs_trickle *t);

/* Stores a trickle-up message (the whole <msg_from_host> as xml), unhandled. */
VS_MUST_CHECK int vs_store_trickle_up_add(struct vs_store *s, int64_t now, int64_t hostid,
                                          const char *result_name, const char *variety,
                                          const char *xml);
/* Calls fn for up to limit unhandled trickle-ups, oldest first. */
VS_MUST_CHECK int vs_store_trickle_ups_unhandled(struct vs_store *s, int limit,
                                                 vs_store_trickle_fn fn, void *ctx);
VS_MUST_CHECK int vs_store_trickle_up_handled(struct vs_store *s, int64_t id);
/* Queues a trickle-down (the whole <msg_to_host> element as xml) for a host. */
VS_MUST_CHECK int vs_store_trickle_down_add(struct vs_store *s, int64_t now, int64_t hostid,
                                            const char *variety, const char *xml);
/* Calls fn for up to limit trickle-downs not yet sent to hostid, oldest first. */
VS_MUST_CHECK int vs_store_trickle_downs_of_host(struct vs_store *s, int64_t hostid, int limit,
                                                 vs_store_trickle_fn fn, void *ctx);
VS_MUST_CHECK int vs_store_trickle_down_sent(struct vs_store *s, int64_t id);

#endif
