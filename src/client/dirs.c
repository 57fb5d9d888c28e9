/*
 * The client's data directory (boinc-client-notes.md section 1): file names,
 * the lockfile, gui_rpc_auth.cfg, account files and atomic writes.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/fs.h"
#include "volsched/rng.h"
#include "volsched/str.h"
#include "volsched/xml.h"

void vs_client_escape_url(const char *url, char *out, size_t size)
{
    /* BOINC-COMPAT: lib/url.cpp escape_project_url(): drop the scheme, every
     * character outside [A-Za-z0-9._-] becomes '_', one trailing '_' dropped */
    const char *s = strstr(url, "://");
    s = s ? s + 3 : url;
    size_t n = 0;
    for (; *s && n + 1 < size; s++) {
        unsigned char ch = (unsigned char)*s;
        bool keep = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
        out[n++] = keep ? (char)ch : '_';
    }
    if (n > 0 && out[n - 1] == '_')
        n--;
    if (size)
        out[n] = '\0';
}

/* A project URL's host: DNS labels of [A-Za-z0-9-] (none empty, so no "."
 * or ".." host), at least two of them (BOINC-COMPAT: the client refuses
 * hosts without a dot, such as "localhost"), and an optional :port. */
static bool host_ok(const char *h, size_t n)
{
    const char *colon = memchr(h, ':', n);
    size_t hn = colon ? (size_t)(colon - h) : n;
    if (colon) {
        size_t pn = n - hn - 1;
        if (pn == 0 || pn > 5)
            return false;
        for (size_t i = hn + 1; i < n; i++)
            if (h[i] < '0' || h[i] > '9')
                return false;
    }
    size_t label = 0, dots = 0;
    for (size_t i = 0; i < hn; i++) {
        unsigned char ch = (unsigned char)h[i];
        if (ch == '.') {
            if (label == 0)
                return false;
            label = 0;
            dots++;
        } else if (isalnum(ch) || ch == '-') {
            label++;
        } else {
            return false;
        }
    }
    return label > 0 && dots > 0;
}

/* A dot segment ("/./", "/../", or one at the end) would make two URLs,
 * or a URL and the projects directory itself, share a directory. */
static bool path_ok(const char *path)
{
    for (const char *s = path; (s = strchr(s, '/')) != NULL; s++) {
        size_t dots = strspn(s + 1, ".");
        if ((dots == 1 || dots == 2) &&
            (s[1 + dots] == '/' || s[1 + dots] == '\0' || s[1 + dots] == '?' || s[1 + dots] == '#'))
            return false;
    }
    return !strchr(path, '\\');
}

int vs_client_canon_url(const char *url, char *out, size_t size)
{
    if (!url || !(vs_str_has_prefix(url, "http://") || vs_str_has_prefix(url, "https://")))
        return VS_EINVAL;
    size_t len = strlen(url);
    const char *host = strstr(url, "://") + 3;
    const char *slash = strchr(host, '/');
    size_t hlen = slash ? (size_t)(slash - host) : strlen(host);
    if (!host_ok(host, hlen) || (slash && !path_ok(slash)))
        return VS_EINVAL;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)url[i] <= ' ' || url[i] == '"' || url[i] == '<' || url[i] == '>')
            return VS_EINVAL;
    bool add = len == 0 || url[len - 1] != '/';
    if (len + (add ? 1 : 0) + 1 > size || len > 1000)
        return VS_ELIMIT;
    memcpy(out, url, len);
    if (add)
        out[len++] = '/';
    out[len] = '\0';
    return 0;
}

int vs_client_path(const struct vs_client *c, char *out, size_t size, const char *fmt, ...)
{
    int n = snprintf(out, size, "%s/", c->dir);
    if (n < 0 || (size_t)n >= size)
        return VS_ELIMIT;
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(out + n, size - (size_t)n, fmt, ap);
    va_end(ap);
    if (m < 0 || (size_t)m >= size - (size_t)n)
        return VS_ELIMIT;
    return 0;
}

int vs_client_project_dir(const struct vs_client *c, size_t p, char *out, size_t size)
{
    char esc[512];
    vs_client_escape_url(c->projects[p].master_url, esc, sizeof(esc));
    /* callers remove this directory's tree: never the projects directory or its parent */
    if (!vs_client_safe_name(esc) || esc[0] == '.')
        return VS_EINVAL;
    return vs_client_path(c, out, size, "projects/%s", esc);
}

