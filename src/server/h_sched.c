/*
 * The scheduler request handler. See sched.h for the flow; BOINC's
 * equivalent is sched/handle_request.cpp + sched_send.cpp, whose behaviour
 * (not code) is summarised in ../shared/docs/boinc-server-notes.md 1.3, 2.5
 * and 2.6.
 */
#include "server/sched.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "server/cache.h"
#include "server/commit.h"
#include "server/h_report.h"
#include "store/store_sched.h"
#include "volsched/alloc.h"
#include "volsched/log.h"
#include "volsched/proto.h"
#include "volsched/str.h"

/* BOINC-COMPAT: request_delay values of sched/handle_request.cpp (seconds). */
#define DELAY_MISSING_KEY   3600
#define DELAY_BAD_REQUEST   600
#define DELAY_PLATFORM      86400
#define DELAY_SERVER_ERROR  120
#define MAX_REQ_SECS        (28.0 * 86400.0) /* requests are clamped to 28 days */
#define DEFAULT_MAX_PER_RPC 100
#define DEFAULT_WUS_TO_SEND 10 /* per CPU, BOINC's max_wus_to_send default */
#define MAX_HOST_PLATFORMS  8

/*
 * Every RPC reads its user (by authenticator) and its host (by id). These
 * small direct-mapped caches keep the rows this process read or wrote for
 * CACHE_TTL seconds, so a busy server does not query the store twice per
 * request. The scheduler is the only writer of host rows; a change made by
 * another program (a user's name, say) shows after at most CACHE_TTL.
 */
#define UCACHE_SIZE 4096 /* power of two */
#define HCACHE_SIZE 4096
#define CACHE_TTL   10

struct ucache_ent {
    int64_t expires; /* 0: empty */
    char authenticator[VS_AUTH_MAX];
    int64_t id, teamid, create_time;
    double total_credit, expavg_credit;
    char name[VS_NAME_MAX];
};

struct hcache_ent {
    int64_t expires; /* 0: empty */
    struct vs_host host;
};

/* ---- the catalog: apps and app versions, prepared for replies ---- */

struct prep_av {
    const struct vs_app_version *av; /* in snap->cat */
    const struct vs_app *app;
    struct vs_proto_app papp;
    struct vs_proto_app_version pav;
    struct vs_proto_file_info *fis;
    size_t nfis;
};

struct catalog_snap {
    struct vs_catalog cat;
    struct vs_arena arena;
    struct prep_av *avs;
    size_t navs;
};

/* ---- a cached job, prepared for replies (the cache's prep) ---- */

struct prep_job {
    struct vs_arena arena;
    struct vs_proto_file_info *in_fis;
    size_t n_in;
    struct vs_proto_workunit wu;
    struct vs_proto_file_info *out_fis;
    size_t n_out;
    struct vs_proto_result res;
};

struct vs_sched {
    struct vs_project_config cfg;
    struct vs_log *log;
    struct vs_sched_options opt;
    char *code_sign_key; /* BOINC key text, NULL if the project has none */
    pthread_rwlock_t cat_lock;
    struct catalog_snap *cat;
    struct vs_cache *cache;
    pthread_mutex_t feed_mu;
    struct vs_store *feed_store;
    int64_t last_checkpoint; /* time of the last WAL checkpoint (feed_mu) */
    pthread_mutex_t pool_mu;
    struct vs_store **pool; /* idle read handles */
    size_t npool, cap_pool;
    struct vs_committer *committer;
    /* Read-through caches of the rows every RPC needs (see user_lookup). */
    pthread_mutex_t ucache_mu, hcache_mu;
    struct ucache_ent *ucache; /* UCACHE_SIZE entries */
    struct hcache_ent *hcache; /* HCACHE_SIZE entries */
    _Atomic uint64_t n_rpcs, n_bad, n_sent, n_nowork;
};

/* Copies src into a fixed field, truncating (client strings are capped by
 * the store's field sizes; a long model name is not an error). */
static void set_field(char *dst, size_t size, const char *src)
{
    if (vs_strlcpy(dst, src ? src : "", size) != 0) {
        /* truncated: fine for descriptive host fields */
    }
}

/* ------------------------------------------------------------------------ */
/* Store handles                                                             */
/* ------------------------------------------------------------------------ */

static int pool_get(struct vs_sched *s, struct vs_store **out)
{
    pthread_mutex_lock(&s->pool_mu);
    if (s->npool > 0) {
        *out = s->pool[--s->npool];
        pthread_mutex_unlock(&s->pool_mu);
        return 0;
    }
    pthread_mutex_unlock(&s->pool_mu);
    int rc = vs_store_open(s->cfg.store_url, 0, s->log, out);
    if (rc == 0 && vs_store_sched_tune(*out, false) != 0)
        VS_LOG(s->log, VS_LOG_WARN, "could not tune a store handle (continuing)");
    return rc;
}

static void pool_put(struct vs_sched *s, struct vs_store *st)
{
    pthread_mutex_lock(&s->pool_mu);
    if (s->npool == s->cap_pool) {
        s->cap_pool = s->cap_pool ? s->cap_pool * 2 : 8;
        s->pool = vs_xreallocarray(s->pool, s->cap_pool, sizeof(*s->pool));
    }
    s->pool[s->npool++] = st;
    pthread_mutex_unlock(&s->pool_mu);
}

/* ------------------------------------------------------------------------ */
/* User and host caches                                                      */
/* ------------------------------------------------------------------------ */

static size_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (size_t)h;
}

