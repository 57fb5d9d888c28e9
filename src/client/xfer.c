/*
 * File transfers with libcurl (boinc-protocol.md 6-7): downloads resume
 * where a partial file ends (HTTP Range), are checked against nbytes and
 * md5, and every file of an app version is checked against the project's
 * code-signing key before anything may run it; uploads ask the handler how
 * much it has (get_file_size) and send the rest (file_upload, with the
 * certificate from the reply). Transient failures back off; permanent ones
 * (404, bad checksum or signature, a refused upload) fail the results that
 * need the file, with a message saying why.
 *
 * Transfers run beside each other and beside the rest of the client (net.c
 * moves them on from the main loop): at most cc_config <max_file_xfers> at
 * once (BOINC's 8), at most <max_file_xfers_per_project> of one project
 * (BOINC's 2), so a project whose server crawls holds its own share and
 * never the others'. A transfer slower than the low-speed limit fails as
 * a transient error and backs off; one abandoned at shutdown keeps its
 * partial file, resumed at the next start.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "client/https_pin.h"
#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/fs.h"
#include "volsched/md5.h"
#include "volsched/proto.h"
#include "volsched/sign.h"

#define UPLOAD_MAX_BODY  (256ll << 20)
#define UPLOAD_MAX_REPLY (64 * 1024)

static double retry_delay(const struct vs_client *c, int n)
{
    double d = c->prefs.pers_retry_delay_min * pow(2, n > 1 ? n - 1 : 0);
    return d > c->prefs.pers_retry_delay_max ? c->prefs.pers_retry_delay_max : d;
}

static int file_path(const struct vs_client *c, const struct cl_file *f, char *out, size_t size)
{
    char dir[VS_CLIENT_PATH_MAX];
    int rc = vs_client_project_dir(c, f->project, dir, sizeof(dir));
    if (rc)
        return rc;
    int n = snprintf(out, size, "%s/%s", dir, f->name);
    return n < 0 || (size_t)n >= size ? VS_ELIMIT : 0;
}

static void file_error(struct vs_client *c, struct cl_file *f, const char *fmt, ...)
    VS_PRINTF(3, 4);

static void file_error(struct vs_client *c, struct cl_file *f, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    vs_client_setstr(&f->error, msg);
    f->status = FS_ERR;
    vs_client_msg(c, (long)f->project, 3, "%s", msg);
    c->dirty = true;
}

static void transient(struct vs_client *c, struct cl_file *f, const char *kind, const char *why)
{
    f->nfailures++;
    double d = retry_delay(c, f->nfailures);
    f->next_try = c->now + d;
    vs_client_msg(c, (long)f->project, 2, "Temporarily failed %s of %s: %s; retrying in %.0f s",
                  kind, f->name, why, d);
    if (f->nfailures > 30)
        file_error(c, f, "Giving up on transfer of %s: %s", f->name, why);
    c->dirty = true;
}

/* The checks a downloaded file must pass (size, md5, signature). NULL when fine. */
static const char *verify(struct vs_client *c, struct cl_file *f, const char *path)
{
    char md5[VS_MD5_HEX_LEN + 1];
    int64_t nbytes = 0;
    if (vs_md5_file(path, md5, &nbytes) != 0)
        return "cannot read the downloaded file";
    if (f->nbytes > 0 && (double)nbytes != f->nbytes)
        return "wrong size";
    if (f->md5[0] && strcmp(md5, f->md5) != 0)
        return "MD5 check failed";
    if (f->signature_required || f->executable) {
        const char *key = c->projects[f->project].code_sign_key;
        if (!key)
            return "no code-signing key from the project: refusing an unsigned app file";
        if (!f->file_signature || !*f->file_signature)
            return "missing signature: refusing an unsigned app file";
        struct vs_sign_key *k = NULL;
        if (vs_sign_key_parse(key, strlen(key), false, &k) != 0)
            return "the project's code-signing key is malformed";
        int rc = vs_sign_verify_file(k, path, f->file_signature, strlen(f->file_signature));
        vs_sign_key_destroy(k);
        if (rc != 0)
            return "Signature verification failed";
    }
    snprintf(f->md5, sizeof(f->md5), "%s", md5);
    f->nbytes = (double)nbytes;
    return NULL;
}

/* A download in flight: the file is found again by project URL and name when
 * it ends (the tables may have changed meanwhile: a result dropped, a
 * project detached). */
