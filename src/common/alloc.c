#include "volsched/alloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

static void oom(size_t n)
{
    fprintf(stderr, "volsched: out of memory allocating %zu bytes\n", n);
    abort();
}

void vs_alloc_trim(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

void *vs_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *vs_xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        oom(count * size);
    return p;
}

void *vs_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

void *vs_xreallocarray(void *p, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        oom(SIZE_MAX);
    return vs_xrealloc(p, count * size);
}

char *vs_xstrndup(const char *s, size_t n)
{
    char *d = vs_xmalloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *vs_xstrdup(const char *s)
{
    return vs_xstrndup(s, strlen(s));
}

void vs_free(void *p)
{
    free(p);
}

struct vs_arena_chunk {
    struct vs_arena_chunk *next;
    size_t size;
    size_t used;
    max_align_t data[];
};

void vs_arena_init(struct vs_arena *a, size_t chunk_size)
{
    a->head = NULL;
    a->chunk_size = chunk_size ? chunk_size : 16384;
}

void *vs_arena_alloc_raw(struct vs_arena *a, size_t n)
{
    const size_t align = sizeof(max_align_t);
    size_t need = (n + align - 1) / align * align;
    if (need < n)
        oom(n);
    struct vs_arena_chunk *c = a->head;
    if (!c || c->size - c->used < need) {
        size_t sz = need > a->chunk_size ? need : a->chunk_size;
        c = vs_xmalloc(sizeof(*c) + sz);
        c->size = sz;
        c->used = 0;
        c->next = a->head;
        a->head = c;
    }
    void *p = (char *)c->data + c->used;
    c->used += need;
    return p;
}

void *vs_arena_alloc(struct vs_arena *a, size_t n)
{
    void *p = vs_arena_alloc_raw(a, n);
    memset(p, 0, n);
    return p;
}

char *vs_arena_strndup(struct vs_arena *a, const char *s, size_t n)
{
    char *d = vs_arena_alloc_raw(a, n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

void vs_arena_reset(struct vs_arena *a)
{
    struct vs_arena_chunk *c = a->head;
    if (!c)
        return;
    /* Keep the oldest chunk (the last in the list): it has the base size. */
    while (c->next) {
        struct vs_arena_chunk *n = c->next;
        free(c);
        c = n;
    }
    c->used = 0;
    a->head = c;
}

void vs_arena_cleanup(struct vs_arena *a)
{
    struct vs_arena_chunk *c = a->head;
    while (c) {
        struct vs_arena_chunk *n = c->next;
        free(c);
        c = n;
    }
    a->head = NULL;
}
