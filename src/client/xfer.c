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
 * Transfers run one at a time inside the main loop, bounded by timeouts,
 * so the loop is never blocked for longer than CURLOPT_TIMEOUT.
 */
#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "client/client.h"
#include "client/https_pin.h"
#include "volsched/alloc.h"
#include "volsched/fs.h"
#include "volsched/md5.h"
#include "volsched/proto.h"
#include "volsched/sign.h"

#define XFER_TIMEOUT_S  120L
#define UPLOAD_MAX_BODY (256ll << 20)

void vs_client_xfer_global_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

static size_t to_buf(char *p, size_t sz, size_t n, void *ud)
{
    struct vs_buf *b = ud;
    return vs_buf_append(b, p, sz * n) == 0 ? sz * n : 0;
}

static CURL *easy(const struct vs_client *c, const char *url)
{
    CURL *h = curl_easy_init();
    if (!h)
        return NULL;
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, XFER_TIMEOUT_S);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
    /* a redirect may not leave http/https (file://, gopher:// ...) */
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_USERAGENT, "BOINC client (x86_64-pc-linux-gnu 7.20.5)");
    vs_client_https_curl(c, h, url);
    return h;
}

int vs_client_http(struct vs_client *c, const char *url, const char *body, size_t len,
                   struct vs_buf *out, long *out_code)
{
    (void)c;
    CURL *h = easy(c, url);
    if (!h)
        return VS_ENET;
    vs_buf_reset(out);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, to_buf);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
    struct curl_slist *hdr = NULL;
    if (body) {
        curl_easy_setopt(h, CURLOPT_POST, 1L);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
        hdr = curl_slist_append(hdr, "Content-Type: application/x-www-form-urlencoded");
        hdr = curl_slist_append(hdr, "Expect:");
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    }
    CURLcode cc = curl_easy_perform(h);
    long code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    if (cc == CURLE_WRITE_ERROR)
        return VS_ELIMIT;
    if (cc == CURLE_OPERATION_TIMEDOUT)
        return VS_ETIMEOUT;
    if (cc != CURLE_OK)
        return VS_ENET;
    if (!out->data && vs_buf_puts(out, "") != 0)
        return VS_ELIMIT;
    *out_code = code;
    return 0;
}

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

struct dl_sink {
    FILE *f;
    double limit;
    double got;
    bool disk_full;
};

static size_t to_file(char *p, size_t sz, size_t n, void *ud)
{
    struct dl_sink *s = ud;
    s->got += (double)(sz * n);
    if (s->got > s->limit)
        return 0;
    size_t w = fwrite(p, sz, n, s->f);
    if (w != n) {
        s->disk_full = errno == ENOSPC || errno == EDQUOT;
        return 0;
    }
    return sz * n;
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
    if (have == 0)
        vs_client_msg(c, (long)f->project, 1, "Started download of %s", f->name);
    else
        vs_client_msg(c, (long)f->project, 1, "Resuming download of %s at byte %.0f", f->name,
                      have);
    FILE *out = fopen(path, have > 0 ? "ab" : "wb");
    if (!out) {
        transient(c, f, "download", strerror(errno));
        return;
    }
    CURL *h = easy(c, url);
    if (!h) {
        fclose(out);
        transient(c, f, "download", "curl");
        return;
    }
    double max = (f->nbytes > 0 ? f->nbytes : (double)VS_CLIENT_MAX_FILE) - have;
    struct dl_sink s = {out, fmin(room, max), 0, false};
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, to_file);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
    if (have > 0)
        curl_easy_setopt(h, CURLOPT_RESUME_FROM_LARGE, (curl_off_t)have);
    CURLcode cc = curl_easy_perform(h);
    long code = 0;
    curl_off_t speed_t = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_getinfo(h, CURLINFO_SPEED_DOWNLOAD_T, &speed_t);
    double speed = (double)speed_t;
    curl_easy_cleanup(h);
    bool wrote_ok = fclose(out) == 0;
    if (s.disk_full || (!wrote_ok && errno == ENOSPC)) {
        vs_client_msg(c, (long)f->project, 3, "Disk full while downloading %s", f->name);
        unlink(path); /* the space is for the other work meanwhile */
        transient(c, f, "download", "disk full");
        return;
    }
    if (cc == CURLE_WRITE_ERROR && s.got > s.limit && room < max) {
        unlink(path); /* of undeclared size, past its project's room */
        vs_client_disk_defer(c, f, s.limit);
        return;
    }
    if (cc == CURLE_WRITE_ERROR && s.got > s.limit) {
        unlink(path);
        file_error(c, f, "Download of %s failed: %s", f->name, "larger than its declared size");
        return;
    }
    if (cc == CURLE_RANGE_ERROR || code == 416) {
        unlink(path); /* the server cannot resume: start over next time */
        transient(c, f, "download", "server refused to resume");
        return;
    }
    if (cc != CURLE_OK || (code != 200 && code != 206)) {
        if (code == 404 || code == 403) {
            unlink(path);
            file_error(c, f, "Download of %s failed: %s", f->name,
                       code == 404 ? "HTTP 404 (file not on server)" : "HTTP 403");
            return;
        }
        transient(c, f, "download", cc != CURLE_OK ? curl_easy_strerror(cc) : "HTTP error");
        return;
    }
    if (speed > c->ns.bwdown)
        c->ns.bwdown = speed;
    c->ns.avg_down = 0.9 * c->ns.avg_down + 0.1 * speed;
    c->ns.avg_time_down = c->now;
    const char *bad = verify(c, f, path);
    if (bad) {
        unlink(path);
        file_error(c, f, "Checksum or signature error for %s: %s", f->name, bad);
        return;
    }
    if (f->executable)
        (void)chmod(path, 0755);
    f->status = FS_PRESENT;
    f->nfailures = 0;
    vs_client_msg(c, (long)f->project, 1, "Finished download of %s", f->name);
    c->dirty = true;
}

