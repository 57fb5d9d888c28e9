/*
 * Remote job submission in the store (issue 38): batches, submitters'
 * permissions and quotas, and the files uploaded through job_file.php
 * (BOINC's batch, user_submit, user_submit_app, job_file and
 * batch_file_assoc tables; schema v8). Same rules as store.h: 0 or a VS_E*
 * code, one thread per handle, writes join the caller's transaction.
 */
#ifndef VOLSCHED_STORE_STORE_SUBMIT_H
#define VOLSCHED_STORE_STORE_SUBMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "volsched/store.h"

/* BOINC-COMPAT: html/inc/common_defs.inc BATCH_STATE_*. */
enum vs_batch_state {
    VS_BATCH_INIT = 0,
    VS_BATCH_IN_PROGRESS = 1,
    VS_BATCH_COMPLETE = 2,
    VS_BATCH_ABORTED = 3,
    VS_BATCH_RETIRED = 4,
};

struct vs_batch {
    int64_t id;
    int64_t user_id;
    int64_t create_time;
    double logical_start_time, logical_end_time;
    double est_completion_time;
    int64_t njobs;
    double fraction_done;
    int64_t nerror_jobs;
    int state; /* enum vs_batch_state */
    int64_t completion_time;
    double credit_estimate, credit_canonical, credit_total;
    char name[VS_NAME_MAX];
    int64_t app_id;
    double expire_time; /* 0: never */
    bool own_hosts;     /* volsched: its jobs go only to the submitter's hosts */
    int priority;       /* volsched: the priority its jobs were given */
};

/* Inserts b (id set on return). */
VS_MUST_CHECK int vs_store_batch_add(struct vs_store *s, struct vs_batch *b);
/* VS_ENOTFOUND if none. */
VS_MUST_CHECK int vs_store_batch_get(struct vs_store *s, int64_t id, struct vs_batch *out);
/* The newest batch of that name (names need not be unique); VS_ENOTFOUND. */
VS_MUST_CHECK int vs_store_batch_by_name(struct vs_store *s, const char *name,
                                         struct vs_batch *out);
/* Deletes batch id's row (a submission that failed made it). */
VS_MUST_CHECK int vs_store_batch_delete(struct vs_store *s, int64_t id);
/* Writes every column of b but id, user_id, create_time, app_id. */
VS_MUST_CHECK int vs_store_batch_update(struct vs_store *s, const struct vs_batch *b);
/* Calls fn for each batch of user_id (0: every user), in id order. */
VS_MUST_CHECK int vs_store_batches_of_user(struct vs_store *s, int64_t user_id,
                                           int (*fn)(void *ctx, const struct vs_batch *b),
                                           void *ctx);
/* Ids of batches past their expire_time at now and not retired. */
VS_MUST_CHECK int vs_store_batches_expired(struct vs_store *s, double now, int64_t *out_ids,
                                           size_t max, size_t *out_n);

/* One job (workunit) of a batch, as the submission API reports it. */
struct vs_batch_job {
    int64_t id;
    const char *name; /* borrowed during the callback */
    int64_t canonical_resultid;
    int error_mask;
    int64_t in_progress; /* results out on hosts */
    int64_t nresults;    /* results made so far */
    double cpu_time;     /* of the canonical result (0 without one) */
    double credit;       /* canonical_credit */
};
/* Streams the jobs of batch in id order, one row at a time (no list held). */
VS_MUST_CHECK int vs_store_batch_jobs(struct vs_store *s, int64_t batch,
                                      int (*fn)(void *ctx, const struct vs_batch_job *j),
                                      void *ctx);

/* What a batch's jobs add up to now. */
struct vs_batch_progress {
    int64_t njobs;       /* workunits */
    int64_t ndone;       /* with a canonical result, no error */
    int64_t nerror;      /* error_mask set */
    int64_t in_progress; /* results out */
    double credit_canonical;
    double cpu_time; /* of all results reported */
};
VS_MUST_CHECK int vs_store_batch_progress(struct vs_store *s, int64_t batch,
                                          struct vs_batch_progress *out);

/* BOINC-COMPAT user_submit: a submitter's rights and quota. */
struct vs_user_submit {
    int64_t user_id;
    double quota; /* share weight (>= 0) */
    double logical_start_time;
    bool submit_all; /* any app; else only the apps listed */
    bool manage_all;
    int64_t max_jobs_in_progress; /* 0: no limit */
};
#define VS_SUBMIT_MAX_APPS 64
/* The row of user_id and up to max of its apps (*out_napps): VS_ENOTFOUND
 * when the user may not submit. app_ids may be NULL with max 0. */
