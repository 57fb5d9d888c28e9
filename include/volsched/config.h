/*
 * The project's configuration: ONE module reads and writes it (src/config/).
 *
 *   DIR/config.xml       <boinc><config>...</config><tasks/><daemons/></boinc>
 *   DIR/config_aux.xml   <config><max_jobs_in_progress>...</config>
 *
 * (BOINC-COMPAT: both formats and every tag name are BOINC's, except
 * <store_url>, <validator> and <assimilator>, which are volsched's.)
 *
 * Every command and daemon gets its configuration from vs_project_config_load
 * (serve and the daemons it runs, create_work, status, app/user/team add;
 * the CLI through vs_cli_load_project): one table of tags, one parse, one
 * error type. A bad value, a value of
 * the wrong type or malformed XML is an error naming file, line and reason
 * (struct vs_config_error). A tag volsched does not know is not an error
 * (projects carry BOINC's hundreds of tags over): it is a warning
 * "config.xml:12: unknown tag <dbname> ignored", logged at VS_LOG_WARN on
 * the caller's log. BOINC's own tags are in the table too: those with no
 * meaning here (db_host, shmem_key, ...) are accepted quietly (K_IGNORED),
 * those volsched does not implement (K_UNSUPPORTED) are named in one
 * warning per file, "config.xml: BOINC option not supported, ignored:
 * <nowork_skip> (line 50), ...". `volsched init` writes config.xml with
 * vs_project_config_write, from the same table.
 *
 * The directory layout derived from the configuration (the download/upload
 * fan-out hierarchy, file paths and URLs) is volsched/layout.h.
 *
 * How to add a tag (src/config/config_tags.c):
 *   1. add its field to struct vs_project_config below (a comment naming the
 *      tag and its default), and set a default other than 0 in
 *      vs_project_config_init (src/config/config.c);
 *   2. add one row to the table in src/config/config_tags.c:
 *          {"next_rpc_delay", K_INT, F(next_rpc_delay), 0, 0, 0},
 *      with its kind (K_BOOL, K_INT with min/max, K_LLONG, K_STR,
 *      K_PATH, K_STRLIST ...: src/config/config_int.h), bounds, and W
 *      (VS_CONFIG_WRITTEN) in the last column when `volsched init` should
 *      write it into a new config.xml (rows with W come first, in the order
 *      they are written).
 *   That is all: the reader then accepts, checks and stores it (errors with
 *   file:line come from the kind and bounds), the writer writes it, and no
 *   command warns about it any more. A tag that takes a new kind of value
 *   needs a case in set_tag() (config.c) and, if written, in the writer.
 *   config_aux.xml's sections are read by src/config/config_aux.c.
 */
#ifndef VOLSCHED_CONFIG_H
#define VOLSCHED_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "volsched/error.h"
#include "volsched/log.h"
#include "volsched/server_policy.h"
#include "volsched/str.h"

#define VS_CONFIG_MAX_FILE (1024u * 1024u) /* bytes of one config file */
#define VS_URL_MAX         512
#define VS_CMD_MAX         512 /* an operator's command line (config.xml) */
#define VS_MAX_APP_CONFIGS 8   /* <validator> / <assimilator> blocks */
#define VS_CONFIG_LIST_MAX 32  /* entries of a repeatable tag */

/* BOINC-COMPAT: make_project's default fanout. */
#define VS_DEFAULT_FANOUT 1024

/* What went wrong reading a configuration file, and where. */
struct vs_config_error {
    char file[256]; /* the file's name as given ("config.xml" or a path) */
    unsigned line;  /* 1-based; 0 when the file could not be read at all */
    char msg[256];  /* "<daily_result_quota> must not be negative (-3)" */
};

/* How the validator compares results (config.xml <validator><method>). */
enum vs_validate_method {
    VS_VALIDATE_BITWISE = 0, /* "bitwise": output files byte for byte equal (default) */
    VS_VALIDATE_ALWAYS = 1,  /* "always_valid": every result that reached it is valid */
    VS_VALIDATE_COMMAND = 2, /* "command": the operator's programs decide */
};

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
    /* <credit>: how valid results earn credit (enum vs_credit_method in
     * volsched/credit.h): adaptive (default), flops or fixed. */
    int credit;
};

