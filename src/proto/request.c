/*
 * Scheduler request: parse (server side) and write (client side).
 *
 * BOINC-COMPAT: the element order written is the 7.20.5 client's
 * (cs_scheduler.cpp); the parser accepts any order and skips unknown elements.
 */
#include <string.h>

#include "proto/proto_int.h"

#define T struct vs_proto_request
/* Top-level scalars, written in this order before <alt_platform>. */
static const struct vs_proto__field head_fields[] = {
    FLD(T, authenticator, F_STR),
    FLD(T, hostid, F_I64),
    FLD(T, rpc_seqno, F_I64),
    FLD(T, core_client_major_version, F_INT),
    FLD(T, core_client_minor_version, F_INT),
    FLD(T, core_client_release, F_INT),
    FLD(T, resource_share_fraction, F_DBL),
    FLD(T, rrs_fraction, F_DBL),
    FLD(T, prrs_fraction, F_DBL),
    FLD(T, duration_correction_factor, F_DBL),
    FLD(T, allow_multiple_clients, F_BOOL),
    FLD(T, sandbox, F_BOOL),
    FLD(T, dont_send_work, F_BOOL),
    FLD(T, work_req_seconds, F_DBL),
    FLD(T, cpu_req_secs, F_DBL),
    FLD(T, cpu_req_instances, F_DBL),
    FLD(T, estimated_delay, F_DBL),
    FLD(T, client_cap_plan_class, F_INT),
    FLD(T, platform_name, F_STR),
};
static const struct vs_proto__field key_fields[] = {
    FLD(T, code_sign_key, F_BLOCK),
};
static const struct vs_proto__field mid_fields[] = {
    FLD(T, cross_project_id, F_STR),
};
static const struct vs_proto__field tail_fields[] = {
    FLD(T, client_brand, F_STR),
};
#undef T

#define T struct vs_proto_time_stats
static const struct vs_proto__field time_stats_fields[] = {
    FLD(T, on_frac, F_DBL),
    FLD(T, connected_frac, F_DBL),
    FLD(T, cpu_and_network_available_frac, F_DBL),
    FLD(T, active_frac, F_DBL),
    FLD(T, gpu_active_frac, F_DBL),
    FLD(T, client_start_time, F_DBL),
    FLD(T, total_start_time, F_DBL),
    FLD(T, total_duration, F_DBL),
    FLD(T, total_active_duration, F_DBL),
    FLD(T, total_gpu_active_duration, F_DBL),
    FLD(T, now, F_DBL),
    FLD(T, previous_uptime, F_DBL),
    FLD(T, session_active_duration, F_DBL),
    FLD(T, session_gpu_active_duration, F_DBL),
};
#undef T

#define T struct vs_proto_net_stats
static const struct vs_proto__field net_stats_fields[] = {
    FLD(T, bwup, F_DBL),   FLD(T, avg_up, F_DBL),   FLD(T, avg_time_up, F_DBL),
    FLD(T, bwdown, F_DBL), FLD(T, avg_down, F_DBL), FLD(T, avg_time_down, F_DBL),
};
#undef T

#define T struct vs_proto_host_info
static const struct vs_proto__field host_fields[] = {
    FLD(T, timezone, F_INT),
    FLD(T, domain_name, F_STR),
    FLD(T, ip_addr, F_STR),
    FLD(T, host_cpid, F_STR),
    FLD(T, p_ncpus, F_INT),
    FLD(T, p_vendor, F_STR),
    FLD(T, p_model, F_STR),
    FLD(T, p_features, F_STR),
    FLD(T, p_fpops, F_DBL),
    FLD(T, p_iops, F_DBL),
    FLD(T, p_membw, F_DBL),
    FLD(T, p_calculated, F_DBL),
    FLD(T, p_vm_extensions_disabled, F_BOOL),
    FLD(T, m_nbytes, F_DBL),
    FLD(T, m_cache, F_DBL),
    FLD(T, m_swap, F_DBL),
    FLD(T, d_total, F_DBL),
    FLD(T, d_free, F_DBL),
    FLD(T, os_name, F_STR),
    FLD(T, os_version, F_STR),
    FLD(T, n_usable_coprocs, F_INT),
    FLD(T, wsl_available, F_BOOL),
    FLD(T, product_name, F_STR),
    FLD(T, virtualbox_version, F_STR),
};
#undef T

