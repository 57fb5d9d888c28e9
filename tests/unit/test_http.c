/*
 * The HTTP front end on its own: routing, the master page the BOINC client
 * parses, downloads (whole, Range, unsafe paths), the body cap, methods. A
 * fake scheduler handler stands in for the real one. Talks to the server
 * over loopback with libcurl.
 */
#include "vs_test.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/http.h"

struct fixture {
    char dir[64];
    struct vs_http *h;
    uint16_t port;
    char base[128];
    int sched_calls;
    size_t last_len;
};

static int fake_sched(void *ctx, const char *body, size_t len, const char *peer, struct vs_buf *out)
{
    struct fixture *fx = ctx;
    fx->sched_calls++;
    fx->last_len = len;
    assert_non_null(peer);
    assert_int_equal(strlen(body), len); /* NUL-terminated for the handler */
    assert_int_equal(vs_buf_printf(out, "<scheduler_reply>%zu</scheduler_reply>\n", len), 0);
    return 200;
}

static void write_file(const char *path, const char *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

static int setup(void **state)
{
    struct fixture *fx = VS_NEW(struct fixture);
    snprintf(fx->dir, sizeof(fx->dir), "/tmp/vs_http_XXXXXX");
    assert_non_null(mkdtemp(fx->dir));
    char p[256];
    snprintf(p, sizeof(p), "%s/1a2", fx->dir);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof(p), "%s/1a2/input_1", fx->dir);
    write_file(p, "0123456789", 10);
    snprintf(p, sizeof(p), "%s/secret", fx->dir);
    write_file(p, "no", 2);
    struct vs_http_config cfg = {
        .master_url = "http://127.0.0.1:1/demo/",
        .project_name = "Demo <Project>",
        .download_dir = fx->dir,
        .max_body = 1000,
        .threads = 2,
        .sched = fake_sched,
        .sched_ctx = fx,
    };
    assert_int_equal(vs_http_start(&cfg, "127.0.0.1", 0, &fx->h), 0);
    fx->port = vs_http_port(fx->h);
    assert_true(fx->port > 0);
    snprintf(fx->base, sizeof(fx->base), "http://127.0.0.1:%u", (unsigned)fx->port);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    vs_http_stop(fx->h);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", fx->dir);
    assert_int_equal(system(cmd), 0);
    vs_free(fx);
    return 0;
}

static size_t collect(char *ptr, size_t size, size_t nmemb, void *ud)
{
    struct vs_buf *b = ud;
    if (vs_buf_append(b, ptr, size * nmemb) != 0)
        return 0;
    return size * nmemb;
}

/* One request; returns the HTTP status, body in *out (caller cleans up). */
static long request(const struct fixture *fx, const char *path, const char *post, size_t post_len,
                    const char *range, struct vs_buf *out)
{
    char url[512];
    snprintf(url, sizeof(url), "%s%s", fx->base, path);
    CURL *c = curl_easy_init();
    assert_non_null(c);
    vs_buf_init(out, 1 << 20);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);
    if (post) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, post);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)post_len);
    }
    if (range)
        curl_easy_setopt(c, CURLOPT_RANGE, range);
    CURLcode cc = curl_easy_perform(c);
    assert_int_equal(cc, CURLE_OK);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(c);
    return status;
}

static void test_master_page(void **state)
{
    struct fixture *fx = *state;
    struct vs_buf b;
    const char *paths[] = {"/demo/", "/demo", "/demo/index.html"};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(request(fx, paths[i], NULL, 0, NULL, &b), 200);
        /* BOINC-COMPAT: the exact forms the client scans for, one per line. */
        assert_non_null(strstr(
            b.data, "\n<link rel=\"boinc_scheduler\" href=\"http://127.0.0.1:1/demo/cgi\">\n"));
        assert_non_null(strstr(b.data, "<scheduler>http://127.0.0.1:1/demo/cgi</scheduler>"));
        assert_non_null(strstr(b.data, "Demo &lt;Project&gt;"));
        vs_buf_cleanup(&b);
    }
    assert_int_equal(request(fx, "/demo/get_project_config.php", NULL, 0, NULL, &b), 200);
    assert_non_null(strstr(b.data, "<master_url>http://127.0.0.1:1/demo/</master_url>"));
    assert_non_null(strstr(b.data, "<project_config>"));
    vs_buf_cleanup(&b);
    assert_int_equal(request(fx, "/other/", NULL, 0, NULL, &b), 404);
    vs_buf_cleanup(&b);
    assert_int_equal(request(fx, "/demo/nothing", NULL, 0, NULL, &b), 404);
    vs_buf_cleanup(&b);
}

