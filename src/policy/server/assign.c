/*
 * Assigned work (seed 003): which assignments a host is in, and whether it
 * gets an instance of an assigned workunit now. Pure: plain structs in, a
 * decision out. The store applies the decision in one transaction, under
 * unique indexes on the slots (see server_policy.h).
 */
#include <stddef.h>

#include "volsched/server_policy.h"

/* BOINC-COMPAT: db/boinc_db_types.h values. */
#define SS_INACTIVE      1
#define SS_UNSENT        2
#define SS_IN_PROGRESS   4
#define SS_OVER          5
#define OUTCOME_SUCCESS  1
#define VALIDATE_INVALID 2

bool vs_sp_assign_matches(const struct vs_sp_assignment *a, int64_t hostid, int64_t userid,
                          int64_t teamid)
{
    switch (a->target_type) {
    case VS_SP_ASGN_ALL:
        return a->multi; /* "all hosts" is a broadcast; a targeted one is malformed */
    case VS_SP_ASGN_HOST:
        return hostid > 0 && a->target_id == hostid;
    case VS_SP_ASGN_USER:
        return userid > 0 && a->target_id == userid;
    case VS_SP_ASGN_TEAM:
        return teamid > 0 && a->target_id == teamid;
    default:
        return false;
    }
}

static bool is_live(const struct vs_sp_asgn_result *r)
{
    return r->server_state == SS_INACTIVE || r->server_state == SS_UNSENT ||
           r->server_state == SS_IN_PROGRESS;
}

static bool is_success(const struct vs_sp_asgn_result *r)
{
    return r->server_state == SS_OVER && r->outcome == OUTCOME_SUCCESS &&
           r->validate_state != VALIDATE_INVALID;
}

/* Each step below returns the reason there is no instance, or NULL with
 * the action set in *out. */
static const char *broadcast(int64_t hostid, const struct vs_sp_asgn_result *res, int n,
                             struct vs_sp_asgn_decision *out)
{
    for (int i = 0; i < n; i++) {
        if (res[i].hostid != hostid)
            continue;
        if (res[i].server_state == SS_UNSENT && res[i].assign_slot == VS_SP_ASGN_SLOT_BROADCAST) {
            out->action = VS_SP_ASGN_REUSE;
            out->index = i;
            return NULL;
        }
        return "host already has its instance";
    }
    out->action = VS_SP_ASGN_CREATE;
    out->slot = VS_SP_ASGN_SLOT_BROADCAST;
    return NULL;
}

static const char *targeted(const struct vs_sp_assignment *a, const struct vs_sp_asgn_wu *wu,
                            int64_t hostid, const struct vs_sp_asgn_result *res, int n,
                            struct vs_sp_asgn_decision *out)
{
    if (wu->has_canonical || wu->need_validate)
        return "workunit done";
    if (wu->transition_due)
        return "waiting for the transitioner";
    int live = 0, success = 0, reuse = -1;
    for (int i = 0; i < n; i++) {
        const struct vs_sp_asgn_result *r = &res[i];
        bool l = is_live(r), s = is_success(r);
        live += l;
        success += s;
        if (r->hostid == hostid && (l || s) && r->server_state != SS_UNSENT)
            return "host already has an instance";
        if (r->hostid == hostid && !l && !s && a->target_type != VS_SP_ASGN_HOST)
            return "host failed it; another host of the set retries";
        if (r->server_state == SS_UNSENT && reuse < 0)
            reuse = i;
    }
    if (reuse >= 0) {
        out->action = VS_SP_ASGN_REUSE;
        out->index = reuse;
        return NULL;
    }
    int target = wu->target_nresults > 0 ? wu->target_nresults : 1;
    if (live + success >= target)
        return "enough instances";
    if (wu->max_total_results > 0 && n >= wu->max_total_results)
        return "max_total_results reached";
    /* The lowest slot no live or successful instance holds. Bounded by
     * target (a workunit's own replication count). */
    for (int slot = 1; slot <= target; slot++) {
        bool held = false;
        for (int i = 0; i < n && !held; i++)
            held = res[i].assign_slot == slot && (is_live(&res[i]) || is_success(&res[i]));
        if (!held) {
            out->action = VS_SP_ASGN_CREATE;
            out->slot = slot;
            return NULL;
        }
    }
    return "every slot is held";
}

void vs_sp_assign_decide(const struct vs_sp_assignment *a, const struct vs_sp_asgn_wu *wu,
                         int64_t hostid, const struct vs_sp_asgn_result *res, int n,
                         struct vs_sp_asgn_decision *out)
{
    out->action = VS_SP_ASGN_NOTHING;
    out->index = -1;
    out->slot = 0;
    const char *why;
    if (hostid <= 0 || n < 0)
        why = "unknown host";
    else if (wu->error_mask)
        why = "workunit errored or cancelled";
    else if (a->multi)
        why = broadcast(hostid, res, n, out);
    else
        why = targeted(a, wu, hostid, res, n, out);
    if (why)
        out->action = VS_SP_ASGN_NOTHING;
    out->why = why;
}