#define T struct vs_proto_disk_usage
static const struct vs_proto__field disk_fields[] = {
    FLD(T, d_boinc_used_total, F_DBL),
    FLD(T, d_boinc_used_project, F_DBL),
    FLD(T, d_project_share, F_DBL),
};
#undef T

#define T struct vs_proto_coproc
static const struct vs_proto__field coproc_fields[] = {
    FLD(T, count, F_INT),           FLD(T, name, F_STR),
    FLD(T, peak_flops, F_DBL),      FLD(T, available_ram, F_DBL_OPT),
    FLD(T, req_secs, F_DBL),        FLD(T, req_instances, F_DBL),
    FLD(T, estimated_delay, F_DBL),
};
#undef T

#define T struct vs_proto_reported_result
static const struct vs_proto__field result_fields[] = {
    FLD(T, name, F_STR),
    FLD(T, final_cpu_time, F_DBL),
    FLD(T, final_elapsed_time, F_DBL),
    FLD(T, exit_status, F_INT),
    FLD(T, state, F_INT),
    FLD(T, platform, F_STR),
    FLD(T, version_num, F_INT),
    FLD(T, plan_class, F_STR),
    FLD(T, fpops_per_cpu_sec, F_DBL_OPT),
    FLD(T, fpops_cumulative, F_DBL_OPT),
    FLD(T, intops_per_cpu_sec, F_DBL_OPT),
    FLD(T, intops_cumulative, F_DBL_OPT),
    FLD(T, final_peak_working_set_size, F_DBL_OPT),
    FLD(T, final_peak_swap_size, F_DBL_OPT),
    FLD(T, final_peak_disk_usage, F_DBL_OPT),
    FLD(T, final_bytes_sent, F_DBL_OPT),
    FLD(T, final_bytes_received, F_DBL_OPT),
    FLD(T, app_version_num, F_INT),
};
#undef T

#define T struct vs_proto_result_file
static const struct vs_proto__field result_file_fields[] = {
    FLD(T, name, F_STR),      FLD(T, nbytes, F_DBL),     FLD(T, max_nbytes, F_DBL),
    FLD(T, md5_cksum, F_STR), FLD(T, upload_url, F_STR),
};
#undef T

#define T struct vs_proto_msg_from_host
static const struct vs_proto__field msg_fields[] = {
    FLD(T, result_name, F_STR),
    FLD(T, variety, F_STR),
    FLD(T, msg_text, F_STR),
};
#undef T

#define T struct vs_proto_sticky_file
static const struct vs_proto__field sticky_fields[] = {
    FLD(T, name, F_STR),
    FLD(T, nbytes, F_DBL),
    FLD(T, status, F_INT),
};
#undef T

#define T struct vs_proto_client_app_version
static const struct vs_proto__field cav_fields[] = {
    FLD(T, app_name, F_STR),    FLD(T, version_num, F_INT), FLD(T, platform, F_STR),
    FLD(T, plan_class, F_STR),  FLD(T, avg_ncpus, F_DBL),   FLD(T, flops, F_DBL),
    FLD(T, api_version, F_STR), FLD(T, cmdline, F_STR),     FLD(T, file_prefix, F_STR),
};
#undef T

#define T struct vs_proto_other_result
static const struct vs_proto__field other_fields[] = {
    FLD(T, name, F_STR),
    FLD(T, app_version, F_INT),
    FLD(T, plan_class, F_STR),
};
#undef T

#define T struct vs_proto_ip_result
static const struct vs_proto__field ip_fields[] = {
    FLD(T, name, F_STR),
    FLD(T, report_deadline, F_DBL),
    FLD(T, time_remaining, F_DBL),
    FLD(T, avg_ncpus, F_DBL),
    FLD(T, ncudas, F_DBL_OPT),
    FLD(T, natis, F_DBL_OPT),
    FLD(T, nintel_gpus, F_DBL_OPT),
};
#undef T

/* BOINC-COMPAT: the coprocessor element names and the type each stands for. */
static const struct {
    const char *element;
    const char *type;
} coproc_names[] = {
    {"coproc_cuda", "NVIDIA"},
    {"coproc_ati", "ATI"},
    {"coproc_intel_gpu", "intel_gpu"},
};

