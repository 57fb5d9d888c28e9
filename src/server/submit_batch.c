/*
 * estimate_batch, create_batch and submit_batch (BOINC-COMPAT:
 * submit_rpc_handler.php). A submission is one vs_create_work call: every
 * job checked first, then the workunits inserted in one transaction; when
 * anything is refused nothing is left, neither the jobs, nor a batch row
 * made for them, nor an inline file written for them that nothing else
 * uses.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/submit_int.h"
#include "volsched/create_work.h"
#include "volsched/layout.h"
#include "volsched/log.h"
#include "volsched/md5.h"
#include "volsched/str.h"
#include "volsched/submit_policy.h"

/* The batch's <job_params> and its other numbers, as create_work flags. */
static int read_opt(struct vs_sreq *r, const struct vs_xml_node *parent, const char *tag,
                    struct vs_cw_opt *o)
{
    const struct vs_xml_node *n = vs_xml_child(parent, tag);
    if (!n)
        return 0;
    if (vs_xml_get_double(n, &o->v) != 0)
        return vs_submit__fail(r, VS_EINVAL, "<%s> must be a number.", tag);
    o->set = true;
    return 0;
}

static int read_params(struct vs_sreq *r, const struct vs_xml_node *batch, struct vs_cw_params *p)
{
    const struct vs_xml_node *jp = vs_xml_child(batch, "job_params");
    int rc = read_opt(r, jp, "rsc_fpops_est", &p->rsc_fpops_est);
    rc = rc ? rc : read_opt(r, jp, "rsc_fpops_bound", &p->rsc_fpops_bound);
    rc = rc ? rc : read_opt(r, jp, "rsc_memory_bound", &p->rsc_memory_bound);
    rc = rc ? rc : read_opt(r, jp, "rsc_disk_bound", &p->rsc_disk_bound);
    rc = rc ? rc : read_opt(r, jp, "delay_bound", &p->delay_bound);
    rc = rc ? rc : read_opt(r, batch, "priority", &p->priority);
    int64_t avn = 0;
    const struct vs_xml_node *n = vs_xml_child(batch, "app_version_num");
    if (rc == 0 && n && (vs_xml_get_int64(n, &avn) != 0 || avn < 0 || avn > 1000000000))
        rc = vs_submit__fail(r, VS_EINVAL, "<app_version_num> must be a version number.");
    p->app_version_num = (int)avn;
    return rc;
}

/* A template named by the batch (<input_template_filename>): a file of
 * the project's templates/ directory, by plain name. */
static int template_path(struct vs_sreq *r, const struct vs_xml_node *batch, const char *tag,
                         const char **out)
{
    const char *name = vs_xml_text_trim(vs_xml_child(batch, tag), r->arena);
    *out = NULL;
    if (!*name)
        return 0;
    if (!vs_submit__safe_name(name))
        return vs_submit__fail(r, VS_EINVAL,
                               "<%s> '%.200s' must be the plain name of a file in the project's "
                               "templates/ directory.",
                               tag, name);
    size_t n = strlen(name) + 16;
    char *p = vs_arena_alloc(r->arena, n);
    snprintf(p, n, "templates/%s", name);
    *out = p;
    return 0;
}

/* The app named under node (<app_name>), which the requester may submit to. */
static int batch_app(struct vs_sreq *r, const struct vs_xml_node *node, struct vs_app *out)
{
    int rc = vs_submit__app(r, vs_xml_text_trim(vs_xml_child(node, "app_name"), r->arena), out);
    return rc ? rc : vs_submit__auth(r, out);
}

/* A new batch row of the requester's for app, named by <batch_name> under
 * node or "user:app:time" (BOINC-COMPAT make_batch_name), inserted. */
