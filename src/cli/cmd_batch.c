/*
 * volsched batch submit|status|wait|fetch|abort|retire --url URL --auth KEY:
 * a scientist's side of remote job submission (docs/submitting.md), over
 * the same HTTP API as BOINC's lib/submit_api.py, so it works from any
 * machine against any volsched (or BOINC) project that grants the account
 * submit rights.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli_util.h"
#include "cmd.h"
#include "volsched/batch_http.h"
#include "volsched/md5.h"
#include "volsched/str.h"
#include "volsched/strset.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched batch submit --url URL --auth KEY --app APP [--jobs FILE]\n"
               "                             [--name NAME] [--fpops-est X] [--fpops-bound X]\n"
               "                             [--memory-bound BYTES] [--delay-bound SECS]\n"
               "                             [--priority N] [--own-hosts] [--inline]\n"
               "       volsched batch status --url URL --auth KEY [--batch ID]\n"
               "       volsched batch wait   --url URL --auth KEY --batch ID [--timeout SECS]\n"
               "       volsched batch fetch  --url URL --auth KEY --batch ID --dir DIR [--zip]\n"
               "       volsched batch abort|retire --url URL --auth KEY --batch ID\n"
               "\n"
               "URL is the project's master URL, KEY your account key (authenticator).\n"
               "submit reads one job per line of FILE (default: standard input): its input\n"
               "files, then optionally ' -- ' and the job's command-line arguments. Each\n"
               "file is uploaded once (job_file.php, named by its md5; a file the server\n"
               "has already is not sent again), or sent inside the request with --inline\n"
               "(small inputs). It prints the batch id. --own-hosts runs the jobs only on\n"
               "computers attached with your account.\n"
               "status prints each batch (or one); wait polls until the batch is complete or\n"
               "aborted (exit 1 on timeout); fetch writes each finished job's output files to\n"
               "DIR/JOB_N (N: the output's number), or DIR/batch_ID.zip with --zip; abort\n"
               "cancels the jobs not done (hosts running them are told to stop); retire\n"
               "removes the batch's jobs and files from the server.\n"
               "Progress bars go to standard error when it is a terminal (--progress forces).\n");
}

struct opts {
    const char *url, *auth, *app, *jobs, *name, *batch, *dir, *timeout;
    const char *fpops_est, *fpops_bound, *memory_bound, *delay_bound, *priority;
    bool own_hosts, inline_inputs, zip, progress;
};

/* ---- submit ---- */

struct job {
    size_t first, n; /* its files: indexes into files[] */
    const char *args;
};

struct plan {
    char **paths; /* distinct files */
    char (*names)[40];
    size_t nfiles, cap;
    size_t *refs; /* per job input: index into paths */
    size_t nrefs, rcap;
    struct job *jobs;
    size_t njobs, jcap;
    struct vs_strset by_path;
};

static const char *path_key(const void *ctx, size_t i)
{
    return ((const struct plan *)ctx)->paths[i];
}

static int add_file(struct plan *p, const char *path, size_t *out)
{
    size_t i = vs_strset_find(&p->by_path, path, path_key, p);
    if (i != SIZE_MAX) {
        *out = i;
        return 0;
    }
    char md5[VS_MD5_HEX_LEN + 1];
    int64_t n;
    if (vs_md5_file(path, md5, &n) != 0) {
        fprintf(stderr, "volsched batch submit: cannot read input file '%s'\n", path);
        return -1;
    }
    if (p->nfiles == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 64;
        p->paths = vs_xrealloc(p->paths, p->cap * sizeof(*p->paths));
        p->names = vs_xrealloc(p->names, p->cap * sizeof(*p->names));
    }
    p->paths[p->nfiles] = vs_xstrdup(path);
    snprintf(p->names[p->nfiles], sizeof(p->names[0]), "jf_%s", md5);
    vs_strset_add(&p->by_path, p->nfiles, path_key, p);
    *out = p->nfiles++;
    return 0;
}

