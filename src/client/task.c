/*
 * Running apps, the second half (proc.c starts them): every second's poll
 * of the tasks (exits, app_status, checkpoints, heartbeats, queued control
 * messages, trickle channels, the quit and elapsed-time limits), the exit
 * judgement of boinc-client-notes.md section 3.8, and what happens to the
 * tasks of a previous run at start and to all tasks at exit.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client/proc_int.h"
#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/fs.h"
#include "volsched/md5.h"

/* ---------------------------------------------------------------- exit */

static char *stderr_report(struct vs_client *c, const struct cl_result *r, const char *message)
{
    struct vs_buf b;
    vs_buf_init(&b, 256 * 1024);
    if (message && vs_buf_printf(&b, "<message>\n%s\n</message>\n", message) != 0) {
        /* the cap is far above this */
    }
    char path[VS_CLIENT_PATH_MAX];
    FILE *f = NULL;
    if (r->slot >= 0 && vs_client__slot_path(c, r->slot, "stderr.txt", path, sizeof(path)) == 0)
        f = fopen(path, "rb");
    if (f) {
        if (fseek(f, 0, SEEK_END) == 0) {
            long sz = ftell(f);
            long from = sz > STDERR_TAIL ? sz - STDERR_TAIL : 0;
            if (fseek(f, from, SEEK_SET) == 0) {
                char *tmp = vs_xmalloc(STDERR_TAIL + 1);
                size_t n = fread(tmp, 1, STDERR_TAIL, f);
                /* BOINC-COMPAT: non-ASCII bytes are escaped in the report */
                for (size_t i = 0; i < n; i++)
                    if ((unsigned char)tmp[i] >= 0x80 ||
                        ((unsigned char)tmp[i] < 0x20 && tmp[i] != '\n' && tmp[i] != '\t'))
                        tmp[i] = '?';
                if (vs_buf_puts(&b, "<stderr_txt>\n") == 0 && vs_buf_append(&b, tmp, n) == 0 &&
                    vs_buf_puts(&b, "\n</stderr_txt>\n") == 0) {
                }
                vs_free(tmp);
            }
        }
        fclose(f);
    }
    size_t len;
    char *s = b.data ? vs_buf_take(&b, &len) : vs_xstrdup("");
    vs_buf_cleanup(&b);
    return s;
}

static void job_log(struct vs_client *c, const struct cl_result *r)
{
    char esc[512], path[VS_CLIENT_PATH_MAX];
    vs_client_escape_url(c->projects[r->project].master_url, esc, sizeof(esc));
    if (vs_client_path(c, path, sizeof(path), "job_log_%s.txt", esc))
        return;
    FILE *f = fopen(path, "a");
    if (!f)
        return;
    const struct cl_wu *w = vs_client_result_wu(c, r);
    fprintf(f, "%.0f ue %f ct %f fe %.0f nm %s et %f es %d\n", c->now,
            w ? w->rsc_fpops_est / c->host.p_fpops : 0, r->final_cpu_time, w ? w->rsc_fpops_est : 0,
            r->name, r->final_elapsed_time, r->exit_status);
    fclose(f);
}

void vs_client__finish_result(struct vs_client *c, size_t ri, int state, int exit_status,
                              const char *message)
{
    struct cl_result *r = &c->results[ri];
    struct cl_project *p = &c->projects[r->project];
    r->final_cpu_time = r->current_cpu_time;
    r->final_elapsed_time = r->elapsed_time;
    r->exit_status = exit_status;
    vs_free(r->stderr_out);
    r->stderr_out = stderr_report(c, r, message);
    r->state = state;
    r->completed_time = c->now;
    r->ready_to_report = state != RS_FILES_UPLOADING;
    r->pid = 0;
    vs_client__shm_unmap(r);
    vs_client_trickle_harvest(c, r);
    if (r->slot >= 0) {
        vs_client_slot_clean(c, r->slot);
        r->slot = -1;
    }
    p->cpu_time += r->final_cpu_time;
    p->elapsed_time += r->final_elapsed_time;
    if (state == RS_FILES_UPLOADING) {
        p->njobs_success++;
        job_log(c, r);
        vs_client_msg(c, (long)r->project, 1, "Computation for task %s finished", r->name);
    } else {
        p->njobs_error++;
        if (state == RS_ABORTED)
            vs_client_msg(c, (long)r->project, 1, "Task %s aborted (exit status %d)", r->name,
                          exit_status);
        else
            vs_client_msg(c, (long)r->project, 3, "Task %s: compute error: %s", r->name,
                          message ? message : "error");
    }
    c->dirty = c->resched = true;
    vs_client_update_result_states(c);
}

