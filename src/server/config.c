/*
 * config.xml and config_aux.xml: a table of the tags volsched reads, each
 * with its type, bounds and place in struct vs_config. Read through the
 * bounded XML reader (volsched/xml.h); every error names file and line.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/config.h"
#include "volsched/str.h"
#include "volsched/xml.h"

enum kind {
    K_BOOL,
    K_INT,    /* int, >= min */
    K_LLONG,  /* long long, >= min */
    K_DOUBLE, /* double, >= min, <= max when max > min */
    K_STR,
    K_STRLIST,
    K_CORE_VERSION, /* int; BOINC's old major*100+minor form is scaled */
    K_LIMIT_CPU,    /* max_wus_in_progress: project CPU limit, per processor */
    K_LIMIT_GPU,    /* max_wus_in_progress_gpu: project GPU limit, per processor */
    K_BLOCK,        /* a block of <name>text</name> children, kept for the project loader */
};

struct tag {
    const char *name;
    enum kind kind;
    size_t off;
    double min, max;
};

#define F(field) offsetof(struct vs_config, field)
#define P(field) offsetof(struct vs_config, policy.field)

/* BOINC-COMPAT: tag names as in BOINC's sched_config. */
static const struct tag tags[] = {
    {"master_url", K_STR, F(master_url), 0, 0},
    {"long_name", K_STR, F(long_name), 0, 0},
    {"download_url", K_STR, F(download_url), 0, 0},
    {"upload_url", K_STR, F(upload_url), 0, 0},
    {"download_dir", K_STR, F(download_dir), 0, 0},
    {"upload_dir", K_STR, F(upload_dir), 0, 0},
    {"key_dir", K_STR, F(key_dir), 0, 0},
    {"cgi_url", K_STR, F(cgi_url), 0, 0},
    {"store_url", K_STR, F(store_url), 0, 0},
    {"uldl_dir_fanout", K_INT, F(uldl_dir_fanout), 0, 0},
    {"min_sendwork_interval", K_INT, F(min_sendwork_interval), 0, 0},
    {"next_rpc_delay", K_INT, F(next_rpc_delay), 0, 0},
    {"maintenance_delay", K_INT, F(maintenance_delay), 0, 0},
    {"report_grace_period", K_INT, F(report_grace_period), 0, 0},
    {"delete_delay_hours", K_INT, F(delete_delay_hours), 0, 0},
    {"report_max", K_INT, F(report_max), 0, 0},
    {"shmem_work_items", K_INT, F(shmem_work_items), 1, 0},
    {"feeder_query_size", K_INT, F(feeder_query_size), 1, 0},
    {"resend_lost_results", K_BOOL, F(resend_lost_results), 0, 0},
    {"send_result_abort", K_BOOL, F(send_result_abort), 0, 0},
    {"nowork_skip", K_BOOL, F(nowork_skip), 0, 0},
    {"dont_send_jobs", K_BOOL, F(dont_send_jobs), 0, 0},
    {"dont_generate_upload_certificates", K_BOOL, F(dont_generate_upload_certificates), 0, 0},
    {"ignore_upload_certificates", K_BOOL, F(ignore_upload_certificates), 0, 0},
    {"cache_md5_info", K_BOOL, F(cache_md5_info), 0, 0},
    {"disable_account_creation", K_BOOL, F(disable_account_creation), 0, 0},
    {"min_core_client_version_announced", K_CORE_VERSION, F(min_core_client_version_announced), 0,
     0},
    {"min_core_client_upgrade_deadline", K_LLONG, F(min_core_client_upgrade_deadline), 0, 0},
    {"enable_assignment", K_BOOL, F(enable_assignment), 0, 0},
    {"enable_assignment_multi", K_BOOL, F(enable_assignment_multi), 0, 0},
    {"locality_scheduling", K_BOOL, F(locality_scheduling), 0, 0},
    {"locality_scheduling_sorted_order", K_BOOL, F(locality_scheduling_sorted_order), 0, 0},
    {"locality_scheduler_fraction", K_DOUBLE, F(locality_scheduler_fraction), 0, 1},
    {"locality_scheduling_wait_period", K_INT, F(locality_scheduling_wait_period), 0, 0},
    {"locality_scheduling_send_timeout", K_INT, F(locality_scheduling_send_timeout), 0, 0},
    {"locality_scheduling_workunit_file", K_STRLIST, F(locality_scheduling_workunit_file), 0, 0},
    {"locality_scheduling_sticky_file", K_STRLIST, F(locality_scheduling_sticky_file), 0, 0},
    {"file_deletion_strategy", K_INT, F(file_deletion_strategy), 0, 0},
    {"one_result_per_user_per_wu", K_BOOL, P(one_result_per_user_per_wu), 0, 0},
    {"one_result_per_host_per_wu", K_BOOL, P(one_result_per_host_per_wu), 0, 0},
    {"daily_result_quota", K_INT, P(daily_result_quota), 0, 0},
    {"max_wus_to_send", K_INT, P(max_wus_to_send), 1, 0},
    {"gpu_multiplier", K_INT, P(gpu_multiplier), 1, 0},
    {"max_ncpus", K_INT, P(max_ncpus), 1, 0},
    {"homogeneous_redundancy", K_INT, P(homogeneous_redundancy), 0, 2},
    {"min_core_client_version", K_CORE_VERSION, P(min_core_client_version), 0, 0},
    {"ignore_delay_bound", K_BOOL, P(ignore_delay_bound), 0, 0},
    {"deadline_exempt_empty_queue", K_BOOL, P(deadline_exempt_empty_queue), 0, 0},
    {"workload_sim", K_BOOL, P(workload_sim), 0, 0},
    {"max_wus_in_progress", K_LIMIT_CPU, 0, 0, 0},
    {"max_wus_in_progress_gpu", K_LIMIT_GPU, 0, 0, 0},
    /* The back-end daemons (docs/daemons.md). */
    {"reliable_priority_on_over", K_INT, F(reliable_priority_on_over), 0, 0},
    {"reliable_priority_on_over_except_error", K_INT, F(reliable_priority_on_over_except_error), 0,
     0},
    {"hr_class_static", K_BOOL, F(hr_class_static), 0, 0},
    {"daemon_command_timeout", K_INT, F(daemon_command_timeout), 1, 0},
    {"validator_retry_secs", K_INT, F(validator_retry_secs), 0, 0},
    {"assimilator_retry_secs", K_INT, F(assimilator_retry_secs), 0, 0},
    {"file_deleter_retry_secs", K_INT, F(file_deleter_retry_secs), 0, 0},
    {"validator", K_BLOCK, 0, 0, 0},
    {"assimilator", K_BLOCK, 0, 0, 0},
};

