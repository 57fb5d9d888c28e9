/*
 * Scheduler request: parse (server side) and write (client side).
 *
 * BOINC-COMPAT: the element order written is the 7.20.5 client's
 * (cs_scheduler.cpp); the parser accepts any order and skips unknown elements.
 */
#include <ctype.h>
#include <stdint.h>
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

/*
 * ---- direct parse (the server's request path) ----
 *
 * One pass over the body straight into the struct, no XML tree. It reads a
 * strict subset of XML: elements without attributes, ASCII text (printable,
 * tab, newline), the five predefined entities outside the fields it stores,
 * CDATA sections, and nothing else (no comments, no processing
 * instructions, no '\r', no bytes >= 0x80, no <coprocs>, <msg_from_host> or
 * <client_opaque>). Every value goes through the same field tables and
 * vs_proto__field_set() as the tree parser, so a request it accepts gives
 * the very struct vs_proto_request_parse() gives; anything else, any limit
 * near and any malformed value is left to that parser (DP_FALLBACK), which
 * then has the last word, error messages included.
 */
#define DP_FALLBACK 1
/* stricter than VS_XML_MAX_DEPTH, so the tree parser's depth error stays its own */
#define DP_MAX_DEPTH (VS_XML_MAX_DEPTH - 2)

struct dp {
    const char *s;
    size_t len, pos;
    size_t last_lt; /* offset of the last '<' of the body */
    struct vs_proto__ctx *c;
    int depth;
    size_t n_elements;
};

/* Plain character data: tab, newline and printable ASCII but '<', '&', ']'. */
/* clang-format off */
static const bool dp_plain[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};
/* clang-format on */

static void dp_ws(struct dp *f)
{
    while (f->pos < f->len && (f->s[f->pos] == ' ' || f->s[f->pos] == '\t' || f->s[f->pos] == '\n'))
        f->pos++;
}

/* Length of the predefined entity at s[i] == '&', 0 if it is none. */
static size_t dp_entity(const char *s, size_t len, size_t i)
{
    static const char *const ents[] = {"&lt;", "&gt;", "&amp;", "&quot;", "&apos;"};
    for (size_t k = 0; k < VS_NELEM(ents); k++) {
        size_t n = strlen(ents[k]);
        if (len - i >= n && memcmp(s + i, ents[k], n) == 0)
            return n;
    }
    return 0;
}

/*
 * Validates character data from f->pos to the next '<' and moves there.
 * *out_amp is set when it holds an entity (its bytes are then not the text).
 */
/* (inlined: called for every element, and the call cost a third of it) */
static inline __attribute__((always_inline)) int dp_text(struct dp *f, bool *out_amp)
{
    const char *s = f->s;
    size_t i = f->pos, len = f->len;
    /* A '<' at f->last_lt or before ends every run below, so the runs need
     * no bounds check: the text before a '<' is the common case. */
    if (i > f->last_lt)
        return DP_FALLBACK; /* an element left open */
    for (;;) {
        /* Most runs are short (indentation, a number): byte by byte; after
         * 16 plain bytes, eight at a time while none is below 0x20, at or
         * above 0x80, '<', '&' or ']' (a word may show a false hit, never
         * misses one). */
        unsigned k = 0;
        while (dp_plain[(unsigned char)s[i]]) {
            i++;
            if (++k == 16) {
                const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
                while (len - i >= 8) {
                    uint64_t w;
                    memcpy(&w, s + i, 8);
                    uint64_t lt = w ^ (ones * '<'), amp = w ^ (ones * '&'), br = w ^ (ones * ']');
                    if ((w | ((w - ones * 0x20) & ~w) | ((lt - ones) & ~lt) |
                         ((amp - ones) & ~amp) | ((br - ones) & ~br)) &
                        high)
                        break;
                    i += 8;
                }
                k = 0; /* (long texts with newlines: the key, the stderr) */
            }
        }
        char ch = s[i];
        if (ch == '<')
            break;
        if (ch == ']') {
            if (i + 2 < len && s[i + 1] == ']' && s[i + 2] == '>')
                return DP_FALLBACK;
            i++;
        } else if (ch == '&') {
            size_t m = dp_entity(s, len, i);
            if (!m)
                return DP_FALLBACK;
            *out_amp = true;
            i += m;
        } else {
            return DP_FALLBACK; /* control byte or non-ASCII: the tree parser's business */
        }
    }
    f->pos = i;
    return 0;
}

