/*
 * The SQLite schema, version 1. BOINC-COMPAT: table and column names are
 * BOINC's (db/schema.sql) so that operators' queries and tools read the same;
 * types are SQLite's. Columns not in BOINC are marked "volsched".
 * Indexes follow BOINC's where the scheduler, feeder and transitioner need
 * them (db/constraints.sql).
 *
 * A new schema version appends a migration here and bumps
 * VS_SQ_SCHEMA_VERSION; never edit a released version's text.
 */
#include "store/store_int.h"

/* One string per table (C11 compilers need only take 4095-byte literals). */
const char *const vs_store__schema_v1[] = {
    "CREATE TABLE platform ("
    " id INTEGER PRIMARY KEY,"
    " create_time INTEGER NOT NULL DEFAULT 0,"
    " name TEXT NOT NULL UNIQUE,"
    " user_friendly_name TEXT NOT NULL DEFAULT '',"
    " deprecated INTEGER NOT NULL DEFAULT 0);",

    "CREATE TABLE app ("
    " id INTEGER PRIMARY KEY,"
    " create_time INTEGER NOT NULL DEFAULT 0,"
    " name TEXT NOT NULL UNIQUE,"
    " user_friendly_name TEXT NOT NULL DEFAULT '',"
    " min_version INTEGER NOT NULL DEFAULT 0,"
    " deprecated INTEGER NOT NULL DEFAULT 0,"
    " beta INTEGER NOT NULL DEFAULT 0,"
    " homogeneous_redundancy INTEGER NOT NULL DEFAULT 0,"
    " homogeneous_app_version INTEGER NOT NULL DEFAULT 0,"
    " weight REAL NOT NULL DEFAULT 1,"
    " non_cpu_intensive INTEGER NOT NULL DEFAULT 0,"
    " locality_scheduling INTEGER NOT NULL DEFAULT 0,"
    " n_size_classes INTEGER NOT NULL DEFAULT 0,"
    " target_nresults INTEGER NOT NULL DEFAULT 0,"
    " fraction_done_exact INTEGER NOT NULL DEFAULT 0);",

    "CREATE TABLE app_version ("
    " id INTEGER PRIMARY KEY,"
    " create_time INTEGER NOT NULL DEFAULT 0,"
    " appid INTEGER NOT NULL REFERENCES app(id),"
    " version_num INTEGER NOT NULL,"
    " platformid INTEGER NOT NULL REFERENCES platform(id),"
    " plan_class TEXT NOT NULL DEFAULT '',"
    " min_core_version INTEGER NOT NULL DEFAULT 0,"
    " max_core_version INTEGER NOT NULL DEFAULT 0,"
    " deprecated INTEGER NOT NULL DEFAULT 0,"
    " beta INTEGER NOT NULL DEFAULT 0,"
    " api_version TEXT NOT NULL DEFAULT ''," /* volsched (BOINC: in xml_doc) */
    " avg_ncpus REAL NOT NULL DEFAULT 1,"    /* volsched */
    " cmdline TEXT NOT NULL DEFAULT '',"     /* volsched */
    " UNIQUE (appid, platformid, version_num, plan_class));"

    /* volsched: BOINC keeps these in app_version.xml_doc as <file_info>s. */,

    "CREATE TABLE app_version_file ("
    " id INTEGER PRIMARY KEY,"
    " app_version_id INTEGER NOT NULL REFERENCES app_version(id),"
    " seqno INTEGER NOT NULL,"
    " name TEXT NOT NULL,"
    " open_name TEXT NOT NULL DEFAULT '',"
    " path TEXT NOT NULL,"
    " md5_cksum TEXT NOT NULL,"
    " nbytes REAL NOT NULL,"
    " file_signature TEXT,"
    " main_program INTEGER NOT NULL DEFAULT 0,"
    " executable INTEGER NOT NULL DEFAULT 0,"
    " copy_file INTEGER NOT NULL DEFAULT 0,"
    " UNIQUE (app_version_id, seqno));",

    "CREATE TABLE team ("
    " id INTEGER PRIMARY KEY,"
    " create_time INTEGER NOT NULL DEFAULT 0,"
    " userid INTEGER NOT NULL DEFAULT 0,"
    " name TEXT NOT NULL UNIQUE,"
    " nusers INTEGER NOT NULL DEFAULT 0,"
    " total_credit REAL NOT NULL DEFAULT 0,"
    " expavg_credit REAL NOT NULL DEFAULT 0);",

    "CREATE TABLE \"user\" ("
    " id INTEGER PRIMARY KEY,"
    " create_time INTEGER NOT NULL DEFAULT 0,"
    " email_addr TEXT NOT NULL DEFAULT '',"
    " name TEXT NOT NULL UNIQUE,"
    " authenticator TEXT NOT NULL UNIQUE,"
    " teamid INTEGER NOT NULL DEFAULT 0,"
    " country TEXT NOT NULL DEFAULT '',"
    " total_credit REAL NOT NULL DEFAULT 0,"
    " expavg_credit REAL NOT NULL DEFAULT 0,"
    " expavg_time REAL NOT NULL DEFAULT 0,"
    " cross_project_id TEXT NOT NULL DEFAULT '',"
    " venue TEXT NOT NULL DEFAULT '',"
    " seti_id INTEGER NOT NULL DEFAULT 0,"
    " global_prefs TEXT,"
    " project_prefs TEXT);"
    /* An empty e-mail address is allowed many times (admin-created users). */
    "CREATE UNIQUE INDEX user_email ON \"user\"(email_addr) WHERE email_addr <> '';"
    "CREATE INDEX user_team ON \"user\"(teamid);",

    "CREATE TABLE host ("
    " id INTEGER PRIMARY KEY,"
    " create_time INTEGER NOT NULL DEFAULT 0,"
    " userid INTEGER NOT NULL DEFAULT 0,"
    " rpc_seqno INTEGER NOT NULL DEFAULT 0,"
    " rpc_time INTEGER NOT NULL DEFAULT 0,"
    " host_cpid TEXT NOT NULL DEFAULT '',"
    " domain_name TEXT NOT NULL DEFAULT '',"
    " last_ip_addr TEXT NOT NULL DEFAULT '',"
    " external_ip_addr TEXT NOT NULL DEFAULT '',"
    " venue TEXT NOT NULL DEFAULT '',"
    " teamid INTEGER NOT NULL DEFAULT 0,"
    " on_frac REAL NOT NULL DEFAULT 0,"
    " connected_frac REAL NOT NULL DEFAULT 0,"
    " active_frac REAL NOT NULL DEFAULT 0,"
    " gpu_active_frac REAL NOT NULL DEFAULT 0,"
    " p_ncpus INTEGER NOT NULL DEFAULT 0,"
    " p_vendor TEXT NOT NULL DEFAULT '',"
    " p_model TEXT NOT NULL DEFAULT '',"
    " p_fpops REAL NOT NULL DEFAULT 0,"
    " p_iops REAL NOT NULL DEFAULT 0,"
    " p_membw REAL NOT NULL DEFAULT 0,"
    " os_name TEXT NOT NULL DEFAULT '',"
    " os_version TEXT NOT NULL DEFAULT '',"
    " platform_name TEXT NOT NULL DEFAULT ''," /* volsched */
    " m_nbytes REAL NOT NULL DEFAULT 0,"
    " m_swap REAL NOT NULL DEFAULT 0,"
    " d_total REAL NOT NULL DEFAULT 0,"
    " d_free REAL NOT NULL DEFAULT 0,"
    " d_boinc_used_total REAL NOT NULL DEFAULT 0,"
    " d_boinc_used_project REAL NOT NULL DEFAULT 0,"
    " d_boinc_max REAL NOT NULL DEFAULT 0,"
    " n_bwup REAL NOT NULL DEFAULT 0,"
    " n_bwdown REAL NOT NULL DEFAULT 0,"
    " p_ngpus INTEGER NOT NULL DEFAULT 0,"
    " p_gpu_fpops REAL NOT NULL DEFAULT 0,"
    " avg_turnaround REAL NOT NULL DEFAULT 0,"
    " total_credit REAL NOT NULL DEFAULT 0,"
    " expavg_credit REAL NOT NULL DEFAULT 0,"
    " expavg_time REAL NOT NULL DEFAULT 0,"
    " _error_rate REAL NOT NULL DEFAULT 0,"
    " _max_results_day INTEGER NOT NULL DEFAULT 0,"
    " nresults_today INTEGER NOT NULL DEFAULT 0,"
    " nresults_day INTEGER NOT NULL DEFAULT 0);" /* volsched */
    "CREATE INDEX host_user ON host(userid, host_cpid);",

    "CREATE TABLE workunit ("
    " id INTEGER PRIMARY KEY,"
    " create_time INTEGER NOT NULL DEFAULT 0,"
    " appid INTEGER NOT NULL REFERENCES app(id),"
    " name TEXT NOT NULL UNIQUE,"
    " xml_doc TEXT NOT NULL,"
    " batch INTEGER NOT NULL DEFAULT 0,"
    " rsc_fpops_est REAL NOT NULL DEFAULT 0,"
    " rsc_fpops_bound REAL NOT NULL DEFAULT 0,"
    " rsc_memory_bound REAL NOT NULL DEFAULT 0,"
    " rsc_disk_bound REAL NOT NULL DEFAULT 0,"
    " rsc_bandwidth_bound REAL NOT NULL DEFAULT 0,"
    " need_validate INTEGER NOT NULL DEFAULT 0,"
    " canonical_resultid INTEGER NOT NULL DEFAULT 0,"
    " canonical_credit REAL NOT NULL DEFAULT 0,"
    " transition_time INTEGER NOT NULL DEFAULT 0,"
    " delay_bound INTEGER NOT NULL DEFAULT 0,"
    " error_mask INTEGER NOT NULL DEFAULT 0,"
    " file_delete_state INTEGER NOT NULL DEFAULT 0,"
    " assimilate_state INTEGER NOT NULL DEFAULT 0,"
    " hr_class INTEGER NOT NULL DEFAULT 0,"
    " opaque REAL NOT NULL DEFAULT 0,"
    " priority INTEGER NOT NULL DEFAULT 0,"
    " app_version_id INTEGER NOT NULL DEFAULT 0,"
    " app_version_num INTEGER NOT NULL DEFAULT 0,"
    " transitioner_flags INTEGER NOT NULL DEFAULT 0,"
    " size_class INTEGER NOT NULL DEFAULT -1,"
    " keywords TEXT NOT NULL DEFAULT '',"
    " min_quorum INTEGER NOT NULL DEFAULT 1,"
    " target_nresults INTEGER NOT NULL DEFAULT 1,"
    " max_error_results INTEGER NOT NULL DEFAULT 1,"
    " max_total_results INTEGER NOT NULL DEFAULT 1,"
    " max_success_results INTEGER NOT NULL DEFAULT 1,"
    " result_template_file TEXT NOT NULL DEFAULT '',"
    " mod_time INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX wu_val ON workunit(appid, need_validate);"
    "CREATE INDEX wu_timeout ON workunit(transition_time);"
    "CREATE INDEX wu_filedel ON workunit(file_delete_state);"
    "CREATE INDEX wu_assim ON workunit(appid, assimilate_state);",

    "CREATE TABLE result ("
    " id INTEGER PRIMARY KEY,"
    " create_time INTEGER NOT NULL DEFAULT 0,"
    " workunitid INTEGER NOT NULL REFERENCES workunit(id),"
    " name TEXT NOT NULL UNIQUE,"
    " appid INTEGER NOT NULL,"
    " batch INTEGER NOT NULL DEFAULT 0,"
    " server_state INTEGER NOT NULL DEFAULT 2,"
    " outcome INTEGER NOT NULL DEFAULT 0,"
    " client_state INTEGER NOT NULL DEFAULT 0,"
    " validate_state INTEGER NOT NULL DEFAULT 0,"
    " file_delete_state INTEGER NOT NULL DEFAULT 0,"
    " hostid INTEGER NOT NULL DEFAULT 0,"
    " userid INTEGER NOT NULL DEFAULT 0,"
    " teamid INTEGER NOT NULL DEFAULT 0,"
    " report_deadline INTEGER NOT NULL DEFAULT 0,"
    " sent_time INTEGER NOT NULL DEFAULT 0,"
    " received_time INTEGER NOT NULL DEFAULT 0,"
    " xml_doc_in TEXT,"
    " xml_doc_out TEXT,"
    " stderr_out TEXT,"
    " exit_status INTEGER NOT NULL DEFAULT 0,"
    " cpu_time REAL NOT NULL DEFAULT 0,"
    " elapsed_time REAL NOT NULL DEFAULT 0,"
    " claimed_credit REAL NOT NULL DEFAULT 0,"
    " granted_credit REAL NOT NULL DEFAULT 0,"
    " flops_estimate REAL NOT NULL DEFAULT 0,"
    " app_version_id INTEGER NOT NULL DEFAULT 0,"
    " app_version_num INTEGER NOT NULL DEFAULT 0,"
    " random INTEGER NOT NULL DEFAULT 0,"
    " priority INTEGER NOT NULL DEFAULT 0,"
    " size_class INTEGER NOT NULL DEFAULT -1,"
    " opaque REAL NOT NULL DEFAULT 0,"
    " peak_working_set_size REAL NOT NULL DEFAULT 0,"
    " peak_swap_size REAL NOT NULL DEFAULT 0,"
    " peak_disk_usage REAL NOT NULL DEFAULT 0,"
    " runtime_outlier INTEGER NOT NULL DEFAULT 0,"
    " mod_time INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX res_wuid ON result(workunitid);"
    /* The feeder's scan: UNSENT results in id order. */
    "CREATE INDEX ind_res_st ON result(server_state, id);"
    /* BOINC also indexes (appid, server_state) and (userid, id); every index
     * on a column the scheduler's claim changes costs page writes on the
     * hottest path, so only the ones a query here uses exist. Counting
     * unsent results per app walks ind_res_st. */
    "CREATE INDEX res_hostid ON result(hostid, id);"
    "CREATE INDEX res_filedel ON result(file_delete_state);",

    "CREATE TABLE assignment ("
    " id INTEGER PRIMARY KEY,"
    " create_time INTEGER NOT NULL DEFAULT 0,"
    " target_id INTEGER NOT NULL,"
    " target_type INTEGER NOT NULL,"
    " multi INTEGER NOT NULL,"
    " workunitid INTEGER NOT NULL REFERENCES workunit(id),"
    " resultid INTEGER NOT NULL DEFAULT 0);" /* BOINC-COMPAT: deprecated, kept 0 */
    "CREATE INDEX asgn_target ON assignment(target_type, target_id);"
    "CREATE INDEX asgn_wu ON assignment(workunitid);",
    NULL,
};

