/*
 * Fuzz target: the scenario parser. Any bytes must parse or fail with a
 * position inside the text, never crash or leak; a parsed scenario must
 * satisfy the invariants the simulator relies on, and a short simulation of
 * a small one must run.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "volsched/scenario.h"
#include "volsched/sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vs_scenario s;
    struct vs_scn_error e;
    int rc = vs_scenario_parse((const char *)data, size, &s, &e);
    /* Deprecation notes: in the text, one per old name. */
    if (e.nnotes < 0 || e.nnotes > VS_SCN_MAX_NOTES)
        abort();
    for (int i = 0; i < e.nnotes; i++) {
        if (e.notes[i].line < 1 || e.notes[i].col < 1 || !e.notes[i].new_name)
            abort();
        for (int j = 0; j < i; j++)
            if (e.notes[i].old_name == e.notes[j].old_name)
                abort();
    }
    if (rc != 0) {
        if (rc == VS_EPARSE && (e.line < 1 || e.col < 1 || e.msg[0] == '\0'))
            abort();
        return 0;
    }
    if (s.nprojects == 0 || s.ncpus < 1 || s.sched_period <= 0 || s.duration <= 0)
        abort();
    /* R = 0 is a backup project (docs/simulator.md), but not every one. */
    bool any_share = false;
    for (size_t i = 0; i < s.nprojects; i++) {
        const struct vs_scn_project *p = &s.projects[i];
        if (!(p->cpu_time > 0) || !(p->delay_bound > 0) || !(p->share >= 0) || p->name[0] == '\0')
            abort();
        any_share |= p->share > 0;
    }
    if (!any_share)
        abort();
    /* A few simulated hours of small scenarios, so the simulator sees odd
     * inputs too (zero-length checkpoints, tiny jobs, outages). */
    if (s.nprojects <= 4 && s.ncpus <= 4) {
        struct vs_sim_options o = {.duration = 6 * 3600};
        struct vs_sim_result r;
        if (vs_sim_run(&s, &o, &r, NULL) == 0)
            vs_sim_result_cleanup(&r);
    }
    vs_scenario_cleanup(&s);
    return 0;
}
