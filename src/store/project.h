/*
 * A project directory: its config.xml (BOINC's layout) and the paths and URLs
 * derived from it. Used by `volsched init`, the admin tools and the server.
 *
 *   DIR/config.xml       <boinc><config>...</config></boinc>  (BOINC-COMPAT)
 *   DIR/config_aux.xml   <config><max_jobs_in_progress>...     (BOINC-COMPAT)
 *   DIR/templates/       <app>_in, <app>_out
 *   DIR/download/        fanout hierarchy of app and input files
 *   DIR/upload/          fanout hierarchy of uploaded outputs
 *   DIR/keys/            code_sign_private/_public, upload_private/_public
 *   DIR/html/index.html  the master page
 *   DIR/locality_scheduling/need_work/   trigger files (seed 001)
 *   DIR/volsched.db      the embedded store (config <store_url>)
 */
#ifndef VOLSCHED_STORE_PROJECT_H
#define VOLSCHED_STORE_PROJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"
#include "volsched/config.h"
#include "volsched/error.h"
#include "volsched/server_policy.h"

#define VS_URL_MAX 512

/* BOINC-COMPAT: make_project's default fanout. */
#define VS_DEFAULT_FANOUT 1024

/* How the validator compares results (config.xml <validator><method>). */
enum vs_validate_method {
    VS_VALIDATE_BITWISE = 0, /* "bitwise": output files byte for byte equal (default) */
    VS_VALIDATE_ALWAYS = 1,  /* "always_valid": every result that reached it is valid */
    VS_VALIDATE_COMMAND = 2, /* "command": the operator's programs decide */
};

#define VS_CMD_MAX         512 /* an operator's command line (config.xml) */
#define VS_MAX_APP_CONFIGS 8   /* <validator> / <assimilator> blocks */

/* One <validator> block of config.xml (volsched; see docs/daemons.md). */
struct vs_validator_config {
    char app[VS_NAME_MAX]; /* <app>: "" = every app without its own block */
    int method;            /* enum vs_validate_method */
    /* <command>: run with one result's output file paths; exit 0 valid, 1
     * invalid, anything else (or a crash or time-out) retried later. */
    char command[VS_CMD_MAX];
    /* <compare_command>: run with result A's paths, "--", result B's paths;
     * exit 0 equivalent, 1 different, else retried later. Without it, command
     * mode compares bitwise after command accepted each result. */
    char compare_command[VS_CMD_MAX];
};

/* One <assimilator> block of config.xml (volsched; see docs/daemons.md). */
struct vs_assimilator_config {
    char app[VS_NAME_MAX];    /* <app>: "" = every app without its own block */
    char command[VS_CMD_MAX]; /* <command>: "" = copy outputs into DIR/results/<wu>/ */
};

struct vs_project_config {
    char dir[VS_PATH_MAX];          /* absolute project directory (not in config.xml) */
    char long_name[VS_NAME_MAX];    /* <long_name> */
    char master_url[VS_URL_MAX];    /* <master_url>, ends in '/' */
    char download_url[VS_URL_MAX];  /* <download_url>, no trailing '/' */
    char upload_url[VS_URL_MAX];    /* <upload_url>: the file upload handler */
    char cgi_url[VS_URL_MAX];       /* <cgi_url>, ends in '/'; scheduler = cgi_url + "cgi" */
    char download_dir[VS_PATH_MAX]; /* <download_dir>, absolute */
    char upload_dir[VS_PATH_MAX];   /* <upload_dir>, absolute */
    char key_dir[VS_PATH_MAX];      /* <key_dir>, absolute */
    char store_url[VS_URL_MAX];     /* <store_url> (volsched): sqlite:DIR/volsched.db */
    int uldl_dir_fanout;            /* <uldl_dir_fanout> */
    bool enable_assignment;         /* <enable_assignment> */
    bool enable_assignment_multi;   /* <enable_assignment_multi> */
    /* Work-send rules and job limits (config.xml and config_aux.xml, read
     * by vs_config_load; docs/server-policy.md). */
    struct vs_sp_config policy;
    int min_sendwork_interval;              /* <min_sendwork_interval> seconds */
    int report_grace_period;                /* <report_grace_period> seconds */
    int delete_delay_hours;                 /* <delete_delay_hours> */
    bool dont_generate_upload_certificates; /* <dont_generate_upload_certificates> */
    bool locality_scheduling;               /* <locality_scheduling> (seed 001) */
    int locality_scheduling_wait_period;    /* <locality_scheduling_wait_period> s, 0 = off */
    bool locality_scheduling_sorted_order;  /* <locality_scheduling_sorted_order> */
    /* Locality daemons run by serve (docs/locality.md): the on-demand work
     * generator's command ("" = not run) and the working-set target
     * (0 = not run). */
    char locality_gen_command[VS_CMD_MAX];
    int locality_ws_files;
    /* Back-end daemons (issue 6; docs/daemons.md). */
    int reliable_priority_on_over;              /* <reliable_priority_on_over> */
    int reliable_priority_on_over_except_error; /* <reliable_priority_on_over_except_error> */
    bool hr_class_static;                       /* <hr_class_static> */
    int daemon_command_timeout;  /* <daemon_command_timeout> s, operator commands; default 600 */
    int validator_retry_secs;    /* <validator_retry_secs>: transient failure; default 21600 */
    int assimilator_retry_secs;  /* <assimilator_retry_secs>: failed assimilation; default 600 */
    int file_deleter_retry_secs; /* <file_deleter_retry_secs>: failed deletions; default 3600 */
    struct vs_validator_config validators[VS_MAX_APP_CONFIGS];
    int nvalidators;
    struct vs_assimilator_config assimilators[VS_MAX_APP_CONFIGS];
    int nassimilators;
};

