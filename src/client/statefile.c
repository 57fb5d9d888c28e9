/*
 * client_state.xml (boinc-client-notes.md 1.2): the whole persistent state,
 * in BOINC's element names and order, written as client_state_next.xml,
 * then the current one kept as client_state_prev.xml (a hard link, so that
 * client_state.xml never goes missing, as it does between BOINC's two
 * renames), then next renamed over current; at start the first complete
 * one of next, current, prev is read. Elements
 * volsched adds (policy state, transfer retries) are ones BOINC would skip.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/str.h"
#include "volsched/xml.h"

#define STATE_MAX_BYTES (256u << 20)

static void write_project(struct vs_xml_writer *w, const struct cl_project *p)
{
    vs_xml_open(w, "project");
    vs_client_xml_project(w, p);
    /* ours, not the GUI's: 7.20's project status has no debts (BOINC 6 had) */
    vs_xml_double(w, "short_term_debt", p->std);
    vs_xml_double(w, "long_term_debt", p->ltd);
    vs_xml_int(w, "vs_no_work_count", p->no_work_count);
    vs_xml_double(w, "vs_work_backoff_until", p->work_backoff_until);
    vs_xml_double(w, "vs_job_est", p->job_est);
    vs_xml_double(w, "vs_job_delay_bound", p->job_delay_bound);
    vs_xml_double(w, "latency_limited_until", p->latency_limited_until);
    vs_xml_double(w, "cpu_time", p->cpu_time);
    for (size_t i = 0; i < p->n_scheduler_urls; i++)
        vs_xml_str(w, "scheduler_url", p->scheduler_urls[i]);
    if (p->sched_rpc_pending)
        vs_xml_int(w, "sched_rpc_pending", 1);
    if (p->send_full_workload)
        vs_xml_flag(w, "send_full_workload");
    if (p->ever_rpc)
        vs_xml_flag(w, "ever_rpc");
    if (p->https_pinned)
        vs_xml_flag(w, "vs_https_pinned");
    if (p->trickle_up_pending)
        vs_xml_flag(w, "trickle_up_pending");
    if (p->code_sign_key)
        vs_xml_str(w, "code_sign_key", p->code_sign_key);
    for (size_t i = 0; i < p->n_trickle_downs; i++)
        vs_xml_str(w, "trickle_down", p->trickle_downs[i]);
    vs_xml_close(w);
}

static void write_file(struct vs_xml_writer *w, const struct cl_file *f)
{
    vs_xml_open(w, "file");
    vs_xml_str(w, "name", f->name);
    vs_xml_double(w, "nbytes", f->nbytes);
    vs_xml_double(w, "max_nbytes", f->max_nbytes);
    if (f->md5[0])
        vs_xml_str(w, "md5_cksum", f->md5);
    vs_xml_int(w, "status", f->status);
    if (f->executable)
        vs_xml_flag(w, "executable");
    if (f->signature_required)
        vs_xml_flag(w, "signature_required");
    if (f->is_output)
        vs_xml_flag(w, "upload_when_present");
    if (f->sticky)
        vs_xml_flag(w, "sticky");
    if (f->upload_done)
        vs_xml_flag(w, "uploaded");
    vs_xml_int(w, "nfailures", f->nfailures);
    vs_xml_double(w, "next_try", f->next_try);
    vs_xml_str(w, "file_signature", f->file_signature);
    for (size_t i = 0; i < f->n_urls; i++)
        vs_xml_str(w, f->is_output ? "upload_url" : "download_url", f->urls[i]);
    vs_xml_str(w, "xml_signature", f->xml_signature);
    vs_xml_str(w, "error_msg", f->error);
    vs_xml_close(w);
}

static void write_av(struct vs_xml_writer *w, const struct cl_app_version *a)
{
    vs_xml_open(w, "app_version");
    vs_client_xml_app_version(w, a, a->flops);
    vs_xml_close(w);
}

static void write_wu(struct vs_xml_writer *w, const struct cl_wu *u)
{
    vs_xml_open(w, "workunit");
    vs_client_xml_workunit(w, u);
    vs_xml_close(w);
}

