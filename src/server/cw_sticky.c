/*
 * create_work's marking of a locality workunit's big input (create_work.h:
 * vs_cw_mark_sticky), read with the XML module: the <file_info> found by
 * its <name>, the marks inserted after that element, the rest of the
 * document kept byte for byte.
 */
#include <stdbool.h>
#include <string.h>

#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/create_work.h"
#include "volsched/templates.h"
#include "volsched/xml.h"

int vs_cw_mark_sticky(char **xml_doc, const char *file)
{
    /* The stored document is a sequence of elements, not one: read it
     * inside a wrapper, offsets then shifted by its start tag. */
    static const char open[] = "<d>", close[] = "</d>";
    const char *doc = *xml_doc ? *xml_doc : "";
    struct vs_buf w;
    vs_buf_init(&w, VS_TEMPLATE_MAX_DOC + sizeof(open) + sizeof(close));
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_xml_doc xd;
    const struct vs_xml_node *name = NULL, *fi = NULL;
    if (vs_buf_puts(&w, open) == 0 && vs_buf_puts(&w, doc) == 0 && vs_buf_puts(&w, close) == 0 &&
        vs_xml_parse(w.data, w.len, NULL, 0, &a, &xd, NULL) == 0) {
        for (fi = vs_xml_child(xd.root, "file_info"); fi; fi = vs_xml_next_same(fi)) {
            name = vs_xml_child(fi, "name");
            if (name && strcmp(vs_xml_text_trim(name, &a), file) == 0)
                break;
        }
    }
    size_t pos = 0;
    bool has_sticky = false, has_report = false;
    if (fi) {
        pos = name->raw_off + name->raw_len - (sizeof(open) - 1);
        has_sticky = vs_xml_child(fi, "sticky") != NULL;
        has_report = vs_xml_child(fi, "report_on_rpc") != NULL;
    }
    vs_arena_cleanup(&a);
    vs_buf_cleanup(&w);
    if (!fi)
        return VS_EPARSE;
    struct vs_buf b;
    vs_buf_init(&b, VS_TEMPLATE_MAX_DOC);
    int rc = vs_buf_append(&b, doc, pos);
    if (rc == 0 && !has_sticky)
        rc = vs_buf_puts(&b, "\n    <sticky/>");
    if (rc == 0 && !has_report)
        rc = vs_buf_puts(&b, "\n    <report_on_rpc/>");
    if (rc == 0)
        rc = vs_buf_puts(&b, doc + pos);
    if (rc != 0) {
        vs_buf_cleanup(&b);
        return VS_ELIMIT;
    }
    vs_free(*xml_doc);
    *xml_doc = vs_buf_take(&b, NULL);
    return 0;
}
