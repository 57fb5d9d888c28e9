/*
 * Cost of the server work-send rules per candidate job.
 *
 * A realistic request: an 8-CPU Linux host with one NVIDIA GPU, BOINC
 * 7.20.5, 30 jobs in progress, asking for a day of CPU and GPU work; a job
 * cache of 1000 candidates over 4 apps (CPU, multi-thread and CUDA
 * versions, some for another platform), mixed memory and disk needs, some
 * committed to another HR class, some already held by this user. Every
 * candidate is checked as the scheduler would scan its cache (no commit),
 * in passes of the whole cache, under four configurations:
 *
 *   all rules + EDF   every rule on, deadline check by EDF simulation over
 *                     20 queued results (config <workload_sim/>)
 *   all rules         every rule on, seed 004's deadline check (default)
 *   rules off         the same code with every switch off (no quota, no
 *                     HR, no limits, no one-per-user, ignore_delay_bound)
 *   bare loop         platform match and duration only: what a scheduler
 *                     with no policy at all must still do per candidate
 *
 * Prints ns per candidate and the ratios, so the impact on the server
 * benchmark can be predicted: (ns per candidate) x (candidates scanned
 * per request) is the added time per request.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "volsched/rng.h"
#include "volsched/server_policy.h"
#include "volsched/str.h"

#define NJOBS   1000
#define NAPPS   4
#define NQUEUED 20
#define NINPROG 30

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

struct world {
    struct vs_sp_app_version av[NAPPS][3];
    struct vs_sp_app app[NAPPS];
    struct vs_sp_job jobs[NJOBS];
    int64_t users[NJOBS][2], hosts[NJOBS][2];
    struct vs_sp_host host;
    struct vs_sp_request req;
    struct vs_sp_inprog inprog[NINPROG];
    struct vs_sp_ip_result ip[NQUEUED];
    struct vs_sp_hav havs[NAPPS * 3];
    int n_havs;
};

static const char *const app_names[NAPPS] = {"uppercase", "lowercase", "nbody", "cudasum"};

static void build(struct world *w)
{
    struct vs_rng rng;
    vs_rng_seed(&rng, 42);
    memset(w, 0, sizeof *w);
    static const char *const alts[] = {"i686-pc-linux-gnu"};
    struct vs_sp_host *h = &w->host;
    h->id = 4711;
    h->userid = 99;
    h->platform = "x86_64-pc-linux-gnu";
    h->alt_platforms = alts;
    h->n_alt_platforms = 1;
    h->p_fpops = 4e9;
    h->p_ncpus = 8;
    h->m_nbytes = 16e9;
    h->d_total = 1e12;
    h->d_free = 300e9;
    h->d_boinc_used_total = 5e9;
    h->disk_max_used_gb = 100;
    h->disk_max_used_pct = 50;
    h->disk_min_free_gb = 1;
    h->ram_max_used_busy_frac = 0.5;
    h->ram_max_used_idle_frac = 0.9;
    h->work_buf_min = 8640;
    h->on_frac = 0.95;
    h->active_frac = 0.9;
    h->gpu_active_frac = 0.9;
    h->core_client_version = 72005;
    h->os_name = "Linux Debian";
    h->os_version = "6.1.0-18-amd64";
    h->p_vendor = "GenuineIntel";
    h->p_model = "Intel(R) Core(TM) i7-10700 CPU @ 2.90GHz";
    h->gpu_count[VS_SP_NVIDIA] = 1;
    h->gpu_peak_flops[VS_SP_NVIDIA] = 5e12;

    w->req.now = 1.8e9;
    w->req.prev_rpc_time = 1.8e9 - 3600;
    w->req.req_secs[VS_SP_CPU] = 86400;
    w->req.req_instances[VS_SP_CPU] = 2;
    w->req.estimated_delay[VS_SP_CPU] = 20000;
    w->req.req_secs[VS_SP_NVIDIA] = 43200;
    w->req.estimated_delay[VS_SP_NVIDIA] = 5000;
    for (int i = 0; i < NINPROG; i++)
        w->inprog[i] =
            (struct vs_sp_inprog){app_names[i % NAPPS], i % NAPPS == 3 ? VS_SP_NVIDIA : VS_SP_CPU};
    w->req.in_progress = w->inprog;
    w->req.n_in_progress = NINPROG;
    for (int i = 0; i < NQUEUED; i++)
        w->ip[i] = (struct vs_sp_ip_result){.deadline = 86400.0 * (2 + vs_rng_double(&rng) * 10),
                                            .remaining = 1800 + vs_rng_double(&rng) * 20000};
    w->req.ip_results = w->ip;
    w->req.n_ip_results = NQUEUED;
    w->req.have_ip_results = true;

    int64_t avid = 100;
    for (int a = 0; a < NAPPS; a++) {
        struct vs_sp_app_version *v = w->av[a];
        /* one for another platform, one here, and a faster variant */
        v[0] =
            (struct vs_sp_app_version){avid++, "windows_x86_64", 700, "", VS_SP_CPU, 1, 0, 0, 0, 0};
        v[1] = (struct vs_sp_app_version){
            avid++, "x86_64-pc-linux-gnu", 710, "", VS_SP_CPU, 1, 0, 0, 0, 0};
        if (a == 2)
            v[2] = (struct vs_sp_app_version){
                avid++, "x86_64-pc-linux-gnu", 711, "mt", VS_SP_CPU, 4, 0, 0, 0, 0};
        else if (a == 3)
            v[2] = (struct vs_sp_app_version){avid++,
                                              "x86_64-pc-linux-gnu",
                                              712,
                                              "cuda_fermi",
                                              vs_sp_plan_class_proc("cuda_fermi"),
                                              0.2,
                                              1,
                                              0,
                                              0,
                                              0};
        else
            v[2] = (struct vs_sp_app_version){
                avid++, "i686-pc-linux-gnu", 705, "", VS_SP_CPU, 1, 0, 0, 0, 0};
        w->app[a] = (struct vs_sp_app){a + 1, app_names[a], NULL, 700, 0, -1, v, 3};
        for (int k = 0; k < 3; k++)
            w->havs[w->n_havs++] = (struct vs_sp_hav){v[k].id, 0, 3, 0};
    }
    for (int j = 0; j < NJOBS; j++) {
        struct vs_sp_job *job = &w->jobs[j];
        double r = vs_rng_double(&rng);
        job->wu_id = 10000 + j;
        job->result_id = 50000 + j;
        job->app = &w->app[j % NAPPS];
        job->rsc_fpops_est = 1e13 + vs_rng_double(&rng) * 1e14;
        job->rsc_memory_bound = r < 0.1 ? 15e9 : 2e8 + vs_rng_double(&rng) * 1e9;
        job->rsc_disk_bound = 1e8 + vs_rng_double(&rng) * 1e9;
        job->delay_bound = 86400.0 * (r < 0.2 ? 1 : 7);
        job->hr_class = r > 0.9 ? 386 : r > 0.6 ? 258 : 0;
        w->users[j][0] = 7;
        w->users[j][1] = r > 0.85 ? 99 : 8;
        w->hosts[j][0] = 1;
        w->hosts[j][1] = 2;
        job->result_userids = w->users[j];
        job->n_result_userids = 2;
        job->result_hostids = w->hosts[j];
        job->n_result_hostids = 2;
    }
}

