/*
 * The scenario parser: a recursive-descent parser for the seeds' P(C, D, R)
 * notation, on the scenario languages' lexer and option reader
 * (volsched/scn.h, which popsim's language uses too). Items may be
 * separated by commas, blanks or newlines and the whole list may sit in one
 * pair of parentheses, so both forms the seeds write parse unchanged. Every
 * error carries the line and column of the token that caused it.
 */
#include "volsched/scenario.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "volsched/alloc.h"
#include "volsched/scn.h"

/* ---- the options ---- */

#define SOPT(...) VS_SCN_OPT(struct vs_scenario, __VA_ARGS__)
#define POPT(...) VS_SCN_OPT(struct vs_scn_project, __VA_ARGS__)
/* A deprecated spelling, read as before with a warning. */
#define SOLD(...) VS_SCN_OLD(struct vs_scenario, __VA_ARGS__)
#define POLD(...) VS_SCN_OLD(struct vs_scn_project, __VA_ARGS__)

/* The host's and the run's options. */
static const struct vs_scn_opt scenario_opts[] = {
    SOPT("NCPUS", VS_SCN_INT, ncpus, 1, VS_SCN_MAX_NCPUS),
    SOPT("min_queue", VS_SCN_HOURS, min_queue, 0, 0),
    SOPT("leave_in_memory", VS_SCN_BOOL, leave_in_memory, 0, 0),
    SOPT("cpu_scheduling_period", VS_SCN_HOURS, sched_period, 1, 0),
    SOPT("on_frac", VS_SCN_FRAC, on_frac, 0.001, 1),
    SOPT("active_frac", VS_SCN_FRAC, active_frac, 0.001, 1),
    SOPT("avail_cycle", VS_SCN_HOURS, avail_cycle, 60, 0),
    SOPT("duration", VS_SCN_DAYS, duration, 1, 3650.0 * 86400),
    SOPT("seed", VS_SCN_SEED, seed, 0, 0),
    SOPT("server_edf_check", VS_SCN_BOOL, server_deadline_check, 0, 0),
    SOPT("extra_queue", VS_SCN_HOURS, extra_queue, 0, 0),
    SOPT("cpu_eff", VS_SCN_FRAC, cpu_eff, 0.01, 1),
    /* Deprecated spellings: popsim's name is the one both languages use. */
    SOLD("server_deadline_check", VS_SCN_BOOL, server_deadline_check, 0, 0, "server_edf_check",
         NULL),
};

/* Per-project options; at the top level they set the default for all. */
static const struct vs_scn_opt project_opts[] = {
    POPT("job_spread", VS_SCN_FRAC, spread, 0, 0.99),
    POPT("checkpoint_period", VS_SCN_HOURS, checkpoint_period, 0, 0),
    POPT("resume_cost", VS_SCN_HOURS, resume_cost, 0, 0),
    POPT("server_avail", VS_SCN_FRAC, server_avail, 0.001, 1),
    POPT("server_outage", VS_SCN_HOURS, server_outage, 1, 0),
    POPT("non_cpu_intensive", VS_SCN_BOOL, non_cpu_intensive, 0, 0),
    POPT("jobs", VS_SCN_COUNT, jobs, 0, 0),
    POPT("max_in_progress", VS_SCN_COUNT, max_in_progress, 0, 0),
    POPT("max_wus_in_progress", VS_SCN_COUNT, max_wus_in_progress, 0, 0),
    POPT("daily_result_quota", VS_SCN_COUNT, daily_result_quota, 0, 0),
    POPT("max_wus_to_send", VS_SCN_COUNT, max_wus_to_send, 1, 1000),
    POPT("workload_sim", VS_SCN_BOOL, workload_sim, 0, 0),
    POPT("ignore_delay_bound", VS_SCN_BOOL, ignore_delay_bound, 0, 0),
    POPT("min_rpc_delay", VS_SCN_HOURS, min_rpc_delay, 0, 0),
    POPT("ncpus", VS_SCN_POS, ncpus, 0.001, VS_SCN_MAX_NCPUS),
    POPT("max_concurrent", VS_SCN_COUNT, max_concurrent, 0, 0),
    POPT("est", VS_SCN_POS, est, 0.001, 1000),
    POPT("nowork", VS_SCN_DAY_RANGE, nowork_from, 0, 0),
    /* Deprecated spellings: popsim's name is the one both languages use. */
    POLD("spread", VS_SCN_FRAC, spread, 0, 0.99, "job_spread", NULL),
};

#define N_SOPTS (sizeof(scenario_opts) / sizeof(scenario_opts[0]))
#define N_POPTS (sizeof(project_opts) / sizeof(project_opts[0]))

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
        if (vs_lex_number(ps, &t, i < 2 ? VS_LV_TIME_H : VS_LV_REAL, &v[i]))
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
        const struct vs_scn_opt *o = vs_scn_opt_find(project_opts, N_POPTS, &t);
        if (!o)
            return VS_LEX_FAIL_TOK(ps, t, "unknown project option '%.*s'", (int)t.n, t.p);
        size_t k = vs_scn_opt_index(project_opts, N_POPTS, o);
        acc->where[k] = t;
        if (vs_scn_opt_read(ps, o, &acc->p))
            return ps->rc;
        acc->set[k] = true;
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
    struct vs_lex ps;
    struct vs_scenario s;
    struct vs_scn_project defaults;
    bool defaults_set[N_POPTS] = {false};
    struct vs_lex_tok defaults_where[N_POPTS];
    struct proj_acc *accs = NULL;
    size_t n = 0, cap = 0;
    int paren_depth = 0;
    struct vs_lex_tok open_paren = {0};

    vs_scenario_defaults(&s);
    vs_scn_project_defaults(&defaults);
    if (vs_lex_start(&ps, text, len, false, err))
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
        const struct vs_scn_opt *o = vs_scn_opt_find(scenario_opts, N_SOPTS, &t);
        if (o) {
            if (vs_scn_opt_read(&ps, o, &s))
                goto fail;
            continue;
        }
        o = vs_scn_opt_find(project_opts, N_POPTS, &t);
        if (o) {
            size_t k = vs_scn_opt_index(project_opts, N_POPTS, o);
            defaults_where[k] = t;
            if (vs_scn_opt_read(&ps, o, &defaults))
                goto fail;
            defaults_set[k] = true;
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
                       vs_scn_opt_size(&project_opts[k]));
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

static int parse_any(const char *text, size_t len, void *out, struct vs_scn_error *err)
{
    return vs_scenario_parse(text, len, out, err);
}

int vs_scenario_load(const char *path, struct vs_scenario *out, struct vs_scn_error *err)
{
    return vs_scn_load(path, parse_any, out, err);
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
