/* volsched user add: create a user account; prints its authenticator. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "cmd.h"
#include "store/store.h"
#include "volsched/buf.h"
#include "volsched/json.h"
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
    static const struct option opts[] = {
        {"project", required_argument, NULL, 'p'},
        {"name", required_argument, NULL, 'n'},
        {"team", required_argument, NULL, 't'},
        {"email", required_argument, NULL, 'e'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *project = NULL, *name = NULL, *team = NULL, *email = "";
    bool json = false;
    optind = 0;
    opterr = 0;
    int ch;
    while ((ch = getopt_long_only(argc, argv, "h", opts, NULL)) != -1) {
        switch (ch) {
        case 'p':
            project = optarg;
            break;
        case 'n':
            name = optarg;
            break;
        case 't':
            team = optarg;
            break;
        case 'e':
            email = optarg;
            break;
        case 'j':
            json = true;
            break;
        case 'h':
            usage(stdout);
            return VS_EXIT_OK;
        default:
            fprintf(stderr, "volsched user add: unknown or incomplete option '%s'\n",
                    argv[optind - 1]);
            usage(stderr);
            return VS_EXIT_USAGE;
        }
    }
    if (!name || !*name || optind != argc) {
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
        struct vs_buf b;
        vs_buf_init(&b, 4096);
        struct vs_json j;
        vs_json_init(&j, &b, false);
        vs_json_obj_begin(&j);
        vs_json_key(&j, "id");
        vs_json_int(&j, u.id);
        vs_json_key(&j, "authenticator");
        vs_json_str(&j, u.authenticator);
        vs_json_obj_end(&j);
        printf("%s\n", vs_buf_str(&b));
        vs_buf_cleanup(&b);
    } else {
        printf("%s\n", u.authenticator);
    }
    vs_store_close(s);
    return status;
}

int vs_cmd_user(int argc, char **argv)
{
    if (argc < 2 || vs_cli_is_help(argv[1])) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? VS_EXIT_USAGE : VS_EXIT_OK;
    }
    if (strcmp(argv[1], "add") == 0)
        return user_add(argc - 1, argv + 1);
    fprintf(stderr, "volsched user: unknown subcommand '%s' (known: add)\n", argv[1]);
    return VS_EXIT_USAGE;
}
