/*
 * The GUI RPC operations boinccmd 7.20.5 sends (boinc-client-notes.md 5.3)
 * and the replies in the shapes its parser reads (5.4).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "client/gui_rpc_int.h"
#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/fs.h"
#include "volsched/xml.h"

static void w_project(struct vs_xml_writer *w, const struct vs_client *c, size_t p)
{
    const struct cl_project *pr = &c->projects[p];
    char pdir[VS_CLIENT_PATH_MAX];
    if (vs_client_project_dir(c, p, pdir, sizeof(pdir)))
        pdir[0] = '\0';
    vs_xml_raw_write(w, "<project>\n", 10);
    vs_client_xml_project(w, pr);
    /* BOINC-COMPAT: the rest of 7.20's PROJECT::write_state(gui_rpc) */
    if (!pr->cross_project_id)
        vs_xml_str(w, "cross_project_id", "");
    vs_xml_str(w, "symstore", "");
    vs_xml_double(w, "cpid_time", 0);
    vs_xml_double(w, "user_create_time", 0);
    vs_xml_double(w, "host_create_time", 0);
    vs_xml_raw_write(
        w, "<rsc_backoff_time>\n<name>CPU</name>\n<value>0</value>\n</rsc_backoff_time>\n", 73);
    vs_xml_raw_write(
        w, "<rsc_backoff_interval>\n<name>CPU</name>\n<value>0</value>\n</rsc_backoff_interval>\n",
        81);
    vs_xml_str(w, "host_venue", "");
    vs_xml_str(w, "email_hash", "");
    vs_xml_str(w, "external_cpid", "");
    vs_xml_double(w, "rec", 0);
    vs_xml_double(w, "rec_time", 0);
    vs_xml_double(w, "disk_usage", pr->disk_usage);
    vs_xml_double(w, "disk_share", pr->disk_share);
    vs_xml_double(w, "desired_disk_usage", 0);
    vs_xml_double(w, "duration_correction_factor", 1);
    vs_xml_int(w, "sched_rpc_pending", pr->sched_rpc_pending ? 1 : 0);
    vs_xml_int(w, "send_time_stats_log", 0);
    vs_xml_int(w, "send_job_log", 0);
    vs_xml_double(w, "sched_priority", 0);
    vs_xml_double(w, "project_files_downloaded_time", 0);
    vs_xml_str(w, "project_dir", pdir);
    vs_xml_raw_write(w, "</project>\n", 11);
}

void vs_client_gui_write_result(struct vs_xml_writer *w, struct vs_client *c, size_t i)
{
    const struct cl_result *r = &c->results[i];
    /* BOINC-COMPAT: <result> alone on its line (boinccmd matches lines) */
    vs_xml_raw_write(w, "<result>\n", 9);
    vs_client_xml_result(w, r);
    vs_xml_str(w, "project_url", c->projects[r->project].master_url);
    vs_xml_double(w, "estimated_cpu_time_remaining", vs_client_remaining(c, r));
    if (r->project < c->n_projects && c->projects[r->project].suspended_via_gui)
        vs_xml_flag(w, "project_suspended_via_gui");
    if (r->slot >= 0 && r->state < RS_COMPUTE_ERROR) {
        vs_xml_raw_write(w, "<active_task>\n", 14);
        vs_client_xml_task(w, r);
        /* BOINC-COMPAT: scheduler_state 2 = scheduled, 1 = preempted */
        vs_xml_int(w, "scheduler_state", r->ctask == VS_CTASK_RUNNING ? 2 : 1);
        vs_xml_double(w, "swap_size", 0);
        vs_xml_double(w, "working_set_size", 0);
        vs_xml_double(w, "working_set_size_smoothed", 0);
        vs_xml_double(w, "page_fault_rate", 0);
        vs_xml_double(w, "bytes_sent", 0);
        vs_xml_double(w, "bytes_received", 0);
        /* BOINC-COMPAT: fraction done per elapsed second, once the app
         * has reported a fraction done (BOINC writes none before) */
        if (r->elapsed_time > 0 && r->fraction_done > 0)
            vs_xml_double(w, "progress_rate", r->fraction_done / r->elapsed_time);
        vs_xml_raw_write(w, "</active_task>\n", 15);
    }
    vs_xml_raw_write(w, "</result>\n", 10);
}

