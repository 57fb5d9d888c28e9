/*
 * The operator's pages of a running serve, as one vs_http_get_fn:
 *
 *   <master path>server_status.php      BOINC's status page (?xml=1: its XML)
 *   /metrics                            Prometheus text format
 *   /ops/                               the dashboard (HTTP Basic, operator
 *                                       password of keys/ops_passwd, then a
 *                                       session cookie: ops_session.h)
 *
 * Wrong operator passwords are throttled per client address (IPv6: per
 * /64) before any PBKDF2: VS_OPS_FAILED_BURST at once, then
 * VS_OPS_FAILED_PER_HOUR an hour; a throttled address is answered 429 with
 * Retry-After, whatever it sends, and a valid session cookie still lets in.
 * With config.xml's <ops_listen>, /ops/ and /metrics answer only on that
 * listener (404 elsewhere).
 *
 * The pages read the store through their own handle (one page at a time),
 * the scheduler's, upload handler's and metrics' counters, and the status
 * figures of ops_status.h, so that they agree with `volsched status`.
 */
#ifndef VOLSCHED_SERVER_OPS_PAGES_H
#define VOLSCHED_SERVER_OPS_PAGES_H

#include "volsched/config.h"
#include "volsched/h_upload.h"
#include "volsched/http.h"
#include "volsched/ops_metrics.h"
#include "volsched/sched.h"

#define VS_OPS_FAILED_BURST    10
#define VS_OPS_FAILED_PER_HOUR 60

struct vs_ops_pages;

/* Everything the pages borrow; each must outlive the pages object. */
struct vs_ops_sources {
    struct vs_sched *sched;         /* may be NULL */
    struct vs_upload *upload;       /* may be NULL */
    struct vs_ops_metrics *metrics; /* may be NULL */
    struct vs_log *log;
};

/*
 * Creates the pages for project cfg (copied): opens a store handle, reads
 * the operator password hash (none: /ops/ answers 403 and says how to set
 * one) and, with one, the session secret (made if missing). Returns 0 and
 * *out, or a store error, or the session secret's error (logged).
 */
VS_MUST_CHECK int vs_ops_pages_create(const struct vs_project_config *cfg,
                                      const struct vs_ops_sources *src, struct vs_ops_pages **out);
void vs_ops_pages_destroy(struct vs_ops_pages *p);
/* The HTTP front end whose counters /metrics shows (borrowed; may be set
 * while pages are served). */
void vs_ops_pages_set_http(struct vs_ops_pages *p, struct vs_http *http);

/* The vs_http_get_fn; ctx is the struct vs_ops_pages. */
int vs_ops_pages_http(void *ctx, const struct vs_http_get *req, struct vs_http_page *out);

/* The same at an explicit time (tests). */
int vs_ops_pages_handle(struct vs_ops_pages *p, const struct vs_http_get *req, int64_t now,
                        struct vs_http_page *out);

#endif
