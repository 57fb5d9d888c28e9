/*
 * volsched workgen: the work generator of seed 003 (BOINC's
 * sample_work_generator, notes section 7). Keeps at least CUSHION unsent
 * results of one app: when fewer are unsent it asks for more jobs, from the
 * operator's command (which prints job lines in create_work --stdin format;
 * VOLSCHED_NEED in its environment says how many are wanted) or, built in,
 * one job per file of an input directory (consumed files are moved aside),
 * and creates them with create_work's code.
 *
 * BOINC's lesson: a new workunit has no results until the transitioner has
 * seen it, so counting right after creating would create too many. Each
 * workunit made here counts as pending (its target_nresults) until its
 * results exist; only then do the unsent results count instead. It backs
 * off (doubling the interval, up to 32 times) while the command prints
 * nothing or fails, logs every round, and stops at SIGTERM or SIGINT
 * between rounds.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli_util.h"
#include "cmd.h"
#include "cw_lines.h"
#include "volsched/alloc.h"
#include "volsched/create_work.h"
#include "volsched/log.h"
#include "volsched/store.h"
#include "volsched/store_sched.h"
#include "volsched/str.h"
#include "volsched/transitioner.h"

#define MAX_PENDING_WUS 100000

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched workgen [--project DIR] --app APP --cushion N\n"
               "                        (--command CMD | --input-dir DIR [--done-dir DIR])\n"
               "                        [--interval SECS] [--max-batch N] [--once]\n"
               "                        [--follow-symlinks]\n"
               "\n"
               "Keeps at least N unsent results of APP. When fewer are unsent, runs CMD\n"
               "(with sh -c; VOLSCHED_NEED and VOLSCHED_APP in its environment), which\n"
               "prints jobs in `create_work --stdin` format, one per line, and creates\n"
               "them; or makes one job per file of DIR (the file is its input), moving each\n"
               "consumed file to --done-dir (default DIR/.done). A new job counts only\n"
               "once its results exist. Backs off while CMD prints nothing. Logs to\n"
               "stderr; stops on SIGTERM. Of several workgens for one app on one\n"
               "PostgreSQL store, one leads and the others stand by until it is gone.\n"
               "\n"
               "  --interval SECS   between checks (default 10)\n"
               "  --max-batch N     jobs per round at most (default 1000)\n"
               "  --once            one round that creates jobs, then exit\n"
               "  --follow-symlinks an input path may be or pass through a symbolic link\n"
               "                    (as create_work's flag; refused by default)\n");
}

struct gen {
    struct vs_project_config cfg;
    struct vs_store *s;
    struct vs_log log;
    const char *app, *command, *input_dir;
    char done_dir[VS_PATH_MAX];
    int64_t appid, cushion, interval, max_batch;
    int64_t *pending; /* workunits made here whose results do not exist yet */
    int *pending_n;   /* their target_nresults */
    size_t npending;
    int64_t start, seq;
    bool follow; /* --follow-symlinks */
};

static int count_results(void *ctx, const struct vs_result *r)
{
    (void)r;
    (*(int64_t *)ctx)++;
    return 0;
}

