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
    cfg->max_wus_to_send = 10;
    cfg->one_result_per_user_per_wu = true;
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
enum kind { K_STR, K_PATH, K_INT, K_BOOL };
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
    T_INT(max_wus_in_progress),
    T_INT(max_wus_in_progress_gpu),
    T_INT(daily_result_quota),
    T_INT(max_wus_to_send),
    T_BOOL(one_result_per_user_per_wu),
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
static int read_daemon_blocks(const struct vs_xml_node *config, struct vs_arena *arena,
                              struct vs_project_config *cfg)
{
    const char *t;
    for (const struct vs_xml_node *n = vs_xml_child(config, "validator"); n;
         n = vs_xml_next_same(n)) {
        if (cfg->nvalidators == VS_MAX_APP_CONFIGS)
            return VS_ELIMIT;
        struct vs_validator_config *v = &cfg->validators[cfg->nvalidators++];
        memset(v, 0, sizeof(*v));
        const struct vs_xml_node *c;
        if ((c = vs_xml_child(n, "app")) &&
            copy(v->app, sizeof(v->app), vs_xml_text_trim(c, arena)))
            return VS_EPARSE;
        if ((c = vs_xml_child(n, "command")) &&
            copy(v->command, sizeof(v->command), vs_xml_text_trim(c, arena)))
            return VS_EPARSE;
        if ((c = vs_xml_child(n, "compare_command")) &&
            copy(v->compare_command, sizeof(v->compare_command), vs_xml_text_trim(c, arena)))
            return VS_EPARSE;
        v->method =
            v->command[0] || v->compare_command[0] ? VS_VALIDATE_COMMAND : VS_VALIDATE_BITWISE;
        if ((c = vs_xml_child(n, "method"))) {
            t = vs_xml_text_trim(c, arena);
            int m = -1;
            for (int k = 0; k < 3; k++)
                if (strcmp(t, method_names[k]) == 0)
                    m = k;
            if (m < 0)
                return VS_EPARSE;
            v->method = m;
        }
        if (v->method == VS_VALIDATE_COMMAND && !v->command[0] && !v->compare_command[0])
            return VS_EPARSE;
    }
    for (const struct vs_xml_node *n = vs_xml_child(config, "assimilator"); n;
         n = vs_xml_next_same(n)) {
        if (cfg->nassimilators == VS_MAX_APP_CONFIGS)
            return VS_ELIMIT;
        struct vs_assimilator_config *a = &cfg->assimilators[cfg->nassimilators++];
        memset(a, 0, sizeof(*a));
        const struct vs_xml_node *c;
        if ((c = vs_xml_child(n, "app")) &&
            copy(a->app, sizeof(a->app), vs_xml_text_trim(c, arena)))
            return VS_EPARSE;
        if ((c = vs_xml_child(n, "command")) &&
            copy(a->command, sizeof(a->command), vs_xml_text_trim(c, arena)))
            return VS_EPARSE;
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
            vs_xml_int(&w, t->name, *(const int *)f);
            break;
        case K_BOOL:
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

static int read_file(const char *path, size_t max, char **out, size_t *out_len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct vs_buf b;
    vs_buf_init(&b, max);
    char chunk[8192];
    int rc = 0;
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof(chunk));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            rc = -errno;
            break;
        }
        if (n == 0)
            break;
        if ((rc = vs_buf_append(&b, chunk, (size_t)n)) != 0)
            break;
    }
    close(fd);
    if (rc) {
        vs_buf_cleanup(&b);
        return rc;
    }
    if (!b.data)
        rc = vs_buf_puts(&b, "");
    *out = vs_buf_take(&b, out_len);
    return rc;
}

int vs_project_config_load(const char *dir, struct vs_project_config *out)
{
    struct vs_project_config cfg;
    char base[VS_PATH_MAX];
    const char *slash = strrchr(dir, '/');
    int rc = copy(base, sizeof(base), slash && slash[1] ? slash + 1 : dir);
    if (rc)
        return rc;
    /* Defaults first (so absent tags have sensible values), then the file. */
    if ((rc = vs_project_config_defaults(&cfg, dir, base, "http://127.0.0.1:8080/")) != 0)
        return rc;
    char path[VS_PATH_MAX + 16];
    if ((rc = join(path, sizeof(path), cfg.dir, "config.xml")) != 0)
        return rc;
    char *data = NULL;
    size_t len = 0;
    rc = read_file(path, CONFIG_MAX_BYTES, &data, &len);
    if (rc == -ENOENT || rc == -ENOTDIR)
        return VS_ENOTFOUND;
    if (rc)
        return rc;
    struct vs_arena arena;
    vs_arena_init(&arena, 16384);
    struct vs_xml_doc doc;
    struct vs_xml_error err;
    rc = vs_xml_parse(data, len, NULL, 0, &arena, &doc, &err);
    if (rc) {
        rc = VS_EPARSE;
        goto done;
    }
    const struct vs_xml_node *config = NULL;
    if (doc.root && strcmp(doc.root->name, "boinc") == 0)
        config = vs_xml_child(doc.root, "config");
    else if (doc.root && strcmp(doc.root->name, "config") == 0)
        config = doc.root;
    if (!config) {
        rc = VS_EPARSE;
        goto done;
    }
    /* A separate copy: joined paths are written into other fields of cfg. */
    char projdir[VS_PATH_MAX];
    memcpy(projdir, cfg.dir, sizeof(projdir));
    for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]) && rc == 0; i++) {
        const struct tag *t = &tags[i];
        const struct vs_xml_node *n = vs_xml_child(config, t->name);
        if (!n)
            continue;
        char *f = (char *)&cfg + t->offset;
        switch (t->kind) {
        case K_STR:
            rc = copy(f, t->size, vs_xml_text_trim(n, &arena));
            break;
        case K_PATH: {
            const char *v = vs_xml_text_trim(n, &arena);
            /* Relative paths are relative to the project directory. */
            rc = v[0] == '/' ? copy(f, t->size, v) : join(f, t->size, projdir, v);
            break;
        }
        case K_INT: {
            int64_t v;
            rc = vs_xml_get_int64(n, &v);
            if (rc == 0 && (v < INT_MIN || v > INT_MAX))
                rc = VS_EPARSE;
            if (rc == 0)
                *(int *)f = (int)v;
            break;
        }
        case K_BOOL:
            rc = vs_xml_get_bool(n, (bool *)f);
            break;
        }
        if (rc)
            rc = VS_EPARSE;
    }
    if (rc == 0 && (cfg.uldl_dir_fanout < 0 || cfg.uldl_dir_fanout > 65536))
        rc = VS_EPARSE;
    if (rc == 0)
        rc = read_daemon_blocks(config, &arena, &cfg) ? VS_EPARSE : 0;
    if (rc == 0)
        *out = cfg;
done:
    vs_arena_cleanup(&arena);
    vs_free(data);
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
