/*
 * A throw-away project for unit tests: a temp directory laid out as
 * `volsched init` does (config.xml, templates/, download/, upload/, keys/,
 * the store), with one app "app" (default templates) and a user and team.
 * Include after vs_test.h.
 */
#ifndef VOLSCHED_TESTS_PROJECT_FIXTURE_H
#define VOLSCHED_TESTS_PROJECT_FIXTURE_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "volsched/templates.h"
#include "store_backend.h"
#include "volsched/config.h"
#include "volsched/store.h"
#include "volsched/store_project.h"
#include "volsched/alloc.h"
#include "volsched/sign.h"
#include "volsched/str.h"

struct project_fixture {
    char dir[64];
    struct vs_project_config cfg;
    struct vs_store *s;
    int64_t appid, platformid, userid, teamid;
};

static inline void pf_write(const char *dir, const char *rel, const char *text)
{
    char p[2600];
    snprintf(p, sizeof(p), "%s/%s", dir, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static inline int pf_rm(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static inline struct project_fixture *pf_create(void)
{
    struct project_fixture *f = VS_NEW(struct project_fixture);
    snprintf(f->dir, sizeof(f->dir), "/tmp/vs_proj_XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    assert_int_equal(
        vs_project_config_defaults(&f->cfg, f->dir, "Test", "http://127.0.0.1:8080/t/"), 0);
    /* VS_TEST_PG: the project's store is a fresh PostgreSQL database. */
    if (vs_test_pg())
        vs_test_store_url(f->cfg.store_url, sizeof(f->cfg.store_url), f->dir, "volsched.db");
    const char *sub[] = {"templates", "download", "upload"};
    for (int i = 0; i < 3; i++) {
        char p[2600];
        snprintf(p, sizeof(p), "%s/%s", f->dir, sub[i]);
        assert_int_equal(mkdir(p, 0755), 0);
    }
    assert_int_equal(vs_project_config_write(&f->cfg), 0);
    assert_int_equal(vs_sign_keygen_write(f->cfg.key_dir, 1024), 0);
    assert_int_equal(vs_project_store_open(&f->cfg, true, NULL, &f->s), 0);

    struct vs_platform p;
    memset(&p, 0, sizeof(p));
    assert_int_equal(vs_strlcpy(p.name, "x86_64-pc-linux-gnu", sizeof(p.name)), 0);
    assert_int_equal(vs_store_platform_add(f->s, &p), 0);
    f->platformid = p.id;
    struct vs_app a;
    memset(&a, 0, sizeof(a));
    assert_int_equal(vs_strlcpy(a.name, "app", sizeof(a.name)), 0);
    assert_int_equal(vs_store_app_add(f->s, &a), 0);
    f->appid = a.id;
    struct vs_app_version av;
    memset(&av, 0, sizeof(av));
    av.appid = a.id;
    av.platformid = p.id;
    av.version_num = 101;
    av.nfiles = 1;
    av.files = vs_xcalloc(1, sizeof(*av.files));
    assert_int_equal(vs_strlcpy(av.files[0].name, "app_101", VS_NAME_MAX), 0);
    av.files[0].main_program = 1;
    assert_int_equal(vs_store_app_version_add(f->s, &av), 0);
    vs_app_version_cleanup(&av);
    pf_write(f->dir, "templates/app_in", vs_template_default_in);
    pf_write(f->dir, "templates/app_out", vs_template_default_out);

    struct vs_team t;
    memset(&t, 0, sizeof(t));
    assert_int_equal(vs_strlcpy(t.name, "team1", sizeof(t.name)), 0);
    assert_int_equal(vs_store_team_add(f->s, &t), 0);
    f->teamid = t.id;
    struct vs_user u;
    memset(&u, 0, sizeof(u));
    assert_int_equal(vs_strlcpy(u.name, "alice", sizeof(u.name)), 0);
    u.teamid = t.id;
    assert_int_equal(vs_store_user_add(f->s, &u), 0);
    f->userid = u.id;
    return f;
}

/*
 * n workunits "<prefix>_<i>" of the fixture's app, each with nres UNSENT
 * results "<prefix>_<i>_<k>" (quorum and target nres), rsc_fpops_est fpops,
 * delay_bound 7 days, in one transaction. Returns the first result's id.
 */
static inline int64_t pf_add_jobs(struct project_fixture *f, const char *prefix, int n, int nres,
                                  double fpops)
{
    int64_t first = 0;
    assert_int_equal(vs_store_begin(f->s), 0);
    for (int i = 0; i < n; i++) {
        struct vs_workunit wu;
        vs_workunit_defaults(&wu);
        wu.appid = f->appid;
        snprintf(wu.name, sizeof(wu.name), "%.40s_%d", prefix, i);
        wu.rsc_fpops_est = fpops;
        wu.delay_bound = 7 * 86400;
        wu.min_quorum = nres;
        wu.target_nresults = nres;
        wu.transition_time = VS_TIME_NEVER;
        wu.xml_doc = vs_xstrdup("<workunit>\n</workunit>\n");
        assert_int_equal(vs_store_workunit_add(f->s, &wu), 0);
        for (int k = 0; k < nres; k++) {
            struct vs_result r = {.workunitid = wu.id, .appid = f->appid};
            r.server_state = VS_RESULT_SERVER_STATE_UNSENT;
            snprintf(r.name, sizeof(r.name), "%.40s_%d_%d", prefix, i, k);
            r.xml_doc_in = vs_xstrdup("<result>\n</result>\n");
            assert_int_equal(vs_store_result_add(f->s, &r), 0);
            if (!first)
                first = r.id;
            vs_result_cleanup(&r);
        }
        vs_workunit_cleanup(&wu);
    }
    assert_int_equal(vs_store_commit(f->s), 0);
    return first;
}

static inline void pf_destroy(struct project_fixture *f)
{
    vs_store_close(f->s);
    vs_test_store_drop(f->cfg.store_url);
    nftw(f->dir, pf_rm, 16, FTW_DEPTH | FTW_PHYS);
    vs_free(f);
}

/* Runs a COUNT-like query on the store through a separate connection. */
static inline int64_t pf_sql(const struct project_fixture *f, const char *sql)
{
    return vs_test_sql_i64(f->cfg.store_url, sql);
}

/* Runs one SQL statement that returns no row (a trigger, an edit) on its
 * own connection to the project's store. */
static inline void pf_exec(const struct project_fixture *f, const char *sql)
{
    if (vs_test_sql_exec(f->cfg.store_url, sql) != 0)
        fail_msg("%s failed", sql);
}

/* Number of regular files under dir (recursively). */
static int pf_nfiles_count;
static inline int pf_count_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)path;
    (void)sb;
    (void)ftw;
    if (flag == FTW_F)
        pf_nfiles_count++;
    return 0;
}
static inline int pf_nfiles(const char *dir)
{
    pf_nfiles_count = 0;
    nftw(dir, pf_count_cb, 16, FTW_PHYS);
    return pf_nfiles_count;
}

#endif
