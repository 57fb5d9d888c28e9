/*
 * Host facts, measured (boinc-client-notes.md 7.1): CPUs, CPU model, memory,
 * disk, OS; a short floating-point and integer benchmark for p_fpops and
 * p_iops, kept in client_state.xml and rerun every 30 days; and time_stats
 * (7.2): on_frac and active_frac as 10-day exponential averages.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "volsched/client.h"
#include "volsched/md5.h"
#include "volsched/str.h"

#define BENCH_SECONDS 0.5            /* per kind; BOINC runs 2 s, we only need the order */
#define BENCH_MAX_AGE (30.0 * 86400) /* BOINC-COMPAT: rerun every 30 days */
#define TS_TAU        864000.0       /* BOINC-COMPAT: 10-day time constant */

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Floating-point ops per second of one core: a multiply-add chain kept live. */
static double bench_fpops(void)
{
    volatile double sink = 0;
    double x = 1.0, y = 0.999999, ops = 0;
    double t0 = cpu_seconds(), t;
    do {
        for (int i = 0; i < 1000000; i++)
            x = x * y + 1e-9;
        ops += 2e6;
        t = cpu_seconds() - t0;
    } while (t < BENCH_SECONDS);
    sink = x;
    (void)sink;
    return t > 0 ? ops / t : 1e9;
}

static double bench_iops(void)
{
    volatile unsigned sink = 0;
    unsigned a = 1, b = 7;
    double ops = 0;
    double t0 = cpu_seconds(), t;
    do {
        for (int i = 0; i < 1000000; i++) {
            a = a * 1103515245u + 12345u;
            b ^= a >> 3;
        }
        ops += 4e6;
        t = cpu_seconds() - t0;
    } while (t < BENCH_SECONDS);
    sink = b;
    (void)sink;
    return t > 0 ? ops / t : 1e9;
}

static void cpuinfo(struct cl_host *h)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[4096];
    int family = -1, model = -1, stepping = -1;
    while (fgets(line, sizeof(line), f)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        char *v = colon + 1;
        while (*v == ' ')
            v++;
        v[strcspn(v, "\n")] = '\0';
        if (!h->p_vendor[0] && vs_str_has_prefix(line, "vendor_id"))
            snprintf(h->p_vendor, sizeof(h->p_vendor), "%s", v);
        else if (!h->p_model[0] && vs_str_has_prefix(line, "model name"))
            snprintf(h->p_model, sizeof(h->p_model), "%s", v);
        else if (!h->p_features[0] && vs_str_has_prefix(line, "flags"))
            snprintf(h->p_features, sizeof(h->p_features), "%s", v);
        else if (family < 0 && vs_str_has_prefix(line, "cpu family"))
            family = (int)strtol(v, NULL, 10);
        else if (model < 0 && vs_str_has_prefix(line, "model\t"))
            model = (int)strtol(v, NULL, 10);
        else if (stepping < 0 && vs_str_has_prefix(line, "stepping"))
            stepping = (int)strtol(v, NULL, 10);
    }
    fclose(f);
    if (family >= 0) {
        size_t n = strlen(h->p_model);
        /* BOINC-COMPAT: " [Family F Model M Stepping S]" appended */
        snprintf(h->p_model + n, sizeof(h->p_model) - n, " [Family %d Model %d Stepping %d]",
                 family, model, stepping);
    }
}

static void meminfo(struct cl_host *h)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof(line), f)) {
        double kb;
        if (sscanf(line, "MemTotal: %lf", &kb) == 1)
            h->m_nbytes = kb * 1024;
        else if (sscanf(line, "SwapTotal: %lf", &kb) == 1)
            h->m_swap = kb * 1024;
    }
    fclose(f);
}

static void osinfo(struct cl_host *h)
{
    char pretty[200] = "Linux";
    FILE *f = fopen("/etc/os-release", "r");
    if (f) {
        char line[256];
        while (fgets(line, sizeof(line), f))
            if (vs_str_has_prefix(line, "PRETTY_NAME=")) {
                char *v = line + 12;
                v[strcspn(v, "\n")] = '\0';
                if (*v == '"') {
                    v++;
                    v[strcspn(v, "\"")] = '\0';
                }
                /* A longer name keeps the default: it is only a label. */
                if (vs_strlcpy(pretty, v, sizeof(pretty)) != 0)
                    memcpy(pretty, "Linux", sizeof("Linux"));
            }
        fclose(f);
    }
    struct utsname u;
    if (uname(&u) == 0) {
        if (vs_strlcpy(h->os_name, u.sysname, sizeof(h->os_name))) {
            /* truncated: still a name */
        }
        int n = snprintf(h->os_version, sizeof(h->os_version), "%.150s [%.90s]", pretty, u.release);
        (void)n;
    } else {
        snprintf(h->os_name, sizeof(h->os_name), "Linux");
        snprintf(h->os_version, sizeof(h->os_version), "%s", pretty);
    }
}

