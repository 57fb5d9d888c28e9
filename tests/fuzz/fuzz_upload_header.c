/*
 * Fuzz target: the upload handler's header parser (and the upload reply
 * parser, which the client uses). A header that parses must write back (client
 * side) into a header that parses to the same fields; the raw data offset must
 * lie inside the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/proto.h"

static void same_str(const char *a, const char *b)
{
    CHECK((a == NULL) == (b == NULL));
    if (a)
        CHECK(strcmp(a, b) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vs_arena a;
    vs_arena_init(&a, 0);
    struct vs_proto_upload_request u, v;
    struct vs_proto_error err;
    const char *s = (const char *)data;
    int rc = vs_proto_upload_parse(s, size, &a, &u, &err);
    if (rc == 0) {
        CHECK(u.kind == VS_PROTO_UPLOAD_FILE || u.kind == VS_PROTO_UPLOAD_GET_FILE_SIZE);
        CHECK(u.name && *u.name && !strstr(u.name, "..") && !strchr(u.name, '/'));
        if (u.kind == VS_PROTO_UPLOAD_FILE) {
            CHECK(u.data_offset <= size);
            CHECK(u.offset >= 0 && u.offset <= u.nbytes);
        }
        struct vs_buf w;
        vs_buf_init(&w, 4 * VS_PROTO_MAX_UPLOAD_HEADER);
        CHECK(vs_proto_upload_write_header(&u, &w) == 0);
        if (w.len <= VS_PROTO_MAX_UPLOAD_HEADER) {
            CHECK(vs_proto_upload_parse(w.data, w.len, &a, &v, &err) == 0);
            CHECK(v.kind == u.kind);
            same_str(v.name, u.name);
            if (u.kind == VS_PROTO_UPLOAD_FILE) {
                CHECK(v.nbytes == u.nbytes && v.offset == u.offset);
                CHECK(v.data_offset == w.len);
                same_str(v.md5_cksum, u.md5_cksum);
                same_str(v.xml_signature, u.xml_signature);
            }
        }
        vs_buf_cleanup(&w);
    } else {
        CHECK(rc < 0 && err.code == rc);
    }

    struct vs_proto_upload_reply r;
    if (vs_proto_upload_reply_parse(s, size, &a, &r, &err) == 0) {
        struct vs_buf w;
        vs_buf_init(&w, VS_PROTO_MAX_UPLOAD_HEADER);
        CHECK(vs_proto_upload_reply_write(&r, &w) == 0);
        vs_buf_cleanup(&w);
    }
    vs_arena_cleanup(&a);
    return 0;
}
