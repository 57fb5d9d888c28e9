/*
 * Scheduling scenarios in the notation of the client-scheduling seeds:
 *
 *     (P1(1000, 2000, .5), P2(1, 10, .5), NCPUS=4)
 *     P1(0.1, 1, .5) P2(1, 24, .25) NCPUS = 2 leave_in_memory = false
 *
 * P(C, D, R): C = CPU hours per task, D = delay bound in hours, R = resource
 * share. Parameters are `name = value`; per-project options go inside the
 * parentheses after R (`P2(1, 24, .25, resume_cost = 5m)`) or, as defaults
 * for every project, at the top level. docs/simulator.md lists them all.
 *
 * All times in a parsed scenario are in seconds, whatever unit the text used.
 */
#ifndef VOLSCHED_SCENARIO_H
#define VOLSCHED_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "volsched/error.h"
#include "volsched/scn.h"

#define VS_SCN_NAME_MAX     32
#define VS_SCN_MAX_PROJECTS 256
#define VS_SCN_MAX_NCPUS    1024

struct vs_scn_project {
    char name[VS_SCN_NAME_MAX];
    double cpu_time;    /* C: mean CPU seconds per task */
    double delay_bound; /* D: seconds from sending to deadline */
    double share;       /* R: resource share (any scale; 0 = a backup project) */
    /* Extensions, with their defaults. */
    double spread;            /* job_spread: task length uniform in C*(1 +- spread); 0 */
    double checkpoint_period; /* CPU seconds between checkpoints; 60; 0 = never */
    double resume_cost;       /* CPU seconds lost at each restart from a checkpoint; 0 */
    double server_avail;      /* fraction of time the project's server is up; 1 */
    double server_outage;     /* mean length of one server outage, seconds; 3600 */
    bool non_cpu_intensive;   /* runs beside the CPU jobs, uses no CPU; false */
    int64_t jobs;             /* jobs the project has in all; 0 = unlimited */
    int64_t max_in_progress;  /* server's limit of this host's unfinished jobs; 100; 0 = none */
    /* The project server's configuration, by config.xml's names (the
     * simulated server runs src/policy/server with these). */
    int64_t max_wus_in_progress; /* per-CPU limit of unfinished jobs; 0 = none */
    int64_t daily_result_quota;  /* jobs per CPU per day; 0 = none */
    int64_t max_wus_to_send;     /* jobs per CPU per RPC; 10 */
    bool workload_sim;           /* seed 000's EDF check of the queue; false */
    bool ignore_delay_bound;     /* no deadline rule at all; false */
    double min_rpc_delay;        /* the server's request delay, seconds; 60 */
    /* What volunteers run (docs/simulator.md). */
    double ncpus;           /* CPUs each job uses (multi-threaded; < 1 for GPU feeders); 1 */
    int64_t max_concurrent; /* app_config.xml's limit of jobs running at once; 0 = none */
    double est;             /* the server's runtime estimate / the true length; 1 */
    double nowork_from;     /* the server has no work in [nowork_from, nowork_to), */
    double nowork_to;       /* seconds; both 0 = always has work */
};

struct vs_scenario {
    struct vs_scn_project *projects; /* owned; nprojects entries */
    size_t nprojects;
    int ncpus;                  /* NCPUS; 1 */
    double min_queue;           /* seconds of work to keep queued per CPU; 0.1 hour */
    bool leave_in_memory;       /* false */
    double sched_period;        /* cpu_scheduling_period, seconds; 3600 */
    double on_frac;             /* fraction of time the host runs; 1 */
    double active_frac;         /* fraction of on time computing is allowed; 1 */
    double avail_cycle;         /* mean length of one on+off cycle, seconds; 1 day */
    double duration;            /* simulated seconds; 10 days */
    uint64_t seed;              /* rng seed; 1 */
    bool server_deadline_check; /* server_edf_check: every server has workload_sim; false */
    double extra_queue;         /* work_buf_additional_days, seconds; 0 */
    double cpu_eff;             /* CPU a BOINC job really gets per wall second; 1 */
};

/*
 * Parses a scenario from text[0..len) into *out (caller-owned struct; free
 * with vs_scenario_cleanup). Returns 0, or VS_EPARSE with *err filled (and
 * *out untouched) on bad input, VS_ELIMIT when the text or a count is past
 * the limits above. err may be NULL; its notes list the deprecated option
 * names the text used, on success too (scn.h).
 */
VS_MUST_CHECK int vs_scenario_parse(const char *text, size_t len, struct vs_scenario *out,
                                    struct vs_scn_error *err);

/*
 * Reads and parses the scenario file at path. I/O errors are returned as
 * -errno with err->line = 0.
 */
VS_MUST_CHECK int vs_scenario_load(const char *path, struct vs_scenario *out,
                                   struct vs_scn_error *err);

/* The defaults a scenario text starts from (docs/simulator.md): the
 * host's, with no projects, and one project's. */
void vs_scenario_defaults(struct vs_scenario *s);
void vs_scn_project_defaults(struct vs_scn_project *p);

/* Deep-copies src into *out. */
void vs_scenario_copy(struct vs_scenario *out, const struct vs_scenario *src);

/* Frees what a parse or copy allocated; the struct may be parsed into again. */
void vs_scenario_cleanup(struct vs_scenario *s);

/* Finds a project by name; returns its index or -1. */
int vs_scenario_find(const struct vs_scenario *s, const char *name);

#endif
