/*
 * The project's configuration: config.xml (BOINC's layout,
 * <boinc><config>...</config></boinc>, tags spelled as BOINC spells them)
 * and config_aux.xml (<config><max_jobs_in_progress>...).
 *
 * Read once when `volsched serve` starts. An error (malformed XML, a value
 * of the wrong type, a negative limit) stops the start with the file, line
 * and reason in struct vs_config_error. A tag volsched does not know is not
 * an error (projects carry BOINC tags over): it becomes a warning in
 * c->warnings, which the caller logs.
 */
#ifndef VOLSCHED_CONFIG_H
#define VOLSCHED_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "volsched/error.h"
#include "volsched/server_policy.h"

#define VS_CONFIG_MAX_FILE (1024u * 1024u) /* bytes of one config file */

struct vs_config_error {
    char file[256]; /* the file's name as given ("config.xml" or a path) */
    unsigned line;  /* 1-based; 0 when the file could not be read at all */
    char msg[256];  /* "<daily_result_quota> must not be negative (-3)" */
};

/* One child of a block: <name>text</name> at line. */
struct vs_config_kv {
    char *name, *text; /* owned */
    unsigned line;
};

/* A block tag of config.xml (<validator>, <assimilator>) with its children. */
struct vs_config_block {
    char *tag; /* owned */
    unsigned line;
    struct vs_config_kv *kv;
    size_t n_kv;
};

/* A list of owned strings (repeatable tags). */
struct vs_strlist {
    char **v;
    size_t n;
};

struct vs_config {
    /* project identity and files (NULL when not set) */
    char *master_url, *long_name;
    char *download_url, *upload_url;
    char *download_dir, *upload_dir, *key_dir;
    char *cgi_url;       /* scheduler and upload handler live under it */
    char *store_url;     /* volsched: "sqlite:DIR/volsched.db" or a PostgreSQL URL */
    int uldl_dir_fanout; /* default 1024 */

    /* scheduler RPC behaviour */
    int min_sendwork_interval; /* seconds; 0 = none */
    int next_rpc_delay;        /* seconds; 0 = none */
    int maintenance_delay;     /* seconds; default 3600 */
    int report_grace_period;   /* seconds added to deadlines in the store */
    int delete_delay_hours;
    int report_max;        /* reported results handled per RPC; 0 = all */
    int shmem_work_items;  /* job cache slots; default 100 */
    int feeder_query_size; /* default 2 x shmem_work_items */
    bool resend_lost_results, send_result_abort, nowork_skip, dont_send_jobs;
    bool dont_generate_upload_certificates, ignore_upload_certificates, cache_md5_info;
    bool disable_account_creation;
    int min_core_client_version_announced;      /* encoded like min_core_client_version */
    long long min_core_client_upgrade_deadline; /* epoch seconds */

    /* assigned work (seed 003) */
    bool enable_assignment, enable_assignment_multi;

    /* locality scheduling (seed 001) */
    bool locality_scheduling, locality_scheduling_sorted_order;
    double locality_scheduler_fraction;
    int locality_scheduling_wait_period, locality_scheduling_send_timeout;
    int file_deletion_strategy;
    struct vs_strlist locality_scheduling_workunit_file, locality_scheduling_sticky_file;

    /* work-send rules and job limits (seeds 004, 003, 000) */
    struct vs_sp_config policy;

    /* the back-end daemons (docs/daemons.md) */
    int reliable_priority_on_over, reliable_priority_on_over_except_error;
    bool hr_class_static;
    int daemon_command_timeout, validator_retry_secs, assimilator_retry_secs;
    int file_deleter_retry_secs;
    /* <validator> and <assimilator> blocks, in file order (their meaning is
     * the project loader's: store/project.c) */
    struct vs_config_block *blocks;
    size_t n_blocks;

    /* which tags of config.xml's <config> the file had (see vs_config_seen) */
    unsigned char seen[16];

    /* "config.xml:12: unknown tag <db_name> ignored", in file order */
    struct vs_strlist warnings;
};

/* Sets every field to its default (no strings, no warnings). */
void vs_config_init(struct vs_config *c);
/* Frees the strings and warnings; c can be init'ed again. */
void vs_config_cleanup(struct vs_config *c);

/*
 * Parses config.xml text (data[0..len)) into c, on top of what c holds.
 * filename is only used in messages. Returns 0, or VS_ECONFIG (bad value),
 * VS_EPARSE (malformed XML) or VS_ELIMIT (too large) with *out_err filled.
 */
VS_MUST_CHECK int vs_config_parse(struct vs_config *c, const char *data, size_t len,
                                  const char *filename, struct vs_config_error *out_err);
/* The same for config_aux.xml text: <max_jobs_in_progress> replaces the
 * job limits it names (it wins over config.xml's max_wus_in_progress). */
VS_MUST_CHECK int vs_config_parse_aux(struct vs_config *c, const char *data, size_t len,
                                      const char *filename, struct vs_config_error *out_err);

/*
 * Reads DIR/config.xml (required) and DIR/config_aux.xml (optional) into c,
 * which vs_config_load initialises first. On error c is cleaned up and
 * *out_err says where. Returns 0, VS_ECONFIG, VS_EPARSE, VS_ELIMIT or -errno
 * (file unreadable).
 */
VS_MUST_CHECK int vs_config_load(struct vs_config *c, const char *project_dir,
                                 struct vs_config_error *out_err);

/* True when config.xml had tag (a scalar tag volsched reads): lets a
 * caller keep its own default for a tag the file does not set. */
bool vs_config_seen(const struct vs_config *c, const char *tag);

/* "file:line: msg" (or "file: msg" when line is 0) into dst of size n. */
void vs_config_error_format(const struct vs_config_error *e, char *dst, size_t n);

#endif
