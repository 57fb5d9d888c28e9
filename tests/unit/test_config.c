/* config.xml and config_aux.xml through the one reader (volsched/config.h):
 * good files, bad ones with file, line and reason, warnings with file and
 * line, and both files read by one call. */
#include "vs_test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/config.h"
#include "volsched/log.h"

/* Warnings logged by the reader, captured: warn_begin() before a parse,
 * warnings() after it returns them one a line, without the log's time stamp
 * and level, and stops the capture. */
static FILE *wfile;
static struct vs_log wlog;
static char wtext[4096];

static void warn_begin(void)
{
    wfile = tmpfile();
    assert_non_null(wfile);
    vs_log_init(&wlog, VS_LOG_WARN, wfile, NULL);
}

static const char *warnings(void)
{
    assert_non_null(wfile);
    char raw[8192];
    rewind(wfile);
    size_t len = fread(raw, 1, sizeof raw - 1, wfile);
    raw[len] = '\0';
    fclose(wfile);
    wfile = NULL;
    size_t n = 0;
    wtext[0] = '\0';
    /* Each line is "STAMP WARN text". */
    const char *p = raw;
    while (*p) {
        const char *nl = strchr(p, '\n');
        const char *t = strstr(p, " WARN ");
        assert_non_null(t);
        t += 6;
        size_t l = nl ? (size_t)(nl - t) : strlen(t);
        assert_true(n + l + 2 < sizeof wtext);
        memcpy(wtext + n, t, l);
        n += l;
        wtext[n++] = '\n';
        wtext[n] = '\0';
        p = nl ? nl + 1 : p + strlen(p);
    }
    return wtext;
}

static int parse(struct vs_project_config *c, const char *text, struct vs_config_error *e)
{
    return vs_project_config_parse(c, text, strlen(text), "config.xml", wfile ? &wlog : NULL, e);
}

static int parse_aux(struct vs_project_config *c, const char *text, struct vs_config_error *e)
{
    return vs_project_config_parse_aux(c, text, strlen(text), "config_aux.xml",
                                       wfile ? &wlog : NULL, e);
}

static void test_defaults(void **state)
{
    (void)state;
    struct vs_project_config c;
    vs_project_config_init(&c);
    assert_int_equal(c.policy.max_wus_to_send, 10);
    assert_int_equal(c.policy.min_core_client_version, 70000);
    /* The protective defaults (docs/security.md). */
    assert_int_equal(c.policy.daily_result_quota, 100);
    assert_int_equal(c.policy.host_in_progress_per_cpu, 4);
    assert_int_equal(c.policy.max_new_hosts_per_day, 5);
    assert_int_equal(c.policy.max_ncpus, 64);
    assert_true(c.resend_lost_results);
    assert_int_equal(c.failed_auth_burst, 20);
    assert_int_equal(c.failed_auth_per_hour, 60);
    assert_string_equal(c.https_cert, "");
    assert_false(c.policy.one_result_per_user_per_wu);
    assert_false(c.policy.deadline_exempt_empty_queue);
    assert_int_equal(c.policy.limits.project.cpu.jobs, 0);
    assert_int_equal(c.uldl_dir_fanout, 1024);
    assert_string_equal(c.master_url, "");
}

