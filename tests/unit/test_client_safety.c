/*
 * The client's defences against a hostile project server or network
 * (docs/security.md, "The volunteer's client"), each attacked directly:
 * - project URLs that would map onto the projects directory or its parent
 *   ("http://../", "http://./", dot segments), or two URLs onto one
 *   directory, are refused, and a project directory is never one of those;
 * - a reply naming one file as two of app file, input and output is
 *   refused, alone or together with what the client holds; two files of a
 *   task under one name in its slot are refused;
 * - an app version runs only from its verified directory: exactly its
 *   files, each checked against the project's signature at every start,
 *   read-only; changed bytes are refused, a replaced copy is repaired from
 *   the download, extra files are pruned;
 * - files that hold the account key are the owner's only.
 */
#include "vs_test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client_fixture.h"
#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/fs.h"
#include "volsched/proto.h"
#include "volsched/sign.h"

static void test_project_urls(void **state)
{
    (void)state;
    char out[1100];
    static const char *const bad[] = {
        "http://../",           "http://./",      "http://..",          "https://../x/",
        "http://.a.b/",         "http://a..b/",   "http://a.b/x/../",   "http://a.b/./",
        "http://a.b/x/..",      "http://a.b/x/.", "http://a.b/x/../y/", "http://a.b:/",
        "http://a.b:99999999/", "http://u@a.b/",  "http://a.b\\x/",     "http://a_b.c/",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (vs_client_canon_url(bad[i], out, sizeof(out)) == 0)
            fail_msg("accepted %s", bad[i]);
    }
    static const char *const good[] = {"http://a.b/", "https://www.x.org/p/", "http://1.2.3.4:80/",
                                       "http://a-b.c/x..y/", "http://a.b/x/.hidden/"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        if (vs_client_canon_url(good[i], out, sizeof(out)) != 0)
            fail_msg("refused %s", good[i]);
}

static void test_project_dir_guard(void **state)
{
    struct client_fx *f = *state;
    /* a URL from an old state file that escapes to ".." never yields a path */
    size_t p = vs_client_add_project(f->c, "http://../", "k");
    char path[4096];
    assert_int_equal(vs_client_project_dir(f->c, p, path, sizeof(path)), VS_EINVAL);
    vs_client_drop_project(f->c, p); /* removes nothing outside */
    assert_int_equal(access(f->dir, F_OK), 0);
    /* two URLs with one directory: the second attach is refused */
    assert_int_equal(vs_client_attach(f->c, "http://a.b/x_y/", "key1", false), 0);
    assert_int_equal(vs_client_attach(f->c, "https://a.b/x_y/", "key2", false), VS_EEXISTS);
    assert_int_equal(vs_client_attach(f->c, "http://a.b/x/y/", "key2", false), VS_EEXISTS);
    assert_int_equal(vs_client_attach(f->c, "http://../", "key2", false), VS_EINVAL);
    assert_int_equal((int)f->c->n_projects, 1);
    /* the account file holds the key: owner only */
    struct stat st;
    snprintf(path, sizeof(path), "%s/account_a.b_x_y.xml", f->dir);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal((int)(st.st_mode & 0777), 0600);
}

/* ------------------------------------------------------------ file roles */

static void test_file_roles(void **state)
{
    struct client_fx *f = *state;
    size_t p = vs_client_add_project(f->c, "http://a.b/", "k");
    struct vs_proto_file_ref app_ref = {.file_name = "app_1", .main_program = true};
    struct vs_proto_file_ref in_ref = {.file_name = "in_1", .open_name = "in"};
    struct vs_proto_file_ref out_ref = {.file_name = "out_1", .open_name = "out"};
    struct vs_proto_app_version av = {
        .app_name = "a", .version_num = 1, .file_refs = &app_ref, .n_file_refs = 1};
    struct vs_proto_workunit wu = {
        .name = "wu", .app_name = "a", .file_refs = &in_ref, .n_file_refs = 1};
    struct vs_proto_result res = {
        .name = "wu_0", .wu_name = "wu", .file_refs = &out_ref, .n_file_refs = 1};
    struct vs_proto_reply y = {.app_versions = &av,
                               .n_app_versions = 1,
                               .workunits = &wu,
                               .n_workunits = 1,
                               .results = &res,
                               .n_results = 1};
    char why[600];
    assert_true(vs_client_file_roles_ok(f->c, p, &y, why, sizeof(why)));
    /* an output in the app's place */
    out_ref.file_name = "app_1";
    assert_false(vs_client_file_roles_ok(f->c, p, &y, why, sizeof(why)));
    assert_non_null(strstr(why, "app_1"));
    /* an input in the app's place */
    out_ref.file_name = "out_1";
    in_ref.file_name = "app_1";
    assert_false(vs_client_file_roles_ok(f->c, p, &y, why, sizeof(why)));
    /* one file input and output */
    in_ref.file_name = "out_1";
    assert_false(vs_client_file_roles_ok(f->c, p, &y, why, sizeof(why)));
    /* across replies: the app version is held already, the next reply's
     * result names its file */
    in_ref.file_name = "in_1";
    struct cl_app_version *cav = vs_client_add_av(f->c);
    cav->app_name = vs_xstrdup("a");
    cav->project = p;
    cav->version_num = 1;
    cav->frefs[0].file_name = vs_xstrdup("app_1");
    cav->n_frefs = 1;
    struct vs_proto_reply y2 = {.results = &res, .n_results = 1};
    out_ref.file_name = "app_1";
    assert_false(vs_client_file_roles_ok(f->c, p, &y2, why, sizeof(why)));
    assert_true(vs_client_file_is_app_or_input(f->c, p, "app_1"));
    assert_false(vs_client_file_is_app_or_input(f->c, p, "out_1"));
    /* another project's files are another matter */
    size_t q = vs_client_add_project(f->c, "http://c.d/", "k");
    assert_true(vs_client_file_roles_ok(f->c, q, &y2, why, sizeof(why)));
}

static void test_slot_names(void **state)
{
    (void)state;
    struct cl_app_version av = {.n_frefs = 1};
    struct cl_wu w = {.n_frefs = 1};
    struct cl_result r = {.n_frefs = 1};
    av.frefs[0] = (struct cl_fref){.file_name = "worker_1", .open_name = "worker"};
    w.frefs[0] = (struct cl_fref){.file_name = "in_1", .open_name = "in"};
    r.frefs[0] = (struct cl_fref){.file_name = "out_1", .open_name = "out"};
    char why[600];
    assert_true(vs_client_slot_names_ok(&av, &w, &r, why, sizeof(why)));
    /* an input in the worker's place in the slot */
    w.frefs[0].open_name = "worker";
    assert_false(vs_client_slot_names_ok(&av, &w, &r, why, sizeof(why)));
    assert_non_null(strstr(why, "share the open name worker"));
    /* without an open name the file name is the slot name */
    w.frefs[0] = (struct cl_fref){.file_name = "worker"};
    assert_false(vs_client_slot_names_ok(&av, &w, &r, why, sizeof(why)));
    /* an output over an input, and a name the client writes itself */
    w.frefs[0] = (struct cl_fref){.file_name = "in_1", .open_name = "in"};
    r.frefs[0].open_name = "in";
    assert_false(vs_client_slot_names_ok(&av, &w, &r, why, sizeof(why)));
    r.frefs[0].open_name = "init_data.xml";
    assert_false(vs_client_slot_names_ok(&av, &w, &r, why, sizeof(why)));
    /* two inputs under one name */
    r.frefs[0].open_name = "out";
    w.frefs[1] = (struct cl_fref){.file_name = "in_2", .open_name = "in"};
    w.n_frefs = 2;
    assert_false(vs_client_slot_names_ok(&av, &w, &r, why, sizeof(why)));
}

/* ------------------------------------------------------- verified directory */

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    assert_int_equal(fclose(fp), 0);
}