/* At "<![CDATA[": validates the section, returns its content span and moves past it. */
static int dp_cdata(struct dp *f, size_t *out_a, size_t *out_b)
{
    size_t a = f->pos + 9;
    const char *e = memmem(f->s + a, f->len - a, "]]>", 3);
    if (!e)
        return DP_FALLBACK;
    size_t b = (size_t)(e - f->s);
    for (size_t i = a; i < b; i++) {
        unsigned char ch = (unsigned char)f->s[i];
        if (ch >= 0x80 || (ch < 0x20 && ch != '\t' && ch != '\n'))
            return DP_FALLBACK;
    }
    *out_a = a;
    *out_b = b;
    f->pos = b + 3;
    return 0;
}

/* At '<' of a start tag: reads it (no attributes); opens it unless it is empty. */
static inline __attribute__((always_inline)) int dp_open(struct dp *f, const char **out_name,
                                                         size_t *out_nl, bool *out_empty)
{
    if (f->depth >= DP_MAX_DEPTH || f->n_elements >= VS_XML_MAX_ELEMENTS - 1)
        return DP_FALLBACK;
    size_t p = f->pos + 1;
    if (p >= f->len || !(vs_xml_name_class[(unsigned char)f->s[p]] & 1))
        return DP_FALLBACK;
    size_t a = p;
    while (vs_xml_name_class[(unsigned char)f->s[p]] &
           2) /* stops at the body's last '>' at worst */
        p++;
    if (p - a > VS_XML_MAX_NAME)
        return DP_FALLBACK;
    *out_name = f->s + a;
    *out_nl = p - a;
    f->pos = p;
    dp_ws(f);
    if (f->pos < f->len && f->s[f->pos] == '>') {
        f->pos++;
        *out_empty = false;
        f->depth++;
    } else if (f->pos + 1 < f->len && f->s[f->pos] == '/' && f->s[f->pos + 1] == '>') {
        f->pos += 2;
        *out_empty = true;
    } else {
        return DP_FALLBACK; /* attributes, or garbage */
    }
    f->n_elements++;
    return 0;
}

/* At "</": reads the end tag of the open element name[0..nl) and closes it. */
static int dp_close(struct dp *f, const char *name, size_t nl)
{
    size_t p = f->pos + 2;
    if (f->len - p < nl || memcmp(f->s + p, name, nl) != 0)
        return DP_FALLBACK;
    f->pos = p + nl;
    dp_ws(f);
    if (f->pos >= f->len || f->s[f->pos] != '>')
        return DP_FALLBACK;
    f->pos++;
    f->depth--;
    return 0;
}

enum { DP_END = 0, DP_CHILD = 2 };

/*
 * Moves to the next child of the open element name[0..nl): DP_CHILD with
 * the child's start tag read (its name, whether empty, the offset of its
 * '<'), or DP_END with the element's end tag read, or DP_FALLBACK. When own
 * is not NULL the element's own text (CDATA included) is appended to it.
 */
static int dp_next(struct dp *f, const char *name, size_t nl, struct vs_buf *own,
                   const char **out_name, size_t *out_nl, bool *out_empty, size_t *out_start)
{
    for (;;) {
        size_t a = f->pos;
        bool amp = false;
        if (dp_text(f, &amp))
            return DP_FALLBACK;
        if (own && f->pos > a && (amp || vs_buf_append(own, f->s + a, f->pos - a) != 0))
            return DP_FALLBACK;
        if (f->pos + 1 >= f->len)
            return DP_FALLBACK;
        char n1 = f->s[f->pos + 1];
        if (n1 == '/')
            return dp_close(f, name, nl) ? DP_FALLBACK : DP_END;
        if (n1 == '!') {
            size_t ca, cb;
            if (f->len - f->pos < 9 || memcmp(f->s + f->pos, "<![CDATA[", 9) != 0 ||
                dp_cdata(f, &ca, &cb))
                return DP_FALLBACK; /* comments and the rest */
            if (own && cb > ca && vs_buf_append(own, f->s + ca, cb - ca) != 0)
                return DP_FALLBACK;
            continue;
        }
        *out_start = f->pos;
        return dp_open(f, out_name, out_nl, out_empty) ? DP_FALLBACK : DP_CHILD;
    }
}

