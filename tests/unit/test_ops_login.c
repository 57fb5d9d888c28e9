/*
 * The operator's login to /ops/ (volsched/ops_pages.h, server/ops_session.h,
 * ops_auth.h), through the page handler at explicit times: wrong passwords
 * are throttled per address before any PBKDF2 (a throttled address gets
 * 429 even with the right password; another address does not), a right
 * password sets a session cookie that then lets in without the password,
 * and a forged, tampered, expired or other password's cookie does not; the
 * minimum password length.
 */
#include "vs_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "server/ops_session.h"
#include "volsched/alloc.h"
#include "volsched/config.h"
#include "volsched/ops_auth.h"
#include "volsched/ops_pages.h"
#include "volsched/store_project.h"

#define PASSWORD "correct horse battery"
#define T0       1700000000

struct fixture {
    char dir[64];
    struct vs_project_config cfg;
    struct vs_ops_pages *pages;
};

static void set_password(struct fixture *fx, const char *pw)
{
    char hash[VS_OPS_HASH_MAX], path[128];
    assert_int_equal(vs_ops_hash_password(pw, hash, sizeof(hash)), 0);
    snprintf(path, sizeof(path), "%s/%s", fx->dir, VS_OPS_PASSWD_FILE);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", hash);
    fclose(f);
}

static void open_pages(struct fixture *fx)
{
    struct vs_ops_sources src = {0};
    assert_int_equal(vs_ops_pages_create(&fx->cfg, &src, &fx->pages), 0);
}

static int setup(void **state)
{
    struct fixture *fx = VS_NEW(struct fixture);
    snprintf(fx->dir, sizeof(fx->dir), "/tmp/vs_ops_login_XXXXXX");
    assert_non_null(mkdtemp(fx->dir));
    assert_int_equal(vs_project_config_defaults(&fx->cfg, fx->dir, "t", "http://127.0.0.1:8080/t/"),
                     0);
    char keys[96];
    snprintf(keys, sizeof(keys), "%s/keys", fx->dir);
    assert_int_equal(mkdir(keys, 0700), 0);
    struct vs_store *st = NULL;
    assert_int_equal(vs_project_store_open(&fx->cfg, true, NULL, &st), 0);
    vs_store_close(st);
    set_password(fx, PASSWORD);
    open_pages(fx);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    vs_ops_pages_destroy(fx->pages);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", fx->dir);
    assert_int_equal(system(cmd), 0);
    vs_free(fx);
    return 0;
}

/* "Basic base64(op:pw)" */
static void basic(const char *pw, char *out, size_t n)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char in[128];
    snprintf(in, sizeof(in), "op:%s", pw);
    size_t len = strlen(in), k = (size_t)snprintf(out, n, "Basic ");
    for (size_t i = 0; i < len; i += 3) {
        unsigned v = (unsigned char)in[i] << 16;
        v |= i + 1 < len ? (unsigned char)in[i + 1] << 8 : 0;
        v |= i + 2 < len ? (unsigned char)in[i + 2] : 0;
        out[k++] = b64[(v >> 18) & 63];
        out[k++] = b64[(v >> 12) & 63];
        out[k++] = i + 1 < len ? b64[(v >> 6) & 63] : '=';
        out[k++] = i + 2 < len ? b64[v & 63] : '=';
    }
    out[k] = '\0';
    assert_true(k < n);
}

/* One GET of /ops/ from peer at t with the password (NULL: none) and the
 * Cookie header (NULL: none); its status, its Set-Cookie in set_cookie (may
 * be NULL) and its Retry-After in *retry (may be NULL). */