static void test_downloads(void **state)
{
    struct fixture *fx = *state;
    struct vs_buf b;
    assert_int_equal(request(fx, "/demo/download/1a2/input_1", NULL, 0, NULL, &b), 200);
    assert_int_equal(b.len, 10);
    assert_memory_equal(b.data, "0123456789", 10);
    vs_buf_cleanup(&b);
    /* Resume: the client asks for the rest of a partial file. */
    assert_int_equal(request(fx, "/demo/download/1a2/input_1", NULL, 0, "4-", &b), 206);
    assert_int_equal(b.len, 6);
    assert_memory_equal(b.data, "456789", 6);
    vs_buf_cleanup(&b);
    assert_int_equal(request(fx, "/demo/download/1a2/input_1", NULL, 0, "2-3", &b), 206);
    assert_int_equal(b.len, 2);
    assert_memory_equal(b.data, "23", 2);
    vs_buf_cleanup(&b);
    assert_int_equal(request(fx, "/demo/download/1a2/input_1", NULL, 0, "10-", &b), 416);
    vs_buf_cleanup(&b);
    /* Missing files, directories and escapes are all 404s. */
    assert_int_equal(request(fx, "/demo/download/1a2/nope", NULL, 0, NULL, &b), 404);
    vs_buf_cleanup(&b);
    assert_int_equal(request(fx, "/demo/download/1a2", NULL, 0, NULL, &b), 404);
    vs_buf_cleanup(&b);
    assert_int_equal(request(fx, "/demo/download/../download/secret", NULL, 0, NULL, &b), 404);
    vs_buf_cleanup(&b);
    assert_int_equal(request(fx, "/demo/download/1a2/../secret", NULL, 0, NULL, &b), 404);
    vs_buf_cleanup(&b);
    assert_int_equal(request(fx, "/demo/download/1a2/%2e%2e/secret", NULL, 0, NULL, &b), 404);
    vs_buf_cleanup(&b);
    assert_int_equal(request(fx, "/demo/download/", NULL, 0, NULL, &b), 404);
    vs_buf_cleanup(&b);
    /* Downloads are GET only. */
    assert_int_equal(request(fx, "/demo/download/1a2/input_1", "x", 1, NULL, &b), 405);
    vs_buf_cleanup(&b);
}

static void test_scheduler_post(void **state)
{
    struct fixture *fx = *state;
    struct vs_buf b;
    const char *req = "<scheduler_request></scheduler_request>";
    assert_int_equal(request(fx, "/demo/cgi", req, strlen(req), NULL, &b), 200);
    assert_int_equal(fx->sched_calls, 1);
    assert_int_equal(fx->last_len, strlen(req));
    assert_non_null(strstr(b.data, "<scheduler_reply>"));
    vs_buf_cleanup(&b);
    /* An empty body reaches the handler too (it answers with an error reply). */
    assert_int_equal(request(fx, "/demo/cgi", "", 0, NULL, &b), 200);
    assert_int_equal(fx->sched_calls, 2);
    assert_int_equal(fx->last_len, 0);
    vs_buf_cleanup(&b);
    /* Over the cap: refused before the handler runs. */
    char *big = vs_xmalloc(5000);
    memset(big, 'x', 5000);
    assert_int_equal(request(fx, "/demo/cgi", big, 5000, NULL, &b), 413);
    assert_int_equal(fx->sched_calls, 2);
    vs_buf_cleanup(&b);
    vs_free(big);
    /* The scheduler is POST only. */
    assert_int_equal(request(fx, "/demo/cgi", NULL, 0, NULL, &b), 405);
    vs_buf_cleanup(&b);
    /* Uploads without a handler: a transient failure the client retries. */
    assert_int_equal(request(fx, "/demo/file_upload_handler", "x", 1, NULL, &b), 200);
    assert_non_null(strstr(b.data, "<status>1</status>"));
    vs_buf_cleanup(&b);
    struct vs_http_stats st;
    vs_http_get_stats(fx->h, &st);
    assert_int_equal(st.sched_requests, 2);
    assert_true(st.refused >= 2);
}

static void test_helpers(void **state)
{
    (void)state;
    char p[64];
    assert_int_equal(vs_http_url_path("http://127.0.0.1:8080/demo/", p, sizeof(p)), 0);
    assert_string_equal(p, "/demo/");
    assert_int_equal(vs_http_url_path("http://h.x/", p, sizeof(p)), 0);
    assert_string_equal(p, "/");
    assert_int_not_equal(vs_http_url_path("http://h.x", p, sizeof(p)), 0);
    assert_int_not_equal(vs_http_url_path("no-scheme/x/", p, sizeof(p)), 0);
    assert_int_not_equal(vs_http_url_path("http://h.x/a?b/", p, sizeof(p)), 0);
    assert_true(vs_http_safe_relpath("a"));
    assert_true(vs_http_safe_relpath("1a2/in_1.txt"));
    assert_true(vs_http_safe_relpath("x/..y"));
    assert_false(vs_http_safe_relpath(""));
    assert_false(vs_http_safe_relpath("/etc/passwd"));
    assert_false(vs_http_safe_relpath("../x"));
    assert_false(vs_http_safe_relpath("a/../x"));
    assert_false(vs_http_safe_relpath("a/./x"));
    assert_false(vs_http_safe_relpath("a//x"));
    assert_false(vs_http_safe_relpath("a/"));
    assert_false(vs_http_safe_relpath("a\\b"));
    assert_false(vs_http_safe_relpath("a\nb"));
    assert_false(vs_http_safe_relpath(".."));
}

static void test_bad_start(void **state)
{
    (void)state;
    struct vs_http *h = NULL;
    struct vs_http_config cfg = {
        .master_url = "http://127.0.0.1:1/nopath", .download_dir = "/tmp", .sched = fake_sched};
    assert_int_not_equal(vs_http_start(&cfg, "127.0.0.1", 0, &h), 0);
    cfg.master_url = "http://127.0.0.1:1/ok/";
    cfg.download_dir = "/nonexistent/dir";
    assert_int_not_equal(vs_http_start(&cfg, "127.0.0.1", 0, &h), 0);
    cfg.download_dir = "/tmp";
    assert_int_not_equal(vs_http_start(&cfg, "not-an-ip", 0, &h), 0);
    cfg.sched = NULL;
    assert_int_not_equal(vs_http_start(&cfg, "127.0.0.1", 0, &h), 0);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_master_page, setup, teardown),
        cmocka_unit_test_setup_teardown(test_downloads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scheduler_post, setup, teardown),
        cmocka_unit_test(test_helpers),
        cmocka_unit_test(test_bad_start),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
