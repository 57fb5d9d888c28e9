/*
 * Internal to the scheduler request's files in src/proto:
 *
 *   request_fields.c   the field tables (one description of the message)
 *   request_parse.c    vs_proto_request_parse(): the tree reader (expat)
 *   request_direct.c   vs_proto_request_parse_direct() / _fast(): the
 *                      server's one-pass reader, which falls back on the
 *                      tree reader for anything outside its subset
 *   request_write.c    vs_proto_request_write() (the client's side)
 */
#ifndef VOLSCHED_PROTO_REQUEST_INT_H
#define VOLSCHED_PROTO_REQUEST_INT_H

#include "proto/proto_int.h"

/*
 * struct vs_proto_request's scalars, in BOINC's written order: head fields,
 * <alt_platform>s, key, preferences, mid fields, the structs, lists, tail.
 */
extern const struct vs_proto__table vs_proto__rq_head, vs_proto__rq_key, vs_proto__rq_mid,
    vs_proto__rq_tail;
/* The structs inside the request. */
extern const struct vs_proto__table vs_proto__rq_time_stats, vs_proto__rq_net_stats,
    vs_proto__rq_host, vs_proto__rq_disk, vs_proto__rq_coproc, vs_proto__rq_result,
    vs_proto__rq_result_file, vs_proto__rq_msg, vs_proto__rq_sticky;
/*
 * <app_versions>, <other_results>, <in_progress_results>: each such element
 * replaces the list read so far (BOINC's parser does the same).
 */
extern const struct vs_proto__list vs_proto__rq_app_versions, vs_proto__rq_other_results,
    vs_proto__rq_ip_results;

/*
 * BOINC-COMPAT: the coprocessor elements named after their type
 * (<coproc_cuda> = "NVIDIA" ...). The type an element stands for, or NULL
 * (a plain <coproc> says its <type>); the element for a type, or NULL.
 */
const char *vs_proto__coproc_type(const char *element);
const char *vs_proto__coproc_element(const char *type);

/*
 * How many bytes of a result's (trimmed) stderr t[0..len) are kept: all, or
 * at most VS_PROTO_MAX_STDERR cut on a UTF-8 character boundary, so that a
 * chatty app's result is still acknowledged and its text stays valid.
 */
size_t vs_proto__stderr_keep(const char *t, size_t len);

#endif
