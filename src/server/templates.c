/* Input and output templates -> workunit and result XML (see templates.h). */
#include "volsched/templates.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/layout.h"
#include "volsched/md5.h"
#include "volsched/sign.h"
#include "volsched/str.h"
#include "volsched/xml.h"

const char vs_template_default_in[] = "<input_template>\n"
                                      "    <file_info>\n"
                                      "        <number>0</number>\n"
                                      "    </file_info>\n"
                                      "    <workunit>\n"
                                      "        <file_ref>\n"
                                      "            <file_number>0</file_number>\n"
                                      "            <open_name>in</open_name>\n"
                                      "            <copy_file/>\n"
                                      "        </file_ref>\n"
                                      "    </workunit>\n"
                                      "</input_template>\n";

const char vs_template_default_out[] = "<output_template>\n"
                                       "    <file_info>\n"
                                       "        <name><OUTFILE_0/></name>\n"
                                       "        <generated_locally/>\n"
                                       "        <upload_when_present/>\n"
                                       "        <max_nbytes>5000000</max_nbytes>\n"
                                       "        <url><UPLOAD_URL/></url>\n"
                                       "    </file_info>\n"
                                       "    <result>\n"
                                       "        <file_ref>\n"
                                       "            <file_name><OUTFILE_0/></file_name>\n"
                                       "            <open_name>out</open_name>\n"
                                       "            <copy_file/>\n"
                                       "        </file_ref>\n"
                                       "    </result>\n"
                                       "</output_template>\n";

static int fail(char *err, size_t errsize, int code, const char *fmt, ...) VS_PRINTF(4, 5);
static int fail(char *err, size_t errsize, int code, const char *fmt, ...)
{
    if (err && errsize) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errsize, fmt, ap);
        va_end(ap);
    }
    return code;
}

int vs_template_read(const char *path, char **out, size_t *out_len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct vs_buf b;
    vs_buf_init(&b, VS_TEMPLATE_MAX_DOC);
    char chunk[4096];
    int rc = 0;
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = -errno;
            break;
        }
        if (n == 0)
            break;
        if ((rc = vs_buf_append(&b, chunk, (size_t)n)) != 0)
            break;
    }
    close(fd);
    if (rc == 0 && !b.data)
        rc = vs_buf_puts(&b, "");
    if (rc) {
        vs_buf_cleanup(&b);
        return rc;
    }
    *out = vs_buf_take(&b, out_len);
    return 0;
}

/* Writes an element copied verbatim from the template, on its own line. */
static void copy_raw(struct vs_xml_writer *w, const struct vs_xml_doc *doc,
                     const struct vs_xml_node *n)
{
    size_t len;
    const char *raw = vs_xml_raw(doc, n, &len);
    for (int i = 0; i < w->depth; i++)
        vs_xml_raw_write(w, "    ", 4);
    vs_xml_raw_write(w, raw, len);
    vs_xml_raw_write(w, "\n", 1);
}

static bool is(const struct vs_xml_node *n, const char *name)
{
    return strcmp(n->name, name) == 0;
}

/* The <workunit> elements that set columns rather than XML. */
struct colmap {
    const char *name;
    unsigned bit;
    size_t offset;
    int is_int;
};
#define CM_D(n, bit)                                                                               \
    {                                                                                              \
#n, bit, offsetof(struct vs_workunit, n), 0                                                \
    }
#define CM_I(n, bit)                                                                               \
    {                                                                                              \
#n, bit, offsetof(struct vs_workunit, n), 1                                                \
    }
