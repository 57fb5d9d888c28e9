/*
 * The GUI RPC ops that read and write the client's configuration, as the
 * Manager's Computing preferences dialog, its Options > Other options and
 * boinccmd use them (BOINC 7.20's shapes):
 *
 *   get_global_prefs_working   the preferences in force (<global_preferences>)
 *   get_global_prefs_file      global_prefs.xml (the project's)
 *   get_global_prefs_override  global_prefs_override.xml verbatim, or
 *                              <error>no prefs override file</error>
 *   set_global_prefs_override  writes it (empty: deletes it); obeyed at the
 *                              read_global_prefs_override that follows, as
 *                              in BOINC; the preferences volsched does not
 *                              obey are named in a message when set to
 *                              something else than BOINC's default
 *   get_cc_config / set_cc_config / read_cc_config   the same for cc_config.xml
 *   get_proxy_settings / set_proxy_settings   <proxy_info>, kept in
 *                              proxy_info.xml (0600: it may hold a password)
 *                              and used by every transfer at once (net.c)
 *   set_language               kept for this run
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "client/gui_rpc_int.h"
#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/str.h"
#include "volsched/xml.h"

#define ERR_XML_PARSE (-112) /* BOINC-COMPAT: lib/error_numbers.h */
#define ERR_FOPEN     (-108)

/* BOINC-COMPAT: GLOBAL_PREFS fields volsched does not obey, at BOINC's
 * defaults (lib/prefs.cpp) */
static const struct {
    const char *name;
    double def;
    bool integer; /* BOINC writes it with %d */
} unobeyed[] = {
    {"run_on_batteries", 0, true},
    {"battery_charge_min_pct", 90, false},
    {"battery_max_temperature", 40, false},
    {"run_if_user_active", 1, true},
    {"run_gpu_if_user_active", 0, true},
    {"idle_time_to_run", 3, false},
    {"suspend_if_no_recent_input", 0, false},
    {"suspend_cpu_usage", 25, false},
    {"start_hour", 0, false},
    {"end_hour", 0, false},
    {"net_start_hour", 0, false},
    {"net_end_hour", 0, false},
    {"confirm_before_connecting", 1, true},
    {"hangup_if_dialed", 0, true},
    {"dont_verify_images", 0, true},
    {"vm_max_used_pct", 75, false},
    {"ram_max_used_busy_pct", 50, false},
    {"ram_max_used_idle_pct", 90, false},
    {"max_bytes_sec_up", 0, false},
    {"max_bytes_sec_down", 0, false},
    {"daily_xfer_limit_mb", 0, false},
    {"daily_xfer_period_days", 0, true},
    {"network_wifi_only", 0, true},
};

/* Elements of a preferences file that carry no preference. */
static bool bookkeeping(const char *name)
{
    return strcmp(name, "mod_time") == 0 || strcmp(name, "source_project") == 0 ||
           strcmp(name, "source_scheduler") == 0 || strcmp(name, "venue") == 0 ||
           strcmp(name, "override_file_present") == 0;
}

/* The ones apply_global (prefs.c) reads. */
static const char *const obeyed[] = {"work_buf_min_days",
                                     "work_buf_additional_days",
                                     "cpu_scheduling_period_minutes",
                                     "leave_apps_in_memory",
                                     "max_ncpus_pct",
                                     "cpu_usage_limit",
                                     "disk_interval",
                                     "disk_max_used_gb",
                                     "disk_max_used_pct",
                                     "disk_min_free_gb"};

static bool file_exists(const struct vs_client *c, const char *name)
{
    char path[VS_CLIENT_PATH_MAX];
    return vs_client_path(c, path, sizeof(path), "%s", name) == 0 && access(path, F_OK) == 0;
}

void vs_client_gui_prefs_working(struct vs_client *c, struct vs_xml_writer *w)
{
    struct vs_buf b;
    vs_buf_init(&b, 64 * 1024);
    if (vs_client_prefs_xml(c, &b) == 0) {
        /* ours, then BOINC's others at their defaults, before the close tag */
        char *end = strstr(b.data, "</global_preferences>");
        if (end)
            vs_xml_raw_write(w, b.data, (size_t)(end - b.data));
        for (size_t i = 0; i < sizeof(unobeyed) / sizeof(unobeyed[0]); i++)
            if (unobeyed[i].integer)
                vs_xml_int(w, unobeyed[i].name, (int64_t)unobeyed[i].def);
            else
                vs_xml_double(w, unobeyed[i].name, unobeyed[i].def);
        vs_xml_double(w, "mod_time", 0);
        vs_xml_str(w, "source_project", "");
        if (file_exists(c, "global_prefs_override.xml"))
            vs_xml_raw_write(w, "<override_file_present/>\n", 25);
        vs_xml_raw_write(w, "</global_preferences>\n", 22);
    }
    vs_buf_cleanup(&b);
}

