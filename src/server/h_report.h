/*
 * Reported results in scheduler requests. A scheduler RPC that
 * carries <result>s goes through three steps:
 *
 *   vs_reports_prepare  before the commit, on a read handle: look each
 *                       reported name up and decide whether it is recorded
 *                       (and against which host) or only acknowledged;
 *   vs_reports_apply    inside the RPC's group-committed transaction (the
 *                       committer calls it), records the reports;
 *   vs_reports_ack      after the commit succeeded: one <result_ack> per
 *                       reported result, so the client forgets a result only
 *                       once its report is durable.
 *
 * BOINC-COMPAT (sched_result.cpp, boinc-server-notes.md 1.4): every reported
 * result is acknowledged, including the ones that are not recorded (unknown
 * name, never sent, already reported, reported by a host of another user):
 * without an ack the client would send them again on every RPC forever. A
 * host of the SAME user reporting another host's result (a client that lost
 * its host id) is accepted. A result the transitioner timed out is still
 * accepted late. The outcome is SUCCESS only for client state
 * FILES_UPLOADED with exit status 0, else CLIENT_ERROR (the store decides).
 * If the transaction fails, nothing is acknowledged and the RPC is refused.
 */
#ifndef VOLSCHED_SERVER_H_REPORT_H
#define VOLSCHED_SERVER_H_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "volsched/alloc.h"
#include "volsched/error.h"
#include "volsched/proto.h"
#include "volsched/store.h"

struct vs_log;

/* Why a reported result is acknowledged without being recorded. */
enum vs_report_skip {
    VS_REPORT_RECORD = 0,   /* recorded by vs_reports_apply */
    VS_REPORT_UNKNOWN,      /* no result of that name */
    VS_REPORT_NOT_SENT,     /* the result was never sent (UNSENT, INACTIVE) */
    VS_REPORT_OTHER_USER,   /* sent to a host of another user: refused */
    VS_REPORT_ALREADY_OVER, /* already reported, or over for another reason */
};

struct vs_report_entry {
    struct vs_result_report rep; /* strings borrowed from the request's arena */
    const char *ack_name;        /* the name as the client sent it (request's arena) */
    int64_t hostid;              /* the host the result was sent to */
    int64_t app_version_id;      /* the version it was sent with (quota record) */
    enum vs_report_skip skip;
    bool dup; /* out of apply: the store had it already */
};

struct vs_reports {
    struct vs_report_entry *e; /* in the arena given to prepare */
    size_t n;
    int daily_quota; /* the project's daily_result_quota (set by the caller; 0 = off) */
    /* Counts after apply. */
    size_t nrecorded, ndup, nrefused;
};

/*
 * Decides, for each of q's reported results, what to do (see the top of
 * this file), reading through st (not written). userid is the requesting
 * user. Entries live in arena a. Returns 0, or a store error (the RPC is
 * then refused and nothing acknowledged).
 */
VS_MUST_CHECK int vs_reports_prepare(struct vs_store *st, const struct vs_proto_request *q,
                                     int64_t userid, struct vs_arena *a, struct vs_log *log,
                                     struct vs_reports *out);

/*
 * Records the entries marked VS_REPORT_RECORD through the writer handle w,
 * inside the caller's transaction, at time now. A CLIENT_ERROR result
 * (unless the project aborted it) shrinks its host's daily quota for that
 * app version and ends its valid streak (BOINC's got_bad_result). A result
 * whose state changed
 * since prepare (reported meanwhile, another host) is left alone and still
 * acknowledged. Returns 0, or a store error (the caller rolls back).
 */
VS_MUST_CHECK int vs_reports_apply(struct vs_store *w, struct vs_reports *r, int64_t now);

/* Adds one <result_ack> per reported result to reply (names borrowed from
 * the entries; the array in arena a). */
void vs_reports_ack(const struct vs_reports *r, struct vs_proto_reply *reply, struct vs_arena *a);

#endif
