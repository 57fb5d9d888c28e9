/*
 * Per-project caps on what a scheduler reply may add (docs/client.md,
 * "Limits"). The client holds at most VS_CLIENT_MAX_RESULTS results,
 * VS_CLIENT_MAX_WUS workunits and VS_CLIENT_MAX_FILES files in all, and
 * the attached projects share each total equally: one project may hold
 * total / n_projects. A project that filled the client before another was
 * attached keeps what it has but gets nothing new until it is under its
 * share again, so the totals can be passed, but only by the floor every
 * project keeps whatever the others hold (total / VS_CLIENT_MAX_PROJECTS):
 * at most twice each total in all. Apps and app versions have a fixed cap
 * per project.
 *
 * What a reply adds is decided before anything of it is merged
 * (vs_client_admit): a new result is taken with its new workunit and the
 * new files they name, all or nothing; a workunit no kept result uses and
 * a file no kept item names are not taken at all (so never downloaded).
 * A refused result is simply not kept: the next scheduler request does not
 * list it among <other_results>, which is how a BOINC server (volsched
 * serve's resend_lost_results) learns that the client does not have it.
 */
#include <stdio.h>
#include <string.h>

#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/proto.h"
#include "volsched/strset.h"

static const size_t totals[CL_NKINDS] = {VS_CLIENT_MAX_RESULTS, VS_CLIENT_MAX_WUS,
                                         VS_CLIENT_MAX_FILES};
static const char *const kind_names[CL_NKINDS] = {"tasks", "workunits", "files"};

size_t vs_client_cap(const struct vs_client *c, enum cl_kind k)
{
    return totals[k] / (c->n_projects > 0 ? c->n_projects : 1);
}

bool vs_client_cap_room(const struct vs_client *c, enum cl_kind k, size_t have, size_t total)
{
    return have < vs_client_cap(c, k) &&
           (total < totals[k] || have < totals[k] / VS_CLIENT_MAX_PROJECTS);
}

/* Room for `extra` more at once (0 always fits). */
static bool fits(const struct vs_client *c, enum cl_kind k, size_t have, size_t total, size_t extra)
{
    return extra == 0 || vs_client_cap_room(c, k, have + extra - 1, total + extra - 1);
}

bool vs_client_results_full(const struct vs_client *c, size_t have)
{
    return !vs_client_cap_room(c, CL_RESULTS, have, c->n_results);
}

/* ---- the reply's names, for lookups by name (borrowed from the reply) ---- */

static const char *wu_key(const void *ctx, size_t i)
{
    return ((const struct vs_proto_reply *)ctx)->workunits[i].name;
}

static const char *fi_key(const void *ctx, size_t i)
{
    return ((const struct vs_proto_reply *)ctx)->file_infos[i].name;
}

static const char *app_key(const void *ctx, size_t i)
{
    return ((const struct vs_proto_reply *)ctx)->apps[i].name;
}

static const char *result_key(const void *ctx, size_t i)
{
    return ((const struct vs_proto_reply *)ctx)->results[i].name;
}

/* A set of reply items by name, the first of each name. */
static void index_reply(struct vs_strset *ss, size_t n, vs_strset_key_fn key,
                        const struct vs_proto_reply *y)
{
    for (size_t i = 0; i < n; i++)
        if (key(y, i) && vs_strset_find(ss, key(y, i), key, y) == SIZE_MAX)
            vs_strset_add(ss, i, key, y);
}

struct plan {
    struct vs_client *c;
    size_t p;
    const struct vs_proto_reply *y;
    struct vs_strset fis, wus;
    size_t have[CL_NKINDS], total[CL_NKINDS];
    size_t refused[CL_NKINDS];
    bool total_hit; /* a refusal came from the client's total, not the share */
    struct cl_admit *out;
    size_t *need; /* scratch: file_info indexes one item needs */
    size_t n_need;
};

