/*
 * A client-policy snapshot for unit tests of src/policy/client: a host and
 * up to 8 projects / 512 results on the stack, with the policy workspace.
 * Include after vs_test.h.
 */
#ifndef VOLSCHED_TESTS_CPOLICY_FIXTURE_H
#define VOLSCHED_TESTS_CPOLICY_FIXTURE_H

#include <string.h>

#include "volsched/client_policy.h"

struct fx {
    struct vs_cstate st;
    struct vs_cproject p[8];
    struct vs_cresult r[512];
    struct vs_cpolicy_ws ws;
};

static inline void fx_init(struct fx *f, int ncpus, double min_queue)
{
    memset(f, 0, sizeof(*f));
    f->st.host = (struct vs_chost){.ncpus = ncpus,
                                   .on_frac = 1,
                                   .active_frac = 1,
                                   .cpu_efficiency = 1,
                                   .min_queue = min_queue,
                                   .sched_period = 3600};
    f->st.projects = f->p;
    f->st.results = f->r;
    f->st.last_sched_time = -1e9;
    vs_cpolicy_ws_init(&f->ws);
}

static inline size_t fx_project(struct fx *f, const char *name, double share)
{
    size_t i = f->st.nprojects++;
    f->p[i] = (struct vs_cproject){.name = name, .resource_share = share};
    return i;
}

/* A result received at time i (its index): "received first" is index order. */
static inline size_t fx_result(struct fx *f, const char *name, size_t project, double remaining,
                               double deadline)
{
    size_t i = f->st.nresults++;
    f->r[i] = (struct vs_cresult){.name = name,
                                  .project = project,
                                  .remaining = remaining,
                                  .deadline = deadline,
                                  .received = (double)i};
    return i;
}

static inline void fx_cleanup(struct fx *f)
{
    vs_cpolicy_ws_cleanup(&f->ws);
}

#endif
