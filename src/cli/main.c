/*
 * volsched: one executable, many subcommands. This file only dispatches;
 * each subcommand is in its own cmd_<name>.c.
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "volsched/version.h"

struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    {"version", vs_cmd_version, "print the version"},
    {"init", vs_cmd_init, "create a project directory"},
    {"app", vs_cmd_app, "register an app version (app add)"},
    {"user", vs_cmd_user, "user accounts and submit rights (user add|set|show)"},
    {"team", vs_cmd_team, "create a team (team add)"},
    {"create_work", vs_cmd_create_work, "submit jobs (workunits)"},
    {"release", vs_cmd_release, "release jobs held by create_work --no_transition"},
    {"workgen", vs_cmd_workgen, "keep a cushion of unsent jobs (work generator)"},
    {"wu_check", vs_cmd_wu_check, "check (and repair) jobs' input files"},
    {"keygen", vs_cmd_keygen, "write BOINC code-signing and upload key pairs"},
    {"sim", vs_cmd_sim, "simulate a scheduling scenario and print its figures of merit"},
    {"popsim", vs_cmd_popsim, "simulate a project against a population of volunteer hosts"},
    {"explain", vs_cmd_explain, "why a client runs and fetches what it does"},
    {"serve", vs_cmd_serve, "serve a project (master page, scheduler, downloads)"},
    {"status", vs_cmd_status, "server up/down, counts of jobs, results, hosts, daemons"},
    {"stop", vs_cmd_stop, "take the project down for maintenance (stop_sched, stop_daemons)"},
    {"start", vs_cmd_start, "bring the project back (and start serve if it is not running)"},
    {"job", vs_cmd_job, "show or cancel workunits (job show|cancel)"},
    {"result", vs_cmd_result, "show a result (result show)"},
    {"host", vs_cmd_host, "show or ban a host (host show|ban)"},
    {"purge", vs_cmd_purge, "archive and delete finished work (BOINC's db_purge)"},
    {"db_dump", vs_cmd_db_dump, "write BOINC's statistics exports (stats/)"},
    {"update_stats", vs_cmd_update_stats, "decay the recent average credit to now"},
    {"store", vs_cmd_store, "copy a store to another backend (store copy --from URL --to URL)"},
    {"locality-gen", vs_cmd_locality_gen, "locality scheduling's on-demand work generator"},
    {"locality-ws", vs_cmd_locality_ws, "locality scheduling's working-set manager"},
    {"batch", vs_cmd_batch, "submit and follow batches on a project over HTTP (remote submission)"},
    {"client", vs_cmd_client, "the volunteer's client: attach, run, status, explain, detach"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched COMMAND [ARGS]\n"
               "\n"
               "volsched is a volunteer-computing job scheduler compatible with BOINC.\n"
               "\n"
               "Commands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nRun `volsched COMMAND --help` for the options of a command.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return VS_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return VS_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0)
        name = "version";
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (strcmp(name, commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    }
    fprintf(stderr, "volsched: unknown command '%s'\n\n", name);
    usage(stderr);
    return VS_EXIT_USAGE;
}