/*
 * Version 2 (the back-end daemons): BOINC's host_app_version (the
 * per host and app version daily quota the validator and transitioner
 * adjust), volsched's daemon_status (each daemon's last pass and last
 * error, read by `volsched status`), and the indexes of the validator's and
 * assimilator's queues that were already in BOINC's constraints.sql.
 */
const char *const vs_store__schema_v2[] = {
    /* BOINC-COMPAT: db/schema.sql host_app_version, the columns volsched uses. */
    "CREATE TABLE host_app_version ("
    " host_id INTEGER NOT NULL,"
    " app_version_id INTEGER NOT NULL,"
    " max_jobs_per_day INTEGER NOT NULL DEFAULT 0,"
    " n_jobs_today INTEGER NOT NULL DEFAULT 0,"
    " consecutive_valid INTEGER NOT NULL DEFAULT 0,"
    " turnaround_n REAL NOT NULL DEFAULT 0,"
    " turnaround_avg REAL NOT NULL DEFAULT 0,"
    " PRIMARY KEY (host_id, app_version_id));",

    /* volsched */
    "CREATE TABLE daemon_status ("
    " name TEXT PRIMARY KEY,"
    " last_run INTEGER NOT NULL DEFAULT 0,"
    " last_work INTEGER NOT NULL DEFAULT 0,"
    " total_work INTEGER NOT NULL DEFAULT 0,"
    " last_error_time INTEGER NOT NULL DEFAULT 0,"
    " last_error TEXT NOT NULL DEFAULT '',"
    " retry_time INTEGER NOT NULL DEFAULT 0);",
    NULL,
};

