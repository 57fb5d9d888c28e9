/*
 * Remote job submission (BOINC's submit_rpc_handler.php, job_file.php and
 * get_output.php; docs/submitting.md): scientists who hold an account with
 * submit rights create batches, upload input files, follow their batches
 * and fetch the outputs over HTTP, from any machine.
 *
 * Requests are BOINC's: a form field request=<OP>...</OP> POSTed to
 * submit_rpc_handler.php or job_file.php (multipart with the files for
 * upload_files); replies are <OP>...</OP> or, on any refusal,
 * <OP><error><error_num>-1</error_num><error_msg>a sentence</error_msg>
 * </error></OP>, and nothing is left half-made. Output files are GETs of
 * get_output.php?cmd=result_file|batch_files with auth_str = md5(the
 * submitter's authenticator followed by the result name or batch id).
 *
 * The handler owns one store handle; requests run one at a time on it
 * (a submission is one create_work call and writes in one transaction).
 */
#ifndef VOLSCHED_SERVER_SUBMIT_H
#define VOLSCHED_SERVER_SUBMIT_H

#include "volsched/config.h"
#include "volsched/error.h"
#include "volsched/http.h"

struct vs_log;
struct vs_submit;

/* cfg is copied; log borrowed. */
VS_MUST_CHECK int vs_submit_create(const struct vs_project_config *cfg, struct vs_log *log,
                                   struct vs_submit **out);
void vs_submit_destroy(struct vs_submit *sub);

/* The POST handler (vs_http_config.api; ctx is the struct vs_submit). */
int vs_submit_http(void *ctx, const struct vs_http_api_req *req, struct vs_buf *out);

/* get_output.php (a GET page): 404 for any other path. */
int vs_submit_get(struct vs_submit *sub, const struct vs_http_get *req, struct vs_http_page *out);

/* One pass of batch tail acceleration (submit_tail.h) at now, on the
 * handler's store handle. */
struct vs_submit_tail;
VS_MUST_CHECK int vs_submit_tail_tick(struct vs_submit *sub, struct vs_submit_tail *t, int64_t now);

/* Retires the batches whose expire_time has passed (now): their jobs
 * cancelled, rows and files purged. Returns how many, or a VS_E* code. */
VS_MUST_CHECK int vs_submit_expire(struct vs_submit *sub, double now);

#endif
