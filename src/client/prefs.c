/*
 * Preferences: global_prefs.xml (the project's, as last received; its
 * <venue> section for the host's venue at that project in place of its top
 * level, as BOINC's client), then global_prefs_override.xml element by
 * element on top, then cc_config.xml.
 * BOINC's defaults (lib/prefs.cpp GLOBAL_PREFS::defaults()). A malformed
 * file is reported and ignored: the client goes on with what it had.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/prefs.h"
#include "volsched/xml.h"

void vs_client_prefs_default(struct cl_prefs *p)
{
    memset(p, 0, sizeof(*p));
    /* BOINC-COMPAT: the 7.20 defaults */
    p->work_buf_min_days = 0.1;
    p->work_buf_additional_days = 0.5;
    p->cpu_scheduling_period_minutes = 60;
    p->leave_apps_in_memory = false;
    p->max_ncpus_pct = 100;
    p->cpu_usage_limit = 100;
    p->disk_interval = 60;
    p->disk_max_used_gb = 0; /* off */
    p->disk_max_used_pct = 90;
    p->disk_min_free_gb = 0.1;
    p->sched_retry_delay_min = 60;
    p->sched_retry_delay_max = 4 * 3600;
    p->pers_retry_delay_min = 60;
    p->pers_retry_delay_max = 4 * 3600;
    p->quit_timeout = 60; /* BOINC-COMPAT: QUIT_TIMEOUT, ABORT_TIMEOUT */
    /* BOINC-COMPAT: CC_CONFIG::defaults() */
    p->max_file_xfers = 8;
    p->max_file_xfers_per_project = 2;
    p->http_transfer_timeout_bps = 10;
    p->http_transfer_timeout = 300;
}

static void set_num(const struct vs_xml_node *root, const char *name, double min, double max,
                    double *out, struct vs_client *c, const char *file)
{
    const struct vs_xml_node *n = vs_xml_child(root, name);
    if (!n)
        return;
    double v;
    if (vs_xml_get_double(n, &v) != 0 || !isfinite(v) || v < min || v > max) {
        vs_client_msg(c, -1, 2, "%s: <%s> must be a number in [%g, %g]; ignored", file, name, min,
                      max);
        return;
    }
    *out = v;
}

static void set_bool(const struct vs_xml_node *root, const char *name, bool *out)
{
    const struct vs_xml_node *n = vs_xml_child(root, name);
    bool v;
    if (n && vs_xml_get_bool(n, &v) == 0)
        *out = v;
}

/* Preference i of g into *out if it is given and in [min, max]; else a
 * message (when given) and *out unchanged. */
static void take_num(const struct vs_gprefs *g, enum vs_gpref i, double min, double max,
                     double *out, struct vs_client *c, const char *file)
{
    if (!(g->have >> i & 1u))
        return;
    double v = g->v[i];
    if (!vs_gprefs_ok(g, i) || v < min || v > max) {
        vs_client_msg(c, -1, 2, "%s: <%s> must be a number in [%g, %g]; ignored", file,
                      vs_gpref_name(i), min, max);
        return;
    }
    *out = v;
}

/* The host's venue at the project the global prefs came from ("": none). */
static const char *prefs_venue(const struct vs_client *c)
{
    for (size_t i = 0; i < c->n_projects; i++)
        if (c->projects[i].prefs_source && c->projects[i].host_venue)
            return c->projects[i].host_venue;
    return "";
}

/* The preferences of root (venue: the host's, whose section applies when
 * root has one; "" for the override file, which has none). */
static void apply_global(struct vs_client *c, const struct vs_xml_node *root, const char *file,
                         const char *venue)
{
    struct vs_gprefs g;
    bool found = false;
    vs_gprefs_from_node_venue(root, venue, &g, &found);
    if (found)
        vs_client_msg(c, -1, 1, "%s: using the preferences of venue \"%s\"", file, venue);
    struct cl_prefs *p = &c->prefs;
    take_num(&g, VS_GP_WORK_BUF_MIN_DAYS, 0, 10, &p->work_buf_min_days, c, file);
    take_num(&g, VS_GP_WORK_BUF_ADDITIONAL_DAYS, 0, 10, &p->work_buf_additional_days, c, file);
    take_num(&g, VS_GP_CPU_SCHEDULING_PERIOD_MINUTES, 0.001, 1e4, &p->cpu_scheduling_period_minutes,
             c, file);
    if (vs_gprefs_ok(&g, VS_GP_LEAVE_APPS_IN_MEMORY))
        p->leave_apps_in_memory = g.v[VS_GP_LEAVE_APPS_IN_MEMORY] != 0;
    take_num(&g, VS_GP_MAX_NCPUS_PCT, 0, 100, &p->max_ncpus_pct, c, file);
    take_num(&g, VS_GP_CPU_USAGE_LIMIT, 0, 100, &p->cpu_usage_limit, c, file);
    take_num(&g, VS_GP_DISK_INTERVAL, 0, 1e6, &p->disk_interval, c, file);
    /* BOINC-COMPAT: the disk limits (0 turns the first two off) */
    take_num(&g, VS_GP_DISK_MAX_USED_GB, 0, 1e9, &p->disk_max_used_gb, c, file);
    take_num(&g, VS_GP_DISK_MAX_USED_PCT, 0, 100, &p->disk_max_used_pct, c, file);
    take_num(&g, VS_GP_DISK_MIN_FREE_GB, 0, 1e9, &p->disk_min_free_gb, c, file);
}

