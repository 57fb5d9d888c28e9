/*
 * The SQLite backend: opening, schema versions, the prepared-statement cache,
 * transactions, and the generic row code driven by the column descriptors.
 * The SQL text of each statement slot is in store_sqlite_sql.c.
 * The domain operations are in store_sqlite_<concept>.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/sqlite_int.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/log.h"
#include "volsched/str.h"

#define BUSY_TIMEOUT_MS 10000

int64_t vs_sq__now(void)
{
    return (int64_t)time(NULL);
}

int vs_store_schema_version(void)
{
    return VS_SQ_SCHEMA_VERSION;
}

int vs_sq__err(struct vs_store *s, int rc, const char *what)
{
    int prim = rc & 0xff;
    VS_LOG(s->log, prim == SQLITE_CONSTRAINT ? VS_LOG_DEBUG : VS_LOG_ERROR, "store: %s: %s (%d)",
           what, sqlite3_errmsg(s->db), rc);
    if (rc == SQLITE_CONSTRAINT_FOREIGNKEY)
        return VS_ENOTFOUND; /* a referenced row (workunit, app ...) is missing */
    if (prim == SQLITE_CONSTRAINT)
        return VS_EEXISTS;
    if (prim == SQLITE_BUSY || prim == SQLITE_LOCKED)
        return VS_EBUSY;
    return VS_ESTORE;
}

int vs_sq__step_done(struct vs_store *s, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : vs_sq__err(s, rc, what);
}

int vs_sq__one_row_end(struct vs_store *s, sqlite3_stmt *st, int rc, const char *what)
{
    sqlite3_reset(st);
    if (rc == SQLITE_ROW)
        return 0;
    return rc == SQLITE_DONE ? VS_ENOTFOUND : vs_sq__err(s, rc, what);
}

