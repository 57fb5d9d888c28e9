/*
 * Locality scheduling's request pass and working-set pass (see
 * include/volsched/loc_pass.h), over a source.
 *
 * Per file F the host holds (random order, or by name with sorted order):
 * send unsent results of F's workunits in increasing id order, starting
 * after the largest id already sent to this user for F (the seed's
 * invariant: retries, which get new ids, are picked up; a result the host
 * cannot take now stops the file rather than being jumped over). Nothing
 * for F: ask the on-demand generator (need_work/F), wait once, look again;
 * report F to the working-set manager (files_no_work/F) when it has no
 * unsent results; tell the host to delete F when no more work will come for
 * it. Then, if the host got nothing for its files and still wants work: a
 * file of the working set, and the deterministic scan.
 */
#include "volsched/loc_pass.h"

#include <stdlib.h>
#include <string.h>

#include "volsched/locality.h"

#define BATCH_MAX 128 /* unsent results read per query */

bool vs_loc_held_insert(struct vs_loc_held *h, struct vs_arena *a, const char *name, double size)
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

struct vs_loc_pass {
    const struct vs_loc_source *src;
    const struct vs_loc_request *rq;
    struct vs_arena *a;
    struct vs_loc_pass_stats *st;
    bool waited;   /* the request waited once already */
    bool stop_all; /* the work-send rules want nothing more */
    /* Files searched in this request, so that none is searched twice. */
    struct vs_loc_held seen;
    /* Workunits of the jobs this pass sent: another result of one is never
     * for this host (one result per host per workunit), so the source may
     * pass it over before reading it whole. */
    int64_t *wus;
    size_t nwus, capwus;
};

bool vs_loc_pass_wu_taken(const struct vs_loc_pass *p, int64_t wu)
{
    for (size_t i = 0; i < p->nwus; i++)
        if (p->wus[i] == wu)
            return true;
    return false;
}

static void wu_take(struct vs_loc_pass *p, int64_t wu)
{
    if (p->nwus == p->capwus) {
        size_t ncap = p->capwus ? p->capwus * 2 : 32;
        int64_t *n = vs_arena_alloc(p->a, ncap * sizeof(*n));
        if (p->nwus)
            memcpy(n, p->wus, p->nwus * sizeof(*n));
        p->wus = n;
        p->capwus = ncap;
    }
    p->wus[p->nwus++] = wu;
}

