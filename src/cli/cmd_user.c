/*
 * volsched user add | set | show: accounts, and the right to submit jobs
 * remotely (BOINC's user_submit: all apps or listed ones, and a quota that
 * sets a submitter's share of the project's throughput).
 */
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "cmd.h"
#include "volsched/store.h"
#include "volsched/store_submit.h"
#include "volsched/str.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: volsched user add [--project DIR] --name NAME [--team TEAM]\n"
            "                         [--email ADDR] [--submit [APP,...]] [--quota X] [--json]\n"
            "       volsched user set [--project DIR] --name NAME\n"
            "                         (--submit [APP,...] [--quota X] | --quota X | --no-submit)\n"
            "       volsched user show [--project DIR] --name NAME [--json]\n"
            "\n"
            "add creates a user and prints only its authenticator (the account key a\n"
            "BOINC client attaches with, and a scientist submits jobs with). TEAM is a\n"
            "team name or id.\n"
            "\n"
            "--submit lets the user submit jobs remotely (submit_rpc_handler.php,\n"
            "`volsched batch`): of every app, or only of the apps listed (comma-separated).\n"
            "--quota X (> 0, default 1) is the user's share weight: when several\n"
            "submitters' jobs wait, hosts get their jobs in proportion to the quotas.\n"
            "--no-submit withdraws the right. show prints the account and its rights.\n"
            "\n"
            "Options:\n"
            "  --project DIR  project directory (default: current directory)\n"
            "  --json         add: {\"id\": N, \"authenticator\": \"...\"}; show: the record\n");
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

/* --submit takes an optional operand (the app list): it is taken out of
 * argv here, before the options are read. */
struct submit_arg {
    bool given;
    const char *apps; /* NULL: every app */
};

static int take_submit(int *argc, char **argv, struct submit_arg *out)
{
    int j = 1;
    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], "--submit") == 0 || strcmp(argv[i], "-submit") == 0) {
            if (out->given)
                return -1;
            out->given = true;
            if (i + 1 < *argc && argv[i + 1][0] != '-')
                out->apps = argv[++i];
            continue;
        }
        argv[j++] = argv[i];
    }
    *argc = j;
    return 0;
}

/* Resolves "a,b,c" into app ids; prints the unknown app's name. */
static int app_ids(const char *cmd, struct vs_store *s, const char *list, int64_t *ids,
                   size_t *out_n)
{
    size_t n = 0;
    char buf[4096];
    if (vs_strlcpy(buf, list, sizeof(buf)) != 0) {
        fprintf(stderr, "volsched %s: --submit: app list too long\n", cmd);
        return VS_EXIT_USAGE;
    }
    for (char *p = buf; p && *p;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        if (*p) {
            struct vs_app app;
            if (n >= VS_SUBMIT_MAX_APPS) {
                fprintf(stderr, "volsched %s: --submit: at most %d apps\n", cmd,
                        VS_SUBMIT_MAX_APPS);
                return VS_EXIT_USAGE;
            }
            if (vs_store_app_by_name(s, p, &app) != 0) {
                fprintf(stderr, "volsched %s: --submit: no app named '%s'\n", cmd, p);
                return VS_EXIT_USAGE;
            }
            ids[n++] = app.id;
        }
        p = comma ? comma + 1 : NULL;
    }
    *out_n = n;
    return VS_EXIT_OK;
}

/* Applies --submit / --quota / --no-submit to user id (inside a transaction). */
static int apply_submit(const char *cmd, struct vs_store *s, int64_t user_id,
                        const struct submit_arg *sa, double quota, bool no_submit)
{
    if (no_submit) {
        int rc = vs_store_user_submit_drop(s, user_id);
        if (rc)
            fprintf(stderr, "volsched %s: store: %s\n", cmd, vs_strerror(rc));
        return rc ? VS_EXIT_FAIL : VS_EXIT_OK;
    }
    struct vs_user_submit us = {.user_id = user_id, .quota = 1};
    int64_t ids[VS_SUBMIT_MAX_APPS];
    size_t n = 0;
    int rc = vs_store_user_submit_get(s, user_id, &us, ids, VS_SUBMIT_MAX_APPS, &n);
    if (rc == VS_ENOTFOUND && !sa->given) {
        fprintf(stderr, "volsched %s: the user may not submit; give --submit with --quota\n", cmd);
        return VS_EXIT_USAGE;
    }
    if (rc && rc != VS_ENOTFOUND) {
        fprintf(stderr, "volsched %s: store: %s\n", cmd, vs_strerror(rc));
        return VS_EXIT_FAIL;
    }
    if (rc == VS_ENOTFOUND) {
        memset(&us, 0, sizeof(us));
        us.user_id = user_id;
        us.quota = 1;
    }
    if (sa->given) {
        us.submit_all = sa->apps == NULL;
        n = 0;
        if (sa->apps) {
            int st = app_ids(cmd, s, sa->apps, ids, &n);
            if (st != VS_EXIT_OK)
                return st;
        }
    }
    if (quota > 0)
        us.quota = quota;
    rc = vs_store_user_submit_set(s, &us, ids, n);
    if (rc)
        fprintf(stderr, "volsched %s: store: %s\n", cmd, vs_strerror(rc));
    return rc ? VS_EXIT_FAIL : VS_EXIT_OK;
}