/* Output files of a finished app: copies back, presence, size, md5. NULL when fine. */
static const char *check_outputs(struct vs_client *c, struct cl_result *r, char *why, size_t size)
{
    char pdir[VS_CLIENT_PATH_MAX];
    if (vs_client_project_dir(c, r->project, pdir, sizeof(pdir)))
        return "path too long";
    for (size_t i = 0; i < r->n_frefs; i++) {
        const struct cl_fref *fr = &r->frefs[i];
        long fi = vs_client_find_file(c, r->project, fr->file_name);
        if (fi < 0)
            continue;
        struct cl_file *f = &c->files[fi];
        /* an output never takes the place of an app file or an input (the
         * reply that would make it so is refused: file_roles.c) */
        if (f->signature_required || vs_client_file_is_app_or_input(c, r->project, f->name)) {
            snprintf(why, size, "Output file %s of task %s is also an app file or an input",
                     f->name, r->name);
            return why;
        }
        char phys[VS_CLIENT_PATH_MAX + 300];
        snprintf(phys, sizeof(phys), "%s/%s", pdir, f->name);
        if (fr->copy_file) {
            char slotf[VS_CLIENT_PATH_MAX], tmp[VS_CLIENT_PATH_MAX + 320];
            snprintf(tmp, sizeof(tmp), "%s.copy", phys);
            if (vs_client__slot_path(c, r->slot, fr->open_name ? fr->open_name : fr->file_name,
                                     slotf, sizeof(slotf)) == 0 &&
                access(slotf, F_OK) == 0) {
                /* a new file renamed into place: never a write into the
                 * bytes of a file another name (a link) shares */
                (void)unlink(tmp);
                int rc = vs_fs_copy_file(slotf, tmp, 0644, 0, NULL);
                if (rc == 0 && rename(tmp, phys) != 0)
                    rc = -errno;
                if (rc) {
                    (void)unlink(tmp);
                    snprintf(why, size, "Can't copy output file %s: %s", f->name, vs_strerror(rc));
                    return why;
                }
            }
        }
        char md5[VS_MD5_HEX_LEN + 1];
        int64_t nbytes = 0;
        if (vs_md5_file(phys, md5, &nbytes) != 0) {
            if (fr->optional)
                continue;
            snprintf(why, size, "Output file %s for task %s absent", f->name, r->name);
            return why;
        }
        if (f->max_nbytes > 0 && (double)nbytes > f->max_nbytes) {
            unlink(phys);
            snprintf(why, size, "Output file %s for task %s exceeds size limit (%lld > %.0f)",
                     f->name, r->name, (long long)nbytes, f->max_nbytes);
            return why;
        }
        snprintf(f->md5, sizeof(f->md5), "%s", md5);
        f->nbytes = (double)nbytes;
        f->status = FS_PRESENT;
    }
    return NULL;
}

static void task_gone(struct vs_client *c, struct cl_result *r, bool restart_from_checkpoint)
{
    r->pid = 0;
    r->stopped = r->quit_pending = false;
    r->quit_sent_at = 0;
    r->task_state = PROCESS_UNINITIALIZED;
    r->pending_msg[0] = '\0';
    vs_client__shm_unmap(r);
    if (restart_from_checkpoint) {
        /* work since the last checkpoint is lost; the policy is told so */
        r->current_cpu_time = r->checkpoint_cpu_time;
        r->elapsed_time = r->checkpoint_elapsed_time;
        r->fraction_done = r->checkpoint_fraction_done;
    }
    if (r->ctask == VS_CTASK_RUNNING || r->ctask == VS_CTASK_SUSPENDED)
        r->ctask = VS_CTASK_REMOVED;
    c->dirty = c->resched = true;
}

