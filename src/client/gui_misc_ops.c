/*
 * The GUI RPC ops of the Manager's other views and dialogs, in BOINC 7.20's
 * shapes (client/gui_rpc_server_ops.cpp):
 *
 *   acct_mgr_info            no account manager: empty URL and name (the
 *                            Simple view then offers "Add project")
 *   acct_mgr_rpc(_poll)      refused: volsched does not talk to account
 *                            managers (message + error, poll error_num -150)
 *   get_statistics           statistics_*.xml per project (stats.c)
 *   get_daily_xfer_history   daily_xfer_history.xml (stats.c)
 *   get_all_projects_list    the local all_projects_list.xml (we never
 *                            fetch BOINC's), <projects/> when there is none
 *   get_newer_version        no version check: empty
 *   get_screensaver_tasks    the suspend reason and the running tasks
 *   get_project_init_status  no project_init.xml: empty
 *   project_attach_poll      the last attach's outcome (error_num 0)
 *   retry_file_transfer      the transfer is due now
 *   set_gpu_mode             accepted, nothing to do: no GPU is used
 *   get_app_config           the project's app_config.xml verbatim
 *   reset_host_info          the host measured again (no benchmark)
 *   set_host_info            accepted; the product name is not used
 *   run_graphics_app         BOINC's Linux answer: Mac OS only
 *
 * and the reply to an op nobody knows, logged once per op name.
 */
#include <stdio.h>
#include <string.h>

#include "client/gui_rpc_int.h"
#include "volsched/client.h"
#include "volsched/str.h"
#include "volsched/xml.h"

#define ERR_NOT_IMPLEMENTED (-150) /* BOINC-COMPAT: lib/error_numbers.h */

static void w_all_projects(struct vs_client *c, struct vs_xml_writer *w)
{
    char path[VS_CLIENT_PATH_MAX];
    struct vs_buf b;
    vs_buf_init(&b, 8u << 20);
    if (vs_client_path(c, path, sizeof(path), "all_projects_list.xml") == 0 &&
        vs_client_read_file(path, 8u << 20, &b) == 0) {
        /* BOINC-COMPAT: from "<projects" on, trimmed, or <projects/> */
        const char *q = strstr(b.data, "<projects");
        if (q) {
            size_t n = strlen(q);
            while (n && (q[n - 1] == '\n' || q[n - 1] == ' ' || q[n - 1] == '\r'))
                n--;
            for (size_t i = 0; i < n; i++)
                if (q[i] == 3)
                    n = i; /* byte 3 would end the reply */
            vs_xml_raw_write(w, q, n);
            vs_xml_raw_write(w, "\n", 1);
        } else {
            vs_xml_raw_write(w, "<projects/>\n", 12);
        }
    }
    vs_buf_cleanup(&b);
}

static void w_screensaver(struct vs_client *c, struct vs_xml_writer *w)
{
    vs_xml_raw_write(w, "<handle_get_screensaver_tasks>\n", 31);
    /* BOINC-COMPAT: SUSPEND_REASON_USER_REQ = 4 */
    vs_xml_int(w, "suspend_reason", vs_client_can_compute(c) ? 0 : 4);
    for (size_t i = 0; i < c->n_results; i++)
        if (c->results[i].slot >= 0 && c->results[i].ctask == VS_CTASK_RUNNING)
            vs_client_gui_write_result(w, c, i);
    vs_xml_raw_write(w, "</handle_get_screensaver_tasks>\n", 32);
}

static long find_file(struct vs_client *c, const struct vs_xml_node *op, struct vs_arena *a)
{
    long p = vs_client_gui_find_project(c, op, a);
    const char *name = vs_xml_text_trim(vs_xml_child(op, "filename"), a);
    return p < 0 ? -1 : vs_client_find_file(c, (size_t)p, name);
}

static void w_app_config(struct vs_client *c, const struct vs_xml_node *op, struct vs_arena *a,
                         struct vs_xml_writer *w)
{
    const char *url = vs_xml_text_trim(vs_xml_child(op, "url"), a);
    char canon[1100], dir[VS_CLIENT_PATH_MAX], path[VS_CLIENT_PATH_MAX + 32];
    long p =
        vs_client_canon_url(url, canon, sizeof(canon)) == 0 ? vs_client_find_project(c, canon) : -1;
    if (p < 0 || vs_client_project_dir(c, (size_t)p, dir, sizeof(dir)) != 0) {
        vs_xml_raw_write(w, "<error>no such project</error>", 30);
        return;
    }
    snprintf(path, sizeof(path), "%s/app_config.xml", dir);
    struct vs_buf b;
    vs_buf_init(&b, 1u << 20);
    if (vs_client_read_file(path, 1u << 20, &b) != 0) {
        vs_xml_raw_write(w, "<error>app_config.xml not found</error>\n", 40);
    } else {
        size_t n = b.len;
        while (n && (b.data[n - 1] == '\n' || b.data[n - 1] == ' ' || b.data[n - 1] == '\r'))
            n--;
        vs_xml_raw_write(w, b.data, strnlen(b.data, n));
        vs_xml_raw_write(w, "\n", 1);
    }
    vs_buf_cleanup(&b);
}

