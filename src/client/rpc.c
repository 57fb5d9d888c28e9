/*
 * Scheduler RPCs (boinc-protocol.md 3-5, boinc-client-notes.md 7): the
 * master page, the request the 7.20.5 client sends, the reply merged into
 * the state. A result is reported until the server acknowledges it and
 * dropped only then. Failures back off exponentially; request_delay and
 * next_rpc_delay are honoured. Anything hostile in a reply (bad names, file
 * URLs that are not http/https, oversize values) is refused with a message
 * naming the project, and the rest of the client goes on.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/https_pin.h"
#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/proto.h"
#include "volsched/str.h"
#include "volsched/xml.h"

#define STDERR_REPORT_MAX (63 * 1024) /* BOINC-COMPAT: the last 63 KB */

/* src/policy/client's backoff (BOINC's rule) between the configured
 * sched_retry_delay_min/max; the draw differs per client and setback, so
 * that many clients do not retry together. */
static double backoff(const struct vs_client *c, int n)
{
    double u = (double)(((unsigned)c->pid * 2654435761u + (unsigned)n) % 1000) / 1000;
    return vs_cbackoff(n, c->prefs.sched_retry_delay_min, c->prefs.sched_retry_delay_max, u);
}

double vs_client_rpc_backoff(const struct vs_client *c, int n)
{
    return backoff(c, n);
}

static void rpc_failed(struct vs_client *c, size_t p, const char *why)
{
    struct cl_project *pr = &c->projects[p];
    pr->nrpc_failures++;
    double d = backoff(c, pr->nrpc_failures);
    pr->min_rpc_time = c->now + d;
    vs_client_msg(c, (long)p, 2, "Scheduler request failed: %s; retrying in %.0f s", why, d);
    /* after repeated failures the scheduler URL may have moved */
    if (pr->nrpc_failures % 5 == 0)
        pr->master_url_fetch_pending = true;
    c->dirty = true;
}

/* The tail of a result's stderr.txt kept at exit (proc.c) is in stderr_out. */
static void fill_report(struct vs_client *c, struct cl_result *r,
                        struct vs_proto_reported_result *o, struct vs_arena *a)
{
    o->name = r->name;
    o->final_cpu_time = r->final_cpu_time;
    o->final_elapsed_time = r->final_elapsed_time;
    o->exit_status = r->exit_status;
    o->state = r->state;
    o->platform = r->platform ? r->platform : VS_CLIENT_PLATFORM;
    o->version_num = r->version_num;
    o->app_version_num = r->version_num;
    o->plan_class = r->plan_class;
    o->core_client_version = "7.20.5";
    o->stderr_text = r->stderr_out ? r->stderr_out : "";
    size_t nf = 0;
    o->files = vs_arena_alloc(a, (r->n_frefs + 1) * sizeof(*o->files));
    for (size_t i = 0; i < r->n_frefs; i++) {
        long f = vs_client_find_file(c, r->project, r->frefs[i].file_name);
        if (f < 0 || c->files[f].status != FS_PRESENT)
            continue;
        struct vs_proto_result_file *rf = &o->files[nf++];
        rf->name = c->files[f].name;
        rf->nbytes = c->files[f].nbytes;
        rf->max_nbytes = c->files[f].max_nbytes;
        rf->md5_cksum = c->files[f].md5[0] ? c->files[f].md5 : NULL;
    }
    o->n_files = nf;
}

/* <estimated_delay> for the CPU (BOINC's busy time), from the last policy
 * step's round-robin simulation, as the simulator sends it. */
static double estimated_delay(struct vs_client *c)
{
    /* no step yet (the arrays outlive have_out) */
    return c->pout.rr.finish ? vs_rrsim_busy_time(&c->cst, &c->pout.rr, &c->ws) : 0;
}

