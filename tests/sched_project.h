/*
 * The scheduler tests' common project parts (test_sched.c and the locality
 * tests through locality_fixture.h): a project configuration in a temporary
 * directory with its code-signing key, an app version of one signed file,
 * and one request through the real handler with its reply parsed back.
 * Include after vs_test.h.
 */
#ifndef VOLSCHED_TESTS_SCHED_PROJECT_H
#define VOLSCHED_TESTS_SCHED_PROJECT_H

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "volsched/sched.h"
#include "volsched/store.h"
#include "store_backend.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/config.h"
#include "volsched/proto.h"

#define TP_NOW 1800000000 /* the requests' clock */

static const char tp_key_text[] = "1024\n"
                                  "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n"
                                  ".\n";
static const char tp_sig_text[] = "aabbccdd\n.\n";

/* c: a project in dir (which exists) called long_name, with BOINC's policy
 * defaults, its store at dir/t.db and the code-signing key in dir/keys. */
static inline void tp_config(struct vs_project_config *c, const char *dir, const char *long_name)
{
    snprintf(c->dir, sizeof(c->dir), "%s", dir);
    snprintf(c->long_name, sizeof(c->long_name), "%s", long_name);
    snprintf(c->master_url, sizeof(c->master_url), "http://127.0.0.1:8080/test/");
    snprintf(c->download_url, sizeof(c->download_url), "http://127.0.0.1:8080/test/download");
    snprintf(c->upload_url, sizeof(c->upload_url),
             "http://127.0.0.1:8080/test/file_upload_handler");
    snprintf(c->cgi_url, sizeof(c->cgi_url), "http://127.0.0.1:8080/test/");
    snprintf(c->download_dir, sizeof(c->download_dir), "%s/download", dir);
    snprintf(c->key_dir, sizeof(c->key_dir), "%s/keys", dir);
    vs_test_store_url(c->store_url, sizeof(c->store_url), dir, "t.db");
    vs_sp_config_defaults(&c->policy);
    assert_int_equal(mkdir(c->key_dir, 0700), 0);
    char path[VS_PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/code_sign_public", c->key_dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(tp_key_text, f);
    fclose(f);
}

/* Version 100 of appid on platformid, one CPU, with one signed executable
 * file_name (stored at 3f/file_name); returns its id. */
static inline int64_t tp_add_app_version(struct vs_store *st, int64_t appid, int64_t platformid,
                                         const char *file_name)
{
    struct vs_app_version av = {0};
    av.appid = appid;
    av.platformid = platformid;
    av.version_num = 100;
    av.avg_ncpus = 1;
    struct vs_app_version_file file = {0};
    snprintf(file.name, sizeof(file.name), "%s", file_name);
    snprintf(file.path, sizeof(file.path), "3f/%s", file_name);
    snprintf(file.md5_cksum, sizeof(file.md5_cksum), "0123456789abcdef0123456789abcdef");
    file.nbytes = 17000;
    file.file_signature = vs_xstrdup(tp_sig_text);
    file.main_program = 1;
    file.executable = 1;
    av.files = &file;
    av.nfiles = 1;
    assert_int_equal(vs_store_app_version_add(st, &av), 0);
    vs_free(file.file_signature);
    return av.id;
}

/* Runs one request at TP_NOW; the reply goes to *r (in a), its text to
 * *out_text (caller frees; may be NULL). */
static inline void tp_rpc(struct vs_sched *s, const char *body, struct vs_arena *a,
                          struct vs_proto_reply *r, char **out_text)
{
    struct vs_buf out;
    vs_buf_init(&out, 16u << 20);
    assert_int_equal(vs_sched_handle(s, body, strlen(body), "127.0.0.1", TP_NOW, &out), 200);
    struct vs_proto_error err = {0};
    if (vs_proto_reply_parse(out.data, out.len, a, r, &err) != 0)
        fail_msg("reply does not parse: %s\n%s", err.msg, out.data);
    if (out_text)
        *out_text = vs_buf_take(&out, NULL);
    vs_buf_cleanup(&out);
}

#endif
