/* volsched team add: create a team; prints its id. */
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "cmd.h"
#include "volsched/store.h"
#include "volsched/str.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched team add [--project DIR] --name NAME [--founder USER] [--json]\n"
               "\n"
               "Creates a team and prints only its id (use it with `user add --team`,\n"
               "`create_work --target_team` or `--broadcast_team`). USER is a user name.\n"
               "\n"
               "Options:\n"
               "  --project DIR  project directory (default: current directory)\n"
               "  --json         print {\"id\": N, \"name\": \"...\"} instead\n");
}

static int team_add(int argc, char **argv)
{
    const char *project = NULL, *name = NULL, *founder = NULL;
    bool json = false;
    const struct vs_cli_opt opts[] = {
        {.name = "project", .str = &project},
        {.name = "name", .str = &name},
        {.name = "founder", .str = &founder},
        {.name = "json", .flag = &json},
    };
    int next;
    int st =
        vs_cli_getopt("team add", argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage, &next);
    if (st != VS_CLI_GO)
        return st;
    if (!name || !*name || next != argc) {
        fprintf(stderr, "volsched team add: --name is required (and nothing else)\n");
        usage(stderr);
        return VS_EXIT_USAGE;
    }
    struct vs_team t;
    memset(&t, 0, sizeof(t));
    if (vs_strlcpy(t.name, name, sizeof(t.name))) {
        fprintf(stderr, "volsched team add: name too long\n");
        return VS_EXIT_USAGE;
    }
    struct vs_project_config cfg;
    struct vs_store *s;
    if (!vs_cli_open_project("team add", project, &cfg, &s))
        return VS_EXIT_FAIL;
    int rc = 0;
    if (founder) {
        struct vs_user u;
        memset(&u, 0, sizeof(u));
        rc = vs_store_user_by_name(s, founder, &u);
        vs_user_cleanup(&u);
        if (rc) {
            fprintf(stderr, "volsched team add: no user named '%s'\n", founder);
            vs_store_close(s);
            return vs_cli_exit_for(rc);
        }
        t.userid = u.id;
    }
    rc = vs_store_team_add(s, &t);
    int status = VS_EXIT_OK;
    if (rc == VS_EEXISTS) {
        fprintf(stderr, "volsched team add: a team named '%s' already exists\n", name);
        status = VS_EXIT_USAGE;
    } else if (rc) {
        fprintf(stderr, "volsched team add: store: %s\n", vs_strerror(rc));
        status = VS_EXIT_FAIL;
    } else if (json) {
        vs_cli_print_id_json(t.id, "name", t.name);
    } else {
        printf("%lld\n", (long long)t.id);
    }
    vs_store_close(s);
    return status;
}

int vs_cmd_team(int argc, char **argv)
{
    return vs_cli_add_group("team", argc, argv, usage, team_add);
}
