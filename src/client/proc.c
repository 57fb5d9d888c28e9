/*
 * Running apps exactly as the 7.20.5 client does (boinc-client-notes.md
 * 2-4): slot directory, init_data.xml with client_pid, soft-link files or
 * copies, the 8192-byte mmap channel for api_version >= 6, stdout to
 * /dev/null, stderr.txt appended, LD_LIBRARY_PATH, nice 19 + SCHED_IDLE;
 * every second a heartbeat, app_status read, queued control messages sent,
 * and <quit/>/<abort/> followed by SIGKILL 60 s later; exits judged as the
 * notes' section 3.8 says.
 *
 * Plain apps (no api_version) have no channel to read <suspend/> from, so
 * where 7.20.5 lets them run on "suspended", this client stops them with
 * SIGSTOP/SIGCONT and asks them to quit with SIGTERM (killed 60 s later).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client/proc_int.h"
#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/fs.h"
#include "volsched/md5.h"
#include "volsched/xml.h"

int vs_client_free_slot(struct vs_client *c)
{
    for (int s = 0; s < VS_CLIENT_MAX_SLOTS; s++) {
        bool used = false;
        for (size_t i = 0; i < c->n_results && !used; i++)
            used = c->results[i].slot == s;
        if (!used)
            return s;
    }
    return -1;
}

void vs_client_slot_clean(struct vs_client *c, int slot)
{
    char path[VS_CLIENT_PATH_MAX];
    if (vs_client_path(c, path, sizeof(path), "slots/%d", slot) == 0)
        (void)vs_fs_rm_tree(path);
}

int vs_client__slot_path(const struct vs_client *c, int slot, const char *name, char *out,
                         size_t size)
{
    return vs_client_path(c, out, size, "slots/%d/%s", slot, name);
}

static bool api_app(const struct cl_app_version *av)
{
    return av && av->api_version && strtod(av->api_version, NULL) >= 6.0;
}

/* ---------------------------------------------------------------- channel */

bool vs_client__ch_send(struct cl_result *r, size_t off, const char *msg)
{
    if (!r->shm)
        return false;
    unsigned char *ch = (unsigned char *)r->shm + off;
    if (ch[0])
        return false; /* BOINC-COMPAT: never overwrite an unread message */
    size_t n = strlen(msg);
    if (n > 1022)
        n = 1022;
    memcpy(ch + 1, msg, n);
    ch[1 + n] = '\0';
    __atomic_store_n(&ch[0], 1, __ATOMIC_RELEASE);
    return true;
}

bool vs_client__ch_recv(struct cl_result *r, size_t off, char *out, size_t size)
{
    if (!r->shm)
        return false;
    unsigned char *ch = (unsigned char *)r->shm + off;
    if (!__atomic_load_n(&ch[0], __ATOMIC_ACQUIRE))
        return false;
    size_t n = strnlen((const char *)ch + 1, 1023);
    if (n >= size)
        n = size - 1;
    memcpy(out, ch + 1, n);
    out[n] = '\0';
    ch[0] = 0;
    return true;
}

void vs_client__shm_unmap(struct cl_result *r)
{
    if (r->shm)
        munmap(r->shm, SHM_SIZE);
    r->shm = NULL;
}

static int shm_create(struct vs_client *c, struct cl_result *r)
{
    char path[VS_CLIENT_PATH_MAX];
    int rc = vs_client__slot_path(c, r->slot, "boinc_mmap_file", path, sizeof(path));
    if (rc)
        return rc;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0)
        return -errno;
    /* zeroed before every start (BOINC-COMPAT) */
    static const char zero[SHM_SIZE];
    if (ftruncate(fd, SHM_SIZE) != 0 || pwrite(fd, zero, SHM_SIZE, 0) != SHM_SIZE) {
        int e = -errno;
        close(fd);
        return e;
    }
    void *m = mmap(NULL, SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return -errno;
    r->shm = m;
    return 0;
}

/* ---------------------------------------------------------------- slot setup */

