/*
 * The simulator's event queue: a binary min-heap ordered by time, ties broken
 * by insertion order, so the same inputs always pop in the same order (the
 * determinism the simulator promises rests on this). Events are cancelled
 * lazily: the owner of an event bumps a generation counter and ignores popped
 * events whose generation no longer matches.
 */
#ifndef VOLSCHED_SIM_EVENTQ_H
#define VOLSCHED_SIM_EVENTQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vs_event {
    double t;     /* simulated seconds */
    uint64_t seq; /* insertion order, the tie-breaker */
    int type;     /* meaning chosen by the user */
    int a;        /* e.g. a project or CPU index */
    uint32_t gen; /* generation, for lazy cancellation */
};

struct vs_eventq {
    struct vs_event *heap; /* owned */
    size_t n, cap;
    uint64_t next_seq;
};

void vs_eventq_init(struct vs_eventq *q);
void vs_eventq_cleanup(struct vs_eventq *q);
/* Adds an event at time t. */
void vs_eventq_push(struct vs_eventq *q, double t, int type, int a, uint32_t gen);
/* Removes the earliest event into *out; returns false when the queue is empty. */
bool vs_eventq_pop(struct vs_eventq *q, struct vs_event *out);
/* The earliest event's time, or INFINITY when empty. */
double vs_eventq_peek_time(const struct vs_eventq *q);
size_t vs_eventq_size(const struct vs_eventq *q);

#endif
