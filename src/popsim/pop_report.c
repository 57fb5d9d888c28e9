/*
 * popsim's figures: one table of fields drives both the text and the JSON,
 * so they cannot disagree; the timeline as CSV rows and an SVG picture of
 * results in flight and returned.
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "volsched/buf.h"
#include "volsched/json.h"
#include "volsched/popsim.h"
#include "volsched/sim.h"

enum fkind { F_INT, F_NUM, F_HOURS, F_DAYS, F_FRAC };

struct field {
    const char *key, *label;
    enum fkind kind;
    size_t off;
};

#define FI(k, l, f)                                                                                \
    {                                                                                              \
        k, l, F_INT, offsetof(struct vs_pop_result, f)                                             \
    }
#define FN(k, l, f, kind)                                                                          \
    {                                                                                              \
        k, l, kind, offsetof(struct vs_pop_result, f)                                              \
    }

static const struct field fields[] = {
    FN("simulated_days", "simulated days", duration, F_DAYS),
    FN("host_days", "host-days", host_days, F_NUM),
    FI("hosts_seen", "hosts (with churn)", hosts_seen),
    FI("workunits", "workunits", wus),
    FI("workunits_valid", "  validated", wus_valid),
    FI("workunits_failed", "  failed (too many results)", wus_failed),
    FI("workunits_open", "  not finished at the end", wus_open),
    FN("makespan_h", "makespan, hours (-1: not all finished)", makespan, F_HOURS),
    FN("batch_makespan_mean_h", "batch makespan, mean hours", batch_makespan_mean, F_HOURS),
    FN("batch_makespan_max_h", "batch makespan, max hours", batch_makespan_max, F_HOURS),
    FN("wu_turnaround_p50_h", "workunit turnaround p50, hours", wu_p50, F_HOURS),
    FN("wu_turnaround_p90_h", "workunit turnaround p90, hours", wu_p90, F_HOURS),
    FN("wu_turnaround_p99_h", "workunit turnaround p99, hours", wu_p99, F_HOURS),
    FN("result_turnaround_p50_h", "result turnaround p50, hours", turnaround_p50, F_HOURS),
    FN("result_turnaround_p90_h", "result turnaround p90, hours", turnaround_p90, F_HOURS),
    FN("result_turnaround_p99_h", "result turnaround p99, hours", turnaround_p99, F_HOURS),
    FI("results_sent", "results sent", sent),
    FI("results_returned", "  reported", returned),
    FI("results_valid", "  valid", valid),
    FI("results_invalid", "  invalid (found by the quorum)", invalid),
    FI("results_invalid_accepted", "  invalid and accepted (no quorum)", invalid_accepted),
    FI("results_timed_out", "  timed out (deadline passed)", timed_out),
    FI("results_late", "  reported after the deadline", late),
    FI("results_wasted", "  not needed when reported", wasted),
    FI("results_in_flight_end", "  out at the end", in_flight_end),
    FI("deadline_misses", "deadline misses", deadline_misses),
    FN("cpu_hours", "CPU hours", cpu_hours, F_NUM),
    FN("cpu_hours_wasted", "CPU hours wasted", cpu_hours_wasted, F_NUM),
    FN("cpu_hours_to_end", "CPU hours, results out at the end run to their end", cpu_hours_to_end,
       F_NUM),
    FN("bytes_down", "bytes downloaded", bytes_down, F_NUM),
    FN("bytes_per_valid", "bytes per validated workunit", bytes_per_valid, F_NUM),
    FI("files", "big input files", files),
    FI("file_downloads", "  downloads of them", file_downloads),
    FN("bytes_bound", "bytes downloaded, lower bound", bytes_bound, F_NUM),
    FN("bytes_vs_bound", "bytes downloaded / lower bound", bytes_vs_bound, F_NUM),
    FI("locality_deletes", "files hosts were told to delete", loc_deletes),
    FI("rpcs", "scheduler RPCs", rpcs),
    FI("work_requests", "  asking for work", work_requests),
    FI("work_replies", "  that got work", work_replies),
    FN("cache_hit_rate", "job-cache hit rate", cache_hit_rate, F_FRAC),
    FN("rpc_rate_mean", "RPCs per second, mean", rpc_rate_mean, F_NUM),
    FN("rpc_rate_peak", "RPCs per second, peak hour", rpc_rate_peak, F_NUM),
    FI("refused_deadline", "jobs refused: they would miss their deadline", refused_deadline),
    FI("refused_workload", "jobs refused: queued jobs would miss (EDF)", refused_workload),
    FI("tail_replicas", "tail: extra instances of overdue jobs", tail_replicas),
    FI("tail_refused", "tail: jobs kept from slow or unreliable hosts", tail_refused),
};

#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

/* The big-file figures are shown only for a workload that has the files. */
static bool shown(const struct vs_pop_scenario *s, const struct field *f)
{
    size_t lo = offsetof(struct vs_pop_result, files);
    size_t hi = offsetof(struct vs_pop_result, loc_deletes);
    return s->file_mb > 0 || f->off < lo || f->off > hi;
}