static void write_result(struct vs_xml_writer *w, const struct cl_result *r)
{
    vs_xml_open(w, "result");
    vs_client_xml_result(w, r);
    vs_xml_double(w, "completed_time", r->completed_time);
    if (r->report_immediately)
        vs_xml_flag(w, "report_immediately");
    if (r->abort_requested)
        vs_xml_int(w, "abort_requested", r->abort_code);
    vs_xml_str(w, "stderr_out", r->stderr_out);
    vs_client_write_frefs(w, r->frefs, r->n_frefs);
    /* the policy's view (volsched) */
    vs_xml_int(w, "vs_ctask", (int64_t)r->ctask);
    if (r->checkpointed)
        vs_xml_double(w, "vs_checkpoint_time", r->checkpoint_time);
    vs_xml_double(w, "vs_wall_since_checkpoint", r->wall_since_checkpoint);
    vs_xml_double(w, "vs_restart_after", r->restart_after);
    vs_xml_int(w, "vs_premature_exits", r->premature_exits);
    vs_xml_close(w);
}

static void write_active_task(struct vs_xml_writer *w, const struct vs_client *c,
                              const struct cl_result *r)
{
    vs_xml_open(w, "active_task");
    vs_xml_str(w, "project_master_url", c->projects[r->project].master_url);
    vs_xml_str(w, "result_name", r->name);
    vs_client_xml_task(w, r);
    vs_xml_double(w, "checkpoint_elapsed_time", r->checkpoint_elapsed_time);
    vs_xml_double(w, "checkpoint_fraction_done", r->checkpoint_fraction_done);
    vs_xml_close(w);
}

static int build(struct vs_client *c, struct vs_buf *b)
{
    struct vs_xml_writer w;
    vs_xml_writer_init(&w, b);
    vs_xml_open(&w, "client_state");
    vs_xml_open(&w, "host_info");
    vs_xml_str(&w, "host_cpid", c->host.host_cpid);
    vs_xml_int(&w, "p_ncpus", c->host.p_ncpus);
    vs_xml_double(&w, "p_fpops", c->host.p_fpops);
    vs_xml_double(&w, "p_iops", c->host.p_iops);
    vs_xml_double(&w, "p_calculated", c->host.p_calculated);
    vs_xml_close(&w);
    vs_xml_open(&w, "time_stats");
    vs_xml_double(&w, "on_frac", c->ts.on_frac);
    vs_xml_double(&w, "connected_frac", c->ts.connected_frac);
    vs_xml_double(&w, "cpu_and_network_available_frac", c->ts.cpu_and_network_available_frac);
    vs_xml_double(&w, "active_frac", c->ts.active_frac);
    vs_xml_double(&w, "cpu_efficiency", c->ts.cpu_efficiency);
    vs_xml_double(&w, "gpu_active_frac", c->ts.gpu_active_frac);
    vs_xml_double(&w, "client_start_time", c->ts.client_start_time);
    vs_xml_double(&w, "total_start_time", c->ts.total_start_time);
    vs_xml_double(&w, "total_duration", c->ts.total_duration);
    vs_xml_double(&w, "total_active_duration", c->ts.total_active_duration);
    vs_xml_double(&w, "last_update", c->ts.last_update);
    vs_xml_double(&w, "previous_uptime", c->ts.previous_uptime);
    vs_xml_close(&w);
    vs_xml_open(&w, "net_stats");
    vs_xml_double(&w, "bwup", c->ns.bwup);
    vs_xml_double(&w, "avg_up", c->ns.avg_up);
    vs_xml_double(&w, "avg_time_up", c->ns.avg_time_up);
    vs_xml_double(&w, "bwdown", c->ns.bwdown);
    vs_xml_double(&w, "avg_down", c->ns.avg_down);
    vs_xml_double(&w, "avg_time_down", c->ns.avg_time_down);
    vs_xml_close(&w);
    for (size_t p = 0; p < c->n_projects; p++) {
        write_project(&w, &c->projects[p]);
        for (size_t i = 0; i < c->n_apps; i++)
            if (c->apps[i].project == p) {
                vs_xml_open(&w, "app");
                vs_xml_str(&w, "name", c->apps[i].name);
                if (c->apps[i].non_cpu_intensive)
                    vs_xml_flag(&w, "non_cpu_intensive");
                vs_xml_close(&w);
            }
        for (size_t i = 0; i < c->n_files; i++)
            if (c->files[i].project == p)
                write_file(&w, &c->files[i]);
        for (size_t i = 0; i < c->n_avs; i++)
            if (c->avs[i].project == p)
                write_av(&w, &c->avs[i]);
        for (size_t i = 0; i < c->n_wus; i++)
            if (c->wus[i].project == p)
                write_wu(&w, &c->wus[i]);
        for (size_t i = 0; i < c->n_results; i++)
            if (c->results[i].project == p)
                write_result(&w, &c->results[i]);
    }
    vs_xml_open(&w, "active_task_set");
    for (size_t i = 0; i < c->n_results; i++)
        if (c->results[i].slot >= 0)
            write_active_task(&w, c, &c->results[i]);
    vs_xml_close(&w);
    vs_xml_str(&w, "platform_name", VS_CLIENT_PLATFORM);
    vs_xml_int(&w, "core_client_major_version", VS_CLIENT_MAJOR);
    vs_xml_int(&w, "core_client_minor_version", VS_CLIENT_MINOR);
    vs_xml_int(&w, "core_client_release", VS_CLIENT_RELEASE);
    vs_xml_int(&w, "user_run_request", c->run_mode_perm);
    vs_xml_int(&w, "user_network_request", c->network_mode);
    vs_xml_str(&w, "vs_policy", vs_cpolicy_name(c->policy));
    vs_xml_close(&w);
    return vs_xml_writer_error(&w);
}

