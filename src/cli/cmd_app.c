/*
 * volsched app add: register an app version (BOINC's update_versions +
 * sign_executable): copy its files into the download hierarchy, sign them
 * with the project's code-signing key, record them in the store, and write
 * default templates for an app that has none.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_util.h"
#include "cmd.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/cw_stage.h"
#include "volsched/fs.h"
#include "volsched/layout.h"
#include "volsched/locality.h"
#include "volsched/md5.h"
#include "volsched/sign.h"
#include "volsched/store.h"
#include "volsched/str.h"
#include "volsched/templates.h"

#define MAX_FILES 64

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched app add [--project DIR] --name APP --platform PLATFORM\n"
               "                        --version V [--plan-class C] [--user-friendly-name S]\n"
               "                        [--api-version X] [--avg-ncpus N]\n"
               "                        [--locality full|lite|none] [--follow-symlinks]\n"
               "                        FILE...\n"
               "\n"
               "Registers version V of app APP for PLATFORM (e.g. x86_64-pc-linux-gnu). The\n"
               "first FILE is the main program. Files are copied into the download\n"
               "hierarchy and signed with keys/code_sign_private, so the BOINC client\n"
               "accepts them. The app and platform are created if new. If the app has no\n"
               "templates yet, templates/APP_in (one input opened as 'in') and\n"
               "templates/APP_out (one output opened as 'out'), both <copy_file/>, are\n"
               "written, so a plain program that reads 'in', writes 'out' and creates\n"
               "'boinc_finish_called' runs as is.\n"
               "\n"
               "Options:\n"
               "  --project DIR   project directory (default: current directory)\n"
               "  --version V     version number: 101, or 1.01 (= 101)\n"
               "  --plan-class C  plan class (default none)\n"
               "  --api-version X BOINC API version the program was linked with (omit for\n"
               "                  plain executables)\n"
               "  --avg-ncpus N   CPUs one job uses (default 1)\n"
               "  --locality M    how the app's jobs find hosts (docs/locality.md): full =\n"
               "                  locality scheduling (jobs named FILE__*, sent to hosts that\n"
               "                  hold FILE; needs <locality_scheduling/> in config.xml),\n"
               "                  lite = prefer hosts holding a job's sticky input, none\n"
               "                  (the default for a new app; an existing app keeps its mode\n"
               "                  unless this is given). Given for a version already\n"
               "                  registered, it changes the app's mode and leaves the\n"
               "                  version as it is\n"
               "  --follow-symlinks  a FILE may be or pass through a symbolic link\n"
               "                  (refused by default: what it points to would be signed\n"
               "                  and published)\n"
               "APP may not begin with '-' (job names are made from it, and they reach\n"
               "the assimilator's command as arguments).\n");
}

/* "101" -> 101, "1.01" -> 101, "2.5" -> 205 (BOINC: major * 100 + minor). */
static bool parse_version(const char *s, int *out)
{
    const char *dot = strchr(s, '.');
    int64_t major, minor = 0;
    if (!dot) {
        if (vs_parse_int64(s, &major) != 0 || major <= 0 || major > 1000000000)
            return false;
        *out = (int)major;
        return true;
    }
    char a[32];
    size_t al = (size_t)(dot - s);
    if (al == 0 || al >= sizeof(a) || !dot[1] || strlen(dot + 1) > 2)
        return false;
    memcpy(a, s, al);
    a[al] = '\0';
    if (vs_parse_int64(a, &major) != 0 || vs_parse_int64(dot + 1, &minor) != 0 || major < 0 ||
        minor < 0 || major > 10000000)
        return false;
    *out = (int)(major * 100 + minor);
    return *out > 0;
}

static bool plain_name(const char *s)
{
    if (!*s || strstr(s, ".."))
        return false;
    for (; *s; s++)
        if (*s <= ' ' || *s == '/' || *s == '%' || *s == '<' || *s == '>' || *s == '&')
            return false;
    return true;
}

