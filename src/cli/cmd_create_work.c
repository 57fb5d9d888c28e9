/*
 * volsched create_work: BOINC's create_work tool. Parses the flags (each may
 * be written -x or --x, as BOINC allows, and must be spelled out: no
 * abbreviations, so BOINC's "-d 3" is never read as --delay_bound), reads
 * --stdin job lines, and calls vs_create_work(), which writes everything or
 * nothing. Then one transitioner pass gives the new normal workunits their
 * results (not with --no_transition: those are held until released).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli_util.h"
#include "cmd.h"
#include "cw_lines.h"
#include "volsched/alloc.h"
#include "volsched/config.h"
#include "volsched/create_work.h"
#include "volsched/store.h"
#include "volsched/str.h"
#include "volsched/transitioner.h"

#define INT_MAX_ARG 2000000000LL

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
               "                            [--target_team ID] [--priority N]\n"
               "                            [--remote_file URL NBYTES MD5] INPUT...\n"
               "                            (names default to WU_NAME_LINENO); all jobs are\n"
               "                            created in one transaction\n"
               "  --remote_file URL NBYTES MD5  an input hosted elsewhere: not staged, the\n"
               "                            client downloads it from URL (name jf_MD5);\n"
               "                            also on --stdin lines, in input order\n"
               "  --continue_on_error       skip bad jobs (reported), create the others\n"
               "  --follow-symlinks         an INPUT path may be or pass through a symbolic\n"
               "                            link (refused by default: the target would be\n"
               "                            published)\n"
               "Other:\n"
               "  --project DIR             project directory (default: current directory)\n"
               "  --config_dir DIR          the same (BOINC's name: where config.xml is)\n"
               "  --rsc_bandwidth_bound X   bytes/s the job needs (stored, as BOINC)\n"
               "  --no_transition           hold the jobs: no results are made until\n"
               "                            `volsched release --project DIR WU...` (or\n"
               "                            --batch N) releases them\n"
               "  --verbose, -d N           say what is done (N = BOINC's debug level 1-4;\n"
               "                            3 and 4 are verbose)\n"
               "A workunit name may not begin with '-' (it reaches the assimilator's\n"
               "command as an argument).\n"
               "Refused, with a message: --sub_appname, --size_class, --wu_id.\n"
               "Options are matched exactly: no abbreviations.\n");
}

enum {
    O_PROJECT = 1,
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
    O_BW_BOUND,
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
    O_REMOTE_FILE,
    O_STDIN,
    O_NO_TRANSITION,
    O_CONTINUE,
    O_FOLLOW,
    O_VERBOSE,
    O_DEBUG,
    O_REFUSED,
    O_HELP,
};

/* Every flag, matched exactly (-name or --name), with its argument count. */
static const struct vs_cli_xopt opts[] = {
    {"project", 1, O_PROJECT},
    {"config_dir", 1, O_PROJECT},
    {"appname", 1, O_APPNAME},
    {"wu_name", 1, O_WU_NAME},
    {"wu_template", 1, O_WU_TEMPLATE},
    {"result_template", 1, O_RESULT_TEMPLATE},
    {"app_version_num", 1, O_AVNUM},
    {"command_line", 1, O_COMMAND_LINE},
    {"priority", 1, O_PRIORITY},
    {"batch", 1, O_BATCH},
    {"keywords", 1, O_KEYWORDS},
    {"credit", 1, O_CREDIT},
    {"hr_class", 1, O_HR_CLASS},
    {"rsc_fpops_est", 1, O_FPOPS_EST},
    {"rsc_fpops_bound", 1, O_FPOPS_BOUND},
    {"rsc_memory_bound", 1, O_MEM_BOUND},
    {"rsc_disk_bound", 1, O_DISK_BOUND},
    {"rsc_bandwidth_bound", 1, O_BW_BOUND},
    {"delay_bound", 1, O_DELAY_BOUND},
    {"min_quorum", 1, O_MIN_QUORUM},
    {"target_nresults", 1, O_TARGET_NRESULTS},
    {"max_error_results", 1, O_MAX_ERROR},
    {"max_total_results", 1, O_MAX_TOTAL},
    {"max_success_results", 1, O_MAX_SUCCESS},
    {"target_host", 1, O_TARGET_HOST},
    {"target_user", 1, O_TARGET_USER},
    {"target_team", 1, O_TARGET_TEAM},
    {"broadcast", 0, O_BROADCAST},
    {"broadcast_user", 1, O_BROADCAST_USER},
    {"broadcast_team", 1, O_BROADCAST_TEAM},
    {"remote_file", 3, O_REMOTE_FILE},
    {"stdin", 0, O_STDIN},
    {"no_transition", 0, O_NO_TRANSITION},
    {"continue_on_error", 0, O_CONTINUE},
    {"follow-symlinks", 0, O_FOLLOW},
    {"follow_symlinks", 0, O_FOLLOW},
    {"verbose", 0, O_VERBOSE},
    {"d", 1, O_DEBUG},
    {"sub_appname", 1, O_REFUSED},
    {"size_class", 1, O_REFUSED},
    {"wu_id", 1, O_REFUSED},
    {"help", 0, O_HELP},
    {"h", 0, O_HELP},
};
#define NOPTS (sizeof(opts) / sizeof(opts[0]))

