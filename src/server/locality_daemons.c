/* Locality scheduling's generator and working-set manager passes (see locality_daemons.h). */
#include "volsched/locality_daemons.h"

#include <string.h>

#include "volsched/alloc.h"
#include "volsched/daemon_util.h"
#include "volsched/loc_dirs.h"
#include "volsched/locality.h"
#include "volsched/log.h"

/* Names read from one trigger directory (copied: the pass changes it). */
struct names {
    char (*v)[VS_LOC_NAME_MAX];
    size_t n, cap;
};

static int names_add(void *ctx, const char *name)
{
    struct names *ns = ctx;
    if (ns->n == ns->cap) {
        ns->cap = ns->cap ? ns->cap * 2 : 32;
        ns->v = vs_xreallocarray(ns->v, ns->cap, sizeof(*ns->v));
    }
    memcpy(ns->v[ns->n], name, strlen(name) + 1); /* vs_loc_list checked the length */
    ns->n++;
    return 0;
}

int vs_locality_gen_pass(const struct vs_project_config *cfg, const char *command, int timeout,
                         struct vs_log *log, struct vs_locality_gen_stats *out)
{
    struct vs_locality_gen_stats st;
    memset(&st, 0, sizeof(st));
    if (!command || !*command)
        return VS_EINVAL;
    struct names ns = {0};
    int rc = vs_loc_dirs_create(cfg->dir);
    if (rc == 0)
        rc = vs_loc_list(cfg->dir, VS_LOC_NEED_WORK, VS_LOC_DAEMON_MAX, names_add, &ns);
    for (size_t i = 0; rc == 0 && i < ns.n; i++) {
        const char *f = ns.v[i];
        st.triggers++;
        const char *args[1] = {f};
        int status = -1;
        int r = vs_daemon_run(command, args, 1, timeout, log, &status);
        if (r == 0 && status == VS_LOC_GEN_MADE_WORK) {
            r = vs_loc_remove(cfg->dir, VS_LOC_NEED_WORK, f);
            st.made += r == 0;
        } else if (r == 0 && status == VS_LOC_GEN_NO_MORE) {
            r = vs_loc_touch(cfg->dir, VS_LOC_NO_WORK_AVAILABLE, f);
            if (r == 0)
                r = vs_loc_remove(cfg->dir, VS_LOC_NEED_WORK, f);
            st.exhausted += r == 0;
        } else {
            st.failed++;
            if (r == 0)
                vs_daemon_msg(st.last_error, sizeof(st.last_error), "%s %s: exit status %d",
                              command, f, status);
            else
                vs_daemon_msg(st.last_error, sizeof(st.last_error), "%s %s: %s", command, f,
                              vs_strerror(r));
            VS_LOG(log, VS_LOG_WARN, "locality-gen: %s (kept need_work/%s)", st.last_error, f);
            continue;
        }
        if (r)
            VS_LOG(log, VS_LOG_WARN, "locality-gen: %s: trigger files: %s", f, vs_strerror(r));
        else
            VS_LOG(log, VS_LOG_INFO, "locality-gen: %s: %s", f,
                   status == VS_LOC_GEN_MADE_WORK ? "made work" : "no more work");
    }
    vs_free(ns.v);
    if (out)
        *out = st;
    return rc ? rc : (int)(st.made + st.exhausted);
}

/* The working-set manager's source: the trigger directories and the store. */
struct ws_src {
    const struct vs_project_config *cfg;
    struct vs_store *s;
    struct vs_log *log;
};

static int ws_list(void *ctx, enum vs_loc_dir d, int (*fn)(void *, const char *), void *fctx)
{
    const struct ws_src *w = ctx;
    /* The listings are bounded: a working set larger than the bound is
     * treated as full. */
    size_t max = d == VS_LOC_WORKING_SET ? (size_t)100000 : VS_LOC_DAEMON_MAX;
    return vs_loc_list(w->cfg->dir, d, max, fn, fctx);
}

static int ws_remove(void *ctx, enum vs_loc_dir d, const char *f)
{
    return vs_loc_remove(((const struct ws_src *)ctx)->cfg->dir, d, f);
}

static int ws_touch(void *ctx, enum vs_loc_dir d, const char *f)
{
    return vs_loc_touch(((const struct ws_src *)ctx)->cfg->dir, d, f);
}

static bool ws_exists(void *ctx, enum vs_loc_dir d, const char *f)
{
    return vs_loc_exists(((const struct ws_src *)ctx)->cfg->dir, d, f);
}

static int ws_files_with_work(void *ctx, size_t lim, int (*fn)(void *, const char *), void *fctx)
{
    const struct ws_src *w = ctx;
    return vs_store_loc_files_with_work(w->s, "", lim > 100000 ? 100000 : (int)lim, fn, fctx);
}

static void ws_changed(void *ctx, const char *f, bool joined)
{
    VS_LOG(((const struct ws_src *)ctx)->log, VS_LOG_INFO, "locality-ws: %s %s", f,
           joined ? "joined the working set" : "left the working set (no work)");
}

int vs_locality_ws_pass(struct vs_store *s, const struct vs_project_config *cfg, size_t target,
                        struct vs_log *log, struct vs_locality_ws_stats *out)
{
    struct vs_locality_ws_stats st;
    memset(&st, 0, sizeof(st));
    if (!s || target == 0)
        return VS_EINVAL;
    int rc = vs_loc_dirs_create(cfg->dir);
    if (rc == 0) {
        struct ws_src w = {cfg, s, log};
        struct vs_loc_ws_source src = {
            .ctx = &w,
            .list = ws_list,
            .remove = ws_remove,
            .touch = ws_touch,
            .exists = ws_exists,
            .files_with_work = ws_files_with_work,
            .changed = ws_changed,
        };
        struct vs_loc_ws_stats ws;
        rc = vs_loc_ws_run(&src, target, &ws);
        st.removed = ws.removed;
        st.added = ws.added;
        st.size = ws.size;
    }
    if (out)
        *out = st;
    if (rc) {
        VS_LOG(log, VS_LOG_WARN, "locality-ws: %s", vs_strerror(rc));
        return rc;
    }
    return (int)(st.removed + st.added);
}
