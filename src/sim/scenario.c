/*
 * The scenario parser: a recursive-descent parser for the seeds' P(C, D, R)
 * notation, on the simulators' shared lexer (scn_lex.c). Items may be separated by commas, blanks
 * or newlines and the whole list may sit in one pair of parentheses, so both forms the seeds write
 * parse unchanged. Every error carries the line and column of the token that caused it.
 */
#include "volsched/scenario.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/str.h"

#include "sim/scn_lex.h"

/* ---- values ---- */

enum val_kind {
    V_INT,
    V_REAL,
    V_FRAC,
    V_POS,
    V_TIME_H,
    V_TIME_D,
    V_BOOL,
    V_COUNT,
    V_SEED,
    V_RANGE_D /* D1-D2, days unless a unit says otherwise: two doubles */
};

/* A number token's value through the shared lexer (seconds for times). */
static int parse_num(struct vs_lex *ps, const struct vs_lex_tok *t, enum val_kind kind, double *out)
{
    static const enum vs_lex_val lv[] = {
        [V_INT] = VS_LV_COUNT,      [V_REAL] = VS_LV_REAL,     [V_FRAC] = VS_LV_FRAC,
        [V_POS] = VS_LV_POS,        [V_TIME_H] = VS_LV_TIME_H, [V_TIME_D] = VS_LV_TIME_D,
        [V_BOOL] = VS_LV_REAL,      [V_COUNT] = VS_LV_COUNT,   [V_SEED] = VS_LV_COUNT,
        [V_RANGE_D] = VS_LV_TIME_D,
    };
    return vs_lex_number(ps, t, lv[kind], out);
}

/* A parameter or per-project option: where it goes and what it accepts. */
struct opt {
    const char *name;
    enum val_kind kind;
    size_t off;
    double min, max; /* checked after unit conversion; max 0 = none */
};

#define SOPT(n, k, f, lo, hi)                                                                      \
    {                                                                                              \
        n, k, offsetof(struct vs_scenario, f), lo, hi                                              \
    }
#define POPT(n, k, f, lo, hi)                                                                      \
    {                                                                                              \
        n, k, offsetof(struct vs_scn_project, f), lo, hi                                           \
    }

static const struct opt scenario_opts[] = {
    SOPT("NCPUS", V_INT, ncpus, 1, VS_SCN_MAX_NCPUS),
    SOPT("min_queue", V_TIME_H, min_queue, 0, 0),
    SOPT("leave_in_memory", V_BOOL, leave_in_memory, 0, 0),
    SOPT("cpu_scheduling_period", V_TIME_H, sched_period, 1, 0),
    SOPT("on_frac", V_FRAC, on_frac, 0.001, 1),
    SOPT("active_frac", V_FRAC, active_frac, 0.001, 1),
    SOPT("avail_cycle", V_TIME_H, avail_cycle, 60, 0),
    SOPT("duration", V_TIME_D, duration, 1, 3650.0 * 86400),
    SOPT("seed", V_SEED, seed, 0, 0),
    SOPT("server_deadline_check", V_BOOL, server_deadline_check, 0, 0),
    SOPT("extra_queue", V_TIME_H, extra_queue, 0, 0),
    SOPT("cpu_eff", V_FRAC, cpu_eff, 0.01, 1),
};

/* Per-project options; at the top level they set the default for all. */
static const struct opt project_opts[] = {
    POPT("spread", V_FRAC, spread, 0, 0.99),
    POPT("checkpoint_period", V_TIME_H, checkpoint_period, 0, 0),
    POPT("resume_cost", V_TIME_H, resume_cost, 0, 0),
    POPT("server_avail", V_FRAC, server_avail, 0.001, 1),
    POPT("server_outage", V_TIME_H, server_outage, 1, 0),
    POPT("non_cpu_intensive", V_BOOL, non_cpu_intensive, 0, 0),
    POPT("jobs", V_COUNT, jobs, 0, 0),
    POPT("max_in_progress", V_COUNT, max_in_progress, 0, 0),
    POPT("max_wus_in_progress", V_COUNT, max_wus_in_progress, 0, 0),
    POPT("daily_result_quota", V_COUNT, daily_result_quota, 0, 0),
    POPT("max_wus_to_send", V_COUNT, max_wus_to_send, 1, 1000),
    POPT("workload_sim", V_BOOL, workload_sim, 0, 0),
    POPT("ignore_delay_bound", V_BOOL, ignore_delay_bound, 0, 0),
    POPT("min_rpc_delay", V_TIME_H, min_rpc_delay, 0, 0),
    POPT("ncpus", V_POS, ncpus, 0.001, VS_SCN_MAX_NCPUS),
    POPT("max_concurrent", V_COUNT, max_concurrent, 0, 0),
    POPT("est", V_POS, est, 0.001, 1000),
    POPT("nowork", V_RANGE_D, nowork_from, 0, 0),
};

