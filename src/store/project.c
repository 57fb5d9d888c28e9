/*
 * Project directory: config.xml read/write (BOINC's <boinc><config> layout),
 * the download/upload fanout hierarchy, and derived URLs.
 */
#include "store/project.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/log.h"
#include "volsched/md5.h"
#include "volsched/str.h"
#include "volsched/xml.h"

#define CONFIG_MAX_BYTES (1024 * 1024)

static int copy(char *dst, size_t size, const char *src)
{
    return vs_strlcpy(dst, src, size);
}

static int join(char *dst, size_t size, const char *a, const char *b)
{
    int n = snprintf(dst, size, "%s/%s", a, b);
    return n < 0 || (size_t)n >= size ? VS_ELIMIT : 0;
}

int vs_project_config_defaults(struct vs_project_config *cfg, const char *dir, const char *name,
                               const char *url)
{
    if (!dir || !*dir || !name || !url || !*url)
        return VS_EINVAL;
    memset(cfg, 0, sizeof(*cfg));
    int rc = 0;
    if (dir[0] == '/') {
        rc |= copy(cfg->dir, sizeof(cfg->dir), dir);
    } else {
        char cwd[VS_PATH_MAX];
        if (!getcwd(cwd, sizeof(cwd)))
            return -errno;
        rc |= join(cfg->dir, sizeof(cfg->dir), cwd, dir);
    }
    /* Drop trailing slashes so joined paths read cleanly. */
    size_t dl = strlen(cfg->dir);
    while (dl > 1 && cfg->dir[dl - 1] == '/')
        cfg->dir[--dl] = '\0';
    rc |= copy(cfg->long_name, sizeof(cfg->long_name), name);
    size_t ul = strlen(url);
    int n = snprintf(cfg->master_url, sizeof(cfg->master_url), "%s%s", url,
                     url[ul - 1] == '/' ? "" : "/");
    if (n < 0 || (size_t)n >= sizeof(cfg->master_url))
        return VS_ELIMIT;
    /* BOINC's make_project layout of URLs under the master URL. */
    n = snprintf(cfg->download_url, sizeof(cfg->download_url), "%sdownload", cfg->master_url);
    rc |= n < 0 || (size_t)n >= sizeof(cfg->download_url) ? VS_ELIMIT : 0;
    n = snprintf(cfg->cgi_url, sizeof(cfg->cgi_url), "%scgi-bin/", cfg->master_url);
    rc |= n < 0 || (size_t)n >= sizeof(cfg->cgi_url) ? VS_ELIMIT : 0;
    n = snprintf(cfg->upload_url, sizeof(cfg->upload_url), "%sfile_upload_handler", cfg->cgi_url);
    rc |= n < 0 || (size_t)n >= sizeof(cfg->upload_url) ? VS_ELIMIT : 0;
    rc |= join(cfg->download_dir, sizeof(cfg->download_dir), cfg->dir, "download");
    rc |= join(cfg->upload_dir, sizeof(cfg->upload_dir), cfg->dir, "upload");
    rc |= join(cfg->key_dir, sizeof(cfg->key_dir), cfg->dir, "keys");
    n = snprintf(cfg->store_url, sizeof(cfg->store_url), "sqlite:%s/volsched.db", cfg->dir);
    rc |= n < 0 || (size_t)n >= sizeof(cfg->store_url) ? VS_ELIMIT : 0;
    cfg->uldl_dir_fanout = VS_DEFAULT_FANOUT;
    cfg->enable_assignment = true;
    cfg->enable_assignment_multi = true;
    vs_sp_config_defaults(&cfg->policy);
    cfg->policy.one_result_per_user_per_wu = true;
    cfg->report_grace_period = 3600;
    cfg->delete_delay_hours = 0;
    cfg->daemon_command_timeout = 600;
    /* BOINC-COMPAT: the validator's DELAYED retry is 6 hours, the file
     * deleter retries errors hourly. */
    cfg->validator_retry_secs = 6 * 3600;
    cfg->assimilator_retry_secs = 600;
    cfg->file_deleter_retry_secs = 3600;
    return rc ? VS_ELIMIT : 0;
}