static void w_host(struct vs_xml_writer *w, const struct vs_client *c)
{
    const struct cl_host *h = &c->host;
    vs_xml_raw_write(w, "<host_info>\n", 12);
    vs_xml_int(w, "timezone", h->timezone);
    vs_xml_str(w, "domain_name", h->domain_name);
    vs_xml_str(w, "ip_addr", "127.0.0.1");
    vs_xml_str(w, "host_cpid", h->host_cpid);
    vs_xml_int(w, "p_ncpus", vs_client_ncpus(c));
    vs_xml_str(w, "p_vendor", h->p_vendor);
    vs_xml_str(w, "p_model", h->p_model);
    vs_xml_str(w, "p_features", h->p_features);
    vs_xml_double(w, "p_fpops", h->p_fpops);
    vs_xml_double(w, "p_iops", h->p_iops);
    vs_xml_double(w, "p_membw", h->p_membw);
    vs_xml_double(w, "p_calculated", h->p_calculated);
    vs_xml_double(w, "m_nbytes", h->m_nbytes);
    vs_xml_double(w, "m_cache", h->m_cache);
    vs_xml_double(w, "m_swap", h->m_swap);
    vs_xml_double(w, "d_total", h->d_total);
    vs_xml_double(w, "d_free", h->d_free);
    vs_xml_str(w, "os_name", h->os_name);
    vs_xml_str(w, "os_version", h->os_version);
    vs_xml_int(w, "n_usable_coprocs", 0);
    vs_xml_int(w, "wsl_available", 0);
    vs_xml_int(w, "p_vm_extensions_disabled", 0);
    /* BOINC-COMPAT: 7.20 always writes <coprocs> (empty: no GPU is used) */
    vs_xml_raw_write(w, "<coprocs>\n</coprocs>\n", 21);
    vs_xml_raw_write(w, "</host_info>\n", 13);
}