static void test_good_config(void **state)
{
    (void)state;
    const char *text = "<?xml version=\"1.0\"?>\n"
                       "<boinc>\n"
                       "  <config>\n"
                       "    <master_url>http://127.0.0.1:8080/test/</master_url>\n"
                       "    <long_name>Test Project</long_name>\n"
                       "    <upload_dir>/p/upload</upload_dir>\n"
                       "    <download_dir> /p/download </download_dir>\n"
                       "    <one_result_per_user_per_wu/>\n"
                       "    <one_result_per_host_per_wu>0</one_result_per_host_per_wu>\n"
                       "    <daily_result_quota>8</daily_result_quota>\n"
                       "    <max_wus_to_send>3</max_wus_to_send>\n"
                       "    <homogeneous_redundancy>2</homogeneous_redundancy>\n"
                       "    <min_core_client_version>70100</min_core_client_version>\n"
                       "    <max_wus_in_progress>2</max_wus_in_progress>\n"
                       "    <max_wus_in_progress_gpu>4</max_wus_in_progress_gpu>\n"
                       "    <workload_sim/>\n"
                       "    <trusted_proxy>127.0.0.1</trusted_proxy>\n"
                       "    <trusted_proxy>10.0.0.0/8</trusted_proxy>\n"
                       "    <enable_assignment>1</enable_assignment>\n"
                       "  </config>\n"
                       "  <tasks><task><cmd>x</cmd></task></tasks>\n"
                       "  <daemons/>\n"
                       "</boinc>\n";
    struct vs_project_config c;
    struct vs_config_error e;
    vs_project_config_init(&c);
    warn_begin();
    assert_int_equal(parse(&c, text, &e), 0);
    assert_string_equal(warnings(), "");
    assert_string_equal(c.master_url, "http://127.0.0.1:8080/test/");
    assert_string_equal(c.long_name, "Test Project");
    assert_string_equal(c.download_dir, "/p/download");
    assert_true(c.policy.one_result_per_user_per_wu);
    assert_false(c.policy.one_result_per_host_per_wu);
    assert_int_equal(c.policy.daily_result_quota, 8);
    assert_int_equal(c.policy.max_wus_to_send, 3);
    assert_int_equal(c.policy.homogeneous_redundancy, 2);
    assert_int_equal(c.policy.min_core_client_version, 70100);
    assert_true(c.policy.workload_sim);
    /* Seed 003: the legacy tags are per-processor project limits. */
    assert_int_equal(c.policy.limits.project.cpu.jobs, 2);
    assert_true(c.policy.limits.project.cpu.per_proc);
    assert_int_equal(c.policy.limits.project.gpu.jobs, 4);
    assert_true(c.policy.limits.project.gpu.per_proc);
    assert_int_equal(c.trusted_proxy.n, 2);
    assert_string_equal(c.trusted_proxy.v[1], "10.0.0.0/8");
    assert_true(c.enable_assignment);
}

static void test_volsched_init_config(void **state)
{
    (void)state;
    /* What `volsched init` writes: every tag is known, no warnings. */
    const char *text = "<?xml version=\"1.0\"?>\n"
                       "<boinc>\n"
                       "    <config>\n"
                       "        <long_name>p</long_name>\n"
                       "        <master_url>http://127.0.0.1:8080/p/</master_url>\n"
                       "        <download_url>http://127.0.0.1:8080/p/download</download_url>\n"
                       "        <upload_url>http://127.0.0.1:8080/p/cgi-bin/file_upload_handler"
                       "</upload_url>\n"
                       "        <cgi_url>http://127.0.0.1:8080/p/cgi-bin/</cgi_url>\n"
                       "        <download_dir>/srv/p/download</download_dir>\n"
                       "        <upload_dir>/srv/p/upload</upload_dir>\n"
                       "        <key_dir>/srv/p/keys</key_dir>\n"
                       "        <store_url>sqlite:/srv/p/volsched.db</store_url>\n"
                       "        <uldl_dir_fanout>1024</uldl_dir_fanout>\n"
                       "        <enable_assignment>1</enable_assignment>\n"
                       "        <enable_assignment_multi>1</enable_assignment_multi>\n"
                       "        <max_wus_in_progress>0</max_wus_in_progress>\n"
                       "        <max_wus_in_progress_gpu>0</max_wus_in_progress_gpu>\n"
                       "        <daily_result_quota>0</daily_result_quota>\n"
                       "        <max_wus_to_send>10</max_wus_to_send>\n"
                       "        <one_result_per_user_per_wu>1</one_result_per_user_per_wu>\n"
                       "        <min_sendwork_interval>0</min_sendwork_interval>\n"
                       "        <report_grace_period>3600</report_grace_period>\n"
                       "        <delete_delay_hours>0</delete_delay_hours>\n"
                       "        <dont_generate_upload_certificates>0"
                       "</dont_generate_upload_certificates>\n"
                       "        <locality_scheduling>0</locality_scheduling>\n"
                       "    </config>\n"
                       "    <daemons>\n"
                       "    </daemons>\n"
                       "</boinc>\n";
    struct vs_project_config c;
    struct vs_config_error e;
    vs_project_config_init(&c);
    warn_begin();
    assert_int_equal(parse(&c, text, &e), 0);
    assert_string_equal(warnings(), "");
    assert_string_equal(c.cgi_url, "http://127.0.0.1:8080/p/cgi-bin/");
    assert_string_equal(c.store_url, "sqlite:/srv/p/volsched.db");
    assert_int_equal(c.report_grace_period, 3600);
    assert_int_equal(c.policy.limits.project.cpu.jobs, 0); /* 0: no limit */
}

