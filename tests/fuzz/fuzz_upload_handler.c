/*
 * The whole upload handler on arbitrary request bodies: parse, certificate
 * check, store lookup of the owning result, path checks, resume, write,
 * MD5 and fsync. A small project with 20 results in progress (outputs
 * r_<i>_r1_0, max_nbytes 100000) is built once in a temporary directory,
 * removed at exit. Each input goes to two handlers: one with upload
 * certificates (the fuzzer meets the signature check) and one without (it
 * reaches the file writing). Whatever the input, the handler must answer
 * 200 with a complete <data_server_reply>, and no file may appear in the
 * project directory outside upload/ (checked by counting its entries).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/config.h"
#include "volsched/h_upload.h"
#include "volsched/sign.h"
#include "volsched/store.h"
#include "volsched/store_project.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];
static struct vs_upload *with_cert, *without_cert;
static int top_entries;

static void cleanup(void)
{
    vs_upload_destroy(with_cert);
    vs_upload_destroy(without_cert);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "fuzz: could not remove %s\n", dir);
}

static int count_entries(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        abort();
    int n = 0;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/vs_fuzz_up_XXXXXX");
    if (!mkdtemp(dir))
        abort();
    struct vs_project_config c;
    if (vs_project_config_defaults(&c, dir, "fuzz", "http://127.0.0.1:1/f/") != 0)
        abort();
    c.uldl_dir_fanout = 16;
    char p[1200];
    snprintf(p, sizeof(p), "%s/upload", dir);
    if (mkdir(p, 0755) != 0 || vs_sign_keygen_write(c.key_dir, 512) != 0)
        abort();
    struct vs_store *st;
    if (vs_project_store_open(&c, true, NULL, &st) != 0)
        abort();
    struct vs_app app = {0};
    snprintf(app.name, sizeof(app.name), "app");
    struct vs_user u = {0};
    snprintf(u.name, sizeof(u.name), "fuzzer");
    if (vs_store_app_add(st, &app) || vs_store_user_add(st, &u))
        abort();
    struct vs_host h = {.userid = u.id};
    if (vs_store_host_add(st, &h))
        abort();
    for (int i = 0; i < 20; i++) {
        struct vs_workunit wu;
        vs_workunit_defaults(&wu);
        wu.appid = app.id;
        snprintf(wu.name, sizeof(wu.name), "wu_%d", i);
        wu.xml_doc = vs_xstrdup("<workunit>\n</workunit>\n");
        struct vs_result r = {.appid = app.id, .server_state = VS_RESULT_SERVER_STATE_UNSENT};
        if (vs_store_workunit_add(st, &wu))
            abort();
        r.workunitid = wu.id;
        snprintf(r.name, sizeof(r.name), "r_%d", i);
        char doc[512];
        snprintf(doc, sizeof(doc),
                 "<file_info>\n<name>r_%d_r1_0</name>\n<max_nbytes>100000</max_nbytes>\n"
                 "</file_info>\n<result>\n<file_ref>\n<file_name>r_%d_r1_0</file_name>\n"
                 "<open_name>out</open_name>\n</file_ref>\n</result>\n",
                 i, i);
        r.xml_doc_in = vs_xstrdup(doc);
        if (vs_store_result_add(st, &r))
            abort();
        struct vs_claim cl = {.result_id = r.id, .report_deadline = 2000000000};
        size_t n = 0;
        if (vs_store_results_claim(st, h.id, u.id, 0, 1800000000, &cl, 1, &n) || n != 1)
            abort();
        vs_workunit_cleanup(&wu);
        vs_result_cleanup(&r);
    }
    vs_user_cleanup(&u);
    vs_store_close(st);
    if (vs_upload_create(&c, NULL, &with_cert) != 0)
        abort();
    c.dont_generate_upload_certificates = true;
    if (vs_upload_create(&c, NULL, &without_cert) != 0)
        abort();
    top_entries = count_entries(dir);
    atexit(cleanup);
}

static void run(struct vs_upload *u, const char *body, size_t size)
{
    struct vs_buf out;
    vs_buf_init(&out, 1u << 20);
    int status = vs_upload_http(u, body, size, "127.0.0.1", &out);
    if (status != 200 || !strstr(vs_buf_str(&out), "<data_server_reply>") ||
        !strstr(vs_buf_str(&out), "</data_server_reply>"))
        abort();
    vs_buf_cleanup(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!with_cert)
        setup();
    char *body = vs_xmalloc(size + 1);
    memcpy(body, data, size);
    body[size] = '\0';
    run(with_cert, body, size);
    run(without_cert, body, size);
    vs_free(body);
    /* Nothing new beside config.xml, keys/, upload/ and the store files
     * (the WAL files come and go with the handles, so allow them). */
    if (count_entries(dir) > top_entries + 2)
        abort();
    return 0;
}
