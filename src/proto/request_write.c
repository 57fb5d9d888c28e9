/*
 * Scheduler request, client side: vs_proto_request_write(), with the field
 * tables of request_fields.c.
 *
 * BOINC-COMPAT: the element order written is the 7.20.5 client's
 * (cs_scheduler.cpp).
 */
#include <string.h>

#include "proto/request_int.h"

static void write_result(struct vs_xml_writer *w, const struct vs_proto_reported_result *res)
{
    vs_xml_open(w, "result");
    vs_proto__fields_write(w, VS_PROTO__TAB(vs_proto__rq_result), res);
    if (res->core_client_version || res->stderr_text) {
        /* BOINC-COMPAT: the client's layout; the app output goes in one CDATA section */
        vs_xml_raw_write(w, "<stderr_out>\n", 13);
        if (res->core_client_version) {
            int saved = w->depth;
            w->depth = 0;
            vs_xml_str(w, "core_client_version", res->core_client_version);
            w->depth = saved;
        }
        if (res->stderr_text) {
            vs_xml_cdata(w, res->stderr_text, strlen(res->stderr_text));
            vs_xml_raw_write(w, "\n", 1);
        }
        vs_xml_raw_write(w, "</stderr_out>\n", 14);
    }
    for (size_t i = 0; i < res->n_files; i++)
        vs_proto__struct_write(w, "file_info", VS_PROTO__TAB(vs_proto__rq_result_file),
                               &res->files[i]);
    vs_xml_close(w);
}

int vs_proto_request_write(const struct vs_proto_request *r, struct vs_buf *out)
{
    struct vs_xml_writer w;
    vs_xml_writer_init(&w, out);
    vs_xml_open(&w, "scheduler_request");
    vs_proto__fields_write(&w, VS_PROTO__TAB(vs_proto__rq_head), r);
    for (size_t i = 0; i < r->n_alt_platforms; i++) {
        vs_xml_open(&w, "alt_platform");
        vs_xml_str(&w, "name", r->alt_platforms[i]);
        vs_xml_close(&w);
    }
    vs_proto__fields_write(&w, VS_PROTO__TAB(vs_proto__rq_key), r);
    if (r->working_global_prefs) {
        vs_xml_raw_write(&w, "<working_global_preferences>\n", 29);
        vs_xml_raw_write(&w, r->working_global_prefs, strlen(r->working_global_prefs));
        vs_xml_raw_write(&w, "\n</working_global_preferences>\n", 31);
    }
    if (r->global_prefs) {
        vs_xml_raw_write(&w, r->global_prefs, strlen(r->global_prefs));
        vs_xml_raw_write(&w, "\n", 1);
    }
    vs_proto__fields_write(&w, VS_PROTO__TAB(vs_proto__rq_mid), r);
    vs_proto__struct_write(&w, "time_stats", VS_PROTO__TAB(vs_proto__rq_time_stats),
                           &r->time_stats);
    vs_proto__struct_write(&w, "net_stats", VS_PROTO__TAB(vs_proto__rq_net_stats), &r->net_stats);
    vs_proto__struct_write(&w, "host_info", VS_PROTO__TAB(vs_proto__rq_host), &r->host);
    vs_proto__struct_write(&w, "disk_usage", VS_PROTO__TAB(vs_proto__rq_disk), &r->disk_usage);
    if (r->n_coprocs) {
        vs_xml_open(&w, "coprocs");
        for (size_t i = 0; i < r->n_coprocs; i++) {
            const struct vs_proto_coproc *cp = &r->coprocs[i];
            const char *el = vs_proto__coproc_element(cp->type);
            vs_xml_open(&w, el ? el : "coproc");
            if (!el)
                vs_xml_str(&w, "type", cp->type ? cp->type : "");
            vs_proto__fields_write(&w, VS_PROTO__TAB(vs_proto__rq_coproc), cp);
            vs_xml_close(&w);
        }
        vs_xml_close(&w);
    }
    for (size_t i = 0; i < r->n_results; i++)
        write_result(&w, &r->results[i]);
    for (size_t i = 0; i < r->n_msgs_from_host; i++)
        vs_proto__struct_write(&w, "msg_from_host", VS_PROTO__TAB(vs_proto__rq_msg),
                               &r->msgs_from_host[i]);
    for (size_t i = 0; i < r->n_sticky_files; i++)
        vs_proto__struct_write(&w, "file_info", VS_PROTO__TAB(vs_proto__rq_sticky),
                               &r->sticky_files[i]);
    vs_xml_open(&w, "app_versions");
    for (size_t i = 0; i < r->n_app_versions; i++)
        vs_proto__struct_write(&w, "app_version", VS_PROTO__TAB(vs_proto__rq_app_versions.fields),
                               &r->app_versions[i]);
    vs_xml_close(&w);
    vs_xml_open(&w, "other_results");
    for (size_t i = 0; i < r->n_other_results; i++) {
        const struct vs_proto_other_result *o = &r->other_results[i];
        vs_xml_open(&w, "other_result");
        vs_xml_str(&w, "name", o->name);
        if (o->app_version >= 0)
            vs_xml_int(&w, "app_version", o->app_version);
        vs_xml_str(&w, "plan_class", o->plan_class);
        vs_xml_close(&w);
    }
    vs_xml_close(&w);
    if (r->has_in_progress_results || r->n_ip_results) {
        vs_xml_open(&w, "in_progress_results");
        for (size_t i = 0; i < r->n_ip_results; i++)
            vs_proto__struct_write(&w, "ip_result", VS_PROTO__TAB(vs_proto__rq_ip_results.fields),
                                   &r->ip_results[i]);
        vs_xml_close(&w);
    }
    if (r->client_opaque) {
        vs_xml_raw_write(&w, "<client_opaque>", 15);
        vs_xml_raw_write(&w, r->client_opaque, strlen(r->client_opaque));
        vs_xml_raw_write(&w, "</client_opaque>\n", 17);
    }
    vs_proto__fields_write(&w, VS_PROTO__TAB(vs_proto__rq_tail), r);
    vs_xml_close(&w);
    return vs_xml_writer_error(&w);
}
