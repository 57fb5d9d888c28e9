/* volsched user add: create a user account; prints its authenticator. */
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "cmd.h"
#include "volsched/store.h"
#include "volsched/str.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched user add [--project DIR] --name NAME [--team TEAM]\n"
               "                         [--email ADDR] [--json]\n"
               "\n"
               "Creates a user and prints only its authenticator (the account key a\n"
               "BOINC client attaches with). TEAM is a team name or id.\n"
               "\n"
               "Options:\n"
               "  --project DIR  project directory (default: current directory)\n"
               "  --json         print {\"id\": N, \"authenticator\": \"...\"} instead\n");
}

/* Finds a team by name, or by id when the text is a number no team is named. */
static int find_team(struct vs_store *s, const char *t, struct vs_team *out)
{
    int rc = vs_store_team_by_name(s, t, out);
    int64_t id;
    if (rc == VS_ENOTFOUND && vs_parse_int64(t, &id) == 0 && id > 0)
        rc = vs_store_team_get(s, id, out);
    return rc;
}

static int user_add(int argc, char **argv)
{
    const char *project = NULL, *name = NULL, *team = NULL, *email = "";
    bool json = false;
    const struct vs_cli_opt opts[] = {
        {.name = "project", .str = &project}, {.name = "name", .str = &name},
        {.name = "team", .str = &team},       {.name = "email", .str = &email},
        {.name = "json", .flag = &json},
    };
    int next;
    int st =
        vs_cli_getopt("user add", argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage, &next);
    if (st != VS_CLI_GO)
        return st;
    if (!name || !*name || next != argc) {
        fprintf(stderr, "volsched user add: --name is required (and nothing else)\n");
        usage(stderr);
        return VS_EXIT_USAGE;
    }
    struct vs_user u;
    memset(&u, 0, sizeof(u));
    if (vs_strlcpy(u.name, name, sizeof(u.name)) ||
        vs_strlcpy(u.email_addr, email, sizeof(u.email_addr))) {
        fprintf(stderr, "volsched user add: name or e-mail too long\n");
        return VS_EXIT_USAGE;
    }
    struct vs_project_config cfg;
    struct vs_store *s;
    if (!vs_cli_open_project("user add", project, &cfg, &s))
        return VS_EXIT_FAIL;
    int status = VS_EXIT_OK;
    if (team) {
        struct vs_team t;
        int rc = find_team(s, team, &t);
        if (rc) {
            fprintf(stderr, "volsched user add: no team '%s'%s\n", team,
                    rc == VS_ENOTFOUND ? " (create it with `volsched team add`)" : "");
            vs_store_close(s);
            return vs_cli_exit_for(rc);
        }
        u.teamid = t.id;
    }
    int rc = vs_store_user_add(s, &u);
    if (rc == VS_EEXISTS) {
        fprintf(stderr, "volsched user add: a user named '%s'%s already exists\n", name,
                email[0] ? " (or with that e-mail)" : "");
        status = VS_EXIT_USAGE;
    } else if (rc) {
        fprintf(stderr, "volsched user add: store: %s\n", vs_strerror(rc));
        status = VS_EXIT_FAIL;
    } else if (json) {
        vs_cli_print_id_json(u.id, "authenticator", u.authenticator);
    } else {
        printf("%s\n", u.authenticator);
    }
    vs_store_close(s);
    return status;
}

int vs_cmd_user(int argc, char **argv)
{
    return vs_cli_add_group("user", argc, argv, usage, user_add);
}
