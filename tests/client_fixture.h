/*
 * A client test's fixture: a fresh data directory in /tmp and a client
 * opened on it (no lock, no network), closed and removed at teardown (the
 * removal checked). For cmocka's setup/teardown; a test's own setup calls
 * clientfx_setup first and adds to the client.
 */
#ifndef VOLSCHED_TESTS_CLIENT_FIXTURE_H
#define VOLSCHED_TESTS_CLIENT_FIXTURE_H

#include <stdlib.h>

#include "volsched/client.h"
#include "volsched/alloc.h"
#include "volsched/fs.h"

struct client_fx {
    char *dir;
    struct vs_client *c;
};

static inline int clientfx_setup(void **state)
{
    struct client_fx *f = VS_NEW(struct client_fx);
    char tmpl[] = "/tmp/vs_test_client_XXXXXX";
    if (!mkdtemp(tmpl))
        abort();
    f->dir = vs_xstrdup(tmpl);
    f->c = VS_NEW(struct vs_client);
    vs_client_init(f->c, f->dir);
    *state = f;
    return 0;
}

static inline int clientfx_teardown(void **state)
{
    struct client_fx *f = *state;
    vs_client_cleanup(f->c);
    vs_free(f->c);
    int rc = vs_fs_rm_tree(f->dir);
    vs_free(f->dir);
    vs_free(f);
    return rc;
}

#endif
