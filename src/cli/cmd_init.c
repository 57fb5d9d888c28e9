/* volsched init DIR: create a project directory (BOINC's make_project). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_util.h"
#include "cmd.h"
#include "volsched/buf.h"
#include "volsched/fs.h"
#include "volsched/layout.h"
#include "volsched/loc_dirs.h"
#include "volsched/ops_auth.h"
#include "volsched/proto.h"
#include "volsched/sign.h"
#include "volsched/store.h"
#include "volsched/store_project.h"
#include "volsched/str.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched init DIR [--name NAME] [--url URL] [--store URL] [--force]\n"
               "\n"
               "Creates a project in DIR (created if missing; must be empty unless --force):\n"
               "  config.xml       BOINC layout <boinc><config>...</config></boinc>\n"
               "  config_aux.xml   job limits (<max_jobs_in_progress>)\n"
               "  templates/       job templates (`volsched app add` writes defaults)\n"
               "  download/        app and input files (BOINC fanout hierarchy)\n"
               "  upload/          uploaded outputs (same hierarchy)\n"
               "  keys/            code-signing and upload key pairs (BOINC key format)\n"
               "  html/index.html  the master page (scheduler link)\n"
               "  locality_scheduling/  trigger directories of locality scheduling\n"
               "                   (need_work, no_work_available, file_working_set,\n"
               "                   files_no_work: docs/locality.md)\n"
               "  volsched.db      the embedded store (SQLite; none with --store postgresql://)\n"
               "\n"
               "Options:\n"
               "  --name NAME   project name shown to volunteers (default: DIR's base name)\n"
               "  --url URL     master URL the project is served at\n"
               "                (default http://127.0.0.1:8080/NAME/)\n"
               "  --store URL   the store: sqlite:PATH (default DIR/volsched.db) or\n"
               "                postgresql://... (libpq URI; the database is created if\n"
               "                missing, its schema always; docs/scale-out.md)\n"
               "  --force       initialise a non-empty directory; existing keys, the\n"
               "                existing store, config.xml and the operator password are kept\n"
               "  --ops-password PW  the operator's password for the /ops/ dashboard, at least\n"
               "                10 characters (default: a random one of 16, printed once;\n"
               "                stored hashed in keys/ops_passwd)\n");
}

/* 1 if dir exists and has entries, 0 if missing or empty, <0 on error. */
static int non_empty(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : -errno;
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            found = 1;
            break;
        }
    }
    closedir(d);
    return found;
}

static int write_file(const char *dir, const char *name, const char *text, bool keep_existing)
{
    char path[VS_PATH_MAX + 64];
    int n = snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof(path))
        return VS_ELIMIT;
    if (keep_existing && access(path, F_OK) == 0)
        return 0;
    FILE *f = fopen(path, "w");
    if (!f)
        return -errno;
    size_t len = strlen(text);
    bool ok = fwrite(text, 1, len, f) == len;
    if (fclose(f) != 0 || !ok)
        return VS_EIO;
    return 0;
}

static const char *base_name(const char *dir)
{
    static char buf[VS_NAME_MAX];
    if (vs_strlcpy(buf, dir, sizeof(buf)) != 0)
        return "project";
    size_t l = strlen(buf);
    while (l > 1 && buf[l - 1] == '/')
        buf[--l] = '\0';
    const char *s = strrchr(buf, '/');
    return s && s[1] ? s + 1 : buf;
}