static bool read_small(struct vs_client *c, int slot, const char *name, char *out, size_t size)
{
    char path[VS_CLIENT_PATH_MAX];
    if (vs_client__slot_path(c, slot, name, path, sizeof(path)))
        return false;
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(out, 1, size - 1, f);
    fclose(f);
    out[n] = '\0';
    return true;
}

static void handle_exit(struct vs_client *c, size_t ri, int status)
{
    struct cl_result *r = &c->results[ri];
    char msg[400];
    if (r->abort_pending) {
        r->abort_pending = false;
        vs_client__finish_result(c, ri, RS_ABORTED,
                                 r->abort_code ? r->abort_code : EXIT_ABORTED_VIA_GUI,
                                 "aborted by user");
        return;
    }
    if (r->quit_pending) {
        vs_client_msg(c, (long)r->project, 1, "Task %s exited after quit; it restarts later",
                      r->name);
        task_gone(c, r, true);
        return;
    }
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        if (sig == SIGHUP || sig == SIGINT || sig == SIGQUIT || sig == SIGKILL || sig == SIGTERM ||
            sig == SIGSTOP) {
            vs_client_msg(c, (long)r->project, 2, "Task %s killed by signal %d; restarting",
                          r->name, sig);
            task_gone(c, r, true);
            return;
        }
        snprintf(msg, sizeof(msg), "process got signal %d", sig);
        vs_client__finish_result(c, ri, RS_COMPUTE_ERROR, status, msg);
        return;
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : status;
    if (code != 0) {
        snprintf(msg, sizeof(msg), "process exited with code %d (0x%x, %d)", code, code,
                 code - 256);
        vs_client__finish_result(c, ri, RS_COMPUTE_ERROR, code, msg);
        return;
    }
    char text[512];
    if (read_small(c, r->slot, "boinc_temporary_exit", text, sizeof(text))) {
        char *nl = strchr(text, '\n');
        if (nl && nl[1]) {
            double d = strtod(text, NULL);
            if (!(d >= 0 && d <= 86400))
                d = 300;
            char *reason = nl + 1;
            reason[strcspn(reason, "\n")] = '\0';
            vs_client_msg(c, (long)r->project, 1, "Task %s postponed for %.0f seconds: %s", r->name,
                          d, reason);
            r->restart_after = c->now + d;
            r->premature_exits++;
            task_gone(c, r, false);
            return;
        }
    }
    if (read_small(c, r->slot, "boinc_finish_called", text, sizeof(text))) {
        const char *bad = check_outputs(c, r, msg, sizeof(msg));
        if (bad) {
            vs_client__finish_result(c, ri, RS_COMPUTE_ERROR, 0, bad);
            return;
        }
        r->fraction_done = 1;
        vs_client__finish_result(c, ri, RS_FILES_UPLOADING, 0, NULL);
        return;
    }
    r->premature_exits++;
    vs_client_msg(c, (long)r->project, 2,
                  "Task %s exited with zero status but no 'finished' file; restarting", r->name);
    if (r->premature_exits > MAX_PREMATURE) {
        vs_client__finish_result(c, ri, RS_COMPUTE_ERROR, ERR_TOO_MANY_EXITS, "too many exits");
        return;
    }
    task_gone(c, r, false);
}

/* ---------------------------------------------------------------- poll */