/* A project with a key, one app version of two files (main + lib), both
 * downloaded and signed; returns the av. */
static struct cl_app_version *signed_version(struct client_fx *f, size_t *out_p)
{
    struct vs_sign_key *k = NULL;
    assert_int_equal(vs_sign_key_generate(1024, &k), 0);
    struct vs_buf pub;
    vs_buf_init(&pub, 1u << 16);
    assert_int_equal(vs_sign_key_write_public(k, &pub), 0);
    size_t p = vs_client_add_project(f->c, "http://a.b/", "k");
    f->c->projects[p].code_sign_key = vs_xstrdup(vs_buf_str(&pub));
    vs_buf_cleanup(&pub);
    char pdir[4096];
    assert_int_equal(vs_client_project_dir(f->c, p, pdir, sizeof(pdir)), 0);
    assert_int_equal(vs_fs_mkdir_p(pdir, 0755), 0);
    struct cl_app_version *av = vs_client_add_av(f->c);
    av->app_name = vs_xstrdup("a");
    av->project = p;
    av->version_num = 7;
    static const char *const names[] = {"a_7", "liba.so"};
    for (size_t i = 0; i < 2; i++) {
        char path[4200];
        snprintf(path, sizeof(path), "%s/%s", pdir, names[i]);
        write_file(path, i == 0 ? "#!/bin/sh\necho signed\n" : "library bytes\n");
        struct vs_buf sig;
        vs_buf_init(&sig, 1u << 16);
        assert_int_equal(vs_sign_file(k, path, &sig), 0);
        struct cl_file *cf = vs_client_add_file(f->c);
        cf->name = vs_xstrdup(names[i]);
        cf->project = p;
        cf->status = FS_PRESENT;
        cf->executable = i == 0;
        cf->signature_required = true;
        cf->file_signature = vs_xstrdup(vs_buf_str(&sig));
        vs_buf_cleanup(&sig);
        av->frefs[i].file_name = vs_xstrdup(names[i]);
        av->frefs[i].main_program = i == 0;
    }
    av->n_frefs = 2;
    vs_sign_key_destroy(k);
    *out_p = p;
    return av;
}

