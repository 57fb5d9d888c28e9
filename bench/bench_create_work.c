/*
 * create_work --stdin throughput: N jobs in one call of
 * vs_create_work() (what `volsched create_work --stdin` runs), into the
 * embedded store on disk, for N = 10,000 and 100,000, in two modes:
 *   staged  every job names an input already in the download hierarchy
 *   new     every job brings a new input file, staged by the call
 * Prints jobs/s per run and the per-job time of 100k over 10k (1.0 is
 * linear). Before a figure is printed the store is checked: N workunits,
 * and in "new" mode N staged files with the md5 the store recorded.
 *
 *   bench_create_work [--dir DIR] [--sizes 10000,100000] [--mode staged|new]
 *
 * Then the store's part alone, in the same process: the smaller size's
 * workunits inserted one statement each (create_work's path before its
 * bulk insert) and in one vs_store_workunits_add (a COPY on PostgreSQL),
 * each in one transaction on a fresh store, and the ratio.
 *
 * VS_BENCH_STORE: another store for every run, a URL with one %d that
 * each run replaces by its number (a fresh database each), e.g.
 * "postgresql:///vs_cw%d?host=/tmp/pg&user=postgres".
 *
 * DIR (default /tmp) must be on a real disk: the durability cost (one sync
 * per batch) is part of the figure. The input files are written and synced
 * before the clock starts.
 */
#define BENCH_NAME "bench_create_work"
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_util.h"
#include "volsched/alloc.h"
#include "volsched/create_work.h"
#include "volsched/layout.h"
#include "volsched/md5.h"
#include "volsched/store_project.h"
#include "volsched/templates.h"

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

static void project(const char *base, char *dir, size_t n, struct vs_project_config *cfg,
                    struct vs_store **out)
{
    bench_project(base, "vs_bench_cw", dir, n, cfg);
    const char *sub[] = {"templates", "download", "upload", "keys"};
    char p[VS_PATH_MAX + 32];
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof(p), "%s/%s", dir, sub[i]);
        if (mkdir(p, 0755) != 0 && access(p, F_OK) != 0) {
            perror(p);
            exit(1);
        }
    }
    /* VS_BENCH_STORE: a fresh database of another store per run. */
    static int nrun;
    const char *other = getenv("VS_BENCH_STORE");
    if (other && *other) {
        if (!strstr(other, "%d")) {
            fprintf(stderr, BENCH_NAME ": VS_BENCH_STORE needs a %%d (a database per run)\n");
            exit(2);
        }
        char url[sizeof(cfg->store_url)];
        snprintf(url, sizeof(url), "%s", other);
        char *at = strstr(url, "%d");
        snprintf(cfg->store_url, sizeof(cfg->store_url), "%.*s%d_%d%s", (int)(at - url), url,
                 (int)getpid(), nrun++, at + 2);
    }
    bench_check(vs_project_config_write(cfg), "config");
    bench_check(vs_project_store_open(cfg, true, NULL, out), "store");
    struct vs_app a;
    memset(&a, 0, sizeof(a));
    snprintf(a.name, sizeof(a.name), "app");
    bench_check(vs_store_app_add(*out, &a), "app");
    snprintf(p, sizeof(p), "%s/templates/app_in", dir);
    write_file(p, vs_template_default_in);
    snprintf(p, sizeof(p), "%s/templates/app_out", dir);
    write_file(p, vs_template_default_out);
}

static char dirs[8][VS_PATH_MAX];
static int ndirs;

