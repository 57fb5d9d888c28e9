/*
 * A submitter's batch management (BOINC-COMPAT: submit_rpc_handler.php
 * abort_batch, abort_jobs, retire_batch, set_expire_time) and the expiry
 * of batches. Aborting cancels the jobs as `volsched job cancel` does: the
 * unsent results are never sent, and the hosts holding the others are
 * told to abort them at their next request (send_result_abort). Retiring
 * purges a batch: its jobs' rows, their output files, and the input files
 * no other job, app version or batch uses.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "server/submit_int.h"
#include "volsched/daemon_util.h"
#include "volsched/layout.h"
#include "volsched/log.h"
#include "volsched/store_ops.h"
#include "volsched/store_project.h"
#include "volsched/str.h"
#include "volsched/submit_tail.h"

/* The ids of batch's jobs (caller frees). */
static int batch_ids(struct vs_store *s, const struct vs_batch *b, int64_t **out, size_t *out_n)
{
    size_t max = (size_t)(b->njobs > 0 ? b->njobs : 0) + 16;
    int64_t *ids = vs_xcalloc(max, sizeof(*ids));
    int rc = vs_store_batch_wus(s, b->id, ids, max, out_n);
    if (rc == 0 && *out_n == max) { /* more than the row said: ask for all */
        vs_free(ids);
        max = VS_SUBMIT_MAX_JOBS * 4u;
        ids = vs_xcalloc(max, sizeof(*ids));
        rc = vs_store_batch_wus(s, b->id, ids, max, out_n);
    }
    if (rc) {
        vs_free(ids);
        return rc;
    }
    *out = ids;
    return 0;
}

/* Cancels the unfinished jobs of b in one transaction; *out_n cancelled. */
static int cancel_batch(struct vs_sreq *r, const struct vs_batch *b, size_t *out_n)
{
    int64_t *ids = NULL;
    size_t n = 0, nc = 0;
    int rc = batch_ids(r->s, b, &ids, &n);
    if (rc == 0)
        rc = vs_store_begin(r->s);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = vs_store_workunit_cancel(r->s, ids[i], r->now, NULL);
        nc += rc == 0;
        if (rc == VS_ESTATE || rc == VS_ENOTFOUND)
            rc = 0; /* finished already */
    }
    if (ids && rc == 0)
        rc = vs_store_commit(r->s);
    else if (ids)
        (void)vs_store_rollback(r->s);
    vs_free(ids);
    *out_n = nc;
    return rc;
}

/* The requester's batch the request names, not retired. */
static int live_batch(struct vs_sreq *r, struct vs_batch *b)
{
    int rc = vs_submit__auth(r, NULL);
    rc = rc ? rc : vs_submit__batch(r, r->root, b);
    if (rc == 0 && b->state == VS_BATCH_RETIRED)
        rc = vs_submit__fail(r, VS_ESTATE, "Batch %lld is retired already.", (long long)b->id);
    return rc;
}

int vs_submit__abort_batch(struct vs_sreq *r)
{
    struct vs_batch b;
    int rc = live_batch(r, &b);
    if (rc)
        return rc;
    size_t n = 0;
    if ((rc = cancel_batch(r, &b, &n)) != 0)
        return vs_submit__fail(r, rc, "The batch's jobs could not be cancelled: %s.",
                               vs_strerror(rc));
    b.state = VS_BATCH_ABORTED;
    if ((rc = vs_store_batch_update(r->s, &b)) != 0)
        return vs_submit__fail(r, rc, "The batch's state could not be written: %s.",
                               vs_strerror(rc));
    VS_LOG(r->sub->log, VS_LOG_INFO, "submit: user %lld aborted batch %lld (%zu jobs cancelled)",
           (long long)r->user.id, (long long)b.id, n);
    vs_xml_int(&r->w, "success", 1);
    return 0;
}

