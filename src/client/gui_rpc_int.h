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

#endif
