/*
 * SQLite tuning for the scheduler's connections; see store_sched.h.
 */
#include "store/store_sched.h"

#include "store/sqlite_int.h"

int vs_store_sched_tune(struct vs_store *s, bool writer)
{
    /* 64 MiB of page cache. No mmap: the file grows under load and SQLite
     * then remaps it, whose munmap and page faults cost more than reads. */
    const char *sql = writer ? "PRAGMA cache_size=-65536; PRAGMA mmap_size=0; "
                               "PRAGMA temp_store=MEMORY; PRAGMA wal_autocheckpoint=0"
                             : "PRAGMA cache_size=-16384; PRAGMA mmap_size=0";
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : vs_sq__err(s, rc, "tune");
}

int vs_store_sched_checkpoint(struct vs_store *s)
{
    int rc = sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    /* BUSY: another checkpoint is running; that one does the work. */
    return rc == SQLITE_OK || rc == SQLITE_BUSY ? 0 : vs_sq__err(s, rc, "checkpoint");
}