/* ------------------------------------------------------------------------ */
/* config.xml                                                                */

/* The tags of config.xml that volsched reads, bound to their fields. */
/* K_POLICY(_BOOL): written by init; read by vs_config_load into cfg->policy. */
enum kind { K_STR, K_PATH, K_INT, K_BOOL, K_POLICY, K_POLICY_BOOL };
struct tag {
    const char *name;
    enum kind kind;
    size_t offset;
    size_t size;
};

#define T_STR(f)                                                                                   \
    {                                                                                              \
#f, K_STR, offsetof(struct vs_project_config, f),                                          \
            sizeof(((struct vs_project_config *)0)->f)                                             \
    }
#define T_PATH(f)                                                                                  \
    {                                                                                              \
#f, K_PATH, offsetof(struct vs_project_config, f),                                         \
            sizeof(((struct vs_project_config *)0)->f)                                             \
    }
#define T_INT(f)                                                                                   \
    {                                                                                              \
#f, K_INT, offsetof(struct vs_project_config, f), 0                                        \
    }
#define T_BOOL(f)                                                                                  \
    {                                                                                              \
#f, K_BOOL, offsetof(struct vs_project_config, f), 0                                       \
    }

/* BOINC-COMPAT: every name here is a config.xml tag of BOINC's, except
 * store_url (volsched: where the store is). */
static const struct tag tags[] = {
    T_STR(long_name),
    T_STR(master_url),
    T_STR(download_url),
    T_STR(upload_url),
    T_STR(cgi_url),
    T_PATH(download_dir),
    T_PATH(upload_dir),
    T_PATH(key_dir),
    T_STR(store_url),
    T_INT(uldl_dir_fanout),
    T_BOOL(enable_assignment),
    T_BOOL(enable_assignment_multi),
    {"max_wus_in_progress", K_POLICY,
     offsetof(struct vs_project_config, policy.limits.project.cpu.jobs), 0},
    {"max_wus_in_progress_gpu", K_POLICY,
     offsetof(struct vs_project_config, policy.limits.project.gpu.jobs), 0},
    {"daily_result_quota", K_POLICY, offsetof(struct vs_project_config, policy.daily_result_quota),
     0},
    {"max_wus_to_send", K_POLICY, offsetof(struct vs_project_config, policy.max_wus_to_send), 0},
    {"one_result_per_user_per_wu", K_POLICY_BOOL,
     offsetof(struct vs_project_config, policy.one_result_per_user_per_wu), 0},
    T_INT(min_sendwork_interval),
    T_INT(report_grace_period),
    T_INT(delete_delay_hours),
    T_BOOL(dont_generate_upload_certificates),
    T_BOOL(locality_scheduling),
    T_INT(locality_scheduling_wait_period),
    T_BOOL(locality_scheduling_sorted_order),
    T_INT(reliable_priority_on_over),
    T_INT(reliable_priority_on_over_except_error),
    T_BOOL(hr_class_static),
    /* volsched: the back-end daemons' timers. */
    T_INT(daemon_command_timeout),
    T_INT(validator_retry_secs),
    T_INT(assimilator_retry_secs),
    T_INT(file_deleter_retry_secs),
};

static const char *const method_names[] = {"bitwise", "always_valid", "command"};

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

static void write_daemon_blocks(const struct vs_project_config *cfg, struct vs_xml_writer *w)
{
    for (int i = 0; i < cfg->nvalidators; i++) {
        const struct vs_validator_config *v = &cfg->validators[i];
        vs_xml_open(w, "validator");
        if (v->app[0])
            vs_xml_str(w, "app", v->app);
        if (v->method >= 0 && v->method <= VS_VALIDATE_COMMAND)
            vs_xml_str(w, "method", method_names[v->method]);
        if (v->command[0])
            vs_xml_str(w, "command", v->command);
        if (v->compare_command[0])
            vs_xml_str(w, "compare_command", v->compare_command);
        vs_xml_close(w);
    }
    for (int i = 0; i < cfg->nassimilators; i++) {
        const struct vs_assimilator_config *a = &cfg->assimilators[i];
        vs_xml_open(w, "assimilator");
        if (a->app[0])
            vs_xml_str(w, "app", a->app);
        if (a->command[0])
            vs_xml_str(w, "command", a->command);
        vs_xml_close(w);
    }
}

