/*
 * Job cache: a compact array of present jobs plus a hash set of every result
 * id the cache knows (present or checked out). See cache.h.
 */
#include "server/cache.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "volsched/alloc.h"

struct vs_cache {
    pthread_mutex_t mu;
    /* [first, first + npresent) present, each heap-allocated, in order.
     * Taking the first job (the usual case) only moves `first`: shifting
     * thousands of pointers on every take cost ~30 k instructions per RPC
     * under the lock. */
    struct vs_cache_job **slots;
    size_t nslots, first, npresent, nchecked_out;
    /* Open addressing, linear probing, backward-shift deletion; 0 = empty. */
    int64_t *known;
    size_t known_cap; /* power of two */
    size_t nknown;
    struct vs_job_key scan_after; /* next refill starts after this position */
    int64_t newest;               /* largest result id the feeder has looked at */
    bool rescan;                  /* an UNSENT result was let go: scan from the start again */
    uint64_t loaded, taken, dropped;
    vs_cache_prep_fn prep;
    vs_cache_unprep_fn unprep;
    vs_cache_keep_fn keep;
    void *ctx;
    /* The refill's page of rows, kept between refills: allocating megabytes
     * anew each time made glibc grow and trim the heap (page faults) on
     * every refill. Taken out (NULL) while a refill uses it. */
    struct vs_cache_job *page;
    size_t page_cap;
    /* Leases (vs_cache_set_lease): owner 0 = none. renew_at: when the
     * present jobs' leases are renewed next; rescan_at: when the scan
     * starts over next, to find what a dead instance leased. */
    int64_t lease_owner;
    int lease_secs;
    int64_t renew_at, rescan_at;
    uint64_t lost; /* rows another instance leased first, or whose lease ran out */
    uint64_t scanned, rescans;
};

static size_t hash_id(int64_t id, size_t cap)
{
    uint64_t x = (uint64_t)id * 0x9E3779B97F4A7C15ull;
    return (size_t)(x >> 17) & (cap - 1);
}

static bool known_has(const struct vs_cache *c, int64_t id)
{
    for (size_t i = hash_id(id, c->known_cap);; i = (i + 1) & (c->known_cap - 1)) {
        if (c->known[i] == id)
            return true;
        if (c->known[i] == 0)
            return false;
    }
}

static void known_insert_raw(int64_t *tab, size_t cap, int64_t id)
{
    size_t i = hash_id(id, cap);
    while (tab[i] != 0 && tab[i] != id)
        i = (i + 1) & (cap - 1);
    tab[i] = id;
}

static void known_add(struct vs_cache *c, int64_t id)
{
    if ((c->nknown + 1) * 2 > c->known_cap) {
        size_t ncap = c->known_cap * 2;
        int64_t *nt = vs_xcalloc(ncap, sizeof(*nt));
        for (size_t i = 0; i < c->known_cap; i++)
            if (c->known[i])
                known_insert_raw(nt, ncap, c->known[i]);
        vs_free(c->known);
        c->known = nt;
        c->known_cap = ncap;
    }
    if (!known_has(c, id)) {
        known_insert_raw(c->known, c->known_cap, id);
        c->nknown++;
    }
}

static void known_del(struct vs_cache *c, int64_t id)
{
    size_t mask = c->known_cap - 1;
    size_t i = hash_id(id, c->known_cap);
    while (c->known[i] != id) {
        if (c->known[i] == 0)
            return;
        i = (i + 1) & mask;
    }
    /* Backward shift: move later members of the probe run into the hole. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; c->known[j] != 0; j = (j + 1) & mask) {
        size_t home = hash_id(c->known[j], c->known_cap);
        /* j may move to hole if home is not cyclically in (hole, j]. */
        bool in_range = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!in_range) {
            c->known[hole] = c->known[j];
            hole = j;
        }
    }
    c->known[hole] = 0;
    c->nknown--;
}

static void job_free(struct vs_cache *c, struct vs_cache_job *j)
{
    if (j->prep && c->unprep)
        c->unprep(c->ctx, j->prep);
    j->prep = NULL;
    vs_job_cleanup(&j->job);
}

/* True when a goes before b in the feeder's order: priority (higher
 * first), then result id. */
