/*
 * config_aux.xml: <max_jobs_in_progress> (seed 003's job limits for the
 * project and per app, total/cpu/gpu, per processor or not). Read by the
 * same parse as config.xml (config.c), into cfg->policy.limits.
 */
#include <limits.h>
#include <string.h>

#include "config/config_int.h"

static int rsc_limit(const struct vs_config_ctx *x, const struct vs_xml_node *n,
                     struct vs_sp_rsc_limit *out)
{
    struct vs_sp_rsc_limit l = {0, false};
    bool have_jobs = false;
    for (const struct vs_xml_node *k = n->child; k; k = k->next) {
        long long v;
        int rc;
        if (strcmp(k->name, "jobs") == 0) {
            if ((rc = vs_config__int(x, k, 0, INT_MAX, &v)))
                return rc;
            l.jobs = (int)v;
            have_jobs = true;
        } else if (strcmp(k->name, "per_proc") == 0) {
            if ((rc = vs_config__bool(x, k, &l.per_proc)))
                return rc;
        } else {
            vs_config__warn(x, k->line, "unknown tag <%s> in <%s> ignored", k->name, n->name);
        }
    }
    if (!have_jobs)
        return vs_config__fail(x, VS_ECONFIG, n->line, "<%s> needs <jobs>N</jobs>", n->name);
    *out = l;
    return 0;
}

/*
 * Seed 003: config.xml's max_wus_in_progress(_gpu) become the project's
 * cpu (gpu) limit, and config_aux.xml's <project> section, read after it,
 * replaces what it names. When both set the limit the operator is told
 * which one is in force (config_aux.xml's), with both values.
 */
static void say_which_wins(const struct vs_config_ctx *x, unsigned line, const char *aux_tag,
                           const char *xml_tag, const struct vs_sp_rsc_limit *was,
                           const struct vs_sp_rsc_limit *now)
{
    if (was->jobs <= 0)
        return;
    vs_config__warn(x, line,
                    "<%s> %d%s (%s) replaces config.xml's <%s> %d per processor: "
                    "config_aux.xml wins; remove one of them",
                    aux_tag, now->jobs, now->per_proc ? " per processor" : "",
                    now->jobs > 0 ? "in force" : "no limit", xml_tag, was->jobs);
}

static int limit_set(const struct vs_config_ctx *x, const struct vs_xml_node *n,
                     struct vs_sp_limit_set *set, bool is_app)
{
    for (const struct vs_xml_node *k = n->child; k; k = k->next) {
        int rc = 0;
        if (strcmp(k->name, "total_limit") == 0)
            rc = rsc_limit(x, k, &set->total);
        else if (strcmp(k->name, "cpu_limit") == 0) {
            struct vs_sp_rsc_limit before = set->cpu;
            rc = rsc_limit(x, k, &set->cpu);
            if (rc == 0 && !is_app)
                say_which_wins(x, k->line, "cpu_limit", "max_wus_in_progress", &before, &set->cpu);
        } else if (strcmp(k->name, "gpu_limit") == 0) {
            struct vs_sp_rsc_limit before = set->gpu;
            rc = rsc_limit(x, k, &set->gpu);
            if (rc == 0 && !is_app)
                say_which_wins(x, k->line, "gpu_limit", "max_wus_in_progress_gpu", &before,
                               &set->gpu);
        } else if (is_app && strcmp(k->name, "app_name") == 0) {
            const char *name;
            if ((rc = vs_config__text(x, k, &name)))
                return rc;
            if (!*name)
                return vs_config__fail(x, VS_ECONFIG, k->line, "<app_name> is empty");
            if (vs_strlcpy(set->app_name, name, sizeof set->app_name) != 0)
                return vs_config__fail(x, VS_ECONFIG, k->line, "<app_name> longer than %zu bytes",
                                       sizeof set->app_name - 1);
        } else
            vs_config__warn(x, k->line, "unknown tag <%s> in <%s> ignored", k->name, n->name);
        if (rc)
            return rc;
    }
    if (is_app && !set->app_name[0])
        return vs_config__fail(x, VS_ECONFIG, n->line, "<app> needs <app_name>");
    return 0;
}

static int max_jobs(const struct vs_config_ctx *x, const struct vs_xml_node *mj)
{
    struct vs_sp_job_limits *l = &x->cfg->policy.limits;
    for (const struct vs_xml_node *n = mj->child; n; n = n->next) {
        int rc;
        if (strcmp(n->name, "project") == 0) {
            /* Only what the section names is replaced: config.xml's
             * max_wus_in_progress stays unless <cpu_limit> is given. */
            struct vs_sp_limit_set set = l->project;
            if ((rc = limit_set(x, n, &set, false)))
                return rc;
            l->project = set;
        } else if (strcmp(n->name, "app") == 0) {
            if (l->n_apps >= VS_SP_MAX_APP_LIMITS)
                return vs_config__fail(x, VS_ECONFIG, n->line, "more than %d <app> sections",
                                       VS_SP_MAX_APP_LIMITS);
            struct vs_sp_limit_set set;
            memset(&set, 0, sizeof set);
            if ((rc = limit_set(x, n, &set, true)))
                return rc;
            if (vs_sp_limits_app_index(l, set.app_name) >= 0)
                return vs_config__fail(x, VS_ECONFIG, n->line, "second <app> section for '%s'",
                                       set.app_name);
            l->apps[l->n_apps++] = set;
        } else {
            vs_config__warn(x, n->line, "unknown tag <%s> in <max_jobs_in_progress> ignored",
                            n->name);
        }
    }
    return 0;
}

int vs_config__aux_body(const struct vs_config_ctx *x, const struct vs_xml_node *cfg)
{
    for (const struct vs_xml_node *n = cfg->child; n; n = n->next) {
        if (strcmp(n->name, "max_jobs_in_progress") == 0) {
            int rc = max_jobs(x, n);
            if (rc)
                return rc;
        } else {
            vs_config__warn(x, n->line, "unknown tag <%s> ignored", n->name);
        }
    }
    return 0;
}
