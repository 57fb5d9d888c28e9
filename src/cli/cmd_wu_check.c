/*
 * volsched wu_check (BOINC's tools/wu_check): every workunit whose inputs
 * should still be in the download hierarchy (files not deleted yet) is
 * checked: each input file must be there with the size and md5 the
 * workunit records. Problems are listed one per line; with --repair SRC a
 * missing or corrupted file is restored from SRC/NAME when that copy has
 * the recorded md5. Remote inputs (--remote_file) are not on this server
 * and are skipped. Exit 0 when nothing is wrong (or all was repaired).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"
#include "cmd.h"
#include "volsched/alloc.h"
#include "volsched/create_work.h"
#include "volsched/daemon_util.h"
#include "volsched/layout.h"
#include "volsched/md5.h"
#include "volsched/store.h"
#include "volsched/str.h"
#include "volsched/strset.h"

#define PAGE 500

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched wu_check [--project DIR] [--repair SRC]\n"
               "\n"
               "Checks the input files of every workunit whose files are not deleted yet:\n"
               "each must be in the download hierarchy with the recorded size and md5.\n"
               "Prints one line per problem (WU FILE missing | WU FILE corrupted) and a\n"
               "summary. With --repair SRC, restores a missing or corrupted file from\n"
               "SRC/FILE when that copy has the recorded md5. Remote inputs are skipped.\n"
               "Exit status 0 when no problem is left, 1 otherwise.\n");
}

/* One distinct file, checked once however many workunits share it. */
struct checked {
    char *name;
    bool bad;
};

struct check {
    const struct vs_project_config *cfg;
    const char *repair;
    struct checked *files;
    size_t nfiles, cap;
    struct vs_strset set;
    int64_t nwus, nchecked, nmissing, ncorrupt, nrepaired, nremote, last_id;
    int error;
};

static const char *file_key(const void *ctx, size_t i)
{
    return ((const struct check *)ctx)->files[i].name;
}

/* Tries to restore path from SRC/name; true when it now holds md5. */
static bool repair(struct check *c, const char *wu, const struct vs_daemon_file *f,
                   const char *path)
{
    char src[VS_PATH_MAX + VS_NAME_MAX + 2];
    char md5[VS_MD5_HEX_LEN + 1];
    int64_t nb;
    snprintf(src, sizeof(src), "%s/%s", c->repair, f->name);
    if (vs_md5_file(src, md5, &nb) != 0) {
        printf("%s %s cannot repair: %s not readable\n", wu, f->name, src);
        return false;
    }
    if (strcmp(md5, f->md5_cksum) != 0) {
        printf("%s %s cannot repair: %s has md5 %s, want %s\n", wu, f->name, src, md5,
               f->md5_cksum);
        return false;
    }
    char dir[VS_PATH_MAX];
    if (vs_project_download_path(c->cfg, f->name, true, dir, sizeof(dir)) != 0 ||
        vs_create_work_copy(src, path, true) != 0) {
        printf("%s %s cannot repair: writing %s failed\n", wu, f->name, path);
        return false;
    }
    /* The rename is durable once the directory is. */
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = '\0';
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0) {
            (void)fsync(fd);
            close(fd);
        }
    }
    printf("%s %s repaired from %s\n", wu, f->name, src);
    c->nrepaired++;
    return true;
}

