/*
 * Trickle messages on the server (seed 002 names trickle-ups as a reason for
 * a client to contact its project; BOINC's trickle_handler):
 *
 *  - the scheduler stores every <msg_from_host> of a request in the same
 *    transaction as the rest of the RPC, so a trickle-up is durable before
 *    the reply (the client's acknowledgement) leaves;
 *  - when the project has a handler, the scheduler puts the host's pending
 *    trickle-downs in the reply as <msg_to_host> and marks them sent in
 *    that transaction;
 *  - the handler pass runs the operator's command (config.xml
 *    <trickle_handler>CMD</trickle_handler>) once per stored trickle-up:
 *        CMD HOSTID RESULT_NAME VARIETY MSG_FILE REPLY_FILE
 *    MSG_FILE holds the <msg_from_host> XML; whatever the command writes to
 *    REPLY_FILE (at most 64 KiB) is queued as a trickle-down for that host,
 *    addressed to the same result. The message is marked handled once the
 *    command has run (a failing command is logged and not retried).
 */
#ifndef VOLSCHED_SERVER_TRICKLE_H
#define VOLSCHED_SERVER_TRICKLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "volsched/alloc.h"
#include "volsched/config.h"
#include "volsched/proto.h"
#include "volsched/store.h"

struct vs_log;

#define VS_TRICKLE_MAX_DOWNS 10 /* trickle-downs in one reply */

/* What one scheduler RPC commits about trickles (vs_trickle_commit's ctx). */
struct vs_sched_trickle {
    const struct vs_proto_msg_from_host *ups;
    size_t n_ups;
    int64_t down_ids[VS_TRICKLE_MAX_DOWNS];
    size_t n_downs;
};

/*
 * Loads hostid's pending trickle-downs (at most VS_TRICKLE_MAX_DOWNS) into
 * the reply (strings in arena) and their ids into tr.
 */
VS_MUST_CHECK int vs_trickle_downs_load(struct vs_store *st, int64_t hostid, struct vs_arena *arena,
                                        struct vs_proto_reply *r, struct vs_sched_trickle *tr);

/* Inside the RPC's transaction: stores the trickle-ups, marks the downs sent. */
int vs_trickle_commit(struct vs_store *s, int64_t hostid, int64_t now, void *ctx);

/*
 * One pass of the handler: runs cmd for up to 50 unhandled trickle-ups.
 * *out_n (may be NULL) = messages handled. Returns 0 or a store error.
 */
VS_MUST_CHECK int vs_trickle_handler_pass(struct vs_store *s, const struct vs_project_config *cfg,
                                          const char *cmd, int64_t now, struct vs_log *log,
                                          int *out_n);

#endif
