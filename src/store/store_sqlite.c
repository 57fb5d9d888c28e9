/*
 * The SQLite backend: opening, schema versions, the prepared-statement cache,
 * transactions, and the generic row code driven by the column descriptors.
 * The domain operations are in store_sqlite_<concept>.c.
 */
#include <errno.h>
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

int vs_sq__one_row_end(struct vs_store *s, sqlite3_stmt *st, int rc, const char *what)
{
    sqlite3_reset(st);
    if (rc == SQLITE_ROW)
        return 0;
    return rc == SQLITE_DONE ? VS_ENOTFOUND : vs_sq__err(s, rc, what);
}

/* ------------------------------------------------------------------------ */
/* SQL text of each statement slot                                          */

struct table_slot {
    const struct sq_table *t;
    enum sq_stmt base; /* its _INSERT slot; UPDATE, GET, BY_NAME follow */
};

static const struct table_slot table_slots[] = {
    {&vs_sq__platform, SQ_PLATFORM_INSERT},
    {&vs_sq__app, SQ_APP_INSERT},
    {&vs_sq__app_version, SQ_APP_VERSION_INSERT},
    {&vs_sq__user, SQ_USER_INSERT},
    {&vs_sq__team, SQ_TEAM_INSERT},
    {&vs_sq__host, SQ_HOST_INSERT},
    {&vs_sq__workunit, SQ_WORKUNIT_INSERT},
    {&vs_sq__result, SQ_RESULT_INSERT},
    {&vs_sq__assignment, SQ_ASSIGNMENT_INSERT},
};

char *vs_sq__select_list(const struct sq_table *t, const char *alias)
{
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    int rc = 0;
    for (size_t i = 0; i < t->ncols; i++)
        rc |= vs_buf_printf(&b, "%s%s%s%s", i ? ", " : "", alias ? alias : "", alias ? "." : "",
                            t->cols[i].name);
    /* An unlimited buffer cannot refuse; OOM aborts inside the allocator. */
    if (VS_NEVER(rc != 0))
        vs_buf_reset(&b);
    size_t n;
    return vs_buf_take(&b, &n);
}

/* The host columns of index host_user. The scheduler rewrites its host row
 * on every RPC; naming an indexed column in an UPDATE's SET rewrites its
 * index entry (a dirty page, a WAL frame) even when the value is the same,
 * so the row update leaves these to SQ_HOST_UPDATE_KEYS, which changes them
 * only when they differ. */
static bool host_key_col(const struct sq_table *t, size_t i)
{
    return t == &vs_sq__host &&
           (strcmp(t->cols[i].name, "userid") == 0 || strcmp(t->cols[i].name, "host_cpid") == 0);
}

/* The parameter number of host column name in SQ_HOST_UPDATE's numbering. */
static size_t host_param(const char *name)
{
    for (size_t i = 1; i < vs_sq__host.ncols; i++) {
        if (strcmp(vs_sq__host.cols[i].name, name) == 0)
            return i;
    }
    return 0;
}

static int table_sql(const struct sq_table *t, int kind, struct vs_buf *b)
{
    int rc = 0;
    size_t first = t->has_id ? 1 : 0;
    switch (kind) {
    case 0: /* INSERT without id: the store assigns it */
        rc |= vs_buf_printf(b, "INSERT INTO %s(", t->name);
        for (size_t i = first; i < t->ncols; i++)
            rc |= vs_buf_printf(b, "%s%s", i > first ? ", " : "", t->cols[i].name);
        rc |= vs_buf_puts(b, ") VALUES(");
        for (size_t i = first; i < t->ncols; i++)
            rc |= vs_buf_printf(b, "%s?%zu", i > first ? ", " : "", i - first + 1);
        rc |= vs_buf_puts(b, ")");
        break;
    case 1: { /* UPDATE every column by id (but a host's index keys, below) */
        rc |= vs_buf_printf(b, "UPDATE %s SET ", t->name);
        bool sep = false;
        for (size_t i = first; i < t->ncols; i++) {
            if (host_key_col(t, i))
                continue;
            rc |= vs_buf_printf(b, "%s%s = ?%zu", sep ? ", " : "", t->cols[i].name, i - first + 1);
            sep = true;
        }
        rc |= vs_buf_printf(b, " WHERE id = ?%zu", t->ncols - first + 1);
        break;
    }
    case 2:
    case 3: {
        char *cols = vs_sq__select_list(t, NULL);
        rc |= vs_buf_printf(b, "SELECT %s FROM %s WHERE %s = ?1", cols, t->name,
                            kind == 2 ? "id" : "name");
        vs_free(cols);
        break;
    }
    }
    return rc;
}