static const struct colmap colmaps[] = {
    CM_D(rsc_fpops_est, VS_TMPL_SET_FPOPS_EST),
    CM_D(rsc_fpops_bound, VS_TMPL_SET_FPOPS_BOUND),
    CM_D(rsc_memory_bound, VS_TMPL_SET_MEMORY_BOUND),
    CM_D(rsc_disk_bound, VS_TMPL_SET_DISK_BOUND),
    CM_D(rsc_bandwidth_bound, VS_TMPL_SET_BANDWIDTH),
    CM_I(delay_bound, VS_TMPL_SET_DELAY_BOUND),
    CM_I(min_quorum, VS_TMPL_SET_MIN_QUORUM),
    CM_I(target_nresults, VS_TMPL_SET_TARGET),
    CM_I(max_error_results, VS_TMPL_SET_MAX_ERROR),
    CM_I(max_total_results, VS_TMPL_SET_MAX_TOTAL),
    CM_I(max_success_results, VS_TMPL_SET_MAX_SUCCESS),
    CM_I(batch, VS_TMPL_SET_BATCH),
};

/* One <file_info> of the template, resolved to a concrete file. */
struct resolved {
    const struct vs_xml_node *node;
    char name[VS_NAME_MAX];
    char url[VS_URL_MAX];
    char md5[VS_SHORT_MAX];
    double nbytes;
};

static int parse_root(const char *tmpl, size_t len, const char *root_name, struct vs_arena *arena,
                      struct vs_xml_doc *doc, char *err, size_t errsize)
{
    struct vs_xml_error xe;
    int rc = vs_xml_parse(tmpl, len, NULL, 0, arena, doc, &xe);
    if (rc)
        return fail(err, errsize, VS_EPARSE, "malformed template: %s", xe.msg);
    if (!doc->root || strcmp(doc->root->name, root_name) != 0)
        return fail(err, errsize, VS_EPARSE, "template root element is not <%s>", root_name);
    return 0;
}

int vs_template_input_count(const char *tmpl, size_t len)
{
    struct vs_arena arena;
    vs_arena_init(&arena, 8192);
    struct vs_xml_doc doc;
    int n = -1;
    if (parse_root(tmpl, len, "input_template", &arena, &doc, NULL, 0) == 0) {
        n = 0;
        for (const struct vs_xml_node *c = doc.root->child; c; c = c->next)
            if (is(c, "file_info") && !vs_xml_child(c, "physical_name") && !vs_xml_child(c, "url"))
                n++;
    }
    vs_arena_cleanup(&arena);
    return n;
}

static int resolve_file(const struct vs_xml_node *fi, const struct vs_project_config *cfg,
                        const struct vs_tmpl_input *inputs, size_t ninputs, size_t *next,
                        struct vs_arena *arena, struct resolved *r, char *err, size_t errsize)
{
    r->node = fi;
    const struct vs_xml_node *phys = vs_xml_child(fi, "physical_name");
    const struct vs_xml_node *url = vs_xml_child(fi, "url");
    if (vs_xml_child(fi, "gzip"))
        return fail(err, errsize, VS_EPARSE, "template: <gzip/> input files are not supported");
    if (phys) {
        /* A constant file: the same staged file for every job. */
        const char *name = vs_xml_text_trim(phys, arena);
        char path[VS_PATH_MAX];
        int64_t nbytes;
        if (vs_strlcpy(r->name, name, sizeof(r->name)) ||
            vs_project_download_path(cfg, name, false, path, sizeof(path)))
            return fail(err, errsize, VS_ELIMIT, "template: physical_name too long");
        if (vs_md5_file(path, r->md5, &nbytes) != 0)
            return fail(err, errsize, VS_ENOTFOUND,
                        "template: constant input file '%s' is not staged (%s)", name, path);
        r->nbytes = (double)nbytes;
        return vs_project_download_url(cfg, name, r->url, sizeof(r->url));
    }
    if (url) {
        /* A remote file named in the template: nothing is staged. */
        const struct vs_xml_node *md5 = vs_xml_child(fi, "md5_cksum");
        const struct vs_xml_node *nb = vs_xml_child(fi, "nbytes");
        const struct vs_xml_node *name = vs_xml_child(fi, "name");
        if (!md5 || !nb || vs_xml_get_double(nb, &r->nbytes) != 0)
            return fail(err, errsize, VS_EPARSE,
                        "template: a remote <file_info> needs <url>, <md5_cksum> and <nbytes>");
        const char *md5s = vs_xml_text_trim(md5, arena);
        int rc = vs_strlcpy(r->url, vs_xml_text_trim(url, arena), sizeof(r->url));
        rc |= vs_strlcpy(r->md5, md5s, sizeof(r->md5));
        if (name)
            rc |= vs_strlcpy(r->name, vs_xml_text_trim(name, arena), sizeof(r->name));
        else if (snprintf(r->name, sizeof(r->name), "jf_%s", md5s) >= (int)sizeof(r->name))
            rc = VS_ELIMIT;
        return rc ? fail(err, errsize, VS_ELIMIT, "template: remote file too long") : 0;
    }
    if (*next >= ninputs)
        return fail(err, errsize, VS_EPARSE,
                    "the input template has more input files than were given (%zu)", ninputs);
    const struct vs_tmpl_input *in = &inputs[(*next)++];
    int rc = vs_strlcpy(r->name, in->name, sizeof(r->name));
    rc |= vs_strlcpy(r->url, in->url, sizeof(r->url));
    rc |= vs_strlcpy(r->md5, in->md5_cksum, sizeof(r->md5));
    r->nbytes = in->nbytes;
    return rc ? VS_ELIMIT : 0;
}