static void check_file(struct check *c, const char *wu, const struct vs_daemon_file *f)
{
    size_t at = vs_strset_find(&c->set, f->name, file_key, c);
    if (at != SIZE_MAX) {
        if (c->files[at].bad)
            printf("%s %s (bad, see above)\n", wu, f->name);
        return;
    }
    if (c->nfiles == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 256;
        c->files = vs_xreallocarray(c->files, c->cap, sizeof(*c->files));
    }
    struct checked *k = &c->files[c->nfiles];
    k->name = vs_xstrdup(f->name);
    k->bad = false;
    vs_strset_add(&c->set, c->nfiles++, file_key, c);
    char url[VS_PATH_MAX];
    size_t dl = strlen(c->cfg->download_url);
    if (f->url[0] && strncmp(f->url, c->cfg->download_url, dl) != 0) {
        c->nremote++; /* hosted elsewhere: nothing to check here */
        return;
    }
    (void)url;
    c->nchecked++;
    char path[VS_PATH_MAX];
    if (vs_project_download_path(c->cfg, f->name, false, path, sizeof(path)) != 0) {
        printf("%s %s bad name\n", wu, f->name);
        k->bad = true;
        return;
    }
    char md5[VS_MD5_HEX_LEN + 1];
    int64_t nb = 0;
    bool missing = vs_md5_file(path, md5, &nb) != 0;
    bool corrupt = !missing && ((f->md5_cksum[0] && strcmp(md5, f->md5_cksum) != 0) ||
                                (f->nbytes > 0 && (double)nb != f->nbytes));
    if (!missing && !corrupt)
        return;
    if (missing) {
        printf("%s %s missing (%s)\n", wu, f->name, path);
        c->nmissing++;
    } else {
        printf("%s %s corrupted: md5 %s, %lld bytes; want %s, %.0f bytes\n", wu, f->name, md5,
               (long long)nb, f->md5_cksum, f->nbytes);
        c->ncorrupt++;
    }
    k->bad = !(c->repair && repair(c, wu, f, path));
}

static int on_wu(void *ctx, const struct vs_workunit *wu)
{
    struct check *c = ctx;
    c->nwus++;
    c->last_id = wu->id;
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_daemon_file files[VS_DAEMON_MAX_FILES];
    size_t n = 0;
    if (vs_daemon_files(wu->xml_doc, &a, files, &n) != 0) {
        printf("%s cannot read its input list (xml_doc)\n", wu->name);
        c->error = 1;
    }
    for (size_t i = 0; i < n; i++)
        check_file(c, wu->name, &files[i]);
    vs_arena_cleanup(&a);
    return 0;
}

int vs_cmd_wu_check(int argc, char **argv)
{
    const char *project = NULL, *repair_dir = NULL;
    const struct vs_cli_opt opts[] = {
        {.name = "project", .str = &project},
        {.name = "repair", .str = &repair_dir},
    };
    int st =
        vs_cli_getopt_only("wu_check", argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage);
    if (st != VS_CLI_GO)
        return st;
    struct vs_project_config cfg;
    struct vs_store *s;
    if (!vs_cli_open_project("wu_check", project, &cfg, &s))
        return VS_EXIT_FAIL;
    struct check c;
    memset(&c, 0, sizeof(c));
    c.cfg = &cfg;
    c.repair = repair_dir;
    int rc = 0;
    for (;;) {
        int64_t before = c.nwus;
        rc = vs_store_workunits_with_inputs(s, c.last_id, PAGE, on_wu, &c);
        if (rc || c.nwus - before < PAGE)
            break;
    }
    vs_store_close(s);
    int64_t bad = 0;
    for (size_t i = 0; i < c.nfiles; i++) {
        bad += c.files[i].bad;
        vs_free(c.files[i].name);
    }
    vs_free(c.files);
    vs_strset_cleanup(&c.set);
    if (rc) {
        fprintf(stderr, "volsched wu_check: store: %s\n", vs_strerror(rc));
        return VS_EXIT_FAIL;
    }
    printf("checked %lld workunit(s), %lld file(s): %lld missing, %lld corrupted, %lld repaired, "
           "%lld remote (not checked)\n",
           (long long)c.nwus, (long long)c.nchecked, (long long)c.nmissing, (long long)c.ncorrupt,
           (long long)c.nrepaired, (long long)c.nremote);
    return bad > 0 || c.error ? VS_EXIT_FAIL : VS_EXIT_OK;
}