static int new_batch(struct vs_sreq *r, const struct vs_xml_node *node, const struct vs_app *app,
                     struct vs_batch *b)
{
    memset(b, 0, sizeof(*b));
    b->user_id = r->user.id;
    b->app_id = app->id;
    b->create_time = r->now;
    b->state = VS_BATCH_INIT;
    const char *name = vs_xml_text_trim(vs_xml_child(node, "batch_name"), r->arena);
    if (*name && vs_strlcpy(b->name, name, sizeof(b->name)) != 0)
        return vs_submit__fail(r, VS_ELIMIT, "<batch_name> is longer than %d bytes.",
                               VS_NAME_MAX - 1);
    if (!*name)
        snprintf(b->name, sizeof(b->name), "%.100s:%.100s:%lld", r->user.name, app->name,
                 (long long)r->now);
    int rc = vs_store_batch_add(r->s, b);
    if (rc)
        return vs_submit__fail(r, rc, "The batch could not be stored: %s.", vs_strerror(rc));
    return 0;
}

int vs_submit__estimate_batch(struct vs_sreq *r)
{
    const struct vs_xml_node *batch = vs_xml_child(r->root, "batch");
    struct vs_app app;
    int rc = batch_app(r, batch, &app);
    if (rc)
        return rc;
    struct vs_cw_params p;
    memset(&p, 0, sizeof(p));
    if ((rc = read_params(r, batch, &p)) != 0)
        return rc;
    double flops = 0;
    size_t njobs = 0;
    for (const struct vs_xml_node *j = vs_xml_child(batch, "job"); j; j = vs_xml_next_same(j)) {
        double x = 0;
        const struct vs_xml_node *e = vs_xml_child(j, "rsc_fpops_est");
        if (e && vs_xml_get_double(e, &x) != 0)
            return vs_submit__fail(r, VS_EINVAL, "job %zu: <rsc_fpops_est> must be a number.",
                                   njobs + 1);
        if (!e)
            x = p.rsc_fpops_est.set ? p.rsc_fpops_est.v : 0;
        if (x <= 0)
            return vs_submit__fail(r, VS_EINVAL, "job %zu: no <rsc_fpops_est> given.", njobs + 1);
        flops += x;
        njobs++;
    }
    /* BOINC-COMPAT: a crude estimate, the batch's FLOPs over the project's
     * speed; BOINC takes that from its users' recent credit, which with
     * none is 1 GFLOPS: what is said here too. */
    vs_xml_double(&r->w, "seconds", flops / 1e9);
    return 0;
}

int vs_submit__create_batch(struct vs_sreq *r)
{
    struct vs_app app;
    int rc = batch_app(r, r->root, &app);
    if (rc)
        return rc;
    double expire = 0;
    const struct vs_xml_node *et = vs_xml_child(r->root, "expire_time");
    if (et && (vs_xml_get_double(et, &expire) != 0 || expire < 0))
        return vs_submit__fail(r, VS_EINVAL, "<expire_time> must be a time (seconds).");
    struct vs_batch b;
    if ((rc = new_batch(r, r->root, &app, &b)) != 0)
        return rc;
    if (expire > 0) {
        b.expire_time = expire;
        if ((rc = vs_store_batch_update(r->s, &b)) != 0)
            return vs_submit__fail(r, rc, "The batch could not be stored: %s.", vs_strerror(rc));
    }
    VS_LOG(r->sub->log, VS_LOG_INFO, "submit: user %lld created batch %lld (%s)",
           (long long)r->user.id, (long long)b.id, b.name);
    vs_xml_int(&r->w, "batch_id", b.id);
    return 0;
}

/* The inline files this submission wrote into the download hierarchy
 * (removed again if it fails, unless something uses them by then). */
struct written {
    char **names;
    size_t n, cap;
};

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? -errno : VS_EIO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Puts an inline input's bytes in the download hierarchy under its
 * content's name jf_<md5> (BOINC-COMPAT: job_file_name()), unless a file
 * of that name is there: the name is its content. Written to a temporary
 * name and renamed, so the file is whole or absent; made durable by the
 * caller's one syncfs. */
