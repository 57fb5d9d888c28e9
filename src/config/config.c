/*
 * The reader of config.xml (and the driver that reads config_aux.xml with
 * it): defaults, one parse through the bounded XML reader (volsched/xml.h)
 * that stores each tag of the table (config_tags.c) straight into struct
 * vs_project_config, and the loader every command calls. Every error names
 * file and line; every unknown tag is a warning with file and line.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config/config_int.h"
#include "volsched/buf.h"
#include "volsched/credit.h"
#include "volsched/layout.h"
#include "volsched/log.h"

void vs_project_config_init(struct vs_project_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->uldl_dir_fanout = VS_DEFAULT_FANOUT;
    vs_sp_config_defaults(&cfg->policy);
    /* Protective defaults (docs/security.md): a project is safe
     * from one hoarding account the day it starts; each tag set to 0 turns
     * its limit off (BOINC's default for daily_result_quota). */
    cfg->policy.host_in_progress_per_cpu = 4;
    cfg->policy.max_new_hosts_per_day = 5;
    cfg->policy.daily_result_quota = 100;
    cfg->resend_lost_results = true;
    cfg->submit_max_request_mb = 64;
    cfg->batch_tail_acceleration = true;
    cfg->failed_auth_burst = 20;
    cfg->failed_auth_per_hour = 60;
    cfg->min_passwd_length = 6;
    cfg->account_rpc_burst = 30;
    cfg->account_rpc_per_hour = 120;
    cfg->http_head_timeout = 30;
    cfg->http_idle_timeout = 60;
    cfg->job_lease_secs = 60;
    cfg->sched_writers = 1;
    cfg->http_body_min_rate = 100;
    cfg->http_max_per_address = 32;
    cfg->maintenance_delay = 3600;
    cfg->report_grace_period = 3600;
    cfg->enable_assignment = true;
    cfg->enable_assignment_multi = true;
    cfg->daemon_command_timeout = 600;
    /* BOINC-COMPAT: the validator's DELAYED retry is 6 hours, the file
     * deleter retries errors hourly. */
    cfg->validator_retry_secs = 6 * 3600;
    cfg->db_dump_interval_hours = 24;      /* BOINC's projects run db_dump daily */
    cfg->update_stats_interval_hours = 24; /* and update_stats */
    cfg->assimilator_retry_secs = 600;
    cfg->file_deleter_retry_secs = 3600;
}

int vs_project_config_defaults(struct vs_project_config *cfg, const char *dir, const char *name,
                               const char *url)
{
    if (!dir || !*dir || !name || !url || !*url)
        return VS_EINVAL;
    vs_project_config_init(cfg);
    int rc = vs_project_layout_defaults(cfg, dir, url);
    if (vs_strlcpy(cfg->long_name, name, sizeof(cfg->long_name)) != 0)
        rc = VS_ELIMIT;
    /* A new project's own choice (init writes it); a config.xml without
     * the tag keeps BOINC's default, off. */
    cfg->policy.one_result_per_user_per_wu = true;
    return rc;
}

const struct vs_validator_config *vs_project_validator(const struct vs_project_config *cfg,
                                                       const char *app)
{
    static const struct vs_validator_config bitwise = {.method = VS_VALIDATE_BITWISE};
    const struct vs_validator_config *def = &bitwise;
    for (int i = 0; i < cfg->nvalidators; i++) {
        if (!cfg->validators[i].app[0])
            def = &cfg->validators[i];
        else if (app && strcmp(cfg->validators[i].app, app) == 0)
            return &cfg->validators[i];
    }
    return def;
}

const struct vs_assimilator_config *vs_project_assimilator(const struct vs_project_config *cfg,
                                                           const char *app)
{
    static const struct vs_assimilator_config copy_outputs;
    const struct vs_assimilator_config *def = &copy_outputs;
    for (int i = 0; i < cfg->nassimilators; i++) {
        if (!cfg->assimilators[i].app[0])
            def = &cfg->assimilators[i];
        else if (app && strcmp(cfg->assimilators[i].app, app) == 0)
            return &cfg->assimilators[i];
    }
    return def;
}

