/*
 * Scheduler reply: write (server side) and parse (client side).
 *
 * BOINC-COMPAT: the client accepts the elements in any order; we write them
 * in the order of the replies the 7.20.5 client accepted in
 * ../shared/protocol/samples (project and user info, key, app, file_info,
 * app_version, workunit, result, acks, messages).
 */
#include <string.h>

#include "proto/proto_int.h"

#define T struct vs_proto_reply
static const struct vs_proto__field head_fields[] = {
    FLD(T, scheduler_version, F_INT_OPT),
    FLD(T, master_url, F_STR),
    FLD(T, project_name, F_STR),
};
/* Written only when has_user_info; seeing any of them sets it. */
static const struct vs_proto__field user_fields[] = {
    FLD(T, userid, F_I64),
    FLD(T, user_name, F_STR),
    FLD(T, user_total_credit, F_DBL),
    FLD(T, user_expavg_credit, F_DBL),
    FLD(T, user_create_time, F_DBL),
};
static const struct vs_proto__field mid_fields[] = {
    FLD(T, host_total_credit, F_DBL_OPT),
    FLD(T, host_expavg_credit, F_DBL_OPT),
    FLD(T, host_create_time, F_DBL_OPT),
    FLD(T, team_name, F_STR),
    FLD(T, teamid, F_I64_OPT),
    FLD(T, host_venue, F_STR),
    FLD(T, email_hash, F_STR),
    FLD(T, cross_project_id, F_STR),
    FLD(T, external_cpid, F_STR),
    FLD(T, cpid_time, F_DBL_OPT),
    FLD(T, hostid, F_I64_OPT),
    FLD(T, request_delay, F_DBL_OPT),
    FLD(T, next_rpc_delay, F_DBL_OPT),
    FLD(T, project_is_down, F_FLAG),
    FLD(T, dont_use_dcf, F_FLAG),
    FLD(T, send_full_workload, F_FLAG),
    FLD(T, non_cpu_intensive, F_FLAG),
    FLD(T, verify_files_on_app_start, F_FLAG),
    FLD(T, ended, F_FLAG),
    FLD(T, message_ack, F_FLAG),
    FLD(T, no_cpu_apps, F_FLAG),
    FLD(T, no_cuda_apps, F_FLAG),
    FLD(T, no_ati_apps, F_FLAG),
    FLD(T, vs_no_work_because_of_deadlines, F_FLAG),
    FLD(T, code_sign_key, F_BLOCK),
    FLD(T, code_sign_key_signature, F_BLOCK),
};
#undef T

#define T struct vs_proto_app
static const struct vs_proto__field app_fields[] = {
    FLD(T, name, F_STR),
    FLD(T, user_friendly_name, F_STR),
    FLD(T, non_cpu_intensive, F_FLAG),
    FLD(T, fraction_done_exact, F_FLAG),
};
#undef T

#define T struct vs_proto_file_info
static const struct vs_proto__field fi_head_fields[] = {
    FLD(T, name, F_STR),
};
static const struct vs_proto__field fi_fields[] = {
    FLD(T, executable, F_FLAG),       FLD(T, file_signature, F_BLOCK),
    FLD(T, nbytes, F_DBL_OPT),        FLD(T, max_nbytes, F_DBL_OPT),
    FLD(T, md5_cksum, F_STR),         FLD(T, xml_signature, F_BLOCK),
    FLD(T, sticky, F_FLAG),           FLD(T, sticky_lifetime, F_DBL_OPT),
    FLD(T, no_delete, F_FLAG),        FLD(T, is_project_file, F_FLAG),
    FLD(T, download_gzipped, F_FLAG), FLD(T, gzipped_nbytes, F_DBL_OPT),
    FLD(T, gzip_when_done, F_FLAG),   FLD(T, report_on_rpc, F_FLAG),
};
const struct vs_proto__table vs_proto__rp_fi_head = {fi_head_fields, VS_NELEM(fi_head_fields)},
                             vs_proto__rp_fi = {fi_fields, VS_NELEM(fi_fields)};
#undef T

const char *const vs_proto__rp_url_tags[4] = {
    [VS_PROTO_URL] = "url",
    [VS_PROTO_URL_DOWNLOAD] = "download_url",
    [VS_PROTO_URL_UPLOAD] = "upload_url",
    [VS_PROTO_URL_GZIPPED] = "gzipped_url",
};