static double value(const struct vs_pop_result *r, const struct field *f)
{
    const char *base = (const char *)r + f->off;
    if (f->kind == F_INT)
        return (double)*(const int64_t *)(const void *)base;
    double v = *(const double *)(const void *)base;
    if (f->kind == F_HOURS)
        return v < 0 ? -1 : v / 3600;
    if (f->kind == F_DAYS)
        return v / 86400;
    return v;
}

/* The host model's name, with the full model's client policy, in buf. */
static const char *model_name(const struct vs_pop_scenario *s, char *buf, size_t n)
{
    if (s->model != VS_POP_FULL)
        return "light";
    snprintf(buf, n, "full (%s)", vs_sim_policies[s->client_policy]);
    return buf;
}

int vs_pop_print_text(FILE *f, const struct vs_pop_scenario *s, const struct vs_pop_result *r)
{
    char mbuf[48];
    fprintf(f,
            "population %lld hosts, %lld batches of %lld workunits, quorum %d of %d, "
            "EDF check %s, %s host model\n",
            (long long)s->hosts, (long long)s->batches, (long long)s->batch_size, s->min_quorum,
            s->target_nresults, s->server_edf_check ? "on" : "off",
            model_name(s, mbuf, sizeof(mbuf)));
    for (size_t i = 0; i < NFIELDS; i++) {
        if (!shown(s, &fields[i]))
            continue;
        double v = value(r, &fields[i]);
        if (fields[i].kind == F_INT)
            fprintf(f, "%-42s %lld\n", fields[i].label, (long long)v);
        else
            fprintf(f, "%-42s %.4g\n", fields[i].label, v);
    }
    return ferror(f) ? VS_EIO : 0;
}