/* Skips (validating) the element whose start tag was just read. */
static int dp_skip(struct dp *f, const char *name, size_t nl, bool empty)
{
    if (empty)
        return 0;
    const char *cn;
    size_t cl, st;
    bool ce;
    int k;
    while ((k = dp_next(f, name, nl, NULL, &cn, &cl, &ce, &st)) == DP_CHILD)
        if (dp_skip(f, cn, cl, ce))
            return DP_FALLBACK;
    return k;
}

/* Reads a text-only element (start tag just read) as field fd of base. */
static int dp_field(struct dp *f, const struct vs_proto__field *fd, const char *name, size_t nl,
                    bool empty, void *base)
{
    size_t a = f->pos;
    if (!empty) {
        bool amp = false;
        if (dp_text(f, &amp) || amp || f->pos + 1 >= f->len || f->s[f->pos + 1] != '/')
            return DP_FALLBACK; /* entities, children, CDATA, comments: the tree parser */
    }
    size_t b = empty ? a : f->pos;
    if (!empty && dp_close(f, name, nl))
        return DP_FALLBACK;
    char num[128];
    const char *text;
    if (b == a) {
        text = ""; /* as the tree parser's empty text */
    } else if (fd->type == F_STR || fd->type == F_BLOCK || b - a >= sizeof(num)) {
        text = vs_arena_strndup(f->c->arena, f->s + a, b - a);
    } else {
        memcpy(num, f->s + a, b - a);
        num[b - a] = '\0';
        text = num;
    }
    /* (fd->name is this element's name: the table's copy, NUL-terminated) */
    struct vs_xml_node n = {.name = fd->name, .text = text, .text_len = b - a};
    vs_proto__field_set(f->c, fd, &n, base);
    return f->c->rc ? DP_FALLBACK : 0;
}

/* parse_struct(): the table's fields of the element, the rest skipped. */
static int dp_struct(struct dp *f, const struct vs_proto__field *tab, size_t n_tab,
                     const char *name, size_t nl, bool empty, void *base)
{
    if (empty)
        return 0;
    const char *cn;
    size_t cl, st;
    bool ce;
    int k;
    while ((k = dp_next(f, name, nl, NULL, &cn, &cl, &ce, &st)) == DP_CHILD) {
        const struct vs_proto__field *fd = vs_proto__field_find(tab, n_tab, cn, cl);
        if (fd ? dp_field(f, fd, cn, cl, ce, base) : dp_skip(f, cn, cl, ce))
            return DP_FALLBACK;
    }
    return k;
}

/* Room for one more element of an arena array (grown by doubling), or NULL over max. */
static void *dp_grow(struct dp *f, void *arr, size_t n, size_t *cap, size_t size, size_t max)
{
    if (n + 1 > max)
        return NULL;
    if (n < *cap)
        return arr;
    size_t nc = *cap ? *cap * 2 : 4;
    char *p = vs_arena_alloc(f->c->arena, nc * size);
    if (n)
        memcpy(p, arr, n * size);
    *cap = nc;
    return p;
}

static bool dp_is(const char *name, size_t nl, const char *lit)
{
    return strncmp(name, lit, nl) == 0 && lit[nl] == '\0';
}

/* Verbatim copy of s[a..f->pos) (an element just skipped) into *out, within max. */
static int dp_raw(struct dp *f, size_t a, size_t max, const char **out)
{
    if (f->pos - a > max)
        return DP_FALLBACK;
    *out = vs_arena_strndup(f->c->arena, f->s + a, f->pos - a);
    return 0;
}

struct dp_lists {
    size_t alt, res, sticky, av, other, ip;
};

