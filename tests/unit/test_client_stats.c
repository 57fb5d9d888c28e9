/*
 * What the client keeps per day and the GUI RPC ops around its
 * configuration: statistics_*.xml (one record per UTC day, updated after
 * each scheduler reply, 30 days kept, the oldest moved up to the cut-off,
 * read back at start), daily_xfer_history.xml, and the preferences /
 * cc_config ops (set writes the file, read obeys it; the preferences
 * volsched does not obey are named in a message; a file that is not XML is
 * refused), through vs_client_gui_dispatch as a GUI peer sends them.
 */
#include "vs_test.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "client/gui_rpc_int.h"
#include "client_fixture.h"
#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/xml.h"

#define DAY 86400.0
#define T0  (20000 * DAY) /* a UTC midnight */
#define URL "http://127.0.0.1:9/p/"

static int setup(void **state)
{
    clientfx_setup(state);
    struct client_fx *f = *state;
    f->c->logf = fopen("/dev/null", "w");
    f->c->now = T0 + 3600;
    assert_int_equal(vs_client_attach(f->c, URL, "k", false), 0);
    return 0;
}

static char *slurp(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    struct vs_buf b;
    vs_buf_init(&b, 1 << 20);
    if (vs_client_read_file(path, 1 << 20, &b) != 0) {
        vs_buf_cleanup(&b);
        return NULL;
    }
    return b.data; /* the caller frees it */
}

static void credit(struct vs_client *c, double total)
{
    c->projects[0].user_total_credit = total;
    c->projects[0].host_total_credit = total / 2;
    vs_client_stats_update(c, 0);
}

static void test_daily_statistics(void **state)
{
    struct client_fx *f = *state;
    struct vs_client *c = f->c;
    credit(c, 10);
    c->now += 3600;
    credit(c, 20); /* the same day: the record is updated */
    assert_int_equal(c->projects[0].n_stats, 1);
    assert_true(c->projects[0].stats[0].day == T0);
    assert_true(c->projects[0].stats[0].user_total_credit == 20);
    c->now = T0 + DAY + 5;
    credit(c, 30);
    assert_int_equal(c->projects[0].n_stats, 2);
    assert_true(c->projects[0].stats[1].day == T0 + DAY);

    char *file = slurp(f->dir, "statistics_127.0.0.1_9_p.xml");
    assert_non_null(file);
    assert_non_null(strstr(file, "<master_url>" URL "</master_url>"));
    assert_non_null(strstr(file, "<user_total_credit>30.000000</user_total_credit>"));
    vs_free(file);

    /* 40 days on: the first day is past the 30-day cut-off and goes; the
     * second, the newest past it, is moved up to the cut-off */
    c->now = T0 + 40 * DAY + 5;
    credit(c, 40);
    assert_int_equal(c->projects[0].n_stats, 2);
    assert_true(c->projects[0].stats[0].day == T0 + 10 * DAY);
    assert_true(c->projects[0].stats[0].user_total_credit == 30);
    assert_true(c->projects[0].stats[1].day == T0 + 40 * DAY);

    /* read back at start, and in get_statistics */
    struct vs_client *d = VS_NEW(struct vs_client);
    vs_client_init(d, f->dir);
    d->logf = fopen("/dev/null", "w");
    d->now = c->now;
    (void)vs_client_add_project(d, URL, "k");
    vs_client_stats_read(d);
    assert_int_equal(d->projects[0].n_stats, 2);
    assert_true(d->projects[0].stats[1].user_total_credit == 40);
    assert_true(d->projects[0].stats[1].host_total_credit == 20);
    struct vs_buf out;
    vs_buf_init(&out, 1 << 20);
    struct vs_xml_writer w;
    vs_xml_writer_init(&w, &out);
    vs_client_stats_xml(d, &w);
    assert_int_equal(vs_xml_writer_error(&w), 0);
    assert_non_null(strstr(out.data, "<statistics>\n<project_statistics>\n"));
    char day[64];
    snprintf(day, sizeof(day), "<day>%.6f</day>", T0 + 10 * DAY); /* the cut-off */
    assert_non_null(strstr(out.data, day));
    vs_buf_cleanup(&out);
    vs_client_cleanup(d);
    vs_free(d);
}