static int write_init_data(struct vs_client *c, struct cl_result *r, const struct cl_wu *w,
                           const struct cl_app_version *av)
{
    const struct cl_project *p = &c->projects[r->project];
    char pdir[VS_CLIENT_PATH_MAX], path[VS_CLIENT_PATH_MAX];
    int rc = vs_client_project_dir(c, r->project, pdir, sizeof(pdir));
    if (rc || (rc = vs_client__slot_path(c, r->slot, "init_data.xml", path, sizeof(path))))
        return rc;
    struct vs_buf b;
    vs_buf_init(&b, 1u << 20);
    struct vs_xml_writer x;
    vs_xml_writer_init(&x, &b);
    vs_xml_open(&x, "app_init_data");
    vs_xml_int(&x, "major_version", VS_CLIENT_MAJOR);
    vs_xml_int(&x, "minor_version", VS_CLIENT_MINOR);
    vs_xml_int(&x, "release", VS_CLIENT_RELEASE);
    vs_xml_int(&x, "app_version", av->version_num);
    vs_xml_int(&x, "userid", p->userid);
    vs_xml_int(&x, "teamid", p->teamid);
    vs_xml_int(&x, "hostid", p->hostid);
    vs_xml_str(&x, "app_name", w->app_name);
    if (p->project_prefs)
        vs_xml_raw_write(&x, p->project_prefs, strlen(p->project_prefs));
    vs_xml_str(&x, "user_name", p->user_name ? p->user_name : "");
    vs_xml_str(&x, "team_name", p->team_name ? p->team_name : "");
    vs_xml_str(&x, "project_dir", pdir);
    vs_xml_str(&x, "boinc_dir", c->dir);
    vs_xml_str(&x, "authenticator", p->authenticator);
    vs_xml_str(&x, "wu_name", w->name);
    vs_xml_str(&x, "result_name", r->name);
    vs_xml_int(&x, "shm_key", -1);
    vs_xml_int(&x, "slot", r->slot);
    vs_xml_int(&x, "client_pid", c->pid);
    vs_xml_double(&x, "wu_cpu_time", r->checkpoint_cpu_time);
    vs_xml_double(&x, "starting_elapsed_time", r->checkpoint_elapsed_time);
    vs_xml_int(&x, "using_sandbox", 0);
    vs_xml_int(&x, "vm_extensions_disabled", 0);
    vs_xml_double(&x, "user_total_credit", p->user_total_credit);
    vs_xml_double(&x, "user_expavg_credit", p->user_expavg_credit);
    vs_xml_double(&x, "host_total_credit", p->host_total_credit);
    vs_xml_double(&x, "host_expavg_credit", p->host_expavg_credit);
    double tot = 0;
    for (size_t i = 0; i < c->n_projects; i++)
        tot += c->projects[i].resource_share;
    vs_xml_double(&x, "resource_share_fraction", tot > 0 ? p->resource_share / tot : 1);
    vs_xml_double(&x, "checkpoint_period", c->prefs.disk_interval);
    vs_xml_double(&x, "fraction_done_start", 0);
    vs_xml_double(&x, "fraction_done_end", 1);
    vs_xml_str(&x, "gpu_type", "");
    vs_xml_int(&x, "gpu_device_num", -1);
    vs_xml_int(&x, "gpu_opencl_dev_index", -1);
    vs_xml_double(&x, "gpu_usage", 0);
    vs_xml_double(&x, "ncpus", av->avg_ncpus);
    vs_xml_double(&x, "rsc_fpops_est", w->rsc_fpops_est);
    vs_xml_double(&x, "rsc_fpops_bound", w->rsc_fpops_bound);
    vs_xml_double(&x, "rsc_memory_bound", w->rsc_memory_bound);
    vs_xml_double(&x, "rsc_disk_bound", w->rsc_disk_bound);
    vs_xml_double(&x, "computation_deadline",
                  r->report_deadline - c->prefs.work_buf_min_days * 86400);
    vs_xml_int(&x, "vbox_window", 0);
    vs_xml_int(&x, "no_priority_change", 0);
    vs_xml_int(&x, "process_priority", -1);
    vs_xml_int(&x, "process_priority_special", -1);
    vs_xml_open(&x, "host_info");
    vs_xml_int(&x, "p_ncpus", vs_client_ncpus(c));
    vs_xml_double(&x, "p_fpops", c->host.p_fpops);
    vs_xml_double(&x, "p_iops", c->host.p_iops);
    vs_xml_double(&x, "m_nbytes", c->host.m_nbytes);
    vs_xml_str(&x, "os_name", c->host.os_name);
    vs_xml_close(&x);
    vs_xml_close(&x);
    if ((rc = vs_xml_writer_error(&x)) == 0) {
        /* the prefs block is ours to write after the writer closed: keep it inside */
        b.len -= strlen("</app_init_data>\n");
        b.data[b.len] = '\0';
        struct vs_buf pb;
        vs_buf_init(&pb, 64 * 1024);
        rc = vs_client_prefs_xml(c, &pb);
        if (rc == 0)
            rc = vs_buf_append(&b, pb.data, pb.len);
        for (size_t i = 0; rc == 0 && i < av->n_frefs; i++)
            rc = vs_buf_printf(&b, "<app_file>%s</app_file>\n", av->frefs[i].file_name);
        if (rc == 0)
            rc = vs_buf_puts(&b, "</app_init_data>\n");
        vs_buf_cleanup(&pb);
    }
    if (rc == 0)
        rc = vs_client_write_private(path, b.data, b.len, false);
    vs_buf_cleanup(&b);
    return rc;
}