/* Adds the reply files that refs name and that are neither held nor taken
 * yet to pl->need (once each). A name the reply does not describe is left
 * for the merge (its tasks fail: "an input file is not described"). */
static void need_files(struct plan *pl, const struct vs_proto_file_ref *refs, size_t n)
{
    for (size_t i = 0; i < n && i < VS_CLIENT_MAX_FREFS; i++) {
        const char *name = refs[i].file_name;
        if (!name || vs_client_find_file(pl->c, pl->p, name) >= 0)
            continue;
        size_t fi = vs_strset_find(&pl->fis, name, fi_key, pl->y);
        if (fi == SIZE_MAX || pl->out->file[fi])
            continue;
        bool dup = false;
        for (size_t j = 0; j < pl->n_need && !dup; j++)
            dup = pl->need[j] == fi;
        if (!dup)
            pl->need[pl->n_need++] = fi;
    }
}

static bool room_for(struct plan *pl, enum cl_kind k, size_t extra)
{
    if (fits(pl->c, k, pl->have[k], pl->total[k], extra))
        return true;
    pl->refused[k]++;
    if (pl->have[k] + extra <= vs_client_cap(pl->c, k))
        pl->total_hit = true;
    return false;
}

static void take_files(struct plan *pl)
{
    for (size_t j = 0; j < pl->n_need; j++)
        pl->out->file[pl->need[j]] = true;
    pl->have[CL_FILES] += pl->n_need;
    pl->total[CL_FILES] += pl->n_need;
}

static void admit_avs(struct plan *pl)
{
    const struct vs_proto_reply *y = pl->y;
    size_t n_avs = 0;
    for (size_t i = 0; i < pl->c->n_avs; i++)
        n_avs += pl->c->avs[i].project == pl->p;
    for (size_t i = 0; i < y->n_app_versions; i++) {
        const struct vs_proto_app_version *v = &y->app_versions[i];
        if (!v->app_name ||
            vs_client_find_av(pl->c, pl->p, v->app_name, v->version_num, v->plan_class) >= 0)
            continue;
        if (n_avs >= VS_CLIENT_MAX_AVS) {
            vs_client_msg(pl->c, (long)pl->p, 3,
                          "Refused app version %s %d: this project already has the most app "
                          "versions a project may have on this computer (%d)",
                          v->app_name, v->version_num, VS_CLIENT_MAX_AVS);
            continue;
        }
        pl->n_need = 0;
        need_files(pl, v->file_refs, v->n_file_refs);
        if (!room_for(pl, CL_FILES, pl->n_need))
            continue;
        take_files(pl);
        pl->out->av[i] = true;
        n_avs++;
    }
}

static void admit_apps(struct plan *pl)
{
    const struct vs_proto_reply *y = pl->y;
    size_t n_apps = 0;
    for (size_t i = 0; i < pl->c->n_apps; i++)
        n_apps += pl->c->apps[i].project == pl->p;
    struct vs_strset seen = {0};
    for (size_t i = 0; i < y->n_apps; i++) {
        const char *name = y->apps[i].name;
        if (!name || vs_client_find_app(pl->c, pl->p, name) >= 0 ||
            vs_strset_find(&seen, name, app_key, y) != SIZE_MAX)
            continue;
        if (n_apps >= VS_CLIENT_MAX_APPS) {
            vs_client_msg(pl->c, (long)pl->p, 3,
                          "Refused app %s: this project already has the most apps a project "
                          "may have on this computer (%d)",
                          name, VS_CLIENT_MAX_APPS);
            continue;
        }
        vs_strset_add(&seen, i, app_key, y);
        pl->out->app[i] = true;
        n_apps++;
    }
    vs_strset_cleanup(&seen);
}

