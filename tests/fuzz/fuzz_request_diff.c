/*
 * Differential fuzz target: the server's one-pass scheduler request reader
 * (vs_proto_request_parse_direct, src/proto/request_direct.c) against the
 * reference, vs_proto_request_parse() on expat. On any input the one-pass
 * reader either declines (VS_EUNSUPPORTED) or accepts something the
 * reference accepts too, into the same request: the same counts and the
 * same bytes once both are written back (the writer prints every field of
 * the struct, and tells NULL from ""). vs_proto_request_parse_fast(), what
 * the scheduler calls, answers exactly as the reference: the same code, and
 * on failure the same message.
 *
 * The seed corpus is the requests captured from the real BOINC client
 * (tests/golden/boinc), which the one-pass reader all takes, so mutations
 * start inside its subset and walk its edges.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/proto.h"

static void same_counts(const struct vs_proto_request *a, const struct vs_proto_request *b)
{
    CHECK(a->n_results == b->n_results && a->n_alt_platforms == b->n_alt_platforms);
    CHECK(a->n_coprocs == b->n_coprocs && a->n_msgs_from_host == b->n_msgs_from_host);
    CHECK(a->n_sticky_files == b->n_sticky_files && a->n_app_versions == b->n_app_versions);
    CHECK(a->n_other_results == b->n_other_results && a->n_ip_results == b->n_ip_results);
    CHECK(a->has_in_progress_results == b->has_in_progress_results);
    CHECK(a->hostid == b->hostid && a->rpc_seqno == b->rpc_seqno);
    for (size_t i = 0; i < a->n_results; i++)
        CHECK(a->results[i].n_files == b->results[i].n_files);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    struct vs_arena a;
    vs_arena_init(&a, 0);
    struct vs_proto_request ref, direct, fast;
    struct vs_proto_error rerr, ferr;
    int rc = vs_proto_request_parse(s, size, &a, &ref, &rerr);
    int drc = vs_proto_request_parse_direct(s, size, &a, &direct);
    CHECK(drc == 0 || drc == VS_EUNSUPPORTED);
    CHECK(drc != 0 || rc == 0); /* it never accepts what the reference rejects */

    int frc = vs_proto_request_parse_fast(s, size, &a, &fast, &ferr);
    CHECK(frc == rc && ferr.code == rc);
    if (rc)
        CHECK(strcmp(ferr.msg, rerr.msg) == 0);
    else
        CHECK(ferr.msg[0] == '\0');

    if (rc == 0) {
        struct vs_buf w1, w2;
        vs_buf_init(&w1, 4 * VS_PROTO_MAX_REQUEST_BYTES);
        vs_buf_init(&w2, 4 * VS_PROTO_MAX_REQUEST_BYTES);
        CHECK(vs_proto_request_write(&ref, &w1) == 0);
        const struct vs_proto_request *got = drc == 0 ? &direct : &fast;
        same_counts(&ref, got);
        CHECK(vs_proto_request_write(got, &w2) == 0);
        CHECK(w1.len == w2.len && memcmp(w1.data, w2.data, w1.len) == 0);
        vs_buf_cleanup(&w1);
        vs_buf_cleanup(&w2);
    }
    vs_arena_cleanup(&a);
    return 0;
}
