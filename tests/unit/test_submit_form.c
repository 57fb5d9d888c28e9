/*
 * The form bodies of the submission API (server/submit_form.h):
 * urlencoded as lib/submit_api.py sends it, multipart as job_file.php's
 * upload_files gets it (binary content kept byte for byte), and the
 * malformed ones refused with a sentence.
 */
#include "vs_test.h"

#include <string.h>

#include "server/submit_form.h"

static struct vs_form *parse(struct vs_arena *a, const char *ctype, const char *body, size_t len,
                             int want_rc)
{
    struct vs_form *f = VS_NEW(struct vs_form);
    char err[300] = "";
    assert_int_equal(vs_form_parse(ctype, body, len, a, f, err, sizeof(err)), want_rc);
    if (want_rc)
        assert_true(strlen(err) > 10);
    return f;
}

static void test_urlencoded(void **state)
{
    (void)state;
    struct vs_arena a;
    vs_arena_init(&a, 4096);
    const char *b = "a=1&request=%3Cping%2F%3E+x&empty=&flag";
    struct vs_form *f = parse(&a, "application/x-www-form-urlencoded", b, strlen(b), 0);
    assert_int_equal(f->n, 4);
    const struct vs_form_field *r = vs_form_field_get(f, "request");
    assert_non_null(r);
    assert_string_equal(r->value, "<ping/> x");
    assert_int_equal(r->len, 9);
    assert_string_equal(vs_form_field_get(f, "empty")->value, "");
    assert_non_null(vs_form_field_get(f, "flag"));
    assert_null(vs_form_field_get(f, "nope"));
    vs_free(f);
    /* No Content-Type: urlencoded (curl -d sends one; others may not). */
    f = parse(&a, NULL, "request=x", 9, 0);
    assert_string_equal(vs_form_field_get(f, "request")->value, "x");
    vs_free(f);
    vs_free(parse(&a, NULL, "request=%zz", 11, VS_EPARSE));
    vs_free(parse(&a, NULL, "request=%4", 10, VS_EPARSE));
    vs_free(parse(&a, "text/plain", "x", 1, VS_EUNSUPPORTED));
    vs_arena_cleanup(&a);
}

static void test_multipart(void **state)
{
    (void)state;
    struct vs_arena a;
    vs_arena_init(&a, 4096);
    const char body[] = "--XyZ\r\n"
                        "Content-Disposition: form-data; name=\"request\"\r\n\r\n"
                        "<upload_files/>\r\n"
                        "--XyZ\r\n"
                        "Content-Disposition: form-data; name=\"file_0\"; filename=\"jf_1\"\r\n"
                        "Content-Type: application/octet-stream\r\n\r\n"
                        "a\0b\r\n--X\r\n"
                        "--XyZ--\r\n";
    size_t len = sizeof(body) - 1;
    struct vs_form *f = parse(&a, "multipart/form-data; boundary=XyZ", body, len, 0);
    assert_int_equal(f->n, 2);
    assert_string_equal(vs_form_field_get(f, "request")->value, "<upload_files/>");
    const struct vs_form_field *file = vs_form_field_get(f, "file_0");
    assert_string_equal(file->filename, "jf_1");
    assert_int_equal(file->len, 8);
    assert_memory_equal(file->value, "a\0b\r\n--X", 8);
    vs_free(f);
    vs_free(parse(&a, "multipart/form-data", body, len, VS_EPARSE));             /* no boundary */
    vs_free(parse(&a, "multipart/form-data; boundary=Q", body, len, VS_EPARSE)); /* not found */
    const char cut[] = "--XyZ\r\nContent-Disposition: form-data; name=\"r\"\r\n\r\nxx";
    vs_free(parse(&a, "multipart/form-data; boundary=XyZ", cut, sizeof(cut) - 1, VS_EPARSE));
    const char anon[] = "--XyZ\r\nContent-Type: a/b\r\n\r\nxx\r\n--XyZ--\r\n";
    vs_free(parse(&a, "multipart/form-data; boundary=XyZ", anon, sizeof(anon) - 1, VS_EPARSE));
    vs_arena_cleanup(&a);
}

static void test_too_many_fields(void **state)
{
    (void)state;
    struct vs_arena a;
    vs_arena_init(&a, 4096);
    size_t n = VS_FORM_MAX_FIELDS + 1;
    char *b = vs_xmalloc(n * 4 + 1);
    for (size_t i = 0; i < n; i++)
        memcpy(b + 4 * i, "a=1&", 4);
    b[n * 4] = '\0';
    vs_free(parse(&a, NULL, b, n * 4, VS_ELIMIT));
    vs_free(b);
    vs_arena_cleanup(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_urlencoded),
        cmocka_unit_test(test_multipart),
        cmocka_unit_test(test_too_many_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