bool vs_client_gui_misc_op(struct vs_client *c, const struct vs_xml_doc *doc,
                           const struct vs_xml_node *op, struct vs_arena *a,
                           struct vs_xml_writer *w)
{
    (void)doc;
    const char *name = op->name;
    if (strcmp(name, "acct_mgr_info") == 0) {
        vs_xml_raw_write(w, "<acct_mgr_info>\n", 16);
        vs_xml_str(w, "acct_mgr_url", "");
        vs_xml_str(w, "acct_mgr_name", "");
        vs_xml_raw_write(w, "</acct_mgr_info>\n", 17);
    } else if (strcmp(name, "acct_mgr_rpc") == 0) {
        const char *url = vs_xml_text_trim(vs_xml_child(op, "url"), a);
        bool cfg = false;
        if (vs_xml_child(op, "use_config_file") &&
            vs_xml_get_bool(vs_xml_child(op, "use_config_file"), &cfg) != 0)
            cfg = false;
        if (cfg) {
            /* BOINC-COMPAT: a sync without an account manager */
            vs_client_msg(c, -1, 3, "Not using account manager");
            vs_xml_raw_write(w, "<error>bad arg</error>\n", 23);
        } else if (!*url) {
            /* BOINC-COMPAT: what BOINC answers a detach (empty URL) when it has no AM */
            vs_xml_raw_write(w, "<success/>\n", 11);
        } else {
            vs_client_msg(c, -1, 2,
                          "Account manager %.200s: volsched does not use account managers; "
                          "attach to its projects one by one",
                          url);
            vs_xml_raw_write(w, "<error>account managers are not supported</error>\n", 50);
        }
    } else if (strcmp(name, "acct_mgr_rpc_poll") == 0) {
        char s[120];
        int n = snprintf(s, sizeof(s),
                         "<acct_mgr_rpc_reply>\n    <error_num>%d</error_num>\n"
                         "</acct_mgr_rpc_reply>\n",
                         ERR_NOT_IMPLEMENTED);
        vs_xml_raw_write(w, s, (size_t)n);
    } else if (strcmp(name, "get_statistics") == 0) {
        vs_client_stats_xml(c, w);
    } else if (strcmp(name, "get_daily_xfer_history") == 0) {
        vs_client_xfer_history_xml(c, w);
    } else if (strcmp(name, "get_all_projects_list") == 0) {
        w_all_projects(c, w);
    } else if (strcmp(name, "get_newer_version") == 0) {
        vs_xml_raw_write(w, "<newer_version></newer_version>\n<download_url></download_url>\n", 62);
    } else if (strcmp(name, "get_screensaver_tasks") == 0) {
        w_screensaver(c, w);
    } else if (strcmp(name, "get_project_init_status") == 0) {
        vs_xml_raw_write(w, "<get_project_init_status>\n    <url></url>\n    <name></name>\n", 60);
        vs_xml_raw_write(w, "</get_project_init_status>\n", 27);
    } else if (strcmp(name, "project_attach_poll") == 0) {
        /* BOINC-COMPAT: attach is synchronous here; its errors are messages */
        vs_xml_raw_write(w, "<project_attach_reply>\n    <error_num>0</error_num>\n", 52);
        vs_xml_raw_write(w, "</project_attach_reply>\n", 24);
    } else if (strcmp(name, "retry_file_transfer") == 0 ||
               strcmp(name, "abort_file_transfer") == 0) {
        long f = find_file(c, op, a);
        if (f < 0) {
            vs_xml_raw_write(w, "<error>No such file</error>\n", 28);
        } else if (name[0] == 'r') {
            c->files[f].next_try = 0;
            vs_client_msg(c, (long)c->files[f].project, 1, "retry of %s asked by user",
                          c->files[f].name);
            vs_xml_raw_write(w, "<success/>\n", 11);
        } else {
            vs_client_msg(c, (long)c->files[f].project, 2,
                          "abort of the transfer of %s asked by user: not supported by "
                          "volsched (abort its task instead)",
                          c->files[f].name);
            vs_xml_raw_write(w, "<error>not supported; abort the task</error>\n", 45);
        }
    } else if (strcmp(name, "set_gpu_mode") == 0) {
        vs_xml_raw_write(w, "<success/>\n", 11);
    } else if (strcmp(name, "get_app_config") == 0) {
        w_app_config(c, op, a, w);
    } else if (strcmp(name, "reset_host_info") == 0) {
        vs_client_host_measure(c, false);
        c->resched = true;
        vs_xml_raw_write(w, "<success/>\n", 11);
    } else if (strcmp(name, "set_host_info") == 0) {
        if (!vs_xml_child(op, "host_info")) {
            vs_xml_raw_write(w, "<error>Missing host_info</error>\n", 33);
        } else {
            vs_client_msg(c, -1, 1, "set_host_info: the product name is not used by volsched");
            vs_xml_raw_write(w, "<success/>\n", 11);
        }
    } else if (strcmp(name, "run_graphics_app") == 0) {
        static const char mac[] =
            "<error>run_graphics_app RPC is currently available only on Mac OS</error>\n";
        vs_xml_raw_write(w, mac, sizeof(mac) - 1);
    } else {
        return false;
    }
    return true;
}

void vs_client_gui_unknown(struct vs_client *c, const char *name, struct vs_xml_writer *w)
{
    char err[200];
    int n = snprintf(err, sizeof(err), "<error>unrecognized op: %.100s</error>\n", name);
    vs_xml_raw_write(w, err, (size_t)n);
    for (size_t i = 0; i < c->n_unknown_ops; i++)
        if (strncmp(c->unknown_ops[i], name, sizeof(c->unknown_ops[0]) - 1) == 0)
            return;
    if (c->n_unknown_ops < sizeof(c->unknown_ops) / sizeof(c->unknown_ops[0])) {
        if (vs_strlcpy(c->unknown_ops[c->n_unknown_ops++], name, sizeof(c->unknown_ops[0]))) {
            /* a long name is kept cut: it still matches itself */
        }
        vs_client_msg(c, -1, 1, "GUI RPC: unrecognized op %.100s (not supported by volsched)",
                      name);
    }
}