static int build_request(struct vs_client *c, size_t p, double work_req, struct vs_arena *a,
                         struct vs_proto_request *q)
{
    struct cl_project *pr = &c->projects[p];
    memset(q, 0, sizeof(*q));
    q->authenticator = pr->authenticator;
    q->hostid = pr->hostid;
    q->rpc_seqno = pr->hostid ? pr->rpc_seqno : 0;
    q->core_client_major_version = VS_CLIENT_MAJOR;
    q->core_client_minor_version = VS_CLIENT_MINOR;
    q->core_client_release = VS_CLIENT_RELEASE;
    double total = 0;
    for (size_t i = 0; i < c->n_projects; i++)
        total += c->projects[i].resource_share;
    q->resource_share_fraction = total > 0 ? pr->resource_share / total : 1;
    q->rrs_fraction = q->prrs_fraction = q->resource_share_fraction;
    q->duration_correction_factor = 1;
    q->work_req_seconds = work_req;
    q->cpu_req_secs = work_req;
    /* The request is the policy's, in seconds only, as the simulator sends
     * it: 7.20.5 also asks for its idle CPUs as instances, to which a server
     * sends a job each whatever their length (a 1000-hour job per idle CPU
     * on the first RPC), a work-fetch rule of that client's own, not of
     * the seed policies. */
    q->cpu_req_instances = 0;
    q->estimated_delay = work_req > 0 ? estimated_delay(c) : 0;
    q->client_cap_plan_class = 1;
    q->platform_name = VS_CLIENT_PLATFORM;
    q->code_sign_key = pr->code_sign_key;
    q->cross_project_id = pr->cross_project_id;
    q->global_prefs = c->global_prefs_xml;
    /* BOINC-COMPAT: the preferences in force (the project's with the local
     * override on top) as <working_global_preferences>: both buffer sizes,
     * work_buf_min_days and work_buf_additional_days, each as itself */
    struct vs_buf wp;
    vs_buf_init(&wp, 1u << 16);
    if (vs_client_prefs_xml(c, &wp) == 0 && wp.len > 0)
        q->working_global_prefs = vs_arena_strndup(a, wp.data, wp.len);
    vs_buf_cleanup(&wp);

    const struct cl_time_stats *ts = &c->ts;
    q->time_stats.on_frac = ts->on_frac;
    q->time_stats.connected_frac = -1; /* BOINC-COMPAT: unknown on Linux */
    q->time_stats.cpu_and_network_available_frac = ts->cpu_and_network_available_frac;
    q->time_stats.active_frac = ts->active_frac;
    q->time_stats.cpu_efficiency = vs_client_cpu_efficiency(c); /* BOINC 6's, in <time_stats> */
    q->time_stats.gpu_active_frac = ts->gpu_active_frac;
    q->time_stats.client_start_time = ts->client_start_time;
    q->time_stats.total_start_time = ts->total_start_time;
    q->time_stats.total_duration = ts->total_duration;
    q->time_stats.total_active_duration = ts->total_active_duration;
    q->time_stats.total_gpu_active_duration = ts->total_active_duration;
    q->time_stats.now = c->now;
    q->time_stats.previous_uptime = ts->previous_uptime;
    q->time_stats.session_active_duration = ts->session_active_duration;
    q->time_stats.session_gpu_active_duration = ts->session_active_duration;
    q->net_stats.bwup = c->ns.bwup;
    q->net_stats.avg_up = c->ns.avg_up;
    q->net_stats.avg_time_up = c->ns.avg_time_up;
    q->net_stats.bwdown = c->ns.bwdown;
    q->net_stats.avg_down = c->ns.avg_down;
    q->net_stats.avg_time_down = c->ns.avg_time_down;

    const struct cl_host *h = &c->host;
    q->host.timezone = h->timezone;
    q->host.domain_name = h->domain_name;
    q->host.ip_addr = "127.0.0.1";
    q->host.host_cpid = h->host_cpid;
    q->host.p_ncpus = vs_client_ncpus(c); /* cc_config <ncpus> is what the server sees */
    q->host.p_vendor = h->p_vendor;
    q->host.p_model = h->p_model;
    q->host.p_features = h->p_features;
    q->host.p_fpops = h->p_fpops;
    q->host.p_iops = h->p_iops;
    q->host.p_membw = h->p_membw;
    q->host.p_calculated = h->p_calculated;
    q->host.m_nbytes = h->m_nbytes;
    q->host.m_cache = h->m_cache;
    q->host.m_swap = h->m_swap;
    /* BOINC-COMPAT: the disk as get_disk_usages/get_disk_shares see it now */
    vs_client_disk_refresh(c, true);
    q->host.d_total = h->d_total;
    q->host.d_free = h->d_free;
    q->host.os_name = h->os_name;
    q->host.os_version = h->os_version;
    q->disk_usage.d_boinc_used_total = c->disk.total_usage;
    q->disk_usage.d_boinc_used_project = pr->disk_usage;
    q->disk_usage.d_project_share = pr->disk_share;