static bool before(const struct vs_cache_job *a, const struct vs_cache_job *b)
{
    const struct vs_result *x = &a->job.result, *y = &b->job.result;
    return x->priority != y->priority ? x->priority > y->priority : x->id < y->id;
}

/* Inserts a job among the present ones (npresent < nslots) at its place in
 * the feeder's order, so that takers meet higher priorities first; moves
 * the present ones to the front of the array first when the end is
 * reached. A refill's rows usually go last (the scan is in this order). */
static void append_slot(struct vs_cache *c, struct vs_cache_job *slot)
{
    if (c->first + c->npresent == c->nslots) {
        memmove(c->slots, &c->slots[c->first], c->npresent * sizeof(*c->slots));
        c->first = 0;
    }
    struct vs_cache_job **base = &c->slots[c->first];
    size_t lo = 0, hi = c->npresent;
    if (hi > 0 && before(slot, base[hi - 1])) {
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (before(base[mid], slot))
                lo = mid + 1;
            else
                hi = mid;
        }
        memmove(&base[lo + 1], &base[lo], (c->npresent - lo) * sizeof(*base));
    } else {
        lo = hi;
    }
    base[lo] = slot;
    c->npresent++;
}

struct vs_cache *vs_cache_create(size_t nslots, vs_cache_prep_fn prep, vs_cache_unprep_fn unprep,
                                 void *ctx)
{
    struct vs_cache *c = VS_NEW(struct vs_cache);
    c->prep = prep;
    c->unprep = unprep;
    c->ctx = ctx;
    pthread_mutex_init(&c->mu, NULL);
    c->nslots = nslots ? nslots : 1000;
    c->slots = vs_xcalloc(c->nslots, sizeof(*c->slots));
    c->known_cap = 1024;
    while (c->known_cap < c->nslots * 4)
        c->known_cap *= 2;
    c->known = vs_xcalloc(c->known_cap, sizeof(*c->known));
    c->scan_after.priority = VS_JOB_KEY_TOP_PRIORITY;
    return c;
}

void vs_cache_set_keep(struct vs_cache *c, vs_cache_keep_fn keep)
{
    c->keep = keep;
}

struct page {
    const struct vs_cache *c;
    struct vs_cache_job *jobs;
    size_t n, max;
    size_t rows; /* rows the store passed, loaded or not */
};

void vs_cache_set_lease(struct vs_cache *c, int64_t owner, int secs)
{
    pthread_mutex_lock(&c->mu);
    c->lease_owner = owner;
    c->lease_secs = secs > 0 ? secs : 60;
    c->renew_at = c->rescan_at = 0;
    pthread_mutex_unlock(&c->mu);
}

/* Takes the present job with result id `id` out of the cache and frees it
 * (its lease is gone: the store holds it for someone else now). */
static void drop_present(struct vs_cache *c, int64_t id)
{
    for (size_t i = c->first; i < c->first + c->npresent; i++) {
        if (c->slots[i]->job.result.id != id)
            continue;
        struct vs_cache_job *j = c->slots[i];
        memmove(&c->slots[i], &c->slots[i + 1],
                (c->first + c->npresent - i - 1) * sizeof(*c->slots));
        c->npresent--;
        if (c->npresent == 0)
            c->first = 0;
        known_del(c, id);
        c->lost++;
        job_free(c, j);
        vs_free(j);
        return;
    }
}

/* Renews the leases of the present jobs; those whose lease could not be
 * renewed (another instance holds them after ours ran out, or they are no
 * longer UNSENT) leave the cache. Jobs checked out are in a request that
 * claims them within moments, under the lease they had. */
static int renew_leases(struct vs_cache *c, struct vs_store *s, int64_t now)
{
    pthread_mutex_lock(&c->mu);
    size_t n = c->npresent;
    int64_t *ids = vs_xcalloc(n ? n : 1, sizeof(*ids));
    for (size_t i = 0; i < n; i++)
        ids[i] = c->slots[c->first + i]->job.result.id;
    int64_t owner = c->lease_owner, until = now + c->lease_secs;
    pthread_mutex_unlock(&c->mu);
    bool *ok = vs_xcalloc(n ? n : 1, sizeof(*ok));
    int rc = vs_store_results_lease(s, owner, now, until, ids, n, ok, NULL);
    if (rc == 0) {
        pthread_mutex_lock(&c->mu);
        for (size_t i = 0; i < n; i++)
            if (!ok[i])
                drop_present(c, ids[i]);
        pthread_mutex_unlock(&c->mu);
    }
    vs_free(ok);
    vs_free(ids);
    return rc;
}