/* ---- errors and warnings ---- */

int vs_config__fail(const struct vs_config_ctx *x, int code, unsigned line, const char *fmt, ...)
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

void vs_config__warn(const struct vs_config_ctx *x, unsigned line, const char *fmt, ...)
{
    if (!x->log || x->log->level < VS_LOG_WARN)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    /* A warning that does not fit is cut, never an error. */
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    vs_log_write(x->log, VS_LOG_WARN, "%s:%u: %s", x->file, line, msg);
}

void vs_config_error_format(const struct vs_config_error *e, char *dst, size_t n)
{
    if (e->line)
        snprintf(dst, n, "%s:%u: %s", e->file, e->line, e->msg);
    else
        snprintf(dst, n, "%s: %s", e->file, e->msg);
}

/* ---- values ---- */

int vs_config__text(const struct vs_config_ctx *x, const struct vs_xml_node *n, const char **out)
{
    /* A scalar tag must not hold elements: <quota><x/></quota> is a type error. */
    if (n->child)
        return vs_config__fail(x, VS_ECONFIG, n->line, "<%s> must hold a value, not elements",
                               n->name);
    *out = vs_xml_text_trim(n, x->arena);
    return 0;
}

int vs_config__int(const struct vs_config_ctx *x, const struct vs_xml_node *n, long long min,
                   long long max, long long *out)
{
    const char *t = ""; /* gcc 12 -O2 cannot see vs_config__text sets it */
    int rc = vs_config__text(x, n, &t);
    if (rc)
        return rc;
    int64_t v;
    if (!*t || vs_xml_get_int64(n, &v) != 0)
        return vs_config__fail(x, VS_ECONFIG, n->line, "<%s> must be an integer, not '%s'", n->name,
                               t);
    if (v < min) {
        if (min == 0)
            return vs_config__fail(x, VS_ECONFIG, n->line, "<%s> must not be negative (%lld)",
                                   n->name, (long long)v);
        return vs_config__fail(x, VS_ECONFIG, n->line, "<%s> must be at least %lld (%lld)", n->name,
                               min, (long long)v);
    }
    if (v > max)
        return vs_config__fail(x, VS_ECONFIG, n->line, "<%s> must be at most %lld (%lld)", n->name,
                               max, (long long)v);
    *out = v;
    return 0;
}

int vs_config__bool(const struct vs_config_ctx *x, const struct vs_xml_node *n, bool *out)
{
    const char *t = ""; /* gcc 12 -O2 cannot see vs_config__text sets it */
    int rc = vs_config__text(x, n, &t);
    if (rc)
        return rc;
    if (vs_xml_get_bool(n, out) != 0)
        return vs_config__fail(x, VS_ECONFIG, n->line, "<%s> must be 0 or 1 (or empty), not '%s'",
                               n->name, t);
    return 0;
}

/* text into the fixed field dst[size]; an error with the line if too long */
static int put_str(const struct vs_config_ctx *x, const struct vs_xml_node *n, const char *text,
                   char *dst, size_t size)
{
    /* Cleared first: a value replaced by a shorter one leaves no tail, so
     * two configurations with the same values compare equal byte for byte. */
    memset(dst, 0, size);
    if (vs_strlcpy(dst, text, size) != 0)
        return vs_config__fail(x, VS_ECONFIG, n->line, "<%s> longer than %zu bytes", n->name,
                               size - 1);
    return 0;
}

/* ---- the daemons' blocks (docs/daemons.md) ---- */

static const char *const method_names[] = {"bitwise", "always_valid", "command"};

const char *vs_config__method_name(int method)
{
    return method >= 0 && method <= VS_VALIDATE_COMMAND ? method_names[method] : NULL;
}

