/*
 * What the client keeps per day, in BOINC 7.20's files and shapes:
 *
 * - statistics_<escaped URL>.xml: a project's user and host credit, total
 *   and average, one <daily_statistics> per UTC day, updated after every
 *   scheduler reply and trimmed to the last 30 days (BOINC's default
 *   save_stats_days), the oldest kept record moved up to the cut-off; the
 *   Manager's Statistics view draws them (GUI RPC get_statistics).
 * - daily_xfer_history.xml: bytes uploaded and downloaded per day (local
 *   days since 1970, as BOINC counts them), a year kept (GUI RPC
 *   get_daily_xfer_history, boinccmd --get_daily_xfer_history).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/xml.h"

#define STATS_KEEP_DAYS 30  /* BOINC-COMPAT: cc_config save_stats_days default */
#define XFER_KEEP_DAYS  365 /* BOINC-COMPAT: DAILY_XFER_HISTORY::init drops older */
#define DAY             86400.0

static double today_utc(double now)
{
    return floor(now / DAY) * DAY;
}

static int today_local(const struct vs_client *c)
{
    return (int)floor((c->now + c->host.timezone) / DAY);
}

static int stats_path(const struct vs_client *c, size_t p, char *out, size_t size)
{
    char esc[512];
    vs_client_escape_url(c->projects[p].master_url, esc, sizeof(esc));
    return vs_client_path(c, out, size, "statistics_%s.xml", esc);
}

static double num(const struct vs_xml_node *n, const char *name)
{
    double v = 0;
    if (vs_xml_get_double(vs_xml_child(n, name), &v) != 0 || !isfinite(v))
        v = 0;
    return v;
}

static void parse_doc(struct vs_client *c, const char *name, const char *root,
                      void (*each)(struct vs_client *, const struct vs_xml_node *, void *),
                      void *ud)
{
    char path[VS_CLIENT_PATH_MAX];
    struct vs_buf b;
    vs_buf_init(&b, 4u << 20);
    if (vs_client_path(c, path, sizeof(path), "%s", name) != 0 ||
        vs_client_read_file(path, 4u << 20, &b) != 0) {
        vs_buf_cleanup(&b);
        return;
    }
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_xml_doc doc;
    struct vs_xml_error xe;
    if (vs_xml_parse(b.data, b.len, NULL, 0, &a, &doc, &xe) != 0 ||
        strcmp(doc.root->name, root) != 0)
        vs_client_msg(c, -1, 3, "Couldn't parse %s; ignored", name);
    else
        each(c, doc.root, ud);
    vs_arena_cleanup(&a);
    vs_buf_cleanup(&b);
}

static void add_stats(struct vs_client *c, const struct vs_xml_node *root, void *ud)
{
    struct cl_project *pr = &c->projects[*(size_t *)ud];
    for (const struct vs_xml_node *d = vs_xml_child(root, "daily_statistics"); d;
         d = vs_xml_next_same(d)) {
        if (pr->n_stats >= 4 * STATS_KEEP_DAYS)
            break;
        pr->stats = vs_xreallocarray(pr->stats, pr->n_stats + 1, sizeof(*pr->stats));
        struct cl_daily_stats *s = &pr->stats[pr->n_stats++];
        s->day = num(d, "day");
        s->user_total_credit = num(d, "user_total_credit");
        s->user_expavg_credit = num(d, "user_expavg_credit");
        s->host_total_credit = num(d, "host_total_credit");
        s->host_expavg_credit = num(d, "host_expavg_credit");
    }
}

static void add_xfers(struct vs_client *c, const struct vs_xml_node *root, void *ud)
{
    (void)ud;
    int today = today_local(c);
    for (const struct vs_xml_node *d = vs_xml_child(root, "dx"); d; d = vs_xml_next_same(d)) {
        int64_t when = 0;
        if (vs_xml_get_int64(vs_xml_child(d, "when"), &when) != 0 ||
            today - when >= XFER_KEEP_DAYS || when > today || c->n_xfers >= XFER_KEEP_DAYS)
            continue;
        c->xfers = vs_xreallocarray(c->xfers, c->n_xfers + 1, sizeof(*c->xfers));
        struct cl_daily_xfer *x = &c->xfers[c->n_xfers++];
        x->when = (int)when;
        x->up = num(d, "up");
        x->down = num(d, "down");
    }
}

