/*
 * The assimilator (see assimilator.h). The project-visible work (copying
 * files, running the operator's command) happens outside any transaction;
 * the workunit's new state is then written in one short transaction.
 */
#include "volsched/assimilator.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/daemon_util.h"
#include "volsched/fs.h"
#include "volsched/json.h"
#include "volsched/layout.h"
#include "volsched/log.h"
#include "volsched/str.h"

#define DEFAULT_LIMIT 100
#define SUMMARY       "summary.json"

struct pass {
    struct vs_daemon_pass d; /* store, config, now, log, arena */
    struct vs_assimilator_stats st;
};

int vs_assimilator_dir(const struct vs_project_config *cfg, const char *wu_name, char *out,
                       size_t outsize)
{
    if (!vs_daemon_safe_name(wu_name) || wu_name[0] == '.')
        return VS_EINVAL;
    int n = snprintf(out, outsize, "%s/results/%s", cfg->dir, wu_name);
    return n < 0 || (size_t)n >= outsize ? VS_ELIMIT : 0;
}

static void json_result(struct vs_json *j, const struct vs_result *r)
{
    vs_json_obj_begin(j);
    vs_json_key(j, "id");
    vs_json_int(j, r->id);
    vs_json_key(j, "name");
    vs_json_str(j, r->name);
    vs_json_key(j, "hostid");
    vs_json_int(j, r->hostid);
    vs_json_key(j, "server_state");
    vs_json_int(j, r->server_state);
    vs_json_key(j, "outcome");
    vs_json_int(j, r->outcome);
    vs_json_key(j, "validate_state");
    vs_json_int(j, r->validate_state);
    vs_json_key(j, "exit_status");
    vs_json_int(j, r->exit_status);
    vs_json_key(j, "cpu_time");
    vs_json_num(j, r->cpu_time);
    vs_json_key(j, "elapsed_time");
    vs_json_num(j, r->elapsed_time);
    vs_json_obj_end(j);
}

/* One output file copied for the summary. */
struct copied {
    const char *file; /* name in the results directory */
    const char *name; /* physical name */
    double nbytes;
};

static int write_summary(struct pass *p, const char *dir, const struct vs_workunit *wu,
                         const char *app, const struct vs_result *canon,
                         const struct vs_result *res, size_t n, const struct copied *files,
                         size_t nfiles)
{
    struct vs_buf b;
    vs_buf_init(&b, 16 * 1024 * 1024);
    struct vs_json j;
    vs_json_init(&j, &b, true);
    vs_json_obj_begin(&j);
    vs_json_key(&j, "workunit");
    vs_json_obj_begin(&j);
    vs_json_key(&j, "id");
    vs_json_int(&j, wu->id);
    vs_json_key(&j, "name");
    vs_json_str(&j, wu->name);
    vs_json_key(&j, "app");
    vs_json_str(&j, app);
    vs_json_key(&j, "batch");
    vs_json_int(&j, wu->batch);
    vs_json_key(&j, "error_mask");
    vs_json_int(&j, wu->error_mask);
    vs_json_key(&j, "errors");
    vs_json_arr_begin(&j);
    for (int bit = 0; bit < VS_WU_ERROR_BITS; bit++)
        if (wu->error_mask & (1 << bit))
            vs_json_str(&j, vs_wu_error_names[bit]);
    vs_json_arr_end(&j);
    vs_json_obj_end(&j);
    vs_json_key(&j, "canonical_result");
    if (canon)
        json_result(&j, canon);
    else
        vs_json_null(&j);
    vs_json_key(&j, "outputs");
    vs_json_arr_begin(&j);
    for (size_t i = 0; i < nfiles; i++) {
        vs_json_obj_begin(&j);
        vs_json_key(&j, "file");
        vs_json_str(&j, files[i].file);
        vs_json_key(&j, "name");
        vs_json_str(&j, files[i].name);
        vs_json_key(&j, "nbytes");
        vs_json_num(&j, files[i].nbytes);
        vs_json_obj_end(&j);
    }
    vs_json_arr_end(&j);
    vs_json_key(&j, "results");
    vs_json_arr_begin(&j);
    for (size_t i = 0; i < n; i++)
        json_result(&j, &res[i]);
    vs_json_arr_end(&j);
    vs_json_key(&j, "assimilated_time");
    vs_json_int(&j, p->d.now);
    vs_json_obj_end(&j);
    int rc = vs_json_error(&j);
    if (rc == 0)
        rc = vs_buf_puts(&b, "\n");
    char path[VS_PATH_MAX + 2 * VS_NAME_MAX];
    if (rc == 0) {
        int k = snprintf(path, sizeof(path), "%s/%s", dir, SUMMARY);
        rc = k < 0 || (size_t)k >= sizeof(path) ? VS_ELIMIT : 0;
    }
    if (rc == 0)
        rc = vs_daemon_write_file(path, b.data, b.len);
    vs_buf_cleanup(&b);
    return rc;
}

static bool name_taken(const struct copied *c, size_t n, const char *name)
{
    if (strcmp(name, SUMMARY) == 0)
        return true;
    for (size_t i = 0; i < n; i++)
        if (strcmp(c[i].file, name) == 0)
            return true;
    return false;
}