int vs_template_input(const char *tmpl, size_t len, const struct vs_project_config *cfg,
                      const struct vs_tmpl_input *inputs, size_t ninputs, const char *command_line,
                      struct vs_workunit *wu, unsigned *out_set, char *err, size_t errsize)
{
    struct vs_arena arena;
    vs_arena_init(&arena, 16384);
    struct vs_buf b;
    vs_buf_init(&b, VS_TEMPLATE_MAX_DOC);
    struct resolved *files = NULL;
    size_t nfiles = 0, next = 0;
    unsigned set = 0;
    struct vs_xml_doc doc;
    int rc = parse_root(tmpl, len, "input_template", &arena, &doc, err, errsize);
    if (rc)
        goto done;

    const struct vs_xml_node *wunode = NULL;
    size_t nfi = 0;
    for (const struct vs_xml_node *c = doc.root->child; c; c = c->next) {
        if (is(c, "file_info"))
            nfi++;
        else if (is(c, "workunit"))
            wunode = c;
    }
    if (!wunode) {
        rc = fail(err, errsize, VS_EPARSE, "the input template has no <workunit>");
        goto done;
    }
    files = vs_xcalloc(nfi ? nfi : 1, sizeof(*files));
    for (const struct vs_xml_node *c = doc.root->child; c; c = c->next) {
        if (!is(c, "file_info"))
            continue;
        rc = resolve_file(c, cfg, inputs, ninputs, &next, &arena, &files[nfiles], err, errsize);
        if (rc)
            goto done;
        nfiles++;
    }
    if (next != ninputs) {
        rc = fail(err, errsize, VS_EPARSE,
                  "the input template takes %zu input file(s) but %zu were given", next, ninputs);
        goto done;
    }

    size_t nrefs = 0;
    for (const struct vs_xml_node *c = wunode->child; c; c = c->next)
        nrefs += is(c, "file_ref");
    if (nrefs != nfiles) {
        rc = fail(err, errsize, VS_EPARSE,
                  "the input template has %zu <file_info> but %zu <file_ref> elements", nfiles,
                  nrefs);
        goto done;
    }
    if (command_line && vs_xml_child(wunode, "command_line")) {
        rc = fail(err, errsize, VS_EPARSE,
                  "--command_line given but the template has a <command_line> too");
        goto done;
    }

