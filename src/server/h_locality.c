/*
 * Locality scheduling (seed 001; docs/locality.md): the pass of a
 * scheduler request that sends a host the results whose big input file it
 * already holds. The decisions are the pure ones of volsched/locality.h
 * and the work-send rules (every job goes through the caller's offer, so
 * seed 004's rules and the job limits apply); this file does the store
 * queries, the trigger files and the one wait.
 *
 * Per file F the host holds (random order, or by name with
 * <locality_scheduling_sorted_order/>): send unsent results of F's
 * workunits in increasing id order, starting after the largest id already
 * sent to this user for F (the seed's invariant: retries, which get new
 * ids, are picked up; a result the host cannot take now stops the file
 * rather than being jumped over). Nothing for F: ask the on-demand
 * generator (need_work/F), wait once, look again; report F to the
 * working-set manager (files_no_work/F) when it has no unsent results; tell
 * the host to delete F when no more work will come for it. Then, if the host
 * still wants work: a file of the working set, and the deterministic scan.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server/loc_dirs.h"
#include "server/loc_work.h"
#include "server/sched_int.h"
#include "store/store.h"
#include "volsched/locality.h"
#include "volsched/log.h"
#include "volsched/rng.h"

#define WS_MAX       100000 /* working-set entries read */
#define WS_TTL_MS    2000   /* how long a listing of file_working_set/ is reused */
#define BATCH_MAX    128    /* unsent results read per query */
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
    struct vs_loc_work *work; /* files with work, for the deterministic scan */
    _Atomic uint64_t n_sent, n_deletes, n_need_work, n_waits, n_files_no_work, n_bad, n_searched;
};

static int64_t mono_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
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

/* Inserts name in sorted order; false when it was there already. */
static bool held_insert(struct vs_loc_held *h, struct vs_arena *a, const char *name, double size)
{
    size_t lo = 0, hi = h->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(h->names[mid], name);
        if (c == 0)
            return false;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (h->n == h->cap) {
        size_t ncap = h->cap ? h->cap * 2 : 8;
        const char **nn = vs_arena_alloc(a, ncap * sizeof(*nn));
        double *ns = vs_arena_alloc(a, ncap * sizeof(*ns));
        if (h->n) {
            memcpy(nn, h->names, h->n * sizeof(*nn));
            memcpy(ns, h->sizes, h->n * sizeof(*ns));
        }
        h->names = nn;
        h->sizes = ns;
        h->cap = ncap;
    }
    memmove(&h->names[lo + 1], &h->names[lo], (h->n - lo) * sizeof(*h->names));
    memmove(&h->sizes[lo + 1], &h->sizes[lo], (h->n - lo) * sizeof(*h->sizes));
    h->names[lo] = name;
    h->sizes[lo] = size;
    h->n++;
    return true;
}

