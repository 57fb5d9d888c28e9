/* volsched team add: create a team; prints its id. */
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
    static const struct option opts[] = {
        {"project", required_argument, NULL, 'p'}, {"name", required_argument, NULL, 'n'},
        {"founder", required_argument, NULL, 'f'}, {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    const char *project = NULL, *name = NULL, *founder = NULL;
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
        case 'f':
            founder = optarg;
            break;
        case 'j':
            json = true;
            break;
        case 'h':
            usage(stdout);
            return VS_EXIT_OK;
        default:
            fprintf(stderr, "volsched team add: unknown or incomplete option '%s'\n",
                    argv[optind - 1]);
            usage(stderr);
            return VS_EXIT_USAGE;
        }
    }
    if (!name || !*name || optind != argc) {
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
        struct vs_buf b;
        vs_buf_init(&b, 4096);
        struct vs_json j;
        vs_json_init(&j, &b, false);
        vs_json_obj_begin(&j);
        vs_json_key(&j, "id");
        vs_json_int(&j, t.id);
        vs_json_key(&j, "name");
        vs_json_str(&j, t.name);
        vs_json_obj_end(&j);
        printf("%s\n", vs_buf_str(&b));
        vs_buf_cleanup(&b);
    } else {
        printf("%lld\n", (long long)t.id);
    }
    vs_store_close(s);
    return status;
}

int vs_cmd_team(int argc, char **argv)
{
    if (argc < 2 || vs_cli_is_help(argv[1])) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? VS_EXIT_USAGE : VS_EXIT_OK;
    }
    if (strcmp(argv[1], "add") == 0)
        return team_add(argc - 1, argv + 1);
    fprintf(stderr, "volsched team: unknown subcommand '%s' (known: add)\n", argv[1]);
    return VS_EXIT_USAGE;
}
