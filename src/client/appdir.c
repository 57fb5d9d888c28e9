/*
 * The directory a task's app runs from: code signing's promise is that only
 * bytes the project signed with its offline key ever run on the volunteer's
 * machine, even if the project's server or the network is taken over.
 *
 * projects/<url>/ holds whatever the project's replies send, app files and
 * workunit inputs side by side under names the reply chooses, and outputs
 * are written there; nothing in it is trusted when a task starts. Each app
 * version gets app_versions/<url>/<app>__<version>[__<plan class>]/ holding
 * its files and nothing else (a hard link to the downloaded file, or a copy
 * where links are not possible), read-only. At every task start:
 * - anything in that directory that is not one of the version's files is
 *   removed;
 * - every file's current bytes are checked against its signature with the
 *   project's code-signing key (vs_sign_verify_file); a file that fails is
 *   linked again from projects/<url>/ and checked again, and if that fails
 *   too the version is not run;
 * - the app is started from that directory, and it alone is on the app's
 *   library path (proc.c): no directory holding an unsigned byte is.
 * Checking at every start, not once at download, is what makes a file
 * overwritten after its download (by a bug, an output copy-back, another
 * program) harmless.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/proc_int.h"
#include "volsched/client.h"
#include "volsched/fs.h"
#include "volsched/sign.h"

#define AV_ROOT "app_versions"

int vs_client_av_dir(const struct vs_client *c, const struct cl_app_version *av, char *out,
                     size_t size)
{
    char esc[512], name[600];
    vs_client_escape_url(c->projects[av->project].master_url, esc, sizeof(esc));
    int n = av->plan_class && *av->plan_class
                ? snprintf(name, sizeof(name), "%s__%d__%s", av->app_name, av->version_num,
                           av->plan_class)
                : snprintf(name, sizeof(name), "%s__%d", av->app_name, av->version_num);
    if (n < 0 || (size_t)n >= sizeof(name) || !vs_client_safe_name(name) || name[0] == '.' ||
        !vs_client_safe_name(esc) || esc[0] == '.')
        return VS_EINVAL;
    return vs_client_path(c, out, size, AV_ROOT "/%s/%s", esc, name);
}

int vs_client_av_remove_project(struct vs_client *c, size_t p)
{
    char esc[512], path[VS_CLIENT_PATH_MAX];
    vs_client_escape_url(c->projects[p].master_url, esc, sizeof(esc));
    if (!vs_client_safe_name(esc) || esc[0] == '.')
        return VS_EINVAL;
    int rc = vs_client_path(c, path, sizeof(path), AV_ROOT "/%s", esc);
    return rc ? rc : vs_fs_rm_tree(path);
}

static bool av_has_file(const struct cl_app_version *av, const char *name)
{
    for (size_t i = 0; i < av->n_frefs; i++)
        if (strcmp(av->frefs[i].file_name, name) == 0)
            return true;
    return false;
}

/* Everything in dir that is not a file of av goes: what is on the app's
 * library path is exactly the version's files. */
static void prune(const char *dir, const struct cl_app_version *av)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            av_has_file(av, e->d_name))
            continue;
        char sub[VS_CLIENT_PATH_MAX + 300];
        if (snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name) >= (int)sizeof(sub))
            continue;
        struct stat st;
        if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
            (void)vs_fs_rm_tree(sub);
        else
            (void)unlink(sub);
    }
    closedir(d);
}

/* NULL if path's bytes carry f's signature under the project's key. */
static const char *check(const struct vs_sign_key *k, const struct cl_file *f, const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return "missing";
    if (!S_ISREG(st.st_mode))
        return "not a regular file";
    if (vs_sign_verify_file(k, path, f->file_signature, strlen(f->file_signature)) != 0)
        return "its bytes do not match the project's signature";
    return NULL;
}

/* Puts the downloaded file at dst (a hard link, else a copy through a
 * temporary name), read-only. */