/* Why a BOINC flag volsched does not take is refused. */
static void refuse_flag(const char *name)
{
    const char *why =
        strcmp(name, "sub_appname") == 0
            ? "sub-applications are not supported: the scheduler would not send the name"
        : strcmp(name, "size_class") == 0
            ? "size classes need BOINC's size_regulator daemon, which volsched does not have "
              "(results would stay INACTIVE); use --priority or an app per size"
            : "updating an existing workunit row is BOINC's remote job submission, which "
              "volsched does not have; create a new workunit";
    fprintf(stderr, "volsched create_work: --%s is not supported: %s\n", name, why);
}

/* --continue_on_error: a skipped job, said on stderr. */
static void on_skip(void *ctx, size_t jobno, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "volsched create_work: skipped job %zu: %s\n", jobno, msg);
}

/* Applies one command-line flag to p and the call's settings. */
struct cli {
    struct vs_cw_params p;
    const char *project, *wu_name, *wu_template, *result_template;
    bool use_stdin, verbose;
    struct vs_cw_inputs in;
};

static bool apply_flag(struct cli *c, int id, const char **args)
{
    struct vs_cw_params *p = &c->p;
    const char *v = args[0];
    int64_t n;
    struct vs_cw_remote rf;
    switch (id) {
    case O_PROJECT:
        c->project = v;
        return true;
    case O_APPNAME:
        p->appname = v;
        return true;
    case O_WU_NAME:
        c->wu_name = v;
        return true;
    case O_WU_TEMPLATE:
        c->wu_template = v;
        return true;
    case O_RESULT_TEMPLATE:
        c->result_template = v;
        return true;
    case O_AVNUM:
        if (!vs_cli_int("create_work", "app_version_num", v, 1, INT_MAX_ARG, &n))
            return false;
        p->app_version_num = (int)n;
        return true;
    case O_COMMAND_LINE:
        p->command_line = v;
        return true;
    case O_PRIORITY:
        return vs_cw_opt_int("priority", v, -INT_MAX_ARG, &p->priority);
    case O_BATCH:
        return vs_cw_opt_int("batch", v, 0, &p->batch);
    case O_KEYWORDS:
        p->keywords = v;
        return true;
    case O_CREDIT:
        return vs_cw_opt_dbl("credit", v, &p->credit);
    case O_HR_CLASS:
        return vs_cw_opt_int("hr_class", v, 0, &p->hr_class);
    case O_FPOPS_EST:
        return vs_cw_opt_dbl("rsc_fpops_est", v, &p->rsc_fpops_est);
    case O_FPOPS_BOUND:
        return vs_cw_opt_dbl("rsc_fpops_bound", v, &p->rsc_fpops_bound);
    case O_MEM_BOUND:
        return vs_cw_opt_dbl("rsc_memory_bound", v, &p->rsc_memory_bound);
    case O_DISK_BOUND:
        return vs_cw_opt_dbl("rsc_disk_bound", v, &p->rsc_disk_bound);
    case O_BW_BOUND:
        return vs_cw_opt_dbl("rsc_bandwidth_bound", v, &p->rsc_bandwidth_bound);
    case O_DELAY_BOUND:
        return vs_cw_opt_int("delay_bound", v, 1, &p->delay_bound);
    case O_MIN_QUORUM:
        return vs_cw_opt_int("min_quorum", v, 1, &p->min_quorum);
    case O_TARGET_NRESULTS:
        return vs_cw_opt_int("target_nresults", v, 1, &p->target_nresults);
    case O_MAX_ERROR:
        return vs_cw_opt_int("max_error_results", v, 1, &p->max_error_results);
    case O_MAX_TOTAL:
        return vs_cw_opt_int("max_total_results", v, 1, &p->max_total_results);
    case O_MAX_SUCCESS:
        return vs_cw_opt_int("max_success_results", v, 1, &p->max_success_results);
    case O_TARGET_HOST:
        return vs_cw_id_arg("target_host", v, &p->target_host);
    case O_TARGET_USER:
        return vs_cw_id_arg("target_user", v, &p->target_user);
    case O_TARGET_TEAM:
        return vs_cw_id_arg("target_team", v, &p->target_team);
    case O_BROADCAST:
        p->broadcast_all = true;
        return true;
    case O_BROADCAST_USER:
        return vs_cw_id_arg("broadcast_user", v, &p->broadcast_user);
    case O_BROADCAST_TEAM:
        return vs_cw_id_arg("broadcast_team", v, &p->broadcast_team);
    case O_REMOTE_FILE:
        if (!vs_cw_remote_arg(args, &rf))
            return false;
        vs_cw_inputs_add(&c->in, args[0], &rf);
        return true;
    case O_STDIN:
        c->use_stdin = true;
        return true;
    case O_NO_TRANSITION:
        p->hold = true;
        return true;
    case O_CONTINUE:
        p->continue_on_error = true;
        return true;
    case O_FOLLOW:
        p->follow_symlinks = true;
        return true;
    case O_VERBOSE:
        c->verbose = true;
        return true;
    case O_DEBUG:
        /* BOINC-COMPAT: -d N, the debug level (1 critical .. 4 debug). */
        if (!vs_cli_int("create_work", "d", v, 1, 4, &n))
            return false;
        c->verbose = n >= 3;
        return true;
    default:
        return false;
    }
}