/* Leases the rows of the page the refill means to load (skip[k] == 0);
 * those another instance holds get skip[k] = lost. */
static int lease_page(struct vs_cache *c, struct vs_store *s, int64_t now, struct page *p,
                      unsigned char *skip, unsigned char lost)
{
    int64_t *ids = vs_xcalloc(p->n ? p->n : 1, sizeof(*ids));
    size_t *at = vs_xcalloc(p->n ? p->n : 1, sizeof(*at));
    size_t n = 0;
    for (size_t k = 0; k < p->n; k++)
        if (!skip[k]) {
            at[n] = k;
            ids[n++] = p->jobs[k].job.result.id;
        }
    bool *ok = vs_xcalloc(n ? n : 1, sizeof(*ok));
    int rc = vs_store_results_lease(s, c->lease_owner, now, now + c->lease_secs, ids, n, ok, NULL);
    size_t nlost = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (!ok[i]) {
            skip[at[i]] = lost;
            nlost++;
        }
    if (nlost) {
        pthread_mutex_lock(&c->mu);
        c->lost += nlost;
        pthread_mutex_unlock(&c->mu);
    }
    vs_free(ok);
    vs_free(at);
    vs_free(ids);
    return rc;
}

void vs_cache_destroy(struct vs_cache *c)
{
    if (!c)
        return;
    for (size_t i = c->first; i < c->first + c->npresent; i++) {
        job_free(c, c->slots[i]);
        vs_free(c->slots[i]);
    }
    vs_free(c->slots);
    vs_free(c->known);
    vs_free(c->page);
    pthread_mutex_destroy(&c->mu);
    vs_free(c);
}

static int page_add(void *ctx, const struct vs_job *job)
{
    struct page *p = ctx;
    p->rows++;
    if (p->c->keep && !p->c->keep(p->c->ctx, job))
        return 0;
    if (p->n < p->max) {
        p->jobs[p->n].prep = NULL;
        vs_job_copy(&p->jobs[p->n++].job, job);
    }
    return 0;
}

/* Keeps the larger of the cache's page and this one; frees the other. */
static void page_give_back(struct vs_cache *c, struct vs_cache_job *page, size_t cap)
{
    pthread_mutex_lock(&c->mu);
    if (cap > c->page_cap) {
        struct vs_cache_job *old = c->page;
        c->page = page;
        c->page_cap = cap;
        page = old;
    }
    pthread_mutex_unlock(&c->mu);
    vs_free(page);
}

int vs_cache_refill(struct vs_cache *c, struct vs_store *s, size_t *out_added)
{
    return vs_cache_refill_at(c, s, (int64_t)time(NULL), out_added);
}