static void w_state(struct vs_xml_writer *w, struct vs_client *c)
{
    vs_xml_raw_write(w, "<client_state>\n", 15);
    w_host(w, c);
    vs_xml_raw_write(w, "<net_stats>\n", 12);
    vs_xml_double(w, "bwup", c->ns.bwup);
    vs_xml_double(w, "avg_up", c->ns.avg_up);
    vs_xml_double(w, "avg_time_up", c->ns.avg_time_up);
    vs_xml_double(w, "bwdown", c->ns.bwdown);
    vs_xml_double(w, "avg_down", c->ns.avg_down);
    vs_xml_double(w, "avg_time_down", c->ns.avg_time_down);
    vs_xml_raw_write(w, "</net_stats>\n", 13);
    vs_xml_raw_write(w, "<time_stats>\n", 13);
    vs_xml_double(w, "on_frac", c->ts.on_frac);
    vs_xml_double(w, "connected_frac", -1);
    vs_xml_double(w, "cpu_and_network_available_frac", c->ts.cpu_and_network_available_frac);
    vs_xml_double(w, "active_frac", c->ts.active_frac);
    vs_xml_double(w, "gpu_active_frac", c->ts.gpu_active_frac);
    vs_xml_double(w, "client_start_time", c->ts.client_start_time);
    vs_xml_double(w, "total_start_time", c->ts.total_start_time);
    vs_xml_double(w, "total_duration", c->ts.total_duration);
    vs_xml_double(w, "total_active_duration", c->ts.total_active_duration);
    vs_xml_double(w, "now", c->now);
    vs_xml_double(w, "previous_uptime", c->ts.previous_uptime);
    vs_xml_double(w, "session_active_duration", c->ts.session_active_duration);
    vs_xml_double(w, "session_gpu_active_duration", 0);
    vs_xml_double(w, "total_gpu_active_duration", 0);
    vs_xml_raw_write(w, "</time_stats>\n", 14);
    /* BOINC-COMPAT: per project: project, apps, app versions, workunits, results */
    for (size_t p = 0; p < c->n_projects; p++) {
        w_project(w, c, p);
        for (size_t i = 0; i < c->n_apps; i++)
            if (c->apps[i].project == p) {
                vs_xml_raw_write(w, "<app>\n", 6);
                vs_xml_str(w, "name", c->apps[i].name);
                vs_xml_str(w, "user_friendly_name", c->apps[i].name);
                vs_xml_int(w, "non_cpu_intensive", c->apps[i].non_cpu_intensive ? 1 : 0);
                vs_xml_raw_write(w, "</app>\n", 7);
            }
        for (size_t i = 0; i < c->n_avs; i++)
            if (c->avs[i].project == p) {
                const struct cl_app_version *av = &c->avs[i];
                vs_xml_raw_write(w, "<app_version>\n", 14);
                vs_client_xml_app_version(w, av, av->flops > 0 ? av->flops : c->host.p_fpops);
                vs_xml_raw_write(w, "</app_version>\n", 15);
            }
        for (size_t i = 0; i < c->n_wus; i++)
            if (c->wus[i].project == p) {
                const struct cl_wu *u = &c->wus[i];
                vs_xml_raw_write(w, "<workunit>\n", 11);
                vs_client_xml_workunit(w, u);
                vs_xml_raw_write(w, "</workunit>\n", 12);
            }
        for (size_t i = 0; i < c->n_results; i++)
            if (c->results[i].project == p)
                vs_client_gui_write_result(w, c, i);
    }
    vs_xml_str(w, "platform_name", VS_CLIENT_PLATFORM);
    vs_xml_int(w, "core_client_major_version", VS_CLIENT_MAJOR);
    vs_xml_int(w, "core_client_minor_version", VS_CLIENT_MINOR);
    vs_xml_int(w, "core_client_release", VS_CLIENT_RELEASE);
    vs_xml_int(w, "executing_as_daemon", c->foreground ? 0 : 1);
    vs_xml_str(w, "platform", VS_CLIENT_PLATFORM);
    vs_client_gui_prefs_working(c, w);
    vs_xml_raw_write(w, "</client_state>\n", 16);
}

static void w_messages(struct vs_xml_writer *w, const struct vs_client *c, int64_t after)
{
    vs_xml_raw_write(w, "<msgs>\n", 7);
    size_t start = (c->msgs_head + VS_CLIENT_MSG_KEEP - c->n_msgs) % VS_CLIENT_MSG_KEEP;
    for (size_t k = 0; k < c->n_msgs; k++) {
        const struct cl_msg *m = &c->msgs[(start + k) % VS_CLIENT_MSG_KEEP];
        if (m->seqno <= after)
            continue;
        char head[400];
        int n = snprintf(head, sizeof(head), "<msg>\n <project>");
        vs_xml_raw_write(w, head, (size_t)n);
        if (vs_xml_escape(w->out, m->project, strlen(m->project)) != 0)
            w->err = VS_ELIMIT;
        n = snprintf(head, sizeof(head), "</project>\n <pri>%d</pri>\n <seqno>%d</seqno>\n <body>",
                     m->pri, m->seqno);
        vs_xml_raw_write(w, head, (size_t)n);
        struct vs_buf body;
        vs_buf_init(&body, 8192);
        if (vs_buf_printf(&body, "\n%s\n", m->body) == 0)
            vs_xml_cdata(w, body.data, body.len);
        vs_buf_cleanup(&body);
        n = snprintf(head, sizeof(head), "</body>\n <time>%.0f</time>\n</msg>\n", m->time);
        vs_xml_raw_write(w, head, (size_t)n);
    }
    vs_xml_raw_write(w, "</msgs>\n", 8);
}