void vs_config_init(struct vs_config *c)
{
    memset(c, 0, sizeof *c);
    c->uldl_dir_fanout = 1024;
    c->maintenance_delay = 3600;
    c->shmem_work_items = 100;
    c->feeder_query_size = 200;
    vs_sp_config_defaults(&c->policy);
    c->daemon_command_timeout = 600;
    c->validator_retry_secs = 6 * 3600;
    c->assimilator_retry_secs = 600;
    c->file_deleter_retry_secs = 3600;
}

static void strlist_free(struct vs_strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        vs_free(l->v[i]);
    vs_free(l->v);
    l->v = NULL;
    l->n = 0;
}

static void strlist_add(struct vs_strlist *l, char *s)
{
    l->v = vs_xreallocarray(l->v, l->n + 1, sizeof *l->v);
    l->v[l->n++] = s;
}

void vs_config_cleanup(struct vs_config *c)
{
    if (!c)
        return;
    char **strs[] = {&c->master_url, &c->long_name,    &c->download_url,
                     &c->upload_url, &c->download_dir, &c->upload_dir,
                     &c->key_dir,    &c->cgi_url,      &c->store_url};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        vs_free(*strs[i]);
        *strs[i] = NULL;
    }
    strlist_free(&c->locality_scheduling_workunit_file);
    strlist_free(&c->locality_scheduling_sticky_file);
    strlist_free(&c->warnings);
    for (size_t i = 0; i < c->n_blocks; i++) {
        struct vs_config_block *b = &c->blocks[i];
        for (size_t k = 0; k < b->n_kv; k++) {
            vs_free(b->kv[k].name);
            vs_free(b->kv[k].text);
        }
        vs_free(b->kv);
        vs_free(b->tag);
    }
    vs_free(c->blocks);
    c->blocks = NULL;
    c->n_blocks = 0;
}

/* ---- errors and warnings ---- */

struct ctx {
    struct vs_config *c;
    const char *file;
    struct vs_config_error *err;
    struct vs_arena *arena;
};