static bool read_quota(const char *cmd, const char *q, double *out)
{
    *out = 0;
    if (!q)
        return true;
    if (!vs_cli_double(cmd, "quota", q, 0, out))
        return false;
    if (*out <= 0) {
        fprintf(stderr, "volsched %s: --quota must be greater than 0\n", cmd);
        return false;
    }
    return true;
}

static int user_add(int argc, char **argv)
{
    const char *project = NULL, *name = NULL, *team = NULL, *email = "", *quota_s = NULL;
    bool json = false;
    struct submit_arg sa = {0};
    if (take_submit(&argc, argv, &sa) != 0) {
        fprintf(stderr, "volsched user add: --submit given twice\n");
        return VS_EXIT_USAGE;
    }
    const struct vs_cli_opt opts[] = {
        {.name = "project", .str = &project}, {.name = "name", .str = &name},
        {.name = "team", .str = &team},       {.name = "email", .str = &email},
        {.name = "json", .flag = &json},      {.name = "quota", .str = &quota_s},
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
    double quota = 0;
    if (!read_quota("user add", quota_s, &quota))
        return VS_EXIT_USAGE;
    if (quota_s && !sa.given) {
        fprintf(stderr, "volsched user add: --quota goes with --submit\n");
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
    int rc = vs_store_begin(s);
    if (rc == 0)
        rc = vs_store_user_add(s, &u);
    if (rc == VS_EEXISTS) {
        fprintf(stderr, "volsched user add: a user named '%s'%s already exists\n", name,
                email[0] ? " (or with that e-mail)" : "");
        status = VS_EXIT_USAGE;
    } else if (rc) {
        fprintf(stderr, "volsched user add: store: %s\n", vs_strerror(rc));
        status = VS_EXIT_FAIL;
    } else if (sa.given) {
        status = apply_submit("user add", s, u.id, &sa, quota, false);
    }
    if (rc == 0 && status == VS_EXIT_OK && (rc = vs_store_commit(s)) != 0) {
        fprintf(stderr, "volsched user add: store: %s\n", vs_strerror(rc));
        status = VS_EXIT_FAIL;
    } else if (rc == 0 && status != VS_EXIT_OK) {
        (void)vs_store_rollback(s);
    } else if (rc) {
        (void)vs_store_rollback(s);
    }
    if (status == VS_EXIT_OK && json)
        vs_cli_print_id_json(u.id, "authenticator", u.authenticator);
    else if (status == VS_EXIT_OK)
        printf("%s\n", u.authenticator);
    vs_store_close(s);
    return status;
}

static int user_set(int argc, char **argv)
{
    const char *project = NULL, *name = NULL, *quota_s = NULL;
    bool no_submit = false;
    struct submit_arg sa = {0};
    if (take_submit(&argc, argv, &sa) != 0) {
        fprintf(stderr, "volsched user set: --submit given twice\n");
        return VS_EXIT_USAGE;
    }
    const struct vs_cli_opt opts[] = {
        {.name = "project", .str = &project},
        {.name = "name", .str = &name},
        {.name = "quota", .str = &quota_s},
        {.name = "no-submit", .flag = &no_submit},
    };
    int next;
    int st =
        vs_cli_getopt("user set", argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage, &next);
    if (st != VS_CLI_GO)
        return st;
    if (!name || !*name || next != argc) {
        fprintf(stderr, "volsched user set: --name is required (and nothing else)\n");
        return VS_EXIT_USAGE;
    }
    if (no_submit && (sa.given || quota_s)) {
        fprintf(stderr, "volsched user set: --no-submit goes alone\n");
        return VS_EXIT_USAGE;
    }
    if (!no_submit && !sa.given && !quota_s) {
        fprintf(stderr, "volsched user set: nothing to set (--submit, --quota or --no-submit)\n");
        return VS_EXIT_USAGE;
    }
    double quota = 0;
    if (!read_quota("user set", quota_s, &quota))
        return VS_EXIT_USAGE;
    struct vs_project_config cfg;
    struct vs_store *s;
    if (!vs_cli_open_project("user set", project, &cfg, &s))
        return VS_EXIT_FAIL;
    struct vs_user u;
    memset(&u, 0, sizeof(u));
    int rc = vs_store_user_by_name(s, name, &u);
    int status;
    if (rc) {
        fprintf(stderr, "volsched user set: no user named '%s'\n", name);
        status = vs_cli_exit_for(rc);
    } else if ((rc = vs_store_begin(s)) != 0) {
        fprintf(stderr, "volsched user set: store: %s\n", vs_strerror(rc));
        status = VS_EXIT_FAIL;
    } else {
        status = apply_submit("user set", s, u.id, &sa, quota, no_submit);
        if (status == VS_EXIT_OK && vs_store_commit(s) != 0)
            status = VS_EXIT_FAIL;
        else if (status != VS_EXIT_OK)
            (void)vs_store_rollback(s);
        if (status == VS_EXIT_OK)
            printf("user %s: %s\n", name,
                   no_submit ? "may not submit jobs" : "submit rights and quota set");
    }
    vs_user_cleanup(&u);
    vs_store_close(s);
    return status;
}

static int user_show(int argc, char **argv)
{
    const char *project = NULL, *name = NULL;
    bool json = false;
    const struct vs_cli_opt opts[] = {
        {.name = "project", .str = &project},
        {.name = "name", .str = &name},
        {.name = "json", .flag = &json},
    };
    int next;
    int st =
        vs_cli_getopt("user show", argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage, &next);
    if (st != VS_CLI_GO)
        return st;
    if (!name || !*name || next != argc) {
        fprintf(stderr, "volsched user show: --name is required (and nothing else)\n");
        return VS_EXIT_USAGE;
    }
    struct vs_project_config cfg;
    struct vs_store *s;
    if (!vs_cli_open_project("user show", project, &cfg, &s))
        return VS_EXIT_FAIL;
    struct vs_user u;
    memset(&u, 0, sizeof(u));
    int rc = vs_store_user_by_name(s, name, &u);
    if (rc) {
        fprintf(stderr, "volsched user show: no user named '%s'\n", name);
        vs_store_close(s);
        return vs_cli_exit_for(rc);
    }
    struct vs_user_submit us;
    int64_t ids[VS_SUBMIT_MAX_APPS];
    size_t n = 0;
    rc = vs_store_user_submit_get(s, u.id, &us, ids, VS_SUBMIT_MAX_APPS, &n);
    bool may = rc == 0;
    char apps[4096] = "";
    size_t used = 0;
    for (size_t i = 0; may && i < n; i++) {
        struct vs_app app;
        if (vs_store_app_get(s, ids[i], &app) == 0) {
            int m = snprintf(apps + used, sizeof(apps) - used, "%s%s", used ? "," : "", app.name);
            if (m > 0 && (size_t)m < sizeof(apps) - used)
                used += (size_t)m;
        }
    }
    if (json) {
        printf("{\"id\": %lld, \"name\": \"%s\", \"teamid\": %lld, \"submit\": %s", (long long)u.id,
               u.name, (long long)u.teamid, may ? "true" : "false");
        if (may)
            printf(", \"submit_apps\": %s%s%s, \"quota\": %g", us.submit_all ? "" : "\"",
                   us.submit_all ? "\"all\"" : apps, us.submit_all ? "" : "\"", us.quota);
        printf("}\n");
    } else {
        printf("user %lld: %s\n", (long long)u.id, u.name);
        printf("  team:     %lld\n", (long long)u.teamid);
        if (may)
            printf("  submit:   %s\n  quota:    %g\n", us.submit_all ? "all apps" : apps, us.quota);
        else
            printf("  submit:   no\n");
    }
    vs_user_cleanup(&u);
    vs_store_close(s);
    return rc == 0 || rc == VS_ENOTFOUND ? VS_EXIT_OK : VS_EXIT_FAIL;
}

int vs_cmd_user(int argc, char **argv)
{
    if (argc < 2 || vs_cli_is_help(argv[1])) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? VS_EXIT_USAGE : VS_EXIT_OK;
    }
    if (strcmp(argv[1], "add") == 0)
        return user_add(argc - 1, argv + 1);
    if (strcmp(argv[1], "set") == 0)
        return user_set(argc - 1, argv + 1);
    if (strcmp(argv[1], "show") == 0)
        return user_show(argc - 1, argv + 1);
    fprintf(stderr, "volsched user: unknown subcommand '%s' (known: add, set, show)\n", argv[1]);
    return VS_EXIT_USAGE;
}