/* Sends one upload request; returns 0 with the parsed reply, or an error. */
static int upload_post(struct vs_client *c, const char *url, const char *body, size_t len,
                       struct vs_arena *a, struct vs_proto_upload_reply *out)
{
    struct vs_buf r;
    vs_buf_init(&r, 64 * 1024);
    long code = 0;
    int rc = vs_client_http(c, url, body, len, &r, &code);
    if (rc == 0 && code != 200)
        rc = code == 413 ? VS_ELIMIT : VS_ENET;
    struct vs_proto_error pe;
    if (rc == 0)
        rc = vs_proto_upload_reply_parse(r.data, r.len, a, out, &pe);
    vs_buf_cleanup(&r);
    return rc;
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
    struct vs_arena a;
    vs_arena_init(&a, 4096);
    struct vs_proto_upload_request q;
    memset(&q, 0, sizeof(q));
    q.core_client_major_version = VS_CLIENT_MAJOR;
    q.core_client_minor_version = VS_CLIENT_MINOR;
    q.core_client_release = VS_CLIENT_RELEASE;
    q.name = f->name;
    struct vs_buf body;
    vs_buf_init(&body, (size_t)UPLOAD_MAX_BODY + VS_PROTO_MAX_UPLOAD_HEADER);
    q.kind = VS_PROTO_UPLOAD_GET_FILE_SIZE;
    struct vs_proto_upload_reply y;
    int rc = vs_proto_upload_write_header(&q, &body);
    if (rc == 0)
        rc = upload_post(c, url, body.data, body.len, &a, &y);
    int64_t offset = 0;
    if (rc == 0 && y.status == 0 && y.has_file_size && y.file_size > 0 &&
        y.file_size <= (int64_t)st.st_size)
        offset = y.file_size;
    if (rc == 0) {
        vs_client_msg(c, (long)f->project, 1,
                      offset ? "Resuming upload of %s" : "Started upload of %s", f->name);
        vs_buf_reset(&body);
        q.kind = VS_PROTO_UPLOAD_FILE;
        q.xml_signature = f->xml_signature ? f->xml_signature : "";
        q.max_nbytes = f->max_nbytes;
        q.nbytes = (int64_t)st.st_size;
        q.md5_cksum = f->md5;
        q.offset = offset;
        rc = vs_proto_upload_write_header(&q, &body);
        FILE *in = rc == 0 ? fopen(path, "rb") : NULL;
        if (rc == 0 && !in)
            rc = -errno;
        if (in) {
            if (fseek(in, (long)offset, SEEK_SET) != 0)
                rc = VS_EIO;
            char tmp[65536];
            size_t n;
            while (rc == 0 && (n = fread(tmp, 1, sizeof(tmp), in)) > 0)
                rc = vs_buf_append(&body, tmp, n);
            fclose(in);
        }
        if (rc == 0)
            rc = upload_post(c, url, body.data, body.len, &a, &y);
    }
    vs_buf_cleanup(&body);
    if (rc == VS_ELIMIT || (rc == 0 && y.status == -1)) {
        char why[300];
        snprintf(why, sizeof(why), "refused by the server%s%s", y.message ? ": " : "",
                 rc == 0 && y.message ? y.message : "");
        file_error(c, f, "Upload of %s failed: %s", f->name, why);
    } else if (rc != 0 || y.status != 0) {
        transient(c, f, "upload", rc ? vs_strerror(rc) : (y.message ? y.message : "transient"));
    } else {
        f->upload_done = true;
        f->nfailures = 0;
        vs_client_msg(c, (long)f->project, 1, "Finished upload of %s", f->name);
        c->dirty = true;
    }
    vs_arena_cleanup(&a);
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

bool vs_client_xfer_poll(struct vs_client *c)
{
    if (c->network_mode == RUN_MODE_NEVER)
        return false;
    int budget = 4; /* transfers per tick: the loop stays responsive */
    bool did = false;
    for (size_t i = 0; i < c->n_files && budget > 0; i++) {
        struct cl_file *f = &c->files[i];
        if (f->status != FS_NOT_PRESENT || f->is_output || f->n_urls == 0 || c->now < f->next_try)
            continue;
        download(c, f);
        budget--;
        did = true;
    }
    for (size_t i = 0; i < c->n_files && budget > 0; i++) {
        struct cl_file *f = &c->files[i];
        if (!f->is_output || f->status != FS_PRESENT || f->upload_done || f->n_urls == 0 ||
            c->now < f->next_try || !result_uploading(c, f))
            continue;
        upload(c, f);
        budget--;
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
            }
        }
    }
}
