/*
 * The host record of a scheduler request: its fields from what the client
 * says, and the guard on how many new hosts one account may create.
 */
#include <string.h>

#include "server/sched_int.h"
#include "volsched/log.h"
#include "volsched/store.h"
#include "volsched/str.h"

/* Copies src into a fixed field, truncating (client strings are capped by
 * the store's field sizes; a long model name is not an error). */
static void set_field(char *dst, size_t size, const char *src)
{
    if (vs_strlcpy(dst, src ? src : "", size) != 0) {
        /* truncated: fine for descriptive host fields */
    }
}

void vs_sched__host_from_request(struct vs_host *h, const struct vs_proto_request *q,
                                 const struct vs_user *u, const char *peer, int64_t now)
{
    const struct vs_proto_host_info *hi = &q->host;
    h->userid = u->id;
    h->teamid = u->teamid;
    h->rpc_time = now;
    set_field(h->host_cpid, sizeof(h->host_cpid), hi->host_cpid);
    set_field(h->domain_name, sizeof(h->domain_name), hi->domain_name);
    set_field(h->last_ip_addr, sizeof(h->last_ip_addr), hi->ip_addr);
    set_field(h->external_ip_addr, sizeof(h->external_ip_addr), peer);
    h->on_frac = q->time_stats.on_frac;
    h->connected_frac = q->time_stats.connected_frac;
    h->active_frac = q->time_stats.active_frac;
    h->gpu_active_frac = q->time_stats.gpu_active_frac;
    h->p_ncpus = hi->p_ncpus;
    set_field(h->p_vendor, sizeof(h->p_vendor), hi->p_vendor);
    set_field(h->p_model, sizeof(h->p_model), hi->p_model);
    h->p_fpops = hi->p_fpops;
    h->p_iops = hi->p_iops;
    h->p_membw = hi->p_membw;
    set_field(h->os_name, sizeof(h->os_name), hi->os_name);
    set_field(h->os_version, sizeof(h->os_version), hi->os_version);
    set_field(h->platform_name, sizeof(h->platform_name), q->platform_name);
    h->m_nbytes = hi->m_nbytes;
    h->m_swap = hi->m_swap;
    h->d_total = hi->d_total;
    h->d_free = hi->d_free;
    h->d_boinc_used_total = q->disk_usage.d_boinc_used_total;
    h->d_boinc_used_project = q->disk_usage.d_boinc_used_project;
    h->d_boinc_max = q->disk_usage.d_project_share;
    h->n_bwup = q->net_stats.bwup;
    h->n_bwdown = q->net_stats.bwdown;
}

bool vs_sched__new_host_allowed(struct vs_sched *s, struct vs_store *st, int64_t userid,
                                int64_t now)
{
    /* A client that sends made-up host ids gets a new host each time; each
     * new host has its own in-progress cap and daily quota, so without this
     * one account could multiply them (docs/security.md). */
    int limit = s->cfg.policy.max_new_hosts_per_day;
    if (limit <= 0)
        return true;
    int64_t n = 0;
    if (vs_store_user_count_new_hosts(st, userid, now - 86400, &n) != 0) {
        VS_LOG(s->log, VS_LOG_WARN, "user %lld: cannot count new hosts; refused",
               (long long)userid);
        return false;
    }
    if (n < limit)
        return true;
    VS_LOG(s->log, VS_LOG_WARN, "user %lld: %lld new hosts in 24 h, limit %d", (long long)userid,
           (long long)n, limit);
    return false;
}