static int read_block(const struct vs_config_ctx *x, const struct vs_xml_node *bl, bool is_val)
{
    struct vs_project_config *cfg = x->cfg;
    if ((is_val ? cfg->nvalidators : cfg->nassimilators) == VS_MAX_APP_CONFIGS)
        return vs_config__fail(x, VS_ECONFIG, bl->line, "too many blocks: <%s>", bl->name);
    struct vs_validator_config v;
    struct vs_assimilator_config as;
    memset(&v, 0, sizeof(v));
    memset(&as, 0, sizeof(as));
    const char *method = NULL;
    unsigned method_line = 0;
    const char *credit = NULL;
    unsigned credit_line = 0;
    for (const struct vs_xml_node *k = bl->child; k; k = k->next) {
        const char *t = "";
        int rc = vs_config__text(x, k, &t);
        if (rc)
            return rc;
        if (strcmp(k->name, "app") == 0)
            rc = is_val ? put_str(x, k, t, v.app, sizeof(v.app))
                        : put_str(x, k, t, as.app, sizeof(as.app));
        else if (strcmp(k->name, "command") == 0)
            rc = is_val ? put_str(x, k, t, v.command, sizeof(v.command))
                        : put_str(x, k, t, as.command, sizeof(as.command));
        else if (is_val && strcmp(k->name, "compare_command") == 0)
            rc = put_str(x, k, t, v.compare_command, sizeof(v.compare_command));
        else if (is_val && strcmp(k->name, "method") == 0) {
            method = t;
            method_line = k->line;
        } else if (is_val && strcmp(k->name, "credit") == 0) {
            credit = t;
            credit_line = k->line;
        } else
            return vs_config__fail(x, VS_ECONFIG, k->line, "unknown tag in the block: <%s>",
                                   k->name);
        if (rc)
            return rc;
    }
    if (!is_val) {
        cfg->assimilators[cfg->nassimilators++] = as;
        return 0;
    }
    v.method = v.command[0] || v.compare_command[0] ? VS_VALIDATE_COMMAND : VS_VALIDATE_BITWISE;
    if (method) {
        int m = -1;
        for (int k = 0; k < 3; k++)
            if (strcmp(method, method_names[k]) == 0)
                m = k;
        if (m < 0)
            return vs_config__fail(x, VS_ECONFIG, method_line,
                                   "<method> must be bitwise, always_valid or command, not %s",
                                   method);
        v.method = m;
    }
    v.credit = credit ? vs_credit_method_parse(credit) : VS_CREDIT_ADAPTIVE;
    if (v.credit < 0)
        return vs_config__fail(x, VS_ECONFIG, credit_line,
                               "<credit> must be adaptive, flops or fixed, not %s", credit);
    if (v.method == VS_VALIDATE_COMMAND && !v.command[0] && !v.compare_command[0])
        return vs_config__fail(x, VS_ECONFIG, bl->line,
                               "<validator> method command needs <command> or <compare_command>");
    cfg->validators[cfg->nvalidators++] = v;
    return 0;
}

/* <locality_gen><command>CMD</command></locality_gen> and
 * <locality_ws><files>N</files></locality_ws> (docs/locality.md). */
static int read_locality_block(const struct vs_config_ctx *x, const struct vs_xml_node *bl,
                               bool gen)
{
    struct vs_project_config *cfg = x->cfg;
    const char *want = gen ? "command" : "files";
    bool seen = false;
    for (const struct vs_xml_node *k = bl->child; k; k = k->next) {
        if (strcmp(k->name, want) != 0)
            return vs_config__fail(x, VS_ECONFIG, k->line, "unknown tag in <%s>: <%s>", bl->name,
                                   k->name);
        int rc;
        if (gen) {
            const char *t = "";
            rc = vs_config__text(x, k, &t);
            if (rc == 0)
                rc = put_str(x, k, t, cfg->locality_gen_command, sizeof(cfg->locality_gen_command));
        } else {
            long long v = 0;
            rc = vs_config__int(x, k, 0, 1000000, &v);
            if (rc == 0)
                cfg->locality_ws_files = (int)v;
        }
        if (rc)
            return rc;
        seen = true;
    }
    if (!seen)
        return vs_config__fail(x, VS_ECONFIG, bl->line, "<%s> needs <%s>", bl->name, want);
    return 0;
}

/* ---- one tag ---- */

/* BOINC-COMPAT: html/inc/delete_account.inc's methods of
 * <enable_delete_account>: 0 (or absent) no deletion, 1 obfuscate, 2 wipe,
 * 3 the project's own PHP function. volsched has 1 (the account's row
 * stays, its personal data goes, its results stay the science's); the
 * others are refused rather than quietly done another way. */