    size_t nrep = 0, nother = 0;
    for (size_t i = 0; i < c->n_results; i++)
        if (c->results[i].project == p) {
            if (c->results[i].ready_to_report)
                nrep++;
            else
                nother++;
        }
    if (nrep > VS_PROTO_MAX_RESULTS)
        nrep = VS_PROTO_MAX_RESULTS;
    q->results = vs_arena_alloc(a, (nrep + 1) * sizeof(*q->results));
    q->other_results = vs_arena_alloc(a, (nother + 1) * sizeof(*q->other_results));
    if (pr->send_full_workload) {
        q->has_in_progress_results = true;
        q->ip_results = vs_arena_alloc(a, (nother + 1) * sizeof(*q->ip_results));
    }
    for (size_t i = 0; i < c->n_results; i++) {
        struct cl_result *r = &c->results[i];
        if (r->project != p)
            continue;
        if (r->ready_to_report) {
            if (q->n_results < nrep)
                fill_report(c, r, &q->results[q->n_results++], a);
            continue;
        }
        struct vs_proto_other_result *o = &q->other_results[q->n_other_results++];
        o->name = r->name;
        o->app_version = -1;
        o->plan_class = r->plan_class;
        if (q->ip_results) {
            struct vs_proto_ip_result *ip = &q->ip_results[q->n_ip_results++];
            ip->name = r->name;
            ip->report_deadline = r->report_deadline;
            ip->time_remaining = vs_client_remaining(c, r);
            ip->avg_ncpus = vs_client_result_ncpus(c, r);
        }
    }
    q->msgs_from_host = vs_client_trickle_collect(c, p, a, &q->n_msgs_from_host);
    return 0;
}

static bool url_ok(const char *u)
{
    return u && (vs_str_has_prefix(u, "http://") || vs_str_has_prefix(u, "https://")) &&
           strlen(u) < 2048 && !strchr(u, '\n') && !strchr(u, '"');
}

static void copy_frefs(struct cl_fref *dst, size_t *n, const struct vs_proto_file_ref *src,
                       size_t nsrc)
{
    *n = 0;
    for (size_t i = 0; i < nsrc && *n < VS_CLIENT_MAX_FREFS; i++) {
        struct cl_fref *f = &dst[(*n)++];
        f->file_name = vs_xstrdup(src[i].file_name);
        f->open_name = vs_client_strdup(src[i].open_name);
        f->main_program = src[i].main_program;
        f->copy_file = src[i].copy_file;
        f->optional = src[i].optional;
    }
}

/* Checks names a reply gives files (which become paths) before anything is stored. */
static const char *reply_problem(const struct vs_proto_reply *y)
{
    static char why[300];
    for (size_t i = 0; i < y->n_file_infos; i++) {
        const struct vs_proto_file_info *f = &y->file_infos[i];
        if (!vs_client_safe_name(f->name)) {
            snprintf(why, sizeof(why), "file name '%.200s' is not a plain file name",
                     f->name ? f->name : "");
            return why;
        }
        if (f->nbytes < 0 || f->nbytes > (double)VS_CLIENT_MAX_FILE || f->max_nbytes < 0 ||
            f->max_nbytes > (double)VS_CLIENT_MAX_FILE) {
            snprintf(why, sizeof(why), "file %.200s: size out of range", f->name);
            return why;
        }
    }
    for (size_t i = 0; i < y->n_app_versions; i++)
        for (size_t j = 0; j < y->app_versions[i].n_file_refs; j++) {
            const struct vs_proto_file_ref *fr = &y->app_versions[i].file_refs[j];
            if (!vs_client_safe_name(fr->file_name) ||
                (fr->open_name && !vs_client_safe_name(fr->open_name))) {
                snprintf(why, sizeof(why), "app version file reference '%.200s' is unsafe",
                         fr->file_name ? fr->file_name : "");
                return why;
            }
        }
    for (size_t i = 0; i < y->n_workunits; i++) {
        if (!vs_client_safe_name(y->workunits[i].name))
            return "a workunit name is not a plain name";
        for (size_t j = 0; j < y->workunits[i].n_file_refs; j++) {
            const struct vs_proto_file_ref *fr = &y->workunits[i].file_refs[j];
            if (!vs_client_safe_name(fr->file_name) ||
                (fr->open_name && !vs_client_safe_name(fr->open_name)))
                return "a workunit file reference is not a plain name";
        }
    }
    for (size_t i = 0; i < y->n_results; i++) {
        if (!vs_client_safe_name(y->results[i].name) || !vs_client_safe_name(y->results[i].wu_name))
            return "a result name is not a plain name";
        for (size_t j = 0; j < y->results[i].n_file_refs; j++) {
            const struct vs_proto_file_ref *fr = &y->results[i].file_refs[j];
            if (!vs_client_safe_name(fr->file_name) ||
                (fr->open_name && !vs_client_safe_name(fr->open_name)))
                return "a result file reference is not a plain name";
        }
    }
    return NULL;
}

