/*
 * The process side of `volsched serve`: its log files, its start checks,
 * its pid file and its signals. Kept apart from cmd_serve.c, which wires
 * the server's parts together.
 */
#ifndef VOLSCHED_CLI_SERVE_PROC_H
#define VOLSCHED_CLI_SERVE_PROC_H

#include <signal.h>
#include <stdbool.h>

#include "volsched/config.h"
#include "volsched/log.h"
#include "volsched/ops_metrics.h"
#include "volsched/proc_ctl.h"

/* The loggers of one serve process: [0] the process itself (log/<name>.log),
 * [1 + i] daemon bit i (log/<daemon>.log), when it runs that daemon. */
struct serve_logs {
    struct vs_log lg[1 + VS_NDAEMONS]; /* [0] the program, [1 + i] daemon bit i */
    struct vs_log_file *file[1 + VS_NDAEMONS];
};

/* Opens DIR/log/<name>.log and the daemons' logs for mask; tee copies every
 * line to stderr (--foreground). Returns 0, or -errno (printed). */
int serve_logs_open(struct serve_logs *l, const char *dir, const char *name, unsigned mask,
                    enum vs_log_level level, bool tee, struct vs_ops_metrics *tap);
/* Reopens every log file (SIGHUP after logrotate); logs failures. */
void serve_logs_reopen(struct serve_logs *l);
void serve_logs_close(struct serve_logs *l);

/*
 * The start checks: the project directory, log/, upload/ and the store's
 * file are writable. Prints a clear error and returns false otherwise.
 */
bool serve_check_writable(const struct vs_project_config *cfg);

/* Takes DIR/run/<name>.pid; prints who holds it and returns NULL if taken. */
struct vs_pidlock *serve_lock(const char *dir, const char *name);

/* Signals: SIGINT/SIGTERM stop, SIGHUP reloads, SIGUSR1 logs statistics,
 * SIGUSR2 is logged and ignored; SIGPIPE ignored. */
extern volatile sig_atomic_t serve_stop, serve_hup, serve_usr1, serve_usr2;
void serve_install_signals(void);

#endif