/* A file's content, trimmed, then a newline (BOINC's read_file_string +
 * strip_whitespace); false when it cannot be read. */
static bool w_file(const struct vs_client *c, const char *name, struct vs_xml_writer *w)
{
    char path[VS_CLIENT_PATH_MAX];
    struct vs_buf b;
    vs_buf_init(&b, 1u << 20);
    bool ok = vs_client_path(c, path, sizeof(path), "%s", name) == 0 &&
              vs_client_read_file(path, 1u << 20, &b) == 0;
    if (ok) {
        const char *s = b.data;
        size_t n = b.len;
        while (n && (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t'))
            s++, n--;
        while (n && (s[n - 1] == ' ' || s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == '\t'))
            n--;
        vs_xml_raw_write(w, s, n);
        vs_xml_raw_write(w, "\n", 1);
    }
    vs_buf_cleanup(&b);
    return ok;
}

/* Names, in a message, the preferences of g that volsched does not obey
 * and that differ from BOINC's default. */
static void say_unobeyed(struct vs_client *c, const struct vs_xml_node *g, struct vs_arena *a)
{
    char list[1024] = "";
    size_t len = 0;
    for (const struct vs_xml_node *n = g->child; n; n = n->next) {
        bool known = bookkeeping(n->name);
        for (size_t i = 0; !known && i < sizeof(obeyed) / sizeof(obeyed[0]); i++)
            known = strcmp(n->name, obeyed[i]) == 0;
        if (known)
            continue;
        const char *v = vs_xml_text_trim(n, a);
        double d = 0;
        bool dflt = false;
        for (size_t i = 0; i < sizeof(unobeyed) / sizeof(unobeyed[0]); i++)
            if (strcmp(n->name, unobeyed[i].name) == 0)
                dflt = vs_xml_get_double(n, &d) == 0 && fabs(d - unobeyed[i].def) < 1e-9;
        if (dflt)
            continue;
        int k = snprintf(list + len, sizeof(list) - len, "%s%s=%.32s", len ? ", " : "", n->name,
                         *v ? v : "(set)");
        if (k < 0 || (size_t)k >= sizeof(list) - len)
            break;
        len += (size_t)k;
    }
    if (len)
        vs_client_msg(c, -1, 2, "global_prefs_override.xml: not obeyed by volsched (ignored): %s",
                      list);
}

/* set_global_prefs_override and set_cc_config: the op's content is the new
 * file (empty: the file goes). BOINC-COMPAT: <success/>, or <status>N</status>. */
static void set_file(struct vs_client *c, const struct vs_xml_doc *doc,
                     const struct vs_xml_node *op, struct vs_arena *a, const char *file,
                     const char *root, struct vs_xml_writer *w)
{
    size_t n = 0;
    const char *in = vs_xml_inner_raw(doc, op, &n);
    while (n && (*in == ' ' || *in == '\n' || *in == '\r' || *in == '\t'))
        in++, n--;
    while (n && (in[n - 1] == ' ' || in[n - 1] == '\n' || in[n - 1] == '\r' || in[n - 1] == '\t'))
        n--;
    char path[VS_CLIENT_PATH_MAX];
    int status = 0;
    if (vs_client_path(c, path, sizeof(path), "%s", file) != 0) {
        status = ERR_FOPEN;
    } else if (n == 0) {
        if (unlink(path) != 0 && errno != ENOENT)
            status = ERR_FOPEN;
        else
            vs_client_msg(c, -1, 1, "%s removed by the GUI", file);
    } else {
        struct vs_xml_doc d;
        struct vs_xml_error xe;
        if (vs_xml_parse(in, n, NULL, 0, a, &d, &xe) != 0 || strcmp(d.root->name, root) != 0) {
            vs_client_msg(c, -1, 2, "%s from the GUI is not a <%s> document; not written", file,
                          root);
            status = ERR_XML_PARSE;
        } else {
            struct vs_buf b;
            vs_buf_init(&b, n + 2);
            if (vs_buf_append(&b, in, n) != 0 || vs_buf_puts(&b, "\n") != 0 ||
                vs_client_write_atomic(path, b.data, b.len, true) != 0)
                status = ERR_FOPEN;
            vs_buf_cleanup(&b);
            if (!status) {
                vs_client_msg(c, -1, 1, "%s written by the GUI", file);
                if (strcmp(root, "global_preferences") == 0)
                    say_unobeyed(c, d.root, a);
            }
        }
    }
    if (status) {
        char s[64];
        int k = snprintf(s, sizeof(s), "<status>%d</status>\n", status);
        vs_xml_raw_write(w, s, (size_t)k);
    } else {
        vs_xml_raw_write(w, "<success/>\n", 11);
    }
}

static void proxy_from(struct cl_proxy *px, const struct vs_xml_node *pi, struct vs_arena *a)
{
    memset(px, 0, sizeof(*px));
    px->use_http = vs_xml_child(pi, "use_http_proxy") != NULL;
    px->use_socks = vs_xml_child(pi, "use_socks_proxy") != NULL;
    px->use_http_auth = vs_xml_child(pi, "use_http_auth") != NULL;
    static const struct {
        const char *tag;
        size_t off, size;
    } strs[] = {
        {"http_server_name", offsetof(struct cl_proxy, http_server), 256},
        {"socks_server_name", offsetof(struct cl_proxy, socks_server), 256},
        {"http_user_name", offsetof(struct cl_proxy, http_user), 128},
        {"http_user_passwd", offsetof(struct cl_proxy, http_passwd), 128},
        {"socks5_user_name", offsetof(struct cl_proxy, socks5_user), 128},
        {"socks5_user_passwd", offsetof(struct cl_proxy, socks5_passwd), 128},
        {"no_proxy", offsetof(struct cl_proxy, no_proxy), 256},
    };
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
        if (vs_strlcpy((char *)px + strs[i].off, vs_xml_text_trim(vs_xml_child(pi, strs[i].tag), a),
                       strs[i].size)) {
            /* longer than BOINC keeps: cut */
        }
    int64_t port = 0;
    if (vs_xml_get_int64(vs_xml_child(pi, "http_server_port"), &port) == 0 && port > 0 &&
        port < 65536)
        px->http_port = (int)port;
    if (vs_xml_get_int64(vs_xml_child(pi, "socks_server_port"), &port) == 0 && port > 0 &&
        port < 65536)
        px->socks_port = (int)port;
}

static void w_proxy(const struct cl_proxy *px, struct vs_xml_writer *w)
{
    vs_xml_raw_write(w, "<proxy_info>\n", 13);
    if (px->use_http)
        vs_xml_flag(w, "use_http_proxy");
    if (px->use_socks)
        vs_xml_flag(w, "use_socks_proxy");
    if (px->use_http_auth)
        vs_xml_flag(w, "use_http_auth");
    vs_xml_str(w, "socks_server_name", px->socks_server);
    vs_xml_int(w, "socks_server_port", px->socks_port);
    vs_xml_str(w, "http_server_name", px->http_server);
    vs_xml_int(w, "http_server_port", px->http_port);
    vs_xml_str(w, "socks5_user_name", px->socks5_user);
    vs_xml_str(w, "socks5_user_passwd", px->socks5_passwd);
    vs_xml_int(w, "socks5_remote_dns", 1);
    vs_xml_str(w, "http_user_name", px->http_user);
    vs_xml_str(w, "http_user_passwd", px->http_passwd);
    vs_xml_str(w, "no_proxy", px->no_proxy);
    vs_xml_int(w, "no_autodetect", 0);
    vs_xml_raw_write(w, "</proxy_info>\n", 14);
}

void vs_client_proxy_read(struct vs_client *c)
{
    char path[VS_CLIENT_PATH_MAX];
    struct vs_buf b;
    vs_buf_init(&b, 64 * 1024);
    if (vs_client_path(c, path, sizeof(path), "proxy_info.xml") == 0 &&
        vs_client_read_file(path, 64 * 1024, &b) == 0) {
        struct vs_arena a;
        vs_arena_init(&a, 4096);
        struct vs_xml_doc d;
        struct vs_xml_error xe;
        if (vs_xml_parse(b.data, b.len, NULL, 0, &a, &d, &xe) == 0 &&
            strcmp(d.root->name, "proxy_info") == 0)
            proxy_from(&c->proxy, d.root, &a);
        else
            vs_client_msg(c, -1, 2, "proxy_info.xml: not a <proxy_info> document; ignored");
        vs_arena_cleanup(&a);
    }
    vs_buf_cleanup(&b);
}

static void set_proxy(struct vs_client *c, const struct vs_xml_node *op, struct vs_arena *a,
                      struct vs_xml_writer *w)
{
    const struct vs_xml_node *pi = vs_xml_child(op, "proxy_info");
    proxy_from(&c->proxy, pi ? pi : op, a);
    struct vs_buf b;
    vs_buf_init(&b, 64 * 1024);
    struct vs_xml_writer fw;
    vs_xml_writer_init(&fw, &b);
    w_proxy(&c->proxy, &fw);
    char path[VS_CLIENT_PATH_MAX];
    if (vs_xml_writer_error(&fw) != 0 ||
        vs_client_path(c, path, sizeof(path), "proxy_info.xml") != 0 ||
        vs_client_write_private(path, b.data, b.len, true) != 0)
        vs_client_msg(c, -1, 3, "Couldn't write proxy_info.xml: the proxy holds for this run only");
    vs_buf_cleanup(&b);
    const struct cl_proxy *px = &c->proxy;
    if (px->use_http && px->http_server[0])
        vs_client_msg(c, -1, 1, "Using HTTP proxy %s:%d", px->http_server, px->http_port);
    else if (px->use_socks && px->socks_server[0])
        vs_client_msg(c, -1, 1, "Using SOCKS proxy %s:%d", px->socks_server, px->socks_port);
    else
        vs_client_msg(c, -1, 1, "Not using a proxy");
    vs_xml_raw_write(w, "<success/>\n", 11);
}

bool vs_client_gui_cfg_op(struct vs_client *c, const struct vs_xml_doc *doc,
                          const struct vs_xml_node *op, struct vs_arena *a, struct vs_xml_writer *w)
{
    const char *name = op->name;
    if (strcmp(name, "get_global_prefs_working") == 0) {
        vs_client_gui_prefs_working(c, w);
    } else if (strcmp(name, "get_global_prefs_file") == 0) {
        if (!w_file(c, "global_prefs.xml", w))
            vs_xml_raw_write(w, "<error>-108</error>\n", 20); /* BOINC-COMPAT: ERR_FOPEN */
    } else if (strcmp(name, "get_global_prefs_override") == 0) {
        if (!w_file(c, "global_prefs_override.xml", w))
            vs_xml_raw_write(w, "<error>no prefs override file</error>\n", 38);
    } else if (strcmp(name, "set_global_prefs_override") == 0) {
        set_file(c, doc, op, a, "global_prefs_override.xml", "global_preferences", w);
    } else if (strcmp(name, "get_cc_config") == 0) {
        (void)w_file(c, "cc_config.xml", w); /* BOINC-COMPAT: nothing when there is none */
    } else if (strcmp(name, "set_cc_config") == 0) {
        set_file(c, doc, op, a, "cc_config.xml", "cc_config", w);
    } else if (strcmp(name, "read_cc_config") == 0 ||
               strcmp(name, "read_global_prefs_override") == 0) {
        vs_client_prefs_read(c);
        vs_client_msg(c, -1, 1, "Re-read %s", name + 5);
        c->resched = true;
        vs_xml_raw_write(w, "<success/>\n", 11);
    } else if (strcmp(name, "get_proxy_settings") == 0) {
        w_proxy(&c->proxy, w);
    } else if (strcmp(name, "set_proxy_settings") == 0) {
        set_proxy(c, op, a, w);
    } else if (strcmp(name, "set_language") == 0) {
        const struct vs_xml_node *l = vs_xml_child(op, "language");
        if (!l) {
            vs_xml_raw_write(w, "<error>no language found</error>\n", 33);
        } else {
            if (vs_strlcpy(c->language, vs_xml_text_trim(l, a), sizeof(c->language))) {
                /* no language name is that long: cut */
            }
            vs_xml_raw_write(w, "<success/>\n", 11);
        }
    } else {
        return false;
    }
    return true;
}