/* Student's t at 97.5% for n-1 degrees of freedom (n = 2..31; normal beyond). */
static double t975(size_t n)
{
    static const double t[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                               2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                               2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                               2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
    return n >= 2 && n - 2 < sizeof(t) / sizeof(t[0]) ? t[n - 2] : 1.96;
}

int vs_pop_print_summary(FILE *f, const struct vs_pop_scenario *s, const struct vs_pop_result *r,
                         size_t n, bool json)
{
    char mbuf[48];
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    struct vs_json j;
    vs_json_init(&j, &b, true);
    if (json) {
        vs_json_obj_begin(&j);
        vs_json_key_int(&j, "hosts", s->hosts);
        vs_json_key_str(&j, "model", model_name(s, mbuf, sizeof(mbuf)));
        vs_json_key_int(&j, "seeds", (int64_t)n);
    } else {
        fprintf(f,
                "population %lld hosts, %s host model, %zu seeds: mean and 95%% confidence "
                "half-width\n",
                (long long)s->hosts, model_name(s, mbuf, sizeof(mbuf)), n);
    }
    for (size_t i = 0; i < NFIELDS; i++) {
        if (!shown(s, &fields[i]))
            continue;
        double sum = 0, sq = 0;
        for (size_t k = 0; k < n; k++)
            sum += value(&r[k], &fields[i]);
        double mean = n ? sum / (double)n : 0;
        for (size_t k = 0; k < n; k++) {
            double d = value(&r[k], &fields[i]) - mean;
            sq += d * d;
        }
        double half = n > 1 ? t975(n) * sqrt(sq / (double)(n - 1)) / sqrt((double)n) : 0;
        if (json) {
            vs_json_key(&j, fields[i].key);
            vs_json_obj_begin(&j);
            vs_json_key_num(&j, "mean", mean);
            vs_json_key_num(&j, "ci95", half);
            vs_json_obj_end(&j);
        } else {
            fprintf(f, "%-42s %.4g +- %.2g\n", fields[i].label, mean, half);
        }
    }
    int rc = 0;
    if (json) {
        vs_json_obj_end(&j);
        rc = vs_json_error(&j);
        if (rc == 0 && (fputs(vs_buf_str(&b), f) < 0 || fputc('\n', f) < 0))
            rc = VS_EIO;
    }
    vs_buf_cleanup(&b);
    return rc ? rc : ferror(f) ? VS_EIO : 0;
}

int vs_pop_print_json(FILE *f, const struct vs_pop_scenario *s, const struct vs_pop_result *r)
{
    char mbuf[48];
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    struct vs_json j;
    vs_json_init(&j, &b, true);
    vs_json_obj_begin(&j);
    vs_json_key_int(&j, "hosts", s->hosts);
    vs_json_key_str(&j, "model", model_name(s, mbuf, sizeof(mbuf)));
    vs_json_key(&j, "server_edf_check");
    vs_json_bool(&j, s->server_edf_check);
    for (size_t i = 0; i < NFIELDS; i++) {
        if (!shown(s, &fields[i]))
            continue;
        double v = value(r, &fields[i]);
        if (fields[i].kind == F_INT)
            vs_json_key_int(&j, fields[i].key, (int64_t)v);
        else
            vs_json_key_num(&j, fields[i].key, v);
    }
    vs_json_obj_end(&j);
    int rc = vs_json_error(&j);
    if (rc == 0 && (fputs(vs_buf_str(&b), f) < 0 || fputc('\n', f) < 0))
        rc = VS_EIO;
    vs_buf_cleanup(&b);
    return rc;
}

int vs_pop_write_csv(FILE *f, const struct vs_pop_result *r)
{
    fprintf(f, "hour,in_flight,returned,validated,rpcs\n");
    for (size_t i = 0; i < r->nsamples; i++) {
        const struct vs_pop_sample *x = &r->samples[i];
        fprintf(f, "%.2f,%lld,%lld,%lld,%lld\n", x->t / 3600, (long long)x->in_flight,
                (long long)x->returned, (long long)x->validated, (long long)x->rpcs);
    }
    return ferror(f) ? VS_EIO : 0;
}

/* Two lines over time: results in flight (blue), results returned (green). */
int vs_pop_write_svg(FILE *f, const struct vs_pop_result *r)
{
    const double W = 900, H = 360, L = 70, B = 40, T = 20, R = 20;
    double tmax = r->nsamples ? r->samples[r->nsamples - 1].t : 1;
    double ymax = 1;
    for (size_t i = 0; i < r->nsamples; i++)
        ymax = fmax(ymax, fmax((double)r->samples[i].in_flight, (double)r->samples[i].returned));
    if (tmax <= 0)
        tmax = 1;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            W, H);
    fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n", L,
            H - B, W - R, H - B);
    fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n", L, T,
            L, H - B);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">hours (0 to %.0f)</text>\n",
            (L + W - R) / 2, H - 10, tmax / 3600);
    fprintf(f, "<text x=\"5\" y=\"%.0f\">%.0f</text>\n", T + 10, ymax);
    static const char *const colour[2] = {"#1f77b4", "#2ca02c"};
    static const char *const label[2] = {"in flight", "returned"};
    for (int k = 0; k < 2; k++) {
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
                colour[k]);
        for (size_t i = 0; i < r->nsamples; i++) {
            const struct vs_pop_sample *x = &r->samples[i];
            double y = (double)(k ? x->returned : x->in_flight);
            fprintf(f, "%.1f,%.1f ", L + (W - L - R) * x->t / tmax, H - B - (H - B - T) * y / ymax);
        }
        fprintf(f, "\"/>\n<text x=\"%.0f\" y=\"%.0f\" fill=\"%s\">%s</text>\n", W - R - 120,
                T + 15 + 15 * k, colour[k], label[k]);
    }
    fprintf(f, "</svg>\n");
    return ferror(f) ? VS_EIO : 0;
}