sqlite3_stmt *vs_sq__stmt(struct vs_store *s, enum sq_stmt id)
{
    if (VS_NEVER(id < 0 || id >= SQ__COUNT))
        return NULL;
    sqlite3_stmt *st = s->stmts[id];
    if (st) {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        return st;
    }
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    if (vs_sq__build_sql(id, &b) != 0) {
        vs_buf_cleanup(&b);
        return NULL;
    }
    int rc = sqlite3_prepare_v3(s->db, vs_buf_str(&b), -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
    if (rc != SQLITE_OK) {
        VS_LOG(s->log, VS_LOG_ERROR, "store: prepare %d: %s: %s", (int)id, sqlite3_errmsg(s->db),
               vs_buf_str(&b));
        vs_buf_cleanup(&b);
        return NULL;
    }
    vs_buf_cleanup(&b);
    s->stmts[id] = st;
    return st;
}

/* ------------------------------------------------------------------------ */
/* Generic row code                                                          */

int vs_sq__bind_row(sqlite3_stmt *st, int first, const struct sq_table *t, const void *row,
                    int with_id)
{
    const char *base = row;
    int p = first;
    int rc = SQLITE_OK;
    for (size_t i = t->has_id ? 1 : 0; i < t->ncols && rc == SQLITE_OK; i++, p++) {
        const struct sq_col *c = &t->cols[i];
        const void *f = base + c->offset;
        switch (c->type) {
        case SQ_I64:
            rc = sqlite3_bind_int64(st, p, *(const int64_t *)f);
            break;
        case SQ_INT:
            rc = sqlite3_bind_int(st, p, *(const int *)f);
            break;
        case SQ_DBL:
            rc = sqlite3_bind_double(st, p, *(const double *)f);
            break;
        case SQ_STR:
            rc = sqlite3_bind_text(st, p, f, (int)strnlen(f, c->size), SQLITE_STATIC);
            break;
        case SQ_PSTR: {
            const char *str = *(char *const *)f;
            rc = str ? sqlite3_bind_text(st, p, str, -1, SQLITE_STATIC) : sqlite3_bind_null(st, p);
            break;
        }
        }
    }
    if (rc == SQLITE_OK && with_id && t->has_id)
        rc = sqlite3_bind_int64(st, p++, *(const int64_t *)base);
    return rc == SQLITE_OK ? p : -1;
}

void vs_sq__read_row(sqlite3_stmt *st, int first, const struct sq_table *t, void *row)
{
    char *base = row;
    for (size_t i = 0; i < t->ncols; i++) {
        const struct sq_col *c = &t->cols[i];
        void *f = base + c->offset;
        int col = first + (int)i;
        switch (c->type) {
        case SQ_I64:
            *(int64_t *)f = sqlite3_column_int64(st, col);
            break;
        case SQ_INT:
            *(int *)f = sqlite3_column_int(st, col);
            break;
        case SQ_DBL:
            *(double *)f = sqlite3_column_double(st, col);
            break;
        case SQ_STR: {
            const char *txt = (const char *)sqlite3_column_text(st, col);
            /* Truncation of an over-long stored value is deliberate here. */
            vs_sq__copy(f, txt ? txt : "", c->size);
            break;
        }
        case SQ_PSTR: {
            const char *txt = (const char *)sqlite3_column_text(st, col);
            *(char **)f = txt ? vs_xstrndup(txt, (size_t)sqlite3_column_bytes(st, col)) : NULL;
            break;
        }
        }
    }
}

void vs_sq__free_row(const struct sq_table *t, void *row)
{
    char *base = row;
    for (size_t i = 0; i < t->ncols; i++) {
        if (t->cols[i].type == SQ_PSTR) {
            char **p = (char **)(base + t->cols[i].offset);
            vs_free(*p);
            *p = NULL;
        }
    }
}

int vs_sq__insert(struct vs_store *s, enum sq_stmt id, const struct sq_table *t, void *row)
{
    sqlite3_stmt *st = vs_sq__stmt(s, id);
    if (!st)
        return VS_ESTORE;
    if (vs_sq__bind_row(st, 1, t, row, 0) < 0)
        return vs_sq__err(s, sqlite3_errcode(s->db), "bind");
    int rc = sqlite3_step(st);
    if (rc != SQLITE_DONE) {
        int e = vs_sq__err(s, rc, t->name);
        sqlite3_reset(st);
        return e;
    }
    sqlite3_reset(st);
    *(int64_t *)row = sqlite3_last_insert_rowid(s->db);
    return 0;
}

int vs_sq__update(struct vs_store *s, enum sq_stmt id, const struct sq_table *t, const void *row)
{
    sqlite3_stmt *st = vs_sq__stmt(s, id);
    if (!st)
        return VS_ESTORE;
    if (vs_sq__bind_row(st, 1, t, row, 1) < 0)
        return vs_sq__err(s, sqlite3_errcode(s->db), "bind");
    /* mod_time is the store's to keep, whatever the caller's copy says. */
    for (size_t i = 1; i < t->ncols; i++) {
        if (strcmp(t->cols[i].name, "mod_time") == 0)
            sqlite3_bind_int64(st, (int)i, vs_sq__now());
    }
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return vs_sq__err(s, rc, t->name);
    return sqlite3_changes(s->db) == 1 ? 0 : VS_ENOTFOUND;
}

static int get_row(struct vs_store *s, sqlite3_stmt *st, const struct sq_table *t, void *row)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        vs_sq__read_row(st, 0, t, row);
        sqlite3_reset(st);
        return 0;
    }
    sqlite3_reset(st);
    if (rc == SQLITE_DONE)
        return VS_ENOTFOUND;
    return vs_sq__err(s, rc, t->name);
}

int vs_sq__get_i64(struct vs_store *s, enum sq_stmt id, const struct sq_table *t, int64_t key,
                   void *row)
{
    sqlite3_stmt *st = vs_sq__stmt(s, id);
    if (!st)
        return VS_ESTORE;
    sqlite3_bind_int64(st, 1, key);
    return get_row(s, st, t, row);
}

int vs_sq__get_text(struct vs_store *s, enum sq_stmt id, const struct sq_table *t, const char *key,
                    void *row)
{
    if (!key)
        return VS_EINVAL;
    sqlite3_stmt *st = vs_sq__stmt(s, id);
    if (!st)
        return VS_ESTORE;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    return get_row(s, st, t, row);
}

/* ------------------------------------------------------------------------ */
/* Transactions                                                              */

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

enum { TX_BEGIN, TX_COMMIT, TX_ROLLBACK };
enum { SP_SAVE, SP_RELEASE, SP_ROLLBACK_TO };

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

