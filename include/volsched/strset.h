/*
 * A set of strings found by index into an array the caller owns (the names
 * of the jobs of a batch, the destinations of planned file copies), so that
 * checking N items for clashes costs O(N), not O(N^2). The set stores only
 * indexes; the caller's key function maps an index to its string, and the
 * strings must not change while they are in the set. Open addressing,
 * linear probing. Zero-initialize, free with vs_strset_cleanup().
 */
#ifndef VOLSCHED_STRSET_H
#define VOLSCHED_STRSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vs_strset {
    size_t *slot; /* index + 1; 0 = empty */
    size_t cap;   /* power of two */
    size_t n;
};

/* The string of item index (borrowed). */
typedef const char *(*vs_strset_key_fn)(const void *ctx, size_t index);

/* The index of the item whose key equals key, or SIZE_MAX. */
size_t vs_strset_find(const struct vs_strset *ss, const char *key, vs_strset_key_fn get,
                      const void *ctx);
/* The same, among the items whose key equals key, the first that accept
 * approves (several items may share a key: one name in two projects). */
size_t vs_strset_find_where(const struct vs_strset *ss, const char *key, vs_strset_key_fn get,
                            const void *ctx, bool (*accept)(const void *ctx, size_t index));
/* Adds item index (the caller checked it is not there yet). */
void vs_strset_add(struct vs_strset *ss, size_t index, vs_strset_key_fn get, const void *ctx);
void vs_strset_cleanup(struct vs_strset *ss);

#endif