static int put_inline(struct vs_sreq *r, const char *data, size_t len, char *name, size_t namesize,
                      struct written *wr)
{
    char md5[VS_MD5_HEX_LEN + 1];
    int rc = vs_md5_hex(data, len, md5);
    if (rc)
        return rc;
    snprintf(name, namesize, "jf_%s", md5);
    char path[VS_PATH_MAX], tmp[VS_PATH_MAX + 32];
    if ((rc = vs_project_download_path(&r->sub->cfg, name, true, path, sizeof(path))) != 0)
        return rc;
    struct stat st;
    if (stat(path, &st) == 0 && (size_t)st.st_size == len)
        return 0;
    snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    rc = write_all(fd, data, len);
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -errno;
    if (rc) {
        unlink(tmp);
        return rc;
    }
    if (wr->n == wr->cap) {
        wr->cap = wr->cap ? 2 * wr->cap : 64;
        wr->names = vs_xrealloc(wr->names, wr->cap * sizeof(*wr->names));
    }
    wr->names[wr->n++] = vs_arena_strndup(r->arena, name, strlen(name));
    return 0;
}

/* Removes the inline files a failed submission wrote, except those some
 * workunit or app version uses by then (vs_store_file_in_use). */
static void undo_inline(struct vs_sreq *r, const struct written *wr)
{
    if (wr->n == 0 || vs_store_begin(r->s) != 0)
        return;
    for (size_t i = 0; i < wr->n; i++) {
        bool used = true;
        char path[VS_PATH_MAX];
        if (vs_store_file_in_use(r->s, wr->names[i], 0, &used) == 0 && !used &&
            vs_project_download_path(&r->sub->cfg, wr->names[i], false, path, sizeof(path)) == 0)
            unlink(path);
    }
    if (vs_store_commit(r->s) != 0)
        VS_LOG(r->sub->log, VS_LOG_WARN, "submit: inline files of a failed submission kept");
}

struct jobs {
    struct vs_cw_job *v;
    size_t n;
    const char **inputs;      /* every job's inputs, one array */
    struct vs_cw_remote *rem; /* parallel to inputs */
    size_t ninputs;
    const char *wu_template, *result_template; /* the batch's, or NULL */
};

static int read_input(struct vs_sreq *r, size_t jobno, const struct vs_xml_node *f, struct jobs *js,
                      struct written *wr)
{
    const char *mode = vs_xml_text_trim(vs_xml_child(f, "mode"), r->arena);
    size_t k = js->ninputs++;
    memset(&js->rem[k], 0, sizeof(js->rem[k]));
    const struct vs_xml_node *src = vs_xml_child(f, "source");
    if (strcmp(mode, "local_staged") == 0) {
        const char *name = vs_xml_text_trim(src, r->arena);
        if (!vs_submit__safe_name(name))
            return vs_submit__fail(r, VS_EINVAL,
                                   "job %zu: local_staged input '%.200s' is not a plain file "
                                   "name (upload it with job_file.php and name it).",
                                   jobno, name);
        js->inputs[k] = name;
        return 0;
    }
    if (strcmp(mode, "inline") == 0) {
        if (!src)
            return vs_submit__fail(r, VS_EINVAL, "job %zu: inline input without <source>.", jobno);
        char name[VS_NAME_MAX];
        int rc = put_inline(r, src->text, src->text_len, name, sizeof(name), wr);
        if (rc)
            return vs_submit__fail(r, rc, "job %zu: the inline input could not be written: %s.",
                                   jobno, vs_strerror(rc));
        js->inputs[k] = vs_arena_strndup(r->arena, name, strlen(name));
        return 0;
    }
    if (strcmp(mode, "remote") == 0) {
        struct vs_cw_remote *rm = &js->rem[k];
        rm->url = vs_xml_text_trim(vs_xml_child(f, "url"), r->arena);
        rm->md5 = vs_xml_text_trim(vs_xml_child(f, "md5"), r->arena);
        if (!vs_str_has_prefix(rm->url, "http://") && !vs_str_has_prefix(rm->url, "https://"))
            return vs_submit__fail(r, VS_EINVAL, "job %zu: a remote input needs an http(s) <url>.",
                                   jobno);
        if (vs_xml_get_double(vs_xml_child(f, "nbytes"), &rm->nbytes) != 0 || rm->nbytes < 0)
            return vs_submit__fail(r, VS_EINVAL, "job %zu: a remote input needs <nbytes>.", jobno);
        js->inputs[k] = rm->url;
        return 0;
    }
    if (strcmp(mode, "local") == 0 || strcmp(mode, "semilocal") == 0 ||
        strcmp(mode, "sandbox") == 0)
        return vs_submit__fail(r, VS_EUNSUPPORTED,
                               "job %zu: input mode '%s' reads the server's own files and is not "
                               "offered; use inline, local_staged (after job_file.php) or remote.",
                               jobno, mode);
    return vs_submit__fail(r, VS_EINVAL,
                           "job %zu: unknown input <mode> '%.100s' (inline, local_staged or "
                           "remote).",
                           jobno, mode);
}

