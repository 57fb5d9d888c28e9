/*
 * The host simulator one step at a time, for a caller that runs many hosts
 * on its own clock (the population simulator's full host model). A host
 * opened here is the host `volsched sim` runs (host_sim.c: the client
 * policies of src/policy/client, availability, checkpoints, reports); one
 * of its projects may be served by the caller through hooks instead of
 * sim_server.c's built-in server, so that the caller's server sees the
 * request the client builds and decides what it gets.
 *
 * The host's clock starts at 0; the caller keeps its own offset. A step
 * handles every event at one instant; vs_hsim_next says when that is. A
 * caller that steps hosts in the order of their next times, with its own
 * events between, keeps every server reply causal.
 */
#ifndef VOLSCHED_SIM_HSIM_H
#define VOLSCHED_SIM_HSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "volsched/scenario.h"
#include "volsched/server_policy.h"

struct vs_hsim;

struct vs_hsim_hooks {
    size_t project; /* the scenario's project the hooks serve */
    void *ctx;
    /* A finished result of the project, reported at an RPC (before the
     * request is answered, as a scheduler handles <result>s first): its
     * caller-given id and the CPU seconds it took, lost work included. */
    void (*report)(void *ctx, int64_t ext, double cpu);
    /*
     * Answers one RPC to the project. req is the scheduler request the
     * client built (times on the host's clock plus VS_SIM_EPOCH; its
     * queued results for seed 000's EDF check when the scenario's project
     * has workload_sim), or NULL when the client asks for no work (it only
     * reports). Adds the jobs sent with vs_hsim_add_job and returns their
     * number; sets *deadlines when it sent nothing because of deadlines,
     * *delay to the reply's request delay (seconds, 0 for none).
     */
    int (*serve)(void *ctx, struct vs_hsim *h, const struct vs_sp_request *req, bool *deadlines,
                 double *delay);
};

/* Opens host s (copied pointer: s must outlive the host) under the named
 * client policy, for duration seconds of its clock. NULL for an unknown
 * policy or a scenario the simulator cannot take. */
struct vs_hsim *vs_hsim_open(const struct vs_scenario *s, const char *policy, double duration,
                             uint64_t seed, const struct vs_hsim_hooks *hooks);
/* When the next step happens, on the host's clock (its duration at most). */
double vs_hsim_next(const struct vs_hsim *h);
/* Handles the next instant. 1: more to come; 0: the host reached its end;
 * a negative code: a policy error (the host is then unusable). */
int vs_hsim_step(struct vs_hsim *h);
double vs_hsim_now(const struct vs_hsim *h);
/* From a serve hook: a job of len CPU seconds (the client is told est),
 * due at deadline (host clock), known to the caller as ext. */
void vs_hsim_add_job(struct vs_hsim *h, double len, double est, double deadline, int64_t ext);
/* Calls f for each result of the hooked project the host holds: not
 * finished, or finished and not reported, with its CPU seconds so far. */
void vs_hsim_held(const struct vs_hsim *h, void (*f)(void *ctx, int64_t ext, double cpu),
                  void *ctx);
void vs_hsim_close(struct vs_hsim *h);

#endif
