/*
 * The scheduler's read-only catalog (apps, app versions and their reply
 * pieces, built once per reload and swapped under cat_lock) and the job
 * cache's hooks that turn a job's stored XML into the pieces of a reply
 * (run in the feeder, once per cached job, never per RPC).
 */
#include "server/sched_int.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "server/cache.h"
#include "volsched/alloc.h"
#include "volsched/locality.h"
#include "volsched/log.h"
#include "volsched/proto.h"
#include "volsched/str.h"

/* ------------------------------------------------------------------------ */
/* Catalog                                                                   */
/* ------------------------------------------------------------------------ */

void vs_sched__snap_free(struct catalog_snap *c)
{
    if (!c)
        return;
    vs_catalog_cleanup(&c->cat);
    vs_arena_cleanup(&c->arena);
    vs_free(c->avs);
    vs_free(c);
}

const struct vs_app *vs_sched__find_app(const struct vs_catalog *cat, int64_t id)
{
    for (size_t i = 0; i < cat->napps; i++)
        if (cat->apps[i].id == id)
            return &cat->apps[i];
    return NULL;
}

/* Builds the reply pieces of every app version once: file_infos with URLs
 * and signatures, file_refs, the app element. */
static int snap_prepare(struct vs_sched *s, struct catalog_snap *c)
{
    c->avs = vs_xcalloc(c->cat.napp_versions ? c->cat.napp_versions : 1, sizeof(*c->avs));
    for (size_t i = 0; i < c->cat.napp_versions; i++) {
        const struct vs_app_version *av = &c->cat.app_versions[i];
        const struct vs_app *app = vs_sched__find_app(&c->cat, av->appid);
        if (!app || av->deprecated || app->deprecated)
            continue;
        struct prep_av *p = &c->avs[c->navs];
        p->av = av;
        p->app = app;
        p->papp.name = app->name;
        p->papp.user_friendly_name = app->user_friendly_name[0] ? app->user_friendly_name : NULL;
        p->papp.non_cpu_intensive = app->non_cpu_intensive != 0;
        p->papp.fraction_done_exact = app->fraction_done_exact != 0;
        p->fis = vs_arena_alloc(&c->arena, (av->nfiles ? av->nfiles : 1) * sizeof(*p->fis));
        struct vs_proto_file_ref *refs =
            vs_arena_alloc(&c->arena, (av->nfiles ? av->nfiles : 1) * sizeof(*refs));
        bool has_main = false;
        for (size_t f = 0; f < av->nfiles; f++) {
            const struct vs_app_version_file *af = &av->files[f];
            struct vs_proto_file_info *fi = &p->fis[f];
            fi->name = af->name;
            fi->urls = vs_arena_alloc(&c->arena, sizeof(*fi->urls));
            size_t ul = strlen(s->cfg.download_url) + strlen(af->path) + 2;
            char *url = vs_arena_alloc(&c->arena, ul);
            snprintf(url, ul, "%s/%s", s->cfg.download_url, af->path);
            fi->urls[0].kind = VS_PROTO_URL;
            fi->urls[0].url = url;
            fi->n_urls = 1;
            fi->nbytes = af->nbytes;
            fi->md5_cksum = af->md5_cksum[0] ? af->md5_cksum : NULL;
            fi->executable = af->executable || af->main_program;
            fi->file_signature = af->file_signature;
            refs[f].file_name = af->name;
            refs[f].open_name = af->open_name[0] ? af->open_name : NULL;
            refs[f].main_program = af->main_program != 0;
            refs[f].copy_file = af->copy_file != 0;
            has_main |= af->main_program != 0;
            if (!af->file_signature)
                VS_LOG(s->log, VS_LOG_WARN,
                       "app version %s %d %s: file %s is not signed; clients will refuse it",
                       av->app_name, av->version_num, av->platform_name, af->name);
        }
        if (!has_main) {
            VS_LOG(s->log, VS_LOG_WARN, "app version %s %d %s has no main program; not sent",
                   av->app_name, av->version_num, av->platform_name);
            continue;
        }
        p->nfis = av->nfiles;
        p->pav.app_name = av->app_name;
        p->pav.version_num = av->version_num;
        p->pav.platform = av->platform_name;
        p->pav.plan_class = av->plan_class[0] ? av->plan_class : NULL;
        p->pav.api_version = av->api_version[0] ? av->api_version : NULL;
        p->pav.avg_ncpus = av->avg_ncpus > 0 ? av->avg_ncpus : 1.0;
        p->pav.cmdline = av->cmdline[0] ? av->cmdline : NULL;
        p->pav.file_refs = refs;
        p->pav.n_file_refs = av->nfiles;
        c->navs++;
    }
    return 0;
}