int vs_submit__abort_jobs(struct vs_sreq *r)
{
    int rc = vs_submit__auth(r, NULL);
    if (rc)
        return rc;
    /* Every job checked before any is cancelled: all or nothing. */
    size_t n = 0;
    for (const struct vs_xml_node *j = vs_xml_child(r->root, "job_name"); j;
         j = vs_xml_next_same(j))
        n++;
    if (n == 0)
        return vs_submit__fail(r, VS_EINVAL, "abort_jobs names no <job_name>.");
    int64_t *ids = vs_xcalloc(n, sizeof(*ids));
    size_t k = 0;
    for (const struct vs_xml_node *j = vs_xml_child(r->root, "job_name"); j && rc == 0;
         j = vs_xml_next_same(j)) {
        const char *name = vs_xml_text_trim(j, r->arena);
        struct vs_workunit wu;
        memset(&wu, 0, sizeof(wu));
        rc = vs_store_workunit_by_name(r->s, name, &wu);
        struct vs_batch b;
        if (rc == VS_ENOTFOUND)
            rc = vs_submit__fail(r, rc, "There is no job '%.200s'.", name);
        else if (rc)
            rc = vs_submit__fail(r, rc, "The project's store failed: %s.", vs_strerror(rc));
        else if (wu.batch == 0 || vs_store_batch_get(r->s, wu.batch, &b) != 0 ||
                 b.user_id != r->user.id)
            rc = vs_submit__fail(r, VS_EAUTH, "Job '%.200s' is not one of your batches' jobs.",
                                 name);
        ids[k++] = wu.id;
        vs_workunit_cleanup(&wu);
    }
    if (rc == 0 && (rc = vs_store_begin(r->s)) == 0) {
        for (size_t i = 0; rc == 0 && i < k; i++) {
            rc = vs_store_workunit_cancel(r->s, ids[i], r->now, NULL);
            if (rc == VS_ESTATE)
                rc = 0;
        }
        rc = rc ? (vs_store_rollback(r->s), rc) : vs_store_commit(r->s);
        if (rc)
            vs_submit__fail(r, rc, "The jobs could not be cancelled: %s.", vs_strerror(rc));
    }
    vs_free(ids);
    if (rc)
        return rc;
    vs_xml_int(&r->w, "success", 1);
    return 0;
}

/* Removes name from the download hierarchy with its .md5 and .gz. */
static void remove_input(const struct vs_project_config *cfg, const char *name)
{
    char path[VS_PATH_MAX], sp[VS_PATH_MAX + 8];
    if (vs_project_download_path(cfg, name, false, path, sizeof(path)) != 0)
        return;
    unlink(path);
    snprintf(sp, sizeof(sp), "%s.md5", path);
    unlink(sp);
    snprintf(sp, sizeof(sp), "%s.gz", path);
    unlink(sp);
}

struct purge {
    struct vs_submit *sub;
    struct vs_store *s;
    struct vs_arena arena;
    struct vs_buf outputs; /* upload paths, NUL-separated: removed after the commit */
    struct vs_buf inputs;  /* input names, NUL-separated: removed if unused */
};

static int collect_outputs(void *ctx, const struct vs_result *res)
{
    struct purge *p = ctx;
    struct vs_daemon_file files[VS_DAEMON_MAX_FILES];
    size_t n = 0;
    if (!res->xml_doc_in || vs_daemon_files(res->xml_doc_in, &p->arena, files, &n) != 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char path[VS_PATH_MAX];
        if (vs_project_upload_path(&p->sub->cfg, files[i].name, false, path, sizeof(path)) == 0 &&
            vs_buf_append(&p->outputs, path, strlen(path) + 1) != 0)
            return VS_ELIMIT;
    }
    return 0;
}

static int purge_wu(struct purge *p, int64_t id, int64_t now)
{
    struct vs_workunit wu;
    memset(&wu, 0, sizeof(wu));
    int rc = vs_store_workunit_get(p->s, id, &wu);
    if (rc == VS_ENOTFOUND)
        return 0;
    if (rc)
        return rc;
    rc = vs_store_workunit_cancel(p->s, id, now, NULL);
    if (rc == VS_ESTATE)
        rc = 0;
    struct vs_daemon_file files[VS_DAEMON_MAX_FILES];
    size_t n = 0;
    if (rc == 0 && wu.xml_doc && vs_daemon_files(wu.xml_doc, &p->arena, files, &n) == 0) {
        for (size_t i = 0; i < n && rc == 0; i++)
            if (!files[i].url[0] || strstr(files[i].url, files[i].name)) /* ours */
                rc = vs_buf_append(&p->inputs, files[i].name, strlen(files[i].name) + 1);
    }
    rc = rc ? rc : vs_store_results_of_wu(p->s, id, collect_outputs, p);
    rc = rc ? rc : vs_store_workunit_delete(p->s, id);
    vs_workunit_cleanup(&wu);
    return rc;
}

struct jf_ctx {
    struct purge *p;
    int rc;
};

static int each_job_file(void *ctx, int64_t id, const char *name)
{
    struct jf_ctx *c = ctx;
    c->rc = vs_buf_append(&c->p->inputs, name, strlen(name) + 1);
    (void)id;
    return c->rc;
}

