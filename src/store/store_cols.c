/*
 * Column descriptors: which struct field each column of each table maps to.
 * The order here is the order of the SELECT lists and INSERT parameters.
 * cols[0] is "id" for every table that has one.
 */
#include <stddef.h>

#include "store/store_int.h"

#define COL(T, f, ty)                                                                              \
    {                                                                                              \
#f, ty, offsetof(struct T, f), 0                                                           \
    }
#define I64(T, f)  COL(T, f, SQ_I64)
#define INT(T, f)  COL(T, f, SQ_INT)
#define DBL(T, f)  COL(T, f, SQ_DBL)
#define PSTR(T, f) COL(T, f, SQ_PSTR)
#define STR(T, f)                                                                                  \
    {                                                                                              \
#f, SQ_STR, offsetof(struct T, f), sizeof(((struct T *)0)->f)                              \
    }
#define NAMED(n, T, f, ty)                                                                         \
    {                                                                                              \
        n, ty, offsetof(struct T, f), 0                                                            \
    }
#define TABLE(var, sqlname, arr)                                                                   \
    const struct sq_table var = {sqlname, arr, sizeof(arr) / sizeof(arr[0]), 1}

static const struct sq_col platform_cols[] = {
    I64(vs_platform, id),         I64(vs_platform, create_time),
    STR(vs_platform, name),       STR(vs_platform, user_friendly_name),
    INT(vs_platform, deprecated),
};
TABLE(vs_store__platform, "platform", platform_cols);

static const struct sq_col app_cols[] = {
    I64(vs_app, id),
    I64(vs_app, create_time),
    STR(vs_app, name),
    STR(vs_app, user_friendly_name),
    INT(vs_app, min_version),
    INT(vs_app, deprecated),
    INT(vs_app, beta),
    INT(vs_app, homogeneous_redundancy),
    INT(vs_app, homogeneous_app_version),
    DBL(vs_app, weight),
    INT(vs_app, non_cpu_intensive),
    INT(vs_app, locality_scheduling),
    INT(vs_app, n_size_classes),
    INT(vs_app, target_nresults),
    INT(vs_app, fraction_done_exact),
};
TABLE(vs_store__app, "app", app_cols);

static const struct sq_col app_version_cols[] = {
    I64(vs_app_version, id),
    I64(vs_app_version, create_time),
    I64(vs_app_version, appid),
    INT(vs_app_version, version_num),
    I64(vs_app_version, platformid),
    STR(vs_app_version, plan_class),
    INT(vs_app_version, min_core_version),
    INT(vs_app_version, max_core_version),
    INT(vs_app_version, deprecated),
    INT(vs_app_version, beta),
    STR(vs_app_version, api_version),
    DBL(vs_app_version, avg_ncpus),
    STR(vs_app_version, cmdline),
};
TABLE(vs_store__app_version, "app_version", app_version_cols);

/* No id: bound after (app_version_id, seqno) by the app-version code. */
static const struct sq_col avfile_cols[] = {
    STR(vs_app_version_file, name),         STR(vs_app_version_file, open_name),
    STR(vs_app_version_file, path),         STR(vs_app_version_file, md5_cksum),
    DBL(vs_app_version_file, nbytes),       PSTR(vs_app_version_file, file_signature),
    INT(vs_app_version_file, main_program), INT(vs_app_version_file, executable),
    INT(vs_app_version_file, copy_file),
};
const struct sq_table vs_store__app_version_file = {
    "app_version_file", avfile_cols, sizeof(avfile_cols) / sizeof(avfile_cols[0]), 0};

static const struct sq_col user_cols[] = {
    I64(vs_user, id),          I64(vs_user, create_time),      STR(vs_user, email_addr),
    STR(vs_user, name),        STR(vs_user, authenticator),    I64(vs_user, teamid),
    STR(vs_user, country),     DBL(vs_user, total_credit),     DBL(vs_user, expavg_credit),
    DBL(vs_user, expavg_time), STR(vs_user, cross_project_id), STR(vs_user, venue),
    I64(vs_user, seti_id),     PSTR(vs_user, global_prefs),    PSTR(vs_user, project_prefs),
    STR(vs_user, passwd_hash),
};
TABLE(vs_store__user, "\"user\"", user_cols);

static const struct sq_col team_cols[] = {
    I64(vs_team, id),
    I64(vs_team, create_time),
    I64(vs_team, userid),
    STR(vs_team, name),
    INT(vs_team, nusers),
    DBL(vs_team, total_credit),
    DBL(vs_team, expavg_credit),
    STR(vs_team, description),
    DBL(vs_team, expavg_time),
};
TABLE(vs_store__team, "team", team_cols);

