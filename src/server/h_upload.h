/*
 * The file upload handler (issue 6): the project's <upload_url>, which
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
 * the client hears "0", so an acknowledged upload survives a crash.
 */
#ifndef VOLSCHED_SERVER_H_UPLOAD_H
#define VOLSCHED_SERVER_H_UPLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"
#include "volsched/buf.h"
#include "volsched/config.h"
#include "volsched/error.h"

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
 * The HTTP handler (vs_http_post_fn): ctx is the struct vs_upload. Answers
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