static void test_xfer_history(void **state)
{
    struct client_fx *f = *state;
    struct vs_client *c = f->c;
    vs_client_xfer_add(c, 100, 2000);
    vs_client_xfer_add(c, 5, 0);
    c->now += DAY;
    vs_client_xfer_add(c, 0, 7);
    assert_int_equal(c->n_xfers, 2);
    vs_client_xfer_history_write(c);
    assert_false(c->xfers_dirty);
    char *file = slurp(f->dir, "daily_xfer_history.xml");
    assert_non_null(file);
    char want[200];
    snprintf(want, sizeof(want),
             "<dx>\n<when>%d</when>\n<up>105.000000</up>\n<down>2000.000000</down>\n</dx>",
             (int)(T0 / DAY));
    assert_non_null(strstr(file, want));
    vs_free(file);
    /* read back: a record older than a year is dropped */
    c->now += 400 * DAY;
    vs_client_stats_read(c);
    assert_int_equal(c->n_xfers, 0);
    c->now -= 400 * DAY;
    vs_client_stats_read(c);
    assert_int_equal(c->n_xfers, 2);
}

/* Sends one request body through the GUI RPC dispatcher; returns the reply (freed by the caller).
 */
static char *gui(struct vs_client *c, const char *body)
{
    char req[8192];
    snprintf(req, sizeof(req), "<boinc_gui_rpc_request>\n%s\n</boinc_gui_rpc_request>\n", body);
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_xml_doc doc;
    struct vs_xml_error xe;
    assert_int_equal(vs_xml_parse(req, strlen(req), NULL, 0, &a, &doc, &xe), 0);
    struct vs_buf out;
    vs_buf_init(&out, 1 << 20);
    assert_int_equal(vs_client_gui_dispatch(c, &doc, doc.root->child, &a, &out), 0);
    vs_arena_cleanup(&a);
    char *s = vs_xstrdup(out.data ? out.data : "");
    vs_buf_cleanup(&out);
    return s;
}

static bool said(const struct vs_client *c, const char *text)
{
    for (size_t i = 0; i < c->n_msgs; i++)
        if (strstr(c->msgs[i].body, text))
            return true;
    return false;
}

static void test_prefs_ops(void **state)
{
    struct client_fx *f = *state;
    struct vs_client *c = f->c;
    char *r = gui(c, "<get_global_prefs_override/>");
    assert_string_equal(r, "<error>no prefs override file</error>\n");
    vs_free(r);
    r = gui(c, "<set_global_prefs_override>\n<global_preferences>\n"
               "<work_buf_min_days>2.5</work_buf_min_days>\n"
               "<run_if_user_active>0</run_if_user_active>\n"
               "<start_hour>0</start_hour>\n"
               "</global_preferences>\n</set_global_prefs_override>");
    assert_string_equal(r, "<success/>\n");
    vs_free(r);
    /* written, not obeyed yet (BOINC: read_global_prefs_override obeys it) */
    assert_true(c->prefs.work_buf_min_days != 2.5);
    assert_true(said(c, "not obeyed by volsched (ignored): run_if_user_active=0"));
    assert_false(said(c, "start_hour")); /* at BOINC's default: not worth a word */
    r = gui(c, "<read_global_prefs_override/>");
    assert_string_equal(r, "<success/>\n");
    vs_free(r);
    assert_true(c->prefs.work_buf_min_days == 2.5);
    r = gui(c, "<get_global_prefs_working/>");
    assert_non_null(strstr(r, "<work_buf_min_days>2.500000</work_buf_min_days>"));
    assert_non_null(strstr(r, "<override_file_present/>"));
    assert_non_null(strstr(r, "<run_if_user_active>1</run_if_user_active>"));
    vs_free(r);
    r = gui(c, "<get_global_prefs_override/>");
    assert_non_null(strstr(r, "<global_preferences>\n<work_buf_min_days>2.5"));
    vs_free(r);
    /* not XML: refused, the file kept */
    r = gui(c, "<set_global_prefs_override>&lt;oops</set_global_prefs_override>");
    assert_string_equal(r, "<status>-112</status>\n");
    vs_free(r);
    r = gui(c, "<get_global_prefs_override/>");
    assert_non_null(strstr(r, "2.5"));
    vs_free(r);
    /* empty: the override goes */
    r = gui(c, "<set_global_prefs_override>\n</set_global_prefs_override>");
    assert_string_equal(r, "<success/>\n");
    vs_free(r);
    char path[600];
    snprintf(path, sizeof(path), "%s/global_prefs_override.xml", f->dir);
    assert_int_not_equal(access(path, F_OK), 0);
}

