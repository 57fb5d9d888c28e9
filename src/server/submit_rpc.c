/*
 * Remote submission's front: the form, the request's XML, the operation it
 * names, the authentication and BOINC's reply and error shapes
 * (submit.h). BOINC-COMPAT: html/user/submit_rpc_handler.php and
 * job_file.php; html/inc/xml.inc xml_error().
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "server/submit_int.h"
#include "volsched/log.h"
#include "volsched/store_project.h"
#include "volsched/str.h"

int vs_submit_create(const struct vs_project_config *cfg, struct vs_log *log,
                     struct vs_submit **out)
{
    struct vs_submit *sub = VS_NEW(struct vs_submit);
    sub->cfg = *cfg;
    sub->log = log;
    pthread_mutex_init(&sub->mu, NULL);
    *out = sub;
    return 0;
}

void vs_submit_destroy(struct vs_submit *sub)
{
    if (!sub)
        return;
    vs_store_close(sub->s);
    pthread_mutex_destroy(&sub->mu);
    vs_free(sub);
}

int vs_submit__fail(struct vs_sreq *r, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, sizeof(r->err), fmt, ap);
    va_end(ap);
    return code ? code : VS_EINVAL;
}

bool vs_submit__safe_name(const char *n)
{
    size_t len = strlen(n);
    if (len == 0 || len >= VS_NAME_MAX || strcmp(n, ".") == 0 || strcmp(n, "..") == 0 ||
        n[0] == '-')
        return false;
    for (const char *p = n; *p; p++)
        if (*p == '/' || *p == '\\' || (unsigned char)*p <= ' ' || *p == 0x7f)
            return false;
    return true;
}

int vs_submit__auth(struct vs_sreq *r, const struct vs_app *app)
{
    const char *auth = vs_xml_text_trim(vs_xml_child(r->root, "authenticator"), r->arena);
    if (!*auth)
        return vs_submit__fail(r, VS_EAUTH, "The request has no <authenticator>.");
    int rc = vs_store_user_by_auth(r->s, auth, &r->user);
    if (rc == VS_ENOTFOUND)
        return vs_submit__fail(r, VS_EAUTH,
                               "The authenticator is not the account key of any user of this "
                               "project.");
    if (rc)
        return vs_submit__fail(r, rc, "The project's store failed: %s.", vs_strerror(rc));
    vs_user_cleanup(&r->user);
    int64_t apps[VS_SUBMIT_MAX_APPS];
    size_t napps = 0;
    rc = vs_store_user_submit_get(r->s, r->user.id, &r->us, apps, VS_SUBMIT_MAX_APPS, &napps);
    if (rc == VS_ENOTFOUND)
        return vs_submit__fail(r, VS_EAUTH,
                               "User '%s' may not submit jobs to this project (the operator "
                               "grants it with `volsched user set --name %s --submit`).",
                               r->user.name, r->user.name);
    if (rc)
        return vs_submit__fail(r, rc, "The project's store failed: %s.", vs_strerror(rc));
    if (!app || r->us.submit_all)
        return 0;
    for (size_t i = 0; i < napps; i++)
        if (apps[i] == app->id)
            return 0;
    return vs_submit__fail(r, VS_EAUTH, "User '%s' may not submit jobs of app '%s'.", r->user.name,
                           app->name);
}

int vs_submit__app(struct vs_sreq *r, const char *name, struct vs_app *out)
{
    if (!name || !*name)
        return vs_submit__fail(r, VS_EINVAL, "The request names no app (<app_name>).");
    int rc = vs_store_app_by_name(r->s, name, out);
    if (rc == VS_ENOTFOUND)
        return vs_submit__fail(r, rc, "This project has no app named '%.200s'.", name);
    if (rc)
        return vs_submit__fail(r, rc, "The project's store failed: %s.", vs_strerror(rc));
    return 0;
}

int vs_submit__batch(struct vs_sreq *r, const struct vs_xml_node *n, struct vs_batch *out)
{
    const struct vs_xml_node *idn = vs_xml_child(n, "batch_id");
    const char *name = vs_xml_text_trim(vs_xml_child(n, "batch_name"), r->arena);
    int rc;
    int64_t id = 0;
    if (idn) {
        if (vs_xml_get_int64(idn, &id) != 0 || id <= 0)
            return vs_submit__fail(r, VS_EINVAL, "<batch_id> must be a positive integer.");
        rc = vs_store_batch_get(r->s, id, out);
    } else if (*name) {
        rc = vs_store_batch_by_name(r->s, name, out);
    } else {
        return vs_submit__fail(r, VS_EINVAL, "The request names no batch (<batch_id>).");
    }
    if (rc == VS_ENOTFOUND)
        return idn ? vs_submit__fail(r, rc, "There is no batch %lld.", (long long)id)
                   : vs_submit__fail(r, rc, "There is no batch named '%.200s'.", name);
    if (rc)
        return vs_submit__fail(r, rc, "The project's store failed: %s.", vs_strerror(rc));
    if (out->user_id != r->user.id)
        return vs_submit__fail(r, VS_EAUTH, "Batch %lld belongs to another user.",
                               (long long)out->id);
    return 0;
}

static int op_ping(struct vs_sreq *r)
{
    vs_xml_int(&r->w, "success", 1);
    return 0;
}

/* BOINC-COMPAT: get_templates answers the app's input and output
 * templates (by <app_name>, or the app of job <job_name>). */
