/*
 * The client's in-memory state: projects, apps, files, app versions,
 * workunits and results (BOINC's CLIENT_STATE, as plain arrays). Items refer
 * to their project by index and to each other by name, as the state file
 * does, so dropping an item never leaves a dangling pointer.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/fs.h"

char *vs_client_strdup(const char *s)
{
    return s ? vs_xstrdup(s) : NULL;
}

void vs_client_setstr(char **dst, const char *s)
{
    char *n = vs_client_strdup(s);
    vs_free(*dst);
    *dst = n;
}

void vs_client_init(struct vs_client *c, const char *dir)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->dir, sizeof(c->dir), "%s", dir);
    c->lock_fd = -1;
    c->gui_fd = -1;
    c->policy = VS_CPOLICY_DEFAULT;
    c->run_mode = c->run_mode_perm = RUN_MODE_AUTO;
    c->network_mode = RUN_MODE_AUTO;
    c->pid = getpid();
    c->gui_port = 31416;
    vs_log_init(&c->log, VS_LOG_INFO, NULL, NULL);
    vs_client_prefs_default(&c->prefs);
    c->ts.on_frac = c->ts.active_frac = c->ts.gpu_active_frac = 1;
    c->ts.cpu_and_network_available_frac = 1;
    c->ts.cpu_efficiency = 1;
    c->ts.connected_frac = -1;
    c->ts.first = true;
    c->host.p_fpops = c->host.p_iops = c->host.p_membw = 1e9;
    c->host.p_ncpus = 1;
    c->msgs = vs_xcalloc(VS_CLIENT_MSG_KEEP, sizeof(struct cl_msg));
    vs_cpolicy_ws_init(&c->ws);
}

void vs_client_fref_free(struct cl_fref *f)
{
    vs_free(f->file_name);
    vs_free(f->open_name);
    memset(f, 0, sizeof(*f));
}

static void project_free(struct cl_project *p)
{
    vs_free(p->master_url);
    vs_free(p->authenticator);
    vs_free(p->project_name);
    vs_free(p->user_name);
    vs_free(p->team_name);
    vs_free(p->cross_project_id);
    vs_free(p->host_venue);
    for (size_t i = 0; i < p->n_scheduler_urls; i++)
        vs_free(p->scheduler_urls[i]);
    vs_free(p->code_sign_key);
    vs_free(p->project_prefs);
    for (size_t i = 0; i < p->n_trickle_downs; i++)
        vs_free(p->trickle_downs[i]);
    vs_free(p->trickle_downs);
    vs_free(p->stats);
}

static void file_free(struct cl_file *f)
{
    vs_free(f->name);
    vs_free(f->file_signature);
    vs_free(f->xml_signature);
    vs_free(f->error);
    for (size_t i = 0; i < f->n_urls; i++)
        vs_free(f->urls[i]);
}

static void av_free(struct cl_app_version *a)
{
    vs_free(a->app_name);
    vs_free(a->platform);
    vs_free(a->plan_class);
    vs_free(a->api_version);
    vs_free(a->cmdline);
    for (size_t i = 0; i < a->n_frefs; i++)
        vs_client_fref_free(&a->frefs[i]);
}

static void wu_free(struct cl_wu *w)
{
    vs_free(w->name);
    vs_free(w->app_name);
    vs_free(w->command_line);
    for (size_t i = 0; i < w->n_frefs; i++)
        vs_client_fref_free(&w->frefs[i]);
}

static void result_free(struct cl_result *r)
{
    vs_free(r->name);
    vs_free(r->wu_name);
    vs_free(r->platform);
    vs_free(r->plan_class);
    vs_free(r->stderr_out);
    for (size_t i = 0; i < r->n_frefs; i++)
        vs_client_fref_free(&r->frefs[i]);
}

void vs_client_cleanup(struct vs_client *c)
{
    vs_client_gui_acct_cleanup(c);
    vs_free(c->xfers);
    c->xfers = NULL;
    for (size_t i = 0; i < c->n_projects; i++)
        project_free(&c->projects[i]);
    for (size_t i = 0; i < c->n_apps; i++)
        vs_free(c->apps[i].name);
    for (size_t i = 0; i < c->n_files; i++)
        file_free(&c->files[i]);
    for (size_t i = 0; i < c->n_avs; i++)
        av_free(&c->avs[i]);
    for (size_t i = 0; i < c->n_wus; i++)
        wu_free(&c->wus[i]);
    for (size_t i = 0; i < c->n_results; i++)
        result_free(&c->results[i]);
    vs_free(c->projects);
    vs_free(c->apps);
    vs_free(c->files);
    vs_free(c->avs);
    vs_free(c->wus);
    vs_free(c->results);
    vs_free(c->global_prefs_xml);
    for (size_t i = 0; i < VS_CLIENT_MSG_KEEP; i++)
        vs_free(c->msgs[i].body);
    vs_free(c->msgs);
    vs_free(c->cprojects);
    vs_free(c->cresults);
    vs_free(c->cmap);
    vs_client_index_cleanup(c);
    vs_cpolicy_ws_cleanup(&c->ws);
    if (c->lock_fd >= 0)
        close(c->lock_fd);
    if (c->logf)
        fclose(c->logf);
    memset(c, 0, sizeof(*c));
    c->lock_fd = c->gui_fd = -1;
}

long vs_client_find_project(const struct vs_client *c, const char *url)
{
    for (size_t i = 0; i < c->n_projects; i++)
        if (strcmp(c->projects[i].master_url, url) == 0)
            return (long)i;
    return -1;
}

long vs_client_find_app(const struct vs_client *c, size_t p, const char *name)
{
    for (size_t i = 0; i < c->n_apps; i++)
        if (c->apps[i].project == p && strcmp(c->apps[i].name, name) == 0)
            return (long)i;
    return -1;
}

static bool streq0(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

long vs_client_find_av(const struct vs_client *c, size_t p, const char *app, int version,
                       const char *plan_class)
{
    for (size_t i = 0; i < c->n_avs; i++) {
        const struct cl_app_version *a = &c->avs[i];
        if (a->project == p && strcmp(a->app_name, app) == 0 && a->version_num == version &&
            streq0(a->plan_class, plan_class))
            return (long)i;
    }
    return -1;
}

#define GROW(arr, n)                                                                               \
    ((arr) = vs_xreallocarray((arr), (n) + 1, sizeof(*(arr))),                                     \
     memset(&(arr)[(n)], 0, sizeof(*(arr))), &(arr)[(n)++])

size_t vs_client_add_project(struct vs_client *c, const char *url, const char *auth)
{
    struct cl_project *p = GROW(c->projects, c->n_projects);
    p->master_url = vs_xstrdup(url);
    p->authenticator = vs_client_strdup(auth);
    p->resource_share = 100;
    p->master_url_fetch_pending = true;
    /* not a user request: the first RPC is due because ever_rpc is false (rpc.c) */
    p->sched_rpc_pending = false;
    return c->n_projects - 1;
}

