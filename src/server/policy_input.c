/*
 * Scheduler request -> server policy inputs. Not pure (it reads what the
 * protocol layer parsed, including the preferences XML), which is why it
 * lives with the server and not under src/policy/.
 */
#include <string.h>
#include <strings.h>

#include "volsched/policy_input.h"
#include "volsched/prefs.h"
#include "volsched/str.h"
#include "volsched/xml.h"

enum vs_sp_proc vs_sp_proc_from_coproc_type(const char *type)
{
    if (!type)
        return VS_SP_CPU;
    /* BOINC-COMPAT: <coproc_cuda> is "NVIDIA" (older clients "CUDA"),
     * <coproc_ati> is "ATI" (AMD in the UI), <coproc_intel_gpu> "intel_gpu". */
    if (strcasecmp(type, "NVIDIA") == 0 || strcasecmp(type, "CUDA") == 0)
        return VS_SP_NVIDIA;
    if (strcasecmp(type, "ATI") == 0 || strcasecmp(type, "AMD") == 0)
        return VS_SP_AMD;
    if (strcasecmp(type, "intel_gpu") == 0 || strcasecmp(type, "INTEL") == 0)
        return VS_SP_INTEL;
    return VS_SP_CPU;
}

/*
 * The disk, memory and queue preferences (volsched/prefs.h: the request's
 * preferences subtree, read in one pass, <venue> sections skipped). A
 * missing or unreadable value leaves the policy's default.
 */
static void read_prefs(const char *xml, struct vs_sp_host *h)
{
    const uint32_t want =
        VS_GP_BIT(VS_GP_DISK_MAX_USED_GB) | VS_GP_BIT(VS_GP_DISK_MAX_USED_PCT) |
        VS_GP_BIT(VS_GP_DISK_MIN_FREE_GB) | VS_GP_BIT(VS_GP_RAM_MAX_USED_BUSY_PCT) |
        VS_GP_BIT(VS_GP_RAM_MAX_USED_IDLE_PCT) | VS_GP_BIT(VS_GP_WORK_BUF_MIN_DAYS);
    struct vs_gprefs g;
    if (!xml || vs_gprefs_parse(xml, strlen(xml), want, &g) != 0)
        memset(&g, 0, sizeof(g));
    h->disk_max_used_gb = g.v[VS_GP_DISK_MAX_USED_GB];
    h->disk_max_used_pct = g.v[VS_GP_DISK_MAX_USED_PCT];
    h->disk_min_free_gb = g.v[VS_GP_DISK_MIN_FREE_GB];
    h->ram_max_used_busy_frac = g.v[VS_GP_RAM_MAX_USED_BUSY_PCT] / 100;
    h->ram_max_used_idle_frac = g.v[VS_GP_RAM_MAX_USED_IDLE_PCT] / 100;
    h->work_buf_min = g.v[VS_GP_WORK_BUF_MIN_DAYS] * VS_SP_DAY;
}

int vs_sp_input_from_request(const struct vs_proto_request *rq, int64_t hostid, int64_t userid,
                             double now, double prev_rpc_time, struct vs_arena *arena,
                             struct vs_sp_host *out_host, struct vs_sp_request *out_req)
{
    if (!rq || !arena || !out_host || !out_req)
        return VS_EINVAL;
    struct vs_sp_host h;
    struct vs_sp_request r;
    memset(&h, 0, sizeof h);
    memset(&r, 0, sizeof r);

    h.id = hostid;
    h.userid = userid;
    h.platform = rq->platform_name;
    h.alt_platforms = (const char *const *)rq->alt_platforms;
    h.n_alt_platforms =
        rq->n_alt_platforms > VS_SP_MAX_PLATFORMS ? VS_SP_MAX_PLATFORMS : (int)rq->n_alt_platforms;
    h.p_fpops = rq->host.p_fpops;
    h.p_ncpus = rq->host.p_ncpus;
    h.m_nbytes = rq->host.m_nbytes;
    h.d_total = rq->host.d_total;
    h.d_free = rq->host.d_free;
    h.d_boinc_used_total = rq->disk_usage.d_boinc_used_total;
    h.on_frac = rq->time_stats.on_frac;
    h.active_frac = rq->time_stats.active_frac;
    h.gpu_active_frac = rq->time_stats.gpu_active_frac;
    h.core_client_version = vs_sp_version_encode(
        rq->core_client_major_version, rq->core_client_minor_version, rq->core_client_release);
    h.os_name = rq->host.os_name;
    h.os_version = rq->host.os_version;
    h.p_vendor = rq->host.p_vendor;
    h.p_model = rq->host.p_model;
    read_prefs(rq->working_global_prefs ? rq->working_global_prefs : rq->global_prefs, &h);

    r.now = now;
    r.prev_rpc_time = prev_rpc_time;
    r.work_req_seconds = rq->work_req_seconds;
    r.req_secs[VS_SP_CPU] = rq->cpu_req_secs;
    r.req_instances[VS_SP_CPU] = rq->cpu_req_instances;
    r.estimated_delay[VS_SP_CPU] = rq->estimated_delay;
    for (size_t i = 0; i < rq->n_coprocs; i++) {
        const struct vs_proto_coproc *c = &rq->coprocs[i];
        enum vs_sp_proc p = vs_sp_proc_from_coproc_type(c->type);
        if (p == VS_SP_CPU || c->count <= 0)
            continue;
        h.gpu_count[p] += c->count;
        if (c->peak_flops > h.gpu_peak_flops[p])
            h.gpu_peak_flops[p] = c->peak_flops;
        r.req_secs[p] += c->req_secs;
        r.req_instances[p] += c->req_instances;
        r.estimated_delay[p] = c->estimated_delay;
    }

    /* The jobs the client holds, under the app and processor of the app
     * version it names (or the result's plan class when it names none). */
    if (rq->n_other_results > 0) {
        struct vs_sp_inprog *ip =
            vs_arena_alloc(arena, rq->n_other_results * sizeof(struct vs_sp_inprog));
        for (size_t i = 0; i < rq->n_other_results; i++) {
            const struct vs_proto_other_result *o = &rq->other_results[i];
            const char *plan_class = o->plan_class;
            ip[i].app_name = NULL;
            if (o->app_version >= 0 && (size_t)o->app_version < rq->n_app_versions) {
                const struct vs_proto_client_app_version *cav = &rq->app_versions[o->app_version];
                ip[i].app_name = cav->app_name;
                plan_class = cav->plan_class;
            }
            ip[i].proc = vs_sp_plan_class_proc(plan_class);
        }
        r.in_progress = ip;
        r.n_in_progress = (int)rq->n_other_results;
    }

    /* The EDF check simulates CPUs: GPU jobs in the queue do not compete. */
    r.have_ip_results = rq->has_in_progress_results;
    if (rq->n_ip_results > 0) {
        struct vs_sp_ip_result *q =
            vs_arena_alloc(arena, rq->n_ip_results * sizeof(struct vs_sp_ip_result));
        int n = 0;
        for (size_t i = 0; i < rq->n_ip_results; i++) {
            const struct vs_proto_ip_result *x = &rq->ip_results[i];
            if (x->ncudas > 0 || x->natis > 0 || x->nintel_gpus > 0)
                continue;
            q[n].deadline = x->report_deadline - now;
            q[n].remaining = x->time_remaining;
            n++;
        }
        r.ip_results = q;
        r.n_ip_results = n;
    }
    *out_host = h;
    *out_req = r;
    return 0;
}