/* Parses every child of n found in tab; skips the rest. */
static void parse_struct(struct vs_proto__ctx *c, const struct vs_proto__field *tab, size_t n_tab,
                         const struct vs_xml_node *n, void *base)
{
    for (const struct vs_xml_node *x = n->child; x && !c->rc; x = x->next)
        vs_proto__field_parse(c, tab, n_tab, x, base);
}

static void parse_coprocs(struct vs_proto__ctx *c, const struct vs_xml_node *n,
                          struct vs_proto_request *r)
{
    size_t k = vs_proto__count(n, NULL) + r->n_coprocs;
    struct vs_proto_coproc *a =
        vs_proto__array(c, k, sizeof(*a), VS_PROTO_MAX_LIST, "coprocessor types");
    if (c->rc)
        return;
    if (r->n_coprocs)
        memcpy(a, r->coprocs, r->n_coprocs * sizeof(*a));
    size_t i = r->n_coprocs;
    for (const struct vs_xml_node *x = n->child; x && !c->rc; x = x->next) {
        const char *type = NULL;
        for (size_t j = 0; j < VS_NELEM(coproc_names); j++)
            if (strcmp(x->name, coproc_names[j].element) == 0)
                type = coproc_names[j].type;
        if (!type && strcmp(x->name, "coproc") == 0) {
            const struct vs_xml_node *t = vs_xml_child(x, "type");
            type = t ? vs_proto__str(c, t, VS_PROTO_MAX_STRING) : NULL;
        }
        if (!type)
            continue; /* an unknown element inside <coprocs> */
        a[i].type = type;
        parse_struct(c, coproc_fields, VS_NELEM(coproc_fields), x, &a[i]);
        i++;
    }
    r->coprocs = a;
    r->n_coprocs = i;
}

static void parse_result(struct vs_proto__ctx *c, const struct vs_xml_node *n,
                         struct vs_proto_reported_result *res)
{
    size_t nf = vs_proto__count(n, "file_info");
    res->files = vs_proto__array(c, nf, sizeof(*res->files), VS_PROTO_MAX_LIST,
                                 "output files in one result");
    for (const struct vs_xml_node *x = n->child; x && !c->rc; x = x->next) {
        if (vs_proto__field_parse(c, result_fields, VS_NELEM(result_fields), x, res))
            continue;
        if (strcmp(x->name, "stderr_out") == 0) {
            const struct vs_xml_node *v = vs_xml_child(x, "core_client_version");
            if (v)
                res->core_client_version = vs_proto__str(c, v, VS_PROTO_MAX_STRING);
            /*
             * The app's stderr is kept, but cut at VS_PROTO_MAX_STDERR: a
             * result must still be acknowledged when its app was chatty.
             */
            const char *t = vs_xml_text_trim(x, c->arena);
            size_t tl = strlen(t);
            if (tl > VS_PROTO_MAX_STDERR) {
                size_t cut = VS_PROTO_MAX_STDERR;
                /* cut on a UTF-8 character boundary, so the text stays valid */
                while (cut > 0 && ((unsigned char)t[cut] & 0xc0) == 0x80)
                    cut--;
                t = vs_arena_strndup(c->arena, t, cut);
            }
            res->stderr_text = t;
        } else if (strcmp(x->name, "file_info") == 0) {
            parse_struct(c, result_file_fields, VS_NELEM(result_file_fields), x,
                         &res->files[res->n_files++]);
        }
    }
    if (!c->rc && (!res->name || !*res->name))
        vs_proto__fail(c, VS_EPARSE, "line %u: reported <result> without a <name>", n->line);
}