/* cur becomes prev as well, and stays cur until next is renamed over it: a
 * kill at any point leaves a complete client_state.xml. A file system
 * without hard links gets BOINC's rename, with its moment of no cur. */
static int keep_previous(const char *cur, const char *prev)
{
    if (unlink(prev) != 0 && errno != ENOENT)
        return -errno;
    if (link(cur, prev) == 0 || errno == ENOENT)
        return 0;
    if (errno != EPERM && errno != ENOTSUP && errno != EXDEV && errno != EMLINK)
        return -errno;
    return rename(cur, prev) != 0 && errno != ENOENT ? -errno : 0;
}

int vs_client_state_write(struct vs_client *c)
{
    struct vs_buf b;
    vs_buf_init(&b, STATE_MAX_BYTES);
    int rc = build(c, &b);
    char next[VS_CLIENT_PATH_MAX], cur[VS_CLIENT_PATH_MAX], prev[VS_CLIENT_PATH_MAX];
    if (rc == 0)
        rc = vs_client_path(c, next, sizeof(next), "client_state_next.xml");
    if (rc == 0)
        rc = vs_client_path(c, cur, sizeof(cur), "client_state.xml");
    if (rc == 0)
        rc = vs_client_path(c, prev, sizeof(prev), "client_state_prev.xml");
    if (rc == 0) {
        /* fsync'd: a result whose report was acknowledged is dropped from this
         * file, and one received is added; neither may be lost by a crash */
        int fd = open(next, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) {
            rc = -errno;
        } else {
            size_t off = 0;
            while (rc == 0 && off < b.len) {
                ssize_t n = write(fd, b.data + off, b.len - off);
                if (n < 0 && errno != EINTR)
                    rc = -errno;
                else if (n > 0)
                    off += (size_t)n;
            }
            if (rc == 0 && fsync(fd) != 0)
                rc = -errno;
            if (close(fd) != 0 && rc == 0)
                rc = -errno;
        }
    }
    if (rc == 0)
        rc = keep_previous(cur, prev);
    if (rc == 0 && rename(next, cur) != 0)
        rc = -errno;
    vs_buf_cleanup(&b);
    /* the buffer, and a scheduler reply merged just before (rpc.c writes
     * the state after each), go back to the system, not only to malloc */
    vs_alloc_trim();
    if (rc) {
        vs_client_msg(c, -1, 3, "Couldn't write state file: %s", vs_strerror(rc));
        return rc;
    }
    c->dirty = false;
    c->last_state_write = c->now;
    c->disk.state_bytes = (double)b.len; /* disk.c keeps room for the next one */
    return 0;
}