/* SAVEPOINT / RELEASE / ROLLBACK TO of savepoint depth d. */
static int run_sp(struct vs_store *s, int d, int op)
{
    static const char *const verb[] = {"SAVEPOINT", "RELEASE", "ROLLBACK TO"};
    char sql[48];
    snprintf(sql, sizeof(sql), "%s sp%d", verb[op], d);
    if (d < 0 || d >= VS_SQ_TX_DEPTHS)
        return exec(s, sql);
    return run_tx(s, &s->sp[d][op], sql);
}

/* True when SQLite ended our transaction on its own: a statement error such
 * as SQLITE_FULL or SQLITE_IOERR, or a trigger's RAISE(ROLLBACK), rolls the
 * whole transaction back and puts the connection in autocommit mode, while
 * txn_depth still counts the levels our callers opened. From then on every
 * level fails without running SQL until the outermost one is left: a
 * SAVEPOINT would otherwise open a fresh transaction that its RELEASE
 * commits, behind the back of a caller that believes it is inside one. */
static bool txn_lost(struct vs_store *s)
{
    if (s->txn_depth == 0)
        return false;
    if (!s->txn_lost && sqlite3_get_autocommit(s->db)) {
        VS_LOG(s->log, VS_LOG_ERROR, "store: an error rolled the whole transaction back");
        s->txn_lost = true;
    }
    return s->txn_lost;
}

bool vs_store_in_transaction(struct vs_store *s)
{
    return s->txn_depth > 0 && !txn_lost(s);
}

int vs_sq__enter(struct vs_store *s)
{
    int rc;
    if (txn_lost(s))
        return VS_ESTORE;
    if (s->txn_depth == 0) {
        /* IMMEDIATE takes the write lock now, so a read-then-write
         * transaction never fails half-way with SQLITE_BUSY_SNAPSHOT. */
        rc = run_tx(s, &s->tx[TX_BEGIN], "BEGIN IMMEDIATE");
    } else {
        rc = run_sp(s, s->txn_depth, SP_SAVE);
    }
    if (rc == 0)
        s->txn_depth++;
    return rc;
}

int vs_sq__leave(struct vs_store *s, int rc)
{
    if (VS_NEVER(s->txn_depth <= 0))
        return rc ? rc : VS_ESTATE;
    if (txn_lost(s)) {
        /* Nothing left to release or roll back; the outermost level
         * clears the state for the next transaction. */
        if (--s->txn_depth == 0)
            s->txn_lost = false;
        return rc ? rc : VS_ESTORE;
    }
    s->txn_depth--;
    if (s->txn_depth == 0) {
        if (rc == 0) {
            int c = run_tx(s, &s->tx[TX_COMMIT], "COMMIT");
            if (c != 0) {
                (void)run_tx(s, &s->tx[TX_ROLLBACK], "ROLLBACK");
                return c;
            }
            return 0;
        }
        (void)run_tx(s, &s->tx[TX_ROLLBACK], "ROLLBACK");
        return rc;
    }
    if (rc == 0)
        return run_sp(s, s->txn_depth, SP_RELEASE);
    (void)run_sp(s, s->txn_depth, SP_ROLLBACK_TO);
    (void)run_sp(s, s->txn_depth, SP_RELEASE);
    return rc;
}

int vs_store_begin(struct vs_store *s)
{
    return vs_sq__enter(s);
}

int vs_store_commit(struct vs_store *s)
{
    if (s->txn_depth <= 0)
        return VS_ESTATE;
    return vs_sq__leave(s, 0);
}

int vs_store_rollback(struct vs_store *s)
{
    if (s->txn_depth <= 0)
        return VS_ESTATE;
    (void)vs_sq__leave(s, VS_ESTATE);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Opening and the schema                                                    */

static int read_version(struct vs_store *s, int *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, "SELECT value FROM store_meta WHERE key = 'schema_version'",
                                -1, &st, NULL);
    if (rc != SQLITE_OK)
        return vs_sq__err(s, rc, "schema version");
    rc = sqlite3_step(st);
    *out = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : VS_ESTORE;
}