/* One slot entry (section 2.4): a soft-link text file, or a copy. dir is the
 * directory that holds the file (the project's, or for an app version's
 * files its verified directory, appdir.c), rel the same seen from the slot. */
static int setup_file(struct vs_client *c, const struct cl_result *r, const struct cl_fref *f,
                      bool input, const char *dir, const char *rel)
{
    const char *open_name = f->open_name ? f->open_name : f->file_name;
    char link[VS_CLIENT_PATH_MAX], phys[VS_CLIENT_PATH_MAX + 300];
    int rc = vs_client__slot_path(c, r->slot, open_name, link, sizeof(link));
    if (rc)
        return rc;
    snprintf(phys, sizeof(phys), "%s/%s", dir, f->file_name);
    if (f->copy_file) {
        if (!input)
            return 0; /* copied back after the app exits */
        /* a copy of a read-only app file is the app's to change */
        (void)unlink(link);
        rc = vs_fs_copy_file(phys, link, 0644, 0, NULL);
        return rc == 0 && chmod(link, 0755) != 0 ? -errno : rc;
    }
    char text[VS_CLIENT_PATH_MAX];
    int n = snprintf(text, sizeof(text), "<soft_link>%s/%s</soft_link>\n", rel, f->file_name);
    if (n < 0 || (size_t)n >= sizeof(text))
        return VS_ELIMIT;
    return vs_client_write_atomic(link, text, (size_t)n, false);
}

/* The slot's entries: the app version's files from its verified directory,
 * the workunit's inputs and the result's outputs from the project's. */
static int setup_slot(struct vs_client *c, const struct cl_result *r, const struct cl_wu *w,
                      const struct cl_app_version *av, const char *avdir, bool outputs)
{
    char pdir[VS_CLIENT_PATH_MAX], esc[512], rel[VS_CLIENT_PATH_MAX];
    int rc = vs_client_project_dir(c, r->project, pdir, sizeof(pdir));
    if (rc)
        return rc;
    vs_client_escape_url(c->projects[r->project].master_url, esc, sizeof(esc));
    /* BOINC-COMPAT: links are relative to the slot, as 7.20.5 writes them */
    const char *av_base = strrchr(avdir, '/');
    snprintf(rel, sizeof(rel), "../../app_versions/%s%s", esc, av_base ? av_base : "");
    for (size_t i = 0; rc == 0 && i < av->n_frefs; i++)
        rc = setup_file(c, r, &av->frefs[i], true, avdir, rel);
    snprintf(rel, sizeof(rel), "../../projects/%s", esc);
    for (size_t i = 0; rc == 0 && i < w->n_frefs; i++)
        rc = setup_file(c, r, &w->frefs[i], true, pdir, rel);
    for (size_t i = 0; outputs && rc == 0 && i < r->n_frefs; i++)
        rc = setup_file(c, r, &r->frefs[i], false, pdir, rel);
    return rc;
}

/* Appends to out (of size) the entries of a search path list that are
 * absolute: an empty or relative entry means a directory relative to the
 * app's working directory, its slot, which holds unsigned inputs. */
