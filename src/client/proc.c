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

#include "client/client.h"
#include "volsched/alloc.h"
#include "volsched/md5.h"
#include "volsched/xml.h"

#define SHM_SIZE        8192
#define CH_PROC_REQ     0x0000
#define CH_HEARTBEAT    0x1000
#define CH_APP_STATUS   0x1400
#define CH_TRICKLE_UP   0x1800
#define CH_TRICKLE_DOWN 0x1C00
#define QUIT_TIMEOUT    60.0 /* BOINC-COMPAT: QUIT_TIMEOUT, ABORT_TIMEOUT */
#define MAX_PREMATURE   100  /* BOINC-COMPAT: exits without finish file before an error */
#define STDERR_TAIL     (63 * 1024)

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
        (void)vs_client_rmtree(path);
}

static int slot_path(const struct vs_client *c, int slot, const char *name, char *out, size_t size)
{
    return vs_client_path(c, out, size, "slots/%d/%s", slot, name);
}

static bool api_app(const struct cl_app_version *av)
{
    return av && av->api_version && strtod(av->api_version, NULL) >= 6.0;
}

/* ---------------------------------------------------------------- channel */

static bool ch_send(struct cl_result *r, size_t off, const char *msg)
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

static bool ch_recv(struct cl_result *r, size_t off, char *out, size_t size)
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

static void shm_unmap(struct cl_result *r)
{
    if (r->shm)
        munmap(r->shm, SHM_SIZE);
    r->shm = NULL;
}

static int shm_create(struct vs_client *c, struct cl_result *r)
{
    char path[VS_CLIENT_PATH_MAX];
    int rc = slot_path(c, r->slot, "boinc_mmap_file", path, sizeof(path));
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
    if (rc || (rc = slot_path(c, r->slot, "init_data.xml", path, sizeof(path))))
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
        rc = vs_client_write_atomic(path, b.data, b.len, false);
    vs_buf_cleanup(&b);
    return rc;
}

static int copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb");
    if (!in)
        return -errno;
    FILE *out = fopen(to, "wb");
    if (!out) {
        int e = -errno;
        fclose(in);
        return e;
    }
    char buf[65536];
    size_t n;
    int rc = 0;
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        if (fwrite(buf, 1, n, out) != n) {
            rc = errno == ENOSPC ? -ENOSPC : VS_EIO;
            break;
        }
    fclose(in);
    if (fclose(out) != 0 && rc == 0)
        rc = -errno;
    return rc;
}

