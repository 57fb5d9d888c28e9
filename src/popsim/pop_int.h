/*
 * The population simulator's insides, shared by its files:
 *   popsim.c       the event loop, hosts joining, leaving, going on and off
 *   pop_host.c     a host as the scenario draws it (both models)
 *   pop_light.c    the lighter host model, an approximation with a measured
 *                  error: computing, work fetch, its RPC and backoff
 *   pop_full.c     the full host model: src/sim's host simulator per host
 *   pop_server.c   the scheduler, through src/policy/server
 *   pop_project.c  workunits and results: the transitioner and validator
 *   pop_locality.c big input files, hosts' copies, locality scheduling's source
 *   pop_report.c   figures, JSON, CSV and SVG
 *   pop_dist.c     drawing from the scenario's distributions
 */
#ifndef VOLSCHED_POPSIM_POP_INT_H
#define VOLSCHED_POPSIM_POP_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "volsched/alloc.h"
#include "volsched/client_policy.h"
#include "volsched/eventq.h"
#include "volsched/popsim.h"
#include "volsched/rng.h"
#include "volsched/server_policy.h"
#include "volsched/submit_policy.h"

/* The server's request delay after a reply with work. */
#define POP_MIN_RPC_DELAY 60.0

enum pop_event {
    EV_BATCH,
    EV_RPC,
    EV_DONE,
    EV_TOGGLE,
    EV_DEADLINE,
    EV_LEAVE,
    EV_SAMPLE,
    EV_STEP,
    EV_WS /* the working-set manager's pass */
};

/* How often the working-set manager runs (the daemon's poll). */
#define POP_WS_PERIOD 300.0

enum pop_rstate {
    R_UNSENT,    /* in the unsent list */
    R_RUNNING,   /* on a host, being computed or queued */
    R_DONE,      /* finished on the host, not reported yet */
    R_OVER,      /* reported */
    R_CANCELLED, /* never sent: its workunit no longer needed it */
    R_LOST       /* its host left before reporting it */
};

struct pop_result {
    int32_t wu;
    int32_t host;       /* host slot holding it; -1 none */
    int64_t hostid;     /* the host it was sent to (one_result_per_host_per_wu) */
    int32_t prev, next; /* unsent list */
    uint8_t state;
    bool timed_out, invalid;
    uint32_t gen;     /* bumped when the slot is reused: stale deadline events */
    int64_t seq;      /* creation order (increasing per file: locality's ids) */
    double remaining; /* FLOPs left */
    double sent, deadline;
    double cpu; /* CPU seconds spent on it so far (at full speed) */
};

struct pop_wu {
    int32_t batch;
    uint8_t nres, nvalid, nbad;
    uint8_t live; /* results that may still change state */
    bool done, failed;
    int32_t file;  /* its big input file; -1 none */
    double fpops;  /* the job's length; every result of it the same */
    uint8_t extra; /* instances made by the tail rule */
    double created;
    int32_t res[VS_POP_MAX_RESULTS];
};

struct pop_host {
    int64_t id;
    int ncpus;
    double flops; /* per CPU */
    double on_frac, active_frac, share, err_rate, ram, disk;
    double rate; /* FLOPs per second of one running job while on */
    bool on;
    double last;   /* remaining FLOPs of running jobs are as of this time */
    double joined; /* when this host attached */
    int32_t *q;    /* its results, FIFO; the first ncpus run */
    int nq, capq;
    int32_t *done; /* finished, to report */
    int ndone, capdone;
    double min_rpc, rpc_at, prev_rpc;
    double report_at;    /* a finished result must be reported by then */
    double work_backoff; /* no work request before this (vs_cbackoff) */
    int no_work_n;       /* work requests in a row that brought nothing */
    uint32_t gen_done, gen_rpc, gen_life;
    struct vs_sp_hav hav;
    /* files it holds or was sent (pop_locality.c) */
    struct pop_hfile *hf;
    int nhf, caphf;
    double held_bytes;
    /* its record, for the tail rule: results reported, their turnaround,
     * and results that failed (wrong, timed out) */
    int64_t n_rep, n_fail;
    double turn_sum;
};

/* A big input file of the project. Its results in creation order: an
 * entry (slot, seq) is live while res[slot] still has that seq. */
