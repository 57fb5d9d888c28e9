/*
 * bench_client_verify: what code signing's checks cost the client.
 *
 *  1. A task start's check of its app version (vs_client_av_prepare: the
 *     verified directory pruned, every file's bytes checked against the
 *     project's signature) for app versions of 1 MB and 64 MB, against the
 *     baseline of reading the same bytes once for their MD5 (vs_md5_file,
 *     what the download check already pays), in the same process.
 *  2. The one-role-per-file check of a scheduler reply of 10 jobs
 *     (vs_client_file_roles_ok) with 1,000 and 20,000 results held, against
 *     the baseline of one policy step's snapshot at the same queue
 *     (vs_client_sched_decide), which every reply is followed by.
 *
 * usage: bench_client_verify
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/fs.h"
#include "volsched/md5.h"
#include "volsched/proto.h"
#include "volsched/sign.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_client_verify: %s\n", what);
    exit(1);
}

/* One project with a key and one app version of one file of size bytes. */
static struct cl_app_version *version_of(struct vs_client *c, size_t size)
{
    struct vs_sign_key *k = NULL;
    struct vs_buf b;
    vs_buf_init(&b, 1u << 16);
    if (vs_sign_key_generate(1024, &k) || vs_sign_key_write_public(k, &b))
        die("key");
    if (vs_client_attach(c, "http://bench.example.org/p/", "0123456789abcdef", false))
        die("attach");
    c->projects[0].code_sign_key = vs_xstrdup(vs_buf_str(&b));
    char pdir[4096], path[4200];
    if (vs_client_project_dir(c, 0, pdir, sizeof(pdir)))
        die("dir");
    snprintf(path, sizeof(path), "%s/app_1", pdir);
    FILE *f = fopen(path, "wb");
    if (!f)
        die("write");
    char chunk[65536];
    for (size_t i = 0; i < sizeof(chunk); i++)
        chunk[i] = (char)(i * 131u);
    for (size_t n = 0; n < size; n += sizeof(chunk))
        fwrite(chunk, 1, sizeof(chunk), f);
    fclose(f);
    vs_buf_reset(&b);
    if (vs_sign_file(k, path, &b))
        die("sign");
    struct cl_file *cf = vs_client_add_file(c);
    cf->name = vs_xstrdup("app_1");
    cf->status = FS_PRESENT;
    cf->executable = cf->signature_required = true;
    cf->file_signature = vs_xstrdup(vs_buf_str(&b));
    struct cl_app_version *av = vs_client_add_av(c);
    av->app_name = vs_xstrdup("app");
    av->version_num = 1;
    av->frefs[0].file_name = vs_xstrdup("app_1");
    av->frefs[0].main_program = true;
    av->n_frefs = 1;
    vs_buf_cleanup(&b);
    vs_sign_key_destroy(k);
    return av;
}

static void bench_start(const char *root, size_t mb)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/start_%zu", root, mb);
    if (vs_fs_mkdir_p(dir, 0755))
        die("mkdir");
    struct vs_client *c = VS_NEW(struct vs_client);
    vs_client_init(c, dir);
    struct cl_app_version *av = version_of(c, mb << 20);
    char avdir[4096], why[600], pdir[4096], path[4200], md5[VS_MD5_HEX_LEN + 1];
    if (vs_client_av_prepare(c, av, avdir, sizeof(avdir), why, sizeof(why)))
        die(why);
    (void)vs_client_project_dir(c, 0, pdir, sizeof(pdir));
    snprintf(path, sizeof(path), "%s/app_1", pdir);
    int reps = mb > 8 ? 5 : 50;
    double t0 = now();
    for (int i = 0; i < reps; i++) {
        int64_t n;
        if (vs_md5_file(path, md5, &n))
            die("md5");
    }
    double base = (now() - t0) / reps;
    t0 = now();
    for (int i = 0; i < reps; i++)
        if (vs_client_av_prepare(c, av, avdir, sizeof(avdir), why, sizeof(why)))
            die(why);
    double check = (now() - t0) / reps;
    printf("task start check, %3zu MB app version: %8.3f ms  (MD5 of the same bytes %8.3f ms, "
           "ratio %.2f)\n",
           mb, check * 1e3, base * 1e3, check / base);
    vs_client_cleanup(c);
    vs_free(c);
}

