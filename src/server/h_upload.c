/* The file upload handler; see h_upload.h. */
#include "volsched/h_upload.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/daemon_util.h"
#include "volsched/http.h"
#include "volsched/layout.h"
#include "volsched/log.h"
#include "volsched/md5.h"
#include "volsched/proto.h"
#include "volsched/sign.h"
#include "volsched/store_project.h"
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

/* ------------------------------------------------------------------------ */
/* One upload POST, fed as it arrives                                         */
/* ------------------------------------------------------------------------ */

#define DATA_LINE     "<data>\n"
#define DATA_LINE_LEN 7

enum phase { PH_HEADER, PH_BODY, PH_DONE };

struct vs_upload_req {
    struct vs_upload *u;
    char peer[64];
    enum phase phase;
    struct vs_buf hdr; /* the body until "<data>\n" (capped); freed once parsed */
    struct vs_arena arena;
    struct vs_proto_upload_request q;
    bool parsed;
    int fd; /* the output file, locked (flock) while this request writes it */
    char path[VS_PATH_MAX + 64];
    int64_t pos;     /* file offset of the next byte */
    int status;      /* PH_DONE: the reply's status (0, 1 transient, -1 permanent) */
    const char *why; /* PH_DONE: its message (NULL for success) */
    char why_buf[320];
};

/* Decides the outcome; later bytes of the body are read and dropped. */
static int decide(struct vs_upload_req *r, int status, const char *why)
{
    r->phase = PH_DONE;
    r->status = status;
    r->why = why;
    return status == 0 ? 0 : 1;
}

/* The header is complete: check the certificate, the size and the result
 * BEFORE any byte of the file is taken, then open and lock the file. */
static int start_file(struct vs_upload_req *r)
{
    struct vs_upload *u = r->u;
    const struct vs_proto_upload_request *q = &r->q;
    const char *name = q->name;
    if (u->key) {
        const char *sig = q->xml_signature ? q->xml_signature : "";
        if (vs_sign_verify_upload_cert(u->key, name, q->max_nbytes, sig, strlen(sig)) != 0)
            return decide(r, -1, "invalid upload certificate");
    }
    /* The certificate's max_nbytes is the file's size limit. */
    if ((double)q->nbytes > q->max_nbytes)
        return decide(r, -1, "file size exceeds max_nbytes");

    struct vs_store *st = NULL;
    int rc = pool_get(u, &st);
    if (rc != 0)
        return decide(r, 1, "store unavailable");
    bool ok = false;
    rc = output_of_live_result(st, name, &ok);
    pool_put(u, st);
    if (rc != 0)
        return decide(r, 1, "store error");
    if (!ok)
        return decide(r, -1, "not an output of a result in progress");

    rc = safe_upload_path(u, name, true, r->path, sizeof(r->path));
    if (rc == VS_EINVAL)
        return decide(r, -1, "bad file name");
    if (rc != 0)
        return decide(r, 1, "cannot make the upload directory");
    int fd = open(r->path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0640);
    if (fd < 0)
        return decide(r, errno == ELOOP ? -1 : 1, "cannot open the file");
    r->fd = fd;
    /* One writer per file: a second upload of the same name waits for the
     * client's retry instead of interleaving its bytes with the first's,
     * and a "success" always describes the bytes on disk. Not a blocking
     * lock: a slow client must not pin another request's thread. */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0)
        return decide(r, 1,
                      errno == EWOULDBLOCK ? "the file is being uploaded; retry later"
                                           : "cannot lock the file");
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
        return decide(r, -1, "not a regular file");
    /* BOINC-COMPAT: resume only from bytes we have; a gap means the client's
     * idea of our size is stale, and it asks again after a transient error. */
    if ((int64_t)sb.st_size < q->offset)
        return decide(r, 1, "offset beyond the bytes received so far");
    if (ftruncate(fd, (off_t)q->offset) != 0)
        return decide(r, 1, "cannot truncate");
    r->pos = q->offset;
    r->phase = PH_BODY;
    return 0;
}

