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
 * The lexer is the one `volsched sim` uses (src/sim/scn_lex.c), so numbers,
 * units, comments and error positions behave the same in both languages.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "sim/scn_lex.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/popsim.h"
#include "volsched/sim.h"

enum pkind {
    P_COUNT,     /* int64_t */
    P_INT,       /* int */
    P_BOOL,      /* bool */
    P_REAL,      /* double, > 0 */
    P_FRAC,      /* double, 0..1 */
    P_TIME_H,    /* double seconds, hours by default */
    P_TIME_D,    /* double seconds, days by default */
    P_SEED,      /* uint64_t */
    P_DIST_POS,  /* a distribution of positive values */
    P_DIST_FRAC, /* a distribution of fractions */
    P_NAME,      /* int: the index of one of names[] (an enum) */
};

struct popt {
    const char *name;
    enum pkind kind;
    size_t off;
    double min, max;          /* for numbers, after unit conversion; max 0 = none */
    const char *const *names; /* P_NAME's choices, NULL-terminated */
};

#define O(n, k, f, lo, hi)                                                                         \
    {                                                                                              \
        n, k, offsetof(struct vs_pop_scenario, f), lo, hi, NULL                                    \
    }
#define N(n, f, names)                                                                             \
    {                                                                                              \
        n, P_NAME, offsetof(struct vs_pop_scenario, f), 0, 0, names                                \
    }

static const struct popt opts[] = {
    O("hosts", P_COUNT, hosts, 1, VS_POP_MAX_HOSTS),
    O("ncpus", P_DIST_POS, ncpus, 1, 1024),
    O("gflops", P_DIST_POS, gflops, 0, 0),
    O("on_frac", P_DIST_FRAC, on_frac, 0, 0),
    O("active_frac", P_DIST_FRAC, active_frac, 0, 0),
    O("share", P_DIST_FRAC, share, 0, 0),
    O("error_rate", P_DIST_FRAC, error_rate, 0, 0),
    O("ram_gb", P_DIST_POS, ram_gb, 0, 0),
    O("disk_gb", P_DIST_POS, disk_gb, 0, 0),
    O("avail_cycle", P_TIME_H, avail_cycle, 60, 0),
    O("lifetime", P_TIME_D, lifetime, 0, 0),
    O("buffer", P_TIME_D, buffer, 0, 10 * 86400.0),
    O("buffer_extra", P_TIME_D, buffer_extra, 0, 10 * 86400.0),
    O("report_delay", P_TIME_H, report_delay, 0, 30 * 86400.0),
    O("batches", P_COUNT, batches, 1, 1e6),
    O("batch_size", P_COUNT, batch_size, 1, VS_POP_MAX_WUS),
    O("batch_interval", P_TIME_H, batch_interval, 0, 0),
    O("job_hours", P_TIME_H, job_hours, 1, 0),
    O("job_spread", P_FRAC, job_spread, 0, 0.99),
    O("ref_gflops", P_REAL, ref_gflops, 0, 0),
    O("delay_bound", P_TIME_H, delay_bound, 60, 0),
    O("min_quorum", P_INT, min_quorum, 1, VS_POP_MAX_RESULTS),
    O("target_nresults", P_INT, target_nresults, 1, VS_POP_MAX_RESULTS),
    O("max_total_results", P_INT, max_total_results, 1, VS_POP_MAX_RESULTS),
    O("input_mb", P_REAL, input_mb, 0, 0),
    O("server_edf_check", P_BOOL, server_edf_check, 0, 0),
    O("max_wus_to_send", P_COUNT, max_wus_to_send, 1, 1000),
    O("max_wus_in_progress", P_COUNT, max_wus_in_progress, 0, 1e6),
    O("daily_result_quota", P_COUNT, daily_result_quota, 0, 1e6),
    O("job_cache", P_COUNT, job_cache, 1, 100000),
    O("duration", P_TIME_D, duration, 3600, 3650 * 86400.0),
    O("seed", P_SEED, seed, 0, 0),
    O("file_mb", P_REAL, file_mb, 0, 0),
    O("wus_per_file", P_COUNT, wus_per_file, 1, 100000),
    N("file_order", file_order, vs_pop_file_orders),
    O("locality", P_BOOL, locality, 0, 0),
    O("locality_sorted", P_BOOL, locality_sorted, 0, 0),
    O("locality_ws_files", P_COUNT, locality_ws_files, 0, 1e7),
    N("model", model, vs_pop_models),
    N("client_policy", client_policy, vs_sim_policies),
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
    s->wus_per_file = 50;
    s->duration = 30 * 86400;
    s->seed = 1;
}

