/*
 * The statistics exports (see db_dump.h).
 */
#include "volsched/db_dump.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "volsched/buf.h"
#include "volsched/log.h"
#include "volsched/md5.h"
#include "volsched/store_credit.h"
#include "volsched/str.h"
#include "volsched/xml.h"

#define FLUSH_AT (64 * 1024)

/* One export file being written: rows are formatted into buf, which goes
 * to the gzip stream (or the plain file) when it grows past FLUSH_AT. */
struct out {
    char tmp[VS_PATH_MAX + 64], final[VS_PATH_MAX + 64];
    gzFile gz;
    FILE *fp;
    struct vs_buf buf;
    struct vs_xml_writer w;
    const char *tag; /* the file's element (a literal) */
    int err;
};

/* BOINC-COMPAT: ZFILE's header line. */
static const char header[] = "<?xml version=\"1.0\" encoding=\"iso-8859-1\"?>\n";

static int out_open(struct out *o, const char *dir, const char *name, bool gz, const char *tag)
{
    memset(o, 0, sizeof(*o));
    snprintf(o->final, sizeof(o->final), "%s/%s", dir, name);
    snprintf(o->tmp, sizeof(o->tmp), "%s/.%s.tmp", dir, name);
    int fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    if (gz) {
        o->gz = gzdopen(fd, "wb1"); /* fast: the export runs beside the scheduler */
        if (!o->gz) {
            close(fd);
            unlink(o->tmp);
            return VS_EIO;
        }
    } else {
        o->fp = fdopen(fd, "w");
        if (!o->fp) {
            int e = -errno;
            close(fd);
            unlink(o->tmp);
            return e;
        }
    }
    vs_buf_init(&o->buf, VS_BUF_UNLIMITED);
    vs_xml_writer_init(&o->w, &o->buf);
    o->err = vs_buf_puts(&o->buf, header);
    o->tag = tag;
    vs_xml_open(&o->w, tag);
    return 0;
}

static void out_flush(struct out *o)
{
    if (o->err == 0 && o->buf.len) {
        if (o->gz)
            o->err =
                gzwrite(o->gz, o->buf.data, (unsigned)o->buf.len) == (int)o->buf.len ? 0 : VS_EIO;
        else
            o->err = fwrite(o->buf.data, 1, o->buf.len, o->fp) == o->buf.len ? 0 : VS_EIO;
    }
    vs_buf_reset(&o->buf);
    /* The writer starts again inside the file's element, which it still
     * has to close. */
    bool indent = o->w.indent;
    vs_xml_writer_init(&o->w, &o->buf);
    o->w.indent = indent;
    o->w.stack[0] = o->tag;
    o->w.depth = 1;
}

/* Closes the file; on success renames it over its final name. */
static int out_close(struct out *o, bool ok)
{
    if (ok) {
        vs_xml_close(&o->w);
        if (o->err == 0)
            o->err = vs_xml_writer_error(&o->w);
    }
    out_flush(o);
    int rc = ok ? o->err : VS_EIO;
    if (o->gz) {
        /* gzclose flushes; fsync needs the descriptor first. */
        if (gzflush(o->gz, Z_FINISH) != Z_OK && rc == 0)
            rc = VS_EIO;
        if (gzclose(o->gz) != Z_OK && rc == 0)
            rc = VS_EIO;
        /* gzclose closed the descriptor: reopen to sync the data. */
        int fd = open(o->tmp, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            if (fsync(fd) != 0 && rc == 0)
                rc = -errno;
            close(fd);
        }
    } else if (o->fp) {
        if (fflush(o->fp) != 0 && rc == 0)
            rc = -errno;
        if (fsync(fileno(o->fp)) != 0 && rc == 0)
            rc = -errno;
        if (fclose(o->fp) != 0 && rc == 0)
            rc = -errno;
    }
    if (rc == 0 && rename(o->tmp, o->final) != 0)
        rc = -errno;
    if (rc)
        unlink(o->tmp);
    vs_buf_cleanup(&o->buf);
    return rc;
}

int vs_db_dump_cpid(const char *cross_project_id, const char *email, char out[33])
{
    char buf[2 * VS_NAME_MAX + 8];
    int n = snprintf(buf, sizeof(buf), "%s%s", cross_project_id, email);
    if (n < 0 || (size_t)n >= sizeof(buf))
        return VS_ELIMIT;
    return vs_md5_hex(buf, (size_t)n, out);
}

struct walk {
    struct out *o;
    const struct vs_db_dump_options *opt;
    int64_t n;
    double total;
};

static void common(struct vs_xml_writer *w, const struct vs_stats_row *r)
{
    vs_xml_double(w, "total_credit", r->total);
    vs_xml_double(w, "expavg_credit", r->expavg);
    vs_xml_double(w, "expavg_time", r->expavg_time);
}

static int row_done(struct walk *k)
{
    k->n++;
    vs_xml_close(&k->o->w);
    if (k->o->buf.len >= FLUSH_AT)
        out_flush(k->o);
    return k->o->err;
}

static int user_row(void *ctx, const struct vs_stats_row *r)
{
    struct walk *k = ctx;
    struct vs_xml_writer *w = &k->o->w;
    char cpid[33];
    int rc = vs_db_dump_cpid(r->cpid, r->email, cpid);
    if (rc)
        return rc;
    vs_xml_open(w, "user");
    vs_xml_int(w, "id", r->id);
    vs_xml_str(w, "name", k->opt->names ? r->name : "");
    vs_xml_int(w, "create_time", r->create_time);
    common(w, r);
    vs_xml_str(w, "cpid", cpid);
    if (r->ref)
        vs_xml_int(w, "teamid", r->ref);
    k->total += r->total;
    return row_done(k);
}

