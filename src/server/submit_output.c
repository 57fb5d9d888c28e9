/*
 * get_output.php (BOINC-COMPAT: html/user/get_output.php as
 * lib/submit_api.py calls it): one output file of a result
 * (cmd=result_file&result_name=R&file_num=N&auth_str=A) or the outputs of
 * a batch's canonical results as one zip (cmd=batch_files&batch_id=B&
 * auth_str=A). A is the hex md5 of the batch owner's authenticator
 * followed by R (or B): a URL a scientist can hand to a download tool
 * without the account key in it. Refusals are BOINC's "ERROR: ..." text,
 * with status 400 (a result, file or batch that does not exist: not 404,
 * which the page layer keeps for paths that are not pages) or 403 (a wrong
 * auth_str).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "server/submit_int.h"
#include "volsched/daemon_util.h"
#include "volsched/layout.h"
#include "volsched/log.h"
#include "volsched/md5.h"
#include "volsched/store_project.h"
#include "volsched/str.h"

/* The value of key in query ("a=1&b=2", values already decoded), copied
 * into out; "" when absent or too long. */
static void query_arg(const char *q, const char *key, char *out, size_t size)
{
    out[0] = '\0';
    size_t kl = strlen(key);
    for (const char *p = q; p && *p;) {
        const char *amp = strchr(p, '&');
        size_t len = amp ? (size_t)(amp - p) : strlen(p);
        if (len > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
            size_t vl = len - kl - 1;
            if (vl < size) {
                memcpy(out, p + kl + 1, vl);
                out[vl] = '\0';
            }
            return;
        }
        p = amp ? amp + 1 : NULL;
    }
}

static int refuse(struct vs_http_page *out, int status, const char *msg)
{
    out->ctype = "text/plain";
    vs_buf_reset(out->body);
    if (vs_buf_printf(out->body, "ERROR: %s\n", msg) != 0)
        return 500;
    return status;
}

/* Whether auth_str is md5(authenticator of user_id + what). */
static bool auth_ok(struct vs_store *s, int64_t user_id, const char *what, const char *auth_str)
{
    struct vs_user u;
    memset(&u, 0, sizeof(u));
    if (vs_store_user_get(s, user_id, &u) != 0)
        return false;
    char buf[VS_AUTH_MAX + VS_NAME_MAX + 2];
    int n = snprintf(buf, sizeof(buf), "%s%s", u.authenticator, what);
    vs_user_cleanup(&u);
    char md5[VS_MD5_HEX_LEN + 1];
    if (n < 0 || (size_t)n >= sizeof(buf) || vs_md5_hex(buf, (size_t)n, md5) != 0)
        return false;
    return strlen(auth_str) == VS_MD5_HEX_LEN && strcmp(md5, auth_str) == 0;
}

static int result_file(struct vs_submit *sub, const char *q, struct vs_http_page *out)
{
    char name[VS_NAME_MAX], num[32], auth[64];
    query_arg(q, "result_name", name, sizeof(name));
    query_arg(q, "file_num", num, sizeof(num));
    query_arg(q, "auth_str", auth, sizeof(auth));
    int64_t fnum = 0;
    if (!*name || vs_parse_int64(num[0] ? num : "0", &fnum) != 0 || fnum < 0)
        return refuse(out, 400, "result_file needs result_name, file_num and auth_str");
    struct vs_result res;
    memset(&res, 0, sizeof(res));
    int rc = vs_store_result_by_name(sub->s, name, &res);
    if (rc)
        return refuse(out, 400, "no such job instance");
    struct vs_batch b;
    int status = 200;
    const char *msg = NULL;
    if (res.batch == 0 || vs_store_batch_get(sub->s, res.batch, &b) != 0) {
        status = 400, msg = "that instance is not part of a batch";
    } else if (!auth_ok(sub->s, b.user_id, res.name, auth)) {
        status = 403, msg = "bad authenticator";
    } else {
        struct vs_arena a;
        vs_arena_init(&a, 4096);
        struct vs_daemon_file files[VS_DAEMON_MAX_FILES];
        size_t n = 0;
        char path[VS_PATH_MAX];
        if (!res.xml_doc_in || vs_daemon_files(res.xml_doc_in, &a, files, &n) != 0 ||
            (size_t)fnum >= n)
            status = 400, msg = "bad file num: the instance has fewer output files";
        else if (vs_project_upload_path(&sub->cfg, files[fnum].name, false, path, sizeof(path)) ||
                 vs_buf_append_file(out->body, path) != 0)
            status = 400, msg = "no such file (not uploaded yet, or deleted)";
        vs_arena_cleanup(&a);
    }
    vs_result_cleanup(&res);
    if (msg)
        return refuse(out, status, msg);
    out->ctype = "application/octet-stream";
    return 200;
}

