/* The file upload handler; see h_upload.h. */
#include "server/h_upload.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/daemon_util.h"
#include "server/http.h"
#include "store/store_project.h"
#include "volsched/alloc.h"
#include "volsched/layout.h"
#include "volsched/log.h"
#include "volsched/md5.h"
#include "volsched/proto.h"
#include "volsched/sign.h"
#include "volsched/str.h"

#define HTTP_OK           200
#define HTTP_SERVER_ERROR 500
#define MAX_POOL          8
/* Result names tried for one file name: the name cut at each of its last
 * few '_' ("<result>_r<rand>_<n>" from <OUTFILE_n/>, "<result>_<n>"). */
#define MAX_CANDIDATES 6

struct vs_upload {
    struct vs_project_config cfg;
    struct vs_log *log;
    struct vs_sign_key *key; /* NULL when certificates are off */
    pthread_mutex_t mu;
    struct vs_store *pool[MAX_POOL];
    size_t npool;
    _Atomic uint64_t n_size, n_done, n_bytes, n_refused, n_transient;
};

int vs_upload_create(const struct vs_project_config *cfg, struct vs_log *log,
                     struct vs_upload **out)
{
    struct vs_upload *u = VS_NEW(struct vs_upload);
    u->cfg = *cfg;
    u->log = log;
    pthread_mutex_init(&u->mu, NULL);
    if (!cfg->dont_generate_upload_certificates) {
        char path[VS_PATH_MAX + 32];
        int n = snprintf(path, sizeof(path), "%s/%s", cfg->key_dir, VS_SIGN_UPLOAD_PUBLIC);
        int rc = n < 0 || (size_t)n >= sizeof(path) ? VS_ELIMIT : 0;
        if (rc == 0)
            rc = vs_sign_key_load(path, false, &u->key);
        if (rc != 0) {
            VS_LOG(log, VS_LOG_ERROR, "upload handler: cannot load %s: %s", path, vs_strerror(rc));
            vs_upload_destroy(u);
            return rc;
        }
    }
    *out = u;
    return 0;
}

void vs_upload_destroy(struct vs_upload *u)
{
    if (!u)
        return;
    for (size_t i = 0; i < u->npool; i++)
        vs_store_close(u->pool[i]);
    vs_sign_key_destroy(u->key);
    pthread_mutex_destroy(&u->mu);
    vs_free(u);
}

void vs_upload_get_stats(struct vs_upload *u, struct vs_upload_stats *out_stats)
{
    out_stats->size_queries = atomic_load(&u->n_size);
    out_stats->files_done = atomic_load(&u->n_done);
    out_stats->bytes = atomic_load(&u->n_bytes);
    out_stats->refused = atomic_load(&u->n_refused);
    out_stats->transient = atomic_load(&u->n_transient);
}

static int pool_get(struct vs_upload *u, struct vs_store **out)
{
    pthread_mutex_lock(&u->mu);
    struct vs_store *s = u->npool > 0 ? u->pool[--u->npool] : NULL;
    pthread_mutex_unlock(&u->mu);
    if (s) {
        *out = s;
        return 0;
    }
    return vs_project_store_open(&u->cfg, false, u->log, out);
}

static void pool_put(struct vs_upload *u, struct vs_store *s)
{
    pthread_mutex_lock(&u->mu);
    if (u->npool < MAX_POOL) {
        u->pool[u->npool++] = s;
        s = NULL;
    }
    pthread_mutex_unlock(&u->mu);
    vs_store_close(s);
}

/* Writes the reply; status 0 ok, -1 permanent, 1 transient. */
static int reply(struct vs_upload *u, int status, bool has_size, int64_t size, const char *msg,
                 const char *name, const char *peer, struct vs_buf *out)
{
    if (status < 0) {
        atomic_fetch_add(&u->n_refused, 1);
        VS_LOG(u->log, VS_LOG_WARN, "upload of %s from %s refused: %s", name ? name : "?",
               peer ? peer : "?", msg);
    } else if (status > 0) {
        atomic_fetch_add(&u->n_transient, 1);
        VS_LOG(u->log, VS_LOG_WARN, "upload of %s from %s failed (transient): %s",
               name ? name : "?", peer ? peer : "?", msg);
    }
    struct vs_proto_upload_reply r = {
        .status = status, .has_file_size = has_size, .file_size = size, .message = msg};
    return vs_proto_upload_reply_write(&r, out) == 0 ? HTTP_OK : HTTP_SERVER_ERROR;
}

