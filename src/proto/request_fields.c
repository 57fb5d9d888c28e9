/*
 * The scheduler request's field tables: the one description of the message
 * that its three users share, so that what is parsed is exactly what is
 * written, in BOINC's order. request_parse.c reads a tree with them,
 * request_direct.c reads the body in one pass with them, request_write.c
 * writes with them (see request_int.h).
 *
 * BOINC-COMPAT: the element order is the 7.20.5 client's (cs_scheduler.cpp).
 */
#include <string.h>

#include "proto/request_int.h"

#define T struct vs_proto_request
/* Top-level scalars, written in this order before <alt_platform>. */
static const struct vs_proto__field head_fields[] = {
    FLD(T, authenticator, F_STR),
    FLD(T, hostid, F_I64),
    FLD(T, rpc_seqno, F_I64),
    FLD(T, core_client_major_version, F_INT),
    FLD(T, core_client_minor_version, F_INT),
    FLD(T, core_client_release, F_INT),
    FLD(T, resource_share_fraction, F_DBL),
    FLD(T, rrs_fraction, F_DBL),
    FLD(T, prrs_fraction, F_DBL),
    FLD(T, duration_correction_factor, F_DBL),
    FLD(T, allow_multiple_clients, F_BOOL),
    FLD(T, sandbox, F_BOOL),
    FLD(T, dont_send_work, F_BOOL),
    FLD(T, work_req_seconds, F_DBL),
    FLD(T, cpu_req_secs, F_DBL),
    FLD(T, cpu_req_instances, F_DBL),
    FLD(T, estimated_delay, F_DBL),
    FLD(T, client_cap_plan_class, F_INT),
    FLD(T, platform_name, F_STR),
};
static const struct vs_proto__field key_fields[] = {
    FLD(T, code_sign_key, F_BLOCK),
};
static const struct vs_proto__field mid_fields[] = {
    FLD(T, global_prefs_source_email_hash, F_STR),
    FLD(T, cross_project_id, F_STR),
};
static const struct vs_proto__field tail_fields[] = {
    FLD(T, client_brand, F_STR),
};
#undef T

#define T struct vs_proto_time_stats
static const struct vs_proto__field time_stats_fields[] = {
    FLD(T, on_frac, F_DBL),
    FLD(T, connected_frac, F_DBL),
    FLD(T, cpu_and_network_available_frac, F_DBL),
    FLD(T, active_frac, F_DBL),
    FLD(T, cpu_efficiency, F_DBL_OPT),
    FLD(T, gpu_active_frac, F_DBL),
    FLD(T, client_start_time, F_DBL),
    FLD(T, total_start_time, F_DBL),
    FLD(T, total_duration, F_DBL),
    FLD(T, total_active_duration, F_DBL),
    FLD(T, total_gpu_active_duration, F_DBL),
    FLD(T, now, F_DBL),
    FLD(T, previous_uptime, F_DBL),
    FLD(T, session_active_duration, F_DBL),
    FLD(T, session_gpu_active_duration, F_DBL),
};
#undef T

#define T struct vs_proto_net_stats
static const struct vs_proto__field net_stats_fields[] = {
    FLD(T, bwup, F_DBL),   FLD(T, avg_up, F_DBL),   FLD(T, avg_time_up, F_DBL),
    FLD(T, bwdown, F_DBL), FLD(T, avg_down, F_DBL), FLD(T, avg_time_down, F_DBL),
};
#undef T

#define T struct vs_proto_host_info
static const struct vs_proto__field host_fields[] = {
    FLD(T, timezone, F_INT),
    FLD(T, domain_name, F_STR),
    FLD(T, ip_addr, F_STR),
    FLD(T, host_cpid, F_STR),
    FLD(T, p_ncpus, F_INT),
    FLD(T, p_vendor, F_STR),
    FLD(T, p_model, F_STR),
    FLD(T, p_features, F_STR),
    FLD(T, p_fpops, F_DBL),
    FLD(T, p_iops, F_DBL),
    FLD(T, p_membw, F_DBL),
    FLD(T, p_calculated, F_DBL),
    FLD(T, p_vm_extensions_disabled, F_BOOL),
    FLD(T, m_nbytes, F_DBL),
    FLD(T, m_cache, F_DBL),
    FLD(T, m_swap, F_DBL),
    FLD(T, d_total, F_DBL),
    FLD(T, d_free, F_DBL),
    FLD(T, os_name, F_STR),
    FLD(T, os_version, F_STR),
    FLD(T, n_usable_coprocs, F_INT),
    FLD(T, wsl_available, F_BOOL),
    FLD(T, product_name, F_STR),
    FLD(T, virtualbox_version, F_STR),
};
#undef T

