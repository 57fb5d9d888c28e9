/*
 * Both backends: which workunits name which input files (table wu_file,
 * schema v6; store.h "Input files in use"). A workunit's inputs are the
 * <file_info>s of its xml_doc, read here with the project's XML reader as
 * the file deleter reads them (server/daemon_util.c), so that the two
 * agree on every name.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "store/store_int.h"
#include "volsched/alloc.h"
#include "volsched/log.h"
#include "volsched/strset.h"
#include "volsched/xml.h"

/* One wu_file row; the descriptor lets PostgreSQL take many in one COPY. */
struct wf_row {
    char *name; /* in the caller's arena */
    int64_t workunitid;
};

static const struct sq_col wf_cols[] = {
    {"name", SQ_PSTR, offsetof(struct wf_row, name), 0},
    {"workunitid", SQ_I64, offsetof(struct wf_row, workunitid), 0},
};
static const struct sq_table wf_table = {"wu_file", wf_cols, 2, 0};

struct wf_rows {
    struct wf_row *v;
    size_t n, cap;
    struct vs_strset doc; /* the rows of the document being read, by name */
    size_t doc_first;     /* its first row */
};

/* Documents with this many inputs or fewer are searched row by row (no
 * set to build per workunit); larger ones through r->doc. */
#define WF_LINEAR 16

static const char *row_key(const void *ctx, size_t i)
{
    return ((const struct wf_rows *)ctx)->v[i].name;
}

static void rows_cleanup(struct wf_rows *r)
{
    vs_free(r->v);
    vs_strset_cleanup(&r->doc);
    memset(r, 0, sizeof(*r));
}

/* Whether the document being read named fn already. */
static bool seen(const struct wf_rows *r, const char *fn)
{
    if (r->n - r->doc_first > WF_LINEAR)
        return vs_strset_find(&r->doc, fn, row_key, r) != SIZE_MAX;
    for (size_t i = r->doc_first; i < r->n; i++)
        if (strcmp(r->v[i].name, fn) == 0)
            return true;
    return false;
}

/*
 * Appends the inputs of workunit (id, name, xml_doc) to r, each name once:
 * the trimmed <name> of every top-level <file_info>. With kept_only, only
 * those the file deleter keeps for good: <no_delete/> ones, or all of a
 * workunit named "...nodelete..." (BOINC-COMPAT). A document that does not
 * parse names nothing (the file deleter cannot read it either, and deletes
 * none of its files).
 */
static void doc_inputs(int64_t id, const char *name, const char *xml_doc, bool kept_only,
                       struct vs_arena *a, struct wf_rows *r)
{
    if (!xml_doc || !*xml_doc)
        return;
    bool keep_all = name && strstr(name, "nodelete");
    if (kept_only && !keep_all && !strstr(xml_doc, "no_delete"))
        return;
    /* The document is a sequence of elements: give it one root. */
    size_t len = strlen(xml_doc) + sizeof("<doc></doc>") - 1;
    char *text = vs_arena_alloc_raw(a, len + 1);
    snprintf(text, len + 1, "<doc>%s</doc>", xml_doc);
    struct vs_xml_doc doc;
    if (vs_xml_parse(text, len, NULL, 0, a, &doc, NULL) != 0)
        return;
    if (r->doc.n)
        vs_strset_cleanup(&r->doc);
    r->doc_first = r->n;
    for (const struct vs_xml_node *fi = vs_xml_child(doc.root, "file_info"); fi;
         fi = vs_xml_next_same(fi)) {
        if (kept_only && !keep_all && !vs_xml_child(fi, "no_delete"))
            continue;
        const char *fn = vs_xml_text_trim(vs_xml_child(fi, "name"), a);
        if (!*fn || seen(r, fn))
            continue;
        if (r->n == r->cap) {
            r->cap = r->cap ? 2 * r->cap : 16;
            r->v = vs_xreallocarray(r->v, r->cap, sizeof(*r->v));
        }
        r->v[r->n] = (struct wf_row){(char *)fn, id};
        if (r->n - r->doc_first == WF_LINEAR) /* from now on, through the set */
            for (size_t i = r->doc_first; i < r->n; i++)
                vs_strset_add(&r->doc, i, row_key, r);
        if (r->n - r->doc_first >= WF_LINEAR)
            vs_strset_add(&r->doc, r->n, row_key, r);
        r->n++;
    }
}

/* Inserts the rows, in the open transaction: in one bulk step when the
 * backend has one and bulk is asked for, else a statement each. */
