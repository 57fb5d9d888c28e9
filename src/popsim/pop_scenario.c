/*
 * The population scenario language: `name = value` items (separated by
 * commas, blanks or newlines, `#` comments), where a host attribute's value
 * is a number or a distribution:
 *
 *     hosts = 10000
 *     ncpus = choice(1: .2, 2: .35, 4: .3, 8: .15)
 *     gflops = lognormal(3, .5)
 *     on_frac = beta(4, 1.5)
 *     delay_bound = 2d
 *
 * The lexer and the option reader are the ones `volsched sim`'s language
 * uses (volsched/scn.h), so numbers, units, booleans, comments, deprecated
 * names and error positions behave the same in both languages; what is
 * popsim's own is the distributions (a VS_SCN_CUSTOM reader).
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "volsched/popsim.h"
#include "volsched/scn.h"
#include "volsched/sim.h"

static vs_scn_read_fn read_dist_pos, read_dist_frac;

#define O(...) VS_SCN_OPT(struct vs_pop_scenario, __VA_ARGS__)
/* A host attribute: a number or a distribution of positive values or of
 * fractions (lo and hi bound every value it may take; hi 0 = none). */
#define D(n, fn, f, lo, hi)                                                                        \
    {                                                                                              \
        .name = n, .kind = VS_SCN_CUSTOM, .off = offsetof(struct vs_pop_scenario, f), .min = lo,   \
        .max = hi, .read = fn                                                                      \
    }
#define N(n, f, choices)                                                                           \
    {                                                                                              \
        .name = n, .kind = VS_SCN_ENUM, .off = offsetof(struct vs_pop_scenario, f),                \
        .names = choices                                                                           \
    }
/* A deprecated spelling, read as before with a warning. */
#define OLD(...) VS_SCN_OLD(struct vs_pop_scenario, __VA_ARGS__)

static const struct vs_scn_opt opts[] = {
    O("hosts", VS_SCN_COUNT, hosts, 1, VS_POP_MAX_HOSTS),
    D("ncpus", read_dist_pos, ncpus, 1, 1024),
    D("gflops", read_dist_pos, gflops, 0, 0),
    D("on_frac", read_dist_frac, on_frac, 0, 0),
    D("active_frac", read_dist_frac, active_frac, 0, 0),
    D("share", read_dist_frac, share, 0, 0),
    D("error_rate", read_dist_frac, error_rate, 0, 0),
    D("ram_gb", read_dist_pos, ram_gb, 0, 0),
    D("disk_gb", read_dist_pos, disk_gb, 0, 0),
    O("avail_cycle", VS_SCN_HOURS, avail_cycle, 60, 0),
    O("lifetime", VS_SCN_DAYS, lifetime, 0, 0),
    O("min_queue", VS_SCN_HOURS, buffer, 0, 10 * 86400.0),
    O("extra_queue", VS_SCN_HOURS, buffer_extra, 0, 10 * 86400.0),
    O("report_delay", VS_SCN_HOURS, report_delay, 0, 30 * 86400.0),
    O("batches", VS_SCN_COUNT, batches, 1, 1e6),
    O("batch_size", VS_SCN_COUNT, batch_size, 1, VS_POP_MAX_WUS),
    O("batch_interval", VS_SCN_HOURS, batch_interval, 0, 0),
    O("job_hours", VS_SCN_HOURS, job_hours, 1, 0),
    O("job_spread", VS_SCN_FRAC, job_spread, 0, 0.99),
    O("ref_gflops", VS_SCN_REAL, ref_gflops, 0, 0),
    O("delay_bound", VS_SCN_HOURS, delay_bound, 60, 0),
    O("min_quorum", VS_SCN_INT, min_quorum, 1, VS_POP_MAX_RESULTS),
    O("target_nresults", VS_SCN_INT, target_nresults, 1, VS_POP_MAX_RESULTS),
    O("max_total_results", VS_SCN_INT, max_total_results, 1, VS_POP_MAX_RESULTS),
    O("input_mb", VS_SCN_REAL, input_mb, 0, 0),
    O("server_edf_check", VS_SCN_BOOL, server_edf_check, 0, 0),
    O("max_wus_to_send", VS_SCN_COUNT, max_wus_to_send, 1, 1000),
    O("max_wus_in_progress", VS_SCN_COUNT, max_wus_in_progress, 0, 1e6),
    O("daily_result_quota", VS_SCN_COUNT, daily_result_quota, 0, 1e6),
    O("job_cache", VS_SCN_COUNT, job_cache, 1, 100000),
    O("tail_acceleration", VS_SCN_BOOL, tail_acceleration, 0, 0),
    O("tail_frac", VS_SCN_FRAC, tail_frac, 0, 1),
    O("tail_overdue_factor", VS_SCN_REAL, tail_overdue_factor, 1, 100),
    O("tail_min_overdue", VS_SCN_HOURS, tail_min_overdue, 0, 0),
    O("duration", VS_SCN_DAYS, duration, 3600, 3650 * 86400.0),
    O("seed", VS_SCN_SEED, seed, 0, 0),
    O("file_mb", VS_SCN_REAL, file_mb, 0, 0),
    O("wus_per_file", VS_SCN_COUNT, wus_per_file, 1, 100000),
    N("file_order", file_order, vs_pop_file_orders),
    O("locality", VS_SCN_BOOL, locality, 0, 0),
    O("locality_sorted", VS_SCN_BOOL, locality_sorted, 0, 0),
    O("locality_ws_files", VS_SCN_COUNT, locality_ws_files, 0, 1e7),
    N("model", model, vs_pop_models),
    N("client_policy", client_policy, vs_sim_policies),
    /* Deprecated spellings: `volsched sim`'s names are the ones both
     * languages use, and in hours as every time but duration and lifetime. */
    OLD("buffer", VS_SCN_DAYS, buffer, 0, 10 * 86400.0, "min_queue",
        "(in hours unless a unit is given; buffer was in days)"),
    OLD("buffer_extra", VS_SCN_DAYS, buffer_extra, 0, 10 * 86400.0, "extra_queue",
        "(in hours unless a unit is given; buffer_extra was in days)"),
};