/* The user with this authenticator (only the fields the scheduler uses are
 * filled from the cache; prefs are not). VS_ENOTFOUND if there is none. */
static int user_lookup(struct vs_sched *s, struct vs_store *st, const char *auth, int64_t now,
                       struct vs_user *out)
{
    struct ucache_ent *e = &s->ucache[hash_str(auth) & (UCACHE_SIZE - 1)];
    pthread_mutex_lock(&s->ucache_mu);
    if (e->expires > now && strcmp(e->authenticator, auth) == 0) {
        memset(out, 0, sizeof(*out));
        out->id = e->id;
        out->teamid = e->teamid;
        out->create_time = e->create_time;
        out->total_credit = e->total_credit;
        out->expavg_credit = e->expavg_credit;
        memcpy(out->name, e->name, sizeof(out->name));
        memcpy(out->authenticator, e->authenticator, sizeof(out->authenticator));
        pthread_mutex_unlock(&s->ucache_mu);
        return 0;
    }
    pthread_mutex_unlock(&s->ucache_mu);
    int rc = vs_store_user_by_auth(st, auth, out);
    if (rc != 0 || strlen(auth) >= VS_AUTH_MAX)
        return rc;
    pthread_mutex_lock(&s->ucache_mu);
    e->expires = now + CACHE_TTL;
    memcpy(e->authenticator, out->authenticator, sizeof(e->authenticator));
    e->id = out->id;
    e->teamid = out->teamid;
    e->create_time = out->create_time;
    e->total_credit = out->total_credit;
    e->expavg_credit = out->expavg_credit;
    memcpy(e->name, out->name, sizeof(e->name));
    pthread_mutex_unlock(&s->ucache_mu);
    return 0;
}

static int host_lookup(struct vs_sched *s, struct vs_store *st, int64_t id, int64_t now,
                       struct vs_host *out)
{
    struct hcache_ent *e = &s->hcache[(size_t)id & (HCACHE_SIZE - 1)];
    pthread_mutex_lock(&s->hcache_mu);
    if (e->expires > now && e->host.id == id) {
        *out = e->host;
        pthread_mutex_unlock(&s->hcache_mu);
        return 0;
    }
    pthread_mutex_unlock(&s->hcache_mu);
    return vs_store_host_get(st, id, out);
}

/* Remembers a host row as just committed (or forgets it: valid false). */
static void host_remember(struct vs_sched *s, const struct vs_host *h, int64_t now, bool valid)
{
    struct hcache_ent *e = &s->hcache[(size_t)h->id & (HCACHE_SIZE - 1)];
    pthread_mutex_lock(&s->hcache_mu);
    if (valid) {
        e->host = *h;
        e->expires = now + CACHE_TTL;
    } else if (e->host.id == h->id) {
        e->expires = 0;
    }
    pthread_mutex_unlock(&s->hcache_mu);
}

/* ------------------------------------------------------------------------ */
/* Catalog                                                                   */
/* ------------------------------------------------------------------------ */

static void snap_free(struct catalog_snap *c)
{
    if (!c)
        return;
    vs_catalog_cleanup(&c->cat);
    vs_arena_cleanup(&c->arena);
    vs_free(c->avs);
    vs_free(c);
}

static const struct vs_app *find_app(const struct vs_catalog *cat, int64_t id)
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
        const struct vs_app *app = find_app(&c->cat, av->appid);
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

