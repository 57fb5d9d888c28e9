/*
 * The minimal transitioner (see transitioner.h). One workunit at a time, each
 * in its own transaction, following BOINC's handle_wu() in the order of
 * ../shared/docs/boinc-server-notes.md section 1.6: count and time out,
 * error limits, replication arithmetic, then create results or wind down,
 * then the next transition_time.
 */
#include "volsched/transitioner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "volsched/alloc.h"
#include "volsched/daemon_util.h"
#include "volsched/locality.h"
#include "volsched/log.h"
#include "volsched/sign.h"
#include "volsched/str.h"
#include "volsched/templates.h"

#define DEFAULT_LIMIT    1000
#define RETRY_LATER_SECS 3600

struct pass {
    struct vs_daemon_pass d;        /* store, config, now, log, arena */
    struct vs_sign_key *upload_key; /* NULL: results go out without certificates */
    struct vs_transitioner_stats st;
    /* The last app looked up: is it a full-locality one (its results are
     * placed next to the other results of their file)? */
    int64_t loc_appid;
    bool loc_full;
    /* Workunits handled in the open transaction (each in a savepoint of
     * its own), and the figures before it, for a failed commit. */
    int batch;
    struct vs_transitioner_stats batch_st;
};

/*
 * Workunits per transaction. One transaction each made a commit (its WAL
 * frames, the lock) the larger part of a workunit's cost; a few together
 * share the pages they touch. Kept small: the scheduler's writes wait
 * while it is open.
 */
#define TRANSITION_BATCH 16

/* Commits the batch's transaction; on failure its workunits' figures go
 * (their transitions did not happen: the next pass redoes them). */
static int end_batch(struct pass *p)
{
    if (p->batch == 0)
        return 0;
    p->batch = 0;
    int rc = vs_store_commit(p->d.s);
    if (rc)
        p->st = p->batch_st;
    return rc;
}

/* The locality file whose results wu's go next to, in out; "" for none. */
static void near_file(struct pass *p, const struct vs_workunit *wu, char *out, size_t size)
{
    out[0] = '\0';
    if (wu->appid != p->loc_appid) {
        struct vs_app app;
        p->loc_appid = wu->appid;
        p->loc_full = vs_store_app_get(p->d.s, wu->appid, &app) == 0 &&
                      app.locality_scheduling == VS_LOC_APP_FULL;
    }
    if (p->loc_full && vs_loc_file_of_wu(wu->name, out, size) != 0)
        out[0] = '\0';
}

/* The numeric suffix after the last '_' of a result name, or -1. */
static long name_suffix(const char *name)
{
    const char *u = strrchr(name, '_');
    if (!u || !u[1])
        return -1;
    char *end;
    long v = strtol(u + 1, &end, 10);
    return *end == '\0' && v >= 0 ? v : -1;
}

static uint32_t random_u32(void)
{
    uint32_t v = 0;
    if (getrandom(&v, sizeof(v), 0) != sizeof(v))
        v = (uint32_t)rand();
    return v & 0x7fffffff;
}

