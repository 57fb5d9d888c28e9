/*
 * popsim's credit study (see volsched/pop_credit.h). The population is
 * drawn once per scheme from the same seed, so the three schemes see the
 * same hosts and the same jobs; only the policy differs.
 */
#include "volsched/pop_credit.h"

#include <math.h>
#include <string.h>

#include "volsched/alloc.h"
#include "volsched/credit.h"
#include "volsched/rng.h"

#define NAPPS 3
#define NAVS  4 /* short v1, long, mt, short v2 (the new version) */

/* The apps: the project's estimate, how far the real work is from it, how
 * well the app uses a CPU's benchmark speed, and CPUs used. */
static const struct {
    const char *name;
    double est;    /* rsc_fpops_est */
    double factor; /* real FLOPs / estimate */
    double eff;    /* real FLOPS / benchmark FLOPS of one CPU */
    double ncpus;  /* the version's avg_ncpus */
    double fixed;  /* the project's fixed credit per job */
} apps[NAPPS] = {
    {"short", 3.6e12, 1.0, 0.5, 1, 10},
    {"long", 3.6e14, 2.5, 0.3, 1, 1000},
    {"mt", 1e14, 0.7, 0.4, 4, 300},
};

struct host {
    double speed; /* true benchmark FLOPS per CPU */
    double told;  /* what it reports */
    int ncpus;
    double eff_noise; /* how this host's hardware suits the apps */
    bool cheat, failed;
};

/* A normal deviate (Box-Muller), for log-normal noise. */
static double gauss(struct vs_rng *r)
{
    double u = vs_rng_double(r), v = vs_rng_double(r);
    return sqrt(-2 * log(u > 1e-300 ? u : 1e-300)) * cos(2 * M_PI * v);
}

struct acc {
    double credit, norm_hours; /* credit, CPU-hours x true GFLOPS */
};

static double cv_of(const double *x, size_t n)
{
    double s = 0, ss = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(x[i] > 0))
            continue;
        s += x[i];
        ss += x[i] * x[i];
        k++;
    }
    if (k < 2)
        return 0;
    double m = s / (double)k;
    double var = ss / (double)k - m * m;
    return var > 0 ? sqrt(var) / m : 0;
}