/* ---- a stored (uncompressed) zip ---- */

static uint32_t crc32_of(const unsigned char *p, size_t n)
{
    uint32_t table[256];
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++)
        c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

static int put16(struct vs_buf *b, unsigned v)
{
    unsigned char x[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
    return vs_buf_append(b, x, 2);
}

static int put32(struct vs_buf *b, uint32_t v)
{
    unsigned char x[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    return vs_buf_append(b, x, 4);
}

struct zip {
    struct vs_buf *out;
    struct vs_buf central;
    unsigned n;
    int rc;
};

/* Adds file path as name (stored); the zip's central directory grows beside. */
static void zip_add(struct zip *z, const char *name, const char *path)
{
    size_t off = z->out->len;
    size_t nl = strlen(name);
    int rc = z->rc;
    rc = rc ? rc : put32(z->out, 0x04034b50u);
    rc = rc ? rc : put16(z->out, 10);
    rc = rc ? rc : put16(z->out, 0);
    rc = rc ? rc : put16(z->out, 0); /* stored */
    rc = rc ? rc : put32(z->out, 0); /* time, date */
    size_t crc_at = z->out->len;
    rc = rc ? rc : put32(z->out, 0);
    rc = rc ? rc : put32(z->out, 0);
    rc = rc ? rc : put32(z->out, 0);
    rc = rc ? rc : put16(z->out, (unsigned)nl);
    rc = rc ? rc : put16(z->out, 0);
    rc = rc ? rc : vs_buf_append(z->out, name, nl);
    size_t data = z->out->len;
    rc = rc ? rc : vs_buf_append_file(z->out, path);
    if (rc == -ENOENT) { /* an optional output not sent: left out */
        z->out->len = off;
        return;
    }
    size_t len = z->out->len - data;
    uint32_t crc = rc ? 0 : crc32_of((const unsigned char *)z->out->data + data, len);
    if (rc == 0 && len > 0xFFFFFFF0u)
        rc = VS_ELIMIT;
    if (rc == 0) {
        unsigned char *h = (unsigned char *)z->out->data + crc_at;
        uint32_t v[3] = {crc, (uint32_t)len, (uint32_t)len};
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 4; k++)
                h[4 * i + k] = (unsigned char)(v[i] >> (8 * k));
        struct vs_buf *c = &z->central;
        rc = put32(c, 0x02014b50u);
        rc = rc ? rc : put16(c, 20);
        rc = rc ? rc : put16(c, 10);
        rc = rc ? rc : put16(c, 0);
        rc = rc ? rc : put16(c, 0);
        rc = rc ? rc : put32(c, 0);
        rc = rc ? rc : put32(c, crc);
        rc = rc ? rc : put32(c, (uint32_t)len);
        rc = rc ? rc : put32(c, (uint32_t)len);
        rc = rc ? rc : put16(c, (unsigned)nl);
        rc = rc ? rc : put16(c, 0);
        rc = rc ? rc : put16(c, 0);
        rc = rc ? rc : put16(c, 0);
        rc = rc ? rc : put16(c, 0);
        rc = rc ? rc : put32(c, 0);
        rc = rc ? rc : put32(c, (uint32_t)off);
        rc = rc ? rc : vs_buf_append(c, name, nl);
        z->n++;
    }
    z->rc = rc;
}

static void zip_end(struct zip *z)
{
    size_t cd = z->out->len;
    int rc = z->rc;
    rc = rc ? rc : vs_buf_append(z->out, z->central.data ? z->central.data : "", z->central.len);
    rc = rc ? rc : put32(z->out, 0x06054b50u);
    rc = rc ? rc : put32(z->out, 0);
    rc = rc ? rc : put16(z->out, z->n);
    rc = rc ? rc : put16(z->out, z->n);
    rc = rc ? rc : put32(z->out, (uint32_t)z->central.len);
    rc = rc ? rc : put32(z->out, (uint32_t)cd);
    rc = rc ? rc : put16(z->out, 0);
    z->rc = rc;
}

struct bf_ctx {
    struct vs_submit *sub;
    struct zip *z;
    struct vs_arena arena;
};

static int each_canonical(void *ctx, const struct vs_result *res)
{
    struct bf_ctx *c = ctx;
    struct vs_daemon_file files[VS_DAEMON_MAX_FILES];
    size_t n = 0;
    if (!res->xml_doc_in || vs_daemon_files(res->xml_doc_in, &c->arena, files, &n) != 0)
        return 0;
    for (size_t i = 0; i < n && c->z->rc == 0; i++) {
        char path[VS_PATH_MAX];
        if (vs_project_upload_path(&c->sub->cfg, files[i].name, false, path, sizeof(path)) == 0)
            zip_add(c->z, files[i].name, path);
    }
    vs_arena_reset(&c->arena);
    return c->z->rc;
}

struct canon_ids {
    int64_t *v;
    size_t n, cap;
};

static int each_job_canon(void *ctx, const struct vs_batch_job *j)
{
    struct canon_ids *c = ctx;
    if (!j->canonical_resultid || j->error_mask)
        return 0;
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 256;
        c->v = vs_xrealloc(c->v, c->cap * sizeof(*c->v));
    }
    c->v[c->n++] = j->canonical_resultid;
    return 0;
}

