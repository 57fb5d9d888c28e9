/*
 * The project directory's layout: where things are on disk and on the web,
 * derived from the configuration (volsched/config.h) but not part of it.
 *
 *   DIR/config.xml, DIR/config_aux.xml   the configuration (volsched/config.h)
 *   DIR/templates/       <app>_in, <app>_out
 *   DIR/download/        fanout hierarchy of app and input files (<download_dir>)
 *   DIR/upload/          fanout hierarchy of uploaded outputs (<upload_dir>)
 *   DIR/keys/            code_sign_private/_public, upload_private/_public (<key_dir>)
 *   DIR/html/index.html  the master page
 *   DIR/locality_scheduling/need_work/   trigger files (seed 001)
 *   DIR/volsched.db      the embedded store (<store_url>)
 *
 * BOINC-COMPAT: the fan-out (dir_hier_path) and the URLs under the master
 * URL are make_project's, so files land where BOINC's tools expect them.
 */
#ifndef VOLSCHED_LAYOUT_H
#define VOLSCHED_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>

#include "volsched/config.h"
#include "volsched/error.h"

/*
 * Sets cfg's directory and everything derived from it and from url: dir is
 * made absolute (trailing '/' dropped); master_url is url with a trailing
 * '/'; download_url, cgi_url, upload_url under it; download_dir, upload_dir,
 * key_dir under dir; store_url sqlite:DIR/volsched.db. Returns 0, -errno
 * (no current directory) or VS_ELIMIT when something does not fit.
 */
VS_MUST_CHECK int vs_project_layout_defaults(struct vs_project_config *cfg, const char *dir,
                                             const char *url);

/*
 * BOINC-COMPAT dir_hier_path: the relative location of file name inside a
 * fanout hierarchy: "<hex(H mod fanout)>/<name>" where H is the value of
 * hex digits 1..7 of md5(name); plain "<name>" when fanout is 0. Writes
 * into out (size outsize); VS_ELIMIT if it does not fit.
 */
VS_MUST_CHECK int vs_project_hier_rel(int fanout, const char *name, char *out, size_t outsize);

/*
 * The absolute path of name in the download (or upload) hierarchy, creating
 * the fanout directory when mkdir is true.
 */
VS_MUST_CHECK int vs_project_download_path(const struct vs_project_config *cfg, const char *name,
                                           bool mkdir, char *out, size_t outsize);
VS_MUST_CHECK int vs_project_upload_path(const struct vs_project_config *cfg, const char *name,
                                         bool mkdir, char *out, size_t outsize);

/* The download URL of name: <download_url>/<hier_rel(name)>. */
VS_MUST_CHECK int vs_project_download_url(const struct vs_project_config *cfg, const char *name,
                                          char *out, size_t outsize);

/* The scheduler URL: <cgi_url>cgi (BOINC-COMPAT). */
VS_MUST_CHECK int vs_project_scheduler_url(const struct vs_project_config *cfg, char *out,
                                           size_t outsize);

#endif