int vs_submit__retire(struct vs_submit *sub, struct vs_store *s, struct vs_batch *b, int64_t now,
                      char *err, size_t errsize)
{
    struct purge p = {.sub = sub, .s = s};
    vs_arena_init(&p.arena, 64 * 1024);
    vs_buf_init(&p.outputs, 1u << 30);
    vs_buf_init(&p.inputs, 1u << 30);
    int64_t *ids = NULL;
    size_t n = 0, nremoved = 0;
    int rc = batch_ids(s, b, &ids, &n);
    if (rc == 0)
        rc = vs_store_begin(s);
    bool txn = rc == 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = purge_wu(&p, ids[i], now);
        if ((i & 255) == 255)
            vs_arena_reset(&p.arena);
    }
    /* The job_file.php files this batch used: forgotten by it; a file no
     * batch and no job uses any more goes. */
    struct jf_ctx jc = {.p = &p};
    if (rc == 0)
        rc = vs_store_batch_files(s, b->id, each_job_file, &jc);
    rc = rc ? rc : vs_store_batch_files_drop(s, b->id);
    for (size_t off = 0; rc == 0 && off < p.inputs.len;) {
        const char *name = p.inputs.data + off;
        off += strlen(name) + 1;
        bool used = true;
        int64_t jf = 0, nb = 0;
        rc = vs_store_file_in_use(s, name, 0, &used);
        if (rc == 0 && !used && vs_store_job_file_get(s, name, &jf) == 0) {
            rc = vs_store_job_file_nbatches(s, jf, &nb);
            used = nb > 0;
            if (rc == 0 && !used)
                rc = vs_store_job_file_drop(s, jf);
        }
        if (rc == 0 && !used) {
            remove_input(&sub->cfg, name);
            nremoved++;
        }
    }
    if (rc == 0) {
        b->state = VS_BATCH_RETIRED;
        rc = vs_store_batch_update(s, b);
    }
    if (txn)
        rc = rc ? (vs_store_rollback(s), rc) : vs_store_commit(s);
    if (rc == 0) {
        for (size_t off = 0; off < p.outputs.len;) {
            const char *path = p.outputs.data + off;
            off += strlen(path) + 1;
            if (unlink(path) == 0)
                nremoved++;
        }
        VS_LOG(sub->log, VS_LOG_INFO, "submit: batch %lld retired: %zu jobs and %zu files removed",
               (long long)b->id, n, nremoved);
    } else {
        snprintf(err, errsize, "%s", vs_strerror(rc));
    }
    vs_free(ids);
    vs_buf_cleanup(&p.outputs);
    vs_buf_cleanup(&p.inputs);
    vs_arena_cleanup(&p.arena);
    return rc;
}

int vs_submit__retire_batch(struct vs_sreq *r)
{
    struct vs_batch b;
    int rc = live_batch(r, &b);
    if (rc)
        return rc;
    char err[200];
    if ((rc = vs_submit__retire(r->sub, r->s, &b, r->now, err, sizeof(err))) != 0)
        return vs_submit__fail(r, rc, "Batch %lld could not be retired: %s.", (long long)b.id, err);
    vs_xml_int(&r->w, "success", 1);
    return 0;
}

int vs_submit__set_expire_time(struct vs_sreq *r)
{
    struct vs_batch b;
    int rc = vs_submit__auth(r, NULL);
    rc = rc ? rc : vs_submit__batch(r, r->root, &b);
    if (rc)
        return rc;
    double t = 0;
    if (vs_xml_get_double(vs_xml_child(r->root, "expire_time"), &t) != 0 || t < 0)
        return vs_submit__fail(r, VS_EINVAL, "<expire_time> must be a time (seconds).");
    b.expire_time = t;
    if ((rc = vs_store_batch_update(r->s, &b)) != 0)
        return vs_submit__fail(r, rc, "The batch could not be updated: %s.", vs_strerror(rc));
    vs_xml_int(&r->w, "success", 1);
    return 0;
}

int vs_submit_tail_tick(struct vs_submit *sub, struct vs_submit_tail *t, int64_t now)
{
    pthread_mutex_lock(&sub->mu);
    int rc = sub->s ? 0 : vs_project_store_open(&sub->cfg, false, sub->log, &sub->s);
    if (rc == 0)
        rc = vs_submit_tail_pass(t, sub->s, now, sub->log, NULL);
    pthread_mutex_unlock(&sub->mu);
    return rc;
}

int vs_submit_expire(struct vs_submit *sub, double now)
{
    int64_t ids[64];
    size_t n = 0;
    pthread_mutex_lock(&sub->mu);
    int rc = sub->s ? 0 : vs_project_store_open(&sub->cfg, false, sub->log, &sub->s);
    rc = rc ? rc : vs_store_batches_expired(sub->s, now, ids, 64, &n);
    size_t done = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        struct vs_batch b;
        char err[200];
        if (vs_store_batch_get(sub->s, ids[i], &b) != 0)
            continue;
        if (vs_submit__retire(sub, sub->s, &b, (int64_t)now, err, sizeof(err)) == 0) {
            done++;
            VS_LOG(sub->log, VS_LOG_INFO, "submit: batch %lld expired", (long long)b.id);
        } else {
            VS_LOG(sub->log, VS_LOG_WARN, "submit: expired batch %lld not retired: %s",
                   (long long)b.id, err);
        }
    }
    pthread_mutex_unlock(&sub->mu);
    return rc ? rc : (int)done;
}
