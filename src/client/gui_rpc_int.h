/*
 * Between the GUI RPC transport (gui_rpc.c) and its operations (gui_ops.c).
 */
#ifndef VOLSCHED_CLIENT_GUI_RPC_INT_H
#define VOLSCHED_CLIENT_GUI_RPC_INT_H

#include "volsched/client.h"
#include "volsched/xml.h"

/*
 * Answers one authorized request op (a child of <boinc_gui_rpc_request> in
 * doc), appending the reply body to out. Returns 0 or VS_ELIMIT (reply cap).
 */
VS_MUST_CHECK int vs_client_gui_dispatch(struct vs_client *c, const struct vs_xml_doc *doc,
                                         const struct vs_xml_node *op, struct vs_arena *a,
                                         struct vs_buf *out);

/*
 * The ops of gui_cfg_ops.c (preferences, cc_config, proxy, language),
 * gui_misc_ops.c (account manager, project list, statistics, versions,
 * screensaver, transfer history) and gui_acct.c (the project's account web
 * RPCs, forwarded): each returns false when it does not know op, else
 * writes the reply to w.
 */
bool vs_client_gui_cfg_op(struct vs_client *c, const struct vs_xml_doc *doc,
                          const struct vs_xml_node *op, struct vs_arena *a,
                          struct vs_xml_writer *w);
bool vs_client_gui_misc_op(struct vs_client *c, const struct vs_xml_doc *doc,
                           const struct vs_xml_node *op, struct vs_arena *a,
                           struct vs_xml_writer *w);
bool vs_client_gui_acct_op(struct vs_client *c, const struct vs_xml_node *op, struct vs_arena *a,
                           struct vs_xml_writer *w);
/* BOINC's reply to an op no one knows, the op logged the first time. */
void vs_client_gui_unknown(struct vs_client *c, const char *name, struct vs_xml_writer *w);
/* The preferences in force, with BOINC's others at their defaults, as
 * get_global_prefs_working and get_state write them (gui_cfg_ops.c). */
void vs_client_gui_prefs_working(struct vs_client *c, struct vs_xml_writer *w);
/* The project op's <project_url> names, or -1 (gui_ops.c). */
long vs_client_gui_find_project(struct vs_client *c, const struct vs_xml_node *op,
                                struct vs_arena *a);
/* One <result> as get_results writes it (gui_ops.c). */
void vs_client_gui_write_result(struct vs_xml_writer *w, struct vs_client *c, size_t i);

/* ---- webui.c / webui_page.c: the web page on the GUI RPC port ---- */
/* Whether a connection's first bytes are an HTTP request (not a GUI RPC one). */
bool vs_client_webui_is_http(const char *in, size_t len);
/* Answers the HTTP request at the start of in[0, len) into out (the
 * connection is closed once it is sent): 0; VS_EBUSY when the request is
 * not all there yet; VS_ELIMIT when its head is too long (drop the
 * connection). remote: access from other hosts is allowed. */
int vs_client_webui_serve(struct vs_client *c, bool remote, const char *in, size_t len,
                          struct vs_buf *out);
/* The page's files: true and its bytes and type for "/", "/app.js", "/app.css". */
bool vs_client_webui_asset(const char *path, const char **out_data, size_t *out_len,
                           const char **out_type);

#endif
