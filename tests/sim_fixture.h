/*
 * What the simulator's unit tests share: a scenario read from
 * examples/scenarios or from text (a parse error fails the test with its
 * line and column), a run of N days under a policy, and a project's
 * figures by name.
 */
#ifndef VOLSCHED_TESTS_SIM_FIXTURE_H
#define VOLSCHED_TESTS_SIM_FIXTURE_H

#include <stdio.h>
#include <string.h>

#include "volsched/scenario.h"
#include "volsched/sim.h"

static inline void simfx_load(const char *name, struct vs_scenario *s)
{
    char path[512];
    struct vs_scn_error e;
    snprintf(path, sizeof(path), "%s/examples/scenarios/%s", VS_SOURCE_DIR, name);
    int rc = vs_scenario_load(path, s, &e);
    if (rc)
        print_error("%s:%d:%d: %s\n", path, e.line, e.col, e.msg);
    assert_int_equal(rc, 0);
}

static inline void simfx_parse(const char *text, struct vs_scenario *s)
{
    struct vs_scn_error e;
    int rc = vs_scenario_parse(text, strlen(text), s, &e);
    if (rc)
        print_error("%d:%d: %s\n", e.line, e.col, e.msg);
    assert_int_equal(rc, 0);
}

/* tl may be NULL. */
static inline void simfx_run(const struct vs_scenario *s, const char *policy, double days,
                             struct vs_sim_result *r, struct vs_timeline *tl)
{
    struct vs_sim_options o = {.policy = policy, .duration = days * 86400};
    assert_int_equal(vs_sim_run(s, &o, r, tl), 0);
}

static inline const struct vs_sim_project_result *simfx_proj(const struct vs_sim_result *r,
                                                              const char *name)
{
    for (size_t i = 0; i < r->nprojects; i++)
        if (strcmp(r->projects[i].name, name) == 0)
            return &r->projects[i];
    fail_msg("no project %s", name);
    return NULL;
}

#endif
