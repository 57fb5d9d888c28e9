/*
 * The host simulator one step at a time (hsim.h): the same set-up, instants
 * and passes as vs_sim_run (host_sim.c), driven by a caller that runs many
 * hosts on its own clock, with one project served through its hooks.
 */
#include <stdint.h>

#include "host_sim.h"
#include "volsched/alloc.h"

struct vs_hsim *vs_hsim_open(const struct vs_scenario *s, const char *policy, double duration,
                             uint64_t seed, const struct vs_hsim_hooks *hooks)
{
    enum vs_cpolicy pol;
    if (vs_cpolicy_parse(policy ? policy : "fair", &pol) != 0)
        return NULL;
    if (!s || s->nprojects == 0 || s->ncpus < 1 || !(duration > 0))
        return NULL;
    if (hooks && (hooks->project >= s->nprojects || !hooks->serve || !hooks->report))
        return NULL;
    struct vs_hsim *h = VS_NEW(struct vs_hsim);
    struct sim *x = &h->x;
    vs_sim__init(x, s, pol, duration, seed, NULL);
    x->hooks = hooks;
    vs_sim__start(x);
    return h;
}

double vs_hsim_next(const struct vs_hsim *h)
{
    return vs_sim__next(&h->x);
}

int vs_hsim_step(struct vs_hsim *h)
{
    if (h->x.rc)
        return h->x.rc;
    return vs_sim__step(&h->x);
}

double vs_hsim_now(const struct vs_hsim *h)
{
    return h->x.st.now;
}

void vs_hsim_add_job(struct vs_hsim *h, double len, double est, double deadline, int64_t ext)
{
    struct sim *x = &h->x;
    if (!VS_ALWAYS(x->hooks))
        return;
    size_t p = x->hooks->project;
    vs_sim__add_result(x, p, len, deadline);
    x->jobs[x->st.nresults - 1].ext = ext;
    /* What the client learns of the project's jobs from this one. */
    x->cp[p].job_est = est;
    x->cp[p].job_delay_bound = deadline - x->st.now;
    if (x->pj[p].jobs_left > 0)
        x->pj[p].jobs_left--;
}

void vs_hsim_held(const struct vs_hsim *h, void (*f)(void *ctx, int64_t ext, double cpu), void *ctx)
{
    const struct sim *x = &h->x;
    if (!x->hooks)
        return;
    size_t p = x->hooks->project;
    for (size_t r = 0; r < x->st.nresults; r++)
        if (!x->st.results[r].done && x->st.results[r].project == p)
            f(ctx, x->jobs[r].ext, x->jobs[r].cpu_used);
    for (size_t i = 0; i < x->nreports; i++)
        if ((size_t)x->reports[i].project == p)
            f(ctx, x->reports[i].ext, x->reports[i].cpu);
}

void vs_hsim_close(struct vs_hsim *h)
{
    if (!h)
        return;
    vs_sim__cleanup(&h->x);
    vs_free(h);
}
