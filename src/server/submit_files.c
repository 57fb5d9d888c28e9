/*
 * job_file.php (BOINC-COMPAT: html/user/job_file.php): a submitter's input
 * files, put in the download hierarchy once under a name the submitter
 * chooses (BOINC's clients use jf_<md5 of the content>), shared by every
 * batch that names them and removed when the last batch using them is
 * retired (submit_manage.c). Names are immutable: a second upload of a
 * name with other bytes is refused, and a jf_<md5> name must carry the
 * content whose md5 it is.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/submit_int.h"
#include "volsched/layout.h"
#include "volsched/log.h"
#include "volsched/md5.h"
#include "volsched/str.h"

/* The optional <batch_id> (owned by the requester) and <delete_time>. */
static int file_args(struct vs_sreq *r, int64_t *out_batch, int64_t *out_delete)
{
    *out_batch = 0;
    *out_delete = 0;
    const struct vs_xml_node *bn = vs_xml_child(r->root, "batch_id");
    int64_t id = 0;
    if (bn && (vs_xml_get_int64(bn, &id) != 0 || id < 0))
        return vs_submit__fail(r, VS_EINVAL, "<batch_id> must be a batch id.");
    if (id > 0) {
        struct vs_batch b;
        int rc = vs_submit__batch(r, r->root, &b);
        if (rc)
            return rc;
    }
    const struct vs_xml_node *dn = vs_xml_child(r->root, "delete_time");
    if (dn && vs_xml_get_int64(dn, out_delete) != 0)
        return vs_submit__fail(r, VS_EINVAL, "<delete_time> must be a time (seconds).");
    *out_batch = id;
    return 0;
}

static int check_name(struct vs_sreq *r, const char *name)
{
    if (!vs_submit__safe_name(name))
        return vs_submit__fail(r, VS_EINVAL,
                               "'%.200s' is not a usable file name (a plain name: no '/', no "
                               "blanks, not beginning with '-').",
                               name);
    return 0;
}

/* Records name as a job file (and batch's use of it). */
static int note(struct vs_sreq *r, const char *name, int64_t batch, int64_t delete_time)
{
    int64_t id;
    int rc = vs_store_job_file_add(r->s, name, r->now, delete_time, &id);
    if (rc == 0 && batch)
        rc = vs_store_batch_file_add(r->s, id, batch);
    return rc;
}

int vs_submit__query_files(struct vs_sreq *r)
{
    int64_t batch, delete_time;
    int rc = vs_submit__auth(r, NULL);
    rc = rc ? rc : file_args(r, &batch, &delete_time);
    if (rc)
        return rc;
    for (const struct vs_xml_node *n = vs_xml_child(r->root, "phys_name"); n && rc == 0;
         n = vs_xml_next_same(n))
        rc = check_name(r, vs_xml_text_trim(n, r->arena));
    if (rc)
        return rc;
    if ((rc = vs_store_begin(r->s)) != 0)
        return vs_submit__fail(r, rc, "The project's store is busy: %s.", vs_strerror(rc));
    vs_xml_open(&r->w, "absent_files");
    int i = 0;
    for (const struct vs_xml_node *n = vs_xml_child(r->root, "phys_name"); n && rc == 0;
         n = vs_xml_next_same(n), i++) {
        const char *name = vs_xml_text_trim(n, r->arena);
        char path[VS_PATH_MAX];
        struct stat st;
        rc = vs_project_download_path(&r->sub->cfg, name, false, path, sizeof(path));
        if (rc == 0 && stat(path, &st) == 0)
            rc = note(r, name, batch, delete_time);
        else if (rc == 0)
            vs_xml_int(&r->w, "file", i);
    }
    vs_xml_close(&r->w);
    rc = rc ? (vs_store_rollback(r->s), rc) : vs_store_commit(r->s);
    if (rc)
        return vs_submit__fail(r, rc, "The project's store failed: %s.", vs_strerror(rc));
    return 0;
}