static int op_get_templates(struct vs_sreq *r)
{
    const char *app_name = vs_xml_text_trim(vs_xml_child(r->root, "app_name"), r->arena);
    struct vs_app app;
    int rc;
    if (*app_name) {
        rc = vs_submit__app(r, app_name, &app);
    } else {
        const char *job = vs_xml_text_trim(vs_xml_child(r->root, "job_name"), r->arena);
        struct vs_workunit wu;
        memset(&wu, 0, sizeof(wu));
        rc = vs_store_workunit_by_name(r->s, job, &wu);
        if (rc)
            return vs_submit__fail(r, rc, "There is no job named '%.200s'.", job);
        rc = vs_store_app_get(r->s, wu.appid, &app);
        vs_workunit_cleanup(&wu);
        if (rc)
            return vs_submit__fail(r, rc, "The job's app is gone.");
    }
    if (rc == 0)
        rc = vs_submit__auth(r, &app);
    if (rc)
        return rc;
    vs_xml_open(&r->w, "templates");
    for (int i = 0; i < 2; i++) {
        char path[VS_PATH_MAX + VS_NAME_MAX + 32];
        snprintf(path, sizeof(path), "%s/templates/%s_%s", r->sub->cfg.dir, app.name,
                 i ? "out" : "in");
        struct vs_buf t;
        vs_buf_init(&t, 1 << 20);
        rc = vs_buf_append_file(&t, path);
        if (rc == 0)
            vs_xml_raw_write(&r->w, t.data ? t.data : "", t.len);
        vs_buf_cleanup(&t);
        if (rc)
            return vs_submit__fail(r, rc, "App '%s' has no %s template (templates/%s_%s).",
                                   app.name, i ? "output" : "input", app.name, i ? "out" : "in");
    }
    vs_xml_close(&r->w);
    return 0;
}

struct op {
    const char *name;
    int (*fn)(struct vs_sreq *r);
    bool job_file; /* served by job_file.php (else submit_rpc_handler.php) */
};

static const struct op ops[] = {
    {"ping", op_ping, false},
    {"get_templates", op_get_templates, false},
    {"estimate_batch", vs_submit__estimate_batch, false},
    {"create_batch", vs_submit__create_batch, false},
    {"submit_batch", vs_submit__submit_batch, false},
    {"query_batches", vs_submit__query_batches, false},
    {"query_batch", vs_submit__query_batch, false},
    {"query_job", vs_submit__query_job, false},
    {"query_completed_job", vs_submit__query_completed_job, false},
    {"abort_batch", vs_submit__abort_batch, false},
    {"abort_jobs", vs_submit__abort_jobs, false},
    {"retire_batch", vs_submit__retire_batch, false},
    {"set_expire_time", vs_submit__set_expire_time, false},
    {"query_files", vs_submit__query_files, true},
    {"upload_files", vs_submit__upload_files, true},
};

/* BOINC-COMPAT: <error><error_num>-1</error_num><error_msg>...</error_msg></error>. */
static void write_error(struct vs_xml_writer *w, const char *msg)
{
    vs_xml_open(w, "error");
    vs_xml_int(w, "error_num", -1);
    vs_xml_str(w, "error_msg", msg);
    vs_xml_close(w);
}

static int ensure_store(struct vs_submit *sub)
{
    if (sub->s)
        return 0;
    return vs_project_store_open(&sub->cfg, false, sub->log, &sub->s);
}

/* Runs op under the lock; the reply's inside goes to out (truncated back
 * to its start on a refusal, which then writes the error). */
