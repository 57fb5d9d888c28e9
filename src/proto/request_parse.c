/*
 * Scheduler request, server side: the tree reader, vs_proto_request_parse().
 * The body is parsed by expat (vs_xml_parse, with byte repair) and the tree
 * walked with the field tables of request_fields.c. It accepts the elements
 * in any order and skips unknown ones. It is the reference the server's
 * one-pass reader (request_direct.c) is held to, and that reader's fallback.
 */
#include <string.h>

#include "proto/request_int.h"

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
        const char *type = vs_proto__coproc_type(x->name);
        if (!type && strcmp(x->name, "coproc") == 0) {
            const struct vs_xml_node *t = vs_xml_child(x, "type");
            type = t ? vs_proto__str(c, t, VS_PROTO_MAX_STRING) : NULL;
        }
        if (!type)
            continue; /* an unknown element inside <coprocs> */
        a[i].type = type;
        vs_proto__struct_parse(c, VS_PROTO__TAB(vs_proto__rq_coproc), x, &a[i]);
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
        if (vs_proto__field_parse(c, VS_PROTO__TAB(vs_proto__rq_result), x, res))
            continue;
        if (strcmp(x->name, "stderr_out") == 0) {
            const struct vs_xml_node *v = vs_xml_child(x, "core_client_version");
            if (v)
                res->core_client_version = vs_proto__str(c, v, VS_PROTO_MAX_STRING);
            /* The app's stderr is kept, but cut (vs_proto__stderr_keep). */
            const char *t = vs_xml_text_trim(x, c->arena);
            size_t tl = strlen(t), keep = vs_proto__stderr_keep(t, tl);
            res->stderr_text = keep == tl ? t : vs_arena_strndup(c->arena, t, keep);
        } else if (strcmp(x->name, "file_info") == 0) {
            vs_proto__struct_parse(c, VS_PROTO__TAB(vs_proto__rq_result_file), x,
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

static void parse_top(struct vs_proto__ctx *c, const struct vs_xml_node *x,
                      struct vs_proto_request *r)
{
    if (vs_proto__field_parse(c, VS_PROTO__TAB(vs_proto__rq_head), x, r) ||
        vs_proto__field_parse(c, VS_PROTO__TAB(vs_proto__rq_key), x, r) ||
        vs_proto__field_parse(c, VS_PROTO__TAB(vs_proto__rq_mid), x, r) ||
        vs_proto__field_parse(c, VS_PROTO__TAB(vs_proto__rq_tail), x, r))
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
        vs_proto__struct_parse(c, VS_PROTO__TAB(vs_proto__rq_time_stats), x, &r->time_stats);
    } else if (strcmp(nm, "net_stats") == 0) {
        vs_proto__struct_parse(c, VS_PROTO__TAB(vs_proto__rq_net_stats), x, &r->net_stats);
    } else if (strcmp(nm, "host_info") == 0) {
        vs_proto__struct_parse(c, VS_PROTO__TAB(vs_proto__rq_host), x, &r->host);
        /* some clients put <coprocs> inside <host_info> */
        const struct vs_xml_node *cp = vs_xml_child(x, "coprocs");
        if (cp)
            parse_coprocs(c, cp, r);
    } else if (strcmp(nm, "disk_usage") == 0) {
        vs_proto__struct_parse(c, VS_PROTO__TAB(vs_proto__rq_disk), x, &r->disk_usage);
    } else if (strcmp(nm, "coprocs") == 0) {
        parse_coprocs(c, x, r);
    } else if (strcmp(nm, "result") == 0) {
        parse_result(c, x, &r->results[r->n_results++]);
    } else if (strcmp(nm, "msg_from_host") == 0) {
        vs_proto__struct_parse(c, VS_PROTO__TAB(vs_proto__rq_msg), x,
                               &r->msgs_from_host[r->n_msgs_from_host++]);
    } else if (strcmp(nm, "file_info") == 0) {
        vs_proto__struct_parse(c, VS_PROTO__TAB(vs_proto__rq_sticky), x,
                               &r->sticky_files[r->n_sticky_files++]);
    } else if (strcmp(nm, "app_versions") == 0) {
        r->app_versions =
            vs_proto__list_parse(c, x, &vs_proto__rq_app_versions, &r->n_app_versions);
    } else if (strcmp(nm, "other_results") == 0) {
        r->other_results =
            vs_proto__list_parse(c, x, &vs_proto__rq_other_results, &r->n_other_results);
    } else if (strcmp(nm, "in_progress_results") == 0) {
        r->has_in_progress_results = true;
        r->ip_results = vs_proto__list_parse(c, x, &vs_proto__rq_ip_results, &r->n_ip_results);
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
    vs_proto__error_clear(out_err);
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
