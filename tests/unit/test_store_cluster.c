/*
 * Row placement by locality file (store_cluster.c), on a real store:
 * a SQLite file, or with VS_TEST_PG the PostgreSQL server of tests/pg/run.sh
 * (store_backend.h), where ids are the identity column's and only the
 * contract (an id, increasing, names unique) holds. On SQLite the workunits
 * and results of one file made interleaved with other files' get ids in a
 * few blocks of adjacent ids, rows without a file go above every reserved
 * block, a clash with an id taken outside the allocator moves the file to a
 * new block, and the create_work + transitioner path places them so.
 */
#include "vs_test.h"

#include "store_fixture.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/store.h"
#include "volsched/str.h"

#define BLOCK 64 /* CL_BLOCK */

static int add_wu(struct store_fx *f, const char *name, const char *near, int64_t *id)
{
    struct vs_workunit wu;
    vs_workunit_defaults(&wu);
    wu.appid = f->appid;
    assert_int_equal(vs_strlcpy(wu.name, name, sizeof(wu.name)), 0);
    wu.xml_doc = vs_xstrdup("<workunit/>");
    wu.transition_time = VS_TIME_NEVER;
    int rc = vs_store_workunit_add_near(f->s, &wu, near);
    *id = wu.id;
    vs_workunit_cleanup(&wu);
    return rc;
}

static int64_t add_result(struct store_fx *f, int64_t wuid, const char *name, const char *near)
{
    struct vs_result r;
    memset(&r, 0, sizeof(r));
    assert_int_equal(vs_strlcpy(r.name, name, sizeof(r.name)), 0);
    r.workunitid = wuid;
    r.appid = f->appid;
    r.server_state = VS_RESULT_SERVER_STATE_UNSENT;
    assert_int_equal(vs_store_result_add_near(f->s, &r, near), 0);
    assert_true(r.id > 0);
    return r.id;
}

/* Distinct id blocks among n ids, after checking they increase. */
static int blocks_of(const int64_t *ids, int n)
{
    int blocks = 1;
    for (int i = 1; i < n; i++) {
        assert_true(ids[i] > ids[i - 1]);
        if (ids[i] / BLOCK != ids[i - 1] / BLOCK)
            blocks++;
    }
    return blocks;
}

/* Three files' workunits and results made in turn, 100 workunits each,
 * with a row of no file now and then. */
static void test_interleaved(void **state)
{
    struct store_fx *f = *state;
    enum { NF = 3, NW = 100 };
    static int64_t wus[NF][NW], res[NF][2 * NW];
    int64_t other[NW / 10];
    int nother = 0;
    assert_int_equal(vs_store_begin(f->s), 0);
    for (int k = 0; k < NW; k++) {
        for (int i = 0; i < NF; i++) {
            char file[16], name[64];
            snprintf(file, sizeof(file), "F%d", i);
            snprintf(name, sizeof(name), "F%d__%d", i, k);
            assert_int_equal(add_wu(f, name, file, &wus[i][k]), 0);
            for (int r = 0; r < 2; r++) {
                char rn[80];
                snprintf(rn, sizeof(rn), "%s_%d", name, r);
                res[i][2 * k + r] = add_result(f, wus[i][k], rn, file);
            }
        }
        if (k % 10 == 0) {
            char name[64];
            snprintf(name, sizeof(name), "plain_%d", k);
            assert_int_equal(add_wu(f, name, NULL, &other[nother++]), 0);
        }
    }
    assert_int_equal(vs_store_commit(f->s), 0);
    for (int i = 0; i < NF; i++) {
        int bw = blocks_of(wus[i], NW), br = blocks_of(res[i], 2 * NW);
        if (vs_test_pg())
            continue; /* identity ids: increasing, not placed */
        /* 100 workunits in two blocks of 64, 200 results in four. */
        assert_int_equal(bw, (NW + BLOCK - 1) / BLOCK);
        assert_int_equal(br, (2 * NW + BLOCK - 1) / BLOCK);
        /* Rows without a file are in no file's block. */
        for (int j = 0; j < nother; j++)
            for (int k = 0; k < NW; k++)
                assert_true(other[j] / BLOCK != wus[i][k] / BLOCK);
    }
    /* The rows read back under their ids. */
    struct vs_workunit wu;
    assert_int_equal(vs_store_workunit_get(f->s, wus[2][99], &wu), 0);
    assert_string_equal(wu.name, "F2__99");
    vs_workunit_cleanup(&wu);
    struct vs_result r;
    assert_int_equal(vs_store_result_get(f->s, res[1][7], &r), 0);
    assert_string_equal(r.name, "F1__3_1");
    vs_result_cleanup(&r);
}

/* A name taken is VS_EEXISTS with no id; an id taken by a writer that
 * does not know the allocator moves the file to a new block, still after
 * its earlier rows; a name that is no locality file is placed as any. */
static void test_clashes(void **state)
{
    struct store_fx *f = *state;
    int64_t a1, a2, dup, a3, odd;
    assert_int_equal(add_wu(f, "A__1", "A", &a1), 0);
    assert_int_equal(add_wu(f, "A__1", "A", &dup), VS_EEXISTS);
    assert_int_equal(dup, 0);
    assert_int_equal(add_wu(f, "A__2", "A", &a2), 0);
    assert_true(a2 > a1);
    if (!vs_test_pg()) {
        assert_int_equal(a2, a1 + 1);
        char sql[256];
        snprintf(sql, sizeof(sql),
                 "INSERT INTO workunit(id, appid, name, xml_doc) VALUES(%lld, %lld, 'intruder', "
                 "'<workunit/>')",
                 (long long)(a2 + 1), (long long)f->appid);
        assert_int_equal(vs_test_sql_exec(f->url, sql), 0);
    }
    assert_int_equal(add_wu(f, "A__3", "A", &a3), 0);
    assert_true(a3 > a2);
    if (!vs_test_pg())
        assert_true(a3 / BLOCK > a2 / BLOCK && a3 % BLOCK == 0);
    assert_int_equal(add_wu(f, "bad/name__1", "bad/name", &odd), 0);
    assert_true(odd > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_interleaved, storefx_setup, storefx_teardown),
        cmocka_unit_test_setup_teardown(test_clashes, storefx_setup, storefx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
