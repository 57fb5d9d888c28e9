/* create_work: validate, stage, insert in one transaction (see create_work.h). */
#include "volsched/create_work.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/cw_stage.h"
#include "volsched/layout.h"
#include "volsched/locality.h"
#include "volsched/log.h"
#include "volsched/md5.h"
#include "volsched/str.h"
#include "volsched/strset.h"
#include "volsched/templates.h"

/* One workunit ready to insert. */
struct prepared {
    struct vs_workunit wu;
    bool assign;
    bool skipped; /* continue_on_error: left out */
    struct vs_assignment a;
};

/* One template file as last read (the input and the output template are
 * cached apart: jobs alternate between them). */
struct tmpl_cache {
    char path[VS_PATH_MAX + VS_NAME_MAX];
    char *text;
    size_t len;
    bool checked; /* an output template that rendered once */
};

struct cw {
    const struct vs_project_config *cfg;
    struct vs_store *s;
    const struct vs_cw_params *p;
    struct vs_app app;
    struct vs_log *log;
    char *err;
    size_t errsize;
    struct vs_cw_stages stages; /* input files to copy (cw_stage.h) */
    struct prepared *pr;
    struct vs_strset name_set; /* prepared workunits by name */
    struct tmpl_cache in_tmpl, out_tmpl;
};

static const char *name_key(const void *ctx, size_t i)
{
    return ((const struct cw *)ctx)->pr[i].wu.name;
}

static int fail(struct cw *c, int code, const char *fmt, ...) VS_PRINTF(3, 4);
static int fail(struct cw *c, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, c->errsize, fmt, ap);
    va_end(ap);
    return code;
}

/* BOINC-COMPAT: names become file names on the client; no "..", "%", "/",
 * blanks or control characters. */
static bool valid_name(const char *n)
{
    if (!n[0] || strstr(n, "..") || strlen(n) >= VS_NAME_MAX - 32)
        return false;
    for (const char *q = n; *q; q++) {
        unsigned char ch = (unsigned char)*q;
        if (ch <= ' ' || ch == '/' || ch == '%' || ch == '<' || ch == '>' || ch == '&' || ch == 127)
            return false;
    }
    return true;
}

static int path_join(char *out, size_t size, const char *a, const char *b)
{
    int n = snprintf(out, size, "%s/%s", a, b);
    return n < 0 || (size_t)n >= size ? VS_ELIMIT : 0;
}

static bool is_regular(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static bool is_symlink(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode);
}

/*
 * Resolves a template path: absolute as is; relative ones are looked up in
 * the project directory first (BOINC's tools run there), then in the
 * current directory.
 */
static int find_template(struct cw *c, const char *given, char *out, size_t size)
{
    if (given[0] == '/')
        return vs_strlcpy(out, given, size);
    if (path_join(out, size, c->cfg->dir, given) != 0)
        return VS_ELIMIT;
    if (is_regular(out))
        return 0;
    return vs_strlcpy(out, given, size);
}

static int load_template(struct tmpl_cache *t, const char *path)
{
    if (t->text && strcmp(path, t->path) == 0)
        return 0;
    vs_free(t->text);
    t->text = NULL;
    t->path[0] = '\0';
    t->checked = false;
    int rc = vs_template_read(path, &t->text, &t->len);
    if (rc)
        return rc;
    return vs_strlcpy(t->path, path, sizeof(t->path));
}