VS_MUST_CHECK int vs_store_user_submit_get(struct vs_store *s, int64_t user_id,
                                           struct vs_user_submit *out, int64_t *app_ids, size_t max,
                                           size_t *out_napps);
/* Creates or replaces the row of u->user_id and its app list (napps 0 with
 * submit_all). */
VS_MUST_CHECK int vs_store_user_submit_set(struct vs_store *s, const struct vs_user_submit *u,
                                           const int64_t *app_ids, size_t napps);
/* Removes user_id's submit rights (not an error when it had none). */
VS_MUST_CHECK int vs_store_user_submit_drop(struct vs_store *s, int64_t user_id);
/* Calls fn for every submitter, in user id order. */
VS_MUST_CHECK int vs_store_user_submits(struct vs_store *s,
                                        int (*fn)(void *ctx, const struct vs_user_submit *u),
                                        void *ctx);

/*
 * The fair share's project clock (volsched/submit_policy.h): the highest
 * priority of a submitter's job (batch <> 0, priority < 0) not sent yet
 * (no instance out or back), as *out_priority with *out_any true; else
 * *out_any false and *out_priority the clock's end: the largest submitter
 * clock (user_submit.logical_start_time) in *out_vt_max.
 */
VS_MUST_CHECK int vs_store_submit_clock(struct vs_store *s, bool *out_any, int *out_priority,
                                        double *out_vt_max);
/* Sets user_id's virtual clock (logical_start_time). */
VS_MUST_CHECK int vs_store_user_submit_set_clock(struct vs_store *s, int64_t user_id, double vt);

/* Tail acceleration's records (volsched/submit_policy.h). */
/* Calls fn for each host with results reported since since: its mean
 * turnaround (received - sent) of successful ones, and its counts of
 * results that succeeded and that failed (error, no reply, invalid). */
VS_MUST_CHECK int vs_store_host_records(struct vs_store *s, int64_t since,
                                        int (*fn)(void *ctx, int64_t hostid, double turnaround,
                                                  int64_t nok, int64_t nfail),
                                        void *ctx);
/* One result of a batch out on a host, with its workunit's replication. */
struct vs_batch_out {
    int64_t result_id, wuid, hostid;
    int64_t sent_time;
    int target_nresults, min_quorum;
};
/* Calls fn for each IN_PROGRESS result of batch whose workunit has no
 * canonical result and no error. */
VS_MUST_CHECK int vs_store_batch_results_out(struct vs_store *s, int64_t batch,
                                             int (*fn)(void *ctx, const struct vs_batch_out *o),
                                             void *ctx);
/* Asks the transitioner for one more instance of workunit wuid: its
 * target_nresults goes from target to target + 1 and its transition time
 * to now (nothing when target_nresults is no longer target: *out_done
 * false). */
VS_MUST_CHECK int vs_store_wu_add_instance(struct vs_store *s, int64_t wuid, int target,
                                           int64_t now, bool *out_done);

/* job_file.php's files. */
/* The id of the job file named name; VS_ENOTFOUND. */
VS_MUST_CHECK int vs_store_job_file_get(struct vs_store *s, const char *name, int64_t *out_id);
/* Records the job file name (or finds it: then its delete_time is raised
 * to delete_time when later), *out_id its id. */
VS_MUST_CHECK int vs_store_job_file_add(struct vs_store *s, const char *name, int64_t now,
                                        int64_t delete_time, int64_t *out_id);
VS_MUST_CHECK int vs_store_job_file_drop(struct vs_store *s, int64_t id);
/* Records that batch uses job file id (once). */
VS_MUST_CHECK int vs_store_batch_file_add(struct vs_store *s, int64_t job_file_id, int64_t batch);
/* Calls fn with the id and name of each job file batch uses. */
VS_MUST_CHECK int vs_store_batch_files(struct vs_store *s, int64_t batch,
                                       int (*fn)(void *ctx, int64_t id, const char *name),
                                       void *ctx);
/* Forgets every use batch makes of job files. */
VS_MUST_CHECK int vs_store_batch_files_drop(struct vs_store *s, int64_t batch);
/* The number of batches that use job file id. */
VS_MUST_CHECK int vs_store_job_file_nbatches(struct vs_store *s, int64_t id, int64_t *out_n);

#endif
