/*
 * The submission API's queries (BOINC-COMPAT: submit_rpc_handler.php
 * query_batches, query_batch, query_job, query_completed_job). A batch's
 * jobs are streamed from the store into the reply, never held as a list,
 * so query_batch of a 100,000-job batch costs the reply and one row.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "server/submit_int.h"
#include "volsched/daemon_util.h"
#include "volsched/layout.h"

int vs_submit__refresh(struct vs_store *s, struct vs_batch *b, int64_t now,
                       struct vs_batch_progress *out_p)
{
    struct vs_batch_progress p;
    int rc = vs_store_batch_progress(s, b->id, &p);
    if (rc)
        return rc;
    struct vs_batch old = *b;
    if (p.njobs > 0 || b->state != VS_BATCH_INIT)
        b->njobs = p.njobs;
    b->nerror_jobs = p.nerror;
    b->credit_canonical = p.credit_canonical;
    b->fraction_done = b->njobs ? (double)(p.ndone + p.nerror) / (double)b->njobs : 0;
    if (b->state == VS_BATCH_IN_PROGRESS && b->njobs > 0 && p.ndone + p.nerror == b->njobs) {
        b->state = VS_BATCH_COMPLETE;
        b->completion_time = now;
    }
    if (memcmp(&old, b, sizeof(old)) != 0)
        rc = vs_store_batch_update(s, b);
    if (out_p)
        *out_p = p;
    return rc;
}

static void print_batch(struct vs_sreq *r, const struct vs_batch *b, const char *app_name,
                        const struct vs_batch_progress *p, bool cpu)
{
    struct vs_xml_writer *w = &r->w;
    vs_xml_int(w, "id", b->id);
    vs_xml_int(w, "create_time", b->create_time);
    vs_xml_double(w, "expire_time", b->expire_time);
    vs_xml_double(w, "est_completion_time", b->est_completion_time);
    vs_xml_int(w, "njobs", b->njobs);
    vs_xml_double(w, "fraction_done", b->fraction_done);
    vs_xml_int(w, "nerror_jobs", b->nerror_jobs);
    vs_xml_int(w, "state", b->state);
    vs_xml_int(w, "completion_time", b->completion_time);
    vs_xml_double(w, "credit_estimate", b->credit_estimate);
    vs_xml_double(w, "credit_canonical", b->credit_canonical);
    vs_xml_str(w, "name", b->name);
    vs_xml_str(w, "app_name", app_name);
    /* volsched: the counts behind fraction_done (BOINC clients skip them). */
    if (p) {
        vs_xml_int(w, "njobs_done", p->ndone);
        vs_xml_int(w, "njobs_in_progress", p->in_progress);
        if (cpu)
            vs_xml_double(w, "total_cpu_time", p->cpu_time);
    }
}

static const char *app_name_of(struct vs_sreq *r, int64_t app_id)
{
    struct vs_app app;
    if (vs_store_app_get(r->s, app_id, &app) != 0)
        return "none";
    return vs_arena_strndup(r->arena, app.name, strlen(app.name));
}

static bool flag(struct vs_sreq *r, const char *tag)
{
    int64_t v = 0;
    const struct vs_xml_node *n = vs_xml_child(r->root, tag);
    return n && vs_xml_get_int64(n, &v) == 0 && v != 0;
}

struct batches_ctx {
    struct vs_sreq *r;
    bool cpu;
    int rc;
};

static int each_batch(void *ctx, const struct vs_batch *bb)
{
    struct batches_ctx *c = ctx;
    if (bb->state == VS_BATCH_RETIRED)
        return 0;
    struct vs_batch b = *bb;
    struct vs_batch_progress p;
    int rc = vs_submit__refresh(c->r->s, &b, c->r->now, &p);
    if (rc) {
        c->rc = rc;
        return 1;
    }
    vs_xml_open(&c->r->w, "batch");
    print_batch(c->r, &b, app_name_of(c->r, b.app_id), &p, c->cpu);
    vs_xml_close(&c->r->w);
    return 0;
}

int vs_submit__query_batches(struct vs_sreq *r)
{
    int rc = vs_submit__auth(r, NULL);
    if (rc)
        return rc;
    /* The refreshes write: one transaction for all of them. */
    if ((rc = vs_store_begin(r->s)) != 0)
        return vs_submit__fail(r, rc, "The project's store is busy: %s.", vs_strerror(rc));
    struct batches_ctx c = {.r = r, .cpu = flag(r, "get_cpu_time")};
    rc = vs_store_batches_of_user(r->s, r->user.id, each_batch, &c);
    if (rc == 1 || c.rc)
        rc = c.rc;
    if (rc == 0)
        rc = vs_store_commit(r->s);
    else
        (void)vs_store_rollback(r->s);
    if (rc)
        return vs_submit__fail(r, rc, "The project's store failed: %s.", vs_strerror(rc));
    return 0;
}