/* One <assimilator> block of config.xml (volsched; see docs/daemons.md). */
struct vs_assimilator_config {
    char app[VS_NAME_MAX];    /* <app>: "" = every app without its own block */
    char command[VS_CMD_MAX]; /* <command>: "" = copy outputs into DIR/results/<wu>/ */
};

/* A repeatable tag's values, in file order. */
struct vs_config_list {
    char v[VS_CONFIG_LIST_MAX][VS_NAME_MAX];
    int n;
};

/*
 * The whole configuration of one project: a plain value (no heap), so a
 * program keeps one copy in its context and hands out const pointers.
 * Tags absent from the file keep the defaults of vs_project_config_init.
 */
struct vs_project_config {
    char dir[VS_PATH_MAX]; /* absolute project directory (not in config.xml) */

    /* project identity, files and URLs */
    char long_name[VS_NAME_MAX];    /* <long_name> */
    char master_url[VS_URL_MAX];    /* <master_url>, ends in '/' */
    char download_url[VS_URL_MAX];  /* <download_url>, no trailing '/' */
    char upload_url[VS_URL_MAX];    /* <upload_url>: the file upload handler */
    char cgi_url[VS_URL_MAX];       /* <cgi_url>, ends in '/'; scheduler = cgi_url + "cgi" */
    char download_dir[VS_PATH_MAX]; /* <download_dir>, absolute (relative = under dir) */
    char upload_dir[VS_PATH_MAX];   /* <upload_dir>, absolute */
    char key_dir[VS_PATH_MAX];      /* <key_dir>, absolute */
    char store_url[VS_URL_MAX];     /* <store_url> (volsched): sqlite:DIR/volsched.db */
    int uldl_dir_fanout;            /* <uldl_dir_fanout>, 0..65536; default 1024 */

    /* Work-send rules and job limits (config.xml and config_aux.xml;
     * docs/server-policy.md); defaults vs_sp_config_defaults'. */
    struct vs_sp_config policy;

    /* scheduler RPC behaviour */
    int min_sendwork_interval;              /* <min_sendwork_interval> seconds; 0 = none */
    int next_rpc_delay;                     /* <next_rpc_delay> seconds; 0 = none */
    int maintenance_delay;                  /* <maintenance_delay> seconds; default 3600 */
    int report_grace_period;                /* <report_grace_period> seconds; default 3600 */
    int delete_delay_hours;                 /* <delete_delay_hours> */
    int report_max;                         /* <report_max> results per RPC; 0 = all */
    bool resend_lost_results;               /* <resend_lost_results>; default 1 */
    bool send_result_abort;                 /* <send_result_abort> */
    bool dont_send_jobs;                    /* <dont_send_jobs> */
    bool dont_generate_upload_certificates; /* <dont_generate_upload_certificates> */

    /* hostile volunteers (docs/security.md) */
    int failed_auth_burst;    /* <failed_auth_burst> wrong keys per address at once; 20, 0 = off */
    int failed_auth_per_hour; /* <failed_auth_per_hour> then this many an hour; default 60 */
    char https_cert[VS_PATH_MAX]; /* <https_cert> PEM certificate (chain); "" = no HTTPS */
    char https_key[VS_PATH_MAX];  /* <https_key> its PEM private key */
    int https_port;               /* <https_port> the HTTPS listener's; 0 = any free port */
    /* <https_only>: the plain listener serves only the master page,
     * get_project_config.php and downloads (docs/server.md) */
    bool https_only;
    /* <ops_listen> HOST:PORT: /ops/ and /metrics on this listener only
     * (plain HTTP; keep it private); "" = on the public ones */
    char ops_listen[VS_NAME_MAX];
    /* the HTTP front end's limits (docs/server.md "Limits") */
    int http_head_timeout;        /* <http_head_timeout> s for a request head; 30 */
    int http_idle_timeout;        /* <http_idle_timeout> s without traffic; 60 */
    int http_body_min_rate;       /* <http_body_min_rate> bytes/s; 100, 0 = off */
    int http_max_per_address;     /* <http_max_per_address> connections; 32, 0 = off */
    int http_max_connections;     /* <http_max_connections>; 0 = from the open-file limit */
    int submit_max_request_mb;    /* <submit_max_request_mb> remote submission request cap; 64 */
    bool batch_tail_acceleration; /* <batch_tail_acceleration> submitted batches' tails; 1 */
    struct vs_config_list trusted_proxy; /* <trusted_proxy> address or prefix, repeatable */
    /* <job_lease_secs> how long a serve instance's job cache holds a result
     * for itself in the store (docs/scale-out.md); 60 */
    int job_lease_secs;
    /* <sched_writers> the scheduler's writer connections, each with its own
     * group commit; more than 1 needs PostgreSQL (docs/scale-out.md); 1 */
    int sched_writers;

