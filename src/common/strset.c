/* The index-keyed string set (strset.h). */
#include "volsched/strset.h"

#include <string.h>

#include "volsched/alloc.h"

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

size_t vs_strset_find_where(const struct vs_strset *ss, const char *key, vs_strset_key_fn get,
                            const void *ctx, bool (*accept)(const void *ctx, size_t index))
{
    if (!ss->cap)
        return SIZE_MAX;
    /* Terminates: the table is never more than half full. */
    for (size_t i = str_hash(key) & (ss->cap - 1);; i = (i + 1) & (ss->cap - 1)) {
        if (!ss->slot[i])
            return SIZE_MAX;
        if (strcmp(get(ctx, ss->slot[i] - 1), key) == 0 &&
            (!accept || accept(ctx, ss->slot[i] - 1)))
            return ss->slot[i] - 1;
    }
}

size_t vs_strset_find(const struct vs_strset *ss, const char *key, vs_strset_key_fn get,
                      const void *ctx)
{
    return vs_strset_find_where(ss, key, get, ctx, NULL);
}

static void place(size_t *tab, size_t cap, uint64_t h, size_t value)
{
    size_t j = h & (cap - 1);
    while (tab[j])
        j = (j + 1) & (cap - 1);
    tab[j] = value;
}

void vs_strset_add(struct vs_strset *ss, size_t index, vs_strset_key_fn get, const void *ctx)
{
    if ((ss->n + 1) * 2 > ss->cap) {
        size_t ncap = ss->cap ? ss->cap * 2 : 64;
        size_t *ns = vs_xcalloc(ncap, sizeof(*ns));
        for (size_t i = 0; i < ss->cap; i++)
            if (ss->slot[i])
                place(ns, ncap, str_hash(get(ctx, ss->slot[i] - 1)), ss->slot[i]);
        vs_free(ss->slot);
        ss->slot = ns;
        ss->cap = ncap;
    }
    place(ss->slot, ss->cap, str_hash(get(ctx, index)), index + 1);
    ss->n++;
}

void vs_strset_cleanup(struct vs_strset *ss)
{
    vs_free(ss->slot);
    memset(ss, 0, sizeof(*ss));
}
