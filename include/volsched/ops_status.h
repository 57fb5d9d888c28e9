/*
 * The figures of a project's status, read the same way by `volsched status`,
 * server_status.php and the /ops/ dashboard, so that all three agree: the
 * store's counts, per app figures, whether the server and each daemon run
 * (pid file locks, proc_ctl.h), the stop files, and the job cache fill a
 * running serve publishes.
 */
#ifndef VOLSCHED_SERVER_OPS_STATUS_H
#define VOLSCHED_SERVER_OPS_STATUS_H

#include <stdbool.h>
#include <stdint.h>

#include "volsched/buf.h"
#include "volsched/daemons.h"
#include "volsched/proc_ctl.h"
#include "volsched/store.h"
#include "volsched/store_credit.h"
#include "volsched/store_ops.h"

#define VS_OPS_MAX_APPS 64

/* BOINC-COMPAT: server_status.php's words for a daemon. */
enum vs_daemon_run { VS_RUN_NOT_RUNNING = 0, VS_RUN_RUNNING, VS_RUN_DISABLED };

struct vs_ops_status {
    int64_t now;
    char name[VS_NAME_MAX]; /* the project's long name */
    bool server_up;
    int64_t server_pid;
    struct vs_serve_state serve; /* zeroed when the server is down */
    bool stop_sched, stop_daemons;
    struct {
        struct vs_daemon_status st; /* the store's row (zeroed if it never ran) */
        int run;                    /* enum vs_daemon_run */
        int64_t pid;                /* the process running it, 0 if none */
    } daemons[VS_NDAEMONS];
    struct vs_store_counts counts;
    struct vs_credit_counts credit; /* users and computers with credit */
    int64_t ready_to_send;          /* results UNSENT */
    int64_t in_progress;            /* results IN_PROGRESS */
    int64_t need_validate;          /* workunits */
    int64_t need_assimilate;        /* workunits */
    int64_t oldest_unsent;          /* create time, 0 = none */
    int napps;
    struct vs_app_counts apps[VS_OPS_MAX_APPS];
    struct vs_assignment_counts asg; /* assigned work by kind (seed 003) */
};

/*
 * Fills *out for project dir (name = its long name) from store s at time
 * now. Returns 0 or a store error.
 */
VS_MUST_CHECK int vs_ops_status_collect(const char *dir, const char *name, struct vs_store *s,
                                        int64_t now, struct vs_ops_status *out);

/* The status as one JSON object (`volsched status --json`). */
VS_MUST_CHECK int vs_ops_status_json(const struct vs_ops_status *st, const char *dir,
                                     struct vs_buf *out);
/* BOINC-COMPAT: server_status.php?xml=1 (<server_status>). */
VS_MUST_CHECK int vs_ops_status_xml(const struct vs_ops_status *st, struct vs_buf *out);
/* server_status.php: the same figures as an HTML page. */
VS_MUST_CHECK int vs_ops_status_html(const struct vs_ops_status *st, struct vs_buf *out);

/* BOINC's names of the stored enum values (index = value; "" = unused). */
extern const char *const vs_ops_state_names[6];
extern const char *const vs_ops_outcome_names[8];
extern const char *const vs_ops_validate_names[6];
/* Assigned work's kinds, [target_type][multi] ("" = no such kind). */
extern const char *const vs_ops_assign_kinds[4][2];

struct vs_page;
/* The server, work and per app tables (HTML) that the status page and the
 * dashboard share; element ids v-* carry the figures for tests. */
void vs_ops_status_tables(struct vs_page *p, const struct vs_ops_status *st);

/* "running", "not running" or "disabled". */
const char *vs_daemon_run_name(int run);

#endif