static void plan_free(struct plan *p)
{
    for (size_t i = 0; i < p->nfiles; i++)
        vs_free(p->paths[i]);
    for (size_t i = 0; i < p->njobs; i++)
        vs_free((char *)p->jobs[i].args);
    vs_free(p->paths);
    vs_free(p->names);
    vs_free(p->refs);
    vs_free(p->jobs);
    vs_strset_cleanup(&p->by_path);
}

/* One job per line: FILE... [-- ARGS]. */
static int read_jobs(FILE *in, struct plan *p)
{
    char line[65536];
    while (fgets(line, sizeof(line), in)) {
        size_t len = strlen(line);
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        char *args = strstr(line, " -- ");
        if (args) {
            *args = '\0';
            args += 4;
        }
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '\0' || *s == '#')
            continue;
        if (p->njobs == p->jcap) {
            p->jcap = p->jcap ? 2 * p->jcap : 256;
            p->jobs = vs_xrealloc(p->jobs, p->jcap * sizeof(*p->jobs));
        }
        struct job *j = &p->jobs[p->njobs++];
        j->first = p->nrefs;
        j->n = 0;
        j->args = args ? vs_xstrdup(args) : NULL;
        for (char *tok = s; *tok;) {
            char *e = tok;
            while (*e && *e != ' ' && *e != '\t')
                e++;
            char save = *e;
            *e = '\0';
            size_t idx;
            if (add_file(p, tok, &idx) != 0)
                return -1;
            if (p->nrefs == p->rcap) {
                p->rcap = p->rcap ? 2 * p->rcap : 256;
                p->refs = vs_xrealloc(p->refs, p->rcap * sizeof(*p->refs));
            }
            p->refs[p->nrefs++] = idx;
            j->n++;
            *e = save;
            tok = e;
            while (*tok == ' ' || *tok == '\t')
                tok++;
        }
    }
    return 0;
}

static int esc(struct vs_buf *b, const char *s)
{
    return vs_xml_escape(b, s, strlen(s));
}

/* query_files, then upload_files of the absent ones (in groups). */
static int upload_absent(struct vs_bh *h, const struct plan *p)
{
    struct vs_buf q;
    vs_buf_init(&q, 1u << 30);
    int rc = vs_buf_puts(&q, "<query_files>\n<authenticator>");
    rc = rc ? rc : esc(&q, h->auth);
    rc = rc ? rc : vs_buf_puts(&q, "</authenticator>\n");
    for (size_t i = 0; rc == 0 && i < p->nfiles; i++)
        rc = vs_buf_printf(&q, "<phys_name>%s</phys_name>\n", p->names[i]);
    rc = rc ? rc : vs_buf_puts(&q, "</query_files>\n");
    const struct vs_xml_node *root = rc ? NULL : vs_bh_rpc(h, "job_file.php", q.data, q.len, NULL);
    vs_buf_cleanup(&q);
    if (!root) {
        fprintf(stderr, "volsched batch submit: query_files: %s\n", h->err);
        return -1;
    }
    size_t *absent = vs_xcalloc(p->nfiles + 1, sizeof(*absent));
    size_t na = 0;
    for (const struct vs_xml_node *f = vs_xml_child(vs_xml_child(root, "absent_files"), "file"); f;
         f = vs_xml_next_same(f)) {
        int64_t i;
        if (vs_xml_get_int64(f, &i) == 0 && i >= 0 && (size_t)i < p->nfiles)
            absent[na++] = (size_t)i;
    }
    enum { GROUP = 200 };
    int ret = 0;
    for (size_t at = 0; at < na && ret == 0; at += GROUP) {
        size_t n = na - at < GROUP ? na - at : GROUP;
        const char *paths[GROUP], *names[GROUP];
        struct vs_buf u;
        vs_buf_init(&u, 1u << 24);
        rc = vs_buf_puts(&u, "<upload_files>\n<authenticator>");
        rc = rc ? rc : esc(&u, h->auth);
        rc = rc ? rc : vs_buf_puts(&u, "</authenticator>\n");
        for (size_t k = 0; k < n && rc == 0; k++) {
            paths[k] = p->paths[absent[at + k]];
            names[k] = p->names[absent[at + k]];
            rc = vs_buf_printf(&u, "<phys_name>%s</phys_name>\n", names[k]);
        }
        rc = rc ? rc : vs_buf_puts(&u, "</upload_files>\n");
        if (rc || !vs_bh_upload(h, u.data, paths, names, n)) {
            fprintf(stderr, "volsched batch submit: upload_files: %s\n", rc ? "too large" : h->err);
            ret = -1;
        }
        vs_buf_cleanup(&u);
        vs_bh_bar(h, "files", (double)(at + n), (double)na);
    }
    if (ret == 0)
        fprintf(stderr, "%zu input file(s), %zu uploaded, %zu already on the server\n", p->nfiles,
                na, p->nfiles - na);
    vs_free(absent);
    return ret;
}