static int read_target(struct vs_sreq *r, size_t jobno, const struct vs_xml_node *j,
                       const char *tag, int64_t *out)
{
    const struct vs_xml_node *n = vs_xml_child(j, tag);
    if (n && (vs_xml_get_int64(n, out) != 0 || *out < 0))
        return vs_submit__fail(r, VS_EINVAL, "job %zu: <%s> must be an id.", jobno, tag);
    return 0;
}

static int read_jobs(struct vs_sreq *r, const struct vs_xml_node *batch, int64_t batch_id,
                     struct jobs *js, struct written *wr)
{
    size_t njobs = 0, nin = 0;
    for (const struct vs_xml_node *j = vs_xml_child(batch, "job"); j; j = vs_xml_next_same(j)) {
        njobs++;
        for (const struct vs_xml_node *f = vs_xml_child(j, "input_file"); f;
             f = vs_xml_next_same(f))
            nin++;
    }
    if (njobs == 0)
        return vs_submit__fail(r, VS_EINVAL, "The batch has no <job>.");
    if (njobs > VS_SUBMIT_MAX_JOBS)
        return vs_submit__fail(r, VS_ELIMIT,
                               "The batch has %zu jobs; at most %u go in one "
                               "submit_batch.",
                               njobs, VS_SUBMIT_MAX_JOBS);
    js->v = vs_arena_alloc(r->arena, njobs * sizeof(*js->v));
    js->inputs = vs_arena_alloc(r->arena, (nin + 1) * sizeof(*js->inputs));
    js->rem = vs_arena_alloc(r->arena, (nin + 1) * sizeof(*js->rem));
    for (const struct vs_xml_node *j = vs_xml_child(batch, "job"); j; j = vs_xml_next_same(j)) {
        size_t no = js->n + 1;
        struct vs_cw_job *cj = &js->v[js->n++];
        if (vs_xml_child(j, "input_template") || vs_xml_child(j, "output_template"))
            return vs_submit__fail(r, VS_EUNSUPPORTED,
                                   "job %zu: per-job templates are not offered; put the "
                                   "template in the project's templates/ and name it with "
                                   "<input_template_filename>.",
                                   no);
        const char *name = vs_xml_text_trim(vs_xml_child(j, "name"), r->arena);
        if (*name && !vs_submit__safe_name(name))
            return vs_submit__fail(r, VS_EINVAL, "job %zu: bad job name '%.200s'.", no, name);
        if (!*name) {
            char auto_name[VS_NAME_MAX];
            snprintf(auto_name, sizeof(auto_name), "b%lld_%zu", (long long)batch_id, no);
            name = vs_arena_strndup(r->arena, auto_name, strlen(auto_name));
        }
        cj->wu_name = name;
        cj->wu_template = js->wu_template;
        cj->result_template = js->result_template;
        const struct vs_xml_node *cl = vs_xml_child(j, "command_line");
        cj->command_line = cl ? vs_xml_text_trim(cl, r->arena) : NULL;
        int rc = read_target(r, no, j, "target_host", &cj->target_host);
        rc = rc ? rc : read_target(r, no, j, "target_user", &cj->target_user);
        rc = rc ? rc : read_target(r, no, j, "target_team", &cj->target_team);
        rc = rc ? rc : read_opt(r, j, "priority", &cj->priority);
        if (rc)
            return rc;
        cj->inputs = js->inputs + js->ninputs;
        cj->remote = js->rem + js->ninputs;
        for (const struct vs_xml_node *f = vs_xml_child(j, "input_file"); f && rc == 0;
             f = vs_xml_next_same(f))
            rc = read_input(r, no, f, js, wr);
        if (rc)
            return rc;
        cj->ninputs = (size_t)(js->inputs + js->ninputs - cj->inputs);
    }
    return 0;
}