struct cl_file *vs_client_add_file(struct vs_client *c)
{
    return GROW(c->files, c->n_files);
}

struct cl_app *vs_client_add_app(struct vs_client *c)
{
    return GROW(c->apps, c->n_apps);
}

struct cl_app_version *vs_client_add_av(struct vs_client *c)
{
    struct cl_app_version *a = GROW(c->avs, c->n_avs);
    a->avg_ncpus = 1;
    return a;
}

struct cl_wu *vs_client_add_wu(struct vs_client *c)
{
    return GROW(c->wus, c->n_wus);
}

struct cl_result *vs_client_add_result(struct vs_client *c)
{
    struct cl_result *r = GROW(c->results, c->n_results);
    r->slot = -1;
    r->ctask = VS_CTASK_UNSTARTED;
    return r;
}

/* The hints make these O(1) on a stable state (the policy step looks every
 * result up on each pass); they are only hints, always checked, so arrays
 * reordered by a drop cost one search. They are not part of the state. */
struct cl_app_version *vs_client_result_av(struct vs_client *c, const struct cl_result *r)
{
    struct cl_wu *w = vs_client_result_wu(c, r);
    if (!w)
        return NULL;
    size_t h = r->av_hint;
    if (h < c->n_avs && c->avs[h].project == r->project &&
        c->avs[h].version_num == r->version_num && strcmp(c->avs[h].app_name, w->app_name) == 0 &&
        streq0(c->avs[h].plan_class, r->plan_class))
        return &c->avs[h];
    long a = vs_client_find_av(c, r->project, w->app_name, r->version_num, r->plan_class);
    if (a < 0)
        return NULL;
    ((struct cl_result *)r)->av_hint = (size_t)a;
    return &c->avs[a];
}

struct cl_wu *vs_client_result_wu(struct vs_client *c, const struct cl_result *r)
{
    size_t h = r->wu_hint;
    if (h < c->n_wus && c->wus[h].project == r->project && strcmp(c->wus[h].name, r->wu_name) == 0)
        return &c->wus[h];
    long w = vs_client_find_wu(c, r->project, r->wu_name);
    if (w < 0)
        return NULL;
    ((struct cl_result *)r)->wu_hint = (size_t)w;
    return &c->wus[w];
}