#define T struct vs_proto_file_ref
static const struct vs_proto__field fref_fields[] = {
    FLD(T, file_name, F_STR),  FLD(T, open_name, F_STR), FLD(T, main_program, F_FLAG),
    FLD(T, copy_file, F_FLAG), FLD(T, optional, F_FLAG),
};
const struct vs_proto__table vs_proto__rp_fref = {fref_fields, VS_NELEM(fref_fields)};
#undef T

#define T struct vs_proto_app_version
static const struct vs_proto__field av_fields[] = {
    FLD(T, app_name, F_STR),    FLD(T, version_num, F_INT),    FLD(T, platform, F_STR),
    FLD(T, plan_class, F_STR),  FLD(T, avg_ncpus, F_DBL_OPT),  FLD(T, max_ncpus, F_DBL_OPT),
    FLD(T, flops, F_DBL_OPT),   FLD(T, api_version, F_STR),    FLD(T, cmdline, F_STR),
    FLD(T, file_prefix, F_STR), FLD(T, gpu_ram, F_DBL_OPT),    FLD(T, dont_throttle, F_FLAG),
    FLD(T, is_wrapper, F_FLAG), FLD(T, needs_network, F_FLAG),
};
#undef T

#define T struct vs_proto_workunit
static const struct vs_proto__field wu_fields[] = {
    FLD(T, name, F_STR),           FLD(T, app_name, F_STR),        FLD(T, command_line, F_STR),
    FLD(T, rsc_fpops_est, F_DBL),  FLD(T, rsc_fpops_bound, F_DBL), FLD(T, rsc_memory_bound, F_DBL),
    FLD(T, rsc_disk_bound, F_DBL), FLD(T, job_keyword_ids, F_STR),
};
const struct vs_proto__table vs_proto__rp_wu = {wu_fields, VS_NELEM(wu_fields)};
#undef T

#define T struct vs_proto_result
static const struct vs_proto__field res_fields[] = {
    FLD(T, name, F_STR),
    FLD(T, wu_name, F_STR),
    FLD(T, report_deadline, F_DBL),
    FLD(T, platform, F_STR),
    FLD(T, version_num, F_INT),
    FLD(T, plan_class, F_STR),
    FLD(T, report_immediately, F_FLAG),
};
const struct vs_proto__table vs_proto__rp_res = {res_fields, VS_NELEM(res_fields)};
#undef T

/* ---- writer ---- */

static void write_file_refs(struct vs_xml_writer *w, const struct vs_proto_file_ref *refs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        vs_proto__struct_write(w, "file_ref", fref_fields, VS_NELEM(fref_fields), &refs[i]);
}

static void write_names(struct vs_xml_writer *w, const char *outer, const char *const *names,
                        size_t n)
{
    for (size_t i = 0; i < n; i++) {
        vs_xml_open(w, outer);
        vs_xml_str(w, "name", names[i]);
        vs_xml_close(w);
    }
}

static int check_names(const struct vs_proto_reply *r)
{
    for (size_t i = 0; i < r->n_apps; i++)
        if (!r->apps[i].name)
            return VS_EINVAL;
    for (size_t i = 0; i < r->n_file_infos; i++)
        if (!r->file_infos[i].name)
            return VS_EINVAL;
    for (size_t i = 0; i < r->n_app_versions; i++)
        if (!r->app_versions[i].app_name)
            return VS_EINVAL;
    for (size_t i = 0; i < r->n_workunits; i++)
        if (!r->workunits[i].name || !r->workunits[i].app_name)
            return VS_EINVAL;
    for (size_t i = 0; i < r->n_results; i++)
        if (!r->results[i].name || !r->results[i].wu_name)
            return VS_EINVAL;
    return 0;
}

