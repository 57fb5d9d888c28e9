/* SQLite backend: platforms, apps, app versions (with their files), catalog. */
#include <string.h>

#include "store/store_int.h"
#include "volsched/alloc.h"
#include "volsched/str.h"

int vs_store_platform_by_name(struct vs_store *s, const char *name, struct vs_platform *out)
{
    return vs_store__get_text(s, SQ_PLATFORM_BY_NAME, &vs_store__platform, name, out);
}

int vs_store_platform_add(struct vs_store *s, struct vs_platform *p)
{
    if (!p->name[0])
        return VS_EINVAL;
    if (!p->create_time)
        p->create_time = vs_store__now();
    return vs_store__insert(s, SQ_PLATFORM_INSERT, &vs_store__platform, p);
}

int vs_store_app_by_name(struct vs_store *s, const char *name, struct vs_app *out)
{
    return vs_store__get_text(s, SQ_APP_BY_NAME, &vs_store__app, name, out);
}

int vs_store_app_get(struct vs_store *s, int64_t id, struct vs_app *out)
{
    return vs_store__get_i64(s, SQ_APP_GET, &vs_store__app, id, out);
}

int vs_store_app_add(struct vs_store *s, struct vs_app *a)
{
    if (!a->name[0])
        return VS_EINVAL;
    if (!a->create_time)
        a->create_time = vs_store__now();
    return vs_store__insert(s, SQ_APP_INSERT, &vs_store__app, a);
}

int vs_store_app_update(struct vs_store *s, const struct vs_app *a)
{
    return vs_store__update(s, SQ_APP_UPDATE, &vs_store__app, a);
}

int vs_store_app_version_add(struct vs_store *s, struct vs_app_version *av)
{
    if (!av->appid || !av->platformid || av->nfiles == 0)
        return VS_EINVAL;
    size_t nmain = 0;
    for (size_t i = 0; i < av->nfiles; i++)
        nmain += av->files[i].main_program != 0;
    if (nmain != 1)
        return VS_EINVAL;
    if (!av->create_time)
        av->create_time = vs_store__now();
    int rc = vs_store__enter(s);
    if (rc)
        return rc;
    rc = vs_store__insert(s, SQ_APP_VERSION_INSERT, &vs_store__app_version, av);
    for (size_t i = 0; rc == 0 && i < av->nfiles; i++) {
        struct vs_stmt *st = vs_store__stmt(s, SQ_AVFILE_INSERT);
        if (!st) {
            rc = VS_ESTORE;
            break;
        }
        vs_db_bind_int64(st, 1, av->id);
        vs_db_bind_int64(st, 2, (int64_t)i);
        if (vs_store__bind_row(st, 3, &vs_store__app_version_file, &av->files[i], 0) < 0) {
            rc = vs_store__err(s, vs_db_errcode(s), "bind file");
            break;
        }
        rc = vs_store__step_done(s, st, "app_version_file");
    }
    rc = vs_store__leave(s, rc);
    if (rc)
        av->id = 0;
    return rc;
}

/* Runs a no-parameter "select all" and appends rows into a growing array. */
static int load_all(struct vs_store *s, enum sq_stmt id, const struct sq_table *t, size_t elsize,
                    void **out_arr, size_t *out_n)
{
    struct vs_stmt *st = vs_store__stmt(s, id);
    if (!st)
        return VS_ESTORE;
    char *arr = NULL;
    size_t n = 0, cap = 0;
    int rc;
    while ((rc = vs_db_step(st)) == VS_DB_ROW) {
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            arr = vs_xreallocarray(arr, cap, elsize);
        }
        memset(arr + n * elsize, 0, elsize);
        vs_store__read_row(st, 0, t, arr + n * elsize);
        n++;
    }
    vs_db_reset(st);
    if (rc != VS_DB_DONE) {
        for (size_t i = 0; i < n; i++)
            vs_store__free_row(t, arr + i * elsize);
        vs_free(arr);
        return vs_store__err(s, rc, t->name);
    }
    *out_arr = arr;
    *out_n = n;
    return 0;
}

static int load_files(struct vs_store *s, struct vs_app_version *av)
{
    struct vs_stmt *st = vs_store__stmt(s, SQ_AVFILES_OF);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, av->id);
    size_t cap = 0;
    int rc;
    while ((rc = vs_db_step(st)) == VS_DB_ROW) {
        if (av->nfiles == cap) {
            cap = cap ? cap * 2 : 4;
            av->files = vs_xreallocarray(av->files, cap, sizeof(*av->files));
        }
        struct vs_app_version_file *f = &av->files[av->nfiles++];
        memset(f, 0, sizeof(*f));
        vs_store__read_row(st, 0, &vs_store__app_version_file, f);
    }
    vs_db_reset(st);
    return rc == VS_DB_DONE ? 0 : vs_store__err(s, rc, "app_version_file");
}

int vs_store_catalog_load(struct vs_store *s, struct vs_catalog *out)
{
    struct vs_catalog c;
    memset(&c, 0, sizeof(c));
    void *p = NULL;
    int rc = load_all(s, SQ_PLATFORM_ALL, &vs_store__platform, sizeof(struct vs_platform), &p,
                      &c.nplatforms);
    if (rc)
        goto fail;
    c.platforms = p;
    if ((rc = load_all(s, SQ_APP_ALL, &vs_store__app, sizeof(struct vs_app), &p, &c.napps)) != 0)
        goto fail;
    c.apps = p;
    rc = load_all(s, SQ_APP_VERSION_ALL, &vs_store__app_version, sizeof(struct vs_app_version), &p,
                  &c.napp_versions);
    if (rc)
        goto fail;
    c.app_versions = p;
    for (size_t i = 0; i < c.napp_versions; i++) {
        struct vs_app_version *av = &c.app_versions[i];
        if ((rc = load_files(s, av)) != 0)
            goto fail;
        /* Names for the reply writer; ids are few, a linear search is fine. */
        for (size_t j = 0; j < c.napps; j++)
            if (c.apps[j].id == av->appid)
                vs_store__copy(av->app_name, c.apps[j].name, sizeof(av->app_name));
        for (size_t j = 0; j < c.nplatforms; j++)
            if (c.platforms[j].id == av->platformid)
                vs_store__copy(av->platform_name, c.platforms[j].name, sizeof(av->platform_name));
    }
    *out = c;
    return 0;
fail:
    vs_catalog_cleanup(&c);
    return rc;
}