static void file_unlink(struct vs_client *c, const struct cl_file *f)
{
    char dir[VS_CLIENT_PATH_MAX], path[VS_CLIENT_PATH_MAX + 300];
    if (vs_client_project_dir(c, f->project, dir, sizeof(dir)) == 0) {
        snprintf(path, sizeof(path), "%s/%s", dir, f->name);
        unlink(path);
    }
}

static void mark_files(struct vs_client *c, const struct cl_fref *fr, size_t n, size_t p,
                       bool *used)
{
    for (size_t i = 0; i < n; i++) {
        long f = vs_client_find_file(c, p, fr[i].file_name);
        if (f >= 0)
            used[f] = true;
    }
}

/* Mark and sweep: every lookup is done before anything moves, so the
 * indexes are rebuilt once afterwards, and the cost is linear in the state
 * (it was files x items x references, per reported result). */
size_t vs_client_gc(struct vs_client *c, long p)
{
    size_t dropped = 0;
    bool *used = vs_xcalloc(c->n_wus + 1, sizeof(*used));
    for (size_t i = 0; i < c->n_results; i++) {
        const struct cl_result *r = &c->results[i];
        if (p >= 0 && r->project != (size_t)p)
            continue;
        const struct cl_wu *w = vs_client_result_wu(c, r);
        if (w)
            used[w - c->wus] = true;
    }
    size_t k = 0;
    for (size_t i = 0; i < c->n_wus; i++) {
        if (used[i] || (p >= 0 && c->wus[i].project != (size_t)p)) {
            c->wus[k++] = c->wus[i];
            continue;
        }
        wu_free(&c->wus[i]);
        dropped++;
    }
    c->n_wus = k;
    vs_free(used);
    if (dropped)
        vs_client_index_stale(c);

    used = vs_xcalloc(c->n_files + 1, sizeof(*used));
    for (size_t i = 0; i < c->n_avs; i++)
        if (p < 0 || c->avs[i].project == (size_t)p)
            mark_files(c, c->avs[i].frefs, c->avs[i].n_frefs, c->avs[i].project, used);
    for (size_t i = 0; i < c->n_wus; i++)
        if (p < 0 || c->wus[i].project == (size_t)p)
            mark_files(c, c->wus[i].frefs, c->wus[i].n_frefs, c->wus[i].project, used);
    for (size_t i = 0; i < c->n_results; i++)
        if (p < 0 || c->results[i].project == (size_t)p)
            mark_files(c, c->results[i].frefs, c->results[i].n_frefs, c->results[i].project, used);
    size_t files_before = dropped;
    k = 0;
    for (size_t i = 0; i < c->n_files; i++) {
        struct cl_file *f = &c->files[i];
        /* a sticky file is kept once here (locality scheduling's cache),
         * until the server releases it, or its project is over its share */
        const struct cl_project *pr = &c->projects[f->project];
        bool keep = used[i] || (p >= 0 && f->project != (size_t)p) ||
                    (f->sticky && f->status == FS_PRESENT &&
                     !(pr->disk_share > 0 && pr->disk_usage >= pr->disk_share));
        if (keep) {
            c->files[k++] = *f;
            continue;
        }
        file_unlink(c, f);
        file_free(f);
        dropped++;
    }
    c->n_files = k;
    vs_free(used);
    if (dropped > files_before) {
        vs_client_index_stale(c);
        c->disk.walked_at = 0; /* usage changed */
    }
    if (dropped)
        c->dirty = true;
    return dropped;
}

void vs_client_drop_results(struct vs_client *c, const bool *drop)
{
    size_t k = 0;
    for (size_t i = 0; i < c->n_results; i++) {
        if (!drop[i]) {
            c->results[k++] = c->results[i];
            continue;
        }
        if (c->results[i].slot >= 0)
            vs_client_slot_clean(c, c->results[i].slot);
        result_free(&c->results[i]);
    }
    if (k == c->n_results)
        return;
    c->n_results = k;
    vs_client_index_stale(c);
    (void)vs_client_gc(c, -1);
    c->dirty = true;
}

void vs_client_drop_result(struct vs_client *c, size_t r)
{
    bool *drop = vs_xcalloc(c->n_results, sizeof(*drop));
    drop[r] = true;
    vs_client_drop_results(c, drop);
    vs_free(drop);
}

