/*
 * Private to src/policy/client: the decisions in which the client policies
 * differ, one row per policy. The steps (rr_sim.c, cpu_sched.c, enforce.c,
 * work_fetch.c) are written once and ask the row of their policy; they do
 * not compare the policy with a name. A new policy is a new row here (and,
 * if it needs a rule none of the others has, a new field and the code that
 * reads it).
 *
 * The table is in this header, inside an inline function, so that a call
 * with a constant policy (fair's own files) folds to the constant.
 */
#ifndef VOLSCHED_POLICY_CLIENT_RULES_H
#define VOLSCHED_POLICY_CLIENT_RULES_H

#include <stdbool.h>

#include "volsched/client_policy.h"

/* How a running result that lost its CPU in the schedule is stopped. */
enum vs_cpreempt_rule {
    VS_CPREEMPT_NOW,        /* at once (the old client) */
    VS_CPREEMPT_CHECKPOINT, /* once it has checkpointed since the last schedule (seed 000) */
    VS_CPREEMPT_GRACE,      /* at its next checkpoint, or after sched_period / 2 (seed 002) */
};

/* What the work fetch asks for. */
enum vs_cfetch_rule {
    VS_CFETCH_RULE_SHORTFALL, /* shortfall(P), priority ltd + shortfall (seed 000) */
    VS_CFETCH_RULE_DEBT,      /* work_to_fill_buf(P), priority ltd + it (seed 002) */
    VS_CFETCH_RULE_WRR,       /* a result per project, then min_queue x ncpus by share */
    VS_CFETCH_RULE_FAIR,      /* deadline- and share-capped (fair_fetch.c) */
};

struct vs_cpolicy_rules {
    /* The round-robin simulation (rr_sim.c). */
    bool sim_nearly_runnable; /* simulates the nearly runnable results, not only runnable */
    bool frs_unsuspended;     /* frs(P) among the projects not suspended, not the fetchable */

    /* Results that cannot finish in time or would take more than their
     * project's share (internal.h: vs_cpolicy__abandoned, _lost,
     * _oversized): never started when unstarted and hopeless, run only on
     * CPUs nothing else uses, left out of the simulation and the fetch's
     * queue. A backup project's (share 0) unstarted results likewise start
     * only on such CPUs. */
    bool spare_cpus_only;

    /* The CPU scheduler (cpu_sched.c). */
    bool deadline_aware;    /* steps 1-3 (EDF for the projects the simulation says miss
                             * deadlines) and enforcement's preemption for them; the
                             * simulation's output is then required */
    bool own_deadline_mode; /* fair_sched.c decides when deadline mode is entered, and
                             * then EDF runs over every project */
    bool edf_hopeless_last; /* in EDF, the hopeless come last, shortest remaining first */
    bool edf_pays_debt;     /* an EDF pick lowers its project's anticipated debt */
    bool period_rule;       /* step 5: a running result keeps its CPU for a period */
    bool debt_is_ltd;       /* anticipated debt starts from long-term debt, not short-term */
    bool ties_by_name;      /* equal debts (and equal fetch reasons) go by project name,
                             * not list position */
    bool pick_by_deadline;  /* step 6 among unstarted results: earliest deadline, not
                             * received first */
    bool share_floor;       /* before steps 6-7 each project keeps whole CPUs up to its
                             * share */
    bool keep_finishing;    /* a running result a hundredth of a period from its end
                             * keeps its CPU */

    /* Enforcement (enforce.c). */
    enum vs_cpreempt_rule preempt;
    bool old_client;    /* the old client's suspend kinds (vs_cpolicy__suspend_kind) */
    bool spare_unsaved; /* a deadline preemption spares a job whose unsaved work it
                         * would throw away */

    /* The work fetch (work_fetch.c). */
    enum vs_cfetch_rule fetch;
};

static inline const struct vs_cpolicy_rules *vs_cpolicy__rules(enum vs_cpolicy policy)
{
    /* clang-format off */
    static const struct vs_cpolicy_rules rules[VS_CPOLICY_COUNT] = {
        [VS_CPOLICY_SHORTFALL] = {
            .sim_nearly_runnable = true,
            .deadline_aware = true, .edf_pays_debt = true, .period_rule = true,
            .preempt = VS_CPREEMPT_CHECKPOINT,
            .fetch = VS_CFETCH_RULE_SHORTFALL,
        },
        [VS_CPOLICY_DEBT] = {
            .deadline_aware = true, .pick_by_deadline = true,
            .preempt = VS_CPREEMPT_GRACE,
            .fetch = VS_CFETCH_RULE_DEBT,
        },
        [VS_CPOLICY_WRR] = {
            .frs_unsuspended = true,
            .preempt = VS_CPREEMPT_NOW, .old_client = true,
            .fetch = VS_CFETCH_RULE_WRR,
        },
        [VS_CPOLICY_FAIR] = {
            .sim_nearly_runnable = true, .spare_cpus_only = true,
            .deadline_aware = true, .own_deadline_mode = true, .edf_hopeless_last = true,
            .edf_pays_debt = true, .period_rule = true, .debt_is_ltd = true,
            .ties_by_name = true, .share_floor = true, .keep_finishing = true,
            .preempt = VS_CPREEMPT_CHECKPOINT, .spare_unsaved = true,
            .fetch = VS_CFETCH_RULE_FAIR,
        },
    };
    /* clang-format on */
    return &rules[policy];
}

#endif