static void all_rules(struct vs_sp_config *c, struct world *w, bool edf)
{
    vs_sp_config_defaults(c);
    c->one_result_per_user_per_wu = true;
    c->one_result_per_host_per_wu = true;
    c->daily_result_quota = 50;
    c->homogeneous_redundancy = 2;
    c->workload_sim = edf;
    c->limits.project.cpu = (struct vs_sp_rsc_limit){4, true};
    c->limits.project.gpu = (struct vs_sp_rsc_limit){8, true};
    c->limits.project.total = (struct vs_sp_rsc_limit){100, false};
    c->limits.n_apps = 2;
    memcpy(c->limits.apps[0].app_name, "nbody", sizeof "nbody");
    c->limits.apps[0].cpu = (struct vs_sp_rsc_limit){2, true};
    memcpy(c->limits.apps[1].app_name, "cudasum", sizeof "cudasum");
    c->limits.apps[1].gpu = (struct vs_sp_rsc_limit){4, false};
    for (int a = 0; a < NAPPS; a++)
        w->app[a].limit_index = vs_sp_limits_app_index(&c->limits, w->app[a].name);
}

static void rules_off(struct vs_sp_config *c, struct world *w)
{
    vs_sp_config_defaults(c);
    c->min_core_client_version = 0;
    c->max_wus_to_send = 0;
    c->ignore_delay_bound = true;
    for (int a = 0; a < NAPPS; a++) {
        w->app[a].limit_index = -1;
        w->app[a].min_version = 0;
    }
}

static volatile long sink;

