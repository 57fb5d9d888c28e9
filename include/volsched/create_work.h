/*
 * create_work as a library call (BOINC's tools/create_work.cpp +
 * backend_lib.cpp): validate every job, stage its input files into the
 * download hierarchy, and insert the workunits (and assignment rows) in ONE
 * transaction. If anything is wrong nothing is written: no row, and no file
 * left in the download hierarchy that was not there before.
 *
 * No results are created here (BOINC-COMPAT): normal workunits get
 * transition_time = now and the transitioner creates their results;
 * targeted workunits (TRANSITION_NO_NEW_RESULTS) and broadcast workunits
 * (TRANSITION_NONE) get transition_time = never and an assignment row, and
 * the scheduler creates their results on demand.
 */
#ifndef VOLSCHED_SERVER_CREATE_WORK_H
#define VOLSCHED_SERVER_CREATE_WORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "volsched/config.h"
#include "volsched/error.h"
#include "volsched/store.h"

struct vs_log;

/* An optional numeric setting: applied only when set (flags beat templates). */
struct vs_cw_opt {
    bool set;
    double v;
};

/* An input hosted elsewhere (--remote_file URL NBYTES MD5): not staged; the
 * client downloads it from url. BOINC-COMPAT: its name is jf_<md5>. */
struct vs_cw_remote {
    const char *url; /* NULL: this input is a local file or a staged name */
    double nbytes;
    const char *md5; /* 32 hex digits */
};

/* What one job (workunit) needs; the per-line part of --stdin. */
struct vs_cw_job {
    const char *wu_name;         /* NULL = automatic */
    const char *wu_template;     /* path; NULL = templates/<app>_in */
    const char *result_template; /* path relative to the project; NULL = templates/<app>_out */
    const char *command_line;    /* NULL = none */
    const char *const *inputs;   /* paths of files to stage, or names already staged */
    size_t ninputs;
    const struct vs_cw_remote *remote;             /* NULL, or ninputs entries: remote[i].url set
                                                      means input i is remote (inputs[i] unused) */
    int64_t target_host, target_user, target_team; /* 0 = none */
    struct vs_cw_opt priority;
};

/* Settings shared by every job of one call (the command-line flags). */
struct vs_cw_params {
    const char *appname;
    int app_version_num; /* 0 = any */
    struct vs_cw_opt rsc_fpops_est, rsc_fpops_bound, rsc_memory_bound, rsc_disk_bound;
    struct vs_cw_opt delay_bound;
    struct vs_cw_opt min_quorum, target_nresults, max_error_results, max_total_results,
        max_success_results;
    struct vs_cw_opt priority; /* default for jobs that do not set one */
    struct vs_cw_opt batch;
    struct vs_cw_opt credit; /* canonical_credit */
    struct vs_cw_opt hr_class;
    const char *keywords;
    const char *command_line; /* prepended to each job's command line */
    /* Broadcast: VS_ASSIGN_NONE with broadcast_all, USER, TEAM; all jobs. */
    bool broadcast_all;
    int64_t broadcast_user, broadcast_team;
    int64_t target_host, target_user, target_team; /* defaults for every job */
    struct vs_cw_opt rsc_bandwidth_bound;
    /* --no_transition: the workunits are held (transition_time = never), so
     * no transitioner makes their results until they are released
     * (vs_store_workunits_release, `volsched release`). Normal jobs only. */
    bool hold;
    /* --continue_on_error: a job that fails its checks (or whose name is
     * taken) is skipped and reported through on_skip; the others are made.
     * Otherwise one bad job makes nothing at all. */
    bool continue_on_error;
    void (*on_skip)(void *ctx, size_t jobno, const char *msg);
    void *skip_ctx;
    /* --follow-symlinks: an input given by path may be, or pass through, a
     * symbolic link. Off (the default), such an input is refused with a
     * message naming the link (vs_cw_open_input, cw_stage.h): create_work
     * publishes what it stages, and a link planted where the operator
     * takes inputs from could point at any file the operator may read. */
    bool follow_symlinks;
    /* Every input given by name is a file already in the download
     * hierarchy, never a path read from the server's file system (the
     * remote submission API: a scientist names files, and "config.xml" or
     * "/etc/passwd" must not be read and published). A name with a '/' is
     * refused. */
    bool staged_only;
};

/* One created workunit (for the caller to print). */
struct vs_cw_created {
    int64_t id; /* 0: skipped (continue_on_error) */
    char name[VS_NAME_MAX];
};

/*
 * Creates njobs workunits. now is the creation time (and transition_time of
 * normal workunits). On success *out_created (njobs entries, caller frees
 * with vs_free) lists them. Durable when it returns: the staged files are
 * synced once (syncfs) and the store's commit is synced, one sync each per
 * call whatever njobs is. Linear in njobs. On failure returns VS_EINVAL (bad flags or
 * replication numbers, a workunit name beginning with '-', an input
 * through a symbolic link without follow_symlinks), VS_ENOTFOUND (unknown
 * app, target, input file or template; or an input the file deleter
 * removed while the call ran: checked after the insert, before the
 * commit), VS_EEXISTS (duplicate WU name, or an input whose name is
 * staged with different content), VS_EPARSE (bad template), VS_ESTORE;
 * and a one-line message in err naming the job and the problem. On
 * failure the files this call staged are removed again, except those
 * something else uses by then (vs_store_file_in_use).
 */
VS_MUST_CHECK int vs_create_work(const struct vs_project_config *cfg, struct vs_store *s,
                                 const struct vs_cw_params *params, const struct vs_cw_job *jobs,
                                 size_t njobs, int64_t now, struct vs_log *log,
                                 struct vs_cw_created **out_created, char *err, size_t errsize);

/*
 * Copies src to dst through a temporary file renamed into place, so dst is
 * either absent or complete; with durable the data is synced first (the
 * rename itself is made durable by the caller's directory or fs sync).
 * Returns 0 or -errno.
 */
VS_MUST_CHECK int vs_create_work_copy(const char *src, const char *dst, bool durable);

/*
 * Marks the <file_info> named file in the stored workunit document *xml_doc
 * <sticky/> and <report_on_rpc/> (so the client keeps the file and lists
 * it in later requests), unless it says so already; *xml_doc (heap, may be
 * NULL) is replaced. Returns 0, VS_EPARSE when the document is not XML or
 * has no such <file_info>, VS_ELIMIT when the result would not fit in the
 * column (cw_sticky.c).
 */
VS_MUST_CHECK int vs_cw_mark_sticky(char **xml_doc, const char *file);

#endif