int vs_proto_reply_write(const struct vs_proto_reply *r, struct vs_buf *out)
{
    int rc = check_names(r);
    if (rc)
        return rc;
    struct vs_xml_writer w;
    vs_xml_writer_init(&w, out);
    /* BOINC-COMPAT: top-level elements of the reply are not indented */
    vs_xml_raw_write(&w, "<scheduler_reply>\n", 18);
    vs_proto__fields_write(&w, head_fields, VS_NELEM(head_fields), r);
    if (r->has_user_info)
        vs_proto__fields_write(&w, user_fields, VS_NELEM(user_fields), r);
    vs_proto__fields_write(&w, mid_fields, VS_NELEM(mid_fields), r);
    for (size_t i = 0; i < r->n_no_rsc_apps; i++)
        vs_xml_str(&w, "no_rsc_apps", r->no_rsc_apps[i]);
    if (r->global_prefs) {
        vs_xml_raw_write(&w, r->global_prefs, strlen(r->global_prefs));
        vs_xml_raw_write(&w, "\n", 1);
    }
    if (r->project_prefs) {
        vs_xml_raw_write(&w, r->project_prefs, strlen(r->project_prefs));
        vs_xml_raw_write(&w, "\n", 1);
    }
    for (size_t i = 0; i < r->n_apps; i++)
        vs_proto__struct_write(&w, "app", app_fields, VS_NELEM(app_fields), &r->apps[i]);
    for (size_t i = 0; i < r->n_file_infos; i++) {
        const struct vs_proto_file_info *f = &r->file_infos[i];
        vs_xml_open(&w, "file_info");
        vs_proto__fields_write(&w, fi_head_fields, VS_NELEM(fi_head_fields), f);
        for (size_t j = 0; j < f->n_urls; j++) {
            unsigned k = (unsigned)f->urls[j].kind;
            vs_xml_str(&w, vs_proto__rp_url_tags[k < VS_NELEM(vs_proto__rp_url_tags) ? k : 0],
                       f->urls[j].url);
        }
        vs_proto__fields_write(&w, fi_fields, VS_NELEM(fi_fields), f);
        vs_xml_close(&w);
    }
    for (size_t i = 0; i < r->n_app_versions; i++) {
        const struct vs_proto_app_version *av = &r->app_versions[i];
        vs_xml_open(&w, "app_version");
        vs_proto__fields_write(&w, av_fields, VS_NELEM(av_fields), av);
        if (av->coproc_type) {
            vs_xml_open(&w, "coproc");
            vs_xml_str(&w, "type", av->coproc_type);
            vs_xml_double(&w, "count", av->coproc_count);
            vs_xml_close(&w);
        }
        write_file_refs(&w, av->file_refs, av->n_file_refs);
        vs_xml_close(&w);
    }
    for (size_t i = 0; i < r->n_workunits; i++) {
        const struct vs_proto_workunit *wu = &r->workunits[i];
        vs_xml_open(&w, "workunit");
        vs_proto__fields_write(&w, wu_fields, VS_NELEM(wu_fields), wu);
        write_file_refs(&w, wu->file_refs, wu->n_file_refs);
        vs_xml_close(&w);
    }
    for (size_t i = 0; i < r->n_results; i++) {
        struct vs_proto_result res = r->results[i];
        if (!res.plan_class)
            res.plan_class = ""; /* BOINC-COMPAT: the real server always sends it */
        vs_xml_open(&w, "result");
        vs_proto__fields_write(&w, res_fields, VS_NELEM(res_fields), &res);
        write_file_refs(&w, res.file_refs, res.n_file_refs);
        vs_xml_close(&w);
    }
    write_names(&w, "result_ack", r->result_acks, r->n_result_acks);
    write_names(&w, "result_abort", r->result_aborts, r->n_result_aborts);
    write_names(&w, "result_abort_if_not_started", r->result_aborts_if_not_started,
                r->n_result_aborts_if_not_started);
    for (size_t i = 0; i < r->n_delete_file_infos; i++)
        vs_xml_str(&w, "delete_file_info", r->delete_file_infos[i]);
    for (size_t i = 0; i < r->n_msgs_to_host; i++) {
        /* trickle-downs: stored as whole <msg_to_host> elements */
        vs_xml_raw_write(&w, r->msgs_to_host[i], strlen(r->msgs_to_host[i]));
        vs_xml_raw_write(&w, "\n", 1);
    }
    for (size_t i = 0; i < r->n_messages; i++) {
        const struct vs_proto_message *m = &r->messages[i];
        vs_xml_str_attr(&w, "message", "priority", m->priority ? m->priority : "low",
                        m->text ? m->text : "");
    }
    vs_xml_raw_write(&w, "</scheduler_reply>\n", 19);
    return vs_xml_writer_error(&w);
}

/* ---- parser (client side) ---- */

/* The <file_ref>s of an app version, workunit or result. */
static const struct vs_proto__list fref_list = {
    "file_ref",
    {fref_fields, VS_NELEM(fref_fields)},
    sizeof(struct vs_proto_file_ref),
    VS_PROTO_MAX_LIST,
    "file_refs",
    NULL,
};

static struct vs_proto_file_ref *parse_file_refs(struct vs_proto__ctx *c,
                                                 const struct vs_xml_node *n, size_t *out_n)
{
    return vs_proto__list_parse(c, n, &fref_list, out_n);
}

