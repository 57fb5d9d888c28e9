/*
 * The project's workunits and results in memory, with what BOINC's
 * transitioner and validator do to them (boinc-server-notes.md, states):
 * a workunit starts with target_nresults results; a result that misses
 * its deadline times out and, while the workunit still needs results, a
 * new one is made; min_quorum agreeing results finish it. A result with a
 * wrong answer agrees with nothing, so with min_quorum 1 it is accepted
 * unseen (counted as invalid_accepted) and with a quorum it is found out
 * and replaced. max_total_results bounds the results of one workunit.
 */
#include <math.h>
#include <string.h>

#include "popsim/pop_int.h"
#include "volsched/alloc.h"

static void unsent_append(struct pop *p, int32_t r)
{
    struct pop_result *x = &p->res[r];
    x->state = R_UNSENT;
    x->next = -1;
    x->prev = p->unsent_tail;
    if (p->unsent_tail >= 0)
        p->res[p->unsent_tail].next = r;
    else
        p->unsent_head = r;
    p->unsent_tail = r;
}

void vs_pop__unsent_remove(struct pop *p, int32_t r)
{
    struct pop_result *x = &p->res[r];
    if (x->prev >= 0)
        p->res[x->prev].next = x->next;
    else
        p->unsent_head = x->next;
    if (x->next >= 0)
        p->res[x->next].prev = x->prev;
    else
        p->unsent_tail = x->prev;
    x->prev = x->next = -1;
    vs_pop__file_unsent_gone(p, r);
}

/* A slot from the free list, or a new one at the end (*fresh set). */
static int32_t take_slot(int32_t *free_list, size_t *nfree, size_t *n, size_t *cap, void **arr,
                         size_t size, bool *fresh)
{
    *fresh = *nfree == 0;
    if (*nfree > 0)
        return free_list[--*nfree];
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 4096;
        *arr = vs_xreallocarray(*arr, *cap, size);
    }
    return (int32_t)(*n)++;
}

static void give_slot(int32_t **free_list, size_t *nfree, size_t *cap, int32_t slot)
{
    if (*nfree == *cap) {
        *cap = *cap ? *cap * 2 : 4096;
        *free_list = vs_xreallocarray(*free_list, *cap, sizeof(**free_list));
    }
    (*free_list)[(*nfree)++] = slot;
}

int32_t vs_pop__new_result(struct pop *p, int32_t w)
{
    struct pop_wu *wu = &p->wus[w];
    void *arr = p->res;
    bool fresh;
    int32_t r =
        take_slot(p->free_res, &p->nfree_res, &p->nres, &p->capres, &arr, sizeof(*p->res), &fresh);
    p->res = arr;
    struct pop_result *x = &p->res[r];
    uint32_t gen = fresh ? 0 : x->gen;
    memset(x, 0, sizeof(*x));
    x->gen = gen + 1;
    x->wu = w;
    x->host = -1;
    x->remaining = wu->fpops;
    wu->res[wu->nres++] = r;
    wu->live++;
    unsent_append(p, r);
    vs_pop__file_new_result(p, r);
    return r;
}

/* A workunit that is finished and whose results can no longer change gives
 * its slots back. */
static void maybe_free(struct pop *p, int32_t w)
{
    struct pop_wu *wu = &p->wus[w];
    if (!wu->done || wu->live > 0)
        return;
    for (int i = 0; i < wu->nres; i++)
        give_slot(&p->free_res, &p->nfree_res, &p->capfree_res, wu->res[i]);
    wu->nres = 0;
    give_slot(&p->free_wus, &p->nfree_wus, &p->capfree_wus, w);
}

/* Result r reached a state it never leaves. */
static void settle(struct pop *p, int32_t r)
{
    struct pop_wu *wu = &p->wus[p->res[r].wu];
    wu->live--;
    maybe_free(p, p->res[r].wu);
}

void vs_pop__make_batch(struct pop *p)
{
    const struct vs_pop_scenario *s = p->s;
    int32_t b = (int32_t)p->batches_made++;
    p->batches[b] = (struct pop_batch){.created = p->now, .last_done = -1, .open = s->batch_size};
    double mean = s->job_hours * s->ref_gflops * 1e9;
    vs_pop__files_begin_batch(p, s->batch_size);
    for (int64_t i = 0; i < s->batch_size; i++) {
        void *arr = p->wus;
        bool fresh;
        int32_t w = take_slot(p->free_wus, &p->nfree_wus, &p->nwus, &p->capwus, &arr,
                              sizeof(*p->wus), &fresh);
        p->wus = arr;
        struct pop_wu *wu = &p->wus[w];
        memset(wu, 0, sizeof(*wu));
        wu->batch = b;
        wu->created = p->now;
        wu->fpops = mean * (1 + s->job_spread * (2 * vs_rng_double(&p->rng_jobs) - 1));
        wu->file = vs_pop__file_of(p, i);
        if (wu->file >= 0)
            p->files[wu->file].open_wus++;
        for (int k = 0; k < s->target_nresults; k++)
            (void)vs_pop__new_result(p, w);
    }
    p->wus_open += s->batch_size;
    p->out->wus += s->batch_size;
}

