/*
 * Back-end daemons benchmark: how many workunits per second each daemon
 * moves on the SQLite store, end to end with real files. Prints figures;
 * asserts nothing.
 *
 *   bench_daemons [NWU] [DIR]
 *
 * Makes a project in a fresh directory under DIR (default /tmp) with NWU
 * (default 1000) workunits of quorum 2, then times: the transitioner
 * creating 2 results each, (untimed: every result claimed by a host and
 * reported with its output file written), the transitioner asking for
 * validation, the bitwise validator, the default assimilator (copy +
 * summary.json, fsynced), the transitioner marking files, and the file
 * deleter.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BENCH_NAME "bench_daemons"
#include "bench_util.h"
#include "volsched/alloc.h"
#include "volsched/daemon_util.h"
#include "volsched/daemons.h"
#include "volsched/fs.h"
#include "volsched/layout.h"
#include "volsched/store.h"
#include "volsched/store_project.h"
#include "volsched/str.h"
#include "volsched/templates.h"

#define T0 1700000000

static void write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    if (!fp || fputs(text, fp) < 0 || fclose(fp) != 0) {
        fprintf(stderr, "bench_daemons: cannot write %s\n", path);
        exit(1);
    }
}

static void report(const char *what, int n, double secs)
{
    printf("%-34s %7d in %7.3f s  %9.0f /s\n", what, n, secs, secs > 0 ? n / secs : 0);
}

struct collect {
    int64_t ids[256];
    size_t n;
};

static int on_job(void *ctx, const struct vs_job *job)
{
    struct collect *c = ctx;
    if (c->n < 256)
        c->ids[c->n++] = job->result.id;
    return 0;
}

struct sent {
    struct vs_store *s;
    const struct vs_project_config *cfg;
    int64_t host;
    struct vs_arena arena;
};

static int on_result(void *ctx, const struct vs_result *r)
{
    struct sent *x = ctx;
    vs_arena_reset(&x->arena);
    struct vs_daemon_file files[VS_DAEMON_MAX_FILES];
    size_t n = 0;
    bench_check(vs_daemon_files(r->xml_doc_in, &x->arena, files, &n), "files");
    char path[VS_PATH_MAX + VS_NAME_MAX];
    bench_check(vs_project_upload_path(x->cfg, files[0].name, true, path, sizeof(path)), "path");
    write_text(path, "the same answer\n");
    struct vs_result_report rep;
    memset(&rep, 0, sizeof(rep));
    bench_check(vs_strlcpy(rep.name, r->name, sizeof(rep.name)), "name");
    rep.client_state = VS_RESULT_CLIENT_STATE_FILES_UPLOADED;
    bench_check(vs_store_result_report(x->s, x->host, T0 + 2, &rep, NULL), "report");
    return 0;
}

int main(int argc, char **argv)
{
    long nwu = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
    const char *base = argc > 2 ? argv[2] : "/tmp";
    if (nwu < 10 || nwu > 1000000) {
        fprintf(stderr, "usage: bench_daemons [NWU (10..1e6)] [DIR]\n");
        return 2;
    }
    char dir[512];
    struct vs_project_config cfg;
    bench_project(base, "vs_bench_daemons", dir, sizeof(dir), &cfg);
    cfg.dont_generate_upload_certificates = true;
    const char *subs[] = {"templates", "download", "upload"};
    for (int i = 0; i < 3; i++) {
        char p[1200];
        snprintf(p, sizeof(p), "%s/%s", dir, subs[i]);
        mkdir(p, 0755);
    }
    char p[1200];
    snprintf(p, sizeof(p), "%s/templates/app_out", dir);
    write_text(p, vs_template_default_out);
    struct vs_store *s;
    bench_check(vs_project_store_open(&cfg, true, NULL, &s), "open");
    struct vs_app app;
    struct vs_user u;
    struct vs_host h;
    memset(&h, 0, sizeof(h));
    bench_add_app_user_host(s, "app", &app, &u, &h);

    bench_check(vs_store_begin(s), "begin");
    for (long i = 0; i < nwu; i++) {
        struct vs_workunit wu;
        vs_workunit_defaults(&wu);
        wu.appid = app.id;
        snprintf(wu.name, sizeof(wu.name), "wu%ld", i);
        char doc[256];
        snprintf(doc, sizeof(doc), "<file_info><name>wu%ld_in</name></file_info>", i);
        wu.xml_doc = vs_xstrdup(doc);
        wu.min_quorum = wu.target_nresults = 2;
        wu.max_total_results = wu.max_success_results = 4;
        wu.transition_time = T0;
        bench_check(vs_strlcpy(wu.result_template_file, "templates/app_out", VS_NAME_MAX), "tmpl");
        bench_check(vs_store_workunit_add(s, &wu), "wu");
        vs_workunit_cleanup(&wu);
    }
    bench_check(vs_store_commit(s), "commit");

    int limit = (int)nwu;
    struct vs_transitioner_stats ts;
    double t = bench_now_s();
    bench_check(vs_transitioner_pass(s, &cfg, T0, limit, NULL, &ts), "transitioner");
    report("transitioner: create 2 results", ts.nwus, bench_now_s() - t);

    /* Untimed: send every result and report it with its output file. */
    struct vs_job_key last = {VS_JOB_KEY_TOP_PRIORITY, 0};
    for (;;) {
        struct collect col = {.n = 0};
        bench_check(vs_store_jobs_unsent(s, &last, 256, on_job, &col, &last), "scan");
        if (!col.n)
            break;
        struct vs_claim claims[256];
        for (size_t i = 0; i < col.n; i++) {
            memset(&claims[i], 0, sizeof(claims[i]));
            claims[i].result_id = col.ids[i];
            claims[i].report_deadline = T0 + 100000;
            claims[i].app_version_id = 1;
        }
        size_t got = 0;
        bench_check(vs_store_results_claim(s, h.id, u.id, 0, T0 + 1, claims, col.n, &got), "claim");
    }
    struct sent x = {.s = s, .cfg = &cfg, .host = h.id};
    vs_arena_init(&x.arena, 8192);
    bench_check(vs_store_begin(s), "begin");
    for (long i = 0; i < nwu; i++) {
        struct vs_workunit wu;
        memset(&wu, 0, sizeof(wu));
        char name[64];
        snprintf(name, sizeof(name), "wu%ld", i);
        bench_check(vs_store_workunit_by_name(s, name, &wu), "wu");
        bench_check(vs_store_results_of_wu(s, wu.id, on_result, &x), "report");
        vs_workunit_cleanup(&wu);
    }
    bench_check(vs_store_commit(s), "commit");
    vs_arena_cleanup(&x.arena);

    t = bench_now_s();
    bench_check(vs_transitioner_pass(s, &cfg, T0 + 3, limit, NULL, &ts), "transitioner");
    report("transitioner: need_validate", ts.nneed_validate, bench_now_s() - t);
    struct vs_validator_stats vst;
    t = bench_now_s();
    bench_check(vs_validator_pass(s, &cfg, T0 + 4, limit, NULL, &vst), "validator");
    report("validator: bitwise, quorum 2", vst.ncanonical, bench_now_s() - t);
    struct vs_assimilator_stats ast;
    t = bench_now_s();
    bench_check(vs_assimilator_pass(s, &cfg, T0 + 5, limit, NULL, &ast), "assimilator");
    report("assimilator: copy + summary.json", ast.ndone, bench_now_s() - t);
    t = bench_now_s();
    bench_check(vs_transitioner_pass(s, &cfg, T0 + 6, limit, NULL, &ts), "transitioner");
    report("transitioner: mark files to delete", ts.nwus, bench_now_s() - t);
    struct vs_file_deleter_stats fst;
    t = bench_now_s();
    bench_check(vs_file_deleter_pass(s, &cfg, T0 + 7, limit, NULL, &fst), "file_deleter");
    report("file deleter: WUs (2 results each)", fst.nwus, bench_now_s() - t);
    printf("files deleted %d, errors %d\n", fst.nfiles, fst.nerrors);
    vs_store_close(s);
    bench_check(vs_fs_rm_tree(dir), "cleanup");
    return 0;
}