static void merge_file(struct vs_client *c, size_t p, const struct vs_proto_file_info *fi)
{
    long k = vs_client_find_file(c, p, fi->name);
    struct cl_file *f;
    if (k >= 0) {
        f = &c->files[k];
        if (f->status == FS_PRESENT)
            return;
    } else {
        f = vs_client_add_file(c);
        f->name = vs_xstrdup(fi->name);
        f->project = p;
    }
    f->nbytes = fi->nbytes;
    f->max_nbytes = fi->max_nbytes;
    snprintf(f->md5, sizeof(f->md5), "%s", fi->md5_cksum ? fi->md5_cksum : "");
    f->executable = fi->executable;
    f->sticky = fi->sticky;
    vs_client_setstr(&f->file_signature, fi->file_signature);
    vs_client_setstr(&f->xml_signature, fi->xml_signature);
    for (size_t i = 0; i < f->n_urls; i++)
        vs_free(f->urls[i]);
    f->n_urls = 0;
    for (size_t i = 0; i < fi->n_urls && f->n_urls < VS_CLIENT_MAX_URLS; i++) {
        const struct vs_proto_url *u = &fi->urls[i];
        bool up = u->kind == VS_PROTO_URL_UPLOAD ||
                  (u->kind == VS_PROTO_URL && strstr(u->url, "file_upload_handler"));
        if (u->kind == VS_PROTO_URL_GZIPPED)
            continue;
        if (!url_ok(u->url)) {
            vs_client_msg(c, (long)p, 3, "File %s: URL '%.200s' is not http or https; ignored",
                          fi->name, u->url);
            continue;
        }
        if (up)
            f->is_output = true;
        f->urls[f->n_urls++] = vs_xstrdup(u->url);
    }
    if (fi->xml_signature)
        f->is_output = true;
    if (!f->is_output && f->n_urls == 0) {
        /* nothing to download it from: the results that need it fail (xfer.c) */
        f->status = FS_ERR;
        vs_client_setstr(&f->error, "no http or https URL to download it from");
        vs_client_msg(c, (long)p, 3, "File %s has no usable download URL", fi->name);
    }
}