void vs_loc_held_add_job(struct vs_loc_held *h, struct vs_arena *a, const struct prep_job *pj)
{
    /* Every input counts for the disk (it is on the host once this reply
     * is handled); the job's other files are the host's only while it runs
     * them, which the client's own disk check covers. */
    for (size_t i = 0; i < pj->n_in; i++)
        if (pj->in_fis[i].name)
            (void)held_insert(h, a, pj->in_fis[i].name, pj->in_fis[i].nbytes);
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
/* One request's pass                                                         */
/* ------------------------------------------------------------------------ */

struct pass {
    struct vs_sched *s;
    struct vs_locality *l;
    struct vs_store *st;
    int64_t hostid, userid;
    vs_send_offer_fn offer;
    void *offer_ctx;
    struct vs_arena *a;
    struct vs_proto_reply *r;
    struct vs_send *x;
    bool waited;   /* the request slept once already */
    bool stop_all; /* the work-send rules want nothing more */
    /* Files searched in this request, so that none is searched twice
     * (a sorted name set like the held one; sizes unused). */
    struct vs_loc_held seen;
    /* Workunits of the jobs this pass sent: another result of one is never
     * for this host (one result per host per workunit), so it is passed
     * over before its XML is parsed. */
    int64_t *wus;
    size_t nwus, capwus;
};

static bool wu_taken(const struct pass *p, int64_t wuid)
{
    for (size_t i = 0; i < p->nwus; i++)
        if (p->wus[i] == wuid)
            return true;
    return false;
}

static void wu_take(struct pass *p, int64_t wuid)
{
    if (p->nwus == p->capwus) {
        size_t ncap = p->capwus ? p->capwus * 2 : 32;
        int64_t *n = vs_arena_alloc(p->a, ncap * sizeof(*n));
        if (p->nwus)
            memcpy(n, p->wus, p->nwus * sizeof(*n));
        p->wus = n;
        p->capwus = ncap;
    }
    p->wus[p->nwus++] = wuid;
}

static bool seen_add(struct pass *p, const char *f)
{
    return held_insert(&p->seen, p->a, f, 0);
}

/* One query's rows. Rows of a workunit this pass already sent a result
 * of are counted but not copied (with target_nresults 2 every other row is
 * one). */
struct batch {
    const struct pass *p; /* NULL: keep every row */
    struct vs_job *jobs;
    size_t n, cap;
    size_t rows;     /* rows the store passed */
    int64_t last_id; /* the last row's result id */
};

static int batch_add(void *ctx, const struct vs_job *job)
{
    struct batch *b = ctx;
    b->rows++;
    b->last_id = job->result.id;
    if (b->n < b->cap && !(b->p && wu_taken(b->p, job->wu.id)))
        vs_job_copy(&b->jobs[b->n++], job);
    return 0;
}

static bool wants(const struct pass *p)
{
    return !p->stop_all && vs_send_wants_more(p->x);
}

static bool is_locality_app(const struct pass *p, int64_t appid)
{
    const struct vs_app *app = vs_sched__find_app(&p->s->cat->cat, appid);
    return app && app->locality_scheduling == VS_LOC_APP_FULL;
}

/* What a search of one file learnt besides what it sent, so that the
 * questions asked after it (does the file have unsent results at all, did
 * the project ever name a workunit after it) need no query of their own
 * when the search already answered them. */
struct search {
    bool stopped;  /* a job the host cannot take now ended the search */
    bool user_has; /* the user holds a result of the file: the file is known */
    bool all_seen; /* the first query saw every unsent result of the file
                    * (nobody left out, from the lowest id, short of its limit) */
    size_t rows;   /* rows that first query passed */
};

/*
 * Sends what it can of file f's unsent results (seed 001's
 * send_results_for_file), filling *out. Returns the number sent.
 */
static size_t send_for_file(struct pass *p, const char *f, struct search *out)
{
    memset(out, 0, sizeof(*out));
    bool *out_stopped = &out->stopped;
    atomic_fetch_add_explicit(&p->l->n_searched, 1, memory_order_relaxed);
    int64_t after = 0;
    if (vs_store_loc_max_sent(p->st, f, p->userid, &after) != 0)
        return 0;
    out->user_has = after > 0;
    /* A user without any result of f (the usual case for a file new to the
     * host) holds none of its workunits: nothing to leave out, and the
     * store's query is then much cheaper. */
    int64_t excl_user = after > 0 && p->x->cfg.one_result_per_user_per_wu ? p->userid : 0;
    int64_t excl_host = after > 0 ? p->hostid : 0;
    size_t sent = 0, tried = 0;
    /* Enough rows for what the reply still has room for, at one row of
     * another result of each workunit taken (target_nresults 2) and a
     * little more: usually one query per file. */
    size_t room = p->x->max_jobs > p->x->njobs ? p->x->max_jobs - p->x->njobs : 0;
    size_t cap = 2 * room + 4 < BATCH_MAX ? 2 * room + 4 : BATCH_MAX;
    struct vs_job *jobs = vs_arena_alloc(p->a, cap * sizeof(*jobs));
    bool more = true; /* the last query may have left rows behind */
    while (more && tried < VS_LOC_MAX_PER_FILE && wants(p) && !*out_stopped) {
        size_t lim = VS_LOC_MAX_PER_FILE - tried < cap ? VS_LOC_MAX_PER_FILE - tried : cap;
        struct batch b = {.p = p, .jobs = jobs, .cap = lim};
        int rc =
            vs_store_loc_unsent(p->st, f, after, excl_user, excl_host, (int)lim, batch_add, &b);
        if (rc == 0 && tried == 0) {
            out->rows = b.rows;
            out->all_seen = after == 0 && b.rows < lim;
        }
        if (rc != 0 || b.rows == 0) {
            for (size_t i = 0; i < b.n; i++)
                vs_job_cleanup(&b.jobs[i]);
            break;
        }
        /* Fewer rows than asked for: there are no more after them, and
         * another query would only say so. */
        more = b.rows >= lim;
        after = b.last_id;
        tried += b.rows;
        for (size_t i = 0; i < b.n; i++) {
            struct vs_cache_job cj = {.job = b.jobs[i], .prep = NULL};
            bool done = *out_stopped || !wants(p) || wu_taken(p, cj.job.wu.id);
            if (!done && is_locality_app(p, cj.job.wu.appid) &&
                vs_sched__prep_job(p->s, &cj) == 0) {
                int64_t wuid = cj.job.wu.id;
                enum vs_offer d = p->offer(p->offer_ctx, &cj);
                if (d == VS_OFFER_TAKEN) {
                    wu_take(p, wuid);
                    sent++;
                    continue; /* the send owns it now */
                }
                /* Another result of a workunit the host or user has is
                 * never theirs: passing it keeps the order. Anything else
                 * may fit later, and jumping over it would break the
                 * invariant (the user's next search starts after the
                 * largest id sent). */
                if (d == VS_OFFER_STOP)
                    p->stop_all = true;
                else if (d == VS_OFFER_SKIP) {
                    *out_stopped = true;
                    /* The rows after this one were not offered: the next
                     * request starts from the user's largest id again. */
                }
            }
            if (cj.prep)
                vs_sched__unprep_job(p->s, cj.prep);
            vs_job_cleanup(&cj.job);
        }
    }
    atomic_fetch_add_explicit(&p->l->n_sent, sent, memory_order_relaxed);
    return sent;
}

static bool any_unsent(struct pass *p, const char *f, const struct search *sr)
{
    /* The search's own first query was this one, with a larger limit. */
    if (sr && sr->all_seen)
        return sr->rows > 0;
    struct vs_job one[1];
    struct batch b = {.jobs = one, .cap = 1};
    int rc = vs_store_loc_unsent(p->st, f, 0, 0, 0, 1, batch_add, &b);
    for (size_t i = 0; i < b.n; i++)
        vs_job_cleanup(&b.jobs[i]);
    /* A failed query says "has work": nothing is reported or deleted on it. */
    return rc != 0 || b.n > 0;
}

static void touch(struct pass *p, enum vs_loc_dir d, const char *f)
{
    int rc = vs_loc_touch(p->l->dir, d, f);
    if (rc)
        VS_LOG(p->l->log, VS_LOG_WARN, "locality: cannot make %s/%s: %s", vs_loc_dir_name(d), f,
               vs_strerror(rc));
}

static void add_delete(struct pass *p, const char *f)
{
    struct vs_proto_reply *r = p->r;
    if (r->n_delete_file_infos >= VS_LOC_MAX_HOST_FILES)
        return;
    const char **d = vs_arena_alloc(p->a, (r->n_delete_file_infos + 1) * sizeof(*d));
    if (r->n_delete_file_infos)
        memcpy(d, r->delete_file_infos, r->n_delete_file_infos * sizeof(*d));
    d[r->n_delete_file_infos++] = vs_arena_strndup(p->a, f, strlen(f));
    r->delete_file_infos = d;
    atomic_fetch_add_explicit(&p->l->n_deletes, 1, memory_order_relaxed);
}

/*
 * The wait of on-demand generation: up to the wait period, until a search
 * of f finds something once the generator removed need_work/f (the
 * transitioner may still be making the new workunits' results then), or
 * the generator made no_work_available/f instead.
 */
static size_t wait_and_search(struct pass *p, const char *f, struct search *out)
{
    p->waited = true;
    atomic_fetch_add_explicit(&p->l->n_waits, 1, memory_order_relaxed);
    int64_t end = mono_ms() + (int64_t)p->l->wait_period * 1000;
    for (;;) {
        int64_t left = end - mono_ms();
        if (left <= 0)
            break;
        struct timespec ts = {0, (left < WAIT_STEP_MS ? left : WAIT_STEP_MS) * 1000000L};
        nanosleep(&ts, NULL);
        if (vs_loc_exists(p->l->dir, VS_LOC_NEED_WORK, f))
            continue;
        size_t n = send_for_file(p, f, out);
        /* Work came, or the generator answered that none will. */
        if (n > 0 || out->stopped || !wants(p) ||
            vs_loc_exists(p->l->dir, VS_LOC_NO_WORK_AVAILABLE, f))
            return n;
    }
    return send_for_file(p, f, out);
}

/* One file the host holds (seed 001: "Assigning work to a host with a file F"). */
static void host_file(struct pass *p, const char *f)
{
    struct search sr;
    size_t sent = send_for_file(p, f, &sr);
    struct vs_loc_file_facts facts = {
        .sent = sent,
        .stopped = sr.stopped,
        .work_needed = wants(p),
        .on_demand = p->l->wait_period > 0,
        .waited = p->waited,
    };
    if (sent > 0 || sr.stopped || !facts.work_needed)
        return;
    /* A file with a result of this user's, or with unsent results, is one
     * the project named workunits after. */
    facts.known = sr.user_has || (sr.all_seen && sr.rows > 0);
    if (!facts.known && (vs_store_loc_file_known(p->st, f, &facts.known) != 0 || !facts.known))
        return;
    facts.no_work_available = vs_loc_exists(p->l->dir, VS_LOC_NO_WORK_AVAILABLE, f);
    facts.any_unsent = any_unsent(p, f, &sr);
    struct vs_loc_file_action act;
    vs_loc_after_search(&facts, &act);
    if (act.need_work) {
        touch(p, VS_LOC_NEED_WORK, f);
        atomic_fetch_add_explicit(&p->l->n_need_work, 1, memory_order_relaxed);
    }
    if (act.wait) {
        facts.sent = wait_and_search(p, f, &sr);
        facts.stopped = sr.stopped;
        facts.waited = true;
        facts.work_needed = wants(p);
        facts.no_work_available = vs_loc_exists(p->l->dir, VS_LOC_NO_WORK_AVAILABLE, f);
        facts.any_unsent = facts.sent > 0 || any_unsent(p, f, &sr);
        vs_loc_after_search(&facts, &act);
    }
    if (act.files_no_work) {
        touch(p, VS_LOC_FILES_NO_WORK, f);
        atomic_fetch_add_explicit(&p->l->n_files_no_work, 1, memory_order_relaxed);
    }
    if (act.delete_file)
        add_delete(p, f);
}

/* The working set as of at most WS_TTL_MS ago; picks one file name (into
 * the arena) and the scan's starting name. Returns false when it is empty. */
struct ws_read {
    struct vs_locality *l;
};

static int ws_add(void *ctx, const char *name)
{
    struct vs_locality *l = ((struct ws_read *)ctx)->l;
    if (l->nws == l->capws) {
        l->capws = l->capws ? l->capws * 2 : 64;
        l->ws = vs_xreallocarray(l->ws, l->capws, sizeof(*l->ws));
    }
    l->ws[l->nws++] = vs_xstrdup(name);
    return 0;
}

static const char *ws_pick(struct pass *p)
{
    struct vs_locality *l = p->l;
    const char *out = NULL;
    pthread_mutex_lock(&l->mu);
    int64_t now = mono_ms();
    if (now - l->ws_loaded_ms > WS_TTL_MS) {
        ws_free(l);
        struct ws_read wr = {l};
        if (vs_loc_list(l->dir, VS_LOC_WORKING_SET, WS_MAX, ws_add, &wr) != 0)
            VS_LOG(l->log, VS_LOG_WARN, "locality: cannot read file_working_set/");
        if (l->nws > 1)
            qsort(l->ws, l->nws, sizeof(*l->ws), cmp_name);
        l->ws_loaded_ms = now;
    }
    if (l->nws > 0) {
        uint64_t rnd = l->sorted ? l->turn++ : vs_rng_u64(&l->rng);
        const char *f = l->ws[vs_loc_pick_working(l->nws, rnd)];
        out = vs_arena_strndup(p->a, f, strlen(f));
    }
    pthread_mutex_unlock(&l->mu);
    return out;
}

/* A file searched for a host that does not hold it. Returns true when the
 * file has unsent results this user may not have (excluded for it). */
static bool new_file(struct pass *p, const char *f)
{
    if (!seen_add(p, f))
        return false;
    struct search sr;
    if (send_for_file(p, f, &sr) > 0 || sr.stopped || !wants(p))
        return false;
    if (!any_unsent(p, f, &sr)) {
        touch(p, VS_LOC_FILES_NO_WORK, f);
        atomic_fetch_add_explicit(&p->l->n_files_no_work, 1, memory_order_relaxed);
        vs_loc_work_drop(p->l->work, f);
        return false;
    }
    return true;
}

/*
 * Seed 001's "Assigning work to a host with no files": a working-set file
 * chosen at random (or in turn), a few times, until one is excluded for
 * this user; then, while the host still wants work, the deterministic
 * scan: the files with unsent results in name order from a working-set
 * name, wrapping around, at most VS_LOC_SCAN_FILES of them (from the
 * listing loc_work.c keeps, at most WORK_TTL_MS old). (BOINC scans
 * whenever work is still needed after the picks: working-set files that ran
 * dry before the manager caught up must not leave a host idle while other
 * files have work.)
 */
static void new_files(struct pass *p)
{
    bool excluded = false;
    const char *start = "";
    for (int t = 0; t < VS_LOC_WS_TRIES && wants(p) && !excluded; t++) {
        const char *f = ws_pick(p);
        if (!f)
            break;
        start = f;
        /* Found without work by an earlier request and not yet dropped by
         * the working-set manager: not worth a search. */
        if (vs_loc_exists(p->l->dir, VS_LOC_FILES_NO_WORK, f))
            continue;
        excluded = new_file(p, f);
    }
    if (!wants(p))
        return;
    const char *names[VS_LOC_SCAN_FILES];
    size_t n =
        vs_loc_work_scan(p->l->work, p->st, mono_ms(), start, p->a, names, VS_LOC_SCAN_FILES);
    for (size_t i = 0; i < n && wants(p); i++)
        (void)new_file(p, names[i]);
}

void vs_locality_send(struct vs_sched *s, struct vs_store *st, const struct vs_proto_request *q,
                      int64_t hostid, int64_t userid, vs_send_offer_fn offer, void *offer_ctx,
                      struct vs_arena *a, struct vs_proto_reply *r, struct vs_send *x)
{
    struct vs_locality *l = s->loc;
    if (!l || !st || !vs_send_wants_more(x))
        return;
    struct pass p = {
        .s = s,
        .l = l,
        .st = st,
        .hostid = hostid,
        .userid = userid,
        .offer = offer,
        .offer_ctx = offer_ctx,
        .a = a,
        .r = r,
        .x = x,
    };
    /* The host's files: only valid names (the rest are counted and ignored,
     * they cannot be ours), each once, at most VS_LOC_MAX_HOST_FILES. */
    size_t n = q->n_sticky_files, bad = 0, k = 0;
    const char **order = NULL;
    if (n > 0) {
        const char **names = vs_arena_alloc(a, n * sizeof(*names));
        for (size_t i = 0; i < n; i++)
            names[i] = q->sticky_files[i].name ? q->sticky_files[i].name : "";
        order = vs_arena_alloc(a, n * sizeof(*order));
        uint64_t rnd = 0;
        if (!l->sorted) {
            pthread_mutex_lock(&l->mu);
            rnd = vs_rng_u64(&l->rng);
            pthread_mutex_unlock(&l->mu);
        }
        k = vs_loc_order_files(names, n, l->sorted, rnd, order, VS_LOC_MAX_HOST_FILES, &bad);
    }
    if (bad)
        atomic_fetch_add_explicit(&l->n_bad, bad, memory_order_relaxed);
    for (size_t i = 0; i < k && wants(&p); i++) {
        (void)seen_add(&p, order[i]);
        host_file(&p, order[i]);
    }
    /* Seed 001 gives a working-set file to a host with none of the files:
     * a host that got jobs for files it holds is not sent a new file as
     * well, to fill the rest of its request (it asks again). Filling it
     * put a third or fourth host on files whose two hosts had just
     * finished theirs: at 2,000 hosts asking for 8 jobs, 3.7 hosts per file
     * against 2.0 (in-turn picks; bench_locality, docs/locality.md). */
    if (wants(&p) && p.nwus == 0)
        new_files(&p);
}