static int file_contents(const char *path, struct vs_buf *b)
{
    struct vs_buf raw;
    vs_buf_init(&raw, 1u << 30);
    int rc = vs_buf_append_file(&raw, path);
    if (rc == 0)
        rc = vs_xml_escape(b, raw.data ? raw.data : "", raw.len);
    vs_buf_cleanup(&raw);
    return rc;
}

static int opt_tag(struct vs_buf *b, const char *tag, const char *v)
{
    if (!v)
        return 0;
    double x;
    if (vs_parse_double(v, &x) != 0) {
        fprintf(stderr, "volsched batch submit: --%s wants a number, got '%s'\n", tag, v);
        return VS_EINVAL;
    }
    return vs_buf_printf(b, "<%s>%.17g</%s>\n", tag, x, tag);
}

static int submit(const struct opts *o)
{
    if (!o->app) {
        fprintf(stderr, "volsched batch submit: --app is required\n");
        return VS_EXIT_USAGE;
    }
    FILE *in = o->jobs && strcmp(o->jobs, "-") != 0 ? fopen(o->jobs, "r") : stdin;
    if (!in) {
        fprintf(stderr, "volsched batch submit: cannot open %s: %s\n", o->jobs, strerror(errno));
        return VS_EXIT_USAGE;
    }
    struct plan p;
    memset(&p, 0, sizeof(p));
    int rc = read_jobs(in, &p);
    if (in != stdin)
        fclose(in);
    if (rc == 0 && p.njobs == 0) {
        fprintf(stderr, "volsched batch submit: no jobs given (one line per job)\n");
        rc = -1;
    }
    struct vs_bh h;
    vs_bh_init(&h, o->url, o->auth, o->progress);
    if (rc == 0 && !o->inline_inputs)
        rc = upload_absent(&h, &p);
    struct vs_buf b;
    vs_buf_init(&b, 1u << 30);
    int st = VS_EXIT_FAIL;
    if (rc == 0) {
        rc = vs_buf_puts(&b, "<submit_batch>\n<authenticator>");
        rc = rc ? rc : esc(&b, o->auth);
        rc = rc ? rc : vs_buf_puts(&b, "</authenticator>\n<batch>\n<app_name>");
        rc = rc ? rc : esc(&b, o->app);
        rc = rc ? rc : vs_buf_puts(&b, "</app_name>\n");
        if (rc == 0 && o->name) {
            rc = vs_buf_puts(&b, "<batch_name>");
            rc = rc ? rc : esc(&b, o->name);
            rc = rc ? rc : vs_buf_puts(&b, "</batch_name>\n");
        }
        rc = rc ? rc : vs_buf_puts(&b, "<job_params>\n");
        rc = rc ? rc : opt_tag(&b, "rsc_fpops_est", o->fpops_est);
        rc = rc ? rc : opt_tag(&b, "rsc_fpops_bound", o->fpops_bound);
        rc = rc ? rc : opt_tag(&b, "rsc_memory_bound", o->memory_bound);
        rc = rc ? rc : opt_tag(&b, "delay_bound", o->delay_bound);
        rc = rc ? rc : vs_buf_puts(&b, "</job_params>\n");
        rc = rc ? rc : opt_tag(&b, "priority", o->priority);
        if (rc == 0 && o->own_hosts)
            rc = vs_buf_puts(&b, "<own_hosts/>\n");
        for (size_t i = 0; rc == 0 && i < p.njobs; i++) {
            const struct job *j = &p.jobs[i];
            rc = vs_buf_puts(&b, "<job>\n");
            if (rc == 0 && j->args) {
                rc = vs_buf_puts(&b, "<command_line>");
                rc = rc ? rc : esc(&b, j->args);
                rc = rc ? rc : vs_buf_puts(&b, "</command_line>\n");
            }
            for (size_t k = 0; rc == 0 && k < j->n; k++) {
                size_t f = p.refs[j->first + k];
                if (o->inline_inputs) {
                    rc = vs_buf_puts(&b, "<input_file><mode>inline</mode><source>");
                    rc = rc ? rc : file_contents(p.paths[f], &b);
                    rc = rc ? rc : vs_buf_puts(&b, "</source></input_file>\n");
                } else {
                    rc = vs_buf_printf(&b,
                                       "<input_file><mode>local_staged</mode><source>%s</source>"
                                       "</input_file>\n",
                                       p.names[f]);
                }
            }
            rc = rc ? rc : vs_buf_puts(&b, "</job>\n");
        }
        rc = rc ? rc : vs_buf_puts(&b, "</batch>\n</submit_batch>\n");
        if (rc == VS_EINVAL)
            st = VS_EXIT_USAGE;
        else if (rc)
            fprintf(stderr, "volsched batch submit: the request is too large\n");
    }
    if (rc == 0) {
        const struct vs_xml_node *root =
            vs_bh_rpc(&h, "submit_rpc_handler.php", b.data, b.len, "submit MB");
        const char *id = root ? vs_xml_child_text(root, "batch_id") : NULL;
        if (id) {
            printf("%s\n", id);
            fprintf(stderr, "batch %s: %zu jobs submitted\n", id, p.njobs);
            st = VS_EXIT_OK;
        } else {
            fprintf(stderr, "volsched batch submit: %s\n", root ? "no batch id" : h.err);
        }
    }
    vs_buf_cleanup(&b);
    vs_bh_cleanup(&h);
    plan_free(&p);
    return st;
}

