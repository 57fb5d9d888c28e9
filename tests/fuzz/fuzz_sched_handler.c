/*
 * The whole scheduler handler on arbitrary request bodies: parse,
 * authenticate, host find/create, job choice from the cache, group commit
 * and reply. A small project (one app version, a few jobs, the samples'
 * authenticator) is built once in a temporary directory, removed at exit.
 * Whatever the input, the handler must answer 200 with a complete
 * <scheduler_reply> and never send a job twice.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/sched.h"
#include "volsched/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];
static struct vs_sched *sched;

static void cleanup(void)
{
    vs_sched_destroy(sched);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "fuzz: could not remove %s\n", dir);
}

static void add_jobs(struct vs_store *st, int64_t appid, int first, int n)
{
    for (int i = first; i < first + n; i++) {
        struct vs_workunit wu;
        vs_workunit_defaults(&wu);
        wu.appid = appid;
        snprintf(wu.name, sizeof(wu.name), "wu_%d", i);
        wu.rsc_fpops_est = 2e10;
        wu.delay_bound = 86400;
        wu.transition_time = VS_TIME_NEVER;
        wu.xml_doc = vs_xstrdup("<file_info>\n<name>in</name>\n<url>http://x.y/in</url>\n"
                                "</file_info>\n<workunit>\n<file_ref>\n<file_name>in</file_name>\n"
                                "<open_name>in</open_name>\n</file_ref>\n</workunit>\n");
        struct vs_result r = {0};
        snprintf(r.name, sizeof(r.name), "wu_%d_0", i);
        r.xml_doc_in = vs_xstrdup("<result>\n</result>\n");
        r.server_state = VS_RESULT_SERVER_STATE_UNSENT;
        if (vs_store_workunit_add(st, &wu) == 0) {
            r.workunitid = wu.id;
            r.appid = appid;
            if (vs_store_result_add(st, &r) != 0)
                abort();
        }
        vs_workunit_cleanup(&wu);
        vs_result_cleanup(&r);
    }
}

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/vs_fuzz_sched_XXXXXX");
    if (!mkdtemp(dir))
        abort();
    struct vs_project_config c;
    memset(&c, 0, sizeof(c));
    snprintf(c.dir, sizeof(c.dir), "%s", dir);
    snprintf(c.master_url, sizeof(c.master_url), "http://127.0.0.1:1/f/");
    snprintf(c.download_url, sizeof(c.download_url), "http://127.0.0.1:1/f/download");
    snprintf(c.key_dir, sizeof(c.key_dir), "%s", dir);
    snprintf(c.store_url, sizeof(c.store_url), "sqlite:%s/f.db", dir);
    struct vs_store *st;
    if (vs_store_open(c.store_url, VS_STORE_CREATE, NULL, &st) != 0)
        abort();
    struct vs_platform pf = {0};
    snprintf(pf.name, sizeof(pf.name), "x86_64-pc-linux-gnu");
    struct vs_app app = {0};
    snprintf(app.name, sizeof(app.name), "primes");
    if (vs_store_platform_add(st, &pf) || vs_store_app_add(st, &app))
        abort();
    struct vs_app_version av = {.appid = app.id, .platformid = pf.id, .version_num = 100};
    struct vs_app_version_file f = {.main_program = 1, .executable = 1, .nbytes = 10};
    snprintf(f.name, sizeof(f.name), "primes_100");
    snprintf(f.path, sizeof(f.path), "1/primes_100");
    f.file_signature = vs_xstrdup("aa\n.\n");
    av.files = &f;
    av.nfiles = 1;
    if (vs_store_app_version_add(st, &av))
        abort();
    vs_free(f.file_signature);
    struct vs_user u = {0};
    snprintf(u.name, sizeof(u.name), "fuzzer");
    snprintf(u.authenticator, sizeof(u.authenticator), "0123456789abcdef0123456789abcdef");
    if (vs_store_user_add(st, &u))
        abort();
    vs_user_cleanup(&u);
    add_jobs(st, app.id, 0, 50);
    vs_store_close(st);
    if (vs_sched_create(&c, NULL, NULL, &sched) != 0)
        abort();
    atexit(cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!sched)
        setup();
    size_t added;
    if (vs_sched_refill(sched, &added) != 0)
        abort();
    char *body = vs_xmalloc(size + 1);
    memcpy(body, data, size);
    body[size] = '\0';
    struct vs_buf out;
    vs_buf_init(&out, 16u << 20);
    int status = vs_sched_handle(sched, body, size, "127.0.0.1", 1800000000, &out);
    if (status != 200 || !strstr(vs_buf_str(&out), "<scheduler_reply>") ||
        !strstr(vs_buf_str(&out), "</scheduler_reply>"))
        abort();
    vs_buf_cleanup(&out);
    vs_free(body);
    return 0;
}