/* parse_result(): fields, <stderr_out> and output <file_info>s. */
static int dp_result(struct dp *f, const char *name, size_t nl, bool empty,
                     struct vs_proto_reported_result *res)
{
    size_t cap_files = 0;
    const char *cn;
    size_t cl, st;
    bool ce;
    int k = DP_END;
    while (!empty && (k = dp_next(f, name, nl, NULL, &cn, &cl, &ce, &st)) == DP_CHILD) {
        const struct vs_proto__field *fd =
            vs_proto__field_find(result_fields, VS_NELEM(result_fields), cn, cl);
        int rc;
        if (fd) {
            rc = dp_field(f, fd, cn, cl, ce, res);
        } else if (dp_is(cn, cl, "file_info")) {
            res->files = dp_grow(f, res->files, res->n_files, &cap_files, sizeof(*res->files),
                                 VS_PROTO_MAX_LIST);
            rc = !res->files ? DP_FALLBACK
                             : dp_struct(f, result_file_fields, VS_NELEM(result_file_fields), cn,
                                         cl, ce, &res->files[res->n_files++]);
        } else if (dp_is(cn, cl, "stderr_out")) {
            /* its own text, and its first <core_client_version> */
            struct vs_buf own;
            vs_buf_init(&own, VS_XML_MAX_TEXT);
            bool got_ccv = false;
            const char *gn;
            size_t gl, gs;
            bool ge;
            int g = DP_END;
            while (!ce && (g = dp_next(f, cn, cl, &own, &gn, &gl, &ge, &gs)) == DP_CHILD) {
                if (!got_ccv && dp_is(gn, gl, "core_client_version")) {
                    static const struct vs_proto__field ccv = {
                        "core_client_version", F_STR,
                        offsetof(struct vs_proto_reported_result, core_client_version), 19};
                    got_ccv = true;
                    if (dp_field(f, &ccv, gn, gl, ge, res))
                        g = DP_FALLBACK;
                } else if (dp_skip(f, gn, gl, ge)) {
                    g = DP_FALLBACK;
                }
                if (g == DP_FALLBACK)
                    break;
            }
            rc = g;
            if (rc == DP_END) {
                const char *t = own.data ? own.data : "";
                size_t a = 0, e = own.len;
                while (a < e && isspace((unsigned char)t[a]))
                    a++;
                while (e > a && isspace((unsigned char)t[e - 1]))
                    e--;
                size_t cut = e - a;
                if (cut > VS_PROTO_MAX_STDERR) {
                    cut = VS_PROTO_MAX_STDERR;
                    while (cut > 0 && ((unsigned char)t[a + cut] & 0xc0) == 0x80)
                        cut--;
                }
                res->stderr_text = vs_arena_strndup(f->c->arena, t + a, cut);
            }
            vs_buf_cleanup(&own);
        } else {
            rc = dp_skip(f, cn, cl, ce);
        }
        if (rc)
            return DP_FALLBACK;
    }
    if (k != DP_END || !res->name || !*res->name)
        return DP_FALLBACK;
    return 0;
}

