/*
 * Upload handler messages: the <data_server_request> header (size query or
 * file upload) and the <data_server_reply>. See boinc-protocol.md section 8.
 */
#include <stdio.h>
#include <string.h>

#include "proto/proto_int.h"

#define DATA_LINE     "<data>\n"
#define DATA_LINE_LEN 7

static bool name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 255 || strstr(s, ".."))
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        /* a name becomes a path under upload/: no separators, escapes or controls */
        if (ch < 0x20 || ch == '/' || ch == '\\' || ch == '%' || ch == 0x7f)
            return false;
    }
    return true;
}

static bool md5_ok(const char *s)
{
    if (strlen(s) != 32)
        return false;
    for (int i = 0; i < 32; i++) {
        char ch = s[i];
        if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F')))
            return false;
    }
    return true;
}

#define T struct vs_proto_upload_request
static const struct vs_proto__field version_fields[] = {
    FLD(T, core_client_major_version, F_INT),
    FLD(T, core_client_minor_version, F_INT),
    FLD(T, core_client_release, F_INT),
};
static const struct vs_proto__field upload_fields[] = {
    FLD(T, nbytes, F_I64),
    FLD(T, md5_cksum, F_STR),
    FLD(T, offset, F_I64),
};
static const struct vs_proto__field fi_fields[] = {
    FLD(T, name, F_STR),
    FLD(T, xml_signature, F_BLOCK),
    FLD(T, max_nbytes, F_DBL),
};
#undef T

int vs_proto_upload_parse(const char *body, size_t len, struct vs_arena *arena,
                          struct vs_proto_upload_request *out, struct vs_proto_error *out_err)
{
    struct vs_proto__ctx c = {.arena = arena, .err = out_err};
    vs_proto__error_clear(out_err);
    size_t scan = len < VS_PROTO_MAX_UPLOAD_HEADER ? len : VS_PROTO_MAX_UPLOAD_HEADER;
    const char *data = memmem(body, scan, DATA_LINE, DATA_LINE_LEN);
    size_t hdr_len = data ? (size_t)(data - body) + DATA_LINE_LEN : len;
    if (hdr_len > VS_PROTO_MAX_UPLOAD_HEADER)
        return vs_proto__fail(&c, VS_ELIMIT, "upload header larger than %u bytes",
                              VS_PROTO_MAX_UPLOAD_HEADER);
    struct vs_xml_doc doc;
    /* a file upload ends in raw bytes, not end tags: parse the header as a prefix */
    int rc = vs_proto__parse_xml(&c, body, hdr_len, VS_PROTO_MAX_UPLOAD_HEADER,
                                 data ? VS_XML_ALLOW_UNCLOSED : 0, &doc);
    if (rc)
        return rc;
    if (strcmp(doc.root->name, "data_server_request") != 0)
        return vs_proto__fail(&c, VS_EPARSE, "root element is <%s>, not <data_server_request>",
                              doc.root->name);
    struct vs_proto_upload_request r;
    memset(&r, 0, sizeof(r));
    const struct vs_xml_node *fu = NULL, *gfs = NULL;
    for (const struct vs_xml_node *x = doc.root->child; x && !c.rc; x = x->next) {
        if (vs_proto__field_parse(&c, version_fields, VS_NELEM(version_fields), x, &r))
            continue;
        if (strcmp(x->name, "get_file_size") == 0)
            gfs = x;
        else if (strcmp(x->name, "file_upload") == 0)
            fu = x;
    }
    if (c.rc)
        return c.rc;
    if (data && fu) {
        r.kind = VS_PROTO_UPLOAD_FILE;
        const struct vs_xml_node *fi = vs_xml_child(fu, "file_info");
        for (const struct vs_xml_node *x = fi ? fi->child : NULL; x && !c.rc; x = x->next)
            vs_proto__field_parse(&c, fi_fields, VS_NELEM(fi_fields), x, &r);
        r.nbytes = -1;
        r.offset = -1;
        for (const struct vs_xml_node *x = fu->child; x && !c.rc; x = x->next)
            vs_proto__field_parse(&c, upload_fields, VS_NELEM(upload_fields), x, &r);
        if (c.rc)
            return c.rc;
        if (!vs_xml_child(fu, "data"))
            return vs_proto__fail(&c, VS_EPARSE, "<data> is not inside <file_upload>");
        if (!r.xml_signature)
            r.xml_signature = "";
        if (!r.name || !name_ok(r.name))
            return vs_proto__fail(&c, VS_EPARSE, "missing or invalid file name");
        if (r.nbytes < 0 || r.offset < 0 || r.offset > r.nbytes)
            return vs_proto__fail(&c, VS_EPARSE, "bad <nbytes> / <offset> for %s", r.name);
        if (!r.md5_cksum || !md5_ok(r.md5_cksum))
            return vs_proto__fail(&c, VS_EPARSE, "missing or invalid <md5_cksum> for %s", r.name);
        if (r.max_nbytes > 0 && (double)r.nbytes > r.max_nbytes)
            return vs_proto__fail(&c, VS_ELIMIT, "%s: %lld bytes exceeds max_nbytes %.0f", r.name,
                                  (long long)r.nbytes, r.max_nbytes);
        r.data_offset = hdr_len;
    } else if (!data && gfs) {
        r.kind = VS_PROTO_UPLOAD_GET_FILE_SIZE;
        r.name = vs_proto__str(&c, gfs, VS_PROTO_MAX_STRING);
        if (c.rc)
            return c.rc;
        if (!name_ok(r.name))
            return vs_proto__fail(&c, VS_EPARSE, "invalid file name in <get_file_size>");
    } else {
        return vs_proto__fail(&c, VS_EPARSE,
                              "neither <get_file_size> nor a <file_upload> header with <data>");
    }
    *out = r;
    return 0;
}