static void absolute_entries(const char *list, char *out, size_t size)
{
    size_t n = strlen(out);
    for (const char *s = list; s && *s;) {
        size_t len = strcspn(s, ":");
        if (len > 0 && s[0] == '/' && n + len + 2 < size) {
            if (n > 0)
                out[n++] = ':';
            memcpy(out + n, s, len);
            n += len;
            out[n] = '\0';
        }
        s += len;
        if (*s == ':')
            s++;
    }
}

/* ---------------------------------------------------------------- start */

static void split_args(char *s, char **argv, int max, int *argc)
{
    /* BOINC-COMPAT: whitespace-separated, quoted tokens kept whole */
    while (*s && *argc < max) {
        while (*s == ' ' || *s == '\t' || *s == '\n')
            s++;
        if (!*s)
            break;
        char q = (*s == '"' || *s == '\'') ? *s++ : 0;
        argv[(*argc)++] = s;
        while (*s && (q ? *s != q : (*s != ' ' && *s != '\t' && *s != '\n')))
            s++;
        if (*s)
            *s++ = '\0';
    }
}

int vs_client_task_start(struct vs_client *c, size_t ri)
{
    struct cl_result *r = &c->results[ri];
    struct cl_wu *w = vs_client_result_wu(c, r);
    struct cl_app_version *av = vs_client_result_av(c, r);
    if (!w || !av)
        return VS_ENOTFOUND;
    const struct cl_fref *main = NULL;
    for (size_t i = 0; i < av->n_frefs; i++)
        if (av->frefs[i].main_program)
            main = &av->frefs[i];
    if (!main && av->n_frefs)
        main = &av->frefs[0];
    if (!main) {
        vs_client_msg(c, (long)r->project, 3, "Task %s: No main program specified", r->name);
        return VS_EINVAL;
    }
    long mf = vs_client_find_file(c, r->project, main->file_name);
    if (mf < 0 || c->files[mf].status != FS_PRESENT) {
        vs_client_msg(c, (long)r->project, 3, "Task %s: main program %s is not present", r->name,
                      main->file_name);
        return VS_ENOTFOUND;
    }
    /* the bytes the app runs from are checked against the project's
     * signature now, not only when they were downloaded (appdir.c) */
    char avdir[VS_CLIENT_PATH_MAX], why[600];
    if (!vs_client_slot_names_ok(av, w, r, why, sizeof(why))) {
        vs_client_msg(c, (long)r->project, 3, "Task %s: refusing to start: %s", r->name, why);
        vs_client__finish_result(c, ri, RS_COMPUTE_ERROR, ERR_RESULT_START, why);
        return VS_EINVAL;
    }
    int rc = vs_client_av_prepare(c, av, avdir, sizeof(avdir), why, sizeof(why));
    if (rc) {
        vs_client_msg(c, (long)r->project, 3, "Task %s: refusing to run %s %d: %s", r->name,
                      av->app_name, av->version_num, why);
        /* a file that fails its check now will fail it at every start */
        if (rc == VS_EAUTH)
            vs_client__finish_result(c, ri, RS_COMPUTE_ERROR, ERR_RSA_FAILED, why);
        return rc;
    }
    bool fresh = r->slot < 0;
    if (fresh) {
        r->slot = vs_client_free_slot(c);
        if (r->slot < 0)
            return VS_ELIMIT;
        vs_client_msg(c, (long)r->project, 1, "[slot] assigning slot %d to %s", r->slot, r->name);
    }
    char sdir[VS_CLIENT_PATH_MAX], path[VS_CLIENT_PATH_MAX];
    rc = vs_client_path(c, sdir, sizeof(sdir), "slots/%d", r->slot);
    if (rc == 0)
        rc = vs_fs_mkdir_p(sdir, 0755);
    if (rc)
        goto fail;
    if (vs_client__slot_path(c, r->slot, "boinc_temporary_exit", path, sizeof(path)) == 0)
        unlink(path);
    if (vs_client__slot_path(c, r->slot, "boinc_finish_called", path, sizeof(path)) == 0)
        unlink(path);
    if ((rc = write_init_data(c, r, w, av)))
        goto fail;
    if ((rc = setup_slot(c, r, w, av, avdir, fresh || !r->checkpointed)))
        goto fail;
    r->api = api_app(av);
    vs_client__shm_unmap(r);
    if (r->api && (rc = shm_create(c, r)))
        goto fail;

    char exe[VS_CLIENT_PATH_MAX + 300], cmd[8192];
    snprintf(exe, sizeof(exe), "%s/%s", avdir, main->file_name);
    snprintf(cmd, sizeof(cmd), "%s %s", w->command_line ? w->command_line : "",
             av->cmdline ? av->cmdline : "");
    char *argv[102];
    int argc = 0;
    argv[argc++] = exe;
    split_args(cmd, argv, 100, &argc);
    argv[argc] = NULL;
    /* The library path is the verified directory and the client's own
     * absolute entries: not the project directory, ".", or "../.." as
     * 7.20.5 sets it (an input named libc.so.6 would load into the app).
     * PATH keeps only absolute entries for the same reason. */
    char ld[VS_CLIENT_PATH_MAX * 2], envpath[8192] = "";
    snprintf(ld, sizeof(ld), "%s", avdir);
    absolute_entries(getenv("LD_LIBRARY_PATH"), ld, sizeof(ld));
    absolute_entries(getenv("PATH"), envpath, sizeof(envpath));

    bool no_prio = c->prefs.no_priority_change;
    pid_t pid = fork();
    if (pid < 0) {
        rc = -errno;
        goto fail;
    }
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 1);
        setenv("LD_LIBRARY_PATH", ld, 1);
        setenv("PATH", *envpath ? envpath : "/usr/bin:/bin", 1);
        if (chdir(sdir) != 0)
            _exit(errno);
        int e = open("stderr.txt", O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (e >= 0)
            dup2(e, 2);
        /* BOINC-COMPAT: nice 19 and SCHED_IDLE for CPU jobs, unless cc_config
         * says <no_priority_change> */
        if (!no_prio) {
            if (setpriority(PRIO_PROCESS, 0, 19) != 0) {
                /* not fatal: the app runs at the client's priority */
            }
            struct sched_param sp = {0};
            (void)sched_setscheduler(0, SCHED_IDLE, &sp);
        }
        /* the client's descriptors (sockets, lock) must not leak into apps */
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
        execv(exe, argv);
        fprintf(stderr, "Process creation (%s) failed: %s\n", exe, strerror(errno));
        _exit(errno ? errno : 1);
    }
    r->pid = pid;
    r->task_state = PROCESS_EXECUTING;
    r->quit_pending = r->abort_pending = r->stopped = false;
    r->quit_sent_at = 0;
    r->pending_msg[0] = '\0';
    r->cpu_base = r->checkpoint_cpu_time;
    r->current_cpu_time = r->checkpoint_cpu_time;
    r->elapsed_time = r->checkpoint_elapsed_time;
    vs_client_msg(c, (long)r->project, 1, "%s task %s using %s version %d in slot %d",
                  fresh ? "Starting" : "Restarting", r->name, w->app_name, av->version_num,
                  r->slot);
    /* BOINC-COMPAT: the state is written as soon as a task starts, so a
     * client killed now knows the slot and the pid when it comes back */
    c->dirty = true;
    (void)vs_client_state_write(c);
    return 0;