/* Reads the <validator> and <assimilator> blocks of <config>. */
/* A block child's text into dst; an error (with its line) if too long. */
static int block_copy(const struct vs_config_kv *kv, char *dst, size_t size, const char *file,
                      struct vs_config_error *err)
{
    if (copy(dst, size, kv->text) == 0)
        return 0;
    if (err) {
        snprintf(err->file, sizeof(err->file), "%s", file);
        err->line = kv->line;
        snprintf(err->msg, sizeof(err->msg), "<%s> longer than %zu bytes", kv->name, size - 1);
    }
    return VS_ECONFIG;
}

static int block_error(struct vs_config_error *err, const char *file, unsigned line,
                       const char *msg, const char *what)
{
    if (err) {
        if (vs_strlcpy(err->file, file, sizeof(err->file)) != 0) { /* a long path is cut */
        }
        err->line = line;
        snprintf(err->msg, sizeof(err->msg), "%s%s", msg, what ? what : "");
    }
    return VS_ECONFIG;
}

/* The <validator> and <assimilator> blocks, as vs_config_load kept them. */
static int read_daemon_blocks(const struct vs_config *vc, const char *file,
                              struct vs_project_config *cfg, struct vs_config_error *err)
{
    for (size_t i = 0; i < vc->n_blocks; i++) {
        const struct vs_config_block *bl = &vc->blocks[i];
        bool is_val = strcmp(bl->tag, "validator") == 0;
        if ((is_val ? cfg->nvalidators : cfg->nassimilators) == VS_MAX_APP_CONFIGS)
            return block_error(err, file, bl->line, "too many blocks: <", bl->tag);
        struct vs_validator_config v;
        struct vs_assimilator_config as;
        memset(&v, 0, sizeof(v));
        memset(&as, 0, sizeof(as));
        const struct vs_config_kv *method = NULL;
        for (size_t k = 0; k < bl->n_kv; k++) {
            const struct vs_config_kv *kv = &bl->kv[k];
            int rc = 0;
            if (strcmp(kv->name, "app") == 0)
                rc = is_val ? block_copy(kv, v.app, sizeof(v.app), file, err)
                            : block_copy(kv, as.app, sizeof(as.app), file, err);
            else if (strcmp(kv->name, "command") == 0)
                rc = is_val ? block_copy(kv, v.command, sizeof(v.command), file, err)
                            : block_copy(kv, as.command, sizeof(as.command), file, err);
            else if (is_val && strcmp(kv->name, "compare_command") == 0)
                rc = block_copy(kv, v.compare_command, sizeof(v.compare_command), file, err);
            else if (is_val && strcmp(kv->name, "method") == 0)
                method = kv;
            else
                return block_error(err, file, kv->line, "unknown tag in the block: <", kv->name);
            if (rc)
                return rc;
        }
        if (!is_val) {
            cfg->assimilators[cfg->nassimilators++] = as;
            continue;
        }
        v.method = v.command[0] || v.compare_command[0] ? VS_VALIDATE_COMMAND : VS_VALIDATE_BITWISE;
        if (method) {
            int m = -1;
            for (int k = 0; k < 3; k++)
                if (strcmp(method->text, method_names[k]) == 0)
                    m = k;
            if (m < 0)
                return block_error(err, file, method->line,
                                   "<method> must be bitwise, always_valid or command, not ",
                                   method->text);
            v.method = m;
        }
        if (v.method == VS_VALIDATE_COMMAND && !v.command[0] && !v.compare_command[0])
            return block_error(err, file, bl->line,
                               "<validator> method command needs <command> or <compare_command>",
                               NULL);
        cfg->validators[cfg->nvalidators++] = v;
    }
    return 0;
}