/* The batch submit_batch adds to: the one named (INIT, the requester's,
 * of this app) or a new one (*out_made). */
static int target_batch(struct vs_sreq *r, const struct vs_xml_node *batch,
                        const struct vs_app *app, struct vs_batch *b, bool *out_made)
{
    *out_made = false;
    if (vs_xml_child(batch, "batch_id")) {
        int rc = vs_submit__batch(r, batch, b);
        if (rc)
            return rc;
        if (b->state != VS_BATCH_INIT)
            return vs_submit__fail(r, VS_ESTATE,
                                   "Batch %lld was submitted already (jobs go into a batch once, "
                                   "right after create_batch).",
                                   (long long)b->id);
        if (b->app_id != app->id)
            return vs_submit__fail(r, VS_EINVAL, "Batch %lld is a batch of another app.",
                                   (long long)b->id);
        return 0;
    }
    int rc = new_batch(r, batch, app, b);
    if (rc)
        return rc;
    *out_made = true;
    return 0;
}

/*
 * The fair share (volsched/submit_policy.h): the jobs without a priority of
 * their own get their virtual times' priorities, from the submitter's clock
 * and the project's; *out_vt is the submitter's clock after them.
 */
static int fair_priorities(struct vs_sreq *r, struct jobs *js, double *out_vt)
{
    bool any;
    int head;
    double vt_max;
    int rc = vs_store_submit_clock(r->s, &any, &head, &vt_max);
    if (rc)
        return vs_submit__fail(r, rc, "The project's store failed: %s.", vs_strerror(rc));
    double v = any ? vs_sp_fair_vt_of_priority(head) : vt_max;
    double start = vs_sp_fair_start(r->us.logical_start_time, v);
    size_t k = 0;
    double vt = start;
    for (size_t i = 0; i < js->n; i++) {
        if (js->v[i].priority.set)
            continue;
        vt = vs_sp_fair_vtime(start, r->us.quota, k++);
        js->v[i].priority.set = true;
        js->v[i].priority.v = vs_sp_fair_priority(vt);
    }
    *out_vt = vt;
    return 0;
}

/* Records that the batch uses the job_file.php files its jobs name. */
static void note_job_files(struct vs_sreq *r, const struct jobs *js, int64_t batch)
{
    for (size_t i = 0; i < js->ninputs; i++) {
        int64_t id;
        if (js->rem[i].url || vs_store_job_file_get(r->s, js->inputs[i], &id) != 0)
            continue;
        if (vs_store_batch_file_add(r->s, id, batch) != 0)
            VS_LOG(r->sub->log, VS_LOG_WARN, "submit: batch %lld: cannot record its use of %s",
                   (long long)batch, js->inputs[i]);
    }
}

