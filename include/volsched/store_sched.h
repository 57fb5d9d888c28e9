/*
 * Store operations only the project server's scheduler needs: tuning of its
 * own connections. Kept apart from store.h (the domain interface) because
 * they are about running the SQLite backend fast, not about the domain; a
 * PostgreSQL backend would make them no-ops.
 */
#ifndef VOLSCHED_STORE_STORE_SCHED_H
#define VOLSCHED_STORE_STORE_SCHED_H

#include "volsched/error.h"
#include "volsched/store.h"

/*
 * Tunes a handle the scheduler owns (page cache size, temporary tables in
 * memory; store_sqlite.c says why). With writer true the handle also stops
 * checkpointing the WAL inside its commits: the server runs
 * vs_store_sched_checkpoint() from a background thread, and
 * vs_store_sched_wal_trim() on the writer between its transactions.
 * Returns 0 or VS_ESTORE (logged).
 */
VS_MUST_CHECK int vs_store_sched_tune(struct vs_store *s, bool writer);

/*
 * Copies committed WAL frames into the database without waiting for
 * readers or writers (a PASSIVE checkpoint). Returns 0 or VS_ESTORE.
 */
VS_MUST_CHECK int vs_store_sched_checkpoint(struct vs_store *s);

/*
 * Keeps the WAL short under a steady stream of writes: call it on the
 * writer handle (vs_store_sched_tune with writer true) between its
 * transactions. When the WAL has grown past a few MiB since it last
 * started over, checkpoints it from this handle (PASSIVE), so that the
 * handle's next write transaction starts the WAL from the top again.
 * SQLite starts a WAL over only when a write transaction begins with every
 * frame already copied, which the background checkpoint on another handle
 * never achieves while this one keeps appending: the WAL then grows
 * without bound, and every frame lands in a newly allocated block of the
 * file. Cheap when the WAL is short (no system call). Returns 0 or
 * VS_ESTORE; a no-op on PostgreSQL.
 */
VS_MUST_CHECK int vs_store_sched_wal_trim(struct vs_store *s);

/*
 * Whether the scheduler's group commit may run on several write handles
 * side by side (<sched_writers>): false on SQLite (one writer at a time),
 * true on PostgreSQL, where batches of different accounts commit in
 * parallel (vs_store_begin_users).
 */
bool vs_store_sched_parallel(struct vs_store *s);

/*
 * Whether this handle leads role (e.g. "daemons") among the instances of
 * volsched that share the store: on PostgreSQL a session advisory lock of
 * the role's name, taken on the first call that finds it free and held
 * until the handle's connection ends (the process dies or the connection
 * breaks: the server drops the lock at once, and another instance's next
 * call takes it). On SQLite, whose store serves one machine, always true.
 * Ask again before each round of the role's work.
 */
VS_MUST_CHECK int vs_store_leader(struct vs_store *s, const char *role, bool *out_leader);

/*
 * BOINC's `--mod N I` (several serve on one store): from now on the daemons' queues read
 * through this handle (vs_store_wus_to_transition, vs_store_wus_in_queue,
 * vs_store_results_to_delete) keep only the rows with id % n == i, so that
 * n instances of a daemon, each with its own i, share the work without a
 * leader. n = 1, i = 0 is every row (the default). VS_EINVAL unless
 * n >= 1 and 0 <= i < n.
 */
VS_MUST_CHECK int vs_store_set_mod(struct vs_store *s, int n, int i);
/* The handle's n of vs_store_set_mod (1 or 0: not sharded). */
int vs_store_mod_n(const struct vs_store *s);

#endif
