/*
 * Figures of merit, accumulated as the simulation runs (figures-of-merit.md,
 * in continuous time: the host simulator reports each interval between two
 * events with what ran during it, and the accumulator integrates).
 */
#ifndef VOLSCHED_SIM_METRICS_H
#define VOLSCHED_SIM_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "volsched/scenario.h"
#include "volsched/sim.h"

struct vs_metrics_proj {
    double used;   /* U_p */
    double since;  /* R_p: seconds since p last ran */
    double sq;     /* S_p: integral of R_p^2 dt */
    double wasted; /* W_p */
    double wasted_reported;
    int64_t sent, completed, met, missed, rpcs;
    bool cpu_intensive; /* from the scenario, kept here for the per-event loop */
    /* The volunteers' figures (vol_figures.c). */
    int64_t preemptions, late_starts;
    double rollback, peak_queued;
    double win_min, win_max; /* over the closed 7-day windows; win_min > 1: none yet */
    double kcpu;             /* CPUs each of its running jobs holds (ncpus) */
};

struct vs_metrics {
    const struct vs_scenario *s; /* borrowed */
    struct vs_metrics_proj *p;   /* owned, s->nprojects entries */
    size_t np;                   /* s->nprojects */
    double ncpus;                /* s->ncpus */
    double t;                    /* time integrated so far */
    double capacity;             /* F */
    double restart_waste;
    int64_t preemptions;
    /* 7-day windows (vol_figures.c): the cumulative U_p (and U, last) at
     * each of the last VS_WIN_MARKS + 1 hour marks, a ring. */
    double *win_ring;
    int64_t nmarks;
    double next_mark;
    double edf_time; /* available seconds spent in deadline mode */
};

/* The 7-day window slides by the hour. */
#define VS_WIN_STEP  3600.0
#define VS_WIN_MARKS 168

void vs_metrics_init(struct vs_metrics *m, const struct vs_scenario *s);
void vs_metrics_cleanup(struct vs_metrics *m);

/*
 * Integrates dt seconds during which the host was available (or not) and
 * running[p] CPUs ran jobs of project p (for a non-CPU-intensive project:
 * its number of running jobs, which counts for monotony but not for U).
 * running may be NULL: nothing ran.
 */
void vs_metrics_interval(struct vs_metrics *m, double dt, bool available, const int *running);

/* A job of project p finished (or was given up, or the run ended with it
 * unfinished). cpu = CPU seconds it consumed; missed = past its deadline. */
void vs_metrics_job_end(struct vs_metrics *m, int p, double cpu, bool completed, bool missed);
/* A job reported to its server after its deadline (the emulator's count). */
void vs_metrics_job_reported_late(struct vs_metrics *m, int p, double cpu);
void vs_metrics_sent(struct vs_metrics *m, int p, int njobs);
void vs_metrics_rpc(struct vs_metrics *m, int p);
void vs_metrics_preempt(struct vs_metrics *m, int p);
void vs_metrics_restart_lost(struct vs_metrics *m, double cpu);

/* vol_figures.c: the figures volunteers judge a client by. */
void vs_metrics__win_init(struct vs_metrics *m);
/* The hour marks inside the next dt seconds (called before the interval
 * is integrated, with the same arguments). */
void vs_metrics__win_marks(struct vs_metrics *m, double dt, const int *running);
void vs_metrics__win_finish(const struct vs_metrics *m, struct vs_sim_result *out);
/* Work since the last checkpoint thrown away (also a restart loss). */
void vs_metrics_rollback(struct vs_metrics *m, int p, double cpu);
/* A job of p first started after its deadline had passed. */
void vs_metrics_late_start(struct vs_metrics *m, int p);
/* p's unfinished jobs now hold cpu CPU seconds of work. */
void vs_metrics_queued(struct vs_metrics *m, int p, double cpu);
/* dt available seconds in deadline mode. */
void vs_metrics_edf(struct vs_metrics *m, double dt);

/* Computes the figures into *out (caller frees with vs_sim_result_cleanup). */
void vs_metrics_finish(const struct vs_metrics *m, struct vs_sim_result *out);

#endif
