/*
 * Helpers shared by the back-end daemons (validator, assimilator, file
 * deleter): the files a workunit or result names, and running an
 * operator's command with a time limit.
 */
#ifndef VOLSCHED_SERVER_DAEMON_UTIL_H
#define VOLSCHED_SERVER_DAEMON_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "volsched/alloc.h"
#include "volsched/config.h"
#include "volsched/error.h"
#include "volsched/store.h"

struct vs_log;
struct vs_store;

#define VS_DAEMON_MAX_FILES 64 /* files of one workunit or result we handle */

/* One <file_info> of a workunit's xml_doc or a result's xml_doc_in. */
struct vs_daemon_file {
    const char *name;      /* physical name (arena) */
    const char *open_name; /* the <file_ref>'s open_name, "" if none (arena) */
    bool no_delete;        /* <no_delete/> */
    const char *md5_cksum; /* "" if none (arena) */
    const char *url;       /* the first <url>, "" if none (arena) */
    double nbytes;         /* 0 if none */
};

/*
 * Lists the <file_info>s of xml (a workunit xml_doc or result xml_doc_in,
 * a sequence of elements without one root), with the open names of the
 * <result> or <workunit> file_refs. Strings live in arena. At most
 * VS_DAEMON_MAX_FILES into files[]; *out_n is the count. VS_EPARSE on
 * malformed XML or a <file_info> without a safe <name> (no '/', not "."
 * or ".."), VS_ELIMIT on too many files.
 */
VS_MUST_CHECK int vs_daemon_files(const char *xml, struct vs_arena *arena,
                                  struct vs_daemon_file *files, size_t *out_n);

/* True when name is a plain file name: not empty, no '/', not "." or "..". */
bool vs_daemon_safe_name(const char *name);

/*
 * Runs cmdline (split at blanks; no shell, no quoting) followed by
 * args[0..nargs) with stdin from /dev/null and stdout to stderr, and waits
 * at most timeout seconds (<= 0: no limit) before killing it. Returns 0
 * with the exit status in *out_status, VS_ETIMEOUT if it was killed for
 * taking too long, VS_EIO if it died of a signal or could not be started
 * (-errno of the spawn is logged), VS_EINVAL for an empty command.
 */
VS_MUST_CHECK int vs_daemon_run(const char *cmdline, const char *const *args, size_t nargs,
                                int timeout, struct vs_log *log, int *out_status);

/* Formats into buf (size n, always terminated) like snprintf; a message
 * that does not fit is cut. For the daemons' last_error strings. */
void vs_daemon_msg(char *buf, size_t n, const char *fmt, ...) VS_PRINTF(3, 4);

#endif

/*
 * What every daemon pass carries (first member of each daemon's own pass
 * state): its inputs and an arena the daemon resets per item.
 */
struct vs_daemon_pass {
    struct vs_store *s;
    const struct vs_project_config *cfg;
    int64_t now;
    struct vs_log *log;
    struct vs_arena arena;
};

/*
 * Starts a pass: VS_EINVAL (and nothing set up) without a store or config,
 * else fills d and sets up its arena (allocates nothing yet) and returns 0.
 */
VS_MUST_CHECK int vs_daemon_pass_begin(struct vs_daemon_pass *d, struct vs_store *s,
                                       const struct vs_project_config *cfg, int64_t now,
                                       struct vs_log *log);

/*
 * Ends a pass started with vs_daemon_pass_begin: frees the arena and, when
 * rc is an error and last_error is not NULL, writes its message there.
 * Returns rc when it is not 0, else count (what the pass did).
 */
int vs_daemon_pass_end(struct vs_daemon_pass *d, int rc, int count, char *last_error,
                       size_t last_error_size);

/*
 * Ends the transaction a daemon began for one item: commits when rc is 0
 * and returns the commit's result, else rolls back and returns rc.
 */
VS_MUST_CHECK int vs_daemon_txn_end(struct vs_store *s, int rc);

/* What happened to a host's result, for its quota record. */
enum vs_hav_event {
    VS_HAV_TIMEOUT, /* the transitioner timed it out (NO_REPLY) */
    VS_HAV_VALID,   /* the validator found it valid */
    VS_HAV_INVALID, /* the validator found it invalid */
};

/*
 * BOINC-COMPAT: adjusts the host_app_version record of (hostid,
 * app_version_id) as BOINC's transitioner (result_timed_out) and validator
 * (is_valid / is_invalid) do, with quota = daily_result_quota (<= 0: only
 * consecutive_valid and turnaround move). A timeout adds a turnaround
 * sample of delay_bound. No-op for hostid or app_version_id 0. Runs inside
 * the caller's transaction.
 */
VS_MUST_CHECK int vs_daemon_hav_event(struct vs_store *s, int64_t hostid, int64_t app_version_id,
                                      int quota, enum vs_hav_event ev, double delay_bound);

/* Copies file src to dst (mode 0644, through a temporary beside it) and
 * fsyncs it (vs_fs_copy_file). */
VS_MUST_CHECK int vs_daemon_copy_file(const char *src, const char *dst, double *out_nbytes);

/* Writes len bytes of data as path (vs_fs_write_atomic: through a temporary
 * beside it) and fsyncs it. */
VS_MUST_CHECK int vs_daemon_write_file(const char *path, const char *data, size_t len);

/* fsyncs directory path, so the names made in it are durable. */
VS_MUST_CHECK int vs_daemon_sync_dir(const char *path);
