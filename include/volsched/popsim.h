/*
 * The population simulator: one project's server, running the scheduler
 * policy code `volsched serve` runs (src/policy/server) over an in-memory
 * store, against a population of simulated volunteer hosts drawn from
 * distributions, on a discrete-event clock. docs/popsim.md has the scenario
 * language, the host model and the figures.
 */
#ifndef VOLSCHED_POPSIM_H
#define VOLSCHED_POPSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "volsched/error.h"
#include "volsched/scenario.h"

#define VS_POP_MAX_CHOICES   16
#define VS_POP_MAX_HOSTS     10000000
#define VS_POP_MAX_WUS       50000000 /* in one batch (made at once) */
#define VS_POP_MAX_RESULTS   16       /* results one workunit may ever have */
#define VS_POP_MAX_EDF_QUEUE 1000     /* queued results listed for the EDF check */

enum vs_pop_model { VS_POP_LIGHT, VS_POP_FULL };
/* The models' names, by enum value, NULL-terminated. */
extern const char *const vs_pop_models[];

/* A batch's workunits in creation order: one per file in turn, or each
 * file's workunits together. */
enum vs_pop_file_order { VS_POP_INTERLEAVED, VS_POP_GROUPED };
extern const char *const vs_pop_file_orders[];

/* A distribution a host attribute is drawn from. */
enum vs_pop_dist_kind {
    VS_PD_CONST,     /* a */
    VS_PD_UNIFORM,   /* in [a, b) */
    VS_PD_LOGNORMAL, /* median a, sigma b (of the log) */
    VS_PD_BETA,      /* shape a, b (a fraction) */
    VS_PD_EXP,       /* mean a */
    VS_PD_CHOICE     /* v[i] with weight w[i] */
};

struct vs_pop_dist {
    enum vs_pop_dist_kind kind;
    double a, b;
    int n;
    double v[VS_POP_MAX_CHOICES], w[VS_POP_MAX_CHOICES];
};

struct vs_pop_scenario {
    /* the population */
    int64_t hosts;
    struct vs_pop_dist ncpus;       /* CPUs (rounded, at least 1) */
    struct vs_pop_dist gflops;      /* per CPU */
    struct vs_pop_dist on_frac;     /* fraction of time the client runs */
    struct vs_pop_dist active_frac; /* fraction of that time computing is allowed */
    struct vs_pop_dist share;       /* fraction of the host's computing this project gets */
    struct vs_pop_dist error_rate;  /* chance a result comes back wrong */
    struct vs_pop_dist ram_gb, disk_gb;
    double avail_cycle;  /* mean on+off cycle, seconds */
    double lifetime;     /* mean time a host stays attached, seconds; 0 = forever */
    double buffer;       /* work_buf_min_days, in seconds */
    double buffer_extra; /* work_buf_additional_days, in seconds */
    double report_delay; /* a finished result is reported within this, seconds */
    /* the project */
    int64_t batches, batch_size;
    double batch_interval; /* seconds between batches */
    double job_hours;      /* CPU seconds of a job on a ref_gflops CPU */
    double job_spread;     /* job length uniform in job_hours x (1 +- spread) */
    double ref_gflops;     /* the reference CPU job_hours is measured on */
    double delay_bound;    /* seconds */
    int min_quorum;        /* valid results that agree to finish a workunit */
    int target_nresults;   /* results made at first */
    int max_total_results; /* a workunit fails when it would need more */
    double input_mb;       /* downloaded with each result */
    bool server_edf_check; /* seed 000's EDF check (workload_sim) */
    int64_t max_wus_to_send, max_wus_in_progress, daily_result_quota;
    int64_t job_cache; /* unsent results the scheduler looks at per request */
    /* batch tail acceleration (volsched/submit_policy.h, issue 38) */
    bool tail_acceleration;
    double tail_frac;           /* the tail: this share of a batch's jobs left */
    double tail_overdue_factor; /* an instance is overdue after this x its expected time */
    double tail_min_overdue;    /* seconds */
    /* big input files shared by workunits (an Einstein-like workload) */
    double file_mb;            /* each workunit reads one file of this size; 0 = none */
    int64_t wus_per_file;      /* workunits made for one file */
    int file_order;            /* enum vs_pop_file_order: how a batch's workunits are made */
    bool locality;             /* the server sends them by locality scheduling (seed 001) */
    bool locality_sorted;      /* <locality_scheduling_sorted_order/> */
    int64_t locality_ws_files; /* working-set size; 0 = hosts / target_nresults (seed 001) */
    /* the host model (docs/popsim.md): the lighter one, or each host
     * running src/policy/client as `volsched sim` does */
    int model;         /* enum vs_pop_model */
    int client_policy; /* the full model's policy: an index in vs_sim_policies */
    /* the run */
    double duration; /* seconds */
    uint64_t seed;
};