static int create_results(struct pass *p, const struct vs_workunit *wu, long first_suffix,
                          int needed)
{
    char path[VS_PATH_MAX + VS_NAME_MAX + 2];
    int n = snprintf(path, sizeof(path), "%s/%s", p->d.cfg->dir, wu->result_template_file);
    if (n < 0 || (size_t)n >= sizeof(path))
        return VS_ELIMIT;
    char *tmpl = NULL;
    size_t len = 0;
    int rc = vs_template_read(path, &tmpl, &len);
    if (rc) {
        VS_LOG(p->d.log, VS_LOG_ERROR, "transitioner: WU %s: cannot read result template %s: %s",
               wu->name, path, vs_strerror(rc));
        return rc;
    }
    char near[VS_LOC_NAME_MAX];
    near_file(p, wu, near, sizeof(near));
    for (int j = 0; j < needed && rc == 0; j++) {
        struct vs_result r;
        memset(&r, 0, sizeof(r));
        n = snprintf(r.name, sizeof(r.name), "%s_%ld", wu->name, first_suffix + j);
        if (n < 0 || (size_t)n >= sizeof(r.name)) {
            rc = VS_ELIMIT;
            break;
        }
        char err[256] = "";
        uint32_t rnd = random_u32();
        rc = vs_template_output(tmpl, len, r.name, rnd, p->d.cfg->upload_url, p->upload_key,
                                &r.xml_doc_in, err, sizeof(err));
        if (rc) {
            VS_LOG(p->d.log, VS_LOG_ERROR, "transitioner: WU %s: result template %s: %s", wu->name,
                   path, err);
            break;
        }
        r.create_time = p->d.now;
        r.workunitid = wu->id;
        r.appid = wu->appid;
        r.batch = wu->batch;
        r.server_state = VS_RESULT_SERVER_STATE_UNSENT;
        r.random = (int)(rnd & 0x7fffffff);
        r.priority = wu->priority;
        r.size_class = wu->size_class;
        r.opaque = wu->opaque;
        rc = vs_store_result_add_near(p->d.s, &r, near[0] ? near : NULL);
        vs_result_cleanup(&r);
        if (rc == 0)
            p->st.nresults_created++;
    }
    vs_free(tmpl);
    return rc;
}

/* BOINC-COMPAT: lib/common_defs.h, a user's abort from the manager. */
#define EXIT_ABORTED_VIA_GUI 203

static bool is_unsent(const struct vs_result *r)
{
    return r->server_state == VS_RESULT_SERVER_STATE_UNSENT ||
           r->server_state == VS_RESULT_SERVER_STATE_INACTIVE;
}

/*
 * BOINC's handle_wu for one workunit; runs inside a transaction. The steps
 * are numbered as in boinc-server-notes.md section 1.6.
 */
