/*
 * Helpers shared by the project-admin subcommands (init, app, user, team,
 * create_work, status) and serve: help detection, number parsing with clear
 * messages, and loading a project's configuration (one message format for
 * every command) and opening its store.
 */
#ifndef VOLSCHED_CLI_UTIL_H
#define VOLSCHED_CLI_UTIL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "volsched/config.h"
#include "volsched/store.h"

/* True for "--help", "-h" and "-help". */
bool vs_cli_is_help(const char *arg);

/* Parses a decimal integer option value; prints "CMD: --NAME: ..." and
 * returns false when it is not one or is outside [min, max]. */
bool vs_cli_int(const char *cmd, const char *name, const char *s, int64_t min, int64_t max,
                int64_t *out);
bool vs_cli_double(const char *cmd, const char *name, const char *s, double min, double *out);

/*
 * Loads DIR/config.xml and DIR/config_aux.xml (dir NULL = the current
 * directory) through vs_project_config_load, warnings on log. On failure
 * prints "volsched CMD: FILE:LINE: reason" (or that DIR is not a project)
 * to stderr and returns false.
 */
bool vs_cli_load_project(const char *cmd, const char *dir, struct vs_log *log,
                         struct vs_project_config *out_cfg);

/*
 * vs_cli_load_project with warnings on stderr, then opens the store. Prints
 * a clear message naming cmd and returns false on failure. The caller
 * closes *out_store.
 */
bool vs_cli_open_project(const char *cmd, const char *dir, struct vs_project_config *out_cfg,
                         struct vs_store **out_store);

/*
 * One option of a subcommand, for vs_cli_getopt(). Exactly one target is set:
 * str takes an argument and stores it; flag takes none and stores true; num
 * takes an argument that must be a number >= num_min (checked as soon as it
 * is read, with vs_cli_double()'s message). Two rows may share a target
 * (--plan-class / --plan_class).
 */
struct vs_cli_opt {
    const char *name;
    const char **str;
    bool *flag;
    double *num;
    double num_min;
};

/* vs_cli_getopt() returned this: the options were fine, go on. */
#define VS_CLI_GO (-1)

/*
 * Reads the options of argv[1..argc) the way every admin subcommand does:
 * getopt_long_only, so -name works too, and so does a prefix that only one
 * option starts with (in this mode any two matches are ambiguous, even two
 * spellings of one option: "--plan" is refused beside --plan-class and
 * --plan_class). --help, -help and -h print usage to stdout and return
 * VS_EXIT_OK. An unknown, ambiguous or incomplete option prints "volsched
 * CMD: unknown or incomplete option 'ARG'" and usage to stderr and returns
 * VS_EXIT_USAGE, as does a bad num value (without usage). Otherwise returns
 * VS_CLI_GO with *out_next = the index of the first operand. Stored strings
 * point into argv.
 */
int vs_cli_getopt(const char *cmd, int argc, char **argv, const struct vs_cli_opt *opts,
                  size_t n_opts, void (*usage)(FILE *), int *out_next);

/* vs_cli_getopt for a command that takes options only: an operand prints
 * "volsched CMD: unexpected argument 'ARG'" and usage to stderr and
 * returns VS_EXIT_USAGE. */
int vs_cli_getopt_only(const char *cmd, int argc, char **argv, const struct vs_cli_opt *opts,
                       size_t n_opts, void (*usage)(FILE *));

/* One option for vs_cli_exact_next(): its name (without dashes), how many
 * arguments follow it (0 to 3), and the caller's id for it. */
struct vs_cli_xopt {
    const char *name;
    int nargs;
    int id;
};

/*
 * Reads the word at argv[*i] the way BOINC's tools do: "-name" or "--name"
 * naming exactly one option of opts (no abbreviations, no "=value"),
 * followed by its arguments. Returns the option's id with out_args[0..nargs)
 * set and *i moved past them; 0 for an operand (out_args[0] = the word; a
 * lone "-" is an operand); -1 after printing "volsched CMD: unknown option
 * 'W'" or "... 'W' needs N argument(s)" to stderr. Option ids must be > 0.
 */
int vs_cli_exact_next(const char *cmd, int argc, char **argv, int *i,
                      const struct vs_cli_xopt *opts, size_t n_opts, const char **out_args);

/*
 * The entry point of a command group whose only subcommand is "add" (app,
 * user, team): no argument prints usage to stderr (exit 2), a help flag to
 * stdout (exit 0); "add" runs add(argc - 1, argv + 1); anything else is
 * "volsched GROUP: unknown subcommand" (exit 2).
 */
int vs_cli_add_group(const char *group, int argc, char **argv, void (*usage)(FILE *),
                     int (*add)(int argc, char **argv));

/* Prints {"id":ID,"KEY":"VALUE"} and a newline to stdout (the --json answer
 * of user add and team add). */
void vs_cli_print_id_json(int64_t id, const char *key, const char *value);

/* Exit status for a volsched error from an operation on user input: bad
 * input (2) for EINVAL/NOTFOUND/EXISTS/PARSE/LIMIT, failure (1) otherwise. */
int vs_cli_exit_for(int rc);

struct vs_log;

/*
 * Runs the daemons in which (daemons.h bits) in this thread on their own
 * store handle: passes back to back while they find work, every
 * interval_ms when idle, until SIGINT or SIGTERM (or after one pass with
 * once). Returns the exit status (VS_EXIT_OK, or VS_EXIT_FAIL when the
 * store cannot be opened).
 */
int vs_cli_run_daemons(const struct vs_project_config *cfg, unsigned which, int interval_ms,
                       bool once, struct vs_log *log);

/* The same loop with the caller's hooks (`serve --only`): its own stop
 * and wake flags (set by its signal handlers; none are installed here), a
 * tick before each pass (SIGHUP's reload: cfg may change under it, it is
 * the caller's object), the stop_daemons file pausing the passes, and a
 * log line per pass. */
struct vs_cli_loop_hooks {
    volatile sig_atomic_t *stop; /* NULL: SIGINT/SIGTERM handled here */
    volatile sig_atomic_t *wake; /* ends the idle sleep early; may be NULL */
    void (*tick)(void *ctx);
    void *ctx;
    bool honour_pause;
    bool log_passes;
    int mod_n, mod_i; /* --mod N I (mod_n > 1): vs_store_set_mod on the daemon's handle */
};
int vs_cli_run_daemons_hooked(const struct vs_project_config *cfg, unsigned which, int interval_ms,
                              bool once, struct vs_log *log, const struct vs_cli_loop_hooks *hooks);

/*
 * A progress bar on stderr for long runs: drawn only when enabled (the
 * caller checks isatty and its --no-progress) and only once a run has
 * taken a second; vs_cli_progress_cb fits the simulators' progress hook.
 */
struct vs_cli_progress {
    bool enabled;
    bool shown;
    struct timespec start;
    const char *label;
};
void vs_cli_progress_start(struct vs_cli_progress *pg, const char *label);
void vs_cli_progress_cb(void *ctx, double frac);

#endif