static void parse_file_info(struct vs_proto__ctx *c, const struct vs_xml_node *n,
                            struct vs_proto_file_info *f)
{
    size_t nu = 0;
    for (const struct vs_xml_node *x = n->child; x; x = x->next)
        for (size_t k = 0; k < VS_NELEM(vs_proto__rp_url_tags); k++)
            nu += strcmp(x->name, vs_proto__rp_url_tags[k]) == 0;
    f->urls = vs_proto__array(c, nu, sizeof(*f->urls), VS_PROTO_MAX_LIST, "URLs of one file");
    for (const struct vs_xml_node *x = n->child; x && !c->rc; x = x->next) {
        if (vs_proto__field_parse(c, fi_head_fields, VS_NELEM(fi_head_fields), x, f) ||
            vs_proto__field_parse(c, fi_fields, VS_NELEM(fi_fields), x, f))
            continue;
        for (size_t k = 0; k < VS_NELEM(vs_proto__rp_url_tags); k++) {
            if (strcmp(x->name, vs_proto__rp_url_tags[k]) == 0) {
                f->urls[f->n_urls].kind = (enum vs_proto_url_kind)k;
                f->urls[f->n_urls++].url = vs_proto__str(c, x, VS_PROTO_MAX_STRING);
            }
        }
    }
}

static void parse_app_version(struct vs_proto__ctx *c, const struct vs_xml_node *n,
                              struct vs_proto_app_version *av)
{
    for (const struct vs_xml_node *x = n->child; x && !c->rc; x = x->next) {
        if (vs_proto__field_parse(c, av_fields, VS_NELEM(av_fields), x, av))
            continue;
        if (strcmp(x->name, "coproc") == 0) {
            const struct vs_xml_node *t = vs_xml_child(x, "type");
            const struct vs_xml_node *k = vs_xml_child(x, "count");
            av->coproc_type = t ? vs_proto__str(c, t, VS_PROTO_MAX_STRING) : "";
            if (k && vs_xml_get_double(k, &av->coproc_count) != 0)
                vs_proto__fail(c, VS_EPARSE, "line %u: <count> is not a number", k->line);
        }
    }
    av->file_refs = parse_file_refs(c, n, &av->n_file_refs);
}

/* Names in <outer><name>N</name></outer> elements. */
static const char *inner_name(struct vs_proto__ctx *c, const struct vs_xml_node *x)
{
    const struct vs_xml_node *n = vs_xml_child(x, "name");
    return n ? vs_proto__str(c, n, VS_PROTO_MAX_STRING) : "";
}

struct counts {
    size_t apps, fis, avs, wus, results, acks, aborts, aborts_ns, deletes, msgs, no_rsc;
};

static void count_top(const struct vs_xml_node *root, struct counts *k)
{
    memset(k, 0, sizeof(*k));
    for (const struct vs_xml_node *x = root->child; x; x = x->next) {
        const char *nm = x->name;
        k->apps += strcmp(nm, "app") == 0;
        k->fis += strcmp(nm, "file_info") == 0;
        k->avs += strcmp(nm, "app_version") == 0;
        k->wus += strcmp(nm, "workunit") == 0;
        k->results += strcmp(nm, "result") == 0;
        k->acks += strcmp(nm, "result_ack") == 0;
        k->aborts += strcmp(nm, "result_abort") == 0;
        k->aborts_ns += strcmp(nm, "result_abort_if_not_started") == 0;
        k->deletes += strcmp(nm, "delete_file_info") == 0;
        k->msgs += strcmp(nm, "message") == 0;
        k->no_rsc += strcmp(nm, "no_rsc_apps") == 0;
    }
}

