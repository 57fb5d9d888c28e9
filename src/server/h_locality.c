/*
 * Locality scheduling (seed 001; docs/locality.md), the server's side of a
 * scheduler request's pass: the algorithm is src/policy/server/loc_pass.c
 * (the same code popsim runs); this file gives it the store's queries, the
 * trigger files, the one wait, the working-set listing and the caller's
 * offer (so seed 004's rules and the job limits apply to every job).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server/loc_work.h"
#include "server/sched_int.h"
#include "volsched/loc_dirs.h"
#include "volsched/locality.h"
#include "volsched/log.h"
#include "volsched/rng.h"
#include "volsched/store.h"

#define WS_MAX       100000 /* working-set entries read */
#define WS_TTL_MS    2000   /* how long a listing of file_working_set/ is reused */
#define WAIT_STEP_MS 100    /* how often the wait looks for the generator's answer */
#define WORK_TTL_MS  2000   /* how long a listing of the files with work is reused */

struct vs_locality {
    char dir[VS_PATH_MAX];
    bool sorted;
    int wait_period; /* seconds; 0: no on-demand generation */
    struct vs_log *log;
    pthread_mutex_t mu; /* guards everything below */
    struct vs_rng rng;
    uint64_t turn; /* sorted order: the next working-set file in turn */
    int64_t ws_loaded_ms;
    char **ws; /* sorted */
    size_t nws, capws;
    struct vs_loc_work *work;       /* files with work, for the deterministic scan */
    struct vs_locality_clock clock; /* functions NULL: the real clock */
    _Atomic uint64_t n_sent, n_deletes, n_need_work, n_waits, n_files_no_work, n_bad, n_searched;
};

