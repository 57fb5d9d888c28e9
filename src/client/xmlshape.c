/*
 * The XML of projects, app versions, workunits, results and tasks that
 * client_state.xml (statefile.c) and the GUI RPC replies (gui_ops.c) share:
 * BOINC writes both from the same write_state() functions, with the same
 * element names, and so does this. Each function writes the shared fields
 * only; the callers open and close the element (the GUI replies put it
 * alone on its line, as boinccmd's parser wants) and add what is theirs.
 */
#include "volsched/client.h"
#include "volsched/xml.h"

void vs_client_write_frefs(struct vs_xml_writer *w, const struct cl_fref *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        vs_xml_open(w, "file_ref");
        vs_xml_str(w, "file_name", f[i].file_name);
        vs_xml_str(w, "open_name", f[i].open_name);
        if (f[i].main_program)
            vs_xml_flag(w, "main_program");
        if (f[i].copy_file)
            vs_xml_flag(w, "copy_file");
        if (f[i].optional)
            vs_xml_flag(w, "optional");
        vs_xml_close(w);
    }
}

void vs_client_xml_project(struct vs_xml_writer *w, const struct cl_project *p)
{
    vs_xml_str(w, "master_url", p->master_url);
    vs_xml_str(w, "project_name", p->project_name ? p->project_name : "");
    vs_xml_str(w, "user_name", p->user_name ? p->user_name : "");
    vs_xml_str(w, "team_name", p->team_name ? p->team_name : "");
    vs_xml_str(w, "cross_project_id", p->cross_project_id);
    if (p->host_venue && p->host_venue[0])
        vs_xml_str(w, "host_venue", p->host_venue);
    if (p->prefs_source)
        vs_xml_flag(w, "vs_global_prefs_source");
    vs_xml_double(w, "user_total_credit", p->user_total_credit);
    vs_xml_double(w, "user_expavg_credit", p->user_expavg_credit);
    vs_xml_double(w, "host_total_credit", p->host_total_credit);
    vs_xml_double(w, "host_expavg_credit", p->host_expavg_credit);
    vs_xml_int(w, "rpc_seqno", p->rpc_seqno);
    vs_xml_int(w, "userid", p->userid);
    vs_xml_int(w, "teamid", p->teamid);
    vs_xml_int(w, "hostid", p->hostid);
    vs_xml_int(w, "nrpc_failures", p->nrpc_failures);
    vs_xml_int(w, "master_fetch_failures", p->master_fetch_failures);
    vs_xml_double(w, "min_rpc_time", p->min_rpc_time);
    vs_xml_double(w, "next_rpc_time", p->next_rpc_time);
    vs_xml_double(w, "last_rpc_time", p->last_rpc_time);
    vs_xml_double(w, "resource_share", p->resource_share);
    vs_xml_int(w, "njobs_success", p->njobs_success);
    vs_xml_int(w, "njobs_error", p->njobs_error);
    vs_xml_double(w, "elapsed_time", p->elapsed_time);
    if (p->master_url_fetch_pending)
        vs_xml_flag(w, "master_url_fetch_pending");
    if (p->suspended_via_gui)
        vs_xml_flag(w, "suspended_via_gui");
    if (p->dont_request_more_work)
        vs_xml_flag(w, "dont_request_more_work");
    if (p->detach_when_done)
        vs_xml_flag(w, "detach_when_done");
    if (p->non_cpu_intensive)
        vs_xml_flag(w, "non_cpu_intensive");
}

void vs_client_xml_app_version(struct vs_xml_writer *w, const struct cl_app_version *a,
                               double flops)
{
    vs_xml_str(w, "app_name", a->app_name);
    vs_xml_int(w, "version_num", a->version_num);
    vs_xml_str(w, "platform", a->platform);
    vs_xml_str(w, "plan_class", a->plan_class ? a->plan_class : "");
    vs_xml_double(w, "avg_ncpus", a->avg_ncpus);
    vs_xml_double(w, "flops", flops);
    vs_xml_str(w, "api_version", a->api_version);
    vs_xml_str(w, "cmdline", a->cmdline);
    vs_client_write_frefs(w, a->frefs, a->n_frefs);
}

void vs_client_xml_workunit(struct vs_xml_writer *w, const struct cl_wu *u)
{
    vs_xml_str(w, "name", u->name);
    vs_xml_str(w, "app_name", u->app_name);
    vs_xml_int(w, "version_num", u->version_num);
    vs_xml_double(w, "rsc_fpops_est", u->rsc_fpops_est);
    vs_xml_double(w, "rsc_fpops_bound", u->rsc_fpops_bound);
    vs_xml_double(w, "rsc_memory_bound", u->rsc_memory_bound);
    vs_xml_double(w, "rsc_disk_bound", u->rsc_disk_bound);
    vs_xml_str(w, "command_line", u->command_line);
    vs_client_write_frefs(w, u->frefs, u->n_frefs);
}

void vs_client_xml_result(struct vs_xml_writer *w, const struct cl_result *r)
{
    vs_xml_str(w, "name", r->name);
    vs_xml_str(w, "wu_name", r->wu_name);
    vs_xml_str(w, "platform", r->platform ? r->platform : VS_CLIENT_PLATFORM);
    vs_xml_int(w, "version_num", r->version_num);
    vs_xml_str(w, "plan_class", r->plan_class ? r->plan_class : "");
    vs_xml_double(w, "final_cpu_time", r->final_cpu_time);
    vs_xml_double(w, "final_elapsed_time", r->final_elapsed_time);
    vs_xml_int(w, "exit_status", r->exit_status);
    vs_xml_int(w, "state", r->state);
    vs_xml_double(w, "report_deadline", r->report_deadline);
    vs_xml_double(w, "received_time", r->received_time);
    if (r->ready_to_report)
        vs_xml_flag(w, "ready_to_report");
    if (r->suspended_via_gui)
        vs_xml_flag(w, "suspended_via_gui");
}

void vs_client_xml_task(struct vs_xml_writer *w, const struct cl_result *r)
{
    vs_xml_int(w, "active_task_state", r->task_state);
    vs_xml_int(w, "app_version_num", r->version_num);
    vs_xml_int(w, "slot", r->slot);
    vs_xml_int(w, "pid", r->pid);
    vs_xml_double(w, "checkpoint_cpu_time", r->checkpoint_cpu_time);
    vs_xml_double(w, "fraction_done", r->fraction_done);
    vs_xml_double(w, "current_cpu_time", r->current_cpu_time);
    vs_xml_double(w, "elapsed_time", r->elapsed_time);
}