/*
 * Version 3 (the scheduler's speed): the result indexes the scheduler's
 * claim and report move become partial indexes of the one state their
 * queries ask. A full (server_state, id) index moved every result twice
 * (UNSENT -> IN_PROGRESS at the claim, IN_PROGRESS -> OVER at the report),
 * each move a delete in one leaf and an insert in another, and a full
 * (hostid, id) index moved it out of the hostid = 0 run at the claim. The
 * partial ones change once per claim and once per report, in leaves that
 * the RPC's other claim or report entry usually shares (a host's entries
 * are adjacent): about three pages fewer per RPC (WAL frames).
 *
 * Who used the old indexes: the feeder's scan of UNSENT results in id order
 * and the count of unsent results of live workunits (res_unsent), a host's
 * IN_PROGRESS results (res_host_ip), the store's count of results in one
 * state (UNSENT and IN_PROGRESS use these; other states are operator and
 * bench counts, which scan). Results by workunit, the HOST_HAS_WU check and
 * the file deleter keep res_wuid and res_filedel.
 */
const char *const vs_store__schema_v3[] = {
    "DROP INDEX IF EXISTS ind_res_st;"
    "CREATE INDEX IF NOT EXISTS res_unsent ON result(id) WHERE server_state = 2;"
    "DROP INDEX IF EXISTS res_hostid;"
    "CREATE INDEX IF NOT EXISTS res_host_ip ON result(hostid, id) WHERE server_state = 4;",
    NULL,
};