/* Allocates the arrays of the repeated top-level elements in one counting pass. */
static void alloc_lists(struct vs_proto__ctx *c, const struct vs_xml_node *root,
                        struct vs_proto_request *r)
{
    size_t n_alt = 0, n_res = 0, n_msg = 0, n_sticky = 0;
    for (const struct vs_xml_node *x = root->child; x; x = x->next) {
        switch (x->name[0]) {
        case 'a':
            n_alt += strcmp(x->name, "alt_platform") == 0;
            break;
        case 'r':
            n_res += strcmp(x->name, "result") == 0;
            break;
        case 'm':
            n_msg += strcmp(x->name, "msg_from_host") == 0;
            break;
        case 'f':
            n_sticky += strcmp(x->name, "file_info") == 0;
            break;
        default:
            break;
        }
    }
    r->alt_platforms =
        vs_proto__array(c, n_alt, sizeof(char *), VS_PROTO_MAX_LIST, "alternate platforms");
    r->results =
        vs_proto__array(c, n_res, sizeof(*r->results), VS_PROTO_MAX_RESULTS, "reported results");
    r->msgs_from_host = vs_proto__array(c, n_msg, sizeof(*r->msgs_from_host), VS_PROTO_MAX_LIST,
                                        "trickle-up messages");
    r->sticky_files = vs_proto__array(c, n_sticky, sizeof(*r->sticky_files),
                                      VS_PROTO_MAX_FILE_INFOS, "sticky files");
}

static void parse_app_versions(struct vs_proto__ctx *c, const struct vs_xml_node *n,
                               struct vs_proto_request *r)
{
    size_t k = vs_proto__count(n, "app_version");
    r->app_versions =
        vs_proto__array(c, k, sizeof(*r->app_versions), VS_PROTO_MAX_APP_VERSIONS, "app versions");
    r->n_app_versions = 0;
    for (const struct vs_xml_node *x = n->child; x && !c->rc; x = x->next)
        if (strcmp(x->name, "app_version") == 0)
            parse_struct(c, cav_fields, VS_NELEM(cav_fields), x,
                         &r->app_versions[r->n_app_versions++]);
}

static void parse_other_results(struct vs_proto__ctx *c, const struct vs_xml_node *n,
                                struct vs_proto_request *r)
{
    size_t k = vs_proto__count(n, "other_result");
    r->other_results = vs_proto__array(c, k, sizeof(*r->other_results), VS_PROTO_MAX_OTHER_RESULTS,
                                       "other results");
    r->n_other_results = 0;
    for (const struct vs_xml_node *x = n->child; x && !c->rc; x = x->next) {
        if (strcmp(x->name, "other_result") != 0)
            continue;
        struct vs_proto_other_result *o = &r->other_results[r->n_other_results++];
        o->app_version = -1;
        parse_struct(c, other_fields, VS_NELEM(other_fields), x, o);
    }
}

static void parse_ip_results(struct vs_proto__ctx *c, const struct vs_xml_node *n,
                             struct vs_proto_request *r)
{
    size_t k = vs_proto__count(n, "ip_result");
    r->has_in_progress_results = true;
    r->ip_results = vs_proto__array(c, k, sizeof(*r->ip_results), VS_PROTO_MAX_OTHER_RESULTS,
                                    "in-progress results");
    r->n_ip_results = 0;
    for (const struct vs_xml_node *x = n->child; x && !c->rc; x = x->next)
        if (strcmp(x->name, "ip_result") == 0)
            parse_struct(c, ip_fields, VS_NELEM(ip_fields), x, &r->ip_results[r->n_ip_results++]);
}

