/*
 * A host of the population as the scenario draws it (both host models: the
 * same seed draws the same first population under either): its CPUs and
 * their speed, its on, active and share fractions, error rate, RAM and
 * disk, and the buffers it keeps across the slot's hosts.
 */
#include <math.h>
#include <string.h>

#include "popsim/pop_int.h"
#include "volsched/alloc.h"

void vs_pop__host_init(struct pop *p, struct pop_host *h)
{
    const struct vs_pop_scenario *s = p->s;
    struct vs_rng *r = &p->rng_hosts;
    int32_t *q = h->q, *done = h->done;
    int capq = h->capq, capdone = h->capdone;
    struct pop_hfile *hf = h->hf;
    int caphf = h->caphf;
    uint32_t gd = h->gen_done, gr = h->gen_rpc, gl = h->gen_life;
    memset(h, 0, sizeof(*h));
    h->q = q;
    h->capq = capq;
    h->done = done;
    h->capdone = capdone;
    h->hf = hf; /* a new host: no files yet */
    h->caphf = caphf;
    h->gen_done = gd + 1;
    h->gen_rpc = gr + 1;
    h->gen_life = gl + 1;
    h->id = ++p->next_host_id;
    double nc = floor(vs_pop__draw(&s->ncpus, r) + 0.5);
    h->ncpus = nc < 1 ? 1 : nc > VS_SP_MAX_NCPUS ? VS_SP_MAX_NCPUS : (int)nc;
    h->flops = vs_pop__draw(&s->gflops, r) * 1e9;
    if (h->flops < 1e6)
        h->flops = 1e6;
    h->on_frac = fmax(0.01, vs_pop__draw(&s->on_frac, r));
    h->active_frac = fmax(0.01, vs_pop__draw(&s->active_frac, r));
    h->share = fmax(0.001, vs_pop__draw(&s->share, r));
    h->err_rate = vs_pop__draw(&s->error_rate, r);
    h->ram = vs_pop__draw(&s->ram_gb, r) * 1e9;
    h->disk = vs_pop__draw(&s->disk_gb, r) * 1e9;
    h->rate = h->flops * h->active_frac * h->share;
    h->on = vs_rng_double(r) < h->on_frac;
    h->last = p->now;
    h->joined = p->now;
    h->rpc_at = INFINITY;
    h->report_at = INFINITY;
    /* The first population does not call all in one second. */
    h->min_rpc = p->now == 0 ? vs_rng_double(r) * 3600 : p->now;
    h->hav = (struct vs_sp_hav){.app_version_id = p->av.id};
    p->out->hosts_seen++;
}

void vs_pop__host_cleanup(struct pop_host *h)
{
    vs_free(h->q);
    vs_free(h->done);
    vs_free(h->hf);
    h->q = h->done = NULL;
    h->hf = NULL;
}
