/*
 * Big input files shared by workunits (an Einstein-like workload), the
 * hosts' copies of them, and locality scheduling over popsim's in-memory
 * project.
 *
 * Each workunit reads one file of file_mb; a host downloads it with the
 * first result of it the host is sent, unless the host has it already.
 * Without locality scheduling the files are ordinary inputs: a host deletes
 * one when no result it holds reads it any more. With locality scheduling
 * they are sticky (seed 001): a host keeps them until the server tells it
 * to delete one, lists them in every request, and the server answers with
 * src/policy/server/loc_pass.c, the pass `volsched serve` runs, over the
 * source below: the files' unsent results in creation order (creation
 * order is id order, as the server's placed ids are), the largest result of
 * a file the host was sent, the trigger flags of the working-set manager
 * (which runs vs_loc_ws_run every POP_WS_PERIOD), and the work-send rules
 * for every job. There is no on-demand generator (a popsim project makes
 * all of a batch's work at once).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "popsim/pop_int.h"
#include "volsched/loc_pass.h"
#include "volsched/locality.h"

static bool bit(const struct pop *p, int32_t f)
{
    return (p->work_bits[(size_t)f / 64] >> ((size_t)f % 64)) & 1;
}

static void set_bit(struct pop *p, int32_t f, bool on)
{
    uint64_t m = 1ULL << ((size_t)f % 64);
    if (on)
        p->work_bits[(size_t)f / 64] |= m;
    else
        p->work_bits[(size_t)f / 64] &= ~m;
}

void vs_pop__files_init(struct pop *p)
{
    vs_arena_init(&p->arena, 16384);
}

void vs_pop__files_cleanup(struct pop *p)
{
    for (size_t i = 0; i < p->nfiles; i++) {
        vs_free(p->files[i].slot);
        vs_free(p->files[i].seq);
    }
    vs_free(p->files);
    vs_free(p->work_bits);
    vs_free(p->ws);
    vs_free(p->nowork);
    vs_arena_cleanup(&p->arena);
}

void vs_pop__files_begin_batch(struct pop *p, int64_t n)
{
    p->batch_nfiles = 0;
    if (p->s->file_mb <= 0)
        return;
    int64_t nf = (n + p->s->wus_per_file - 1) / p->s->wus_per_file;
    p->batch_file0 = (int32_t)p->nfiles;
    p->batch_nfiles = (int32_t)nf;
    size_t need = p->nfiles + (size_t)nf;
    if (need > p->capfiles) {
        p->capfiles = need * 2;
        p->files = vs_xreallocarray(p->files, p->capfiles, sizeof(*p->files));
    }
    size_t words = (p->capfiles + 63) / 64;
    if (words > p->nwords) {
        p->work_bits = vs_xreallocarray(p->work_bits, words, sizeof(*p->work_bits));
        memset(p->work_bits + p->nwords, 0, (words - p->nwords) * sizeof(*p->work_bits));
        p->nwords = words;
    }
    for (int64_t i = 0; i < nf; i++) {
        struct pop_file *f = &p->files[p->nfiles];
        memset(f, 0, sizeof(*f));
        snprintf(f->name, sizeof(f->name), "f%09zu", p->nfiles);
        p->nfiles++;
    }
    p->out->files += nf;
    /* Each file reaches at least target_nresults hosts. */
    p->out->bytes_bound += (double)nf * p->s->target_nresults * p->s->file_mb * 1e6;
}

int32_t vs_pop__file_of(const struct pop *p, int64_t i)
{
    if (p->batch_nfiles == 0)
        return -1;
    int64_t k = p->s->file_order == VS_POP_GROUPED ? i / p->s->wus_per_file : i % p->batch_nfiles;
    return p->batch_file0 + (int32_t)k;
}

/* The file index a name stands for, or -1 (a name popsim never made). */
static int32_t file_index(const struct pop *p, const char *name)
{
    if (name[0] != 'f' || strlen(name) != 10)
        return -1;
    char *end;
    long v = strtol(name + 1, &end, 10);
    if (*end || v < 0 || (size_t)v >= p->nfiles)
        return -1;
    return (int32_t)v;
}