static int batch_files(struct vs_submit *sub, const char *q, struct vs_http_page *out)
{
    char bid[32], auth[64];
    query_arg(q, "batch_id", bid, sizeof(bid));
    query_arg(q, "auth_str", auth, sizeof(auth));
    int64_t id = 0;
    if (vs_parse_int64(bid, &id) != 0 || id <= 0)
        return refuse(out, 400, "batch_files needs batch_id and auth_str");
    struct vs_batch b;
    if (vs_store_batch_get(sub->s, id, &b) != 0)
        return refuse(out, 400, "no such batch");
    if (!auth_ok(sub->s, b.user_id, bid, auth))
        return refuse(out, 403, "bad auth str");
    struct canon_ids ids = {0};
    int rc = vs_store_batch_jobs(sub->s, id, each_job_canon, &ids);
    struct zip z = {.out = out->body, .rc = rc};
    vs_buf_init(&z.central, out->body->max_len);
    struct bf_ctx c = {.sub = sub, .z = &z};
    vs_arena_init(&c.arena, 16 * 1024);
    for (size_t i = 0; i < ids.n && z.rc == 0; i++) {
        struct vs_result res;
        memset(&res, 0, sizeof(res));
        if (vs_store_result_get(sub->s, ids.v[i], &res) == 0)
            z.rc = each_canonical(&c, &res);
        vs_result_cleanup(&res);
    }
    zip_end(&z);
    vs_arena_cleanup(&c.arena);
    vs_buf_cleanup(&z.central);
    vs_free(ids.v);
    if (z.rc == VS_ELIMIT)
        return refuse(out, 413,
                      "the batch's outputs are larger than one reply may be; fetch them per "
                      "result (cmd=result_file)");
    if (z.rc)
        return refuse(out, 500, "the batch's outputs could not be read");
    out->ctype = "application/zip";
    VS_LOG(sub->log, VS_LOG_INFO, "submit: batch %lld: zip of %u output files sent", (long long)id,
           z.n);
    return 200;
}

int vs_submit_get(struct vs_submit *sub, const struct vs_http_get *req, struct vs_http_page *out)
{
    const char *slash = strrchr(req->path, '/');
    if (!slash || strcmp(slash + 1, "get_output.php") != 0)
        return 404;
    char cmd[32];
    query_arg(req->query, "cmd", cmd, sizeof(cmd));
    pthread_mutex_lock(&sub->mu);
    int status;
    if (!sub->s && vs_project_store_open(&sub->cfg, false, sub->log, &sub->s) != 0)
        status = refuse(out, 503, "the project's store cannot be opened");
    else if (strcmp(cmd, "result_file") == 0)
        status = result_file(sub, req->query, out);
    else if (strcmp(cmd, "batch_files") == 0)
        status = batch_files(sub, req->query, out);
    else
        status = refuse(out, 400, "cmd must be result_file or batch_files");
    pthread_mutex_unlock(&sub->mu);
    if (status != 200)
        VS_LOG(sub->log, VS_LOG_INFO, "submit: get_output.php from %s refused (%d)", req->peer,
               status);
    return status;
}