static double run(const char *base, size_t njobs, bool staged)
{
    char dir[VS_PATH_MAX];
    struct vs_project_config cfg;
    struct vs_store *s;
    project(base, dir, sizeof(dir), &cfg, &s);
    char **paths = vs_xcalloc(njobs, sizeof(*paths));
    struct vs_cw_job *jobs = vs_xcalloc(njobs, sizeof(*jobs));
    char src[VS_PATH_MAX + 16];
    snprintf(src, sizeof(src), "%s/in", dir);
    bench_check(mkdir(src, 0755) == 0 ? 0 : -1, "mkdir in");
    for (size_t i = 0; i < njobs; i++) {
        char name[64], text[64];
        snprintf(name, sizeof(name), "in_%zu", i);
        snprintf(text, sizeof(text), "%zu %zu\n", i, i * 7919);
        char path[VS_PATH_MAX + 80];
        if (staged) {
            bench_check(vs_project_download_path(&cfg, name, true, path, sizeof(path)), "path");
            write_file(path, text);
            paths[i] = vs_xstrdup(name); /* a bare name: already staged */
        } else {
            snprintf(path, sizeof(path), "%s/%s", src, name);
            write_file(path, text);
            paths[i] = vs_xstrdup(path);
        }
        jobs[i].inputs = (const char *const *)&paths[i];
        jobs[i].ninputs = 1;
    }
    struct vs_cw_params p;
    memset(&p, 0, sizeof(p));
    p.appname = "app";
    struct vs_cw_created *cr = NULL;
    char err[512];
    /* The inputs exist before the call, as an operator's do: their own
     * writeback is not the call's cost (its syncfs would flush them). */
    sync();
    double t0 = bench_now_s();
    int rc = vs_create_work(&cfg, s, &p, jobs, njobs, 1800000000, NULL, &cr, err, sizeof(err));
    double el = bench_now_s() - t0;
    if (rc) {
        fprintf(stderr, BENCH_NAME ": create_work: %s\n", err);
        exit(1);
    }
    /* Check before printing: every workunit is there, every staged file
     * holds what the store says it does (a sample of 100 md5s). */
    int64_t nwu = 0;
    struct vs_store_counts counts;
    bench_check(vs_store_counts(s, &counts), "counts");
    nwu = counts.workunits;
    if (nwu != (int64_t)njobs) {
        fprintf(stderr, BENCH_NAME ": %lld workunits, want %zu\n", (long long)nwu, njobs);
        exit(1);
    }
    for (size_t i = 0; i < njobs; i += njobs / 100 ? njobs / 100 : 1) {
        char name[64], path[VS_PATH_MAX + 80], md5[VS_MD5_HEX_LEN + 1];
        int64_t nb;
        snprintf(name, sizeof(name), "in_%zu", i);
        bench_check(vs_project_download_path(&cfg, name, false, path, sizeof(path)), "path");
        bench_check(vs_md5_file(path, md5, &nb), "staged file");
        struct vs_workunit wu;
        memset(&wu, 0, sizeof(wu));
        bench_check(vs_store_workunit_get(s, cr[i].id, &wu), "wu");
        if (!strstr(wu.xml_doc, md5)) {
            fprintf(stderr, BENCH_NAME ": WU %s does not record md5 %s\n", wu.name, md5);
            exit(1);
        }
        vs_workunit_cleanup(&wu);
    }
    printf("%-7s %7zu jobs  %7.3f s  %9.0f jobs/s\n", staged ? "staged" : "new", njobs, el,
           (double)njobs / el);
    fflush(stdout);
    vs_free(cr);
    for (size_t i = 0; i < njobs; i++)
        vs_free(paths[i]);
    vs_free(paths);
    vs_free(jobs);
    vs_store_close(s);
    /* Removed at the end, after every figure: deleting 100k files costs
     * minutes here and would load the disk under the next run. */
    snprintf(dirs[ndirs++], sizeof(dirs[0]), "%s", dir);
    return el / (double)njobs;
}

/* n workunits ready for the store, named by stem. */
static struct vs_workunit **store_rows(int64_t appid, size_t n, const char *stem)
{
    struct vs_workunit **wus = vs_xcalloc(n, sizeof(*wus));
    for (size_t i = 0; i < n; i++) {
        wus[i] = VS_NEW(struct vs_workunit);
        vs_workunit_defaults(wus[i]);
        wus[i]->appid = appid;
        snprintf(wus[i]->name, sizeof(wus[i]->name), "%s_%zu", stem, i);
        wus[i]->xml_doc = vs_xstrdup("<file_info><name>in</name><url>http://x/in</url>"
                                     "<md5_cksum>0123456789abcdef0123456789abcdef</md5_cksum>"
                                     "<nbytes>10</nbytes></file_info><workunit><file_ref>"
                                     "<file_name>in</file_name><open_name>in</open_name>"
                                     "</file_ref></workunit>");
        wus[i]->transition_time = 1800000000;
    }
    return wus;
}