static int install(const char *src, const char *dst, bool executable)
{
    char tmp[VS_CLIENT_PATH_MAX + 320];
    if (snprintf(tmp, sizeof(tmp), "%s.new", dst) >= (int)sizeof(tmp))
        return VS_ELIMIT;
    (void)unlink(tmp);
    if (link(src, tmp) != 0) {
        int rc = vs_fs_copy_file(src, tmp, 0644, 0, NULL);
        if (rc) {
            (void)unlink(tmp);
            return rc;
        }
    }
    if (chmod(tmp, executable ? 0555 : 0444) != 0 || rename(tmp, dst) != 0) {
        int e = -errno;
        (void)unlink(tmp);
        return e;
    }
    return 0;
}

int vs_client_av_prepare(struct vs_client *c, const struct cl_app_version *av, char *out_dir,
                         size_t size, char *why, size_t why_size)
{
    const struct cl_project *p = &c->projects[av->project];
    char dir[VS_CLIENT_PATH_MAX], pdir[VS_CLIENT_PATH_MAX];
    int rc = vs_client_av_dir(c, av, dir, sizeof(dir));
    if (rc == 0)
        rc = vs_client_project_dir(c, av->project, pdir, sizeof(pdir));
    if (rc) {
        snprintf(why, why_size, "app version %s %d: names unfit for a directory", av->app_name,
                 av->version_num);
        return rc;
    }
    if (!p->code_sign_key) {
        snprintf(why, why_size, "no code-signing key from the project");
        return VS_EAUTH;
    }
    struct vs_sign_key *k = NULL;
    if (vs_sign_key_parse(p->code_sign_key, strlen(p->code_sign_key), false, &k) != 0) {
        snprintf(why, why_size, "the project's code-signing key is malformed");
        return VS_EAUTH;
    }
    rc = vs_fs_mkdir_p(dir, 0755);
    if (rc == 0 && chmod(dir, 0755) != 0)
        rc = -errno;
    if (rc) {
        snprintf(why, why_size, "cannot create %s: %s", dir, vs_strerror(rc));
        vs_sign_key_destroy(k);
        return rc;
    }
    prune(dir, av);
    for (size_t i = 0; rc == 0 && i < av->n_frefs; i++) {
        const char *name = av->frefs[i].file_name;
        long fi = vs_client_find_file(c, av->project, name);
        if (fi < 0 || c->files[fi].status != FS_PRESENT) {
            snprintf(why, why_size, "%s is not present", name);
            rc = VS_ENOTFOUND;
            break;
        }
        const struct cl_file *f = &c->files[fi];
        if (!f->file_signature || !*f->file_signature) {
            snprintf(why, why_size, "%s has no signature from the project", name);
            rc = VS_EAUTH;
            break;
        }
        char dst[VS_CLIENT_PATH_MAX + 300], src[VS_CLIENT_PATH_MAX + 300];
        snprintf(dst, sizeof(dst), "%s/%s", dir, name);
        snprintf(src, sizeof(src), "%s/%s", pdir, name);
        if (check(k, f, dst) == NULL)
            continue;
        (void)unlink(dst);
        const char *bad = check(k, f, src);
        if (!bad && (rc = install(src, dst, f->executable || av->frefs[i].main_program)) != 0) {
            snprintf(why, why_size, "cannot install %s: %s", name, vs_strerror(rc));
            break;
        }
        /* the installed bytes are the ones checked last, not the source's */
        if (!bad)
            bad = check(k, f, dst);
        if (bad) {
            (void)unlink(dst);
            snprintf(why, why_size, "%s failed its signature check: %s", name, bad);
            rc = VS_EAUTH;
        }
    }
    vs_sign_key_destroy(k);
    /* read-only: a running app does not add files to its library path */
    if (rc == 0 && chmod(dir, 0555) != 0)
        rc = -errno;
    if (rc == 0 && snprintf(out_dir, size, "%s", dir) >= (int)size)
        rc = VS_ELIMIT;
    return rc;
}