static void merge_reply(struct vs_client *c, size_t p, const struct vs_proto_reply *y,
                        struct vs_arena *a, int *out_new)
{
    struct cl_project *pr = &c->projects[p];
    if (y->project_name && *y->project_name)
        vs_client_setstr(&pr->project_name, y->project_name);
    if (y->hostid > 0 && y->hostid != pr->hostid) {
        /* BOINC-COMPAT: a new host id resets the sequence number */
        pr->hostid = y->hostid;
        pr->rpc_seqno = 0;
    }
    if (y->has_user_info) {
        pr->userid = y->userid;
        vs_client_setstr(&pr->user_name, y->user_name);
        vs_client_setstr(&pr->team_name, y->team_name);
        pr->teamid = y->teamid;
        pr->user_total_credit = y->user_total_credit;
        pr->user_expavg_credit = y->user_expavg_credit;
        pr->host_total_credit = y->host_total_credit;
        pr->host_expavg_credit = y->host_expavg_credit;
    }
    vs_client_stats_update(c, p); /* BOINC-COMPAT: after every reply */
    if (y->cross_project_id)
        vs_client_setstr(&pr->cross_project_id, y->cross_project_id);
    for (size_t i = 0; i < y->n_messages; i++)
        vs_client_msg(c, (long)p,
                      y->messages[i].priority && strcmp(y->messages[i].priority, "low") != 0 ? 2
                                                                                             : 1,
                      "Message from server: %s", y->messages[i].text ? y->messages[i].text : "");
    if (y->code_sign_key && !pr->code_sign_key)
        pr->code_sign_key = vs_xstrdup(y->code_sign_key);
    pr->send_full_workload = y->send_full_workload;
    pr->non_cpu_intensive = y->non_cpu_intensive;
    if (y->project_prefs) {
        vs_client_setstr(&pr->project_prefs, y->project_prefs);
        vs_client_share_from_prefs(c, p);
        (void)vs_client_write_account(c, p);
    }
    /* BOINC-COMPAT: the host's venue here, sent in every reply; a new one
     * at the project the global prefs came from picks another section. */
    bool venue_moved = y->host_venue && strcmp(y->host_venue, pr->host_venue ? pr->host_venue : "");
    if (venue_moved) {
        vs_client_msg(c, (long)p, 1, "The computer's venue here is now \"%s\"", y->host_venue);
        vs_client_setstr(&pr->host_venue, y->host_venue);
    }
    if (y->global_prefs) {
        char path[VS_CLIENT_PATH_MAX];
        if (vs_client_path(c, path, sizeof(path), "global_prefs.xml") == 0 &&
            vs_client_write_atomic(path, y->global_prefs, strlen(y->global_prefs), false) == 0) {
            vs_client_setstr(&c->global_prefs_xml, y->global_prefs);
            for (size_t i = 0; i < c->n_projects; i++)
                c->projects[i].prefs_source = i == p;
            vs_client_prefs_read(c);
        }
    } else if (venue_moved && pr->prefs_source) {
        vs_client_prefs_read(c);
    }
    /* what of it this project may add (limits.c: caps, nothing unused) */
    struct cl_admit adm;
    vs_client_admit(c, p, y, a, &adm);
    for (size_t i = 0; i < y->n_apps; i++) {
        if (!adm.app[i] || vs_client_find_app(c, p, y->apps[i].name) >= 0)
            continue;
        struct cl_app *ap = vs_client_add_app(c);
        ap->name = vs_xstrdup(y->apps[i].name);
        ap->project = p;
        ap->non_cpu_intensive = y->apps[i].non_cpu_intensive;
    }
    for (size_t i = 0; i < y->n_file_infos; i++)
        if (adm.file[i])
            merge_file(c, p, &y->file_infos[i]);
    for (size_t i = 0; i < y->n_app_versions; i++) {
        const struct vs_proto_app_version *v = &y->app_versions[i];
        if (!adm.av[i] || vs_client_find_av(c, p, v->app_name, v->version_num, v->plan_class) >= 0)
            continue;
        struct cl_app_version *av = vs_client_add_av(c);
        av->app_name = vs_xstrdup(v->app_name);
        av->project = p;
        av->version_num = v->version_num;
        av->platform = vs_client_strdup(v->platform);
        av->plan_class = vs_client_strdup(v->plan_class);
        av->api_version = vs_client_strdup(v->api_version);
        av->avg_ncpus = v->avg_ncpus > 0 ? v->avg_ncpus : 1;
        av->flops = v->flops;
        av->cmdline = vs_client_strdup(v->cmdline);
        copy_frefs(av->frefs, &av->n_frefs, v->file_refs, v->n_file_refs);
        for (size_t j = 0; j < av->n_frefs; j++) {
            long f = vs_client_find_file(c, p, av->frefs[j].file_name);
            /* BOINC-COMPAT: every file of an app version must carry the project's signature */
            if (f >= 0)
                c->files[f].signature_required = true;
        }
    }
    for (size_t i = 0; i < y->n_workunits; i++) {
        const struct vs_proto_workunit *u = &y->workunits[i];
        if (!adm.wu[i] || vs_client_find_wu(c, p, u->name) >= 0)
            continue;
        struct cl_wu *w = vs_client_add_wu(c);
        w->name = vs_xstrdup(u->name);
        w->project = p;
        w->app_name = vs_xstrdup(u->app_name ? u->app_name : "");
        w->command_line = vs_client_strdup(u->command_line);
        w->rsc_fpops_est = u->rsc_fpops_est;
        w->rsc_fpops_bound = u->rsc_fpops_bound;
        w->rsc_memory_bound = u->rsc_memory_bound;
        w->rsc_disk_bound = u->rsc_disk_bound;
        copy_frefs(w->frefs, &w->n_frefs, u->file_refs, u->n_file_refs);
    }
    int nnew = 0;
    for (size_t i = 0; i < y->n_results; i++) {
        const struct vs_proto_result *s = &y->results[i];
        if (!adm.result[i] || vs_client_find_result(c, p, s->name) >= 0)
            continue;
        if (vs_client_find_wu(c, p, s->wu_name) < 0) {
            vs_client_msg(c, (long)p, 3, "Result %s names workunit %s, which the reply lacks",
                          s->name, s->wu_name);
            continue;
        }
        struct cl_result *r = vs_client_add_result(c);
        r->name = vs_xstrdup(s->name);
        r->project = p;
        r->wu_name = vs_xstrdup(s->wu_name);
        r->platform = vs_client_strdup(s->platform);
        r->version_num = s->version_num;
        r->plan_class = vs_client_strdup(s->plan_class);
        r->report_deadline = s->report_deadline;
        r->received_time = c->now;
        r->report_immediately = s->report_immediately;
        r->state = RS_FILES_DOWNLOADING;
        copy_frefs(r->frefs, &r->n_frefs, s->file_refs, s->n_file_refs);
        for (size_t j = 0; j < r->n_frefs; j++) {
            long f = vs_client_find_file(c, p, r->frefs[j].file_name);
            if (f >= 0)
                c->files[f].is_output = true;
        }
        /* what the fair policy's work fetch knows of the project's jobs */
        double est = vs_client_remaining(c, r), bound = r->report_deadline - c->now;
        if (est > 0 && isfinite(est) && bound > 0 && isfinite(bound)) {
            c->projects[p].job_est = est;
            c->projects[p].job_delay_bound = bound;
        }
        nnew++;
    }
    /* acknowledged results go in one pass (and what only they used) */
    bool *acked = vs_arena_alloc(a, c->n_results + 1);
    size_t n_acked = 0;
    for (size_t i = 0; i < y->n_result_acks; i++) {
        long r = vs_client_find_result(c, p, y->result_acks[i]);
        if (r < 0 || !c->results[r].ready_to_report || acked[r])
            continue;
        vs_client_old_result(c, (size_t)r);
        acked[r] = true;
        n_acked++;
    }
    if (n_acked)
        vs_client_drop_results(c, acked);
    for (size_t i = 0; i < y->n_result_aborts; i++) {
        long r = vs_client_find_result(c, p, y->result_aborts[i]);
        if (r >= 0) {
            vs_client_msg(c, (long)p, 1, "Aborting task %s: project request", c->results[r].name);
            c->results[r].abort_requested = true;
            c->results[r].abort_code = EXIT_ABORTED_BY_PROJ;
        }
    }
    for (size_t i = 0; i < y->n_result_aborts_if_not_started; i++) {
        long r = vs_client_find_result(c, p, y->result_aborts_if_not_started[i]);
        if (r >= 0 && c->results[r].ctask == VS_CTASK_UNSTARTED) {
            c->results[r].abort_requested = true;
            c->results[r].abort_code = EXIT_ABORTED_BY_PROJ;
        }
    }
    /* BOINC-COMPAT: <delete_file_info> ends a file's stickiness; it goes
     * when nothing uses it */
    for (size_t i = 0; i < y->n_delete_file_infos; i++) {
        long f = vs_client_find_file(c, p, y->delete_file_infos[i]);
        if (f >= 0 && c->files[f].sticky) {
            vs_client_msg(c, (long)p, 1, "Got server request to delete file %s", c->files[f].name);
            c->files[f].sticky = false;
        }
    }
    (void)vs_client_gc(c, (long)p);
    *out_new = nnew;
}