int vs_sched__load_catalog(struct vs_sched *s, struct vs_store *st, struct catalog_snap **out)
{
    struct catalog_snap *c = VS_NEW(struct catalog_snap);
    vs_arena_init(&c->arena, 16 * 1024);
    int rc = vs_store_catalog_load(st, &c->cat);
    if (rc == 0)
        rc = snap_prepare(s, c);
    if (rc == 0)
        vs_send_catalog(s, c);
    if (rc != 0) {
        vs_sched__snap_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int vs_sched_reload_catalog(struct vs_sched *s)
{
    struct catalog_snap *c = NULL;
    pthread_mutex_lock(&s->feed_mu);
    int rc = vs_sched__load_catalog(s, s->feed_store, &c);
    pthread_mutex_unlock(&s->feed_mu);
    if (rc != 0)
        return rc;
    pthread_rwlock_wrlock(&s->cat_lock);
    struct catalog_snap *old = s->cat;
    s->cat = c;
    pthread_rwlock_unlock(&s->cat_lock);
    vs_sched__snap_free(old);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Job preparation (runs in the feeder, once per cached job)                 */
/* ------------------------------------------------------------------------ */

/* Parses a stored template document (a sequence of <file_info>s and one
 * <workunit> or <result>): in one pass when it can, else with the reply
 * parser (vs_proto_job_doc_parse_fast()). doc may be NULL. */
static int parse_doc(struct vs_arena *a, const char *doc, struct vs_proto_reply *out,
                     struct vs_proto_error *err)
{
    return vs_proto_job_doc_parse_fast(doc, doc ? strlen(doc) : 0, a, out, err);
}

/* The feeder's filter with <locality_scheduling/>: jobs of full-locality
 * apps are sent by file (h_locality.c), never from the cache. */
bool vs_sched__keep_job(void *ctx, const struct vs_job *job)
{
    struct vs_sched *s = ctx;
    pthread_rwlock_rdlock(&s->cat_lock);
    const struct vs_app *app = vs_sched__find_app(&s->cat->cat, job->wu.appid);
    bool full = app && app->locality_scheduling == VS_LOC_APP_FULL;
    pthread_rwlock_unlock(&s->cat_lock);
    return !full;
}

void vs_sched__unprep_job(void *ctx, void *prep)
{
    (void)ctx;
    struct prep_job *pj = prep;
    vs_arena_cleanup(&pj->arena);
    vs_free(pj);
}

int vs_sched__prep_job(void *ctx, struct vs_cache_job *cj)
{
    struct vs_sched *s = ctx;
    const struct vs_job *j = &cj->job;
    struct prep_job *pj = VS_NEW(struct prep_job);
    vs_arena_init(&pj->arena, 4096);
    struct vs_proto_reply wr, rr;
    struct vs_proto_error err = {0};
    int rc = parse_doc(&pj->arena, j->wu.xml_doc, &wr, &err);
    if (rc == 0 && wr.n_workunits > 1)
        rc = VS_EPARSE;
    if (rc != 0) {
        VS_LOG(s->log, VS_LOG_ERROR, "workunit %s: bad stored xml_doc (%s); not sent", j->wu.name,
               err.msg[0] ? err.msg : vs_strerror(rc));
        goto fail;
    }
    rc = parse_doc(&pj->arena, j->result.xml_doc_in, &rr, &err);
    if (rc == 0 && rr.n_results > 1)
        rc = VS_EPARSE;
    if (rc != 0) {
        VS_LOG(s->log, VS_LOG_ERROR, "result %s: bad stored xml_doc_in (%s); not sent",
               j->result.name, err.msg[0] ? err.msg : vs_strerror(rc));
        goto fail;
    }
    pj->in_fis = wr.file_infos;
    pj->n_in = wr.n_file_infos;
    if (wr.n_workunits == 1)
        pj->wu = wr.workunits[0];
    pj->wu.name = vs_arena_strndup(&pj->arena, j->wu.name, strlen(j->wu.name));
    pj->wu.rsc_fpops_est = j->wu.rsc_fpops_est;
    pj->wu.rsc_fpops_bound = j->wu.rsc_fpops_bound;
    pj->wu.rsc_memory_bound = j->wu.rsc_memory_bound;
    pj->wu.rsc_disk_bound = j->wu.rsc_disk_bound;
    pj->out_fis = rr.file_infos;
    pj->n_out = rr.n_file_infos;
    if (rr.n_results == 1)
        pj->res = rr.results[0];
    pj->res.name = vs_arena_strndup(&pj->arena, j->result.name, strlen(j->result.name));
    pj->res.wu_name = pj->wu.name;
    cj->prep = pj;
    return 0;
fail:
    vs_sched__unprep_job(s, pj);
    return rc;
}