/*
 * Version 4 (assigned work and priorities).
 *
 * result.assign_slot (volsched): 0 for ordinary results; 1..target_nresults
 * for the instances of a targeted workunit; -1 for broadcast instances (see
 * VS_SP_ASGN_SLOT_BROADCAST). Two unique partial indexes make BOINC's
 * bug #1937 (two scheduler requests of one user's hosts both adding an
 * instance of a targeted job) impossible whatever the isolation level of
 * the backend: at most one live (INACTIVE, UNSENT, IN_PROGRESS) or
 * successful (OVER/SUCCESS, not INVALID) instance per slot, and one
 * broadcast instance per (workunit, host). An instance that fails leaves
 * the first index by itself, which frees its slot for the retry.
 * BOINC-COMPAT numbers: server_state 1, 2, 4, 5; outcome 1; validate 2.
 *
 * The feeder's scan reads UNSENT results by priority (higher first), then
 * id, as BOINC's feeder orders its query: res_unsent_prio replaces
 * res_unsent (one partial index of the UNSENT state, as before, so the
 * claim moves no more index entries than it did).
 */
const char *const vs_store__schema_v4[] = {
    "ALTER TABLE result ADD COLUMN assign_slot INTEGER NOT NULL DEFAULT 0;"
    "CREATE UNIQUE INDEX IF NOT EXISTS res_asgn_slot ON result(workunitid, assign_slot) WHERE "
    "assign_slot > 0 "
    "AND (server_state IN (1, 2, 4) OR (server_state = 5 AND outcome = 1 AND "
    "validate_state <> 2));"
    "CREATE UNIQUE INDEX IF NOT EXISTS res_asgn_bcast ON result(workunitid, hostid) WHERE "
    "assign_slot = -1;"
    "DROP INDEX IF EXISTS res_unsent;"
    "CREATE INDEX IF NOT EXISTS res_unsent_prio ON result(priority DESC, id) WHERE server_state = "
    "2;",
    NULL,
};