static const char *basename_of(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static bool is_md5(const char *m)
{
    if (!m || strlen(m) != VS_MD5_HEX_LEN)
        return false;
    for (const char *q = m; *q; q++)
        if (!((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f')))
            return false;
    return true;
}

/* A remote input (seed 003's "inputs hosted elsewhere"): not staged. */
static int resolve_remote(struct cw *c, size_t jobno, const struct vs_cw_remote *rf,
                          struct vs_tmpl_input *in)
{
    if (strncmp(rf->url, "http://", 7) != 0 && strncmp(rf->url, "https://", 8) != 0)
        return fail(c, VS_EINVAL, "job %zu: --remote_file URL '%s' must be http:// or https://",
                    jobno, rf->url);
    if (!is_md5(rf->md5))
        return fail(c, VS_EINVAL, "job %zu: --remote_file MD5 '%s' is not 32 lowercase hex digits",
                    jobno, rf->md5 ? rf->md5 : "");
    if (!(rf->nbytes > 0) || rf->nbytes > 1e15)
        return fail(c, VS_EINVAL, "job %zu: --remote_file NBYTES must be a positive size", jobno);
    /* BOINC-COMPAT: a remote file's physical name is jf_<md5>. */
    if (snprintf(in->name, sizeof(in->name), "jf_%s", rf->md5) < 0 ||
        vs_strlcpy(in->url, rf->url, sizeof(in->url)) ||
        vs_strlcpy(in->md5_cksum, rf->md5, sizeof(in->md5_cksum)))
        return fail(c, VS_ELIMIT, "job %zu: --remote_file URL too long", jobno);
    in->nbytes = rf->nbytes;
    return 0;
}

/* Reads the md5 and size of a local input file, opened as staging opens
 * it (vs_cw_open_input: no symbolic links unless the operator allowed them). */
static int read_local(struct cw *c, size_t jobno, const char *arg, char *md5, int64_t *nbytes)
{
    int fd = -1;
    char link[VS_PATH_MAX];
    int rc = vs_cw_open_input(arg, c->p->follow_symlinks, &fd, link, sizeof(link));
    if (rc == -ELOOP)
        return fail(c, VS_EINVAL,
                    "job %zu: input '%s': %s is a symbolic link; create_work does not follow "
                    "symbolic links (give the file itself, or --follow-symlinks to allow them)",
                    jobno, arg, link);
    if (rc == VS_EINVAL)
        return fail(c, VS_EINVAL, "job %zu: input '%s' is not a regular file", jobno, arg);
    if (rc == 0) {
        rc = vs_md5_fd(fd, md5, nbytes);
        close(fd);
    }
    if (rc)
        return fail(c, VS_ENOTFOUND, "job %zu: input file '%s' not found or unreadable: %s", jobno,
                    arg, vs_strerror(rc));
    return 0;
}

/* Resolves one INPUT argument into a template input, and the file in the
 * download hierarchy it needs: one to stage, or one already there (both
 * checked again after the insert: vs_cw_stages_verify). */
static int resolve_input(struct cw *c, size_t jobno, const char *arg, struct vs_tmpl_input *in)
{
    const char *name = basename_of(arg);
    if (!valid_name(name))
        return fail(c, VS_EINVAL, "job %zu: input '%s': bad file name '%s'", jobno, arg, name);
    char staged[VS_PATH_MAX];
    if (vs_strlcpy(in->name, name, sizeof(in->name)) ||
        vs_project_download_path(c->cfg, name, false, staged, sizeof(staged)) ||
        vs_project_download_url(c->cfg, name, in->url, sizeof(in->url)))
        return fail(c, VS_ELIMIT, "job %zu: input '%s': name too long", jobno, arg);
    int64_t nbytes;
    char md5[VS_MD5_HEX_LEN + 1];
    /* A path, or a file of the current directory (a link there too: it is
     * refused as such, not taken for a staged name). */
    bool local = strchr(arg, '/') != NULL || is_regular(arg) || is_symlink(arg);
    if (c->p->staged_only && strchr(arg, '/') != NULL)
        return fail(c, VS_EINVAL, "job %zu: input '%s': a file name may not contain '/'", jobno,
                    arg);
    if (c->p->staged_only)
        local = false;
    const struct vs_cw_stage *planned = vs_cw_stages_find(&c->stages, staged);
    int rc;
    if (!local && planned) {
        /* A bare name that an earlier job of this call uses. */
        memcpy(md5, planned->md5, sizeof(md5));
        nbytes = planned->nbytes;
    } else if (!local) {
        /* A bare name: it must already be in the download hierarchy. */
        if (vs_md5_file(staged, md5, &nbytes) != 0)
            return fail(c, VS_ENOTFOUND,
                        "job %zu: input '%s': no such file, and not staged in the download "
                        "hierarchy (%s)",
                        jobno, arg, staged);
        if (vs_cw_stages_add(&c->stages, NULL, staged, md5, nbytes) != 0)
            return fail(c, VS_ELIMIT, "job %zu: input '%s': path too long", jobno, arg);
    } else if ((rc = read_local(c, jobno, arg, md5, &nbytes)) != 0) {
        return rc;
    } else {
        char have[VS_MD5_HEX_LEN + 1];
        int64_t have_n;
        bool there = false;
        if (planned) {
            if (strcmp(planned->md5, md5) != 0)
                return fail(c, VS_EEXISTS,
                            "job %zu: input '%s': two different files named '%s' given", jobno, arg,
                            name);
        } else if ((there = vs_md5_file(staged, have, &have_n) == 0) && strcmp(have, md5) != 0) {
            /* BOINC-COMPAT: staged names are immutable. */
            return fail(c, VS_EEXISTS,
                        "job %zu: input '%s': a different file named '%s' is already "
                        "staged; use a new name",
                        jobno, arg, name);
        }
        if (!planned && vs_cw_stages_add(&c->stages, there ? NULL : arg, staged, md5, nbytes) != 0)
            return fail(c, VS_ELIMIT, "job %zu: input '%s': path too long", jobno, arg);
    }
    if (vs_strlcpy(in->md5_cksum, md5, sizeof(in->md5_cksum)))
        return VS_ELIMIT;
    in->nbytes = (double)nbytes;
    return 0;
}

static void apply_opt_d(double *f, const struct vs_cw_opt *o)
{
    if (o->set)
        *f = o->v;
}

static void apply_opt_i(int *f, const struct vs_cw_opt *o)
{
    if (o->set)
        *f = (int)o->v;
}

/* Checks BOINC's replication rules; raises the maxima nobody set. */
static int check_numbers(struct cw *c, size_t jobno, struct vs_workunit *wu, unsigned set)
{
    const struct vs_cw_params *p = c->p;
    bool success_set = p->max_success_results.set || (set & VS_TMPL_SET_MAX_SUCCESS);
    bool total_set = p->max_total_results.set || (set & VS_TMPL_SET_MAX_TOTAL);
    if (wu->min_quorum < 1 || wu->target_nresults < 1 || wu->max_error_results < 1 ||
        wu->max_total_results < 1 || wu->max_success_results < 1)
        return fail(c, VS_EINVAL,
                    "job %zu: min_quorum, target_nresults, max_error_results, "
                    "max_total_results and max_success_results must all be at least 1",
                    jobno);
    if (!(wu->rsc_fpops_est > 0) || !(wu->rsc_fpops_bound > 0) || !(wu->rsc_disk_bound > 0) ||
        wu->rsc_memory_bound < 0 || wu->delay_bound < 1)
        return fail(c, VS_EINVAL,
                    "job %zu: rsc_fpops_est, rsc_fpops_bound, rsc_disk_bound and delay_bound "
                    "must be positive",
                    jobno);
    if (wu->rsc_fpops_bound < wu->rsc_fpops_est)
        return fail(c, VS_EINVAL, "job %zu: rsc_fpops_bound (%g) is below rsc_fpops_est (%g)",
                    jobno, wu->rsc_fpops_bound, wu->rsc_fpops_est);
    if (!success_set && wu->max_success_results < wu->target_nresults)
        wu->max_success_results = wu->target_nresults;
    /* BOINC-COMPAT: create_work raises unset maxima to target_nresults. */
    if (!total_set && wu->max_total_results < wu->max_success_results)
        wu->max_total_results = wu->max_success_results;
    if (wu->min_quorum > wu->target_nresults)
        return fail(c, VS_EINVAL, "job %zu: min_quorum (%d) exceeds target_nresults (%d)", jobno,
                    wu->min_quorum, wu->target_nresults);
    if (wu->target_nresults > wu->max_success_results)
        return fail(c, VS_EINVAL, "job %zu: target_nresults (%d) exceeds max_success_results (%d)",
                    jobno, wu->target_nresults, wu->max_success_results);
    if (wu->max_success_results > wu->max_total_results)
        return fail(c, VS_EINVAL,
                    "job %zu: max_success_results (%d) exceeds max_total_results (%d)", jobno,
                    wu->max_success_results, wu->max_total_results);
    if (wu->max_error_results > wu->max_total_results)
        return fail(c, VS_EINVAL, "job %zu: max_error_results (%d) exceeds max_total_results (%d)",
                    jobno, wu->max_error_results, wu->max_total_results);
    if (wu->target_nresults > wu->max_total_results)
        return fail(c, VS_EINVAL, "job %zu: target_nresults (%d) exceeds max_total_results (%d)",
                    jobno, wu->target_nresults, wu->max_total_results);
    return 0;
}

/* Checks that an assignment target exists. */
static int check_target(struct cw *c, size_t jobno, int type, int64_t id)
{
    if (id < 0 || (type != VS_ASSIGN_NONE && id == 0))
        return fail(c, VS_EINVAL, "job %zu: target id must be a positive number", jobno);
    int rc = 0;
    const char *what = "";
    if (type == VS_ASSIGN_HOST) {
        struct vs_host h;
        rc = vs_store_host_get(c->s, id, &h);
        what = "host";
    } else if (type == VS_ASSIGN_USER) {
        struct vs_user u;
        memset(&u, 0, sizeof(u));
        rc = vs_store_user_get(c->s, id, &u);
        vs_user_cleanup(&u);
        what = "user";
    } else if (type == VS_ASSIGN_TEAM) {
        struct vs_team t;
        rc = vs_store_team_get(c->s, id, &t);
        what = "team";
    }
    if (rc == VS_ENOTFOUND)
        return fail(c, VS_ENOTFOUND, "job %zu: no %s with id %lld", jobno, what, (long long)id);
    if (rc)
        return fail(c, rc, "job %zu: looking up %s %lld: %s", jobno, what, (long long)id,
                    vs_strerror(rc));
    return 0;
}

/* Decides the job's assignment (if any) and the WU's transitioner flags. */
static int assignment_for(struct cw *c, size_t jobno, const struct vs_cw_job *j,
                          struct prepared *pr)
{
    const struct vs_cw_params *p = c->p;
    int64_t th = j->target_host ? j->target_host : p->target_host;
    int64_t tu = j->target_user ? j->target_user : p->target_user;
    int64_t tt = j->target_team ? j->target_team : p->target_team;
    int n = (p->broadcast_all ? 1 : 0) + (p->broadcast_user != 0) + (p->broadcast_team != 0) +
            (th != 0) + (tu != 0) + (tt != 0);
    if (n == 0)
        return 0;
    if (n > 1)
        return fail(c, VS_EINVAL,
                    "job %zu: give at most one of --target_host, --target_user, --target_team, "
                    "--broadcast, --broadcast_user, --broadcast_team",
                    jobno);
    pr->assign = true;
    struct vs_assignment *a = &pr->a;
    memset(a, 0, sizeof(*a));
    if (p->broadcast_all || p->broadcast_user || p->broadcast_team) {
        a->multi = 1;
        a->target_type = p->broadcast_all    ? VS_ASSIGN_NONE
                         : p->broadcast_user ? VS_ASSIGN_USER
                                             : VS_ASSIGN_TEAM;
        a->target_id = p->broadcast_all    ? 0
                       : p->broadcast_user ? p->broadcast_user
                                           : p->broadcast_team;
        /* BOINC-COMPAT: broadcast WUs are never transitioned. */
        pr->wu.transitioner_flags = VS_TRANSITION_NONE;
    } else {
        a->multi = 0;
        a->target_type = th ? VS_ASSIGN_HOST : tu ? VS_ASSIGN_USER : VS_ASSIGN_TEAM;
        a->target_id = th ? th : tu ? tu : tt;
        /* BOINC-COMPAT: targeted WUs get their results from the scheduler. */
        pr->wu.transitioner_flags = VS_TRANSITION_NO_NEW_RESULTS;
    }
    pr->wu.transition_time = VS_TIME_NEVER;
    return check_target(c, jobno, a->target_type, a->target_id);
}

/*
 * Locality jobs (seed 001; docs/locality.md): the workunit is named
 * FILENAME__SUFFIX, where FILENAME is one of its inputs (the big one) and
 * has no "__"; an automatic name is FILENAME__<app>_<pid>_<time>_<n> for the
 * first input. Checks the name (given or made) into wu->name.
 */
static int locality_name(struct cw *c, size_t jobno, const struct vs_cw_job *j, int64_t now,
                         struct vs_workunit *wu, char *out_file, size_t file_size)
{
    if (j->ninputs == 0)
        return fail(c, VS_EINVAL,
                    "job %zu: app %s uses locality scheduling: a job needs its big input file "
                    "(the workunit is named FILENAME__SUFFIX after it)",
                    jobno, c->app.name);
    if (!j->wu_name) {
        const char *first = basename_of(j->inputs[0]);
        if (!vs_loc_file_name_ok(first, strlen(first)))
            return fail(c, VS_EINVAL,
                        "job %zu: locality input '%s': a locality file name may not contain "
                        "'__' (or '/', '..', blanks), and is at most %d bytes",
                        jobno, first, VS_LOC_NAME_MAX - 1);
        int n = snprintf(wu->name, sizeof(wu->name), "%s__%s_%d_%lld_%zu", first, c->app.name,
                         (int)getpid(), (long long)now, jobno);
        if (n < 0 || (size_t)n >= sizeof(wu->name))
            return fail(c, VS_ELIMIT, "job %zu: workunit name too long", jobno);
    }
    if (vs_loc_file_of_wu(wu->name, out_file, file_size) != 0)
        return fail(c, VS_EINVAL,
                    "job %zu: app %s uses locality scheduling: workunit name '%s' must be "
                    "FILENAME__SUFFIX (FILENAME without '__')",
                    jobno, c->app.name, wu->name);
    for (size_t i = 0; i < j->ninputs; i++)
        if (strcmp(basename_of(j->inputs[i]), out_file) == 0)
            return 0;
    return fail(c, VS_EINVAL,
                "job %zu: locality workunit '%s' is named after file '%s', which is not one of "
                "its inputs",
                jobno, wu->name, out_file);
}

/* Marks the locality file's <file_info> sticky (vs_cw_mark_sticky). */
static int mark_sticky(struct cw *c, size_t jobno, struct vs_workunit *wu, const char *file)
{
    int rc = vs_cw_mark_sticky(&wu->xml_doc, file);
    if (rc == VS_EPARSE)
        return fail(c, rc, "job %zu: no <file_info> for locality file %s", jobno, file);
    if (rc)
        return fail(c, VS_ELIMIT, "job %zu: workunit XML too long", jobno);
    return 0;
}

static int prepare_job(struct cw *c, size_t jobno, const struct vs_cw_job *j, int64_t now,
                       struct prepared *pr)
{
    const struct vs_cw_params *p = c->p;
    struct vs_workunit *wu = &pr->wu;
    vs_workunit_defaults(wu);
    wu->appid = c->app.id;
    wu->create_time = now;
    wu->transition_time = p->hold ? VS_TIME_NEVER : now;
    wu->app_version_num = p->app_version_num;

    /* Name: given, or BOINC's automatic <app>_<pid>_<time>, plus the job
     * number. A name already in the store is found by the insert (the
     * unique index), not by a lookup per job. */
    int n = j->wu_name ? snprintf(wu->name, sizeof(wu->name), "%s", j->wu_name)
                       : snprintf(wu->name, sizeof(wu->name), "%s_%d_%lld_%zu", c->app.name,
                                  (int)getpid(), (long long)now, jobno);
    /* Workunit names, and the result names made from them, are
     * arguments of the operator's assimilator command (and the names of
     * its results' directories), where a leading '-' reads as an option. */
    if (n > 0 && wu->name[0] == '-')
        return fail(c, VS_EINVAL,
                    "job %zu: bad workunit name '%s': a name may not begin with '-' (the "
                    "assimilator's command would take it for an option)",
                    jobno, wu->name);
    if (n < 0 || (size_t)n >= sizeof(wu->name) || !valid_name(wu->name))
        return fail(c, VS_EINVAL, "job %zu: bad workunit name '%s'", jobno,
                    j->wu_name ? j->wu_name : wu->name);
    bool locality = c->app.locality_scheduling == VS_LOC_APP_FULL;
    char loc_file[VS_LOC_NAME_MAX];
    int rc;
    if (locality && (rc = locality_name(c, jobno, j, now, wu, loc_file, sizeof(loc_file))) != 0)
        return rc;
    if (vs_strset_find(&c->name_set, wu->name, name_key, c) != SIZE_MAX)
        return fail(c, VS_EEXISTS, "job %zu: workunit name '%s' given twice", jobno, wu->name);

    /* Result template: must be in the project (stored relative to it). */
    char def[VS_NAME_MAX + 16];
    snprintf(def, sizeof(def), "templates/%s_out", c->app.name);
    const char *rt = j->result_template ? j->result_template : def;
    size_t dl = strlen(c->cfg->dir);
    if (rt[0] == '/' && strncmp(rt, c->cfg->dir, dl) == 0 && rt[dl] == '/')
        rt += dl + 1;
    char rtpath[VS_PATH_MAX + VS_NAME_MAX];
    if (rt[0] == '/' || strstr(rt, "..") ||
        vs_strlcpy(wu->result_template_file, rt, sizeof(wu->result_template_file)) ||
        path_join(rtpath, sizeof(rtpath), c->cfg->dir, rt))
        return fail(c, VS_EINVAL,
                    "job %zu: result template '%s' must be a path inside the project directory",
                    jobno, rt);
    if ((rc = load_template(&c->out_tmpl, rtpath)) != 0)
        return fail(c, VS_ENOTFOUND, "job %zu: result template %s: %s", jobno, rtpath,
                    vs_strerror(rc));
    char terr[256] = "";
    if (!c->out_tmpl.checked) {
        /* Rendered once per template: the transitioner renders it for real. */
        char *probe = NULL;
        rc = vs_template_output(c->out_tmpl.text, c->out_tmpl.len, "probe", 0, c->cfg->upload_url,
                                NULL, &probe, terr, sizeof(terr));
        vs_free(probe);
        if (rc)
            return fail(c, rc, "job %zu: result template %s: %s", jobno, rtpath, terr);
        c->out_tmpl.checked = true;
    }

    /* Inputs, then the input template. */
    struct vs_tmpl_input *ins = vs_xcalloc(j->ninputs ? j->ninputs : 1, sizeof(*ins));
    for (size_t i = 0; i < j->ninputs && rc == 0; i++) {
        if (j->remote && j->remote[i].url)
            rc = resolve_remote(c, jobno, &j->remote[i], &ins[i]);
        else
            rc = resolve_input(c, jobno, j->inputs[i], &ins[i]);
    }
    char wtpath[VS_PATH_MAX];
    snprintf(def, sizeof(def), "templates/%s_in", c->app.name);
    if (rc == 0 &&
        find_template(c, j->wu_template ? j->wu_template : def, wtpath, sizeof(wtpath)) != 0)
        rc = fail(c, VS_ELIMIT, "job %zu: template path too long", jobno);
    if (rc == 0 && (rc = load_template(&c->in_tmpl, wtpath)) != 0)
        rc =
            fail(c, VS_ENOTFOUND, "job %zu: input template %s: %s", jobno, wtpath, vs_strerror(rc));
    struct vs_buf cmd;
    vs_buf_init(&cmd, 8192);
    const char *cmdline = NULL;
    if (rc == 0 && (p->command_line || j->command_line)) {
        if (vs_buf_printf(&cmd, "%s%s%s", p->command_line ? p->command_line : "",
                          p->command_line && j->command_line ? " " : "",
                          j->command_line ? j->command_line : "") != 0)
            rc = fail(c, VS_ELIMIT, "job %zu: command line too long", jobno);
        cmdline = vs_buf_str(&cmd);
    }
    unsigned set = 0;
    if (rc == 0) {
        rc = vs_template_input(c->in_tmpl.text, c->in_tmpl.len, c->cfg, ins, j->ninputs, cmdline,
                               wu, &set, terr, sizeof(terr));
        if (rc)
            rc = fail(c, rc, "job %zu: input template %s: %s", jobno, wtpath, terr);
    }
    vs_buf_cleanup(&cmd);
    vs_free(ins);
    if (rc == 0 && locality)
        rc = mark_sticky(c, jobno, wu, loc_file);
    if (rc)
        return rc;

    /* Flags beat the template's values. */
    apply_opt_d(&wu->rsc_fpops_est, &p->rsc_fpops_est);
    apply_opt_d(&wu->rsc_fpops_bound, &p->rsc_fpops_bound);
    apply_opt_d(&wu->rsc_memory_bound, &p->rsc_memory_bound);
    apply_opt_d(&wu->rsc_disk_bound, &p->rsc_disk_bound);
    apply_opt_d(&wu->rsc_bandwidth_bound, &p->rsc_bandwidth_bound);
    apply_opt_i(&wu->delay_bound, &p->delay_bound);
    apply_opt_i(&wu->min_quorum, &p->min_quorum);
    apply_opt_i(&wu->target_nresults, &p->target_nresults);
    apply_opt_i(&wu->max_error_results, &p->max_error_results);
    apply_opt_i(&wu->max_total_results, &p->max_total_results);
    apply_opt_i(&wu->max_success_results, &p->max_success_results);
    apply_opt_i(&wu->priority, &p->priority);
    apply_opt_i(&wu->priority, &j->priority);
    apply_opt_d(&wu->canonical_credit, &p->credit);
    apply_opt_i(&wu->hr_class, &p->hr_class);
    if (p->batch.set)
        wu->batch = (int64_t)p->batch.v;
    if (p->keywords && vs_strlcpy(wu->keywords, p->keywords, sizeof(wu->keywords)))
        return fail(c, VS_EINVAL, "--keywords too long");
    if ((rc = check_numbers(c, jobno, wu, set)) != 0)
        return rc;
    return assignment_for(c, jobno, j, pr);
}

/* Inserts job i (and its assignment). With continue_on_error each job is
 * its own savepoint, so that a taken name skips only that job. */
static int insert_job(struct cw *c, size_t i, int64_t now)
{
    struct prepared *pr = &c->pr[i];
    bool own = c->p->continue_on_error;
    int rc = own ? vs_store_begin(c->s) : 0;
    /* A locality file's workunits are placed together (their file is
     * checked by locality_name). */
    char near[VS_LOC_NAME_MAX];
    bool loc = c->app.locality_scheduling == VS_LOC_APP_FULL &&
               vs_loc_file_of_wu(pr->wu.name, near, sizeof(near)) == 0;
    if (rc == 0)
        rc = vs_store_workunit_add_near(c->s, &pr->wu, loc ? near : NULL);
    if (rc == VS_EEXISTS)
        fail(c, rc, "job %zu: a workunit named '%s' already exists", i + 1, pr->wu.name);
    else if (rc)
        fail(c, rc, "job %zu: store: %s", i + 1, vs_strerror(rc));
    if (rc == 0 && pr->assign) {
        pr->a.workunitid = pr->wu.id;
        pr->a.create_time = now;
        rc = vs_store_assignment_add(c->s, &pr->a);
        if (rc)
            fail(c, rc, "job %zu: store: %s", i + 1, vs_strerror(rc));
    }
    if (own) {
        if (rc == 0)
            rc = vs_store_commit(c->s);
        else
            (void)vs_store_rollback(c->s);
        if (rc == VS_EEXISTS && c->p->on_skip) {
            c->p->on_skip(c->p->skip_ctx, i + 1, c->err);
            pr->skipped = true;
            pr->wu.id = 0;
            rc = 0;
        }
    }
    return rc;
}

/* Whether job i goes in with others (vs_store_workunits_add): not skipped,
 * no assignment to add after it, not placed by its locality file. */
static bool plain_job(const struct cw *c, size_t i)
{
    const struct prepared *pr = &c->pr[i];
    char near[VS_LOC_NAME_MAX];
    return !pr->skipped && !pr->assign &&
           !(c->app.locality_scheduling == VS_LOC_APP_FULL &&
             vs_loc_file_of_wu(pr->wu.name, near, sizeof(near)) == 0);
}

/* Jobs per bulk insert: a COPY each on PostgreSQL. */
#define CW_BATCH 10000

/*
 * Inserts jobs [from, to), all plain_job, in the open transaction: in bulk
 * inside a savepoint, and when a name is already taken (the bulk insert
 * cannot say which) again one at a time, which names the job.
 */
static int insert_batch(struct cw *c, size_t from, size_t to, int64_t now)
{
    size_t n = to - from;
    struct vs_workunit **wus = vs_xcalloc(n, sizeof(*wus));
    for (size_t i = 0; i < n; i++)
        wus[i] = &c->pr[from + i].wu;
    int rc = vs_store_begin(c->s);
    if (rc == 0) {
        rc = vs_store_workunits_add(c->s, wus, n);
        if (rc == 0)
            rc = vs_store_commit(c->s);
        else
            (void)vs_store_rollback(c->s);
    }
    vs_free(wus);
    if (rc == VS_EEXISTS) {
        rc = 0;
        for (size_t i = from; rc == 0 && i < to; i++)
            rc = insert_job(c, i, now);
    } else if (rc) {
        fail(c, rc, "jobs %zu-%zu: store: %s", from + 1, to, vs_strerror(rc));
    }
    return rc;
}

int vs_create_work(const struct vs_project_config *cfg, struct vs_store *s,
                   const struct vs_cw_params *params, const struct vs_cw_job *jobs, size_t njobs,
                   int64_t now, struct vs_log *log, struct vs_cw_created **out_created, char *err,
                   size_t errsize)
{
    struct cw c;
    memset(&c, 0, sizeof(c));
    c.cfg = cfg;
    c.s = s;
    c.p = params;
    c.log = log;
    char errbuf[512];
    c.err = err && errsize ? err : errbuf;
    c.errsize = err && errsize ? errsize : sizeof(errbuf);
    c.err[0] = '\0';
    if (!params->appname || !*params->appname)
        return fail(&c, VS_EINVAL, "--appname is required");
    if (njobs == 0)
        return fail(&c, VS_EINVAL, "no jobs given");
    int rc = vs_store_app_by_name(s, params->appname, &c.app);
    if (rc == VS_ENOTFOUND)
        return fail(&c, VS_ENOTFOUND, "no app named '%s' (add it with `volsched app add`)",
                    params->appname);
    if (rc)
        return fail(&c, rc, "store: %s", vs_strerror(rc));
    if (params->app_version_num) {
        struct vs_catalog cat;
        memset(&cat, 0, sizeof(cat));
        if ((rc = vs_store_catalog_load(s, &cat)) != 0)
            return fail(&c, rc, "store: %s", vs_strerror(rc));
        bool found = false;
        for (size_t i = 0; i < cat.napp_versions; i++)
            found |= cat.app_versions[i].appid == c.app.id &&
                     cat.app_versions[i].version_num == params->app_version_num;
        vs_catalog_cleanup(&cat);
        if (!found)
            return fail(&c, VS_ENOTFOUND, "app '%s' has no version %d", params->appname,
                        params->app_version_num);
    }

    c.stages.follow = params->follow_symlinks;
    c.pr = vs_xcalloc(njobs, sizeof(*c.pr));
    size_t nprep = 0, nmade = 0;
    for (size_t i = 0; i < njobs && rc == 0; i++) {
        size_t stages_before = c.stages.n;
        rc = prepare_job(&c, i + 1, &jobs[i], now, &c.pr[nprep]);
        if (rc == 0) {
            vs_strset_add(&c.name_set, nprep, name_key, &c);
        } else if (params->continue_on_error) {
            if (params->on_skip)
                params->on_skip(params->skip_ctx, i + 1, c.err);
            vs_cw_stages_truncate(&c.stages, stages_before);
            c.pr[nprep].skipped = true;
            c.pr[nprep].wu.id = 0;
            rc = 0;
        }
        nprep++;
    }
    /* Everything checked: now stage files, then insert in one transaction. */
    bool in_txn = false;
    if (rc == 0)
        rc = vs_cw_stages_run(&c.stages, cfg->download_dir, c.err, c.errsize);
    if (rc == 0)
        VS_LOG(log, VS_LOG_DEBUG, "create_work: %zu input file(s) in place; inserting", c.stages.n);
    if (rc == 0 && (rc = vs_store_durable_commits(s, true)) != 0)
        fail(&c, rc, "store: %s", vs_strerror(rc));
    if (rc == 0) {
        rc = vs_store_begin(s);
        if (rc)
            fail(&c, rc, "store: %s", vs_strerror(rc));
        in_txn = rc == 0;
    }
    for (size_t i = 0; rc == 0 && i < nprep;) {
        /* A run of plain jobs goes in at once (a job per transaction
         * with continue_on_error: one at a time). */
        size_t end = i;
        while (!params->continue_on_error && end < nprep && end - i < CW_BATCH &&
               plain_job(&c, end))
            end++;
        if (end - i > 1) {
            rc = insert_batch(&c, i, end, now);
            nmade += rc == 0 ? end - i : 0;
            i = end;
            continue;
        }
        if (!c.pr[i].skipped)
            rc = insert_job(&c, i, now);
        nmade += rc == 0 && !c.pr[i].skipped;
        i++;
    }
    if (rc == 0 && nmade == 0)
        rc = fail(&c, VS_EINVAL, "every job was skipped; nothing was created");
    /* The file deleter may have removed an input nothing used while the
     * jobs were prepared; inserted now, they are users it will see (store.h,
     * vs_store_file_in_use), so a file still there stays there. */
    if (rc == 0)
        rc = vs_cw_stages_verify(&c.stages, c.err, c.errsize);
    if (in_txn) {
        if (rc == 0) {
            rc = vs_store_commit(s);
            if (rc)
                fail(&c, rc, "store commit: %s", vs_strerror(rc));
        } else {
            (void)vs_store_rollback(s);
        }
    }
    /* The caller's later commits (the transitioner pass: one per
     * workunit) need not each be synced. */
    if (vs_store_durable_commits(s, false) != 0)
        VS_LOG(log, VS_LOG_WARN, "create_work: could not restore the store's sync mode");
    if (rc) {
        vs_cw_stages_undo(&c.stages, s, log);
    } else if (out_created) {
        struct vs_cw_created *cr = vs_xcalloc(nprep, sizeof(*cr));
        for (size_t i = 0; i < nprep; i++) {
            cr[i].id = c.pr[i].skipped ? 0 : c.pr[i].wu.id;
            memcpy(cr[i].name, c.pr[i].wu.name, sizeof(cr[i].name));
        }
        *out_created = cr;
    }
    if (rc == 0)
        VS_LOG(log, VS_LOG_INFO, "create_work: %zu workunit(s) of app %s", nmade, c.app.name);
    for (size_t i = 0; i < nprep; i++)
        vs_workunit_cleanup(&c.pr[i].wu);
    vs_free(c.pr);
    vs_cw_stages_cleanup(&c.stages);
    vs_strset_cleanup(&c.name_set);
    vs_free(c.in_tmpl.text);
    vs_free(c.out_tmpl.text);
    return rc;
}