static bool is_md5_name(const char *name)
{
    if (strncmp(name, "jf_", 3) != 0 || strlen(name) != 3 + VS_MD5_HEX_LEN)
        return false;
    for (const char *p = name + 3; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return false;
    return true;
}

static int write_durable(const char *path, const char *data, size_t len)
{
    char tmp[VS_PATH_MAX + 32];
    snprintf(tmp, sizeof(tmp), "%s.up%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    int rc = 0;
    for (size_t off = 0; off < len && rc == 0;) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            rc = w < 0 ? -errno : VS_EIO;
        else
            off += (size_t)w;
    }
    if (rc == 0 && fsync(fd) != 0)
        rc = -errno;
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -errno;
    if (rc)
        unlink(tmp);
    return rc;
}

int vs_submit__upload_files(struct vs_sreq *r)
{
    int64_t batch, delete_time;
    int rc = vs_submit__auth(r, NULL);
    rc = rc ? rc : file_args(r, &batch, &delete_time);
    if (rc)
        return rc;
    /* The names, and the form's file parts in the same order. */
    const struct vs_form_field *parts[VS_FORM_MAX_FIELDS];
    size_t nparts = 0, nnames = 0;
    for (size_t i = 0; i < r->form->n; i++)
        if (r->form->f[i].filename)
            parts[nparts++] = &r->form->f[i];
    for (const struct vs_xml_node *n = vs_xml_child(r->root, "phys_name"); n;
         n = vs_xml_next_same(n))
        nnames++;
    if (nparts != nnames)
        return vs_submit__fail(r, VS_EINVAL,
                               "# of uploaded files (%zu) doesn't agree with request (%zu).",
                               nparts, nnames);
    /* Everything checked before anything is written. */
    const char *names[VS_FORM_MAX_FIELDS];
    size_t k = 0;
    for (const struct vs_xml_node *n = vs_xml_child(r->root, "phys_name"); n && rc == 0;
         n = vs_xml_next_same(n), k++) {
        names[k] = vs_xml_text_trim(n, r->arena);
        rc = check_name(r, names[k]);
        char md5[VS_MD5_HEX_LEN + 1];
        if (rc == 0 && is_md5_name(names[k]) &&
            (vs_md5_hex(parts[k]->value, parts[k]->len, md5) != 0 ||
             strcmp(md5, names[k] + 3) != 0))
            rc = vs_submit__fail(r, VS_EINVAL,
                                 "The content uploaded as %s does not have that md5 (%s).",
                                 names[k], md5);
        char path[VS_PATH_MAX], have[VS_MD5_HEX_LEN + 1];
        int64_t have_n;
        if (rc == 0 &&
            vs_project_download_path(&r->sub->cfg, names[k], false, path, sizeof(path)) == 0 &&
            vs_md5_file(path, have, &have_n) == 0 &&
            (vs_md5_hex(parts[k]->value, parts[k]->len, md5) != 0 || strcmp(md5, have) != 0))
            rc = vs_submit__fail(r, VS_EEXISTS,
                                 "file immutability violation for %s: a file of that name with "
                                 "other content is on the server already.",
                                 names[k]);
    }
    if (rc)
        return rc;
    bool written[VS_FORM_MAX_FIELDS] = {false};
    for (size_t i = 0; i < k && rc == 0; i++) {
        char path[VS_PATH_MAX];
        struct stat st;
        rc = vs_project_download_path(&r->sub->cfg, names[i], true, path, sizeof(path));
        if (rc == 0 && stat(path, &st) != 0) {
            rc = write_durable(path, parts[i]->value, parts[i]->len);
            written[i] = rc == 0;
        }
        if (rc)
            vs_submit__fail(r, rc, "%s could not be stored: %s.", names[i], vs_strerror(rc));
    }
    if (rc == 0 && (rc = vs_store_begin(r->s)) == 0) {
        for (size_t i = 0; i < k && rc == 0; i++)
            rc = note(r, names[i], batch, delete_time);
        rc = rc ? (vs_store_rollback(r->s), rc) : vs_store_commit(r->s);
        if (rc)
            vs_submit__fail(r, rc, "The project's store failed: %s.", vs_strerror(rc));
    }
    if (rc) {
        for (size_t i = 0; i < k; i++) {
            char path[VS_PATH_MAX];
            if (written[i] &&
                vs_project_download_path(&r->sub->cfg, names[i], false, path, sizeof(path)) == 0)
                unlink(path);
        }
        return rc;
    }
    VS_LOG(r->sub->log, VS_LOG_INFO, "submit: user %lld uploaded %zu file(s)",
           (long long)r->user.id, k);
    vs_xml_flag(&r->w, "success");
    return 0;
}