/* Copies src, opened as create_work opens its inputs (vs_cw_open_input:
 * no symbolic link unless follow), to dst with mode. */
static int copy_file(const char *src, bool follow, const char *dst, mode_t mode)
{
    int in = -1;
    char link[VS_PATH_MAX];
    int rc0 = vs_cw_open_input(src, follow, &in, link, sizeof(link));
    if (rc0)
        return rc0;
    int rc = vs_fs_copy_fd(in, dst, mode, VS_FS_DURABLE | VS_FS_PID_TMP, NULL);
    close(in);
    return rc;
}

/* Writes templates/<app>_in and _out if missing; returns how many it wrote. */
static int default_templates(const struct vs_project_config *cfg, const char *app, int *out_n)
{
    const char *suffix[2] = {"_in", "_out"};
    const char *text[2] = {vs_template_default_in, vs_template_default_out};
    *out_n = 0;
    for (int i = 0; i < 2; i++) {
        char path[VS_PATH_MAX + VS_NAME_MAX];
        snprintf(path, sizeof(path), "%s/templates/%s%s", cfg->dir, app, suffix[i]);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0) {
            if (errno == EEXIST)
                continue;
            return -errno;
        }
        size_t len = strlen(text[i]);
        bool ok = write(fd, text[i], len) == (ssize_t)len;
        if (close(fd) != 0 || !ok)
            return VS_EIO;
        (*out_n)++;
    }
    return 0;
}

static const char *mode_name(int mode)
{
    return mode == VS_LOC_APP_FULL   ? "full"
           : mode == VS_LOC_APP_LITE ? "lite"
           : mode == VS_LOC_APP_NONE ? "none"
                                     : "?";
}

/* Whether version (vnum, plan_class) of app appid for platformid is in the
 * store already (into *out_exists); 0 or the store's error. */
static int version_exists(struct vs_store *s, int64_t appid, int64_t platformid, int vnum,
                          const char *plan_class, bool *out_exists)
{
    struct vs_catalog cat;
    memset(&cat, 0, sizeof(cat));
    int rc = vs_store_catalog_load(s, &cat);
    if (rc)
        return rc;
    bool found = false;
    for (size_t i = 0; i < cat.napp_versions && !found; i++) {
        const struct vs_app_version *v = &cat.app_versions[i];
        found = v->appid == appid && v->platformid == platformid && v->version_num == vnum &&
                strcmp(v->plan_class, plan_class) == 0;
    }
    vs_catalog_cleanup(&cat);
    *out_exists = found;
    return 0;
}

