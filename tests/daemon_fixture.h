/*
 * Helpers for tests of the back-end daemons on a real store: a project
 * (project_fixture.h) with hosts, workunits with one staged input file,
 * results sent through the scheduler's claim and reported through the
 * store's report operation, with their output files written into the
 * upload hierarchy as the upload handler would. Include after vs_test.h.
 */
#ifndef VOLSCHED_TESTS_DAEMON_FIXTURE_H
#define VOLSCHED_TESTS_DAEMON_FIXTURE_H

#include "project_fixture.h"
#include "volsched/daemon_util.h"
#include "volsched/daemons.h"
#include "volsched/layout.h"

#define NOW 1700000000

static inline int df_setup(void **state)
{
    struct project_fixture *f = pf_create();
    f->cfg.policy.daily_result_quota = 10;
    *state = f;
    return 0;
}

static inline int df_teardown(void **state)
{
    pf_destroy(*state);
    return 0;
}

static inline int64_t df_avid(struct project_fixture *f)
{
    return pf_sql(f, "SELECT min(id) FROM app_version");
}

/* A host of the fixture's user. */
static inline int64_t df_host(struct project_fixture *f)
{
    struct vs_host h;
    memset(&h, 0, sizeof(h));
    h.userid = f->userid;
    h.create_time = NOW;
    assert_int_equal(vs_store_host_add(f->s, &h), 0);
    return h.id;
}

