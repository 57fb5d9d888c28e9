/*
 * The files with unsent results, listed at most every ttl (loc_work.h).
 */
#include "server/loc_work.h"

#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "volsched/alloc.h"
#include "volsched/locality.h"

#define WORK_MAX 100000 /* files listed (bounded memory whatever the store holds) */

struct names {
    char **v; /* sorted, owned */
    size_t n, cap;
};

struct vs_loc_work {
    pthread_mutex_t mu; /* guards everything below */
    int64_t ttl_ms, loaded_ms;
    bool loading; /* a request lists them now (outside mu) */
    struct names cur;
};

static void names_clear(struct names *w)
{
    for (size_t i = 0; i < w->n; i++)
        vs_free(w->v[i]);
    vs_free(w->v);
    memset(w, 0, sizeof(*w));
}

static int names_add(void *ctx, const char *name)
{
    struct names *w = ctx;
    if (w->n >= WORK_MAX || !vs_loc_file_name_ok(name, strnlen(name, VS_LOC_NAME_MAX)))
        return 0;
    if (w->n == w->cap) {
        w->cap = w->cap ? w->cap * 2 : 64;
        w->v = vs_xreallocarray(w->v, w->cap, sizeof(*w->v));
    }
    w->v[w->n++] = vs_xstrdup(name);
    return 0;
}

struct vs_loc_work *vs_loc_work_create(int64_t ttl_ms)
{
    struct vs_loc_work *w = VS_NEW(struct vs_loc_work);
    pthread_mutex_init(&w->mu, NULL);
    w->ttl_ms = ttl_ms;
    w->loaded_ms = INT64_MIN;
    return w;
}

void vs_loc_work_destroy(struct vs_loc_work *w)
{
    if (!w)
        return;
    names_clear(&w->cur);
    pthread_mutex_destroy(&w->mu);
    vs_free(w);
}

/* The first index whose name is > after (binary search). */
static size_t first_after(const struct names *w, const char *after)
{
    size_t lo = 0, hi = w->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(w->v[mid], after) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Lists the files anew when the copy is stale and nobody else does. The
 * store's order is the name order (ORDER BY), which the search relies on. */
static void maybe_reload(struct vs_loc_work *w, struct vs_store *st, int64_t now_ms)
{
    pthread_mutex_lock(&w->mu);
    bool go = !w->loading && (w->loaded_ms == INT64_MIN || now_ms - w->loaded_ms > w->ttl_ms);
    if (go)
        w->loading = true;
    pthread_mutex_unlock(&w->mu);
    if (!go)
        return;
    struct names fresh = {0};
    int rc = st ? vs_store_loc_files_with_work(st, "", WORK_MAX, names_add, &fresh) : VS_EINVAL;
    pthread_mutex_lock(&w->mu);
    if (rc == 0) {
        names_clear(&w->cur);
        w->cur = fresh;
    } else {
        names_clear(&fresh);
    }
    /* A failed listing is tried again after ttl, not on every request. */
    w->loaded_ms = now_ms;
    w->loading = false;
    pthread_mutex_unlock(&w->mu);
}

size_t vs_loc_work_scan(struct vs_loc_work *w, struct vs_store *st, int64_t now_ms,
                        const char *after, struct vs_arena *a, const char **out, size_t max)
{
    maybe_reload(w, st, now_ms);
    pthread_mutex_lock(&w->mu);
    size_t n = 0, total = w->cur.n;
    size_t at = first_after(&w->cur, after ? after : "");
    for (size_t k = 0; k < total && n < max; k++) {
        const char *f = w->cur.v[(at + k) % total];
        out[n++] = vs_arena_strndup(a, f, strlen(f));
    }
    pthread_mutex_unlock(&w->mu);
    return n;
}

void vs_loc_work_drop(struct vs_loc_work *w, const char *f)
{
    pthread_mutex_lock(&w->mu);
    size_t i = first_after(&w->cur, f);
    if (i > 0 && strcmp(w->cur.v[i - 1], f) == 0) {
        vs_free(w->cur.v[i - 1]);
        memmove(&w->cur.v[i - 1], &w->cur.v[i], (w->cur.n - i) * sizeof(*w->cur.v));
        w->cur.n--;
    }
    pthread_mutex_unlock(&w->mu);
}