    struct vs_xml_writer w;
    vs_xml_writer_init(&w, &b);
    for (size_t i = 0; i < nfiles; i++) {
        const struct resolved *r = &files[i];
        vs_xml_open(&w, "file_info");
        vs_xml_str(&w, "name", r->name);
        vs_xml_str(&w, "url", r->url);
        vs_xml_str(&w, "md5_cksum", r->md5);
        vs_xml_double(&w, "nbytes", r->nbytes);
        for (const struct vs_xml_node *c = r->node->child; c; c = c->next) {
            if (is(c, "number") || is(c, "physical_name") || is(c, "url") || is(c, "md5_cksum") ||
                is(c, "nbytes") || is(c, "name"))
                continue;
            copy_raw(&w, &doc, c);
        }
        vs_xml_close(&w);
    }
    vs_xml_open(&w, "workunit");
    if (command_line)
        vs_xml_str(&w, "command_line", command_line);
    size_t ref = 0;
    for (const struct vs_xml_node *c = wunode->child; c; c = c->next) {
        if (is(c, "file_ref")) {
            const struct resolved *r = &files[ref++];
            const struct vs_xml_node *open = vs_xml_child(c, "open_name");
            bool copy_file = vs_xml_child(c, "copy_file") != NULL;
            if (!open && !copy_file) {
                rc = fail(err, errsize, VS_EPARSE,
                          "template: <file_ref> %zu needs <open_name> or <copy_file/>", ref - 1);
                goto done;
            }
            vs_xml_open(&w, "file_ref");
            vs_xml_str(&w, "file_name", r->name);
            /* BOINC-COMPAT: copy_file alone opens the file by its own name. */
            vs_xml_str(&w, "open_name", open ? vs_xml_text_trim(open, &arena) : r->name);
            for (const struct vs_xml_node *g = c->child; g; g = g->next) {
                if (is(g, "file_number") || is(g, "open_name") || is(g, "file_name"))
                    continue;
                copy_raw(&w, &doc, g);
            }
            vs_xml_close(&w);
            continue;
        }
        const struct colmap *cm = NULL;
        for (size_t i = 0; i < sizeof(colmaps) / sizeof(colmaps[0]); i++)
            if (is(c, colmaps[i].name))
                cm = &colmaps[i];
        if (cm) {
            double v;
            if (vs_xml_get_double(c, &v) != 0 || v < 0 || v > 1e300) {
                rc = fail(err, errsize, VS_EPARSE, "template: bad number in <%s>", c->name);
                goto done;
            }
            char *f = (char *)wu + cm->offset;
            if (cm->is_int && cm->offset == offsetof(struct vs_workunit, batch))
                *(int64_t *)f = (int64_t)v;
            else if (cm->is_int)
                *(int *)f = v > 2e9 ? 2000000000 : (int)v;
            else
                *(double *)f = v;
            set |= cm->bit;
            continue;
        }
        copy_raw(&w, &doc, c);
    }
    vs_xml_close(&w);
    rc = vs_xml_writer_error(&w);
    if (rc) {
        rc = fail(err, errsize, rc, "the workunit XML exceeds %d bytes", VS_TEMPLATE_MAX_DOC);
        goto done;
    }
    size_t n;
    vs_free(wu->xml_doc);
    wu->xml_doc = vs_buf_take(&b, &n);
    if (out_set)
        *out_set = set;
done:
    vs_free(files);
    vs_buf_cleanup(&b);
    vs_arena_cleanup(&arena);
    return rc;
}

/* Replaces <OUTFILE_n/> and <UPLOAD_URL/> (they are empty elements, so this
 * is done on the text before parsing). */
static int substitute(const char *tmpl, size_t len, const char *result_name, uint32_t random,
                      const char *upload_url, struct vs_buf *out)
{
    static const char outfile[] = "<OUTFILE_";
    static const char upload[] = "<UPLOAD_URL/>";
    size_t i = 0;
    int rc = 0;
    while (i < len && rc == 0) {
        if (len - i >= sizeof(outfile) - 1 && memcmp(tmpl + i, outfile, sizeof(outfile) - 1) == 0) {
            size_t j = i + sizeof(outfile) - 1;
            unsigned idx = 0;
            size_t ndig = 0;
            while (j < len && tmpl[j] >= '0' && tmpl[j] <= '9' && ndig < 6) {
                idx = idx * 10 + (unsigned)(tmpl[j] - '0');
                j++;
                ndig++;
            }
            if (ndig > 0 && len - j >= 2 && tmpl[j] == '/' && tmpl[j + 1] == '>') {
                rc = vs_buf_printf(out, "%s_r%u_%u", result_name, (unsigned)random, idx);
                i = j + 2;
                continue;
            }
        }
        if (len - i >= sizeof(upload) - 1 && memcmp(tmpl + i, upload, sizeof(upload) - 1) == 0) {
            struct vs_buf esc;
            vs_buf_init(&esc, VS_TEMPLATE_MAX_DOC);
            rc = vs_xml_escape(&esc, upload_url, strlen(upload_url));
            if (rc == 0)
                rc = vs_buf_puts(out, vs_buf_str(&esc));
            vs_buf_cleanup(&esc);
            i += sizeof(upload) - 1;
            continue;
        }
        rc = vs_buf_append(out, tmpl + i, 1);
        i++;
    }
    return rc;
}