    /* volunteers' accounts (issue 36; docs/volunteers.md, docs/operating.md) */
    bool disable_account_creation; /* <disable_account_creation>: no new accounts */
    /* <disable_account_creation_rpc>: none through create_account.php */
    bool disable_account_creation_rpc;
    bool disable_web_account_creation; /* <disable_web_account_creation>: none on the site */
    bool disable_team_creation;        /* <disable_team_creation>: no new teams */
    int min_passwd_length;             /* <min_passwd_length> for the web site's sign-up; 6 */
    /* <enable_delete_account> BOINC's method number: 0 the site offers no
     * deletion (BOINC's default), 1 "obfuscate" (vs_store_user_delete);
     * BOINC's 2 "wipe" and 3 "project-defined" are refused when read */
    int enable_delete_account;
    /* <invite_code> repeatable: with any, creating an account needs one of
     * them (BOINC's INVITE_CODES) */
    struct vs_config_list invite_code;
    int account_rpc_burst;    /* <account_rpc_burst> account RPCs per address at once; 30 */
    int account_rpc_per_hour; /* <account_rpc_per_hour> then this many an hour; 120 */

    /* assigned work (seed 003) */
    bool enable_assignment;       /* <enable_assignment>; default 1 */
    bool enable_assignment_multi; /* <enable_assignment_multi>; default 1 */

    /* locality scheduling (seed 001) */
    bool locality_scheduling;              /* <locality_scheduling> */
    bool locality_scheduling_sorted_order; /* <locality_scheduling_sorted_order> */
    int locality_scheduling_wait_period;   /* <locality_scheduling_wait_period> s, 0 = off */
    /* volsched (docs/locality.md): locality scheduling lite for every app
     * (BOINC sets it per app: app.locality_scheduling = 1), and the two
     * locality daemons serve runs beside itself. */
    bool locality_scheduling_lite;         /* <locality_scheduling_lite> */
    char locality_gen_command[VS_CMD_MAX]; /* <locality_gen><command>: "" = not run */
    int locality_ws_files;                 /* <locality_ws><files>: 0 = not run */

    /* the back-end daemons (docs/daemons.md) */
    int reliable_priority_on_over;              /* <reliable_priority_on_over> */
    int reliable_priority_on_over_except_error; /* <reliable_priority_on_over_except_error> */
    bool hr_class_static;                       /* <hr_class_static> */
    int daemon_command_timeout; /* <daemon_command_timeout> s, operator commands; default 600 */
    char trickle_handler[VS_PATH_MAX]; /* <trickle_handler>: command per trickle-up; "" none */
    int validator_retry_secs;    /* <validator_retry_secs>: transient failure; default 21600 */
    int assimilator_retry_secs;  /* <assimilator_retry_secs>: failed assimilation; default 600 */
    int file_deleter_retry_secs; /* <file_deleter_retry_secs>: failed deletions; default 3600 */
    int db_dump_interval_hours;  /* <db_dump_interval_hours>: statistics exports; 24, 0 never */
    int update_stats_interval_hours; /* <update_stats_interval_hours>: decay; 24, 0 never */
    struct vs_validator_config validators[VS_MAX_APP_CONFIGS]; /* <validator> blocks */
    int nvalidators;
    struct vs_assimilator_config assimilators[VS_MAX_APP_CONFIGS]; /* <assimilator> blocks */
    int nassimilators;
};