/* Writes text to the absolute path. */
static inline void df_write_abs(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

/* Path of input file name in the download hierarchy (created). */
static inline void df_input_path(struct project_fixture *f, const char *name, char *out, size_t n)
{
    assert_int_equal(vs_project_download_path(&f->cfg, name, true, out, n), 0);
}

/*
 * A normal workunit "name" with the input file "input" (written to the
 * download hierarchy with a .md5 sibling; <no_delete/> when keep_input),
 * the default output template, and the given replication.
 */
static inline int64_t df_wu_input(struct project_fixture *f, const char *name, const char *input,
                                  int flags, int quorum, int target, int max_error, int max_total,
                                  int max_success, bool keep_input)
{
    struct vs_workunit wu;
    vs_workunit_defaults(&wu);
    wu.appid = f->appid;
    assert_int_equal(vs_strlcpy(wu.name, name, sizeof(wu.name)), 0);
    char doc[1024];
    snprintf(doc, sizeof(doc),
             "<file_info>\n<name>%s</name>\n<url>http://x/%s</url>\n%s</file_info>\n"
             "<workunit>\n<file_ref>\n<file_name>%s</file_name>\n<open_name>in</open_name>\n"
             "</file_ref>\n</workunit>\n",
             input, input, keep_input ? "<no_delete/>\n" : "", input);
    wu.xml_doc = vs_xstrdup(doc);
    wu.transitioner_flags = flags;
    wu.transition_time = flags == VS_TRANSITION_NONE ? VS_TIME_NEVER : NOW;
    wu.min_quorum = quorum;
    wu.target_nresults = target;
    wu.max_error_results = max_error;
    wu.max_total_results = max_total;
    wu.max_success_results = max_success;
    wu.delay_bound = 1000;
    assert_int_equal(vs_strlcpy(wu.result_template_file, "templates/app_out", VS_NAME_MAX), 0);
    assert_int_equal(vs_store_workunit_add(f->s, &wu), 0);
    vs_workunit_cleanup(&wu);
    char in[VS_PATH_MAX + VS_NAME_MAX], p2[VS_PATH_MAX + VS_NAME_MAX + 8];
    df_input_path(f, input, in, sizeof(in));
    df_write_abs(in, "input\n");
    snprintf(p2, sizeof(p2), "%s.md5", in);
    df_write_abs(p2, "d41d8cd98f00b204e9800998ecf8427e 6\n");
    return wu.id;
}

/* The same with the input "<name>_in". */
static inline int64_t df_wu(struct project_fixture *f, const char *name, int flags, int quorum,
                            int target, int max_error, int max_total, int max_success,
                            bool keep_input)
{
    char in[VS_NAME_MAX];
    snprintf(in, sizeof(in), "%s_in", name);
    return df_wu_input(f, name, in, flags, quorum, target, max_error, max_total, max_success,
                       keep_input);
}

static inline void df_trans(struct project_fixture *f, int64_t now)
{
    assert_int_equal(vs_transitioner_pass(f->s, &f->cfg, now, 0, NULL, NULL), 0);
}

/* Sends result name to hostid at now (report deadline now + 1000). */
static inline void df_send(struct project_fixture *f, const char *name, int64_t hostid,
                           int64_t now)
{
    struct vs_result r;
    memset(&r, 0, sizeof(r));
    assert_int_equal(vs_store_result_by_name(f->s, name, &r), 0);
    struct vs_claim c = {.result_id = r.id,
                         .app_version_id = df_avid(f),
                         .app_version_num = 101,
                         .report_deadline = now + 1000};
    size_t n = 0;
    assert_int_equal(vs_store_results_claim(f->s, hostid, f->userid, f->teamid, now, &c, 1, &n), 0);
    assert_int_equal(n, 1);
    vs_result_cleanup(&r);
}

/* The upload path of output number i of result name. */
static inline void df_output_path(struct project_fixture *f, const char *name, size_t i,
                                  char *out, size_t n)
{
    struct vs_result r;
    memset(&r, 0, sizeof(r));
    assert_int_equal(vs_store_result_by_name(f->s, name, &r), 0);
    struct vs_arena a;
    vs_arena_init(&a, 4096);
    struct vs_daemon_file files[VS_DAEMON_MAX_FILES];
    size_t nf = 0;
    assert_int_equal(vs_daemon_files(r.xml_doc_in, &a, files, &nf), 0);
    assert_true(i < nf);
    assert_int_equal(vs_project_upload_path(&f->cfg, files[i].name, true, out, n), 0);
    vs_arena_cleanup(&a);
    vs_result_cleanup(&r);
}

/*
 * Host hostid reports result name at now: success with output text
 * (written into the upload hierarchy first, as the upload handler does),
 * or, when output is NULL, a client error (exit_status 1) without files.
 */
static inline void df_report(struct project_fixture *f, const char *name, int64_t hostid,
                             int64_t now, const char *output)
{
    if (output) {
        char path[VS_PATH_MAX + VS_NAME_MAX];
        df_output_path(f, name, 0, path, sizeof(path));
        df_write_abs(path, output);
    }
    struct vs_result_report rep;
    memset(&rep, 0, sizeof(rep));
    assert_int_equal(vs_strlcpy(rep.name, name, sizeof(rep.name)), 0);
    rep.client_state = output ? VS_RESULT_CLIENT_STATE_FILES_UPLOADED
                              : VS_RESULT_CLIENT_STATE_COMPUTE_ERROR;
    rep.exit_status = output ? 0 : 1;
    rep.cpu_time = 10;
    rep.elapsed_time = 12;
    bool dup = true;
    assert_int_equal(vs_store_result_report(f->s, hostid, now, &rep, &dup), 0);
    assert_false(dup);
}

/* Column col of result name / workunit name. */
static inline int64_t df_r(struct project_fixture *f, const char *name, const char *col)
{
    char sql[512];
    snprintf(sql, sizeof(sql), "SELECT %s FROM result WHERE name='%s'", col, name);
    return pf_sql(f, sql);
}
static inline int64_t df_w(struct project_fixture *f, const char *name, const char *col)
{
    char sql[512];
    snprintf(sql, sizeof(sql), "SELECT %s FROM workunit WHERE name='%s'", col, name);
    return pf_sql(f, sql);
}

static inline bool df_exists(const char *path)
{
    return access(path, F_OK) == 0;
}

/* Writes an executable shell script DIR/name with body; path in out. */
static inline void df_script(struct project_fixture *f, const char *name, const char *body,
                             char *out, size_t n)
{
    snprintf(out, n, "%s/%s", f->dir, name);
    FILE *fp = fopen(out, "w");
    assert_non_null(fp);
    fprintf(fp, "#!/bin/sh\n%s\n", body);
    fclose(fp);
    assert_int_equal(chmod(out, 0755), 0);
}

#endif
