/*
 * SQLite tuning for the scheduler's connections; see store_sched.h.
 */
#include "store/store_sched.h"

#include "store/sqlite_int.h"

int vs_store_sched_tune(struct vs_store *s, bool writer)
{
    /* Small page caches: 4 MiB for the writer, 1 MiB for readers. SQLite's
     * page cache walks every bucket of its hash table when it drops pages
     * (the writer at the end of its commits, a reader at the start of every
     * read transaction after another connection's commit, which under load
     * is every one), and that table grows with the pages the cache ever
     * held. With 64 MiB for the writer (16 MiB per reader) the walk became
     * the largest single cost of an RPC after 15-20 s of load: 11% of all
     * samples, server CPU per RPC up by half. A reader's cache holds
     * nothing useful anyway, as it is dropped at once; the writer's working
     * set (index and table interior pages, the latest result and host rows)
     * fits in 4 MiB: pread calls per RPC did not change.
     *
     * No mmap: the file grows under load and SQLite then remaps it, whose
     * munmap and page faults cost more than reads.
     *
     * Temporary tables in memory for readers too: locality scheduling's
     * file queries sort (GROUP BY, ORDER BY), and with temp files SQLite
     * created, wrote and unlinked a file for that on most requests (an
     * openat of ~0.2 ms on ext4 each time). */
    const char *sql = writer
                          ? "PRAGMA cache_size=-4096; PRAGMA mmap_size=0; "
                            "PRAGMA temp_store=MEMORY; PRAGMA wal_autocheckpoint=0"
                          : "PRAGMA cache_size=-1024; PRAGMA mmap_size=0; PRAGMA temp_store=MEMORY";
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : vs_sq__err(s, rc, "tune");
}

int vs_store_sched_checkpoint(struct vs_store *s)
{
    int rc = sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    /* BUSY: another checkpoint is running; that one does the work. */
    return rc == SQLITE_OK || rc == SQLITE_BUSY ? 0 : vs_sq__err(s, rc, "checkpoint");
}