struct dl_ctx {
    char *project_url;
    char *name;
    char path[VS_CLIENT_PATH_MAX + 300];
    FILE *out;
    double max;   /* bytes it may have: its declared size (or the client's cap) */
    double limit; /* bytes it may have now: max, or less when its project's room is less */
};

static void dl_free(struct dl_ctx *x)
{
    vs_free(x->project_url);
    vs_free(x->name);
    vs_free(x);
}

/* The file a transfer is for, or NULL when it is gone. */
static struct cl_file *file_of(struct vs_client *c, const char *project_url, const char *name)
{
    long p = vs_client_find_project(c, project_url);
    long f = p < 0 ? -1 : vs_client_find_file(c, (size_t)p, name);
    return f < 0 ? NULL : &c->files[f];
}

static void download_done(struct vs_client *c, void *ud, const struct cl_http_done *d)
{
    struct dl_ctx *x = ud;
    bool wrote_ok = fclose(x->out) == 0;
    int werr = errno;
    struct cl_file *f = d->abandoned ? NULL : file_of(c, x->project_url, x->name);
    if (!f) /* abandoned (the partial file is kept to resume), or no longer wanted */
        goto out;
    const char *path = x->path;
    if (d->disk_full || (!wrote_ok && werr == ENOSPC)) {
        vs_client_msg(c, (long)f->project, 3, "Disk full while downloading %s", f->name);
        unlink(path); /* the space is for the other work meanwhile */
        transient(c, f, "download", "disk full");
        goto out;
    }
    if (d->over_limit && x->limit < x->max) {
        unlink(path); /* of undeclared size, past its project's room */
        vs_client_disk_defer(c, f, x->limit);
        goto out;
    }
    if (d->over_limit) {
        unlink(path);
        file_error(c, f, "Download of %s failed: %s", f->name, "larger than its declared size");
        goto out;
    }
    if (d->range_refused || d->code == 416) {
        unlink(path); /* the server cannot resume: start over next time */
        transient(c, f, "download", "server refused to resume");
        goto out;
    }
    if (d->rc || (d->code != 200 && d->code != 206)) {
        if (d->code == 404 || d->code == 403) {
            unlink(path);
            file_error(c, f, "Download of %s failed: %s", f->name,
                       d->code == 404 ? "HTTP 404 (file not on server)" : "HTTP 403");
            goto out;
        }
        transient(c, f, "download", d->rc ? d->why : "HTTP error");
        goto out;
    }
    if (d->speed > c->ns.bwdown)
        c->ns.bwdown = d->speed;
    c->ns.avg_down = 0.9 * c->ns.avg_down + 0.1 * d->speed;
    c->ns.avg_time_down = c->now;
    const char *bad = verify(c, f, path);
    if (bad) {
        unlink(path);
        file_error(c, f, "Checksum or signature error for %s: %s", f->name, bad);
        goto out;
    }
    if (f->executable)
        (void)chmod(path, 0755);
    f->status = FS_PRESENT;
    f->nfailures = 0;
    vs_client_msg(c, (long)f->project, 1, "Finished download of %s", f->name);
    c->dirty = true;
    vs_client_update_result_states(c);
    c->resched = true; /* an event: a task may be runnable now */
out:
    dl_free(x);
}

