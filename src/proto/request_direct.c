/*
 * Scheduler request, server side: the one-pass reader
 * (vs_proto_request_parse_direct) and the server's parse that tries it first
 * (vs_proto_request_parse_fast). It is the one fast path next to expat in
 * volsched, kept because the scheduler request is the hot message: on the
 * captured requests it reads several times faster than expat plus the tree
 * walk (figures in docs/protocol.md, "Which reader reads what").
 *
 * One pass over the body straight into the struct, no XML tree. It reads a
 * strict subset of XML: elements with ASCII names and without attributes,
 * text and CDATA of valid UTF-8 characters XML allows (tab and newline the
 * only control bytes), the five predefined entities outside the fields it
 * stores, and nothing else (no comments, no processing instructions, no
 * '\r'). Every element the tree reader extracts is read here too (<coprocs>,
 * <msg_from_host> and <client_opaque> included). Every value goes through the
 * same field tables and
 * vs_proto__field_set() as the tree reader (request_parse.c), so a request
 * it accepts gives the very struct vs_proto_request_parse() gives; anything
 * else, any limit near and any malformed value is left to that parser
 * (DP_FALLBACK), which then has the last word, error messages included. The
 * differential fuzz target tests/fuzz/fuzz_request_diff.c holds it to that.
 */
#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "proto/direct_int.h"
#include "proto/request_int.h"

/* <stderr_out>: its own text (trimmed, cut) and its first <core_client_version>. */
static int dp_stderr(struct dp *f, const struct dp_el *el, struct vs_proto_reported_result *res)
{
    static const struct vs_proto__field ccv = {
        "core_client_version", F_STR,
        offsetof(struct vs_proto_reported_result, core_client_version), 19};
    struct vs_buf own;
    vs_buf_init(&own, VS_XML_MAX_TEXT);
    bool got_ccv = false;
    struct dp_el ch;
    int k = DP_END;
    while (!el->empty && (k = dp_next(f, el, &own, &ch)) == DP_CHILD) {
        int rc;
        if (!got_ccv && dp_is(&ch, "core_client_version")) {
            got_ccv = true;
            rc = dp_field(f, &ccv, &ch, res);
        } else {
            rc = dp_skip(f, &ch);
        }
        if (rc) {
            k = DP_FALLBACK;
            break;
        }
    }
    if (k == DP_END) {
        const char *t = own.data ? own.data : "";
        size_t a = 0, e = own.len;
        while (a < e && isspace((unsigned char)t[a]))
            a++;
        while (e > a && isspace((unsigned char)t[e - 1]))
            e--;
        res->stderr_text =
            vs_arena_strndup(f->c->arena, t + a, vs_proto__stderr_keep(t + a, e - a));
    }
    vs_buf_cleanup(&own);
    return k == DP_END ? 0 : DP_FALLBACK;
}

/* parse_result() in request_parse.c: fields, <stderr_out> and output <file_info>s. */
static int dp_result(struct dp *f, const struct dp_el *el, struct vs_proto_reported_result *res)
{
    size_t cap_files = 0;
    struct dp_el ch;
    int k = DP_END;
    while (!el->empty && (k = dp_next(f, el, NULL, &ch)) == DP_CHILD) {
        const struct vs_proto__field *fd =
            vs_proto__field_find(VS_PROTO__TAB(vs_proto__rq_result), ch.name, ch.nl);
        int rc;
        if (fd) {
            rc = dp_field(f, fd, &ch, res);
        } else if (dp_is(&ch, "file_info")) {
            res->files = dp_grow(f, res->files, res->n_files, &cap_files, sizeof(*res->files),
                                 VS_PROTO_MAX_LIST);
            rc = !res->files ? DP_FALLBACK
                             : dp_struct(f, VS_PROTO__TAB(vs_proto__rq_result_file), &ch,
                                         &res->files[res->n_files++]);
        } else if (dp_is(&ch, "stderr_out")) {
            rc = dp_stderr(f, &ch, res);
        } else {
            rc = dp_skip(f, &ch);
        }
        if (rc)
            return DP_FALLBACK;
    }
    if (k != DP_END || !res->name || !*res->name)
        return DP_FALLBACK;
    return 0;
}

/* Capacities of the top-level lists, which grow as their elements come. */
struct dp_lists {
    size_t alt, res, sticky, coproc, msg;
};