/* Unsent results now, plus the results pending workunits will get. */
static int stock(struct gen *g, int64_t *out)
{
    int64_t unsent = 0, inactive = 0;
    int rc = vs_store_count_results(g->s, g->appid, VS_RESULT_SERVER_STATE_UNSENT, &unsent);
    if (rc == 0)
        rc = vs_store_count_results(g->s, g->appid, VS_RESULT_SERVER_STATE_INACTIVE, &inactive);
    if (rc)
        return rc;
    int64_t pend = 0;
    size_t k = 0;
    for (size_t i = 0; i < g->npending; i++) {
        int64_t n = 0;
        if ((rc = vs_store_results_of_wu(g->s, g->pending[i], count_results, &n)) != 0)
            return rc;
        if (n > 0)
            continue; /* transitioned: its results are among the unsent */
        g->pending[k] = g->pending[i];
        g->pending_n[k++] = g->pending_n[i];
        pend += g->pending_n[i];
    }
    g->npending = k;
    *out = unsent + inactive + pend;
    return 0;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The built-in mode: up to need files of the input directory, by name. */
static size_t dir_jobs(struct gen *g, int64_t need, struct vs_arena *a, struct vs_cw_job **out)
{
    DIR *d = opendir(g->input_dir);
    if (!d) {
        VS_LOG(&g->log, VS_LOG_ERROR, "cannot read %s: %s", g->input_dir, strerror(errno));
        return 0;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 1000000) {
        if (e->d_name[0] == '.')
            continue;
        char path[VS_PATH_MAX + VS_NAME_MAX];
        struct stat sb;
        snprintf(path, sizeof(path), "%s/%s", g->input_dir, e->d_name);
        if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            names = vs_xreallocarray(names, cap, sizeof(*names));
        }
        names[n++] = vs_arena_strndup(a, path, strlen(path));
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof(*names), name_cmp);
    size_t take = n < (size_t)need ? n : (size_t)need;
    struct vs_cw_job *jobs = take ? vs_xcalloc(take, sizeof(*jobs)) : NULL;
    for (size_t i = 0; i < take; i++) {
        const char **in = vs_arena_alloc(a, sizeof(*in));
        in[0] = names[i];
        jobs[i].inputs = in;
        jobs[i].ninputs = 1;
    }
    vs_free(names);
    *out = jobs;
    return take;
}

/* The operator's command: its job lines. */
static size_t command_jobs(struct gen *g, int64_t need, struct vs_arena *a, struct vs_cw_job **out)
{
    char nbuf[32];
    snprintf(nbuf, sizeof(nbuf), "%lld", (long long)need);
    setenv("VOLSCHED_NEED", nbuf, 1);
    setenv("VOLSCHED_APP", g->app, 1);
    FILE *p = popen(g->command, "r");
    if (!p) {
        VS_LOG(&g->log, VS_LOG_ERROR, "cannot run %s: %s", g->command, strerror(errno));
        return 0;
    }
    struct vs_cw_job *jobs = NULL;
    size_t n = 0;
    int rc = vs_cw_read_jobs(p, "command output", NULL, false, a, &jobs, &n);
    int st = pclose(p);
    if (rc || st != 0) {
        VS_LOG(&g->log, VS_LOG_ERROR, "command %s %s; its jobs are not used", g->command,
               rc ? "printed a bad job line" : "failed");
        vs_free(jobs);
        return 0;
    }
    *out = jobs;
    return n;
}

/* Moves consumed input files aside (the built-in mode). */
static void move_done(struct gen *g, const struct vs_cw_job *jobs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *src = jobs[i].inputs[0];
        const char *base = strrchr(src, '/');
        char dst[VS_PATH_MAX + VS_NAME_MAX];
        snprintf(dst, sizeof(dst), "%s/%s", g->done_dir, base ? base + 1 : src);
        if (rename(src, dst) != 0)
            VS_LOG(&g->log, VS_LOG_WARN, "cannot move %s to %s: %s", src, dst, strerror(errno));
    }
}