static void download(struct vs_client *c, struct cl_file *f)
{
    char path[VS_CLIENT_PATH_MAX + 300], dir[VS_CLIENT_PATH_MAX];
    if (vs_client_project_dir(c, f->project, dir, sizeof(dir)) || vs_fs_mkdir_p(dir, 0755) ||
        file_path(c, f, path, sizeof(path))) {
        transient(c, f, "download", "cannot create the project directory");
        return;
    }
    struct stat st;
    double have = stat(path, &st) == 0 ? (double)st.st_size : 0;
    if (f->nbytes > 0 && have > f->nbytes)
        have = 0; /* longer than it should be: start over */
    if (f->nbytes > 0 && have == f->nbytes) {
        const char *bad = verify(c, f, path);
        if (!bad) {
            f->status = FS_PRESENT;
            c->dirty = true;
            return;
        }
        have = 0;
    }
    /* A file that cannot fit is not started (disk.c: its project's share,
     * the disk preferences, the room the state file needs): it waits */
    double room;
    if (vs_client_disk_admit(c, f, have, &room) != 0)
        return;
    const char *url = f->urls[(size_t)f->nfailures % f->n_urls];
    FILE *out = fopen(path, have > 0 ? "ab" : "wb");
    if (!out) {
        transient(c, f, "download", strerror(errno));
        return;
    }
    struct dl_ctx *x = VS_NEW(struct dl_ctx);
    x->project_url = vs_xstrdup(c->projects[f->project].master_url);
    x->name = vs_xstrdup(f->name);
    snprintf(x->path, sizeof(x->path), "%s", path);
    x->out = out;
    x->max = (f->nbytes > 0 ? f->nbytes : (double)VS_CLIENT_MAX_FILE) - have;
    x->limit = fmin(room, x->max);
    struct cl_http_req q = {
        .kind = CL_NET_DOWNLOAD,
        .project_url = x->project_url,
        .name = f->name,
        .url = url,
        .sink = out,
        .sink_limit = x->limit,
        .resume_from = have,
    };
    if (vs_client_http_start(c, &q, download_done, x) != 0) {
        fclose(out);
        dl_free(x);
        transient(c, f, "download", "curl");
        return;
    }
    if (have == 0)
        vs_client_msg(c, (long)f->project, 1, "Started download of %s", f->name);
    else
        vs_client_msg(c, (long)f->project, 1, "Resuming download of %s at byte %.0f", f->name,
                      have);
}

/* An upload in flight: get_file_size, then file_upload from the offset the
 * handler has. The request's header lives here until its transfer ends; the
 * file's bytes are streamed from `in` (eight uploads at once never hold
 * their files in memory). */
struct up_ctx {
    char *project_url;
    char *name;
    char *url;
    char path[VS_CLIENT_PATH_MAX + 300];
    int64_t size;
    bool sending; /* the second request, file_upload */
    struct vs_buf body, reply;
    FILE *in; /* the output file at the offset, while sending */
    double in_len;
};

static void up_free(struct up_ctx *x)
{
    if (x->in)
        fclose(x->in);
    vs_buf_cleanup(&x->body);
    vs_buf_cleanup(&x->reply);
    vs_free(x->project_url);
    vs_free(x->name);
    vs_free(x->url);
    vs_free(x);
}

static void upload_done(struct vs_client *c, void *ud, const struct cl_http_done *d);

static int up_send(struct vs_client *c, struct up_ctx *x)
{
    struct cl_http_req q = {
        .kind = CL_NET_UPLOAD,
        .project_url = x->project_url,
        .name = x->name,
        .url = x->url,
        .body = x->body.data,
        .len = x->body.len,
        .body_file = x->in,
        .body_file_len = x->in_len,
        .reply = &x->reply,
    };
    return vs_client_http_start(c, &q, upload_done, x);
}

static void up_header(struct vs_proto_upload_request *q, const char *name)
{
    memset(q, 0, sizeof(*q));
    q->core_client_major_version = VS_CLIENT_MAJOR;
    q->core_client_minor_version = VS_CLIENT_MINOR;
    q->core_client_release = VS_CLIENT_RELEASE;
    q->name = name;
}

/* The file_upload request: the header, then (streamed) the file from offset on. */
static int up_body(struct up_ctx *x, const struct cl_file *f, int64_t offset)
{
    struct vs_proto_upload_request q;
    up_header(&q, f->name);
    q.kind = VS_PROTO_UPLOAD_FILE;
    q.xml_signature = f->xml_signature ? f->xml_signature : "";
    q.max_nbytes = f->max_nbytes;
    q.nbytes = x->size;
    q.md5_cksum = f->md5;
    q.offset = offset;
    vs_buf_reset(&x->body);
    int rc = vs_proto_upload_write_header(&q, &x->body);
    x->in = rc == 0 ? fopen(x->path, "rb") : NULL;
    if (rc == 0 && !x->in)
        rc = -errno;
    if (x->in && fseeko(x->in, (off_t)offset, SEEK_SET) != 0)
        rc = VS_EIO;
    x->in_len = (double)(x->size - offset);
    return rc;
}