/*
 * Sets every field to the value a tag absent from config.xml has (BOINC's
 * defaults), with no directory, paths or URLs. vs_project_config_parse reads
 * on top of it.
 */
void vs_project_config_init(struct vs_project_config *cfg);

/*
 * The configuration `volsched init` gives a new project in dir (absolute or
 * relative: it is made absolute) named name, served at url (e.g.
 * "http://127.0.0.1:8080/myproj/"; a missing trailing '/' is added): the
 * defaults, the layout of paths and URLs (volsched/layout.h), and one choice
 * of a new project's own (<one_result_per_user_per_wu> on). VS_EINVAL for an
 * empty dir or url, VS_ELIMIT if a path or URL does not fit.
 */
VS_MUST_CHECK int vs_project_config_defaults(struct vs_project_config *cfg, const char *dir,
                                             const char *name, const char *url);

/*
 * Reads DIR/config.xml (required) and DIR/config_aux.xml (optional) into
 * *out: the defaults, the layout derived from DIR, then both files in one
 * call. Each unknown tag is logged as a warning "FILE:LINE: unknown tag <x>
 * ignored" on log (NULL: not reported). Returns 0; VS_ENOTFOUND when there is
 * no config.xml (not a project directory); VS_ECONFIG (bad value), VS_EPARSE
 * (malformed XML), VS_ELIMIT (too large) or -errno (unreadable). On every
 * error *out_err (may be NULL) names the file (DIR/config.xml or
 * DIR/config_aux.xml), the line (0 when the file as a whole is at fault) and
 * the reason; *out is written only on success.
 */
VS_MUST_CHECK int vs_project_config_load(const char *dir, struct vs_log *log,
                                         struct vs_project_config *out,
                                         struct vs_config_error *out_err);

/*
 * Parses config.xml text data[0..len) into cfg, on top of what cfg holds
 * (relative paths are taken relative to cfg->dir). filename is only used in
 * messages (NULL: "config.xml"). Warnings go to log as above. Returns 0, or
 * VS_ECONFIG, VS_EPARSE or VS_ELIMIT with *out_err (may be NULL) filled; cfg
 * may then hold some of the file's values.
 */
VS_MUST_CHECK int vs_project_config_parse(struct vs_project_config *cfg, const char *data,
                                          size_t len, const char *filename, struct vs_log *log,
                                          struct vs_config_error *out_err);
/* The same for config_aux.xml text: <max_jobs_in_progress> replaces the job
 * limits it names (it wins over config.xml's max_wus_in_progress). */
VS_MUST_CHECK int vs_project_config_parse_aux(struct vs_project_config *cfg, const char *data,
                                              size_t len, const char *filename, struct vs_log *log,
                                              struct vs_config_error *out_err);

/* Writes cfg as cfg->dir/config.xml (atomically: temp file + rename), every
 * tag the table marks for writing plus the <validator>/<assimilator> blocks.
 * What it writes reads back to the same values without a warning. */
VS_MUST_CHECK int vs_project_config_write(const struct vs_project_config *cfg);

/* Writes cfg->dir/config_aux.xml with seed 003's <max_jobs_in_progress>
 * section and no limits (<jobs>0</jobs>), unless the file exists: an
 * operator's limits are kept. */
VS_MUST_CHECK int vs_project_config_write_aux(const struct vs_project_config *cfg);

/* The <validator> block for app (its own, else the one without <app>, else
 * a static bitwise default). Never NULL. */
const struct vs_validator_config *vs_project_validator(const struct vs_project_config *cfg,
                                                       const char *app);
/* The <assimilator> block for app, like vs_project_validator (default: copy). */
const struct vs_assimilator_config *vs_project_assimilator(const struct vs_project_config *cfg,
                                                           const char *app);

/* "file:line: msg" (or "file: msg" when line is 0) into dst of size n. */
void vs_config_error_format(const struct vs_config_error *e, char *dst, size_t n);

#endif
