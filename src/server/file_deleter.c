/* The file deleter (see file_deleter.h). */
#include "volsched/file_deleter.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/daemon_util.h"
#include "volsched/layout.h"
#include "volsched/loc_dirs.h"
#include "volsched/locality.h"
#include "volsched/log.h"
#include "volsched/str.h"

#define DEFAULT_LIMIT 500
#define NAME          "file_deleter"

struct pass {
    struct vs_daemon_pass d; /* store, config, now, log, arena */
    struct vs_file_deleter_stats st;
};

/* Removes path; 0 if it is gone (or never was). */
static int remove_one(struct pass *p, const char *path)
{
    if (unlink(path) == 0) {
        p->st.nfiles++;
        return 0;
    }
    return errno == ENOENT ? 0 : -errno;
}

/* Removes a workunit's input file name from the download hierarchy, with
 * its checksum and compressed copies beside it (BOINC-COMPAT). */
static int remove_input(struct pass *p, const char *name)
{
    char path[VS_PATH_MAX + VS_NAME_MAX];
    int rc = vs_project_download_path(p->d.cfg, name, false, path, sizeof(path));
    if (rc == 0)
        rc = remove_one(p, path);
    static const char *const sib[] = {".md5", ".gz"};
    for (size_t k = 0; k < 2 && rc == 0; k++) {
        char sp[sizeof(path) + 8];
        int m = snprintf(sp, sizeof(sp), "%s%s", path, sib[k]);
        rc = m < 0 || (size_t)m >= sizeof(sp) ? VS_ELIMIT : remove_one(p, sp);
    }
    return rc;
}

/* The files xml lists (vs_daemon_files); a failure is recorded as the
 * pass's last error, naming owner. */
static int files_of(struct pass *p, const char *owner, const char *xml,
                    struct vs_daemon_file *files, size_t *n)
{
    int rc = vs_daemon_files(xml, &p->d.arena, files, n);
    if (rc)
        vs_daemon_msg(p->st.last_error, sizeof(p->st.last_error), "%s: unreadable file list: %s",
                      owner, vs_strerror(rc));
    return rc;
}

/* Deletes a result's output files from the upload hierarchy. */
static int delete_outputs(struct pass *p, const struct vs_result *r)
{
    struct vs_daemon_file files[VS_DAEMON_MAX_FILES];
    size_t n = 0;
    int rc = files_of(p, r->name, r->xml_doc_in, files, &n);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        if (files[i].no_delete)
            continue;
        char path[VS_PATH_MAX + VS_NAME_MAX];
        rc = vs_project_upload_path(p->d.cfg, files[i].name, false, path, sizeof(path));
        if (rc == 0)
            rc = remove_one(p, path);
        if (rc) {
            vs_daemon_msg(p->st.last_error, sizeof(p->st.last_error), "%s: cannot delete %s: %s",
                          r->name, files[i].name, vs_strerror(rc));
            VS_LOG(p->d.log, VS_LOG_WARN, "file_deleter: %s", p->st.last_error);
            return rc;
        }
    }
    return 0;
}

/*
 * Locality scheduling (docs/locality.md): more work may still be made for
 * the big file f of a workunit named f__*, and that work names f as an
 * input already staged: keep f while the scheduler has asked the
 * on-demand generator for work for it (need_work/f), or while on-demand
 * generation is on and the generator has not said that no more will come
 * (no_work_available/f), as the scheduler keeps it on hosts.
 */
static bool locality_keeps(const struct vs_project_config *cfg, const char *wu_name, const char *f)
{
    char lf[VS_LOC_NAME_MAX];
    if (vs_loc_file_of_wu(wu_name, lf, sizeof(lf)) != 0 || strcmp(lf, f) != 0)
        return false;
    if (vs_loc_exists(cfg->dir, VS_LOC_NEED_WORK, f))
        return true;
    return cfg->locality_scheduling && cfg->locality_scheduling_wait_period > 0 &&
           !vs_loc_exists(cfg->dir, VS_LOC_NO_WORK_AVAILABLE, f);
}

/*
 * Deals with workunit wu's input files, inside the write transaction that
 * then records the outcome: each one that nothing else uses (no other
 * workunit whose inputs are not dealt with yet, no app version, no
 * locality work to come) is deleted, and the workunit's use of it dropped.
 * Files it keeps for good (<no_delete/>, or all of a "nodelete" workunit)
 * stay in use. Returns a store error (the transaction is to be rolled
 * back), else 0 with *out_file_rc the first file problem (the workunit
 * becomes ERROR and is tried again; the uses of the files not yet dealt
 * with stay).
 */