static bool wants(const struct vs_loc_pass *p)
{
    return !p->stop_all && p->src->wants(p->src->ctx);
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

/* Sends what it can of file f's unsent results (seed 001's
 * send_results_for_file), filling *out. Returns the number sent. */
static size_t send_for_file(struct vs_loc_pass *p, const char *f, struct search *out)
{
    const struct vs_loc_source *s = p->src;
    memset(out, 0, sizeof(*out));
    p->st->searched++;
    int64_t after = 0;
    if (s->max_sent(s->ctx, f, &after) != 0)
        return 0;
    out->user_has = after > 0;
    /* A user without any result of f (the usual case for a file new to the
     * host) holds none of its workunits: nothing to leave out, and the
     * query is then much cheaper. */
    int64_t excl_user = after > 0 && p->rq->one_result_per_user_per_wu ? p->rq->userid : 0;
    int64_t excl_host = after > 0 ? p->rq->hostid : 0;
    size_t sent = 0, tried = 0;
    /* Enough rows for what the reply still has room for, at one row of
     * another result of each workunit taken (target_nresults 2) and a
     * little more: usually one query per file. */
    size_t room = s->room(s->ctx);
    size_t cap = 2 * room + 4 < BATCH_MAX ? 2 * room + 4 : BATCH_MAX;
    bool more = true; /* the last query may have left rows behind */
    while (more && tried < VS_LOC_MAX_PER_FILE && wants(p) && !out->stopped) {
        size_t lim = VS_LOC_MAX_PER_FILE - tried < cap ? VS_LOC_MAX_PER_FILE - tried : cap;
        struct vs_loc_rows b = {0};
        int rc = s->unsent(s->ctx, p, f, after, excl_user, excl_host, lim, &b);
        if (rc == 0 && tried == 0) {
            out->rows = b.rows;
            out->all_seen = after == 0 && b.rows < lim;
        }
        if (rc != 0 || b.rows == 0) {
            s->rows_done(s->ctx);
            break;
        }
        /* Fewer rows than asked for: there are no more after them, and
         * another query would only say so. */
        more = b.rows >= lim;
        after = b.last_id;
        tried += b.rows;
        for (size_t i = 0; i < b.n && !out->stopped && wants(p); i++) {
            int64_t wu = 0;
            enum vs_loc_offer d = s->offer(s->ctx, i, &wu);
            if (d == VS_LOC_TAKEN) {
                wu_take(p, wu);
                sent++;
            } else if (d == VS_LOC_STOP) {
                p->stop_all = true;
            } else if (d == VS_LOC_SKIP) {
                /* Anything that may fit later stops the file: jumping over
                 * it would break the invariant (the user's next search
                 * starts after the largest id sent). The rows after it
                 * were not offered: the next request starts again from
                 * the user's largest id. */
                out->stopped = true;
            }
        }
        s->rows_done(s->ctx);
    }
    p->st->sent += sent;
    return sent;
}

static bool any_unsent(struct vs_loc_pass *p, const char *f, const struct search *sr)
{
    /* The search's own first query was this one, with a larger limit. */
    if (sr && sr->all_seen)
        return sr->rows > 0;
    const struct vs_loc_source *s = p->src;
    struct vs_loc_rows b = {0};
    int rc = s->unsent(s->ctx, NULL, f, 0, 0, 0, 1, &b);
    s->rows_done(s->ctx);
    /* A failed query says "has work": nothing is reported or deleted on it. */
    return rc != 0 || b.rows > 0;
}

/*
 * The wait of on-demand generation: until a search of f finds something
 * once the generator removed need_work/f (the transitioner may still be
 * making the new workunits' results then), or the generator made
 * no_work_available/f instead, or the wait period ends.
 */
static size_t wait_and_search(struct vs_loc_pass *p, const char *f, struct search *out)
{
    const struct vs_loc_source *s = p->src;
    p->waited = true;
    p->st->waits++;
    for (bool first = true; s->wait_step && s->wait_step(s->ctx, first); first = false) {
        if (s->exists(s->ctx, VS_LOC_NEED_WORK, f))
            continue;
        size_t n = send_for_file(p, f, out);
        /* Work came, or the generator answered that none will. */
        if (n > 0 || out->stopped || !wants(p) || s->exists(s->ctx, VS_LOC_NO_WORK_AVAILABLE, f))
            return n;
    }
    return send_for_file(p, f, out);
}

static void files_no_work(struct vs_loc_pass *p, const char *f)
{
    p->src->touch(p->src->ctx, VS_LOC_FILES_NO_WORK, f);
    p->st->files_no_work++;
}

/* One file the host holds (seed 001: "Assigning work to a host with a file F"). */
static void host_file(struct vs_loc_pass *p, const char *f)
{
    const struct vs_loc_source *s = p->src;
    struct search sr;
    size_t sent = send_for_file(p, f, &sr);
    struct vs_loc_file_facts facts = {
        .sent = sent,
        .stopped = sr.stopped,
        .work_needed = wants(p),
        .on_demand = p->rq->on_demand,
        .waited = p->waited,
    };
    if (sent > 0 || sr.stopped || !facts.work_needed)
        return;
    /* A file with a result of this user's, or with unsent results, is one
     * the project named workunits after. */
    facts.known = sr.user_has || (sr.all_seen && sr.rows > 0);
    if (!facts.known && (s->file_known(s->ctx, f, &facts.known) != 0 || !facts.known))
        return;
    facts.no_work_available = s->exists(s->ctx, VS_LOC_NO_WORK_AVAILABLE, f);
    facts.any_unsent = any_unsent(p, f, &sr);
    struct vs_loc_file_action act;
    vs_loc_after_search(&facts, &act);
    if (act.need_work) {
        s->touch(s->ctx, VS_LOC_NEED_WORK, f);
        p->st->need_work++;
    }
    if (act.wait) {
        facts.sent = wait_and_search(p, f, &sr);
        facts.stopped = sr.stopped;
        facts.waited = true;
        facts.work_needed = wants(p);
        facts.no_work_available = s->exists(s->ctx, VS_LOC_NO_WORK_AVAILABLE, f);
        facts.any_unsent = facts.sent > 0 || any_unsent(p, f, &sr);
        vs_loc_after_search(&facts, &act);
    }
    if (act.files_no_work)
        files_no_work(p, f);
    if (act.delete_file) {
        s->delete_file(s->ctx, f);
        p->st->deletes++;
    }
}

/* A file searched for a host that does not hold it. Returns true when the
 * file has unsent results this user may not have (excluded for it). */
static bool new_file(struct vs_loc_pass *p, const char *f)
{
    if (!vs_loc_held_insert(&p->seen, p->a, f, 0))
        return false;
    struct search sr;
    if (send_for_file(p, f, &sr) > 0 || sr.stopped || !wants(p))
        return false;
    if (!any_unsent(p, f, &sr)) {
        files_no_work(p, f);
        p->src->drop_work(p->src->ctx, f);
        return false;
    }
    return true;
}

/*
 * Seed 001's "Assigning work to a host with no files": a working-set file
 * chosen at random (or in turn), a few times, until one is excluded for
 * this user; then, while the host still wants work, the deterministic
 * scan: the files with unsent results in name order from a working-set
 * name, wrapping around, at most VS_LOC_SCAN_FILES of them. (BOINC scans
 * whenever work is still needed after the picks: working-set files that ran
 * dry before the manager caught up must not leave a host idle while other
 * files have work.)
 */
static void new_files(struct vs_loc_pass *p)
{
    const struct vs_loc_source *s = p->src;
    bool excluded = false;
    const char *start = "";
    for (int t = 0; t < VS_LOC_WS_TRIES && wants(p) && !excluded; t++) {
        const char *f = s->ws_pick(s->ctx);
        if (!f)
            break;
        start = f;
        /* Found without work by an earlier request and not yet dropped by
         * the working-set manager: not worth a search. */
        if (s->exists(s->ctx, VS_LOC_FILES_NO_WORK, f))
            continue;
        excluded = new_file(p, f);
    }
    if (!wants(p))
        return;
    const char *names[VS_LOC_SCAN_FILES];
    size_t n = s->scan(s->ctx, start, names, VS_LOC_SCAN_FILES);
    for (size_t i = 0; i < n && wants(p); i++)
        (void)new_file(p, names[i]);
}

void vs_loc_pass_run(const struct vs_loc_source *src, const struct vs_loc_request *rq,
                     struct vs_arena *a, struct vs_loc_pass_stats *out)
{
    memset(out, 0, sizeof(*out));
    struct vs_loc_pass p = {.src = src, .rq = rq, .a = a, .st = out};
    if (!wants(&p))
        return;
    /* The host's files: only valid names (the rest are counted and ignored,
     * they cannot be ours), each once, at most VS_LOC_MAX_HOST_FILES. */
    size_t k = 0, bad = 0;
    const char **order = NULL;
    if (rq->nfiles > 0) {
        order = vs_arena_alloc(a, rq->nfiles * sizeof(*order));
        k = vs_loc_order_files(rq->files, rq->nfiles, rq->sorted, rq->rnd, order,
                               VS_LOC_MAX_HOST_FILES, &bad);
    }
    out->bad_names = bad;
    for (size_t i = 0; i < k && wants(&p); i++) {
        (void)vs_loc_held_insert(&p.seen, a, order[i], 0);
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

/* ------------------------------------------------------------------------ */
/* The working-set manager                                                    */
/* ------------------------------------------------------------------------ */

/* Names read from one listing, copied: the pass changes the directory. */
struct names {
    struct vs_arena *a;
    const char **v;
    size_t n, cap;
};

static int names_add(void *ctx, const char *name)
{
    struct names *ns = ctx;
    if (ns->n == ns->cap) {
        size_t ncap = ns->cap ? ns->cap * 2 : 32;
        const char **nv = vs_arena_alloc(ns->a, ncap * sizeof(*nv));
        if (ns->n)
            memcpy(nv, ns->v, ns->n * sizeof(*nv));
        ns->v = nv;
        ns->cap = ncap;
    }
    ns->v[ns->n++] = vs_arena_strndup(ns->a, name, strlen(name));
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

struct candidates {
    const struct names *ws; /* sorted */
    struct names *add;
    size_t want;
};

static int candidate(void *ctx, const char *name)
{
    struct candidates *c = ctx;
    if (c->add->n < c->want && !vs_loc_sorted_has(c->ws->v, c->ws->n, name))
        names_add(c->add, name);
    return 0;
}

int vs_loc_ws_run(const struct vs_loc_ws_source *src, size_t target, struct vs_loc_ws_stats *out)
{
    memset(out, 0, sizeof(*out));
    struct vs_arena a;
    vs_arena_init(&a, 16384);
    struct names gone = {.a = &a}, ws = {.a = &a}, add = {.a = &a};
    int rc = src->list(src->ctx, VS_LOC_FILES_NO_WORK, names_add, &gone);
    /* Drop first: the scheduler found no unsent result for these. */
    for (size_t i = 0; rc == 0 && i < gone.n; i++) {
        bool was = src->exists(src->ctx, VS_LOC_WORKING_SET, gone.v[i]);
        rc = src->remove(src->ctx, VS_LOC_WORKING_SET, gone.v[i]);
        if (rc == 0)
            rc = src->remove(src->ctx, VS_LOC_FILES_NO_WORK, gone.v[i]);
        if (rc == 0 && was) {
            out->removed++;
            if (src->changed)
                src->changed(src->ctx, gone.v[i], false);
        }
    }
    if (rc == 0)
        rc = src->list(src->ctx, VS_LOC_WORKING_SET, names_add, &ws);
    if (rc == 0 && ws.n < target) {
        /* Files with work, in name order; the ones already in the set are
         * passed over, so ask for that many more (at most ws.n of the first
         * target files are in the set already). */
        if (ws.n > 1)
            qsort(ws.v, ws.n, sizeof(*ws.v), cmp_name);
        struct candidates c = {&ws, &add, target - ws.n};
        rc = src->files_with_work(src->ctx, target, candidate, &c);
        for (size_t i = 0; rc == 0 && i < add.n; i++) {
            rc = src->touch(src->ctx, VS_LOC_WORKING_SET, add.v[i]);
            if (rc == 0) {
                out->added++;
                if (src->changed)
                    src->changed(src->ctx, add.v[i], true);
            }
        }
    }
    out->size = ws.n + out->added;
    vs_arena_cleanup(&a);
    return rc;
}