/* Parses one file; returns false when it is missing. */
static bool read_xml(struct vs_client *c, const char *name, const char *root_name,
                     struct vs_arena *a, struct vs_buf *b, const struct vs_xml_node **out_root)
{
    char path[VS_CLIENT_PATH_MAX];
    if (vs_client_path(c, path, sizeof(path), "%s", name) ||
        vs_client_read_file(path, 1u << 20, b) != 0)
        return false;
    struct vs_xml_doc doc;
    struct vs_xml_error xe;
    if (vs_xml_parse(b->data, b->len, NULL, 0, a, &doc, &xe) != 0) {
        vs_client_msg(c, -1, 2, "%s: %s; file ignored", name, xe.msg);
        return false;
    }
    if (strcmp(doc.root->name, root_name) != 0) {
        vs_client_msg(c, -1, 2, "%s: the root element is <%s>, not <%s>; file ignored", name,
                      doc.root->name, root_name);
        return false;
    }
    *out_root = doc.root;
    return true;
}

void vs_client_prefs_read(struct vs_client *c)
{
    struct cl_prefs old = c->prefs;
    vs_client_prefs_default(&c->prefs);
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_buf b;
    vs_buf_init(&b, 1u << 20);
    const struct vs_xml_node *root;
    if (read_xml(c, "global_prefs.xml", "global_preferences", &a, &b, &root))
        apply_global(c, root, "global_prefs.xml", prefs_venue(c));
    if (read_xml(c, "global_prefs_override.xml", "global_preferences", &a, &b, &root))
        apply_global(c, root, "global_prefs_override.xml", "");
    if (read_xml(c, "cc_config.xml", "cc_config", &a, &b, &root)) {
        const struct vs_xml_node *o = vs_xml_child(root, "options");
        double ncpus = 0;
        set_num(o, "ncpus", -1, 4096, &ncpus, c, "cc_config.xml");
        c->prefs.ncpus = (int)ncpus;
        set_bool(o, "report_results_immediately", &c->prefs.report_results_immediately);
        set_bool(o, "no_priority_change", &c->prefs.no_priority_change);
        set_bool(o, "allow_remote_gui_rpc", &c->prefs.allow_remote_gui_rpc);
        /* BOINC's command-line retry options, as cc_config options here */
        set_num(o, "sched_retry_delay_min", 1, 1e6, &c->prefs.sched_retry_delay_min, c,
                "cc_config.xml");
        set_num(o, "sched_retry_delay_max", 1, 1e7, &c->prefs.sched_retry_delay_max, c,
                "cc_config.xml");
        set_num(o, "pers_retry_delay_min", 1, 1e6, &c->prefs.pers_retry_delay_min, c,
                "cc_config.xml");
        set_num(o, "pers_retry_delay_max", 1, 1e7, &c->prefs.pers_retry_delay_max, c,
                "cc_config.xml");
        /* volsched's: BOINC waits a fixed 60 s after <quit/> or <abort/> */
        set_num(o, "quit_timeout", 1, 3600, &c->prefs.quit_timeout, c, "cc_config.xml");
        /* transfers: how many at once, and how slow one may be (0 B/s: no limit) */
        double n = c->prefs.max_file_xfers;
        set_num(o, "max_file_xfers", 1, 1000, &n, c, "cc_config.xml");
        c->prefs.max_file_xfers = (int)n;
        n = c->prefs.max_file_xfers_per_project;
        set_num(o, "max_file_xfers_per_project", 1, 1000, &n, c, "cc_config.xml");
        c->prefs.max_file_xfers_per_project = (int)n;
        set_num(o, "http_transfer_timeout_bps", 0, 1e9, &c->prefs.http_transfer_timeout_bps, c,
                "cc_config.xml");
        set_num(o, "http_transfer_timeout", 1, 86400, &c->prefs.http_transfer_timeout, c,
                "cc_config.xml");
    }
    vs_buf_cleanup(&b);
    vs_arena_cleanup(&a);
    vs_client_app_config_read(c);
    if (memcmp(&old, &c->prefs, sizeof(old)) != 0)
        c->resched = true;
}

int vs_client_prefs_xml(const struct vs_client *c, struct vs_buf *out)
{
    const struct cl_prefs *p = &c->prefs;
    struct vs_xml_writer w;
    vs_xml_writer_init(&w, out);
    vs_xml_open(&w, "global_preferences");
    vs_xml_double(&w, "work_buf_min_days", p->work_buf_min_days);
    vs_xml_double(&w, "work_buf_additional_days", p->work_buf_additional_days);
    vs_xml_double(&w, "cpu_scheduling_period_minutes", p->cpu_scheduling_period_minutes);
    vs_xml_int(&w, "leave_apps_in_memory", p->leave_apps_in_memory ? 1 : 0);
    vs_xml_double(&w, "max_ncpus_pct", p->max_ncpus_pct);
    vs_xml_double(&w, "cpu_usage_limit", p->cpu_usage_limit);
    vs_xml_double(&w, "disk_interval", p->disk_interval);
    vs_xml_double(&w, "disk_max_used_gb", p->disk_max_used_gb);
    vs_xml_double(&w, "disk_max_used_pct", p->disk_max_used_pct);
    vs_xml_double(&w, "disk_min_free_gb", p->disk_min_free_gb);
    vs_xml_close(&w);
    return vs_xml_writer_error(&w);
}
