/*
 * volsched create_work: BOINC's create_work tool. Parses the flags (each may
 * be written -x or --x, as BOINC allows), reads --stdin job lines, and calls
 * vs_create_work(), which writes everything or nothing. Then one transitioner
 * pass gives the new normal workunits their results.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli_util.h"
#include "cmd.h"
#include "server/create_work.h"
#include "server/transitioner.h"
#include "store/store.h"
#include "volsched/alloc.h"
#include "volsched/config.h"
#include "volsched/str.h"

#define MAX_STDIN_JOBS  1000000
#define MAX_LINE        65536
#define MAX_LINE_TOKENS 4096

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched create_work [--project DIR] --appname APP [flags] INPUT...\n"
               "       volsched create_work [--project DIR] --appname APP [flags] --stdin\n"
               "\n"
               "Creates workunits (jobs) of APP. Each INPUT that is the path of an existing\n"
               "file is staged into the download hierarchy (md5 and size recorded); a bare\n"
               "name already staged there is used as is. Inputs fill the input template's\n"
               "<file_info>s in order. Prints the name of each workunit created. If\n"
               "anything is wrong nothing is written (exit status 2, or 1 on a store error).\n"
               "\n"
               "Job:\n"
               "  --wu_name NAME            workunit name (default APP_PID_TIME_N)\n"
               "  --wu_template FILE        input template (default templates/APP_in)\n"
               "  --result_template FILE    output template, inside the project\n"
               "                            (default templates/APP_out)\n"
               "  --app_version_num N       only version N of the app may run it\n"
               "  --command_line \"ARGS\"     command line of the program\n"
               "  --priority N              higher is sent first\n"
               "  --batch N  --keywords 'K1 K2'  --credit X  --hr_class N\n"
               "Resources (defaults as BOINC's):\n"
               "  --rsc_fpops_est X (3.6e12)  --rsc_fpops_bound X (8.64e13)\n"
               "  --rsc_memory_bound X (5e8)  --rsc_disk_bound X (1e9)\n"
               "  --delay_bound SECS (604800)\n"
               "Replication (defaults 1):\n"
               "  --min_quorum N  --target_nresults N  --max_error_results N\n"
               "  --max_total_results N  --max_success_results N\n"
               "Assigned work (config.xml <enable_assignment>/<enable_assignment_multi>):\n"
               "  --target_host ID | --target_user ID | --target_team ID\n"
               "                            targeted: retried within the set, validated\n"
               "  --broadcast | --broadcast_user ID | --broadcast_team ID\n"
               "                            one instance per host, never retried, not\n"
               "                            validated or assimilated\n"
               "Batch:\n"
               "  --stdin                   one job per line: [--wu_name N] [--wu_template F]\n"
               "                            [--result_template F] [--command_line \"A\"]\n"
               "                            [--target_host ID] [--target_user ID]\n"
               "                            [--target_team ID] [--priority N] INPUT...\n"
               "                            (names default to WU_NAME_LINENO); all jobs are\n"
               "                            created in one transaction\n"
               "Other:\n"
               "  --project DIR             project directory (default: current directory)\n"
               "  --no_transition           do not run the transitioner now (the server's\n"
               "                            transitioner creates the results later)\n");
}

enum {
    O_PROJECT = 1000,
    O_APPNAME,
    O_WU_NAME,
    O_WU_TEMPLATE,
    O_RESULT_TEMPLATE,
    O_AVNUM,
    O_COMMAND_LINE,
    O_PRIORITY,
    O_BATCH,
    O_KEYWORDS,
    O_CREDIT,
    O_HR_CLASS,
    O_FPOPS_EST,
    O_FPOPS_BOUND,
    O_MEM_BOUND,
    O_DISK_BOUND,
    O_DELAY_BOUND,
    O_MIN_QUORUM,
    O_TARGET_NRESULTS,
    O_MAX_ERROR,
    O_MAX_TOTAL,
    O_MAX_SUCCESS,
    O_TARGET_HOST,
    O_TARGET_USER,
    O_TARGET_TEAM,
    O_BROADCAST,
    O_BROADCAST_USER,
    O_BROADCAST_TEAM,
    O_STDIN,
    O_NO_TRANSITION,
    O_HELP,
};

static const struct option opts[] = {
    {"project", required_argument, NULL, O_PROJECT},
    {"appname", required_argument, NULL, O_APPNAME},
    {"wu_name", required_argument, NULL, O_WU_NAME},
    {"wu_template", required_argument, NULL, O_WU_TEMPLATE},
    {"result_template", required_argument, NULL, O_RESULT_TEMPLATE},
    {"app_version_num", required_argument, NULL, O_AVNUM},
    {"command_line", required_argument, NULL, O_COMMAND_LINE},
    {"priority", required_argument, NULL, O_PRIORITY},
    {"batch", required_argument, NULL, O_BATCH},
    {"keywords", required_argument, NULL, O_KEYWORDS},
    {"credit", required_argument, NULL, O_CREDIT},
    {"hr_class", required_argument, NULL, O_HR_CLASS},
    {"rsc_fpops_est", required_argument, NULL, O_FPOPS_EST},
    {"rsc_fpops_bound", required_argument, NULL, O_FPOPS_BOUND},
    {"rsc_memory_bound", required_argument, NULL, O_MEM_BOUND},
    {"rsc_disk_bound", required_argument, NULL, O_DISK_BOUND},
    {"delay_bound", required_argument, NULL, O_DELAY_BOUND},
    {"min_quorum", required_argument, NULL, O_MIN_QUORUM},
    {"target_nresults", required_argument, NULL, O_TARGET_NRESULTS},
    {"max_error_results", required_argument, NULL, O_MAX_ERROR},
    {"max_total_results", required_argument, NULL, O_MAX_TOTAL},
    {"max_success_results", required_argument, NULL, O_MAX_SUCCESS},
    {"target_host", required_argument, NULL, O_TARGET_HOST},
    {"target_user", required_argument, NULL, O_TARGET_USER},
    {"target_team", required_argument, NULL, O_TARGET_TEAM},
    {"broadcast", no_argument, NULL, O_BROADCAST},
    {"broadcast_user", required_argument, NULL, O_BROADCAST_USER},
    {"broadcast_team", required_argument, NULL, O_BROADCAST_TEAM},
    {"stdin", no_argument, NULL, O_STDIN},
    {"no_transition", no_argument, NULL, O_NO_TRANSITION},
    {"help", no_argument, NULL, O_HELP},
    {NULL, 0, NULL, 0},
};

#define INT_MAX_ARG 2000000000LL

static bool opt_int(const char *name, const char *s, int64_t min, struct vs_cw_opt *o)
{
    int64_t v;
    if (!vs_cli_int("create_work", name, s, min, INT_MAX_ARG, &v))
        return false;
    o->set = true;
    o->v = (double)v;
    return true;
}

static bool opt_dbl(const char *name, const char *s, struct vs_cw_opt *o)
{
    double v;
    if (!vs_cli_double("create_work", name, s, 0, &v))
        return false;
    o->set = true;
    o->v = v;
    return true;
}

static bool id_arg(const char *name, const char *s, int64_t *out)
{
    /* BOINC-COMPAT: an id of 0 is rejected. */
    return vs_cli_int("create_work", name, s, 1, INT64_C(1) << 53, out);
}