/* Is name an output file (in xml_doc_in) of a result that may still upload? */
static bool result_accepts(const struct vs_result *r, const char *name)
{
    bool live = r->server_state == VS_RESULT_SERVER_STATE_IN_PROGRESS ||
                (r->server_state == VS_RESULT_SERVER_STATE_OVER &&
                 r->outcome == VS_RESULT_OUTCOME_NO_REPLY && r->received_time == 0);
    if (!live || !r->xml_doc_in)
        return false;
    struct vs_arena a;
    vs_arena_init(&a, 4096);
    struct vs_daemon_file files[VS_DAEMON_MAX_FILES];
    size_t n = 0;
    bool found = false;
    if (vs_daemon_files(r->xml_doc_in, &a, files, &n) == 0)
        for (size_t i = 0; i < n && !found; i++)
            found = strcmp(files[i].name, name) == 0;
    vs_arena_cleanup(&a);
    return found;
}

/* Finds the result whose outputs include name. Returns 0 (*out_ok tells
 * whether one accepts it) or a store error. */
static int output_of_live_result(struct vs_store *st, const char *name, bool *out_ok)
{
    *out_ok = false;
    char cand[VS_NAME_MAX];
    if (vs_strlcpy(cand, name, sizeof(cand)) != 0)
        return 0;
    for (int tries = 0; tries < MAX_CANDIDATES; tries++) {
        char *us = strrchr(cand, '_');
        if (!us || us == cand)
            return 0;
        *us = '\0';
        struct vs_result r;
        memset(&r, 0, sizeof(r));
        int rc = vs_store_result_by_name(st, cand, &r);
        if (rc == 0) {
            *out_ok = result_accepts(&r, name);
            vs_result_cleanup(&r);
            if (*out_ok)
                return 0;
        } else if (rc != VS_ENOTFOUND) {
            return rc;
        }
    }
    return 0;
}

/* The absolute path of name in the upload hierarchy, refusing anything that
 * could leave it. Returns 0, VS_EINVAL (unsafe) or another error. */
static int safe_upload_path(struct vs_upload *u, const char *name, bool mkdir, char *out,
                            size_t outsize)
{
    if (!vs_daemon_safe_name(name) || !vs_http_safe_relpath(name) || name[0] == '.')
        return VS_EINVAL;
    int rc = vs_project_upload_path(&u->cfg, name, mkdir, out, outsize);
    if (rc != 0)
        return rc;
    size_t dl = strlen(u->cfg.upload_dir);
    if (strncmp(out, u->cfg.upload_dir, dl) != 0 || out[dl] != '/')
        return VS_EINVAL;
    return 0;
}

static int fsync_dir_of(const char *path)
{
    char dir[VS_PATH_MAX + 64];
    if (vs_strlcpy(dir, path, sizeof(dir)) != 0)
        return VS_ELIMIT;
    char *sl = strrchr(dir, '/');
    if (!sl)
        return 0;
    *sl = '\0';
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = fsync(fd) == 0 ? 0 : -errno;
    close(fd);
    return rc;
}

static int handle_size(struct vs_upload *u, const char *name, const char *peer, struct vs_buf *out)
{
    atomic_fetch_add(&u->n_size, 1);
    char path[VS_PATH_MAX + 64];
    int rc = safe_upload_path(u, name, false, path, sizeof(path));
    if (rc == VS_EINVAL)
        return reply(u, -1, false, 0, "bad file name", name, peer, out);
    if (rc != 0)
        return reply(u, 1, false, 0, "server error", name, peer, out);
    struct stat sb;
    int64_t size = 0;
    if (lstat(path, &sb) == 0) {
        if (!S_ISREG(sb.st_mode))
            return reply(u, -1, false, 0, "not a regular file", name, peer, out);
        size = (int64_t)sb.st_size;
    } else if (errno != ENOENT) {
        return reply(u, 1, false, 0, "cannot stat the file", name, peer, out);
    }
    return reply(u, 0, true, size, NULL, name, peer, out);
}

