/*
 * The one include every unit test starts with: cmocka needs these system
 * headers before its own, in this order, which a sorted include block would
 * break.
 */
#ifndef VOLSCHED_TESTS_VS_TEST_H
#define VOLSCHED_TESTS_VS_TEST_H

// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
// clang-format on

#include <stdio.h>

#include "volsched/buf.h"

/*
 * The whole of a test data file, NUL-terminated (vs_buf_take), its length
 * in *out_len when out_len is not NULL; fails the test when the file
 * cannot be read. The caller frees it with vs_free.
 */
static inline char *vs_test_slurp(const char *path, size_t *out_len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    struct vs_buf b;
    vs_buf_init(&b, 16u << 20);
    char tmp[8192];
    size_t n;
    while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0)
        assert_int_equal(vs_buf_append(&b, tmp, n), 0);
    fclose(f);
    if (!b.data)
        assert_int_equal(vs_buf_puts(&b, ""), 0);
    return vs_buf_take(&b, out_len);
}

#endif