/* ---------------------------------------------------------------- reading */

static double num(const struct vs_xml_node *n, const char *name, double def)
{
    const struct vs_xml_node *ch = vs_xml_child(n, name);
    double v;
    if (!ch || vs_xml_get_double(ch, &v) != 0 || !isfinite(v))
        return def;
    return v;
}

static bool flag(const struct vs_xml_node *n, const char *name)
{
    const struct vs_xml_node *ch = vs_xml_child(n, name);
    bool v = false;
    if (ch && vs_xml_get_bool(ch, &v) != 0)
        v = true;
    return ch && v;
}

static char *str(const struct vs_xml_node *n, const char *name, struct vs_arena *a)
{
    const struct vs_xml_node *ch = vs_xml_child(n, name);
    if (!ch)
        return NULL;
    return vs_xstrdup(vs_xml_text_trim(ch, a));
}

static size_t read_frefs(const struct vs_xml_node *n, struct cl_fref *out, struct vs_arena *a)
{
    size_t k = 0;
    for (const struct vs_xml_node *f = vs_xml_child(n, "file_ref"); f && k < VS_CLIENT_MAX_FREFS;
         f = vs_xml_next_same(f)) {
        char *name = str(f, "file_name", a);
        if (!name)
            continue;
        out[k].file_name = name;
        out[k].open_name = str(f, "open_name", a);
        out[k].main_program = flag(f, "main_program");
        out[k].copy_file = flag(f, "copy_file");
        out[k].optional = flag(f, "optional");
        k++;
    }
    return k;
}