fail:
    vs_client_msg(c, (long)r->project, 3, "Couldn't start task %s: %s", r->name, vs_strerror(rc));
    return rc;
}

/* ---------------------------------------------------------------- control */

/* Descendants of pid, from /proc (apps share our process group: never kill by group). */
static size_t descendants(pid_t pid, pid_t *out, size_t max)
{
    size_t n = 0;
    pid_t queue[256];
    size_t qh = 0, qt = 0;
    queue[qt++] = pid;
    while (qh < qt && n < max) {
        pid_t parent = queue[qh++];
        DIR *d = opendir("/proc");
        if (!d)
            break;
        struct dirent *e;
        while ((e = readdir(d)) != NULL && n < max) {
            if (e->d_name[0] < '0' || e->d_name[0] > '9')
                continue;
            char p[300], buf[512];
            snprintf(p, sizeof(p), "/proc/%s/stat", e->d_name);
            FILE *f = fopen(p, "r");
            if (!f)
                continue;
            size_t len = fread(buf, 1, sizeof(buf) - 1, f);
            fclose(f);
            buf[len] = '\0';
            char *rp = strrchr(buf, ')');
            int ppid = 0;
            char st;
            if (rp && sscanf(rp + 1, " %c %d", &st, &ppid) == 2 && ppid == parent) {
                out[n++] = (pid_t)strtol(e->d_name, NULL, 10);
                if (qt < 256)
                    queue[qt++] = out[n - 1];
            }
        }
        closedir(d);
    }
    return n;
}

