/*
 * THE table of config.xml's tags: every tag volsched reads, with its kind,
 * bounds and field in struct vs_project_config (volsched/config.h says how
 * to add one). Rows marked W are written by `volsched init`, in this order.
 */
#include <stddef.h>

#include "config/config_int.h"

#define F(field)                                                                                   \
    offsetof(struct vs_project_config, field), sizeof(((struct vs_project_config *)0)->field)
#define W VS_CONFIG_WRITTEN

/* BOINC-COMPAT: tag names as in BOINC's sched_config (config.xml), except
 * store_url, validator and assimilator (volsched's). */
const struct vs_config_tag vs_config__tags[] = {
    /* name                                  kind     field                    min max flags */
    {"long_name", K_STR, F(long_name), 0, 0, W},
    {"master_url", K_STR, F(master_url), 0, 0, W},
    {"download_url", K_STR, F(download_url), 0, 0, W},
    {"upload_url", K_STR, F(upload_url), 0, 0, W},
    {"cgi_url", K_STR, F(cgi_url), 0, 0, W},
    {"download_dir", K_PATH, F(download_dir), 0, 0, W},
    {"upload_dir", K_PATH, F(upload_dir), 0, 0, W},
    {"key_dir", K_PATH, F(key_dir), 0, 0, W},
    {"store_url", K_STR, F(store_url), 0, 0, W},
    {"uldl_dir_fanout", K_INT, F(uldl_dir_fanout), 0, 65536, W},
    {"enable_assignment", K_BOOL, F(enable_assignment), 0, 0, W},
    {"enable_assignment_multi", K_BOOL, F(enable_assignment_multi), 0, 0, W},
    {"max_wus_in_progress", K_LIMIT_CPU, F(policy.limits.project.cpu), 0, 0, W},
    {"max_wus_in_progress_gpu", K_LIMIT_GPU, F(policy.limits.project.gpu), 0, 0, W},
    {"daily_result_quota", K_INT, F(policy.daily_result_quota), 0, 0, W},
    {"max_wus_to_send", K_INT, F(policy.max_wus_to_send), 1, 0, W},
    {"one_result_per_user_per_wu", K_BOOL, F(policy.one_result_per_user_per_wu), 0, 0, W},
    /* volsched: protective limits against hoarding (docs/security.md). */
    {"host_in_progress_per_cpu", K_INT, F(policy.host_in_progress_per_cpu), 0, 0, W},
    {"max_new_hosts_per_day", K_INT, F(policy.max_new_hosts_per_day), 0, 0, W},
    {"max_ncpus", K_INT, F(policy.max_ncpus), 1, 0, W},
    {"resend_lost_results", K_BOOL, F(resend_lost_results), 0, 0, W},
    {"failed_auth_burst", K_INT, F(failed_auth_burst), 0, 0, W},
    {"failed_auth_per_hour", K_INT, F(failed_auth_per_hour), 0, 0, W},
    {"min_sendwork_interval", K_INT, F(min_sendwork_interval), 0, 0, W},
    {"report_grace_period", K_INT, F(report_grace_period), 0, 0, W},
    {"delete_delay_hours", K_INT, F(delete_delay_hours), 0, 0, W},
    {"dont_generate_upload_certificates", K_BOOL, F(dont_generate_upload_certificates), 0, 0, W},
    {"locality_scheduling", K_BOOL, F(locality_scheduling), 0, 0, W},
    {"locality_scheduling_wait_period", K_INT, F(locality_scheduling_wait_period), 0, 0, W},
    {"locality_scheduling_sorted_order", K_BOOL, F(locality_scheduling_sorted_order), 0, 0, W},
    {"reliable_priority_on_over", K_INT, F(reliable_priority_on_over), 0, 0, W},
    {"reliable_priority_on_over_except_error", K_INT, F(reliable_priority_on_over_except_error), 0,
     0, W},
    {"hr_class_static", K_BOOL, F(hr_class_static), 0, 0, W},
    /* volsched: the back-end daemons' timers. */
    {"daemon_command_timeout", K_INT, F(daemon_command_timeout), 1, 0, W},
    /* BOINC's trickle handler as one operator command (docs/server.md) */
    {"trickle_handler", K_PATH, F(trickle_handler), 0, 0, 0},
    {"validator_retry_secs", K_INT, F(validator_retry_secs), 0, 0, W},
    {"assimilator_retry_secs", K_INT, F(assimilator_retry_secs), 0, 0, W},
    {"file_deleter_retry_secs", K_INT, F(file_deleter_retry_secs), 0, 0, W},
    /* volsched: how often `serve` rewrites stats/ (docs/credit.md) */
    {"db_dump_interval_hours", K_INT, F(db_dump_interval_hours), 0, 0, W},
    /* volsched: how often `serve` decays the recent averages (BOINC's
     * update_stats task, daily; docs/credit.md) */
    {"update_stats_interval_hours", K_INT, F(update_stats_interval_hours), 0, 0, W},
    /* The daemons' blocks (written from cfg->validators / assimilators). */
    {"validator", K_VALIDATOR, F(validators), 0, 0, 0},
    {"assimilator", K_ASSIMILATOR, F(assimilators), 0, 0, 0},

    /* Read and checked, not written by init. */
    /* HTTPS in `volsched serve` (docs/security.md) */
    {"https_cert", K_PATH, F(https_cert), 0, 0, 0},
    {"https_key", K_PATH, F(https_key), 0, 0, 0},
    {"https_port", K_INT, F(https_port), 0, 65535, 0},
    /* the plain listener without the scheduler, uploads or /ops/, and the
     * operator's own listener, so https cannot be stripped (docs/server.md) */
    {"https_only", K_BOOL, F(https_only), 0, 0, 0},
    {"ops_listen", K_STR, F(ops_listen), 0, 0, 0},
    /* the HTTP front end's limits against slow and greedy clients */
    {"http_head_timeout", K_INT, F(http_head_timeout), 1, 3600, 0},
    {"http_idle_timeout", K_INT, F(http_idle_timeout), 1, 86400, 0},
    {"http_body_min_rate", K_INT, F(http_body_min_rate), 0, 0, 0},
    {"http_max_per_address", K_INT, F(http_max_per_address), 0, 0, 0},
    {"http_max_connections", K_INT, F(http_max_connections), 0, 1000000, 0},
    {"submit_max_request_mb", K_INT, F(submit_max_request_mb), 1, 4096, 0},
    {"batch_tail_acceleration", K_BOOL, F(batch_tail_acceleration), 0, 0, 0},
    {"trusted_proxy", K_STRLIST, F(trusted_proxy), 0, 0, 0},
    /* several serve instances on one store (docs/scale-out.md) */
    {"job_lease_secs", K_INT, F(job_lease_secs), 2, 86400, 0},
    {"sched_writers", K_INT, F(sched_writers), 1, 8, 0},
    /* volunteers' accounts (issue 36) */
    {"disable_account_creation", K_BOOL, F(disable_account_creation), 0, 0, 0},
    {"disable_account_creation_rpc", K_BOOL, F(disable_account_creation_rpc), 0, 0, 0},
    {"disable_web_account_creation", K_BOOL, F(disable_web_account_creation), 0, 0, 0},
    {"disable_team_creation", K_BOOL, F(disable_team_creation), 0, 0, 0},
    {"min_passwd_length", K_INT, F(min_passwd_length), 1, 64, 0},
    {"enable_delete_account", K_DEL_METHOD, F(enable_delete_account), 0, 0, 0},
    {"invite_code", K_STRLIST, F(invite_code), 0, 0, 0},
    {"account_rpc_burst", K_INT, F(account_rpc_burst), 0, 0, 0},
    {"account_rpc_per_hour", K_INT, F(account_rpc_per_hour), 0, 0, 0},
    /* scheduler RPC behaviour */
    {"next_rpc_delay", K_INT, F(next_rpc_delay), 0, 0, 0},
    {"maintenance_delay", K_INT, F(maintenance_delay), 0, 0, 0},
    {"report_max", K_INT, F(report_max), 0, 0, 0},
    {"send_result_abort", K_BOOL, F(send_result_abort), 0, 0, 0},
    {"dont_send_jobs", K_BOOL, F(dont_send_jobs), 0, 0, 0},
    /* volsched: lite for every app, and the locality daemons' blocks. */
    {"locality_scheduling_lite", K_BOOL, F(locality_scheduling_lite), 0, 0, 0},
    {"locality_gen", K_LOCALITY_GEN, F(locality_gen_command), 0, 0, 0},
    {"locality_ws", K_LOCALITY_WS, F(locality_ws_files), 0, 0, 0},
    /* work-send rules (seeds 004, 000) */
    {"one_result_per_host_per_wu", K_BOOL, F(policy.one_result_per_host_per_wu), 0, 0, 0},
    {"gpu_multiplier", K_INT, F(policy.gpu_multiplier), 1, 0, 0},
    {"homogeneous_redundancy", K_INT, F(policy.homogeneous_redundancy), 0, 2, 0},
    {"min_core_client_version", K_CORE_VERSION, F(policy.min_core_client_version), 0, 0, 0},
    {"ignore_delay_bound", K_BOOL, F(policy.ignore_delay_bound), 0, 0, 0},
    {"deadline_exempt_empty_queue", K_BOOL, F(policy.deadline_exempt_empty_queue), 0, 0, 0},
    {"workload_sim", K_BOOL, F(policy.workload_sim), 0, 0, 0},

/* BOINC-only, no meaning here: accepted quietly. The database, shared
 * memory and host of BOINC's MySQL + CGI + daemons layout, the web
 * site's (PHP) options, its debug levels. */
#define IGN(tag)                                                                                   \
    {                                                                                              \
        tag, K_IGNORED, 0, 0, 0, 0, 0                                                              \
    }
    IGN("host"),
    IGN("db_name"),
    IGN("db_host"),
    IGN("db_user"),
    IGN("db_passwd"),
    IGN("db_socket"),
    IGN("replica_db_host"),
    IGN("replica_db_name"),
    IGN("replica_db_user"),
    IGN("replica_db_passwd"),
    IGN("shmem_key"),
    IGN("log_dir"),
    IGN("app_dir"),
    IGN("project_dir"),
    IGN("bin_dir"),
    IGN("cgi_bin_dir"),
    IGN("pid_dir"),
    IGN("stripchart_cgi_url"),
    IGN("sched_debug_level"),
    IGN("fuh_debug_level"),
    IGN("show_results"),
    IGN("enable_privacy_by_default"),
    IGN("enable_login_mustagree_termsofuse"),
    IGN("profile_min_credit"),
    IGN("profile_screening"),
    IGN("forum_debug"),
    IGN("recaptcha_public_key"),
    IGN("recaptcha_private_key"),
    IGN("user_country"),
    IGN("user_url"),
    IGN("akismet_key"),
    IGN("no_forum_rating"),
    IGN("moderators_vote_to_ban"),
    IGN("team_forums_members_only"),
    IGN("no_computing"),
    IGN("credit_by_app"),
    IGN("dont_show_user_info"),

/* BOINC behaviour volsched does not implement: accepted, listed in one
 * "BOINC option not supported" warning (docs/operating.md). */
#define UNS(tag)                                                                                   \
    {                                                                                              \
        tag, K_UNSUPPORTED, 0, 0, 0, 0, 0                                                          \
    }
    UNS("nowork_skip"),
    UNS("shmem_work_items"),
    UNS("feeder_query_size"),
    UNS("ignore_upload_certificates"),
    UNS("cache_md5_info"),
    UNS("min_core_client_version_announced"),
    UNS("min_core_client_upgrade_deadline"),
    UNS("msg_to_host"),
    UNS("sched_lockfile_dir"),
    UNS("ban_os"),
    UNS("ban_cpu"),
    UNS("debug_req_reply_dir"),
    UNS("download_dir_alt"),
    UNS("non_cpu_intensive"),
    UNS("trickle_down"),
    UNS("reliable_on_priority"),
    UNS("reliable_max_avg_turnaround"),
    UNS("reliable_reduced_delay_bound"),
    UNS("reliable_max_error_rate"),
    UNS("size_classes"),
    UNS("batch_accel"),
    UNS("keyword_sched"),
    UNS("user_filter"),
    UNS("max_granted_credit"),
    UNS("prefer_primary_platform"),
    UNS("version_select_random_factor"),
    UNS("estimate_flops_from_hav_pfc"),
    UNS("rte_no_stats"),
    UNS("hr_allocate_slots"),
    UNS("default_disk_max_used_gb"),
    UNS("default_disk_max_used_pct"),
    UNS("default_disk_min_free_gb"),
    UNS("replace_download_url_by_timezone"),
    UNS("dont_store_success_stderr"),
    UNS("enable_vda"),
    UNS("grace_period_hours"),
    UNS("ended"),
    UNS("fuh_set_initial_permission"),
    UNS("upload_certificate"),
    /* Locality scheduling's BOINC options beyond seed 001 (docs/locality.md,
     * "Not in volsched"): the mix of locality and cache dispatch, "old work"
     * for fast hosts, Einstein@Home's file-name classes, and the switch
     * between deletion strategies (volsched always tells a host to delete a
     * file that will get no more work). */
    UNS("locality_scheduler_fraction"),
    UNS("locality_scheduling_send_timeout"),
    UNS("locality_scheduling_workunit_file"),
    UNS("locality_scheduling_sticky_file"),
    UNS("file_deletion_strategy"),
#undef IGN
#undef UNS
};

const size_t vs_config__n_tags = sizeof vs_config__tags / sizeof vs_config__tags[0];
