/*
 * Bulk workunit inserts (vs_store_workunits_add: COPY on PostgreSQL, a
 * statement each on SQLite), on both backends (pg.store runs this binary
 * with VS_TEST_PG): every field stored as given, text with COPY's
 * separators and escape in it included; ids drawn as single inserts draw
 * them; a duplicate name fails the batch and leaves the transaction usable
 * after its savepoint is rolled back.
 */
#include "vs_test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "store_fixture.h"
#include "volsched/str.h"

#define N 300

static struct vs_workunit *make(const struct store_fx *f, const char *name, int i)
{
    struct vs_workunit *wu = VS_NEW(struct vs_workunit);
    vs_workunit_defaults(wu);
    wu->appid = f->appid;
    assert_int_equal(vs_strlcpy(wu->name, name, sizeof(wu->name)), 0);
    /* Every character COPY's text format treats specially, and a long doc. */
    char doc[4096];
    snprintf(doc, sizeof(doc),
             "<workunit>\t<command_line>-n %d \\N\\t</command_line>\r\n%*s</workunit>", i,
             (i % 7) * 300, "");
    wu->xml_doc = vs_xstrdup(doc);
    wu->batch = 42;
    wu->rsc_fpops_est = 3.6e12 + i * 0.1;
    wu->rsc_fpops_bound = 1.0 / 3.0;
    wu->rsc_memory_bound = -0.0;
    wu->delay_bound = 86400 + i;
    wu->priority = -i;
    wu->transition_time = VS_TIME_NEVER;
    wu->opaque = 1e-300;
    assert_int_equal(vs_strlcpy(wu->keywords, "a\tb\\c", sizeof(wu->keywords)), 0);
    assert_int_equal(
        vs_strlcpy(wu->result_template_file, "templates/r.xml", sizeof(wu->result_template_file)),
        0);
    return wu;
}

static void drop(struct vs_workunit **wus, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        vs_workunit_cleanup(wus[i]);
        vs_free(wus[i]);
    }
}

static void test_bulk_round_trip(void **state)
{
    struct store_fx *f = *state;
    struct vs_workunit *wus[N];
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof(name), "bulk_%d", i);
        wus[i] = make(f, name, i);
    }
    assert_int_equal(vs_store_begin(f->s), 0);
    assert_int_equal(vs_store_workunits_add(f->s, wus, 0), 0);
    assert_int_equal(vs_store_workunits_add(f->s, wus, N), 0);
    assert_int_equal(vs_store_commit(f->s), 0);
    for (int i = 0; i < N; i++) {
        assert_true(wus[i]->id > 0);
        if (i > 0)
            assert_true(wus[i]->id > wus[i - 1]->id);
        assert_true(wus[i]->create_time > 0 && wus[i]->mod_time > 0);
        struct vs_workunit got;
        assert_int_equal(vs_store_workunit_get(f->s, wus[i]->id, &got), 0);
        assert_string_equal(got.name, wus[i]->name);
        assert_string_equal(got.xml_doc, wus[i]->xml_doc);
        assert_string_equal(got.keywords, "a\tb\\c");
        assert_string_equal(got.result_template_file, "templates/r.xml");
        assert_int_equal(got.appid, f->appid);
        assert_int_equal(got.batch, 42);
        assert_true(got.rsc_fpops_est == wus[i]->rsc_fpops_est);
        assert_true(got.rsc_fpops_bound == 1.0 / 3.0);
        assert_true(got.opaque == 1e-300);
        assert_int_equal(got.delay_bound, 86400 + i);
        assert_int_equal(got.priority, -i);
        assert_int_equal(got.transition_time, VS_TIME_NEVER);
        assert_int_equal(got.size_class, -1);
        assert_int_equal(got.create_time, wus[i]->create_time);
        vs_workunit_cleanup(&got);
    }
    /* A single insert after the batch draws the next id. */
    struct vs_workunit *one = make(f, "after", 0);
    assert_int_equal(vs_store_workunit_add(f->s, one), 0);
    assert_true(one->id > wus[N - 1]->id);
    drop(&one, 1);
    drop(wus, N);
}

static void test_bulk_clash(void **state)
{
    struct store_fx *f = *state;
    struct vs_workunit *first = make(f, "taken", 0);
    assert_int_equal(vs_store_workunit_add(f->s, first), 0);
    struct vs_workunit *wus[3] = {make(f, "new_0", 0), make(f, "taken", 1), make(f, "new_2", 2)};
    assert_int_equal(vs_store_begin(f->s), 0);
    assert_int_equal(vs_store_begin(f->s), 0); /* a savepoint */
    assert_int_equal(vs_store_workunits_add(f->s, wus, 3), VS_EEXISTS);
    assert_int_equal(vs_store_rollback(f->s), 0);
    /* The transaction goes on after its savepoint. */
    wus[1]->name[0] = 'T';
    assert_int_equal(vs_store_workunits_add(f->s, wus, 3), 0);
    assert_int_equal(vs_store_commit(f->s), 0);
    struct vs_workunit got;
    assert_int_equal(vs_store_workunit_by_name(f->s, "Taken", &got), 0);
    assert_int_equal(got.id, wus[1]->id);
    vs_workunit_cleanup(&got);
    assert_int_equal(vs_test_sql_i64(f->url, "SELECT count(*) FROM workunit"), 4);
    /* Bad input is refused before anything is written. */
    vs_free(wus[2]->xml_doc);
    wus[2]->xml_doc = NULL;
    assert_int_equal(vs_store_workunits_add(f->s, wus, 3), VS_EINVAL);
    drop(wus, 3);
    drop(&first, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_bulk_round_trip, storefx_setup, storefx_teardown),
        cmocka_unit_test_setup_teardown(test_bulk_clash, storefx_setup, storefx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