void vs_client__kill_tree(pid_t pid)
{
    pid_t kids[128];
    size_t n = descendants(pid, kids, 128);
    kill(pid, SIGKILL);
    for (size_t i = 0; i < n; i++)
        kill(kids[i], SIGKILL);
}

void vs_client_task_send(struct vs_client *c, size_t ri, const char *msg)
{
    (void)c;
    struct cl_result *r = &c->results[ri];
    /* BOINC-COMPAT: suspend cancels a queued resume and vice versa */
    if ((strcmp(msg, "<suspend/>") == 0 && strcmp(r->pending_msg, "<resume/>") == 0) ||
        (strcmp(msg, "<resume/>") == 0 && strcmp(r->pending_msg, "<suspend/>") == 0)) {
        r->pending_msg[0] = '\0';
        return;
    }
    snprintf(r->pending_msg, sizeof(r->pending_msg), "%s", msg);
    if (vs_client__ch_send(r, CH_PROC_REQ, msg))
        r->pending_msg[0] = '\0';
}

void vs_client_task_suspend(struct vs_client *c, size_t ri, bool remove)
{
    struct cl_result *r = &c->results[ri];
    if (r->pid <= 0)
        return;
    if (remove) {
        vs_client_msg(c, (long)r->project, 1, "Preempting %s (removed from memory)", r->name);
        if (r->stopped) {
            kill(r->pid, SIGCONT);
            r->stopped = false;
        }
        if (r->api)
            vs_client_task_send(c, ri, "<quit/>");
        else
            kill(r->pid, SIGTERM);
        r->quit_pending = true;
        r->quit_sent_at = c->now;
        r->task_state = PROCESS_QUIT_PENDING;
    } else {
        vs_client_msg(c, (long)r->project, 1, "Preempting %s (left in memory)", r->name);
        if (r->api) {
            vs_client_task_send(c, ri, "<suspend/>");
        } else if (!r->stopped) {
            kill(r->pid, SIGSTOP);
            r->stopped = true;
        }
        r->task_state = PROCESS_SUSPENDED;
    }
    c->dirty = true;
}

void vs_client_task_resume(struct vs_client *c, size_t ri)
{
    struct cl_result *r = &c->results[ri];
    if (r->pid <= 0) {
        if (vs_client_task_start(c, ri) != 0)
            r->restart_after = c->now + 60;
        return;
    }
    if (r->quit_pending)
        return; /* it is leaving; it restarts once gone */
    vs_client_msg(c, (long)r->project, 1, "Resuming task %s", r->name);
    if (r->api)
        vs_client_task_send(c, ri, "<resume/>");
    if (r->stopped) {
        kill(r->pid, SIGCONT);
        r->stopped = false;
    }
    r->task_state = PROCESS_EXECUTING;
    c->dirty = true;
}

void vs_client_task_abort(struct vs_client *c, size_t ri, int code)
{
    struct cl_result *r = &c->results[ri];
    r->abort_requested = false;
    if (r->state >= RS_COMPUTE_ERROR)
        return;
    if (r->pid > 0) {
        if (r->stopped) {
            kill(r->pid, SIGCONT);
            r->stopped = false;
        }
        r->abort_pending = true;
        r->abort_code = code;
        r->quit_sent_at = c->now;
        r->task_state = PROCESS_ABORT_PENDING;
        if (r->api)
            vs_client_task_send(c, ri, "<abort/>");
        else
            vs_client__kill_tree(r->pid);
        return;
    }
    vs_client__finish_result(c, ri, RS_ABORTED, code, "aborted");
}
