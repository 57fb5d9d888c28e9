/*
 * One role per file name in a project: a file is an app version's, a
 * workunit's input, or a result's output, never two of these. A reply that
 * breaks this is refused whole, before anything of it is stored.
 *
 * Why: files live in projects/<url>/ under the names the reply gives them.
 * An output named like an app file was written over the verified app by the
 * task (or its copy-back) and then run; an input named like an app file
 * would be fetched from an unsigned URL into the app's place; a file both
 * input and output lets one job's unsigned input become another's
 * "verified" result. The check covers the reply and what the client already
 * holds for the project, so two replies cannot do in turn what one cannot.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/proto.h"
#include "volsched/strset.h"

enum role { ROLE_APP = 1, ROLE_INPUT, ROLE_OUTPUT };

static const char *const role_name[] = {"", "an app version's file", "a workunit's input",
                                        "a result's output"};

struct use {
    const char *name;
    int role;
    const char *owner; /* the app version, workunit or result that names it */
};

struct roles {
    struct use *uses;
    size_t n, cap;
    struct vs_strset set;
    char *why;
    size_t why_size;
    bool strict; /* false while the state's own files are added */
};

static const char *use_key(const void *ctx, size_t i)
{
    return ((const struct roles *)ctx)->uses[i].name;
}

/* False (with why written) when name already has another role. */
static bool add(struct roles *rs, const char *name, int role, const char *owner)
{
    if (!name)
        return true;
    size_t k = vs_strset_find(&rs->set, name, use_key, rs);
    if (k != SIZE_MAX) {
        const struct use *u = &rs->uses[k];
        /* a state saved before this rule may break it: its first role stands */
        if (u->role == role || !rs->strict)
            return true;
        snprintf(rs->why, rs->why_size, "file %.200s is %s (%.100s) and %s (%.100s)", name,
                 role_name[u->role], u->owner, role_name[role], owner ? owner : "");
        return false;
    }
    if (rs->n == rs->cap) {
        rs->cap = rs->cap ? 2 * rs->cap : 64;
        rs->uses = vs_xrealloc(rs->uses, rs->cap * sizeof(rs->uses[0]));
    }
    rs->uses[rs->n] = (struct use){name, role, owner ? owner : ""};
    vs_strset_add(&rs->set, rs->n++, use_key, rs);
    return true;
}

static bool add_cl(struct roles *rs, const struct cl_fref *f, size_t n, int role, const char *owner)
{
    for (size_t i = 0; i < n; i++)
        if (!add(rs, f[i].file_name, role, owner))
            return false;
    return true;
}

static bool add_proto(struct roles *rs, const struct vs_proto_file_ref *f, size_t n, int role,
                      const char *owner)
{
    for (size_t i = 0; i < n; i++)
        if (!add(rs, f[i].file_name, role, owner))
            return false;
    return true;
}

static void state_roles(struct roles *rs, const struct vs_client *c, size_t p)
{
    for (size_t i = 0; i < c->n_avs; i++)
        if (c->avs[i].project == p)
            (void)add_cl(rs, c->avs[i].frefs, c->avs[i].n_frefs, ROLE_APP, c->avs[i].app_name);
    for (size_t i = 0; i < c->n_wus; i++)
        if (c->wus[i].project == p)
            (void)add_cl(rs, c->wus[i].frefs, c->wus[i].n_frefs, ROLE_INPUT, c->wus[i].name);
    for (size_t i = 0; i < c->n_results; i++)
        if (c->results[i].project == p)
            (void)add_cl(rs, c->results[i].frefs, c->results[i].n_frefs, ROLE_OUTPUT,
                         c->results[i].name);
}

static bool reply_roles(struct roles *rs, const struct vs_proto_reply *y)
{
    for (size_t i = 0; i < y->n_app_versions; i++)
        if (!add_proto(rs, y->app_versions[i].file_refs, y->app_versions[i].n_file_refs, ROLE_APP,
                       y->app_versions[i].app_name))
            return false;
    for (size_t i = 0; i < y->n_workunits; i++)
        if (!add_proto(rs, y->workunits[i].file_refs, y->workunits[i].n_file_refs, ROLE_INPUT,
                       y->workunits[i].name))
            return false;
    for (size_t i = 0; i < y->n_results; i++)
        if (!add_proto(rs, y->results[i].file_refs, y->results[i].n_file_refs, ROLE_OUTPUT,
                       y->results[i].name))
            return false;
    return true;
}

bool vs_client_file_roles_ok(const struct vs_client *c, size_t p, const struct vs_proto_reply *y,
                             char *why, size_t why_size)
{
    struct roles rs = {.why = why, .why_size = why_size};
    (void)state_roles(&rs, c, p);
    rs.strict = true;
    bool ok = reply_roles(&rs, y);
    vs_strset_cleanup(&rs.set);
    vs_free(rs.uses);
    return ok;
}

bool vs_client_file_is_app_or_input(const struct vs_client *c, size_t p, const char *name)
{
    for (size_t i = 0; i < c->n_avs; i++)
        for (size_t j = 0; c->avs[i].project == p && j < c->avs[i].n_frefs; j++)
            if (strcmp(c->avs[i].frefs[j].file_name, name) == 0)
                return true;
    for (size_t i = 0; i < c->n_wus; i++)
        for (size_t j = 0; c->wus[i].project == p && j < c->wus[i].n_frefs; j++)
            if (strcmp(c->wus[i].frefs[j].file_name, name) == 0)
                return true;
    return false;
}

/* The names the client itself writes in a slot (proc.c, task.c). */
static const char *const slot_own[] = {
    "init_data.xml",        "boinc_mmap_file",      "stderr.txt",    "boinc_finish_called",
    "boinc_temporary_exit", "boinc_task_state.xml", "trickle_up.xml"};

static const char *open_name(const struct cl_fref *f)
{
    return f->open_name ? f->open_name : f->file_name;
}

bool vs_client_slot_names_ok(const struct cl_app_version *av, const struct cl_wu *w,
                             const struct cl_result *r, char *why, size_t why_size)
{
    const struct cl_fref *lists[3] = {av->frefs, w->frefs, r->frefs};
    size_t ns[3] = {av->n_frefs, w->n_frefs, r->n_frefs};
    /* at most 3 x VS_CLIENT_MAX_FREFS names: pairs are cheap */
    for (int a = 0; a < 3; a++)
        for (size_t i = 0; i < ns[a]; i++) {
            const char *n = open_name(&lists[a][i]);
            for (size_t k = 0; k < sizeof(slot_own) / sizeof(slot_own[0]); k++)
                if (strcmp(n, slot_own[k]) == 0) {
                    snprintf(why, why_size, "file %.200s would be opened as the client's own %s",
                             lists[a][i].file_name, n);
                    return false;
                }
            for (int b = a; b < 3; b++)
                for (size_t j = b == a ? i + 1 : 0; j < ns[b]; j++)
                    if (strcmp(n, open_name(&lists[b][j])) == 0) {
                        snprintf(why, why_size,
                                 "files %.200s and %.200s share the open name %.200s",
                                 lists[a][i].file_name, lists[b][j].file_name, n);
                        return false;
                    }
        }
    return true;
}
