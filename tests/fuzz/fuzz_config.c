/*
 * Fuzz target: config.xml and config_aux.xml text through the config
 * parser, then the parsed policy through one request of the work-send rules
 * (odd limits and quotas must not break the policy either). The first byte
 * picks the file kind.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "volsched/config.h"
#include "volsched/server_policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void run_policy(const struct vs_sp_config *cfg)
{
    static const char *const alts[] = {"i686-pc-linux-gnu"};
    struct vs_sp_host h;
    memset(&h, 0, sizeof h);
    h.id = 3;
    h.userid = 4;
    h.platform = "x86_64-pc-linux-gnu";
    h.alt_platforms = alts;
    h.n_alt_platforms = 1;
    h.p_fpops = 2e9;
    h.p_ncpus = 4;
    h.m_nbytes = 4e9;
    h.d_total = h.d_free = 50e9;
    h.core_client_version = 72005;
    h.os_name = "Linux";
    h.p_vendor = "GenuineIntel";
    h.p_model = "Intel Core";
    h.gpu_count[VS_SP_NVIDIA] = 1;
    struct vs_sp_inprog ip[3] = {{"a", VS_SP_CPU}, {"b", VS_SP_NVIDIA}, {NULL, VS_SP_CPU}};
    struct vs_sp_ip_result q[2] = {{5000, 3000}, {90000, 20000}};
    struct vs_sp_request r;
    memset(&r, 0, sizeof r);
    r.now = 2e9;
    r.prev_rpc_time = 2e9 - 86400;
    r.req_secs[VS_SP_CPU] = 50000;
    r.req_secs[VS_SP_NVIDIA] = 5000;
    r.in_progress = ip;
    r.n_in_progress = 3;
    r.ip_results = q;
    r.n_ip_results = 2;
    r.have_ip_results = true;
    struct vs_sp_app_version av[2] = {
        {1, "x86_64-pc-linux-gnu", 1, "", VS_SP_CPU, 1, 0, 0, 0, 0},
        {2, "x86_64-pc-linux-gnu", 1, "cuda", VS_SP_NVIDIA, 0.1, 1, 0, 0, 0}};
    struct vs_sp_app app = {1, "a", NULL, 0, 0, vs_sp_limits_app_index(&cfg->limits, "a"), av, 2};
    struct vs_sp_hav hav = {1, 0, 2, 0};
    struct vs_sp_state st;
    if (vs_sp_state_init(&st, cfg, &h, &r, &hav, 1) != 0)
        return;
    for (int i = 0; i < 50 && vs_sp_work_needed(&st); i++) {
        struct vs_sp_job job = {.wu_id = i % 7,
                                .app = &app,
                                .rsc_fpops_est = 1e12,
                                .rsc_memory_bound = 1e8,
                                .rsc_disk_bound = 1e8,
                                .delay_bound = 86400,
                                .hr_class = i % 3 ? 0 : 258};
        struct vs_sp_verdict v;
        if (vs_sp_check_job(&st, &job, &v) == VS_SP_OK)
            vs_sp_commit(&st, &job, &v);
    }
    struct vs_buf b;
    vs_buf_init(&b, 1 << 16);
    if (vs_sp_explain(&st, &b) != 0)
        __builtin_trap();
    vs_buf_cleanup(&b);
    vs_sp_state_cleanup(&st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    bool aux = data[0] & 1;
    /* static: the struct is large, and nothing of one run leaks into the
     * next (init resets all of it). */
    static struct vs_project_config c;
    struct vs_config_error e;
    vs_project_config_init(&c);
    const char *text = (const char *)data + 1;
    int rc = aux ? vs_project_config_parse_aux(&c, text, size - 1, "config_aux.xml", NULL, &e)
                 : vs_project_config_parse(&c, text, size - 1, "config.xml", NULL, &e);
    if (rc == 0)
        run_policy(&c.policy);
    return 0;
}