/*
 * Version 5 (several `volsched serve` on one store): the job
 * cache's lease of a result. An instance's feeder leases each UNSENT result
 * before it loads it (lease_owner: the instance's random id, lease_until:
 * the expiry, seconds), renews the leases of the results it holds, and its
 * claim sends only a result it leases or whose lease has expired: no two
 * instances hold or send one result, and the results of an instance that
 * died return to the others once its leases run out. 0/0 is "never leased".
 * Not indexed: both columns are read with the row the feeder's index
 * (res_unsent_prio) or the claim's primary key has found already.
 */
const char *const vs_store__schema_v5[] = {
    "ALTER TABLE result ADD COLUMN lease_owner INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE result ADD COLUMN lease_until INTEGER NOT NULL DEFAULT 0;",
    NULL,
};

/*
 * Version 6 (the file deleter removed shared inputs): which
 * workunits name which input files. wu_file has a row per (input file
 * name, workunit), made with the workunit (store_files.c reads the
 * <file_info>s of its xml_doc), dropped by the file deleter once it has
 * dealt with that workunit's inputs (the rows of the files it keeps,
 * <no_delete/> or a "nodelete" workunit's, stay) and by a purge. A file is
 * in use while a row names it or an app version has a file of that name
 * (app_version_file.name, indexed here for that question). The migration
 * also fills wu_file from the workunits already in the store (store_db.c).
 */