static int rows_insert(struct vs_store *s, const struct wf_rows *r, bool bulk)
{
    if (r->n == 0)
        return 0;
    if (bulk && s->ops->insert_many) {
        void **ptrs = vs_xcalloc(r->n, sizeof(*ptrs));
        for (size_t i = 0; i < r->n; i++)
            ptrs[i] = &r->v[i];
        int rc = s->ops->insert_many(s, &wf_table, ptrs, r->n);
        vs_free(ptrs);
        return rc;
    }
    for (size_t i = 0; i < r->n; i++) {
        struct vs_stmt *st = vs_store__stmt(s, SQ_WU_FILE_ADD);
        if (!st)
            return VS_ESTORE;
        vs_db_bind_text(st, 1, r->v[i].name, -1, VS_DB_STATIC);
        vs_db_bind_int64(st, 2, r->v[i].workunitid);
        int rc = vs_store__step_done(s, st, "wu_file");
        if (rc)
            return rc;
    }
    return 0;
}

int vs_store__wu_files_add(struct vs_store *s, const struct vs_workunit *wu)
{
    struct vs_arena a;
    vs_arena_init(&a, 4096);
    struct wf_rows r = {0};
    doc_inputs(wu->id, wu->name, wu->xml_doc, false, &a, &r);
    int rc = rows_insert(s, &r, false);
    rows_cleanup(&r);
    vs_arena_cleanup(&a);
    return rc;
}

int vs_store__wu_files_add_many(struct vs_store *s, struct vs_workunit *const *wus, size_t n)
{
    struct vs_arena a;
    vs_arena_init(&a, 65536);
    struct wf_rows r = {0};
    for (size_t i = 0; i < n; i++)
        doc_inputs(wus[i]->id, wus[i]->name, wus[i]->xml_doc, false, &a, &r);
    int rc = rows_insert(s, &r, true);
    rows_cleanup(&r);
    vs_arena_cleanup(&a);
    return rc;
}

int vs_store_file_in_use(struct vs_store *s, const char *name, int64_t except_wuid, bool *out)
{
    if (!name || !*name || !out)
        return VS_EINVAL;
    struct vs_stmt *st = vs_store__stmt(s, SQ_WU_FILE_IN_USE);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_text(st, 1, name, -1, VS_DB_STATIC);
    vs_db_bind_int64(st, 2, except_wuid);
    int64_t v = 0;
    int rc = vs_store__one_i64(s, st, &v);
    if (rc == 0)
        *out = v != 0;
    return rc;
}

int vs_store_file_use_drop(struct vs_store *s, int64_t wuid, const char *name)
{
    if (!name || !*name)
        return VS_EINVAL;
    struct vs_stmt *st = vs_store__stmt(s, SQ_WU_FILE_DROP);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_text(st, 1, name, -1, VS_DB_STATIC);
    vs_db_bind_int64(st, 2, wuid);
    return vs_store__step_done(s, st, "wu_file drop");
}

/* Workunits read per page of the migration. */
#define BACKFILL_PAGE 500

int vs_store__wu_files_backfill(struct vs_store *s)
{
    /* The workunits whose inputs are still to be dealt with by the file
     * deleter, and of those already dealt with the ones whose kept files
     * stay in use (found by a cheap text test first). Paged by id, so that
     * neither backend holds a large table's documents at once. */
    char sql[400];
    snprintf(sql, sizeof(sql),
             "SELECT id, name, xml_doc, file_delete_state FROM workunit WHERE id > ?1 AND "
             "(file_delete_state <> %d OR instr(xml_doc, 'no_delete') > 0 OR "
             "instr(name, 'nodelete') > 0) ORDER BY id LIMIT %d",
             VS_FILE_DELETE_DONE, BACKFILL_PAGE);
    struct vs_stmt *st = NULL;
    int rc = vs_db_prepare(s, sql, &st);
    if (rc != VS_DB_OK) {
        rc = vs_store__err(s, rc, "wu_file backfill");
        vs_db_finalize(st);
        return rc;
    }
    struct vs_arena a;
    vs_arena_init(&a, 65536);
    int64_t after = 0, nwus = 0;
    for (bool more = true; more && rc == 0;) {
        vs_arena_reset(&a);
        struct wf_rows r = {0};
        vs_db_bind_int64(st, 1, after);
        int n = 0, step;
        while ((step = vs_db_step(st)) == VS_DB_ROW) {
            int64_t id = vs_db_column_int64(st, 0);
            const char *nm = (const char *)vs_db_column_text(st, 1);
            const char *doc = (const char *)vs_db_column_text(st, 2);
            bool done = vs_db_column_int(st, 3) == VS_FILE_DELETE_DONE;
            /* The names land in the arena: the row's text goes at the next step. */
            doc_inputs(id, nm, doc, done, &a, &r);
            after = id;
            n++;
        }
        vs_db_reset(st);
        if (step != VS_DB_DONE)
            rc = vs_store__err(s, step, "wu_file backfill");
        if (rc == 0)
            rc = rows_insert(s, &r, true);
        rows_cleanup(&r);
        nwus += n;
        more = n == BACKFILL_PAGE;
    }
    vs_arena_cleanup(&a);
    vs_db_finalize(st);
    if (rc == 0 && nwus > 0)
        VS_LOG(s->log, VS_LOG_INFO, "store: schema 6: recorded the input files of %lld workunit(s)",
               (long long)nwus);
    return rc;
}
