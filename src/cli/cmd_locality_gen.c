/*
 * volsched locality-gen: locality scheduling's on-demand work generator
 * (seed 001; docs/locality.md). Watches DIR/locality_scheduling/need_work/
 * and runs the operator's command for each file the scheduler asks work
 * for; the pass itself is vs_locality_gen_pass (volsched/locality_daemons.h).
 */
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "cmd.h"
#include "volsched/daemons.h"
#include "volsched/log.h"
#include "volsched/str.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched locality-gen [--project DIR] --command CMD [--timeout S]\n"
               "                             [--interval MS] [--once]\n"
               "\n"
               "The on-demand work generator of locality scheduling. For each entry F in\n"
               "DIR/locality_scheduling/need_work/ (made by the scheduler when a host holds\n"
               "file F and F has no unsent result) runs `CMD F` (CMD split at blanks, no\n"
               "shell). CMD exits 0 when it made work for F (typically with `volsched\n"
               "create_work --appname APP F ...`): the entry is removed, and a scheduler that\n"
               "waits for it (<locality_scheduling_wait_period>) looks again. Exit status 2\n"
               "means no more work will come for F: no_work_available/F is made and hosts are\n"
               "told to delete F. Any other status, or a time-out, keeps the entry for the\n"
               "next pass. Runs until SIGINT/SIGTERM; `volsched serve` runs it beside itself\n"
               "when config.xml has <locality_gen><command>CMD</command></locality_gen>.\n"
               "\n"
               "  --project DIR   project directory (default: current directory)\n"
               "  --command CMD   the generator (required)\n"
               "  --timeout S     kill CMD after S seconds (default: config.xml's\n"
               "                  <daemon_command_timeout>, 600)\n"
               "  --interval MS   sleep when there is nothing to do (default 1000)\n"
               "  --once          one pass, then exit\n");
}

int vs_cmd_locality_gen(int argc, char **argv)
{
    const char *project = ".", *command = NULL;
    double timeout = -1, interval = 1000;
    bool once = false;
    const struct vs_cli_opt opts[] = {
        {.name = "project", .str = &project},
        {.name = "command", .str = &command},
        {.name = "timeout", .num = &timeout, .num_min = 0},
        {.name = "interval", .num = &interval, .num_min = 1},
        {.name = "once", .flag = &once},
    };
    int next;
    int st = vs_cli_getopt("locality-gen", argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage,
                           &next);
    if (st != VS_CLI_GO)
        return st;
    if (!command || !*command || next < argc) {
        fprintf(stderr, "volsched locality-gen: %s\n",
                next < argc ? "unexpected argument" : "--command is required");
        usage(stderr);
        return VS_EXIT_USAGE;
    }
    struct vs_log lg;
    vs_log_init(&lg, VS_LOG_INFO, stderr, "locality-gen");
    struct vs_project_config cfg;
    if (!vs_cli_load_project("locality-gen", project, &lg, &cfg))
        return VS_EXIT_USAGE;
    if (vs_strlcpy(cfg.locality_gen_command, command, sizeof(cfg.locality_gen_command)) != 0) {
        fprintf(stderr, "volsched locality-gen: --command too long\n");
        return VS_EXIT_USAGE;
    }
    if (timeout >= 0)
        cfg.daemon_command_timeout = (int)timeout;
    return vs_cli_run_daemons(&cfg, VS_DAEMON_LOCALITY_GEN, (int)interval, once, &lg);
}