/* A scheduler RPC in flight (one at a time with the master page fetches,
 * as BOINC's SCHEDULER_OP): the request stays here until it is sent, the
 * reply comes here. */
struct rpc_ctx {
    char *project_url; /* the project is found again by it: it may be detached meanwhile */
    double work_req;
    size_t n_trickles; /* trickle-ups the request carries */
    struct vs_buf body, reply;
};

static void rpc_ctx_free(struct rpc_ctx *x)
{
    vs_buf_cleanup(&x->body);
    vs_buf_cleanup(&x->reply);
    vs_free(x->project_url);
    vs_free(x);
}

static void rpc_done(struct vs_client *c, void *ud, const struct cl_http_done *d);

int vs_client_rpc_do(struct vs_client *c, size_t p, double work_req)
{
    struct cl_project *pr = &c->projects[p];
    vs_client_https_filter(c, p);
    if (pr->n_scheduler_urls == 0)
        return vs_client_master_fetch(c, p);
    if (!pr->ever_rpc && work_req > 1)
        work_req = 1; /* BOINC-COMPAT: the first RPC asks for 1 s */
    if (pr->dont_request_more_work || pr->suspended_via_gui)
        work_req = 0;
    if (pr->hostid)
        pr->rpc_seqno++; /* BOINC-COMPAT: incremented when the RPC starts */
    struct vs_arena a;
    vs_arena_init(&a, 1u << 16);
    struct vs_proto_request q;
    struct rpc_ctx *x = VS_NEW(struct rpc_ctx);
    x->project_url = vs_xstrdup(pr->master_url);
    x->work_req = work_req;
    vs_buf_init(&x->body, VS_PROTO_MAX_REQUEST_BYTES);
    vs_buf_init(&x->reply, VS_PROTO_MAX_REPLY_BYTES);
    int rc = build_request(c, p, work_req, &a, &q);
    if (rc == 0)
        rc = vs_proto_request_write(&q, &x->body);
    if (rc) {
        vs_client_msg(c, (long)p, 3, "Couldn't build the scheduler request: %s", vs_strerror(rc));
        rpc_ctx_free(x);
        vs_arena_cleanup(&a);
        rpc_failed(c, p, "request too large");
        return rc;
    }
    x->n_trickles = q.n_msgs_from_host;
    char esc[512], path[VS_CLIENT_PATH_MAX];
    vs_client_escape_url(pr->master_url, esc, sizeof(esc));
    if (vs_client_path(c, path, sizeof(path), "sched_request_%s.xml", esc) == 0)
        (void)vs_client_write_private(path, x->body.data, x->body.len, false);
    const char *why = work_req > 0 ? "To fetch work" : "Requested by user";
    if (q.n_results)
        why = "To report completed tasks";
    vs_client_msg(c, (long)p, 1, "Sending scheduler request: %s.", why);
    if (q.n_results)
        vs_client_msg(c, (long)p, 1, "Reporting %zu completed tasks", q.n_results);
    if (work_req > 0)
        vs_client_msg(c, (long)p, 1, "Requesting new tasks for CPU (%.0f s)", work_req);
    else
        vs_client_msg(c, (long)p, 1, "Not requesting tasks");
    vs_arena_cleanup(&a);
    pr->last_rpc_time = c->now;
    pr->sched_rpc_pending = false;
    struct cl_http_req hq = {
        .kind = CL_NET_RPC,
        .project_url = x->project_url,
        .url = pr->scheduler_urls[(size_t)pr->nrpc_failures % pr->n_scheduler_urls],
        .body = x->body.data,
        .len = x->body.len,
        .reply = &x->reply,
        .timeout_s = VS_CLIENT_RPC_TIMEOUT_S,
    };
    rc = vs_client_http_start(c, &hq, rpc_done, x);
    if (rc) {
        rpc_ctx_free(x);
        rpc_failed(c, p, vs_strerror(rc));
    }
    return rc;
}