static void test_old_version_encoding(void **state)
{
    (void)state;
    struct vs_project_config c;
    vs_project_config_init(&c);
    assert_int_equal(parse(&c,
                           "<boinc><config><min_core_client_version>602</min_core_client_version>"
                           "</config></boinc>",
                           NULL),
                     0);
    assert_int_equal(c.policy.min_core_client_version, 60200);
}

static void test_unknown_tags_warn(void **state)
{
    (void)state;
    /* db_name and shmem_key are BOINC's (quiet), nowork_skip BOINC's but
     * not implemented (one line for all such), the others nobody's. */
    const char *text = "<boinc>\n"
                       "<config>\n"
                       "<dbname>proj</dbname>\n"
                       "<daily_result_quota>5</daily_result_quota>\n"
                       "<shmemkey>0x1111</shmemkey>\n"
                       "<db_name>proj</db_name><shmem_key>0x1111</shmem_key>\n"
                       "<nowork_skip/><msg_to_host/>\n"
                       "</config>\n"
                       "<extra/>\n"
                       "</boinc>\n";
    struct vs_project_config c;
    struct vs_config_error e;
    vs_project_config_init(&c);
    warn_begin();
    assert_int_equal(parse(&c, text, &e), 0);
    assert_int_equal(c.policy.daily_result_quota, 5);
    assert_string_equal(warnings(), "config.xml:3: unknown tag <dbname> ignored\n"
                                    "config.xml:5: unknown tag <shmemkey> ignored\n"
                                    "config.xml:9: unknown tag <extra> ignored\n"
                                    "config.xml: BOINC option not supported, ignored: "
                                    "<nowork_skip> (line 7), <msg_to_host> (line 7)\n");
}

/* BOINC's locality options beyond seed 001 are not implemented: each one is
 * named in the "not supported" line (none is read and silently ignored), and
 * the locality tags volsched implements are read beside them. */
static void test_locality_unsupported(void **state)
{
    (void)state;
    const char *text =
        "<boinc>\n<config>\n"
        "<locality_scheduling/>\n"
        "<locality_scheduler_fraction>0.25</locality_scheduler_fraction>\n"
        "<locality_scheduling_send_timeout>600</locality_scheduling_send_timeout>\n"
        "<locality_scheduling_workunit_file>^h1_</locality_scheduling_workunit_file>\n"
        "<locality_scheduling_sticky_file>^l1_</locality_scheduling_sticky_file>\n"
        "<file_deletion_strategy>1</file_deletion_strategy>\n"
        "<locality_scheduling_wait_period>7</locality_scheduling_wait_period>\n"
        "</config>\n</boinc>\n";
    struct vs_project_config c;
    struct vs_config_error e;
    vs_project_config_init(&c);
    warn_begin();
    assert_int_equal(parse(&c, text, &e), 0);
    assert_string_equal(warnings(), "config.xml: BOINC option not supported, ignored: "
                                    "<locality_scheduler_fraction> (line 4), "
                                    "<locality_scheduling_send_timeout> (line 5), "
                                    "<locality_scheduling_workunit_file> (line 6), "
                                    "<locality_scheduling_sticky_file> (line 7), "
                                    "<file_deletion_strategy> (line 8)\n");
    assert_true(c.locality_scheduling);
    assert_int_equal(c.locality_scheduling_wait_period, 7);
}

/* A standard BOINC config.xml (make_project's tags plus the ones operators
 * add): no unknown tag, one line naming the BOINC options volsched does not
 * implement, and the implemented ones read. */
static void test_boinc_config(void **state)
{
    (void)state;
    size_t len = 0;
    char *text = vs_test_slurp(VS_SOURCE_DIR "/tests/data/boinc/config_make_project.xml", &len);
    struct vs_project_config *c = VS_NEW(struct vs_project_config);
    vs_project_config_init(c);
    struct vs_config_error e;
    warn_begin();
    assert_int_equal(vs_project_config_parse(c, text, len, "config.xml", &wlog, &e), 0);
    const char *w = warnings();
    if (strstr(w, "unknown tag"))
        fail_msg("unknown tags in a standard BOINC config.xml: %s", w);
    assert_string_equal(w, "config.xml: BOINC option not supported, ignored: "
                           "<ignore_upload_certificates> (line 22), <nowork_skip> (line 50), "
                           "<cache_md5_info> (line 51), <shmem_work_items> (line 52), "
                           "<feeder_query_size> (line 53)\n");
    assert_int_equal(c->min_sendwork_interval, 6);
    assert_int_equal(c->next_rpc_delay, 86400);
    assert_int_equal(c->maintenance_delay, 1800);
    assert_int_equal(c->report_max, 64);
    assert_true(c->resend_lost_results);
    assert_true(c->send_result_abort);
    assert_false(c->dont_send_jobs);
    vs_free(c);
    vs_free(text);
}