int vs_project_config_write(const struct vs_project_config *cfg)
{
    struct vs_buf b;
    vs_buf_init(&b, CONFIG_MAX_BYTES);
    struct vs_xml_writer w;
    int rc = vs_buf_puts(&b, "<?xml version=\"1.0\"?>\n");
    vs_xml_writer_init(&w, &b);
    vs_xml_open(&w, "boinc");
    vs_xml_open(&w, "config");
    for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
        const struct tag *t = &tags[i];
        const char *f = (const char *)cfg + t->offset;
        switch (t->kind) {
        case K_STR:
        case K_PATH:
            vs_xml_str(&w, t->name, f);
            break;
        case K_INT:
        case K_POLICY:
            vs_xml_int(&w, t->name, *(const int *)f);
            break;
        case K_BOOL:
        case K_POLICY_BOOL:
            vs_xml_int(&w, t->name, *(const bool *)f ? 1 : 0);
            break;
        }
    }
    write_daemon_blocks(cfg, &w);
    vs_xml_close(&w);
    /* BOINC's daemons and tasks sections: `volsched serve` runs its daemons
     * in-process, so they are listed for BOINC tools only. */
    vs_xml_open(&w, "daemons");
    vs_xml_close(&w);
    vs_xml_close(&w);
    if (rc == 0)
        rc = vs_xml_writer_error(&w);
    char path[VS_PATH_MAX + 16], tmp[VS_PATH_MAX + 32];
    if (rc == 0)
        rc = join(path, sizeof(path), cfg->dir, "config.xml");
    if (rc == 0) {
        int n = snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid());
        rc = n < 0 || (size_t)n >= sizeof(tmp) ? VS_ELIMIT : 0;
    }
    if (rc == 0) {
        FILE *fp = fopen(tmp, "w");
        if (!fp) {
            rc = -errno;
        } else {
            size_t wr = fwrite(b.data, 1, b.len, fp);
            int fl = fflush(fp) != 0 || fsync(fileno(fp)) != 0;
            if (fclose(fp) != 0 || wr != b.len || fl)
                rc = VS_EIO;
            if (rc == 0 && rename(tmp, path) != 0)
                rc = -errno;
            if (rc != 0)
                unlink(tmp);
        }
    }
    vs_buf_cleanup(&b);
    return rc;
}

int vs_project_config_load(const char *dir, struct vs_project_config *out)
{
    return vs_project_config_load_checked(dir, NULL, out, NULL);
}

/* The value vs_config_load read for table tag t, into field f of a
 * struct vs_project_config (paths relative to the project directory). */
