/*
 * Inside remote submission (submit.h): one request's state and the
 * helpers its operations share. submit_rpc.c: dispatch, authentication,
 * errors, ping/get_templates; submit_batch.c: estimate/create/submit;
 * submit_query.c: the queries; submit_manage.c: abort, retire, expiry;
 * submit_files.c: job_file.php; submit_output.c: get_output.php.
 */
#ifndef VOLSCHED_SERVER_SUBMIT_INT_H
#define VOLSCHED_SERVER_SUBMIT_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "server/submit_form.h"
#include "volsched/alloc.h"
#include "volsched/store_submit.h"
#include "volsched/submit.h"
#include "volsched/xml.h"

/* Largest inline input file (bytes) and jobs in one submit_batch. */
#define VS_SUBMIT_MAX_INLINE (16u * 1024u * 1024u)
#define VS_SUBMIT_MAX_JOBS   200000u

struct vs_submit {
    struct vs_project_config cfg;
    struct vs_log *log;
    pthread_mutex_t mu; /* one request at a time on s */
    struct vs_store *s; /* opened on first use */
    _Atomic uint64_t n_requests, n_refused, n_jobs;
};

/* One request. */
struct vs_sreq {
    struct vs_submit *sub;
    struct vs_store *s;
    struct vs_arena *arena;
    const struct vs_xml_node *root; /* <OP> */
    const struct vs_form *form;     /* the whole form (upload_files' files) */
    struct vs_buf *out;             /* the reply, after "<OP>\n" */
    struct vs_xml_writer w;
    int64_t now;
    struct vs_user user; /* once authenticated */
    struct vs_user_submit us;
    char err[600]; /* the refusal's sentence */
};

/* Sets req->err from fmt and returns code (a negative VS_E*). */
int vs_submit__fail(struct vs_sreq *r, int code, const char *fmt, ...) VS_PRINTF(3, 4);

/*
 * Authenticates the request's <authenticator> and checks the account may
 * submit: to app (when not NULL: submit_all or app listed), or at all.
 * Fills r->user and r->us. A refusal's sentence is in r->err.
 */
VS_MUST_CHECK int vs_submit__auth(struct vs_sreq *r, const struct vs_app *app);
/* The app named by the text of node (r->err on failure). */
VS_MUST_CHECK int vs_submit__app(struct vs_sreq *r, const char *name, struct vs_app *out);
/* The batch named by <batch_id> or <batch_name> under node, owned by the
 * requester (r->err on failure). */
VS_MUST_CHECK int vs_submit__batch(struct vs_sreq *r, const struct vs_xml_node *n,
                                   struct vs_batch *out);
/* True when name is a plain file name (no '/', not "." or "..", no
 * control or blank characters, at most VS_NAME_MAX - 1 bytes). */
bool vs_submit__safe_name(const char *name);

/* The operations: each writes its reply's inside with r->w, or fails with
 * r->err. */
int vs_submit__estimate_batch(struct vs_sreq *r);
int vs_submit__create_batch(struct vs_sreq *r);
int vs_submit__submit_batch(struct vs_sreq *r);
int vs_submit__query_batches(struct vs_sreq *r);
int vs_submit__query_batch(struct vs_sreq *r);
int vs_submit__query_job(struct vs_sreq *r);
int vs_submit__query_completed_job(struct vs_sreq *r);
int vs_submit__abort_batch(struct vs_sreq *r);
int vs_submit__abort_jobs(struct vs_sreq *r);
int vs_submit__retire_batch(struct vs_sreq *r);
int vs_submit__set_expire_time(struct vs_sreq *r);
int vs_submit__query_files(struct vs_sreq *r);
int vs_submit__upload_files(struct vs_sreq *r);

/* Retires batch b (in the caller's lock): unfinished jobs cancelled, the
 * jobs' rows, their output files and the input files nothing else uses
 * removed, the batch marked RETIRED. */
VS_MUST_CHECK int vs_submit__retire(struct vs_submit *sub, struct vs_store *s, struct vs_batch *b,
                                    int64_t now, char *err, size_t errsize);
/* Brings b's counters (njobs, fraction_done, nerror_jobs, state COMPLETE,
 * completion_time) up to date from its jobs, writing the row when they
 * changed; *out_p (may be NULL) gets the figures. */
VS_MUST_CHECK int vs_submit__refresh(struct vs_store *s, struct vs_batch *b, int64_t now,
                                     struct vs_batch_progress *out_p);

#endif