/* The default: DIR/results/<wu>/ with the outputs and summary.json. */
static int copy_outputs(struct pass *p, const struct vs_workunit *wu, const char *app,
                        const struct vs_result *canon, const struct vs_result *res, size_t n,
                        char *err, size_t errsize)
{
    char final[VS_PATH_MAX + VS_NAME_MAX], tmp[VS_PATH_MAX + VS_NAME_MAX + 32];
    char top[VS_PATH_MAX + 16];
    int rc = vs_assimilator_dir(p->d.cfg, wu->name, final, sizeof(final));
    if (rc) {
        vs_daemon_msg(err, errsize, "no results directory for this name: %s", vs_strerror(rc));
        return rc;
    }
    int k = snprintf(top, sizeof(top), "%s/results", p->d.cfg->dir);
    if (k < 0 || (size_t)k >= sizeof(top))
        return VS_ELIMIT;
    if (mkdir(top, 0755) != 0 && errno != EEXIST) {
        rc = -errno;
        vs_daemon_msg(err, errsize, "mkdir %s: %s", top, vs_strerror(rc));
        return rc;
    }
    /* Per process, so that two assimilators never share a scratch directory. */
    k = snprintf(tmp, sizeof(tmp), "%s/.tmp.%d.%s", top, (int)getpid(), wu->name);
    if (k < 0 || (size_t)k >= sizeof(tmp))
        return VS_ELIMIT;
    if ((rc = vs_fs_rm_tree(tmp)) != 0 || mkdir(tmp, 0755) != 0) {
        rc = rc ? rc : -errno;
        vs_daemon_msg(err, errsize, "mkdir %s: %s", tmp, vs_strerror(rc));
        return rc;
    }
    struct vs_daemon_file files[VS_DAEMON_MAX_FILES];
    struct copied copied[VS_DAEMON_MAX_FILES];
    size_t nfiles = 0;
    if (canon) {
        rc = vs_daemon_files(canon->xml_doc_in, &p->d.arena, files, &nfiles);
        if (rc)
            vs_daemon_msg(err, errsize, "result %s: bad xml_doc_in", canon->name);
    }
    for (size_t i = 0; i < nfiles && rc == 0; i++) {
        char src[VS_PATH_MAX + VS_NAME_MAX], dst[sizeof(tmp) + VS_NAME_MAX];
        const char *as = files[i].open_name;
        if (!vs_daemon_safe_name(as) || name_taken(copied, i, as))
            as = files[i].name;
        copied[i].file = as;
        copied[i].name = files[i].name;
        copied[i].nbytes = 0;
        rc = vs_project_upload_path(p->d.cfg, files[i].name, false, src, sizeof(src));
        if (rc == 0) {
            k = snprintf(dst, sizeof(dst), "%s/%s", tmp, as);
            rc = k < 0 || (size_t)k >= sizeof(dst) ? VS_ELIMIT : 0;
        }
        if (rc == 0)
            rc = vs_daemon_copy_file(src, dst, &copied[i].nbytes);
        if (rc)
            vs_daemon_msg(err, errsize, "copy %s: %s", src, vs_strerror(rc));
    }
    if (rc == 0) {
        rc = write_summary(p, tmp, wu, app, canon, res, n, copied, nfiles);
        if (rc)
            vs_daemon_msg(err, errsize, "writing %s: %s", SUMMARY, vs_strerror(rc));
    }
    if (rc == 0)
        rc = vs_daemon_sync_dir(tmp);
    /* Replace a directory an interrupted earlier attempt left behind. */
    if (rc == 0)
        rc = vs_fs_rm_tree(final);
    if (rc == 0 && rename(tmp, final) != 0) {
        rc = -errno;
        vs_daemon_msg(err, errsize, "rename to %s: %s", final, vs_strerror(rc));
    }
    if (rc == 0)
        rc = vs_daemon_sync_dir(top);
    if (rc && vs_fs_rm_tree(tmp) != 0)
        VS_LOG(p->d.log, VS_LOG_WARN, "assimilator: cannot remove %s", tmp);
    return rc;
}