int vs_client_write_atomic(const char *path, const char *data, size_t len, bool durable)
{
    return vs_fs_write_atomic(path, data, len, 0644, durable ? VS_FS_DURABLE : 0);
}

int vs_client_write_private(const char *path, const char *data, size_t len, bool durable)
{
    /* the file holds the account key: the owner's only, as BOINC writes it */
    return vs_fs_write_atomic(path, data, len, 0600, durable ? VS_FS_DURABLE : 0);
}

int vs_client_read_file(const char *path, size_t max, struct vs_buf *out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -errno;
    char tmp[8192];
    size_t n;
    int rc = 0;
    vs_buf_reset(out);
    while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0) {
        if (out->len + n > max) {
            rc = VS_ELIMIT;
            break;
        }
        if ((rc = vs_buf_append(out, tmp, n)) != 0)
            break;
    }
    if (rc == 0 && ferror(f))
        rc = VS_EIO;
    fclose(f);
    if (rc == 0 && !out->data)
        rc = vs_buf_puts(out, "");
    return rc;
}

int vs_client_lock(struct vs_client *c)
{
    char path[VS_CLIENT_PATH_MAX];
    int rc = vs_client_path(c, path, sizeof(path), "lockfile");
    if (rc)
        return rc;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    /* BOINC-COMPAT: an fcntl write lock, as lib/util.cpp's lock_file() */
    struct flock fl;
    memset(&fl, 0, sizeof(fl));
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    if (fcntl(fd, F_SETLK, &fl) != 0) {
        close(fd);
        return VS_EBUSY;
    }
    c->lock_fd = fd;
    return 0;
}

int vs_client_gui_password(struct vs_client *c)
{
    char path[VS_CLIENT_PATH_MAX];
    int rc = vs_client_path(c, path, sizeof(path), "gui_rpc_auth.cfg");
    if (rc)
        return rc;
    struct vs_buf b;
    vs_buf_init(&b, 64 * 1024);
    rc = vs_client_read_file(path, 64 * 1024, &b);
    if (rc == -ENOENT) {
        /* BOINC-COMPAT: a missing file gets a random password (32 hex digits) */
        unsigned char raw[16];
        int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
        if (fd < 0 || read(fd, raw, sizeof(raw)) != (ssize_t)sizeof(raw)) {
            if (fd >= 0)
                close(fd);
            vs_buf_cleanup(&b);
            return VS_EIO;
        }
        close(fd);
        char pw[40];
        for (size_t i = 0; i < sizeof(raw); i++)
            snprintf(pw + 2 * i, 3, "%02x", raw[i]);
        int fdw = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fdw < 0) {
            vs_buf_cleanup(&b);
            return -errno;
        }
        bool ok = write(fdw, pw, 32) == 32 && write(fdw, "\n", 1) == 1;
        close(fdw);
        if (!ok) {
            vs_buf_cleanup(&b);
            return VS_EIO;
        }
        snprintf(c->gui_password, sizeof(c->gui_password), "%s", pw);
        vs_buf_cleanup(&b);
        return 0;
    }
    if (rc) {
        vs_buf_cleanup(&b);
        return rc;
    }
    /* first line, whitespace stripped */
    const char *s = vs_buf_str(&b);
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strcspn(s, "\r\n");
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    if (n >= sizeof(c->gui_password))
        n = sizeof(c->gui_password) - 1;
    memcpy(c->gui_password, s, n);
    c->gui_password[n] = '\0';
    vs_buf_cleanup(&b);
    return 0;
}

bool vs_client_safe_name(const char *name)
{
    if (!name || !*name || strlen(name) > 255)
        return false;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strstr(name, ".."))
        return false;
    for (const char *s = name; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch < 0x20 || ch == 0x7f || ch == '/' || ch == '\\')
            return false;
    }
    return true;
}

int vs_client_write_account(struct vs_client *c, size_t p)
{
    const struct cl_project *pr = &c->projects[p];
    char esc[512], path[VS_CLIENT_PATH_MAX];
    vs_client_escape_url(pr->master_url, esc, sizeof(esc));
    int rc = vs_client_path(c, path, sizeof(path), "account_%s.xml", esc);
    if (rc)
        return rc;
    struct vs_buf b;
    vs_buf_init(&b, 1u << 20);
    struct vs_xml_writer w;
    vs_xml_writer_init(&w, &b);
    vs_xml_open(&w, "account");
    vs_xml_str(&w, "master_url", pr->master_url);
    vs_xml_str(&w, "authenticator", pr->authenticator);
    if (pr->project_name)
        vs_xml_str(&w, "project_name", pr->project_name);
    if (pr->project_prefs)
        vs_xml_raw_write(&w, pr->project_prefs, strlen(pr->project_prefs));
    vs_xml_close(&w);
    rc = vs_xml_writer_error(&w);
    if (rc == 0)
        rc = vs_client_write_private(path, b.data, b.len, true);
    vs_buf_cleanup(&b);
    return rc;
}

