/*
 * A store test's fixture: a fresh store (a SQLite file in a temporary
 * directory, or with VS_TEST_PG a new PostgreSQL database, store_backend.h)
 * (empty, or holding one app), removed at teardown. For cmocka's
 * setup/teardown.
 */
#ifndef VOLSCHED_TESTS_STORE_FIXTURE_H
#define VOLSCHED_TESTS_STORE_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "volsched/store.h"
#include "store_backend.h"
#include "volsched/alloc.h"

struct store_fx {
    char dir[64];
    char url[512];
    char path[128]; /* the SQLite file (dir/volsched.db) */
    struct vs_store *s;
    int64_t appid; /* the app "einstein" (storefx_setup) */
};

/* An empty store. */
static inline int storefx_open(void **state)
{
    struct store_fx *f = VS_NEW(struct store_fx);
    *state = f;
    snprintf(f->dir, sizeof(f->dir), "/tmp/vs_storefx_XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->path, sizeof(f->path), "%s/volsched.db", f->dir);
    vs_test_store_url(f->url, sizeof(f->url), f->dir, "volsched.db");
    return vs_store_open(f->url, VS_STORE_CREATE, NULL, &f->s) == 0 ? 0 : -1;
}

/* A store holding the app "einstein". */
static inline int storefx_setup(void **state)
{
    if (storefx_open(state) != 0)
        return -1;
    struct store_fx *f = *state;
    struct vs_app a;
    memset(&a, 0, sizeof(a));
    snprintf(a.name, sizeof(a.name), "einstein");
    a.weight = 1;
    if (vs_store_app_add(f->s, &a) != 0)
        return -1;
    f->appid = a.id;
    return 0;
}

static inline int storefx_teardown(void **state)
{
    struct store_fx *f = *state;
    vs_store_close(f->s);
    vs_test_store_drop(f->url);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
    int rc = system(cmd);
    vs_free(f);
    return rc == 0 ? 0 : -1;
}

#endif