static int get_ops(struct fixture *fx, const char *peer, int64_t t, const char *pw,
                   const char *cookie, char *set_cookie, unsigned *retry)
{
    char auth[256];
    if (pw)
        basic(pw, auth, sizeof(auth));
    struct vs_http_get req = {
        .path = "/ops/",
        .query = "",
        .authorization = pw ? auth : NULL,
        .cookie = cookie,
        .peer = peer,
    };
    struct vs_buf body;
    vs_buf_init(&body, 1u << 22);
    struct vs_http_page out = {.body = &body, .ctype = "text/plain"};
    int st = vs_ops_pages_handle(fx->pages, &req, t, &out);
    if (st == 429)
        assert_non_null(strstr(vs_buf_str(&body), "too many wrong operator passwords"));
    if (st == 200)
        assert_non_null(strstr(vs_buf_str(&body), "operations</h1>"));
    if (set_cookie)
        snprintf(set_cookie, VS_HTTP_SET_COOKIE_MAX, "%s", out.set_cookie);
    if (retry)
        *retry = out.retry_after;
    vs_buf_cleanup(&body);
    return st;
}

/* "vs_ops=VALUE" of a Set-Cookie, as a browser sends it back. */
static void cookie_of(const char *set_cookie, char *out, size_t n)
{
    size_t len = strcspn(set_cookie, ";");
    assert_true(len < n);
    memcpy(out, set_cookie, len);
    out[len] = '\0';
}

static void test_throttle_before_hashing(void **state)
{
    struct fixture *fx = *state;
    const char *bad = "203.0.113.9";
    for (int i = 0; i < VS_OPS_FAILED_BURST; i++)
        assert_int_equal(get_ops(fx, bad, T0, "wrong password!", NULL, NULL, NULL), 401);
    unsigned retry = 0;
    assert_int_equal(get_ops(fx, bad, T0, "wrong password!", NULL, NULL, &retry), 429);
    assert_true(retry >= 1 && retry <= 61);
    /* The right password waits too: checking it would answer guesses. */
    assert_int_equal(get_ops(fx, bad, T0 + 1, PASSWORD, NULL, NULL, NULL), 429);
    /* Another address is not held up; nor, as IPv6, a neighbour /64. */
    assert_int_equal(get_ops(fx, "198.51.100.1", T0 + 1, PASSWORD, NULL, NULL, NULL), 200);
    for (int i = 0; i < VS_OPS_FAILED_BURST; i++) {
        char a[64];
        snprintf(a, sizeof(a), "2001:db8:1:2::%x", i + 1); /* one /64, many addresses */
        assert_int_equal(get_ops(fx, a, T0, "wrong password!", NULL, NULL, NULL), 401);
    }
    assert_int_equal(get_ops(fx, "2001:db8:1:2::ffff", T0, PASSWORD, NULL, NULL, NULL), 429);
    assert_int_equal(get_ops(fx, "2001:db8:1:3::1", T0, PASSWORD, NULL, NULL, NULL), 200);
    /* The bucket refills at one a minute. */
    assert_int_equal(get_ops(fx, bad, T0 + 61, PASSWORD, NULL, NULL, NULL), 200);
}