/* One round: returns jobs created (0: none needed or none given), or < 0. */
static int64_t round_once(struct gen *g, int64_t now, bool *out_needed)
{
    int64_t have;
    int rc = stock(g, &have);
    if (rc) {
        VS_LOG(&g->log, VS_LOG_ERROR, "store: %s", vs_strerror(rc));
        return rc;
    }
    *out_needed = have < g->cushion;
    if (!*out_needed) {
        VS_LOG(&g->log, VS_LOG_DEBUG, "%lld unsent or pending, cushion %lld: nothing to do",
               (long long)have, (long long)g->cushion);
        return 0;
    }
    int64_t need = g->cushion - have;
    if (need > g->max_batch)
        need = g->max_batch;
    if (g->npending + (size_t)need > MAX_PENDING_WUS)
        return 0;
    struct vs_arena a;
    vs_arena_init(&a, 65536);
    struct vs_cw_job *jobs = NULL;
    size_t n = g->command ? command_jobs(g, need, &a, &jobs) : dir_jobs(g, need, &a, &jobs);
    int64_t made = 0;
    if (n > 0) {
        for (size_t i = 0; i < n; i++) {
            if (jobs[i].wu_name)
                continue;
            /* BOINC's sample generator names jobs <app>_<start>_<seq>. */
            char nm[VS_NAME_MAX];
            snprintf(nm, sizeof(nm), "%s_%lld_%lld", g->app, (long long)g->start,
                     (long long)g->seq++);
            jobs[i].wu_name = vs_arena_strndup(&a, nm, strlen(nm));
        }
        struct vs_cw_params p;
        memset(&p, 0, sizeof(p));
        p.appname = g->app;
        p.follow_symlinks = g->follow;
        struct vs_cw_created *cr = NULL;
        char err[512];
        rc = vs_create_work(&g->cfg, g->s, &p, jobs, n, now, NULL, &cr, err, sizeof(err));
        if (rc) {
            VS_LOG(&g->log, VS_LOG_ERROR, "create_work: %s (nothing created)", err);
            made = rc;
        } else {
            for (size_t i = 0; i < n; i++) {
                struct vs_workunit wu;
                memset(&wu, 0, sizeof(wu));
                int nr = 1;
                if (vs_store_workunit_get(g->s, cr[i].id, &wu) == 0)
                    nr = wu.target_nresults > 0 ? wu.target_nresults : 1;
                vs_workunit_cleanup(&wu);
                g->pending[g->npending] = cr[i].id;
                g->pending_n[g->npending++] = nr;
            }
            made = (int64_t)n;
            if (g->input_dir)
                move_done(g, jobs, n);
            VS_LOG(&g->log, VS_LOG_INFO,
                   "%lld unsent or pending below cushion %lld: created %zu "
                   "job(s)",
                   (long long)have, (long long)g->cushion, n);
            /* Their results, now (the server's transitioner would too). */
            struct vs_transitioner_stats ts;
            do
                rc = vs_transitioner_pass(g->s, &g->cfg, now, 1000, NULL, &ts);
            while (rc == 0 && ts.nwus == 1000);
        }
        vs_free(cr);
    }
    vs_free(jobs);
    vs_arena_cleanup(&a);
    return made;
}

