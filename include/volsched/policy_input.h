/*
 * From a parsed scheduler request (volsched/proto.h) to the inputs of the
 * server work-send policy (volsched/server_policy.h). This is the glue the
 * scheduler handler calls once per request; the policy itself never sees
 * protocol structs.
 */
#ifndef VOLSCHED_POLICY_INPUT_H
#define VOLSCHED_POLICY_INPUT_H

#include <stdint.h>

#include "volsched/alloc.h"
#include "volsched/error.h"
#include "volsched/proto.h"
#include "volsched/server_policy.h"

/*
 * Fills *out_host and *out_req from rq: hardware, availability, platforms,
 * coprocessors (NVIDIA / ATI-AMD / Intel GPU), the per-resource request,
 * the jobs the client holds (<other_results>, each with the app and
 * processor of its app version) and the queued results for the EDF check
 * (<in_progress_results>, CPU jobs only, deadlines made relative to now).
 * Disk, memory and queue preferences come from the request's
 * <working_global_preferences> (else the top-level ones). hostid and userid
 * are the server's; now and prev_rpc_time (0 = first contact) are epoch
 * seconds. Arrays are allocated in arena; strings are borrowed from rq,
 * which must outlive the outputs. Returns 0 or VS_EINVAL.
 */
VS_MUST_CHECK int vs_sp_input_from_request(const struct vs_proto_request *rq, int64_t hostid,
                                           int64_t userid, double now, double prev_rpc_time,
                                           struct vs_arena *arena, struct vs_sp_host *out_host,
                                           struct vs_sp_request *out_req);

/* The processor of a <coproc> type as BOINC names it ("NVIDIA", "CUDA",
 * "ATI", "AMD", "intel_gpu"); VS_SP_CPU for anything else. */
enum vs_sp_proc vs_sp_proc_from_coproc_type(const char *type);

#endif