static int delete_inputs(struct pass *p, const struct vs_workunit *wu, int *out_file_rc)
{
    *out_file_rc = 0;
    struct vs_daemon_file files[VS_DAEMON_MAX_FILES];
    size_t n = 0;
    int frc = files_of(p, wu->name, wu->xml_doc, files, &n);
    if (frc) {
        *out_file_rc = frc;
        return 0;
    }
    /* BOINC-COMPAT: a WU named "...nodelete..." keeps its inputs. */
    bool keep_all = strstr(wu->name, "nodelete") != NULL;
    for (size_t i = 0; i < n && !keep_all; i++) {
        const char *name = files[i].name;
        if (files[i].no_delete)
            continue;
        bool used = false;
        int rc = vs_store_file_in_use(p->d.s, name, wu->id, &used);
        if (rc)
            return rc;
        if (used || locality_keeps(p->d.cfg, wu->name, name)) {
            p->st.nkept++;
        } else if ((frc = remove_input(p, name)) != 0) {
            vs_daemon_msg(p->st.last_error, sizeof(p->st.last_error), "%s: cannot delete %s: %s",
                          wu->name, name, vs_strerror(frc));
            VS_LOG(p->d.log, VS_LOG_WARN, "file_deleter: %s", p->st.last_error);
            *out_file_rc = frc;
            return 0;
        }
        if ((rc = vs_store_file_use_drop(p->d.s, wu->id, name)) != 0)
            return rc;
    }
    return 0;
}

/* Sets result id's file_delete_state if it is still READY (one transaction). */
static int set_result_state(struct pass *p, int64_t id, int state)
{
    int rc = vs_store_begin(p->d.s);
    if (rc)
        return rc;
    struct vs_result r;
    memset(&r, 0, sizeof(r));
    rc = vs_store_result_get(p->d.s, id, &r);
    if (rc == 0 && r.file_delete_state == VS_FILE_DELETE_READY) {
        r.file_delete_state = state;
        rc = vs_store_result_update(p->d.s, &r);
    }
    vs_result_cleanup(&r);
    if (rc == VS_ENOTFOUND)
        rc = 0;
    return vs_daemon_txn_end(p->d.s, rc);
}

/*
 * One workunit, in one write transaction: re-read (another deleter may
 * have handled it), decide and delete its inputs, record the outcome.
 * Store writers run one at a time, so no create_work adds a use of one of
 * its files between the decision and the deletion (store.h,
 * vs_store_file_in_use).
 */
static int on_wu(void *ctx, struct vs_workunit *wu, struct vs_result *res, size_t n)
{
    struct pass *p = ctx;
    (void)res;
    (void)n;
    vs_arena_reset(&p->d.arena);
    int rc = vs_store_begin(p->d.s);
    if (rc)
        return rc;
    struct vs_workunit w;
    memset(&w, 0, sizeof(w));
    rc = vs_store_workunit_get(p->d.s, wu->id, &w);
    if (rc == 0 && w.file_delete_state == VS_FILE_DELETE_READY) {
        int frc = 0;
        rc = delete_inputs(p, &w, &frc);
        if (rc == 0) {
            p->st.nwus++;
            p->st.nerrors += frc != 0;
            w.file_delete_state = frc ? VS_FILE_DELETE_ERROR : VS_FILE_DELETE_DONE;
            rc = vs_store_workunit_update(p->d.s, &w);
        }
    }
    vs_workunit_cleanup(&w);
    if (rc == VS_ENOTFOUND)
        rc = 0;
    return vs_daemon_txn_end(p->d.s, rc);
}

static int on_result(void *ctx, const struct vs_result *r)
{
    struct pass *p = ctx;
    vs_arena_reset(&p->d.arena);
    int rc = delete_outputs(p, r);
    if (rc)
        p->st.nerrors++;
    p->st.nresults++;
    return set_result_state(p, r->id, rc ? VS_FILE_DELETE_ERROR : VS_FILE_DELETE_DONE);
}

/* Puts failed deletions back to READY once per file_deleter_retry_secs. */
static int maybe_retry(struct pass *p)
{
    struct vs_daemon_status d;
    int rc = vs_store_daemon_status_get(p->d.s, NAME, &d);
    if (rc == VS_ENOTFOUND) {
        memset(&d, 0, sizeof(d));
        rc = vs_strlcpy(d.name, NAME, sizeof(d.name));
    }
    if (rc)
        return rc;
    if (p->d.now < d.retry_time)
        return 0;
    if ((rc = vs_store_file_delete_retry(p->d.s, &p->st.nretried)) != 0)
        return rc;
    d.retry_time =
        p->d.now +
        (p->d.cfg->file_deleter_retry_secs > 0 ? p->d.cfg->file_deleter_retry_secs : 3600);
    return vs_store_daemon_status_put(p->d.s, &d);
}

int vs_file_deleter_pass(struct vs_store *s, const struct vs_project_config *cfg, int64_t now,
                         int limit, struct vs_log *log, struct vs_file_deleter_stats *stats)
{
    struct pass p;
    memset(&p, 0, sizeof(p));
    int rc = vs_daemon_pass_begin(&p.d, s, cfg, now, log);
    if (rc)
        return rc;
    if (limit <= 0)
        limit = DEFAULT_LIMIT;
    rc = maybe_retry(&p);
    if (rc == 0)
        rc = vs_store_wus_in_queue(s, VS_WU_QUEUE_FILE_DELETE, 0, limit, on_wu, &p);
    if (rc == 0)
        rc = vs_store_results_to_delete(s, 3 * limit, on_result, &p);
    rc = vs_daemon_pass_end(&p.d, rc, p.st.nwus + p.st.nresults, p.st.last_error,
                            sizeof(p.st.last_error));
    if (stats)
        *stats = p.st;
    return rc;
}
