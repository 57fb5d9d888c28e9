/*
 * The project directory's layout (volsched/layout.h): the paths and URLs a
 * new project gets, the download/upload fanout hierarchy, derived URLs.
 */
#include "volsched/layout.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "volsched/md5.h"
#include "volsched/str.h"

static int join(char *dst, size_t size, const char *a, const char *b)
{
    int n = snprintf(dst, size, "%s/%s", a, b);
    return n < 0 || (size_t)n >= size ? VS_ELIMIT : 0;
}

/* snprintf into a fixed field: 0 or VS_ELIMIT */
static int fmt2(char *dst, size_t size, const char *a, const char *b)
{
    int n = snprintf(dst, size, "%s%s", a, b);
    return n < 0 || (size_t)n >= size ? VS_ELIMIT : 0;
}

int vs_project_layout_defaults(struct vs_project_config *cfg, const char *dir, const char *url)
{
    if (!dir || !*dir || !url || !*url)
        return VS_EINVAL;
    int rc = 0;
    if (dir[0] == '/') {
        rc |= vs_strlcpy(cfg->dir, dir, sizeof(cfg->dir));
    } else {
        char cwd[VS_PATH_MAX];
        if (!getcwd(cwd, sizeof(cwd)))
            return -errno;
        rc |= join(cfg->dir, sizeof(cfg->dir), cwd, dir);
    }
    /* Drop trailing slashes and "/." (the current directory, the commands'
     * default) so joined paths and messages read cleanly. */
    size_t dl = strlen(cfg->dir);
    for (;;) {
        if (dl > 1 && cfg->dir[dl - 1] == '/')
            cfg->dir[--dl] = '\0';
        else if (dl > 2 && cfg->dir[dl - 1] == '.' && cfg->dir[dl - 2] == '/')
            cfg->dir[dl -= 2] = '\0';
        else
            break;
    }
    size_t ul = strlen(url);
    if (fmt2(cfg->master_url, sizeof(cfg->master_url), url, url[ul - 1] == '/' ? "" : "/"))
        return VS_ELIMIT;
    /* BOINC's make_project layout of URLs under the master URL. */
    rc |= fmt2(cfg->download_url, sizeof(cfg->download_url), cfg->master_url, "download");
    rc |= fmt2(cfg->cgi_url, sizeof(cfg->cgi_url), cfg->master_url, "cgi-bin/");
    rc |= fmt2(cfg->upload_url, sizeof(cfg->upload_url), cfg->cgi_url, "file_upload_handler");
    rc |= join(cfg->download_dir, sizeof(cfg->download_dir), cfg->dir, "download");
    rc |= join(cfg->upload_dir, sizeof(cfg->upload_dir), cfg->dir, "upload");
    rc |= join(cfg->key_dir, sizeof(cfg->key_dir), cfg->dir, "keys");
    int n = snprintf(cfg->store_url, sizeof(cfg->store_url), "sqlite:%s/volsched.db", cfg->dir);
    rc |= n < 0 || (size_t)n >= sizeof(cfg->store_url) ? VS_ELIMIT : 0;
    return rc ? VS_ELIMIT : 0;
}

int vs_project_hier_rel(int fanout, const char *name, char *out, size_t outsize)
{
    if (!name || !*name || fanout < 0)
        return VS_EINVAL;
    if (fanout == 0)
        return vs_strlcpy(out, name, outsize);
    char md5[VS_MD5_HEX_LEN + 1];
    int rc = vs_md5_hex(name, strlen(name), md5);
    if (rc)
        return rc;
    /* BOINC-COMPAT dir_hier_path: hex digits 1..7 of md5(name). */
    char digits[8];
    memcpy(digits, md5 + 1, 7);
    digits[7] = '\0';
    unsigned long h = strtoul(digits, NULL, 16);
    int n = snprintf(out, outsize, "%lx/%s", h % (unsigned long)fanout, name);
    return n < 0 || (size_t)n >= outsize ? VS_ELIMIT : 0;
}

static int hier_path(const char *root, int fanout, const char *name, bool mk, char *out,
                     size_t outsize)
{
    char rel[VS_PATH_MAX];
    int rc = vs_project_hier_rel(fanout, name, rel, sizeof(rel));
    if (rc)
        return rc;
    if ((rc = join(out, outsize, root, rel)) != 0)
        return rc;
    if (mk && fanout > 0) {
        char d[VS_PATH_MAX];
        if ((rc = vs_strlcpy(d, out, sizeof(d))) != 0)
            return rc;
        char *slash = strrchr(d, '/');
        *slash = '\0';
        if (mkdir(d, 0755) != 0 && errno != EEXIST)
            return -errno;
    }
    return 0;
}

int vs_project_download_path(const struct vs_project_config *cfg, const char *name, bool mkdir_,
                             char *out, size_t outsize)
{
    return hier_path(cfg->download_dir, cfg->uldl_dir_fanout, name, mkdir_, out, outsize);
}

int vs_project_upload_path(const struct vs_project_config *cfg, const char *name, bool mkdir_,
                           char *out, size_t outsize)
{
    return hier_path(cfg->upload_dir, cfg->uldl_dir_fanout, name, mkdir_, out, outsize);
}

int vs_project_download_url(const struct vs_project_config *cfg, const char *name, char *out,
                            size_t outsize)
{
    char rel[VS_PATH_MAX];
    int rc = vs_project_hier_rel(cfg->uldl_dir_fanout, name, rel, sizeof(rel));
    if (rc)
        return rc;
    return join(out, outsize, cfg->download_url, rel);
}

int vs_project_scheduler_url(const struct vs_project_config *cfg, char *out, size_t outsize)
{
    int n = snprintf(out, outsize, "%scgi", cfg->cgi_url);
    return n < 0 || (size_t)n >= outsize ? VS_ELIMIT : 0;
}