const char *const vs_store__schema_v6[] = {
    /* WITHOUT ROWID: the primary key is the table (one b-tree less to
     * write per row); PostgreSQL's dialect drops the clause. */
    "CREATE TABLE IF NOT EXISTS wu_file ("
    " name TEXT NOT NULL,"
    " workunitid INTEGER NOT NULL,"
    " PRIMARY KEY (name, workunitid)) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS wu_file_wu ON wu_file(workunitid);"
    "CREATE INDEX IF NOT EXISTS avf_name ON app_version_file(name);",
    NULL,
};

/*
 * Version 7 (issue 36, volunteers join on their own): the account's
 * password, as BOINC's user.passwd_hash column, but never the client's md5
 * itself: "pbkdf2-sha256$ITER$SALT$HASH" of it (server/acct_passwd.h); ""
 * for an account made by `volsched user add` (it logs in with its key).
 * The team's description (BOINC's team.description), shown on its page.
 */
const char *const vs_store__schema_v7[] = {
    "ALTER TABLE \"user\" ADD COLUMN passwd_hash TEXT NOT NULL DEFAULT '';",
    "ALTER TABLE team ADD COLUMN description TEXT NOT NULL DEFAULT '';",
    NULL,
};

/*
 * Version 8 (issue 36's follow-up: sessions that end): the volunteers' web
 * site's sessions, one row per logged-in cookie. id is the HMAC of the
 * cookie's value under the site's key (server/site.c), never the cookie
 * itself; a cookie whose row is gone (logged out, the password changed,
 * the account deleted) or past expire_time logs nobody in, whatever its
 * signature says.
 */
const char *const vs_store__schema_v8[] = {
    "CREATE TABLE IF NOT EXISTS site_session ("
    " id TEXT PRIMARY KEY,"
    " userid INTEGER NOT NULL,"
    " create_time INTEGER NOT NULL,"
    " expire_time INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS site_session_user ON site_session(userid);",
    NULL,
};

/*
 * Version 9 (issue 39, credit): the team's recent-average time (BOINC's
 * team.expavg_time, which the user and host rows had already), and
 * credit_pfc, the adaptive credit scheme's running averages of a result's
 * peak-FLOP count per estimated FLOP (BOINC keeps them as pfc_n/pfc_avg in
 * app_version and host_app_version): hostid 0 is an app version's average
 * over all its hosts, another hostid that host's own on the version. appid
 * lets the validator find an app's most efficient version in one query.
 * Indexes on total_credit and expavg_credit for the leaderboards.
 */
const char *const vs_store__schema_v9[] = {
    "ALTER TABLE team ADD COLUMN expavg_time REAL NOT NULL DEFAULT 0;"
    "CREATE TABLE IF NOT EXISTS credit_pfc ("
    " app_version_id INTEGER NOT NULL,"
    " hostid INTEGER NOT NULL,"
    " appid INTEGER NOT NULL,"
    " pfc_n REAL NOT NULL DEFAULT 0,"
    " pfc_avg REAL NOT NULL DEFAULT 0,"
    " PRIMARY KEY (app_version_id, hostid)) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS credit_pfc_app ON credit_pfc(appid, hostid);",
    /* BOINC-COMPAT: its user_tot/user_avg (and host's, team's) indexes: the
     * web site's leaderboards read a page of the highest without a sort. */
    "CREATE INDEX IF NOT EXISTS user_tot ON \"user\"(total_credit);"
    "CREATE INDEX IF NOT EXISTS user_avg ON \"user\"(expavg_credit);"
    "CREATE INDEX IF NOT EXISTS host_tot ON host(total_credit);"
    "CREATE INDEX IF NOT EXISTS host_avg ON host(expavg_credit);"
    "CREATE INDEX IF NOT EXISTS team_tot ON team(total_credit);"
    "CREATE INDEX IF NOT EXISTS team_avg ON team(expavg_credit);",
    NULL,
};