#define N_POPTS (sizeof(project_opts) / sizeof(project_opts[0]))

static const struct opt *find_opt(const struct opt *tab, size_t n, const struct vs_lex_tok *t)
{
    for (size_t i = 0; i < n; i++)
        if (vs_lex_is(t, tab[i].name))
            return &tab[i];
    return NULL;
}

/* The bytes an option's value takes at its offset. */
static size_t opt_size(const struct opt *o)
{
    switch (o->kind) {
    case V_BOOL:
        return sizeof(bool);
    case V_COUNT:
    case V_SEED:
        return sizeof(int64_t);
    case V_INT:
        return sizeof(int);
    case V_RANGE_D:
        return 2 * sizeof(double);
    default:
        return sizeof(double);
    }
}

/*
 * D1-D2 (nowork = 5-8, or 5d-8d, 120h-8d): the lexer reads "5" and "-8",
 * or "5", "-" and "8" when there are blanks around the dash. Stores
 * D1 < D2 as two doubles at dst.
 */
static int parse_range(struct vs_lex *ps, const struct opt *o, char *dst)
{
    struct vs_lex_tok t = ps->cur;
    double v[2];
    if (parse_num(ps, &t, V_RANGE_D, &v[0]) || vs_lex_next(ps))
        return ps->rc;
    struct vs_lex_tok u = ps->cur;
    if (u.kind != VS_LEX_NUM || u.n == 0 || u.p[0] != '-')
        return VS_LEX_FAIL_TOK(ps, u, "%s wants D1-D2 (days)", o->name);
    if (u.n == 1) {
        if (vs_lex_next(ps))
            return ps->rc;
        u = ps->cur;
    } else {
        u.p++;
        u.n--;
        u.col++;
    }
    if (parse_num(ps, &u, V_RANGE_D, &v[1]))
        return ps->rc;
    if (!(v[1] > v[0]))
        return VS_LEX_FAIL_TOK(ps, t, "%s: D1 must come before D2", o->name);
    memcpy(dst, v, sizeof(v));
    return vs_lex_next(ps);
}

/* Reads `= value` after an option name and stores it at base + o->off. */
static int parse_opt_value(struct vs_lex *ps, const struct opt *o, void *base)
{
    if (vs_lex_next(ps))
        return ps->rc;
    if (ps->cur.kind != VS_LEX_EQ)
        return VS_LEX_FAIL_TOK(ps, ps->cur, "expected '=' after '%s'", o->name);
    if (vs_lex_next(ps))
        return ps->rc;
    struct vs_lex_tok t = ps->cur;
    char *dst = (char *)base + o->off;
    if (o->kind == V_BOOL) {
        char buf[16];
        bool b;
        if ((t.kind != VS_LEX_IDENT && t.kind != VS_LEX_NUM) || t.n >= sizeof(buf))
            return VS_LEX_FAIL_TOK(ps, t, "%s wants true or false", o->name);
        memcpy(buf, t.p, t.n);
        buf[t.n] = '\0';
        if (vs_parse_bool(buf, &b) != 0)
            return VS_LEX_FAIL_TOK(ps, t, "%s wants true or false, not '%s'", o->name, buf);
        memcpy(dst, &b, sizeof(b));
        return vs_lex_next(ps);
    }
    if (o->kind == V_RANGE_D)
        return parse_range(ps, o, dst);
    double v;
    if (parse_num(ps, &t, o->kind, &v))
        return ps->rc;
    if (v < o->min || (o->max > 0 && v > o->max))
        return VS_LEX_FAIL_TOK(ps, t, "%s out of range", o->name);
    if (o->kind == V_INT) {
        int iv = (int)v;
        memcpy(dst, &iv, sizeof(iv));
    } else if (o->kind == V_SEED) {
        uint64_t u = (uint64_t)v;
        memcpy(dst, &u, sizeof(u));
    } else if (o->kind == V_COUNT) {
        int64_t i64 = (int64_t)v;
        memcpy(dst, &i64, sizeof(i64));
    } else {
        memcpy(dst, &v, sizeof(v));
    }
    return vs_lex_next(ps);
}

