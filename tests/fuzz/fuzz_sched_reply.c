/*
 * Fuzz target: the client-side scheduler reply parser (vs_proto_reply_parse),
 * which reads whatever a project server sends back, so it must survive any
 * bytes. Any input either fails with an error code and a message, or parses
 * into a reply whose lists are within the parser's caps; a reply the writer
 * accepts then (1) re-parses, (2) writes the same bytes the second time and
 * (3) keeps its list lengths. A violated property aborts, which the fuzzer
 * reports.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/error.h"
#include "volsched/proto.h"

/* Every list the parser fills: within the cap, and present when non-empty. */
static void check_lists(const struct vs_proto_reply *r)
{
    const struct {
        const void *p;
        size_t n;
    } lists[] = {
        {r->apps, r->n_apps},
        {r->file_infos, r->n_file_infos},
        {r->app_versions, r->n_app_versions},
        {r->workunits, r->n_workunits},
        {r->results, r->n_results},
        {r->result_acks, r->n_result_acks},
        {r->result_aborts, r->n_result_aborts},
        {r->result_aborts_if_not_started, r->n_result_aborts_if_not_started},
        {r->delete_file_infos, r->n_delete_file_infos},
        {r->messages, r->n_messages},
        {r->no_rsc_apps, r->n_no_rsc_apps},
    };
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
        CHECK(lists[i].n <= VS_PROTO_MAX_LIST);
        CHECK(lists[i].n == 0 || lists[i].p != NULL);
    }
    /* names the client keys its state on are strings, never NULL */
    for (size_t i = 0; i < r->n_result_acks; i++)
        CHECK(r->result_acks[i] != NULL);
    for (size_t i = 0; i < r->n_result_aborts; i++)
        CHECK(r->result_aborts[i] != NULL);
    for (size_t i = 0; i < r->n_delete_file_infos; i++)
        CHECK(r->delete_file_infos[i] != NULL);
    for (size_t i = 0; i < r->n_messages; i++)
        CHECK(r->messages[i].text != NULL);
}

static void check_same_shape(const struct vs_proto_reply *a, const struct vs_proto_reply *b)
{
    CHECK(a->n_apps == b->n_apps && a->n_file_infos == b->n_file_infos);
    CHECK(a->n_app_versions == b->n_app_versions && a->n_workunits == b->n_workunits);
    CHECK(a->n_results == b->n_results && a->n_result_acks == b->n_result_acks);
    CHECK(a->n_result_aborts == b->n_result_aborts);
    CHECK(a->n_result_aborts_if_not_started == b->n_result_aborts_if_not_started);
    CHECK(a->n_delete_file_infos == b->n_delete_file_infos);
    CHECK(a->n_messages == b->n_messages && a->n_no_rsc_apps == b->n_no_rsc_apps);
    CHECK(a->hostid == b->hostid && a->has_user_info == b->has_user_info);
    for (size_t i = 0; i < a->n_result_acks; i++)
        CHECK(strcmp(a->result_acks[i], b->result_acks[i]) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vs_arena a;
    vs_arena_init(&a, 0);
    struct vs_proto_reply r1, r2;
    struct vs_proto_error err;
    int rc = vs_proto_reply_parse((const char *)data, size, &a, &r1, &err);
    if (rc) {
        CHECK(rc < 0 && err.code == rc && err.msg[0]);
        vs_arena_cleanup(&a);
        return 0;
    }
    check_lists(&r1);

    struct vs_buf w1, w2;
    vs_buf_init(&w1, 4 * VS_PROTO_MAX_REPLY_BYTES);
    vs_buf_init(&w2, 4 * VS_PROTO_MAX_REPLY_BYTES);
    /* The writer refuses a reply without a required name (VS_EINVAL): the
     * parser accepts one, as the BOINC client does, so that is not a bug. */
    rc = vs_proto_reply_write(&r1, &w1);
    CHECK(rc == 0 || rc == VS_EINVAL);
    if (rc == 0 && w1.len <= VS_PROTO_MAX_REPLY_BYTES) {
        CHECK(vs_proto_reply_parse(w1.data, w1.len, &a, &r2, &err) == 0);
        check_lists(&r2);
        check_same_shape(&r1, &r2);
        CHECK(vs_proto_reply_write(&r2, &w2) == 0);
        CHECK(w1.len == w2.len && memcmp(w1.data, w2.data, w1.len) == 0);
    }
    vs_buf_cleanup(&w1);
    vs_buf_cleanup(&w2);
    vs_arena_cleanup(&a);
    return 0;
}