int vs_cmd_init(int argc, char **argv)
{
    const char *name = NULL, *url = NULL, *ops_password = NULL, *store = NULL;
    bool force = false;
    const struct vs_cli_opt opts[] = {
        {.name = "name", .str = &name},
        {.name = "url", .str = &url},
        {.name = "store", .str = &store},
        {.name = "force", .flag = &force},
        {.name = "ops-password", .str = &ops_password},
    };
    int next;
    int st = vs_cli_getopt("init", argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage, &next);
    if (st != VS_CLI_GO)
        return st;
    if (argc - next != 1) {
        fprintf(stderr, "volsched init: give exactly one project directory\n");
        usage(stderr);
        return VS_EXIT_USAGE;
    }
    const char *dir = argv[next];
    const char *weak = ops_password ? vs_ops_password_problem(ops_password) : NULL;
    if (weak) {
        fprintf(stderr, "volsched init: --ops-password refused: %s\n", weak);
        return VS_EXIT_USAGE;
    }
    if (!name)
        name = base_name(dir);
    char defurl[VS_URL_MAX];
    if (!url) {
        snprintf(defurl, sizeof(defurl), "http://127.0.0.1:8080/%s/", base_name(dir));
        url = defurl;
    }
    if (!vs_str_has_prefix(url, "http://") && !vs_str_has_prefix(url, "https://")) {
        fprintf(stderr, "volsched init: --url must start with http:// or https://\n");
        return VS_EXIT_USAGE;
    }
    int ne = non_empty(dir);
    if (ne < 0) {
        fprintf(stderr, "volsched init: cannot read %s: %s\n", dir, vs_strerror(ne));
        return VS_EXIT_FAIL;
    }
    if (ne && !force) {
        fprintf(stderr,
                "volsched init: %s is not empty; refusing (use --force to initialise it "
                "anyway)\n",
                dir);
        return VS_EXIT_FAIL;
    }

    struct vs_project_config cfg;
    int rc = vs_fs_mkdir_p(dir, 0755);
    /* --force keeps the operator's config.xml: its edits are the project. */
    char cfgpath[VS_PATH_MAX + 16];
    snprintf(cfgpath, sizeof(cfgpath), "%s/config.xml", dir);
    bool keep_cfg = force && access(cfgpath, F_OK) == 0;
    if (rc == 0 && keep_cfg) {
        /* The same file:line: reason as every command; warnings on stderr. */
        struct vs_log lg;
        vs_log_init(&lg, VS_LOG_WARN, stderr, "init");
        if (!vs_cli_load_project("init", dir, &lg, &cfg)) {
            fprintf(stderr, "volsched init: the existing %s is kept; fix or remove it\n", cfgpath);
            return VS_EXIT_FAIL;
        }
    } else if (rc == 0) {
        rc = vs_project_config_defaults(&cfg, dir, name, url);
        if (rc == 0 && store && vs_strlcpy(cfg.store_url, store, sizeof(cfg.store_url)) != 0)
            rc = VS_ELIMIT;
    }
    if (rc) {
        fprintf(stderr, "volsched init: %s: %s\n", dir, vs_strerror(rc));
        return VS_EXIT_FAIL;
    }
    const char *subdirs[] = {"templates", "download", "upload", "html", "log"};
    for (size_t i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]) && rc == 0; i++) {
        char p[VS_PATH_MAX + 16];
        snprintf(p, sizeof(p), "%s/%s", cfg.dir, subdirs[i]);
        rc = vs_fs_mkdir_p(p, 0755);
    }
    if (rc == 0)
        rc = vs_loc_dirs_create(cfg.dir);
    if (rc == 0 && !keep_cfg)
        rc = vs_project_config_write(&cfg);
    if (rc == 0)
        rc = vs_project_config_write_aux(&cfg);
    if (rc) {
        fprintf(stderr, "volsched init: writing %s: %s\n", cfg.dir, vs_strerror(rc));
        return VS_EXIT_FAIL;
    }

    /* Keys: kept if present (clients already trust the code-signing key). */
    char keyfile[VS_PATH_MAX + 32];
    snprintf(keyfile, sizeof(keyfile), "%s/%s", cfg.key_dir, VS_SIGN_CODE_PRIVATE);
    bool have_keys = access(keyfile, F_OK) == 0;
    if (!have_keys) {
        rc = vs_sign_keygen_write(cfg.key_dir, VS_SIGN_KEY_BITS);
        if (rc) {
            fprintf(stderr, "volsched init: generating keys in %s: %s\n", cfg.key_dir,
                    vs_strerror(rc));
            return VS_EXIT_FAIL;
        }
    }

    /* The operator's password for /ops/: kept if set, shown once if new. */
    char pwpath[VS_PATH_MAX + 32], newpw[32] = "";
    snprintf(pwpath, sizeof(pwpath), "%s/%s", cfg.dir, VS_OPS_PASSWD_FILE);
    if (ops_password || access(pwpath, F_OK) != 0) {
        char hash[VS_OPS_HASH_MAX + 2];
        if (!ops_password) {
            rc = vs_ops_random_password(newpw, sizeof(newpw));
            ops_password = newpw;
        }
        if (rc == 0)
            rc = vs_ops_hash_password(ops_password, hash, sizeof(hash) - 1);
        if (rc == 0) {
            size_t hl = strlen(hash);
            hash[hl] = '\n';
            hash[hl + 1] = '\0';
            FILE *pf = fopen(pwpath, "w");
            rc = pf ? 0 : -errno;
            if (pf) {
                fchmod(fileno(pf), 0600);
                if (fputs(hash, pf) < 0)
                    rc = VS_EIO;
                if (fclose(pf) != 0)
                    rc = VS_EIO;
            }
        }
        if (rc) {
            fprintf(stderr, "volsched init: writing %s: %s\n", pwpath, vs_strerror(rc));
            return VS_EXIT_FAIL;
        }
    }

    /* The master page: what the BOINC client fetches on attach. */
    char sched[VS_URL_MAX + 8];
    rc = vs_project_scheduler_url(&cfg, sched, sizeof(sched));
    struct vs_buf page;
    vs_buf_init(&page, 65536);
    const char *urls[1] = {sched};
    if (rc == 0)
        rc = vs_proto_master_page_write(cfg.long_name, urls, 1, &page);
    char html[VS_PATH_MAX + 8];
    snprintf(html, sizeof(html), "%s/html", cfg.dir);
    if (rc == 0)
        rc = write_file(html, "index.html", vs_buf_str(&page), false);
    vs_buf_cleanup(&page);
    if (rc) {
        fprintf(stderr, "volsched init: writing the master page: %s\n", vs_strerror(rc));
        return VS_EXIT_FAIL;
    }

    struct vs_store *s = NULL;
    rc = vs_project_store_open(&cfg, true, NULL, &s);
    vs_store_close(s);
    if (rc) {
        fprintf(stderr, "volsched init: creating the store %s: %s\n", cfg.store_url,
                vs_strerror(rc));
        return VS_EXIT_FAIL;
    }
    printf("project '%s' initialised in %s\n"
           "  master URL:    %s\n"
           "  scheduler URL: %s\n"
           "  store:         %s\n"
           "  keys:          %s (%s)\n"
           "  config.xml:    %s\n"
           "next: volsched app add --project %s --name APP --platform PLATFORM --version N "
           "PROGRAM\n",
           cfg.long_name, cfg.dir, cfg.master_url, sched, cfg.store_url, cfg.key_dir,
           have_keys ? "kept" : "new",
           keep_cfg ? "kept (--force never rewrites it; --name and --url were not applied)" : "new",
           dir);
    if (newpw[0])
        printf("  operator password for /ops/: %s (stored hashed in %s; shown only now)\n", newpw,
               VS_OPS_PASSWD_FILE);
    return VS_EXIT_OK;
}