void vs_scn_project_defaults(struct vs_scn_project *p)
{
    memset(p, 0, sizeof(*p));
    p->checkpoint_period = 60;
    p->server_avail = 1;
    p->server_outage = 3600;
    p->max_in_progress = 100;
    p->max_wus_to_send = 10;
    p->min_rpc_delay = 60;
    p->ncpus = 1;
    p->est = 1;
}

void vs_scenario_defaults(struct vs_scenario *s)
{
    memset(s, 0, sizeof(*s));
    s->ncpus = 1;
    s->min_queue = 0.1 * 3600;
    s->sched_period = 3600;
    s->on_frac = 1;
    s->active_frac = 1;
    s->avail_cycle = 86400;
    s->duration = 10 * 86400;
    s->seed = 1;
    s->cpu_eff = 1;
}

struct proj_acc {
    struct vs_scn_project p;
    bool set[N_POPTS];
    struct vs_lex_tok name;           /* the project's name, for errors */
    struct vs_lex_tok where[N_POPTS]; /* each set option's value, for errors */
};

/* P(C, D, R [, opt = value ...]); the name token is ps->cur on entry. */
static int parse_project(struct vs_lex *ps, struct proj_acc *acc)
{
    struct vs_lex_tok name = ps->cur;
    vs_scn_project_defaults(&acc->p);
    memset(acc->set, 0, sizeof(acc->set));
    acc->name = name;
    if (name.n >= VS_SCN_NAME_MAX)
        return VS_LEX_FAIL_TOK(ps, name, "project name longer than %d characters",
                               VS_SCN_NAME_MAX - 1);
    memcpy(acc->p.name, name.p, name.n);
    acc->p.name[name.n] = '\0';
    if (vs_lex_next(ps)) /* '(' */
        return ps->rc;
    static const char *const what[3] = {"C (CPU hours per task)", "D (delay bound, hours)",
                                        "R (resource share)"};
    double v[3];
    for (int i = 0; i < 3; i++) {
        if (vs_lex_next(ps))
            return ps->rc;
        struct vs_lex_tok t = ps->cur;
        if (t.kind == VS_LEX_RP)
            return VS_LEX_FAIL_TOK(ps, t, "%s: expected %s; a project is P(C, D, R)", acc->p.name,
                                   what[i]);
        if (parse_num(ps, &t, i < 2 ? V_TIME_H : V_REAL, &v[i]))
            return ps->rc;
        /* R = 0 is a backup project (docs/simulator.md); C and D are > 0. */
        if (i == 2 && v[i] < 0)
            return VS_LEX_FAIL_TOK(ps, t, "%s: %s cannot be negative", acc->p.name, what[i]);
        if (i < 2 && v[i] <= 0)
            return VS_LEX_FAIL_TOK(ps, t, "%s: %s must be greater than 0", acc->p.name, what[i]);
        if (vs_lex_next(ps))
            return ps->rc;
        if (i < 2 && ps->cur.kind == VS_LEX_RP)
            return VS_LEX_FAIL_TOK(ps, ps->cur, "%s: missing %s; a project is P(C, D, R)",
                                   acc->p.name, what[i + 1]);
        if (i < 2 && ps->cur.kind != VS_LEX_COMMA)
            return VS_LEX_FAIL_TOK(ps, ps->cur, "expected ',' after %s", what[i]);
    }
    acc->p.cpu_time = v[0];
    acc->p.delay_bound = v[1];
    acc->p.share = v[2];
    while (ps->cur.kind == VS_LEX_COMMA) {
        if (vs_lex_next(ps))
            return ps->rc;
        struct vs_lex_tok t = ps->cur;
        const struct opt *o = find_opt(project_opts, N_POPTS, &t);
        if (!o)
            return VS_LEX_FAIL_TOK(ps, t, "unknown project option '%.*s'", (int)t.n, t.p);
        acc->where[o - project_opts] = t;
        if (parse_opt_value(ps, o, &acc->p))
            return ps->rc;
        acc->set[o - project_opts] = true;
    }
    if (ps->cur.kind != VS_LEX_RP)
        return VS_LEX_FAIL_TOK(ps, ps->cur, "expected ')' to close project %s", acc->p.name);
    return vs_lex_next(ps);
}