static int team_row(void *ctx, const struct vs_stats_row *r)
{
    struct walk *k = ctx;
    struct vs_xml_writer *w = &k->o->w;
    vs_xml_open(w, "team");
    vs_xml_int(w, "id", r->id);
    vs_xml_int(w, "type", 0);
    vs_xml_str(w, "name", r->name);
    vs_xml_int(w, "userid", r->ref);
    common(w, r);
    vs_xml_int(w, "create_time", r->create_time);
    vs_xml_str(w, "country", "");
    return row_done(k);
}

static int host_row(void *ctx, const struct vs_stats_row *r)
{
    struct walk *k = ctx;
    struct vs_xml_writer *w = &k->o->w;
    /* BOINC-COMPAT: without <detail/>, a host is not tied to its owner. */
    vs_xml_open(w, "host");
    vs_xml_int(w, "id", r->id);
    common(w, r);
    vs_xml_str(w, "p_vendor", r->p_vendor);
    vs_xml_str(w, "p_model", r->p_model);
    vs_xml_str(w, "os_name", r->os_name);
    vs_xml_str(w, "os_version", r->os_version);
    return row_done(k);
}

static int dump_table(struct vs_store *s, const char *dir, const char *file, const char *tag,
                      enum vs_credit_owner owner, vs_store_stats_fn fn,
                      const struct vs_db_dump_options *opt, int64_t *out_n, double *out_total)
{
    struct out o;
    int rc = out_open(&o, dir, file, true, tag);
    if (rc)
        return rc;
    struct walk k = {&o, opt, 0, 0};
    rc = vs_store_stats_each(s, owner, 0, fn, &k);
    int crc = out_close(&o, rc == 0);
    if (rc == 0)
        rc = crc;
    if (rc == 0) {
        *out_n = k.n;
        if (out_total)
            *out_total = k.total;
    }
    return rc;
}

static int tables_file(struct vs_store *s, const char *dir, int64_t now,
                       const struct vs_db_dump_stats *st)
{
    struct out o;
    int rc = out_open(&o, dir, "tables.xml", false, "tables");
    if (rc)
        return rc;
    struct vs_xml_writer *w = &o.w;
    vs_xml_int(w, "update_time", now);
    vs_xml_int(w, "nusers_total", st->nusers);
    vs_xml_int(w, "nteams_total", st->nteams);
    vs_xml_int(w, "nhosts_total", st->nhosts);
    vs_xml_double(w, "total_credit", st->total_credit);
    struct vs_catalog cat;
    memset(&cat, 0, sizeof(cat));
    rc = vs_store_catalog_load(s, &cat);
    if (rc == 0) {
        vs_xml_open(w, "applications");
        for (size_t i = 0; i < cat.napps; i++) {
            vs_xml_open(w, "application");
            vs_xml_str(w, "name",
                       cat.apps[i].user_friendly_name[0] ? cat.apps[i].user_friendly_name
                                                         : cat.apps[i].name);
            vs_xml_close(w);
        }
        vs_xml_close(w);
    }
    vs_catalog_cleanup(&cat);
    int crc = out_close(&o, rc == 0);
    return rc ? rc : crc;
}

int vs_db_dump(struct vs_store *s, const struct vs_project_config *cfg, int64_t now,
               const struct vs_db_dump_options *opt, struct vs_log *log,
               struct vs_db_dump_stats *stats)
{
    static const struct vs_db_dump_options defaults = {false, NULL};
    if (!opt)
        opt = &defaults;
    struct vs_db_dump_stats st;
    memset(&st, 0, sizeof(st));
    int n = opt->out_dir ? snprintf(st.out_dir, sizeof(st.out_dir), "%s", opt->out_dir)
                         : snprintf(st.out_dir, sizeof(st.out_dir), "%s/stats", cfg->dir);
    if (n < 0 || (size_t)n >= sizeof(st.out_dir))
        return VS_ELIMIT;
    if (mkdir(st.out_dir, 0755) != 0 && errno != EEXIST)
        return -errno;
    int rc = dump_table(s, st.out_dir, "user.gz", "users", VS_CREDIT_USER, user_row, opt,
                        &st.nusers, &st.total_credit);
    if (rc == 0)
        rc = dump_table(s, st.out_dir, "team.gz", "teams", VS_CREDIT_TEAM, team_row, opt,
                        &st.nteams, NULL);
    if (rc == 0)
        rc = dump_table(s, st.out_dir, "host.gz", "hosts", VS_CREDIT_HOST, host_row, opt,
                        &st.nhosts, NULL);
    if (rc == 0)
        rc = tables_file(s, st.out_dir, now, &st);
    if (rc)
        VS_LOG(log, VS_LOG_ERROR, "db_dump: %s: %s", st.out_dir, vs_strerror(rc));
    else
        VS_LOG(log, VS_LOG_INFO, "db_dump: %s: %lld users, %lld teams, %lld hosts, %.2f credit",
               st.out_dir, (long long)st.nusers, (long long)st.nteams, (long long)st.nhosts,
               st.total_credit);
    if (stats)
        *stats = st;
    return rc;
}

bool vs_db_dump_due(const struct vs_project_config *cfg, int64_t now)
{
    if (cfg->db_dump_interval_hours <= 0)
        return false;
    char path[VS_PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/stats/tables.xml", cfg->dir);
    struct stat sb;
    if (stat(path, &sb) != 0)
        return true;
    return now - (int64_t)sb.st_mtime >= (int64_t)cfg->db_dump_interval_hours * 3600;
}
