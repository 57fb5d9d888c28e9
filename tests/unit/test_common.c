/* Unit tests of src/common: errors, buffers, arena, JSON writer, rng, strings. */
#include "vs_test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/error.h"
#include "volsched/json.h"
#include "volsched/rng.h"
#include "volsched/str.h"

static void test_strerror(void **state)
{
    (void)state;
    assert_string_equal(vs_strerror(0), "success");
    assert_string_equal(vs_strerror(VS_ELIMIT), "size or count limit exceeded");
    assert_string_equal(vs_strerror(VS_EINTERNAL), "internal error");
    assert_true(VS_E__END < -9000);
    assert_string_equal(vs_strerror(-2), "No such file or directory");
}

/* A whole file into a buffer: its bytes, a missing file, the cap. */
static void test_buf_append_file(void **state)
{
    (void)state;
    char path[] = "/tmp/vs_buf_file_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    for (int i = 0; i < 3000; i++)
        fputs("0123456789", f); /* several read chunks */
    fclose(f);
    struct vs_buf b;
    vs_buf_init(&b, 1 << 20);
    assert_int_equal(vs_buf_puts(&b, "head:"), 0);
    assert_int_equal(vs_buf_append_file(&b, path), 0);
    assert_int_equal(b.len, 5 + 30000);
    assert_memory_equal(b.data + 5 + 29990, "0123456789", 10);
    vs_buf_cleanup(&b);
    vs_buf_init(&b, 100);
    assert_int_equal(vs_buf_append_file(&b, path), VS_ELIMIT);
    vs_buf_cleanup(&b);
    unlink(path);
    vs_buf_init(&b, 100);
    assert_int_equal(vs_buf_append_file(&b, path), -ENOENT);
    assert_int_equal(b.len, 0);
    vs_buf_cleanup(&b);
}

static void test_buf_cap(void **state)
{
    (void)state;
    struct vs_buf b;
    vs_buf_init(&b, 10);
    assert_int_equal(vs_buf_puts(&b, "hello"), 0);
    assert_int_equal(vs_buf_printf(&b, "%d", 1234), 0);
    assert_string_equal(vs_buf_str(&b), "hello1234");
    /* Two more bytes would pass the cap: refused, contents unchanged. */
    assert_int_equal(vs_buf_puts(&b, "ab"), VS_ELIMIT);
    assert_string_equal(vs_buf_str(&b), "hello1234");
    assert_int_equal(vs_buf_puts(&b, "a"), 0);
    assert_int_equal(b.len, 10);
    vs_buf_reset(&b);
    assert_string_equal(vs_buf_str(&b), "");
    vs_buf_cleanup(&b);

    vs_buf_init(&b, VS_BUF_UNLIMITED);
    char big[600];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(vs_buf_printf(&b, "<%s>", big), 0);
    assert_int_equal(b.len, 601);
    size_t n;
    char *taken = vs_buf_take(&b, &n);
    assert_int_equal(n, 601);
    assert_int_equal(taken[0], '<');
    vs_free(taken);
    vs_buf_cleanup(&b);
}

static void test_arena(void **state)
{
    (void)state;
    struct vs_arena a;
    vs_arena_init(&a, 128);
    char *s = vs_arena_strndup(&a, "abcdef", 3);
    assert_string_equal(s, "abc");
    void *big = vs_arena_alloc(&a, 1000);
    assert_non_null(big);
    for (int i = 0; i < 100; i++) {
        int *p = vs_arena_alloc(&a, sizeof(int));
        assert_int_equal(*p, 0);
        *p = i;
    }
    /* Raw allocations are aligned like the others and do not overlap the
     * zeroed ones that follow. */
    unsigned char *raw = vs_arena_alloc_raw(&a, 300);
    assert_int_equal((uintptr_t)raw % _Alignof(max_align_t), 0);
    memset(raw, 0xab, 300);
    int *z = vs_arena_alloc(&a, 64 * sizeof(int));
    for (int i = 0; i < 64; i++)
        assert_int_equal(z[i], 0);
    for (int i = 0; i < 300; i++)
        assert_int_equal(raw[i], 0xab);
    vs_arena_reset(&a);
    assert_non_null(vs_arena_alloc(&a, 16));
    vs_arena_cleanup(&a);
}

static void test_json(void **state)
{
    (void)state;
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    struct vs_json j;
    vs_json_init(&j, &b, false);
    vs_json_obj_begin(&j);
    vs_json_key(&j, "a");
    vs_json_num(&j, 0.5);
    vs_json_key(&j, "s");
    vs_json_str(&j, "q\"\n\x01");
    vs_json_key(&j, "arr");
    vs_json_arr_begin(&j);
    vs_json_int(&j, -3);
    vs_json_bool(&j, true);
    vs_json_null(&j);
    vs_json_arr_end(&j);
    vs_json_key(&j, "empty");
    vs_json_obj_begin(&j);
    vs_json_obj_end(&j);
    vs_json_obj_end(&j);
    assert_int_equal(vs_json_error(&j), 0);
    assert_string_equal(
        vs_buf_str(&b),
        "{\"a\":0.5,\"s\":\"q\\\"\\n\\u0001\",\"arr\":[-3,true,null],\"empty\":{}}");
    vs_buf_cleanup(&b);
}

static void test_rng_deterministic(void **state)
{
    (void)state;
    struct vs_rng a, b;
    vs_rng_seed(&a, 42);
    vs_rng_seed(&b, 42);
    for (int i = 0; i < 1000; i++) {
        assert_int_equal(vs_rng_u64(&a), vs_rng_u64(&b));
        double d = vs_rng_double(&a);
        (void)vs_rng_double(&b);
        assert_true(d >= 0.0 && d < 1.0);
        assert_true(vs_rng_below(&a, 7) < 7);
        (void)vs_rng_below(&b, 7);
    }
    vs_rng_seed(&b, 43);
    assert_int_not_equal(vs_rng_u64(&a), vs_rng_u64(&b));
}

static void test_str(void **state)
{
    (void)state;
    char d[4];
    assert_int_equal(vs_strlcpy(d, "abc", sizeof(d)), 0);
    assert_int_equal(vs_strlcpy(d, "abcd", sizeof(d)), VS_ELIMIT);
    assert_string_equal(d, "abc");
    double v;
    assert_int_equal(vs_parse_double(" 1.5 ", &v), 0);
    assert_true(v == 1.5);
    assert_int_equal(vs_parse_double("1.5x", &v), VS_EPARSE);
    assert_int_equal(vs_parse_double("", &v), VS_EPARSE);
    assert_int_equal(vs_parse_double("nan", &v), VS_EPARSE);
    int64_t i;
    assert_int_equal(vs_parse_int64("-12", &i), 0);
    assert_int_equal(i, -12);
    assert_int_equal(vs_parse_int64("99999999999999999999", &i), VS_EPARSE);
    bool bl;
    assert_int_equal(vs_parse_bool("TRUE", &bl), 0);
    assert_true(bl);
    assert_int_equal(vs_parse_bool("maybe", &bl), VS_EPARSE);
    assert_true(vs_str_has_prefix("file_upload_handler", "file_"));
    assert_true(vs_str_has_suffix("a.xml", ".xml"));
    assert_false(vs_str_has_suffix("a", ".xml"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strerror),
        cmocka_unit_test(test_buf_cap),
        cmocka_unit_test(test_buf_append_file),
        cmocka_unit_test(test_arena),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_rng_deterministic),
        cmocka_unit_test(test_str),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