/* The token where option name was set for a project (its value). */
static const struct vs_lex_tok *opt_where(const struct proj_acc *a, const char *name)
{
    for (size_t k = 0; k < N_POPTS; k++)
        if (strcmp(project_opts[k].name, name) == 0)
            return a->set[k] ? &a->where[k] : &a->name;
    return &a->name;
}

/* The checks that need the whole scenario (NCPUS and duration may come
 * after the project). */
static int check_project(struct vs_lex *ps, const struct vs_scenario *s, const struct proj_acc *a)
{
    const struct vs_scn_project *p = &a->p;
    if (p->ncpus > s->ncpus)
        return VS_LEX_FAIL_TOK(ps, *opt_where(a, "ncpus"), "%s: ncpus = %g is more than NCPUS = %d",
                               p->name, p->ncpus, s->ncpus);
    if (p->nowork_to > 0 && p->nowork_to > s->duration)
        return VS_LEX_FAIL_TOK(ps, *opt_where(a, "nowork"),
                               "%s: nowork ends after the simulated %g days", p->name,
                               s->duration / 86400);
    return 0;
}

static bool any_share(const struct vs_scenario *s)
{
    for (size_t i = 0; i < s->nprojects; i++)
        if (s->projects[i].share > 0)
            return true;
    return false;
}

int vs_scenario_parse(const char *text, size_t len, struct vs_scenario *out,
                      struct vs_scn_error *err)
{
    struct vs_lex ps = {.text = text, .len = len, .line = 1, .col = 1, .err = err};
    struct vs_scenario s;
    struct vs_scn_project defaults;
    bool defaults_set[N_POPTS] = {false};
    struct vs_lex_tok defaults_where[N_POPTS];
    struct proj_acc *accs = NULL;
    size_t n = 0, cap = 0;
    int paren_depth = 0;
    struct vs_lex_tok open_paren = {0};

    if (err)
        memset(err, 0, sizeof(*err));
    if (len > VS_SCN_MAX_TEXT) {
        if (err)
            snprintf(err->msg, sizeof(err->msg), "scenario text longer than %d bytes",
                     VS_SCN_MAX_TEXT);
        return VS_ELIMIT;
    }
    vs_scenario_defaults(&s);
    vs_scn_project_defaults(&defaults);

