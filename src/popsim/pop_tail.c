/*
 * Batch tail acceleration in popsim, by the rule `volsched serve` applies
 * (volsched/submit_policy.h, src/policy/server/submit_policy.c): once a
 * batch is in its tail, its jobs go only to hosts that return work fast and
 * well, and a fit host asking for work first gets an extra instance of a
 * tail job whose instance is overdue. What is popsim's own is only the
 * bookkeeping the server keeps in its store: each host's turnaround and
 * failures, the quantile of the hosts' turnaround (refreshed hourly), and
 * the list of the tail's open workunits.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "popsim/pop_int.h"
#include "volsched/alloc.h"

void vs_pop__tail_init(struct pop *p)
{
    vs_sp_tail_defaults(&p->tail);
    p->tail.enabled = p->s->tail_acceleration;
    p->tail.tail_frac = p->s->tail_frac;
    p->tail.overdue_factor = p->s->tail_overdue_factor;
    p->tail.min_overdue = p->s->tail_min_overdue;
}

void vs_pop__tail_cleanup(struct pop *p)
{
    vs_free(p->tail_wus);
}

/* The host that holds (or held) result r, if it is still attached. */
static struct pop_host *host_of(struct pop *p, const struct pop_result *x)
{
    if (x->host < 0 || (size_t)x->host >= p->nhosts)
        return NULL;
    struct pop_host *h = &p->hosts[x->host];
    return h->id == x->hostid ? h : NULL;
}

void vs_pop__tail_note(struct pop *p, int32_t r, bool failed, bool timed_out)
{
    struct pop_result *x = &p->res[r];
    struct pop_host *h = host_of(p, x);
    if (!h)
        return;
    if (!timed_out) {
        h->n_rep++;
        h->turn_sum += p->now - x->sent;
    }
    if (failed || timed_out)
        h->n_fail++;
}

static struct vs_sp_tail_host tail_host(const struct pop *p, const struct pop_host *h)
{
    int64_t n = h->n_rep + h->n_fail;
    return (struct vs_sp_tail_host){
        .turnaround = h->n_rep > 0 ? h->turn_sum / (double)h->n_rep : -1,
        .error_rate = n > 0 ? (double)h->n_fail / (double)n : 0,
        .turnaround_q = p->tail_turn_q,
    };
}

static bool in_tail(const struct pop *p, int32_t batch)
{
    const struct pop_batch *b = &p->batches[batch];
    struct vs_sp_tail_batch tb = {.njobs = p->s->batch_size, .nunfinished = b->open};
    return vs_sp_tail_active(&p->tail, &tb);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void vs_pop__tail_refresh(struct pop *p)
{
    if (!p->tail.enabled)
        return;
    /* The quantile of the hosts' mean turnaround (hosts that reported). */
    double *t = vs_xcalloc(p->nhosts + 1, sizeof(*t));
    size_t n = 0;
    for (size_t i = 0; i < p->nhosts; i++)
        if (p->hosts[i].n_rep > 0)
            t[n++] = p->hosts[i].turn_sum / (double)p->hosts[i].n_rep;
    if (n > 0) {
        qsort(t, n, sizeof(*t), cmp_double);
        size_t k = (size_t)floor(p->tail.fast_quantile * (double)(n - 1));
        p->tail_turn_q = t[k];
    }
    vs_free(t);
    /* The open workunits of the batches in their tail. */
    p->ntail = 0;
    bool any = false;
    for (int64_t b = 0; b < p->batches_made && !any; b++)
        any = in_tail(p, (int32_t)b);
    for (size_t w = 0; any && w < p->nwus; w++) {
        const struct pop_wu *wu = &p->wus[w];
        if (wu->done || wu->nres == 0 || !in_tail(p, wu->batch))
            continue;
        if (p->ntail == p->captail) {
            p->captail = p->captail ? 2 * p->captail : 1024;
            p->tail_wus = vs_xreallocarray(p->tail_wus, p->captail, sizeof(*p->tail_wus));
        }
        p->tail_wus[p->ntail++] = (int32_t)w;
    }
}

bool vs_pop__tail_skip(struct pop *p, const struct pop_host *h, int32_t r)
{
    if (!in_tail(p, p->wus[p->res[r].wu].batch))
        return false;
    struct vs_sp_tail_host th = tail_host(p, h);
    return !vs_sp_tail_host_fit(&p->tail, &th);
}

/* Whether w has an instance out that is overdue, and none unsent. */
static bool overdue(struct pop *p, const struct pop_wu *wu)
{
    bool late = false;
    for (int i = 0; i < wu->nres; i++) {
        const struct pop_result *x = &p->res[wu->res[i]];
        if (x->state == R_UNSENT)
            return false;
        /* A result whose host left is, to the server, still out. */
        if ((x->state != R_RUNNING && x->state != R_DONE && x->state != R_LOST) || x->timed_out)
            continue;
        const struct pop_host *h = host_of(p, x);
        double expected = p->tail_turn_q;
        if (h && h->n_rep > 0)
            expected = h->turn_sum / (double)h->n_rep;
        late |= vs_sp_tail_overdue(&p->tail, p->now, x->sent, expected, wu->extra);
    }
    return late;
}

int vs_pop__tail_replicate(struct pop *p, struct pop_host *h, int32_t slot, struct vs_sp_state *st)
{
    if (p->ntail == 0)
        return 0;
    struct vs_sp_tail_host th = tail_host(p, h);
    if (!vs_sp_tail_host_fit(&p->tail, &th))
        return 0;
    int sent = 0;
    for (size_t i = 0; i < p->ntail && vs_sp_work_needed(st); i++) {
        int32_t w = p->tail_wus[i];
        struct pop_wu *wu = &p->wus[w];
        if (wu->done || !in_tail(p, wu->batch) || wu->nres >= p->s->max_total_results ||
            wu->nres >= VS_POP_MAX_RESULTS || !overdue(p, wu))
            continue;
        int32_t r = vs_pop__new_result(p, w);
        wu->extra++;
        p->out->tail_replicas++;
        if (vs_pop__offer(p, h, slot, st, r) == VS_SP_OK)
            sent++;
    }
    return sent;
}
