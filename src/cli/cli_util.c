#include "cli_util.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/config.h"
#include "volsched/daemons.h"
#include "volsched/json.h"
#include "volsched/log.h"
#include "volsched/proc_ctl.h"
#include "volsched/store_project.h"
#include "volsched/store_sched.h"
#include "volsched/str.h"

bool vs_cli_is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0 || strcmp(arg, "-help") == 0;
}

bool vs_cli_int(const char *cmd, const char *name, const char *s, int64_t min, int64_t max,
                int64_t *out)
{
    int64_t v;
    if (!s || vs_parse_int64(s, &v) != 0) {
        fprintf(stderr, "volsched %s: --%s: '%s' is not an integer\n", cmd, name, s ? s : "");
        return false;
    }
    if (v < min || v > max) {
        fprintf(stderr, "volsched %s: --%s: %lld is out of range [%lld, %lld]\n", cmd, name,
                (long long)v, (long long)min, (long long)max);
        return false;
    }
    *out = v;
    return true;
}

bool vs_cli_double(const char *cmd, const char *name, const char *s, double min, double *out)
{
    double v;
    if (!s || vs_parse_double(s, &v) != 0 || !(v == v) || v > 1e300) {
        fprintf(stderr, "volsched %s: --%s: '%s' is not a number\n", cmd, name, s ? s : "");
        return false;
    }
    if (v < min) {
        fprintf(stderr, "volsched %s: --%s: %g is below %g\n", cmd, name, v, min);
        return false;
    }
    *out = v;
    return true;
}

bool vs_cli_load_project(const char *cmd, const char *dir, struct vs_log *log,
                         struct vs_project_config *out_cfg)
{
    const char *d = dir ? dir : ".";
    struct vs_config_error ce;
    memset(&ce, 0, sizeof(ce));
    int rc = vs_project_config_load(d, log, out_cfg, &ce);
    if (rc == VS_ENOTFOUND) {
        fprintf(stderr,
                "volsched %s: %s is not a volsched project (no config.xml); create one with "
                "`volsched init DIR` or pass --project DIR\n",
                cmd, d);
        return false;
    }
    if (rc) {
        /* The same file:line: reason every command prints (serve too). */
        char where[600];
        vs_config_error_format(&ce, where, sizeof(where));
        fprintf(stderr, "volsched %s: %s\n", cmd, where);
        return false;
    }
    return true;
}

bool vs_cli_open_project(const char *cmd, const char *dir, struct vs_project_config *out_cfg,
                         struct vs_store **out_store)
{
    /* Warnings (unknown tags) on stderr, as `serve` logs them. */
    struct vs_log lg;
    vs_log_init(&lg, VS_LOG_WARN, stderr, cmd);
    if (!vs_cli_load_project(cmd, dir, &lg, out_cfg))
        return false;
    int rc = vs_project_store_open(out_cfg, false, NULL, out_store);
    if (rc) {
        fprintf(stderr, "volsched %s: cannot open the store %s: %s\n", cmd, out_cfg->store_url,
                vs_strerror(rc));
        return false;
    }
    return true;
}

int vs_cli_exact_next(const char *cmd, int argc, char **argv, int *i,
                      const struct vs_cli_xopt *opts, size_t n_opts, const char **out_args)
{
    const char *w = argv[*i];
    if (w[0] != '-' || w[1] == '\0') {
        out_args[0] = w;
        (*i)++;
        return 0;
    }
    const char *name = w[1] == '-' ? w + 2 : w + 1;
    for (size_t k = 0; k < n_opts; k++) {
        if (strcmp(opts[k].name, name) != 0)
            continue;
        if (*i + opts[k].nargs >= argc) {
            fprintf(stderr, "volsched %s: '%s' needs %d argument%s\n", cmd, w, opts[k].nargs,
                    opts[k].nargs == 1 ? "" : "s");
            return -1;
        }
        for (int a = 0; a < opts[k].nargs; a++)
            out_args[a] = argv[*i + 1 + a];
        *i += 1 + opts[k].nargs;
        return opts[k].id;
    }
    fprintf(stderr, "volsched %s: unknown option '%s' (options are spelled out in full)\n", cmd, w);
    return -1;
}