static int delete_method(const struct vs_config_ctx *x, const struct vs_xml_node *n, int *out)
{
    long long v = 0;
    int rc = vs_config__int(x, n, 0, 3, &v);
    if (rc)
        return rc;
    if (v == 2)
        return vs_config__fail(x, VS_ECONFIG, n->line,
                               "<enable_delete_account>2</enable_delete_account> is BOINC's "
                               "\"wipe\" method (the account's rows and hosts deleted, its "
                               "unvalidated results cancelled): volsched does not implement it; "
                               "use 1 (\"obfuscate\": personal data removed, results kept) "
                               "or 0 (no deletion)");
    if (v == 3)
        return vs_config__fail(x, VS_ECONFIG, n->line,
                               "<enable_delete_account>3</enable_delete_account> is BOINC's "
                               "project-defined method (a PHP function of the project's): "
                               "volsched has none; use 1 (\"obfuscate\") or 0 (no deletion)");
    *out = (int)v;
    return 0;
}

static int set_tag(const struct vs_config_ctx *x, const struct vs_config_tag *t,
                   const struct vs_xml_node *n)
{
    char *f = (char *)x->cfg + t->off;
    long long v;
    const char *s = "";
    int rc;
    switch (t->kind) {
    case K_BOOL:
        return vs_config__bool(x, n, (bool *)f);
    case K_INT:
        if ((rc = vs_config__int(x, n, (long long)t->min,
                                 t->max > t->min ? (long long)t->max : INT_MAX, &v)))
            return rc;
        *(int *)f = (int)v;
        return 0;
    case K_LLONG:
        if ((rc = vs_config__int(x, n, (long long)t->min, LLONG_MAX, &v)))
            return rc;
        *(long long *)f = v;
        return 0;
    case K_CORE_VERSION:
        if ((rc = vs_config__int(x, n, 0, INT_MAX / 100, &v)))
            return rc;
        /* BOINC-COMPAT: values below 10000 are the old major*100+minor form. */
        *(int *)f = (int)(v > 0 && v < 10000 ? v * 100 : v);
        return 0;
    case K_STR:
        if ((rc = vs_config__text(x, n, &s)))
            return rc;
        return put_str(x, n, s, f, t->size);
    case K_PATH: {
        if ((rc = vs_config__text(x, n, &s)))
            return rc;
        /* Relative paths are relative to the project directory. */
        if (s[0] == '/' || !x->cfg->dir[0])
            return put_str(x, n, s, f, t->size);
        memset(f, 0, t->size);
        int len = snprintf(f, t->size, "%s/%s", x->cfg->dir, s);
        if (len < 0 || (size_t)len >= t->size)
            return vs_config__fail(x, VS_ECONFIG, n->line, "<%s> longer than %zu bytes", n->name,
                                   t->size - 1);
        return 0;
    }
    case K_STRLIST: {
        struct vs_config_list *l = (struct vs_config_list *)f;
        if ((rc = vs_config__text(x, n, &s)))
            return rc;
        if (l->n == VS_CONFIG_LIST_MAX)
            return vs_config__fail(x, VS_ECONFIG, n->line, "more than %d <%s> tags",
                                   VS_CONFIG_LIST_MAX, n->name);
        if ((rc = put_str(x, n, s, l->v[l->n], sizeof l->v[l->n])))
            return rc;
        l->n++;
        return 0;
    }
    case K_LIMIT_CPU:
    case K_LIMIT_GPU: {
        if ((rc = vs_config__int(x, n, 0, INT_MAX, &v)))
            return rc;
        /* Seed 003: the legacy tags become the project's per-processor limits. */
        struct vs_sp_rsc_limit *l = (struct vs_sp_rsc_limit *)f;
        l->jobs = (int)v;
        l->per_proc = true;
        return 0;
    }
    case K_VALIDATOR:
    case K_ASSIMILATOR:
        return read_block(x, n, t->kind == K_VALIDATOR);
    case K_LOCALITY_GEN:
    case K_LOCALITY_WS:
        return read_locality_block(x, n, t->kind == K_LOCALITY_GEN);
    case K_DEL_METHOD:
        return delete_method(x, n, (int *)f);
    case K_IGNORED:
        return 0;
    case K_UNSUPPORTED: {
        size_t used = strlen(x->unsupported);
        if (used + 1 < x->unsupported_size)
            snprintf(x->unsupported + used, x->unsupported_size - used, "%s<%s> (line %u)",
                     used ? ", " : "", n->name, n->line);
        return 0;
    }
    }
    return VS_EINTERNAL;
}

