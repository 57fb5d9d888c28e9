/*
 * The client's transfers and GUI RPC guard, against real sockets on
 * 127.0.0.1 driven by the test itself: cc_config's transfer options and
 * BOINC's defaults, the transfer budgets (all projects, one project), the
 * low-speed limit, abandoning a project's transfers, and the refusal of
 * remote GUI RPC access without a password.
 */
#include "vs_test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/fs.h"

struct fx {
    char dir[64];
    struct vs_client *c;
    int lfd; /* a listening socket: accepts (the kernel does), never answers unless told */
    int port;
};

static void write_text(const char *dir, const char *name, const char *text)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    assert_int_equal(vs_client_write_atomic(path, text, strlen(text), false), 0);
}

static int setup(void **state)
{
    struct fx *f = VS_NEW(struct fx);
    snprintf(f->dir, sizeof(f->dir), "/tmp/vs_test_net_XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    f->c = VS_NEW(struct vs_client);
    vs_client_init(f->c, f->dir);
    f->c->logf = fopen("/dev/null", "w");
    f->c->now = vs_client_now();
    f->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(f->lfd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(f->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(f->lfd, 64), 0);
    socklen_t sl = sizeof(a);
    assert_int_equal(getsockname(f->lfd, (struct sockaddr *)&a, &sl), 0);
    f->port = ntohs(a.sin_port);
    vs_client_net_global_init();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    vs_client_net_cleanup(f->c);
    fclose(f->c->logf);
    f->c->logf = NULL;
    vs_client_cleanup(f->c);
    vs_free(f->c);
    close(f->lfd);
    int rc = vs_fs_rm_tree(f->dir);
    vs_free(f);
    return rc;
}

/* A project whose n files are all to be downloaded from the test's socket. */
static void project_with_files(struct fx *f, const char *name, int n)
{
    struct vs_client *c = f->c;
    char url[200];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/%s/", f->port, name);
    assert_int_equal(vs_client_attach(c, url, "0123456789abcdef", false), 0);
    size_t p = c->n_projects - 1;
    for (int i = 0; i < n; i++) {
        struct cl_file *fl = vs_client_add_file(c);
        char fname[64], furl[300];
        snprintf(fname, sizeof(fname), "%s_in_%d", name, i);
        snprintf(furl, sizeof(furl), "%sdownload/%s", url, fname);
        fl->name = vs_xstrdup(fname);
        fl->project = p;
        fl->nbytes = 100;
        fl->urls[fl->n_urls++] = vs_xstrdup(furl);
    }
}

static void test_cc_config_options(void **state)
{
    struct fx *f = *state;
    struct vs_client *c = f->c;
    vs_client_prefs_read(c);
    /* BOINC-COMPAT: CC_CONFIG::defaults() */
    assert_int_equal(c->prefs.max_file_xfers, 8);
    assert_int_equal(c->prefs.max_file_xfers_per_project, 2);
    assert_true(c->prefs.http_transfer_timeout_bps == 10);
    assert_true(c->prefs.http_transfer_timeout == 300);
    write_text(f->dir, "cc_config.xml",
               "<cc_config><options><max_file_xfers>3</max_file_xfers>"
               "<max_file_xfers_per_project>1</max_file_xfers_per_project>"
               "<http_transfer_timeout_bps>500</http_transfer_timeout_bps>"
               "<http_transfer_timeout>20</http_transfer_timeout></options></cc_config>");
    vs_client_prefs_read(c);
    assert_int_equal(c->prefs.max_file_xfers, 3);
    assert_int_equal(c->prefs.max_file_xfers_per_project, 1);
    assert_true(c->prefs.http_transfer_timeout_bps == 500);
    assert_true(c->prefs.http_transfer_timeout == 20);
    /* out of range: refused with a message, the default kept */
    write_text(f->dir, "cc_config.xml",
               "<cc_config><options><max_file_xfers>0</max_file_xfers>"
               "<http_transfer_timeout>-1</http_transfer_timeout></options></cc_config>");
    int before = c->msg_seqno;
    vs_client_prefs_read(c);
    assert_int_equal(c->prefs.max_file_xfers, 8);
    assert_true(c->prefs.http_transfer_timeout == 300);
    assert_int_equal(c->msg_seqno, before + 2);
    assert_non_null(
        strstr(c->msgs[(c->msgs_head + VS_CLIENT_MSG_KEEP - 1) % VS_CLIENT_MSG_KEEP].body,
               "<http_transfer_timeout> must be a number in [1, 86400]"));
}

/* Downloads start within both budgets, from project to project. */
static void test_budgets(void **state)
{
    struct fx *f = *state;
    struct vs_client *c = f->c;
    vs_client_prefs_read(c);
    project_with_files(f, "a", 5);
    project_with_files(f, "b", 5);
    project_with_files(f, "c", 5);
    assert_true(vs_client_xfer_poll(c));
    const char *a = c->projects[0].master_url, *b = c->projects[1].master_url,
               *cc = c->projects[2].master_url;
    /* each project its share (2), while the whole (8) allows more */
    assert_int_equal(vs_client_net_count(c, CL_NET_FILES, a), 2);
    assert_int_equal(vs_client_net_count(c, CL_NET_FILES, b), 2);
    assert_int_equal(vs_client_net_count(c, CL_NET_FILES, cc), 2);
    assert_true(vs_client_net_busy(c, CL_NET_DOWNLOAD, a, "a_in_0"));
    assert_true(vs_client_net_busy(c, CL_NET_DOWNLOAD, a, "a_in_1"));
    assert_false(vs_client_net_busy(c, CL_NET_DOWNLOAD, a, "a_in_2"));
    /* nothing more starts while they are in flight */
    vs_client_xfer_poll(c);
    assert_int_equal(vs_client_net_count(c, CL_NET_FILES, NULL), 6);
    /* a detached project's transfers end at once: their slots are free */
    vs_client_net_abandon(c, CL_NET_ANY, b);
    assert_int_equal(vs_client_net_count(c, CL_NET_FILES, b), 0);
    assert_int_equal(vs_client_net_count(c, CL_NET_FILES, NULL), 4);
    vs_client_net_abandon(c, CL_NET_ANY, NULL);
    assert_int_equal(vs_client_net_count(c, CL_NET_ANY, NULL), 0);
    /* the whole budget: 3 in all, so the third project waits */
    write_text(f->dir, "cc_config.xml",
               "<cc_config><options><max_file_xfers>3</max_file_xfers></options></cc_config>");
    vs_client_prefs_read(c);
    vs_client_xfer_poll(c);
    assert_int_equal(vs_client_net_count(c, CL_NET_FILES, NULL), 3);
    assert_int_equal(vs_client_net_count(c, CL_NET_FILES, a), 2);
    assert_int_equal(vs_client_net_count(c, CL_NET_FILES, b), 1);
    assert_int_equal(vs_client_net_count(c, CL_NET_FILES, cc), 0);
    /* the network mode "never" stops them all */
    c->network_mode = RUN_MODE_NEVER;
    assert_false(vs_client_xfer_poll(c));
    assert_int_equal(vs_client_net_count(c, CL_NET_ANY, NULL), 0);
}

struct seen {
    int calls;
    struct cl_http_done d;
};

static void record(struct vs_client *c, void *ud, const struct cl_http_done *d)
{
    (void)c;
    struct seen *s = ud;
    s->calls++;
    s->d = *d;
}

/* A server that sends its headers and one byte, then nothing: the transfer
 * fails by the low-speed limit, with a message that says so. */
static void test_low_speed(void **state)
{
    struct fx *f = *state;
    struct vs_client *c = f->c;
    c->prefs.http_transfer_timeout_bps = 10;
    c->prefs.http_transfer_timeout = 2;
    char url[200];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/x", f->port);
    struct vs_buf reply;
    vs_buf_init(&reply, 1024);
    struct seen s = {0};
    struct cl_http_req q = {
        .kind = CL_NET_RPC, .project_url = "http://p/", .url = url, .reply = &reply};
    assert_int_equal(vs_client_http_start(c, &q, record, &s), 0);
    assert_int_equal(vs_client_net_count(c, CL_NET_RPC, NULL), 1);
    int fd = -1;
    double t0 = vs_client_now();
    while (s.calls == 0 && vs_client_now() - t0 < 20) {
        /* the loop's wait: the test's own socket stands for the GUI RPC's */
        struct pollfd pf = {.fd = fd >= 0 ? fd : f->lfd, .events = POLLIN};
        vs_client_net_wait(c, &pf, 1, 200);
        if (fd < 0 && (pf.revents & POLLIN)) {
            fd = accept(f->lfd, NULL, NULL);
            assert_true(fd >= 0);
            const char *h = "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nx";
            assert_int_equal(write(fd, h, strlen(h)), (ssize_t)strlen(h));
        } else if (fd >= 0 && (pf.revents & POLLIN)) {
            char buf[4096];
            (void)!read(fd, buf, sizeof(buf)); /* the request */
        }
        vs_client_net_run(c);
    }
    double took = vs_client_now() - t0;
    assert_int_equal(s.calls, 1);
    assert_false(s.d.abandoned);
    assert_int_equal(s.d.rc, VS_ETIMEOUT);
    assert_true(s.d.too_slow);
    assert_int_equal(s.d.code, 200);
    assert_string_equal(s.d.why, "transfer slower than 10 bytes/s for 2 s");
    assert_true(took >= 1.5 && took < 10);
    assert_int_equal(vs_client_net_count(c, CL_NET_ANY, NULL), 0);
    assert_string_equal(vs_buf_str(&reply), "x");
    close(fd);
    vs_buf_cleanup(&reply);
}

/* An abandoned transfer tells its owner, once, and nothing else happens. */
static void test_abandon(void **state)
{
    struct fx *f = *state;
    struct vs_client *c = f->c;
    char url[200];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/x", f->port);
    struct vs_buf r1, r2;
    vs_buf_init(&r1, 1024);
    vs_buf_init(&r2, 1024);
    struct seen s1 = {0}, s2 = {0};
    struct cl_http_req q = {
        .kind = CL_NET_RPC, .project_url = "http://p1/", .url = url, .reply = &r1};
    assert_int_equal(vs_client_http_start(c, &q, record, &s1), 0);
    q.project_url = "http://p2/";
    q.kind = CL_NET_UPLOAD;
    q.name = "out_0";
    q.reply = &r2;
    assert_int_equal(vs_client_http_start(c, &q, record, &s2), 0);
    for (int i = 0; i < 5; i++) {
        vs_client_net_wait(c, NULL, 0, 20);
        vs_client_net_run(c);
    }
    assert_int_equal(s1.calls + s2.calls, 0);
    assert_true(vs_client_net_busy(c, CL_NET_UPLOAD, "http://p2/", "out_0"));
    assert_false(vs_client_net_busy(c, CL_NET_DOWNLOAD, "http://p2/", "out_0"));
    vs_client_net_abandon(c, CL_NET_ANY, "http://p1/");
    assert_int_equal(s1.calls, 1);
    assert_true(s1.d.abandoned);
    assert_int_equal(s2.calls, 0);
    vs_client_net_cleanup(c); /* abandons the rest */
    assert_int_equal(s2.calls, 1);
    assert_true(s2.d.abandoned);
    vs_buf_cleanup(&r1);
    vs_buf_cleanup(&r2);
}

/* A POST whose body is a head in memory and the rest of a file: what the
 * server receives is the head, then the file's bytes from its position. */
static void test_streamed_post(void **state)
{
    struct fx *f = *state;
    struct vs_client *c = f->c;
    char path[128];
    snprintf(path, sizeof(path), "%s/big", f->dir);
    FILE *w = fopen(path, "wb");
    assert_non_null(w);
    size_t size = 3u << 20; /* more than the sockets' buffers: many reads */
    for (size_t i = 0; i < size; i++)
        fputc((int)(i * 7 % 251), w);
    fclose(w);
    FILE *in = fopen(path, "rb");
    assert_non_null(in);
    assert_int_equal(fseek(in, 1000, SEEK_SET), 0); /* an upload resumed at 1000 */
    const char *head = "<data>\n";
    char url[200];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/up", f->port);
    struct vs_buf reply;
    vs_buf_init(&reply, 1024);
    struct seen s = {0};
    struct cl_http_req q = {.kind = CL_NET_UPLOAD,
                            .project_url = "http://p/",
                            .name = "big",
                            .url = url,
                            .body = head,
                            .len = strlen(head),
                            .body_file = in,
                            .body_file_len = (double)(size - 1000),
                            .reply = &reply};
    assert_int_equal(vs_client_http_start(c, &q, record, &s), 0);
    int fd = -1;
    struct vs_buf got;
    vs_buf_init(&got, 8u << 20);
    bool answered = false;
    double t0 = vs_client_now();
    while (s.calls == 0 && vs_client_now() - t0 < 30) {
        struct pollfd pf = {.fd = fd >= 0 ? fd : f->lfd, .events = POLLIN};
        vs_client_net_wait(c, &pf, 1, 100);
        if (fd < 0 && (pf.revents & POLLIN)) {
            fd = accept(f->lfd, NULL, NULL);
            assert_true(fd >= 0);
        } else if (fd >= 0 && (pf.revents & POLLIN)) {
            char buf[65536];
            ssize_t n = read(fd, buf, sizeof(buf));
            assert_true(n >= 0);
            assert_int_equal(vs_buf_append(&got, buf, (size_t)n), 0);
            const char *body = got.data ? strstr(got.data, "\r\n\r\n") : NULL;
            if (!answered && body &&
                got.len - (size_t)(body + 4 - got.data) == strlen(head) + size - 1000) {
                const char *ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
                assert_int_equal(write(fd, ok, strlen(ok)), (ssize_t)strlen(ok));
                answered = true;
            }
        }
        vs_client_net_run(c);
    }
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.d.rc, 0);
    assert_int_equal(s.d.code, 200);
    assert_string_equal(vs_buf_str(&reply), "ok");
    const char *body = strstr(got.data, "\r\n\r\n") + 4;
    assert_non_null(strstr(got.data, "Content-Length: 3144735\r\n"));
    assert_memory_equal(body, head, strlen(head));
    for (size_t i = 1000; i < size; i++)
        if ((unsigned char)body[strlen(head) + i - 1000] != (unsigned char)(i * 7 % 251))
            fail_msg("byte %zu of the file differs", i);
    close(fd);
    fclose(in);
    vs_buf_cleanup(&got);
    vs_buf_cleanup(&reply);
}

/* Finding 9: remote GUI RPC access with an empty password is refused. */
static void test_gui_check(void **state)
{
    struct fx *f = *state;
    struct vs_client *c = f->c;
    c->gui_password[0] = '\0';
    assert_int_equal(vs_client_gui_check(c), 0); /* loopback only: fine */
    c->prefs.allow_remote_gui_rpc = true;
    assert_int_equal(vs_client_gui_check(c), VS_ECONFIG);
    c->prefs.allow_remote_gui_rpc = false;
    c->allow_remote_cmdline = true;
    assert_int_equal(vs_client_gui_check(c), VS_ECONFIG);
    c->allow_remote_cmdline = false;
    write_text(f->dir, "remote_hosts.cfg", "# the manager\n10.0.0.7\n");
    assert_int_equal(vs_client_gui_check(c), VS_ECONFIG);
    const char *m = c->msgs[(c->msgs_head + VS_CLIENT_MSG_KEEP - 1) % VS_CLIENT_MSG_KEEP].body;
    assert_non_null(strstr(m, "refusing to start: GUI RPC access from other hosts is allowed "
                              "(remote_hosts.cfg) but gui_rpc_auth.cfg is empty"));
    assert_non_null(strstr(m, "Put a password in"));
    snprintf(c->gui_password, sizeof(c->gui_password), "s3cret");
    assert_int_equal(vs_client_gui_check(c), 0);
    /* a remote_hosts.cfg of comments only allows no host */
    write_text(f->dir, "remote_hosts.cfg", "# nobody\n");
    c->gui_password[0] = '\0';
    assert_int_equal(vs_client_gui_check(c), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cc_config_options, setup, teardown),
        cmocka_unit_test_setup_teardown(test_budgets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_low_speed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abandon, setup, teardown),
        cmocka_unit_test_setup_teardown(test_streamed_post, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gui_check, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
