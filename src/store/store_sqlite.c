/*
 * The SQLite backend (the embedded default): opening a database file, its
 * pragmas, transaction control through prepared statements, checkpoints of
 * the write-ahead log, and the scheduler's tuning of its connections. The
 * backend-neutral core is store_db.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store_int.h"
#include "volsched/alloc.h"
#include "volsched/log.h"
#include "volsched/str.h"

#define BUSY_TIMEOUT_MS 10000

static int exec(struct vs_store *s, const char *sql)
{
    char *msg = NULL;
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK) {
        VS_LOG(s->log, VS_LOG_ERROR, "store: %s: %s", sql, msg ? msg : sqlite3_errstr(rc));
        sqlite3_free(msg);
        return (rc & 0xff) == SQLITE_BUSY ? VS_EBUSY : VS_ESTORE;
    }
    return 0;
}

/* Runs one transaction-control statement through its prepared slot,
 * preparing it on first use. The errors are exec()'s. */
static int run_tx(struct vs_store *s, sqlite3_stmt **slot, const char *sql)
{
    if (!*slot &&
        sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, slot, NULL) != SQLITE_OK) {
        *slot = NULL;
        return exec(s, sql);
    }
    int rc = sqlite3_step(*slot);
    sqlite3_reset(*slot);
    if (rc != SQLITE_DONE) {
        VS_LOG(s->log, VS_LOG_ERROR, "store: %s: %s", sql, sqlite3_errmsg(s->db));
        return (rc & 0xff) == SQLITE_BUSY ? VS_EBUSY : VS_ESTORE;
    }
    return 0;
}

static int sq_tx(struct vs_store *s, enum vs_db_tx op, int d)
{
    switch (op) {
    case VS_DB_BEGIN:
        /* IMMEDIATE takes the write lock now, so a read-then-write
         * transaction never fails half-way with SQLITE_BUSY_SNAPSHOT. */
        return run_tx(s, &s->tx[0], "BEGIN IMMEDIATE");
    case VS_DB_COMMIT:
        return run_tx(s, &s->tx[1], "COMMIT");
    case VS_DB_ROLLBACK:
        if (sqlite3_get_autocommit(s->db))
            return 0;
        return run_tx(s, &s->tx[2], "ROLLBACK");
    default:
        break;
    }
    static const char *const verb[] = {"SAVEPOINT", "RELEASE", "ROLLBACK TO"};
    int k = op - VS_DB_SAVE;
    char sql[48];
    snprintf(sql, sizeof(sql), "%s sp%d", verb[k], d);
    if (d < 0 || d >= VS_SQ_TX_DEPTHS)
        return exec(s, sql);
    return run_tx(s, &s->sp[d][k], sql);
}

static bool sq_txn_gone(struct vs_store *s)
{
    return sqlite3_get_autocommit(s->db) != 0;
}

static int sq_prepare(struct vs_store *s, const char *sql, int slot, struct vs_stmt *out)
{
    out->pg = NULL;
    return sqlite3_prepare_v3(s->db, sql, -1, slot >= 0 ? SQLITE_PREPARE_PERSISTENT : 0, &out->sq,
                              NULL);
}

static int sq_exec(struct vs_store *s, const char *sql)
{
    return sqlite3_exec(s->db, sql, NULL, NULL, NULL);
}

static int64_t sq_changes(struct vs_store *s)
{
    return sqlite3_changes64(s->db);
}

static int64_t sq_last_insert_id(struct vs_store *s)
{
    return sqlite3_last_insert_rowid(s->db);
}

static int sq_errcode(struct vs_store *s)
{
    return sqlite3_extended_errcode(s->db);
}

static const char *sq_errmsg(struct vs_store *s)
{
    return sqlite3_errmsg(s->db);
}

static int sq_checkpoint(struct vs_store *s)
{
    int rc = sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    /* BUSY: a writer or another checkpoint is active; try again later. */
    if (rc == SQLITE_OK || (rc & 0xff) == SQLITE_BUSY)
        return 0;
    return vs_store__err(s, rc, "checkpoint");
}

/* Frames in the WAL at which the scheduler's writer checkpoints it itself
 * (vs_store_sched_wal_trim): 16 MiB of 4 KiB pages. Against SQLite's own
 * 1000, fewer checkpoints copy each hot page (index interior pages, the
 * latest rows) fewer times: 64 hosts 165 -> 147 us of server CPU per RPC
 * (bench_server, medians of three alternated runs); 16000 was no better. */
#define WAL_TRIM_FRAMES 4000

/* sqlite3_wal_hook: called after each commit of the writer with the
 * number of frames now in the WAL. */
static int wal_count(void *arg, sqlite3 *db, const char *name, int nframes)
{
    (void)db;
    (void)name;
    ((struct vs_store *)arg)->wal_frames = nframes;
    return SQLITE_OK;
}

static int sq_wal_trim(struct vs_store *s)
{
    if (s->wal_frames < WAL_TRIM_FRAMES || s->txn_depth > 0)
        return 0;
    s->wal_frames = 0; /* the next commit says how many are left */
    return sq_checkpoint(s);
}