static int ensure_schema(struct vs_store *s)
{
    int rc = exec(s, "CREATE TABLE IF NOT EXISTS store_meta (key TEXT PRIMARY KEY, value)");
    if (rc)
        return rc;
    int version;
    if ((rc = read_version(s, &version)) != 0)
        return rc;
    if (version == VS_SQ_SCHEMA_VERSION)
        return 0;
    if (version > VS_SQ_SCHEMA_VERSION) {
        VS_LOG(s->log, VS_LOG_ERROR,
               "store: schema version %d is newer than this volsched (%d); upgrade volsched",
               version, VS_SQ_SCHEMA_VERSION);
        return VS_ECONFIG;
    }
    if ((rc = vs_sq__enter(s)) != 0)
        return rc;
    /* Re-read inside the write lock: another process may have won the race. */
    rc = read_version(s, &version);
    for (size_t i = 0; rc == 0 && version == 0 && vs_sq__schema_v1[i]; i++)
        rc = exec(s, vs_sq__schema_v1[i]);
    for (size_t i = 0; rc == 0 && version < 2 && vs_sq__schema_v2[i]; i++)
        rc = exec(s, vs_sq__schema_v2[i]);
    for (size_t i = 0; rc == 0 && version < 3 && vs_sq__schema_v3[i]; i++)
        rc = exec(s, vs_sq__schema_v3[i]);
    for (size_t i = 0; rc == 0 && version < 4 && vs_sq__schema_v4[i]; i++)
        rc = exec(s, vs_sq__schema_v4[i]);
    if (rc == 0 && version < VS_SQ_SCHEMA_VERSION) {
        char sql[128];
        snprintf(sql, sizeof(sql),
                 "INSERT OR REPLACE INTO store_meta(key, value) VALUES('schema_version', %d)",
                 VS_SQ_SCHEMA_VERSION);
        rc = exec(s, sql);
    }
    return vs_sq__leave(s, rc);
}

/* SQLite's memory statistics take one process-wide mutex around every
 * allocation it makes; nothing here reads them, and with several request
 * threads that mutex is contended on every statement. sqlite3_config must
 * run before SQLite initializes: if something in the process already
 * initialized it, the call fails and the statistics simply stay on. */
static void sqlite_once(void)
{
    (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

int vs_store_open(const char *url, int flags, struct vs_log *log, struct vs_store **out_store)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, sqlite_once);
    if (!url || !*url || !out_store)
        return VS_EINVAL;
    if (vs_str_has_prefix(url, "postgresql:") || vs_str_has_prefix(url, "postgres:")) {
        VS_LOG(log, VS_LOG_ERROR, "store: PostgreSQL is not built yet: %s", url);
        return VS_EUNSUPPORTED;
    }
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
    if ((rc = ensure_schema(s)) != 0)
        goto fail;
    *out_store = s;
    return 0;
fail:
    vs_store_close(s);
    return rc;
}

int vs_store_checkpoint(struct vs_store *s)
{
    int rc = sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    /* BUSY: a writer or another checkpoint is active; try again later. */
    if (rc == SQLITE_OK || (rc & 0xff) == SQLITE_BUSY)
        return 0;
    return vs_sq__err(s, rc, "checkpoint");
}

void vs_store_close(struct vs_store *s)
{
    if (!s)
        return;
    if (s->txn_depth > 0 && s->db) {
        s->txn_depth = 1;
        (void)vs_sq__leave(s, VS_ESTATE);
    }
    for (int i = 0; i < SQ__COUNT; i++)
        sqlite3_finalize(s->stmts[i]);
    for (int i = 0; i < 3; i++)
        sqlite3_finalize(s->tx[i]);
    for (int d = 0; d < VS_SQ_TX_DEPTHS; d++)
        for (int i = 0; i < 3; i++)
            sqlite3_finalize(s->sp[d][i]);
    if (s->db)
        sqlite3_close_v2(s->db);
    vs_free(s);
}

int vs_store_durable_commits(struct vs_store *s, bool on)
{
    /* SQLite cannot change it inside a transaction: the outer one's
     * commit is then the caller's to make durable. Off means "as the URL
     * said". */
    if (s->txn_depth > 0)
        return 0;
    return exec(s, on || s->sync_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
}
