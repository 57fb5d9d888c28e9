/*
 * Hash indexes over the state's results, workunits and files, by project
 * and name, so that a long queue costs a lookup, not a scan: a scheduler
 * reply's merge, each transfer poll's input check and each report look
 * items up by name. Each index is a vs_strset over the item's name, the
 * project checked on a match (two projects may use one name).
 *
 * Items are added by appending to their array (vs_client_add_*), their name
 * set just after; a lookup first indexes the items appended since the last
 * one. Removing an item moves others (state.c), so every removal marks the
 * indexes stale and the next lookup rebuilds them, once: a batch of
 * removals costs one rebuild (vs_client_drop_results, vs_client_gc).
 *
 * The index is a cache of the arrays: lookups take a const client and
 * update it, as vs_client_result_wu's hints do.
 */
#include <string.h>

#include "volsched/client.h"

enum kind { K_RESULT, K_WU, K_FILE };

struct ctx {
    const struct vs_client *c;
    enum kind k;
    size_t project; /* the one a lookup wants */
};

static const char *item_name(const struct vs_client *c, enum kind k, size_t i, size_t *out_p)
{
    switch (k) {
    case K_RESULT:
        *out_p = c->results[i].project;
        return c->results[i].name;
    case K_WU:
        *out_p = c->wus[i].project;
        return c->wus[i].name;
    case K_FILE:
        break;
    }
    *out_p = c->files[i].project;
    return c->files[i].name;
}

static const char *key(const void *ctx, size_t i)
{
    const struct ctx *x = ctx;
    size_t p;
    return item_name(x->c, x->k, i, &p);
}

static bool same_project(const void *ctx, size_t i)
{
    const struct ctx *x = ctx;
    size_t p;
    item_name(x->c, x->k, i, &p);
    return p == x->project;
}

static struct cl_index *index_of(struct vs_client *c, enum kind k, size_t *out_n)
{
    switch (k) {
    case K_RESULT:
        *out_n = c->n_results;
        return &c->ix_results;
    case K_WU:
        *out_n = c->n_wus;
        return &c->ix_wus;
    case K_FILE:
        break;
    }
    *out_n = c->n_files;
    return &c->ix_files;
}

/* Brings the index up to date with its array. An item without a name yet
 * (just added, being filled) is left out and keeps the index stale, so it
 * is indexed by a later lookup once named. */
static void sync(struct vs_client *c, enum kind k)
{
    size_t n;
    struct cl_index *ix = index_of(c, k, &n);
    struct ctx x = {c, k, 0};
    if (ix->stale || n < ix->n) {
        vs_strset_cleanup(&ix->set);
        ix->n = 0;
        ix->stale = false;
    }
    for (size_t i = ix->n; i < n; i++) {
        size_t p;
        if (!item_name(c, k, i, &p)) {
            ix->stale = true;
            continue;
        }
        vs_strset_add(&ix->set, i, key, &x);
    }
    ix->n = n;
}

static long find(const struct vs_client *cc, enum kind k, size_t p, const char *name)
{
    if (!name)
        return -1;
    struct vs_client *c = (struct vs_client *)cc; /* the index is a cache */
    sync(c, k);
    size_t n;
    struct cl_index *ix = index_of(c, k, &n);
    struct ctx x = {c, k, p};
    size_t i = vs_strset_find_where(&ix->set, name, key, &x, same_project);
    return i == SIZE_MAX ? -1 : (long)i;
}

long vs_client_find_result(const struct vs_client *c, size_t p, const char *name)
{
    return find(c, K_RESULT, p, name);
}

long vs_client_find_wu(const struct vs_client *c, size_t p, const char *name)
{
    return find(c, K_WU, p, name);
}

long vs_client_find_file(const struct vs_client *c, size_t p, const char *name)
{
    return find(c, K_FILE, p, name);
}

void vs_client_index_stale(struct vs_client *c)
{
    c->ix_results.stale = c->ix_wus.stale = c->ix_files.stale = true;
}

void vs_client_index_cleanup(struct vs_client *c)
{
    vs_strset_cleanup(&c->ix_results.set);
    vs_strset_cleanup(&c->ix_wus.set);
    vs_strset_cleanup(&c->ix_files.set);
    memset(&c->ix_results, 0, sizeof(c->ix_results));
    memset(&c->ix_wus, 0, sizeof(c->ix_wus));
    memset(&c->ix_files, 0, sizeof(c->ix_files));
}