/* ---- status, wait, abort, retire ---- */

static const char *state_name(const char *s)
{
    static const char *const names[] = {"new", "in progress", "complete", "aborted", "retired"};
    int64_t v;
    return vs_parse_int64(s ? s : "", &v) == 0 && v >= 0 && v <= 4 ? names[v] : "unknown";
}

/* The <batch> of query_batches with id (NULL: none). */
static const struct vs_xml_node *find_batch(const struct vs_xml_node *root, const char *id)
{
    for (const struct vs_xml_node *b = vs_xml_child(root, "batch"); b; b = vs_xml_next_same(b))
        if (!id || strcmp(vs_xml_child_text(b, "id"), id) == 0)
            return b;
    return NULL;
}

static const struct vs_xml_node *query_batches(struct vs_bh *h)
{
    struct vs_buf q;
    vs_buf_init(&q, 4096);
    const struct vs_xml_node *root = NULL;
    if (vs_buf_puts(&q, "<query_batches><authenticator>") == 0 && esc(&q, h->auth) == 0 &&
        vs_buf_puts(&q, "</authenticator></query_batches>") == 0)
        root = vs_bh_rpc(h, "submit_rpc_handler.php", q.data, q.len, NULL);
    vs_buf_cleanup(&q);
    return root;
}

static void print_batch(const struct vs_xml_node *b)
{
    printf("batch %s (%s, app %s): %s; %s jobs, %s done, %s errors, %s in progress (%.0f%%)\n",
           vs_xml_child_text(b, "id"), vs_xml_child_text(b, "name"),
           vs_xml_child_text(b, "app_name"), state_name(vs_xml_child_text(b, "state")),
           vs_xml_child_text(b, "njobs"), vs_xml_child_text(b, "njobs_done"),
           vs_xml_child_text(b, "nerror_jobs"), vs_xml_child_text(b, "njobs_in_progress"),
           100.0 * strtod(vs_xml_child_text(b, "fraction_done"), NULL));
}

