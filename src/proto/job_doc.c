/*
 * Stored job documents (server side): a workunit's xml_doc and a result's
 * xml_doc_in, the <file_info>s and the <workunit> or <result> the scheduler
 * sends with a job, stored in the reply's own shape. The feeder reads two
 * of them for every job it caches.
 *
 * vs_proto_job_doc_parse() is the reference: the document wrapped in a
 * <scheduler_reply> and read by the reply parser (expat and a tree).
 * vs_proto_job_doc_parse_direct() reads the same documents in one pass with
 * the request reader's primitives (direct_int.h), through the reply's own
 * field tables and vs_proto__field_set(), so a document it accepts gives
 * the very struct the reference gives; anything else goes to the
 * reference. A new expat parser per document cost ~100 k instructions per
 * cached job, most of it creating and freeing the parser and the tree. The
 * differential fuzz target tests/fuzz/fuzz_job_doc_diff.c holds the two to
 * the same answers.
 */
#include <string.h>

#include "proto/direct_int.h"

int vs_proto_job_doc_parse(const char *doc, size_t len, struct vs_arena *arena,
                           struct vs_proto_reply *out, struct vs_proto_error *out_err)
{
    static const char open[] = "<scheduler_reply>\n", close[] = "</scheduler_reply>\n";
    size_t n = sizeof(open) - 1 + len + sizeof(close) - 1;
    char *buf = vs_arena_alloc(arena, n + 1);
    memcpy(buf, open, sizeof(open) - 1);
    if (len)
        memcpy(buf + sizeof(open) - 1, doc, len);
    memcpy(buf + sizeof(open) - 1 + len, close, sizeof(close));
    return vs_proto_reply_parse(buf, n, arena, out, out_err);
}

/* The zeroed entry that dp_grow() made room for at arr[n], or NULL over max. */
static void *grow_entry(struct dp *f, void **arr, size_t n, size_t *cap, size_t size, size_t max)
{
    void *p = dp_grow(f, *arr, n, cap, size, max);
    if (!p)
        return NULL;
    *arr = p;
    void *e = (char *)p + n * size;
    memset(e, 0, size);
    return e;
}

/* The URL element kind of el (an index of vs_proto__rp_url_tags), or -1. */
static int url_kind(const struct dp_el *el)
{
    for (size_t k = 0; k < VS_NELEM(vs_proto__rp_url_tags); k++)
        if (dp_is(el, vs_proto__rp_url_tags[k]))
            return (int)k;
    return -1;
}

/* parse_file_info() in reply.c: <name>, the URLs in order, the other fields. */
static int jd_file_info(struct dp *f, const struct dp_el *el, struct vs_proto_file_info *fi)
{
    size_t cap_urls = 0;
    struct dp_el ch;
    int k = DP_END;
    while (!el->empty && (k = dp_next(f, el, NULL, &ch)) == DP_CHILD) {
        const struct vs_proto__field *fd =
            vs_proto__field_find(VS_PROTO__TAB(vs_proto__rp_fi_head), ch.name, ch.nl);
        if (!fd)
            fd = vs_proto__field_find(VS_PROTO__TAB(vs_proto__rp_fi), ch.name, ch.nl);
        int rc, kind;
        if (fd) {
            rc = dp_field(f, fd, &ch, fi);
        } else if ((kind = url_kind(&ch)) >= 0) {
            /* (the element's own name, NUL-terminated, for vs_proto__field_set) */
            const struct vs_proto__field uf = {vs_proto__rp_url_tags[kind], F_STR,
                                               offsetof(struct vs_proto_url, url), ch.nl};
            struct vs_proto_url *u = grow_entry(f, (void **)&fi->urls, fi->n_urls, &cap_urls,
                                                sizeof(*fi->urls), VS_PROTO_MAX_LIST);
            if (!u)
                return DP_FALLBACK;
            fi->n_urls++;
            u->kind = (enum vs_proto_url_kind)kind;
            rc = dp_field(f, &uf, &ch, u);
        } else {
            rc = dp_skip(f, &ch);
        }
        if (rc)
            return DP_FALLBACK;
    }
    return k == DP_END ? 0 : DP_FALLBACK;
}

/*
 * A <workunit> or <result>: the fields of tab into base, its <file_ref>s
 * into *refs / *n_refs (vs_proto__struct_parse() and parse_file_refs() of
 * reply.c in one pass: "file_ref" is in neither table), the rest skipped.
 */
