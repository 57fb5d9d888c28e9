/* Reported results of a scheduler RPC; see h_report.h. */
#include "server/h_report.h"

#include <string.h>

#include "volsched/buf.h"
#include "volsched/log.h"
#include "volsched/str.h"
#include "volsched/xml.h"

/* BOINC-COMPAT lib/error_numbers.h: the client aborted the job because the
 * project told it to; not the host's fault. */
#define EXIT_ABORTED_BY_PROJECT 202

/* Upper bound of the <file_info> summary kept as xml_doc_out. */
#define XML_DOC_OUT_MAX (64u * 1024u)

/* BOINC-COMPAT: xml_doc_out holds the client's <file_info>s of the uploaded
 * outputs (name, nbytes, max_nbytes, md5_cksum). Returns NULL when there are
 * none or they do not fit (the column is informational). */
static const char *files_xml(const struct vs_proto_reported_result *rr, struct vs_arena *a)
{
    if (rr->n_files == 0)
        return NULL;
    struct vs_buf b;
    vs_buf_init(&b, XML_DOC_OUT_MAX);
    struct vs_xml_writer w;
    vs_xml_writer_init(&w, &b);
    for (size_t i = 0; i < rr->n_files; i++) {
        const struct vs_proto_result_file *f = &rr->files[i];
        vs_xml_open(&w, "file_info");
        vs_xml_str(&w, "name", f->name ? f->name : "");
        vs_xml_double(&w, "nbytes", f->nbytes);
        vs_xml_double(&w, "max_nbytes", f->max_nbytes);
        if (f->md5_cksum)
            vs_xml_str(&w, "md5_cksum", f->md5_cksum);
        vs_xml_close(&w);
    }
    const char *out = NULL;
    if (!w.err && b.data)
        out = vs_arena_strndup(a, b.data, b.len);
    vs_buf_cleanup(&b);
    return out;
}

static const char *skip_text(enum vs_report_skip k)
{
    switch (k) {
    case VS_REPORT_UNKNOWN:
        return "not in the store";
    case VS_REPORT_NOT_SENT:
        return "never sent";
    case VS_REPORT_OTHER_USER:
        return "sent to a host of another user; refused";
    case VS_REPORT_ALREADY_OVER:
        return "already over";
    case VS_REPORT_RECORD:
        break;
    }
    return "recorded";
}

int vs_reports_prepare(struct vs_store *st, const struct vs_proto_request *q, int64_t userid,
                       struct vs_arena *a, struct vs_log *log, struct vs_reports *out)
{
    memset(out, 0, sizeof(*out));
    if (q->n_results == 0)
        return 0;
    out->e = vs_arena_alloc(a, q->n_results * sizeof(*out->e));
    memset(out->e, 0, q->n_results * sizeof(*out->e));
    struct vs_result r;
    memset(&r, 0, sizeof(r));
    int rc = 0;
    for (size_t i = 0; i < q->n_results; i++) {
        const struct vs_proto_reported_result *rr = &q->results[i];
        if (!rr->name || !rr->name[0])
            continue; /* nothing to acknowledge either */
        struct vs_report_entry *e = &out->e[out->n++];
        e->ack_name = rr->name;
        if (vs_strlcpy(e->rep.name, rr->name, sizeof(e->rep.name)) != 0) {
            e->skip = VS_REPORT_UNKNOWN; /* longer than any name we create */
            continue;
        }
        e->rep.client_state = rr->state;
        e->rep.exit_status = rr->exit_status;
        e->rep.cpu_time = rr->final_cpu_time > 0 ? rr->final_cpu_time : 0;
        /* BOINC-COMPAT: an elapsed time of 0 (old clients) counts as the CPU time. */
        e->rep.elapsed_time = rr->final_elapsed_time > 0 ? rr->final_elapsed_time : e->rep.cpu_time;
        e->rep.peak_working_set_size = rr->final_peak_working_set_size;
        e->rep.peak_swap_size = rr->final_peak_swap_size;
        e->rep.peak_disk_usage = rr->final_peak_disk_usage;
        e->rep.stderr_out = rr->stderr_text;
        e->rep.xml_doc_out = files_xml(rr, a);

        vs_result_cleanup(&r);
        memset(&r, 0, sizeof(r));
        rc = vs_store_result_state_by_name(st, e->rep.name, &r);
        if (rc == VS_ENOTFOUND) {
            e->skip = VS_REPORT_UNKNOWN;
            rc = 0;
        } else if (rc != 0) {
            goto done;
        } else if (r.server_state != VS_RESULT_SERVER_STATE_IN_PROGRESS &&
                   r.server_state != VS_RESULT_SERVER_STATE_OVER) {
            e->skip = VS_REPORT_NOT_SENT;
        } else if (r.server_state == VS_RESULT_SERVER_STATE_OVER &&
                   (r.outcome != VS_RESULT_OUTCOME_NO_REPLY || r.received_time != 0)) {
            e->skip = VS_REPORT_ALREADY_OVER;
        } else if (r.userid != userid) {
            /* The result's userid is copied from its host at send time;
             * hosts never change owner, so this is "a host of another user". */
            e->skip = VS_REPORT_OTHER_USER;
        } else {
            e->hostid = r.hostid;
            e->app_version_id = r.app_version_id;
        }
        if (e->skip != VS_REPORT_RECORD)
            VS_LOG(log, e->skip == VS_REPORT_OTHER_USER ? VS_LOG_WARN : VS_LOG_INFO,
                   "report of %s by user %lld: %s; acknowledged, not recorded", e->rep.name,
                   (long long)userid, skip_text(e->skip));
        if (e->skip == VS_REPORT_OTHER_USER)
            out->nrefused++;
    }
done:
    vs_result_cleanup(&r);
    return rc;
}

