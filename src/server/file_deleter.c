/* The file deleter (see file_deleter.h). */
#include "server/file_deleter.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "server/daemon_util.h"
#include "volsched/alloc.h"
#include "volsched/layout.h"
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

/* Deletes the files xml names in the download (inputs) or upload hierarchy. */
static int delete_files(struct pass *p, const char *owner, const char *xml, bool inputs)
{
    struct vs_daemon_file files[VS_DAEMON_MAX_FILES];
    size_t n = 0;
    int rc = vs_daemon_files(xml, &p->d.arena, files, &n);
    if (rc) {
        vs_daemon_msg(p->st.last_error, sizeof(p->st.last_error), "%s: unreadable file list: %s",
                      owner, vs_strerror(rc));
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        if (files[i].no_delete)
            continue;
        char path[VS_PATH_MAX + VS_NAME_MAX];
        rc = inputs ? vs_project_download_path(p->d.cfg, files[i].name, false, path, sizeof(path))
                    : vs_project_upload_path(p->d.cfg, files[i].name, false, path, sizeof(path));
        if (rc == 0)
            rc = remove_one(p, path);
        if (rc == 0 && inputs) {
            /* BOINC-COMPAT: the checksum and compressed copies beside it. */
            static const char *const sib[] = {".md5", ".gz"};
            for (size_t k = 0; k < 2 && rc == 0; k++) {
                char sp[sizeof(path) + 8];
                int m = snprintf(sp, sizeof(sp), "%s%s", path, sib[k]);
                rc = m < 0 || (size_t)m >= sizeof(sp) ? VS_ELIMIT : remove_one(p, sp);
            }
        }
        if (rc) {
            vs_daemon_msg(p->st.last_error, sizeof(p->st.last_error), "%s: cannot delete %s: %s",
                          owner, files[i].name, vs_strerror(rc));
            VS_LOG(p->d.log, VS_LOG_WARN, "file_deleter: %s", p->st.last_error);
            return rc;
        }
    }
    return 0;
}

/* Sets the row's file_delete_state if it is still READY (one transaction). */
static int set_state(struct pass *p, bool wu, int64_t id, int state)
{
    int rc = vs_store_begin(p->d.s);
    if (rc)
        return rc;
    if (wu) {
        struct vs_workunit w;
        memset(&w, 0, sizeof(w));
        rc = vs_store_workunit_get(p->d.s, id, &w);
        if (rc == 0 && w.file_delete_state == VS_FILE_DELETE_READY) {
            w.file_delete_state = state;
            rc = vs_store_workunit_update(p->d.s, &w);
        }
        vs_workunit_cleanup(&w);
    } else {
        struct vs_result r;
        memset(&r, 0, sizeof(r));
        rc = vs_store_result_get(p->d.s, id, &r);
        if (rc == 0 && r.file_delete_state == VS_FILE_DELETE_READY) {
            r.file_delete_state = state;
            rc = vs_store_result_update(p->d.s, &r);
        }
        vs_result_cleanup(&r);
    }
    if (rc == VS_ENOTFOUND)
        rc = 0;
    return vs_daemon_txn_end(p->d.s, rc);
}

static int on_wu(void *ctx, struct vs_workunit *wu, struct vs_result *res, size_t n)
{
    struct pass *p = ctx;
    (void)res;
    (void)n;
    vs_arena_reset(&p->d.arena);
    /* BOINC-COMPAT: a WU named "...nodelete..." keeps its inputs. */
    int rc = strstr(wu->name, "nodelete") ? 0 : delete_files(p, wu->name, wu->xml_doc, true);
    if (rc)
        p->st.nerrors++;
    p->st.nwus++;
    return set_state(p, true, wu->id, rc ? VS_FILE_DELETE_ERROR : VS_FILE_DELETE_DONE);
}

static int on_result(void *ctx, const struct vs_result *r)
{
    struct pass *p = ctx;
    vs_arena_reset(&p->d.arena);
    int rc = delete_files(p, r->name, r->xml_doc_in, false);
    if (rc)
        p->st.nerrors++;
    p->st.nresults++;
    return set_state(p, false, r->id, rc ? VS_FILE_DELETE_ERROR : VS_FILE_DELETE_DONE);
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