static int handle_file(struct vs_upload *u, const struct vs_proto_upload_request *q,
                       const char *body, size_t len, const char *peer, struct vs_buf *out)
{
    const char *name = q->name;
    if (u->key) {
        const char *sig = q->xml_signature ? q->xml_signature : "";
        if (vs_sign_verify_upload_cert(u->key, name, q->max_nbytes, sig, strlen(sig)) != 0)
            return reply(u, -1, false, 0, "invalid upload certificate", name, peer, out);
    }
    if ((double)q->nbytes > q->max_nbytes)
        return reply(u, -1, false, 0, "file size exceeds max_nbytes", name, peer, out);
    size_t ndata = len - q->data_offset;
    if ((uint64_t)q->offset + ndata > (uint64_t)q->nbytes)
        return reply(u, -1, false, 0, "more data than nbytes", name, peer, out);

    struct vs_store *st = NULL;
    int rc = pool_get(u, &st);
    if (rc != 0)
        return reply(u, 1, false, 0, "store unavailable", name, peer, out);
    bool ok = false;
    rc = output_of_live_result(st, name, &ok);
    pool_put(u, st);
    if (rc != 0)
        return reply(u, 1, false, 0, "store error", name, peer, out);
    if (!ok)
        return reply(u, -1, false, 0, "not an output of a result in progress", name, peer, out);

    char path[VS_PATH_MAX + 64];
    rc = safe_upload_path(u, name, true, path, sizeof(path));
    if (rc == VS_EINVAL)
        return reply(u, -1, false, 0, "bad file name", name, peer, out);
    if (rc != 0)
        return reply(u, 1, false, 0, "cannot make the upload directory", name, peer, out);
    int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return reply(u, errno == ELOOP ? -1 : 1, false, 0, "cannot open the file", name, peer, out);
    struct stat sb;
    const char *why = NULL;
    int status = 0;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        why = "not a regular file";
        status = -1;
        goto done;
    }
    /* BOINC-COMPAT: resume only from bytes we have; a gap means the client's
     * idea of our size is stale, and it asks again after a transient error. */
    if ((int64_t)sb.st_size < q->offset) {
        why = "offset beyond the bytes received so far";
        status = 1;
        goto done;
    }
    if (ftruncate(fd, (off_t)q->offset) != 0) {
        why = "cannot truncate";
        status = 1;
        goto done;
    }
    const char *p = body + q->data_offset;
    size_t left = ndata;
    off_t pos = (off_t)q->offset;
    while (left > 0) {
        ssize_t w = pwrite(fd, p, left, pos);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            why = "write failed";
            status = 1;
            goto done;
        }
        p += w;
        pos += w;
        left -= (size_t)w;
    }
    atomic_fetch_add(&u->n_bytes, ndata);
    if (pos < (off_t)q->nbytes) {
        /* The body ended early: keep what came, the client resumes. */
        why = "short upload; resume";
        status = 1;
        goto done;
    }
    if (fsync(fd) != 0 || fsync_dir_of(path) != 0) {
        why = "fsync failed";
        status = 1;
        goto done;
    }
    if (q->md5_cksum && q->md5_cksum[0]) {
        char md5[VS_MD5_HEX_LEN + 1];
        if (vs_md5_file(path, md5, NULL) != 0) {
            why = "cannot read the file back";
            status = 1;
            goto done;
        }
        if (strcmp(md5, q->md5_cksum) != 0) {
            /* Start over: the bytes we hold are not the client's. */
            if (ftruncate(fd, 0) != 0)
                VS_LOG(u->log, VS_LOG_WARN, "upload: cannot truncate %s", path);
            why = "MD5 mismatch; upload again";
            status = 1;
            goto done;
        }
    }
    atomic_fetch_add(&u->n_done, 1);
    VS_LOG(u->log, VS_LOG_DEBUG, "upload: %s complete (%" PRId64 " bytes, from offset %" PRId64 ")",
           name, q->nbytes, q->offset);
done:
    close(fd);
    return reply(u, status, false, 0, why, name, peer, out);
}

int vs_upload_http(void *ctx, const char *body, size_t len, const char *peer, struct vs_buf *out)
{
    struct vs_upload *u = ctx;
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_proto_upload_request q;
    struct vs_proto_error perr = {0};
    int status;
    int rc = vs_proto_upload_parse(body, len, &a, &q, &perr);
    if (rc != 0) {
        char why[300];
        snprintf(why, sizeof(why), "malformed request: %s", perr.msg);
        status = reply(u, -1, false, 0, why, NULL, peer, out);
    } else if (q.kind == VS_PROTO_UPLOAD_GET_FILE_SIZE) {
        status = handle_size(u, q.name, peer, out);
    } else {
        status = handle_file(u, &q, body, len, peer, out);
    }
    vs_arena_cleanup(&a);
    return status;
}