static int app_add(int argc, char **argv)
{
    const char *project = NULL, *name = NULL, *platform = NULL, *version = NULL;
    const char *plan_class = "", *friendly = NULL, *api = "", *locality = NULL;
    double avg_ncpus = 1;
    bool follow = false;
    const struct vs_cli_opt opts[] = {
        {.name = "project", .str = &project},
        {.name = "name", .str = &name},
        {.name = "platform", .str = &platform},
        {.name = "version", .str = &version},
        {.name = "plan-class", .str = &plan_class},
        {.name = "plan_class", .str = &plan_class},
        {.name = "user-friendly-name", .str = &friendly},
        {.name = "api-version", .str = &api},
        {.name = "avg-ncpus", .num = &avg_ncpus, .num_min = 0.0001},
        {.name = "locality", .str = &locality},
        {.name = "follow-symlinks", .flag = &follow},
    };
    int next;
    int st =
        vs_cli_getopt("app add", argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage, &next);
    if (st != VS_CLI_GO)
        return st;
    if (!name || !platform || !version) {
        fprintf(stderr, "volsched app add: --name, --platform and --version are required\n");
        usage(stderr);
        return VS_EXIT_USAGE;
    }
    int nfiles = argc - next;
    if (nfiles < 1 || nfiles > MAX_FILES) {
        fprintf(stderr, "volsched app add: give 1 to %d FILEs (the first is the main program)\n",
                MAX_FILES);
        return VS_EXIT_USAGE;
    }
    int loc_mode = -1; /* -1: not given */
    if (locality) {
        loc_mode = strcmp(locality, "full") == 0   ? VS_LOC_APP_FULL
                   : strcmp(locality, "lite") == 0 ? VS_LOC_APP_LITE
                   : strcmp(locality, "none") == 0 ? VS_LOC_APP_NONE
                                                   : -2;
        if (loc_mode == -2) {
            fprintf(stderr, "volsched app add: --locality: '%s' is not full, lite or none\n",
                    locality);
            return VS_EXIT_USAGE;
        }
    }
    int vnum;
    if (!parse_version(version, &vnum)) {
        fprintf(stderr, "volsched app add: --version: '%s' is not a version (101 or 1.01)\n",
                version);
        return VS_EXIT_USAGE;
    }
    if (name[0] == '-') {
        fprintf(stderr,
                "volsched app add: --name '%s': an app name may not begin with '-' (job "
                "names are made from it, and they reach the assimilator's command as "
                "arguments)\n",
                name);
        return VS_EXIT_USAGE;
    }
    if (!plain_name(name) || !plain_name(platform) || (plan_class[0] && !plain_name(plan_class))) {
        fprintf(stderr, "volsched app add: names may not contain blanks, '/', '%%', '..' or "
                        "XML characters\n");
        return VS_EXIT_USAGE;
    }

    struct vs_project_config cfg;
    struct vs_store *s = NULL;
    if (!vs_cli_open_project("app add", project, &cfg, &s))
        return VS_EXIT_FAIL;

    int status = VS_EXIT_FAIL;
    struct vs_sign_key *key = NULL;
    struct vs_app_version av;
    memset(&av, 0, sizeof(av));
    av.files = vs_xcalloc((size_t)nfiles, sizeof(*av.files));
    av.nfiles = (size_t)nfiles;
    bool *copied = vs_xcalloc((size_t)nfiles, sizeof(bool));
    char(*dst)[VS_PATH_MAX] = vs_xcalloc((size_t)nfiles, VS_PATH_MAX);
    struct vs_buf sig;
    vs_buf_init(&sig, 8192);
    int rc;

    char keypath[VS_PATH_MAX + 32];
    snprintf(keypath, sizeof(keypath), "%s/%s", cfg.key_dir, VS_SIGN_CODE_PRIVATE);
    if ((rc = vs_sign_key_load(keypath, true, &key)) != 0) {
        fprintf(stderr, "volsched app add: cannot load the code-signing key %s: %s\n", keypath,
                vs_strerror(rc));
        goto out;
    }

    /* Validate and describe every file before anything is written. */
    char base[VS_NAME_MAX];
    int n = snprintf(base, sizeof(base), "%s_%d_%s%s%s", name, vnum, platform,
                     plan_class[0] ? "__" : "", plan_class);
    if (n < 0 || (size_t)n >= sizeof(base) - 64) {
        fprintf(stderr, "volsched app add: names too long\n");
        status = VS_EXIT_USAGE;
        goto out;
    }
    for (int i = 0; i < nfiles; i++) {
        const char *src = argv[next + i];
        struct vs_app_version_file *f = &av.files[i];
        struct stat sb;
        int fd = -1;
        char link[VS_PATH_MAX];
        rc = vs_cw_open_input(src, follow, &fd, link, sizeof(link));
        if (rc == -ELOOP) {
            fprintf(stderr,
                    "volsched app add: %s: %s is a symbolic link; app files are not taken "
                    "through symbolic links (give the file itself, or --follow-symlinks)\n",
                    src, link);
            status = VS_EXIT_USAGE;
            goto out;
        }
        if (rc == 0 && fstat(fd, &sb) != 0)
            rc = -errno;
        if (fd >= 0)
            close(fd);
        if (rc) {
            fprintf(stderr, "volsched app add: %s: not a readable file\n", src);
            status = VS_EXIT_USAGE;
            goto out;
        }
        const char *bn = strrchr(src, '/') ? strrchr(src, '/') + 1 : src;
        if (!plain_name(bn)) {
            fprintf(stderr, "volsched app add: %s: bad file name\n", src);
            status = VS_EXIT_USAGE;
            goto out;
        }
        /* Physical names are unique per project: <app>_<version>_<platform>
         * for the main program, plus _<file name> for the others. */
        if (i == 0)
            n = snprintf(f->name, sizeof(f->name), "%s", base);
        else
            n = snprintf(f->name, sizeof(f->name), "%s_%s", base, bn);
        if (n < 0 || (size_t)n >= sizeof(f->name) ||
            vs_project_hier_rel(cfg.uldl_dir_fanout, f->name, f->path, sizeof(f->path)) != 0 ||
            vs_project_download_path(&cfg, f->name, false, dst[i], VS_PATH_MAX) != 0) {
            fprintf(stderr, "volsched app add: %s: name too long\n", src);
            status = VS_EXIT_USAGE;
            goto out;
        }
        if (i > 0) {
            n = snprintf(f->open_name, sizeof(f->open_name), "%s", bn);
            f->copy_file = 1;
        }
        f->main_program = i == 0;
        f->executable = i == 0 || (sb.st_mode & S_IXUSR);
        int64_t nbytes;
        if ((rc = vs_md5_file(src, f->md5_cksum, &nbytes)) != 0) {
            fprintf(stderr, "volsched app add: %s: %s\n", src, vs_strerror(rc));
            goto out;
        }
        f->nbytes = (double)nbytes;
        char have[VS_MD5_HEX_LEN + 1];
        if (vs_md5_file(dst[i], have, NULL) == 0 && strcmp(have, f->md5_cksum) != 0) {
            fprintf(stderr,
                    "volsched app add: %s is already in the download hierarchy with different "
                    "content; app files are immutable: use a new --version\n",
                    f->name);
            status = VS_EXIT_USAGE;
            goto out;
        }
        vs_buf_reset(&sig);
        if ((rc = vs_sign_file(key, src, &sig)) != 0) {
            fprintf(stderr, "volsched app add: signing %s: %s\n", src, vs_strerror(rc));
            goto out;
        }
        size_t sl;
        f->file_signature = vs_buf_take(&sig, &sl);
    }

    /* Copy, then record everything in one transaction. */
    for (int i = 0; i < nfiles; i++) {
        if (access(dst[i], F_OK) == 0)
            continue; /* same content already there */
        if ((rc = vs_project_download_path(&cfg, av.files[i].name, true, dst[i], VS_PATH_MAX)) ||
            (rc =
                 copy_file(argv[next + i], follow, dst[i], av.files[i].executable ? 0755 : 0644))) {
            fprintf(stderr, "volsched app add: copying %s to %s: %s\n", argv[next + i], dst[i],
                    vs_strerror(rc));
            goto out;
        }
        copied[i] = true;
    }
    if ((rc = vs_store_begin(s)) != 0)
        goto store_fail;
    struct vs_app app;
    memset(&app, 0, sizeof(app));
    int old_mode = -1; /* the mode --locality replaced, or -1 */
    bool had_version = false;
    rc = vs_store_app_by_name(s, name, &app);
    if (rc == VS_ENOTFOUND) {
        if (vs_strlcpy(app.name, name, sizeof(app.name)) ||
            vs_strlcpy(app.user_friendly_name, friendly ? friendly : name,
                       sizeof(app.user_friendly_name)))
            rc = VS_ELIMIT;
        else {
            app.weight = 1;
            app.locality_scheduling = loc_mode > 0 ? loc_mode : VS_LOC_APP_NONE;
            rc = vs_store_app_add(s, &app);
        }
    } else if (rc == 0 && loc_mode >= 0 && app.locality_scheduling != loc_mode) {
        old_mode = app.locality_scheduling;
        app.locality_scheduling = loc_mode;
        rc = vs_store_app_update(s, &app);
    }
    struct vs_platform plat;
    memset(&plat, 0, sizeof(plat));
    if (rc == 0) {
        rc = vs_store_platform_by_name(s, platform, &plat);
        if (rc == VS_ENOTFOUND) {
            if (vs_strlcpy(plat.name, platform, sizeof(plat.name)) ||
                vs_strlcpy(plat.user_friendly_name, platform, sizeof(plat.user_friendly_name)))
                rc = VS_ELIMIT;
            else
                rc = vs_store_platform_add(s, &plat);
        }
    }
    /* docs/locality.md: --locality may be given again, with the same
     * version, to change the mode of an app already registered; the version
     * itself is then left as it is. Without --locality a second add of a
     * version is still an error. */
    if (rc == 0 && loc_mode >= 0 && app.id > 0 && plat.id > 0)
        rc = version_exists(s, app.id, plat.id, vnum, plan_class, &had_version);
    if (rc == 0 && !had_version) {
        av.appid = app.id;
        av.platformid = plat.id;
        av.version_num = vnum;
        av.avg_ncpus = avg_ncpus;
        if (vs_strlcpy(av.plan_class, plan_class, sizeof(av.plan_class)) ||
            vs_strlcpy(av.api_version, api, sizeof(av.api_version)))
            rc = VS_ELIMIT;
        else
            rc = vs_store_app_version_add(s, &av);
    }
    if (rc == 0) {
        rc = vs_store_commit(s);
    } else {
        (void)vs_store_rollback(s);
    }
store_fail:
    if (rc == VS_EEXISTS) {
        fprintf(stderr, "volsched app add: %s version %d for %s%s%s already exists\n", name, vnum,
                platform, plan_class[0] ? " plan class " : "", plan_class);
        status = VS_EXIT_USAGE;
        goto out;
    }
    if (rc) {
        fprintf(stderr, "volsched app add: store: %s\n", vs_strerror(rc));
        goto out;
    }
    if (had_version) {
        if (old_mode >= 0)
            printf("app %s: locality %s (was %s); version %d (%s%s%s) already registered, "
                   "left as it is\n",
                   name, mode_name(loc_mode), mode_name(old_mode), vnum, platform,
                   plan_class[0] ? ", " : "", plan_class);
        else
            printf("app %s: locality already %s; version %d (%s%s%s) already registered, "
                   "left as it is\n",
                   name, mode_name(loc_mode), vnum, platform, plan_class[0] ? ", " : "",
                   plan_class);
        status = VS_EXIT_OK;
        goto out;
    }
    int ntemplates = 0;
    rc = default_templates(&cfg, name, &ntemplates);
    if (rc)
        fprintf(stderr, "volsched app add: warning: writing default templates: %s\n",
                vs_strerror(rc));
    printf("app %s version %d (%s%s%s): %d file(s) signed and staged%s\n", name, vnum, platform,
           plan_class[0] ? ", " : "", plan_class, nfiles,
           ntemplates ? "; default templates written" : "");
    status = VS_EXIT_OK;
out:
    if (status != VS_EXIT_OK) {
        for (int i = 0; i < nfiles; i++)
            if (copied[i])
                unlink(dst[i]);
    }
    vs_buf_cleanup(&sig);
    vs_free(dst);
    vs_free(copied);
    vs_app_version_cleanup(&av);
    vs_sign_key_destroy(key);
    vs_store_close(s);
    return status;
}

int vs_cmd_app(int argc, char **argv)
{
    return vs_cli_add_group("app", argc, argv, usage, app_add);
}