static int status(struct vs_bh *h, const struct opts *o)
{
    const struct vs_xml_node *root = query_batches(h);
    if (!root) {
        fprintf(stderr, "volsched batch status: %s\n", h->err);
        return VS_EXIT_FAIL;
    }
    if (o->batch && !find_batch(root, o->batch)) {
        fprintf(stderr, "volsched batch status: you have no batch %s\n", o->batch);
        return VS_EXIT_USAGE;
    }
    for (const struct vs_xml_node *b = vs_xml_child(root, "batch"); b; b = vs_xml_next_same(b))
        if (!o->batch || strcmp(vs_xml_child_text(b, "id"), o->batch) == 0)
            print_batch(b);
    return VS_EXIT_OK;
}

static int wait_batch(struct vs_bh *h, const struct opts *o)
{
    int64_t timeout = 0;
    if (o->timeout && !vs_cli_int("batch wait", "timeout", o->timeout, 1, INT64_MAX, &timeout))
        return VS_EXIT_USAGE;
    time_t t0 = time(NULL);
    for (;;) {
        const struct vs_xml_node *root = query_batches(h);
        const struct vs_xml_node *b = root ? find_batch(root, o->batch) : NULL;
        if (!root) {
            fprintf(stderr, "volsched batch wait: %s\n", h->err);
            return VS_EXIT_FAIL;
        }
        if (!b) {
            fprintf(stderr, "volsched batch wait: you have no batch %s\n", o->batch);
            return VS_EXIT_USAGE;
        }
        double done = strtod(vs_xml_child_text(b, "fraction_done"), NULL);
        double n = strtod(vs_xml_child_text(b, "njobs"), NULL);
        const char *st = vs_xml_child_text(b, "state");
        bool over = strcmp(st, "2") == 0 || strcmp(st, "3") == 0;
        vs_bh_bar(h, "jobs", over ? n : done * n, n);
        if (over) {
            print_batch(b);
            return strcmp(st, "2") == 0 ? VS_EXIT_OK : VS_EXIT_FAIL;
        }
        if (timeout && time(NULL) - t0 >= timeout) {
            if (h->progress)
                fprintf(stderr, "\n");
            print_batch(b);
            fprintf(stderr, "volsched batch wait: batch %s not complete after %lld s\n", o->batch,
                    (long long)timeout);
            return VS_EXIT_FAIL;
        }
        sleep(2);
    }
}

static int simple(struct vs_bh *h, const char *op, const struct opts *o)
{
    struct vs_buf q;
    vs_buf_init(&q, 4096);
    const struct vs_xml_node *root = NULL;
    if (vs_buf_printf(&q, "<%s><authenticator>", op) == 0 && esc(&q, h->auth) == 0 &&
        vs_buf_printf(&q, "</authenticator><batch_id>%s</batch_id></%s>", o->batch, op) == 0)
        root = vs_bh_rpc(h, "submit_rpc_handler.php", q.data, q.len, NULL);
    vs_buf_cleanup(&q);
    if (!root) {
        fprintf(stderr, "volsched batch %s: %s\n", strcmp(op, "abort_batch") ? "retire" : "abort",
                h->err);
        return VS_EXIT_FAIL;
    }
    printf("batch %s %s\n", o->batch, strcmp(op, "abort_batch") ? "retired" : "aborted");
    return VS_EXIT_OK;
}

/* ---- fetch ---- */