#define T struct vs_proto_disk_usage
static const struct vs_proto__field disk_fields[] = {
    FLD(T, d_boinc_used_total, F_DBL),
    FLD(T, d_boinc_used_project, F_DBL),
    FLD(T, d_project_share, F_DBL),
};
#undef T

#define T struct vs_proto_coproc
static const struct vs_proto__field coproc_fields[] = {
    FLD(T, count, F_INT),           FLD(T, name, F_STR),
    FLD(T, peak_flops, F_DBL),      FLD(T, available_ram, F_DBL_OPT),
    FLD(T, req_secs, F_DBL),        FLD(T, req_instances, F_DBL),
    FLD(T, estimated_delay, F_DBL),
};
#undef T

#define T struct vs_proto_reported_result
static const struct vs_proto__field result_fields[] = {
    FLD(T, name, F_STR),
    FLD(T, final_cpu_time, F_DBL),
    FLD(T, final_elapsed_time, F_DBL),
    FLD(T, exit_status, F_INT),
    FLD(T, state, F_INT),
    FLD(T, platform, F_STR),
    FLD(T, version_num, F_INT),
    FLD(T, plan_class, F_STR),
    FLD(T, fpops_per_cpu_sec, F_DBL_OPT),
    FLD(T, fpops_cumulative, F_DBL_OPT),
    FLD(T, intops_per_cpu_sec, F_DBL_OPT),
    FLD(T, intops_cumulative, F_DBL_OPT),
    FLD(T, final_peak_working_set_size, F_DBL_OPT),
    FLD(T, final_peak_swap_size, F_DBL_OPT),
    FLD(T, final_peak_disk_usage, F_DBL_OPT),
    FLD(T, final_bytes_sent, F_DBL_OPT),
    FLD(T, final_bytes_received, F_DBL_OPT),
    FLD(T, app_version_num, F_INT),
};
#undef T

#define T struct vs_proto_result_file
static const struct vs_proto__field result_file_fields[] = {
    FLD(T, name, F_STR),      FLD(T, nbytes, F_DBL),     FLD(T, max_nbytes, F_DBL),
    FLD(T, md5_cksum, F_STR), FLD(T, upload_url, F_STR),
};
#undef T

#define T struct vs_proto_msg_from_host
static const struct vs_proto__field msg_fields[] = {
    FLD(T, result_name, F_STR),
    FLD(T, variety, F_STR),
    FLD(T, msg_text, F_STR),
};
#undef T

#define T struct vs_proto_sticky_file
static const struct vs_proto__field sticky_fields[] = {
    FLD(T, name, F_STR),
    FLD(T, nbytes, F_DBL),
    FLD(T, status, F_INT),
};
#undef T

#define T struct vs_proto_client_app_version
static const struct vs_proto__field cav_fields[] = {
    FLD(T, app_name, F_STR),    FLD(T, version_num, F_INT), FLD(T, platform, F_STR),
    FLD(T, plan_class, F_STR),  FLD(T, avg_ncpus, F_DBL),   FLD(T, flops, F_DBL),
    FLD(T, api_version, F_STR), FLD(T, cmdline, F_STR),     FLD(T, file_prefix, F_STR),
};
#undef T

#define T struct vs_proto_other_result
static const struct vs_proto__field other_fields[] = {
    FLD(T, name, F_STR),
    FLD(T, app_version, F_INT),
    FLD(T, plan_class, F_STR),
};
#undef T

