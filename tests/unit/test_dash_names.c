/*
 * A name beginning with '-' never reaches an
 * operator's command, where it would be read as an option. create_work
 * refuses such workunit names (test_create_work.c); here the other ways
 * names get to commands: the on-demand generator's locality file names,
 * the trickle handler's result name and variety (a volunteer's client
 * chooses both), and a workunit so named in an older store at the
 * assimilator. Each operator command is a script that records its
 * arguments.
 */
#include "vs_test.h"

#include <fcntl.h>

#include "daemon_fixture.h"
#include "server/trickle.h"
#include "volsched/loc_dirs.h"
#include "volsched/locality.h"
#include "volsched/locality_daemons.h"
#include "volsched/store_trickle.h"

/* A command that appends its arguments, one line per run, to DIR/args. */
static void recorder(struct project_fixture *f, char *cmd, size_t n, int status)
{
    char body[1600];
    snprintf(body, sizeof(body), "echo \"$*\" >> %s/args\nexit %d", f->dir, status);
    df_script(f, "record.sh", body, cmd, n);
}

/* The lines the recorder wrote ("" when it never ran); caller frees. */
static char *recorded(struct project_fixture *f)
{
    char path[1200];
    snprintf(path, sizeof(path), "%s/args", f->dir);
    if (access(path, F_OK) != 0)
        return vs_xstrdup("");
    return vs_test_slurp(path, NULL);
}

static void test_locality_names(void **state)
{
    struct project_fixture *f = *state;
    assert_false(vs_loc_file_name_ok("-rf", 3));
    assert_false(vs_loc_file_name_ok("--help", 6));
    assert_true(vs_loc_file_name_ok("a-b", 3));
    char lf[VS_LOC_NAME_MAX];
    assert_int_equal(vs_loc_file_of_wu("-x__1", lf, sizeof(lf)), VS_EINVAL);
    /* A need_work entry named "-x" (made behind the scheduler's back) is
     * never handed to the generator; "good" is. */
    assert_int_equal(vs_loc_dirs_create(f->dir), 0);
    assert_int_equal(vs_loc_touch(f->dir, VS_LOC_NEED_WORK, "-x"), VS_EINVAL);
    char path[1200];
    snprintf(path, sizeof(path), "%s/locality_scheduling/need_work/-x", f->dir);
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(vs_loc_touch(f->dir, VS_LOC_NEED_WORK, "good"), 0);
    char cmd[1200];
    recorder(f, cmd, sizeof(cmd), 0);
    assert_int_equal(vs_locality_gen_pass(&f->cfg, cmd, 10, NULL, NULL), 1);
    char *got = recorded(f);
    assert_string_equal(got, "good\n");
    vs_free(got);
}

static void test_trickle_names(void **state)
{
    struct project_fixture *f = *state;
    int64_t h = df_host(f);
    const char *xml = "<msg_from_host><variety>v</variety></msg_from_host>";
    assert_int_equal(vs_store_trickle_up_add(f->s, NOW, h, "--error", "v", xml), 0);
    assert_int_equal(vs_store_trickle_up_add(f->s, NOW, h, "r_0", "-v", xml), 0);
    assert_int_equal(vs_store_trickle_up_add(f->s, NOW, h, "r_1", "v", xml), 0);
    char cmd[1200];
    recorder(f, cmd, sizeof(cmd), 0);
    int n = 0;
    assert_int_equal(vs_trickle_handler_pass(f->s, &f->cfg, cmd, NOW + 1, NULL, &n), 0);
    assert_int_equal(n, 3); /* all handled: none is tried again */
    char *got = recorded(f);
    /* Only the third message reached the handler: HOSTID r_1 v MSG REPLY. */
    char want[64];
    snprintf(want, sizeof(want), "%lld r_1 v ", (long long)h);
    assert_true(strncmp(got, want, strlen(want)) == 0);
    assert_ptr_equal(strchr(got, '\n'), got + strlen(got) - 1); /* one run */
    vs_free(got);
    assert_int_equal(pf_sql(f, "SELECT count(*) FROM msg_from_host WHERE handled = 0"), 0);
}

static void test_assimilator_old_name(void **state)
{
    struct project_fixture *f = *state;
    char cmd[1200];
    recorder(f, cmd, sizeof(cmd), 0);
    f->cfg.nassimilators = 1;
    assert_int_equal(vs_strlcpy(f->cfg.assimilators[0].command, cmd, VS_CMD_MAX), 0);
    /* A workunit of a store older than create_work's check, and one named
     * as create_work allows now. */
    int64_t h = df_host(f);
    df_wu(f, "-old", 0, 1, 1, 0, 1, 1, false);
    df_wu(f, "new", 0, 1, 1, 0, 1, 1, false);
    df_trans(f, NOW);
    df_send(f, "-old_0", h, NOW);
    df_send(f, "new_0", h, NOW);
    df_report(f, "-old_0", h, NOW + 1, "out\n");
    df_report(f, "new_0", h, NOW + 1, "out\n");
    df_trans(f, NOW + 1);
    assert_int_equal(vs_validator_pass(f->s, &f->cfg, NOW + 2, 0, NULL, NULL), 2);
    struct vs_assimilator_stats st;
    assert_int_equal(vs_assimilator_pass(f->s, &f->cfg, NOW + 3, 0, NULL, &st), 2);
    assert_int_equal(st.ndone, 1);
    assert_int_equal(st.ndeferred, 1);
    assert_non_null(strstr(st.last_error, "-old"));
    assert_non_null(strstr(st.last_error, "beginning with '-'"));
    assert_int_equal(df_w(f, "-old", "assimilate_state"), VS_ASSIMILATE_INIT);
    assert_int_equal(df_w(f, "new", "assimilate_state"), VS_ASSIMILATE_DONE);
    char *got = recorded(f);
    assert_true(strncmp(got, "new new_0 /", 11) == 0);
    assert_null(strstr(got, "-old"));
    vs_free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_locality_names, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_trickle_names, df_setup, df_teardown),
        cmocka_unit_test_setup_teardown(test_assimilator_old_name, df_setup, df_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
