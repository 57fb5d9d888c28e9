/* Locality scheduling's generator and working-set manager passes (see locality_daemons.h). */
#include "server/locality_daemons.h"

#include <string.h>

#include "server/daemon_util.h"
#include "server/loc_dirs.h"
#include "volsched/alloc.h"
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

static bool names_has(const struct names *ns, const char *name)
{
    for (size_t i = 0; i < ns->n; i++)
        if (strcmp(ns->v[i], name) == 0)
            return true;
    return false;
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

struct candidates {
    const struct names *ws;
    struct names *add;
    size_t want;
};

static int candidate(void *ctx, const char *name)
{
    struct candidates *c = ctx;
    if (c->add->n < c->want && !names_has(c->ws, name))
        names_add(c->add, name);
    return 0;
}

int vs_locality_ws_pass(struct vs_store *s, const struct vs_project_config *cfg, size_t target,
                        struct vs_log *log, struct vs_locality_ws_stats *out)
{
    struct vs_locality_ws_stats st;
    memset(&st, 0, sizeof(st));
    if (!s || target == 0)
        return VS_EINVAL;
    int rc = vs_loc_dirs_create(cfg->dir);
    struct names gone = {0}, ws = {0}, add = {0};
    if (rc == 0)
        rc = vs_loc_list(cfg->dir, VS_LOC_FILES_NO_WORK, VS_LOC_DAEMON_MAX, names_add, &gone);
    /* Drop first: the scheduler found no unsent result for these. */
    for (size_t i = 0; rc == 0 && i < gone.n; i++) {
        bool was = vs_loc_exists(cfg->dir, VS_LOC_WORKING_SET, gone.v[i]);
        rc = vs_loc_remove(cfg->dir, VS_LOC_WORKING_SET, gone.v[i]);
        if (rc == 0)
            rc = vs_loc_remove(cfg->dir, VS_LOC_FILES_NO_WORK, gone.v[i]);
        if (rc == 0 && was) {
            st.removed++;
            VS_LOG(log, VS_LOG_INFO, "locality-ws: %s left the working set (no work)", gone.v[i]);
        }
    }
    /* The listing is bounded: a working set larger than the bound is
     * treated as full. */
    if (rc == 0)
        rc = vs_loc_list(cfg->dir, VS_LOC_WORKING_SET, (size_t)100000, names_add, &ws);
    if (rc == 0 && ws.n < target) {
        /* Files with work, in name order; the ones already in the set are
         * passed over, so ask for that many more. */
        struct candidates c = {&ws, &add, target - ws.n};
        /* At most ws.n of the first target files are in the set already. */
        rc = vs_store_loc_files_with_work(s, "", target > 100000 ? 100000 : (int)target, candidate,
                                          &c);
        for (size_t i = 0; rc == 0 && i < add.n; i++) {
            rc = vs_loc_touch(cfg->dir, VS_LOC_WORKING_SET, add.v[i]);
            if (rc == 0) {
                st.added++;
                VS_LOG(log, VS_LOG_INFO, "locality-ws: %s joined the working set", add.v[i]);
            }
        }
    }
    st.size = ws.n + st.added;
    vs_free(gone.v);
    vs_free(ws.v);
    vs_free(add.v);
    if (out)
        *out = st;
    if (rc) {
        VS_LOG(log, VS_LOG_WARN, "locality-ws: %s", vs_strerror(rc));
        return rc;
    }
    return (int)(st.removed + st.added);
}