/* One slot entry (section 2.4): a soft-link text file, or a copy. */
static int setup_file(struct vs_client *c, const struct cl_result *r, const struct cl_fref *f,
                      bool input)
{
    const char *esc_dir;
    char pdir[VS_CLIENT_PATH_MAX], esc[512];
    vs_client_escape_url(c->projects[r->project].master_url, esc, sizeof(esc));
    esc_dir = esc;
    int rc = vs_client_project_dir(c, r->project, pdir, sizeof(pdir));
    if (rc)
        return rc;
    const char *open_name = f->open_name ? f->open_name : f->file_name;
    char link[VS_CLIENT_PATH_MAX], phys[VS_CLIENT_PATH_MAX + 300];
    if ((rc = slot_path(c, r->slot, open_name, link, sizeof(link))))
        return rc;
    snprintf(phys, sizeof(phys), "%s/%s", pdir, f->file_name);
    if (f->copy_file) {
        if (!input)
            return 0; /* copied back after the app exits */
        return copy_file(phys, link);
    }
    char text[VS_CLIENT_PATH_MAX];
    int n = snprintf(text, sizeof(text), "<soft_link>../../projects/%s/%s</soft_link>\n", esc_dir,
                     f->file_name);
    if (n < 0 || (size_t)n >= sizeof(text))
        return VS_ELIMIT;
    return vs_client_write_atomic(link, text, (size_t)n, false);
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
    if (!c->files[mf].signature_required) {
        /* app files are verified against the project's key when downloaded
         * (xfer.c); one that never was is not run */
        vs_client_msg(c, (long)r->project, 3,
                      "Task %s: %s was not verified against the project's code-signing key; "
                      "refusing to run it",
                      r->name, main->file_name);
        return VS_EAUTH;
    }
    bool fresh = r->slot < 0;
    if (fresh) {
        r->slot = vs_client_free_slot(c);
        if (r->slot < 0)
            return VS_ELIMIT;
        vs_client_msg(c, (long)r->project, 1, "[slot] assigning slot %d to %s", r->slot, r->name);
    }
    char sdir[VS_CLIENT_PATH_MAX], path[VS_CLIENT_PATH_MAX];
    int rc = vs_client_path(c, sdir, sizeof(sdir), "slots/%d", r->slot);
    if (rc == 0)
        rc = vs_client_mkdirs(sdir);
    if (rc)
        goto fail;
    if (slot_path(c, r->slot, "boinc_temporary_exit", path, sizeof(path)) == 0)
        unlink(path);
    if (slot_path(c, r->slot, "boinc_finish_called", path, sizeof(path)) == 0)
        unlink(path);
    if ((rc = write_init_data(c, r, w, av)))
        goto fail;
    for (size_t i = 0; rc == 0 && i < av->n_frefs; i++)
        rc = setup_file(c, r, &av->frefs[i], true);
    for (size_t i = 0; rc == 0 && i < w->n_frefs; i++)
        rc = setup_file(c, r, &w->frefs[i], true);
    if (fresh || !r->checkpointed)
        for (size_t i = 0; rc == 0 && i < r->n_frefs; i++)
            rc = setup_file(c, r, &r->frefs[i], false);
    if (rc)
        goto fail;
    r->api = api_app(av);
    shm_unmap(r);
    if (r->api && (rc = shm_create(c, r)))
        goto fail;

    char esc[512], exe[VS_CLIENT_PATH_MAX], cmd[8192];
    vs_client_escape_url(c->projects[r->project].master_url, esc, sizeof(esc));
    snprintf(exe, sizeof(exe), "../../projects/%s/%s", esc, main->file_name);
    snprintf(cmd, sizeof(cmd), "%s %s", w->command_line ? w->command_line : "",
             av->cmdline ? av->cmdline : "");
    char *argv[102];
    int argc = 0;
    argv[argc++] = exe;
    split_args(cmd, argv, 100, &argc);
    argv[argc] = NULL;
    char ld[VS_CLIENT_PATH_MAX * 2];
    const char *old = getenv("LD_LIBRARY_PATH");
    snprintf(ld, sizeof(ld), "../../projects/%s:.:../..%s%s", esc, old ? ":" : "", old ? old : "");

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

static void kill_tree(pid_t pid)
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
    if (ch_send(r, CH_PROC_REQ, msg))
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

static void finish_result(struct vs_client *c, size_t ri, int state, int exit_status,
                          const char *message);

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
            kill_tree(r->pid);
        return;
    }
    finish_result(c, ri, RS_ABORTED, code, "aborted");
}

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
    if (r->slot >= 0 && slot_path(c, r->slot, "stderr.txt", path, sizeof(path)) == 0)
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