void vs_client_stats_read(struct vs_client *c)
{
    c->now = c->now > 0 ? c->now : vs_client_now();
    for (size_t p = 0; p < c->n_projects; p++) {
        char path[VS_CLIENT_PATH_MAX];
        if (stats_path(c, p, path, sizeof(path)) != 0)
            continue;
        const char *base = strrchr(path, '/') + 1;
        vs_free(c->projects[p].stats);
        c->projects[p].stats = NULL;
        c->projects[p].n_stats = 0;
        parse_doc(c, base, "project_statistics", add_stats, &p);
    }
    vs_free(c->xfers);
    c->xfers = NULL;
    c->n_xfers = 0;
    parse_doc(c, "daily_xfer_history.xml", "daily_xfers", add_xfers, NULL);
}

/* BOINC-COMPAT: PROJECT::trim_statistics: records older than the cut-off go,
 * the newest of them moved up to it (the graph starts there). */
static void trim(struct cl_project *pr, double now)
{
    double cutoff = today_utc(now) - STATS_KEEP_DAYS * DAY;
    size_t drop = 0;
    while (drop + 1 < pr->n_stats && pr->stats[drop + 1].day <= cutoff)
        drop++;
    if (drop) {
        memmove(pr->stats, pr->stats + drop, (pr->n_stats - drop) * sizeof(*pr->stats));
        pr->n_stats -= drop;
    }
    if (pr->n_stats && pr->stats[0].day < cutoff)
        pr->stats[0].day = cutoff;
}

static void stats_write(struct vs_client *c, size_t p)
{
    const struct cl_project *pr = &c->projects[p];
    struct vs_buf b;
    vs_buf_init(&b, 1u << 20);
    struct vs_xml_writer w;
    vs_xml_writer_init(&w, &b);
    vs_xml_open(&w, "project_statistics");
    vs_xml_str(&w, "master_url", pr->master_url);
    for (size_t i = 0; i < pr->n_stats; i++) {
        const struct cl_daily_stats *s = &pr->stats[i];
        vs_xml_open(&w, "daily_statistics");
        vs_xml_double(&w, "day", s->day);
        vs_xml_double(&w, "user_total_credit", s->user_total_credit);
        vs_xml_double(&w, "user_expavg_credit", s->user_expavg_credit);
        vs_xml_double(&w, "host_total_credit", s->host_total_credit);
        vs_xml_double(&w, "host_expavg_credit", s->host_expavg_credit);
        vs_xml_close(&w);
    }
    vs_xml_close(&w);
    char path[VS_CLIENT_PATH_MAX];
    int rc = vs_xml_writer_error(&w);
    if (rc == 0)
        rc = stats_path(c, p, path, sizeof(path));
    if (rc == 0)
        rc = vs_client_write_atomic(path, b.data, b.len, false);
    if (rc != 0)
        vs_client_msg(c, (long)p, 3, "Couldn't write its statistics file: %s", vs_strerror(rc));
    vs_buf_cleanup(&b);
}

void vs_client_stats_update(struct vs_client *c, size_t p)
{
    struct cl_project *pr = &c->projects[p];
    double day = today_utc(c->now);
    if (pr->n_stats == 0 || pr->stats[pr->n_stats - 1].day != day) {
        trim(pr, c->now);
        pr->stats = vs_xreallocarray(pr->stats, pr->n_stats + 1, sizeof(*pr->stats));
        pr->n_stats++;
    }
    struct cl_daily_stats *s = &pr->stats[pr->n_stats - 1];
    s->day = day;
    s->user_total_credit = pr->user_total_credit;
    s->user_expavg_credit = pr->user_expavg_credit;
    s->host_total_credit = pr->host_total_credit;
    s->host_expavg_credit = pr->host_expavg_credit;
    stats_write(c, p);
}

