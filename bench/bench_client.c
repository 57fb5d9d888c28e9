/*
 * bench_client: the client daemon's own costs with a long queue.
 *
 *  1. One policy step of the daemon (vs_client_sched_decide: the vs_cstate
 *     built from the real queue, vs_cpolicy_step, the policy-owned state
 *     kept) at 1,000 queued tasks over 4 projects, mean of many steps, and
 *     vs_cpolicy_step alone on the same snapshot.
 *  2. The daemon itself (vs_client_run in a child process) with those 1,000
 *     tasks on disk, run mode "never" and network mode "never" (nothing to
 *     compute or fetch: the client idles): its CPU time over IDLE_SECONDS
 *     as a share of one core, and its resident set size (VmRSS, VmHWM).
 *
 * usage: bench_client [--quick] [--tasks N]
 *   --quick: 5 s idle instead of 30; --tasks: N queued tasks instead of
 *   1,000 (the RSS of a long queue: 20,000 is the most the client holds)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/fs.h"

#define NPROJECTS 4

static int ntasks = 1000;

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void fill(struct vs_client *c)
{
    for (int p = 0; p < NPROJECTS; p++) {
        char url[100], name[200];
        snprintf(url, sizeof(url), "http://127.0.0.1:1/proj%d/", p);
        if (vs_client_attach(c, url, "0123456789abcdef0123456789abcdef", false) != 0)
            abort();
        struct cl_project *pr = &c->projects[p];
        pr->master_url_fetch_pending = false;
        pr->ever_rpc = true;
        pr->resource_share = 100.0 * (p + 1);
        pr->scheduler_urls[pr->n_scheduler_urls++] = vs_xstrdup("http://127.0.0.1:1/cgi");
        struct cl_app *ap = vs_client_add_app(c);
        ap->name = vs_xstrdup("app");
        ap->project = (size_t)p;
        struct cl_file *f = vs_client_add_file(c);
        f->name = vs_xstrdup("app_1");
        f->project = (size_t)p;
        f->status = FS_PRESENT;
        f->executable = f->signature_required = true;
        struct cl_app_version *av = vs_client_add_av(c);
        av->app_name = vs_xstrdup("app");
        av->project = (size_t)p;
        av->version_num = 1;
        av->frefs[0].file_name = vs_xstrdup("app_1");
        av->frefs[0].main_program = true;
        av->n_frefs = 1;
        for (int i = 0; i < ntasks / NPROJECTS; i++) {
            snprintf(name, sizeof(name), "wu_%d_%d", p, i);
            struct cl_wu *w = vs_client_add_wu(c);
            w->name = vs_xstrdup(name);
            w->project = (size_t)p;
            w->app_name = vs_xstrdup("app");
            w->version_num = 1;
            w->rsc_fpops_est = 3.6e12 * (1 + i % 7);
            struct cl_result *r = vs_client_add_result(c);
            snprintf(name, sizeof(name), "wu_%d_%d_0", p, i);
            r->name = vs_xstrdup(name);
            r->wu_name = vs_xstrdup(w->name);
            r->project = (size_t)p;
            r->version_num = 1;
            r->state = RS_FILES_DOWNLOADED;
            r->received_time = c->now - 1000 + i;
            r->report_deadline = c->now + 86400.0 * (1 + i % 14);
        }
    }
}

static void proc_usage(pid_t pid, double *cpu, long *rss_kb, long *hwm_kb)
{
    char path[64], buf[2048];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    *cpu = -1;
    if (f) {
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        char *rp = strrchr(buf, ')');
        unsigned long ut, st;
        if (rp &&
            sscanf(rp + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2)
            *cpu = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
    }
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    f = fopen(path, "r");
    *rss_kb = *hwm_kb = -1;
    if (f) {
        while (fgets(buf, sizeof(buf), f)) {
            if (strncmp(buf, "VmRSS:", 6) == 0)
                *rss_kb = strtol(buf + 6, NULL, 10);
            else if (strncmp(buf, "VmHWM:", 6) == 0)
                *hwm_kb = strtol(buf + 6, NULL, 10);
        }
        fclose(f);
    }
}

int main(int argc, char **argv)
{
    bool quick = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = true;
        else if (strcmp(argv[i], "--tasks") == 0 && i + 1 < argc)
            ntasks = (int)strtol(argv[++i], NULL, 10);
    }
    if (ntasks < NPROJECTS || ntasks > 100000)
        return 2;
    int idle_s = quick ? 5 : 30;
    char tmpl[] = "/tmp/bench_client_XXXXXX";
    char *dir = mkdtemp(tmpl);
    if (!dir)
        return 1;
    struct vs_client *c = VS_NEW(struct vs_client);
    vs_client_init(c, dir);
    FILE *devnull = fopen("/dev/null", "w");
    c->logf = devnull; /* the messages are not what is measured */
    c->now = 1.8e9;
    c->host.p_ncpus = 8;
    fill(c);

    /* 1. the policy step */
    int steps = quick ? 200 : 2000;
    if (vs_client_sched_decide(c) != 0)
        return 1;
    double t0 = cpu_now();
    for (int i = 0; i < steps; i++) {
        c->now += 1;
        if (vs_client_sched_decide(c) != 0)
            return 1;
    }
    double per_step = (cpu_now() - t0) / steps;
    t0 = cpu_now();
    for (int i = 0; i < steps; i++) {
        c->cst.now += 1;
        if (vs_cpolicy_step(c->policy, &c->cst, &c->ws, &c->pout) != 0)
            return 1;
    }
    double per_policy = (cpu_now() - t0) / steps;
    printf("policy step, %d queued tasks, %d projects (%s):\n", ntasks, NPROJECTS,
           vs_cpolicy_name(c->policy));
    printf("  daemon step (snapshot + vs_cpolicy_step): %8.1f us\n", per_step * 1e6);
    printf("  vs_cpolicy_step alone:                     %8.1f us\n", per_policy * 1e6);

    /* 2. the daemon idling with that queue on disk */
    c->run_mode = c->run_mode_perm = RUN_MODE_NEVER;
    c->network_mode = RUN_MODE_NEVER;
    c->host.p_calculated = vs_client_now(); /* no benchmark run inside the measurement */
    c->host.p_fpops = c->host.p_iops = 1e9;
    c->now = vs_client_now();
    if (vs_client_state_write(c) != 0)
        return 1;
    vs_client_cleanup(c);
    vs_free(c);

    pid_t pid = fork();
    if (pid == 0) {
        struct vs_client *d = VS_NEW(struct vs_client);
        vs_client_init(d, dir);
        d->logf = fopen("/dev/null", "w");
        d->log.out = d->logf;
        d->gui_port = 0; /* any free port */
        _exit(vs_client_run(d) == 0 ? 0 : 1);
    }
    sleep(3); /* start-up (state read, host facts) is not idling */
    double cpu0, cpu1;
    long rss, hwm;
    proc_usage(pid, &cpu0, &rss, &hwm);
    sleep((unsigned)idle_s);
    proc_usage(pid, &cpu1, &rss, &hwm);
    kill(pid, SIGTERM);
    int st;
    waitpid(pid, &st, 0);
    printf("daemon idle with %d queued tasks (run mode never), %d s:\n", ntasks, idle_s);
    printf("  CPU: %.3f s = %.2f%% of one core\n", cpu1 - cpu0, 100 * (cpu1 - cpu0) / idle_s);
    printf("  RSS: %ld KiB (peak %ld KiB)\n", rss, hwm);
    return vs_fs_rm_tree(dir) == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