static int load_catalog(struct vs_sched *s, struct vs_store *st, struct catalog_snap **out)
{
    struct catalog_snap *c = VS_NEW(struct catalog_snap);
    vs_arena_init(&c->arena, 16 * 1024);
    int rc = vs_store_catalog_load(st, &c->cat);
    if (rc == 0)
        rc = snap_prepare(s, c);
    if (rc != 0) {
        snap_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int vs_sched_reload_catalog(struct vs_sched *s)
{
    struct catalog_snap *c = NULL;
    pthread_mutex_lock(&s->feed_mu);
    int rc = load_catalog(s, s->feed_store, &c);
    pthread_mutex_unlock(&s->feed_mu);
    if (rc != 0)
        return rc;
    pthread_rwlock_wrlock(&s->cat_lock);
    struct catalog_snap *old = s->cat;
    s->cat = c;
    pthread_rwlock_unlock(&s->cat_lock);
    snap_free(old);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Job preparation (runs in the feeder, once per cached job)                 */
/* ------------------------------------------------------------------------ */

/* Parses a stored template document (a sequence of <file_info>s and one
 * <workunit> or <result>) with the protocol's reply parser, by wrapping it in
 * <scheduler_reply>: the stored XML has exactly the reply's shape. */
static int parse_doc(struct vs_arena *a, const char *doc, struct vs_proto_reply *out,
                     struct vs_proto_error *err)
{
    static const char open[] = "<scheduler_reply>\n", close[] = "</scheduler_reply>\n";
    size_t dl = doc ? strlen(doc) : 0;
    size_t n = sizeof(open) - 1 + dl + sizeof(close) - 1;
    char *buf = vs_arena_alloc(a, n + 1);
    memcpy(buf, open, sizeof(open) - 1);
    if (dl)
        memcpy(buf + sizeof(open) - 1, doc, dl);
    memcpy(buf + sizeof(open) - 1 + dl, close, sizeof(close));
    return vs_proto_reply_parse(buf, n, a, out, err);
}

static void unprep_job(void *ctx, void *prep)
{
    (void)ctx;
    struct prep_job *pj = prep;
    vs_arena_cleanup(&pj->arena);
    vs_free(pj);
}

static int prep_job(void *ctx, struct vs_cache_job *cj)
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
    unprep_job(s, pj);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Choosing jobs                                                             */
/* ------------------------------------------------------------------------ */

/* The app version a host gets for an app: chosen once per app per request. */
struct av_choice {
    int64_t appid;
    const struct prep_av *av;                          /* NULL: none (or anonymous) */
    const struct vs_proto_client_app_version *anon_av; /* anonymous platform */
};

enum skip_reason { SKIP_NO_VERSION, SKIP_DEADLINE, SKIP_MEMORY, SKIP_DISK, SKIP_N };

struct pick_ctx {
    const struct vs_sched *s;
    struct vs_arena *arena; /* the request's */
    const struct catalog_snap *cat;
    const struct vs_proto_request *req;
    const char *platforms[MAX_HOST_PLATFORMS];
    size_t nplatforms;
    bool anonymous;
    struct av_choice choices[32];
    size_t nchoices;
    double p_fpops;   /* host speed per CPU */
    double avail;     /* on_frac * active_frac, clamped */
    double secs_left; /* CPU seconds still wanted */
    double inst_left; /* idle CPUs still to fill */
    double mem_bytes; /* RAM the host may use */
    double disk_left; /* disk the host may still use */
    size_t njobs, max_jobs;
    int skipped[SKIP_N];
    /* per taken job, parallel to the take array */
    const struct av_choice **job_av;
    double *job_flops;
    int64_t *job_wuid;
};

static bool platform_ok(const struct pick_ctx *pc, const char *platform)
{
    for (size_t i = 0; i < pc->nplatforms; i++)
        if (strcmp(pc->platforms[i], platform) == 0)
            return true;
    return false;
}

/* BOINC-COMPAT (sched_version.cpp, simplified): the highest version_num of
 * the app for one of the host's platforms, plan class "" only (plan classes
 * need server-side host checks that do not exist yet). */
static const struct av_choice *choose_av(struct pick_ctx *pc, int64_t appid, int want_version)
{
    for (size_t i = 0; i < pc->nchoices; i++)
        if (pc->choices[i].appid == appid)
            return &pc->choices[i];
    struct av_choice ch = {.appid = appid};
    if (pc->anonymous) {
        const struct vs_app *app = find_app(&pc->cat->cat, appid);
        for (size_t i = 0; app && i < pc->req->n_app_versions; i++) {
            const struct vs_proto_client_app_version *cav = &pc->req->app_versions[i];
            if (!cav->app_name || strcmp(cav->app_name, app->name) != 0)
                continue;
            if (want_version && cav->version_num != want_version)
                continue;
            if (!ch.anon_av || cav->version_num > ch.anon_av->version_num)
                ch.anon_av = cav;
        }
    } else {
        for (size_t i = 0; i < pc->cat->navs; i++) {
            const struct prep_av *p = &pc->cat->avs[i];
            if (p->av->appid != appid || p->av->plan_class[0])
                continue;
            if (want_version && p->av->version_num != want_version)
                continue;
            if (!platform_ok(pc, p->av->platform_name))
                continue;
            if (!ch.av || p->av->version_num > ch.av->av->version_num)
                ch.av = p;
        }
    }
    /* Only remember choices made without a version restriction; others
     * live in the request's arena as long as the reply needs them. */
    if (want_version || pc->nchoices == sizeof(pc->choices) / sizeof(pc->choices[0])) {
        struct av_choice *one = vs_arena_alloc(pc->arena, sizeof(*one));
        *one = ch;
        return one;
    }
    pc->choices[pc->nchoices] = ch;
    return &pc->choices[pc->nchoices++];
}

static enum vs_cache_pick pick(void *ctx, const struct vs_cache_job *cj)
{
    struct pick_ctx *pc = ctx;
    if (pc->njobs >= pc->max_jobs)
        return VS_PICK_STOP;
    if (pc->njobs > 0 && pc->secs_left <= 0 && pc->inst_left <= 0)
        return VS_PICK_STOP;
    const struct vs_workunit *wu = &cj->job.wu;
    /* BOINC-COMPAT: never two results of one workunit to one host (a
     * replicated job must be computed by different hosts). */
    for (size_t k = 0; k < pc->njobs; k++)
        if (pc->job_wuid[k] == wu->id)
            return VS_PICK_SKIP;
    const struct av_choice *ch = choose_av(pc, wu->appid, wu->app_version_num);
    double ncpus = 1.0, flops = pc->p_fpops;
    if (ch->av) {
        ncpus = ch->av->pav.avg_ncpus;
        flops = pc->p_fpops * ncpus;
    } else if (ch->anon_av) {
        ncpus = ch->anon_av->avg_ncpus > 0 ? ch->anon_av->avg_ncpus : 1.0;
        flops = ch->anon_av->flops > 0 ? ch->anon_av->flops : pc->p_fpops * ncpus;
    } else {
        pc->skipped[SKIP_NO_VERSION]++;
        return VS_PICK_SKIP;
    }
    /* BOINC-COMPAT (sched_check.cpp): the job must finish before its
     * deadline at the rate this host really computes (on and allowed to
     * run), and fit the host's memory and free disk. */
    double est = wu->rsc_fpops_est > 0 ? wu->rsc_fpops_est / flops : 0;
    if (wu->delay_bound > 0 && est / pc->avail > wu->delay_bound) {
        pc->skipped[SKIP_DEADLINE]++;
        return VS_PICK_SKIP;
    }
    if (pc->mem_bytes > 0 && wu->rsc_memory_bound > pc->mem_bytes) {
        pc->skipped[SKIP_MEMORY]++;
        return VS_PICK_SKIP;
    }
    if (pc->disk_left > 0 && wu->rsc_disk_bound > pc->disk_left) {
        pc->skipped[SKIP_DISK]++;
        return VS_PICK_SKIP;
    }
    pc->job_av[pc->njobs] = ch;
    pc->job_wuid[pc->njobs] = wu->id;
    pc->job_flops[pc->njobs] = flops;
    pc->njobs++;
    /* BOINC-COMPAT (add_result_to_reply): the request shrinks by the job's
     * estimated runtime and by the CPUs it occupies. */
    pc->secs_left -= est;
    pc->inst_left -= ncpus;
    if (pc->disk_left > 0)
        pc->disk_left -= wu->rsc_disk_bound;
    return VS_PICK_TAKE;
}

/* ------------------------------------------------------------------------ */
/* Replies                                                                   */
/* ------------------------------------------------------------------------ */

static void add_msg(struct vs_proto_reply *r, struct vs_arena *a, const char *prio,
                    const char *text)
{
    struct vs_proto_message *m = vs_arena_alloc(a, (r->n_messages + 1) * sizeof(*m));
    if (r->n_messages)
        memcpy(m, r->messages, r->n_messages * sizeof(*m));
    m[r->n_messages].priority = prio;
    m[r->n_messages].text = vs_arena_strndup(a, text, strlen(text));
    r->messages = m;
    r->n_messages++;
}

static int write_reply(struct vs_sched *s, const struct vs_proto_reply *r, struct vs_buf *out)
{
    int rc = vs_proto_reply_write(r, out);
    if (rc != 0) {
        VS_LOG(s->log, VS_LOG_ERROR, "cannot write scheduler reply: %s", vs_strerror(rc));
        vs_buf_reset(out);
        if (vs_buf_puts(out, "<scheduler_reply>\n<message priority=\"low\">server error"
                             "</message>\n<request_delay>120</request_delay>\n"
                             "</scheduler_reply>\n") != 0)
            return 500;
    }
    return 200;
}

/* A reply that refuses the request: message + request_delay, no work. */
static int refuse(struct vs_sched *s, const char *peer, const char *why, const char *msg,
                  double delay, struct vs_buf *out)
{
    atomic_fetch_add_explicit(&s->n_bad, 1, memory_order_relaxed);
    VS_LOG(s->log, VS_LOG_WARN, "scheduler: refused request from %s: %s", peer ? peer : "?", why);
    struct vs_arena a;
    vs_arena_init(&a, 1024);
    struct vs_proto_reply r = {0};
    r.request_delay = delay;
    r.project_name = s->cfg.long_name[0] ? s->cfg.long_name : NULL;
    add_msg(&r, &a, "low", msg);
    int status = write_reply(s, &r, out);
    vs_arena_cleanup(&a);
    return status;
}

static bool have_name(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

/* Adds the sent jobs' elements to the reply, each app, app version and file
 * once. */
static void reply_add_jobs(struct vs_proto_reply *r, struct vs_arena *a, struct pick_ctx *pc,
                           struct vs_cache_job *jobs, const struct vs_claim *claims, size_t n,
                           const struct catalog_snap *cat)
{
    size_t max_fi = 0;
    for (size_t i = 0; i < n; i++) {
        const struct prep_job *pj = jobs[i].prep;
        max_fi += pj->n_in + pj->n_out + (pc->job_av[i]->av ? pc->job_av[i]->av->nfis : 0);
    }
    r->apps = vs_arena_alloc(a, (n + 1) * sizeof(*r->apps));
    r->app_versions = vs_arena_alloc(a, (n + 1) * sizeof(*r->app_versions));
    r->file_infos = vs_arena_alloc(a, (max_fi + 1) * sizeof(*r->file_infos));
    r->workunits = vs_arena_alloc(a, (n + 1) * sizeof(*r->workunits));
    r->results = vs_arena_alloc(a, (n + 1) * sizeof(*r->results));
    const char **fi_names = vs_arena_alloc(a, (max_fi + 1) * sizeof(*fi_names));
    const struct prep_av **avs_sent = vs_arena_alloc(a, (n + 1) * sizeof(*avs_sent));
    size_t n_avs_sent = 0;
    (void)cat;
    for (size_t i = 0; i < n; i++) {
        if (!claims[i].claimed)
            continue;
        const struct prep_job *pj = jobs[i].prep;
        const struct av_choice *ch = pc->job_av[i];
        if (ch->av) {
            bool seen = false;
            for (size_t k = 0; k < n_avs_sent; k++)
                seen |= avs_sent[k] == ch->av;
            if (!seen) {
                avs_sent[n_avs_sent++] = ch->av;
                bool app_seen = false;
                for (size_t k = 0; k < r->n_apps; k++)
                    app_seen |= strcmp(r->apps[k].name, ch->av->papp.name) == 0;
                if (!app_seen)
                    r->apps[r->n_apps++] = ch->av->papp;
                for (size_t f = 0; f < ch->av->nfis; f++) {
                    if (have_name(fi_names, r->n_file_infos, ch->av->fis[f].name))
                        continue;
                    fi_names[r->n_file_infos] = ch->av->fis[f].name;
                    r->file_infos[r->n_file_infos++] = ch->av->fis[f];
                }
                struct vs_proto_app_version *pav = &r->app_versions[r->n_app_versions++];
                *pav = ch->av->pav;
                pav->flops = pc->job_flops[i];
            }
        }
        for (size_t f = 0; f < pj->n_in; f++) {
            if (have_name(fi_names, r->n_file_infos, pj->in_fis[f].name))
                continue;
            fi_names[r->n_file_infos] = pj->in_fis[f].name;
            r->file_infos[r->n_file_infos++] = pj->in_fis[f];
        }
        for (size_t f = 0; f < pj->n_out; f++) {
            fi_names[r->n_file_infos] = pj->out_fis[f].name;
            r->file_infos[r->n_file_infos++] = pj->out_fis[f];
        }
        struct vs_proto_workunit *w = &r->workunits[r->n_workunits++];
        *w = pj->wu;
        const struct vs_app *app = find_app(&pc->cat->cat, jobs[i].job.wu.appid);
        w->app_name = app ? app->name : "";
        struct vs_proto_result *res = &r->results[r->n_results++];
        *res = pj->res;
        res->report_deadline = (double)claims[i].report_deadline;
        if (ch->av) {
            res->platform = ch->av->pav.platform;
            res->version_num = ch->av->pav.version_num;
            res->plan_class = ch->av->pav.plan_class;
        } else {
            res->platform = ch->anon_av->platform;
            res->version_num = ch->anon_av->version_num;
            res->plan_class = ch->anon_av->plan_class;
        }
    }
}

/* ------------------------------------------------------------------------ */
/* The request                                                               */
/* ------------------------------------------------------------------------ */

/*
 * A known host may already hold another result of a replicated workunit
 * (from an earlier RPC). Such jobs go back to the cache for other hosts.
 * Only replicated workunits are checked, so the common case costs nothing.
 * Returns the number of jobs kept (compacted to the front).
 */
static size_t drop_replicas_held(struct vs_sched *s, struct pick_ctx *pc, int64_t hostid,
                                 struct vs_cache_job *jobs, size_t n)
{
    struct vs_store *st = NULL;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        const struct vs_workunit *wu = &jobs[i].job.wu;
        bool held = false;
        if (wu->target_nresults > 1 || wu->min_quorum > 1) {
            if (!st && pool_get(s, &st) != 0)
                st = NULL;
            /* Without a store handle, err on the side of not sending. */
            if (!st || vs_store_host_has_wu(st, hostid, wu->id, &held) != 0)
                held = true;
        }
        if (held) {
            vs_cache_put_back(s->cache, &jobs[i]);
            continue;
        }
        if (kept != i) {
            jobs[kept] = jobs[i];
            pc->job_av[kept] = pc->job_av[i];
            pc->job_flops[kept] = pc->job_flops[i];
            pc->job_wuid[kept] = pc->job_wuid[i];
        }
        kept++;
    }
    if (st)
        pool_put(s, st);
    return kept;
}

static void host_from_request(struct vs_host *h, const struct vs_proto_request *q,
                              const struct vs_user *u, const char *peer, int64_t now)
{
    const struct vs_proto_host_info *hi = &q->host;
    h->userid = u->id;
    h->teamid = u->teamid;
    h->rpc_time = now;
    set_field(h->host_cpid, sizeof(h->host_cpid), hi->host_cpid);
    set_field(h->domain_name, sizeof(h->domain_name), hi->domain_name);
    set_field(h->last_ip_addr, sizeof(h->last_ip_addr), hi->ip_addr);
    set_field(h->external_ip_addr, sizeof(h->external_ip_addr), peer);
    h->on_frac = q->time_stats.on_frac;
    h->connected_frac = q->time_stats.connected_frac;
    h->active_frac = q->time_stats.active_frac;
    h->gpu_active_frac = q->time_stats.gpu_active_frac;
    h->p_ncpus = hi->p_ncpus;
    set_field(h->p_vendor, sizeof(h->p_vendor), hi->p_vendor);
    set_field(h->p_model, sizeof(h->p_model), hi->p_model);
    h->p_fpops = hi->p_fpops;
    h->p_iops = hi->p_iops;
    h->p_membw = hi->p_membw;
    set_field(h->os_name, sizeof(h->os_name), hi->os_name);
    set_field(h->os_version, sizeof(h->os_version), hi->os_version);
    set_field(h->platform_name, sizeof(h->platform_name), q->platform_name);
    h->m_nbytes = hi->m_nbytes;
    h->m_swap = hi->m_swap;
    h->d_total = hi->d_total;
    h->d_free = hi->d_free;
    h->d_boinc_used_total = q->disk_usage.d_boinc_used_total;
    h->d_boinc_used_project = q->disk_usage.d_boinc_used_project;
    h->d_boinc_max = q->disk_usage.d_project_share;
    h->n_bwup = q->net_stats.bwup;
    h->n_bwdown = q->net_stats.bwdown;
}

/* Clamps a number from the client into [lo, hi]; NaN becomes lo. */
static double clamp(double v, double lo, double hi)
{
    if (!(v >= lo))
        return lo;
    return v > hi ? hi : v;
}

int vs_sched_handle(struct vs_sched *s, const char *body, size_t len, const char *peer, int64_t now,
                    struct vs_buf *out)
{
    atomic_fetch_add_explicit(&s->n_rpcs, 1, memory_order_relaxed);
    struct vs_arena a;
    vs_arena_init(&a, 32 * 1024);
    struct vs_store *st = NULL;
    struct vs_user user = {0};
    struct vs_host host = {0};
    struct vs_cache_job *jobs = NULL;
    struct vs_claim *claims = NULL;
    size_t njobs = 0;
    int status;
    bool have_cat_lock = false;

    /* Tell the committer a write is coming, so that a commit about to start
     * waits a moment for this request and shares its transaction. Done
     * first: under load most requests are still parsing when a commit
     * starts. Withdrawn at the end unless the item was queued. */
    vs_committer_enter(s->committer);
    bool announced = true;

    struct vs_proto_request q;
    struct vs_proto_error perr = {0};
    int rc = vs_proto_request_parse(body, len, &a, &q, &perr);
    if (rc != 0) {
        char why[300];
        snprintf(why, sizeof(why), "%s: %s", vs_strerror(rc), perr.msg);
        status = refuse(s, peer, why, "Invalid scheduler request", DELAY_BAD_REQUEST, out);
        goto done;
    }
    if (!q.authenticator || !q.authenticator[0]) {
        status = refuse(s, peer, "no authenticator", "Invalid or missing account key",
                        DELAY_MISSING_KEY, out);
        goto done;
    }
    rc = pool_get(s, &st);
    if (rc != 0) {
        VS_LOG(s->log, VS_LOG_ERROR, "scheduler: cannot open store: %s", vs_strerror(rc));
        status = refuse(s, peer, "store unavailable", "Server can't open database",
                        DELAY_SERVER_ERROR, out);
        goto done;
    }
    rc = user_lookup(s, st, q.authenticator, now, &user);
    if (rc != 0) {
        char why[160];
        snprintf(why, sizeof(why), "%s authenticator '%.40s'",
                 rc == VS_ENOTFOUND ? "unknown" : vs_strerror(rc), q.authenticator);
        status = refuse(s, peer, why,
                        rc == VS_ENOTFOUND ? "Invalid or missing account key" : "Server error",
                        rc == VS_ENOTFOUND ? DELAY_MISSING_KEY : DELAY_SERVER_ERROR, out);
        goto done;
    }

    /* BOINC-COMPAT (authenticate_user): reuse the host row when the id is
     * known, belongs to this user and the sequence number did not go back
     * (a copied client state would); otherwise make a new host, whose id the
     * reply carries and whose rpc_seqno restarts at 0. */
    bool new_host = true;
    if (q.hostid > 0) {
        rc = host_lookup(s, st, q.hostid, now, &host);
        if (rc == 0 && host.userid == user.id && q.rpc_seqno >= host.rpc_seqno)
            new_host = false;
        else if (rc != 0 && rc != VS_ENOTFOUND) {
            status = refuse(s, peer, "host lookup failed", "Server error", DELAY_SERVER_ERROR, out);
            goto done;
        }
    }
    if (new_host) {
        memset(&host, 0, sizeof(host));
        host.create_time = now;
        host.rpc_seqno = 0;
    } else {
        host.rpc_seqno = (int)q.rpc_seqno;
    }
    host_from_request(&host, &q, &user, peer, now);
    struct vs_reports reports;
    rc = vs_reports_prepare(st, &q, user.id, &a, s->log, &reports);
    reports.daily_quota = s->cfg.daily_result_quota;
    if (rc != 0) {
        status = refuse(s, peer, "reported results lookup failed", "Server error",
                        DELAY_SERVER_ERROR, out);
        goto done;
    }
    pool_put(s, st);
    st = NULL;

    struct vs_proto_reply r = {0};
    r.project_name = s->cfg.long_name[0] ? s->cfg.long_name : NULL;
    r.master_url = s->cfg.master_url;
    r.has_user_info = true;
    r.userid = user.id;
    r.user_name = vs_arena_strndup(&a, user.name, strlen(user.name));
    r.user_create_time = (double)user.create_time;
    r.user_total_credit = user.total_credit;
    r.user_expavg_credit = user.expavg_credit;
    r.host_total_credit = host.total_credit;
    r.host_expavg_credit = host.expavg_credit;
    r.host_create_time = (double)host.create_time;
    /* BOINC-COMPAT: the key goes only to clients that do not echo one. */
    if (!q.code_sign_key && s->code_sign_key)
        r.code_sign_key = s->code_sign_key;

    /* ---- choose work ---- */
    pthread_rwlock_rdlock(&s->cat_lock);
    have_cat_lock = true;
    struct pick_ctx pc = {.s = s, .arena = &a, .cat = s->cat, .req = &q};
    bool wants = vs_proto_request_wants_work(&q) && !q.dont_send_work;
    if (q.platform_name && strcmp(q.platform_name, "anonymous") == 0) {
        pc.anonymous = true;
    } else if (q.platform_name && q.platform_name[0]) {
        pc.platforms[pc.nplatforms++] = q.platform_name;
        for (size_t i = 0; i < q.n_alt_platforms && pc.nplatforms < MAX_HOST_PLATFORMS; i++)
            pc.platforms[pc.nplatforms++] = q.alt_platforms[i];
    }
    if (wants && !pc.anonymous && pc.nplatforms == 0) {
        add_msg(&r, &a, "low", "This project doesn't support computers of this type");
        r.request_delay = DELAY_PLATFORM;
        wants = false;
    }
    if (wants) {
        int ncpus = q.host.p_ncpus > 0 ? q.host.p_ncpus : 1;
        size_t per_cpu =
            s->cfg.max_wus_to_send > 0 ? (size_t)s->cfg.max_wus_to_send : DEFAULT_WUS_TO_SEND;
        pc.max_jobs = per_cpu * (size_t)ncpus;
        if (pc.max_jobs > (size_t)s->opt.max_jobs_per_rpc)
            pc.max_jobs = (size_t)s->opt.max_jobs_per_rpc;
        /* Untrusted numbers: an absurd or missing speed counts as BOINC's
         * default 1 GFLOPS; fractions outside (0, 1] count as 1. */
        pc.p_fpops = q.host.p_fpops > 0 && q.host.p_fpops < 1e16 ? q.host.p_fpops : 1e9;
        double on = q.time_stats.on_frac > 0 ? clamp(q.time_stats.on_frac, 0, 1) : 1.0;
        double act = q.time_stats.active_frac > 0 ? clamp(q.time_stats.active_frac, 0, 1) : 1.0;
        pc.avail = clamp(on * act, 0.01, 1.0);
        double secs = q.cpu_req_secs > 0 ? q.cpu_req_secs : q.work_req_seconds;
        pc.secs_left = clamp(secs, 0, MAX_REQ_SECS);
        pc.inst_left = clamp(q.cpu_req_instances, 0, 1024);
        pc.mem_bytes = clamp(q.host.m_nbytes, 0, 1e18);
        pc.disk_left = clamp(q.host.d_free, 0, 1e18);
        /* Not zeroed: vs_cache_take writes every entry it returns. */
        jobs = vs_xmalloc((pc.max_jobs + 1) * sizeof(*jobs));
        pc.job_av = vs_arena_alloc(&a, (pc.max_jobs + 1) * sizeof(*pc.job_av));
        pc.job_flops = vs_arena_alloc(&a, (pc.max_jobs + 1) * sizeof(*pc.job_flops));
        pc.job_wuid = vs_arena_alloc(&a, (pc.max_jobs + 1) * sizeof(*pc.job_wuid));
        njobs = vs_cache_take(s->cache, pick, &pc, jobs, pc.max_jobs);
        if (!new_host)
            njobs = drop_replicas_held(s, &pc, host.id, jobs, njobs);
    }

    /* ---- commit: host row + claims, durable before the reply ---- */
    claims = vs_xcalloc(njobs + 1, sizeof(*claims));
    for (size_t i = 0; i < njobs; i++) {
        const struct vs_job *j = &jobs[i].job;
        claims[i].result_id = j->result.id;
        claims[i].app_version_id = pc.job_av[i]->av ? pc.job_av[i]->av->av->id : 0;
        claims[i].app_version_num = pc.job_av[i]->av ? pc.job_av[i]->av->av->version_num
                                                     : pc.job_av[i]->anon_av->version_num;
        int64_t bound = j->wu.delay_bound > 0 ? j->wu.delay_bound : 7 * 86400;
        claims[i].report_deadline = now + bound;
        claims[i].flops_estimate = pc.job_flops[i];
    }
    struct vs_commit_item item = {
        .host = &host,
        .new_host = new_host,
        .userid = user.id,
        .teamid = user.teamid,
        .now = now,
        .claims = claims,
        .nclaims = njobs,
        .reports = reports.n ? &reports : NULL,
    };
    announced = false; /* vs_committer_run takes the announcement over */
    rc = vs_committer_run(s->committer, &item);
    if (host.id > 0)
        host_remember(s, &host, now, rc == 0);
    if (rc != 0) {
        for (size_t i = 0; i < njobs; i++)
            vs_cache_put_back(s->cache, &jobs[i]);
        njobs = 0;
        pthread_rwlock_unlock(&s->cat_lock);
        have_cat_lock = false;
        status = refuse(s, peer, "commit failed", "Server error; try again later",
                        DELAY_SERVER_ERROR, out);
        goto done;
    }
    if (new_host)
        r.hostid = host.id;

    vs_reports_ack(&reports, &r, &a); /* durable now: the client may forget them */
    reply_add_jobs(&r, &a, &pc, jobs, claims, njobs, s->cat);
    atomic_fetch_add_explicit(&s->n_sent, item.nclaimed, memory_order_relaxed);
    if (wants && item.nclaimed == 0) {
        atomic_fetch_add_explicit(&s->n_nowork, 1, memory_order_relaxed);
        if (pc.skipped[SKIP_DEADLINE])
            add_msg(&r, &a, "low", "Tasks won't finish in time on this computer");
        if (pc.skipped[SKIP_MEMORY])
            add_msg(&r, &a, "low", "Tasks need more memory than this computer has");
        if (pc.skipped[SKIP_DISK])
            add_msg(&r, &a, "low", "Tasks need more disk space than this computer has free");
        if (pc.skipped[SKIP_NO_VERSION])
            add_msg(&r, &a, "low", "No application version for this computer's platform");
        if (r.n_messages == 0)
            add_msg(&r, &a, "low", "Project has no tasks available");
    }
    status = write_reply(s, &r, out);
    if (reports.n > 0)
        VS_LOG(s->log, VS_LOG_DEBUG, "host %lld reported %zu results: %zu recorded, %zu repeats",
               (long long)host.id, reports.n, reports.nrecorded, reports.ndup);
    VS_LOG(s->log, VS_LOG_DEBUG, "host %lld (%s): %zu jobs sent", (long long)host.id,
           peer ? peer : "?", item.nclaimed);
done:
    if (announced)
        vs_committer_leave(s->committer);
    if (have_cat_lock)
        pthread_rwlock_unlock(&s->cat_lock);
    for (size_t i = 0; i < njobs; i++)
        vs_cache_forget(s->cache, &jobs[i], !claims[i].claimed);
    vs_free(jobs);
    vs_free(claims);
    if (st)
        pool_put(s, st);
    vs_user_cleanup(&user);
    vs_arena_cleanup(&a);
    return status;
}

int vs_sched_http(void *ctx, const char *body, size_t len, const char *peer, struct vs_buf *out)
{
    return vs_sched_handle(ctx, body, len, peer, (int64_t)time(NULL), out);
}

/* ------------------------------------------------------------------------ */
/* Life cycle                                                                */
/* ------------------------------------------------------------------------ */

int vs_sched_refill(struct vs_sched *s, size_t *out_added)
{
    pthread_mutex_lock(&s->feed_mu);
    /* prep_job reads no catalog state, so the feeder needs no catalog lock. */
    int rc = vs_cache_refill(s->cache, s->feed_store, out_added);
    /* The writer does not checkpoint (vs_store_sched_tune): the feeder does,
     * about once a second, off the request path. */
    int64_t now = (int64_t)time(NULL);
    if (rc == 0 && now != s->last_checkpoint) {
        s->last_checkpoint = now;
        rc = vs_store_sched_checkpoint(s->feed_store);
    }
    pthread_mutex_unlock(&s->feed_mu);
    return rc;
}

static char *read_small_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct vs_buf b;
    vs_buf_init(&b, 64 * 1024);
    char chunk[4096];
    size_t n;
    int rc = 0;
    while (rc == 0 && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        rc = vs_buf_append(&b, chunk, n);
    fclose(f);
    if (rc != 0 || b.len == 0) {
        vs_buf_cleanup(&b);
        return NULL;
    }
    return vs_buf_take(&b, NULL);
}

int vs_sched_create(const struct vs_project_config *cfg, struct vs_log *log,
                    const struct vs_sched_options *opts, struct vs_sched **out)
{
    struct vs_sched *s = VS_NEW(struct vs_sched);
    s->cfg = *cfg;
    s->log = log;
    if (opts)
        s->opt = *opts;
    if (s->opt.max_jobs_per_rpc <= 0)
        s->opt.max_jobs_per_rpc = DEFAULT_MAX_PER_RPC;
    if (s->opt.commit_delay_us < 0)
        s->opt.commit_delay_us = 0;
    else if (s->opt.commit_delay_us == 0)
        s->opt.commit_delay_us = 1000;
    pthread_rwlock_init(&s->cat_lock, NULL);
    pthread_mutex_init(&s->feed_mu, NULL);
    pthread_mutex_init(&s->pool_mu, NULL);
    pthread_mutex_init(&s->ucache_mu, NULL);
    pthread_mutex_init(&s->hcache_mu, NULL);
    s->ucache = vs_xcalloc(UCACHE_SIZE, sizeof(*s->ucache));
    s->hcache = vs_xcalloc(HCACHE_SIZE, sizeof(*s->hcache));
    char path[VS_PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/code_sign_public", cfg->key_dir);
    s->code_sign_key = read_small_file(path);
    if (!s->code_sign_key)
        VS_LOG(log, VS_LOG_WARN, "no code-signing key at %s: clients will refuse app files", path);
    struct vs_store *w = NULL;
    int rc = vs_store_open(cfg->store_url, 0, log, &s->feed_store);
    if (rc == 0)
        rc = vs_store_open(cfg->store_url, 0, log, &w);
    if (rc != 0) {
        VS_LOG(log, VS_LOG_ERROR, "cannot open store %s: %s", cfg->store_url, vs_strerror(rc));
        goto fail;
    }
    if (vs_store_sched_tune(w, true) != 0 || vs_store_sched_tune(s->feed_store, false) != 0)
        VS_LOG(log, VS_LOG_WARN, "could not tune the store handles (continuing)");
    s->committer = vs_committer_create(w, log, s->opt.commit_delay_us);
    rc = load_catalog(s, s->feed_store, &s->cat);
    if (rc != 0) {
        VS_LOG(log, VS_LOG_ERROR, "cannot load apps: %s", vs_strerror(rc));
        goto fail;
    }
    s->cache = vs_cache_create(s->opt.cache_slots, prep_job, unprep_job, s);
    *out = s;
    return 0;
fail:
    vs_sched_destroy(s);
    return rc;
}

void vs_sched_destroy(struct vs_sched *s)
{
    if (!s)
        return;
    vs_cache_destroy(s->cache);
    vs_committer_destroy(s->committer);
    for (size_t i = 0; i < s->npool; i++)
        vs_store_close(s->pool[i]);
    vs_free(s->pool);
    if (s->feed_store)
        vs_store_close(s->feed_store);
    snap_free(s->cat);
    vs_free(s->code_sign_key);
    pthread_rwlock_destroy(&s->cat_lock);
    pthread_mutex_destroy(&s->feed_mu);
    pthread_mutex_destroy(&s->pool_mu);
    pthread_mutex_destroy(&s->ucache_mu);
    pthread_mutex_destroy(&s->hcache_mu);
    vs_free(s->ucache);
    vs_free(s->hcache);
    vs_free(s);
}

void vs_sched_get_stats(struct vs_sched *s, struct vs_sched_stats *out_stats)
{
    memset(out_stats, 0, sizeof(*out_stats));
    out_stats->rpcs = atomic_load(&s->n_rpcs);
    out_stats->bad_rpcs = atomic_load(&s->n_bad);
    out_stats->jobs_sent = atomic_load(&s->n_sent);
    out_stats->no_work = atomic_load(&s->n_nowork);
    struct vs_commit_stats cs;
    vs_committer_get_stats(s->committer, &cs);
    out_stats->commit_batches = cs.batches;
    out_stats->commit_items = cs.items;
    out_stats->commit_max_batch = cs.max_batch;
    out_stats->commit_delayed = cs.delayed;
    struct vs_cache_stats c;
    vs_cache_get_stats(s->cache, &c);
    out_stats->cache_present = c.present;
}
