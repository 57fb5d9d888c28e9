/*
 * volsched db_dump (BOINC's db_dump): the statistics exports under
 * DIR/stats/ (src/server/db_dump.h, docs/credit.md).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli_util.h"
#include "cmd.h"
#include "volsched/db_dump.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched db_dump [--project DIR] [--names] [--out DIR2]\n"
               "\n"
               "Writes BOINC's statistics exports of the project in DIR (default: the\n"
               "current directory) to DIR/stats/: tables.xml, user.gz, team.gz and host.gz,\n"
               "the users, teams and hosts with credit in id order, as statistics sites read\n"
               "them. `volsched serve` serves them under the master URL at stats/ and\n"
               "rewrites them daily (config.xml <db_dump_interval_hours>, 0: never).\n"
               "Each file is replaced atomically; tables.xml last.\n"
               "\n"
               "GDPR-minimal: no e-mail, IP address, domain name or country; hosts are not\n"
               "tied to their owners; users' names are exported empty unless --names.\n"
               "\n"
               "  --names     export users' names\n"
               "  --out DIR2  write there instead of DIR/stats\n");
}

int vs_cmd_db_dump(int argc, char **argv)
{
    const char *project = NULL, *out = NULL;
    bool names = false;
    const struct vs_cli_opt opts[] = {
        {.name = "project", .str = &project},
        {.name = "out", .str = &out},
        {.name = "names", .flag = &names},
    };
    int next;
    int st =
        vs_cli_getopt("db_dump", argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage, &next);
    if (st != VS_CLI_GO)
        return st;
    if (next != argc) {
        usage(stderr);
        return VS_EXIT_USAGE;
    }
    struct vs_project_config cfg;
    struct vs_store *s;
    if (!vs_cli_open_project("db_dump", project, &cfg, &s))
        return VS_EXIT_FAIL;
    struct vs_db_dump_options opt = {.names = names, .out_dir = out};
    struct vs_db_dump_stats ds;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = vs_db_dump(s, &cfg, (int64_t)time(NULL), &opt, NULL, &ds);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    vs_store_close(s);
    if (rc) {
        fprintf(stderr, "volsched db_dump: %s: %s\n", ds.out_dir, vs_strerror(rc));
        return VS_EXIT_FAIL;
    }
    printf("wrote %s: %lld users, %lld teams, %lld hosts, %.2f credit in %.2f s\n", ds.out_dir,
           (long long)ds.nusers, (long long)ds.nteams, (long long)ds.nhosts, ds.total_credit,
           (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    return VS_EXIT_OK;
}