static void run_op(struct vs_submit *sub, const struct op *op, struct vs_sreq *r, const char *peer)
{
    size_t start = r->out->len;
    vs_xml_writer_init(&r->w, r->out);
    r->w.stack[0] = op->name; /* inside <OP>, which the caller writes */
    r->w.depth = 1;
    pthread_mutex_lock(&sub->mu);
    int rc = ensure_store(sub);
    r->s = sub->s;
    if (rc)
        vs_submit__fail(r, rc, "The project's store cannot be opened: %s.", vs_strerror(rc));
    else
        rc = op->fn(r);
    if (rc == 0 && r->w.err)
        rc = vs_submit__fail(r, VS_ELIMIT, "The reply is larger than this server sends.");
    pthread_mutex_unlock(&sub->mu);
    if (rc) {
        atomic_fetch_add(&sub->n_refused, 1);
        VS_LOG(sub->log, VS_LOG_INFO, "submit: %s from %s (user %lld) refused: %s", op->name, peer,
               (long long)r->user.id, r->err);
        r->out->len = start;
        if (r->out->data)
            r->out->data[start] = '\0';
        vs_xml_writer_init(&r->w, r->out);
        r->w.stack[0] = op->name;
        r->w.depth = 1;
        write_error(&r->w, r->err);
    } else {
        VS_LOG(sub->log, VS_LOG_DEBUG, "submit: %s from %s (user %lld) done", op->name, peer,
               (long long)r->user.id);
    }
}

int vs_submit_http(void *ctx, const struct vs_http_api_req *req, struct vs_buf *out)
{
    struct vs_submit *sub = ctx;
    atomic_fetch_add(&sub->n_requests, 1);
    bool job_file = strcmp(req->path, "job_file.php") == 0;
    struct vs_arena arena;
    vs_arena_init(&arena, 64 * 1024);
    struct vs_form *form = VS_NEW(struct vs_form);
    struct vs_sreq r;
    memset(&r, 0, sizeof(r));
    r.sub = sub;
    r.arena = &arena;
    r.form = form;
    r.out = out;
    r.now = (int64_t)time(NULL);
    int rc = vs_buf_puts(out, "<?xml version=\"1.0\" encoding=\"ISO-8859-1\" ?>\n");
    const struct op *op = NULL;
    char err[300] = "";
    rc = rc ? rc
            : vs_form_parse(req->content_type, req->body, req->len, &arena, form, err, sizeof(err));
    const struct vs_form_field *rf = rc ? NULL : vs_form_field_get(form, "request");
    if (rc == 0 && !rf) {
        snprintf(err, sizeof(err), "The form has no 'request' field (POST request=<OP>...</OP>).");
        rc = VS_EINVAL;
    }
    struct vs_xml_doc doc;
    if (rc == 0) {
        struct vs_xml_limits lim;
        vs_xml_limits_default(&lim);
        lim.max_input = rf->len + 1;
        lim.max_elements = 16u * VS_SUBMIT_MAX_JOBS;
        lim.max_text = VS_SUBMIT_MAX_INLINE;
        struct vs_xml_error xe;
        memset(&xe, 0, sizeof(xe));
        rc = vs_xml_parse(rf->value, rf->len, &lim, 0, &arena, &doc, &xe);
        if (rc)
            snprintf(err, sizeof(err), "The request is not well-formed XML: %s.", xe.msg);
    }
    if (rc == 0) {
        for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]) && !op; i++)
            if (strcmp(ops[i].name, doc.root->name) == 0 && ops[i].job_file == job_file)
                op = &ops[i];
        if (!op) {
            snprintf(err, sizeof(err), "%s does not know the operation <%.100s>.", req->path,
                     doc.root->name);
            rc = VS_EINVAL;
        }
    }
    if (rc == 0) {
        r.root = doc.root;
        rc = vs_buf_printf(out, "<%s>\n", op->name);
        if (rc == 0)
            run_op(sub, op, &r, req->peer);
        rc = rc ? rc : vs_buf_printf(out, "</%s>\n", op->name);
    } else {
        atomic_fetch_add(&sub->n_refused, 1);
        VS_LOG(sub->log, VS_LOG_INFO, "submit: %s from %s refused: %s", req->path, req->peer, err);
        struct vs_xml_writer w;
        vs_xml_writer_init(&w, out);
        write_error(&w, err);
        rc = vs_xml_writer_error(&w);
    }
    vs_free(form);
    vs_arena_cleanup(&arena);
    return rc == 0 ? 200 : 500;
}