static void rpc_done(struct vs_client *c, void *ud, const struct cl_http_done *d)
{
    struct rpc_ctx *x = ud;
    long pl = d->abandoned ? -1 : vs_client_find_project(c, x->project_url);
    if (pl < 0) { /* abandoned, or detached meanwhile */
        rpc_ctx_free(x);
        return;
    }
    size_t p = (size_t)pl;
    struct cl_project *pr = &c->projects[p];
    double work_req = x->work_req;
    struct vs_buf *reply = &x->reply;
    struct vs_arena a;
    vs_arena_init(&a, 1u << 16);
    if (d->rc || d->code != 200) {
        char why2[300];
        snprintf(why2, sizeof(why2), "%s", d->rc ? d->why : "HTTP error");
        if (!d->rc)
            snprintf(why2, sizeof(why2), "HTTP status %ld", d->code);
        rpc_failed(c, p, why2);
        goto out;
    }
    char esc[512], path[VS_CLIENT_PATH_MAX];
    vs_client_escape_url(pr->master_url, esc, sizeof(esc));
    if (vs_client_path(c, path, sizeof(path), "sched_reply_%s.xml", esc) == 0)
        (void)vs_client_write_atomic(path, reply->data, reply->len, false);
    struct vs_proto_reply y;
    struct vs_proto_error pe;
    if (vs_proto_reply_parse(reply->data, reply->len, &a, &y, &pe) != 0) {
        vs_client_msg(c, (long)p, 3, "Scheduler reply is malformed: %s", pe.msg);
        rpc_failed(c, p, "malformed reply");
        goto out;
    }
    const char *bad = reply_problem(&y);
    char roles_why[600];
    if (!bad && !vs_client_file_roles_ok(c, p, &y, roles_why, sizeof(roles_why)))
        bad = roles_why;
    if (bad) {
        vs_client_msg(c, (long)p, 3, "Scheduler reply refused: %s", bad);
        rpc_failed(c, p, "hostile reply");
        goto out;
    }
    if (y.master_url && strcmp(y.master_url, pr->master_url) != 0)
        VS_LOG(&c->log, VS_LOG_WARN, "reply names master URL %s", y.master_url);
    int nnew = 0;
    merge_reply(c, p, &y, &a, &nnew);
    vs_client_trickle_reply(c, p, reply->data, reply->len, x->n_trickles);
    pr = &c->projects[p];
    pr->ever_rpc = true;
    pr->nrpc_failures = 0;
    pr->min_rpc_time = 0;
    if (y.request_delay > 0)
        pr->min_rpc_time = c->now + fmin(y.request_delay, 28 * 86400.0);
    pr->next_rpc_time = y.next_rpc_delay > 0 ? c->now + fmin(y.next_rpc_delay, 28 * 86400.0) : 0;
    /* Seed 000: "no work because of deadlines" (volsched's server says so)
     * makes the project latency-limited until the request delay has passed
     * (src/policy/client, the rule the host simulator applies too). */
    bool deadlines = work_req > 0 && y.vs_no_work_because_of_deadlines;
    pr->latency_limited_until =
        vs_clatency_limited_until(c->now, nnew, deadlines, fmin(y.request_delay, 28 * 86400.0));
    if (pr->latency_limited_until > 0)
        vs_client_msg(c, (long)p, 1,
                      "Project has tasks, but none this computer could finish before its "
                      "deadline with its queue: latency-limited for %.0f s",
                      pr->latency_limited_until - c->now);
    if (work_req > 0 && nnew == 0 && !deadlines) {
        /* BOINC-COMPAT: the per-resource backoff when a request brought
         * nothing: only work requests wait; reports and user requests do
         * not (the policy sees it as work_backoff_until) */
        if (pr->no_work_count < VS_CBACKOFF_CAP)
            pr->no_work_count++;
        pr->work_backoff_until = c->now + backoff(c, pr->no_work_count);
    }
    if (nnew > 0) {
        pr->no_work_count = 0;
        pr->work_backoff_until = 0;
    }
    if (y.project_is_down)
        vs_client_msg(c, (long)p, 2, "Project is down");
    vs_client_msg(c, (long)p, 1, "Scheduler request completed: got %d new tasks", nnew);
    if (nnew)
        vs_client_msg(c, (long)p, 1, "Project requested delay of %.0f seconds", y.request_delay);
    c->dirty = true;
    /* durable now: acked results are gone, new ones are recorded */
    (void)vs_client_state_write(c);
out:
    /* the RPC's end is an event: the policy chooses again (a project that
     * failed is backed off now, and another may be asked at once) */
    c->resched = true;
    vs_arena_cleanup(&a);
    rpc_ctx_free(x);
}