static int copy_from(const struct vs_config *vc, const struct tag *t, char *f, const char *projdir)
{
    static const struct {
        const char *name;
        size_t off;
    } strs[] = {
        {"long_name", offsetof(struct vs_config, long_name)},
        {"master_url", offsetof(struct vs_config, master_url)},
        {"download_url", offsetof(struct vs_config, download_url)},
        {"upload_url", offsetof(struct vs_config, upload_url)},
        {"cgi_url", offsetof(struct vs_config, cgi_url)},
        {"download_dir", offsetof(struct vs_config, download_dir)},
        {"upload_dir", offsetof(struct vs_config, upload_dir)},
        {"key_dir", offsetof(struct vs_config, key_dir)},
        {"store_url", offsetof(struct vs_config, store_url)},
    };
    static const struct {
        const char *name;
        size_t off;
    } nums[] = {
        {"uldl_dir_fanout", offsetof(struct vs_config, uldl_dir_fanout)},
        {"min_sendwork_interval", offsetof(struct vs_config, min_sendwork_interval)},
        {"report_grace_period", offsetof(struct vs_config, report_grace_period)},
        {"delete_delay_hours", offsetof(struct vs_config, delete_delay_hours)},
        {"locality_scheduling_wait_period",
         offsetof(struct vs_config, locality_scheduling_wait_period)},
        {"reliable_priority_on_over", offsetof(struct vs_config, reliable_priority_on_over)},
        {"reliable_priority_on_over_except_error",
         offsetof(struct vs_config, reliable_priority_on_over_except_error)},
        {"daemon_command_timeout", offsetof(struct vs_config, daemon_command_timeout)},
        {"validator_retry_secs", offsetof(struct vs_config, validator_retry_secs)},
        {"assimilator_retry_secs", offsetof(struct vs_config, assimilator_retry_secs)},
        {"file_deleter_retry_secs", offsetof(struct vs_config, file_deleter_retry_secs)},
    };
    static const struct {
        const char *name;
        size_t off;
    } flags[] = {
        {"enable_assignment", offsetof(struct vs_config, enable_assignment)},
        {"enable_assignment_multi", offsetof(struct vs_config, enable_assignment_multi)},
        {"dont_generate_upload_certificates",
         offsetof(struct vs_config, dont_generate_upload_certificates)},
        {"locality_scheduling", offsetof(struct vs_config, locality_scheduling)},
        {"locality_scheduling_sorted_order",
         offsetof(struct vs_config, locality_scheduling_sorted_order)},
        {"hr_class_static", offsetof(struct vs_config, hr_class_static)},
    };
    const char *base = (const char *)vc;
    switch (t->kind) {
    case K_STR:
    case K_PATH:
        for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
            if (strcmp(strs[i].name, t->name) != 0)
                continue;
            const char *v = *(char *const *)(base + strs[i].off);
            if (!v)
                return 0;
            /* Relative paths are relative to the project directory. */
            if (t->kind == K_PATH && v[0] != '/')
                return join(f, t->size, projdir, v);
            return copy(f, t->size, v);
        }
        return VS_EINTERNAL;
    case K_INT:
        for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
            if (strcmp(nums[i].name, t->name) == 0) {
                *(int *)f = *(const int *)(base + nums[i].off);
                return 0;
            }
        }
        return VS_EINTERNAL;
    case K_BOOL:
        for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
            if (strcmp(flags[i].name, t->name) == 0) {
                *(bool *)f = *(const bool *)(base + flags[i].off);
                return 0;
            }
        }
        return VS_EINTERNAL;
    case K_POLICY:
    case K_POLICY_BOOL:
        return 0;
    }
    return VS_EINTERNAL;
}

int vs_project_config_load_checked(const char *dir, struct vs_log *log,
                                   struct vs_project_config *out, struct vs_config_error *out_err)
{
    struct vs_project_config cfg;
    char base[VS_PATH_MAX];
    const char *slash = strrchr(dir, '/');
    int rc = copy(base, sizeof(base), slash && slash[1] ? slash + 1 : dir);
    if (rc)
        return rc;
    /* Defaults first (so absent tags keep them), then the files. */
    if ((rc = vs_project_config_defaults(&cfg, dir, base, "http://127.0.0.1:8080/")) != 0)
        return rc;
    char path[VS_PATH_MAX + 16];
    if ((rc = join(path, sizeof(path), cfg.dir, "config.xml")) != 0)
        return rc;
    /* config.xml and config_aux.xml have one reader (volsched/config.h):
     * it checks every value (file:line errors), warns about unknown tags and
     * reads the work-send rules and job limits. What it read is copied here,
     * tag by tag, only for the tags the file sets. */
    struct vs_config vc;
    struct vs_config_error ce;
    memset(&ce, 0, sizeof(ce));
    rc = vs_config_load(&vc, cfg.dir, &ce);
    if (rc) {
        if (out_err)
            *out_err = ce;
        return rc == -ENOENT || rc == -ENOTDIR ? VS_ENOTFOUND : rc;
    }
    for (size_t i = 0; i < vc.warnings.n; i++)
        VS_LOG(log, VS_LOG_WARN, "%s", vc.warnings.v[i]);
    cfg.policy = vc.policy;
    char projdir[VS_PATH_MAX];
    memcpy(projdir, cfg.dir, sizeof(projdir));
    for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]) && rc == 0; i++) {
        const struct tag *t = &tags[i];
        if (t->kind == K_POLICY || t->kind == K_POLICY_BOOL || !vs_config_seen(&vc, t->name))
            continue;
        char *f = (char *)&cfg + t->offset;
        rc = copy_from(&vc, t, f, projdir);
        if (rc)
            rc = block_error(out_err, path, 0, "value too long: <", t->name);
    }
    if (rc == 0 && cfg.uldl_dir_fanout > 65536) {
        rc = block_error(out_err, path, 0, "<uldl_dir_fanout> must be at most 65536", NULL);
    }
    if (rc == 0)
        rc = read_daemon_blocks(&vc, path, &cfg, out_err);
    vs_config_cleanup(&vc);
    if (rc == 0)
        *out = cfg;
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Fanout hierarchy                                                          */

