#include "volsched/eventq.h"

#include <math.h>

#include "volsched/alloc.h"

static bool before(const struct vs_event *x, const struct vs_event *y)
{
    return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

void vs_eventq_init(struct vs_eventq *q)
{
    q->heap = NULL;
    q->n = q->cap = 0;
    q->next_seq = 0;
}

void vs_eventq_cleanup(struct vs_eventq *q)
{
    vs_free(q->heap);
    vs_eventq_init(q);
}

void vs_eventq_push(struct vs_eventq *q, double t, int type, int a, uint32_t gen)
{
    if (q->n == q->cap) {
        q->cap = q->cap ? q->cap * 2 : 64;
        q->heap = vs_xreallocarray(q->heap, q->cap, sizeof(*q->heap));
    }
    struct vs_event e = {.t = t, .seq = q->next_seq++, .type = type, .a = a, .gen = gen};
    size_t i = q->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        /* e has the greatest seq of all, so it goes before its parent
         * exactly when its time is earlier. */
        if (!(t < q->heap[parent].t))
            break;
        q->heap[i] = q->heap[parent];
        i = parent;
    }
    q->heap[i] = e;
}

bool vs_eventq_pop(struct vs_eventq *q, struct vs_event *out)
{
    if (q->n == 0)
        return false;
    *out = q->heap[0];
    size_t n = --q->n;
    if (n == 0)
        return true;
    /* The last event fills the hole at the root and sinks. */
    struct vs_event *h = q->heap;
    struct vs_event last = h[n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && before(&h[c + 1], &h[c]))
            c++;
        if (!before(&h[c], &last))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = last;
    return true;
}

double vs_eventq_peek_time(const struct vs_eventq *q)
{
    return q->n ? q->heap[0].t : INFINITY;
}

size_t vs_eventq_size(const struct vs_eventq *q)
{
    return q->n;
}