static void upload_done(struct vs_client *c, void *ud, const struct cl_http_done *d)
{
    struct up_ctx *x = ud;
    struct cl_file *f = d->abandoned ? NULL : file_of(c, x->project_url, x->name);
    if (!f) {
        up_free(x);
        return;
    }
    struct vs_arena a;
    vs_arena_init(&a, 4096);
    struct vs_proto_upload_reply y;
    memset(&y, 0, sizeof(y));
    int rc = d->rc;
    if (rc == 0 && d->code != 200)
        rc = d->code == 413 ? VS_ELIMIT : VS_ENET;
    struct vs_proto_error pe;
    if (rc == 0)
        rc = vs_proto_upload_reply_parse(x->reply.data, x->reply.len, &a, &y, &pe);
    if (rc == 0 && !x->sending) {
        int64_t offset = 0;
        if (y.status == 0 && y.has_file_size && y.file_size > 0 && y.file_size <= x->size)
            offset = y.file_size;
        rc = up_body(x, f, offset);
        if (rc == 0) {
            x->sending = true;
            rc = up_send(c, x);
        }
        if (rc == 0) {
            vs_client_msg(c, (long)f->project, 1,
                          offset ? "Resuming upload of %s" : "Started upload of %s", f->name);
            vs_arena_cleanup(&a);
            return; /* x lives on in the second request */
        }
    }
    if (rc == VS_ELIMIT || (rc == 0 && y.status == -1)) {
        char why[300];
        snprintf(why, sizeof(why), "refused by the server%s%s", y.message ? ": " : "",
                 rc == 0 && y.message ? y.message : "");
        file_error(c, f, "Upload of %s failed: %s", f->name, why);
    } else if (rc != 0 || y.status != 0) {
        const char *why = d->rc ? d->why : rc ? vs_strerror(rc) : "transient";
        transient(c, f, "upload", rc == 0 && y.message ? y.message : why);
    } else {
        f->upload_done = true;
        f->nfailures = 0;
        vs_client_msg(c, (long)f->project, 1, "Finished upload of %s", f->name);
        c->dirty = true;
        vs_client_update_result_states(c);
        /* an event: a result may be ready to report now, which the policy's
         * work fetch decides (transfers end outside the loop's tick) */
        c->resched = true;
    }
    vs_arena_cleanup(&a);
    up_free(x);
}

static void upload(struct vs_client *c, struct cl_file *f)
{
    char path[VS_CLIENT_PATH_MAX + 300];
    struct stat st;
    if (file_path(c, f, path, sizeof(path)) || stat(path, &st) != 0) {
        file_error(c, f, "Upload of %s failed: %s", f->name, "the output file is gone");
        return;
    }
    if ((long long)st.st_size > UPLOAD_MAX_BODY) {
        file_error(c, f, "Upload of %s failed: %s", f->name, "file too large for this client");
        return;
    }
    const char *url =
        vs_client_https_pick(c, f->project, f->urls, f->n_urls, (size_t)f->nfailures, "upload");
    if (!url) {
        file_error(c, f, "Upload of %s failed: %s", f->name,
                   "its URL is http and the project uses https");
        return;
    }
    struct up_ctx *x = VS_NEW(struct up_ctx);
    x->project_url = vs_xstrdup(c->projects[f->project].master_url);
    x->name = vs_xstrdup(f->name);
    x->url = vs_xstrdup(url);
    snprintf(x->path, sizeof(x->path), "%s", path);
    x->size = (int64_t)st.st_size;
    vs_buf_init(&x->body, VS_PROTO_MAX_UPLOAD_HEADER);
    vs_buf_init(&x->reply, UPLOAD_MAX_REPLY);
    struct vs_proto_upload_request q;
    up_header(&q, f->name);
    q.kind = VS_PROTO_UPLOAD_GET_FILE_SIZE;
    int rc = vs_proto_upload_write_header(&q, &x->body);
    if (rc == 0)
        rc = up_send(c, x);
    if (rc != 0) {
        up_free(x);
        transient(c, f, "upload", vs_strerror(rc));
    }
}

static bool result_uploading(const struct vs_client *c, const struct cl_file *f)
{
    for (size_t i = 0; i < c->n_results; i++) {
        const struct cl_result *r = &c->results[i];
        if (r->project != f->project || r->state != RS_FILES_UPLOADING)
            continue;
        for (size_t j = 0; j < r->n_frefs; j++)
            if (strcmp(r->frefs[j].file_name, f->name) == 0)
                return true;
    }
    return false;
}

/* Whether one more transfer of f's project fits the budgets (BOINC's
 * PERS_FILE_XFER_SET: all transfers, and those of one project). */
static bool budget_allows(const struct vs_client *c, const struct cl_file *f)
{
    if (vs_client_net_count(c, CL_NET_FILES, NULL) >= (size_t)c->prefs.max_file_xfers)
        return false;
    const char *url = c->projects[f->project].master_url;
    return vs_client_net_count(c, CL_NET_FILES, url) <
               (size_t)c->prefs.max_file_xfers_per_project &&
           !vs_client_net_busy(c, CL_NET_FILES, url, f->name);
}