static double proc_cpu(pid_t pid)
{
    char p[64], buf[1024];
    snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(p, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *rp = strrchr(buf, ')');
    unsigned long ut = 0, st = 0;
    if (!rp || sscanf(rp + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        return -1;
    long hz = sysconf(_SC_CLK_TCK);
    return (double)(ut + st) / (double)(hz > 0 ? hz : 100);
}

static double xml_num(const char *s, const char *tag, bool *found)
{
    char open[64];
    snprintf(open, sizeof(open), "<%s>", tag);
    const char *p = strstr(s, open);
    *found = p != NULL;
    if (!p)
        return 0;
    double v = strtod(p + strlen(open), NULL);
    return isfinite(v) && v > 0 ? v : 0;
}

static void write_task_state(struct vs_client *c, const struct cl_result *r)
{
    char path[VS_CLIENT_PATH_MAX], text[2048];
    if (vs_client__slot_path(c, r->slot, "boinc_task_state.xml", path, sizeof(path)))
        return;
    int n = snprintf(text, sizeof(text),
                     "<active_task>\n    <project_master_url>%s</project_master_url>\n"
                     "    <result_name>%s</result_name>\n"
                     "    <checkpoint_cpu_time>%f</checkpoint_cpu_time>\n"
                     "    <checkpoint_elapsed_time>%f</checkpoint_elapsed_time>\n"
                     "    <fraction_done>%f</fraction_done>\n</active_task>\n",
                     c->projects[r->project].master_url, r->name, r->checkpoint_cpu_time,
                     r->checkpoint_elapsed_time, r->fraction_done);
    if (n > 0 && (size_t)n < sizeof(text))
        (void)vs_client_write_atomic(path, text, (size_t)n, false);
}

/* The poll's piece of the CPU efficiency (host.c): the wall time r ran on
 * its CPUs and the CPU time it reported meanwhile. Not counted: a poll of
 * a task not running, a non-CPU-intensive task (its CPU time says nothing
 * of the CPUs), and a CPU time that went back (a restart from a
 * checkpoint) or jumped by more than its CPUs could give. */
static void eff_account(struct vs_client *c, const struct cl_result *r, double wall, double dcpu)
{
    const struct cl_project *pr = &c->projects[r->project];
    if (!(wall > 0) || pr->non_cpu_intensive)
        return;
    const struct cl_wu *w = vs_client_result_wu(c, r);
    long a = w ? vs_client_find_app(c, r->project, w->app_name) : -1;
    if (a >= 0 && c->apps[a].non_cpu_intensive)
        return;
    double k = vs_client_result_ncpus(c, r);
    if (!(dcpu >= 0) || dcpu > (wall + 10) * fmax(k, 1))
        return;
    vs_client_cpu_eff_account(c, wall * k, dcpu);
}

static void poll_status(struct vs_client *c, struct cl_result *r, double dt)
{
    bool running = r->task_state == PROCESS_EXECUTING && !r->stopped;
    if (running)
        r->elapsed_time += dt;
    double cpu_before = r->current_cpu_time;
    char msg[1100];
    if (r->api && vs_client__ch_recv(r, CH_APP_STATUS, msg, sizeof(msg))) {
        bool f1, f2, f3;
        double cpu = xml_num(msg, "current_cpu_time", &f1);
        double ck = xml_num(msg, "checkpoint_cpu_time", &f2);
        double fd = xml_num(msg, "fraction_done", &f3);
        if (f1)
            r->current_cpu_time = cpu;
        if (f3 && fd > 0)
            r->fraction_done = fd > 1 ? 1 : fd;
        if (f2 && ck > 0 && ck != r->checkpoint_cpu_time) {
            r->checkpoint_cpu_time = ck;
            r->checkpoint_elapsed_time = r->elapsed_time;
            r->checkpoint_fraction_done = r->fraction_done;
            r->checkpointed = true;
            r->checkpoint_time = c->now;
            r->wall_since_checkpoint = 0;
            r->premature_exits = 0;
            write_task_state(c, r);
            c->resched = true; /* enforcement waits for checkpoints */
        }
    } else if (!r->api && r->pid > 0) {
        double cpu = proc_cpu(r->pid);
        if (cpu >= 0)
            r->current_cpu_time = r->cpu_base + cpu;
    }
    eff_account(c, r, running ? dt : 0, r->current_cpu_time - cpu_before);
    if (r->api && vs_client__ch_recv(r, CH_TRICKLE_UP, msg, sizeof(msg)) &&
        strstr(msg, "<have_new_trickle_up/>")) {
        vs_client_trickle_harvest(c, r);
    }
    if (r->api) {
        char hb[200];
        snprintf(hb, sizeof(hb), "<heartbeat/><wss>%e</wss><max_wss>%e</max_wss>", 0.0,
                 c->host.m_nbytes * 0.9);
        (void)vs_client__ch_send(r, CH_HEARTBEAT, hb);
        if (r->pending_msg[0] && vs_client__ch_send(r, CH_PROC_REQ, r->pending_msg))
            r->pending_msg[0] = '\0';
        vs_client_trickle_deliver(c, r);
    }
}

void vs_client_trickle_notify(struct cl_result *r)
{
    (void)vs_client__ch_send(r, CH_TRICKLE_DOWN, "<have_trickle_down/>");
}

/* Whether r's process has exited (1), still runs (0) or is not our child
 * (-1), without reaping it: the zombie keeps its pid from being reused
 * until handle_exit's waitpid. */
static int exited(const struct cl_result *r)
{
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    if (waitid(P_PID, (id_t)r->pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
        return errno == ECHILD ? -1 : 0;
    return si.si_pid == r->pid ? 1 : 0;
}

bool vs_client_tasks_poll(struct vs_client *c)
{
    double dt =
        c->last_task_poll > 0 && c->now > c->last_task_poll ? c->now - c->last_task_poll : 0;
    if (dt > 10)
        dt = 10;
    c->last_task_poll = c->now;
    bool handled = false, more = false;
    for (size_t i = 0; i < c->n_results; i++) {
        struct cl_result *r = &c->results[i];
        if (r->abort_requested) {
            vs_client_task_abort(c, i, r->abort_code ? r->abort_code : EXIT_ABORTED_VIA_GUI);
            r = &c->results[i];
        }
        if (r->pid <= 0)
            continue;
        int ex = exited(r);
        if (ex > 0 && handled) {
            /* One exit per call: each is its own event for the policy (a
             * CPU freed, then a step; loop.c calls again), as in the
             * simulator, where two jobs rarely end at the same instant.
             * Handled together, the exits a 1 s poll gathers would free
             * several CPUs in one step, and the scheduler's payoff (a
             * period's worth per CPU given) would split them between
             * projects whatever their debts. */
            if (!r->exit_seen)
                poll_status(c, r, dt); /* its elapsed time up to now, once */
            r->exit_seen = true;
            more = true;
            continue;
        }
        if (ex > 0) {
            int status = 0;
            if (waitpid(r->pid, &status, 0) == r->pid) {
                if (!r->exit_seen)
                    poll_status(c, r, dt);
                r->exit_seen = false;
                handle_exit(c, i, status);
                handled = true;
                continue;
            }
            ex = -1;
        }
        if (ex < 0) {
            r->exit_seen = false;
            vs_client_msg(c, (long)r->project, 2, "Task %s: process %d vanished; restarting",
                          r->name, (int)r->pid);
            task_gone(c, r, true);
            continue;
        }
        poll_status(c, r, dt);
        if (r->quit_sent_at > 0 && c->now - r->quit_sent_at > c->prefs.quit_timeout) {
            vs_client_msg(c, (long)r->project, 2,
                          "Task %s did not exit %.0f s after %s; killing it", r->name,
                          c->prefs.quit_timeout, r->abort_pending ? "<abort/>" : "<quit/>");
            vs_client__kill_tree(r->pid);
            r->quit_sent_at = c->now; /* and wait for waitpid */
        }
        /* BOINC-COMPAT: elapsed time limit (exit 197) */
        const struct cl_wu *wu = vs_client_result_wu(c, r);
        const struct cl_app_version *av = vs_client_result_av(c, r);
        double flops = av && av->flops > 0 ? av->flops : c->host.p_fpops;
        if (wu && wu->rsc_fpops_bound > 0 && flops > 0 && !r->abort_pending &&
            r->elapsed_time > wu->rsc_fpops_bound / flops) {
            vs_client_msg(c, (long)r->project, 3,
                          "Aborting task %s: exceeded elapsed time limit %.0f s", r->name,
                          wu->rsc_fpops_bound / flops);
            vs_client_task_abort(c, i, 197);
        }
    }
    return more;
}

static bool pid_in_slot(struct vs_client *c, pid_t pid, int slot)
{
    char link[64], cwd[VS_CLIENT_PATH_MAX], want[VS_CLIENT_PATH_MAX];
    snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
    ssize_t n = readlink(link, cwd, sizeof(cwd) - 1);
    if (n <= 0)
        return false;
    cwd[n] = '\0';
    if (vs_client_path(c, want, sizeof(want), "slots/%d", slot))
        return false;
    return strcmp(cwd, want) == 0;
}

static void kill_slot_orphans(struct vs_client *c);

void vs_client_tasks_recover(struct vs_client *c)
{
    for (size_t i = 0; i < c->n_results; i++) {
        struct cl_result *r = &c->results[i];
        if (r->slot < 0)
            continue;
        /* a checkpoint newer than the state file (written without rewriting it) */
        char text[2048];
        if (read_small(c, r->slot, "boinc_task_state.xml", text, sizeof(text))) {
            bool f;
            double ck = xml_num(text, "checkpoint_cpu_time", &f);
            if (f && ck > r->checkpoint_cpu_time) {
                r->checkpoint_cpu_time = ck;
                r->checkpoint_elapsed_time = xml_num(text, "checkpoint_elapsed_time", &f);
                r->checkpoint_fraction_done = xml_num(text, "fraction_done", &f);
                r->checkpointed = true;
            }
        }
        if (r->pid > 0 && pid_in_slot(c, r->pid, r->slot)) {
            /* an app of the previous client: it cannot be waited for, so it is
             * stopped and restarted from its checkpoint in the same slot */
            vs_client_msg(c, (long)r->project, 1,
                          "Task %s: process %d of the previous run still there; restarting it "
                          "from its checkpoint",
                          r->name, (int)r->pid);
            vs_client__kill_tree(r->pid);
            for (int k = 0; k < 50 && kill(r->pid, 0) == 0 && pid_in_slot(c, r->pid, r->slot); k++)
                usleep(100000);
        }
        r->pid = 0;
        r->task_state = PROCESS_UNINITIALIZED;
        r->current_cpu_time = r->checkpoint_cpu_time;
        r->elapsed_time = r->checkpoint_elapsed_time;
        r->fraction_done = r->checkpoint_fraction_done;
        if (r->ctask != VS_CTASK_UNSTARTED)
            r->ctask = VS_CTASK_REMOVED;
    }
    kill_slot_orphans(c);
}

/* Processes whose working directory is one of our slots: apps of an earlier
 * run that the state file does not name (killed before it was written). */
static void kill_slot_orphans(struct vs_client *c)
{
    char slots[VS_CLIENT_PATH_MAX];
    if (vs_client_path(c, slots, sizeof(slots), "slots/"))
        return;
    size_t sl = strlen(slots);
    DIR *d = opendir("/proc");
    if (!d)
        return;
    struct dirent *e;
    int found = 0;
    while ((e = readdir(d)) != NULL && found < 256) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        pid_t pid = (pid_t)strtol(e->d_name, NULL, 10);
        if (pid == c->pid)
            continue;
        char link[64], cwd[VS_CLIENT_PATH_MAX];
        snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
        ssize_t n = readlink(link, cwd, sizeof(cwd) - 1);
        if (n <= 0)
            continue;
        cwd[n] = '\0';
        if (strncmp(cwd, slots, sl) != 0)
            continue;
        vs_client_msg(c, -1, 1, "Process %d of the previous run still there in %s; killing it",
                      (int)pid, cwd + sl - 6);
        vs_client__kill_tree(pid);
        found++;
    }
    closedir(d);
    if (found)
        usleep(200000); /* SIGKILL is quick; let them go before their slots are reused */
}

bool vs_client_tasks_quit_all(struct vs_client *c)
{
    bool all_gone = true;
    for (size_t i = 0; i < c->n_results; i++) {
        struct cl_result *r = &c->results[i];
        if (r->pid <= 0)
            continue;
        all_gone = false;
        if (!r->quit_pending && !r->abort_pending)
            vs_client_task_suspend(c, i, true);
    }
    return all_gone;
}

void vs_client_task_kill_now(struct vs_client *c, size_t ri)
{
    struct cl_result *r = &c->results[ri];
    if (r->pid <= 0)
        return;
    if (r->stopped)
        kill(r->pid, SIGCONT);
    vs_client__kill_tree(r->pid);
    int status;
    (void)waitpid(r->pid, &status, 0);
    task_gone(c, r, true);
}
