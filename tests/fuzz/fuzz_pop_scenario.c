/*
 * Fuzz target: popsim's scenario language (src/popsim/pop_scenario.c, on
 * the engine both scenario languages share, volsched/scn.h). Any bytes must
 * parse or fail with a position inside the text, never crash or leak; a
 * parsed scenario must hold the ranges the simulator relies on, its
 * deprecation notes must be well formed, and a short run of a small one
 * must finish with its books balanced.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_check.h"
#include "volsched/popsim.h"

/* Every value a distribution may draw lies in [lo, hi] (hi 0: above lo). */
static void check_dist(const struct vs_pop_dist *d, double lo, double hi)
{
    double v[2 + VS_POP_MAX_CHOICES];
    int n = 0;
    if (d->kind == VS_PD_CHOICE) {
        CHECK(d->n >= 1 && d->n <= VS_POP_MAX_CHOICES);
        for (int i = 0; i < d->n; i++) {
            CHECK(d->w[i] >= 0);
            v[n++] = d->v[i];
        }
    } else if (d->kind == VS_PD_CONST || d->kind == VS_PD_UNIFORM) {
        v[n++] = d->a;
        if (d->kind == VS_PD_UNIFORM) {
            CHECK(d->b >= d->a);
            v[n++] = d->b;
        }
    }
    for (int i = 0; i < n; i++)
        CHECK(hi > 0 ? v[i] >= lo && v[i] <= hi : v[i] > lo);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vs_pop_scenario s;
    struct vs_scn_error e;
    int rc = vs_pop_scenario_parse((const char *)data, size, &s, &e);
    CHECK(e.nnotes >= 0 && e.nnotes <= VS_SCN_MAX_NOTES);
    for (int i = 0; i < e.nnotes; i++) {
        CHECK(e.notes[i].line >= 1 && e.notes[i].col >= 1);
        CHECK(e.notes[i].old_name && e.notes[i].new_name);
        for (int j = 0; j < i; j++)
            CHECK(strcmp(e.notes[i].old_name, e.notes[j].old_name) != 0);
    }
    if (rc != 0) {
        CHECK(rc != VS_EPARSE || (e.line >= 1 && e.col >= 1 && e.msg[0] != '\0'));
        return 0;
    }
    CHECK(s.hosts >= 1 && s.hosts <= VS_POP_MAX_HOSTS);
    CHECK(s.buffer >= 0 && s.buffer <= 10 * 86400.0);
    CHECK(s.buffer_extra >= 0 && s.buffer_extra <= 10 * 86400.0);
    CHECK(s.min_quorum >= 1 && s.target_nresults >= s.min_quorum);
    CHECK(s.max_total_results >= s.target_nresults && s.max_total_results <= VS_POP_MAX_RESULTS);
    CHECK(s.duration >= 3600 && s.job_hours >= 1 && s.delay_bound >= 60);
    CHECK(s.model == VS_POP_LIGHT || s.model == VS_POP_FULL);
    check_dist(&s.ncpus, 1, 1024);
    check_dist(&s.on_frac, 0, 1);
    check_dist(&s.share, 0, 1);
    check_dist(&s.gflops, 0, 0);
    /* Half a simulated day of a small population, so the simulator sees odd
     * inputs too (tiny jobs, zero buffers, churn, big files). */
    if (s.hosts <= 8 && s.batches * s.batch_size <= 64 && s.wus_per_file <= 64) {
        struct vs_pop_options o = {.duration = 12 * 3600};
        struct vs_pop_result r;
        if (vs_popsim_run(&s, &o, &r) == 0) {
            CHECK(r.sent == r.returned + r.timed_out - r.late + r.in_flight_end);
            vs_pop_result_cleanup(&r);
        }
    }
    return 0;
}