void vs_client_stats_xml(const struct vs_client *c, struct vs_xml_writer *w)
{
    /* BOINC-COMPAT: each element on its own line, as 7.20 writes them */
    vs_xml_raw_write(w, "<statistics>\n", 13);
    for (size_t p = 0; p < c->n_projects; p++) {
        const struct cl_project *pr = &c->projects[p];
        vs_xml_raw_write(w, "<project_statistics>\n", 21);
        vs_xml_str(w, "master_url", pr->master_url);
        double cutoff = today_utc(c->now) - STATS_KEEP_DAYS * DAY;
        for (size_t i = 0; i < pr->n_stats; i++) {
            const struct cl_daily_stats *s = &pr->stats[i];
            if (s->day < cutoff && i + 1 < pr->n_stats && pr->stats[i + 1].day <= cutoff)
                continue; /* trimmed at the next update */
            vs_xml_raw_write(w, "<daily_statistics>\n", 19);
            vs_xml_double(w, "day", s->day < cutoff ? cutoff : s->day);
            vs_xml_double(w, "user_total_credit", s->user_total_credit);
            vs_xml_double(w, "user_expavg_credit", s->user_expavg_credit);
            vs_xml_double(w, "host_total_credit", s->host_total_credit);
            vs_xml_double(w, "host_expavg_credit", s->host_expavg_credit);
            vs_xml_raw_write(w, "</daily_statistics>\n", 20);
        }
        vs_xml_raw_write(w, "</project_statistics>\n", 22);
    }
    vs_xml_raw_write(w, "</statistics>\n", 14);
}

void vs_client_xfer_add(struct vs_client *c, double up, double down)
{
    if (!(up > 0) && !(down > 0))
        return;
    int today = today_local(c);
    struct cl_daily_xfer *x = NULL;
    for (size_t i = 0; i < c->n_xfers && !x; i++)
        if (c->xfers[i].when == today)
            x = &c->xfers[i];
    if (!x) {
        if (c->n_xfers >= XFER_KEEP_DAYS) { /* the oldest goes */
            size_t old = 0;
            for (size_t i = 1; i < c->n_xfers; i++)
                if (c->xfers[i].when < c->xfers[old].when)
                    old = i;
            c->xfers[old] = c->xfers[--c->n_xfers];
        }
        c->xfers = vs_xreallocarray(c->xfers, c->n_xfers + 1, sizeof(*c->xfers));
        x = &c->xfers[c->n_xfers++];
        memset(x, 0, sizeof(*x));
        x->when = today;
    }
    x->up += up > 0 ? up : 0;
    x->down += down > 0 ? down : 0;
    c->xfers_dirty = true;
}

void vs_client_xfer_history_xml(const struct vs_client *c, struct vs_xml_writer *w)
{
    vs_xml_raw_write(w, "<daily_xfers>\n", 14);
    for (size_t i = 0; i < c->n_xfers; i++) {
        vs_xml_raw_write(w, "<dx>\n", 5);
        vs_xml_int(w, "when", c->xfers[i].when);
        vs_xml_double(w, "up", c->xfers[i].up);
        vs_xml_double(w, "down", c->xfers[i].down);
        vs_xml_raw_write(w, "</dx>\n", 6);
    }
    vs_xml_raw_write(w, "</daily_xfers>\n", 15);
}

void vs_client_xfer_history_write(struct vs_client *c)
{
    if (!c->xfers_dirty)
        return;
    struct vs_buf b;
    vs_buf_init(&b, 1u << 20);
    struct vs_xml_writer w;
    vs_xml_writer_init(&w, &b);
    vs_client_xfer_history_xml(c, &w);
    char path[VS_CLIENT_PATH_MAX];
    int rc = vs_xml_writer_error(&w);
    if (rc == 0)
        rc = vs_client_path(c, path, sizeof(path), "daily_xfer_history.xml");
    if (rc == 0)
        rc = vs_client_write_atomic(path, b.data, b.len, false);
    if (rc != 0)
        vs_client_msg(c, -1, 3, "failed to write xfer history: %s", vs_strerror(rc));
    else
        c->xfers_dirty = false;
    vs_buf_cleanup(&b);
}