void vs_pop__file_new_result(struct pop *p, int32_t r)
{
    struct pop_result *x = &p->res[r];
    x->seq = ++p->next_seq;
    int32_t fi = p->wus[x->wu].file;
    if (fi < 0)
        return;
    struct pop_file *f = &p->files[fi];
    if (f->n == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 8;
        f->slot = vs_xreallocarray(f->slot, f->cap, sizeof(*f->slot));
        f->seq = vs_xreallocarray(f->seq, f->cap, sizeof(*f->seq));
    }
    f->slot[f->n] = r;
    f->seq[f->n++] = x->seq;
    f->unsent++;
    set_bit(p, fi, true);
}

void vs_pop__file_unsent_gone(struct pop *p, int32_t r)
{
    int32_t fi = p->wus[p->res[r].wu].file;
    if (fi < 0)
        return;
    struct pop_file *f = &p->files[fi];
    if (--f->unsent == 0)
        set_bit(p, fi, false);
}

void vs_pop__file_wu_closed(struct pop *p, int32_t w)
{
    int32_t fi = p->wus[w].file;
    if (fi < 0)
        return;
    struct pop_file *f = &p->files[fi];
    /* Every workunit of the file is finished: no result will be made for
     * it again, and its list goes. */
    if (--f->open_wus == 0) {
        vs_free(f->slot);
        vs_free(f->seq);
        f->slot = NULL;
        f->seq = NULL;
        f->n = f->cap = 0;
    }
}

static int hfile_find(const struct pop_host *h, int32_t fi)
{
    for (int i = 0; i < h->nhf; i++)
        if (h->hf[i].file == fi)
            return i;
    return -1;
}

static struct pop_hfile *hfile(struct pop_host *h, int32_t fi, bool add)
{
    int i = hfile_find(h, fi);
    if (i >= 0)
        return &h->hf[i];
    if (!add)
        return NULL;
    if (h->nhf == h->caphf) {
        h->caphf = h->caphf ? h->caphf * 2 : 4;
        h->hf = vs_xreallocarray(h->hf, (size_t)h->caphf, sizeof(*h->hf));
    }
    struct pop_hfile *e = &h->hf[h->nhf++];
    memset(e, 0, sizeof(*e));
    e->file = fi;
    return e;
}

static void drop_copy(struct pop *p, struct pop_host *h, struct pop_hfile *e)
{
    if (e->held)
        h->held_bytes -= p->s->file_mb * 1e6;
    e->held = false;
    e->del = false;
}

void vs_pop__file_sent(struct pop *p, struct pop_host *h, int32_t r)
{
    const struct pop_result *x = &p->res[r];
    int32_t fi = p->wus[x->wu].file;
    if (fi < 0)
        return;
    struct pop_hfile *e = hfile(h, fi, true);
    if (!e->held) {
        e->held = true;
        h->held_bytes += p->s->file_mb * 1e6;
        p->out->bytes_down += p->s->file_mb * 1e6;
        p->out->file_downloads++;
    }
    e->del = false;
    e->refs++;
    if (x->seq > e->max_seq)
        e->max_seq = x->seq;
}

void vs_pop__file_released(struct pop *p, int32_t r)
{
    const struct pop_result *x = &p->res[r];
    int32_t fi = p->wus[x->wu].file;
    if (fi < 0 || x->host < 0)
        return;
    struct pop_host *h = &p->hosts[x->host];
    struct pop_hfile *e = hfile(h, fi, false);
    if (!e || e->refs <= 0)
        return;
    /* An ordinary input goes with its last result; a sticky one when the
     * server has said so. */
    if (--e->refs == 0 && (!p->s->locality || e->del))
        drop_copy(p, h, e);
}

double vs_pop__file_disk_need(const struct pop *p, const struct pop_host *h, int32_t r)
{
    int32_t fi = p->wus[p->res[r].wu].file;
    double input = p->s->input_mb * 1e6;
    if (fi < 0)
        return 0; /* as before files existed: the scheduler's disk check sees no bound */
    int i = hfile_find(h, fi);
    return input + (i >= 0 && h->hf[i].held ? 0 : p->s->file_mb * 1e6);
}

/* ------------------------------------------------------------------------ */
/* The source of one request's pass                                           */
/* ------------------------------------------------------------------------ */

struct src {
    struct pop *p;
    struct pop_host *h;
    int32_t slot;
    struct vs_sp_state *st;
    int32_t rows[128]; /* the last query's kept rows (result slots) */
    size_t sent;
    int64_t deletes;
};