/* Splits a --stdin line into tokens (blanks separate; "double quotes" group;
 * backslash escapes the next character inside quotes). Tokens live in arena. */
static int tokenize(const char *line, struct vs_arena *arena, const char **tok, size_t max,
                    size_t *out_n)
{
    size_t n = 0;
    const char *p = line;
    char *buf = vs_arena_alloc(arena, strlen(line) + 1);
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
            p++;
        if (!*p)
            break;
        if (n == max)
            return VS_ELIMIT;
        char *start = buf;
        while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') {
            if (*p == '"') {
                p++;
                while (*p && *p != '"') {
                    if (*p == '\\' && p[1])
                        p++;
                    *buf++ = *p++;
                }
                if (*p != '"')
                    return VS_EPARSE;
                p++;
            } else {
                *buf++ = *p++;
            }
        }
        *buf++ = '\0';
        tok[n++] = start;
    }
    *out_n = n;
    return 0;
}

/* Parses one --stdin line into job j (strings in arena). */
static bool parse_line(const char *line, size_t lineno, struct vs_arena *arena, struct vs_cw_job *j)
{
    const char **tok = vs_xcalloc(MAX_LINE_TOKENS, sizeof(*tok));
    size_t n = 0;
    bool ok = true;
    int rc = tokenize(line, arena, tok, MAX_LINE_TOKENS, &n);
    if (rc) {
        fprintf(stderr, "volsched create_work: stdin line %zu: %s\n", lineno,
                rc == VS_EPARSE ? "unterminated quote" : "too many words");
        ok = false;
    }
    const char **inputs = vs_arena_alloc(arena, (n ? n : 1) * sizeof(*inputs));
    size_t ninputs = 0;
    for (size_t i = 0; ok && i < n; i++) {
        const char *t = tok[i];
        const char *o = t[0] == '-' ? (t[1] == '-' ? t + 2 : t + 1) : NULL;
        if (!o) {
            inputs[ninputs++] = t;
            continue;
        }
        if (i + 1 >= n) {
            fprintf(stderr, "volsched create_work: stdin line %zu: %s needs a value\n", lineno, t);
            ok = false;
            break;
        }
        const char *v = tok[++i];
        if (strcmp(o, "wu_name") == 0)
            j->wu_name = v;
        else if (strcmp(o, "wu_template") == 0)
            j->wu_template = v;
        else if (strcmp(o, "result_template") == 0)
            j->result_template = v;
        else if (strcmp(o, "command_line") == 0)
            j->command_line = v;
        else if (strcmp(o, "target_host") == 0)
            ok = id_arg("target_host", v, &j->target_host);
        else if (strcmp(o, "target_user") == 0)
            ok = id_arg("target_user", v, &j->target_user);
        else if (strcmp(o, "target_team") == 0)
            ok = id_arg("target_team", v, &j->target_team);
        else if (strcmp(o, "priority") == 0)
            ok = opt_int("priority", v, -INT_MAX_ARG, &j->priority);
        else {
            fprintf(stderr, "volsched create_work: stdin line %zu: unknown option %s\n", lineno, t);
            ok = false;
        }
        if (!ok)
            fprintf(stderr, "volsched create_work: (stdin line %zu)\n", lineno);
    }
    j->inputs = inputs;
    j->ninputs = ninputs;
    vs_free(tok);
    return ok;
}