/* Results of w that may still come back in time: unsent or out, not timed out. */
static int outstanding(const struct pop *p, const struct pop_wu *wu)
{
    int n = 0;
    for (int i = 0; i < wu->nres; i++) {
        const struct pop_result *x = &p->res[wu->res[i]];
        if (x->state == R_UNSENT ||
            ((x->state == R_RUNNING || x->state == R_DONE) && !x->timed_out))
            n++;
    }
    return n;
}

static void close_wu(struct pop *p, int32_t w, bool failed)
{
    struct pop_wu *wu = &p->wus[w];
    struct vs_pop_result *o = p->out;
    vs_pop__file_wu_closed(p, w);
    wu->done = true;
    wu->failed = failed;
    p->wus_open--;
    if (failed) {
        o->wus_failed++;
    } else {
        o->wus_valid++;
        vs_pop__hist_add(&p->wut, p->now - wu->created);
    }
    struct pop_batch *b = &p->batches[wu->batch];
    b->open--;
    if (p->now > b->last_done)
        b->last_done = p->now;
    for (int i = 0; i < wu->nres; i++) {
        int32_t r = wu->res[i];
        if (p->res[r].state == R_UNSENT) {
            vs_pop__unsent_remove(p, r);
            p->res[r].state = R_CANCELLED;
            wu->live--;
        }
    }
    maybe_free(p, w);
}

/* After a result came back or timed out: finish w, or make what it lacks. */
static void transition(struct pop *p, int32_t w)
{
    const struct vs_pop_scenario *s = p->s;
    struct pop_wu *wu = &p->wus[w];
    if (wu->done)
        return;
    if (wu->nvalid >= s->min_quorum) {
        p->out->valid += wu->nvalid;
        p->out->invalid += wu->nbad;
        close_wu(p, w, false);
        return;
    }
    int need = s->min_quorum - wu->nvalid;
    int have = outstanding(p, wu);
    while (have < need && wu->nres < s->max_total_results) {
        (void)vs_pop__new_result(p, w);
        have++;
    }
    if (have == 0) {
        p->out->invalid += wu->nbad;
        close_wu(p, w, true);
    }
}

void vs_pop__report(struct pop *p, int32_t r)
{
    struct pop_result *x = &p->res[r];
    int32_t w = x->wu;
    struct pop_wu *wu = &p->wus[w];
    struct vs_pop_result *o = p->out;
    bool was_out = !x->timed_out;
    vs_pop__tail_note(p, r, x->invalid, false);
    vs_pop__file_released(p, r);
    x->state = R_OVER;
    x->host = -1;
    p->returned++;
    if (was_out)
        p->in_flight--;
    else
        o->late++; /* it timed out first */
    vs_pop__hist_add(&p->turn, p->now - x->sent);
    o->cpu_hours += x->cpu / 3600;
    if (wu->done) {
        o->wasted++;
        o->cpu_hours_wasted += x->cpu / 3600;
    } else if (p->s->min_quorum == 1 && x->invalid) {
        /* Nothing to compare it with: the wrong answer is taken. */
        o->invalid_accepted++;
        o->cpu_hours_wasted += x->cpu / 3600;
        close_wu(p, w, false);
    } else {
        if (x->invalid) {
            wu->nbad++;
            o->cpu_hours_wasted += x->cpu / 3600;
        } else {
            wu->nvalid++;
        }
        transition(p, w);
    }
    settle(p, r);
}

void vs_pop__timeout(struct pop *p, int32_t r, uint32_t gen)
{
    struct pop_result *x = &p->res[r];
    if (x->gen != gen || x->timed_out ||
        (x->state != R_RUNNING && x->state != R_DONE && x->state != R_LOST))
        return;
    x->timed_out = true;
    vs_pop__tail_note(p, r, false, true);
    p->in_flight--;
    p->out->timed_out++;
    p->out->deadline_misses++;
    transition(p, x->wu);
    if (x->state == R_LOST)
        settle(p, r);
}

void vs_pop__lost(struct pop *p, int32_t r)
{
    struct pop_result *x = &p->res[r];
    x->state = R_LOST;
    x->host = -1;
    if (x->timed_out)
        settle(p, r);
}

void vs_pop__push_sample(struct pop *p)
{
    struct vs_pop_result *o = p->out;
    if (o->nsamples == p->capsamples) {
        p->capsamples = p->capsamples ? p->capsamples * 2 : 256;
        o->samples = vs_xreallocarray(o->samples, p->capsamples, sizeof(*o->samples));
    }
    o->samples[o->nsamples++] = (struct vs_pop_sample){
        .t = p->now,
        .in_flight = p->in_flight,
        .returned = p->returned,
        .validated = o->wus_valid,
        .rpcs = p->rpcs_bin,
    };
    p->rpcs_bin = 0;
}