static int64_t mono_ms(const struct vs_locality *l)
{
    if (l->clock.now_ms)
        return l->clock.now_ms(l->clock.ctx);
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void sleep_ms(const struct vs_locality *l, int64_t ms)
{
    if (l->clock.sleep_ms) {
        l->clock.sleep_ms(l->clock.ctx, ms);
        return;
    }
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

void vs_locality_set_clock(struct vs_locality *l, const struct vs_locality_clock *clock)
{
    memset(&l->clock, 0, sizeof(l->clock));
    if (clock)
        l->clock = *clock;
}

struct vs_locality *vs_locality_create(const struct vs_project_config *cfg, struct vs_log *log)
{
    struct vs_locality *l = VS_NEW(struct vs_locality);
    memcpy(l->dir, cfg->dir, sizeof(l->dir));
    l->sorted = cfg->locality_scheduling_sorted_order;
    l->wait_period =
        cfg->locality_scheduling_wait_period > 0 ? cfg->locality_scheduling_wait_period : 0;
    l->log = log;
    pthread_mutex_init(&l->mu, NULL);
    vs_rng_seed(&l->rng, (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32));
    l->ws_loaded_ms = -WS_TTL_MS - 1;
    l->work = vs_loc_work_create(WORK_TTL_MS);
    int rc = vs_loc_dirs_create(l->dir);
    if (rc)
        VS_LOG(log, VS_LOG_WARN, "locality: cannot create %s/locality_scheduling/: %s", l->dir,
               vs_strerror(rc));
    return l;
}

static void ws_free(struct vs_locality *l)
{
    for (size_t i = 0; i < l->nws; i++)
        vs_free(l->ws[i]);
    l->nws = 0;
}

void vs_locality_destroy(struct vs_locality *l)
{
    if (!l)
        return;
    ws_free(l);
    vs_free(l->ws);
    vs_loc_work_destroy(l->work);
    pthread_mutex_destroy(&l->mu);
    vs_free(l);
}

void vs_locality_get_stats(const struct vs_locality *l, struct vs_locality_stats *out)
{
    memset(out, 0, sizeof(*out));
    if (!l)
        return;
    out->sent = atomic_load(&l->n_sent);
    out->deletes = atomic_load(&l->n_deletes);
    out->need_work = atomic_load(&l->n_need_work);
    out->waits = atomic_load(&l->n_waits);
    out->files_no_work = atomic_load(&l->n_files_no_work);
    out->bad_names = atomic_load(&l->n_bad);
    out->searched = atomic_load(&l->n_searched);
}

/* ------------------------------------------------------------------------ */
/* The host's files                                                           */
/* ------------------------------------------------------------------------ */

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

struct named_size {
    const char *name;
    double size;
};

static int cmp_named(const void *a, const void *b)
{
    return strcmp(((const struct named_size *)a)->name, ((const struct named_size *)b)->name);
}

void vs_loc_held_from_request(struct vs_loc_held *h, const struct vs_proto_request *q,
                              struct vs_arena *a)
{
    memset(h, 0, sizeof(*h));
    size_t n = q->n_sticky_files;
    if (n == 0)
        return;
    /* Untrusted: at most VS_PROTO_MAX_FILE_INFOS entries (the parser's cap),
     * each name checked; the sort is the only O(n log n) step. */
    struct named_size *v = vs_arena_alloc(a, n * sizeof(*v));
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *nm = q->sticky_files[i].name;
        double b = q->sticky_files[i].nbytes;
        if (nm && vs_loc_file_name_ok(nm, strnlen(nm, VS_LOC_NAME_MAX)))
            v[k++] = (struct named_size){nm, b > 0 && b < 1e15 ? b : 0};
    }
    if (k == 0)
        return;
    qsort(v, k, sizeof(*v), cmp_named);
    h->names = vs_arena_alloc(a, k * sizeof(*h->names));
    h->sizes = vs_arena_alloc(a, k * sizeof(*h->sizes));
    h->cap = k;
    for (size_t i = 0; i < k; i++) {
        if (h->n > 0 && strcmp(h->names[h->n - 1], v[i].name) == 0)
            continue;
        h->names[h->n] = v[i].name;
        h->sizes[h->n++] = v[i].size;
    }
}

void vs_loc_held_add_job(struct vs_loc_held *h, struct vs_arena *a, const struct prep_job *pj)
{
    /* Every input counts for the disk (it is on the host once this reply
     * is handled); the job's other files are the host's only while it runs
     * them, which the client's own disk check covers. */
    for (size_t i = 0; i < pj->n_in; i++)
        if (pj->in_fis[i].name)
            (void)vs_loc_held_insert(h, a, pj->in_fis[i].name, pj->in_fis[i].nbytes);
}

double vs_loc_held_credit(const struct vs_loc_held *h, const struct prep_job *pj, double disk_bound)
{
    /* The policy's sum, over the inputs in chunks (no allocation here:
     * pick() calls it under the cache lock). */
    enum { CHUNK = 16 };
    const char *names[CHUNK];
    double sizes[CHUNK];
    double credit = 0;
    for (size_t i = 0; i < pj->n_in; i += CHUNK) {
        size_t m = pj->n_in - i < CHUNK ? pj->n_in - i : CHUNK;
        for (size_t k = 0; k < m; k++) {
            names[k] = pj->in_fis[i + k].name;
            sizes[k] = pj->in_fis[i + k].nbytes;
        }
        credit += vs_loc_disk_credit(names, sizes, m, h->names, h->n, disk_bound);
    }
    return credit < disk_bound ? credit : disk_bound;
}

bool vs_loc_held_match(const struct vs_loc_held *h, const struct prep_job *pj)
{
    for (size_t i = 0; i < pj->n_in; i++)
        if (pj->in_fis[i].sticky && pj->in_fis[i].name &&
            vs_loc_sorted_has(h->names, h->n, pj->in_fis[i].name))
            return true;
    return false;
}

/* ------------------------------------------------------------------------ */
/* One request's pass: the source the policy's pass runs over                 */
/* ------------------------------------------------------------------------ */

struct src {
    struct vs_sched *s;
    struct vs_locality *l;
    struct vs_store *st;
    int64_t userid;
    vs_send_offer_fn offer;
    void *offer_ctx;
    struct vs_arena *a;
    struct vs_proto_reply *r;
    struct vs_send *x;
    /* the last query's rows */
    const struct vs_loc_pass *pass;
    struct vs_job *jobs;
    size_t jcap;         /* room in jobs */
    size_t n, lim, rows; /* rows kept, the query's limit, rows passed */
    int64_t last_id;
    int64_t wait_end_ms;
};

static int src_max_sent(void *ctx, const char *f, int64_t *after)
{
    struct src *c = ctx;
    return vs_store_loc_max_sent(c->st, f, c->userid, after);
}

/* One query's rows. Rows of a workunit the pass already sent a result of
 * are counted but not copied (with target_nresults 2 every other row is
 * one). */
static int batch_add(void *ctx, const struct vs_job *job)
{
    struct src *c = ctx;
    c->rows++;
    c->last_id = job->result.id;
    if (c->n < c->lim && !(c->pass && vs_loc_pass_wu_taken(c->pass, job->wu.id)))
        vs_job_copy(&c->jobs[c->n++], job);
    return 0;
}

static int src_unsent(void *ctx, const struct vs_loc_pass *pass, const char *f, int64_t after,
                      int64_t excl_user, int64_t excl_host, size_t lim, struct vs_loc_rows *out)
{
    struct src *c = ctx;
    if (lim > c->jcap) {
        c->jcap = lim;
        c->jobs = vs_arena_alloc(c->a, lim * sizeof(*c->jobs));
    }
    c->pass = pass;
    c->n = c->rows = 0;
    c->lim = lim;
    c->last_id = 0;
    int rc = vs_store_loc_unsent(c->st, f, after, excl_user, excl_host, (int)lim, batch_add, c);
    *out = (struct vs_loc_rows){.n = c->n, .rows = c->rows, .last_id = c->last_id};
    return rc;
}

static bool is_locality_app(const struct src *c, int64_t appid)
{
    const struct vs_app *app = vs_sched__find_app(&c->s->cat->cat, appid);
    return app && app->locality_scheduling == VS_LOC_APP_FULL;
}

static enum vs_loc_offer src_offer(void *ctx, size_t i, int64_t *wu)
{
    struct src *c = ctx;
    struct vs_cache_job cj = {.job = c->jobs[i], .prep = NULL};
    *wu = cj.job.wu.id;
    memset(&c->jobs[i], 0, sizeof(c->jobs[i])); /* the offer or the cleanup below owns it */
    enum vs_loc_offer out = VS_LOC_PASS;
    if (is_locality_app(c, cj.job.wu.appid) && vs_sched__prep_job(c->s, &cj) == 0) {
        enum vs_offer d = c->offer(c->offer_ctx, &cj);
        if (d == VS_OFFER_TAKEN)
            return VS_LOC_TAKEN; /* the send owns the job now */
        /* Another result of a workunit the host or user has is never
         * theirs: passing it keeps the order. */
        out = d == VS_OFFER_STOP ? VS_LOC_STOP : d == VS_OFFER_SKIP ? VS_LOC_SKIP : VS_LOC_PASS;
    }
    if (cj.prep)
        vs_sched__unprep_job(c->s, cj.prep);
    vs_job_cleanup(&cj.job);
    return out;
}

static void src_rows_done(void *ctx)
{
    struct src *c = ctx;
    /* Rows never offered (the file stopped, the request was full); offered
     * ones were zeroed, which cleans up as nothing. */
    for (size_t i = 0; i < c->n; i++)
        vs_job_cleanup(&c->jobs[i]);
    c->n = 0;
}

static bool src_wants(void *ctx)
{
    return vs_send_wants_more(((struct src *)ctx)->x);
}

static size_t src_room(void *ctx)
{
    const struct vs_send *x = ((struct src *)ctx)->x;
    return x->max_jobs > x->njobs ? x->max_jobs - x->njobs : 0;
}

static int src_file_known(void *ctx, const char *f, bool *known)
{
    return vs_store_loc_file_known(((struct src *)ctx)->st, f, known);
}

static bool src_exists(void *ctx, enum vs_loc_dir d, const char *f)
{
    return vs_loc_exists(((struct src *)ctx)->l->dir, d, f);
}

static void src_touch(void *ctx, enum vs_loc_dir d, const char *f)
{
    struct src *c = ctx;
    int rc = vs_loc_touch(c->l->dir, d, f);
    if (rc)
        VS_LOG(c->l->log, VS_LOG_WARN, "locality: cannot make %s/%s: %s", vs_loc_dir_name(d), f,
               vs_strerror(rc));
}

static void src_delete_file(void *ctx, const char *f)
{
    struct src *c = ctx;
    struct vs_proto_reply *r = c->r;
    if (r->n_delete_file_infos >= VS_LOC_MAX_HOST_FILES)
        return;
    const char **d = vs_arena_alloc(c->a, (r->n_delete_file_infos + 1) * sizeof(*d));
    if (r->n_delete_file_infos)
        memcpy(d, r->delete_file_infos, r->n_delete_file_infos * sizeof(*d));
    d[r->n_delete_file_infos++] = vs_arena_strndup(c->a, f, strlen(f));
    r->delete_file_infos = d;
}

/* Up to the wait period, a step of WAIT_STEP_MS at a time. */
static bool src_wait_step(void *ctx, bool first)
{
    struct src *c = ctx;
    if (first)
        c->wait_end_ms = mono_ms(c->l) + (int64_t)c->l->wait_period * 1000;
    int64_t left = c->wait_end_ms - mono_ms(c->l);
    if (left <= 0)
        return false;
    sleep_ms(c->l, left < WAIT_STEP_MS ? left : WAIT_STEP_MS);
    return true;
}

/* The working set as of at most WS_TTL_MS ago. */
static int ws_add(void *ctx, const char *name)
{
    struct vs_locality *l = ctx;
    if (l->nws == l->capws) {
        l->capws = l->capws ? l->capws * 2 : 64;
        l->ws = vs_xreallocarray(l->ws, l->capws, sizeof(*l->ws));
    }
    l->ws[l->nws++] = vs_xstrdup(name);
    return 0;
}

static const char *src_ws_pick(void *ctx)
{
    struct src *c = ctx;
    struct vs_locality *l = c->l;
    const char *out = NULL;
    pthread_mutex_lock(&l->mu);
    int64_t now = mono_ms(l);
    if (now - l->ws_loaded_ms > WS_TTL_MS) {
        ws_free(l);
        if (vs_loc_list(l->dir, VS_LOC_WORKING_SET, WS_MAX, ws_add, l) != 0)
            VS_LOG(l->log, VS_LOG_WARN, "locality: cannot read file_working_set/");
        if (l->nws > 1)
            qsort(l->ws, l->nws, sizeof(*l->ws), cmp_name);
        l->ws_loaded_ms = now;
    }
    if (l->nws > 0) {
        uint64_t rnd = l->sorted ? l->turn++ : vs_rng_u64(&l->rng);
        const char *f = l->ws[vs_loc_pick_working(l->nws, rnd)];
        out = vs_arena_strndup(c->a, f, strlen(f));
    }
    pthread_mutex_unlock(&l->mu);
    return out;
}

static size_t src_scan(void *ctx, const char *start, const char **names, size_t max)
{
    struct src *c = ctx;
    return vs_loc_work_scan(c->l->work, c->st, mono_ms(c->l), start, c->a, names, max);
}

static void src_drop_work(void *ctx, const char *f)
{
    vs_loc_work_drop(((struct src *)ctx)->l->work, f);
}

void vs_locality_send(struct vs_sched *s, struct vs_store *st, const struct vs_proto_request *q,
                      int64_t hostid, int64_t userid, vs_send_offer_fn offer, void *offer_ctx,
                      struct vs_arena *a, struct vs_proto_reply *r, struct vs_send *x)
{
    struct vs_locality *l = s->loc;
    if (!l || !st || !vs_send_wants_more(x))
        return;
    struct src c = {
        .s = s,
        .l = l,
        .st = st,
        .userid = userid,
        .offer = offer,
        .offer_ctx = offer_ctx,
        .a = a,
        .r = r,
        .x = x,
    };
    struct vs_loc_source src = {
        .ctx = &c,
        .max_sent = src_max_sent,
        .unsent = src_unsent,
        .offer = src_offer,
        .rows_done = src_rows_done,
        .wants = src_wants,
        .room = src_room,
        .file_known = src_file_known,
        .exists = src_exists,
        .touch = src_touch,
        .delete_file = src_delete_file,
        .wait_step = src_wait_step,
        .ws_pick = src_ws_pick,
        .scan = src_scan,
        .drop_work = src_drop_work,
    };
    size_t n = q->n_sticky_files;
    const char **names = n ? vs_arena_alloc(a, n * sizeof(*names)) : NULL;
    for (size_t i = 0; i < n; i++)
        names[i] = q->sticky_files[i].name ? q->sticky_files[i].name : "";
    struct vs_loc_request rq = {
        .hostid = hostid,
        .userid = userid,
        .one_result_per_user_per_wu = x->cfg.one_result_per_user_per_wu,
        .on_demand = l->wait_period > 0,
        .sorted = l->sorted,
        .files = names,
        .nfiles = n,
    };
    if (n > 0 && !l->sorted) {
        pthread_mutex_lock(&l->mu);
        rq.rnd = vs_rng_u64(&l->rng);
        pthread_mutex_unlock(&l->mu);
    }
    struct vs_loc_pass_stats ps;
    vs_loc_pass_run(&src, &rq, a, &ps);
    atomic_fetch_add_explicit(&l->n_sent, ps.sent, memory_order_relaxed);
    atomic_fetch_add_explicit(&l->n_deletes, ps.deletes, memory_order_relaxed);
    atomic_fetch_add_explicit(&l->n_need_work, ps.need_work, memory_order_relaxed);
    atomic_fetch_add_explicit(&l->n_waits, ps.waits, memory_order_relaxed);
    atomic_fetch_add_explicit(&l->n_files_no_work, ps.files_no_work, memory_order_relaxed);
    atomic_fetch_add_explicit(&l->n_bad, ps.bad_names, memory_order_relaxed);
    atomic_fetch_add_explicit(&l->n_searched, ps.searched, memory_order_relaxed);
}
