/* Batch tail acceleration in the server (submit_tail.h). */
#include "volsched/submit_tail.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "volsched/alloc.h"
#include "volsched/log.h"
#include "volsched/store_submit.h"

/* Hosts' records are looked at over this window. */
#define TAIL_WINDOW (30 * 86400)

struct host_rec {
    int64_t hostid;
    struct vs_sp_tail_host h;
};

/* One pass's view, swapped in whole. */
struct snap {
    int64_t *batches; /* in their tail, ascending */
    size_t nbatches;
    struct host_rec *hosts; /* ascending hostid */
    size_t nhosts, caphosts;
};

struct vs_submit_tail {
    struct vs_sp_tail_params p;
    pthread_mutex_t mu;
    struct snap cur;
};

static void snap_free(struct snap *s)
{
    vs_free(s->batches);
    vs_free(s->hosts);
    memset(s, 0, sizeof(*s));
}

struct vs_submit_tail *vs_submit_tail_create(const struct vs_sp_tail_params *params)
{
    struct vs_submit_tail *t = VS_NEW(struct vs_submit_tail);
    t->p = *params;
    pthread_mutex_init(&t->mu, NULL);
    return t;
}

void vs_submit_tail_destroy(struct vs_submit_tail *t)
{
    if (!t)
        return;
    snap_free(&t->cur);
    pthread_mutex_destroy(&t->mu);
    vs_free(t);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

bool vs_submit_tail_allows(struct vs_submit_tail *t, int64_t batch, int64_t hostid)
{
    if (!t || !t->p.enabled || batch == 0)
        return true;
    pthread_mutex_lock(&t->mu);
    bool allowed = true;
    if (t->cur.nbatches > 0 &&
        bsearch(&batch, t->cur.batches, t->cur.nbatches, sizeof(int64_t), cmp_i64)) {
        /* host_rec starts with its hostid: the same comparison finds it. */
        const struct host_rec *h =
            bsearch(&hostid, t->cur.hosts, t->cur.nhosts, sizeof(struct host_rec), cmp_i64);
        allowed = h && vs_sp_tail_host_fit(&t->p, &h->h);
    }
    pthread_mutex_unlock(&t->mu);
    return allowed;
}

static int add_host(void *ctx, int64_t hostid, double turn, int64_t nok, int64_t nfail)
{
    struct snap *s = ctx;
    if (s->nhosts == s->caphosts) {
        s->caphosts = s->caphosts ? 2 * s->caphosts : 256;
        s->hosts = vs_xreallocarray(s->hosts, s->caphosts, sizeof(*s->hosts));
    }
    int64_t n = nok + nfail;
    s->hosts[s->nhosts++] = (struct host_rec){
        .hostid = hostid,
        .h = {.turnaround = turn, .error_rate = n > 0 ? (double)nfail / (double)n : 0}};
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct batches_ctx {
    struct vs_store *s;
    const struct vs_sp_tail_params *p;
    int64_t *ids;
    size_t n, cap;
    int rc;
};

static int each_batch(void *ctx, const struct vs_batch *b)
{
    struct batches_ctx *c = ctx;
    if (b->state != VS_BATCH_IN_PROGRESS)
        return 0;
    struct vs_batch_progress pr;
    if ((c->rc = vs_store_batch_progress(c->s, b->id, &pr)) != 0)
        return 1;
    struct vs_sp_tail_batch tb = {.njobs = pr.njobs,
                                  .nunfinished = pr.njobs - pr.ndone - pr.nerror};
    if (!vs_sp_tail_active(c->p, &tb))
        return 0;
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 16;
        c->ids = vs_xreallocarray(c->ids, c->cap, sizeof(*c->ids));
    }
    c->ids[c->n++] = b->id;
    return 0;
}

/* The overdue instances of one tail batch. */
struct out_ctx {
    const struct vs_sp_tail_params *p;
    const struct snap *snap;
    double turn_q;
    int64_t now;
    int64_t *wus; /* asked for this pass (one per job) */
    size_t nwus, capwus;
};

static int each_out(void *ctx, const struct vs_batch_out *o)
{
    struct out_ctx *c = ctx;
    const struct host_rec *h =
        bsearch(&o->hostid, c->snap->hosts, c->snap->nhosts, sizeof(struct host_rec), cmp_i64);
    double expected = h && h->h.turnaround > 0 ? h->h.turnaround : c->turn_q;
    int extra = o->target_nresults - o->min_quorum;
    if (!vs_sp_tail_overdue(c->p, (double)c->now, (double)o->sent_time, expected, extra))
        return 0;
    if (c->nwus == c->capwus) {
        c->capwus = c->capwus ? 2 * c->capwus : 64;
        c->wus = vs_xreallocarray(c->wus, c->capwus, 2 * sizeof(*c->wus));
    }
    c->wus[2 * c->nwus] = o->wuid;
    c->wus[2 * c->nwus + 1] = o->target_nresults;
    c->nwus++;
    return 0;
}

int vs_submit_tail_pass(struct vs_submit_tail *t, struct vs_store *s, int64_t now,
                        struct vs_log *log, struct vs_submit_tail_stats *out_stats)
{
    struct vs_submit_tail_stats st;
    memset(&st, 0, sizeof(st));
    if (!t->p.enabled) {
        if (out_stats)
            *out_stats = st;
        return 0;
    }
    struct snap ns;
    memset(&ns, 0, sizeof(ns));
    struct batches_ctx bc = {.s = s, .p = &t->p};
    int rc = vs_store_batches_of_user(s, 0, each_batch, &bc);
    if (rc == 1)
        rc = bc.rc;
    ns.batches = bc.ids;
    ns.nbatches = bc.n;
    if (rc == 0 && ns.nbatches > 0)
        rc = vs_store_host_records(s, now - TAIL_WINDOW, add_host, &ns);
    /* The quantile of the hosts' turnaround, for every host's record. */
    double q = 0;
    if (rc == 0 && ns.nhosts > 0) {
        double *tv = vs_xcalloc(ns.nhosts, sizeof(*tv));
        size_t n = 0;
        for (size_t i = 0; i < ns.nhosts; i++)
            if (ns.hosts[i].h.turnaround > 0)
                tv[n++] = ns.hosts[i].h.turnaround;
        if (n > 0) {
            qsort(tv, n, sizeof(*tv), cmp_double);
            q = tv[(size_t)floor(t->p.fast_quantile * (double)(n - 1))];
        }
        vs_free(tv);
        for (size_t i = 0; i < ns.nhosts; i++) {
            ns.hosts[i].h.turnaround_q = q;
            st.hosts_fit += vs_sp_tail_host_fit(&t->p, &ns.hosts[i].h);
        }
    }
    /* Overdue instances of the tail's jobs: one more instance each. */
    struct out_ctx oc = {.p = &t->p, .snap = &ns, .turn_q = q, .now = now};
    for (size_t i = 0; rc == 0 && i < ns.nbatches; i++)
        rc = vs_store_batch_results_out(s, ns.batches[i], each_out, &oc);
    if (rc == 0 && oc.nwus > 0 && (rc = vs_store_begin(s)) == 0) {
        for (size_t i = 0; rc == 0 && i < oc.nwus; i++) {
            bool made = false;
            rc = vs_store_wu_add_instance(s, oc.wus[2 * i], (int)oc.wus[2 * i + 1], now, &made);
            st.replicas += made;
        }
        rc = rc ? (vs_store_rollback(s), rc) : vs_store_commit(s);
    }
    vs_free(oc.wus);
    if (rc) {
        snap_free(&ns);
        return rc;
    }
    st.tail_batches = (int64_t)ns.nbatches;
    st.turnaround_q = q;
    pthread_mutex_lock(&t->mu);
    struct snap old = t->cur;
    t->cur = ns;
    pthread_mutex_unlock(&t->mu);
    snap_free(&old);
    if (st.tail_batches > 0)
        VS_LOG(log, VS_LOG_INFO,
               "tail: %lld batches in their tail, %lld hosts fit (turnaround quantile %.0f s), "
               "%lld more instances of overdue jobs",
               (long long)st.tail_batches, (long long)st.hosts_fit, q, (long long)st.replicas);
    if (out_stats)
        *out_stats = st;
    return 0;
}