static int build_sql(enum sq_stmt id, struct vs_buf *b)
{
    for (size_t i = 0; i < sizeof(table_slots) / sizeof(table_slots[0]); i++) {
        if (id >= table_slots[i].base && id < table_slots[i].base + 4)
            return table_sql(table_slots[i].t, (int)(id - table_slots[i].base), b);
    }
    char *r = NULL, *w = NULL;
    int rc = 0;
    switch (id) {
    case SQ_AVFILE_INSERT:
        rc = vs_buf_puts(b, "INSERT INTO app_version_file(app_version_id, seqno, name, "
                            "open_name, path, md5_cksum, nbytes, file_signature, main_program, "
                            "executable, copy_file) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
                            "?10, ?11)");
        break;
    case SQ_AVFILES_OF:
        r = vs_sq__select_list(&vs_sq__app_version_file, NULL);
        rc = vs_buf_printf(b,
                           "SELECT %s FROM app_version_file WHERE app_version_id = ?1 "
                           "ORDER BY seqno",
                           r);
        break;
    case SQ_USER_BY_AUTH:
        r = vs_sq__select_list(&vs_sq__user, NULL);
        rc = vs_buf_printf(b, "SELECT %s FROM \"user\" WHERE authenticator = ?1", r);
        break;
    case SQ_HOST_BY_CPID:
        r = vs_sq__select_list(&vs_sq__host, NULL);
        rc = vs_buf_printf(b,
                           "SELECT %s FROM host WHERE userid = ?1 AND host_cpid = ?2 "
                           "ORDER BY id DESC LIMIT 1",
                           r);
        break;
    case SQ_TEAM_NUSERS_INC:
        rc = vs_buf_puts(b, "UPDATE team SET nusers = nusers + 1 WHERE id = ?1");
        break;
    case SQ_PLATFORM_ALL:
        r = vs_sq__select_list(&vs_sq__platform, NULL);
        rc = vs_buf_printf(b, "SELECT %s FROM platform ORDER BY id", r);
        break;
    case SQ_APP_ALL:
        r = vs_sq__select_list(&vs_sq__app, NULL);
        rc = vs_buf_printf(b, "SELECT %s FROM app ORDER BY id", r);
        break;
    case SQ_APP_VERSION_ALL:
        r = vs_sq__select_list(&vs_sq__app_version, NULL);
        rc = vs_buf_printf(b, "SELECT %s FROM app_version ORDER BY id", r);
        break;
    case SQ_ASSIGNMENTS:
        r = vs_sq__select_list(&vs_sq__assignment, NULL);
        rc = vs_buf_printf(b,
                           "SELECT %s FROM assignment WHERE (?1 < 0 OR target_type = ?1) "
                           "AND (?2 < 0 OR multi = ?2) ORDER BY id",
                           r);
        break;
    case SQ_RESULTS_OF_WU:
        r = vs_sq__select_list(&vs_sq__result, NULL);
        rc = vs_buf_printf(b, "SELECT %s FROM result WHERE workunitid = ?1 ORDER BY id", r);
        break;
    case SQ_RESULTS_IN_PROGRESS:
        r = vs_sq__select_list(&vs_sq__result, NULL);
        rc = vs_buf_printf(b,
                           "SELECT %s FROM result WHERE hostid = ?1 AND server_state = %d "
                           "ORDER BY id",
                           r, VS_RESULT_SERVER_STATE_IN_PROGRESS);
        break;
    case SQ_HOST_HAS_WU:
        rc = vs_buf_puts(b, "SELECT EXISTS(SELECT 1 FROM result WHERE workunitid = ?2 "
                            "AND hostid = ?1)");
        break;
    case SQ_COUNT_RESULTS:
        /* Other states: operator and bench counts, which scan. */
        rc = vs_buf_puts(b, "SELECT count(*) FROM result WHERE server_state = ?1 AND "
                            "(?2 = 0 OR appid = ?2)");
        break;
    case SQ_COUNT_UNSENT:
    case SQ_COUNT_IN_PROGRESS:
        /* The state is a literal so that the planner can use the partial
         * index of that state (res_unsent, res_host_ip); a bound state
         * cannot prove the index's WHERE and scans. */
        rc = vs_buf_printf(b,
                           "SELECT count(*) FROM result WHERE server_state = %d AND "
                           "(?2 = 0 OR appid = ?2)",
                           id == SQ_COUNT_UNSENT ? VS_RESULT_SERVER_STATE_UNSENT
                                                 : VS_RESULT_SERVER_STATE_IN_PROGRESS);
        break;
    case SQ_JOBS_UNSENT:
        r = vs_sq__select_list(&vs_sq__result, "r");
        w = vs_sq__select_list(&vs_sq__workunit, "w");
        rc = vs_buf_printf(b,
                           "SELECT %s, %s FROM result r JOIN workunit w ON w.id = "
                           "r.workunitid WHERE r.server_state = %d AND r.id > ?1 AND "
                           "w.transitioner_flags = 0 ORDER BY r.id LIMIT ?2",
                           r, w, VS_RESULT_SERVER_STATE_UNSENT);
        break;
    case SQ_CLAIM:
        rc = vs_buf_printf(b,
                           "UPDATE result SET server_state = %d, hostid = ?2, userid = ?3, "
                           "teamid = ?4, sent_time = ?5, report_deadline = ?6, "
                           "app_version_id = ?7, app_version_num = ?8, flops_estimate = ?9, "
                           "mod_time = ?5 WHERE id = ?1 AND server_state = %d",
                           VS_RESULT_SERVER_STATE_IN_PROGRESS, VS_RESULT_SERVER_STATE_UNSENT);
        break;
    case SQ_CLAIM_WU:
        rc = vs_buf_puts(b, "UPDATE workunit SET transition_time = min(transition_time, ?2), "
                            "mod_time = ?3, hr_class = CASE WHEN hr_class = 0 THEN ?4 ELSE "
                            "hr_class END WHERE id = (SELECT workunitid FROM result WHERE "
                            "id = ?1)");
        break;
    case SQ_CLAIM_WU_ID:
        rc = vs_buf_puts(b, "UPDATE workunit SET transition_time = min(transition_time, ?2), "
                            "mod_time = ?3, hr_class = CASE WHEN hr_class = 0 THEN ?4 ELSE "
                            "hr_class END WHERE id = ?1");
        break;
    case SQ_REPORT:
        rc = vs_buf_printf(b,
                           "UPDATE result SET server_state = %d, outcome = ?2, "
                           "client_state = ?3, exit_status = ?4, cpu_time = ?5, "
                           "elapsed_time = ?6, peak_working_set_size = ?7, "
                           "peak_swap_size = ?8, peak_disk_usage = ?9, xml_doc_out = ?10, "
                           "stderr_out = ?11, received_time = ?12, mod_time = ?12, "
                           /* BOINC-COMPAT: an errored result is invalid at once */
                           "validate_state = CASE WHEN ?2 = %d THEN %d ELSE validate_state END "
                           "WHERE id = ?1",
                           VS_RESULT_SERVER_STATE_OVER, VS_RESULT_OUTCOME_CLIENT_ERROR,
                           VS_VALIDATE_STATE_INVALID);
        break;
    case SQ_REPORT_STATE:
        rc = vs_buf_puts(b, "SELECT id, hostid, server_state, outcome, received_time, workunitid, "
                            "userid, app_version_id FROM result WHERE name = ?1");
        break;
    case SQ_REPORT_WU:
        rc = vs_buf_puts(b, "UPDATE workunit SET transition_time = ?2, mod_time = ?2 "
                            "WHERE id = ?1");
        break;
    case SQ_WUS_TO_TRANSITION:
        w = vs_sq__select_list(&vs_sq__workunit, NULL);
        rc = vs_buf_printf(b,
                           "SELECT %s FROM workunit WHERE transition_time <= ?1 AND "
                           "transitioner_flags <> %d ORDER BY transition_time, id LIMIT ?2",
                           w, VS_TRANSITION_NONE);
        break;
    case SQ_WUS_TO_VALIDATE:
    case SQ_WUS_TO_ASSIMILATE:
    case SQ_WUS_TO_DELETE: {
        w = vs_sq__select_list(&vs_sq__workunit, NULL);
        const char *cond = id == SQ_WUS_TO_VALIDATE     ? "need_validate = 1"
                           : id == SQ_WUS_TO_ASSIMILATE ? "assimilate_state = 1"
                                                        : "file_delete_state = 1";
        rc = vs_buf_printf(b,
                           "SELECT %s FROM workunit WHERE %s AND (?1 = 0 OR appid = ?1) "
                           "ORDER BY id LIMIT ?2",
                           w, cond);
        break;
    }
    case SQ_RESULTS_TO_DELETE:
        r = vs_sq__select_list(&vs_sq__result, NULL);
        rc = vs_buf_printf(b,
                           "SELECT %s FROM result WHERE file_delete_state = %d ORDER BY id "
                           "LIMIT ?1",
                           r, VS_FILE_DELETE_READY);
        break;
    case SQ_DELETE_RETRY_WU:
    case SQ_DELETE_RETRY_RESULT:
        rc = vs_buf_printf(b, "UPDATE %s SET file_delete_state = %d WHERE file_delete_state = %d",
                           id == SQ_DELETE_RETRY_WU ? "workunit" : "result", VS_FILE_DELETE_READY,
                           VS_FILE_DELETE_ERROR);
        break;
    case SQ_HOST_UPDATE_KEYS: {
        /* Bound like SQ_HOST_UPDATE (every column, id last). */
        size_t u = host_param("userid"), c = host_param("host_cpid");
        rc = vs_buf_printf(b,
                           "UPDATE host SET userid = ?%zu, host_cpid = ?%zu WHERE id = ?%zu "
                           "AND (userid <> ?%zu OR host_cpid <> ?%zu)",
                           u, c, vs_sq__host.ncols, u, c);
        break;
    }
    case SQ_HAV_GET:
        rc = vs_buf_puts(b, "SELECT host_id, app_version_id, max_jobs_per_day, n_jobs_today, "
                            "consecutive_valid, turnaround_n, turnaround_avg FROM "
                            "host_app_version WHERE host_id = ?1 AND app_version_id = ?2");
        break;
    case SQ_HAV_PUT:
        rc = vs_buf_puts(b, "INSERT OR REPLACE INTO host_app_version(host_id, app_version_id, "
                            "max_jobs_per_day, n_jobs_today, consecutive_valid, turnaround_n, "
                            "turnaround_avg) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)");
        break;
    case SQ_HAVS_OF_HOST:
        rc = vs_buf_puts(b, "SELECT host_id, app_version_id, max_jobs_per_day, n_jobs_today, "
                            "consecutive_valid, turnaround_n, turnaround_avg FROM "
                            "host_app_version WHERE host_id = ?1 ORDER BY app_version_id");
        break;
    case SQ_HAV_SENT:
        /* Only the day's count: max_jobs_per_day belongs to the validator
         * and transitioner, which may have changed it since it was read. */
        rc = vs_buf_puts(b, "INSERT INTO host_app_version(host_id, app_version_id, "
                            "max_jobs_per_day, n_jobs_today) VALUES(?1, ?2, ?3, ?4) "
                            "ON CONFLICT(host_id, app_version_id) DO UPDATE SET "
                            "n_jobs_today = excluded.n_jobs_today");
        break;
    case SQ_DAEMON_GET:
    case SQ_DAEMON_ALL:
        rc = vs_buf_printf(b,
                           "SELECT name, last_run, last_work, total_work, last_error_time, "
                           "last_error, retry_time FROM daemon_status %s ORDER BY name",
                           id == SQ_DAEMON_GET ? "WHERE name = ?1" : "");
        break;
    case SQ_DAEMON_PUT:
        rc = vs_buf_puts(b, "INSERT OR REPLACE INTO daemon_status(name, last_run, last_work, "
                            "total_work, last_error_time, last_error, retry_time) "
                            "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)");
        break;
    default:
        rc = VS_EINTERNAL;
    }
    vs_free(r);
    vs_free(w);
    return rc;
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
    if (build_sql(id, &b) != 0) {
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

int vs_sq__enter(struct vs_store *s)
{
    int rc;
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