static long find_named_result(struct vs_client *c, const struct vs_xml_node *op, struct vs_arena *a)
{
    const char *url = vs_xml_text_trim(vs_xml_child(op, "project_url"), a);
    const char *name = vs_xml_text_trim(vs_xml_child(op, "name"), a);
    char canon[1100];
    if (vs_client_canon_url(url, canon, sizeof(canon)) != 0)
        return -1;
    long p = vs_client_find_project(c, canon);
    return p < 0 ? -1 : vs_client_find_result(c, (size_t)p, name);
}

long vs_client_gui_find_project(struct vs_client *c, const struct vs_xml_node *op,
                                struct vs_arena *a)
{
    const char *url = vs_xml_text_trim(vs_xml_child(op, "project_url"), a);
    char canon[1100];
    if (vs_client_canon_url(url, canon, sizeof(canon)) != 0)
        return -1;
    return vs_client_find_project(c, canon);
}

int vs_client_attach(struct vs_client *c, const char *url, const char *auth, bool log_errors)
{
    char canon[1100];
    if (vs_client_canon_url(url, canon, sizeof(canon)) != 0) {
        if (log_errors)
            vs_client_msg(c, -1, 2, "Invalid URL %s: a project URL is http(s)://HOST.DOMAIN/...",
                          url);
        return VS_EINVAL;
    }
    if (!auth || !*auth || strlen(auth) > 256 || strpbrk(auth, "<>&\"' \n")) {
        if (log_errors)
            vs_client_msg(c, -1, 2, "Missing or malformed account key for %s", canon);
        return VS_EINVAL;
    }
    if (vs_client_find_project(c, canon) >= 0) {
        if (log_errors)
            vs_client_msg(c, -1, 2, "Already attached to %s", canon);
        return VS_EEXISTS;
    }
    /* BOINC keeps a project's files in projects/<URL with its scheme dropped
     * and every other character '_'>: two URLs that map there (http and https
     * of one site, "a/b" and "a_b") would share, and wipe, one directory */
    char esc[512], other[512];
    vs_client_escape_url(canon, esc, sizeof(esc));
    for (size_t q = 0; q < c->n_projects; q++) {
        vs_client_escape_url(c->projects[q].master_url, other, sizeof(other));
        if (strcmp(esc, other) == 0) {
            if (log_errors)
                vs_client_msg(c, -1, 2, "%s would share the directory projects/%s with %s", canon,
                              esc, c->projects[q].master_url);
            return VS_EEXISTS;
        }
    }
    if (c->n_projects >= VS_CLIENT_MAX_PROJECTS)
        return VS_ELIMIT;
    size_t p = vs_client_add_project(c, canon, auth);
    char dir[VS_CLIENT_PATH_MAX];
    int rc = vs_client_project_dir(c, p, dir, sizeof(dir));
    if (rc) {
        vs_client_drop_project(c, p);
        return rc;
    }
    (void)vs_fs_rm_tree(dir); /* BOINC-COMPAT: a stale project dir is cleaned out */
    (void)vs_client_av_remove_project(c, p);
    (void)vs_fs_mkdir_p(dir, 0755);
    rc = vs_client_write_account(c, p);
    if (rc) {
        vs_client_drop_project(c, p);
        return rc;
    }
    vs_client_msg(c, (long)p, 1, "Attached to project %s", canon);
    c->dirty = c->resched = true;
    return 0;
}

static int run_mode(const struct vs_xml_node *op)
{
    if (vs_xml_child(op, "always"))
        return RUN_MODE_ALWAYS;
    if (vs_xml_child(op, "never"))
        return RUN_MODE_NEVER;
    if (vs_xml_child(op, "restore"))
        return RUN_MODE_RESTORE;
    return RUN_MODE_AUTO;
}