static bool live_unsent(const struct pop *p, const struct pop_file *f, uint32_t i)
{
    const struct pop_result *x = &p->res[f->slot[i]];
    return x->seq == f->seq[i] && x->state == R_UNSENT;
}

static int s_max_sent(void *ctx, const char *name, int64_t *after)
{
    struct src *c = ctx;
    int32_t fi = file_index(c->p, name);
    int i = fi >= 0 ? hfile_find(c->h, fi) : -1;
    *after = i >= 0 ? c->h->hf[i].max_seq : 0;
    return 0;
}

/* One result per host per workunit (a host is its own user here). */
static bool host_has_wu(const struct pop *p, const struct pop_wu *wu, int64_t hostid)
{
    for (int i = 0; i < wu->nres; i++) {
        const struct pop_result *o = &p->res[wu->res[i]];
        if (o->state != R_UNSENT && o->state != R_CANCELLED && o->hostid == hostid)
            return true;
    }
    return false;
}

static int s_unsent(void *ctx, const struct vs_loc_pass *pass, const char *name, int64_t after,
                    int64_t excl_user, int64_t excl_host, size_t lim, struct vs_loc_rows *out)
{
    struct src *c = ctx;
    const struct pop *p = c->p;
    memset(out, 0, sizeof(*out));
    int32_t fi = file_index(p, name);
    if (fi < 0)
        return 0;
    const struct pop_file *f = &p->files[fi];
    /* The first entry after `after`: seqs ascend. */
    uint32_t lo = 0, hi = f->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (f->seq[mid] <= after)
            lo = mid + 1;
        else
            hi = mid;
    }
    int64_t excl = excl_host ? excl_host : excl_user;
    size_t cap = sizeof(c->rows) / sizeof(c->rows[0]);
    for (uint32_t i = lo; i < f->n && out->rows < lim; i++) {
        if (!live_unsent(p, f, i))
            continue;
        const struct pop_result *x = &p->res[f->slot[i]];
        int64_t wu = x->wu + 1;
        if (excl && host_has_wu(p, &p->wus[x->wu], excl))
            continue;
        out->rows++;
        out->last_id = x->seq;
        if (out->n < cap && !(pass && vs_loc_pass_wu_taken(pass, wu)))
            c->rows[out->n++] = f->slot[i];
    }
    return 0;
}

static enum vs_loc_offer s_offer(void *ctx, size_t i, int64_t *wu)
{
    struct src *c = ctx;
    int32_t r = c->rows[i];
    *wu = c->p->res[r].wu + 1;
    enum vs_sp_reason why = vs_pop__offer(c->p, c->h, c->slot, c->st, r);
    if (why == VS_SP_OK) {
        c->sent++;
        return VS_LOC_TAKEN;
    }
    if (why == VS_SP_DUP_USER || why == VS_SP_DUP_HOST)
        return VS_LOC_PASS;
    return vs_sp_scan_stops(why, vs_pop__varies(c->p)) ? VS_LOC_STOP : VS_LOC_SKIP;
}

static void s_rows_done(void *ctx)
{
    (void)ctx;
}

static bool s_wants(void *ctx)
{
    return vs_sp_work_needed(((struct src *)ctx)->st);
}

static size_t s_room(void *ctx)
{
    const struct vs_sp_state *st = ((struct src *)ctx)->st;
    int left = st->max_jobs_per_rpc - st->njobs_sent;
    return left > 0 ? (size_t)left : 0;
}

static int s_file_known(void *ctx, const char *name, bool *known)
{
    *known = file_index(((struct src *)ctx)->p, name) >= 0;
    return 0;
}

/* The trigger flag d of the named file (the server's trigger directories). */
static bool flag_of(const struct pop *p, enum vs_loc_dir d, const char *name)
{
    int32_t fi = file_index(p, name);
    if (fi < 0)
        return false;
    if (d == VS_LOC_FILES_NO_WORK)
        return p->files[fi].no_work;
    if (d == VS_LOC_WORKING_SET)
        return p->files[fi].in_ws;
    return false; /* no generator: need_work/ and no_work_available/ stay empty */
}

static bool s_exists(void *ctx, enum vs_loc_dir d, const char *name)
{
    return flag_of(((struct src *)ctx)->p, d, name);
}