static int fail(const struct ctx *x, int code, unsigned line, const char *fmt, ...) VS_PRINTF(4, 5);
static int fail(const struct ctx *x, int code, unsigned line, const char *fmt, ...)
{
    if (x->err) {
        memset(x->err, 0, sizeof *x->err);
        if (vs_strlcpy(x->err->file, x->file, sizeof x->err->file) != 0) {
            /* a truncated name is still useful */
        }
        x->err->line = line;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(x->err->msg, sizeof x->err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

static void warn(const struct ctx *x, unsigned line, const char *fmt, ...) VS_PRINTF(3, 4);
static void warn(const struct ctx *x, unsigned line, const char *fmt, ...)
{
    struct vs_buf b;
    vs_buf_init(&b, 1024);
    va_list ap;
    va_start(ap, fmt);
    /* A warning that does not fit is cut, never an error. */
    if (vs_buf_printf(&b, "%s:%u: ", x->file, line) == 0 && vs_buf_vprintf(&b, fmt, ap) == 0) {
    }
    va_end(ap);
    strlist_add(&x->c->warnings, vs_buf_take(&b, NULL));
    vs_buf_cleanup(&b);
}

void vs_config_error_format(const struct vs_config_error *e, char *dst, size_t n)
{
    if (e->line)
        snprintf(dst, n, "%s:%u: %s", e->file, e->line, e->msg);
    else
        snprintf(dst, n, "%s: %s", e->file, e->msg);
}

/* ---- values ---- */

static const char *trimmed(const struct ctx *x, const struct vs_xml_node *n)
{
    return vs_xml_text_trim(n, x->arena);
}

/* A scalar tag must not hold elements: <quota><x/></quota> is a type error. */
static int scalar(const struct ctx *x, const struct vs_xml_node *n)
{
    if (n->child)
        return fail(x, VS_ECONFIG, n->line, "<%s> must hold a value, not elements", n->name);
    return 0;
}

static int get_int(const struct ctx *x, const struct vs_xml_node *n, long long min, long long max,
                   long long *out)
{
    int rc = scalar(x, n);
    if (rc)
        return rc;
    int64_t v;
    const char *t = trimmed(x, n);
    if (!*t || vs_xml_get_int64(n, &v) != 0)
        return fail(x, VS_ECONFIG, n->line, "<%s> must be an integer, not '%s'", n->name, t);
    if (v < min) {
        if (min == 0)
            return fail(x, VS_ECONFIG, n->line, "<%s> must not be negative (%lld)", n->name,
                        (long long)v);
        return fail(x, VS_ECONFIG, n->line, "<%s> must be at least %lld (%lld)", n->name, min,
                    (long long)v);
    }
    if (v > max)
        return fail(x, VS_ECONFIG, n->line, "<%s> must be at most %lld (%lld)", n->name, max,
                    (long long)v);
    *out = v;
    return 0;
}

static int get_bool(const struct ctx *x, const struct vs_xml_node *n, bool *out)
{
    int rc = scalar(x, n);
    if (rc)
        return rc;
    if (vs_xml_get_bool(n, out) != 0)
        return fail(x, VS_ECONFIG, n->line, "<%s> must be 0 or 1 (or empty), not '%s'", n->name,
                    trimmed(x, n));
    return 0;
}

static int set_tag(const struct ctx *x, const struct tag *t, const struct vs_xml_node *n)
{
    char *base = (char *)x->c;
    long long v;
    int rc;
    switch (t->kind) {
    case K_BOOL:
        return get_bool(x, n, (bool *)(base + t->off));
    case K_INT:
        if ((rc = get_int(x, n, (long long)t->min, t->max > t->min ? (long long)t->max : INT_MAX,
                          &v)))
            return rc;
        *(int *)(base + t->off) = (int)v;
        return 0;
    case K_LLONG:
        if ((rc = get_int(x, n, (long long)t->min, LLONG_MAX, &v)))
            return rc;
        *(long long *)(base + t->off) = v;
        return 0;
    case K_CORE_VERSION:
        if ((rc = get_int(x, n, 0, INT_MAX / 100, &v)))
            return rc;
        /* BOINC-COMPAT: values below 10000 are the old major*100+minor form. */
        *(int *)(base + t->off) = (int)(v > 0 && v < 10000 ? v * 100 : v);
        return 0;
    case K_DOUBLE: {
        if ((rc = scalar(x, n)))
            return rc;
        double d;
        const char *s = trimmed(x, n);
        if (!*s || vs_xml_get_double(n, &d) != 0 || d != d)
            return fail(x, VS_ECONFIG, n->line, "<%s> must be a number, not '%s'", n->name, s);
        if (d < t->min || (t->max > t->min && d > t->max))
            return fail(x, VS_ECONFIG, n->line, "<%s> must be between %g and %g (%g)", n->name,
                        t->min, t->max, d);
        *(double *)(base + t->off) = d;
        return 0;
    }
    case K_STR: {
        if ((rc = scalar(x, n)))
            return rc;
        char **dst = (char **)(base + t->off);
        vs_free(*dst);
        *dst = vs_xstrdup(trimmed(x, n));
        return 0;
    }
    case K_STRLIST:
        if ((rc = scalar(x, n)))
            return rc;
        strlist_add((struct vs_strlist *)(base + t->off), vs_xstrdup(trimmed(x, n)));
        return 0;
    case K_BLOCK: {
        x->c->blocks = vs_xreallocarray(x->c->blocks, x->c->n_blocks + 1, sizeof(*x->c->blocks));
        struct vs_config_block *b = &x->c->blocks[x->c->n_blocks++];
        memset(b, 0, sizeof(*b));
        b->tag = vs_xstrdup(n->name);
        b->line = n->line;
        for (const struct vs_xml_node *k = n->child; k; k = k->next) {
            if ((rc = scalar(x, k)))
                return rc;
            b->kv = vs_xreallocarray(b->kv, b->n_kv + 1, sizeof(*b->kv));
            struct vs_config_kv *kv = &b->kv[b->n_kv++];
            kv->name = vs_xstrdup(k->name);
            kv->text = vs_xstrdup(trimmed(x, k));
            kv->line = k->line;
        }
        return 0;
    }
    case K_LIMIT_CPU:
    case K_LIMIT_GPU: {
        if ((rc = get_int(x, n, 0, INT_MAX, &v)))
            return rc;
        /* Seed 003: the legacy tags become the project's per-processor limits. */
        struct vs_sp_rsc_limit *l = t->kind == K_LIMIT_CPU ? &x->c->policy.limits.project.cpu
                                                           : &x->c->policy.limits.project.gpu;
        l->jobs = (int)v;
        l->per_proc = true;
        return 0;
    }
    }
    return VS_EINTERNAL;
}

static const struct tag *find_tag(const char *name)
{
    for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++)
        if (strcmp(tags[i].name, name) == 0)
            return &tags[i];
    return NULL;
}

bool vs_config_seen(const struct vs_config *c, const char *tag)
{
    const struct tag *t = find_tag(tag);
    size_t i = t ? (size_t)(t - tags) : 0;
    return t && i < 8 * sizeof c->seen && (c->seen[i / 8] >> (i % 8) & 1);
}

static int parse_doc(const struct ctx *x, const char *data, size_t len, struct vs_xml_doc *doc)
{
    if (len > VS_CONFIG_MAX_FILE)
        return fail(x, VS_ELIMIT, 0, "file larger than %u bytes", VS_CONFIG_MAX_FILE);
    struct vs_xml_error xe;
    int rc = vs_xml_parse(data, len, NULL, 0, x->arena, doc, &xe);
    if (rc) {
        /* The reader's message starts with "line N: "; the line is ours. */
        const char *m = xe.msg;
        if (strncmp(m, "line ", 5) == 0 && strchr(m, ':'))
            m = strchr(m, ':') + 1;
        while (*m == ' ')
            m++;
        return fail(x, rc == VS_ELIMIT ? VS_ELIMIT : VS_EPARSE, xe.line ? xe.line : 1,
                    "malformed XML: %s", *m ? m : "parse error");
    }
    return 0;
}

static int run(struct vs_config *c, const char *data, size_t len, const char *filename,
               struct vs_config_error *err, bool aux);

int vs_config_parse(struct vs_config *c, const char *data, size_t len, const char *filename,
                    struct vs_config_error *out_err)
{
    return run(c, data, len, filename, out_err, false);
}

int vs_config_parse_aux(struct vs_config *c, const char *data, size_t len, const char *filename,
                        struct vs_config_error *out_err)
{
    return run(c, data, len, filename, out_err, true);
}

static int parse_config_body(const struct ctx *x, const struct vs_xml_node *cfg)
{
    for (const struct vs_xml_node *n = cfg->child; n; n = n->next) {
        const struct tag *t = find_tag(n->name);
        if (!t) {
            warn(x, n->line, "unknown tag <%s> ignored", n->name);
            continue;
        }
        int rc = set_tag(x, t, n);
        if (rc)
            return rc;
        size_t i = (size_t)(t - tags);
        if (i < 8 * sizeof x->c->seen)
            x->c->seen[i / 8] |= (unsigned char)(1u << (i % 8));
    }
    return 0;
}

/* ---- config_aux.xml: <max_jobs_in_progress> ---- */

static int parse_rsc_limit(const struct ctx *x, const struct vs_xml_node *n,
                           struct vs_sp_rsc_limit *out)
{
    struct vs_sp_rsc_limit l = {0, false};
    bool have_jobs = false;
    for (const struct vs_xml_node *k = n->child; k; k = k->next) {
        long long v;
        int rc;
        if (strcmp(k->name, "jobs") == 0) {
            if ((rc = get_int(x, k, 0, INT_MAX, &v)))
                return rc;
            l.jobs = (int)v;
            have_jobs = true;
        } else if (strcmp(k->name, "per_proc") == 0) {
            if ((rc = get_bool(x, k, &l.per_proc)))
                return rc;
        } else {
            warn(x, k->line, "unknown tag <%s> in <%s> ignored", k->name, n->name);
        }
    }
    if (!have_jobs)
        return fail(x, VS_ECONFIG, n->line, "<%s> needs <jobs>N</jobs>", n->name);
    *out = l;
    return 0;
}

static int parse_limit_set(const struct ctx *x, const struct vs_xml_node *n,
                           struct vs_sp_limit_set *set, bool is_app)
{
    for (const struct vs_xml_node *k = n->child; k; k = k->next) {
        int rc = 0;
        if (strcmp(k->name, "total_limit") == 0)
            rc = parse_rsc_limit(x, k, &set->total);
        else if (strcmp(k->name, "cpu_limit") == 0)
            rc = parse_rsc_limit(x, k, &set->cpu);
        else if (strcmp(k->name, "gpu_limit") == 0)
            rc = parse_rsc_limit(x, k, &set->gpu);
        else if (is_app && strcmp(k->name, "app_name") == 0) {
            if ((rc = scalar(x, k)))
                return rc;
            const char *name = trimmed(x, k);
            if (!*name)
                return fail(x, VS_ECONFIG, k->line, "<app_name> is empty");
            if (vs_strlcpy(set->app_name, name, sizeof set->app_name) != 0)
                return fail(x, VS_ECONFIG, k->line, "<app_name> longer than %zu bytes",
                            sizeof set->app_name - 1);
        } else
            warn(x, k->line, "unknown tag <%s> in <%s> ignored", k->name, n->name);
        if (rc)
            return rc;
    }
    if (is_app && !set->app_name[0])
        return fail(x, VS_ECONFIG, n->line, "<app> needs <app_name>");
    return 0;
}

static int parse_max_jobs(const struct ctx *x, const struct vs_xml_node *mj)
{
    struct vs_sp_job_limits *l = &x->c->policy.limits;
    for (const struct vs_xml_node *n = mj->child; n; n = n->next) {
        int rc;
        if (strcmp(n->name, "project") == 0) {
            /* Only what the section names is replaced: config.xml's
             * max_wus_in_progress stays unless <cpu_limit> is given. */
            struct vs_sp_limit_set set = l->project;
            if ((rc = parse_limit_set(x, n, &set, false)))
                return rc;
            l->project = set;
        } else if (strcmp(n->name, "app") == 0) {
            if (l->n_apps >= VS_SP_MAX_APP_LIMITS)
                return fail(x, VS_ECONFIG, n->line, "more than %d <app> sections",
                            VS_SP_MAX_APP_LIMITS);
            struct vs_sp_limit_set set;
            memset(&set, 0, sizeof set);
            if ((rc = parse_limit_set(x, n, &set, true)))
                return rc;
            if (vs_sp_limits_app_index(l, set.app_name) >= 0)
                return fail(x, VS_ECONFIG, n->line, "second <app> section for '%s'", set.app_name);
            l->apps[l->n_apps++] = set;
        } else {
            warn(x, n->line, "unknown tag <%s> in <max_jobs_in_progress> ignored", n->name);
        }
    }
    return 0;
}

static int parse_aux_body(const struct ctx *x, const struct vs_xml_node *cfg)
{
    for (const struct vs_xml_node *n = cfg->child; n; n = n->next) {
        if (strcmp(n->name, "max_jobs_in_progress") == 0) {
            int rc = parse_max_jobs(x, n);
            if (rc)
                return rc;
        } else {
            warn(x, n->line, "unknown tag <%s> ignored", n->name);
        }
    }
    return 0;
}

static int run(struct vs_config *c, const char *data, size_t len, const char *filename,
               struct vs_config_error *err, bool aux)
{
    struct vs_arena arena;
    vs_arena_init(&arena, 16384);
    struct ctx x = {c, filename ? filename : (aux ? "config_aux.xml" : "config.xml"), err, &arena};
    struct vs_xml_doc doc;
    int rc = parse_doc(&x, data, len, &doc);
    if (rc)
        goto out;
    const struct vs_xml_node *root = doc.root;
    const struct vs_xml_node *cfg = NULL;
    /* BOINC-COMPAT: config.xml is <boinc><config>..</config><tasks>..
     * <daemons>..</boinc>; a bare <config> root is accepted too, and is
     * config_aux.xml's form. */
    if (strcmp(root->name, "config") == 0) {
        cfg = root;
        rc = aux ? parse_aux_body(&x, cfg) : parse_config_body(&x, cfg);
    } else if (strcmp(root->name, "boinc") == 0) {
        /* Sections in file order, so warnings come out in file order. */
        for (const struct vs_xml_node *n = root->child; n; n = n->next) {
            if (strcmp(n->name, "config") == 0) {
                if (cfg) {
                    rc = fail(&x, VS_ECONFIG, n->line, "second <config> section");
                    goto out;
                }
                cfg = n;
                rc = aux ? parse_aux_body(&x, cfg) : parse_config_body(&x, cfg);
                if (rc)
                    goto out;
            } else if (strcmp(n->name, "tasks") != 0 && strcmp(n->name, "daemons") != 0) {
                warn(&x, n->line, "unknown tag <%s> ignored", n->name);
            }
        }
        if (!cfg) {
            rc = fail(&x, VS_ECONFIG, root->line, "<boinc> has no <config> section");
            goto out;
        }
    } else {
        rc = fail(&x, VS_ECONFIG, root->line, "root element is <%s>, expected <%s>", root->name,
                  aux ? "config" : "boinc");
        goto out;
    }
out:
    vs_arena_cleanup(&arena);
    return rc;
}

/* ---- files ---- */

static int read_file(const char *path, struct vs_buf *out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -errno;
    char chunk[8192];
    size_t n;
    int rc = 0;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if ((rc = vs_buf_append(out, chunk, n)) != 0)
            break;
    }
    if (!rc && ferror(f))
        rc = VS_EIO;
    fclose(f);
    return rc;
}

static int load_one(struct vs_config *c, const char *dir, const char *name, bool aux, bool optional,
                    struct vs_config_error *err)
{
    struct vs_buf path, text;
    vs_buf_init(&path, 4096);
    vs_buf_init(&text, VS_CONFIG_MAX_FILE);
    int rc = vs_buf_printf(&path, "%s/%s", dir, name);
    if (rc) {
        struct ctx x = {c, name, err, NULL};
        rc = fail(&x, VS_ELIMIT, 0, "project path too long");
        goto out;
    }
    rc = read_file(vs_buf_str(&path), &text);
    if (rc == -ENOENT && optional) {
        rc = 0;
        goto out;
    }
    if (rc) {
        struct ctx x = {c, vs_buf_str(&path), err, NULL};
        if (rc == VS_ELIMIT)
            fail(&x, rc, 0, "file larger than %u bytes", VS_CONFIG_MAX_FILE);
        else
            fail(&x, rc, 0, "cannot read: %s", vs_strerror(rc));
        goto out;
    }
    rc = run(c, text.data ? text.data : "", text.len, vs_buf_str(&path), err, aux);
out:
    vs_buf_cleanup(&path);
    vs_buf_cleanup(&text);
    return rc;
}

int vs_config_load(struct vs_config *c, const char *project_dir, struct vs_config_error *out_err)
{
    vs_config_init(c);
    const char *dir = project_dir && *project_dir ? project_dir : ".";
    int rc = load_one(c, dir, "config.xml", false, false, out_err);
    if (!rc)
        rc = load_one(c, dir, "config_aux.xml", true, true, out_err);
    if (rc)
        vs_config_cleanup(c);
    return rc;
}