/* File bytes: written where they belong, never more than nbytes. */
static int take_bytes(struct vs_upload_req *r, const char *p, size_t n)
{
    if (n == 0)
        return 0;
    if ((uint64_t)r->pos + n > (uint64_t)r->q.nbytes)
        return decide(r, -1, "more data than nbytes");
    while (n > 0) {
        ssize_t w = pwrite(r->fd, p, n, (off_t)r->pos);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return decide(r, 1, "write failed");
        atomic_fetch_add(&r->u->n_bytes, (uint64_t)w);
        p += w;
        r->pos += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Parses the header once "<data>\n" is in (or the body ended without it). */
static int parse_header(struct vs_upload_req *r)
{
    struct vs_proto_error perr = {0};
    if (vs_proto_upload_parse(r->hdr.data ? r->hdr.data : "", r->hdr.len, &r->arena, &r->q,
                              &perr) != 0) {
        snprintf(r->why_buf, sizeof(r->why_buf), "malformed request: %s", perr.msg);
        return decide(r, -1, r->why_buf);
    }
    r->parsed = true;
    return 0;
}

struct vs_upload_req *vs_upload_req_open(void *ctx, const char *peer)
{
    struct vs_upload_req *r = VS_NEW(struct vs_upload_req);
    r->u = ctx;
    r->fd = -1;
    if (peer && vs_strlcpy(r->peer, peer, sizeof(r->peer)) != 0) {
        /* truncated: an address is shorter; only logged */
    }
    /* Room for the header, plus what a chunk may carry past it. */
    vs_buf_init(&r->hdr, VS_PROTO_MAX_UPLOAD_HEADER);
    vs_arena_init(&r->arena, 8192);
    return r;
}

int vs_upload_req_data(struct vs_upload_req *r, const char *data, size_t n)
{
    if (r->phase == PH_DONE)
        return 1;
    if (r->phase == PH_BODY)
        return take_bytes(r, data, n);
    /* PH_HEADER: keep bytes until the "<data>\n" line; it may straddle two
     * chunks, so the search starts a few bytes back. */
    size_t room = r->hdr.max_len - r->hdr.len;
    size_t k = n < room ? n : room;
    size_t from = r->hdr.len > DATA_LINE_LEN ? r->hdr.len - DATA_LINE_LEN : 0;
    if (k > 0 && vs_buf_append(&r->hdr, data, k) != 0)
        return decide(r, -1, "upload header too large");
    if (r->hdr.len == 0)
        return 0; /* nothing yet (the buffer has no storage to search) */
    const char *d = memmem(r->hdr.data + from, r->hdr.len - from, DATA_LINE, DATA_LINE_LEN);
    if (!d) {
        if (k < n) /* the cap is reached and no file bytes began */
            return decide(r, -1, "upload header too large");
        return 0;
    }
    size_t hlen = (size_t)(d - r->hdr.data) + DATA_LINE_LEN;
    /* The parser takes the header with the data line; the bytes after it
     * are the file's. Both parts are moved out before the buffer goes. */
    size_t extra = r->hdr.len - hlen;
    char *tail = extra ? vs_xmalloc(extra) : NULL;
    if (extra)
        memcpy(tail, r->hdr.data + hlen, extra);
    r->hdr.len = hlen;
    int rc = parse_header(r);
    vs_buf_cleanup(&r->hdr); /* parsed strings live in the arena */
    if (rc == 0 && r->q.kind != VS_PROTO_UPLOAD_FILE)
        rc = decide(r, -1, "malformed request: <data> in a size query");
    if (rc == 0)
        rc = start_file(r);
    if (rc == 0)
        rc = take_bytes(r, tail, extra);
    vs_free(tail);
    if (rc == 0)
        rc = take_bytes(r, data + k, n - k);
    return rc;
}

/* The body is complete and every byte is written: make it durable and
 * check it is the client's file. */
static void finish_file(struct vs_upload_req *r)
{
    struct vs_upload *u = r->u;
    const struct vs_proto_upload_request *q = &r->q;
    if (r->pos < q->nbytes) {
        /* The body ended early: keep what came, the client resumes. */
        decide(r, 1, "short upload; resume");
        return;
    }
    if (fsync(r->fd) != 0 || fsync_dir_of(r->path) != 0) {
        decide(r, 1, "fsync failed");
        return;
    }
    if (q->md5_cksum && q->md5_cksum[0]) {
        char md5[VS_MD5_HEX_LEN + 1];
        if (vs_md5_file(r->path, md5, NULL) != 0) {
            decide(r, 1, "cannot read the file back");
            return;
        }
        if (strcmp(md5, q->md5_cksum) != 0) {
            /* Start over: the bytes we hold are not the client's. */
            if (ftruncate(r->fd, 0) != 0)
                VS_LOG(u->log, VS_LOG_WARN, "upload: cannot truncate %s", r->path);
            decide(r, 1, "MD5 mismatch; upload again");
            return;
        }
    }
    atomic_fetch_add(&u->n_done, 1);
    VS_LOG(u->log, VS_LOG_DEBUG, "upload: %s complete (%" PRId64 " bytes, from offset %" PRId64 ")",
           q->name, q->nbytes, q->offset);
    decide(r, 0, NULL);
}

int vs_upload_req_finish(struct vs_upload_req *r, struct vs_buf *out)
{
    struct vs_upload *u = r->u;
    if (r->phase == PH_HEADER) {
        /* No "<data>" line: a size query, or a malformed request. */
        if (parse_header(r) == 0) {
            if (r->q.kind == VS_PROTO_UPLOAD_GET_FILE_SIZE)
                return handle_size(u, r->q.name, r->peer, out);
            decide(r, -1, "malformed request: no file data");
        }
    } else if (r->phase == PH_BODY) {
        finish_file(r);
    }
    return reply(u, r->status, false, 0, r->why, r->parsed ? r->q.name : NULL, r->peer, out);
}

void vs_upload_req_close(struct vs_upload_req *r)
{
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd); /* releases the lock */
    vs_buf_cleanup(&r->hdr);
    vs_arena_cleanup(&r->arena);
    vs_free(r);
}

int vs_upload_http(void *ctx, const char *body, size_t len, const char *peer, struct vs_buf *out)
{
    struct vs_upload_req *r = vs_upload_req_open(ctx, peer);
    (void)vs_upload_req_data(r, body, len);
    int status = vs_upload_req_finish(r, out);
    vs_upload_req_close(r);
    return status;
}

static void *ops_open(void *ctx, const char *peer)
{
    return vs_upload_req_open(ctx, peer);
}
static int ops_data(void *req, const char *data, size_t n)
{
    return vs_upload_req_data(req, data, n);
}
static int ops_finish(void *req, struct vs_buf *out)
{
    return vs_upload_req_finish(req, out);
}
static void ops_close(void *req)
{
    vs_upload_req_close(req);
}
const struct vs_http_stream_ops vs_upload_stream_ops = {ops_open, ops_data, ops_finish, ops_close};
