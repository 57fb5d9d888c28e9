/*
 * volsched locality-ws: locality scheduling's working-set manager (seed
 * 001; docs/locality.md). Keeps DIR/locality_scheduling/file_working_set/
 * at N files; the pass itself is vs_locality_ws_pass
 * (volsched/locality_daemons.h).
 */
#include <stdio.h>

#include "cli_util.h"
#include "cmd.h"
#include "volsched/daemons.h"
#include "volsched/log.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched locality-ws [--project DIR] --files N [--interval MS] [--once]\n"
               "\n"
               "The working-set manager of locality scheduling. Hosts that hold none of the\n"
               "project's big files get one of the files in\n"
               "DIR/locality_scheduling/file_working_set/. This keeps N files there: it drops\n"
               "the ones the scheduler reported in files_no_work/ (no unsent results left)\n"
               "and adds files that have unsent results, in name order. Seed 001's size is\n"
               "about (active hosts) / target_nresults, so that each file goes to about\n"
               "target_nresults hosts. Runs until SIGINT/SIGTERM; `volsched serve` runs it\n"
               "beside itself when config.xml has <locality_ws><files>N</files></locality_ws>.\n"
               "\n"
               "  --project DIR   project directory (default: current directory)\n"
               "  --files N       working-set size (required, >= 1)\n"
               "  --interval MS   sleep when there is nothing to do (default 1000)\n"
               "  --once          one pass, then exit\n");
}

int vs_cmd_locality_ws(int argc, char **argv)
{
    const char *project = ".";
    double files = 0, interval = 1000;
    bool once = false;
    const struct vs_cli_opt opts[] = {
        {.name = "project", .str = &project},
        {.name = "files", .num = &files, .num_min = 1},
        {.name = "interval", .num = &interval, .num_min = 1},
        {.name = "once", .flag = &once},
    };
    int next;
    int st = vs_cli_getopt("locality-ws", argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage,
                           &next);
    if (st != VS_CLI_GO)
        return st;
    if (files < 1 || files > 1e6 || next < argc) {
        fprintf(stderr, "volsched locality-ws: %s\n",
                next < argc ? "unexpected argument" : "--files N (1 to 1000000) is required");
        usage(stderr);
        return VS_EXIT_USAGE;
    }
    struct vs_log lg;
    vs_log_init(&lg, VS_LOG_INFO, stderr, "locality-ws");
    struct vs_project_config cfg;
    if (!vs_cli_load_project("locality-ws", project, &lg, &cfg))
        return VS_EXIT_USAGE;
    cfg.locality_ws_files = (int)files;
    return vs_cli_run_daemons(&cfg, VS_DAEMON_LOCALITY_WS, (int)interval, once, &lg);
}