struct parser {
    struct vs_lex lx;
};

static const struct popt *find(const struct vs_lex_tok *t)
{
    for (size_t i = 0; i < NOPTS; i++)
        if (vs_lex_is(t, opts[i].name))
            return &opts[i];
    return NULL;
}

/* Checks one value of a distribution's support (or a constant). */
static int check_value(struct vs_lex *lx, const struct vs_lex_tok *t, const struct popt *o,
                       double v)
{
    if (o->kind == P_DIST_FRAC && (v < 0 || v > 1))
        return VS_LEX_FAIL_TOK(lx, *t, "%s: must be between 0 and 1", o->name);
    if (o->kind == P_DIST_POS && v <= 0)
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
static int parse_choice(struct vs_lex *lx, const struct popt *o, struct vs_pop_dist *d)
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
        if (arg(lx, &v) || check_value(lx, &vt, o, v) || expect(lx, VS_LEX_COLON, "':' weight"))
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
static int parse_dist(struct vs_lex *lx, const struct popt *o, struct vs_pop_dist *d)
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
    bool frac = o->kind == P_DIST_FRAC;
    if ((frac && !kinds[k].frac_ok) || (!frac && !kinds[k].pos_ok))
        return VS_LEX_FAIL_TOK(lx, name, "%s: %s() does not fit %s", o->name, kinds[k].name,
                               frac ? "a fraction" : "a positive quantity");
    if (vs_lex_next(lx) || expect(lx, VS_LEX_LP, "'(' after the distribution's name"))
        return lx->rc;
    memset(d, 0, sizeof(*d));
    d->kind = kinds[k].kind;
    if (d->kind == VS_PD_CHOICE) {
        if (parse_choice(lx, o, d))
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
            if (check_value(lx, &at, o, d->a) || check_value(lx, &bt, o, d->b))
                return lx->rc;
            if (d->b < d->a)
                return VS_LEX_FAIL_TOK(lx, bt, "uniform(a, b) needs b >= a");
            break;
        case VS_PD_LOGNORMAL:
            if (check_value(lx, &at, o, d->a))
                return lx->rc;
            if (d->b < 0 || d->b > 5)
                return VS_LEX_FAIL_TOK(lx, bt, "lognormal sigma must be in 0..5");
            break;
        case VS_PD_BETA:
            if (d->a <= 0 || d->b <= 0 || d->a > 1000 || d->b > 1000)
                return VS_LEX_FAIL_TOK(lx, at, "beta(a, b) needs 0 < a, b <= 1000");
            break;
        default: /* exp */
            if (check_value(lx, &at, o, d->a))
                return lx->rc;
            break;
        }
    }
    return expect(lx, VS_LEX_RP, "')' to close the distribution");
}