#define T struct vs_proto_ip_result
static const struct vs_proto__field ip_fields[] = {
    FLD(T, name, F_STR),
    FLD(T, report_deadline, F_DBL),
    FLD(T, time_remaining, F_DBL),
    FLD(T, avg_ncpus, F_DBL),
    FLD(T, ncudas, F_DBL_OPT),
    FLD(T, natis, F_DBL_OPT),
    FLD(T, nintel_gpus, F_DBL_OPT),
};
#undef T

/* BOINC-COMPAT: the coprocessor element names and the type each stands for. */
static const struct {
    const char *element;
    const char *type;
} coproc_names[] = {
    {"coproc_cuda", "NVIDIA"},
    {"coproc_ati", "ATI"},
    {"coproc_intel_gpu", "intel_gpu"},
};

const struct vs_proto__table vs_proto__rq_head = {head_fields, VS_NELEM(head_fields)};
const struct vs_proto__table vs_proto__rq_key = {key_fields, VS_NELEM(key_fields)};
const struct vs_proto__table vs_proto__rq_mid = {mid_fields, VS_NELEM(mid_fields)};
const struct vs_proto__table vs_proto__rq_tail = {tail_fields, VS_NELEM(tail_fields)};
const struct vs_proto__table vs_proto__rq_time_stats = {time_stats_fields,
                                                        VS_NELEM(time_stats_fields)};
const struct vs_proto__table vs_proto__rq_net_stats = {net_stats_fields,
                                                       VS_NELEM(net_stats_fields)};
const struct vs_proto__table vs_proto__rq_host = {host_fields, VS_NELEM(host_fields)};
const struct vs_proto__table vs_proto__rq_disk = {disk_fields, VS_NELEM(disk_fields)};
const struct vs_proto__table vs_proto__rq_coproc = {coproc_fields, VS_NELEM(coproc_fields)};
const struct vs_proto__table vs_proto__rq_result = {result_fields, VS_NELEM(result_fields)};
const struct vs_proto__table vs_proto__rq_result_file = {result_file_fields,
                                                         VS_NELEM(result_file_fields)};
const struct vs_proto__table vs_proto__rq_msg = {msg_fields, VS_NELEM(msg_fields)};
const struct vs_proto__table vs_proto__rq_sticky = {sticky_fields, VS_NELEM(sticky_fields)};

/* An <other_result> without <app_version> has none: -1, not index 0. */
static void other_result_init(void *e)
{
    ((struct vs_proto_other_result *)e)->app_version = -1;
}

const struct vs_proto__list vs_proto__rq_app_versions = {
    "app_version",
    {cav_fields, VS_NELEM(cav_fields)},
    sizeof(struct vs_proto_client_app_version),
    VS_PROTO_MAX_APP_VERSIONS,
    "app versions",
    NULL,
};
const struct vs_proto__list vs_proto__rq_other_results = {
    "other_result",
    {other_fields, VS_NELEM(other_fields)},
    sizeof(struct vs_proto_other_result),
    VS_PROTO_MAX_OTHER_RESULTS,
    "other results",
    other_result_init,
};
const struct vs_proto__list vs_proto__rq_ip_results = {
    "ip_result",
    {ip_fields, VS_NELEM(ip_fields)},
    sizeof(struct vs_proto_ip_result),
    VS_PROTO_MAX_OTHER_RESULTS,
    "in-progress results",
    NULL,
};

const char *vs_proto__coproc_type(const char *element)
{
    for (size_t j = 0; j < VS_NELEM(coproc_names); j++)
        if (strcmp(element, coproc_names[j].element) == 0)
            return coproc_names[j].type;
    return NULL;
}

const char *vs_proto__coproc_element(const char *type)
{
    for (size_t j = 0; type && j < VS_NELEM(coproc_names); j++)
        if (strcmp(type, coproc_names[j].type) == 0)
            return coproc_names[j].element;
    return NULL;
}

size_t vs_proto__stderr_keep(const char *t, size_t len)
{
    if (len <= VS_PROTO_MAX_STDERR)
        return len;
    size_t cut = VS_PROTO_MAX_STDERR;
    /* cut on a UTF-8 character boundary, so the text stays valid */
    while (cut > 0 && ((unsigned char)t[cut] & 0xc0) == 0x80)
        cut--;
    return cut;
}