static void parse_top(struct vs_proto__ctx *c, const struct vs_xml_node *x,
                      struct vs_proto_request *r)
{
    if (vs_proto__field_parse(c, head_fields, VS_NELEM(head_fields), x, r) ||
        vs_proto__field_parse(c, key_fields, VS_NELEM(key_fields), x, r) ||
        vs_proto__field_parse(c, mid_fields, VS_NELEM(mid_fields), x, r) ||
        vs_proto__field_parse(c, tail_fields, VS_NELEM(tail_fields), x, r))
        return;
    const char *nm = x->name;
    if (strcmp(nm, "alt_platform") == 0) {
        const struct vs_xml_node *n = vs_xml_child(x, "name");
        if (n)
            r->alt_platforms[r->n_alt_platforms++] = vs_proto__str(c, n, VS_PROTO_MAX_STRING);
    } else if (strcmp(nm, "working_global_preferences") == 0) {
        const struct vs_xml_node *g = vs_xml_child(x, "global_preferences");
        if (g)
            r->working_global_prefs = vs_proto__raw(c, g, VS_PROTO_MAX_PREFS);
    } else if (strcmp(nm, "global_preferences") == 0) {
        r->global_prefs = vs_proto__raw(c, x, VS_PROTO_MAX_PREFS);
    } else if (strcmp(nm, "time_stats") == 0) {
        parse_struct(c, time_stats_fields, VS_NELEM(time_stats_fields), x, &r->time_stats);
    } else if (strcmp(nm, "net_stats") == 0) {
        parse_struct(c, net_stats_fields, VS_NELEM(net_stats_fields), x, &r->net_stats);
    } else if (strcmp(nm, "host_info") == 0) {
        parse_struct(c, host_fields, VS_NELEM(host_fields), x, &r->host);
        /* some clients put <coprocs> inside <host_info> */
        const struct vs_xml_node *cp = vs_xml_child(x, "coprocs");
        if (cp)
            parse_coprocs(c, cp, r);
    } else if (strcmp(nm, "disk_usage") == 0) {
        parse_struct(c, disk_fields, VS_NELEM(disk_fields), x, &r->disk_usage);
    } else if (strcmp(nm, "coprocs") == 0) {
        parse_coprocs(c, x, r);
    } else if (strcmp(nm, "result") == 0) {
        parse_result(c, x, &r->results[r->n_results++]);
    } else if (strcmp(nm, "msg_from_host") == 0) {
        parse_struct(c, msg_fields, VS_NELEM(msg_fields), x,
                     &r->msgs_from_host[r->n_msgs_from_host++]);
    } else if (strcmp(nm, "file_info") == 0) {
        parse_struct(c, sticky_fields, VS_NELEM(sticky_fields), x,
                     &r->sticky_files[r->n_sticky_files++]);
    } else if (strcmp(nm, "app_versions") == 0) {
        parse_app_versions(c, x, r);
    } else if (strcmp(nm, "other_results") == 0) {
        parse_other_results(c, x, r);
    } else if (strcmp(nm, "in_progress_results") == 0) {
        parse_ip_results(c, x, r);
    } else if (strcmp(nm, "client_opaque") == 0) {
        size_t len;
        const char *in = vs_xml_inner_raw(c->doc, x, &len);
        if (len > VS_PROTO_MAX_PREFS)
            vs_proto__fail(c, VS_ELIMIT, "<client_opaque> longer than %u bytes",
                           VS_PROTO_MAX_PREFS);
        else
            r->client_opaque = vs_arena_strndup(c->arena, in, len);
    }
    /* anything else: a field we do not use; skipped */
}

int vs_proto_request_parse(const char *body, size_t len, struct vs_arena *arena,
                           struct vs_proto_request *out, struct vs_proto_error *out_err)
{
    struct vs_proto__ctx c = {.arena = arena, .err = out_err};
    struct vs_xml_doc doc;
    if (out_err) {
        out_err->code = 0;
        out_err->msg[0] = '\0';
    }
    int rc =
        vs_proto__parse_xml(&c, body, len, VS_PROTO_MAX_REQUEST_BYTES, VS_XML_REPAIR_BYTES, &doc);
    if (rc)
        return rc;
    if (strcmp(doc.root->name, "scheduler_request") != 0)
        return vs_proto__fail(&c, VS_EPARSE, "root element is <%s>, not <scheduler_request>",
                              doc.root->name);
    struct vs_proto_request r;
    memset(&r, 0, sizeof(r));
    alloc_lists(&c, doc.root, &r);
    for (const struct vs_xml_node *x = doc.root->child; x && !c.rc; x = x->next)
        parse_top(&c, x, &r);
    if (c.rc)
        return c.rc;
    *out = r;
    return 0;
}

bool vs_proto_request_wants_work(const struct vs_proto_request *req)
{
    if (req->work_req_seconds > 0 || req->cpu_req_secs > 0)
        return true;
    for (size_t i = 0; i < req->n_coprocs; i++)
        if (req->coprocs[i].req_secs > 0)
            return true;
    return false;
}

/* ---- writer ---- */

static void write_struct(struct vs_xml_writer *w, const char *name,
                         const struct vs_proto__field *tab, size_t n_tab, const void *base)
{
    vs_xml_open(w, name);
    vs_proto__fields_write(w, tab, n_tab, base);
    vs_xml_close(w);
}