/* BOINC-COMPAT (sched_result.cpp got_bad_result): an errored result ends
 * the host's valid streak and, with a quota, lowers its daily limit for the
 * app version to one less than min(limit, quota), never below 1. */
static int got_bad_result(struct vs_store *w, int64_t hostid, int64_t avid, int quota)
{
    if (!hostid || !avid)
        return 0;
    struct vs_host_app_version h;
    int rc = vs_store_hav_get(w, hostid, avid, &h);
    if (rc == VS_ENOTFOUND) {
        memset(&h, 0, sizeof(h));
        h.host_id = hostid;
        h.app_version_id = avid;
    } else if (rc != 0) {
        return rc;
    }
    h.consecutive_valid = 0;
    if (quota > 0) {
        int eff = h.max_jobs_per_day > 0 && h.max_jobs_per_day < quota ? h.max_jobs_per_day : quota;
        h.max_jobs_per_day = eff - 1 < 1 ? 1 : eff - 1;
    }
    return vs_store_hav_put(w, &h);
}

int vs_reports_apply(struct vs_store *w, struct vs_reports *r, int64_t now)
{
    r->nrecorded = 0;
    r->ndup = 0;
    for (size_t i = 0; i < r->n; i++) {
        struct vs_report_entry *e = &r->e[i];
        e->dup = false;
        if (e->skip != VS_REPORT_RECORD)
            continue;
        int rc = vs_store_result_report(w, e->hostid, now, &e->rep, &e->dup);
        if (rc == VS_ENOTFOUND || rc == VS_ESTATE) {
            e->dup = true; /* changed since prepare: nothing to record */
            rc = 0;
        }
        if (rc != 0)
            return rc;
        if (e->dup) {
            r->ndup++;
            continue;
        }
        r->nrecorded++;
        bool ok =
            e->rep.client_state == VS_RESULT_CLIENT_STATE_FILES_UPLOADED && e->rep.exit_status == 0;
        if (!ok && e->rep.exit_status != EXIT_ABORTED_BY_PROJECT) {
            rc = got_bad_result(w, e->hostid, e->app_version_id, r->daily_quota);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

void vs_reports_ack(const struct vs_reports *r, struct vs_proto_reply *reply, struct vs_arena *a)
{
    if (r->n == 0)
        return;
    const char **acks = vs_arena_alloc(a, (reply->n_result_acks + r->n) * sizeof(*acks));
    for (size_t i = 0; i < reply->n_result_acks; i++)
        acks[i] = reply->result_acks[i];
    size_t n = reply->n_result_acks;
    for (size_t i = 0; i < r->n; i++)
        acks[n++] = r->e[i].ack_name;
    reply->result_acks = acks;
    reply->n_result_acks = n;
}