/* Each new result with its new workunit and files: all or nothing. */
static size_t admit_results(struct plan *pl, size_t *out_new)
{
    const struct vs_proto_reply *y = pl->y;
    struct vs_strset seen = {0};
    size_t taken = 0;
    *out_new = 0;
    for (size_t i = 0; i < y->n_results; i++) {
        const struct vs_proto_result *s = &y->results[i];
        if (!s->name || !s->wu_name || vs_client_find_result(pl->c, pl->p, s->name) >= 0 ||
            vs_strset_find(&seen, s->name, result_key, y) != SIZE_MAX)
            continue;
        vs_strset_add(&seen, i, result_key, y);
        (*out_new)++;
        size_t w = SIZE_MAX;
        if (vs_client_find_wu(pl->c, pl->p, s->wu_name) < 0) {
            w = vs_strset_find(&pl->wus, s->wu_name, wu_key, y);
            if (w == SIZE_MAX) {
                vs_client_msg(pl->c, (long)pl->p, 3,
                              "Result %s names workunit %s, which the reply lacks", s->name,
                              s->wu_name);
                continue;
            }
        }
        bool new_wu = w != SIZE_MAX && !pl->out->wu[w];
        pl->n_need = 0;
        if (new_wu)
            need_files(pl, y->workunits[w].file_refs, y->workunits[w].n_file_refs);
        need_files(pl, s->file_refs, s->n_file_refs);
        if (!room_for(pl, CL_RESULTS, 1) || !room_for(pl, CL_WUS, new_wu ? 1 : 0) ||
            !room_for(pl, CL_FILES, pl->n_need))
            continue;
        take_files(pl);
        if (new_wu) {
            pl->out->wu[w] = true;
            pl->have[CL_WUS]++;
            pl->total[CL_WUS]++;
        }
        pl->out->result[i] = true;
        pl->have[CL_RESULTS]++;
        pl->total[CL_RESULTS]++;
        taken++;
    }
    vs_strset_cleanup(&seen);
    return taken;
}

static void mark_named(const struct plan *pl, const struct vs_proto_file_ref *refs, size_t n,
                       bool *named)
{
    for (size_t j = 0; j < n; j++) {
        const char *name = refs[j].file_name;
        size_t fi = name ? vs_strset_find(&pl->fis, name, fi_key, pl->y) : SIZE_MAX;
        if (fi != SIZE_MAX)
            named[fi] = true;
    }
}

/* Says how many of the reply's workunits no result of it names and how
 * many of its files no item of it names: neither is kept (so those files
 * are never downloaded). */
static void report_unused(struct plan *pl)
{
    const struct vs_proto_reply *y = pl->y;
    bool *named_wu = vs_xcalloc(y->n_workunits + 1, sizeof(*named_wu));
    bool *named_fi = vs_xcalloc(y->n_file_infos + 1, sizeof(*named_fi));
    for (size_t i = 0; i < y->n_results; i++) {
        const struct vs_proto_result *s = &y->results[i];
        size_t w = s->wu_name ? vs_strset_find(&pl->wus, s->wu_name, wu_key, y) : SIZE_MAX;
        if (w != SIZE_MAX)
            named_wu[w] = true;
    }
    for (size_t i = 0; i < y->n_app_versions; i++)
        mark_named(pl, y->app_versions[i].file_refs, y->app_versions[i].n_file_refs, named_fi);
    for (size_t i = 0; i < y->n_workunits; i++)
        if (named_wu[i])
            mark_named(pl, y->workunits[i].file_refs, y->workunits[i].n_file_refs, named_fi);
    for (size_t i = 0; i < y->n_results; i++)
        mark_named(pl, y->results[i].file_refs, y->results[i].n_file_refs, named_fi);
    size_t uw = 0, uf = 0;
    for (size_t i = 0; i < y->n_workunits; i++)
        uw += !named_wu[i] && !pl->out->wu[i] && y->workunits[i].name &&
              vs_strset_find(&pl->wus, y->workunits[i].name, wu_key, y) == i &&
              vs_client_find_wu(pl->c, pl->p, y->workunits[i].name) < 0;
    for (size_t i = 0; i < y->n_file_infos; i++)
        uf += !named_fi[i] && !pl->out->file[i] && y->file_infos[i].name &&
              vs_strset_find(&pl->fis, y->file_infos[i].name, fi_key, y) == i;
    if (uw || uf)
        vs_client_msg(pl->c, (long)pl->p, 2,
                      "Ignored %zu workunits no task of the reply names and %zu files nothing "
                      "names: not kept, and files nothing uses are not downloaded",
                      uw, uf);
    vs_free(named_wu);
    vs_free(named_fi);
}