static void read_project(struct vs_client *c, const struct vs_xml_node *n, struct vs_arena *a,
                         long *cur)
{
    const char *url = vs_xml_text_trim(vs_xml_child(n, "master_url"), a);
    long p = vs_client_find_project(c, url);
    if (p < 0) {
        /* no account file: the project was detached after this state was written */
        *cur = -1;
        return;
    }
    *cur = p;
    struct cl_project *pr = &c->projects[p];
    vs_free(pr->project_name);
    pr->project_name = str(n, "project_name", a);
    vs_free(pr->user_name);
    pr->user_name = str(n, "user_name", a);
    vs_free(pr->team_name);
    pr->team_name = str(n, "team_name", a);
    vs_free(pr->cross_project_id);
    pr->cross_project_id = str(n, "cross_project_id", a);
    vs_free(pr->host_venue);
    pr->host_venue = str(n, "host_venue", a);
    pr->prefs_source = flag(n, "vs_global_prefs_source");
    pr->user_total_credit = num(n, "user_total_credit", 0);
    pr->user_expavg_credit = num(n, "user_expavg_credit", 0);
    pr->host_total_credit = num(n, "host_total_credit", 0);
    pr->host_expavg_credit = num(n, "host_expavg_credit", 0);
    pr->rpc_seqno = (int64_t)num(n, "rpc_seqno", 0);
    pr->userid = (int64_t)num(n, "userid", 0);
    pr->teamid = (int64_t)num(n, "teamid", 0);
    pr->hostid = (int64_t)num(n, "hostid", 0);
    pr->nrpc_failures = (int)num(n, "nrpc_failures", 0);
    pr->master_fetch_failures = (int)num(n, "master_fetch_failures", 0);
    pr->no_work_count = (int)num(n, "vs_no_work_count", 0);
    pr->work_backoff_until = num(n, "vs_work_backoff_until", 0);
    pr->job_est = num(n, "vs_job_est", 0);
    pr->job_delay_bound = num(n, "vs_job_delay_bound", 0);
    pr->min_rpc_time = num(n, "min_rpc_time", 0);
    pr->next_rpc_time = num(n, "next_rpc_time", 0);
    pr->last_rpc_time = num(n, "last_rpc_time", 0);
    /* 0 is a backup project's share (BOINC's rule); a negative or unreadable
     * one is not a share */
    pr->resource_share = num(n, "resource_share", 100);
    if (!(pr->resource_share >= 0) || pr->resource_share > 1e9)
        pr->resource_share = 100;
    pr->std = num(n, "short_term_debt", 0);
    pr->ltd = num(n, "long_term_debt", 0);
    pr->latency_limited_until = num(n, "latency_limited_until", 0);
    pr->njobs_success = (int)num(n, "njobs_success", 0);
    pr->njobs_error = (int)num(n, "njobs_error", 0);
    pr->cpu_time = num(n, "cpu_time", 0);
    pr->elapsed_time = num(n, "elapsed_time", 0);
    for (size_t i = 0; i < pr->n_scheduler_urls; i++)
        vs_free(pr->scheduler_urls[i]);
    pr->n_scheduler_urls = 0;
    for (const struct vs_xml_node *u = vs_xml_child(n, "scheduler_url");
         u && pr->n_scheduler_urls < VS_CLIENT_MAX_URLS; u = vs_xml_next_same(u))
        pr->scheduler_urls[pr->n_scheduler_urls++] = vs_xstrdup(vs_xml_text_trim(u, a));
    pr->master_url_fetch_pending = flag(n, "master_url_fetch_pending") || pr->n_scheduler_urls == 0;
    pr->sched_rpc_pending = flag(n, "sched_rpc_pending");
    pr->suspended_via_gui = flag(n, "suspended_via_gui");
    pr->dont_request_more_work = flag(n, "dont_request_more_work");
    pr->detach_when_done = flag(n, "detach_when_done");
    pr->send_full_workload = flag(n, "send_full_workload");
    pr->non_cpu_intensive = flag(n, "non_cpu_intensive");
    pr->ever_rpc = flag(n, "ever_rpc");
    pr->https_pinned = flag(n, "vs_https_pinned");
    pr->trickle_up_pending = flag(n, "trickle_up_pending");
    vs_free(pr->code_sign_key);
    pr->code_sign_key = NULL;
    const struct vs_xml_node *k = vs_xml_child(n, "code_sign_key");
    if (k)
        pr->code_sign_key = vs_xstrdup(k->text);
    for (const struct vs_xml_node *t = vs_xml_child(n, "trickle_down");
         t && pr->n_trickle_downs < 100; t = vs_xml_next_same(t)) {
        pr->trickle_downs =
            vs_xreallocarray(pr->trickle_downs, pr->n_trickle_downs + 1, sizeof(char *));
        pr->trickle_downs[pr->n_trickle_downs++] = vs_xstrdup(t->text);
    }
}

static void read_file(struct vs_client *c, const struct vs_xml_node *n, struct vs_arena *a,
                      size_t p)
{
    if (c->n_files >= 2 * VS_CLIENT_MAX_FILES) /* the most limits.c lets it hold */
        return;
    char *name = str(n, "name", a);
    if (!name || !vs_client_safe_name(name)) {
        vs_free(name);
        return;
    }
    struct cl_file *f = vs_client_add_file(c);
    f->name = name;
    f->project = p;
    f->nbytes = num(n, "nbytes", 0);
    f->max_nbytes = num(n, "max_nbytes", 0);
    const char *md5 = vs_xml_text_trim(vs_xml_child(n, "md5_cksum"), a);
    snprintf(f->md5, sizeof(f->md5), "%s", md5);
    f->status = (int)num(n, "status", 0);
    f->executable = flag(n, "executable");
    f->signature_required = flag(n, "signature_required");
    f->is_output = flag(n, "upload_when_present");
    f->sticky = flag(n, "sticky");
    f->upload_done = flag(n, "uploaded");
    f->nfailures = (int)num(n, "nfailures", 0);
    f->next_try = num(n, "next_try", 0);
    const struct vs_xml_node *s = vs_xml_child(n, "file_signature");
    f->file_signature = s ? vs_xstrdup(s->text) : NULL;
    s = vs_xml_child(n, "xml_signature");
    f->xml_signature = s ? vs_xstrdup(s->text) : NULL;
    f->error = str(n, "error_msg", a);
    const char *tag = f->is_output ? "upload_url" : "download_url";
    for (const struct vs_xml_node *u = vs_xml_child(n, tag); u && f->n_urls < VS_CLIENT_MAX_URLS;
         u = vs_xml_next_same(u))
        f->urls[f->n_urls++] = vs_xstrdup(vs_xml_text_trim(u, a));
}