struct pop_file {
    char name[12];
    int32_t *slot;
    int64_t *seq;
    uint32_t n, cap;
    int32_t open_wus; /* workunits not finished */
    int32_t unsent;   /* unsent results */
    bool in_ws;       /* in the working set (file_working_set/) */
    bool no_work;     /* reported without work (files_no_work/) */
};

/* A host's record of one file. */
struct pop_hfile {
    int32_t file;
    int32_t refs;    /* its results on the host that read it */
    int64_t max_seq; /* the largest result of the file sent to the host */
    bool held;       /* on the host's disk */
    bool del;        /* the server said delete it (when no result needs it) */
};

/* Turnaround times kept as a histogram with bins 1% wide on a log scale
 * from a minute up (about 5 years at the top): percentiles to 1% in fixed
 * memory, however many results a run sends. */
#define POP_HIST_BINS 1500
#define POP_HIST_MIN  60.0
struct pop_hist {
    uint64_t n;
    uint64_t bins[POP_HIST_BINS];
};
void vs_pop__hist_add(struct pop_hist *h, double secs);
double vs_pop__hist_pct(const struct pop_hist *h, double q);

struct pop_batch {
    double created, last_done;
    int64_t open;
};

struct pop {
    const struct vs_pop_scenario *s;
    struct vs_rng rng_hosts, rng_jobs, rng_run;
    struct vs_eventq q;
    double now, end;
    struct pop_host *hosts;
    size_t nhosts;
    int64_t next_host_id;
    struct pop_wu *wus;
    size_t nwus, capwus;
    struct pop_result *res;
    size_t nres, capres;
    /* Slots of finished workunits and their results are reused (BOINC's
     * purger), so memory follows what is in flight, not the run's length. */
    int32_t *free_wus, *free_res;
    size_t nfree_wus, capfree_wus, nfree_res, capfree_res;
    int32_t unsent_head, unsent_tail;
    struct pop_batch *batches;
    int64_t batches_made, wus_open;
    /* the server: src/policy/server's configuration, app and version */
    struct vs_sp_config cfg;
    struct vs_sp_app app;
    struct vs_sp_app_version av;
    /* request scratch */
    struct vs_sp_inprog *inprog;
    struct vs_sp_ip_result *ip;
    int req_cap;
    /* the results the last reply sent, for a full host (pop_full.c) */
    int32_t *sent;
    int nsent, capsent;
    /* big input files and locality scheduling (pop_locality.c) */
    struct pop_file *files;
    size_t nfiles, capfiles;
    uint64_t *work_bits; /* files with unsent results */
    size_t nwords;
    int32_t *ws; /* the working set, ascending */
    size_t nws, capws;
    int32_t *nowork; /* files reported without work */
    size_t nnowork, capnowork;
    uint64_t ws_turn;
    int64_t next_seq;
    int32_t batch_file0, batch_nfiles; /* the files of the batch being made */
    struct vs_arena arena;             /* one request's scratch */
    /* the full host model's hosts, parallel to hosts (NULL: lighter model) */
    struct pop_full *full;
    uint64_t seed;
    /* figures */
    struct vs_pop_result *out;
    struct pop_hist turn, wut; /* result and workunit turnaround */
    int64_t in_flight, returned, rpcs_bin;
    size_t capsamples;
    /* tail acceleration (pop_tail.c): the rule's parameters, the hosts'
     * turnaround quantile, and the open workunits of batches in their tail */
    struct vs_sp_tail_params tail;
    double tail_turn_q;
    int32_t *tail_wus;
    size_t ntail, captail;
    int rc;
};

/* pop_dist.c */
double vs_pop__draw(const struct vs_pop_dist *d, struct vs_rng *r);

/* pop_host.c */
void vs_pop__host_init(struct pop *p, struct pop_host *h);
void vs_pop__host_cleanup(struct pop_host *h);

/* pop_light.c: the lighter host model */
void vs_pop__host_advance(struct pop *p, struct pop_host *h);
void vs_pop__host_plan_done(struct pop *p, struct pop_host *h, int32_t slot);
void vs_pop__host_finish(struct pop *p, struct pop_host *h, int32_t slot);
void vs_pop__host_plan_rpc(struct pop *p, struct pop_host *h, int32_t slot);
double vs_pop__host_request(const struct pop *p, const struct pop_host *h);
void vs_pop__host_leave(struct pop *p, struct pop_host *h);
void vs_pop__rpc(struct pop *p, struct pop_host *h, int32_t slot);