static void write_result(struct vs_xml_writer *w, const struct vs_proto_reported_result *res)
{
    vs_xml_open(w, "result");
    vs_proto__fields_write(w, result_fields, VS_NELEM(result_fields), res);
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
        write_struct(w, "file_info", result_file_fields, VS_NELEM(result_file_fields),
                     &res->files[i]);
    vs_xml_close(w);
}

int vs_proto_request_write(const struct vs_proto_request *r, struct vs_buf *out)
{
    struct vs_xml_writer w;
    vs_xml_writer_init(&w, out);
    vs_xml_open(&w, "scheduler_request");
    vs_proto__fields_write(&w, head_fields, VS_NELEM(head_fields), r);
    for (size_t i = 0; i < r->n_alt_platforms; i++) {
        vs_xml_open(&w, "alt_platform");
        vs_xml_str(&w, "name", r->alt_platforms[i]);
        vs_xml_close(&w);
    }
    vs_proto__fields_write(&w, key_fields, VS_NELEM(key_fields), r);
    if (r->working_global_prefs) {
        vs_xml_raw_write(&w, "<working_global_preferences>\n", 29);
        vs_xml_raw_write(&w, r->working_global_prefs, strlen(r->working_global_prefs));
        vs_xml_raw_write(&w, "\n</working_global_preferences>\n", 31);
    }
    if (r->global_prefs) {
        vs_xml_raw_write(&w, r->global_prefs, strlen(r->global_prefs));
        vs_xml_raw_write(&w, "\n", 1);
    }
    vs_proto__fields_write(&w, mid_fields, VS_NELEM(mid_fields), r);
    write_struct(&w, "time_stats", time_stats_fields, VS_NELEM(time_stats_fields), &r->time_stats);
    write_struct(&w, "net_stats", net_stats_fields, VS_NELEM(net_stats_fields), &r->net_stats);
    write_struct(&w, "host_info", host_fields, VS_NELEM(host_fields), &r->host);
    write_struct(&w, "disk_usage", disk_fields, VS_NELEM(disk_fields), &r->disk_usage);
    if (r->n_coprocs) {
        vs_xml_open(&w, "coprocs");
        for (size_t i = 0; i < r->n_coprocs; i++) {
            const struct vs_proto_coproc *cp = &r->coprocs[i];
            const char *el = NULL;
            for (size_t j = 0; j < VS_NELEM(coproc_names); j++)
                if (cp->type && strcmp(cp->type, coproc_names[j].type) == 0)
                    el = coproc_names[j].element;
            vs_xml_open(&w, el ? el : "coproc");
            if (!el)
                vs_xml_str(&w, "type", cp->type ? cp->type : "");
            vs_proto__fields_write(&w, coproc_fields, VS_NELEM(coproc_fields), cp);
            vs_xml_close(&w);
        }
        vs_xml_close(&w);
    }
    for (size_t i = 0; i < r->n_results; i++)
        write_result(&w, &r->results[i]);
    for (size_t i = 0; i < r->n_msgs_from_host; i++)
        write_struct(&w, "msg_from_host", msg_fields, VS_NELEM(msg_fields), &r->msgs_from_host[i]);
    for (size_t i = 0; i < r->n_sticky_files; i++)
        write_struct(&w, "file_info", sticky_fields, VS_NELEM(sticky_fields), &r->sticky_files[i]);
    vs_xml_open(&w, "app_versions");
    for (size_t i = 0; i < r->n_app_versions; i++)
        write_struct(&w, "app_version", cav_fields, VS_NELEM(cav_fields), &r->app_versions[i]);
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
            write_struct(&w, "ip_result", ip_fields, VS_NELEM(ip_fields), &r->ip_results[i]);
        vs_xml_close(&w);
    }
    if (r->client_opaque) {
        vs_xml_raw_write(&w, "<client_opaque>", 15);
        vs_xml_raw_write(&w, r->client_opaque, strlen(r->client_opaque));
        vs_xml_raw_write(&w, "</client_opaque>\n", 17);
    }
    vs_proto__fields_write(&w, tail_fields, VS_NELEM(tail_fields), r);
    vs_xml_close(&w);
    return vs_xml_writer_error(&w);
}