int vs_proto_reply_parse(const char *body, size_t len, struct vs_arena *arena,
                         struct vs_proto_reply *out, struct vs_proto_error *out_err)
{
    struct vs_proto__ctx c = {.arena = arena, .err = out_err};
    vs_proto__error_clear(out_err);
    /* BOINC-COMPAT: the client skips anything before the start tag and needs the end tag */
    const char *start = memmem(body, len, "<scheduler_reply>", 17);
    if (!start)
        return vs_proto__fail(&c, VS_EPARSE, "no <scheduler_reply> in the reply");
    size_t rest = len - (size_t)(start - body);
    const char *end = NULL;
    for (const char *p = start;
         (p = memmem(p, rest - (size_t)(p - start), "</scheduler_reply>", 18)) != NULL; p++)
        end = p;
    if (!end)
        return vs_proto__fail(&c, VS_EPARSE, "no close tag in scheduler reply");
    struct vs_xml_doc doc;
    int rc = vs_proto__parse_xml(&c, start, (size_t)(end - start) + 18, VS_PROTO_MAX_REPLY_BYTES, 0,
                                 &doc);
    if (rc)
        return rc;
    struct vs_proto_reply r;
    memset(&r, 0, sizeof(r));
    struct counts k;
    count_top(doc.root, &k);
    const size_t M = VS_PROTO_MAX_LIST;
    r.apps = vs_proto__array(&c, k.apps, sizeof(*r.apps), M, "apps");
    r.file_infos = vs_proto__array(&c, k.fis, sizeof(*r.file_infos), M, "file_infos");
    r.app_versions = vs_proto__array(&c, k.avs, sizeof(*r.app_versions), M, "app_versions");
    r.workunits = vs_proto__array(&c, k.wus, sizeof(*r.workunits), M, "workunits");
    r.results = vs_proto__array(&c, k.results, sizeof(*r.results), M, "results");
    r.result_acks = vs_proto__array(&c, k.acks, sizeof(char *), M, "result_acks");
    r.result_aborts = vs_proto__array(&c, k.aborts, sizeof(char *), M, "result_aborts");
    r.result_aborts_if_not_started =
        vs_proto__array(&c, k.aborts_ns, sizeof(char *), M, "result_abort_if_not_started");
    r.delete_file_infos = vs_proto__array(&c, k.deletes, sizeof(char *), M, "delete_file_infos");
    r.messages = vs_proto__array(&c, k.msgs, sizeof(*r.messages), M, "messages");
    r.no_rsc_apps = vs_proto__array(&c, k.no_rsc, sizeof(char *), M, "no_rsc_apps");

    for (const struct vs_xml_node *x = doc.root->child; x && !c.rc; x = x->next) {
        const char *nm = x->name;
        if (vs_proto__field_parse(&c, head_fields, VS_NELEM(head_fields), x, &r) ||
            vs_proto__field_parse(&c, mid_fields, VS_NELEM(mid_fields), x, &r))
            continue;
        if (vs_proto__field_parse(&c, user_fields, VS_NELEM(user_fields), x, &r)) {
            r.has_user_info = true;
        } else if (strcmp(nm, "app") == 0) {
            vs_proto__struct_parse(&c, app_fields, VS_NELEM(app_fields), x, &r.apps[r.n_apps++]);
        } else if (strcmp(nm, "file_info") == 0) {
            parse_file_info(&c, x, &r.file_infos[r.n_file_infos++]);
        } else if (strcmp(nm, "app_version") == 0) {
            parse_app_version(&c, x, &r.app_versions[r.n_app_versions++]);
        } else if (strcmp(nm, "workunit") == 0) {
            struct vs_proto_workunit *wu = &r.workunits[r.n_workunits++];
            vs_proto__struct_parse(&c, wu_fields, VS_NELEM(wu_fields), x, wu);
            wu->file_refs = parse_file_refs(&c, x, &wu->n_file_refs);
        } else if (strcmp(nm, "result") == 0) {
            struct vs_proto_result *res = &r.results[r.n_results++];
            vs_proto__struct_parse(&c, res_fields, VS_NELEM(res_fields), x, res);
            res->file_refs = parse_file_refs(&c, x, &res->n_file_refs);
        } else if (strcmp(nm, "result_ack") == 0) {
            r.result_acks[r.n_result_acks++] = inner_name(&c, x);
        } else if (strcmp(nm, "result_abort") == 0) {
            r.result_aborts[r.n_result_aborts++] = inner_name(&c, x);
        } else if (strcmp(nm, "result_abort_if_not_started") == 0) {
            r.result_aborts_if_not_started[r.n_result_aborts_if_not_started++] = inner_name(&c, x);
        } else if (strcmp(nm, "delete_file_info") == 0) {
            r.delete_file_infos[r.n_delete_file_infos++] =
                vs_proto__str(&c, x, VS_PROTO_MAX_STRING);
        } else if (strcmp(nm, "no_rsc_apps") == 0) {
            r.no_rsc_apps[r.n_no_rsc_apps++] = vs_proto__str(&c, x, VS_PROTO_MAX_STRING);
        } else if (strcmp(nm, "message") == 0) {
            struct vs_proto_message *m = &r.messages[r.n_messages++];
            m->priority = vs_xml_attr(x, "priority");
            m->text = vs_proto__str(&c, x, VS_PROTO_MAX_STRING);
        } else if (strcmp(nm, "global_preferences") == 0) {
            r.global_prefs = vs_proto__raw(&c, x, VS_PROTO_MAX_PREFS);
        } else if (strcmp(nm, "project_preferences") == 0) {
            r.project_prefs = vs_proto__raw(&c, x, VS_PROTO_MAX_PREFS);
        }
    }
    if (c.rc)
        return c.rc;
    *out = r;
    return 0;
}