static void test_session_cookie(void **state)
{
    struct fixture *fx = *state;
    char set[VS_HTTP_SET_COOKIE_MAX], c[VS_HTTP_SET_COOKIE_MAX];
    /* No password, no cookie: the challenge. */
    assert_int_equal(get_ops(fx, "192.0.2.1", T0, NULL, NULL, set, NULL), 401);
    assert_string_equal(set, "");
    assert_int_equal(get_ops(fx, "192.0.2.1", T0, PASSWORD, NULL, set, NULL), 200);
    assert_non_null(strstr(set, "vs_ops="));
    assert_non_null(strstr(set, "; HttpOnly"));
    assert_non_null(strstr(set, "; SameSite=Strict"));
    assert_non_null(strstr(set, "; Path=/ops"));
    assert_null(strstr(set, "Secure")); /* not over TLS */
    cookie_of(set, c, sizeof(c));
    /* The cookie alone lets in, among other cookies, until it expires. */
    char hdr[512];
    snprintf(hdr, sizeof(hdr), "theme=dark; %s; lang=en", c);
    assert_int_equal(get_ops(fx, "192.0.2.1", T0 + 60, NULL, hdr, set, NULL), 200);
    assert_string_equal(set, ""); /* no new cookie for a session */
    assert_int_equal(get_ops(fx, "192.0.2.1", T0 + VS_OPS_SESSION_SECS - 1, NULL, c, NULL, NULL),
                     200);
    assert_int_equal(get_ops(fx, "192.0.2.1", T0 + VS_OPS_SESSION_SECS, NULL, c, NULL, NULL), 401);
    /* A throttled address with a valid cookie still gets in. */
    for (int i = 0; i < VS_OPS_FAILED_BURST + 2; i++)
        (void)get_ops(fx, "192.0.2.1", T0 + 100, "wrong password!", NULL, NULL, NULL);
    assert_int_equal(get_ops(fx, "192.0.2.1", T0 + 100, NULL, c, NULL, NULL), 200);
    /* Tampered: another expiry, another MAC, a truncated value. */
    char t[VS_HTTP_SET_COOKIE_MAX];
    snprintf(t, sizeof(t), "%s", c);
    char *dot = strchr(t, '=') + 1;
    dot[0] = dot[0] == '9' ? '8' : '9'; /* expiry changed */
    assert_int_equal(get_ops(fx, "192.0.2.2", T0 + 60, NULL, t, NULL, NULL), 401);
    snprintf(t, sizeof(t), "%s", c);
    size_t n = strlen(t);
    t[n - 1] = t[n - 1] == '0' ? '1' : '0'; /* MAC changed */
    assert_int_equal(get_ops(fx, "192.0.2.2", T0 + 60, NULL, t, NULL, NULL), 401);
    t[n - 5] = '\0';
    assert_int_equal(get_ops(fx, "192.0.2.2", T0 + 60, NULL, t, NULL, NULL), 401);
    assert_int_equal(get_ops(fx, "192.0.2.2", T0 + 60, NULL, "vs_ops=", NULL, NULL), 401);
    /* A cookie made with another key (a forger's) is refused. */
    struct vs_ops_session_key k;
    memset(&k, 0x41, sizeof(k));
    char v[128];
    assert_int_equal(vs_ops_cookie_make(&k, T0, v, sizeof(v)), 0);
    snprintf(t, sizeof(t), "vs_ops=%s", v);
    assert_int_equal(get_ops(fx, "192.0.2.2", T0 + 60, NULL, t, NULL, NULL), 401);
    /* A new password ends the sessions of the old one (same secret file). */
    vs_ops_pages_destroy(fx->pages);
    set_password(fx, "another long password");
    open_pages(fx);
    assert_int_equal(get_ops(fx, "192.0.2.1", T0 + 60, NULL, c, NULL, NULL), 401);
}

static void test_cookie_reused_after_restart(void **state)
{
    struct fixture *fx = *state;
    char set[VS_HTTP_SET_COOKIE_MAX], c[VS_HTTP_SET_COOKIE_MAX];
    assert_int_equal(get_ops(fx, "192.0.2.1", T0, PASSWORD, NULL, set, NULL), 200);
    cookie_of(set, c, sizeof(c));
    /* Another serve on the same project directory (a restart, or an
     * instance behind a proxy) reads the same secret. */
    vs_ops_pages_destroy(fx->pages);
    open_pages(fx);
    assert_int_equal(get_ops(fx, "192.0.2.1", T0 + 5, NULL, c, NULL, NULL), 200);
    char path[128];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", fx->dir, VS_OPS_SESSION_KEY_FILE);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
}

static void test_password_length(void **state)
{
    (void)state;
    assert_non_null(vs_ops_password_problem("x"));
    assert_non_null(vs_ops_password_problem("123456789"));
    assert_null(vs_ops_password_problem("1234567890"));
    assert_non_null(vs_ops_password_problem("1234567890\n"));
    assert_non_null(vs_ops_password_problem(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_throttle_before_hashing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_session_cookie, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cookie_reused_after_restart, setup, teardown),
        cmocka_unit_test(test_password_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