static void flag_no_work(struct pop *p, int32_t fi)
{
    if (p->files[fi].no_work)
        return;
    p->files[fi].no_work = true;
    if (p->nnowork == p->capnowork) {
        p->capnowork = p->capnowork ? p->capnowork * 2 : 64;
        p->nowork = vs_xreallocarray(p->nowork, p->capnowork, sizeof(*p->nowork));
    }
    p->nowork[p->nnowork++] = fi;
}

static void s_touch(void *ctx, enum vs_loc_dir d, const char *name)
{
    struct pop *p = ((struct src *)ctx)->p;
    int32_t fi = file_index(p, name);
    if (fi >= 0 && d == VS_LOC_FILES_NO_WORK)
        flag_no_work(p, fi);
}

static void s_delete_file(void *ctx, const char *name)
{
    struct src *c = ctx;
    int32_t fi = file_index(c->p, name);
    struct pop_hfile *e = fi >= 0 ? hfile(c->h, fi, false) : NULL;
    if (!e || !e->held)
        return;
    c->deletes++;
    /* The client deletes it once no result it holds reads it. */
    if (e->refs == 0)
        drop_copy(c->p, c->h, e);
    else
        e->del = true;
}

static const char *s_ws_pick(void *ctx)
{
    struct pop *p = ((struct src *)ctx)->p;
    if (p->nws == 0)
        return NULL;
    uint64_t rnd = p->s->locality_sorted ? p->ws_turn++ : vs_rng_u64(&p->rng_run);
    return p->files[p->ws[vs_loc_pick_working(p->nws, rnd)]].name;
}

/* Files with unsent results in index (= name) order after `from`, wrapping
 * (from = -1: from the first). Exposed for its unit test (the empty-word
 * skip near the wrap). */
size_t vs_pop__files_with_work(const struct pop *p, int32_t from, const char **names, size_t max)
{
    size_t n = 0, nf = p->nfiles;
    for (size_t k = 0; k < nf && n < max; k++) {
        size_t fi = ((size_t)(from + 1) + k) % nf;
        /* Skip empty words whole. */
        if (fi % 64 == 0 && fi + 64 <= nf && k + 64 <= nf && p->work_bits[fi / 64] == 0) {
            k += 63;
            continue;
        }
        if (bit(p, (int32_t)fi))
            names[n++] = p->files[fi].name;
    }
    return n;
}

static size_t s_scan(void *ctx, const char *start, const char **names, size_t max)
{
    const struct pop *p = ((struct src *)ctx)->p;
    if (p->nfiles == 0)
        return 0;
    int32_t from = *start ? file_index(p, start) : -1;
    return vs_pop__files_with_work(p, from < 0 ? -1 : from, names, max);
}

static void s_drop_work(void *ctx, const char *name)
{
    (void)ctx;
    (void)name; /* the bitmap is exact: nothing to forget */
}

int vs_pop__locality_send(struct pop *p, struct pop_host *h, int32_t slot, struct vs_sp_state *st)
{
    struct src c = {.p = p, .h = h, .slot = slot, .st = st};
    struct vs_loc_source src = {
        .ctx = &c,
        .max_sent = s_max_sent,
        .unsent = s_unsent,
        .offer = s_offer,
        .rows_done = s_rows_done,
        .wants = s_wants,
        .room = s_room,
        .file_known = s_file_known,
        .exists = s_exists,
        .touch = s_touch,
        .delete_file = s_delete_file,
        .ws_pick = s_ws_pick,
        .scan = s_scan,
        .drop_work = s_drop_work,
    };
    /* The host's sticky files, as its request lists them. */
    const char **names = h->nhf ? vs_arena_alloc(&p->arena, (size_t)h->nhf * sizeof(*names)) : NULL;
    size_t n = 0;
    for (int i = 0; i < h->nhf; i++)
        if (h->hf[i].held && !h->hf[i].del)
            names[n++] = p->files[h->hf[i].file].name;
    struct vs_loc_request rq = {
        .hostid = h->id,
        .userid = h->id,
        .one_result_per_user_per_wu = p->cfg.one_result_per_user_per_wu,
        .sorted = p->s->locality_sorted,
        .rnd = n > 0 && !p->s->locality_sorted ? vs_rng_u64(&p->rng_run) : 0,
        .files = names,
        .nfiles = n,
    };
    struct vs_loc_pass_stats ps;
    vs_loc_pass_run(&src, &rq, &p->arena, &ps);
    p->out->loc_deletes += c.deletes;
    /* Records of files the host neither holds nor runs go: it keeps few. */
    int w = 0;
    for (int i = 0; i < h->nhf; i++)
        if (h->hf[i].held || h->hf[i].refs > 0 || p->files[h->hf[i].file].open_wus > 0)
            h->hf[w++] = h->hf[i];
    h->nhf = w;
    vs_arena_reset(&p->arena);
    return (int)c.sent;
}