static int jd_job(struct dp *f, const struct dp_el *el, const struct vs_proto__table *tab,
                  void *base, struct vs_proto_file_ref **refs, size_t *n_refs)
{
    size_t cap = 0;
    struct dp_el ch;
    int k = DP_END;
    while (!el->empty && (k = dp_next(f, el, NULL, &ch)) == DP_CHILD) {
        int rc;
        if (dp_is(&ch, "file_ref")) {
            struct vs_proto_file_ref *r =
                grow_entry(f, (void **)refs, *n_refs, &cap, sizeof(**refs), VS_PROTO_MAX_LIST);
            if (!r)
                return DP_FALLBACK;
            (*n_refs)++;
            rc = dp_struct(f, VS_PROTO__TAB(vs_proto__rp_fref), &ch, r);
        } else {
            rc = dp_field_or_skip(f, VS_PROTO__TAB(*tab), &ch, base);
        }
        if (rc)
            return DP_FALLBACK;
    }
    return k == DP_END ? 0 : DP_FALLBACK;
}

int vs_proto_job_doc_parse_direct(const char *doc, size_t len, struct vs_arena *arena,
                                  struct vs_proto_reply *out)
{
    /* Far under VS_XML_MAX_TEXT, so that no text (the wrapper's own text
     * included) can reach the tree reader's limit. */
    if (!doc || len > VS_XML_MAX_TEXT / 2 || memchr(doc, '\r', len))
        return VS_EUNSUPPORTED;
    const char *lt = memrchr(doc, '<', len);
    size_t end = len;
    while (end > 0 && (doc[end - 1] == ' ' || doc[end - 1] == '\t' || doc[end - 1] == '\n'))
        end--;
    if (!lt || end == 0 || doc[end - 1] != '>')
        return VS_EUNSUPPORTED; /* (so that a name scan always meets a non-name byte) */
    struct vs_proto__ctx c = {.arena = arena};
    /* The reference's <scheduler_reply> is open: one level, one element. */
    struct dp f = {
        .s = doc, .len = len, .c = &c, .last_lt = (size_t)(lt - doc), .depth = 1, .n_elements = 1};
    /* Its end tag is the wrapper's, never in the document: an end tag at
     * the top (DP_END, whatever its name) is declined below. */
    const struct dp_el root = {.name = "", .nl = 0};
    struct vs_proto_reply r;
    memset(&r, 0, sizeof(r));
    size_t cap_fi = 0, cap_wu = 0, cap_res = 0;
    for (;;) {
        dp_ws(&f);
        if (f.pos == len)
            break;
        struct dp_el ch;
        if (dp_next(&f, &root, NULL, &ch) != DP_CHILD)
            return VS_EUNSUPPORTED;
        int rc;
        if (dp_is(&ch, "file_info")) {
            struct vs_proto_file_info *fi =
                grow_entry(&f, (void **)&r.file_infos, r.n_file_infos, &cap_fi,
                           sizeof(*r.file_infos), VS_PROTO_MAX_LIST);
            if (!fi)
                return VS_EUNSUPPORTED;
            r.n_file_infos++;
            rc = jd_file_info(&f, &ch, fi);
        } else if (dp_is(&ch, "workunit")) {
            struct vs_proto_workunit *wu =
                grow_entry(&f, (void **)&r.workunits, r.n_workunits, &cap_wu, sizeof(*r.workunits),
                           VS_PROTO_MAX_LIST);
            if (!wu)
                return VS_EUNSUPPORTED;
            r.n_workunits++;
            rc = jd_job(&f, &ch, &vs_proto__rp_wu, wu, &wu->file_refs, &wu->n_file_refs);
        } else if (dp_is(&ch, "result")) {
            struct vs_proto_result *res = grow_entry(&f, (void **)&r.results, r.n_results, &cap_res,
                                                     sizeof(*r.results), VS_PROTO_MAX_LIST);
            if (!res)
                return VS_EUNSUPPORTED;
            r.n_results++;
            rc = jd_job(&f, &ch, &vs_proto__rp_res, res, &res->file_refs, &res->n_file_refs);
        } else {
            /* The reply's other elements (and unknown ones, which it
             * skips) are not in stored documents: the reference's. */
            rc = DP_FALLBACK;
        }
        if (rc)
            return VS_EUNSUPPORTED;
    }
    *out = r;
    return 0;
}

int vs_proto_job_doc_parse_fast(const char *doc, size_t len, struct vs_arena *arena,
                                struct vs_proto_reply *out, struct vs_proto_error *out_err)
{
    if (vs_proto_job_doc_parse_direct(doc, len, arena, out) == 0) {
        vs_proto__error_clear(out_err);
        return 0;
    }
    return vs_proto_job_doc_parse(doc, len, arena, out, out_err);
}
