/*
 * The scheduler: the handler behind the project's scheduler URL.
 *
 * One request: parse (proto) -> authenticate (user by authenticator) -> find
 * or create the host (hostid, rpc_seqno) -> choose jobs from the in-process
 * cache that fit the request (work_req_seconds, cpu_req_secs,
 * cpu_req_instances; durations from rsc_fpops_est, the host's p_fpops and its
 * on/active fractions; deadline, memory and disk checks) -> claim them and
 * update the host in one group-committed transaction -> write the reply
 * (app, app_version with signed files, workunit, result, file_info). The
 * reply leaves only after the commit, so every send is durable first.
 *
 * Bad requests (malformed XML, limits, unknown authenticator) get a proper
 * scheduler reply with a message and a request_delay; they are logged.
 * Reported results (h_report.h) are recorded in the same transaction, and
 * acknowledged in the reply, whether or not new work is sent.
 */
#ifndef VOLSCHED_SERVER_SCHED_H
#define VOLSCHED_SERVER_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "volsched/buf.h"
#include "volsched/config.h"
#include "volsched/error.h"
#include "volsched/store.h"

struct vs_log;

struct vs_sched_options {
    size_t cache_slots;   /* job cache size; 0: 1000 */
    int max_jobs_per_rpc; /* hard cap per reply; 0: 100 */
    /* How long a commit waits for concurrent requests to join it, in
     * microseconds (group commit); 0: 1000; negative: never waits. */
    int commit_delay_us;
};

struct vs_sched;

/*
 * Creates the scheduler for the project cfg (copied): opens its own store
 * handles from cfg->store_url, reads keys/code_sign_public and loads the
 * app catalog. The job cache starts empty: call vs_sched_refill(). log is
 * borrowed. Returns 0 and *out, or the error (logged).
 */
VS_MUST_CHECK int vs_sched_create(const struct vs_project_config *cfg, struct vs_log *log,
                                  const struct vs_sched_options *opts, struct vs_sched **out);
void vs_sched_destroy(struct vs_sched *s);

/*
 * The HTTP handler (vs_http_post_fn): ctx is the struct vs_sched. Always
 * answers 200 with a <scheduler_reply>, except 500 when even the error reply
 * cannot be written.
 */
int vs_sched_http(void *ctx, const char *body, size_t len, const char *peer, struct vs_buf *out);

/* The same with an explicit clock (tests: deterministic deadlines). */
int vs_sched_handle(struct vs_sched *s, const char *body, size_t len, const char *peer, int64_t now,
                    struct vs_buf *out);

/* Forgets the cached account row of authenticator auth and the cached row
 * of host hostid (what the account pages changed shows at the next RPC,
 * not CACHE_TTL later). Thread-safe. */
void vs_sched_forget_user(struct vs_sched *s, const char *auth);
void vs_sched_forget_host(struct vs_sched *s, int64_t hostid);

/* One feeder step: refills the job cache from the store. Thread-safe. */
VS_MUST_CHECK int vs_sched_refill(struct vs_sched *s, size_t *out_added);

/*
 * Takes the work-send rules and the operator's tags of cfg (config.xml
 * reloaded on SIGHUP) for the requests that start after this call. The
 * project's URLs, directories and store are not changed (they need a
 * restart). Thread-safe.
 */
void vs_sched_set_config(struct vs_sched *s, const struct vs_project_config *cfg);

/* Reloads apps and app versions (after `volsched app add`). Thread-safe. */
VS_MUST_CHECK int vs_sched_reload_catalog(struct vs_sched *s);

/*
 * Puts the scheduler in or out of maintenance (BOINC's stop_sched file, which
 * `volsched serve` watches): while on, every request is answered "Project is
 * temporarily shut down for maintenance" with a request_delay and nothing is
 * read or written. Thread-safe.
 */
void vs_sched_set_maintenance(struct vs_sched *s, bool on);
/* Batch tail acceleration's state (submit_tail.h; borrowed, outlives s;
 * NULL: none). Set before serving. */
struct vs_submit_tail;
void vs_sched_set_tail(struct vs_sched *s, struct vs_submit_tail *t);

struct vs_sched_stats {
    uint64_t rpcs;        /* requests handled */
    uint64_t bad_rpcs;    /* refused: malformed, limits, authentication */
    uint64_t jobs_sent;   /* results claimed and sent */
    uint64_t no_work;     /* work requests answered without jobs */
    uint64_t reports;     /* reported results recorded (durable) */
    uint64_t maintenance; /* answered "down for maintenance" (stop_sched) */
    /* chosen jobs whose claim the store refused (claimed first by another
     * request or instance, or a rule the claim checks), and the second
     * choices made for them */
    uint64_t claims_lost;
    uint64_t rechosen;
    uint64_t commit_batches;
    uint64_t commit_items;
    uint64_t commit_max_batch;
    uint64_t commit_delayed; /* commits that waited for concurrent requests */
    uint64_t commit_redone;  /* batches run again with savepoints (an item failed) */
    size_t cache_present;
    /* locality scheduling (docs/locality.md); 0 without <locality_scheduling/> */
    uint64_t loc_searched;  /* file searches */
    uint64_t loc_deletes;   /* <delete_file_info>s sent */
    uint64_t loc_need_work; /* need_work triggers made */
    uint64_t loc_waits;     /* requests that waited for the generator */
    size_t cache_slots;
};
void vs_sched_get_stats(struct vs_sched *s, struct vs_sched_stats *out_stats);

#endif