static int run_command(struct pass *p, const struct vs_assimilator_config *ac,
                       const struct vs_workunit *wu, const struct vs_result *canon, char *err,
                       size_t errsize)
{
    /* create_work refuses such names; one in an older store is
     * not handed over, where the command would read it as an option. */
    if (wu->name[0] == '-' || (canon && canon->name[0] == '-')) {
        vs_daemon_msg(err, errsize,
                      "workunit %s: a name beginning with '-' is not passed to %s (it would be "
                      "read as an option)",
                      wu->name, ac->command);
        return VS_EINVAL;
    }
    const char *args[VS_DAEMON_MAX_FILES + 4];
    size_t nargs = 0;
    char mask[32];
    if (wu->error_mask || !canon) {
        int k = snprintf(mask, sizeof(mask), "%d", wu->error_mask);
        if (k < 0 || (size_t)k >= sizeof(mask))
            return VS_ELIMIT;
        args[nargs++] = "--error";
        args[nargs++] = mask;
        args[nargs++] = wu->name;
    } else {
        args[nargs++] = wu->name;
        args[nargs++] = canon->name;
        struct vs_daemon_file files[VS_DAEMON_MAX_FILES];
        size_t nfiles = 0;
        int rc = vs_daemon_files(canon->xml_doc_in, &p->d.arena, files, &nfiles);
        if (rc) {
            vs_daemon_msg(err, errsize, "result %s: bad xml_doc_in", canon->name);
            return rc;
        }
        for (size_t i = 0; i < nfiles; i++) {
            char path[VS_PATH_MAX + VS_NAME_MAX];
            rc = vs_project_upload_path(p->d.cfg, files[i].name, false, path, sizeof(path));
            if (rc)
                return rc;
            args[nargs++] = vs_arena_strndup(&p->d.arena, path, strlen(path));
        }
    }
    int status = 0;
    int rc = vs_daemon_run(ac->command, args, nargs, p->d.cfg->daemon_command_timeout, p->d.log,
                           &status);
    if (rc) {
        vs_daemon_msg(err, errsize, "command %s: %s", ac->command, vs_strerror(rc));
        return rc;
    }
    if (status != 0) {
        vs_daemon_msg(err, errsize, "command %s exited with %d", ac->command, status);
        return VS_EIO;
    }
    return 0;
}

/* Writes the outcome in one transaction, if the WU is still READY. */
static int finish(struct pass *p, int64_t wuid, int add_mask, bool ok)
{
    int rc = vs_store_begin(p->d.s);
    if (rc)
        return rc;
    struct vs_workunit wu;
    memset(&wu, 0, sizeof(wu));
    rc = vs_store_workunit_get(p->d.s, wuid, &wu);
    if (rc == 0 && wu.assimilate_state == VS_ASSIMILATE_READY) {
        wu.error_mask |= add_mask;
        if (ok) {
            wu.assimilate_state = VS_ASSIMILATE_DONE;
            wu.transition_time = p->d.now;
        } else {
            /* BOINC-COMPAT: DEFER_ASSIMILATION; the transitioner makes it
             * READY again when transition_time comes. */
            wu.assimilate_state = VS_ASSIMILATE_INIT;
            wu.transition_time = p->d.now + p->d.cfg->assimilator_retry_secs;
        }
        rc = vs_store_workunit_update(p->d.s, &wu);
    } else if (rc == VS_ENOTFOUND) {
        rc = 0;
    }
    vs_workunit_cleanup(&wu);
    return vs_daemon_txn_end(p->d.s, rc);
}

static int on_wu(void *ctx, struct vs_workunit *wu, struct vs_result *res, size_t n)
{
    struct pass *p = ctx;
    vs_arena_reset(&p->d.arena);
    p->st.nwus++;
    const struct vs_result *canon = NULL;
    for (size_t i = 0; i < n; i++)
        if (wu->canonical_resultid && res[i].id == wu->canonical_resultid)
            canon = &res[i];
    int add_mask = 0;
    if (!canon && !wu->error_mask)
        add_mask = VS_WU_ERROR_NO_CANONICAL_RESULT;
    wu->error_mask |= add_mask;
    if (wu->error_mask)
        canon = NULL;

    struct vs_app app;
    memset(&app, 0, sizeof(app));
    if (vs_store_app_get(p->d.s, wu->appid, &app) != 0)
        app.name[0] = '\0';
    const struct vs_assimilator_config *ac = vs_project_assimilator(p->d.cfg, app.name);
    char err[VS_NAME_MAX] = "";
    int rc = ac->command[0] ? run_command(p, ac, wu, canon, err, sizeof(err))
                            : copy_outputs(p, wu, app.name, canon, res, n, err, sizeof(err));
    if (rc) {
        p->st.ndeferred++;
        vs_daemon_msg(p->st.last_error, sizeof(p->st.last_error), "WU %s: %s; retry in %d s",
                      wu->name, err[0] ? err : vs_strerror(rc), p->d.cfg->assimilator_retry_secs);
        VS_LOG(p->d.log, VS_LOG_WARN, "assimilator: %s", p->st.last_error);
    }
    int frc = finish(p, wu->id, add_mask, rc == 0);
    if (frc)
        return frc;
    if (rc == 0) {
        p->st.ndone++;
        if (wu->error_mask)
            p->st.nerror++;
    }
    return 0;
}

int vs_assimilator_pass(struct vs_store *s, const struct vs_project_config *cfg, int64_t now,
                        int limit, struct vs_log *log, struct vs_assimilator_stats *stats)
{
    struct pass p;
    memset(&p, 0, sizeof(p));
    int rc = vs_daemon_pass_begin(&p.d, s, cfg, now, log);
    if (rc)
        return rc;
    rc = vs_store_wus_in_queue(s, VS_WU_QUEUE_ASSIMILATE, 0, limit > 0 ? limit : DEFAULT_LIMIT,
                               on_wu, &p);
    rc = vs_daemon_pass_end(&p.d, rc, p.st.nwus, p.st.last_error, sizeof(p.st.last_error));
    if (stats)
        *stats = p.st;
    return rc;
}
