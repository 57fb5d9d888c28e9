/*
 * The scenario simulator: one host running the client policies of
 * src/policy/client on a discrete-event clock, one simple server per
 * project, and the figures of merit of docs/simulator.md (BOINC's client
 * emulator definitions with its known flaws fixed).
 *
 * A run is a pure function of (scenario, options): the same inputs and seed
 * give the same result, byte for byte, on every machine.
 */
#ifndef VOLSCHED_SIM_H
#define VOLSCHED_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "volsched/error.h"
#include "volsched/scenario.h"

struct vs_sim_project_result {
    char name[VS_SCN_NAME_MAX];
    double cpu_time;     /* U_p: CPU seconds spent on the project's jobs */
    double cpu_share;    /* U_p / U (0 when U is 0) */
    double share_target; /* R_p / sum R over CPU-intensive projects */
    int64_t jobs_sent;
    int64_t jobs_completed;
    int64_t deadlines_met;
    int64_t deadline_misses; /* completed late, abandoned late or unfinished past deadline */
    double wasted;           /* CPU seconds on jobs that missed their deadline */
    int64_t rpcs;
    /* What volunteers judge a client by (docs/simulator.md, "Figures"). */
    double share_min_7d, share_max_7d; /* least and greatest U_p / U over 7-day windows */
    double peak_queued;                /* most CPU seconds of its unfinished jobs at once */
    int64_t preemptions;               /* its jobs taken off a CPU */
    double preemptions_per_job;        /* preemptions / jobs_sent */
    double rollback;                   /* CPU seconds lost to restarts from a checkpoint */
    int64_t late_starts;               /* jobs first started after their deadline */
};

struct vs_sim_result {
    double duration;             /* T, simulated seconds */
    double capacity;             /* F: CPU seconds the host could compute */
    double used;                 /* U: CPU seconds spent on jobs */
    double idle_frac;            /* max(0, F - U) / F */
    double wasted_frac;          /* W / F, W counted at completion (or end of run) */
    double wasted_frac_reported; /* the emulator's figure: counted when reported late */
    double share_violation;      /* sum_p |U_p - U rs_p| / U */
    double monotony;             /* x / (1 + x), see docs/simulator.md */
    double rpcs_per_job;         /* scheduler RPCs / jobs sent */
    int64_t rpcs;
    int64_t jobs_sent;
    int64_t jobs_completed;
    int64_t deadline_misses;
    int64_t preemptions;
    double restart_waste;      /* CPU seconds lost restarting from checkpoints */
    double restart_waste_frac; /* restart_waste / F */
    double edf_frac;           /* of the time the host computed, in deadline (EDF) mode */
    size_t nprojects;
    struct vs_sim_project_result *projects; /* owned, nprojects entries */
};

/* What ran where, for pictures. All arrays owned by the timeline. */
struct vs_tl_segment {
    double t0, t1;
    int32_t cpu;     /* -1 for a non-CPU-intensive job (drawn on its own row) */
    int32_t project; /* index into the scenario's projects */
    int64_t job;     /* job number, unique in the run */
    bool missed;     /* the job missed its deadline */
};

struct vs_tl_mark {
    double t; /* when the job completed (or was found) past its deadline */
    int32_t project;
    int64_t job;
};

struct vs_tl_span {
    double t0, t1;
};

struct vs_timeline {
    struct vs_tl_segment *seg;
    size_t nseg, capseg;
    struct vs_tl_mark *mark; /* deadline misses */
    size_t nmark, capmark;
    struct vs_tl_span *off; /* host off or computing suspended */
    size_t noff, capoff;
    double duration;
    int ncpus;
};

struct vs_sim_options {
    const char *policy; /* "fair" (NULL means this), "shortfall", "debt" or "wrr" */
    double duration;    /* seconds; <= 0 keeps the scenario's */
    bool seed_set;      /* use seed instead of the scenario's */
    uint64_t seed;
    /* Called now and then with the fraction done; may be NULL. */
    void (*progress)(void *ctx, double frac);
    void *progress_ctx;
};

/* Names of the policies vs_sim_run accepts, NULL-terminated. */
extern const char *const vs_sim_policies[];

/*
 * Runs scenario s under the options. Fills *out (free with
 * vs_sim_result_cleanup) and, when tl is not NULL, the timeline (free with
 * vs_timeline_cleanup). Returns 0, VS_EINVAL for an unknown policy, or
 * another negative code from the policy library.
 */
VS_MUST_CHECK int vs_sim_run(const struct vs_scenario *s, const struct vs_sim_options *o,
                             struct vs_sim_result *out, struct vs_timeline *tl);

void vs_sim_result_cleanup(struct vs_sim_result *r);

void vs_timeline_init(struct vs_timeline *tl);
void vs_timeline_cleanup(struct vs_timeline *tl);
void vs_timeline_add_segment(struct vs_timeline *tl, const struct vs_tl_segment *seg);
void vs_timeline_add_mark(struct vs_timeline *tl, double t, int32_t project, int64_t job);
void vs_timeline_add_off(struct vs_timeline *tl, double t0, double t1);

/*
 * Writes the timeline as an SVG picture (one row per CPU, time across,
 * coloured by project, deadline misses marked) or as CSV rows
 * (kind,cpu,project,job,start_h,end_h,missed). Returns 0 or -errno.
 */
VS_MUST_CHECK int vs_timeline_write_svg(const struct vs_timeline *tl, const struct vs_scenario *s,
                                        const char *title, FILE *f);
VS_MUST_CHECK int vs_timeline_write_csv(const struct vs_timeline *tl, const struct vs_scenario *s,
                                        FILE *f);

#endif
