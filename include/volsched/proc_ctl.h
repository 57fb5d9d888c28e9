/*
 * Process control of a project's server processes (BOINC's pid files and
 * stop files), shared by `volsched serve` and the `volsched stop|start|
 * status` commands:
 *
 *   DIR/run/<name>.pid    pid file of the process <name> ("serve", or the
 *                         daemon of `serve --only <name>`), held with an
 *                         exclusive lock (open file description lock) while it runs: the lock, not
 * the file's existence, says the process is up (a pid file left by a crash is taken over)
 *   DIR/run/serve.state   what a running serve publishes for `volsched status`
 *                         (listen address, job cache fill), rewritten atomically
 *   DIR/stop_sched        BOINC-COMPAT: the scheduler answers "down for
 *                         maintenance" while it exists
 *   DIR/stop_daemons      BOINC-COMPAT: the back-end daemons pause while it exists
 *   DIR/log/<name>.log    the process's log (log.h)
 */
#ifndef VOLSCHED_SERVER_PROC_CTL_H
#define VOLSCHED_SERVER_PROC_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "volsched/error.h"

struct vs_pidlock;

/*
 * Takes DIR/run/<name>.pid (creating DIR/run/): locks it and writes this
 * process's pid. Returns 0 and *out (release with vs_pidlock_release), or
 * VS_EBUSY when another process holds it (*out_other_pid is its pid, 0 if
 * unreadable), or -errno.
 */
VS_MUST_CHECK int vs_pidlock_acquire(const char *dir, const char *name, struct vs_pidlock **out,
                                     pid_t *out_other_pid);
/* Removes the pid file and drops the lock. NULL is a no-op. */
void vs_pidlock_release(struct vs_pidlock *p);

/*
 * Whether process <name> of project dir is running: 1 (and *out_pid) when
 * someone holds its pid file's lock, 0 when not, or -errno.
 */
VS_MUST_CHECK int vs_pidlock_probe(const char *dir, const char *name, pid_t *out_pid);

/* True when DIR/<file> exists (stop_sched, stop_daemons). */
bool vs_ctl_file_exists(const char *dir, const char *file);
/* Creates (on) or removes (off) DIR/<file>. Returns 0 or -errno. */
VS_MUST_CHECK int vs_ctl_file_set(const char *dir, const char *file, bool on);

/*
 * Checks that dir is a directory this process can create files in, by
 * creating and removing one. Returns 0 or -errno.
 */
VS_MUST_CHECK int vs_ctl_check_writable_dir(const char *dir);

/* What a running serve publishes (DIR/run/serve.state). */
struct vs_serve_state {
    int64_t pid;
    int64_t started;  /* UNIX time */
    int64_t updated;  /* UNIX time of this snapshot */
    char listen[300]; /* "127.0.0.1:8080" */
    int64_t cache_present, cache_slots;
    int64_t rpcs, jobs_sent;
    int64_t daemons; /* bit set of the daemons it runs (daemons.h) */
};

/* Writes st to DIR/run/serve.state (temporary file + rename). */
VS_MUST_CHECK int vs_serve_state_write(const char *dir, const struct vs_serve_state *st);
/* Reads DIR/run/serve.state; VS_ENOTFOUND if there is none. */
VS_MUST_CHECK int vs_serve_state_read(const char *dir, struct vs_serve_state *out);

#endif
