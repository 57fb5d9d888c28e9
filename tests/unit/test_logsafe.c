/*
 * Client text in the log: control characters escaped in every
 * line the logger writes, secrets reduced to a fingerprint.
 */
#include "vs_test.h"

#include <string.h>

#include "volsched/log.h"
#include "volsched/logsafe.h"

static void test_escape(void **state)
{
    (void)state;
    char out[64];
    assert_int_equal(vs_logsafe_escape("a\nb\x1b[31m\\c\x7f", out, sizeof(out)), 23);
    assert_string_equal(out, "a\\x0ab\\x1b[31m\\x5cc\\x7f");
    /* Truncation never splits an escape. */
    assert_int_equal(vs_logsafe_escape("ab\ncd", out, 5), 2);
    assert_string_equal(out, "ab");
    vs_logsafe_escape(NULL, out, sizeof(out));
    assert_string_equal(out, "(null)");
}

static void test_secret(void **state)
{
    (void)state;
    char a[VS_LOGSAFE_SECRET_LEN + 1], b[VS_LOGSAFE_SECRET_LEN + 1];
    vs_logsafe_secret("0123456789abcdef0123456789abcdef", a, sizeof(a));
    vs_logsafe_secret("0123456789abcdef0123456789abcdee", b, sizeof(b));
    assert_int_equal(strlen(a), VS_LOGSAFE_SECRET_LEN);
    assert_memory_equal(a, "md5:", 4);
    assert_string_not_equal(a, b);
    assert_null(strstr(a, "0123456789"));
}

/* The logger itself escapes: one call, one line, whatever the argument. */
static void test_logger_one_line(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    assert_non_null(f);
    struct vs_log lg;
    vs_log_init(&lg, VS_LOG_DEBUG, f, "t");
    struct vs_log *log = &lg;
    VS_LOG(log, VS_LOG_WARN, "key '%s'", "x\n2099-01-01T00:00:00Z t ERROR forged");
    rewind(f);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof(line), f)) {
        n++;
        assert_non_null(strstr(line, "x\\x0a2099"));
    }
    assert_int_equal(n, 1);
    fclose(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_secret),
        cmocka_unit_test(test_logger_one_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
