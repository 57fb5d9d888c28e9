/*
 * volsched purge --older DAYS (BOINC's db_purge): finished workunits (files
 * deleted, every result over) not changed for DAYS days are written with
 * their results to DIR/archives/{wu,result}_archive_<time>.xml, the archive
 * is synced to disk, and only then are the rows deleted.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli_util.h"
#include "cmd.h"
#include "volsched/buf.h"
#include "volsched/store_ops.h"
#include "volsched/xml.h"

#define PAGE 500

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched purge [--project DIR] --older DAYS [--dry-run]\n"
               "\n"
               "Archives finished workunits (output files deleted, all results over) whose\n"
               "last change is older than DAYS days, with their results, as XML under\n"
               "DIR/archives/, then deletes them from the store (BOINC's db_purge).\n"
               "--dry-run only counts them.\n");
}

static void x_str(FILE *f, const char *tag, const char *v)
{
    struct vs_buf b;
    vs_buf_init(&b, 1 << 20);
    if (v && vs_xml_escape(&b, v, strlen(v)) == 0)
        fprintf(f, "    <%s>%s</%s>\n", tag, vs_buf_str(&b), tag);
    vs_buf_cleanup(&b);
}

static int arch_result(void *ctx, const struct vs_result *r)
{
    FILE *f = ctx;
    fprintf(f, "<result>\n    <id>%lld</id>\n", (long long)r->id);
    x_str(f, "name", r->name);
    fprintf(f,
            "    <workunitid>%lld</workunitid>\n    <server_state>%d</server_state>\n"
            "    <outcome>%d</outcome>\n    <validate_state>%d</validate_state>\n"
            "    <hostid>%lld</hostid>\n    <userid>%lld</userid>\n"
            "    <sent_time>%lld</sent_time>\n    <received_time>%lld</received_time>\n"
            "    <exit_status>%d</exit_status>\n    <cpu_time>%.17g</cpu_time>\n"
            "    <elapsed_time>%.17g</elapsed_time>\n    <granted_credit>%.17g</granted_credit>\n"
            "    <app_version_id>%lld</app_version_id>\n",
            (long long)r->workunitid, r->server_state, r->outcome, r->validate_state,
            (long long)r->hostid, (long long)r->userid, (long long)r->sent_time,
            (long long)r->received_time, r->exit_status, r->cpu_time, r->elapsed_time,
            r->granted_credit, (long long)r->app_version_id);
    x_str(f, "xml_doc_out", r->xml_doc_out);
    x_str(f, "stderr_out", r->stderr_out);
    fprintf(f, "</result>\n");
    return ferror(f) ? VS_EIO : 0;
}

static void arch_wu(FILE *f, const struct vs_workunit *wu)
{
    fprintf(f, "<workunit>\n    <id>%lld</id>\n", (long long)wu->id);
    x_str(f, "name", wu->name);
    fprintf(
        f,
        "    <appid>%lld</appid>\n    <batch>%lld</batch>\n    <create_time>%lld</create_time>\n"
        "    <canonical_resultid>%lld</canonical_resultid>\n"
        "    <error_mask>%d</error_mask>\n    <mod_time>%lld</mod_time>\n",
        (long long)wu->appid, (long long)wu->batch, (long long)wu->create_time,
        (long long)wu->canonical_resultid, wu->error_mask, (long long)wu->mod_time);
    x_str(f, "xml_doc", wu->xml_doc);
    fprintf(f, "</workunit>\n");
}

static int sync_file(FILE *f)
{
    return fflush(f) == 0 && fsync(fileno(f)) == 0 ? 0 : -errno;
}

int vs_cmd_purge(int argc, char **argv)
{
    const char *project = NULL, *older = NULL;
    bool dry = false;
    const struct vs_cli_opt opts[] = {
        {.name = "project", .str = &project},
        {.name = "older", .str = &older},
        {.name = "dry-run", .flag = &dry},
    };
    int next;
    int st = vs_cli_getopt("purge", argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage, &next);
    if (st != VS_CLI_GO)
        return st;
    int64_t days = 0;
    if (next != argc || !older) {
        usage(stderr);
        return VS_EXIT_USAGE;
    }
    if (!vs_cli_int("purge", "older", older, 0, 36500, &days))
        return VS_EXIT_USAGE;
    struct vs_project_config cfg;
    struct vs_store *s;
    if (!vs_cli_open_project("purge", project, &cfg, &s))
        return VS_EXIT_FAIL;
    int64_t now = (int64_t)time(NULL), before = now - days * 86400;
    FILE *fw = NULL, *fr = NULL;
    char pw[VS_PATH_MAX + 64], pr[VS_PATH_MAX + 64];
    int rc = 0;
    int64_t total = 0;
    int64_t ids[PAGE];
    /* Bounded: each round deletes what it archived, so candidates shrink;
     * the cap stops a store that refuses deletes from looping. */
    for (int round = 0; rc == 0 && round < 100000; round++) {
        size_t n = 0;
        rc = vs_store_purge_candidates(s, before, ids, PAGE, &n);
        if (rc || n == 0)
            break;
        if (dry) {
            total += (int64_t)n;
            break;
        }
        if (!fw) {
            snprintf(pw, sizeof(pw), "%s/archives", cfg.dir);
            if (mkdir(pw, 0755) != 0 && errno != EEXIST) {
                rc = -errno;
                break;
            }
            snprintf(pw, sizeof(pw), "%s/archives/wu_archive_%lld.xml", cfg.dir, (long long)now);
            snprintf(pr, sizeof(pr), "%s/archives/result_archive_%lld.xml", cfg.dir,
                     (long long)now);
            fw = fopen(pw, "a");
            fr = fopen(pr, "a");
            if (!fw || !fr) {
                rc = -errno;
                break;
            }
        }
        for (size_t i = 0; rc == 0 && i < n; i++) {
            struct vs_workunit wu;
            memset(&wu, 0, sizeof(wu));
            rc = vs_store_workunit_get(s, ids[i], &wu);
            if (rc == 0) {
                arch_wu(fw, &wu);
                rc = vs_store_results_of_wu(s, wu.id, arch_result, fr);
            }
            vs_workunit_cleanup(&wu);
        }
        /* The archive is on disk before any row goes. */
        if (rc == 0)
            rc = sync_file(fw);
        if (rc == 0)
            rc = sync_file(fr);
        if (rc == 0)
            rc = vs_store_begin(s);
        for (size_t i = 0; rc == 0 && i < n; i++)
            rc = vs_store_workunit_delete(s, ids[i]);
        if (rc == 0)
            rc = vs_store_commit(s);
        else
            (void)vs_store_rollback(s);
        if (rc == 0)
            total += (int64_t)n;
        if (n < PAGE)
            break;
    }
    if (fw)
        fclose(fw);
    if (fr)
        fclose(fr);
    vs_store_close(s);
    if (rc) {
        fprintf(stderr, "volsched purge: %s (%lld workunits purged before the error)\n",
                rc < 0 ? strerror(-rc) : vs_strerror(rc), (long long)total);
        return VS_EXIT_FAIL;
    }
    if (dry)
        printf("%lld%s workunits would be purged\n", (long long)total, total == PAGE ? "+" : "");
    else if (total)
        printf("purged %lld workunits; archived in %s and %s\n", (long long)total, pw, pr);
    else
        printf("nothing to purge\n");
    return VS_EXIT_OK;
}