static const struct sq_col host_cols[] = {
    I64(vs_host, id),
    I64(vs_host, create_time),
    I64(vs_host, userid),
    INT(vs_host, rpc_seqno),
    I64(vs_host, rpc_time),
    STR(vs_host, host_cpid),
    STR(vs_host, domain_name),
    STR(vs_host, last_ip_addr),
    STR(vs_host, external_ip_addr),
    STR(vs_host, venue),
    I64(vs_host, teamid),
    DBL(vs_host, on_frac),
    DBL(vs_host, connected_frac),
    DBL(vs_host, active_frac),
    DBL(vs_host, gpu_active_frac),
    INT(vs_host, p_ncpus),
    STR(vs_host, p_vendor),
    STR(vs_host, p_model),
    DBL(vs_host, p_fpops),
    DBL(vs_host, p_iops),
    DBL(vs_host, p_membw),
    STR(vs_host, os_name),
    STR(vs_host, os_version),
    STR(vs_host, platform_name),
    DBL(vs_host, m_nbytes),
    DBL(vs_host, m_swap),
    DBL(vs_host, d_total),
    DBL(vs_host, d_free),
    DBL(vs_host, d_boinc_used_total),
    DBL(vs_host, d_boinc_used_project),
    DBL(vs_host, d_boinc_max),
    DBL(vs_host, n_bwup),
    DBL(vs_host, n_bwdown),
    INT(vs_host, p_ngpus),
    DBL(vs_host, p_gpu_fpops),
    DBL(vs_host, avg_turnaround),
    DBL(vs_host, total_credit),
    DBL(vs_host, expavg_credit),
    DBL(vs_host, expavg_time),
    /* BOINC-COMPAT: BOINC's column names carry a leading underscore. */
    NAMED("_error_rate", vs_host, error_rate, SQ_DBL),
    NAMED("_max_results_day", vs_host, max_results_day, SQ_INT),
    INT(vs_host, nresults_today),
    I64(vs_host, nresults_day),
};
TABLE(vs_store__host, "host", host_cols);

static const struct sq_col workunit_cols[] = {
    I64(vs_workunit, id),
    I64(vs_workunit, create_time),
    I64(vs_workunit, appid),
    STR(vs_workunit, name),
    PSTR(vs_workunit, xml_doc),
    I64(vs_workunit, batch),
    DBL(vs_workunit, rsc_fpops_est),
    DBL(vs_workunit, rsc_fpops_bound),
    DBL(vs_workunit, rsc_memory_bound),
    DBL(vs_workunit, rsc_disk_bound),
    DBL(vs_workunit, rsc_bandwidth_bound),
    INT(vs_workunit, need_validate),
    I64(vs_workunit, canonical_resultid),
    DBL(vs_workunit, canonical_credit),
    I64(vs_workunit, transition_time),
    INT(vs_workunit, delay_bound),
    INT(vs_workunit, error_mask),
    INT(vs_workunit, file_delete_state),
    INT(vs_workunit, assimilate_state),
    INT(vs_workunit, hr_class),
    DBL(vs_workunit, opaque),
    INT(vs_workunit, priority),
    I64(vs_workunit, app_version_id),
    INT(vs_workunit, app_version_num),
    INT(vs_workunit, transitioner_flags),
    INT(vs_workunit, size_class),
    STR(vs_workunit, keywords),
    INT(vs_workunit, min_quorum),
    INT(vs_workunit, target_nresults),
    INT(vs_workunit, max_error_results),
    INT(vs_workunit, max_total_results),
    INT(vs_workunit, max_success_results),
    STR(vs_workunit, result_template_file),
    I64(vs_workunit, mod_time),
};
TABLE(vs_store__workunit, "workunit", workunit_cols);

static const struct sq_col result_cols[] = {
    I64(vs_result, id),
    I64(vs_result, create_time),
    I64(vs_result, workunitid),
    STR(vs_result, name),
    I64(vs_result, appid),
    I64(vs_result, batch),
    INT(vs_result, server_state),
    INT(vs_result, outcome),
    INT(vs_result, client_state),
    INT(vs_result, validate_state),
    INT(vs_result, file_delete_state),
    I64(vs_result, hostid),
    I64(vs_result, userid),
    I64(vs_result, teamid),
    I64(vs_result, report_deadline),
    I64(vs_result, sent_time),
    I64(vs_result, received_time),
    PSTR(vs_result, xml_doc_in),
    PSTR(vs_result, xml_doc_out),
    PSTR(vs_result, stderr_out),
    INT(vs_result, exit_status),
    DBL(vs_result, cpu_time),
    DBL(vs_result, elapsed_time),
    DBL(vs_result, claimed_credit),
    DBL(vs_result, granted_credit),
    DBL(vs_result, flops_estimate),
    I64(vs_result, app_version_id),
    INT(vs_result, app_version_num),
    INT(vs_result, random),
    INT(vs_result, priority),
    INT(vs_result, size_class),
    DBL(vs_result, opaque),
    DBL(vs_result, peak_working_set_size),
    DBL(vs_result, peak_swap_size),
    DBL(vs_result, peak_disk_usage),
    INT(vs_result, runtime_outlier),
    I64(vs_result, mod_time),
    INT(vs_result, assign_slot),
};
TABLE(vs_store__result, "result", result_cols);

static const struct sq_col assignment_cols[] = {
    I64(vs_assignment, id),        I64(vs_assignment, create_time),
    I64(vs_assignment, target_id), INT(vs_assignment, target_type),
    INT(vs_assignment, multi),     I64(vs_assignment, workunitid),
};
TABLE(vs_store__assignment, "assignment", assignment_cols);
