/* server_status.php, /metrics and the /ops/ dashboard (ops_pages.h). */
#include "volsched/ops_pages.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "server/auth_limit.h"
#include "server/ops_page.h"
#include "server/ops_session.h"
#include "volsched/alloc.h"
#include "volsched/daemons.h"
#include "volsched/http_addr.h"
#include "volsched/log.h"
#include "volsched/ops_auth.h"
#include "volsched/ops_status.h"
#include "volsched/store_ops.h"
#include "volsched/store_project.h"
#include "volsched/str.h"

struct vs_ops_pages {
    struct vs_project_config cfg;
    struct vs_ops_sources src;
    char status_path[VS_URL_MAX + 32]; /* "/demo/server_status.php" */
    char passwd[VS_OPS_HASH_MAX];      /* "" = none set */
    struct vs_ops_session_key skey;    /* the session cookies' (with a password) */
    struct vs_auth_limit *failed;      /* wrong passwords per address */
    pthread_mutex_t mu;                /* the store handle: one page at a time */
    struct vs_store *st;
    _Atomic(struct vs_http *) http; /* set once the listeners are up */
};

static void read_passwd(struct vs_ops_pages *p)
{
    char path[VS_PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/%s", p->cfg.dir, VS_OPS_PASSWD_FILE);
    p->passwd[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (!fgets(p->passwd, sizeof(p->passwd), f))
        p->passwd[0] = '\0';
    p->passwd[strcspn(p->passwd, "\r\n")] = '\0';
    fclose(f);
}

int vs_ops_pages_create(const struct vs_project_config *cfg, const struct vs_ops_sources *src,
                        struct vs_ops_pages **out)
{
    struct vs_ops_pages *p = VS_NEW(struct vs_ops_pages);
    p->cfg = *cfg;
    p->src = *src;
    char path[VS_URL_MAX];
    if (vs_http_url_path(cfg->master_url, path, sizeof(path)) != 0)
        snprintf(path, sizeof(path), "/");
    int m = snprintf(p->status_path, sizeof(p->status_path), "%sserver_status.php", path);
    if (m < 0 || (size_t)m >= sizeof(p->status_path))
        snprintf(p->status_path, sizeof(p->status_path), "/server_status.php");
    read_passwd(p);
    if (!p->passwd[0])
        VS_LOG(src->log, VS_LOG_WARN,
               "no operator password in %s/%s: the /ops/ dashboard is closed (see "
               "docs/operating.md)",
               cfg->dir, VS_OPS_PASSWD_FILE);
    int rc = p->passwd[0] ? vs_ops_session_key_load(cfg->dir, p->passwd, &p->skey) : 0;
    if (rc != 0) {
        VS_LOG(src->log, VS_LOG_ERROR, "cannot read or make %s/%s: %s", cfg->dir,
               VS_OPS_SESSION_KEY_FILE, vs_strerror(rc));
        vs_free(p);
        return rc;
    }
    rc = vs_project_store_open(cfg, false, src->log, &p->st);
    if (rc != 0) {
        vs_free(p);
        return rc;
    }
    p->failed = vs_auth_limit_create(VS_OPS_FAILED_BURST, VS_OPS_FAILED_PER_HOUR);
    pthread_mutex_init(&p->mu, NULL);
    *out = p;
    return 0;
}

void vs_ops_pages_destroy(struct vs_ops_pages *p)
{
    if (!p)
        return;
    vs_store_close(p->st);
    vs_auth_limit_destroy(p->failed);
    pthread_mutex_destroy(&p->mu);
    explicit_bzero(&p->skey, sizeof(p->skey));
    vs_free(p);
}

/* ------------------------------------------------------------------------ */
/* Charts                                                                    */

#define CHART_W 576 /* 2 px per 5-minute bucket */
#define CHART_H 90

/* A bar chart of one or two stacked series over the last 24 hours. */
static void chart(struct vs_page *p, const char *id, const char *title, const uint64_t *a,
                  const char *color_a, const uint64_t *b, const char *color_b, int64_t start)
{
    uint64_t max = 0, total_a = 0, total_b = 0;
    for (int i = 0; i < VS_OPS_SERIES_N; i++) {
        uint64_t v = a[i] + (b ? b[i] : 0);
        max = v > max ? v : max;
        total_a += a[i];
        total_b += b ? b[i] : 0;
    }
    vs_page_printf(p, "<figure class=\"chart\"><figcaption>%s: <b id=\"%s-total\">%llu</b>", title,
                   id, (unsigned long long)total_a);
    if (b)
        vs_page_printf(p, " valid, <b id=\"%s-total2\">%llu</b> invalid", id,
                       (unsigned long long)total_b);
    vs_page_printf(p, " in 24 h (peak %llu per 5 min)</figcaption>\n", (unsigned long long)max);
    vs_page_printf(p,
                   "<svg id=\"%s\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                   "xmlns=\"http://www.w3.org/2000/svg\" role=\"img\">\n"
                   "<rect x=\"40\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#f6f6f6\"/>\n",
                   id, CHART_W + 50, CHART_H + 20, CHART_W + 50, CHART_H + 20, CHART_W, CHART_H);
    for (int i = 0; max > 0 && i < VS_OPS_SERIES_N; i++) {
        uint64_t va = a[i], vb = b ? b[i] : 0;
        if (va + vb == 0)
            continue;
        int ha = (int)((double)va * CHART_H / (double)max + 0.5);
        int hb = (int)((double)vb * CHART_H / (double)max + 0.5);
        if (va && ha == 0)
            ha = 1;
        if (vb && hb == 0)
            hb = 1;
        int x = 40 + 2 * i;
        if (ha)
            vs_page_printf(p, "<rect x=\"%d\" y=\"%d\" width=\"2\" height=\"%d\" fill=\"%s\"/>", x,
                           CHART_H - ha, ha, color_a);
        if (hb)
            vs_page_printf(p, "<rect x=\"%d\" y=\"%d\" width=\"2\" height=\"%d\" fill=\"%s\"/>", x,
                           CHART_H - ha - hb, hb, color_b ? color_b : color_a);
    }
    char t0[16], t1[16];
    time_t ts = (time_t)start, te = (time_t)(start + (int64_t)VS_OPS_SERIES_N * VS_OPS_SERIES_STEP);
    struct tm tm;
    gmtime_r(&ts, &tm);
    strftime(t0, sizeof(t0), "%H:%M", &tm);
    gmtime_r(&te, &tm);
    strftime(t1, sizeof(t1), "%H:%M", &tm);
    vs_page_printf(p,
                   "\n<text x=\"36\" y=\"10\" font-size=\"10\" text-anchor=\"end\">%llu</text>"
                   "<text x=\"36\" y=\"%d\" font-size=\"10\" text-anchor=\"end\">0</text>"
                   "<text x=\"40\" y=\"%d\" font-size=\"10\">%s UTC</text>"
                   "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\">%s</text>"
                   "</svg></figure>\n",
                   (unsigned long long)max, CHART_H, CHART_H + 14, t0, 40 + CHART_W, CHART_H + 14,
                   t1);
}

/* ------------------------------------------------------------------------ */
/* Dashboard                                                                 */

static int on_host(void *ctx, const struct vs_host *h)
{
    struct vs_page *p = ctx;
    vs_page_printf(p, "<tr><td>%lld</td><td>", (long long)h->id);
    vs_page_esc(p, h->domain_name[0] ? h->domain_name : "-");
    vs_page_printf(p, "</td><td>%lld</td><td>", (long long)h->userid);
    vs_page_esc(p, h->platform_name[0] ? h->platform_name : "-");
    vs_page_printf(p, "</td><td>%d</td><td>", h->p_ncpus);
    vs_page_time(p, h->rpc_time);
    vs_page_printf(p, "</td><td>");
    vs_page_esc(p, h->external_ip_addr);
    vs_page_printf(p, "</td><td>%s</td></tr>\n", h->max_results_day == -1 ? "banned" : "");
    return 0;
}

static int on_batch(void *ctx, const struct vs_batch_counts *b)
{
    struct vs_page *p = ctx;
    double f = b->nwus ? (double)(b->ndone + b->nerror) / (double)b->nwus : 0;
    vs_page_printf(p,
                   "<tr><td>%lld</td><td>%lld</td><td>%lld</td><td>%lld</td><td>%lld</td>"
                   "<td><svg width=\"104\" height=\"12\"><rect x=\"0\" y=\"0\" width=\"104\" "
                   "height=\"12\" fill=\"#eee\"/><rect x=\"2\" y=\"2\" width=\"%d\" height=\"8\" "
                   "fill=\"#3a7\"/></svg> %.0f%%</td><td>",
                   (long long)b->batch, (long long)b->nwus, (long long)b->ndone,
                   (long long)b->nerror, (long long)b->in_progress, (int)(f * 100 + 0.5), f * 100);
    vs_page_time(p, b->create_time);
    vs_page_printf(p, "</td></tr>\n");
    return 0;
}

/* What the running server counted (the dashboard's and /metrics' figures):
 * the metrics' snapshot (heap: it holds the series), the scheduler's and the
 * upload handler's counters; zeros for a part that is not running. */
struct live {
    struct vs_ops_snapshot *snap; /* owned: vs_free */
    struct vs_sched_stats ss;
    struct vs_upload_stats us;
    struct vs_http_stats hs;
};

static void live_gather(const struct vs_ops_pages *pg, int64_t now, struct live *out)
{
    memset(out, 0, sizeof(*out));
    out->snap = VS_NEW(struct vs_ops_snapshot);
    if (pg->src.metrics)
        vs_ops_metrics_snapshot(pg->src.metrics, now, out->snap);
    else /* empty series, ending now */
        out->snap->series_start =
            now - now % VS_OPS_SERIES_STEP - (int64_t)(VS_OPS_SERIES_N - 1) * VS_OPS_SERIES_STEP;
    if (pg->src.sched)
        vs_sched_get_stats(pg->src.sched, &out->ss);
    if (pg->src.upload)
        vs_upload_get_stats(pg->src.upload, &out->us);
    struct vs_http *h = atomic_load_explicit(&pg->http, memory_order_acquire);
    if (h)
        vs_http_get_stats(h, &out->hs);
}

void vs_ops_pages_set_http(struct vs_ops_pages *p, struct vs_http *http)
{
    atomic_store_explicit(&p->http, http, memory_order_release);
}

static void metric(struct vs_page *p, const char *name, const char *type, const char *help);

/* The HTTP front end's connections and limits (docs/server.md "Limits"). */
static void http_metrics(struct vs_page *p, const struct vs_http_stats *hs)
{
    metric(p, "volsched_http_connections_total", "counter", "Connections accepted.");
    vs_page_printf(p, "volsched_http_connections_total %llu\n",
                   (unsigned long long)hs->connections);
    metric(p, "volsched_http_requests_total", "counter", "HTTP requests.");
    vs_page_printf(p, "volsched_http_requests_total %llu\n", (unsigned long long)hs->requests);
    metric(p, "volsched_http_open_connections", "gauge", "Connections open now, and the limit.");
    vs_page_printf(p,
                   "volsched_http_open_connections %llu\n"
                   "volsched_http_max_connections %llu\n",
                   (unsigned long long)hs->open_connections,
                   (unsigned long long)hs->max_connections);
    metric(p, "volsched_http_limit_total", "counter", "Connections closed or refused by a limit.");
    vs_page_printf(p,
                   "volsched_http_limit_total{limit=\"head_timeout\"} %llu\n"
                   "volsched_http_limit_total{limit=\"body_min_rate\"} %llu\n"
                   "volsched_http_limit_total{limit=\"per_address\"} %llu\n"
                   "volsched_http_limit_total{limit=\"max_connections\"} %llu\n",
                   (unsigned long long)hs->head_timeouts, (unsigned long long)hs->slow_bodies,
                   (unsigned long long)hs->refused_per_address,
                   (unsigned long long)hs->refused_full);
    metric(p, "volsched_http_forwarded_total", "counter",
           "Requests whose client a trusted proxy named (X-Forwarded-For).");
    vs_page_printf(p, "volsched_http_forwarded_total %llu\n", (unsigned long long)hs->forwarded);
}

static void dashboard(struct vs_ops_pages *pg, struct vs_page *p, const struct vs_ops_status *st,
                      int64_t now)
{
    struct live live;
    live_gather(pg, now, &live);

    vs_page_printf(p, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
                      "<meta http-equiv=\"refresh\" content=\"60\"><title>");
    vs_page_esc(p, st->name);
    vs_page_printf(p, " - operations</title>\n<style>body{font-family:sans-serif;margin:1em 2em}"
                      ".t{border-collapse:collapse;margin-bottom:1em}.t td,.t th{border:1px solid "
                      "#bbb;padding:2px 8px;font-size:90%%}.ok{color:#070}.bad{color:#b00}"
                      ".chart{display:inline-block;margin:0 1em 1em 0}figcaption{font-size:90%%}"
                      ".err{font-family:monospace;font-size:85%%}</style></head><body>\n<h1>");
    vs_page_esc(p, st->name);
    vs_page_printf(p, " &mdash; operations</h1>\n<p>");
    vs_page_time(p, now);
    vs_page_printf(p, " UTC &middot; server %s", st->server_up ? "up" : "down");
    if (st->server_up) {
        vs_page_printf(p, " since ");
        vs_page_time(p, st->serve.started);
    }
    if (st->stop_sched)
        vs_page_printf(p, " &middot; <b class=\"bad\">scheduler stopped (stop_sched)</b>");
    if (st->stop_daemons)
        vs_page_printf(p, " &middot; <b class=\"bad\">daemons stopped (stop_daemons)</b>");
    vs_page_printf(p, " &middot; <a href=\"../metrics\">metrics</a></p>\n");

    vs_ops_status_tables(p, st);

    vs_page_printf(p,
                   "<h2>Since start</h2>\n<table class=\"t\"><tr><td>Scheduler RPCs</td><td "
                   "id=\"v-rpcs\">%llu</td><td>refused</td><td>%llu</td><td>no work</td><td>%llu"
                   "</td></tr>\n<tr><td>Jobs sent</td><td id=\"v-sent\">%llu</td><td>results "
                   "reported</td><td id=\"v-reported\">%llu</td><td>uploads</td><td>%llu "
                   "(%llu bytes)</td></tr>\n<tr><td>Validated</td><td>%llu valid</td><td>%llu "
                   "invalid</td><td>%llu inconclusive</td><td>assimilated</td><td>%llu</td></tr>"
                   "</table>\n",
                   (unsigned long long)live.ss.rpcs, (unsigned long long)live.ss.bad_rpcs,
                   (unsigned long long)live.ss.no_work, (unsigned long long)live.ss.jobs_sent,
                   (unsigned long long)live.ss.reports, (unsigned long long)live.us.files_done,
                   (unsigned long long)live.us.bytes, (unsigned long long)live.snap->valid,
                   (unsigned long long)live.snap->invalid,
                   (unsigned long long)live.snap->inconclusive,
                   (unsigned long long)live.snap->assimilated);

    vs_page_printf(p, "<h2>Last 24 hours</h2>\n");
    chart(p, "c-rpcs", "Scheduler RPCs", live.snap->series[VS_SERIES_RPCS], "#37a", NULL, NULL,
          live.snap->series_start);
    chart(p, "c-sent", "Jobs sent", live.snap->series[VS_SERIES_SENT], "#a73", NULL, NULL,
          live.snap->series_start);
    chart(p, "c-returned", "Results returned", live.snap->series[VS_SERIES_RETURNED], "#3a7", NULL,
          NULL, live.snap->series_start);
    chart(p, "c-valid", "Validation", live.snap->series[VS_SERIES_VALID], "#2a2",
          live.snap->series[VS_SERIES_INVALID], "#c33", live.snap->series_start);

    vs_page_printf(p, "<h2>Recent errors</h2>\n");
    int nerr = 0;
    for (unsigned i = 0; i < VS_NDAEMONS; i++) {
        const struct vs_daemon_status *d = &st->daemons[i].st;
        if (!d->last_error[0])
            continue;
        vs_page_printf(p, "%s<div class=\"err\">", nerr++ ? "" : "");
        vs_page_time(p, d->last_error_time);
        vs_page_printf(p, " %s: ", vs_daemon_name(1u << i));
        vs_page_esc(p, d->last_error);
        vs_page_printf(p, "</div>\n");
    }
    for (int i = 0; i < live.snap->nerrors; i++, nerr++) {
        vs_page_printf(p, "<div class=\"err\">");
        vs_page_esc(p, live.snap->errors[i]);
        vs_page_printf(p, "</div>\n");
    }
    if (!nerr)
        vs_page_printf(p, "<p>None.</p>\n");

    vs_page_printf(p, "<h2>Hosts in the last hour</h2>\n<table class=\"t\" id=\"hosts\"><tr>"
                      "<th>Host</th><th>Name</th><th>User</th><th>Platform</th><th>CPUs</th>"
                      "<th>Last RPC</th><th>Address</th><th></th></tr>\n");
    struct vs_page *pp = p;
    if (vs_store_hosts_since(pg->st, now - 3600, 100, on_host, pp) != 0)
        vs_page_printf(p, "<tr><td colspan=\"8\">store error</td></tr>\n");
    vs_page_printf(p, "</table>\n<h2>Batches</h2>\n<table class=\"t\" id=\"batches\"><tr>"
                      "<th>Batch</th><th>Workunits</th><th>Done</th><th>Errors</th>"
                      "<th>Results out</th><th>Progress</th><th>Created</th></tr>\n");
    if (vs_store_batches(pg->st, 50, on_batch, pp) != 0)
        vs_page_printf(p, "<tr><td colspan=\"7\">store error</td></tr>\n");
    vs_page_printf(p, "</table>\n</body></html>\n");
    vs_free(live.snap);
}

/* ------------------------------------------------------------------------ */
/* Prometheus                                                                */

static void metric(struct vs_page *p, const char *name, const char *type, const char *help)
{
    vs_page_printf(p, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void metrics_page(struct vs_ops_pages *pg, struct vs_page *p, const struct vs_ops_status *st,
                         int64_t now)
{
    struct live live;
    live_gather(pg, now, &live);

    metric(p, "volsched_scheduler_rpcs_total", "counter", "Scheduler RPCs by outcome.");
    uint64_t other = live.ss.bad_rpcs + live.ss.no_work + live.ss.maintenance;
    uint64_t ok = live.ss.rpcs > other ? live.ss.rpcs - other : 0;
    vs_page_printf(p,
                   "volsched_scheduler_rpcs_total{outcome=\"ok\"} %llu\n"
                   "volsched_scheduler_rpcs_total{outcome=\"no_work\"} %llu\n"
                   "volsched_scheduler_rpcs_total{outcome=\"refused\"} %llu\n"
                   "volsched_scheduler_rpcs_total{outcome=\"maintenance\"} %llu\n",
                   (unsigned long long)ok, (unsigned long long)live.ss.no_work,
                   (unsigned long long)live.ss.bad_rpcs, (unsigned long long)live.ss.maintenance);
    metric(p, "volsched_jobs_sent_total", "counter", "Results sent to hosts.");
    vs_page_printf(p, "volsched_jobs_sent_total %llu\n", (unsigned long long)live.ss.jobs_sent);
    metric(p, "volsched_reports_total", "counter", "Reported results recorded.");
    vs_page_printf(p, "volsched_reports_total %llu\n", (unsigned long long)live.ss.reports);
    metric(p, "volsched_uploads_total", "counter", "Upload requests by result.");
    vs_page_printf(p,
                   "volsched_uploads_total{result=\"file_done\"} %llu\n"
                   "volsched_uploads_total{result=\"refused\"} %llu\n"
                   "volsched_uploads_total{result=\"transient\"} %llu\n",
                   (unsigned long long)live.us.files_done, (unsigned long long)live.us.refused,
                   (unsigned long long)live.us.transient);
    metric(p, "volsched_upload_bytes_total", "counter", "Bytes of uploaded files written.");
    vs_page_printf(p, "volsched_upload_bytes_total %llu\n", (unsigned long long)live.us.bytes);
    http_metrics(p, &live.hs);
    metric(p, "volsched_validator_results_total", "counter", "Validator outcomes.");
    vs_page_printf(p,
                   "volsched_validator_results_total{outcome=\"valid\"} %llu\n"
                   "volsched_validator_results_total{outcome=\"invalid\"} %llu\n"
                   "volsched_validator_results_total{outcome=\"inconclusive\"} %llu\n",
                   (unsigned long long)live.snap->valid, (unsigned long long)live.snap->invalid,
                   (unsigned long long)live.snap->inconclusive);
    metric(p, "volsched_credit_granted_total", "counter",
           "Credit (cobblestones) the validator granted; rate() gives credit per day.");
    vs_page_printf(p, "volsched_credit_granted_total %.6f\n", live.snap->credit_granted);
    metric(p, "volsched_assimilated_total", "counter", "Workunits assimilated.");
    vs_page_printf(p, "volsched_assimilated_total %llu\n",
                   (unsigned long long)live.snap->assimilated);
    metric(p, "volsched_daemon_pass_seconds", "summary", "Durations of daemon passes.");
    for (unsigned i = 0; i < VS_NDAEMONS; i++)
        vs_page_printf(p,
                       "volsched_daemon_pass_seconds_sum{daemon=\"%s\"} %.6f\n"
                       "volsched_daemon_pass_seconds_count{daemon=\"%s\"} %llu\n",
                       vs_daemon_name(1u << i), live.snap->pass_seconds[i], vs_daemon_name(1u << i),
                       (unsigned long long)live.snap->pass_count[i]);
    metric(p, "volsched_job_cache_present", "gauge", "Jobs in the scheduler's cache.");
    vs_page_printf(p, "volsched_job_cache_present %zu\n", live.ss.cache_present);
    metric(p, "volsched_job_cache_slots", "gauge", "Size of the scheduler's cache.");
    vs_page_printf(p, "volsched_job_cache_slots %zu\n", live.ss.cache_slots);
    metric(p, "volsched_results_ready_to_send", "gauge", "Results UNSENT in the store.");
    vs_page_printf(p, "volsched_results_ready_to_send %lld\n", (long long)st->ready_to_send);
    metric(p, "volsched_results_in_progress", "gauge", "Results IN_PROGRESS in the store.");
    vs_page_printf(p, "volsched_results_in_progress %lld\n", (long long)st->in_progress);
    metric(p, "volsched_daemon_up", "gauge", "1 when the daemon runs.");
    for (unsigned i = 0; i < VS_NDAEMONS; i++)
        vs_page_printf(p, "volsched_daemon_up{daemon=\"%s\"} %d\n", vs_daemon_name(1u << i),
                       st->daemons[i].run == VS_RUN_RUNNING);
    metric(p, "volsched_scheduler_request_duration_seconds", "histogram",
           "Time to answer a scheduler request.");
    uint64_t cum = 0;
    for (int b = 0; b < VS_OPS_LAT_BUCKETS; b++) {
        cum += live.snap->lat_buckets[b];
        vs_page_printf(p, "volsched_scheduler_request_duration_seconds_bucket{le=\"%g\"} %llu\n",
                       vs_ops_lat_bounds[b], (unsigned long long)cum);
    }
    cum += live.snap->lat_buckets[VS_OPS_LAT_BUCKETS];
    vs_page_printf(p,
                   "volsched_scheduler_request_duration_seconds_bucket{le=\"+Inf\"} %llu\n"
                   "volsched_scheduler_request_duration_seconds_sum %.6f\n"
                   "volsched_scheduler_request_duration_seconds_count %llu\n",
                   (unsigned long long)cum, live.snap->lat_sum,
                   (unsigned long long)live.snap->lat_count);
    vs_free(live.snap);
}

/* ------------------------------------------------------------------------ */

static bool query_has(const char *query, const char *kv)
{
    size_t n = strlen(kv);
    for (const char *q = query; q && *q;) {
        if (strncmp(q, kv, n) == 0 && (q[n] == '\0' || q[n] == '&'))
            return true;
        q = strchr(q, '&');
        if (q)
            q++;
    }
    return false;
}

/*
 * Who may see /ops/: a valid session cookie lets in at the cost of an
 * HMAC; else the password (HTTP Basic), whose PBKDF2 runs only for an
 * address whose wrong passwords are under the throttle. A right password
 * gets a session cookie. Returns 0 to let the request in, or the status to
 * answer with its text in out.
 */
static int ops_login(struct vs_ops_pages *pg, const struct vs_http_get *req, int64_t now,
                     struct vs_http_page *out)
{
    struct vs_page p = {.b = out->body};
    const char *peer = req->peer ? req->peer : "?";
    if (!pg->passwd[0]) {
        vs_page_printf(&p, "No operator password is set for this project: run `volsched "
                           "init --force DIR --ops-password PW` to set one (docs/operating.md).\n");
        return p.rc ? 500 : 403;
    }
    if (vs_ops_cookie_check(&pg->skey, req->cookie, now))
        return 0;
    if (!req->authorization) {
        vs_page_printf(&p, "401 operator password required\n");
        return p.rc ? 500 : 401;
    }
    char key[64];
    vs_auth_limit_key(peer, key, sizeof(key));
    int wait = 0;
    if (!vs_auth_limit_allow(pg->failed, key, now, &wait)) {
        VS_LOG(pg->src.log, VS_LOG_DEBUG, "ops: login from %s refused unchecked (throttled)", peer);
        vs_page_printf(&p,
                       "429 too many wrong operator passwords from this address; try again in "
                       "%d s\n",
                       wait);
        out->retry_after = (unsigned)wait;
        return p.rc ? 500 : 429;
    }
    if (!vs_ops_check_basic(pg->passwd, req->authorization)) {
        vs_auth_limit_failed(pg->failed, key, now);
        VS_LOG(pg->src.log, VS_LOG_WARN, "ops: wrong operator password from %s", peer);
        if (!vs_auth_limit_allow(pg->failed, key, now, &wait))
            VS_LOG(pg->src.log, VS_LOG_WARN,
                   "ops: %d wrong operator passwords from %s: its logins are refused unchecked "
                   "(429) for %d s, then one a minute",
                   VS_OPS_FAILED_BURST, key, wait);
        vs_page_printf(&p, "401 operator password required\n");
        return p.rc ? 500 : 401;
    }
    char v[VS_OPS_COOKIE_MAX];
    if (vs_ops_cookie_make(&pg->skey, now, v, sizeof(v)) == 0) {
        /* HttpOnly: no script reads it; SameSite=Strict: no other site's
         * page makes the browser send it; Secure when it came over TLS, so
         * that the browser never sends it in clear. */
        int m = snprintf(out->set_cookie, sizeof(out->set_cookie),
                         "%s=%s; Path=/ops; Max-Age=%d; HttpOnly; SameSite=Strict%s",
                         VS_OPS_COOKIE_NAME, v, VS_OPS_SESSION_SECS, req->https ? "; Secure" : "");
        if (m < 0 || (size_t)m >= sizeof(out->set_cookie))
            out->set_cookie[0] = '\0';
    }
    VS_LOG(pg->src.log, VS_LOG_INFO, "ops: operator logged in from %s (session of %d h)", peer,
           VS_OPS_SESSION_SECS / 3600);
    return 0;
}

int vs_ops_pages_handle(struct vs_ops_pages *pg, const struct vs_http_get *req, int64_t now,
                        struct vs_http_page *out)
{
    enum { P_STATUS, P_METRICS, P_OPS } which;
    if (strcmp(req->path, pg->status_path) == 0 || strcmp(req->path, "/server_status.php") == 0)
        which = P_STATUS;
    else if (strcmp(req->path, "/metrics") == 0)
        which = P_METRICS;
    else if (strcmp(req->path, "/ops/") == 0 || strcmp(req->path, "/ops") == 0 ||
             strcmp(req->path, "/ops/index.html") == 0)
        which = P_OPS;
    else
        return 404;
    /* With an operator's listener, the dashboard and the metrics are there
     * only. */
    if (which != P_STATUS && pg->cfg.ops_listen[0] && !req->ops_listener)
        return 404;
    struct vs_buf *b = out->body;
    if (which == P_OPS) {
        int st = ops_login(pg, req, now, out);
        if (st != 0)
            return st;
    }
    struct vs_page p = {.b = b};
    struct vs_ops_status *st = VS_NEW(struct vs_ops_status);
    pthread_mutex_lock(&pg->mu);
    int rc = vs_ops_status_collect(pg->cfg.dir, pg->cfg.long_name, pg->st, now, st);
    if (rc == 0) {
        switch (which) {
        case P_STATUS:
            if (query_has(req->query, "xml=1")) {
                out->ctype = "text/xml";
                rc = vs_ops_status_xml(st, b);
            } else {
                out->ctype = "text/html; charset=utf-8";
                rc = vs_ops_status_html(st, b);
            }
            break;
        case P_METRICS:
            out->ctype = "text/plain; version=0.0.4";
            metrics_page(pg, &p, st, now);
            rc = p.rc;
            break;
        case P_OPS:
            out->ctype = "text/html; charset=utf-8";
            dashboard(pg, &p, st, now);
            rc = p.rc;
            break;
        }
    }
    pthread_mutex_unlock(&pg->mu);
    vs_free(st);
    if (rc != 0) {
        VS_LOG(pg->src.log, VS_LOG_ERROR, "ops page %s: %s", req->path, vs_strerror(rc));
        vs_buf_reset(b);
        out->ctype = "text/plain";
        out->set_cookie[0] = '\0';
        if (vs_buf_puts(b, "500 cannot read the project's status\n") != 0)
            vs_buf_reset(b);
        return 500;
    }
    return 200;
}

int vs_ops_pages_http(void *ctx, const struct vs_http_get *req, struct vs_http_page *out)
{
    return vs_ops_pages_handle(ctx, req, (int64_t)time(NULL), out);
}