const char *const vs_pop_models[] = {"light", "full", NULL};
const char *const vs_pop_file_orders[] = {"interleaved", "grouped", NULL};

#define NOPTS (sizeof(opts) / sizeof(opts[0]))

static struct vs_pop_dist dconst(double v)
{
    return (struct vs_pop_dist){.kind = VS_PD_CONST, .a = v};
}

/*
 * The defaults. They are assumptions in the shape of what BOINC's
 * literature reports for its volunteer population (most hosts have 2 to 8
 * cores; client run time and computing-allowed fractions are high but well
 * below 1 for many hosts; per-core speeds of a few GFLOPS spread over a
 * factor of several), not measurements: docs/popsim.md says so, and every
 * study sets what it depends on.
 */
void vs_pop_scenario_defaults(struct vs_pop_scenario *s)
{
    memset(s, 0, sizeof(*s));
    s->hosts = 1000;
    s->ncpus = (struct vs_pop_dist){
        .kind = VS_PD_CHOICE, .n = 5, .v = {1, 2, 4, 8, 16}, .w = {0.10, 0.30, 0.35, 0.20, 0.05}};
    s->gflops = (struct vs_pop_dist){.kind = VS_PD_LOGNORMAL, .a = 3.0, .b = 0.5};
    s->on_frac = (struct vs_pop_dist){.kind = VS_PD_BETA, .a = 4, .b = 1.5};
    s->active_frac = (struct vs_pop_dist){.kind = VS_PD_BETA, .a = 8, .b = 1};
    s->share = dconst(1);
    s->error_rate = dconst(0);
    s->ram_gb = (struct vs_pop_dist){
        .kind = VS_PD_CHOICE, .n = 4, .v = {4, 8, 16, 32}, .w = {0.2, 0.4, 0.3, 0.1}};
    s->disk_gb = dconst(50);
    s->avail_cycle = 86400;
    s->lifetime = 0;
    s->buffer = 0.1 * 86400;       /* BOINC's work_buf_min_days default */
    s->buffer_extra = 0.5 * 86400; /* BOINC's work_buf_additional_days default */
    s->report_delay = 3600;
    s->batches = 1;
    s->batch_size = 10000;
    s->batch_interval = 86400;
    s->job_hours = 4 * 3600;
    s->ref_gflops = 3.0;
    s->delay_bound = 7 * 86400;
    s->min_quorum = 1;
    s->target_nresults = 1;
    s->max_total_results = 8;
    s->input_mb = 1;
    s->max_wus_to_send = 10;
    s->job_cache = 1000;
    s->tail_frac = 0.1;
    s->tail_overdue_factor = 2;
    s->tail_min_overdue = 600;
    s->wus_per_file = 50;
    s->duration = 30 * 86400;
    s->seed = 1;
}

/* Checks one value of a distribution's support (or a constant) of option
 * o, a host attribute of fractions (frac) or of positive values. */
