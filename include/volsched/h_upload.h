/*
 * The file upload handler (the results' way back): the project's <upload_url>, which
 * contains "file_upload_handler" (BOINC-COMPAT: the client tells uploads
 * from downloads by that substring). It speaks BOINC's data server protocol
 * (boinc-protocol.md section 8): a size query (<get_file_size>) answers the
 * bytes the server has, so an interrupted upload resumes; a file upload
 * (<file_upload> header, then the raw bytes from <offset>) is written into
 * the upload fanout hierarchy (DIR/upload/<hex>/<name>).
 *
 * A file is taken only if
 *   - its upload certificate (<xml_signature> over name and max_nbytes made
 *     with the project's upload key) verifies against keys/upload_public,
 *     unless the project sets <dont_generate_upload_certificates>;
 *   - nbytes <= max_nbytes;
 *   - the name is an output file of a result in progress (or of one the
 *     transitioner timed out and that may still be reported late);
 *   - its path stays inside the upload directory.
 * Refusals are permanent (<status>-1</status>: the client gives the output
 * up); store or disk trouble is transient (status 1: the client retries).
 * A finished file is checked against the client's MD5 and fsync'ed before
 * the client hears "0", so an acknowledged upload survives a crash. Files
 * are created mode 0640 (outputs are the project's, not the world's:
 * docs/security.md).
 */
#ifndef VOLSCHED_SERVER_H_UPLOAD_H
#define VOLSCHED_SERVER_H_UPLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "volsched/buf.h"
#include "volsched/config.h"
#include "volsched/error.h"
#include "volsched/http.h"
#include "volsched/store.h"

struct vs_log;
struct vs_upload;

/*
 * Creates the handler for project cfg (copied). Loads keys/upload_public
 * (required unless cfg->dont_generate_upload_certificates). Store handles
 * are opened on demand from cfg->store_url. log is borrowed. Returns 0 and
 * *out, or the error (logged).
 */
VS_MUST_CHECK int vs_upload_create(const struct vs_project_config *cfg, struct vs_log *log,
                                   struct vs_upload **out);
void vs_upload_destroy(struct vs_upload *u);

/*
 * One upload POST, fed as its body arrives (the HTTP layer's streaming
 * route, vs_http_stream_ops): memory per request is bounded by the header
 * cap (VS_PROTO_MAX_UPLOAD_HEADER, freed once parsed) whatever the file's
 * size. The header (up to "<data>\n") is parsed and the upload certificate,
 * max_nbytes and the result checked before any file byte is taken; then
 * the file is locked (one writer per file: a second upload of the same
 * name is told to retry) and each chunk written at its offset. After a
 * refusal the rest of the body is read and dropped.
 *
 * open: ctx is the struct vs_upload; peer (may be NULL) is copied. data:
 * returns 0 while the bytes are wanted, non-zero once the outcome is
 * decided (the caller may stop feeding). finish: appends the
 * <data_server_reply> to out and returns the HTTP status. close frees the
 * request (NULL is a no-op) and releases the file's lock.
 */
struct vs_upload_req;
struct vs_upload_req *vs_upload_req_open(void *ctx, const char *peer);
int vs_upload_req_data(struct vs_upload_req *r, const char *data, size_t n);
int vs_upload_req_finish(struct vs_upload_req *r, struct vs_buf *out);
void vs_upload_req_close(struct vs_upload_req *r);
/* The four above for the HTTP layer's streaming route (upload_stream). */
extern const struct vs_http_stream_ops vs_upload_stream_ops;

/*
 * The whole-body HTTP handler (vs_http_post_fn), the streaming one fed with
 * the body at once (tests, fuzzing): ctx is the struct vs_upload. Answers
 * 200 with a <data_server_reply> (status 0, 1 or -1), or 500 when even that
 * cannot be written.
 */
int vs_upload_http(void *ctx, const char *body, size_t len, const char *peer, struct vs_buf *out);

struct vs_upload_stats {
    uint64_t size_queries;
    uint64_t files_done; /* uploads that completed a file */
    uint64_t bytes;      /* bytes written */
    uint64_t refused;    /* permanent refusals */
    uint64_t transient;  /* transient failures */
};
void vs_upload_get_stats(struct vs_upload *u, struct vs_upload_stats *out_stats);

#endif