void vs_client_old_result(struct vs_client *c, size_t r)
{
    const struct cl_result *res = &c->results[r];
    struct cl_old_result *o = &c->old[c->n_old % (sizeof(c->old) / sizeof(c->old[0]))];
    c->n_old++;
    memset(o, 0, sizeof(*o));
    snprintf(o->project_url, sizeof(o->project_url), "%s", c->projects[res->project].master_url);
    snprintf(o->result_name, sizeof(o->result_name), "%s", res->name);
    const struct cl_wu *w = vs_client_result_wu(c, res);
    snprintf(o->app_name, sizeof(o->app_name), "%s", w ? w->app_name : "");
    o->exit_status = res->exit_status;
    o->elapsed_time = res->final_elapsed_time;
    o->cpu_time = res->final_cpu_time;
    o->completed_time = res->completed_time;
    o->create_time = res->received_time;
    vs_client_msg(c, (long)res->project, 1,
                  "[sched_op] handle_scheduler_reply(): got ack for task %s", res->name);
}

static bool report_due(const struct vs_client *c, size_t p)
{
    for (size_t i = 0; i < c->n_results; i++) {
        const struct cl_result *r = &c->results[i];
        if (r->project != p || !r->ready_to_report)
            continue;
        if (c->prefs.report_results_immediately || r->report_immediately)
            return true;
        /* BOINC-COMPAT: otherwise within a day, or well before the deadline */
        if (c->now - r->completed_time > 86400 || r->report_deadline - c->now < 86400)
            return true;
    }
    return false;
}

bool vs_client_report_due(const struct vs_client *c, size_t p)
{
    return report_due(c, p);
}

bool vs_client_rpc_poll(struct vs_client *c)
{
    if (c->network_mode == RUN_MODE_NEVER) {
        vs_client_net_abandon(c, CL_NET_RPC, NULL);
        return false;
    }
    if (vs_client_net_count(c, CL_NET_RPC, NULL) > 0)
        return false; /* one at a time; its end is an event (rpc_done, master_done) */
    /* 1. master fetches and RPCs the user or the server asked for */
    for (size_t p = 0; p < c->n_projects; p++) {
        struct cl_project *pr = &c->projects[p];
        if (c->now < pr->min_rpc_time) /* a user's update lifts it (gui_ops.c) */
            continue;
        if (pr->master_url_fetch_pending || pr->n_scheduler_urls == 0) {
            (void)vs_client_master_fetch(c, p);
            return true;
        }
        /* (a report or trickle due during a work backoff is the policy's
         * forced RPC, below, with no work asked) */
        bool due = pr->sched_rpc_pending || !pr->ever_rpc ||
                   (pr->next_rpc_time > 0 && c->now >= pr->next_rpc_time);
        if (due) {
            double req = 0;
            if (c->have_out && c->pout.fetch.project == (long)p)
                req = c->pout.fetch.request_pn;
            if (!pr->ever_rpc)
                req = 1;
            (void)vs_client_rpc_do(c, p, req);
            return true;
        }
    }
    /* 2. what the work-fetch policy chose (forced reasons included: report, trickle) */
    if (c->have_out && c->pout.fetch.project >= 0 &&
        (size_t)c->pout.fetch.project < c->n_projects) {
        size_t p = (size_t)c->pout.fetch.project;
        struct cl_project *pr = &c->projects[p];
        if (c->now >= pr->min_rpc_time) {
            double req = c->pout.fetch.request_pn;
            if (!(req > 0) || !isfinite(req))
                req = 0;
            if (req > 0 || c->pout.fetch.reason != VS_CFETCH_WORK) {
                c->have_out = false; /* one RPC per policy decision */
                (void)vs_client_rpc_do(c, p, req);
                return true;
            }
        }
    }
    return false;
}
