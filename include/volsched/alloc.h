/*
 * Allocation. Out-of-memory is not an error volsched recovers from: these
 * wrappers abort with a message (as Redis' zmalloc does). Limits on what the
 * network can make us allocate are enforced by callers, before allocating.
 *
 * This is the only module allowed to call malloc/calloc/realloc/free
 * directly (scripts/checksrc.sh enforces it).
 */
#ifndef VOLSCHED_ALLOC_H
#define VOLSCHED_ALLOC_H

#include <stddef.h>

void *vs_xmalloc(size_t n);
void *vs_xcalloc(size_t count, size_t size);
void *vs_xrealloc(void *p, size_t n);
/* Reallocates an array of count elements of size bytes; aborts on overflow. */
void *vs_xreallocarray(void *p, size_t count, size_t size);
char *vs_xstrdup(const char *s);
char *vs_xstrndup(const char *s, size_t n);
void vs_free(void *p);
/* Gives memory freed in bulk back to the system (glibc's malloc_trim), after
 * a large transient such as a parsed state file or scheduler reply: freed
 * memory otherwise stays in the process, and in its resident set size. */
void vs_alloc_trim(void);

/* Allocates one zeroed T. */
#define VS_NEW(T) ((T *)vs_xcalloc(1, sizeof(T)))

/*
 * An arena: many small allocations freed in one call. One per scheduler RPC
 * or client poll cycle. Memory is zeroed (except from vs_arena_alloc_raw).
 * Not thread-safe; one owner.
 */
struct vs_arena_chunk;
struct vs_arena {
    struct vs_arena_chunk *head;
    size_t chunk_size;
};

void vs_arena_init(struct vs_arena *a, size_t chunk_size);
void *vs_arena_alloc(struct vs_arena *a, size_t n);
/* Like vs_arena_alloc but not zeroed: for buffers the caller fills at once
 * (the XML parser's string and node region, copies). */
void *vs_arena_alloc_raw(struct vs_arena *a, size_t n);
char *vs_arena_strndup(struct vs_arena *a, const char *s, size_t n);
/* Frees every chunk but keeps the first, for reuse. */
void vs_arena_reset(struct vs_arena *a);
void vs_arena_cleanup(struct vs_arena *a);

#endif