/* The <validator> block for app (its own, else the one without <app>, else
 * a static bitwise default). Never NULL. */
const struct vs_validator_config *vs_project_validator(const struct vs_project_config *cfg,
                                                       const char *app);
/* The <assimilator> block for app, like vs_project_validator (default: copy). */
const struct vs_assimilator_config *vs_project_assimilator(const struct vs_project_config *cfg,
                                                           const char *app);

/*
 * Fills cfg with the defaults for a project in dir (absolute or relative:
 * it is made absolute) named name, served at url (e.g.
 * "http://127.0.0.1:8080/myproj/"; a missing trailing '/' is added).
 */
VS_MUST_CHECK int vs_project_config_defaults(struct vs_project_config *cfg, const char *dir,
                                             const char *name, const char *url);

/* Writes cfg as DIR/config.xml (atomically: temp file + rename). */
VS_MUST_CHECK int vs_project_config_write(const struct vs_project_config *cfg);

/*
 * Reads DIR/config.xml. Unknown tags are ignored (BOINC has hundreds);
 * missing ones keep their defaults. VS_ENOTFOUND if there is no
 * config.xml (not a project directory), VS_EPARSE if it is malformed.
 */
VS_MUST_CHECK int vs_project_config_load(const char *dir, struct vs_project_config *out);

/*
 * The same, for `volsched serve`: config.xml and config_aux.xml are read
 * through vs_config_load (include/volsched/config.h), so a bad value is an
 * error with file, line and reason in *out_err (may be NULL), and each tag
 * volsched does not know is logged as a warning on log (may be NULL).
 * Fills out->policy. Returns 0, VS_ENOTFOUND (no config.xml), VS_ECONFIG,
 * VS_EPARSE, VS_ELIMIT or -errno.
 */
VS_MUST_CHECK int vs_project_config_load_checked(const char *dir, struct vs_log *log,
                                                 struct vs_project_config *out,
                                                 struct vs_config_error *out_err);

/*
 * BOINC-COMPAT dir_hier_path: the relative location of file name inside a
 * fanout hierarchy: "<hex(H mod fanout)>/<name>" where H is the value of
 * hex digits 1..7 of md5(name); plain "<name>" when fanout is 0. Writes
 * into out (size outsize); VS_ELIMIT if it does not fit.
 */
VS_MUST_CHECK int vs_project_hier_rel(int fanout, const char *name, char *out, size_t outsize);

/*
 * The absolute path of name in the download (or upload) hierarchy, creating
 * the fanout directory when mkdir is true.
 */
VS_MUST_CHECK int vs_project_download_path(const struct vs_project_config *cfg, const char *name,
                                           bool mkdir, char *out, size_t outsize);
VS_MUST_CHECK int vs_project_upload_path(const struct vs_project_config *cfg, const char *name,
                                         bool mkdir, char *out, size_t outsize);

/* The download URL of name: <download_url>/<hier_rel(name)>. */
VS_MUST_CHECK int vs_project_download_url(const struct vs_project_config *cfg, const char *name,
                                          char *out, size_t outsize);

/* The scheduler URL: <cgi_url>cgi (BOINC-COMPAT). */
VS_MUST_CHECK int vs_project_scheduler_url(const struct vs_project_config *cfg, char *out,
                                           size_t outsize);

/* Opens the project's store (cfg->store_url), creating it when create is true. */
VS_MUST_CHECK int vs_project_store_open(const struct vs_project_config *cfg, bool create,
                                        struct vs_log *log, struct vs_store **out_store);

#endif