int vs_cache_refill_at(struct vs_cache *c, struct vs_store *s, int64_t now, size_t *out_added)
{
    pthread_mutex_lock(&c->mu);
    int64_t owner = c->lease_owner;
    bool renew = owner != 0 && now >= c->renew_at;
    if (renew)
        c->renew_at = now + (c->lease_secs / 3 > 0 ? c->lease_secs / 3 : 1);
    /* What another instance leased and never sent comes back when its
     * lease ends, behind the scan: look from the top again now and then. */
    if (owner != 0 && now >= c->rescan_at) {
        c->rescan_at = now + (c->lease_secs / 2 > 0 ? c->lease_secs / 2 : 1);
        c->rescan = true;
    }
    pthread_mutex_unlock(&c->mu);
    if (renew) {
        int rrc = renew_leases(c, s, now);
        if (rrc != 0)
            return rrc;
    }
    pthread_mutex_lock(&c->mu);
    size_t free_slots = c->nslots - c->npresent;
    struct vs_job_key after = c->scan_after;
    int64_t newest = c->newest;
    pthread_mutex_unlock(&c->mu);
    size_t added = 0;
    /* A nearly full cache is not worth a query: refill in batches. */
    if (free_slots == 0 || free_slots * 8 < c->nslots)
        goto done;
    /* New work above the scan's priority is behind the scan: start over
     * (rows already known are skipped). The first time, only learn where
     * the table ends: the scan starts at the top anyway. */
    {
        int64_t max_id;
        bool have = false;
        int prio = 0;
        int rc = vs_store_unsent_newer(s, newest ? newest : INT64_MAX, &max_id, &have, &prio);
        if (rc != 0)
            return rc;
        if (have && prio > after.priority) {
            after.priority = VS_JOB_KEY_TOP_PRIORITY;
            after.id = 0;
        }
        pthread_mutex_lock(&c->mu);
        if (max_id > c->newest)
            c->newest = max_id;
        pthread_mutex_unlock(&c->mu);
    }
    /* Read a page a bit larger than the gap: some rows may be known already. */
    struct page p = {.c = c, .max = free_slots + free_slots / 2 + 16};
    /* Not zeroed: page_add fills every entry it hands out, and zeroing
     * a page of these large rows cost more than the rest of the refill. */
    pthread_mutex_lock(&c->mu);
    p.jobs = c->page;
    size_t cap = c->page_cap;
    c->page = NULL;
    c->page_cap = 0;
    pthread_mutex_unlock(&c->mu);
    if (cap < p.max) {
        vs_free(p.jobs);
        p.jobs = vs_xreallocarray(NULL, p.max, sizeof(*p.jobs));
        cap = p.max;
    }
    struct vs_job_key last = after;
    int rc = vs_store_jobs_leasable(s, &after, (int)p.max, owner, owner ? now : INT64_MAX, page_add,
                                    &p, &last);
    if (rc != 0) {
        for (size_t i = 0; i < p.n; i++)
            job_free(c, &p.jobs[i]);
        page_give_back(c, p.jobs, cap);
        return rc;
    }
    pthread_mutex_lock(&c->mu);
    c->scanned += p.rows;
    pthread_mutex_unlock(&c->mu);
    /* Rows the cache already knows are dropped here, so that prep (which
     * parses XML) runs only for new ones, outside the lock. */
    /* Rows past the free slots are not prepared either: the scan stops
     * before them and reads them again next time. */
    enum { KEEP = 0, KNOWN, NO_ROOM, LOST };
    unsigned char *skip = vs_xcalloc(p.n ? p.n : 1, sizeof(*skip));
    pthread_mutex_lock(&c->mu);
    size_t room = c->nslots - c->npresent;
    for (size_t k = 0; k < p.n; k++) {
        if (known_has(c, p.jobs[k].job.result.id))
            skip[k] = KNOWN;
        else if (room == 0)
            skip[k] = NO_ROOM;
        else
            room--;
    }
    pthread_mutex_unlock(&c->mu);
    /* Leased before prep (which parses XML): a row another instance holds
     * is passed over like a known one, and the scan moves on past it. */
    if (owner != 0) {
        rc = lease_page(c, s, now, &p, skip, LOST);
        if (rc != 0) {
            for (size_t k = 0; k < p.n; k++)
                job_free(c, &p.jobs[k]);
            page_give_back(c, p.jobs, cap);
            vs_free(skip);
            return rc;
        }
    }
    for (size_t k = 0; k < p.n && c->prep; k++) {
        if (!skip[k] && c->prep(c->ctx, &p.jobs[k]) != 0)
            p.jobs[k].job.result.id = -p.jobs[k].job.result.id; /* marks "drop" */
    }
    pthread_mutex_lock(&c->mu);
    size_t i = 0;
    for (; i < p.n; i++) {
        struct vs_cache_job *j = &p.jobs[i];
        if (skip[i] == NO_ROOM)
            break;
        if (skip[i] == KNOWN || skip[i] == LOST) {
            job_free(c, j);
            continue;
        }
        if (j->job.result.id < 0) {
            /* Keep it known so that later refills skip it instead of
             * preparing (and logging) the same broken row again. */
            if (!known_has(c, -j->job.result.id)) {
                known_add(c, -j->job.result.id);
                c->dropped++;
            }
            job_free(c, j);
            continue;
        }
        if (known_has(c, j->job.result.id)) {
            job_free(c, j);
            continue;
        }
        if (c->npresent == c->nslots)
            break;
        struct vs_cache_job *slot = vs_xmalloc(sizeof(*slot));
        *slot = *j; /* moves the heap strings */
        append_slot(c, slot);
        known_add(c, j->job.result.id);
        c->loaded++;
        added++;
    }
    /* The scan moves forward through result ids: new results (made by the
     * transitioner) have higher ids, so a short page just means "caught
     * up" and the next step continues from there. Only when a known UNSENT
     * result was let go (put back into a full cache, or forgotten unsent)
     * does the scan start over, once. Rows that did not fit are read again
     * next time (the scan resumes at the last one loaded). */
    if (i < p.n) {
        if (i > 0) {
            c->scan_after.priority = p.jobs[i - 1].job.result.priority;
            c->scan_after.id = llabs(p.jobs[i - 1].job.result.id);
        } else {
            c->scan_after = after;
        }
    } else if (p.rows < p.max && c->rescan) {
        c->scan_after.priority = VS_JOB_KEY_TOP_PRIORITY;
        c->scan_after.id = 0;
        c->rescan = false;
        c->rescans++;
    } else {
        c->scan_after = last;
    }
    pthread_mutex_unlock(&c->mu);
    for (; i < p.n; i++)
        job_free(c, &p.jobs[i]);
    page_give_back(c, p.jobs, cap);
    vs_free(skip);
done:
    if (out_added)
        *out_added = added;
    return 0;
}