static int fetch_one(struct vs_bh *h, const char *dir, const char *job, const char *jid,
                     size_t *out_files)
{
    char req[512];
    snprintf(req, sizeof(req),
             "<query_job><authenticator>%s</authenticator><job_id>%s</job_id></query_job>", h->auth,
             jid);
    const struct vs_xml_node *root = vs_bh_rpc(h, "submit_rpc_handler.php", req, strlen(req), NULL);
    if (!root) {
        fprintf(stderr, "volsched batch fetch: %s: %s\n", job, h->err);
        return -1;
    }
    /* The instance that completed and was validated, with its outputs. */
    const struct vs_xml_node *inst = NULL;
    for (const struct vs_xml_node *i = vs_xml_child(root, "instance"); i; i = vs_xml_next_same(i))
        if (vs_xml_child(i, "outfile") && strstr(vs_xml_child_text(i, "state"), "validated"))
            inst = i;
    if (!inst) {
        fprintf(stderr, "volsched batch fetch: %s: no validated instance with outputs\n", job);
        return -1;
    }
    char rname[256];
    snprintf(rname, sizeof(rname), "%s", vs_xml_child_text(inst, "name"));
    size_t nout = 0;
    for (const struct vs_xml_node *f = vs_xml_child(inst, "outfile"); f; f = vs_xml_next_same(f))
        nout++;
    char astr[33];
    vs_bh_auth_str(h, rname, astr);
    for (size_t k = 0; k < nout; k++) {
        char path[4096], q[700];
        snprintf(path, sizeof(path), "%s/%s_%zu", dir, job, k);
        snprintf(q, sizeof(q), "cmd=result_file&result_name=%s&file_num=%zu&auth_str=%s", rname, k,
                 astr);
        FILE *f = fopen(path, "wb");
        int rc = f ? vs_bh_get(h, q, f) : -1;
        if (f && fclose(f) != 0)
            rc = -1;
        if (rc) {
            fprintf(stderr, "volsched batch fetch: %s: %s\n", path, f ? h->err : strerror(errno));
            unlink(path);
            return -1;
        }
        (*out_files)++;
    }
    return 0;
}

static int fetch(struct vs_bh *h, const struct opts *o)
{
    if (!o->dir) {
        fprintf(stderr, "volsched batch fetch: --dir is required\n");
        return VS_EXIT_USAGE;
    }
    if (mkdir(o->dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "volsched batch fetch: cannot make %s: %s\n", o->dir, strerror(errno));
        return VS_EXIT_FAIL;
    }
    if (o->zip) {
        char path[4096], q[200], astr[33];
        snprintf(path, sizeof(path), "%s/batch_%s.zip", o->dir, o->batch);
        vs_bh_auth_str(h, o->batch, astr);
        snprintf(q, sizeof(q), "cmd=batch_files&batch_id=%s&auth_str=%s", o->batch, astr);
        FILE *f = fopen(path, "wb");
        int rc = f ? vs_bh_get(h, q, f) : -1;
        if (f && fclose(f) != 0)
            rc = -1;
        if (rc) {
            fprintf(stderr, "volsched batch fetch: %s\n", f ? h->err : strerror(errno));
            unlink(path);
            return VS_EXIT_FAIL;
        }
        printf("%s\n", path);
        return VS_EXIT_OK;
    }
    char req[512];
    snprintf(req, sizeof(req),
             "<query_batch><authenticator>%s</authenticator><batch_id>%s</batch_id>"
             "<get_job_details>1</get_job_details></query_batch>",
             o->auth, o->batch);
    const struct vs_xml_node *root = vs_bh_rpc(h, "submit_rpc_handler.php", req, strlen(req), NULL);
    if (!root) {
        fprintf(stderr, "volsched batch fetch: %s\n", h->err);
        return VS_EXIT_FAIL;
    }
    /* The job list is copied out: each fetch reuses the reply's tree. */
    size_t n = 0, ndone = 0, nfiles = 0, k = 0;
    for (const struct vs_xml_node *j = vs_xml_child(root, "job"); j; j = vs_xml_next_same(j))
        n++;
    char(*ids)[24] = vs_xcalloc(n + 1, sizeof(*ids));
    char(*names)[256] = vs_xcalloc(n + 1, sizeof(*names));
    for (const struct vs_xml_node *j = vs_xml_child(root, "job"); j; j = vs_xml_next_same(j)) {
        if (strcmp(vs_xml_child_text(j, "status"), "done") != 0)
            continue;
        snprintf(ids[k], sizeof(ids[0]), "%s", vs_xml_child_text(j, "id"));
        snprintf(names[k], sizeof(names[0]), "%s", vs_xml_child_text(j, "name"));
        k++;
    }
    int st = VS_EXIT_OK;
    for (size_t i = 0; i < k; i++) {
        if (fetch_one(h, o->dir, names[i], ids[i], &nfiles) == 0)
            ndone++;
        else
            st = VS_EXIT_FAIL;
        vs_bh_bar(h, "fetch", (double)(i + 1), (double)k);
    }
    printf("%zu of %zu jobs fetched (%zu files) into %s; %zu not done\n", ndone, n, nfiles, o->dir,
           n - k);
    vs_free(ids);
    vs_free(names);
    return st;
}