/* One child of <scheduler_request> (parse_top()). */
static int dp_top(struct dp *f, const char *cn, size_t cl, bool ce, size_t st,
                  struct vs_proto_request *r, struct dp_lists *cap)
{
    static const struct {
        const struct vs_proto__field *tab;
        size_t n;
    } tabs[] = {{head_fields, VS_NELEM(head_fields)},
                {key_fields, VS_NELEM(key_fields)},
                {mid_fields, VS_NELEM(mid_fields)},
                {tail_fields, VS_NELEM(tail_fields)}};
    for (size_t i = 0; i < VS_NELEM(tabs); i++) {
        const struct vs_proto__field *fd = vs_proto__field_find(tabs[i].tab, tabs[i].n, cn, cl);
        if (fd)
            return dp_field(f, fd, cn, cl, ce, r);
    }
    const char *gn;
    size_t gl, gs;
    bool ge;
    int k;
    if (dp_is(cn, cl, "alt_platform")) {
        const char *nm = NULL;
        k = DP_END;
        while (!ce && (k = dp_next(f, cn, cl, NULL, &gn, &gl, &ge, &gs)) == DP_CHILD) {
            static const struct vs_proto__field namef = {"name", F_STR, 0, 4};
            int rc = (!nm && dp_is(gn, gl, "name")) ? dp_field(f, &namef, gn, gl, ge, (void *)&nm)
                                                    : dp_skip(f, gn, gl, ge);
            if (rc)
                return DP_FALLBACK;
        }
        if (k != DP_END)
            return DP_FALLBACK;
        if (nm) {
            r->alt_platforms = dp_grow(f, r->alt_platforms, r->n_alt_platforms, &cap->alt,
                                       sizeof(char *), VS_PROTO_MAX_LIST);
            if (!r->alt_platforms)
                return DP_FALLBACK;
            r->alt_platforms[r->n_alt_platforms++] = nm;
        }
        return 0;
    }
    if (dp_is(cn, cl, "working_global_preferences")) {
        bool got = false;
        k = DP_END;
        while (!ce && (k = dp_next(f, cn, cl, NULL, &gn, &gl, &ge, &gs)) == DP_CHILD) {
            if (dp_skip(f, gn, gl, ge))
                return DP_FALLBACK;
            if (!got && dp_is(gn, gl, "global_preferences")) {
                got = true;
                if (dp_raw(f, gs, VS_PROTO_MAX_PREFS, &r->working_global_prefs))
                    return DP_FALLBACK;
            }
        }
        return k;
    }
    if (dp_is(cn, cl, "global_preferences"))
        return dp_skip(f, cn, cl, ce) || dp_raw(f, st, VS_PROTO_MAX_PREFS, &r->global_prefs);
    if (dp_is(cn, cl, "time_stats"))
        return dp_struct(f, time_stats_fields, VS_NELEM(time_stats_fields), cn, cl, ce,
                         &r->time_stats);
    if (dp_is(cn, cl, "net_stats"))
        return dp_struct(f, net_stats_fields, VS_NELEM(net_stats_fields), cn, cl, ce,
                         &r->net_stats);
    if (dp_is(cn, cl, "disk_usage"))
        return dp_struct(f, disk_fields, VS_NELEM(disk_fields), cn, cl, ce, &r->disk_usage);
    if (dp_is(cn, cl, "host_info")) {
        k = DP_END;
        while (!ce && (k = dp_next(f, cn, cl, NULL, &gn, &gl, &ge, &gs)) == DP_CHILD) {
            if (dp_is(gn, gl, "coprocs"))
                return DP_FALLBACK;
            const struct vs_proto__field *fd =
                vs_proto__field_find(host_fields, VS_NELEM(host_fields), gn, gl);
            if (fd ? dp_field(f, fd, gn, gl, ge, &r->host) : dp_skip(f, gn, gl, ge))
                return DP_FALLBACK;
        }
        return k;
    }
    if (dp_is(cn, cl, "result")) {
        r->results = dp_grow(f, r->results, r->n_results, &cap->res, sizeof(*r->results),
                             VS_PROTO_MAX_RESULTS);
        if (!r->results)
            return DP_FALLBACK;
        return dp_result(f, cn, cl, ce, &r->results[r->n_results++]);
    }
    if (dp_is(cn, cl, "file_info")) {
        r->sticky_files = dp_grow(f, r->sticky_files, r->n_sticky_files, &cap->sticky,
                                  sizeof(*r->sticky_files), VS_PROTO_MAX_FILE_INFOS);
        if (!r->sticky_files)
            return DP_FALLBACK;
        return dp_struct(f, sticky_fields, VS_NELEM(sticky_fields), cn, cl, ce,
                         &r->sticky_files[r->n_sticky_files++]);
    }
    if (dp_is(cn, cl, "app_versions") || dp_is(cn, cl, "other_results") ||
        dp_is(cn, cl, "in_progress_results")) {
        /* as parse_app_versions() & co.: each such element replaces the list */
        char kind = cn[0];
        if (kind == 'a') {
            r->app_versions = NULL;
            r->n_app_versions = cap->av = 0;
        } else if (kind == 'o') {
            r->other_results = NULL;
            r->n_other_results = cap->other = 0;
        } else {
            r->has_in_progress_results = true;
            r->ip_results = NULL;
            r->n_ip_results = cap->ip = 0;
        }
        k = DP_END;
        while (!ce && (k = dp_next(f, cn, cl, NULL, &gn, &gl, &ge, &gs)) == DP_CHILD) {
            int rc;
            if (kind == 'a' && dp_is(gn, gl, "app_version")) {
                r->app_versions = dp_grow(f, r->app_versions, r->n_app_versions, &cap->av,
                                          sizeof(*r->app_versions), VS_PROTO_MAX_APP_VERSIONS);
                rc = !r->app_versions ? DP_FALLBACK
                                      : dp_struct(f, cav_fields, VS_NELEM(cav_fields), gn, gl, ge,
                                                  &r->app_versions[r->n_app_versions++]);
            } else if (kind == 'o' && dp_is(gn, gl, "other_result")) {
                r->other_results = dp_grow(f, r->other_results, r->n_other_results, &cap->other,
                                           sizeof(*r->other_results), VS_PROTO_MAX_OTHER_RESULTS);
                if (!r->other_results)
                    return DP_FALLBACK;
                struct vs_proto_other_result *o = &r->other_results[r->n_other_results++];
                o->app_version = -1;
                rc = dp_struct(f, other_fields, VS_NELEM(other_fields), gn, gl, ge, o);
            } else if (kind == 'i' && dp_is(gn, gl, "ip_result")) {
                r->ip_results = dp_grow(f, r->ip_results, r->n_ip_results, &cap->ip,
                                        sizeof(*r->ip_results), VS_PROTO_MAX_OTHER_RESULTS);
                rc = !r->ip_results ? DP_FALLBACK
                                    : dp_struct(f, ip_fields, VS_NELEM(ip_fields), gn, gl, ge,
                                                &r->ip_results[r->n_ip_results++]);
            } else {
                rc = dp_skip(f, gn, gl, ge);
            }
            if (rc)
                return DP_FALLBACK;
        }
        return k;
    }
    if (dp_is(cn, cl, "coprocs") || dp_is(cn, cl, "msg_from_host") ||
        dp_is(cn, cl, "client_opaque"))
        return DP_FALLBACK; /* rare: the tree parser handles them */
    return dp_skip(f, cn, cl, ce);
}