static int check_value(struct vs_lex *lx, const struct vs_lex_tok *t, const struct vs_scn_opt *o,
                       bool frac, double v)
{
    if (frac && (v < 0 || v > 1))
        return VS_LEX_FAIL_TOK(lx, *t, "%s: must be between 0 and 1", o->name);
    if (!frac && v <= 0)
        return VS_LEX_FAIL_TOK(lx, *t, "%s: must be greater than 0", o->name);
    if (o->max > 0 && (v < o->min || v > o->max))
        return VS_LEX_FAIL_TOK(lx, *t, "%s out of range (%g to %g)", o->name, o->min, o->max);
    return 0;
}

/* Reads NUM into *v and moves on; the caller checks the range. */
static int arg(struct vs_lex *lx, double *v)
{
    struct vs_lex_tok t = lx->cur;
    if (vs_lex_number(lx, &t, VS_LV_REAL, v))
        return lx->rc;
    return vs_lex_next(lx);
}

static int expect(struct vs_lex *lx, enum vs_lex_kind k, const char *what)
{
    if (lx->cur.kind != k)
        return VS_LEX_FAIL_TOK(lx, lx->cur, "expected %s", what);
    return vs_lex_next(lx);
}

/* choice(v: w, ...): weights need not sum to 1. */
static int parse_choice(struct vs_lex *lx, const struct vs_scn_opt *o, bool frac,
                        struct vs_pop_dist *d)
{
    d->kind = VS_PD_CHOICE;
    d->n = 0;
    double total = 0;
    for (;;) {
        if (d->n == VS_POP_MAX_CHOICES)
            return VS_LEX_FAIL_TOK(lx, lx->cur, "choice() takes at most %d values",
                                   VS_POP_MAX_CHOICES);
        struct vs_lex_tok vt = lx->cur;
        double v, w;
        if (arg(lx, &v) || check_value(lx, &vt, o, frac, v) ||
            expect(lx, VS_LEX_COLON, "':' weight"))
            return lx->rc;
        struct vs_lex_tok wt = lx->cur;
        if (arg(lx, &w))
            return lx->rc;
        if (w < 0)
            return VS_LEX_FAIL_TOK(lx, wt, "a weight cannot be negative");
        d->v[d->n] = v;
        d->w[d->n] = w;
        d->n++;
        total += w;
        if (lx->cur.kind != VS_LEX_COMMA)
            break;
        if (vs_lex_next(lx))
            return lx->rc;
    }
    if (total <= 0)
        return VS_LEX_FAIL_TOK(lx, lx->cur, "choice() weights sum to 0");
    return 0;
}

/* NAME(a [, b]) after `attr =`; lx->cur is NAME. */
static int parse_dist(struct vs_lex *lx, const struct vs_scn_opt *o, bool frac,
                      struct vs_pop_dist *d)
{
    static const struct {
        const char *name;
        enum vs_pop_dist_kind kind;
        int nargs;
        bool frac_ok, pos_ok;
    } kinds[] = {
        {"uniform", VS_PD_UNIFORM, 2, true, true}, {"lognormal", VS_PD_LOGNORMAL, 2, false, true},
        {"beta", VS_PD_BETA, 2, true, false},      {"exp", VS_PD_EXP, 1, false, true},
        {"choice", VS_PD_CHOICE, 0, true, true},
    };
    struct vs_lex_tok name = lx->cur;
    size_t k = 0;
    while (k < sizeof(kinds) / sizeof(kinds[0]) && !vs_lex_is(&name, kinds[k].name))
        k++;
    if (k == sizeof(kinds) / sizeof(kinds[0]))
        return VS_LEX_FAIL_TOK(lx, name,
                               "unknown distribution '%.*s' (uniform, lognormal, beta, exp, "
                               "choice)",
                               (int)name.n, name.p);
    if ((frac && !kinds[k].frac_ok) || (!frac && !kinds[k].pos_ok))
        return VS_LEX_FAIL_TOK(lx, name, "%s: %s() does not fit %s", o->name, kinds[k].name,
                               frac ? "a fraction" : "a positive quantity");
    if (vs_lex_next(lx) || expect(lx, VS_LEX_LP, "'(' after the distribution's name"))
        return lx->rc;
    memset(d, 0, sizeof(*d));
    d->kind = kinds[k].kind;
    if (d->kind == VS_PD_CHOICE) {
        if (parse_choice(lx, o, frac, d))
            return lx->rc;
    } else {
        struct vs_lex_tok at = lx->cur, bt = at;
        if (arg(lx, &d->a))
            return lx->rc;
        if (kinds[k].nargs == 2) {
            if (expect(lx, VS_LEX_COMMA, "',' and a second parameter"))
                return lx->rc;
            bt = lx->cur;
            if (arg(lx, &d->b))
                return lx->rc;
        }
        switch (d->kind) {
        case VS_PD_UNIFORM:
            if (check_value(lx, &at, o, frac, d->a) || check_value(lx, &bt, o, frac, d->b))
                return lx->rc;
            if (d->b < d->a)
                return VS_LEX_FAIL_TOK(lx, bt, "uniform(a, b) needs b >= a");
            break;
        case VS_PD_LOGNORMAL:
            if (check_value(lx, &at, o, frac, d->a))
                return lx->rc;
            if (d->b < 0 || d->b > 5)
                return VS_LEX_FAIL_TOK(lx, bt, "lognormal sigma must be in 0..5");
            break;
        case VS_PD_BETA:
            if (d->a <= 0 || d->b <= 0 || d->a > 1000 || d->b > 1000)
                return VS_LEX_FAIL_TOK(lx, at, "beta(a, b) needs 0 < a, b <= 1000");
            break;
        default: /* exp */
            if (check_value(lx, &at, o, frac, d->a))
                return lx->rc;
            break;
        }
    }
    return expect(lx, VS_LEX_RP, "')' to close the distribution");
}

