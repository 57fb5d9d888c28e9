/*
 * Credit policy (pure; src/policy/server/credit.c). What a validated result
 * is worth, how a quorum's results share one value, and BOINC's recent
 * average credit. The validator (src/server/credit_grant.c) and popsim call
 * these same functions; neither has a model of its own. docs/credit.md
 * explains the schemes and the figures popsim measured for them.
 *
 * BOINC-COMPAT: the unit is the cobblestone: a host that does 1 GFLOPS for
 * a day earns 200 credits (VS_COBBLESTONE_SCALE credits per FLOP), and the
 * recent average halves in a week without new credit (update_average in
 * BOINC's lib/util.cpp, CREDIT_HALF_LIFE).
 *
 * Nothing here reads a clock, a file or a global: times are parameters.
 */
#ifndef VOLSCHED_CREDIT_H
#define VOLSCHED_CREDIT_H

#include <stdbool.h>
#include <stddef.h>

/* BOINC-COMPAT: 200 credits per day of 1 GFLOPS. */
#define VS_COBBLESTONE_SCALE (200.0 / 86400e9)
/* BOINC-COMPAT: CREDIT_HALF_LIFE, one week. */
#define VS_CREDIT_HALF_LIFE (7.0 * 86400.0)

/* A version's average needs this many samples before it counts as settled
 * (BOINC's MIN_VERSION_SAMPLES is 100; a smaller project settles sooner
 * with 20, and the popsim study in docs/credit.md measures the effect). */
#define VS_CREDIT_MIN_AV_SAMPLES 20
/* BOINC-COMPAT: MIN_HOST_SAMPLES, before a host's own scale is used. */
#define VS_CREDIT_MIN_HOST_SAMPLES 10
/* A sample further than this factor from the host's (or, before it has
 * settled, the version's) average is an outlier: granted the average and
 * kept out of the averages. */
#define VS_CREDIT_OUTLIER_FACTOR 10.0
/* A sample further than this factor from a settled version's average does
 * not move that average (one host's lie must not move everyone's scale). */
#define VS_CREDIT_AV_BAND 3.0
/* Samples a running average treats as a plain mean before it becomes an
 * exponential one with weight 1/window. */
#define VS_CREDIT_AV_WINDOW   100
#define VS_CREDIT_HOST_WINDOW 20

/* How an app's results earn credit (config.xml <validator><credit>). */
enum vs_credit_method {
    VS_CREDIT_ADAPTIVE = 0, /* "adaptive" (default): CreditNew's idea, with defences */
    VS_CREDIT_FLOPS = 1,    /* "flops": the job's rsc_fpops_est in cobblestones */
    VS_CREDIT_FIXED = 2,    /* "fixed": the workunit's credit (create_work --credit) */
};

/* "adaptive", "flops", "fixed"; NULL for another value. */
const char *vs_credit_method_name(int method);
/* The method named s, or -1. */
int vs_credit_method_parse(const char *s);

/*
 * BOINC's update_average: decays *avg (credit per day) from *avg_time to
 * now with the given half-life (seconds) and adds work (credits) done
 * since work_start_time; *avg_time becomes now. A first grant
 * (*avg_time == 0) averages work over now - work_start_time. Non-finite
 * or negative work adds nothing; a clock that went back decays nothing.
 */
void vs_credit_update_average(double now, double work_start_time, double work, double half_life,
                              double *avg, double *avg_time);

/* A running average of pfc / rsc_fpops_est (peak-FLOP count per estimated
 * FLOP): an app version's over all its hosts, or one host's on it. */
struct vs_credit_stat {
    double n;   /* samples taken */
    double avg; /* their average */
};

/* Adds a sample: the plain mean of the first window samples, then an
 * exponential average of weight 1/window. Non-finite or <= 0 samples are
 * ignored. */
void vs_credit_stat_add(struct vs_credit_stat *st, double sample, int window);

/* A host whose CPU benchmark failed: BOINC's client then reports exactly
 * 1e9 FLOPS, and a broken one reports nothing sensible (<= 1e6, not finite). */
bool vs_credit_benchmark_failed(double p_fpops);

/* One validated result, as the validator knows it from the store. */
struct vs_credit_job {
    double rsc_fpops_est;      /* the workunit's estimate (FLOPs) */
    double rsc_fpops_bound;    /* the workunit's bound: no result earns more */
    double fixed_credit;       /* the workunit's canonical_credit (method fixed) */
    double elapsed_time;       /* reported by the client: untrusted */
    double cpu_time;           /* reported by the client: untrusted */
    double host_p_fpops;       /* the host's benchmark, per CPU: untrusted */
    int host_p_ncpus;          /* the host's CPUs: untrusted */
    double av_avg_ncpus;       /* CPUs the app version uses (project's) */
    struct vs_credit_stat av;  /* the app version's average */
    struct vs_credit_stat hav; /* this host's average on the version */
    double app_ref;            /* the most efficient settled version's avg, <= 0: none */
};

/* What one result is worth, and how its sample feeds the averages. */
struct vs_credit_claim {
    double credit;   /* credits (never negative, never above the bound) */
    double sample;   /* pfc / rsc_fpops_est, 0 when it could not be formed */
    bool outlier;    /* granted the average */
    bool update_hav; /* add sample to the host's average */
    bool update_av;  /* add sample to the version's average */
};

/* The claim of one result under method (enum vs_credit_method). */
void vs_credit_claim(int method, const struct vs_credit_job *j, struct vs_credit_claim *out);

/* The most efficient settled version: the lowest avg among stats with at
 * least VS_CREDIT_MIN_AV_SAMPLES samples, or 0 when none has settled. */
double vs_credit_app_ref(const struct vs_credit_stat *avs, size_t n);

/*
 * The credit every valid result of a quorum is granted, from the claims
 * computed for them (never a number a client sent): one claim is itself,
 * two the lower, three or more the mean of all but the highest. 0 for none.
 */
double vs_credit_quorum(const double *claims, size_t n);

#endif