/* Fills s with the defaults (docs/popsim.md says where each comes from). */
void vs_pop_scenario_defaults(struct vs_pop_scenario *s);
/* Parses a population scenario; errors carry line:column (scenario.h). */
VS_MUST_CHECK int vs_pop_scenario_parse(const char *text, size_t len, struct vs_pop_scenario *out,
                                        struct vs_scn_error *err);
VS_MUST_CHECK int vs_pop_scenario_load(const char *path, struct vs_pop_scenario *out,
                                       struct vs_scn_error *err);

/* One hour of the run, for the timeline. */
struct vs_pop_sample {
    double t;          /* end of the hour, seconds */
    int64_t in_flight; /* results sent and not yet back or timed out */
    int64_t returned;  /* results reported so far */
    int64_t validated; /* workunits validated so far */
    int64_t rpcs;      /* scheduler requests in this hour */
};

struct vs_pop_result {
    double duration;  /* simulated seconds until the last workunit finished (or the end) */
    double host_days; /* simulated host-days (hosts x days attached) */
    int64_t hosts_seen;
    int64_t wus, wus_valid, wus_failed, wus_open;
    int64_t sent, returned, valid, invalid, timed_out, late, wasted, invalid_accepted;
    int64_t in_flight_end;   /* sent, neither reported nor timed out at the end */
    int64_t deadline_misses; /* results reported after their deadline or never */
    double makespan;         /* last workunit validated; -1 when some are open */
    double batch_makespan_mean, batch_makespan_max;
    double turnaround_p50, turnaround_p90, turnaround_p99; /* sent -> reported, s */
    double wu_p50, wu_p90, wu_p99;                         /* created -> validated, s */
    double cpu_hours, cpu_hours_wasted;
    /* cpu_hours plus what the results still out at the end would take to
     * finish (the lighter model; no host is told to abort them). */
    double cpu_hours_to_end;
    double bytes_down, bytes_per_valid;
    /* With big files: their downloads, and the lower bound (every file on
     * target_nresults hosts, every result's own input once). */
    int64_t files, file_downloads;
    double bytes_bound, bytes_vs_bound;        /* bytes_down / bytes_bound */
    int64_t loc_deletes;                       /* files the server told hosts to delete */
    int64_t rpcs, work_requests, work_replies; /* asked for work / got some */
    double cache_hit_rate;                     /* work_replies / work_requests */
    double rpc_rate_mean, rpc_rate_peak;       /* per second, over hours */
    /* Jobs refused because they would miss their deadline (seed 004's rule,
     * or the EDF check's test of the job itself), or because queued jobs
     * would then miss theirs (the EDF check). */
    int64_t refused_deadline, refused_workload;
    /* Tail acceleration: extra instances made for overdue tail jobs, and
     * tail jobs a host too slow or unreliable for them was not given. */
    int64_t tail_replicas, tail_refused;
    struct vs_pop_sample *samples; /* owned */
    size_t nsamples;
};

struct vs_pop_options {
    bool seed_set;
    uint64_t seed;
    double duration; /* <= 0 keeps the scenario's */
    void (*progress)(void *ctx, double frac);
    void *progress_ctx;
};

/* Runs the scenario. Deterministic: same scenario and seed, same result. */
VS_MUST_CHECK int vs_popsim_run(const struct vs_pop_scenario *s, const struct vs_pop_options *o,
                                struct vs_pop_result *out);
void vs_pop_result_cleanup(struct vs_pop_result *r);

/* The figures as text, JSON, timeline CSV and an SVG picture. */
VS_MUST_CHECK int vs_pop_print_text(FILE *f, const struct vs_pop_scenario *s,
                                    const struct vs_pop_result *r);
VS_MUST_CHECK int vs_pop_print_json(FILE *f, const struct vs_pop_scenario *s,
                                    const struct vs_pop_result *r);
/* Runs r[0..n) of one scenario over several seeds: each figure's mean and
 * its 95% confidence half-width (Student's t), as text or JSON. */
VS_MUST_CHECK int vs_pop_print_summary(FILE *f, const struct vs_pop_scenario *s,
                                       const struct vs_pop_result *r, size_t n, bool json);
VS_MUST_CHECK int vs_pop_write_csv(FILE *f, const struct vs_pop_result *r);
VS_MUST_CHECK int vs_pop_write_svg(FILE *f, const struct vs_pop_result *r);

#endif
