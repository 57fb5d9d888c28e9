/*
 * volsched update_stats (BOINC's update_stats): decays every host's,
 * user's and team's recent average credit to now (volsched/db_dump.h,
 * docs/credit.md). `serve` runs it daily; this is the operator's hand.
 */
#include <stdio.h>
#include <time.h>

#include "cli_util.h"
#include "cmd.h"
#include "volsched/db_dump.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched update_stats [--project DIR]\n"
               "\n"
               "Decays the recent average credit (expavg_credit) of every host, user and\n"
               "team of the project in DIR (default: the current directory) to now, with\n"
               "BOINC's one-week half-life: a volunteer idle for a week shows half the\n"
               "average they had. `volsched serve` does it at start, daily (config.xml\n"
               "<update_stats_interval_hours>, 0: never) and before each db_dump.\n");
}

int vs_cmd_update_stats(int argc, char **argv)
{
    const char *project = NULL;
    const struct vs_cli_opt opts[] = {{.name = "project", .str = &project}};
    int next;
    int st = vs_cli_getopt("update_stats", argc, argv, opts, 1, usage, &next);
    if (st != VS_CLI_GO)
        return st;
    if (next != argc) {
        usage(stderr);
        return VS_EXIT_USAGE;
    }
    struct vs_project_config cfg;
    struct vs_store *s;
    if (!vs_cli_open_project("update_stats", project, &cfg, &s))
        return VS_EXIT_FAIL;
    struct vs_update_stats_result res;
    int rc = vs_update_stats(s, (int64_t)time(NULL), NULL, &res);
    vs_store_close(s);
    if (rc) {
        fprintf(stderr, "volsched update_stats: %s\n", vs_strerror(rc));
        return VS_EXIT_FAIL;
    }
    printf("decayed the recent averages of %lld users, %lld hosts, %lld teams to now\n",
           (long long)res.users, (long long)res.hosts, (long long)res.teams);
    return VS_EXIT_OK;
}