int vs_template_output(const char *tmpl, size_t len, const char *result_name, uint32_t random,
                       const char *upload_url, const struct vs_sign_key *upload_key, char **out,
                       char *err, size_t errsize)
{
    struct vs_buf sub, b, sig;
    vs_buf_init(&sub, 2 * VS_TEMPLATE_MAX_DOC);
    vs_buf_init(&b, VS_TEMPLATE_MAX_DOC);
    vs_buf_init(&sig, 4096);
    struct vs_arena arena;
    vs_arena_init(&arena, 16384);
    struct vs_xml_doc doc;
    int rc = substitute(tmpl, len, result_name, random, upload_url ? upload_url : "", &sub);
    if (rc) {
        rc = fail(err, errsize, rc, "the result template is too big");
        goto done;
    }
    if ((rc = parse_root(sub.data, sub.len, "output_template", &arena, &doc, err, errsize)) != 0)
        goto done;
    bool have_result = false;
    for (const struct vs_xml_node *c = doc.root->child; c && rc == 0; c = c->next) {
        size_t n;
        if (!is(c, "file_info")) {
            have_result |= is(c, "result");
            const char *raw = vs_xml_raw(&doc, c, &n);
            rc = vs_buf_append(&b, raw, n);
            if (rc == 0)
                rc = vs_buf_puts(&b, "\n");
            continue;
        }
        const struct vs_xml_node *name = vs_xml_child(c, "name");
        const struct vs_xml_node *maxn = vs_xml_child(c, "max_nbytes");
        double max_nbytes = 0;
        if (!name || !maxn || vs_xml_get_double(maxn, &max_nbytes) != 0 || max_nbytes <= 0) {
            rc = fail(err, errsize, VS_EPARSE,
                      "result template: each <file_info> needs a <name> and a positive "
                      "<max_nbytes>");
            goto done;
        }
        const char *inner = vs_xml_inner_raw(&doc, c, &n);
        rc = vs_buf_puts(&b, "<file_info>");
        if (rc == 0)
            rc = vs_buf_append(&b, inner, n);
        if (rc == 0 && upload_key) {
            vs_buf_reset(&sig);
            rc = vs_sign_upload_cert(upload_key, vs_xml_text_trim(name, &arena), max_nbytes, &sig);
            if (rc) {
                rc = fail(err, errsize, rc, "cannot sign the upload certificate: %s",
                          vs_strerror(rc));
                goto done;
            }
            rc = vs_buf_printf(&b, "    <xml_signature>\n%s</xml_signature>\n", vs_buf_str(&sig));
        }
        if (rc == 0)
            rc = vs_buf_puts(&b, "</file_info>\n");
    }
    if (rc) {
        rc = fail(err, errsize, rc, "the result XML exceeds %d bytes", VS_TEMPLATE_MAX_DOC);
        goto done;
    }
    if (!have_result) {
        rc = fail(err, errsize, VS_EPARSE, "result template has no <result>");
        goto done;
    }
    size_t n;
    *out = vs_buf_take(&b, &n);
done:
    vs_buf_cleanup(&sub);
    vs_buf_cleanup(&b);
    vs_buf_cleanup(&sig);
    vs_arena_cleanup(&arena);
    return rc;
}