static int handle_wu(struct pass *p, struct vs_workunit *wu, struct vs_result *res, size_t n)
{
    int nunsent = 0, ninprogress = 0, nsuccess = 0, nerrors = 0, ncouldnt_send = 0;
    int nno_reply = 0, nover = 0;
    bool new_to_validate = false;
    long max_suffix = -1;
    int rc = 0;

    /* 1. The canonical result; a late success after its files are gone can
     * no longer be compared with it. */
    const struct vs_result *canonical = NULL;
    for (size_t i = 0; i < n; i++)
        if (wu->canonical_resultid && res[i].id == wu->canonical_resultid)
            canonical = &res[i];
    bool canonical_gone = canonical && canonical->file_delete_state == VS_FILE_DELETE_DONE;

    /* 2. Count, and time out the results past their deadline. */
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct vs_result *r = &res[i];
        long suf = name_suffix(r->name);
        if (suf > max_suffix)
            max_suffix = suf;
        switch (r->server_state) {
        case VS_RESULT_SERVER_STATE_INACTIVE:
        case VS_RESULT_SERVER_STATE_UNSENT:
            nunsent++;
            break;
        case VS_RESULT_SERVER_STATE_IN_PROGRESS:
            if (r->report_deadline < p->d.now) {
                r->server_state = VS_RESULT_SERVER_STATE_OVER;
                r->outcome = VS_RESULT_OUTCOME_NO_REPLY;
                rc = vs_store_result_update(p->d.s, r);
                if (rc == 0)
                    rc = vs_daemon_hav_event(p->d.s, r->hostid, r->app_version_id,
                                             p->d.cfg->policy.daily_result_quota, VS_HAV_TIMEOUT,
                                             wu->delay_bound);
                p->st.ntimed_out++;
                nover++;
                nno_reply++;
            } else {
                ninprogress++;
            }
            break;
        case VS_RESULT_SERVER_STATE_OVER:
            nover++;
            switch (r->outcome) {
            case VS_RESULT_OUTCOME_COULDNT_SEND:
                ncouldnt_send++;
                break;
            case VS_RESULT_OUTCOME_SUCCESS:
                if (r->validate_state == VS_VALIDATE_STATE_INIT && canonical_gone) {
                    r->validate_state = VS_VALIDATE_STATE_TOO_LATE;
                    rc = vs_store_result_update(p->d.s, r);
                    p->st.ntoo_late++;
                }
                if (r->validate_state != VS_VALIDATE_STATE_INVALID)
                    nsuccess++;
                if (r->validate_state == VS_VALIDATE_STATE_INIT)
                    new_to_validate = true;
                break;
            case VS_RESULT_OUTCOME_CLIENT_ERROR:
                /* A user's abort is not the app's fault. */
                if (r->exit_status == EXIT_ABORTED_VIA_GUI)
                    nno_reply++;
                else
                    nerrors++;
                break;
            case VS_RESULT_OUTCOME_VALIDATE_ERROR:
                nerrors++;
                break;
            case VS_RESULT_OUTCOME_NO_REPLY:
            case VS_RESULT_OUTCOME_CLIENT_DETACHED:
                nno_reply++;
                break;
            default: /* DIDNT_NEED */
                break;
            }
            break;
        default:
            break;
        }
    }
    if (rc)
        return rc;

    /* 3. */
    if (new_to_validate && nsuccess >= wu->min_quorum && !wu->need_validate) {
        wu->need_validate = 1;
        p->st.nneed_validate++;
    }

    /* 4. Errors. */
    int old_mask = wu->error_mask;
    if (ncouldnt_send > 0)
        wu->error_mask |= VS_WU_ERROR_COULDNT_SEND_RESULT;
    /* Everything failed: let another platform or version try next. */
    if (nerrors > 0 && nsuccess == 0 && ninprogress == 0 && nno_reply == 0 &&
        !p->d.cfg->hr_class_static) {
        wu->hr_class = 0;
        wu->app_version_id = 0;
    }
    if (nerrors > wu->max_error_results)
        wu->error_mask |= VS_WU_ERROR_TOO_MANY_ERROR_RESULTS;

    int created_before = p->st.nresults_created;

    /* 5. Replication arithmetic. */
    int needed = wu->target_nresults - nunsent - ninprogress - nsuccess;
    if (needed < 0)
        needed = 0;
    int allowed = wu->max_total_results - (int)n;
    if (allowed < 0 || (allowed == 0 && needed > 0))
        wu->error_mask |= VS_WU_ERROR_TOO_MANY_TOTAL_RESULTS;
    else if (needed > allowed)
        needed = allowed;

    if (wu->error_mask) {
        /* 6. Wind an errored workunit down. */
        if (!old_mask)
            p->st.nerrored++;
        for (size_t i = 0; i < n && rc == 0; i++) {
            struct vs_result *r = &res[i];
            bool changed = false;
            if (is_unsent(r)) {
                r->server_state = VS_RESULT_SERVER_STATE_OVER;
                r->outcome = VS_RESULT_OUTCOME_DIDNT_NEED;
                changed = true;
            } else if (r->server_state == VS_RESULT_SERVER_STATE_OVER &&
                       r->outcome == VS_RESULT_OUTCOME_SUCCESS &&
                       (r->validate_state == VS_VALIDATE_STATE_INIT ||
                        r->validate_state == VS_VALIDATE_STATE_INCONCLUSIVE)) {
                r->validate_state = VS_VALIDATE_STATE_NO_CHECK;
                changed = true;
            }
            if (changed)
                rc = vs_store_result_update(p->d.s, r);
        }
        if (rc)
            return rc;
        wu->need_validate = 0;
        /* Errored WUs are assimilated too, so the project hears of the failure. */
        if (wu->assimilate_state == VS_ASSIMILATE_INIT)
            wu->assimilate_state = VS_ASSIMILATE_READY;
    } else if (!wu->canonical_resultid && wu->transitioner_flags != VS_TRANSITION_NO_NEW_RESULTS &&
               needed > 0) {
        /* 7. New replicas; the replacement of a failed one goes first. */
        if (nover > 0 && nerrors == 0 && p->d.cfg->reliable_priority_on_over_except_error)
            wu->priority += p->d.cfg->reliable_priority_on_over_except_error;
        else if (nover > 0 && p->d.cfg->reliable_priority_on_over)
            wu->priority += p->d.cfg->reliable_priority_on_over;
        rc = create_results(p, wu, max_suffix + 1, needed);
        if (rc) {
            /* Leave the WU for later rather than block the whole queue. */
            return rc;
        }
    }

    /* 8. The "all over" scans (after the changes above). */
    bool all_over_and_validated = true, all_over_ready = true;
    int64_t latest_received = 0;
    for (size_t i = 0; i < n; i++) {
        const struct vs_result *r = &res[i];
        if (r->received_time > latest_received)
            latest_received = r->received_time;
        if (r->server_state != VS_RESULT_SERVER_STATE_OVER) {
            all_over_and_validated = all_over_ready = false;
        } else if (r->outcome == VS_RESULT_OUTCOME_SUCCESS &&
                   r->validate_state == VS_VALIDATE_STATE_INIT) {
            all_over_and_validated = all_over_ready = false;
        } else if (r->outcome == VS_RESULT_OUTCOME_NO_REPLY && r->report_deadline >= p->d.now) {
            all_over_and_validated = false;
        }
    }
    if (p->st.nresults_created > created_before)
        all_over_and_validated = all_over_ready = false;
    /* Deferred (or retried) assimilation: the assimilator put it back to INIT. */
    if (all_over_ready && wu->assimilate_state == VS_ASSIMILATE_INIT && wu->canonical_resultid)
        wu->assimilate_state = VS_ASSIMILATE_READY;

    /* 9. File deletion, once assimilated and the delay has passed. */
    int64_t delete_at = VS_TIME_NEVER;
    if (wu->assimilate_state == VS_ASSIMILATE_DONE) {
        int64_t when = latest_received + (int64_t)p->d.cfg->delete_delay_hours * 3600;
        if (p->d.now < when) {
            delete_at = when;
        } else {
            if (all_over_and_validated && wu->file_delete_state == VS_FILE_DELETE_INIT) {
                wu->file_delete_state = VS_FILE_DELETE_READY;
                p->st.nfile_delete++;
            }
            for (size_t i = 0; i < n && rc == 0; i++) {
                struct vs_result *r = &res[i];
                if (r->file_delete_state != VS_FILE_DELETE_INIT ||
                    r->server_state != VS_RESULT_SERVER_STATE_OVER)
                    continue;
                bool ready = false;
                if (r->id == wu->canonical_resultid)
                    ready = all_over_and_validated;
                else if (r->outcome == VS_RESULT_OUTCOME_CLIENT_ERROR ||
                         r->outcome == VS_RESULT_OUTCOME_VALIDATE_ERROR)
                    ready = true; /* (BOINC leaves validate errors' files behind) */
                else if (r->outcome == VS_RESULT_OUTCOME_SUCCESS)
                    ready = r->validate_state != VS_VALIDATE_STATE_INIT;
                if (ready) {
                    r->file_delete_state = VS_FILE_DELETE_READY;
                    rc = vs_store_result_update(p->d.s, r);
                    p->st.nfile_delete++;
                }
            }
            if (rc)
                return rc;
        }
    }

    /* 10. The next visit. */
    if (wu->canonical_resultid || wu->error_mask) {
        wu->transition_time = VS_TIME_NEVER;
    } else {
        int64_t safety = (int64_t)(1.5 * wu->delay_bound);
        if (safety < 10 * 86400)
            safety = 10 * 86400;
        wu->transition_time = p->d.now + safety;
    }
    /* Results still out time out whatever the WU's state. */
    for (size_t i = 0; i < n; i++)
        if (res[i].server_state == VS_RESULT_SERVER_STATE_IN_PROGRESS &&
            res[i].report_deadline < wu->transition_time)
            wu->transition_time = res[i].report_deadline;
    if (delete_at < wu->transition_time)
        wu->transition_time = delete_at;
    if (wu->transition_time < p->d.now) {
        /* BOINC-COMPAT: the daemon is behind (or an operator edited rows):
         * come back after twice the lag, within [1 minute, 1 day]. */
        int64_t lag = 2 * (p->d.now - wu->transition_time);
        wu->transition_time = p->d.now + (lag < 60 ? 60 : lag > 86400 ? 86400 : lag);
    }
    p->st.nwus++;
    return vs_store_workunit_update(p->d.s, wu);
}