/*
 * Version 10 (issue 38, remote job submission). BOINC-COMPAT tables of its
 * submission system (db/schema.sql batch, user_submit, user_submit_app,
 * job_file, batch_file_assoc), with BOINC's column names:
 *  - batch: a submitter's batch (state 0 INIT, 1 IN_PROGRESS, 2 COMPLETE,
 *    3 ABORTED, 4 RETIRED); volsched adds own_hosts (its jobs run only on
 *    the submitter's hosts) and priority.
 *  - user_submit: who may submit (submit_all: any app; else the apps in
 *    user_submit_app) and the quota that sets a submitter's share.
 *  - job_file / batch_file_assoc: files uploaded through job_file.php and
 *    the batches that use them (a file goes when no batch refers to it).
 * workunit(batch) is indexed for the batch queries (partial: the operator's
 * create_work jobs have batch 0).
 */
const char *const vs_store__schema_v10[] = {
    "CREATE TABLE IF NOT EXISTS batch ("
    " id INTEGER PRIMARY KEY,"
    " user_id INTEGER NOT NULL DEFAULT 0,"
    " create_time INTEGER NOT NULL DEFAULT 0,"
    " logical_start_time REAL NOT NULL DEFAULT 0,"
    " logical_end_time REAL NOT NULL DEFAULT 0,"
    " est_completion_time REAL NOT NULL DEFAULT 0,"
    " njobs INTEGER NOT NULL DEFAULT 0,"
    " fraction_done REAL NOT NULL DEFAULT 0,"
    " nerror_jobs INTEGER NOT NULL DEFAULT 0,"
    " state INTEGER NOT NULL DEFAULT 0,"
    " completion_time INTEGER NOT NULL DEFAULT 0,"
    " credit_estimate REAL NOT NULL DEFAULT 0,"
    " credit_canonical REAL NOT NULL DEFAULT 0,"
    " credit_total REAL NOT NULL DEFAULT 0,"
    " name TEXT NOT NULL DEFAULT '',"
    " app_id INTEGER NOT NULL DEFAULT 0,"
    " project_state INTEGER NOT NULL DEFAULT 0,"
    " description TEXT NOT NULL DEFAULT '',"
    " expire_time REAL NOT NULL DEFAULT 0,"
    " own_hosts INTEGER NOT NULL DEFAULT 0,"
    " priority INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX IF NOT EXISTS batch_user ON batch(user_id);"
    "CREATE INDEX IF NOT EXISTS batch_name ON batch(name);"
    "CREATE TABLE IF NOT EXISTS user_submit ("
    " user_id INTEGER PRIMARY KEY,"
    " quota REAL NOT NULL DEFAULT 1,"
    " logical_start_time REAL NOT NULL DEFAULT 0,"
    " submit_all INTEGER NOT NULL DEFAULT 0,"
    " manage_all INTEGER NOT NULL DEFAULT 0,"
    " max_jobs_in_progress INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS user_submit_app ("
    " user_id INTEGER NOT NULL,"
    " app_id INTEGER NOT NULL,"
    " manage INTEGER NOT NULL DEFAULT 0,"
    " PRIMARY KEY (user_id, app_id)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS job_file ("
    " id INTEGER PRIMARY KEY,"
    " name TEXT NOT NULL UNIQUE,"
    " create_time INTEGER NOT NULL DEFAULT 0,"
    " delete_time INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS batch_file_assoc ("
    " job_file_id INTEGER NOT NULL,"
    " batch_id INTEGER NOT NULL,"
    " PRIMARY KEY (job_file_id, batch_id)) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS bfa_batch ON batch_file_assoc(batch_id);"
    "CREATE INDEX IF NOT EXISTS wu_batch ON workunit(batch, id) WHERE batch <> 0;",
    NULL,
};