int vs_cmd_create_work(int argc, char **argv)
{
    struct vs_cw_params p;
    memset(&p, 0, sizeof(p));
    const char *project = NULL, *wu_name = NULL, *wu_template = NULL, *result_template = NULL;
    bool use_stdin = false, transition = true;
    int64_t v;
    optind = 0;
    opterr = 0;
    int ch;
    while ((ch = getopt_long_only(argc, argv, "h", opts, NULL)) != -1) {
        bool ok = true;
        switch (ch) {
        case O_PROJECT:
            project = optarg;
            break;
        case O_APPNAME:
            p.appname = optarg;
            break;
        case O_WU_NAME:
            wu_name = optarg;
            break;
        case O_WU_TEMPLATE:
            wu_template = optarg;
            break;
        case O_RESULT_TEMPLATE:
            result_template = optarg;
            break;
        case O_AVNUM:
            ok = vs_cli_int("create_work", "app_version_num", optarg, 1, INT_MAX_ARG, &v);
            p.app_version_num = (int)v;
            break;
        case O_COMMAND_LINE:
            p.command_line = optarg;
            break;
        case O_PRIORITY:
            ok = opt_int("priority", optarg, -INT_MAX_ARG, &p.priority);
            break;
        case O_BATCH:
            ok = opt_int("batch", optarg, 0, &p.batch);
            break;
        case O_KEYWORDS:
            p.keywords = optarg;
            break;
        case O_CREDIT:
            ok = opt_dbl("credit", optarg, &p.credit);
            break;
        case O_HR_CLASS:
            ok = opt_int("hr_class", optarg, 0, &p.hr_class);
            break;
        case O_FPOPS_EST:
            ok = opt_dbl("rsc_fpops_est", optarg, &p.rsc_fpops_est);
            break;
        case O_FPOPS_BOUND:
            ok = opt_dbl("rsc_fpops_bound", optarg, &p.rsc_fpops_bound);
            break;
        case O_MEM_BOUND:
            ok = opt_dbl("rsc_memory_bound", optarg, &p.rsc_memory_bound);
            break;
        case O_DISK_BOUND:
            ok = opt_dbl("rsc_disk_bound", optarg, &p.rsc_disk_bound);
            break;
        case O_DELAY_BOUND:
            ok = opt_int("delay_bound", optarg, 1, &p.delay_bound);
            break;
        case O_MIN_QUORUM:
            ok = opt_int("min_quorum", optarg, 1, &p.min_quorum);
            break;
        case O_TARGET_NRESULTS:
            ok = opt_int("target_nresults", optarg, 1, &p.target_nresults);
            break;
        case O_MAX_ERROR:
            ok = opt_int("max_error_results", optarg, 1, &p.max_error_results);
            break;
        case O_MAX_TOTAL:
            ok = opt_int("max_total_results", optarg, 1, &p.max_total_results);
            break;
        case O_MAX_SUCCESS:
            ok = opt_int("max_success_results", optarg, 1, &p.max_success_results);
            break;
        case O_TARGET_HOST:
            ok = id_arg("target_host", optarg, &p.target_host);
            break;
        case O_TARGET_USER:
            ok = id_arg("target_user", optarg, &p.target_user);
            break;
        case O_TARGET_TEAM:
            ok = id_arg("target_team", optarg, &p.target_team);
            break;
        case O_BROADCAST:
            p.broadcast_all = true;
            break;
        case O_BROADCAST_USER:
            ok = id_arg("broadcast_user", optarg, &p.broadcast_user);
            break;
        case O_BROADCAST_TEAM:
            ok = id_arg("broadcast_team", optarg, &p.broadcast_team);
            break;
        case O_STDIN:
            use_stdin = true;
            break;
        case O_NO_TRANSITION:
            transition = false;
            break;
        case O_HELP:
        case 'h':
            usage(stdout);
            return VS_EXIT_OK;
        default:
            fprintf(stderr, "volsched create_work: unknown or incomplete option '%s'\n",
                    argv[optind - 1]);
            fprintf(stderr, "Run `volsched create_work --help` for the flags.\n");
            return VS_EXIT_USAGE;
        }
        if (!ok)
            return VS_EXIT_USAGE;
    }
    if (!p.appname) {
        fprintf(stderr, "volsched create_work: --appname is required\n");
        return VS_EXIT_USAGE;
    }
    if (use_stdin && optind != argc) {
        fprintf(stderr, "volsched create_work: with --stdin, give the inputs on stdin lines, "
                        "not as arguments\n");
        return VS_EXIT_USAGE;
    }

    struct vs_arena arena;
    vs_arena_init(&arena, 65536);
    struct vs_cw_job *jobs = NULL;
    size_t njobs = 0, cap = 0;
    int status = VS_EXIT_USAGE;
    char *line = vs_xmalloc(MAX_LINE);
    if (!use_stdin) {
        jobs = vs_xcalloc(1, sizeof(*jobs));
        jobs[0].wu_name = wu_name;
        jobs[0].inputs = (const char *const *)(argv + optind);
        jobs[0].ninputs = (size_t)(argc - optind);
        njobs = 1;
    } else {
        size_t lineno = 0;
        while (fgets(line, MAX_LINE, stdin)) {
            lineno++;
            size_t len = strlen(line);
            if (len == MAX_LINE - 1 && line[len - 1] != '\n') {
                fprintf(stderr, "volsched create_work: stdin line %zu is too long\n", lineno);
                goto out;
            }
            const char *q = line;
            while (*q == ' ' || *q == '\t')
                q++;
            if (*q == '\n' || *q == '\0' || *q == '#')
                continue; /* blank lines and comments */
            if (njobs == MAX_STDIN_JOBS) {
                fprintf(stderr, "volsched create_work: more than %d jobs on stdin\n",
                        MAX_STDIN_JOBS);
                goto out;
            }
            if (njobs == cap) {
                cap = cap ? 2 * cap : 64;
                jobs = vs_xreallocarray(jobs, cap, sizeof(*jobs));
            }
            struct vs_cw_job *j = &jobs[njobs];
            memset(j, 0, sizeof(*j));
            if (!parse_line(line, lineno, &arena, j))
                goto out;
            if (!j->wu_name && wu_name) {
                char nm[VS_NAME_MAX];
                snprintf(nm, sizeof(nm), "%s_%zu", wu_name, lineno);
                j->wu_name = vs_arena_strndup(&arena, nm, strlen(nm));
            }
            njobs++;
        }
        if (njobs == 0) {
            fprintf(stderr, "volsched create_work: --stdin: no job lines read\n");
            goto out;
        }
    }
    for (size_t i = 0; i < njobs; i++) {
        if (!jobs[i].wu_template)
            jobs[i].wu_template = wu_template;
        if (!jobs[i].result_template)
            jobs[i].result_template = result_template;
    }

    struct vs_project_config cfg;
    struct vs_store *s;
    if (!vs_cli_open_project("create_work", project, &cfg, &s)) {
        status = VS_EXIT_FAIL;
        goto out;
    }
    if ((p.target_host || p.target_user || p.target_team) && !cfg.enable_assignment)
        fprintf(stderr, "volsched create_work: warning: config.xml has no "
                        "<enable_assignment>; targeted jobs will not be sent\n");
    if ((p.broadcast_all || p.broadcast_user || p.broadcast_team) && !cfg.enable_assignment_multi)
        fprintf(stderr, "volsched create_work: warning: config.xml has no "
                        "<enable_assignment_multi>; broadcast jobs will not be sent\n");
    struct vs_cw_created *created = NULL;
    char err[512];
    int64_t now = (int64_t)time(NULL);
    int rc = vs_create_work(&cfg, s, &p, jobs, njobs, now, NULL, &created, err, sizeof(err));
    if (rc) {
        fprintf(stderr, "volsched create_work: %s\n", err[0] ? err : vs_strerror(rc));
        fprintf(stderr, "volsched create_work: nothing was created\n");
        status = vs_cli_exit_for(rc);
    } else {
        for (size_t i = 0; i < njobs; i++)
            printf("%s\n", created[i].name);
        status = VS_EXIT_OK;
        if (transition) {
            /* Passes of 1000 workunits until one comes back short. */
            struct vs_transitioner_stats st;
            do
                rc = vs_transitioner_pass(s, &cfg, now, 1000, NULL, &st);
            while (rc == 0 && st.nwus == 1000);
            if (rc)
                fprintf(stderr,
                        "volsched create_work: warning: transitioner pass: %s (the server's "
                        "transitioner will retry)\n",
                        vs_strerror(rc));
        }
    }
    vs_free(created);
    vs_store_close(s);
out:
    vs_free(line);
    vs_free(jobs);
    vs_arena_cleanup(&arena);
    return status;
}