static void bench_roles(const char *root, size_t nresults)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/roles_%zu", root, nresults);
    if (vs_fs_mkdir_p(dir, 0755))
        die("mkdir");
    struct vs_client *c = VS_NEW(struct vs_client);
    vs_client_init(c, dir);
    (void)version_of(c, 4096);
    c->now = 1.7e9;
    char name[100];
    for (size_t i = 0; i < nresults; i++) {
        struct cl_wu *w = vs_client_add_wu(c);
        snprintf(name, sizeof(name), "wu_%zu", i);
        w->name = vs_xstrdup(name);
        w->app_name = vs_xstrdup("app");
        w->rsc_fpops_est = 3.6e12;
        snprintf(name, sizeof(name), "in_%zu", i);
        w->frefs[0].file_name = vs_xstrdup(name);
        w->n_frefs = 1;
        struct cl_result *r = vs_client_add_result(c);
        snprintf(name, sizeof(name), "wu_%zu_0", i);
        r->name = vs_xstrdup(name);
        r->wu_name = vs_xstrdup(w->name);
        r->version_num = 1;
        r->state = RS_FILES_DOWNLOADED;
        r->report_deadline = c->now + 86400.0 * (1 + i % 14);
        snprintf(name, sizeof(name), "out_%zu", i);
        r->frefs[0].file_name = vs_xstrdup(name);
        r->n_frefs = 1;
    }
    /* a reply of 10 new jobs */
    struct vs_proto_file_ref in[10], out[10];
    struct vs_proto_workunit wus[10];
    struct vs_proto_result res[10];
    char names[40][40];
    for (int i = 0; i < 10; i++) {
        snprintf(names[4 * i], 40, "new_wu_%d", i);
        snprintf(names[4 * i + 1], 40, "new_in_%d", i);
        snprintf(names[4 * i + 2], 40, "new_wu_%d_0", i);
        snprintf(names[4 * i + 3], 40, "new_out_%d", i);
        in[i] = (struct vs_proto_file_ref){.file_name = names[4 * i + 1]};
        out[i] = (struct vs_proto_file_ref){.file_name = names[4 * i + 3]};
        wus[i] =
            (struct vs_proto_workunit){.name = names[4 * i], .file_refs = &in[i], .n_file_refs = 1};
        res[i] = (struct vs_proto_result){.name = names[4 * i + 2],
                                          .wu_name = names[4 * i],
                                          .file_refs = &out[i],
                                          .n_file_refs = 1};
    }
    struct vs_proto_reply y = {
        .workunits = wus, .n_workunits = 10, .results = res, .n_results = 10};
    char why[600];
    int reps = nresults > 5000 ? 20 : 200;
    double t0 = now();
    for (int i = 0; i < reps; i++)
        if (!vs_client_file_roles_ok(c, 0, &y, why, sizeof(why)))
            die(why);
    double roles = (now() - t0) / reps;
    t0 = now();
    for (int i = 0; i < reps; i++) {
        c->now += 1;
        if (vs_client_sched_decide(c))
            die("policy step");
    }
    double step = (now() - t0) / reps;
    printf("reply role check, %5zu results held: %8.1f us  (one policy step %8.1f us, ratio "
           "%.2f)\n",
           nresults, roles * 1e6, step * 1e6, roles / step);
    vs_client_cleanup(c);
    vs_free(c);
}

int main(void)
{
    char tmpl[] = "/tmp/bench_client_verify_XXXXXX";
    char *root = mkdtemp(tmpl);
    if (!root)
        die("mkdtemp");
    bench_start(root, 1);
    bench_start(root, 64);
    bench_roles(root, 1000);
    bench_roles(root, 20000);
    return vs_fs_rm_tree(root) == 0 ? 0 : 1;
}