struct jobs_ctx {
    struct vs_xml_writer *w;
    bool details;
};

/* BOINC-COMPAT: show_job_details(). */
static int each_job(void *ctx, const struct vs_batch_job *j)
{
    struct jobs_ctx *c = ctx;
    struct vs_xml_writer *w = c->w;
    vs_xml_open(w, "job");
    vs_xml_int(w, "id", j->id);
    vs_xml_str(w, "name", j->name);
    vs_xml_int(w, "canonical_instance_id", j->canonical_resultid);
    if (c->details) {
        static const struct {
            int bit;
            const char *name;
        } errs[] = {
            {VS_WU_ERROR_COULDNT_SEND_RESULT, "couldnt_send_result"},
            {VS_WU_ERROR_TOO_MANY_ERROR_RESULTS, "too_many_error_results"},
            {VS_WU_ERROR_TOO_MANY_SUCCESS_RESULTS, "too_many_success_results"},
            {VS_WU_ERROR_TOO_MANY_TOTAL_RESULTS, "too_many_total_results"},
            {VS_WU_ERROR_CANCELLED, "cancelled"},
            {VS_WU_ERROR_NO_CANONICAL_RESULT, "no_canonical_result"},
        };
        for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
            if (j->error_mask & errs[i].bit)
                vs_xml_str(w, "error", errs[i].name);
        if (j->canonical_resultid)
            vs_xml_double(w, "cpu_time", j->cpu_time);
        const char *status = j->error_mask           ? "error"
                             : j->canonical_resultid ? "done"
                             : j->in_progress > 0    ? "in_progress"
                                                     : "queued";
        vs_xml_str(w, "status", status);
    }
    vs_xml_close(w);
    return w->err ? VS_ELIMIT : 0;
}

int vs_submit__query_batch(struct vs_sreq *r)
{
    struct vs_batch b;
    int rc = vs_submit__auth(r, NULL);
    rc = rc ? rc : vs_submit__batch(r, r->root, &b);
    if (rc)
        return rc;
    struct vs_batch_progress p;
    if ((rc = vs_store_begin(r->s)) == 0) {
        rc = vs_submit__refresh(r->s, &b, r->now, &p);
        rc = rc ? (vs_store_rollback(r->s), rc) : vs_store_commit(r->s);
    }
    if (rc)
        return vs_submit__fail(r, rc, "The project's store failed: %s.", vs_strerror(rc));
    print_batch(r, &b, app_name_of(r, b.app_id), &p, flag(r, "get_cpu_time"));
    struct jobs_ctx c = {.w = &r->w, .details = flag(r, "get_job_details")};
    rc = vs_store_batch_jobs(r->s, b.id, each_job, &c);
    if (rc == VS_ELIMIT)
        return vs_submit__fail(r, rc, "The batch's list of jobs is larger than a reply may be.");
    if (rc)
        return vs_submit__fail(r, rc, "The project's store failed: %s.", vs_strerror(rc));
    return 0;
}

/* BOINC-COMPAT: html/inc/result.inc state_string(), in short. */
static const char *state_string(const struct vs_result *res)
{
    switch (res->server_state) {
    case VS_RESULT_SERVER_STATE_INACTIVE:
        return "Inactive";
    case VS_RESULT_SERVER_STATE_UNSENT:
        return "Unsent";
    case VS_RESULT_SERVER_STATE_IN_PROGRESS:
        return "In progress";
    default:
        break;
    }
    switch (res->outcome) {
    case VS_RESULT_OUTCOME_SUCCESS:
        return res->validate_state == 1   ? "Completed and validated"
               : res->validate_state == 2 ? "Completed, marked as invalid"
                                          : "Completed, waiting for validation";
    case VS_RESULT_OUTCOME_COULDNT_SEND:
        return "Couldn't send";
    case VS_RESULT_OUTCOME_CLIENT_ERROR:
        return "Error while computing";
    case VS_RESULT_OUTCOME_NO_REPLY:
        return "Timed out - no response";
    case VS_RESULT_OUTCOME_DIDNT_NEED:
        return "Didn't need";
    case VS_RESULT_OUTCOME_VALIDATE_ERROR:
        return "Validate error";
    default:
        return "Unknown";
    }
}

/* The workunit named by the text of tag (an id or a name), owned by the
 * requester through its batch. */
static int owned_wu(struct vs_sreq *r, const char *tag, bool by_id, struct vs_workunit *wu)
{
    const char *t = vs_xml_text_trim(vs_xml_child(r->root, tag), r->arena);
    int64_t id = 0;
    int rc;
    if (by_id) {
        if (vs_parse_int64(t, &id) != 0 || id <= 0)
            return vs_submit__fail(r, VS_EINVAL, "<%s> must be a job id.", tag);
        rc = vs_store_workunit_get(r->s, id, wu);
    } else {
        rc = vs_store_workunit_by_name(r->s, t, wu);
    }
    if (rc == VS_ENOTFOUND)
        return vs_submit__fail(r, rc, "There is no job '%.200s'.", t);
    if (rc)
        return vs_submit__fail(r, rc, "The project's store failed: %s.", vs_strerror(rc));
    struct vs_batch b;
    if (wu->batch == 0 || vs_store_batch_get(r->s, wu->batch, &b) != 0 || b.user_id != r->user.id) {
        vs_workunit_cleanup(wu);
        return vs_submit__fail(r, VS_EAUTH, "Job '%.200s' is not one of your batches' jobs.", t);
    }
    return 0;
}