struct bad {
    const char *text;
    int code;
    unsigned line;
    const char *msg; /* prefix of the message */
};

static void check_bad(const struct bad *b, bool aux)
{
    struct vs_project_config c;
    struct vs_config_error e;
    vs_project_config_init(&c);
    int rc = aux ? parse_aux(&c, b->text, &e) : parse(&c, b->text, &e);
    if (rc != b->code || e.line != b->line || strncmp(e.msg, b->msg, strlen(b->msg)) != 0)
        fail_msg("for %s\n got rc=%d line=%u msg='%s'\nwant rc=%d line=%u msg='%s...'", b->text, rc,
                 e.line, e.msg, b->code, b->line, b->msg);
    assert_string_equal(e.file, aux ? "config_aux.xml" : "config.xml");
}

static void test_bad_config(void **state)
{
    (void)state;
    static const struct bad bad[] = {
        {"<boinc>\n<config>\n<daily_result_quota>5</daily_result_quota>\n</confg>\n</boinc>",
         VS_EPARSE, 4, "malformed XML"},
        {"<boinc><config>\n", VS_EPARSE, 2, "malformed XML"},
        {"", VS_EPARSE, 1, "malformed XML"},
        {"<boinc>\n<config>\n\n<max_wus_in_progress>-1</max_wus_in_progress>\n</config></boinc>",
         VS_ECONFIG, 4, "<max_wus_in_progress> must not be negative (-1)"},
        {"<boinc><config>\n<max_wus_in_progress_gpu>-2</max_wus_in_progress_gpu></config></boinc>",
         VS_ECONFIG, 2, "<max_wus_in_progress_gpu> must not be negative (-2)"},
        {"<boinc><config>\n<daily_result_quota>-3</daily_result_quota></config></boinc>",
         VS_ECONFIG, 2, "<daily_result_quota> must not be negative (-3)"},
        {"<boinc><config>\n<daily_result_quota>lots</daily_result_quota></config></boinc>",
         VS_ECONFIG, 2, "<daily_result_quota> must be an integer, not 'lots'"},
        {"<boinc><config>\n<daily_result_quota>2.5</daily_result_quota></config></boinc>",
         VS_ECONFIG, 2, "<daily_result_quota> must be an integer, not '2.5'"},
        {"<boinc><config>\n<daily_result_quota></daily_result_quota></config></boinc>", VS_ECONFIG,
         2, "<daily_result_quota> must be an integer, not ''"},
        {"<boinc><config>\n\n<max_wus_to_send>0</max_wus_to_send></config></boinc>", VS_ECONFIG, 3,
         "<max_wus_to_send> must be at least 1 (0)"},
        {"<boinc><config>\n<homogeneous_redundancy>3</homogeneous_redundancy></config></boinc>",
         VS_ECONFIG, 2, "<homogeneous_redundancy> must be at most 2 (3)"},
        {"<boinc><config>\n<one_result_per_user_per_wu>maybe</one_result_per_user_per_wu>"
         "</config></boinc>",
         VS_ECONFIG, 2, "<one_result_per_user_per_wu> must be 0 or 1"},
        {"<boinc><config>\n<max_wus_to_send><n>3</n></max_wus_to_send></config></boinc>",
         VS_ECONFIG, 2, "<max_wus_to_send> must hold a value, not elements"},
        {"<project>\n</project>", VS_ECONFIG, 1, "root element is <project>, expected <boinc>"},
        {"<boinc>\n<tasks/>\n</boinc>", VS_ECONFIG, 1, "<boinc> has no <config> section"},
        {"<boinc><config/>\n<config/></boinc>", VS_ECONFIG, 2, "second <config> section"},
        {"<!DOCTYPE boinc [<!ENTITY x \"y\">]>\n<boinc><config/></boinc>", VS_EPARSE, 1,
         "malformed XML"},
        /* BOINC's deletion methods volsched does not implement */
        {"<boinc><config>\n<enable_delete_account>2</enable_delete_account></config></boinc>",
         VS_ECONFIG, 2, "<enable_delete_account>2</enable_delete_account> is BOINC's \"wipe\""},
        {"<boinc><config>\n<enable_delete_account>3</enable_delete_account></config></boinc>",
         VS_ECONFIG, 2, "<enable_delete_account>3</enable_delete_account> is BOINC's project"},
        {"<boinc><config>\n<enable_delete_account>4</enable_delete_account></config></boinc>",
         VS_ECONFIG, 2, "<enable_delete_account> must be at most 3 (4)"},
        {"<boinc><config>\n<enable_delete_account/></config></boinc>", VS_ECONFIG, 2,
         "<enable_delete_account> must be an integer"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        check_bad(&bad[i], false);
    /* 0 (BOINC's default: no deletion) and 1 (obfuscate) are taken. */
    struct vs_project_config c;
    struct vs_config_error e;
    vs_project_config_init(&c);
    assert_int_equal(c.enable_delete_account, 0);
    assert_int_equal(
        parse(&c,
              "<boinc><config><enable_delete_account>1</enable_delete_account></config></boinc>",
              &e),
        0);
    assert_int_equal(c.enable_delete_account, 1);
}

static void test_good_aux(void **state)
{
    (void)state;
    const char *aux = "<?xml version=\"1.0\"?>\n"
                      "<config>\n"
                      "<max_jobs_in_progress>\n"
                      "    <project>\n"
                      "        <total_limit><jobs>40</jobs></total_limit>\n"
                      "        <gpu_limit><jobs>3</jobs><per_proc/></gpu_limit>\n"
                      "    </project>\n"
                      "    <app>\n"
                      "        <app_name>uppercase</app_name>\n"
                      "        <cpu_limit><jobs>2</jobs><per_proc/></cpu_limit>\n"
                      "    </app>\n"
                      "    <app>\n"
                      "        <app_name>lowercase</app_name>\n"
                      "        <total_limit><jobs>1</jobs></total_limit>\n"
                      "        <gpu_limit><jobs>0</jobs><per_proc>0</per_proc></gpu_limit>\n"
                      "    </app>\n"
                      "</max_jobs_in_progress>\n"
                      "</config>\n";
    struct vs_project_config c;
    struct vs_config_error e;
    vs_project_config_init(&c);
    /* config.xml's legacy CPU limit survives an aux <project> without
     * <cpu_limit>; its GPU limit is replaced. */
    assert_int_equal(parse(&c,
                           "<boinc><config><max_wus_in_progress>5</max_wus_in_progress>"
                           "<max_wus_in_progress_gpu>7</max_wus_in_progress_gpu>"
                           "</config></boinc>",
                           &e),
                     0);
    warn_begin();
    assert_int_equal(parse_aux(&c, aux, &e), 0);
    /* Both files set the GPU limit: the operator is told which one wins. */
    assert_string_equal(warnings(),
                        "config_aux.xml:6: <gpu_limit> 3 per processor (in force) replaces "
                        "config.xml's <max_wus_in_progress_gpu> 7 per processor: config_aux.xml "
                        "wins; remove one of them\n");
    const struct vs_sp_job_limits *l = &c.policy.limits;
    assert_int_equal(l->project.total.jobs, 40);
    assert_false(l->project.total.per_proc);
    assert_int_equal(l->project.cpu.jobs, 5);
    assert_true(l->project.cpu.per_proc);
    assert_int_equal(l->project.gpu.jobs, 3);
    assert_true(l->project.gpu.per_proc);
    assert_int_equal(l->n_apps, 2);
    assert_int_equal(vs_sp_limits_app_index(l, "lowercase"), 1);
    assert_int_equal(l->apps[0].cpu.jobs, 2);
    assert_true(l->apps[0].cpu.per_proc);
    assert_int_equal(l->apps[0].total.jobs, 0);
    assert_int_equal(l->apps[1].total.jobs, 1);
    assert_false(l->apps[1].gpu.per_proc);
}

static void test_bad_aux(void **state)
{
    (void)state;
    static const struct bad bad[] = {
        {"<config>\n<max_jobs_in_progress>\n<app>\n<cpu_limit><jobs>1</jobs></cpu_limit>\n"
         "</app>\n</max_jobs_in_progress>\n</config>",
         VS_ECONFIG, 3, "<app> needs <app_name>"},
        {"<config><max_jobs_in_progress>\n<app><app_name>a</app_name></app>\n"
         "<app><app_name>a</app_name></app>\n</max_jobs_in_progress></config>",
         VS_ECONFIG, 3, "second <app> section for 'a'"},
        {"<config><max_jobs_in_progress><project>\n<cpu_limit><per_proc/></cpu_limit>"
         "</project></max_jobs_in_progress></config>",
         VS_ECONFIG, 2, "<cpu_limit> needs <jobs>N</jobs>"},
        {"<config><max_jobs_in_progress><project><cpu_limit>\n<jobs>-4</jobs>"
         "</cpu_limit></project></max_jobs_in_progress></config>",
         VS_ECONFIG, 2, "<jobs> must not be negative (-4)"},
        {"<config><max_jobs_in_progress><project><gpu_limit>\n<jobs>four</jobs>"
         "</gpu_limit></project></max_jobs_in_progress></config>",
         VS_ECONFIG, 2, "<jobs> must be an integer, not 'four'"},
        {"<config><max_jobs_in_progress><project><gpu_limit><jobs>1</jobs>\n"
         "<per_proc>often</per_proc></gpu_limit></project></max_jobs_in_progress></config>",
         VS_ECONFIG, 2, "<per_proc> must be 0 or 1"},
        {"<config><max_jobs_in_progress><app>\n<app_name></app_name>"
         "</app></max_jobs_in_progress></config>",
         VS_ECONFIG, 2, "<app_name> is empty"},
        {"<config><max_jobs_in_progress>\n<project>", VS_EPARSE, 2, "malformed XML"},
        {"<boinc/>", VS_ECONFIG, 1, "<boinc> has no <config> section"},
        {"<limits/>", VS_ECONFIG, 1, "root element is <limits>, expected <config>"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        check_bad(&bad[i], true);
}

static void test_aux_unknown_warns(void **state)
{
    (void)state;
    struct vs_project_config c;
    struct vs_config_error e;
    vs_project_config_init(&c);
    warn_begin();
    assert_int_equal(parse_aux(&c,
                               "<config>\n<max_jobs_in_progress>\n<project>\n"
                               "<cpu_limit><jobs>1</jobs><scale/></cpu_limit>\n"
                               "</project>\n<host/>\n</max_jobs_in_progress>\n<other/>\n"
                               "</config>",
                               &e),
                     0);
    assert_string_equal(warnings(),
                        "config_aux.xml:4: unknown tag <scale> in <cpu_limit> ignored\n"
                        "config_aux.xml:6: unknown tag <host> in <max_jobs_in_progress> ignored\n"
                        "config_aux.xml:8: unknown tag <other> ignored\n");
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void remove_file(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    unlink(path);
}

static void test_load_from_dir(void **state)
{
    (void)state;
    char dir[] = "/tmp/vs_config_test_XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct vs_project_config c;
    struct vs_config_error e;
    char msg[600];

    /* No config.xml at all: not a project. */
    assert_int_equal(vs_project_config_load(dir, NULL, &c, &e), VS_ENOTFOUND);
    assert_int_equal(e.line, 0);
    vs_config_error_format(&e, msg, sizeof msg);
    assert_non_null(strstr(msg, "/config.xml: cannot read: "));

    /* config.xml alone is enough. */
    write_file(dir, "config.xml",
               "<boinc>\n<config>\n<max_wus_in_progress>3</max_wus_in_progress>\n</config>\n"
               "</boinc>\n");
    assert_int_equal(vs_project_config_load(dir, NULL, &c, &e), 0);
    assert_int_equal(c.policy.limits.project.cpu.jobs, 3);

    /* With config_aux.xml. */
    write_file(dir, "config_aux.xml",
               "<config>\n<max_jobs_in_progress>\n<app><app_name>x</app_name>"
               "<total_limit><jobs>9</jobs></total_limit></app>\n</max_jobs_in_progress>\n"
               "</config>\n");
    assert_int_equal(vs_project_config_load(dir, NULL, &c, &e), 0);
    assert_int_equal(c.policy.limits.n_apps, 1);
    assert_int_equal(c.policy.limits.apps[0].total.jobs, 9);

    /* A bad aux file stops the load and names itself. */
    write_file(dir, "config_aux.xml",
               "<config>\n<max_jobs_in_progress>\n<project><cpu_limit>\n<jobs>-1</jobs>"
               "</cpu_limit></project>\n</max_jobs_in_progress>\n</config>\n");
    assert_int_equal(vs_project_config_load(dir, NULL, &c, &e), VS_ECONFIG);
    vs_config_error_format(&e, msg, sizeof msg);
    char want[600];
    snprintf(want, sizeof want, "%s/config_aux.xml:4: <jobs> must not be negative (-1)", dir);
    assert_string_equal(msg, want);
    /* *out keeps what the last good load wrote. */
    assert_int_equal(c.policy.limits.apps[0].total.jobs, 9);

    remove_file(dir, "config.xml");
    remove_file(dir, "config_aux.xml");
    rmdir(dir);
}

/* ONE call reads both files: values from each, warnings from each with its
 * own file name and line, in file order (config.xml first). */
static void test_load_both_files_one_call(void **state)
{
    (void)state;
    char dir[] = "/tmp/vs_config_test_XXXXXX";
    assert_non_null(mkdtemp(dir));
    write_file(dir, "config.xml",
               "<boinc>\n<config>\n<db_nam>x</db_nam>\n"
               "<max_wus_in_progress>3</max_wus_in_progress>\n"
               "<download_dir>dl</download_dir>\n"
               "<validator><method>always_valid</method></validator>\n"
               "<locality_scheduling_sticky_file>^big_</locality_scheduling_sticky_file>\n"
               "</config>\n<daemons/>\n</boinc>\n");
    write_file(dir, "config_aux.xml",
               "<config>\n<max_jobs_in_progress>\n<project>\n"
               "<gpu_limit><jobs>2</jobs></gpu_limit>\n</project>\n</max_jobs_in_progress>\n"
               "<spare/>\n</config>\n");
    struct vs_project_config *c = VS_NEW(struct vs_project_config);
    struct vs_config_error e;
    warn_begin();
    assert_int_equal(vs_project_config_load(dir, &wlog, c, &e), 0);
    char want[1200];
    snprintf(want, sizeof want,
             "%s/config.xml:3: unknown tag <db_nam> ignored\n"
             "%s/config.xml: BOINC option not supported, ignored: "
             "<locality_scheduling_sticky_file> (line 7)\n"
             "%s/config_aux.xml:7: unknown tag <spare> ignored\n",
             dir, dir, dir);
    assert_string_equal(warnings(), want);
    assert_int_equal(c->policy.limits.project.cpu.jobs, 3); /* config.xml */
    assert_true(c->policy.limits.project.cpu.per_proc);
    assert_int_equal(c->policy.limits.project.gpu.jobs, 2); /* config_aux.xml */
    assert_false(c->policy.limits.project.gpu.per_proc);
    snprintf(want, sizeof want, "%s/dl", dir);
    assert_string_equal(c->download_dir, want); /* relative to the project */
    snprintf(want, sizeof want, "%s/upload", dir);
    assert_string_equal(c->upload_dir, want); /* absent: the layout's default */
    assert_int_equal(c->nvalidators, 1);
    assert_int_equal(vs_project_validator(c, "any")->method, VS_VALIDATE_ALWAYS);
    /* Absent tags keep BOINC's defaults (not a new project's choices). */
    assert_false(c->policy.one_result_per_user_per_wu);
    assert_int_equal(c->report_grace_period, 3600);
    assert_true(c->enable_assignment);
    assert_int_equal(c->uldl_dir_fanout, VS_DEFAULT_FANOUT);
    assert_int_equal(c->maintenance_delay, 3600);
    vs_free(c);
    remove_file(dir, "config.xml");
    remove_file(dir, "config_aux.xml");
    rmdir(dir);
}

/* What vs_project_config_write writes (init) reads back to the very same
 * struct, without a warning. */
static void test_write_reads_back(void **state)
{
    (void)state;
    char dir[] = "/tmp/vs_config_test_XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct vs_project_config *a = VS_NEW(struct vs_project_config);
    struct vs_project_config *b = VS_NEW(struct vs_project_config);
    assert_int_equal(vs_project_config_defaults(a, dir, "R & D <1>", "http://127.0.0.1:9/r"), 0);
    assert_string_equal(a->master_url, "http://127.0.0.1:9/r/");
    assert_true(a->policy.one_result_per_user_per_wu); /* a new project's choice */
    a->policy.daily_result_quota = 4;
    a->policy.limits.project.gpu.jobs = 2;
    a->policy.limits.project.gpu.per_proc = true;
    a->hr_class_static = true;
    a->validator_retry_secs = 99;
    a->nvalidators = 1;
    a->validators[0].method = VS_VALIDATE_COMMAND;
    assert_int_equal(vs_strlcpy(a->validators[0].command, "/bin/v", VS_CMD_MAX), 0);
    a->nassimilators = 1;
    assert_int_equal(vs_strlcpy(a->assimilators[0].app, "x", VS_NAME_MAX), 0);
    assert_int_equal(vs_project_config_write(a), 0);
    assert_int_equal(vs_project_config_write_aux(a), 0);
    struct vs_config_error e;
    warn_begin();
    assert_int_equal(vs_project_config_load(dir, &wlog, b, &e), 0);
    assert_string_equal(warnings(), "");
    /* The config_aux.xml init writes sets no limit (its example is a
     * comment), so config.xml's max_wus_in_progress_gpu is in force (issue
     * 14: it used to be replaced by the aux file's zero, silently). */
    assert_int_equal(b->policy.limits.project.gpu.jobs, 2);
    assert_true(b->policy.limits.project.gpu.per_proc);
    assert_int_equal(b->policy.limits.project.cpu.jobs, 0);
    b->policy.limits.project.cpu.per_proc = a->policy.limits.project.cpu.per_proc;
    assert_string_equal(b->long_name, "R & D <1>");
    assert_int_equal(b->policy.daily_result_quota, 4);
    assert_true(b->policy.one_result_per_user_per_wu);
    assert_string_equal(b->validators[0].command, "/bin/v");
    assert_memory_equal(a, b, sizeof *a);
    vs_free(a);
    vs_free(b);
    remove_file(dir, "config.xml");
    remove_file(dir, "config_aux.xml");
    rmdir(dir);
}

/* The rules that used to live in the project loader: now in the one table,
 * with the line of the tag. */
static void test_bad_layout_and_blocks(void **state)
{
    (void)state;
    static const struct bad bad[] = {
        {"<boinc><config>\n<uldl_dir_fanout>70000</uldl_dir_fanout></config></boinc>", VS_ECONFIG,
         2, "<uldl_dir_fanout> must be at most 65536 (70000)"},
        {"<boinc><config>\n<validator><method>magic</method></validator></config></boinc>",
         VS_ECONFIG, 2, "<method> must be bitwise, always_valid or command, not magic"},
        {"<boinc><config>\n<validator><method>command</method></validator></config></boinc>",
         VS_ECONFIG, 2, "<validator> method command needs <command> or <compare_command>"},
        {"<boinc><config><assimilator>\n<flavour>x</flavour></assimilator></config></boinc>",
         VS_ECONFIG, 2, "unknown tag in the block: <flavour>"},
        {"<boinc><config><validator>\n<app><x/></app></validator></config></boinc>", VS_ECONFIG, 2,
         "<app> must hold a value, not elements"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        check_bad(&bad[i], false);

    /* A value longer than its field. */
    struct vs_project_config *c = VS_NEW(struct vs_project_config);
    struct vs_config_error e;
    struct vs_buf b;
    vs_buf_init(&b, 1 << 20);
    assert_int_equal(vs_buf_puts(&b, "<boinc><config>\n<long_name>"), 0);
    for (int i = 0; i < VS_NAME_MAX; i++)
        assert_int_equal(vs_buf_puts(&b, "n"), 0);
    assert_int_equal(vs_buf_puts(&b, "</long_name></config></boinc>"), 0);
    vs_project_config_init(c);
    assert_int_equal(parse(c, vs_buf_str(&b), &e), VS_ECONFIG);
    assert_int_equal(e.line, 2);
    assert_string_equal(e.msg, "<long_name> longer than 255 bytes");
    vs_buf_cleanup(&b);
    vs_free(c);
}

static void test_too_large(void **state)
{
    (void)state;
    struct vs_project_config c;
    struct vs_config_error e;
    vs_project_config_init(&c);
    size_t n = VS_CONFIG_MAX_FILE + 1;
    char *big = vs_xmalloc(n);
    memset(big, ' ', n);
    assert_int_equal(vs_project_config_parse(&c, big, n, "config.xml", NULL, &e), VS_ELIMIT);
    assert_int_equal(e.line, 0);
    vs_free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_good_config),
        cmocka_unit_test(test_volsched_init_config),
        cmocka_unit_test(test_old_version_encoding),
        cmocka_unit_test(test_unknown_tags_warn),
        cmocka_unit_test(test_locality_unsupported),
        cmocka_unit_test(test_boinc_config),
        cmocka_unit_test(test_bad_config),
        cmocka_unit_test(test_bad_layout_and_blocks),
        cmocka_unit_test(test_load_both_files_one_call),
        cmocka_unit_test(test_write_reads_back),
        cmocka_unit_test(test_good_aux),
        cmocka_unit_test(test_bad_aux),
        cmocka_unit_test(test_aux_unknown_warns),
        cmocka_unit_test(test_load_from_dir),
        cmocka_unit_test(test_too_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