/* A host attribute's value: a number or a distribution. */
static int read_dist(struct vs_lex *lx, const struct vs_scn_opt *o, bool frac, void *dst)
{
    struct vs_lex_tok t = lx->cur;
    struct vs_pop_dist d;
    if (t.kind == VS_LEX_IDENT) {
        if (parse_dist(lx, o, frac, &d))
            return lx->rc;
    } else {
        double v;
        if (arg(lx, &v) || check_value(lx, &t, o, frac, v))
            return lx->rc;
        d = dconst(v);
    }
    memcpy(dst, &d, sizeof(d));
    return 0;
}

/* The VS_SCN_CUSTOM readers of the host attributes. */
static int read_dist_pos(struct vs_lex *lx, const struct vs_scn_opt *o, void *dst)
{
    return read_dist(lx, o, false, dst);
}

static int read_dist_frac(struct vs_lex *lx, const struct vs_scn_opt *o, void *dst)
{
    return read_dist(lx, o, true, dst);
}

/* Rules between parameters, reported at the end of the text. */
static int check_whole(struct vs_lex *lx, const struct vs_pop_scenario *s)
{
    if (s->target_nresults < s->min_quorum)
        return VS_LEX_FAIL_TOK(lx, lx->cur, "target_nresults (%d) is below min_quorum (%d)",
                               s->target_nresults, s->min_quorum);
    if (s->max_total_results < s->target_nresults)
        return VS_LEX_FAIL_TOK(lx, lx->cur, "max_total_results (%d) is below target_nresults (%d)",
                               s->max_total_results, s->target_nresults);
    if ((s->locality || s->locality_sorted || s->locality_ws_files > 0) && s->file_mb <= 0)
        return VS_LEX_FAIL_TOK(lx, lx->cur,
                               "locality scheduling needs big input files: set file_mb above 0");
    return 0;
}

int vs_pop_scenario_parse(const char *text, size_t len, struct vs_pop_scenario *out,
                          struct vs_scn_error *err)
{
    struct vs_lex lx;
    if (vs_lex_start(&lx, text, len, true, err))
        return lx.rc;
    struct vs_pop_scenario s;
    vs_pop_scenario_defaults(&s);
    while (lx.cur.kind != VS_LEX_EOF) {
        struct vs_lex_tok t = lx.cur;
        if (t.kind == VS_LEX_COMMA) {
            if (vs_lex_next(&lx))
                return lx.rc;
            continue;
        }
        if (t.kind != VS_LEX_IDENT)
            return VS_LEX_FAIL_TOK(&lx, t, "expected a parameter name = value");
        const struct vs_scn_opt *o = vs_scn_opt_find(opts, NOPTS, &t);
        if (!o)
            return VS_LEX_FAIL_TOK(&lx, t, "unknown parameter '%.*s'", (int)t.n, t.p);
        if (vs_scn_opt_read(&lx, o, &s))
            return lx.rc;
    }
    if (check_whole(&lx, &s))
        return lx.rc;
    *out = s;
    return 0;
}

static int parse_any(const char *text, size_t len, void *out, struct vs_scn_error *err)
{
    return vs_pop_scenario_parse(text, len, out, err);
}

int vs_pop_scenario_load(const char *path, struct vs_pop_scenario *out, struct vs_scn_error *err)
{
    return vs_scn_load(path, parse_any, out, err);
}