int vs_client_read_accounts(struct vs_client *c)
{
    DIR *d = opendir(c->dir);
    if (!d)
        return -errno;
    struct dirent *e;
    struct vs_buf b;
    vs_buf_init(&b, 1u << 20);
    while ((e = readdir(d)) != NULL) {
        if (!vs_str_has_prefix(e->d_name, "account_") || !vs_str_has_suffix(e->d_name, ".xml"))
            continue;
        char path[VS_CLIENT_PATH_MAX];
        if (vs_client_path(c, path, sizeof(path), "%s", e->d_name) ||
            vs_client_read_file(path, 1u << 20, &b))
            continue;
        /* an older client wrote it 0644; the key is the owner's only */
        (void)chmod(path, 0600);
        struct vs_arena a;
        vs_arena_init(&a, 8192);
        struct vs_xml_doc doc;
        struct vs_xml_error xe;
        if (vs_xml_parse(b.data, b.len, NULL, 0, &a, &doc, &xe) != 0 ||
            strcmp(doc.root->name, "account") != 0) {
            VS_LOG(&c->log, VS_LOG_WARN, "%s: not an account file, ignored", e->d_name);
            vs_arena_cleanup(&a);
            continue;
        }
        const char *url = vs_xml_text_trim(vs_xml_child(doc.root, "master_url"), &a);
        const char *auth = vs_xml_text_trim(vs_xml_child(doc.root, "authenticator"), &a);
        char canon[1100];
        if (*url && *auth && vs_client_canon_url(url, canon, sizeof(canon)) == 0) {
            long p = vs_client_find_project(c, canon);
            if (p < 0 && c->n_projects < VS_CLIENT_MAX_PROJECTS)
                p = (long)vs_client_add_project(c, canon, auth);
            else if (p >= 0)
                vs_client_setstr(&c->projects[p].authenticator, auth);
            const struct vs_xml_node *pp = vs_xml_child(doc.root, "project_preferences");
            if (p >= 0 && pp) {
                size_t n;
                const char *raw = vs_xml_raw(&doc, pp, &n);
                vs_free(c->projects[p].project_prefs);
                c->projects[p].project_prefs = vs_xstrndup(raw, n);
                vs_client_share_from_prefs(c, (size_t)p);
            }
        }
        vs_arena_cleanup(&a);
    }
    closedir(d);
    vs_buf_cleanup(&b);
    return 0;
}

void vs_client_share_from_prefs(struct vs_client *c, size_t p)
{
    /* BOINC-COMPAT: the resource share is in the account's project preferences */
    struct cl_project *pr = &c->projects[p];
    if (!pr->project_prefs)
        return;
    /* the preferences as the project sent them: read with the XML module,
     * and a document it refuses has no share to take */
    struct vs_arena a;
    vs_arena_init(&a, 4096);
    struct vs_xml_doc doc;
    const struct vs_xml_node *rs = NULL;
    if (vs_xml_parse(pr->project_prefs, strlen(pr->project_prefs), NULL, 0, &a, &doc, NULL) == 0)
        rs = vs_xml_child(doc.root, "resource_share");
    if (!rs) {
        vs_arena_cleanup(&a);
        return;
    }
    const char *t = vs_xml_text_trim(rs, &a);
    size_t n = strlen(t);
    char num[64];
    if (n >= sizeof(num)) {
        vs_arena_cleanup(&a);
        vs_client_msg(c, (long)p, 2, "Ignoring resource share: %zu characters, not a number", n);
        return;
    }
    memcpy(num, t, n + 1);
    vs_arena_cleanup(&a);
    double v;
    /* BOINC-COMPAT: 0 is accepted: a backup project, given work only when
     * the others cannot keep a CPU busy */
    if (vs_parse_double(num, &v) != 0 || !(v >= 0) || v > 1e9) {
        vs_client_msg(c, (long)p, 2, "Ignoring resource share '%s': not a number from 0 to 1e9",
                      num);
        return;
    }
    if (v != pr->resource_share) {
        pr->resource_share = v;
        c->resched = c->dirty = true;
    }
}