static void read_result(struct vs_client *c, const struct vs_xml_node *n, struct vs_arena *a,
                        size_t p)
{
    if (c->n_results >= 2 * VS_CLIENT_MAX_RESULTS) /* the most limits.c lets it hold */
        return;
    char *name = str(n, "name", a);
    if (!name)
        return;
    struct cl_result *r = vs_client_add_result(c);
    r->name = name;
    r->project = p;
    r->final_cpu_time = num(n, "final_cpu_time", 0);
    r->final_elapsed_time = num(n, "final_elapsed_time", 0);
    r->exit_status = (int)num(n, "exit_status", 0);
    r->state = (int)num(n, "state", 0);
    r->platform = str(n, "platform", a);
    r->version_num = (int)num(n, "version_num", 0);
    r->plan_class = str(n, "plan_class", a);
    r->wu_name = str(n, "wu_name", a);
    if (!r->wu_name)
        r->wu_name = vs_xstrdup("");
    r->report_deadline = num(n, "report_deadline", 0);
    r->received_time = num(n, "received_time", 0);
    r->completed_time = num(n, "completed_time", 0);
    r->ready_to_report = flag(n, "ready_to_report");
    r->suspended_via_gui = flag(n, "suspended_via_gui");
    r->report_immediately = flag(n, "report_immediately");
    if (vs_xml_child(n, "abort_requested")) {
        r->abort_requested = true;
        r->abort_code = (int)num(n, "abort_requested", EXIT_ABORTED_VIA_GUI);
    }
    const struct vs_xml_node *e = vs_xml_child(n, "stderr_out");
    r->stderr_out = e ? vs_xstrdup(e->text) : NULL;
    r->n_frefs = read_frefs(n, r->frefs, a);
    r->ctask = (enum vs_ctask)(int)num(n, "vs_ctask", 0);
    if (r->ctask > VS_CTASK_REMOVED)
        r->ctask = VS_CTASK_UNSTARTED;
    if (vs_xml_child(n, "vs_checkpoint_time")) {
        r->checkpointed = true;
        r->checkpoint_time = num(n, "vs_checkpoint_time", 0);
    }
    r->wall_since_checkpoint = num(n, "vs_wall_since_checkpoint", 0);
    r->restart_after = num(n, "vs_restart_after", 0);
    r->premature_exits = (int)num(n, "vs_premature_exits", 0);
}

static void read_active_task(struct vs_client *c, const struct vs_xml_node *n, struct vs_arena *a)
{
    const char *url = vs_xml_text_trim(vs_xml_child(n, "project_master_url"), a);
    const char *name = vs_xml_text_trim(vs_xml_child(n, "result_name"), a);
    long p = vs_client_find_project(c, url);
    long ri = p < 0 ? -1 : vs_client_find_result(c, (size_t)p, name);
    if (ri < 0)
        return;
    struct cl_result *r = &c->results[ri];
    int slot = (int)num(n, "slot", -1);
    r->slot = slot >= 0 && slot < VS_CLIENT_MAX_SLOTS ? slot : -1;
    r->task_state = (int)num(n, "active_task_state", 0);
    r->pid = (pid_t)num(n, "pid", 0);
    r->checkpoint_cpu_time = num(n, "checkpoint_cpu_time", 0);
    r->checkpoint_elapsed_time = num(n, "checkpoint_elapsed_time", 0);
    r->checkpoint_fraction_done = num(n, "checkpoint_fraction_done", 0);
    r->current_cpu_time = num(n, "current_cpu_time", 0);
    r->elapsed_time = num(n, "elapsed_time", 0);
    r->fraction_done = num(n, "fraction_done", 0);
}