int vs_cli_exit_for(int rc)
{
    switch (rc) {
    case 0:
        return VS_EXIT_OK;
    case VS_EINVAL:
    case VS_ENOTFOUND:
    case VS_EEXISTS:
    case VS_EPARSE:
    case VS_ELIMIT:
        return VS_EXIT_USAGE;
    default:
        return VS_EXIT_FAIL;
    }
}

/* getopt values: 'h' for help, OPT_BASE + row for the table's rows. */
#define OPT_BASE 256

int vs_cli_getopt(const char *cmd, int argc, char **argv, const struct vs_cli_opt *opts,
                  size_t n_opts, void (*usage)(FILE *), int *out_next)
{
    struct option *lo = vs_xcalloc(n_opts + 2, sizeof(*lo));
    for (size_t i = 0; i < n_opts; i++) {
        lo[i].name = opts[i].name;
        lo[i].has_arg = opts[i].flag ? no_argument : required_argument;
        lo[i].val = OPT_BASE + (int)i;
    }
    lo[n_opts].name = "help";
    lo[n_opts].has_arg = no_argument;
    lo[n_opts].val = 'h';
    int status = VS_CLI_GO;
    optind = 0;
    opterr = 0;
    int ch;
    while (status == VS_CLI_GO && (ch = getopt_long_only(argc, argv, "h", lo, NULL)) != -1) {
        if (ch == 'h') {
            usage(stdout);
            status = VS_EXIT_OK;
        } else if (ch < OPT_BASE || (size_t)(ch - OPT_BASE) >= n_opts) {
            fprintf(stderr, "volsched %s: unknown or incomplete option '%s'\n", cmd,
                    argv[optind - 1]);
            usage(stderr);
            status = VS_EXIT_USAGE;
        } else {
            const struct vs_cli_opt *o = &opts[ch - OPT_BASE];
            if (o->str)
                *o->str = optarg;
            else if (o->flag)
                *o->flag = true;
            else if (!vs_cli_double(cmd, o->name, optarg, o->num_min, o->num))
                status = VS_EXIT_USAGE;
        }
    }
    vs_free(lo);
    *out_next = optind;
    return status;
}

int vs_cli_add_group(const char *group, int argc, char **argv, void (*usage)(FILE *),
                     int (*add)(int argc, char **argv))
{
    if (argc < 2 || vs_cli_is_help(argv[1])) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? VS_EXIT_USAGE : VS_EXIT_OK;
    }
    if (strcmp(argv[1], "add") == 0)
        return add(argc - 1, argv + 1);
    fprintf(stderr, "volsched %s: unknown subcommand '%s' (known: add)\n", group, argv[1]);
    return VS_EXIT_USAGE;
}

void vs_cli_print_id_json(int64_t id, const char *key, const char *value)
{
    struct vs_buf b;
    vs_buf_init(&b, 4096);
    struct vs_json j;
    vs_json_init(&j, &b, false);
    vs_json_obj_begin(&j);
    vs_json_key(&j, "id");
    vs_json_int(&j, id);
    vs_json_key(&j, key);
    vs_json_str(&j, value);
    vs_json_obj_end(&j);
    printf("%s\n", vs_buf_str(&b));
    vs_buf_cleanup(&b);
}

static volatile sig_atomic_t daemon_stop;

static void on_daemon_signal(int sig)
{
    (void)sig;
    daemon_stop = 1;
}