int vs_submit__submit_batch(struct vs_sreq *r)
{
    const struct vs_xml_node *batch = vs_xml_child(r->root, "batch");
    if (!batch)
        return vs_submit__fail(r, VS_EINVAL, "submit_batch needs a <batch>.");
    struct vs_app app;
    int rc = batch_app(r, batch, &app);
    if (rc)
        return rc;
    struct vs_cw_params p;
    memset(&p, 0, sizeof(p));
    p.appname = app.name;
    p.staged_only = true;
    struct jobs js;
    memset(&js, 0, sizeof(js));
    rc = read_params(r, batch, &p);
    rc = rc ? rc : template_path(r, batch, "input_template_filename", &js.wu_template);
    rc = rc ? rc : template_path(r, batch, "output_template_filename", &js.result_template);
    if (rc)
        return rc;
    bool own = vs_xml_child(batch, "own_hosts") != NULL;
    if (own)
        p.target_user = r->user.id; /* through the assignment mechanism */
    struct vs_batch b;
    bool made;
    if ((rc = target_batch(r, batch, &app, &b, &made)) != 0)
        return rc;
    p.batch.set = true;
    p.batch.v = (double)b.id;
    struct written wr;
    memset(&wr, 0, sizeof(wr));
    rc = read_jobs(r, batch, b.id, &js, &wr);
    if (rc == 0 && wr.n > 0) {
        /* The inline files, durable before the jobs that name them. */
        int fd = open(r->sub->cfg.download_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || syncfs(fd) != 0)
            rc = vs_submit__fail(r, VS_EIO, "The inline inputs could not be synced to disk.");
        if (fd >= 0)
            close(fd);
    }
    double vt_end = 0;
    if (rc == 0 && !p.priority.set)
        rc = fair_priorities(r, &js, &vt_end);
    if (rc == 0) {
        struct vs_cw_job *jobs = js.v;
        for (size_t i = 0; i < js.n; i++) {
            /* A job without a remote input needs no remote array. */
            bool any = false;
            for (size_t k = 0; k < jobs[i].ninputs; k++)
                any |= jobs[i].remote[k].url != NULL;
            if (!any)
                jobs[i].remote = NULL;
        }
        char err[512];
        rc = vs_create_work(&r->sub->cfg, r->s, &p, jobs, js.n, r->now, r->sub->log, NULL, err,
                            sizeof(err));
        if (rc)
            vs_submit__fail(r, rc, "No job was created: %s.", err);
    }
    if (rc == 0) {
        b.njobs += (int64_t)js.n;
        b.state = VS_BATCH_IN_PROGRESS;
        b.own_hosts = own;
        b.priority = p.priority.set ? (int)p.priority.v : 0;
        int urc = vs_store_batch_update(r->s, &b);
        if (urc)
            VS_LOG(r->sub->log, VS_LOG_ERROR, "submit: batch %lld: state not written: %s",
                   (long long)b.id, vs_strerror(urc));
        note_job_files(r, &js, b.id);
        if (vt_end > 0 && vs_store_user_submit_set_clock(r->s, r->user.id, vt_end) != 0)
            VS_LOG(r->sub->log, VS_LOG_WARN, "submit: user %lld: fair-share clock not written",
                   (long long)r->user.id);
        atomic_fetch_add(&r->sub->n_jobs, js.n);
        VS_LOG(r->sub->log, VS_LOG_INFO, "submit: user %lld submitted %zu jobs of %s as batch %lld",
               (long long)r->user.id, js.n, app.name, (long long)b.id);
        vs_xml_int(&r->w, "batch_id", b.id);
    } else {
        undo_inline(r, &wr);
        if (made && vs_store_batch_delete(r->s, b.id) != 0)
            VS_LOG(r->sub->log, VS_LOG_WARN, "submit: batch %lld left empty", (long long)b.id);
    }
    vs_free(wr.names);
    return rc;
}
