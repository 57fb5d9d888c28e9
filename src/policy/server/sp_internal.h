/*
 * Internal interface between the files of the server policy (feasible.c,
 * limits.c, deadline.c, send.c). Not a public header.
 */
#ifndef VOLSCHED_POLICY_SERVER_SP_INTERNAL_H
#define VOLSCHED_POLICY_SERVER_SP_INTERNAL_H

#include "volsched/server_policy.h"

/* Rules of seed 004 over one job; each returns VS_SP_OK or its reason and
 * fills the refusal details of *v. */
enum vs_sp_reason vs_sp__check_dup(const struct vs_sp_state *st, const struct vs_sp_job *job);
enum vs_sp_reason vs_sp__check_hr(const struct vs_sp_state *st, const struct vs_sp_job *job,
                                  struct vs_sp_verdict *v);
enum vs_sp_reason vs_sp__choose_version(const struct vs_sp_state *st, const struct vs_sp_job *job,
                                        struct vs_sp_verdict *v);
/* The same, memoized per (app, pinned version) until the next commit. */
enum vs_sp_reason vs_sp__choose_version_memo(struct vs_sp_state *st, const struct vs_sp_job *job,
                                             struct vs_sp_verdict *v);
enum vs_sp_reason vs_sp__check_memory(const struct vs_sp_state *st, const struct vs_sp_job *job,
                                      struct vs_sp_verdict *v);
enum vs_sp_reason vs_sp__check_disk(const struct vs_sp_state *st, const struct vs_sp_job *job,
                                    struct vs_sp_verdict *v);
enum vs_sp_reason vs_sp__check_deadline(struct vs_sp_state *st, const struct vs_sp_job *job,
                                        struct vs_sp_verdict *v);

/* True when the request still asks for resource p (limits aside). */
bool vs_sp__requested(const struct vs_sp_state *st, enum vs_sp_proc p);

/* The state's quota row for an app version, or NULL. */
struct vs_sp_hav *vs_sp__hav_find(const struct vs_sp_state *st, int64_t app_version_id);
/* Projected FLOPS of a version on a host. */
double vs_sp__av_flops(const struct vs_sp_host *h, const struct vs_sp_app_version *av);

/* Limits: scale the configured limits for this host and count in-progress jobs. */
void vs_sp__limits_init(struct vs_sp_state *st);

/* EDF workload from the request's in-progress results. */
void vs_sp__edf_init(struct vs_sp_edf *e, int ncpus, const struct vs_sp_ip_result *ip, int n,
                     double work_buf_min, double avail_frac);
void vs_sp__edf_cleanup(struct vs_sp_edf *e);

#endif