/* <alt_platform>: its first <name>, appended to the request's list. */
static int dp_alt_platform(struct dp *f, const struct dp_el *el, struct vs_proto_request *r,
                           struct dp_lists *cap)
{
    static const struct vs_proto__field namef = {"name", F_STR, 0, 4};
    const char *nm = NULL;
    struct dp_el ch;
    int k = DP_END;
    while (!el->empty && (k = dp_next(f, el, NULL, &ch)) == DP_CHILD) {
        int rc =
            (!nm && dp_is(&ch, "name")) ? dp_field(f, &namef, &ch, (void *)&nm) : dp_skip(f, &ch);
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

/* <working_global_preferences>: its first <global_preferences>, verbatim. */
static int dp_working_prefs(struct dp *f, const struct dp_el *el, struct vs_proto_request *r)
{
    bool got = false;
    struct dp_el ch;
    int k = DP_END;
    while (!el->empty && (k = dp_next(f, el, NULL, &ch)) == DP_CHILD) {
        if (dp_skip(f, &ch))
            return DP_FALLBACK;
        if (!got && dp_is(&ch, "global_preferences")) {
            got = true;
            if (dp_raw(f, ch.start, VS_PROTO_MAX_PREFS, &r->working_global_prefs))
                return DP_FALLBACK;
        }
    }
    return k;
}

/* The type a coprocessor element stands for (vs_proto__coproc_type()), or NULL. */
static const char *dp_coproc_type(const struct dp_el *el)
{
    char name[VS_XML_MAX_NAME + 1];
    memcpy(name, el->name, el->nl);
    name[el->nl] = '\0';
    return vs_proto__coproc_type(name);
}

/*
 * <coprocs> (parse_coprocs() in request_parse.c): each child named after a
 * type, or a <coproc> with a <type> (its first), appended to the request's
 * coprocessors; other children skipped. The limit counts every child, as
 * the tree parser's does.
 */
static int dp_coprocs(struct dp *f, const struct dp_el *el, struct vs_proto_request *r,
                      struct dp_lists *cap)
{
    static const struct vs_proto__field typef = {"type", F_STR, 0, 4};
    size_t seen = r->n_coprocs;
    struct dp_el ch, g;
    int k = DP_END;
    while (!el->empty && (k = dp_next(f, el, NULL, &ch)) == DP_CHILD) {
        if (++seen > VS_PROTO_MAX_LIST)
            return DP_FALLBACK;
        const char *type = dp_coproc_type(&ch);
        bool generic = !type && dp_is(&ch, "coproc");
        if (!type && !generic) {
            if (dp_skip(f, &ch))
                return DP_FALLBACK;
            continue;
        }
        struct vs_proto_coproc cp;
        memset(&cp, 0, sizeof(cp));
        bool got_type = false;
        int kk = DP_END;
        while (!ch.empty && (kk = dp_next(f, &ch, NULL, &g)) == DP_CHILD) {
            int rc;
            if (generic && !got_type && dp_is(&g, "type")) {
                got_type = true;
                rc = dp_field(f, &typef, &g, (void *)&type);
            } else {
                rc = dp_field_or_skip(f, VS_PROTO__TAB(vs_proto__rq_coproc), &g, &cp);
            }
            if (rc)
                return DP_FALLBACK;
        }
        if (kk != DP_END)
            return DP_FALLBACK;
        if (!type)
            continue; /* a <coproc> without <type>: dropped, as by the tree parser */
        cp.type = type;
        r->coprocs = dp_grow(f, r->coprocs, r->n_coprocs, &cap->coproc, sizeof(*r->coprocs),
                             VS_PROTO_MAX_LIST);
        if (!r->coprocs)
            return DP_FALLBACK;
        r->coprocs[r->n_coprocs++] = cp;
    }
    return k == DP_END ? 0 : DP_FALLBACK;
}

/* <host_info>: its fields, and its first <coprocs> (some clients put it there). */
static int dp_host_info(struct dp *f, const struct dp_el *el, struct vs_proto_request *r,
                        struct dp_lists *cap)
{
    bool got_coprocs = false;
    struct dp_el ch;
    int k = DP_END;
    while (!el->empty && (k = dp_next(f, el, NULL, &ch)) == DP_CHILD) {
        int rc;
        if (!got_coprocs && dp_is(&ch, "coprocs")) {
            got_coprocs = true;
            rc = dp_coprocs(f, &ch, r, cap);
        } else {
            rc = dp_field_or_skip(f, VS_PROTO__TAB(vs_proto__rq_host), &ch, &r->host);
        }
        if (rc)
            return DP_FALLBACK;
    }
    return k;
}

/* <client_opaque>: the bytes between its tags, verbatim (vs_xml_inner_raw()). */
static int dp_client_opaque(struct dp *f, const struct dp_el *el, struct vs_proto_request *r)
{
    size_t a = f->pos;
    if (dp_skip(f, el))
        return DP_FALLBACK;
    /* (its end tag, "</client_opaque>", holds no other '<') */
    size_t b = el->empty ? a : (size_t)((const char *)memrchr(f->s + a, '<', f->pos - a) - f->s);
    if (b - a > VS_PROTO_MAX_PREFS)
        return DP_FALLBACK;
    r->client_opaque = vs_arena_strndup(f->c->arena, f->s + a, b - a);
    return 0;
}

/* One child of <scheduler_request> (parse_top() in request_parse.c). */
static int dp_top(struct dp *f, const struct dp_el *el, struct vs_proto_request *r,
                  struct dp_lists *cap)
{
    static const struct vs_proto__table *const scalars[] = {&vs_proto__rq_head, &vs_proto__rq_key,
                                                            &vs_proto__rq_mid, &vs_proto__rq_tail};
    for (size_t i = 0; i < VS_NELEM(scalars); i++) {
        const struct vs_proto__field *fd =
            vs_proto__field_find(VS_PROTO__TAB(*scalars[i]), el->name, el->nl);
        if (fd)
            return dp_field(f, fd, el, r);
    }
    void *arr;
    int rc;
    if (dp_is(el, "alt_platform"))
        return dp_alt_platform(f, el, r, cap);
    if (dp_is(el, "working_global_preferences"))
        return dp_working_prefs(f, el, r);
    if (dp_is(el, "global_preferences"))
        return dp_skip(f, el) || dp_raw(f, el->start, VS_PROTO_MAX_PREFS, &r->global_prefs);
    if (dp_is(el, "time_stats"))
        return dp_struct(f, VS_PROTO__TAB(vs_proto__rq_time_stats), el, &r->time_stats);
    if (dp_is(el, "net_stats"))
        return dp_struct(f, VS_PROTO__TAB(vs_proto__rq_net_stats), el, &r->net_stats);
    if (dp_is(el, "disk_usage"))
        return dp_struct(f, VS_PROTO__TAB(vs_proto__rq_disk), el, &r->disk_usage);
    if (dp_is(el, "host_info"))
        return dp_host_info(f, el, r, cap);
    if (dp_is(el, "result")) {
        r->results = dp_grow(f, r->results, r->n_results, &cap->res, sizeof(*r->results),
                             VS_PROTO_MAX_RESULTS);
        if (!r->results)
            return DP_FALLBACK;
        return dp_result(f, el, &r->results[r->n_results++]);
    }
    if (dp_is(el, "file_info")) {
        r->sticky_files = dp_grow(f, r->sticky_files, r->n_sticky_files, &cap->sticky,
                                  sizeof(*r->sticky_files), VS_PROTO_MAX_FILE_INFOS);
        if (!r->sticky_files)
            return DP_FALLBACK;
        return dp_struct(f, VS_PROTO__TAB(vs_proto__rq_sticky), el,
                         &r->sticky_files[r->n_sticky_files++]);
    }
    /* each list container replaces the list read so far, as in the tree parser */
    if (dp_is(el, "app_versions")) {
        rc = dp_list(f, el, &vs_proto__rq_app_versions, &arr, &r->n_app_versions);
        r->app_versions = arr;
        return rc;
    }
    if (dp_is(el, "other_results")) {
        rc = dp_list(f, el, &vs_proto__rq_other_results, &arr, &r->n_other_results);
        r->other_results = arr;
        return rc;
    }
    if (dp_is(el, "in_progress_results")) {
        r->has_in_progress_results = true;
        rc = dp_list(f, el, &vs_proto__rq_ip_results, &arr, &r->n_ip_results);
        r->ip_results = arr;
        return rc;
    }
    /* (rarer than the above: last) */
    if (dp_is(el, "coprocs"))
        return dp_coprocs(f, el, r, cap);
    if (dp_is(el, "msg_from_host")) {
        r->msgs_from_host = dp_grow(f, r->msgs_from_host, r->n_msgs_from_host, &cap->msg,
                                    sizeof(*r->msgs_from_host), VS_PROTO_MAX_LIST);
        if (!r->msgs_from_host)
            return DP_FALLBACK;
        return dp_struct(f, VS_PROTO__TAB(vs_proto__rq_msg), el,
                         &r->msgs_from_host[r->n_msgs_from_host++]);
    }
    if (dp_is(el, "client_opaque"))
        return dp_client_opaque(f, el, r);
    return dp_skip(f, el);
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
    struct dp_el root, ch;
    dp_ws(&f);
    if (f.pos >= len || body[f.pos] != '<' || dp_open(&f, &root) || root.empty ||
        !dp_is(&root, "scheduler_request"))
        return VS_EUNSUPPORTED;
    int k;
    while ((k = dp_next(&f, &root, NULL, &ch)) == DP_CHILD)
        if (dp_top(&f, &ch, &r, &cap))
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
        vs_proto__error_clear(out_err);
        return 0;
    }
    return vs_proto_request_parse(body, len, arena, out, out_err);
}
