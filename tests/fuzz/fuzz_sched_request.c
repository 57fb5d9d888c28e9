/*
 * Fuzz target: the server's scheduler request parser, plus the properties the
 * rest of volsched relies on. Any input either fails with an error code, or
 * parses into a request that (1) writes back, (2) re-parses, and (3) writes
 * the same bytes the second time; and a reply acking its results writes and
 * parses back. A violated property aborts, which the fuzzer reports. (The
 * server's one-pass reader is held to this parser by fuzz_request_diff.c.)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vs_arena a;
    vs_arena_init(&a, 0);
    struct vs_proto_request r1, r2;
    struct vs_proto_error err;
    int rc = vs_proto_request_parse((const char *)data, size, &a, &r1, &err);
    if (rc) {
        CHECK(rc < 0 && err.code == rc && err.msg[0]);
        vs_arena_cleanup(&a);
        return 0;
    }
    struct vs_buf w1, w2;
    vs_buf_init(&w1, 4 * VS_PROTO_MAX_REQUEST_BYTES);
    vs_buf_init(&w2, 4 * VS_PROTO_MAX_REQUEST_BYTES);
    CHECK(vs_proto_request_write(&r1, &w1) == 0);
    if (w1.len <= VS_PROTO_MAX_REQUEST_BYTES) {
        CHECK(vs_proto_request_parse(w1.data, w1.len, &a, &r2, &err) == 0);
        CHECK(vs_proto_request_write(&r2, &w2) == 0);
        CHECK(w1.len == w2.len && memcmp(w1.data, w2.data, w1.len) == 0);
        CHECK(r1.n_results == r2.n_results && r1.hostid == r2.hostid);
    }
    (void)vs_proto_request_wants_work(&r1);

    /* the server's answer: ack every reported result */
    struct vs_proto_reply rep;
    memset(&rep, 0, sizeof(rep));
    const char **acks = vs_arena_alloc(&a, (r1.n_results + 1) * sizeof(char *));
    for (size_t i = 0; i < r1.n_results; i++)
        acks[i] = r1.results[i].name;
    rep.result_acks = acks;
    rep.n_result_acks = r1.n_results;
    rep.hostid = r1.hostid;
    rep.code_sign_key = r1.code_sign_key;
    vs_buf_reset(&w1);
    CHECK(vs_proto_reply_write(&rep, &w1) == 0);
    struct vs_proto_reply back;
    CHECK(vs_proto_reply_parse(w1.data, w1.len, &a, &back, &err) == 0);
    CHECK(back.n_result_acks == r1.n_results);
    for (size_t i = 0; i < r1.n_results; i++)
        CHECK(strcmp(back.result_acks[i], r1.results[i].name) == 0);
    vs_buf_cleanup(&w1);
    vs_buf_cleanup(&w2);
    vs_arena_cleanup(&a);
    return 0;
}