/* ns per candidate, best of `rounds` passes over the whole cache. */
static double time_rules(const struct vs_sp_config *c, struct world *w, int passes, int rounds,
                         int *out_ok)
{
    double best = 1e300;
    int ok = 0;
    for (int r = 0; r < rounds; r++) {
        struct vs_sp_state st;
        if (vs_sp_state_init(&st, c, &w->host, &w->req, w->havs, w->n_havs) != 0) {
            fprintf(stderr, "state init failed\n");
            exit(1);
        }
        ok = 0;
        double t0 = now_ns();
        for (int p = 0; p < passes; p++) {
            for (int j = 0; j < NJOBS; j++) {
                struct vs_sp_verdict v;
                if (vs_sp_check_job(&st, &w->jobs[j], &v) == VS_SP_OK)
                    ok++;
            }
        }
        double dt = (now_ns() - t0) / ((double)passes * NJOBS);
        vs_sp_state_cleanup(&st);
        if (dt < best)
            best = dt;
    }
    *out_ok = ok / passes;
    return best;
}

static double time_bare(struct world *w, int passes, int rounds)
{
    double best = 1e300;
    for (int r = 0; r < rounds; r++) {
        double t0 = now_ns(), acc = 0;
        for (int p = 0; p < passes; p++) {
            for (int j = 0; j < NJOBS; j++) {
                const struct vs_sp_job *job = &w->jobs[j];
                const struct vs_sp_app *app = job->app;
                for (int k = 0; k < app->n_versions; k++) {
                    if (strcmp(app->versions[k].platform, w->host.platform) == 0) {
                        acc += job->rsc_fpops_est / w->host.p_fpops;
                        break;
                    }
                }
            }
        }
        sink += (long)acc;
        double dt = (now_ns() - t0) / ((double)passes * NJOBS);
        if (dt < best)
            best = dt;
    }
    return best;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_server_policy [PASSES [edf|all|off|bare]]\n"
                    "  with a configuration name, times only that one (for callgrind:\n"
                    "  valgrind --tool=callgrind --toggle-collect=vs_sp_check_job ...)\n");
}

int main(int argc, char **argv)
{
    int64_t arg = 200;
    if (argc > 3 ||
        (argc > 1 && (vs_parse_int64(argv[1], &arg) != 0 || arg < 1 || arg > 1000000))) {
        usage();
        return 2;
    }
    const char *only = argc > 2 ? argv[2] : NULL;
    if (only && strcmp(only, "edf") != 0 && strcmp(only, "all") != 0 && strcmp(only, "off") != 0 &&
        strcmp(only, "bare") != 0) {
        usage();
        return 2;
    }
    int passes = (int)arg;
    const int rounds = only ? 1 : 5;
    static struct world w;
    struct vs_sp_config cfg;
    int ok_edf = 0, ok_all = 0, ok_off = 0;
    double t_edf = 0, t_all = 0, t_off = 0, t_bare = 0;

    build(&w);
    if (!only || strcmp(only, "edf") == 0) {
        all_rules(&cfg, &w, true);
        t_edf = time_rules(&cfg, &w, passes, rounds, &ok_edf);
    }
    if (!only || strcmp(only, "all") == 0) {
        all_rules(&cfg, &w, false);
        t_all = time_rules(&cfg, &w, passes, rounds, &ok_all);
    }
    if (!only || strcmp(only, "off") == 0) {
        rules_off(&cfg, &w);
        t_off = time_rules(&cfg, &w, passes, rounds, &ok_off);
    }
    if (!only || strcmp(only, "bare") == 0)
        t_bare = time_bare(&w, passes, rounds);
    if (only) {
        printf("%s: %.1f ns/candidate\n", only, t_edf + t_all + t_off + t_bare);
        return 0;
    }

    printf("bench_server_policy: %d candidates x %d passes, best of %d\n", NJOBS, passes, rounds);
    printf("  host: 8 CPUs + 1 NVIDIA GPU, %d jobs in progress, %d queued (EDF)\n", NINPROG,
           NQUEUED);
    printf("  all rules + EDF   %8.1f ns/candidate  (%d of %d feasible)\n", t_edf, ok_edf, NJOBS);
    printf("  all rules         %8.1f ns/candidate  (%d of %d feasible)\n", t_all, ok_all, NJOBS);
    printf("  rules off         %8.1f ns/candidate  (%d of %d feasible)\n", t_off, ok_off, NJOBS);
    printf("  bare loop         %8.1f ns/candidate\n", t_bare);
    printf("  ratio all/off %.2f, all+EDF/off %.2f, all/bare %.2f\n", t_all / t_off, t_edf / t_off,
           t_all / t_bare);
    printf("  per request scanning 100 cache slots: +%.1f us (all rules), +%.1f us (with EDF)\n",
           (t_all - t_bare) * 100 / 1000, (t_edf - t_bare) * 100 / 1000);
    return 0;
}