/* pop_server.c */
void vs_pop__server_init(struct pop *p);
int vs_pop__send_work(struct pop *p, struct pop_host *h, int32_t slot,
                      const struct vs_sp_request *rq, bool *deadlines, double *delay);
/* Offers result r to host h under request state st (the work-send rules);
 * on VS_SP_OK it is sent. */
enum vs_sp_reason vs_pop__offer(struct pop *p, struct pop_host *h, int32_t slot,
                                struct vs_sp_state *st, int32_t r);
/* What may differ between the project's candidate jobs (VS_SP_VARIES_*
 * bits), for the shared scan rule vs_sp_scan_stops. */
unsigned vs_pop__varies(const struct pop *p);

/* pop_locality.c */
void vs_pop__files_init(struct pop *p);
void vs_pop__files_cleanup(struct pop *p);
/* Before a batch of n workunits is made: its files. */
void vs_pop__files_begin_batch(struct pop *p, int64_t n);
/* The file of the batch's i-th workunit. */
int32_t vs_pop__file_of(const struct pop *p, int64_t i);
void vs_pop__file_new_result(struct pop *p, int32_t r);
void vs_pop__file_unsent_gone(struct pop *p, int32_t r);
void vs_pop__file_wu_closed(struct pop *p, int32_t w);
/* r was sent to h / came back from its host. */
void vs_pop__file_sent(struct pop *p, struct pop_host *h, int32_t r);
void vs_pop__file_released(struct pop *p, int32_t r);
/* The disk the job of result r needs on h beyond the files h holds. */
double vs_pop__file_disk_need(const struct pop *p, const struct pop_host *h, int32_t r);
/* Files with unsent results after index `from` (-1: the first), wrapping. */
size_t vs_pop__files_with_work(const struct pop *p, int32_t from, const char **names, size_t max);
/* Seed 001's pass for one request (src/policy/server/loc_pass.c). */
int vs_pop__locality_send(struct pop *p, struct pop_host *h, int32_t slot, struct vs_sp_state *st);
void vs_pop__ws_pass(struct pop *p);
void vs_pop__server_cleanup(struct pop *p);

/* pop_full.c: the full host model, each host src/sim's host simulator */
void vs_pop__full_init(struct pop *p);
void vs_pop__full_open(struct pop *p, int32_t slot);
void vs_pop__full_step(struct pop *p, int32_t slot, uint32_t gen);
void vs_pop__full_leave(struct pop *p, int32_t slot);
/* Adds the CPU of the results host slot holds to the figures at the end. */
void vs_pop__full_end(struct pop *p, int32_t slot);
void vs_pop__full_cleanup(struct pop *p);

/* pop_project.c */
void vs_pop__make_batch(struct pop *p);
/* Makes one more result of workunit w (unsent); its slot. */
int32_t vs_pop__new_result(struct pop *p, int32_t w);

/* pop_tail.c: batch tail acceleration, by src/policy's rule */
void vs_pop__tail_init(struct pop *p);
void vs_pop__tail_cleanup(struct pop *p);
/* Hourly: the hosts' turnaround quantile and the tail workunits. */
void vs_pop__tail_refresh(struct pop *p);
/* A result of host slot came back (failed: wrong) or timed out. */
void vs_pop__tail_note(struct pop *p, int32_t r, bool failed, bool timed_out);
/* Whether the rule keeps result r from host h. */
bool vs_pop__tail_skip(struct pop *p, const struct pop_host *h, int32_t r);
/* For a fit host: extra instances of overdue tail jobs, offered to it
 * first; how many it was sent. */
int vs_pop__tail_replicate(struct pop *p, struct pop_host *h, int32_t slot, struct vs_sp_state *st);
void vs_pop__unsent_remove(struct pop *p, int32_t r);
void vs_pop__report(struct pop *p, int32_t r);
void vs_pop__timeout(struct pop *p, int32_t r, uint32_t gen);
void vs_pop__lost(struct pop *p, int32_t r);
void vs_pop__push_sample(struct pop *p);

#endif