static const struct vs_config_tag *find_tag(const char *name)
{
    for (size_t i = 0; i < vs_config__n_tags; i++)
        if (strcmp(vs_config__tags[i].name, name) == 0)
            return &vs_config__tags[i];
    return NULL;
}

static int config_body(const struct vs_config_ctx *x, const struct vs_xml_node *cfg)
{
    for (const struct vs_xml_node *n = cfg->child; n; n = n->next) {
        const struct vs_config_tag *t = find_tag(n->name);
        if (!t) {
            vs_config__warn(x, n->line, "unknown tag <%s> ignored", n->name);
            continue;
        }
        int rc = set_tag(x, t, n);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- one file ---- */

static int parse_doc(const struct vs_config_ctx *x, const char *data, size_t len,
                     struct vs_xml_doc *doc)
{
    if (len > VS_CONFIG_MAX_FILE)
        return vs_config__fail(x, VS_ELIMIT, 0, "file larger than %u bytes", VS_CONFIG_MAX_FILE);
    struct vs_xml_error xe;
    int rc = vs_xml_parse(data, len, NULL, 0, x->arena, doc, &xe);
    if (rc) {
        /* The reader's message starts with "line N: "; the line is ours. */
        const char *m = xe.msg;
        if (strncmp(m, "line ", 5) == 0 && strchr(m, ':'))
            m = strchr(m, ':') + 1;
        while (*m == ' ')
            m++;
        return vs_config__fail(x, rc == VS_ELIMIT ? VS_ELIMIT : VS_EPARSE, xe.line ? xe.line : 1,
                               "malformed XML: %s", *m ? m : "parse error");
    }
    return 0;
}

static int parse_file(struct vs_project_config *cfg, const char *data, size_t len,
                      const char *filename, struct vs_log *log, struct vs_config_error *err,
                      bool aux)
{
    struct vs_arena arena;
    vs_arena_init(&arena, 16384);
    char unsupported[1024] = "";
    struct vs_config_ctx x = {cfg,
                              filename ? filename : (aux ? "config_aux.xml" : "config.xml"),
                              log,
                              err,
                              &arena,
                              unsupported,
                              sizeof unsupported};
    struct vs_xml_doc doc;
    int rc = parse_doc(&x, data, len, &doc);
    if (rc)
        goto out;
    const struct vs_xml_node *root = doc.root;
    const struct vs_xml_node *body = NULL;
    /* BOINC-COMPAT: config.xml is <boinc><config>..</config><tasks>..
     * <daemons>..</boinc>; a bare <config> root is accepted too, and is
     * config_aux.xml's form. */
    if (strcmp(root->name, "config") == 0) {
        rc = aux ? vs_config__aux_body(&x, root) : config_body(&x, root);
    } else if (strcmp(root->name, "boinc") == 0) {
        /* Sections in file order, so warnings come out in file order. */
        for (const struct vs_xml_node *n = root->child; n; n = n->next) {
            if (strcmp(n->name, "config") == 0) {
                if (body) {
                    rc = vs_config__fail(&x, VS_ECONFIG, n->line, "second <config> section");
                    goto out;
                }
                body = n;
                rc = aux ? vs_config__aux_body(&x, body) : config_body(&x, body);
                if (rc)
                    goto out;
            } else if (strcmp(n->name, "tasks") != 0 && strcmp(n->name, "daemons") != 0) {
                vs_config__warn(&x, n->line, "unknown tag <%s> ignored", n->name);
            }
        }
        if (!body)
            rc = vs_config__fail(&x, VS_ECONFIG, root->line, "<boinc> has no <config> section");
    } else {
        rc = vs_config__fail(&x, VS_ECONFIG, root->line, "root element is <%s>, expected <%s>",
                             root->name, aux ? "config" : "boinc");
    }
    /* One line for all of them: an operator coming from BOINC sees at once
     * which of the project's settings have no effect here. */
    if (rc == 0 && unsupported[0] && log && log->level >= VS_LOG_WARN)
        vs_log_write(log, VS_LOG_WARN, "%s: BOINC option not supported, ignored: %s", x.file,
                     unsupported);
out:
    vs_arena_cleanup(&arena);
    return rc;
}

int vs_project_config_parse(struct vs_project_config *cfg, const char *data, size_t len,
                            const char *filename, struct vs_log *log,
                            struct vs_config_error *out_err)
{
    return parse_file(cfg, data, len, filename, log, out_err, false);
}

int vs_project_config_parse_aux(struct vs_project_config *cfg, const char *data, size_t len,
                                const char *filename, struct vs_log *log,
                                struct vs_config_error *out_err)
{
    return parse_file(cfg, data, len, filename, log, out_err, true);
}

/* ---- files ---- */

static int load_one(struct vs_project_config *cfg, const char *name, bool aux, bool optional,
                    struct vs_log *log, struct vs_config_error *err)
{
    struct vs_buf path, text;
    vs_buf_init(&path, VS_PATH_MAX + 32);
    vs_buf_init(&text, VS_CONFIG_MAX_FILE);
    int rc = vs_buf_printf(&path, "%s/%s", cfg->dir, name);
    if (rc) {
        struct vs_config_ctx x = {cfg, name, log, err, NULL, NULL, 0};
        rc = vs_config__fail(&x, VS_ELIMIT, 0, "project path too long");
        goto out;
    }
    rc = vs_buf_append_file(&text, vs_buf_str(&path));
    if (rc == -ENOENT && optional) {
        rc = 0;
        goto out;
    }
    if (rc) {
        struct vs_config_ctx x = {cfg, vs_buf_str(&path), log, err, NULL, NULL, 0};
        if (rc == VS_ELIMIT)
            vs_config__fail(&x, rc, 0, "file larger than %u bytes", VS_CONFIG_MAX_FILE);
        else
            vs_config__fail(&x, rc, 0, "cannot read: %s", vs_strerror(rc));
        goto out;
    }
    rc = parse_file(cfg, text.data ? text.data : "", text.len, vs_buf_str(&path), log, err, aux);
out:
    vs_buf_cleanup(&path);
    vs_buf_cleanup(&text);
    return rc;
}

int vs_project_config_load(const char *dir, struct vs_log *log, struct vs_project_config *out,
                           struct vs_config_error *out_err)
{
    struct vs_config_error ce;
    memset(&ce, 0, sizeof(ce));
    const char *d = dir && *dir ? dir : ".";
    /* The project's name until config.xml says otherwise: its directory's. */
    const char *slash = strrchr(d, '/');
    const char *base = slash && slash[1] ? slash + 1 : d;
    /* Large (validator blocks, lists): on the heap, not the stack. */
    struct vs_project_config *cfg = VS_NEW(struct vs_project_config);
    int rc = vs_project_config_defaults(cfg, d, base, "http://127.0.0.1:8080/");
    /* Without the tag, one_result_per_user_per_wu is BOINC's default (off);
     * only a new project's config.xml turns it on. */
    cfg->policy.one_result_per_user_per_wu = false;
    if (rc) {
        snprintf(ce.file, sizeof(ce.file), "%s/config.xml", d);
        snprintf(ce.msg, sizeof(ce.msg), "project path too long");
        goto out;
    }
    rc = load_one(cfg, "config.xml", false, false, log, &ce);
    if (!rc)
        rc = load_one(cfg, "config_aux.xml", true, true, log, &ce);
    if (rc == -ENOENT || rc == -ENOTDIR)
        rc = VS_ENOTFOUND;
    if (!rc)
        *out = *cfg;
out:
    if (rc && out_err)
        *out_err = ce;
    vs_free(cfg);
    return rc;
}