int vs_proto_request_parse_direct(const char *body, size_t len, struct vs_arena *arena,
                                  struct vs_proto_request *out)
{
    /* Under VS_XML_MAX_TEXT no element's text can reach that limit. */
    if (len > VS_XML_MAX_TEXT || memchr(body, '\r', len))
        return VS_EUNSUPPORTED;
    struct vs_proto__ctx c = {.arena = arena};
    const char *lt = memrchr(body, '<', len);
    size_t end = len;
    while (end > 0 && (body[end - 1] == ' ' || body[end - 1] == '\t' || body[end - 1] == '\n'))
        end--;
    if (!lt || end == 0 || body[end - 1] != '>')
        return VS_EUNSUPPORTED; /* (so that a name scan always meets a non-name byte) */
    struct dp f = {.s = body, .len = len, .c = &c, .last_lt = (size_t)(lt - body)};
    struct vs_proto_request r;
    memset(&r, 0, sizeof(r));
    struct dp_lists cap = {0};
    const char *rn;
    size_t rl;
    bool re;
    dp_ws(&f);
    if (f.pos >= len || body[f.pos] != '<' || dp_open(&f, &rn, &rl, &re) || re ||
        !dp_is(rn, rl, "scheduler_request"))
        return VS_EUNSUPPORTED;
    const char *cn;
    size_t cl, st;
    bool ce;
    int k;
    while ((k = dp_next(&f, rn, rl, NULL, &cn, &cl, &ce, &st)) == DP_CHILD)
        if (dp_top(&f, cn, cl, ce, st, &r, &cap))
            return VS_EUNSUPPORTED;
    if (k != DP_END)
        return VS_EUNSUPPORTED;
    dp_ws(&f);
    if (f.pos != len)
        return VS_EUNSUPPORTED;
    *out = r;
    return 0;
}

int vs_proto_request_parse_fast(const char *body, size_t len, struct vs_arena *arena,
                                struct vs_proto_request *out, struct vs_proto_error *out_err)
{
    if (vs_proto_request_parse_direct(body, len, arena, out) == 0) {
        if (out_err) {
            out_err->code = 0;
            out_err->msg[0] = '\0';
        }
        return 0;
    }
    return vs_proto_request_parse(body, len, arena, out, out_err);
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
