/*
 * Copying a whole store into another (`volsched store copy`): how a project
 * moves from SQLite to PostgreSQL (stop it, copy, switch <store_url>), or
 * back. Every table, row for row with its ids, then checked row for row.
 */
#ifndef VOLSCHED_STORE_STORE_COPY_H
#define VOLSCHED_STORE_STORE_COPY_H

#include <stddef.h>
#include <stdint.h>

#include "volsched/error.h"
#include "volsched/store.h"

/* Called per table after it was copied and checked. */
typedef void (*vs_store_copy_fn)(void *ctx, const char *table, int64_t rows);

/*
 * Copies every row of every table of from into to, whose tables must all be
 * empty (VS_EEXISTS otherwise, nothing written), in one transaction of to;
 * then reads both again in key order and compares every column of every
 * row (VS_ESTATE on the first difference, logged). fn (may be NULL) hears
 * of each table. from should not change meanwhile: stop the project first.
 */
VS_MUST_CHECK int vs_store_copy(struct vs_store *from, struct vs_store *to, vs_store_copy_fn fn,
                                void *ctx);

#endif
