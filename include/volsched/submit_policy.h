/*
 * Remote submission's policies (pure; issue 38): the fair share between
 * submitters, and batch tail acceleration. Plain numbers in, decisions
 * out: no I/O, no clock (times are parameters), no globals. The server
 * (src/server/submit_batch.c, h_send.c) and the population simulator
 * (src/popsim) call these same functions, so what popsim measures is what
 * the server does.
 */
#ifndef VOLSCHED_SUBMIT_POLICY_H
#define VOLSCHED_SUBMIT_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- fair share between submitters ----
 *
 * Start-time fair queueing over virtual time. Each submitter has a virtual
 * clock (BOINC's user_submit.logical_start_time); the project's clock V is
 * the virtual time of the next submitter job to be sent (or, when none
 * waits, the latest clock of any submitter). A batch of n jobs from a
 * submitter whose clock is vt, with quota q > 0, gets the virtual times
 * start + (i + 1) / q, i = 0..n-1, start = max(vt, V), and the submitter's
 * clock moves to the last of them. The jobs are sent in increasing
 * virtual time (the job cache sends higher priorities first, and a job's
 * priority is -vt in 1/VS_SP_FAIR_SCALE steps), so that while several
 * submitters have jobs waiting, each gets jobs in proportion to its quota,
 * and a submitter who was idle does not come back with credit saved up.
 */
#define VS_SP_FAIR_SCALE 16.0

/* The virtual time a batch starts at (max(vt_user, v_project)). */
double vs_sp_fair_start(double vt_user, double v_project);
/* Job i's (0-based) virtual time in a batch starting at start, quota q
 * (q <= 0 is taken as a tiny share, 1e-6). */
double vs_sp_fair_vtime(double start, double quota, size_t i);
/* The send priority of a job at virtual time vt (higher is sent first;
 * clamped to the int range, INT32_MIN + 1 at worst). */
int vs_sp_fair_priority(double vt);
/* The project's clock back from the highest priority of a waiting job. */
double vs_sp_fair_vt_of_priority(int priority);

/* ---- tail acceleration ----
 *
 * A batch ends with its last job, and hosts differ a thousandfold in speed
 * and reliability, so its last jobs decide when it ends. Once the share of
 * a batch's jobs still unfinished falls to tail_frac (BOINC uses about the
 * last 10%), its remaining jobs go only to hosts that return work fast and
 * well, and a job whose instance is overdue (out for more than
 * overdue_factor times the time its host was expected to take, and at
 * least min_overdue seconds) gets one more instance on such a host.
 */
struct vs_sp_tail_params {
    bool enabled;
    double tail_frac;      /* 0.1: the tail is the last 10% of a batch's jobs */
    double fast_quantile;  /* 0.5: a fast host turns work around in the faster half */
    double max_error_rate; /* 0.05: and fails at most this share of its jobs */
    double overdue_factor; /* 2: an instance is overdue after twice its expected time */
    double min_overdue;    /* seconds; 600 */
    int max_extra;         /* more instances a job may get this way; 1 */
};
void vs_sp_tail_defaults(struct vs_sp_tail_params *p);

/* A batch's state as the tail rule sees it. */
struct vs_sp_tail_batch {
    int64_t njobs;
    int64_t nunfinished; /* jobs without a canonical result and without an error */
};
/* Whether the batch is in its tail. */
bool vs_sp_tail_active(const struct vs_sp_tail_params *p, const struct vs_sp_tail_batch *b);

/* A host as the tail rule sees it. */
struct vs_sp_tail_host {
    double turnaround;   /* mean seconds from send to report of its jobs (<= 0: unknown) */
    double error_rate;   /* share of its jobs that failed or timed out */
    double turnaround_q; /* the project's fast_quantile of hosts' turnaround */
};
/* Whether the host is fit for a tail job. An unknown host is not. */
bool vs_sp_tail_host_fit(const struct vs_sp_tail_params *p, const struct vs_sp_tail_host *h);

/* Whether an instance sent at sent_time, expected to take expected seconds,
 * is overdue at now (and its job, with extra instances made so far, may
 * get one more). */
bool vs_sp_tail_overdue(const struct vs_sp_tail_params *p, double now, double sent_time,
                        double expected, int extra);

#endif