static double mono_secs(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int vs_cli_run_daemons(const struct vs_project_config *cfg, unsigned which, int interval_ms,
                       bool once, struct vs_log *log)
{
    return vs_cli_run_daemons_hooked(cfg, which, interval_ms, once, log, NULL);
}

int vs_cli_run_daemons_hooked(const struct vs_project_config *cfg, unsigned which, int interval_ms,
                              bool once, struct vs_log *log, const struct vs_cli_loop_hooks *hooks)
{
    struct vs_store *st = NULL;
    int rc = vs_project_store_open(cfg, false, log, &st);
    if (rc != 0) {
        VS_LOG(log, VS_LOG_ERROR, "cannot open store: %s", vs_strerror(rc));
        return VS_EXIT_FAIL;
    }
    if (hooks && hooks->mod_n > 1 && (rc = vs_store_set_mod(st, hooks->mod_n, hooks->mod_i)) != 0) {
        vs_store_close(st);
        return VS_EXIT_USAGE;
    }
    volatile sig_atomic_t *stop = hooks && hooks->stop ? hooks->stop : &daemon_stop;
    volatile sig_atomic_t *wake = hooks ? hooks->wake : NULL;
    if (stop == &daemon_stop) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_daemon_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);
    }
    const char *name = vs_daemon_name(which);
    VS_LOG(log, VS_LOG_INFO, "running %s alone on %s", name[0] ? name : "daemons", cfg->store_url);
    fflush(stderr);
    if (interval_ms <= 0)
        interval_ms = 1000;
    unsigned idx = 0; /* the daemon's index, for the pass log */
    while (idx < VS_NDAEMONS && which != 1u << idx)
        idx++;
    uint64_t total = 0;
    bool paused = false, standby = false;
    while (!*stop) {
        if (hooks && hooks->tick)
            hooks->tick(hooks->ctx);
        if (hooks && hooks->honour_pause) {
            bool stop_file = vs_ctl_file_exists(cfg->dir, "stop_daemons");
            if (stop_file != paused) {
                paused = stop_file;
                VS_LOG(log, VS_LOG_INFO, paused ? "paused (stop_daemons exists)" : "resumed");
            }
        }
        int n = 0;
        /* One daemon alone runs only while this instance leads its role
         * (several instances on one PostgreSQL store; always on SQLite). */
        bool lead = idx >= VS_NDAEMONS || vs_daemons_may_run(st, idx, &standby, log);
        if (!paused && lead) {
            struct vs_daemons_stats ds;
            double t0 = mono_secs();
            n = vs_daemons_run_once(st, cfg, (int64_t)time(NULL), which, log, &ds);
            if (hooks && hooks->log_passes && idx < VS_NDAEMONS)
                vs_daemons_log_pass(log, idx, &ds, mono_secs() - t0);
        }
        if (n > 0)
            total += (uint64_t)n;
        if (once)
            break;
        if (n > 0)
            continue;
        struct timespec ts = {.tv_sec = interval_ms / 1000,
                              .tv_nsec = (long)(interval_ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !*stop && !(wake && *wake)) {
        }
    }
    VS_LOG(log, VS_LOG_INFO, "%s stopped after %llu items", name[0] ? name : "daemons",
           (unsigned long long)total);
    vs_store_close(st);
    return VS_EXIT_OK;
}

void vs_cli_progress_start(struct vs_cli_progress *pg, const char *label)
{
    pg->label = label;
    pg->shown = false;
    clock_gettime(CLOCK_MONOTONIC, &pg->start);
}

void vs_cli_progress_cb(void *ctx, double frac)
{
    struct vs_cli_progress *pg = ctx;
    if (!pg->enabled)
        return;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    double secs =
        (double)(t.tv_sec - pg->start.tv_sec) + (double)(t.tv_nsec - pg->start.tv_nsec) / 1e9;
    if (!pg->shown && (frac >= 1.0 || secs < 1.0))
        return;
    pg->shown = true;
    char bar[41];
    int fill = (int)(frac * 40);
    for (int i = 0; i < 40; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[40] = '\0';
    fprintf(stderr, "\r%-10s [%s] %3d%%", pg->label, bar, (int)(frac * 100));
    if (frac >= 1.0)
        fprintf(stderr, "\n");
    fflush(stderr);
}

int vs_cli_getopt_only(const char *cmd, int argc, char **argv, const struct vs_cli_opt *opts,
                       size_t n_opts, void (*usage)(FILE *))
{
    int next;
    int st = vs_cli_getopt(cmd, argc, argv, opts, n_opts, usage, &next);
    if (st != VS_CLI_GO)
        return st;
    if (next != argc) {
        fprintf(stderr, "volsched %s: unexpected argument '%s'\n", cmd, argv[next]);
        usage(stderr);
        return VS_EXIT_USAGE;
    }
    return VS_CLI_GO;
}