int vs_project_hier_rel(int fanout, const char *name, char *out, size_t outsize)
{
    if (!name || !*name || fanout < 0)
        return VS_EINVAL;
    if (fanout == 0)
        return copy(out, outsize, name);
    char md5[VS_MD5_HEX_LEN + 1];
    int rc = vs_md5_hex(name, strlen(name), md5);
    if (rc)
        return rc;
    /* BOINC-COMPAT dir_hier_path: hex digits 1..7 of md5(name). */
    char digits[8];
    memcpy(digits, md5 + 1, 7);
    digits[7] = '\0';
    unsigned long h = strtoul(digits, NULL, 16);
    int n = snprintf(out, outsize, "%lx/%s", h % (unsigned long)fanout, name);
    return n < 0 || (size_t)n >= outsize ? VS_ELIMIT : 0;
}

static int hier_path(const char *root, int fanout, const char *name, bool mk, char *out,
                     size_t outsize)
{
    char rel[VS_PATH_MAX];
    int rc = vs_project_hier_rel(fanout, name, rel, sizeof(rel));
    if (rc)
        return rc;
    if ((rc = join(out, outsize, root, rel)) != 0)
        return rc;
    if (mk && fanout > 0) {
        char d[VS_PATH_MAX];
        if ((rc = copy(d, sizeof(d), out)) != 0)
            return rc;
        char *slash = strrchr(d, '/');
        *slash = '\0';
        if (mkdir(d, 0755) != 0 && errno != EEXIST)
            return -errno;
    }
    return 0;
}

int vs_project_download_path(const struct vs_project_config *cfg, const char *name, bool mkdir_,
                             char *out, size_t outsize)
{
    return hier_path(cfg->download_dir, cfg->uldl_dir_fanout, name, mkdir_, out, outsize);
}

int vs_project_upload_path(const struct vs_project_config *cfg, const char *name, bool mkdir_,
                           char *out, size_t outsize)
{
    return hier_path(cfg->upload_dir, cfg->uldl_dir_fanout, name, mkdir_, out, outsize);
}

int vs_project_download_url(const struct vs_project_config *cfg, const char *name, char *out,
                            size_t outsize)
{
    char rel[VS_PATH_MAX];
    int rc = vs_project_hier_rel(cfg->uldl_dir_fanout, name, rel, sizeof(rel));
    if (rc)
        return rc;
    return join(out, outsize, cfg->download_url, rel);
}

int vs_project_scheduler_url(const struct vs_project_config *cfg, char *out, size_t outsize)
{
    int n = snprintf(out, outsize, "%scgi", cfg->cgi_url);
    return n < 0 || (size_t)n >= outsize ? VS_ELIMIT : 0;
}

int vs_project_store_open(const struct vs_project_config *cfg, bool create, struct vs_log *log,
                          struct vs_store **out_store)
{
    return vs_store_open(cfg->store_url, create ? VS_STORE_CREATE : 0, log, out_store);
}