static void sq_close(struct vs_store *s)
{
    for (int i = 0; i < 3; i++)
        sqlite3_finalize(s->tx[i]);
    for (int d = 0; d < VS_SQ_TX_DEPTHS; d++)
        for (int i = 0; i < 3; i++)
            sqlite3_finalize(s->sp[d][i]);
    if (s->db)
        sqlite3_close_v2(s->db);
}

static int sq_durable(struct vs_store *s, bool on)
{
    /* SQLite cannot change it inside a transaction: the outer one's
     * commit is then the caller's to make durable. Off means "as the URL
     * said". */
    if (s->txn_depth > 0)
        return 0;
    return exec(s, on || s->sync_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
}

static int sq_sched_tune(struct vs_store *s, bool writer)
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
    if (rc != SQLITE_OK)
        return vs_store__err(s, rc, "tune");
    if (writer)
        sqlite3_wal_hook(s->db, wal_count, s);
    return 0;
}

static int sq_ids_follow(struct vs_store *s, const char *table)
{
    (void)s;
    (void)table;
    return 0; /* a rowid continues after the largest one by itself */
}

static int sq_leader(struct vs_store *s, const char *role, bool *out)
{
    (void)s;
    (void)role;
    *out = true; /* one machine: serve's pid file already keeps it to one */
    return 0;
}

const struct vs_db_ops vs_store__sqlite_ops = {
    .name = "sqlite",
    .prepare = sq_prepare,
    .exec = sq_exec,
    .changes = sq_changes,
    .last_insert_id = sq_last_insert_id,
    .cluster_ids = true,
    .errcode = sq_errcode,
    .errmsg = sq_errmsg,
    .tx = sq_tx,
    .txn_gone = sq_txn_gone,
    .checkpoint = sq_checkpoint,
    .durable = sq_durable,
    .sched_tune = sq_sched_tune,
    .wal_trim = sq_wal_trim,
    .ids_follow = sq_ids_follow,
    .leader = sq_leader,
    .close = sq_close,
};

/* SQLite's memory statistics take one process-wide mutex around every
 * allocation it makes; nothing here reads them, and with several request
 * threads that mutex is contended on every statement. sqlite3_config must
 * run before SQLite initializes: if something in the process already
 * initialized it, the call fails and the statistics simply stay on. */
static void sqlite_once(void)
{
    (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

int vs_store__open_sqlite(const char *url, int flags, struct vs_log *log,
                          struct vs_store **out_store)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, sqlite_once);
    const char *path = url;
    if (vs_str_has_prefix(path, "sqlite://"))
        path += 9;
    else if (vs_str_has_prefix(path, "sqlite:"))
        path += 7;
    else if (strstr(path, "://")) {
        VS_LOG(log, VS_LOG_ERROR, "store: unknown store URL scheme: %s", url);
        return VS_EINVAL;
    }
    /* An optional "?sync=full" selects synchronous=FULL. */
    char file[VS_PATH_MAX];
    const char *q = strchr(path, '?');
    size_t plen = q ? (size_t)(q - path) : strlen(path);
    if (plen == 0 || plen >= sizeof(file))
        return VS_EINVAL;
    memcpy(file, path, plen);
    file[plen] = '\0';
    bool sync_full = q && strcmp(q, "?sync=full") == 0;
    if (q && !sync_full && strcmp(q, "?sync=normal") != 0) {
        VS_LOG(log, VS_LOG_ERROR, "store: unknown store URL option: %s", q);
        return VS_EINVAL;
    }
    struct stat sb;
    if (!(flags & VS_STORE_CREATE) && stat(file, &sb) != 0)
        return VS_ENOTFOUND;
    if ((flags & VS_STORE_CREATE) && stat(file, &sb) != 0) {
        /* The store holds every volunteer's authenticator: only the
         * project's user may read it. SQLite gives the -wal and -shm files
         * the database file's mode, so creating it empty here is enough. */
        int fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0)
            close(fd);
    }

    struct vs_store *s = VS_NEW(struct vs_store);
    s->ops = &vs_store__sqlite_ops;
    s->log = log;
    int oflags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
    if (flags & VS_STORE_CREATE)
        oflags |= SQLITE_OPEN_CREATE;
    int rc = sqlite3_open_v2(file, &s->db, oflags, NULL);
    if (rc != SQLITE_OK) {
        VS_LOG(log, VS_LOG_ERROR, "store: cannot open %s: %s", file,
               s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
        rc = VS_ESTORE;
        goto fail;
    }
    sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
    sqlite3_extended_result_codes(s->db, 1);
    if ((rc = exec(s, "PRAGMA journal_mode=WAL")) != 0)
        goto fail;
    s->sync_full = sync_full;
    if ((rc = exec(s, sync_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL")) != 0)
        goto fail;
    if ((rc = exec(s, "PRAGMA foreign_keys=ON; PRAGMA secure_delete=OFF")) != 0)
        goto fail;
    if ((flags & VS_STORE_NO_AUTOCHECKPOINT) && sqlite3_wal_autocheckpoint(s->db, 0) != SQLITE_OK) {
        rc = VS_ESTORE;
        goto fail;
    }
    if ((rc = vs_store__ensure_schema(s)) != 0)
        goto fail;
    *out_store = s;
    return 0;
fail:
    vs_store_close(s);
    return rc;
}