/* ------------------------------------------------------------------------ */
/* The working-set manager                                                    */
/* ------------------------------------------------------------------------ */

static int w_list(void *ctx, enum vs_loc_dir d, int (*fn)(void *, const char *), void *fctx)
{
    const struct pop *p = ctx;
    int rc = 0;
    if (d == VS_LOC_FILES_NO_WORK)
        for (size_t i = 0; rc == 0 && i < p->nnowork; i++)
            rc = fn(fctx, p->files[p->nowork[i]].name);
    else if (d == VS_LOC_WORKING_SET)
        for (size_t i = 0; rc == 0 && i < p->nws; i++)
            rc = fn(fctx, p->files[p->ws[i]].name);
    return rc;
}

static void ws_del(struct pop *p, int32_t fi)
{
    size_t w = 0;
    for (size_t i = 0; i < p->nws; i++)
        if (p->ws[i] != fi)
            p->ws[w++] = p->ws[i];
    p->nws = w;
    p->files[fi].in_ws = false;
}

static int w_remove(void *ctx, enum vs_loc_dir d, const char *name)
{
    struct pop *p = ctx;
    int32_t fi = file_index(p, name);
    if (fi < 0)
        return 0;
    if (d == VS_LOC_WORKING_SET && p->files[fi].in_ws) {
        ws_del(p, fi);
    } else if (d == VS_LOC_FILES_NO_WORK && p->files[fi].no_work) {
        p->files[fi].no_work = false;
        size_t w = 0;
        for (size_t i = 0; i < p->nnowork; i++)
            if (p->nowork[i] != fi)
                p->nowork[w++] = p->nowork[i];
        p->nnowork = w;
    }
    return 0;
}

static int w_touch(void *ctx, enum vs_loc_dir d, const char *name)
{
    struct pop *p = ctx;
    int32_t fi = file_index(p, name);
    if (fi < 0)
        return 0;
    if (d == VS_LOC_FILES_NO_WORK) {
        flag_no_work(p, fi);
    } else if (d == VS_LOC_WORKING_SET && !p->files[fi].in_ws) {
        if (p->nws == p->capws) {
            p->capws = p->capws ? p->capws * 2 : 64;
            p->ws = vs_xreallocarray(p->ws, p->capws, sizeof(*p->ws));
        }
        size_t i = p->nws++;
        for (; i > 0 && p->ws[i - 1] > fi; i--)
            p->ws[i] = p->ws[i - 1];
        p->ws[i] = fi;
        p->files[fi].in_ws = true;
    }
    return 0;
}

static bool w_exists(void *ctx, enum vs_loc_dir d, const char *name)
{
    return flag_of(ctx, d, name);
}

static int w_files_with_work(void *ctx, size_t lim, int (*fn)(void *, const char *), void *fctx)
{
    const struct pop *p = ctx;
    int rc = 0;
    for (size_t fi = 0; rc == 0 && lim > 0 && fi < p->nfiles; fi++) {
        if (bit(p, (int32_t)fi)) {
            rc = fn(fctx, p->files[fi].name);
            lim--;
        }
    }
    return rc;
}

void vs_pop__ws_pass(struct pop *p)
{
    const struct vs_pop_scenario *s = p->s;
    size_t target = s->locality_ws_files > 0
                        ? (size_t)s->locality_ws_files
                        : vs_loc_working_set_target(s->hosts, s->target_nresults);
    struct vs_loc_ws_source src = {
        .ctx = p,
        .list = w_list,
        .remove = w_remove,
        .touch = w_touch,
        .exists = w_exists,
        .files_with_work = w_files_with_work,
    };
    struct vs_loc_ws_stats st;
    if (vs_loc_ws_run(&src, target, &st) != 0)
        p->rc = VS_EINTERNAL;
}