struct inst_ctx {
    struct vs_sreq *r;
};

static int each_instance(void *ctx, const struct vs_result *res)
{
    struct inst_ctx *c = ctx;
    struct vs_xml_writer *w = &c->r->w;
    vs_xml_open(w, "instance");
    vs_xml_str(w, "name", res->name);
    vs_xml_int(w, "id", res->id);
    vs_xml_str(w, "state", state_string(res));
    if (res->server_state == VS_RESULT_SERVER_STATE_OVER && res->xml_doc_in) {
        struct vs_arena a;
        vs_arena_init(&a, 4096);
        struct vs_daemon_file files[VS_DAEMON_MAX_FILES];
        size_t n = 0;
        if (vs_daemon_files(res->xml_doc_in, &a, files, &n) == 0) {
            for (size_t i = 0; i < n; i++) {
                char path[VS_PATH_MAX];
                struct stat st;
                if (vs_project_upload_path(&c->r->sub->cfg, files[i].name, false, path,
                                           sizeof(path)) == 0 &&
                    stat(path, &st) == 0) {
                    vs_xml_open(w, "outfile");
                    vs_xml_int(w, "size", (int64_t)st.st_size);
                    vs_xml_close(w);
                }
            }
        }
        vs_arena_cleanup(&a);
    }
    vs_xml_close(w);
    return 0;
}

int vs_submit__query_job(struct vs_sreq *r)
{
    struct vs_workunit wu;
    memset(&wu, 0, sizeof(wu));
    int rc = vs_submit__auth(r, NULL);
    rc = rc ? rc : owned_wu(r, "job_id", true, &wu);
    if (rc)
        return rc;
    struct inst_ctx c = {.r = r};
    rc = vs_store_results_of_wu(r->s, wu.id, each_instance, &c);
    vs_workunit_cleanup(&wu);
    if (rc)
        return vs_submit__fail(r, rc, "The project's store failed: %s.", vs_strerror(rc));
    return 0;
}

struct completed_ctx {
    int64_t want; /* the canonical result, or 0: the last one that ended */
    struct vs_result best;
    bool found;
};

static int each_completed(void *ctx, const struct vs_result *res)
{
    struct completed_ctx *c = ctx;
    bool pick = c->want ? res->id == c->want
                        : (res->outcome == VS_RESULT_OUTCOME_SUCCESS ||
                           res->outcome == VS_RESULT_OUTCOME_CLIENT_ERROR ||
                           res->outcome == VS_RESULT_OUTCOME_VALIDATE_ERROR);
    if (!pick)
        return 0;
    vs_result_cleanup(&c->best);
    c->best = *res;
    c->best.xml_doc_in = NULL;
    c->best.xml_doc_out = NULL;
    c->best.stderr_out = res->stderr_out ? vs_xstrdup(res->stderr_out) : NULL;
    c->found = true;
    return 0;
}

int vs_submit__query_completed_job(struct vs_sreq *r)
{
    struct vs_workunit wu;
    memset(&wu, 0, sizeof(wu));
    int rc = vs_submit__auth(r, NULL);
    rc = rc ? rc : owned_wu(r, "job_name", false, &wu);
    if (rc)
        return rc;
    struct completed_ctx c;
    memset(&c, 0, sizeof(c));
    c.want = wu.canonical_resultid;
    rc = vs_store_results_of_wu(r->s, wu.id, each_completed, &c);
    struct vs_xml_writer *w = &r->w;
    if (rc == 0) {
        vs_xml_open(w, "completed_job");
        vs_xml_int(w, "error_mask", wu.error_mask);
        if (c.found)
            vs_xml_int(w, wu.canonical_resultid ? "canonical_resultid" : "error_resultid",
                       c.best.id);
        if (c.found) {
            vs_xml_int(w, "exit_status", c.best.exit_status);
            vs_xml_double(w, "elapsed_time", c.best.elapsed_time);
            vs_xml_double(w, "cpu_time", c.best.cpu_time);
            const char *e = c.best.stderr_out ? c.best.stderr_out : "";
            vs_xml_str(w, "stderr_out", e);
        }
        vs_xml_close(w);
    }
    vs_result_cleanup(&c.best);
    vs_workunit_cleanup(&wu);
    if (rc)
        return vs_submit__fail(r, rc, "The project's store failed: %s.", vs_strerror(rc));
    return 0;
}