int vs_proto_upload_write_header(const struct vs_proto_upload_request *r, struct vs_buf *out)
{
    if (!r->name)
        return VS_EINVAL;
    struct vs_xml_writer w;
    vs_xml_writer_init(&w, out);
    /* BOINC-COMPAT: the client's layout, one element per line */
    vs_xml_open(&w, "data_server_request");
    vs_proto__fields_write(&w, version_fields, VS_NELEM(version_fields), r);
    if (r->kind == VS_PROTO_UPLOAD_GET_FILE_SIZE) {
        vs_xml_str(&w, "get_file_size", r->name);
        vs_xml_close(&w);
        return vs_xml_writer_error(&w);
    }
    if (r->kind != VS_PROTO_UPLOAD_FILE)
        return VS_EINVAL;
    w.indent = false;
    vs_xml_raw_write(&w, "<file_upload>\n<file_info>\n", 26);
    vs_xml_str(&w, "name", r->name);
    vs_xml_raw_write(&w, "<xml_signature>\n", 16);
    if (r->xml_signature && *r->xml_signature && !w.err) {
        /* the client echoes the text verbatim; escaping keeps odd text well-formed */
        int rc = vs_xml_escape(w.out, r->xml_signature, strlen(r->xml_signature));
        if (rc)
            return rc;
    }
    vs_xml_raw_write(&w, "</xml_signature>\n", 17);
    /* BOINC-COMPAT: no decimals; a huge value still fits (%.0f of 1e308 is 309 digits) */
    char num[400];
    int n = snprintf(num, sizeof(num), "%.0f", r->max_nbytes);
    if (n < 0 || (size_t)n >= sizeof(num))
        return VS_EINVAL;
    vs_xml_strn(&w, "max_nbytes", num, (size_t)n);
    vs_xml_raw_write(&w, "</file_info>\n", 13);
    vs_proto__fields_write(&w, upload_fields, VS_NELEM(upload_fields), r);
    vs_xml_raw_write(&w, DATA_LINE, DATA_LINE_LEN);
    /* the element stays open: the file bytes follow, then the body ends */
    return w.err;
}

int vs_proto_upload_reply_write(const struct vs_proto_upload_reply *r, struct vs_buf *out)
{
    struct vs_xml_writer w;
    vs_xml_writer_init(&w, out);
    vs_xml_open(&w, "data_server_reply");
    vs_xml_int(&w, "status", r->status);
    if (r->has_file_size)
        vs_xml_int(&w, "file_size", r->file_size);
    vs_xml_str(&w, "message", r->message);
    vs_xml_close(&w);
    return vs_xml_writer_error(&w);
}

int vs_proto_upload_reply_parse(const char *body, size_t len, struct vs_arena *arena,
                                struct vs_proto_upload_reply *out, struct vs_proto_error *out_err)
{
    struct vs_proto__ctx c = {.arena = arena, .err = out_err};
    struct vs_xml_doc doc;
    int rc = vs_proto__parse_xml(&c, body, len, VS_PROTO_MAX_UPLOAD_HEADER, 0, &doc);
    if (rc)
        return rc;
    if (strcmp(doc.root->name, "data_server_reply") != 0)
        return vs_proto__fail(&c, VS_EPARSE, "root element is <%s>, not <data_server_reply>",
                              doc.root->name);
    struct vs_proto_upload_reply r = {.status = 1}; /* BOINC-COMPAT: no status = transient */
    int64_t v;
    for (const struct vs_xml_node *x = doc.root->child; x && !c.rc; x = x->next) {
        if (strcmp(x->name, "status") == 0) {
            if (vs_xml_get_int64(x, &v) != 0 || v < INT32_MIN || v > INT32_MAX)
                return vs_proto__fail(&c, VS_EPARSE, "bad <status>");
            r.status = (int)v;
        } else if (strcmp(x->name, "file_size") == 0) {
            if (vs_xml_get_int64(x, &v) != 0 || v < 0)
                return vs_proto__fail(&c, VS_EPARSE, "bad <file_size>");
            r.file_size = v;
            r.has_file_size = true;
        } else if (strcmp(x->name, "message") == 0) {
            r.message = vs_proto__str(&c, x, VS_PROTO_MAX_STRING);
        }
    }
    if (c.rc)
        return c.rc;
    *out = r;
    return 0;
}