static void run_scheme(const struct vs_pop_credit_options *o, int method,
                       struct vs_pop_credit_scheme *out)
{
    struct vs_rng rng;
    vs_rng_seed(&rng, o->seed);
    int nh = o->nhosts, nr = o->nresults;
    struct host *h = vs_xcalloc((size_t)nh, sizeof(*h));
    for (int i = 0; i < nh; i++) {
        h[i].speed = 1e8 * pow(1000, vs_rng_double(&rng));
        h[i].ncpus = 1 << vs_rng_below(&rng, 5); /* 1 to 16 */
        h[i].eff_noise = exp(0.2 * gauss(&rng));
        double u = vs_rng_double(&rng);
        h[i].failed = u < 0.05;
        h[i].cheat = u >= 0.05 && u < 0.06;
        h[i].told = h[i].failed ? 1e9 : h[i].speed;
    }
    struct vs_credit_stat av[NAVS];
    memset(av, 0, sizeof(av));
    struct vs_credit_stat *hav = vs_xcalloc((size_t)nh * NAVS, sizeof(*hav));
    struct acc *acc = vs_xcalloc((size_t)nh * NAPPS, sizeof(*acc));
    struct acc cheat = {0, 0}, failed = {0, 0};
    /* The new version: its credit per job, in order, to see it settle. */
    double *v2 = vs_xcalloc((size_t)nr, sizeof(*v2));
    int nv2 = 0;
    int warm = nr / 5;
    for (int k = 0; k < nr; k++) {
        struct host *x = &h[vs_rng_below(&rng, (uint64_t)nh)];
        int app = (int)vs_rng_below(&rng, NAPPS);
        int avi = app;
        bool half = k >= nr / 2;
        if (app == 0 && half && vs_rng_double(&rng) < 0.5)
            avi = 3; /* the new short version, twice as efficient */
        double est = apps[app].est * (0.5 + vs_rng_double(&rng));
        double flops = est * apps[app].factor * exp(0.1 * gauss(&rng));
        double used = fmin(apps[app].ncpus, x->ncpus);
        double eff = apps[app].eff * x->eff_noise * (avi == 3 ? 2 : 1);
        double runtime = flops / (x->speed * eff * used * (used > 1 ? 0.9 : 1));
        struct vs_credit_job j = {
            .rsc_fpops_est = est,
            .rsc_fpops_bound = est * 20,
            .fixed_credit = apps[app].fixed,
            .elapsed_time = runtime * (x->cheat ? 10 : 1),
            .cpu_time = runtime * used * (x->cheat ? 10 : 1),
            .host_p_fpops = x->told,
            .host_p_ncpus = x->ncpus,
            .av_avg_ncpus = apps[app].ncpus,
            .av = av[avi],
            .hav = hav[(size_t)(x - h) * NAVS + (size_t)avi],
        };
        /* The app's versions: the short app has two after half way. */
        struct vs_credit_stat mine[2] = {av[app], av[3]};
        j.app_ref = vs_credit_app_ref(mine, app == 0 ? 2 : 1);
        struct vs_credit_claim c;
        vs_credit_claim(method, &j, &c);
        double granted = vs_credit_quorum(&c.credit, 1);
        if (c.update_hav)
            vs_credit_stat_add(&hav[(size_t)(x - h) * NAVS + (size_t)avi], c.sample,
                               VS_CREDIT_HOST_WINDOW);
        if (c.update_av)
            vs_credit_stat_add(&av[avi], c.sample, VS_CREDIT_AV_WINDOW);
        if (avi == 3)
            /* Per estimated FLOP (jobs differ in size), or per job for
             * the fixed scheme, which pays per job. */
            v2[nv2++] = granted / (method == VS_CREDIT_FIXED ? apps[app].fixed : est);
        if (k < warm)
            continue;
        double norm = runtime * used / 3600 * x->speed / 1e9;
        struct acc *a = x->cheat ? &cheat : x->failed ? &failed : &acc[(x - h) * NAPPS + app];
        a->credit += granted;
        a->norm_hours += norm;
    }
    /* Per (host, app) rates of honest hosts, and per app. */
    double *rate = vs_xcalloc((size_t)nh * NAPPS, sizeof(*rate));
    struct acc app_acc[NAPPS] = {{0, 0}, {0, 0}, {0, 0}};
    struct acc honest = {0, 0};
    for (int i = 0; i < nh * NAPPS; i++) {
        if (acc[i].norm_hours > 0)
            rate[i] = acc[i].credit / acc[i].norm_hours;
        app_acc[i % NAPPS].credit += acc[i].credit;
        app_acc[i % NAPPS].norm_hours += acc[i].norm_hours;
        honest.credit += acc[i].credit;
        honest.norm_hours += acc[i].norm_hours;
    }
    double app_rate[NAPPS];
    for (int a = 0; a < NAPPS; a++)
        app_rate[a] = app_acc[a].norm_hours > 0 ? app_acc[a].credit / app_acc[a].norm_hours : 0;
    double base = honest.norm_hours > 0 ? honest.credit / honest.norm_hours : 0;
    out->cv_hosts = cv_of(rate, (size_t)nh * NAPPS);
    out->cv_apps = cv_of(app_rate, NAPPS);
    out->credit_per_hour = base;
    out->cheat_gain = base > 0 && cheat.norm_hours > 0 ? cheat.credit / cheat.norm_hours / base : 0;
    out->failed_gain =
        base > 0 && failed.norm_hours > 0 ? failed.credit / failed.norm_hours / base : 0;
    /* Settled: from the first result after which the running mean of the
     * next 50 stays within 10% of the last 20%'s mean. */
    out->settle_results = -1;
    if (nv2 > 1000) {
        double fin = 0;
        int tail = nv2 / 5;
        for (int i = nv2 - tail; i < nv2; i++)
            fin += v2[i];
        fin /= tail;
        int w = 50, last_bad = -1;
        double s = 0;
        for (int i = 0; i < nv2; i++) {
            s += v2[i];
            if (i >= w)
                s -= v2[i - w];
            if (i >= w - 1 && fabs(s / w / fin - 1) > 0.1)
                last_bad = i;
        }
        out->settle_results = last_bad < 0 ? w : last_bad + 1;
    }
    vs_free(rate);
    vs_free(v2);
    vs_free(acc);
    vs_free(hav);
    vs_free(h);
}

int vs_pop_credit_run(const struct vs_pop_credit_options *o, struct vs_pop_credit_result *out)
{
    struct vs_pop_credit_options opt = *o;
    if (opt.nhosts <= 0)
        opt.nhosts = 2000;
    if (opt.nresults <= 0)
        opt.nresults = 200000;
    memset(out, 0, sizeof(*out));
    out->nhosts = opt.nhosts;
    out->nresults = opt.nresults;
    for (int m = 0; m < 3; m++)
        run_scheme(&opt, m, &out->scheme[m]);
    return 0;
}