static int parse_state(struct vs_client *c, const char *data, size_t len)
{
    struct vs_arena a;
    vs_arena_init(&a, 1u << 16);
    struct vs_xml_limits lim;
    vs_xml_limits_default(&lim);
    lim.max_input = STATE_MAX_BYTES;
    lim.max_elements = 20u * 1000u * 1000u;
    struct vs_xml_doc doc;
    struct vs_xml_error xe;
    int rc = vs_xml_parse(data, len, &lim, 0, &a, &doc, &xe);
    if (rc == 0 && strcmp(doc.root->name, "client_state") != 0)
        rc = VS_EPARSE;
    if (rc) {
        vs_arena_cleanup(&a);
        return rc;
    }
    long cur = -1;
    for (const struct vs_xml_node *n = doc.root->child; n; n = n->next) {
        if (strcmp(n->name, "project") == 0) {
            read_project(c, n, &a, &cur);
        } else if (strcmp(n->name, "host_info") == 0) {
            c->host.p_fpops = num(n, "p_fpops", 1e9);
            c->host.p_iops = num(n, "p_iops", 1e9);
            c->host.p_calculated = num(n, "p_calculated", 0);
            const char *cpid = vs_xml_text_trim(vs_xml_child(n, "host_cpid"), &a);
            snprintf(c->host.host_cpid, sizeof(c->host.host_cpid), "%s", cpid);
        } else if (strcmp(n->name, "time_stats") == 0) {
            c->ts.on_frac = num(n, "on_frac", 1);
            c->ts.active_frac = num(n, "active_frac", 1);
            /* BOINC-COMPAT: out of [0, 1] is read as 1 */
            c->ts.cpu_efficiency = num(n, "cpu_efficiency", 1);
            if (!(c->ts.cpu_efficiency > 0 && c->ts.cpu_efficiency <= 1))
                c->ts.cpu_efficiency = 1;
            c->ts.cpu_and_network_available_frac = num(n, "cpu_and_network_available_frac", 1);
            c->ts.gpu_active_frac = num(n, "gpu_active_frac", 1);
            c->ts.total_start_time = num(n, "total_start_time", 0);
            c->ts.total_duration = num(n, "total_duration", 0);
            c->ts.total_active_duration = num(n, "total_active_duration", 0);
            c->ts.last_update = num(n, "last_update", 0);
            c->ts.previous_uptime = num(n, "previous_uptime", 0);
        } else if (strcmp(n->name, "net_stats") == 0) {
            c->ns.bwup = num(n, "bwup", 0);
            c->ns.avg_up = num(n, "avg_up", 0);
            c->ns.avg_time_up = num(n, "avg_time_up", 0);
            c->ns.bwdown = num(n, "bwdown", 0);
            c->ns.avg_down = num(n, "avg_down", 0);
            c->ns.avg_time_down = num(n, "avg_time_down", 0);
        } else if (strcmp(n->name, "user_run_request") == 0) {
            int m = (int)num(doc.root, "user_run_request", RUN_MODE_AUTO);
            if (m >= RUN_MODE_ALWAYS && m <= RUN_MODE_NEVER)
                c->run_mode = c->run_mode_perm = m;
        } else if (strcmp(n->name, "vs_policy") == 0) {
            enum vs_cpolicy pol;
            if (vs_cpolicy_parse(vs_xml_text_trim(n, &a), &pol) == 0)
                c->saved_policy = pol;
        } else if (strcmp(n->name, "active_task_set") == 0) {
            for (const struct vs_xml_node *t = vs_xml_child(n, "active_task"); t;
                 t = vs_xml_next_same(t))
                read_active_task(c, t, &a);
        } else if (cur < 0) {
            continue;
        } else if (strcmp(n->name, "app") == 0) {
            char *name = str(n, "name", &a);
            if (name) {
                struct cl_app *ap = vs_client_add_app(c);
                ap->name = name;
                ap->project = (size_t)cur;
                ap->non_cpu_intensive = flag(n, "non_cpu_intensive");
            }
        } else if (strcmp(n->name, "file") == 0) {
            read_file(c, n, &a, (size_t)cur);
        } else if (strcmp(n->name, "app_version") == 0) {
            char *an = str(n, "app_name", &a);
            if (an) {
                struct cl_app_version *av = vs_client_add_av(c);
                av->app_name = an;
                av->project = (size_t)cur;
                av->version_num = (int)num(n, "version_num", 0);
                av->platform = str(n, "platform", &a);
                av->plan_class = str(n, "plan_class", &a);
                av->api_version = str(n, "api_version", &a);
                av->avg_ncpus = num(n, "avg_ncpus", 1);
                av->flops = num(n, "flops", 0);
                av->cmdline = str(n, "cmdline", &a);
                av->n_frefs = read_frefs(n, av->frefs, &a);
            }
        } else if (strcmp(n->name, "workunit") == 0) {
            char *wn = str(n, "name", &a);
            if (wn) {
                struct cl_wu *w = vs_client_add_wu(c);
                w->name = wn;
                w->project = (size_t)cur;
                w->app_name = str(n, "app_name", &a);
                if (!w->app_name)
                    w->app_name = vs_xstrdup("");
                w->version_num = (int)num(n, "version_num", 0);
                w->rsc_fpops_est = num(n, "rsc_fpops_est", 0);
                w->rsc_fpops_bound = num(n, "rsc_fpops_bound", 0);
                w->rsc_memory_bound = num(n, "rsc_memory_bound", 0);
                w->rsc_disk_bound = num(n, "rsc_disk_bound", 0);
                w->command_line = str(n, "command_line", &a);
                w->n_frefs = read_frefs(n, w->frefs, &a);
            }
        } else if (strcmp(n->name, "result") == 0) {
            read_result(c, n, &a, (size_t)cur);
        }
    }
    vs_arena_cleanup(&a);
    return 0;
}