int vs_client_gui_dispatch(struct vs_client *c, const struct vs_xml_doc *doc,
                           const struct vs_xml_node *op, struct vs_arena *a, struct vs_buf *out)
{
    struct vs_xml_writer w;
    vs_xml_writer_init(&w, out);
    w.depth = 0;
    const char *name = op->name;
    const char *ok = "<success/>\n";
    if (strcmp(name, "exchange_versions") == 0) {
        vs_xml_raw_write(&w, "<server_version>\n", 17);
        vs_xml_int(&w, "major", VS_CLIENT_MAJOR);
        vs_xml_int(&w, "minor", VS_CLIENT_MINOR);
        vs_xml_int(&w, "release", VS_CLIENT_RELEASE);
        vs_xml_raw_write(&w, "</server_version>\n", 18);
    } else if (strcmp(name, "get_state") == 0) {
        w_state(&w, c);
    } else if (strcmp(name, "get_results") == 0) {
        bool active_only = false;
        const struct vs_xml_node *ao = vs_xml_child(op, "active_only");
        if (ao && vs_xml_get_bool(ao, &active_only) != 0)
            active_only = false;
        vs_xml_raw_write(&w, "<results>\n", 10);
        for (size_t i = 0; i < c->n_results; i++)
            if (!active_only || c->results[i].slot >= 0)
                vs_client_gui_write_result(&w, c, i);
        vs_xml_raw_write(&w, "</results>\n", 11);
    } else if (strcmp(name, "get_old_results") == 0) {
        vs_xml_raw_write(&w, "<old_results>\n", 14);
        size_t cap = sizeof(c->old) / sizeof(c->old[0]);
        size_t n = c->n_old < cap ? c->n_old : cap;
        for (size_t k = 0; k < n; k++) {
            const struct cl_old_result *o = &c->old[(c->n_old - n + k) % cap];
            vs_xml_raw_write(&w, "<old_result>\n", 13);
            vs_xml_str(&w, "project_url", o->project_url);
            vs_xml_str(&w, "result_name", o->result_name);
            vs_xml_str(&w, "app_name", o->app_name);
            vs_xml_int(&w, "exit_status", o->exit_status);
            vs_xml_double(&w, "elapsed_time", o->elapsed_time);
            vs_xml_double(&w, "cpu_time", o->cpu_time);
            vs_xml_double(&w, "completed_time", o->completed_time);
            vs_xml_double(&w, "create_time", o->create_time);
            vs_xml_raw_write(&w, "</old_result>\n", 14);
        }
        vs_xml_raw_write(&w, "</old_results>\n", 15);
    } else if (strcmp(name, "get_project_status") == 0) {
        vs_xml_raw_write(&w, "<projects>\n", 11);
        for (size_t p = 0; p < c->n_projects; p++)
            w_project(&w, c, p);
        vs_xml_raw_write(&w, "</projects>\n", 12);
    } else if (strcmp(name, "get_simple_gui_info") == 0) {
        vs_xml_raw_write(&w, "<simple_gui_info>\n", 18);
        for (size_t p = 0; p < c->n_projects; p++)
            w_project(&w, c, p);
        for (size_t i = 0; i < c->n_results; i++)
            vs_client_gui_write_result(&w, c, i);
        vs_xml_raw_write(&w, "</simple_gui_info>\n", 19);
    } else if (strcmp(name, "get_messages") == 0) {
        int64_t after = 0;
        const struct vs_xml_node *s = vs_xml_child(op, "seqno");
        if (s && vs_xml_get_int64(s, &after) != 0)
            after = 0;
        w_messages(&w, c, after);
    } else if (strcmp(name, "get_message_count") == 0) {
        vs_xml_int(&w, "seqno", c->msg_seqno);
    } else if (strcmp(name, "get_notices") == 0 || strcmp(name, "get_notices_public") == 0) {
        vs_xml_raw_write(&w, "<notices>\n</notices>\n", 21);
    } else if (strcmp(name, "get_host_info") == 0) {
        w_host(&w, c);
    } else if (strcmp(name, "get_cc_status") == 0) {
        vs_xml_raw_write(&w, "<cc_status>\n", 12);
        vs_xml_int(&w, "network_status", c->network_mode == RUN_MODE_NEVER ? 1 : 0);
        vs_xml_int(&w, "ams_password_error", 0);
        /* BOINC-COMPAT: SUSPEND_REASON_USER_REQ = 4 */
        vs_xml_int(&w, "task_suspend_reason", c->run_mode == RUN_MODE_NEVER ? 4 : 0);
        vs_xml_int(&w, "task_mode", c->run_mode);
        vs_xml_int(&w, "task_mode_perm", c->run_mode_perm);
        vs_xml_double(&w, "task_mode_delay",
                      c->run_mode_until > c->now ? c->run_mode_until - c->now : 0);
        vs_xml_int(&w, "gpu_suspend_reason", 0);
        vs_xml_int(&w, "gpu_mode", RUN_MODE_NEVER);
        vs_xml_int(&w, "gpu_mode_perm", RUN_MODE_NEVER);
        vs_xml_double(&w, "gpu_mode_delay", 0);
        vs_xml_int(&w, "network_suspend_reason", c->network_mode == RUN_MODE_NEVER ? 4 : 0);
        vs_xml_int(&w, "network_mode", c->network_mode);
        vs_xml_int(&w, "network_mode_perm", c->network_mode);
        vs_xml_double(&w, "network_mode_delay", 0);
        /* BOINC-COMPAT: cc_config's, at BOINC's defaults (not read here) */
        vs_xml_int(&w, "disallow_attach", 0);
        vs_xml_int(&w, "simple_gui_only", 0);
        vs_xml_int(&w, "max_event_log_lines", 2000);
        vs_xml_raw_write(&w, "</cc_status>\n", 13);
    } else if (strcmp(name, "get_file_transfers") == 0) {
        vs_xml_raw_write(&w, "<file_transfers>\n", 17);
        for (size_t i = 0; i < c->n_files; i++) {
            const struct cl_file *f = &c->files[i];
            bool active = (f->status == FS_NOT_PRESENT && !f->is_output && f->n_urls) ||
                          (f->is_output && f->status == FS_PRESENT && !f->upload_done);
            if (!active)
                continue;
            vs_xml_raw_write(&w, "<file_transfer>\n", 16);
            vs_xml_str(&w, "project_url", c->projects[f->project].master_url);
            vs_xml_str(&w, "name", f->name);
            vs_xml_double(&w, "nbytes", f->nbytes);
            vs_xml_double(&w, "max_nbytes", f->max_nbytes);
            vs_xml_int(&w, "status", f->status);
            vs_xml_raw_write(&w, "<persistent_file_xfer>\n", 23);
            vs_xml_int(&w, "num_retries", f->nfailures);
            vs_xml_double(&w, "next_request_time", f->next_try);
            vs_xml_int(&w, "is_upload", f->is_output ? 1 : 0);
            vs_xml_raw_write(&w, "</persistent_file_xfer>\n", 24);
            vs_xml_raw_write(&w, "</file_transfer>\n", 17);
        }
        vs_xml_raw_write(&w, "</file_transfers>\n", 18);
    } else if (strcmp(name, "get_disk_usage") == 0) {
        vs_xml_raw_write(&w, "<disk_usage_summary>\n", 21);
        vs_client_disk_summary_xml(c, &w);
        vs_xml_raw_write(&w, "</disk_usage_summary>\n", 22);
    } else if (strcmp(name, "suspend_result") == 0 || strcmp(name, "resume_result") == 0 ||
               strcmp(name, "abort_result") == 0) {
        long r = find_named_result(c, op, a);
        if (r < 0) {
            vs_xml_raw_write(&w, "<error>no such result</error>\n", 30);
            return vs_xml_writer_error(&w);
        }
        struct cl_result *res = &c->results[r];
        if (name[0] == 's') {
            res->suspended_via_gui = true;
            vs_client_msg(c, (long)res->project, 1, "task %s suspended by user", res->name);
        } else if (name[0] == 'r') {
            res->suspended_via_gui = false;
            vs_client_msg(c, (long)res->project, 1, "task %s resumed by user", res->name);
        } else {
            res->abort_requested = true;
            res->abort_code = EXIT_ABORTED_VIA_GUI;
            vs_client_msg(c, (long)res->project, 1, "task %s aborted by user", res->name);
        }
        c->resched = c->dirty = true;
        vs_xml_raw_write(&w, ok, strlen(ok));
    } else if (strncmp(name, "project_", 8) == 0 && strcmp(name, "project_attach") != 0 &&
               strcmp(name, "project_attach_poll") != 0) {
        long p = vs_client_gui_find_project(c, op, a);
        if (p < 0) {
            vs_xml_raw_write(&w, "<error>No such project</error>\n", 31);
            return vs_xml_writer_error(&w);
        }
        struct cl_project *pr = &c->projects[p];
        const char *what = name + 8;
        if (strcmp(what, "suspend") == 0)
            pr->suspended_via_gui = true;
        else if (strcmp(what, "resume") == 0)
            pr->suspended_via_gui = false;
        else if (strcmp(what, "update") == 0) {
            pr->sched_rpc_pending = true;
            pr->min_rpc_time = 0;
        } else if (strcmp(what, "nomorework") == 0)
            pr->dont_request_more_work = true;
        else if (strcmp(what, "allowmorework") == 0)
            pr->dont_request_more_work = false;
        else if (strcmp(what, "detach") == 0 || strcmp(what, "reset") == 0)
            pr->detached = true;
        else if (strcmp(what, "detach_when_done") == 0 ||
                 strcmp(what, "dont_detach_when_done") == 0)
            /* BOINC-COMPAT: both set "no new tasks" to the same value */
            pr->detach_when_done = pr->dont_request_more_work = what[0] == 'd' && what[1] == 'e';
        else {
            vs_client_gui_unknown(c, name, &w);
            return vs_xml_writer_error(&w);
        }
        vs_client_msg(c, p, 1, "project %s by user", what);
        c->resched = c->dirty = true;
        vs_xml_raw_write(&w, ok, strlen(ok));
    } else if (strcmp(name, "project_attach") == 0) {
        const char *url = vs_xml_text_trim(vs_xml_child(op, "project_url"), a);
        const char *auth = vs_xml_text_trim(vs_xml_child(op, "authenticator"), a);
        /* BOINC-COMPAT: success even when the URL is rejected; the reason is a message */
        (void)vs_client_attach(c, url, auth, true);
        vs_xml_raw_write(&w, ok, strlen(ok));
    } else if (strcmp(name, "set_run_mode") == 0 || strcmp(name, "set_network_mode") == 0) {
        int m = run_mode(op);
        double dur = 0;
        const struct vs_xml_node *d = vs_xml_child(op, "duration");
        if (d && (vs_xml_get_double(d, &dur) != 0 || !isfinite(dur) || dur < 0))
            dur = 0;
        if (name[4] == 'n') {
            c->network_mode = m == RUN_MODE_RESTORE ? RUN_MODE_AUTO : m;
        } else if (m == RUN_MODE_RESTORE) {
            c->run_mode = c->run_mode_perm;
            c->run_mode_until = 0;
        } else if (dur > 0) {
            c->run_mode = m;
            c->run_mode_until = c->now + dur;
        } else {
            c->run_mode = c->run_mode_perm = m;
            c->run_mode_until = 0;
        }
        c->resched = c->dirty = true;
        vs_xml_raw_write(&w, ok, strlen(ok));
    } else if (strcmp(name, "quit") == 0) {
        vs_client_msg(c, -1, 1, "Exit requested by user");
        c->quit_requested = true;
        c->resched = true;
        vs_xml_raw_write(&w, ok, strlen(ok));
    } else if (strcmp(name, "network_available") == 0 || strcmp(name, "run_benchmarks") == 0) {
        if (name[0] == 'r') {
            c->host.p_calculated = 0;
            vs_client_host_measure(c, true);
        }
        vs_xml_raw_write(&w, ok, strlen(ok));
    } else if (!vs_client_gui_cfg_op(c, doc, op, a, &w) &&
               !vs_client_gui_misc_op(c, doc, op, a, &w) && !vs_client_gui_acct_op(c, op, a, &w)) {
        vs_client_gui_unknown(c, name, &w);
    }
    return vs_xml_writer_error(&w);
}