size_t vs_cache_take(struct vs_cache *c, vs_cache_pick_fn pick, void *ctx, struct vs_cache_job *out,
                     size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&c->mu);
    size_t i = 0;
    while (i < c->npresent && n < max) {
        struct vs_cache_job **at = &c->slots[c->first + i];
        enum vs_cache_pick d = pick(ctx, *at);
        if (d == VS_PICK_STOP)
            break;
        if (d == VS_PICK_SKIP) {
            i++;
            continue;
        }
        out[n++] = **at;
        vs_free(*at);
        /* Keep slot order (priority/id order from the store) stable: close
         * the gap from whichever side is shorter. */
        size_t after = c->npresent - i - 1;
        if (i <= after) {
            memmove(&c->slots[c->first + 1], &c->slots[c->first], i * sizeof(*c->slots));
            c->first++;
        } else {
            memmove(at, at + 1, after * sizeof(*c->slots));
        }
        c->npresent--;
        if (c->npresent == 0)
            c->first = 0;
        c->nchecked_out++;
        c->taken++;
        if (d == VS_PICK_TAKE_STOP)
            break;
    }
    pthread_mutex_unlock(&c->mu);
    return n;
}

void vs_cache_put_back(struct vs_cache *c, struct vs_cache_job *job)
{
    pthread_mutex_lock(&c->mu);
    if (c->nchecked_out > 0)
        c->nchecked_out--;
    if (c->npresent < c->nslots) {
        struct vs_cache_job *slot = vs_xmalloc(sizeof(*slot));
        *slot = *job;
        memset(job, 0, sizeof(*job));
        append_slot(c, slot);
    } else {
        /* No room: forget it; a later rescan reads it again from the store. */
        known_del(c, job->job.result.id);
        c->rescan = true;
        job_free(c, job);
    }
    pthread_mutex_unlock(&c->mu);
}

void vs_cache_forget(struct vs_cache *c, struct vs_cache_job *job, bool still_unsent)
{
    pthread_mutex_lock(&c->mu);
    if (c->nchecked_out > 0)
        c->nchecked_out--;
    known_del(c, job->job.result.id);
    if (still_unsent)
        c->rescan = true;
    pthread_mutex_unlock(&c->mu);
    job_free(c, job);
}

void vs_cache_get_stats(struct vs_cache *c, struct vs_cache_stats *out_stats)
{
    pthread_mutex_lock(&c->mu);
    out_stats->present = c->npresent;
    out_stats->checked_out = c->nchecked_out;
    out_stats->nslots = c->nslots;
    out_stats->loaded = c->loaded;
    out_stats->taken = c->taken;
    out_stats->dropped = c->dropped;
    out_stats->lost = c->lost;
    out_stats->scanned = c->scanned;
    out_stats->rescans = c->rescans;
    pthread_mutex_unlock(&c->mu);
}