bool vs_client_xfer_poll(struct vs_client *c)
{
    if (c->network_mode == RUN_MODE_NEVER) {
        /* no network: stop what is in flight (downloads resume later) */
        vs_client_net_abandon(c, CL_NET_FILES, NULL);
        return false;
    }
    bool did = false;
    for (size_t i = 0; i < c->n_files; i++) {
        if (vs_client_net_count(c, CL_NET_FILES, NULL) >= (size_t)c->prefs.max_file_xfers)
            break;
        struct cl_file *f = &c->files[i];
        if (f->status != FS_NOT_PRESENT || f->is_output || f->n_urls == 0 || c->now < f->next_try ||
            !budget_allows(c, f))
            continue;
        download(c, f);
        did = true;
    }
    for (size_t i = 0; i < c->n_files; i++) {
        if (vs_client_net_count(c, CL_NET_FILES, NULL) >= (size_t)c->prefs.max_file_xfers)
            break;
        struct cl_file *f = &c->files[i];
        if (!f->is_output || f->status != FS_PRESENT || f->upload_done || f->n_urls == 0 ||
            c->now < f->next_try || !budget_allows(c, f) || !result_uploading(c, f))
            continue;
        upload(c, f);
        did = true;
    }
    if (did)
        vs_client_update_result_states(c);
    return did;
}

static int input_status(struct vs_client *c, const struct cl_result *r, const char **out_err)
{
    const struct cl_wu *w = vs_client_result_wu(c, r);
    const struct cl_app_version *av = vs_client_result_av(c, r);
    if (!w || !av) {
        *out_err = "the app version or workunit is missing";
        return FS_ERR;
    }
    int st = FS_PRESENT;
    const struct cl_fref *lists[2] = {w->frefs, av->frefs};
    size_t ns[2] = {w->n_frefs, av->n_frefs};
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < ns[k]; i++) {
            long f = vs_client_find_file(c, r->project, lists[k][i].file_name);
            if (f < 0) {
                *out_err = "an input file is not described in the reply";
                return FS_ERR;
            }
            if (c->files[f].status < 0) {
                *out_err = c->files[f].error ? c->files[f].error : "input file error";
                return FS_ERR;
            }
            if (c->files[f].status != FS_PRESENT)
                st = FS_NOT_PRESENT;
        }
    return st;
}

void vs_client_update_result_states(struct vs_client *c)
{
    for (size_t i = 0; i < c->n_results; i++) {
        struct cl_result *r = &c->results[i];
        if (r->state == RS_FILES_DOWNLOADING || r->state == RS_NEW) {
            const char *err = NULL;
            int st = input_status(c, r, &err);
            if (st == FS_PRESENT) {
                r->state = RS_FILES_DOWNLOADED;
                c->resched = c->dirty = true;
            } else if (st == FS_ERR) {
                r->state = RS_COMPUTE_ERROR;
                r->exit_status = ERR_FILE_MISSING;
                r->ready_to_report = true;
                r->completed_time = c->now;
                vs_client_setstr(&r->stderr_out, err);
                vs_client_msg(c, (long)r->project, 3, "Task %s can't run: %s", r->name, err);
                c->resched = c->dirty = true;
            }
        } else if (r->state == RS_FILES_UPLOADING) {
            bool all = true, failed = false;
            for (size_t j = 0; j < r->n_frefs; j++) {
                long f = vs_client_find_file(c, r->project, r->frefs[j].file_name);
                if (f < 0)
                    continue;
                if (c->files[f].status < 0)
                    failed = true;
                else if (c->files[f].status == FS_PRESENT && !c->files[f].upload_done)
                    all = false;
            }
            if (failed || all) {
                r->state = failed ? RS_UPLOAD_FAILED : RS_FILES_UPLOADED;
                r->ready_to_report = true;
                c->dirty = true;
                if (!failed && (size_t)r->project < c->n_projects) {
                    /* BOINC-COMPAT: a finished upload clears the work
                     * backoff (backoff.c): a project's limit on jobs
                     * in progress may let the next request through */
                    c->projects[r->project].work_backoff_until = 0;
                    c->projects[r->project].no_work_count = 0;
                }
            }
        }
    }
}
