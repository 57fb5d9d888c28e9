/*
 * The SQLite backend's statement catalogue: the SQL text of every prepared
 * statement slot. The generic insert/update/get statements are generated from
 * the column descriptors (store_cols.c); the domain statements are
 * written out. vs_store__stmt (store_sqlite.c) prepares a slot on first use.
 */
#include <string.h>

#include "store/store_int.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"

/* The rows of a batch that is not retired (schema v8's batch table). */
#define HELD_BY_BATCH(t)                                                                           \
    " AND NOT (" t ".batch <> 0 AND EXISTS (SELECT 1 FROM batch bt WHERE bt.id = " t ".batch "     \
    "AND bt.state <> 4))"

/* ------------------------------------------------------------------------ */
/* SQL text of each statement slot                                          */

struct table_slot {
    const struct sq_table *t;
    enum sq_stmt base; /* its _INSERT slot; UPDATE, GET, BY_NAME follow */
};

static const struct table_slot table_slots[] = {
    {&vs_store__platform, SQ_PLATFORM_INSERT},
    {&vs_store__app, SQ_APP_INSERT},
    {&vs_store__app_version, SQ_APP_VERSION_INSERT},
    {&vs_store__user, SQ_USER_INSERT},
    {&vs_store__team, SQ_TEAM_INSERT},
    {&vs_store__host, SQ_HOST_INSERT},
    {&vs_store__workunit, SQ_WORKUNIT_INSERT},
    {&vs_store__result, SQ_RESULT_INSERT},
    {&vs_store__assignment, SQ_ASSIGNMENT_INSERT},
};

char *vs_store__select_list(const struct sq_table *t, const char *alias)
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
    return t == &vs_store__host &&
           (strcmp(t->cols[i].name, "userid") == 0 || strcmp(t->cols[i].name, "host_cpid") == 0);
}

/* The parameter number of host column name in SQ_HOST_UPDATE's numbering. */
static size_t host_param(const char *name)
{
    for (size_t i = 1; i < vs_store__host.ncols; i++) {
        if (strcmp(vs_store__host.cols[i].name, name) == 0)
            return i;
    }
    return 0;
}

static int table_sql(const struct sq_table *t, int kind, struct vs_buf *b);

/* Host columns the scheduler's row update leaves alone. _max_results_day
 * belongs to the operator (`volsched host ban`, vs_store_host_set_max_
 * results_day), the venue to the volunteer (am_set_host_info, the web site:
 * vs_store_host_set_venue), the credit columns to the validator
 * (store_credit.c):
 * the scheduler writes from a copy it read before (its host cache holds
 * one for seconds), which must not undo a ban or a grant made meanwhile. */
static bool host_kept_col(const struct sq_table *t, size_t i)
{
    static const char *const kept[] = {"_max_results_day", "total_credit", "expavg_credit",
                                       "expavg_time", "venue"};
    for (size_t k = 0; k < sizeof(kept) / sizeof(kept[0]); k++)
        if (strcmp(t->cols[i].name, kept[k]) == 0)
            return true;
    return false;
}

char *vs_store__host_update_keyed_sql(void)
{
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    if (VS_NEVER(table_sql(&vs_store__host, 4, &b) != 0))
        vs_buf_reset(&b);
    size_t n;
    return vs_buf_take(&b, &n);
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
    case 1:   /* UPDATE every column by id (but a host's index keys, below) */
    case 4: { /* the same with the host's keys (vs_store__host_update_keyed_sql) */
        rc |= vs_buf_printf(b, "UPDATE %s SET ", t->name);
        bool sep = false;
        for (size_t i = first; i < t->ncols; i++) {
            if ((kind == 1 && host_key_col(t, i)) || (t == &vs_store__host && host_kept_col(t, i)))
                continue;
            rc |= vs_buf_printf(b, "%s%s = ?%zu", sep ? ", " : "", t->cols[i].name, i - first + 1);
            sep = true;
        }
        rc |= vs_buf_printf(b, " WHERE id = ?%zu", t->ncols - first + 1);
        break;
    }
    case 2:
    case 3: {
        char *cols = vs_store__select_list(t, NULL);
        rc |= vs_buf_printf(b, "SELECT %s FROM %s WHERE %s = ?1", cols, t->name,
                            kind == 2 ? "id" : "name");
        vs_free(cols);
        break;
    }
    }
    return rc;
}