static void count(struct plan *pl)
{
    const struct vs_client *c = pl->c;
    pl->total[CL_RESULTS] = c->n_results;
    pl->total[CL_WUS] = c->n_wus;
    pl->total[CL_FILES] = c->n_files;
    for (size_t i = 0; i < c->n_results; i++)
        pl->have[CL_RESULTS] += c->results[i].project == pl->p;
    for (size_t i = 0; i < c->n_wus; i++)
        pl->have[CL_WUS] += c->wus[i].project == pl->p;
    for (size_t i = 0; i < c->n_files; i++)
        pl->have[CL_FILES] += c->files[i].project == pl->p;
}

void vs_client_admit(struct vs_client *c, size_t p, const struct vs_proto_reply *y,
                     struct vs_arena *a, struct cl_admit *out)
{
    out->app = vs_arena_alloc(a, y->n_apps + 1);
    out->av = vs_arena_alloc(a, y->n_app_versions + 1);
    out->wu = vs_arena_alloc(a, y->n_workunits + 1);
    out->result = vs_arena_alloc(a, y->n_results + 1);
    out->file = vs_arena_alloc(a, y->n_file_infos + 1);
    struct plan pl;
    memset(&pl, 0, sizeof(pl));
    pl.c = c;
    pl.p = p;
    pl.y = y;
    pl.out = out;
    /* at most three lists of VS_CLIENT_MAX_FREFS names per item */
    pl.need = vs_xcalloc(3 * VS_CLIENT_MAX_FREFS, sizeof(*pl.need));
    index_reply(&pl.fis, y->n_file_infos, fi_key, y);
    index_reply(&pl.wus, y->n_workunits, wu_key, y);
    count(&pl);

    admit_apps(&pl);
    admit_avs(&pl);
    size_t n_new = 0;
    size_t taken = admit_results(&pl, &n_new);

    for (size_t i = 0; i < y->n_file_infos; i++)
        if (!out->file[i] && y->file_infos[i].name &&
            vs_client_find_file(c, p, y->file_infos[i].name) >= 0)
            out->file[i] = true; /* held: updated (URLs, signature) */
    size_t refused = n_new - taken;
    if (refused > 0 && (pl.refused[CL_RESULTS] || pl.refused[CL_WUS] || pl.refused[CL_FILES])) {
        enum cl_kind k = pl.refused[CL_RESULTS] ? CL_RESULTS
                         : pl.refused[CL_WUS]   ? CL_WUS
                                                : CL_FILES;
        if (pl.total_hit)
            vs_client_msg(c, (long)p, 2,
                          "Refused %zu of %zu new tasks: the client holds its limit of %zu %s "
                          "for all projects together (this project: %zu). They are not kept, "
                          "so the next request tells the server they are not here",
                          refused, n_new, totals[k], kind_names[k], pl.have[k]);
        else
            vs_client_msg(c, (long)p, 2,
                          "Refused %zu of %zu new tasks: this project is at its limit of %zu %s "
                          "on this computer (the client's %zu shared by %zu projects). They "
                          "are not kept, so the next request tells the server they are not here",
                          refused, n_new, vs_client_cap(c, k), kind_names[k], totals[k],
                          c->n_projects);
    }
    report_unused(&pl);
    vs_free(pl.need);
    vs_strset_cleanup(&pl.fis);
    vs_strset_cleanup(&pl.wus);
}