/* Refuses assigned work the project has not enabled, naming the tag. */
static bool assignment_enabled(const struct vs_project_config *cfg, const struct vs_cw_params *p,
                               const struct vs_cw_job *jobs, size_t njobs)
{
    bool targeted = p->target_host || p->target_user || p->target_team;
    for (size_t i = 0; i < njobs && !targeted; i++)
        targeted = jobs[i].target_host || jobs[i].target_user || jobs[i].target_team;
    if (targeted && !cfg->enable_assignment) {
        fprintf(stderr, "volsched create_work: targeted jobs are off in this project: add "
                        "<enable_assignment>1</enable_assignment> to config.xml (then restart "
                        "`volsched serve`)\n");
        return false;
    }
    if ((p->broadcast_all || p->broadcast_user || p->broadcast_team) &&
        !cfg->enable_assignment_multi) {
        fprintf(stderr, "volsched create_work: broadcast jobs are off in this project: add "
                        "<enable_assignment_multi>1</enable_assignment_multi> to config.xml "
                        "(then restart `volsched serve`)\n");
        return false;
    }
    return true;
}

int vs_cmd_create_work(int argc, char **argv)
{
    struct cli c;
    memset(&c, 0, sizeof(c));
    c.in.v = vs_xcalloc((size_t)argc + 1, sizeof(*c.in.v));
    c.in.remote = vs_xcalloc((size_t)argc + 1, sizeof(*c.in.remote));
    struct vs_arena arena;
    vs_arena_init(&arena, 65536);
    struct vs_cw_job *jobs = NULL;
    size_t njobs = 0;
    int status = VS_EXIT_USAGE;
    for (int i = 1; i < argc;) {
        const char *args[3];
        int id = vs_cli_exact_next("create_work", argc, argv, &i, opts, NOPTS, args);
        if (id == O_HELP) {
            usage(stdout);
            status = VS_EXIT_OK;
            goto out;
        }
        if (id == O_REFUSED) {
            refuse_flag(argv[i - 2] + (argv[i - 2][1] == '-' ? 2 : 1));
            goto out;
        }
        if (id < 0) {
            fprintf(stderr, "Run `volsched create_work --help` for the flags.\n");
            goto out;
        }
        if (id == 0)
            vs_cw_inputs_add(&c.in, args[0], NULL);
        else if (!apply_flag(&c, id, args))
            goto out;
    }
    struct vs_cw_params *p = &c.p;
    if (!p->appname) {
        fprintf(stderr, "volsched create_work: --appname is required\n");
        goto out;
    }
    if (c.use_stdin && c.in.n != 0) {
        fprintf(stderr, "volsched create_work: with --stdin, give the inputs on stdin lines, "
                        "not as arguments\n");
        goto out;
    }
    if (p->continue_on_error) {
        p->on_skip = on_skip;
        p->skip_ctx = NULL;
    }

    if (!c.use_stdin) {
        jobs = vs_xcalloc(1, sizeof(*jobs));
        jobs[0].wu_name = c.wu_name;
        vs_cw_inputs_to_job(&c.in, &jobs[0]);
        njobs = 1;
    } else {
        if (vs_cw_read_jobs(stdin, "stdin", c.wu_name, p->continue_on_error, &arena, &jobs,
                            &njobs) != 0)
            goto out;
        if (njobs == 0) {
            fprintf(stderr, "volsched create_work: --stdin: no job lines read\n");
            goto out;
        }
    }
    for (size_t i = 0; i < njobs; i++) {
        if (!jobs[i].wu_template)
            jobs[i].wu_template = c.wu_template;
        if (!jobs[i].result_template)
            jobs[i].result_template = c.result_template;
    }

    struct vs_project_config cfg;
    struct vs_store *s;
    if (!vs_cli_open_project("create_work", c.project, &cfg, &s)) {
        status = VS_EXIT_FAIL;
        goto out;
    }
    if (!assignment_enabled(&cfg, p, jobs, njobs)) {
        vs_store_close(s);
        goto out;
    }
    struct vs_cw_created *created = NULL;
    char err[512];
    int64_t now = (int64_t)time(NULL);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = vs_create_work(&cfg, s, p, jobs, njobs, now, NULL, &created, err, sizeof(err));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc) {
        fprintf(stderr, "volsched create_work: %s\n", err[0] ? err : vs_strerror(rc));
        fprintf(stderr, "volsched create_work: nothing was created\n");
        status = vs_cli_exit_for(rc);
    } else {
        size_t made = 0;
        for (size_t i = 0; i < njobs; i++) {
            if (!created[i].id)
                continue;
            printf("%s\n", created[i].name);
            made++;
            if (c.verbose)
                fprintf(stderr, "volsched create_work: created %s (id %lld)\n", created[i].name,
                        (long long)created[i].id);
        }
        if (c.verbose)
            fprintf(stderr, "volsched create_work: %zu workunit(s) in %.3f s%s\n", made,
                    (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
                    p->hold ? " (held: release them with `volsched release`)" : "");
        status = VS_EXIT_OK;
        if (!p->hold) {
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
    vs_free(jobs);
    vs_free(c.in.v);
    vs_free(c.in.remote);
    vs_arena_cleanup(&arena);
    return status;
}