/* Sleeps secs seconds, waking early when asked to stop. */
static void nap(int64_t secs)
{
    for (int64_t i = 0; i < secs * 10 && !stop_flag; i++) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

int vs_cmd_workgen(int argc, char **argv)
{
    const char *project = NULL, *app = NULL, *command = NULL, *input_dir = NULL, *done = NULL;
    double cushion = -1, interval = 10, max_batch = 1000;
    bool once = false, follow = false;
    const struct vs_cli_opt opts[] = {
        {.name = "project", .str = &project},
        {.name = "app", .str = &app},
        {.name = "cushion", .num = &cushion, .num_min = 1},
        {.name = "command", .str = &command},
        {.name = "input-dir", .str = &input_dir},
        {.name = "done-dir", .str = &done},
        {.name = "interval", .num = &interval, .num_min = 1},
        {.name = "max-batch", .num = &max_batch, .num_min = 1},
        {.name = "once", .flag = &once},
        {.name = "follow-symlinks", .flag = &follow},
    };
    int next;
    int st =
        vs_cli_getopt("workgen", argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage, &next);
    if (st != VS_CLI_GO)
        return st;
    if (!app || cushion < 1 || (command == NULL) == (input_dir == NULL) || next != argc) {
        fprintf(stderr, "volsched workgen: --app, --cushion N and one of --command or "
                        "--input-dir are required\n");
        usage(stderr);
        return VS_EXIT_USAGE;
    }
    struct gen g;
    memset(&g, 0, sizeof(g));
    g.app = app;
    g.command = command;
    g.input_dir = input_dir;
    g.follow = follow;
    g.cushion = (int64_t)cushion;
    g.interval = (int64_t)interval;
    g.max_batch = (int64_t)max_batch;
    g.start = (int64_t)time(NULL);
    vs_log_init(&g.log, VS_LOG_INFO, stderr, "workgen");
    if (input_dir) {
        int n = done ? snprintf(g.done_dir, sizeof(g.done_dir), "%s", done)
                     : snprintf(g.done_dir, sizeof(g.done_dir), "%s/.done", input_dir);
        if (n < 0 || (size_t)n >= sizeof(g.done_dir) ||
            (mkdir(g.done_dir, 0755) != 0 && errno != EEXIST)) {
            fprintf(stderr, "volsched workgen: cannot make %s\n", g.done_dir);
            return VS_EXIT_FAIL;
        }
    }
    if (!vs_cli_open_project("workgen", project, &g.cfg, &g.s))
        return VS_EXIT_FAIL;
    struct vs_app a;
    int rc = vs_store_app_by_name(g.s, app, &a);
    if (rc) {
        fprintf(stderr, "volsched workgen: no app named '%s'\n", app);
        vs_store_close(g.s);
        return VS_EXIT_USAGE;
    }
    g.appid = a.id;
    g.pending = vs_xcalloc(MAX_PENDING_WUS, sizeof(*g.pending));
    g.pending_n = vs_xcalloc(MAX_PENDING_WUS, sizeof(*g.pending_n));
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    VS_LOG(&g.log, VS_LOG_INFO, "app %s, cushion %lld, %s %s", app, (long long)g.cushion,
           command ? "command" : "input directory", command ? command : input_dir);
    /* Several workgens for one app on one PostgreSQL store (one per serve
     * host, say): one leads, the others stand by and take over within an
     * interval of its death (the lock is its session's). Always leads on
     * SQLite. */
    char role[sizeof("workgen:") + VS_NAME_MAX];
    snprintf(role, sizeof(role), "workgen:%s", app);
    bool standby = false;
    int64_t backoff = g.interval;
    int status = VS_EXIT_OK;
    while (!stop_flag) {
        bool lead = false;
        if (vs_store_leader(g.s, role, &lead) != 0)
            lead = false; /* logged by the store; try again next interval */
        if (lead == standby) {
            standby = !lead;
            VS_LOG(&g.log, VS_LOG_INFO,
                   lead ? "leading (this workgen makes %s's jobs)"
                        : "standing by (another workgen for %s on this store leads)",
                   app);
        }
        if (!lead) {
            if (once)
                break;
            nap(g.interval);
            continue;
        }
        bool needed = false;
        int64_t made = round_once(&g, (int64_t)time(NULL), &needed);
        if (made > 0) {
            backoff = g.interval;
            if (once)
                break;
            continue; /* count again at once: the cushion may still be short */
        }
        if (needed && once) {
            status = made < 0 ? VS_EXIT_FAIL : VS_EXIT_OK;
            break;
        }
        if (needed) {
            if (made == 0)
                VS_LOG(&g.log, VS_LOG_INFO, "below the cushion but %s; next try in %llds",
                       command ? "the command gave no jobs" : "no input files", (long long)backoff);
            nap(backoff);
            backoff = backoff * 2 > 32 * g.interval ? 32 * g.interval : backoff * 2;
        } else {
            backoff = g.interval;
            if (once)
                break;
            nap(g.interval);
        }
    }
    if (stop_flag)
        VS_LOG(&g.log, VS_LOG_INFO, "stopped by a signal");
    vs_free(g.pending);
    vs_free(g.pending_n);
    vs_store_close(g.s);
    return status;
}