static void test_verified_dir(void **state)
{
    struct client_fx *f = *state;
    size_t p;
    struct cl_app_version *av = signed_version(f, &p);
    char dir[4096], why[600], path[4200], pdir[4096];
    assert_int_equal(vs_client_av_prepare(f->c, av, dir, sizeof(dir), why, sizeof(why)), 0);
    assert_non_null(strstr(dir, "/app_versions/a.b/a__7"));
    struct stat st;
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal((int)(st.st_mode & 0777), 0555);
    snprintf(path, sizeof(path), "%s/a_7", dir);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal((int)(st.st_mode & 0777), 0555);
    snprintf(path, sizeof(path), "%s/liba.so", dir);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal((int)(st.st_mode & 0777), 0444);

    /* something planted beside the version's files is pruned */
    assert_int_equal(chmod(dir, 0755), 0);
    snprintf(path, sizeof(path), "%s/libc.so.6", dir);
    write_file(path, "planted");
    assert_int_equal(vs_client_av_prepare(f->c, av, dir, sizeof(dir), why, sizeof(why)), 0);
    assert_int_equal(access(path, F_OK), -1);

    /* the verified copy replaced by other bytes: repaired from the download */
    assert_int_equal(chmod(dir, 0755), 0);
    snprintf(path, sizeof(path), "%s/liba.so", dir);
    assert_int_equal(unlink(path), 0);
    write_file(path, "other library\n");
    assert_int_equal(vs_client_av_prepare(f->c, av, dir, sizeof(dir), why, sizeof(why)), 0);
    struct vs_buf b;
    vs_buf_init(&b, 1u << 16);
    assert_int_equal(vs_client_read_file(path, 1u << 16, &b), 0);
    assert_string_equal(vs_buf_str(&b), "library bytes\n");

    /* the downloaded file changed in place (and so the linked copy): refused */
    assert_int_equal(vs_client_project_dir(f->c, p, pdir, sizeof(pdir)), 0);
    snprintf(path, sizeof(path), "%s/a_7", pdir);
    assert_int_equal(chmod(path, 0755), 0);
    FILE *fp = fopen(path, "r+");
    assert_non_null(fp);
    fputs("#!/bin/sh\necho PAYLOAD\n", fp);
    fclose(fp);
    assert_int_equal(vs_client_av_prepare(f->c, av, dir, sizeof(dir), why, sizeof(why)), VS_EAUTH);
    assert_non_null(strstr(why, "a_7 failed its signature check"));
    snprintf(path, sizeof(path), "%s/a_7", dir);
    assert_int_equal(access(path, F_OK), -1); /* nothing left to run */

    /* an unsigned file, or no key: refused */
    vs_free(f->c->files[1].file_signature);
    f->c->files[1].file_signature = NULL;
    assert_int_equal(vs_client_av_prepare(f->c, av, dir, sizeof(dir), why, sizeof(why)), VS_EAUTH);
    vs_free(f->c->projects[p].code_sign_key);
    f->c->projects[p].code_sign_key = NULL;
    assert_int_equal(vs_client_av_prepare(f->c, av, dir, sizeof(dir), why, sizeof(why)), VS_EAUTH);
    vs_buf_cleanup(&b);

    /* detach removes the read-only tree */
    vs_client_drop_project(f->c, p);
    snprintf(path, sizeof(path), "%s/app_versions/a.b", f->dir);
    assert_int_equal(access(path, F_OK), -1);
}

static void test_private_files(void **state)
{
    struct client_fx *f = *state;
    char path[4200];
    struct stat st;
    snprintf(path, sizeof(path), "%s/secret.xml", f->dir);
    write_file(path, "old"); /* an old 0644 file is replaced, not reused */
    assert_int_equal(chmod(path, 0644), 0);
    assert_int_equal(vs_client_write_private(path, "k", 1, false), 0);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal((int)(st.st_mode & 0777), 0600);
    /* a planted link at the temporary name is not followed */
    char tmp[4300], target[4300];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    snprintf(target, sizeof(target), "%s/target", f->dir);
    write_file(target, "untouched");
    assert_int_equal(symlink(target, tmp), 0);
    assert_int_equal(vs_client_write_private(path, "k2", 2, false), 0);
    struct vs_buf b;
    vs_buf_init(&b, 1024);
    assert_int_equal(vs_client_read_file(target, 1024, &b), 0);
    assert_string_equal(vs_buf_str(&b), "untouched");
    vs_buf_cleanup(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_project_urls),
        cmocka_unit_test_setup_teardown(test_project_dir_guard, clientfx_setup, clientfx_teardown),
        cmocka_unit_test(test_slot_names),
        cmocka_unit_test_setup_teardown(test_file_roles, clientfx_setup, clientfx_teardown),
        cmocka_unit_test_setup_teardown(test_verified_dir, clientfx_setup, clientfx_teardown),
        cmocka_unit_test_setup_teardown(test_private_files, clientfx_setup, clientfx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