static void finish_result(struct vs_client *c, size_t ri, int state, int exit_status,
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
    shm_unmap(r);
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
        char phys[VS_CLIENT_PATH_MAX + 300];
        snprintf(phys, sizeof(phys), "%s/%s", pdir, f->name);
        if (fr->copy_file) {
            char slotf[VS_CLIENT_PATH_MAX];
            if (slot_path(c, r->slot, fr->open_name ? fr->open_name : fr->file_name, slotf,
                          sizeof(slotf)) == 0 &&
                access(slotf, F_OK) == 0) {
                int rc = copy_file(slotf, phys);
                if (rc) {
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
    shm_unmap(r);
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
    if (slot_path(c, slot, name, path, sizeof(path)))
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
        finish_result(c, ri, RS_ABORTED, r->abort_code ? r->abort_code : EXIT_ABORTED_VIA_GUI,
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
        finish_result(c, ri, RS_COMPUTE_ERROR, status, msg);
        return;
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : status;
    if (code != 0) {
        snprintf(msg, sizeof(msg), "process exited with code %d (0x%x, %d)", code, code,
                 code - 256);
        finish_result(c, ri, RS_COMPUTE_ERROR, code, msg);
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
            finish_result(c, ri, RS_COMPUTE_ERROR, 0, bad);
            return;
        }
        r->fraction_done = 1;
        finish_result(c, ri, RS_FILES_UPLOADING, 0, NULL);
        return;
    }
    r->premature_exits++;
    vs_client_msg(c, (long)r->project, 2,
                  "Task %s exited with zero status but no 'finished' file; restarting", r->name);
    if (r->premature_exits > MAX_PREMATURE) {
        finish_result(c, ri, RS_COMPUTE_ERROR, ERR_TOO_MANY_EXITS, "too many exits");
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
    if (slot_path(c, r->slot, "boinc_task_state.xml", path, sizeof(path)))
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

static void poll_status(struct vs_client *c, struct cl_result *r, double dt)
{
    if (r->task_state == PROCESS_EXECUTING && !r->stopped)
        r->elapsed_time += dt;
    char msg[1100];
    if (r->api && ch_recv(r, CH_APP_STATUS, msg, sizeof(msg))) {
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
    if (r->api && ch_recv(r, CH_TRICKLE_UP, msg, sizeof(msg)) &&
        strstr(msg, "<have_new_trickle_up/>")) {
        vs_client_trickle_harvest(c, r);
    }
    if (r->api) {
        char hb[200];
        snprintf(hb, sizeof(hb), "<heartbeat/><wss>%e</wss><max_wss>%e</max_wss>", 0.0,
                 c->host.m_nbytes * 0.9);
        (void)ch_send(r, CH_HEARTBEAT, hb);
        if (r->pending_msg[0] && ch_send(r, CH_PROC_REQ, r->pending_msg))
            r->pending_msg[0] = '\0';
        vs_client_trickle_deliver(c, r);
    }
}

void vs_client_trickle_notify(struct cl_result *r)
{
    (void)ch_send(r, CH_TRICKLE_DOWN, "<have_trickle_down/>");
}

void vs_client_tasks_poll(struct vs_client *c)
{
    double dt =
        c->last_task_poll > 0 && c->now > c->last_task_poll ? c->now - c->last_task_poll : 0;
    if (dt > 10)
        dt = 10;
    c->last_task_poll = c->now;
    for (size_t i = 0; i < c->n_results; i++) {
        struct cl_result *r = &c->results[i];
        if (r->abort_requested) {
            vs_client_task_abort(c, i, r->abort_code ? r->abort_code : EXIT_ABORTED_VIA_GUI);
            r = &c->results[i];
        }
        if (r->pid <= 0)
            continue;
        int status;
        pid_t w = waitpid(r->pid, &status, WNOHANG);
        if (w == r->pid) {
            poll_status(c, r, dt);
            handle_exit(c, i, status);
            continue;
        }
        if (w < 0 && errno == ECHILD) {
            vs_client_msg(c, (long)r->project, 2, "Task %s: process %d vanished; restarting",
                          r->name, (int)r->pid);
            task_gone(c, r, true);
            continue;
        }
        poll_status(c, r, dt);
        if (r->quit_sent_at > 0 && c->now - r->quit_sent_at > QUIT_TIMEOUT) {
            vs_client_msg(c, (long)r->project, 2,
                          "Task %s did not exit %.0f s after %s; killing it", r->name, QUIT_TIMEOUT,
                          r->abort_pending ? "<abort/>" : "<quit/>");
            kill_tree(r->pid);
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
            kill_tree(r->pid);
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
        kill_tree(pid);
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
    kill_tree(r->pid);
    int status;
    (void)waitpid(r->pid, &status, 0);
    task_gone(c, r, true);
}
