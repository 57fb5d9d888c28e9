/*
 * The back-end daemons together: one bounded pass of each, for `volsched
 * serve` (which runs them in a timer loop or thread, all of them or the one
 * named by --only) and for tests.
 *
 * Every daemon is also callable alone (vs_transitioner_pass,
 * vs_validator_pass, vs_assimilator_pass, vs_file_deleter_pass). Passes are
 * safe to run from several processes on one store: every change is made in
 * a transaction that re-reads the rows it changes.
 */
#ifndef VOLSCHED_SERVER_DAEMONS_H
#define VOLSCHED_SERVER_DAEMONS_H

#include <stdint.h>

#include "volsched/assimilator.h"
#include "volsched/config.h"
#include "volsched/file_deleter.h"
#include "volsched/locality_daemons.h"
#include "volsched/store.h"
#include "volsched/transitioner.h"
#include "volsched/validator.h"

struct vs_log;

/* Which daemons a call runs (bit set). */
#define VS_DAEMON_TRANSITIONER (1u << 0)
#define VS_DAEMON_VALIDATOR    (1u << 1)
#define VS_DAEMON_ASSIMILATOR  (1u << 2)
#define VS_DAEMON_FILE_DELETER (1u << 3)
/* Locality scheduling's (locality_daemons.h); a pass does nothing unless
 * cfg names a generator command / a working-set size. */
#define VS_DAEMON_LOCALITY_GEN (1u << 4)
#define VS_DAEMON_LOCALITY_WS  (1u << 5)
#define VS_DAEMON_ALL          0x3fu
#define VS_NDAEMONS            6

/* The bit of a daemon by its name ("transitioner", "validator",
 * "assimilator", "file_deleter", "locality_gen", "locality_ws"), or 0 for
 * an unknown name. */
unsigned vs_daemon_by_name(const char *name);
/* The name of one daemon bit ("" if not exactly one known bit). */
const char *vs_daemon_name(unsigned bit);

struct vs_daemons_stats {
    struct vs_transitioner_stats transitioner;
    struct vs_validator_stats validator;
    struct vs_assimilator_stats assimilator;
    struct vs_file_deleter_stats file_deleter;
    struct vs_locality_gen_stats locality_gen;
    struct vs_locality_ws_stats locality_ws;
    int rc[VS_NDAEMONS]; /* each daemon's return code (0 or a VS_E* error), by bit index */
};

/*
 * Runs one pass of each daemon in which (transitioner, validator,
 * assimilator, file deleter, in that order) at time now with the default
 * limits, and records each in the store's daemon_status table (last run,
 * items handled, and the last error when the pass had one, which `volsched
 * status` shows). A failing daemon does not stop the others. stats may be
 * NULL. Returns the number of items all passes handled (>= 0), or VS_EINVAL.
 */
int vs_daemons_run_once(struct vs_store *s, const struct vs_project_config *cfg, int64_t now,
                        unsigned which, struct vs_log *log, struct vs_daemons_stats *stats);

struct vs_ops_metrics;

/* How a runner runs (vs_daemons_runner_start). */
struct vs_daemons_runner_opts {
    unsigned which;  /* daemons to run (bit set) */
    int interval_ms; /* sleep when idle; <= 0: 1000 */
    /* Each daemon's logger by bit index (its log/<name>.log); NULL entries
     * (or a NULL log below) log nothing. Borrowed. */
    struct vs_log *logs[VS_NDAEMONS];
    struct vs_log *log;             /* used where logs[i] is NULL */
    struct vs_ops_metrics *metrics; /* pass durations and outcomes; may be NULL */
    /* BOINC's --mod N I (mod_n > 1): the id-keyed daemons (vs_daemons_shardable)
     * handle only the ids with id % mod_n == mod_i, without the leader lock. */
    int mod_n, mod_i;
};

/*
 * A background thread that runs the daemons for a server: it opens its own
 * store handle (cfg->store_url), then loops running one pass of each daemon
 * in opts->which (now = the clock) back to back while there is work and
 * every interval_ms when idle, as BOINC's daemons sleep only when idle.
 * While DIR/stop_daemons exists (BOINC-COMPAT) it runs no pass and logs
 * that once. A pass that handled something is logged at INFO with its
 * figures. cfg is copied; the loggers and metrics are borrowed and must
 * outlive the runner. Returns 0 and the runner in *out, or an error
 * opening the store or starting the thread.
 */
struct vs_daemons_runner;
VS_MUST_CHECK int vs_daemons_runner_start(const struct vs_project_config *cfg,
                                          const struct vs_daemons_runner_opts *opts,
                                          struct vs_daemons_runner **out);
/* Replaces the configuration the passes after this call use (SIGHUP). */
void vs_daemons_runner_set_config(struct vs_daemons_runner *r, const struct vs_project_config *cfg);
/* Logs one INFO line for the pass of daemon index i in st if it handled
 * something (shared by the runner and `serve --only`). */
void vs_daemons_log_pass(struct vs_log *log, unsigned i, const struct vs_daemons_stats *st,
                         double seconds);
/*
 * Whether this instance runs daemon index i now: when several `volsched
 * serve` share one PostgreSQL store, each daemon runs on one of them, the
 * leader of its role (vs_store_leader, role = the daemon's name); a new
 * leader takes over at its next pass after the old one's connection ends.
 * *standby (the caller's, false at first) remembers the last answer, so
 * that each change is logged once. A store error counts as "not now".
 * On a handle sharded by --mod (vs_store_set_mod, n > 1) the shardable
 * daemons always run: each instance has its share of the ids.
 */
bool vs_daemons_may_run(struct vs_store *s, unsigned i, bool *standby, struct vs_log *log);
/* Whether daemon index i works on rows by id, so that --mod N I can shard it
 * (transitioner, validator, assimilator, file deleter). With a handle
 * sharded by vs_store_set_mod, vs_daemons_may_run is always true for them. */
bool vs_daemons_shardable(unsigned i);
/* Asks the thread to stop, waits for the pass in progress to end, closes
 * its store and frees r. NULL is a no-op. */
void vs_daemons_runner_stop(struct vs_daemons_runner *r);
/* Passes completed so far (for tests and stats). */
uint64_t vs_daemons_runner_passes(struct vs_daemons_runner *r);

#endif