bool vs_store__slot_is_insert(enum sq_stmt id)
{
    for (size_t i = 0; i < sizeof(table_slots) / sizeof(table_slots[0]); i++) {
        if (id == table_slots[i].base)
            return table_slots[i].t->has_id;
    }
    return false;
}

int vs_store__build_sql(enum sq_stmt id, struct vs_buf *b)
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
        r = vs_store__select_list(&vs_store__app_version_file, NULL);
        rc = vs_buf_printf(b,
                           "SELECT %s FROM app_version_file WHERE app_version_id = ?1 "
                           "ORDER BY seqno",
                           r);
        break;
    case SQ_USER_BY_AUTH:
        r = vs_store__select_list(&vs_store__user, NULL);
        rc = vs_buf_printf(b, "SELECT %s FROM \"user\" WHERE authenticator = ?1", r);
        break;
    case SQ_HOST_BY_CPID:
        r = vs_store__select_list(&vs_store__host, NULL);
        rc = vs_buf_printf(b,
                           "SELECT %s FROM host WHERE userid = ?1 AND host_cpid = ?2 "
                           "ORDER BY id DESC LIMIT 1",
                           r);
        break;
    case SQ_TEAM_NUSERS_INC:
        rc = vs_buf_puts(b, "UPDATE team SET nusers = nusers + 1 WHERE id = ?1");
        break;
    case SQ_PLATFORM_ALL:
        r = vs_store__select_list(&vs_store__platform, NULL);
        rc = vs_buf_printf(b, "SELECT %s FROM platform ORDER BY id", r);
        break;
    case SQ_APP_ALL:
        r = vs_store__select_list(&vs_store__app, NULL);
        rc = vs_buf_printf(b, "SELECT %s FROM app ORDER BY id", r);
        break;
    case SQ_APP_VERSION_ALL:
        r = vs_store__select_list(&vs_store__app_version, NULL);
        rc = vs_buf_printf(b, "SELECT %s FROM app_version ORDER BY id", r);
        break;
    case SQ_ASSIGNMENTS:
        r = vs_store__select_list(&vs_store__assignment, NULL);
        rc = vs_buf_printf(b,
                           "SELECT %s FROM assignment WHERE (?1 < 0 OR target_type = ?1) "
                           "AND (?2 < 0 OR multi = ?2) ORDER BY id",
                           r);
        break;
    case SQ_RESULTS_OF_WU:
        r = vs_store__select_list(&vs_store__result, NULL);
        rc = vs_buf_printf(b, "SELECT %s FROM result WHERE workunitid = ?1 ORDER BY id", r);
        break;
    case SQ_RESULTS_IN_PROGRESS:
        r = vs_store__select_list(&vs_store__result, NULL);
        rc = vs_buf_printf(b,
                           "SELECT %s FROM result WHERE hostid = ?1 AND server_state = %d "
                           "ORDER BY id",
                           r, VS_RESULT_SERVER_STATE_IN_PROGRESS);
        break;
    case SQ_HOST_HAS_WU:
        rc = vs_buf_puts(b, "SELECT EXISTS(SELECT 1 FROM result WHERE workunitid = ?2 "
                            "AND hostid = ?1)");
        break;
    case SQ_HOST_IN_PROGRESS:
        rc = vs_buf_printf(b, "SELECT count(*) FROM result WHERE hostid = ?1 AND server_state = %d",
                           VS_RESULT_SERVER_STATE_IN_PROGRESS);
        break;
    case SQ_USER_NEW_HOSTS:
        rc = vs_buf_puts(b, "SELECT count(*) FROM host WHERE userid = ?1 AND create_time > ?2");
        break;
    case SQ_COUNT_RESULTS:
        /* Other states: operator and bench counts, which scan. */
        rc = vs_buf_puts(b, "SELECT count(*) FROM result WHERE server_state = ?1 AND "
                            "(?2 = 0 OR appid = ?2)");
        break;
    case SQ_COUNT_UNSENT:
    case SQ_COUNT_IN_PROGRESS:
        /* The state is a literal so that the planner can use the partial
         * index of that state (res_unsent_prio, res_host_ip); a bound state
         * cannot prove the index's WHERE and scans. */
        rc = vs_buf_printf(b,
                           "SELECT count(*) FROM result WHERE server_state = %d AND "
                           "(?2 = 0 OR appid = ?2)",
                           id == SQ_COUNT_UNSENT ? VS_RESULT_SERVER_STATE_UNSENT
                                                 : VS_RESULT_SERVER_STATE_IN_PROGRESS);
        break;
    case SQ_JOBS_UNSENT:
    case SQ_JOBS_UNSENT_LOWER:
        /* The feeder's order: priority (higher first), then id. Two
         * statements, each one seek in res_unsent_prio: the rest of the
         * cursor's priority after its id, then the lower priorities. One
         * statement with "priority < ?1 OR (priority = ?1 AND id > ?2)"
         * walked every row of the cursor's priority up to its id. */
        r = vs_store__select_list(&vs_store__result, "r");
        w = vs_store__select_list(&vs_store__workunit, "w");
        rc = vs_buf_printf(b,
                           "SELECT %s, %s FROM result r JOIN workunit w ON w.id = "
                           "r.workunitid WHERE r.server_state = %d AND %s AND "
                           "w.transitioner_flags = 0 AND (r.lease_owner = ?4 OR "
                           "r.lease_until <= ?5) ORDER BY r.priority DESC, r.id LIMIT ?3",
                           r, w, VS_RESULT_SERVER_STATE_UNSENT,
                           id == SQ_JOBS_UNSENT ? "r.priority = ?1 AND r.id > ?2"
                                                : "r.priority < ?1 AND ?2 >= 0");
        break;
    case SQ_UNSENT_NEWER:
        /* The table's last id (the rowid's end, one seek) and the top
         * priority of the UNSENT results made since the feeder last looked
         * (a rowid range: only the new rows; the unary + keeps the planner
         * from walking the whole of res_unsent_prio instead). */
        rc = vs_buf_printf(b,
                           "SELECT (SELECT max(id) FROM result), (SELECT max(priority) FROM "
                           "result WHERE id > ?1 AND +server_state = %d)",
                           VS_RESULT_SERVER_STATE_UNSENT);
        break;
    case SQ_ASSIGNED_FOR:
        /* One (target_type, target_id, multi) at a time: a seek in
         * asgn_target. Broadcasts this host already had are left out here;
         * targeted ones are decided with all their results (reserve). */
        r = vs_store__select_list(&vs_store__assignment, "a");
        w = vs_store__select_list(&vs_store__workunit, "w");
        rc = vs_buf_printf(b,
                           "SELECT %s, %s FROM assignment a JOIN workunit w ON w.id = "
                           "a.workunitid WHERE a.target_type = ?1 AND a.target_id = ?2 AND "
                           "a.multi = ?3 AND w.error_mask = 0 AND (a.multi = 1 OR "
                           "(w.canonical_resultid = 0 AND w.need_validate = 0)) AND "
                           "(a.multi = 0 OR NOT EXISTS (SELECT 1 FROM result x WHERE "
                           "x.workunitid = a.workunitid AND x.hostid = ?4 AND "
                           "x.server_state <> %d)) ORDER BY w.priority DESC, a.id LIMIT ?5",
                           r, w, VS_RESULT_SERVER_STATE_UNSENT);
        break;
    case SQ_ASSIGNED_RESULTS:
        rc = vs_buf_puts(b, "SELECT id, hostid, server_state, outcome, validate_state, "
                            "assign_slot FROM result WHERE workunitid = ?1 ORDER BY id LIMIT ?2");
        break;
    case SQ_ASSIGNMENT_COUNTS:
        /* Per kind: assignments, and those whose workunit is still open. */
        rc = vs_buf_puts(
            b, "SELECT a.target_type, a.multi, count(*), sum(CASE WHEN w.error_mask = 0 AND "
               "w.canonical_resultid = 0 AND w.assimilate_state = 0 THEN 1 ELSE 0 END) FROM "
               "assignment a JOIN workunit w ON w.id = a.workunitid "
               "GROUP BY a.target_type, a.multi");
        break;
    case SQ_BROADCAST_RESULTS:
        r = vs_store__select_list(&vs_store__result, NULL);
        rc = vs_buf_printf(b,
                           "SELECT %s FROM result WHERE assign_slot = -1 AND server_state = %d "
                           "AND id > ?1 ORDER BY id LIMIT ?2",
                           r, VS_RESULT_SERVER_STATE_OVER);
        break;
    case SQ_WUS_WITH_INPUTS:
        w = vs_store__select_list(&vs_store__workunit, NULL);
        rc = vs_buf_printf(b,
                           "SELECT %s FROM workunit WHERE id > ?1 AND file_delete_state = %d "
                           "ORDER BY id LIMIT ?2",
                           w, VS_FILE_DELETE_INIT);
        break;
    case SQ_WU_RELEASE_NAME:
    case SQ_WU_RELEASE_BATCH:
        /* Held workunits (create_work --no_transition): normal ones whose
         * transition_time is "never". Assigned ones are never held. */
        rc = vs_buf_printf(b,
                           "UPDATE workunit SET transition_time = ?2, mod_time = ?2 WHERE %s = ?1 "
                           "AND transition_time = %lld AND transitioner_flags = 0",
                           id == SQ_WU_RELEASE_NAME ? "name" : "batch", (long long)VS_TIME_NEVER);
        break;
    case SQ_CLAIM:
        rc = vs_buf_printf(b,
                           "UPDATE result SET server_state = %d, hostid = ?2, userid = ?3, "
                           "teamid = ?4, sent_time = ?5, report_deadline = ?6, "
                           "app_version_id = ?7, app_version_num = ?8, flops_estimate = ?9, "
                           "mod_time = ?5 WHERE id = ?1 AND server_state = %d "
                           /* One result per host (?12) and per user (?10) and
                            * workunit, checked by the statement that claims:
                            * two requests of one user interleaved in a batch
                            * cannot both pass, whatever they read before. */
                           "AND ((?10 = 0 AND ?12 = 0) OR NOT EXISTS (SELECT 1 FROM result o "
                           "WHERE o.workunitid = result.workunitid AND o.id <> ?1 AND "
                           "o.hostid <> 0 AND ((?12 <> 0 AND o.hostid = ?2) OR (?10 <> 0 AND "
                           "o.userid = ?3)))) "
                           /* The host's in-progress cap (?11 > 0), counted here
                            * for the same reason (partial index res_host_ip). */
                           "AND (?11 <= 0 OR (SELECT count(*) FROM result h WHERE "
                           "h.hostid = ?2 AND h.server_state = %d) < ?11) "
                           /* The daily quota (?13 > 0), for the same reason;
                            * SQ_HAV_CLAIMED counts the claim. */
                           "AND (?13 <= 0 OR coalesce((SELECT q.n_jobs_today FROM "
                           "host_app_version q WHERE q.host_id = ?2 AND "
                           "q.app_version_id = ?7), 0) < ?13) "
                           /* Another live instance's job cache
                            * holds it (its lease, ?14 being ours). */
                           "AND (lease_owner = ?14 OR lease_until <= ?5)",
                           VS_RESULT_SERVER_STATE_IN_PROGRESS, VS_RESULT_SERVER_STATE_UNSENT,
                           VS_RESULT_SERVER_STATE_IN_PROGRESS);
        break;
    case SQ_LEASE:
        /* Taken or renewed when it is still UNSENT and free: ours already,
         * never leased, or its lease over (?3 is now, ?4 the new expiry). */
        /* One statement for the whole page (?1: a JSON array of ids): one
         * round trip on PostgreSQL, not one per row. */
        rc = vs_buf_printf(b,
                           "UPDATE result SET lease_owner = ?2, lease_until = ?4 WHERE id IN "
                           "(SELECT CAST(value AS BIGINT) FROM json_each(?1)) AND server_state = "
                           "%d AND (lease_owner = ?2 OR lease_until <= ?3) RETURNING id",
                           VS_RESULT_SERVER_STATE_UNSENT);
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
                           /* A late report of a timed-out targeted instance
                            * gives up its slot: a retry may hold it now. */
                           "assign_slot = CASE WHEN server_state <> %d AND assign_slot > 0 "
                           "THEN 0 ELSE assign_slot END, "
                           /* BOINC-COMPAT: an errored result is invalid at once */
                           "validate_state = CASE WHEN ?2 = %d THEN %d ELSE validate_state END "
                           /* The checks of vs_store_result_report in the
                            * statement: one statement, not a read first. */
                           "WHERE name = ?1 AND hostid = ?13 AND (server_state = %d OR "
                           "(server_state = %d AND outcome = %d AND received_time = 0)) "
                           "RETURNING workunitid",
                           VS_RESULT_SERVER_STATE_OVER, VS_RESULT_SERVER_STATE_IN_PROGRESS,
                           VS_RESULT_OUTCOME_CLIENT_ERROR, VS_VALIDATE_STATE_INVALID,
                           VS_RESULT_SERVER_STATE_IN_PROGRESS, VS_RESULT_SERVER_STATE_OVER,
                           VS_RESULT_OUTCOME_NO_REPLY);
        break;
    case SQ_REPORT_STATE:
        rc = vs_buf_puts(b, "SELECT id, hostid, server_state, outcome, received_time, workunitid, "
                            "userid, app_version_id FROM result WHERE name = ?1");
        break;
    case SQ_REPORT_WU:
        rc = vs_buf_puts(b, "UPDATE workunit SET transition_time = ?2, mod_time = ?2 "
                            "WHERE id = ?1");
        break;
    case SQ_WU_RETRY_AT:
        rc = vs_buf_puts(b, "UPDATE workunit SET transition_time = ?2, mod_time = ?3 "
                            "WHERE id = ?1");
        break;
    case SQ_WUS_TO_TRANSITION:
        w = vs_store__select_list(&vs_store__workunit, NULL);
        rc = vs_buf_printf(b,
                           "SELECT %s FROM workunit WHERE transition_time <= ?1 AND "
                           "transitioner_flags <> %d AND (?3 <= 1 OR id %% ?3 = ?4) "
                           "ORDER BY transition_time, id LIMIT ?2",
                           w, VS_TRANSITION_NONE);
        break;
    case SQ_WUS_TO_VALIDATE:
    case SQ_WUS_TO_ASSIMILATE:
    case SQ_WUS_TO_DELETE: {
        w = vs_store__select_list(&vs_store__workunit, NULL);
        const char *cond = id == SQ_WUS_TO_VALIDATE     ? "need_validate = 1"
                           : id == SQ_WUS_TO_ASSIMILATE ? "assimilate_state = 1"
                                                        : "file_delete_state = 1";
        /* Issue 38: the files of a submitter's batch stay until the batch
         * is retired (BOINC's file_deleter --dont_delete_batches), so its
         * outputs can be fetched (get_output.php); retire_batch purges
         * them. Jobs of a batch no batch row names are not held. */
        rc = vs_buf_printf(b,
                           "SELECT %s FROM workunit WHERE %s AND (?1 = 0 OR appid = ?1) "
                           "AND (?3 <= 1 OR id %% ?3 = ?4)%s ORDER BY id LIMIT ?2",
                           w, cond, id == SQ_WUS_TO_DELETE ? HELD_BY_BATCH("workunit") : "");
        break;
    }
    case SQ_RESULTS_TO_DELETE:
        r = vs_store__select_list(&vs_store__result, NULL);
        rc = vs_buf_printf(b,
                           "SELECT %s FROM result WHERE file_delete_state = %d AND "
                           "(?2 <= 1 OR id %% ?2 = ?3)%s ORDER BY id LIMIT ?1",
                           r, VS_FILE_DELETE_READY, HELD_BY_BATCH("result"));
        break;
    case SQ_DELETE_RETRY_WU:
    case SQ_DELETE_RETRY_RESULT:
        rc = vs_buf_printf(b, "UPDATE %s SET file_delete_state = %d WHERE file_delete_state = %d",
                           id == SQ_DELETE_RETRY_WU ? "workunit" : "result", VS_FILE_DELETE_READY,
                           VS_FILE_DELETE_ERROR);
        break;
    case SQ_WU_FILE_ADD:
        /* ON CONFLICT: a name a document lists twice is one row. */
        rc = vs_buf_puts(b, "INSERT INTO wu_file(name, workunitid) VALUES(?1, ?2) "
                            "ON CONFLICT(name, workunitid) DO NOTHING");
        break;
    case SQ_WU_FILE_IN_USE:
        rc = vs_buf_puts(b, "SELECT EXISTS(SELECT 1 FROM wu_file WHERE name = ?1 AND "
                            "workunitid <> ?2) OR EXISTS(SELECT 1 FROM app_version_file WHERE "
                            "name = ?1)");
        break;
    case SQ_WU_FILE_DROP:
        rc = vs_buf_puts(b, "DELETE FROM wu_file WHERE name = ?1 AND workunitid = ?2");
        break;
    case SQ_HOST_UPDATE_KEYS: {
        /* Bound like SQ_HOST_UPDATE (every column, id last). */
        size_t u = host_param("userid"), c = host_param("host_cpid");
        rc = vs_buf_printf(b,
                           "UPDATE host SET userid = ?%zu, host_cpid = ?%zu WHERE id = ?%zu "
                           "AND (userid <> ?%zu OR host_cpid <> ?%zu)",
                           u, c, vs_store__host.ncols, u, c);
        break;
    }
    case SQ_HAV_GET:
        rc = vs_buf_puts(b, "SELECT host_id, app_version_id, max_jobs_per_day, n_jobs_today, "
                            "consecutive_valid, turnaround_n, turnaround_avg FROM "
                            "host_app_version WHERE host_id = ?1 AND app_version_id = ?2");
        break;
    case SQ_HAV_PUT:
        /* An upsert rather than SQLite's INSERT OR REPLACE: both backends
         * speak it. */
        rc = vs_buf_puts(b, "INSERT INTO host_app_version(host_id, app_version_id, "
                            "max_jobs_per_day, n_jobs_today, consecutive_valid, turnaround_n, "
                            "turnaround_avg) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7) "
                            "ON CONFLICT(host_id, app_version_id) DO UPDATE SET "
                            "max_jobs_per_day = excluded.max_jobs_per_day, "
                            "n_jobs_today = excluded.n_jobs_today, "
                            "consecutive_valid = excluded.consecutive_valid, "
                            "turnaround_n = excluded.turnaround_n, "
                            "turnaround_avg = excluded.turnaround_avg");
        break;
    case SQ_HAVS_OF_HOST:
        rc = vs_buf_puts(b, "SELECT host_id, app_version_id, max_jobs_per_day, n_jobs_today, "
                            "consecutive_valid, turnaround_n, turnaround_avg FROM "
                            "host_app_version WHERE host_id = ?1 ORDER BY app_version_id");
        break;
    case SQ_HAV_CLAIMED:
        /* One more job today, counted in the store (never an absolute value
         * read before: parallel requests would overwrite each other). A
         * new row's max_jobs_per_day 0 stands for the project's quota; an
         * old row's belongs to the validator and transitioner. */
        rc = vs_buf_puts(b, "INSERT INTO host_app_version(host_id, app_version_id, "
                            "n_jobs_today) VALUES(?1, ?2, 1) "
                            "ON CONFLICT(host_id, app_version_id) DO UPDATE SET "
                            "n_jobs_today = host_app_version.n_jobs_today + 1");
        break;
    case SQ_HAV_NEW_DAY:
        rc = vs_buf_puts(b, "UPDATE host_app_version SET n_jobs_today = 0 WHERE host_id = ?1 "
                            "AND n_jobs_today <> 0 AND (SELECT rpc_time FROM host WHERE "
                            "id = ?1) < ?2");
        break;
    case SQ_DAEMON_GET:
    case SQ_DAEMON_ALL:
        rc = vs_buf_printf(b,
                           "SELECT name, last_run, last_work, total_work, last_error_time, "
                           "last_error, retry_time FROM daemon_status %s ORDER BY name",
                           id == SQ_DAEMON_GET ? "WHERE name = ?1" : "");
        break;
    case SQ_DAEMON_PUT:
        rc = vs_buf_puts(b, "INSERT INTO daemon_status(name, last_run, last_work, "
                            "total_work, last_error_time, last_error, retry_time) "
                            "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT(name) DO UPDATE SET "
                            "last_run = excluded.last_run, last_work = excluded.last_work, "
                            "total_work = excluded.total_work, "
                            "last_error_time = excluded.last_error_time, "
                            "last_error = excluded.last_error, retry_time = excluded.retry_time");
        break;
    default:
        rc = vs_store__build_sql_locality(id, b);
    }
    vs_free(r);
    vs_free(w);
    return rc;
}