    if (vs_lex_next(&ps))
        goto fail;
    if (ps.cur.kind == VS_LEX_LP) {
        open_paren = ps.cur;
        paren_depth = 1;
        if (vs_lex_next(&ps))
            goto fail;
    }
    for (;;) {
        struct vs_lex_tok t = ps.cur;
        if (t.kind == VS_LEX_EOF) {
            if (paren_depth) {
                VS_LEX_FAIL_TOK(&ps, open_paren, "'(' is never closed");
                goto fail;
            }
            break;
        }
        if (t.kind == VS_LEX_RP) {
            if (!paren_depth) {
                VS_LEX_FAIL_TOK(&ps, t, "unmatched ')'");
                goto fail;
            }
            paren_depth = 0;
            if (vs_lex_next(&ps))
                goto fail;
            if (ps.cur.kind != VS_LEX_EOF) {
                VS_LEX_FAIL_TOK(&ps, ps.cur, "unexpected text after the closing ')'");
                goto fail;
            }
            break;
        }
        if (t.kind == VS_LEX_COMMA) {
            if (vs_lex_next(&ps))
                goto fail;
            continue;
        }
        if (t.kind != VS_LEX_IDENT) {
            VS_LEX_FAIL_TOK(&ps, t, "expected a project P(C, D, R) or a parameter name = value");
            goto fail;
        }
        /* Look one token ahead without consuming: a '(' makes it a project. */
        struct vs_lex save = ps;
        if (vs_lex_next(&ps))
            goto fail;
        bool is_project = ps.cur.kind == VS_LEX_LP;
        ps = save;
        if (is_project) {
            if (n == VS_SCN_MAX_PROJECTS) {
                VS_LEX_FAIL_TOK(&ps, t, "more than %d projects", VS_SCN_MAX_PROJECTS);
                ps.rc = VS_ELIMIT;
                goto fail;
            }
            if (n == cap) {
                cap = cap ? cap * 2 : 8;
                accs = vs_xreallocarray(accs, cap, sizeof(*accs));
            }
            if (parse_project(&ps, &accs[n]))
                goto fail;
            for (size_t i = 0; i < n; i++) {
                if (strcmp(accs[i].p.name, accs[n].p.name) == 0) {
                    VS_LEX_FAIL_TOK(&ps, t, "project %s is listed twice", accs[n].p.name);
                    goto fail;
                }
            }
            n++;
            continue;
        }
        const struct opt *o =
            find_opt(scenario_opts, sizeof(scenario_opts) / sizeof(scenario_opts[0]), &t);
        if (o) {
            if (parse_opt_value(&ps, o, &s))
                goto fail;
            continue;
        }
        o = find_opt(project_opts, N_POPTS, &t);
        if (o) {
            defaults_where[o - project_opts] = t;
            if (parse_opt_value(&ps, o, &defaults))
                goto fail;
            defaults_set[o - project_opts] = true;
            continue;
        }
        VS_LEX_FAIL_TOK(&ps, t, "unknown parameter '%.*s'", (int)t.n, t.p);
        goto fail;
    }
    if (n == 0) {
        vs_lex_fail(&ps, ps.cur.line, ps.cur.col,
                    "a scenario needs at least one project P(C, D, R)");
        goto fail;
    }
    /* Top-level project options fill in what a project did not set itself. */
    s.projects = vs_xcalloc(n, sizeof(*s.projects));
    s.nprojects = n;
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < N_POPTS; k++) {
            if (!accs[i].set[k] && defaults_set[k]) {
                size_t off = project_opts[k].off;
                memcpy((char *)&accs[i].p + off, (char *)&defaults + off,
                       opt_size(&project_opts[k]));
                accs[i].where[k] = defaults_where[k];
                accs[i].set[k] = true;
            }
        }
        s.projects[i] = accs[i].p;
        if (check_project(&ps, &s, &accs[i]))
            goto fail_projects;
    }
    if (!any_share(&s)) {
        VS_LEX_FAIL_TOK(&ps, accs[0].name, "every project has R = 0: at least one needs a share");
        goto fail_projects;
    }
    vs_free(accs);
    *out = s;
    return 0;
fail_projects:
    vs_free(s.projects);
fail:
    vs_free(accs);
    return ps.rc ? ps.rc : VS_EPARSE;
}

int vs_scenario_load(const char *path, struct vs_scenario *out, struct vs_scn_error *err)
{
    struct vs_buf b;
    vs_buf_init(&b, VS_SCN_MAX_TEXT);
    int rc = vs_lex_read_file(path, &b, err);
    if (rc == 0)
        rc = vs_scenario_parse(vs_buf_str(&b), b.len, out, err);
    vs_buf_cleanup(&b);
    return rc;
}

void vs_scenario_copy(struct vs_scenario *out, const struct vs_scenario *src)
{
    *out = *src;
    out->projects = vs_xcalloc(src->nprojects ? src->nprojects : 1, sizeof(*out->projects));
    if (src->nprojects)
        memcpy(out->projects, src->projects, src->nprojects * sizeof(*out->projects));
}

void vs_scenario_cleanup(struct vs_scenario *s)
{
    vs_free(s->projects);
    s->projects = NULL;
    s->nprojects = 0;
}

int vs_scenario_find(const struct vs_scenario *s, const char *name)
{
    for (size_t i = 0; i < s->nprojects; i++)
        if (strcmp(s->projects[i].name, name) == 0)
            return (int)i;
    return -1;
}