/* Every item of a project after p moves down one index. */
static void renumber(struct vs_client *c, size_t p)
{
    for (size_t i = 0; i < c->n_apps; i++)
        if (c->apps[i].project > p)
            c->apps[i].project--;
    for (size_t i = 0; i < c->n_files; i++)
        if (c->files[i].project > p)
            c->files[i].project--;
    for (size_t i = 0; i < c->n_avs; i++)
        if (c->avs[i].project > p)
            c->avs[i].project--;
    for (size_t i = 0; i < c->n_wus; i++)
        if (c->wus[i].project > p)
            c->wus[i].project--;
    for (size_t i = 0; i < c->n_results; i++)
        if (c->results[i].project > p)
            c->results[i].project--;
}

void vs_client_drop_project(struct vs_client *c, size_t p)
{
    size_t k = 0;
    for (size_t i = 0; i < c->n_results; i++) {
        if (c->results[i].project != p) {
            c->results[k++] = c->results[i];
            continue;
        }
        if (c->results[i].slot >= 0)
            vs_client_slot_clean(c, c->results[i].slot);
        result_free(&c->results[i]);
    }
    c->n_results = k;
    for (size_t i = c->n_wus; i-- > 0;)
        if (c->wus[i].project == p) {
            wu_free(&c->wus[i]);
            c->wus[i] = c->wus[--c->n_wus];
        }
    for (size_t i = c->n_avs; i-- > 0;)
        if (c->avs[i].project == p) {
            av_free(&c->avs[i]);
            c->avs[i] = c->avs[--c->n_avs];
        }
    for (size_t i = c->n_apps; i-- > 0;)
        if (c->apps[i].project == p) {
            vs_free(c->apps[i].name);
            c->apps[i] = c->apps[--c->n_apps];
        }
    for (size_t i = c->n_files; i-- > 0;)
        if (c->files[i].project == p) {
            file_free(&c->files[i]);
            c->files[i] = c->files[--c->n_files];
        }
    char path[VS_CLIENT_PATH_MAX], esc[512];
    if (vs_client_project_dir(c, p, path, sizeof(path)) == 0)
        (void)vs_fs_rm_tree(path);
    (void)vs_client_av_remove_project(c, p);
    vs_client_escape_url(c->projects[p].master_url, esc, sizeof(esc));
    static const char *const per_project[][2] = {
        {"account_", ".xml"}, {"sched_request_", ".xml"}, {"sched_reply_", ".xml"},
        {"master_", ".xml"},  {"job_log_", ".txt"},       {"statistics_", ".xml"}};
    for (size_t i = 0; i < sizeof(per_project) / sizeof(per_project[0]); i++)
        if (vs_client_path(c, path, sizeof(path), "%s%s%s", per_project[i][0], esc,
                           per_project[i][1]) == 0)
            unlink(path);
    project_free(&c->projects[p]);
    memmove(&c->projects[p], &c->projects[p + 1], (c->n_projects - p - 1) * sizeof(c->projects[0]));
    c->n_projects--;
    renumber(c, p);
    vs_client_index_stale(c);
    c->dirty = true;
    c->resched = true;
}

double vs_client_remaining(struct vs_client *c, const struct cl_result *r)
{
    const struct cl_wu *w = vs_client_result_wu(c, r);
    const struct cl_app_version *av = vs_client_result_av(c, r);
    double flops = av && av->flops > 0 ? av->flops : c->host.p_fpops;
    double est = w && flops > 0 ? w->rsc_fpops_est / flops : 3600;
    if (!isfinite(est) || est < 0)
        est = 3600;
    double done = r->current_cpu_time;
    double f = r->fraction_done;
    if (f > 0 && f < 1 && done > 0) {
        /* BOINC's blend: trust the app's fraction done more as it grows */
        double by_frac = done / f - done;
        double by_est = est > done ? est - done : 0;
        double left = f * by_frac + (1 - f) * by_est;
        return left > 0 ? left : 0;
    }
    if (f >= 1)
        return 0;
    return est > done ? est - done : 0;
}

bool vs_client_can_compute(const struct vs_client *c)
{
    return c->run_mode != RUN_MODE_NEVER && !c->quit_requested;
}

int vs_client_ncpus(const struct vs_client *c)
{
    int n = c->host.p_ncpus > 0 ? c->host.p_ncpus : 1;
    if (c->prefs.ncpus > 0)
        n = c->prefs.ncpus;
    if (c->prefs.max_ncpus_pct > 0 && c->prefs.max_ncpus_pct < 100) {
        int m = (int)floor(n * c->prefs.max_ncpus_pct / 100.0);
        n = m < 1 ? 1 : m;
    }
    return n;
}