static void test_cc_config_ops(void **state)
{
    struct client_fx *f = *state;
    struct vs_client *c = f->c;
    char *r = gui(c, "<get_cc_config/>");
    assert_string_equal(r, ""); /* BOINC-COMPAT: nothing without a file */
    vs_free(r);
    r = gui(c, "<set_cc_config><cc_config><options><ncpus>3</ncpus></options></cc_config>"
               "</set_cc_config>");
    assert_string_equal(r, "<success/>\n");
    vs_free(r);
    r = gui(c, "<read_cc_config/>");
    vs_free(r);
    assert_int_equal(c->prefs.ncpus, 3);
    r = gui(c, "<get_cc_config/>");
    assert_string_equal(r, "<cc_config><options><ncpus>3</ncpus></options></cc_config>\n");
    vs_free(r);
    r = gui(c, "<set_cc_config><global_preferences/></set_cc_config>");
    assert_string_equal(r, "<status>-112</status>\n");
    vs_free(r);
}

static void test_unknown_and_misc(void **state)
{
    struct client_fx *f = *state;
    struct vs_client *c = f->c;
    int before = c->msg_seqno;
    char *r = gui(c, "<frobnicate/>");
    assert_string_equal(r, "<error>unrecognized op: frobnicate</error>\n");
    vs_free(r);
    assert_int_equal(c->msg_seqno, before + 1);
    r = gui(c, "<frobnicate/>"); /* logged once */
    vs_free(r);
    assert_int_equal(c->msg_seqno, before + 1);
    r = gui(c, "<acct_mgr_info/>");
    assert_string_equal(r, "<acct_mgr_info>\n<acct_mgr_url></acct_mgr_url>\n"
                           "<acct_mgr_name></acct_mgr_name>\n</acct_mgr_info>\n");
    vs_free(r);
    r = gui(c, "<get_all_projects_list/>");
    assert_string_equal(r, "");
    vs_free(r);
    char path[600];
    snprintf(path, sizeof(path), "%s/all_projects_list.xml", f->dir);
    FILE *fp = fopen(path, "w");
    fputs("<?xml version=\"1.0\"?>\n<projects>\n<project><name>P</name></project>\n</projects>\n\n",
          fp);
    fclose(fp);
    r = gui(c, "<get_all_projects_list/>");
    assert_string_equal(r, "<projects>\n<project><name>P</name></project>\n</projects>\n");
    vs_free(r);
    r = gui(c, "<set_proxy_settings><proxy_info><use_http_proxy/>"
               "<http_server_name>proxy.example</http_server_name>"
               "<http_server_port>3128</http_server_port></proxy_info></set_proxy_settings>");
    assert_string_equal(r, "<success/>\n");
    vs_free(r);
    assert_true(c->proxy.use_http);
    assert_int_equal(c->proxy.http_port, 3128);
    memset(&c->proxy, 0, sizeof(c->proxy));
    vs_client_proxy_read(c); /* kept across restarts */
    assert_string_equal(c->proxy.http_server, "proxy.example");
    r = gui(c, "<get_proxy_settings/>");
    assert_non_null(strstr(r, "<use_http_proxy/>\n"));
    assert_non_null(strstr(r, "<http_server_port>3128</http_server_port>"));
    vs_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_daily_statistics, setup, clientfx_teardown),
        cmocka_unit_test_setup_teardown(test_xfer_history, setup, clientfx_teardown),
        cmocka_unit_test_setup_teardown(test_prefs_ops, setup, clientfx_teardown),
        cmocka_unit_test_setup_teardown(test_cc_config_ops, setup, clientfx_teardown),
        cmocka_unit_test_setup_teardown(test_unknown_and_misc, setup, clientfx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