/*
 * Handles one WU inside a write transaction, re-reading it and its results
 * there: the scan that found it ran outside the lock, and another
 * transitioner (create_work's, or a second server) may have handled it
 * since. Under the write lock the counts are exact, so results are never
 * created twice.
 */
static int handle_locked(struct pass *p, int64_t wuid)
{
    struct vs_workunit wu;
    memset(&wu, 0, sizeof(wu));
    struct vs_result_vec rv = {0};
    int rc = vs_store_workunit_get(p->d.s, wuid, &wu);
    if (rc == 0 && (wu.transition_time > p->d.now || wu.transitioner_flags == VS_TRANSITION_NONE))
        goto done; /* handled meanwhile */
    if (rc == 0)
        rc = vs_store_results_of_wu(p->d.s, wuid, vs_result_vec_add, &rv);
    if (rc == 0)
        rc = handle_wu(p, &wu, rv.v, rv.n);
done:
    vs_result_vec_cleanup(&rv);
    vs_workunit_cleanup(&wu);
    return rc;
}

static int on_wu(void *ctx, struct vs_workunit *wu, struct vs_result *res, size_t n)
{
    struct pass *p = ctx;
    (void)res;
    (void)n;
    struct vs_transitioner_stats st = p->st;
    int rc = 0;
    if (p->batch == 0) {
        if ((rc = vs_store_begin(p->d.s)) != 0)
            return rc;
        p->batch_st = p->st;
    }
    p->batch++;
    /* A savepoint: one workunit's failure leaves the others' work. */
    if ((rc = vs_store_begin(p->d.s)) == 0) {
        rc = handle_locked(p, wu->id);
        if (rc == 0) {
            rc = vs_store_commit(p->d.s);
            return rc == 0 && p->batch >= TRANSITION_BATCH ? end_batch(p) : rc;
        }
        (void)vs_store_rollback(p->d.s);
    }
    p->st = st;
    if (rc == VS_ESTORE || rc == VS_EBUSY) {
        p->batch = 0;
        (void)vs_store_rollback(p->d.s);
        p->st = p->batch_st;
        return rc;
    }
    /* A WU-specific problem (its template is gone or bad): log it, retry it
     * later, and go on with the others. */
    VS_LOG(p->d.log, VS_LOG_WARN, "transitioner: WU %s deferred %d s: %s", wu->name,
           RETRY_LATER_SECS, vs_strerror(rc));
    /* Only the time: the scan's copy of the row was read outside the lock,
     * and a claim may have written hr_class (or the validator its columns)
     * since. */
    return vs_store_workunit_retry_at(p->d.s, wu->id, p->d.now + RETRY_LATER_SECS, p->d.now);
}