static int parse_value(struct vs_lex *lx, const struct popt *o, struct vs_pop_scenario *s)
{
    char *dst = (char *)s + o->off;
    struct vs_lex_tok t = lx->cur;
    if (o->kind == P_DIST_POS || o->kind == P_DIST_FRAC) {
        struct vs_pop_dist d;
        if (t.kind == VS_LEX_IDENT) {
            if (parse_dist(lx, o, &d))
                return lx->rc;
        } else {
            double v;
            if (arg(lx, &v) || check_value(lx, &t, o, v))
                return lx->rc;
            d = dconst(v);
        }
        memcpy(dst, &d, sizeof(d));
        return 0;
    }
    if (o->kind == P_NAME) {
        for (int i = 0; o->names[i]; i++) {
            if (vs_lex_is(&t, o->names[i])) {
                /* An enum is an int here (model, client_policy). */
                memcpy(dst, &i, sizeof(i));
                return vs_lex_next(lx);
            }
        }
        char list[96] = "";
        size_t n = 0;
        for (int i = 0; o->names[i] && n < sizeof(list); i++)
            n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "", o->names[i]);
        return VS_LEX_FAIL_TOK(lx, t, "%s wants one of: %s", o->name, list);
    }
    if (o->kind == P_BOOL) {
        bool b;
        if (vs_lex_is(&t, "true") || vs_lex_is(&t, "yes") || vs_lex_is(&t, "on"))
            b = true;
        else if (vs_lex_is(&t, "false") || vs_lex_is(&t, "no") || vs_lex_is(&t, "off"))
            b = false;
        else if (t.kind == VS_LEX_NUM && t.n == 1 && (t.p[0] == '0' || t.p[0] == '1'))
            b = t.p[0] == '1';
        else
            return VS_LEX_FAIL_TOK(lx, t, "%s wants true or false", o->name);
        memcpy(dst, &b, sizeof(b));
        return vs_lex_next(lx);
    }
    static const enum vs_lex_val lv[] = {
        [P_COUNT] = VS_LV_COUNT, [P_INT] = VS_LV_COUNT,     [P_REAL] = VS_LV_REAL,
        [P_FRAC] = VS_LV_FRAC,   [P_TIME_H] = VS_LV_TIME_H, [P_TIME_D] = VS_LV_TIME_D,
        [P_SEED] = VS_LV_COUNT,
    };
    double v;
    if (vs_lex_number(lx, &t, lv[o->kind], &v))
        return lx->rc;
    if (v < o->min || (o->max > 0 && v > o->max))
        return VS_LEX_FAIL_TOK(lx, t, "%s out of range", o->name);
    if (o->kind == P_REAL && v < 0)
        return VS_LEX_FAIL_TOK(lx, t, "%s cannot be negative", o->name);
    if (o->kind == P_COUNT) {
        int64_t x = (int64_t)v;
        memcpy(dst, &x, sizeof(x));
    } else if (o->kind == P_INT) {
        int x = (int)v;
        memcpy(dst, &x, sizeof(x));
    } else if (o->kind == P_SEED) {
        uint64_t x = (uint64_t)v;
        memcpy(dst, &x, sizeof(x));
    } else {
        memcpy(dst, &v, sizeof(v));
    }
    return vs_lex_next(lx);
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
    vs_lex_init(&lx, text, len, err);
    lx.allow_colon = true;
    if (len > VS_SCN_MAX_TEXT) {
        if (err)
            snprintf(err->msg, sizeof(err->msg), "scenario text longer than %d bytes",
                     VS_SCN_MAX_TEXT);
        return VS_ELIMIT;
    }
    struct vs_pop_scenario s;
    vs_pop_scenario_defaults(&s);
    if (vs_lex_next(&lx))
        return lx.rc;
    while (lx.cur.kind != VS_LEX_EOF) {
        struct vs_lex_tok t = lx.cur;
        if (t.kind == VS_LEX_COMMA) {
            if (vs_lex_next(&lx))
                return lx.rc;
            continue;
        }
        if (t.kind != VS_LEX_IDENT)
            return VS_LEX_FAIL_TOK(&lx, t, "expected a parameter name = value");
        const struct popt *o = find(&t);
        if (!o)
            return VS_LEX_FAIL_TOK(&lx, t, "unknown parameter '%.*s'", (int)t.n, t.p);
        if (vs_lex_next(&lx))
            return lx.rc;
        if (lx.cur.kind != VS_LEX_EQ)
            return VS_LEX_FAIL_TOK(&lx, lx.cur, "expected '=' after '%s'", o->name);
        if (vs_lex_next(&lx) || parse_value(&lx, o, &s))
            return lx.rc;
    }
    if (check_whole(&lx, &s))
        return lx.rc;
    *out = s;
    return 0;
}

int vs_pop_scenario_load(const char *path, struct vs_pop_scenario *out, struct vs_scn_error *err)
{
    struct vs_buf b;
    vs_buf_init(&b, VS_SCN_MAX_TEXT);
    int rc = vs_lex_read_file(path, &b, err);
    if (rc == 0)
        rc = vs_pop_scenario_parse(vs_buf_str(&b), b.len, out, err);
    vs_buf_cleanup(&b);
    return rc;
}
