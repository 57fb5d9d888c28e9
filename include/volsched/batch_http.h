/*
 * `volsched batch`'s side of the submission API (docs/submitting.md): POSTs
 * of request=<OP>...</OP> to a project's submit_rpc_handler.php or
 * job_file.php, uploads, and GETs of get_output.php, over libcurl; the
 * reply parsed, and BOINC's <error><error_msg> turned into a message.
 * In the client layer with the rest of volsched's libcurl use (the CLI
 * takes no HTTP library itself: docs/architecture.md).
 */
#ifndef VOLSCHED_CLIENT_BATCH_HTTP_H
#define VOLSCHED_CLIENT_BATCH_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/xml.h"

struct vs_bh {
    char *url;        /* the project's master URL, ending in '/' (owned) */
    const char *auth; /* the submitter's authenticator */
    bool progress;    /* draw a progress bar on stderr */
    struct vs_arena arena;
    struct vs_buf reply;
    struct vs_xml_doc doc;
    char err[600];
};

/* url is copied, with a '/' added when missing. */
void vs_bh_init(struct vs_bh *h, const char *url, const char *auth, bool progress);
void vs_bh_cleanup(struct vs_bh *h);

/*
 * POSTs request (XML) to handler ("submit_rpc_handler.php") as a form.
 * Returns the reply's root (<OP>), or NULL with the reason in h->err (the
 * server's <error_msg>, an HTTP status, a network error). The tree lives
 * until the next call. what names the step for the progress bar (NULL:
 * none).
 */
const struct vs_xml_node *vs_bh_rpc(struct vs_bh *h, const char *handler, const char *request,
                                    size_t len, const char *what);
/* upload_files of the files paths[i] as names[i] (job_file.php, multipart). */
const struct vs_xml_node *vs_bh_upload(struct vs_bh *h, const char *request,
                                       const char *const *paths, const char *const *names,
                                       size_t n);
/* GETs get_output.php?QUERY into out (written whole). 0, or -1 with
 * h->err. */
int vs_bh_get(struct vs_bh *h, const char *query, FILE *out);
/* md5(authenticator + what) as get_output.php wants it. */
void vs_bh_auth_str(const struct vs_bh *h, const char *what, char out[33]);
/* A progress bar line on stderr: "label [#####.....] done/total". */
void vs_bh_bar(const struct vs_bh *h, const char *label, double done, double total);

#endif