int vs_cmd_batch(int argc, char **argv)
{
    if (argc < 2 || vs_cli_is_help(argv[1])) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? VS_EXIT_USAGE : VS_EXIT_OK;
    }
    const char *sub = argv[1];
    static const char *const subs[] = {"submit", "status", "wait", "fetch", "abort", "retire"};
    bool known = false;
    for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
        known |= strcmp(sub, subs[i]) == 0;
    if (!known) {
        fprintf(stderr,
                "volsched batch: unknown subcommand '%s' (submit, status, wait, fetch, "
                "abort, retire)\n",
                sub);
        return VS_EXIT_USAGE;
    }
    struct opts o;
    memset(&o, 0, sizeof(o));
    const struct vs_cli_opt opts[] = {
        {.name = "url", .str = &o.url},
        {.name = "auth", .str = &o.auth},
        {.name = "app", .str = &o.app},
        {.name = "jobs", .str = &o.jobs},
        {.name = "name", .str = &o.name},
        {.name = "batch", .str = &o.batch},
        {.name = "dir", .str = &o.dir},
        {.name = "timeout", .str = &o.timeout},
        {.name = "fpops-est", .str = &o.fpops_est},
        {.name = "fpops-bound", .str = &o.fpops_bound},
        {.name = "memory-bound", .str = &o.memory_bound},
        {.name = "delay-bound", .str = &o.delay_bound},
        {.name = "priority", .str = &o.priority},
        {.name = "own-hosts", .flag = &o.own_hosts},
        {.name = "inline", .flag = &o.inline_inputs},
        {.name = "zip", .flag = &o.zip},
        {.name = "progress", .flag = &o.progress},
    };
    char cmd[32];
    snprintf(cmd, sizeof(cmd), "batch %s", sub);
    int next;
    int st =
        vs_cli_getopt(cmd, argc - 1, argv + 1, opts, sizeof(opts) / sizeof(opts[0]), usage, &next);
    if (st != VS_CLI_GO)
        return st;
    if (next != argc - 1) {
        fprintf(stderr, "volsched %s: unexpected argument '%s'\n", cmd, argv[next + 1]);
        return VS_EXIT_USAGE;
    }
    if (!o.url || !o.auth) {
        fprintf(stderr, "volsched %s: --url and --auth are required\n", cmd);
        return VS_EXIT_USAGE;
    }
    int64_t bid;
    bool needs_batch = strcmp(sub, "submit") != 0 && strcmp(sub, "status") != 0;
    if ((needs_batch && !o.batch) ||
        (o.batch && !vs_cli_int(cmd, "batch", o.batch, 1, INT64_MAX, &bid))) {
        if (!o.batch)
            fprintf(stderr, "volsched %s: --batch ID is required\n", cmd);
        return VS_EXIT_USAGE;
    }
    o.progress = o.progress || isatty(2);
    if (strcmp(sub, "submit") == 0)
        return submit(&o);
    struct vs_bh h;
    vs_bh_init(&h, o.url, o.auth, o.progress);
    if (strcmp(sub, "status") == 0)
        st = status(&h, &o);
    else if (strcmp(sub, "wait") == 0)
        st = wait_batch(&h, &o);
    else if (strcmp(sub, "fetch") == 0)
        st = fetch(&h, &o);
    else
        st = simple(&h, strcmp(sub, "abort") == 0 ? "abort_batch" : "retire_batch", &o);
    vs_bh_cleanup(&h);
    return st;
}