void vs_client_host_measure(struct vs_client *c, bool run_benchmark)
{
    struct cl_host *h = &c->host;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    h->p_ncpus = n > 0 ? (int)n : 1;
    h->p_vendor[0] = h->p_model[0] = h->p_features[0] = '\0';
    cpuinfo(h);
    meminfo(h);
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    h->m_cache = l2 > 0 ? (double)l2 : 0;
    struct statvfs sv;
    if (statvfs(c->dir, &sv) == 0) {
        h->d_total = (double)sv.f_blocks * (double)sv.f_frsize;
        h->d_free = (double)sv.f_bavail * (double)sv.f_frsize;
    }
    osinfo(h);
    if (gethostname(h->domain_name, sizeof(h->domain_name)) != 0)
        snprintf(h->domain_name, sizeof(h->domain_name), "localhost");
    h->domain_name[sizeof(h->domain_name) - 1] = '\0';
    time_t t = time(NULL);
    struct tm lt;
    if (localtime_r(&t, &lt))
        h->timezone = (int)lt.tm_gmtoff;
    if (!h->host_cpid[0]) {
        /* BOINC hashes a MAC address with the data dir; the hostname serves as well */
        char seed[VS_CLIENT_PATH_MAX + 300];
        int k = snprintf(seed, sizeof(seed), "%s%s%ld", h->domain_name, c->dir, (long)t);
        if (k > 0 && vs_md5_hex(seed, (size_t)k, h->host_cpid) != 0)
            snprintf(h->host_cpid, sizeof(h->host_cpid), "%032x", 0);
    }
    h->p_membw = 1e9;
    double now = vs_client_now();
    if (run_benchmark &&
        (h->p_calculated <= 0 || now - h->p_calculated > BENCH_MAX_AGE || now < h->p_calculated)) {
        vs_client_msg(c, -1, 1, "Running CPU benchmarks");
        h->p_fpops = bench_fpops();
        h->p_iops = bench_iops();
        h->p_calculated = now;
        vs_client_msg(c, -1, 1, "Benchmark results: %.0f floating point MIPS, %.0f integer MIPS",
                      h->p_fpops / 1e6, h->p_iops / 1e6);
        c->dirty = true;
    }
}

void vs_client_time_stats_log(struct vs_client *c, const char *event)
{
    char path[VS_CLIENT_PATH_MAX];
    if (vs_client_path(c, path, sizeof(path), "time_stats_log"))
        return;
    FILE *f = fopen(path, "a");
    if (!f)
        return;
    fprintf(f, "%.0f %s\n", vs_client_now(), event);
    fclose(f);
}

void vs_client_time_stats_update(struct vs_client *c, bool running, bool active)
{
    struct cl_time_stats *ts = &c->ts;
    double now = c->now;
    if (ts->total_start_time <= 0)
        ts->total_start_time = now;
    if (ts->first) {
        /* BOINC-COMPAT: a gap (the client was down) only decays on_frac */
        if (ts->last_update > 0 && now > ts->last_update) {
            double dt = now - ts->last_update;
            double w2 = exp(-dt / TS_TAU);
            ts->on_frac *= w2;
            ts->active_frac *= w2;
            ts->cpu_and_network_available_frac *= w2;
        }
        ts->first = false;
        ts->last_update = now;
        ts->client_start_time = now;
        c->dirty = true;
        return;
    }
    double dt = now - ts->last_update;
    if (dt <= 10)
        return;
    if (dt > 100) {
        double w2 = exp(-dt / TS_TAU);
        ts->on_frac *= w2;
        ts->active_frac *= w2;
    } else {
        double w1 = 1 - exp(-dt / TS_TAU), w2 = 1 - w1;
        ts->on_frac = (running ? w1 : 0) + w2 * ts->on_frac;
        ts->active_frac = (active ? w1 : 0) + w2 * ts->active_frac;
        ts->cpu_and_network_available_frac =
            (active ? w1 : 0) + w2 * ts->cpu_and_network_available_frac;
        ts->total_duration += dt;
        if (active) {
            ts->total_active_duration += dt;
            ts->session_active_duration += dt;
        }
    }
    /* the policy library requires (0, 1] */
    if (!(ts->on_frac > 0.01))
        ts->on_frac = 0.01;
    if (!(ts->active_frac > 0.01))
        ts->active_frac = 0.01;
    if (ts->on_frac > 1)
        ts->on_frac = 1;
    if (ts->active_frac > 1)
        ts->active_frac = 1;
    ts->last_update = now;
    ts->previous_uptime = now - ts->client_start_time;
}

/*
 * cpu_efficiency: the CPU time the tasks got over the wall time they were
 * running (times their CPUs), BOINC 6's TIME_STATS::update_cpu_efficiency:
 * an exponential average in wall time with a time constant of a day. It is
 * below 1 when other programs take the CPUs from the tasks or the apps
 * wait (I/O, paging, sleep). The polls' pieces are folded in per 10 s of
 * wall time (a state write each, not one a second). An app reports its
 * CPU time up to a second late; that only moves CPU time from one piece
 * to the next, and over much less than a day the average is linear in the
 * totals (1 - w is wall / a day), so the pieces' size does not matter.
 */
#define EFF_TAU   86400.0 /* BOINC-COMPAT: a day */
#define EFF_CHUNK 10.0    /* wall seconds folded in at once */

double vs_client_cpu_efficiency(const struct vs_client *c)
{
    double e = c->ts.cpu_efficiency;
    return e >= 0.01 && e <= 1 ? e : e > 1 ? 1 : e >= 0 ? 0.01 : 1; /* the policy's (0, 1] */
}

void vs_client_cpu_eff_account(struct vs_client *c, double wall, double cpu)
{
    struct cl_time_stats *ts = &c->ts;
    if (!(wall > 0) || !(cpu >= 0) || !isfinite(wall) || !isfinite(cpu))
        return;
    ts->eff_wall += wall;
    ts->eff_cpu += cpu;
    if (ts->eff_wall < EFF_CHUNK)
        return;
    double w = exp(-ts->eff_wall / EFF_TAU), e = ts->eff_cpu / ts->eff_wall;
    double ce = w * vs_client_cpu_efficiency(c) + (1 - w) * e;
    ts->cpu_efficiency = ce < 0.01 ? 0.01 : ce > 1 ? 1 : ce;
    ts->eff_wall = ts->eff_cpu = 0;
    c->dirty = true;
}