/* Seconds to insert n workunits in one transaction, in bulk or one by one. */
static double store_insert(const char *base, size_t n, bool bulk)
{
    char dir[VS_PATH_MAX];
    struct vs_project_config cfg;
    struct vs_store *s;
    project(base, dir, sizeof(dir), &cfg, &s);
    struct vs_app app;
    bench_check(vs_store_app_by_name(s, "app", &app), "app");
    struct vs_workunit **wus = store_rows(app.id, n, bulk ? "bulk" : "one");
    double t0 = bench_now_s();
    bench_check(vs_store_begin(s), "begin");
    if (bulk)
        bench_check(vs_store_workunits_add(s, wus, n), "bulk insert");
    for (size_t i = 0; !bulk && i < n; i++)
        bench_check(vs_store_workunit_add(s, wus[i]), "insert");
    bench_check(vs_store_commit(s), "commit");
    double el = bench_now_s() - t0;
    struct vs_store_counts counts;
    bench_check(vs_store_counts(s, &counts), "counts");
    if (counts.workunits != (int64_t)n) {
        fprintf(stderr, BENCH_NAME ": %lld workunits, want %zu\n", (long long)counts.workunits, n);
        exit(1);
    }
    for (size_t i = 0; i < n; i++) {
        vs_workunit_cleanup(wus[i]);
        vs_free(wus[i]);
    }
    vs_free(wus);
    vs_store_close(s);
    snprintf(dirs[ndirs++], sizeof(dirs[0]), "%s", dir);
    printf("store   %7zu rows  %7.3f s  %9.0f rows/s  (%s)\n", n, el, (double)n / el,
           bulk ? "vs_store_workunits_add" : "one statement each");
    fflush(stdout);
    return el;
}

int main(int argc, char **argv)
{
    const char *base = "/tmp";
    size_t sizes[2] = {10000, 100000};
    int only = -1; /* --mode staged|new */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            base = argv[++i];
        else if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc)
            only = strcmp(argv[++i], "new") == 0;
        else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
            if (sscanf(argv[++i], "%zu,%zu", &sizes[0], &sizes[1]) != 2) {
                fprintf(stderr,
                        "usage: " BENCH_NAME " [--dir DIR] [--sizes A,B] [--mode staged|new]\n");
                return 2;
            }
        } else {
            fprintf(stderr,
                    "usage: " BENCH_NAME " [--dir DIR] [--sizes A,B] [--mode staged|new]\n");
            return 2;
        }
    }
    for (int m = 0; m < 2; m++) {
        if (only >= 0 && m != only)
            continue;
        bool staged = m == 0;
        double a = run(base, sizes[0], staged);
        double b = run(base, sizes[1], staged);
        printf("%-7s per-job time %zu vs %zu: %.2fx (1.00 = linear)\n", staged ? "staged" : "new",
               sizes[1], sizes[0], b / a);
    }
    /* Alternated, twice each: the machine's noise shows in the spread. */
    double one = 0, bulk = 0;
    for (int k = 0; k < 2; k++) {
        one += store_insert(base, sizes[0], false);
        bulk += store_insert(base, sizes[0], true);
    }
    printf("store   bulk insert %.2fx the rows/s of one statement each\n", one / bulk);
    for (int i = 0; i < ndirs; i++) {
        char cmd[VS_PATH_MAX + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dirs[i]);
        if (system(cmd) != 0)
            fprintf(stderr, BENCH_NAME ": could not remove %s\n", dirs[i]);
    }
    return 0;
}