int vs_transitioner_pass(struct vs_store *s, const struct vs_project_config *cfg, int64_t now,
                         int limit, struct vs_log *log, struct vs_transitioner_stats *stats)
{
    struct pass p;
    memset(&p, 0, sizeof(p));
    int rc = vs_daemon_pass_begin(&p.d, s, cfg, now, log);
    if (rc)
        return rc;
    if (!cfg->dont_generate_upload_certificates) {
        char path[VS_PATH_MAX + 32];
        int n = snprintf(path, sizeof(path), "%s/%s", cfg->key_dir, VS_SIGN_UPLOAD_PRIVATE);
        if (n > 0 && (size_t)n < sizeof(path) && vs_sign_key_load(path, true, &p.upload_key) != 0) {
            VS_LOG(log, VS_LOG_WARN, "transitioner: no upload key at %s; outputs unsigned", path);
            p.upload_key = NULL;
        }
    }
    rc = vs_store_wus_to_transition(s, now, limit > 0 ? limit : DEFAULT_LIMIT, on_wu, &p);
    if (rc == 0)
        rc = end_batch(&p);
    else if (p.batch > 0) {
        /* The scan failed or a workunit's transition did: what the open
         * batch did is kept only if it commits. */
        int c = end_batch(&p);
        (void)c;
    }
    vs_sign_key_destroy(p.upload_key);
    /* no last_error here: the transitioner's stats have none */
    rc = vs_daemon_pass_end(&p.d, rc, rc, NULL, 0);
    if (stats)
        *stats = p.st;
    return rc;
}
