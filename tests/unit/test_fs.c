/*
 * src/common/fs.c on a real directory under /tmp: mkdir -p, removing a
 * tree (read-only directories, a symbolic link that must not be followed),
 * atomic writes (mode, a planted link at the temporary's name) and copies.
 */
#include "vs_test.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/fs.h"

struct dir {
    char root[64];
};

static int setup(void **state)
{
    struct dir *d = VS_NEW(struct dir);
    snprintf(d->root, sizeof(d->root), "/tmp/vs_fs_XXXXXX");
    if (!mkdtemp(d->root))
        return -1;
    *state = d;
    return 0;
}

static int teardown(void **state)
{
    struct dir *d = *state;
    int rc = vs_fs_rm_tree(d->root);
    vs_free(d);
    return rc;
}

static void path_of(const struct dir *d, const char *rel, char *out, size_t size)
{
    int n = snprintf(out, size, "%s/%s", d->root, rel);
    assert_true(n > 0 && (size_t)n < size);
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void expect_text(const char *path, const char *text)
{
    char buf[256] = {0};
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    assert_int_equal(n, strlen(text));
    assert_string_equal(buf, text);
}

static void test_mkdir_p(void **state)
{
    struct dir *d = *state;
    char p[256], q[256];
    path_of(d, "a/b/c", p, sizeof(p));
    assert_int_equal(vs_fs_mkdir_p(p, 0700), 0);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0700);
    path_of(d, "a", q, sizeof(q));
    assert_int_equal(stat(q, &st), 0);
    assert_int_equal(st.st_mode & 0700, 0700);
    /* again: an existing directory is fine */
    assert_int_equal(vs_fs_mkdir_p(p, 0700), 0);
    /* a file in the way */
    path_of(d, "f", q, sizeof(q));
    put(q, "x");
    path_of(d, "f/g", q, sizeof(q));
    assert_int_equal(vs_fs_mkdir_p(q, 0755), -ENOTDIR);
    char longp[VS_FS_PATH_MAX + 10];
    memset(longp, 'a', sizeof(longp) - 1);
    longp[0] = '/';
    longp[sizeof(longp) - 1] = '\0';
    assert_int_equal(vs_fs_mkdir_p(longp, 0755), VS_ELIMIT);
}

static void test_rm_tree(void **state)
{
    struct dir *d = *state;
    char p[256], q[256], outside[256], link[256];
    /* something outside the tree that a link inside points at */
    path_of(d, "keep", outside, sizeof(outside));
    assert_int_equal(vs_fs_mkdir_p(outside, 0755), 0);
    path_of(d, "keep/file", q, sizeof(q));
    put(q, "kept");

    path_of(d, "t/x/y/z", p, sizeof(p));
    assert_int_equal(vs_fs_mkdir_p(p, 0755), 0);
    path_of(d, "t/x/y/z/f", q, sizeof(q));
    put(q, "1");
    path_of(d, "t/x/g", q, sizeof(q));
    put(q, "2");
    path_of(d, "t/x/ln", link, sizeof(link));
    assert_int_equal(symlink(outside, link), 0);
    /* a read-only directory with a file in it (an app version's directory) */
    path_of(d, "t/ro", p, sizeof(p));
    assert_int_equal(vs_fs_mkdir_p(p, 0755), 0);
    path_of(d, "t/ro/h", q, sizeof(q));
    put(q, "3");
    assert_int_equal(chmod(p, 0555), 0);

    path_of(d, "t", p, sizeof(p));
    assert_int_equal(vs_fs_rm_tree(p), 0);
    assert_int_equal(access(p, F_OK), -1);
    /* the link was removed, not followed */
    path_of(d, "keep/file", q, sizeof(q));
    expect_text(q, "kept");
    /* missing: fine; a plain file; a link to a directory (the link goes) */
    assert_int_equal(vs_fs_rm_tree(p), 0);
    path_of(d, "plain", q, sizeof(q));
    put(q, "p");
    assert_int_equal(vs_fs_rm_tree(q), 0);
    assert_int_equal(access(q, F_OK), -1);
    path_of(d, "dirlink", link, sizeof(link));
    assert_int_equal(symlink(outside, link), 0);
    assert_int_equal(vs_fs_rm_tree(link), 0);
    path_of(d, "keep/file", q, sizeof(q));
    expect_text(q, "kept");
}

static void test_write_atomic(void **state)
{
    struct dir *d = *state;
    char p[256], tmp[300], victim[256];
    path_of(d, "w.txt", p, sizeof(p));
    assert_int_equal(vs_fs_write_atomic(p, "one", 3, 0600, VS_FS_DURABLE), 0);
    expect_text(p, "one");
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    /* a link planted at the temporary's name is neither followed nor kept */
    path_of(d, "victim", victim, sizeof(victim));
    put(victim, "victim");
    snprintf(tmp, sizeof(tmp), "%s.tmp", p);
    assert_int_equal(symlink(victim, tmp), 0);
    assert_int_equal(vs_fs_write_atomic(p, "two", 3, 0644, 0), 0);
    expect_text(p, "two");
    expect_text(victim, "victim");
    assert_int_equal(lstat(tmp, &st), -1);
    /* the pid form leaves no temporary either */
    assert_int_equal(vs_fs_write_atomic(p, "three", 5, 0644, VS_FS_PID_TMP), 0);
    expect_text(p, "three");
    snprintf(tmp, sizeof(tmp), "%s.tmp%d", p, (int)getpid());
    assert_int_equal(lstat(tmp, &st), -1);
    /* a directory that does not exist: an error, nothing written */
    path_of(d, "nodir/w.txt", p, sizeof(p));
    assert_int_equal(vs_fs_write_atomic(p, "x", 1, 0644, 0), -ENOENT);
}

static void test_copy(void **state)
{
    struct dir *d = *state;
    char src[256], dst[256];
    path_of(d, "src", src, sizeof(src));
    /* more than one read's worth */
    FILE *f = fopen(src, "w");
    assert_non_null(f);
    for (int i = 0; i < 20000; i++)
        fputs("0123456789", f);
    assert_int_equal(fclose(f), 0);
    path_of(d, "dst", dst, sizeof(dst));
    int64_t n = -1;
    assert_int_equal(vs_fs_copy_file(src, dst, 0640, VS_FS_DURABLE, &n), 0);
    assert_int_equal(n, 200000);
    struct stat st;
    assert_int_equal(stat(dst, &st), 0);
    assert_int_equal(st.st_size, 200000);
    assert_int_equal(st.st_mode & 0777, 0640);
    /* from a descriptor part read: the rest only */
    int fd = open(src, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(lseek(fd, 199990, SEEK_SET), 199990);
    assert_int_equal(vs_fs_copy_fd(fd, dst, 0644, 0, &n), 0);
    close(fd);
    assert_int_equal(n, 10);
    expect_text(dst, "0123456789");
    /* a missing source leaves dst as it was */
    path_of(d, "missing", src, sizeof(src));
    assert_int_equal(vs_fs_copy_file(src, dst, 0644, 0, NULL), -ENOENT);
    expect_text(dst, "0123456789");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_mkdir_p, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rm_tree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_atomic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copy, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