int vs_client_state_read(struct vs_client *c)
{
    static const char *const names[] = {"client_state_next.xml", "client_state.xml",
                                        "client_state_prev.xml"};
    struct vs_buf b;
    vs_buf_init(&b, STATE_MAX_BYTES);
    int rc = -ENOENT;
    for (size_t i = 0; i < 3; i++) {
        char path[VS_CLIENT_PATH_MAX];
        if (vs_client_path(c, path, sizeof(path), "%s", names[i]) ||
            vs_client_read_file(path, STATE_MAX_BYTES, &b) != 0)
            continue;
        /* complete means the end tag is there (a crash mid-write leaves it out) */
        if (!strstr(vs_buf_str(&b), "</client_state>")) {
            VS_LOG(&c->log, VS_LOG_WARN, "%s is incomplete, trying the next one", names[i]);
            continue;
        }
        rc = parse_state(c, b.data, b.len);
        if (rc == 0) {
            VS_LOG(&c->log, VS_LOG_INFO, "state read from %s", names[i]);
            c->disk.state_bytes = (double)b.len;
            /* BOINC's garbage collection at start: workunits no result uses,
             * files nothing refers to. Only by the daemon, which holds the
             * lock: `client status` and `explain` change nothing. */
            size_t n = c->lock_fd >= 0 ? vs_client_gc(c, -1) : 0;
            if (n)
                vs_client_msg(c, -1, 1,
                              "Dropped %zu workunits and files that nothing in the state uses", n);
            break;
        }
        VS_LOG(&c->log, VS_LOG_WARN, "%s is unreadable (%s), trying the next one", names[i],
               vs_strerror(rc));
    }
    vs_buf_cleanup(&b);
    vs_alloc_trim(); /* the parsed document was several times the state's size */
    return rc;
}
