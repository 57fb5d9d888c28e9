/*
 * What one project may make the client hold: the per-project caps on
 * results, workunits and files (limits.c) and what a reply is admitted
 * under them, the garbage collection of unused workunits and files
 * (state.c, at merge and at load), the hash indexes (index.c), and the
 * disk: BOINC's preferences, the allowed total, the per-project shares and
 * the check a download passes (disk.c).
 */
#include "vs_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client_fixture.h"
#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/fs.h"
#include "volsched/proto.h"

#define GIB 1073741824.0

static int setup(void **state)
{
    clientfx_setup(state);
    struct client_fx *f = *state;
    f->c->logf = fopen("/dev/null", "w");
    f->c->now = 1.8e9;
    return 0;
}

static void attach(struct vs_client *c, int n)
{
    for (int i = 0; i < n; i++) {
        char url[64], name[32];
        snprintf(url, sizeof(url), "http://127.0.0.1:9/p%zu/", c->n_projects);
        snprintf(name, sizeof(name), "p%zu", c->n_projects);
        assert_int_equal(vs_client_attach(c, url, "k", false), 0);
        c->projects[c->n_projects - 1].project_name = vs_xstrdup(name);
    }
}

/* n results of project p, each with its own workunit, named PREFIX_i. The
 * arrays grow once (vs_client_add_* grows them by one, a copy each under
 * ASan). */
static void hold(struct vs_client *c, size_t p, const char *prefix, size_t n)
{
    c->wus = vs_xreallocarray(c->wus, c->n_wus + n, sizeof(*c->wus));
    memset(&c->wus[c->n_wus], 0, n * sizeof(*c->wus));
    c->results = vs_xreallocarray(c->results, c->n_results + n, sizeof(*c->results));
    memset(&c->results[c->n_results], 0, n * sizeof(*c->results));
    for (size_t i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof(name), "%s_%zu", prefix, i);
        struct cl_wu *w = &c->wus[c->n_wus++];
        w->name = vs_xstrdup(name);
        w->project = p;
        w->app_name = vs_xstrdup("a");
        struct cl_result *r = &c->results[c->n_results++];
        r->slot = -1;
        r->ctask = VS_CTASK_UNSTARTED;
        snprintf(name, sizeof(name), "%s_%zu_0", prefix, i);
        r->name = vs_xstrdup(name);
        r->wu_name = vs_xstrdup(w->name);
        r->project = p;
        r->state = RS_FILES_DOWNLOADED;
        r->report_deadline = c->now + 86400;
    }
}

static struct cl_file *add_file(struct vs_client *c, size_t p, const char *name, int status,
                                double nbytes)
{
    struct cl_file *f = vs_client_add_file(c);
    f->name = vs_xstrdup(name);
    f->project = p;
    f->status = status;
    f->nbytes = nbytes;
    return f;
}

/* The newest message containing text, or NULL. */
static const char *msg_with(const struct vs_client *c, const char *text)
{
    for (size_t k = 0; k < c->n_msgs; k++) {
        size_t i = (c->msgs_head + VS_CLIENT_MSG_KEEP - 1 - k) % VS_CLIENT_MSG_KEEP;
        if (c->msgs[i].body && strstr(c->msgs[i].body, text))
            return c->msgs[i].body;
    }
    return NULL;
}

static void test_caps(void **state)
{
    struct vs_client *c = ((struct client_fx *)*state)->c;
    attach(c, 1);
    assert_int_equal(vs_client_cap(c, CL_RESULTS), 20000);
    attach(c, 1);
    assert_int_equal(vs_client_cap(c, CL_RESULTS), 10000);
    assert_int_equal(vs_client_cap(c, CL_FILES), 20000);
    assert_true(vs_client_cap_room(c, CL_RESULTS, 9999, 9999));
    assert_false(vs_client_cap_room(c, CL_RESULTS, 10000, 10000));
    /* past the client's total, every project keeps 20000 / 64 */
    assert_true(vs_client_cap_room(c, CL_RESULTS, 311, 25000));
    assert_false(vs_client_cap_room(c, CL_RESULTS, 312, 25000));
    assert_false(vs_client_results_full(c, 9999));
    assert_true(vs_client_results_full(c, 10000));
}

/* A reply: app "a", app version 1 (file app_1), n tasks t_i with workunit
 * t_i and input in_i, spare workunits and files nothing names. */
static char *reply_xml(const char *prefix, int n, int spare_wus, int junk)
{
    struct vs_buf b;
    vs_buf_init(&b, 1u << 24);
    assert_int_equal(vs_buf_puts(&b, "<scheduler_reply>\n<app><name>a</name></app>\n"
                                     "<file_info><name>app_1</name><url>http://x.org/a</url>"
                                     "<executable/></file_info>\n"
                                     "<app_version><app_name>a</app_name><version_num>1"
                                     "</version_num><file_ref><file_name>app_1</file_name>"
                                     "<main_program/></file_ref></app_version>\n"),
                     0);
    char t[600];
    for (int i = 0; i < n; i++) {
        snprintf(t, sizeof(t),
                 "<file_info><name>%s_in_%d</name><url>http://x.org/i</url></file_info>\n"
                 "<workunit><name>%s_%d</name><app_name>a</app_name><file_ref><file_name>"
                 "%s_in_%d</file_name></file_ref></workunit>\n<result><name>%s_%d_0</name>"
                 "<wu_name>%s_%d</wu_name><version_num>1</version_num></result>\n",
                 prefix, i, prefix, i, prefix, i, prefix, i, prefix, i);
        assert_int_equal(vs_buf_puts(&b, t), 0);
    }
    for (int i = 0; i < spare_wus; i++) {
        snprintf(t, sizeof(t), "<workunit><name>spare_%d</name><app_name>a</app_name></workunit>\n",
                 i);
        assert_int_equal(vs_buf_puts(&b, t), 0);
    }
    for (int i = 0; i < junk; i++) {
        snprintf(t, sizeof(t),
                 "<file_info><name>junk_%d</name><url>http://x.org/j</url></file_info>\n", i);
        assert_int_equal(vs_buf_puts(&b, t), 0);
    }
    assert_int_equal(vs_buf_puts(&b, "</scheduler_reply>\n"), 0);
    return vs_buf_take(&b, NULL);
}

static size_t count(const bool *flags, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += flags[i];
    return k;
}

static void admit(struct vs_client *c, size_t p, const char *xml, struct vs_arena *a,
                  struct vs_proto_reply *y, struct cl_admit *adm)
{
    struct vs_proto_error pe;
    assert_int_equal(vs_proto_reply_parse(xml, strlen(xml), a, y, &pe), 0);
    vs_client_admit(c, p, y, a, adm);
}

static void test_admit(void **state)
{
    struct vs_client *c = ((struct client_fx *)*state)->c;
    attach(c, 2);
    hold(c, 0, "old", 9998);
    struct vs_arena a;
    vs_arena_init(&a, 1u << 16);
    struct vs_proto_reply y;
    struct cl_admit adm;
    char *xml = reply_xml("t", 5, 3, 2);
    admit(c, 0, xml, &a, &y, &adm);
    /* two tasks fit under p0's 10000, each with its workunit and input */
    assert_true(adm.result[0] && adm.result[1] && !adm.result[2] && !adm.result[4]);
    assert_int_equal(count(adm.wu, y.n_workunits), 2);
    assert_true(adm.wu[0] && adm.wu[1]);
    assert_int_equal(count(adm.app, y.n_apps), 1);
    assert_int_equal(count(adm.av, y.n_app_versions), 1);
    /* app_1, t_in_0, t_in_1; not the refused tasks' inputs, not the junk */
    assert_int_equal(count(adm.file, y.n_file_infos), 3);
    for (size_t i = 0; i < y.n_file_infos; i++)
        if (strncmp(y.file_infos[i].name, "junk", 4) == 0 ||
            strcmp(y.file_infos[i].name, "t_in_2") == 0)
            assert_false(adm.file[i]);
    const char *m = msg_with(c, "Refused 3 of 5 new tasks: this project is at its limit of "
                                "10000 tasks on this computer (the client's 20000 shared by 2");
    assert_non_null(m);
    assert_non_null(msg_with(c, "Ignored 3 workunits no task of the reply names and 2 files "
                                "nothing names"));
    vs_free(xml);

    /* the other project keeps its room */
    vs_arena_reset(&a);
    xml = reply_xml("h", 3, 0, 0);
    admit(c, 1, xml, &a, &y, &adm);
    assert_int_equal(count(adm.result, y.n_results), 3);
    vs_free(xml);

    /* past the client's total (p0 filled it before p1 came): p1 still gets
     * the floor every project keeps, 20000 / 64 */
    hold(c, 0, "more", 20000 - 9998);
    vs_arena_reset(&a);
    xml = reply_xml("f", 400, 0, 0);
    admit(c, 1, xml, &a, &y, &adm);
    assert_int_equal(count(adm.result, y.n_results), 312);
    assert_non_null(msg_with(c, "Refused 88 of 400 new tasks: the client holds its limit of "
                                "20000 tasks for all projects together (this project: 312)"));
    vs_free(xml);
    vs_arena_cleanup(&a);
}

/* Tasks already held, and a task whose workunit is neither held nor sent. */
static void test_admit_held(void **state)
{
    struct vs_client *c = ((struct client_fx *)*state)->c;
    attach(c, 1);
    hold(c, 0, "t", 2); /* t_0, t_1 with results t_0_0, t_1_0 */
    struct vs_arena a;
    vs_arena_init(&a, 1u << 16);
    struct vs_proto_reply y;
    struct cl_admit adm;
    const char *xml = "<scheduler_reply>\n<result><name>t_0_0</name><wu_name>t_0</wu_name>"
                      "</result>\n<result><name>t_1_1</name><wu_name>t_1</wu_name></result>\n"
                      "<result><name>x_0</name><wu_name>x</wu_name></result>\n"
                      "<result><name>t_1_1</name><wu_name>t_1</wu_name></result>\n"
                      "</scheduler_reply>\n";
    admit(c, 0, xml, &a, &y, &adm);
    /* held: not new; a new task of a held workunit: yes, once */
    assert_false(adm.result[0]);
    assert_true(adm.result[1]);
    assert_false(adm.result[2]);
    assert_false(adm.result[3]);
    assert_non_null(msg_with(c, "Result x_0 names workunit x, which the reply lacks"));
    vs_arena_cleanup(&a);
}

static void touch(struct vs_client *c, size_t p, const char *name)
{
    char dir[VS_CLIENT_PATH_MAX], path[VS_CLIENT_PATH_MAX + 100];
    assert_int_equal(vs_client_project_dir(c, p, dir, sizeof(dir)), 0);
    assert_int_equal(vs_fs_mkdir_p(dir, 0755), 0);
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("x", f);
    fclose(f);
}

static bool exists(struct vs_client *c, size_t p, const char *name)
{
    char dir[VS_CLIENT_PATH_MAX], path[VS_CLIENT_PATH_MAX + 100];
    assert_int_equal(vs_client_project_dir(c, p, dir, sizeof(dir)), 0);
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

static void test_gc_and_index(void **state)
{
    struct vs_client *c = ((struct client_fx *)*state)->c;
    attach(c, 2);
    hold(c, 0, "t", 3);
    struct cl_wu *w = &c->wus[0];
    w->frefs[0].file_name = vs_xstrdup("used");
    w->n_frefs = 1;
    add_file(c, 0, "used", FS_PRESENT, 1);
    add_file(c, 0, "orphan", FS_PRESENT, 1);
    add_file(c, 0, "sticky_here", FS_PRESENT, 1)->sticky = true;
    add_file(c, 0, "sticky_not", FS_NOT_PRESENT, 1)->sticky = true;
    add_file(c, 1, "used", FS_PRESENT, 1); /* one name, two projects */
    struct cl_wu *spare = vs_client_add_wu(c);
    spare->name = vs_xstrdup("spare");
    spare->app_name = vs_xstrdup("a");
    touch(c, 0, "orphan");
    touch(c, 0, "used");

    assert_int_equal(vs_client_find_file(c, 1, "used"), 4);
    assert_int_equal(vs_client_find_file(c, 0, "used"), 0);
    assert_int_equal(vs_client_gc(c, -1), 4); /* spare; orphan, sticky_not; p1's used */
    assert_int_equal(c->n_wus, 3);
    assert_int_equal(vs_client_find_wu(c, 0, "spare"), -1);
    assert_int_equal(vs_client_find_file(c, 0, "orphan"), -1);
    assert_false(exists(c, 0, "orphan"));
    assert_true(exists(c, 0, "used"));
    assert_true(vs_client_find_file(c, 0, "sticky_here") >= 0);
    assert_int_equal(vs_client_find_file(c, 1, "used"), -1);
    long u = vs_client_find_file(c, 0, "used");
    assert_true(u >= 0 && strcmp(c->files[u].name, "used") == 0 && c->files[u].project == 0);

    /* a sticky file of a project over its disk share goes */
    c->projects[0].disk_share = 10;
    c->projects[0].disk_usage = 20;
    assert_int_equal(vs_client_gc(c, 0), 1);
    assert_int_equal(vs_client_find_file(c, 0, "sticky_here"), -1);

    /* results dropped in one pass: their workunits (and files) go too */
    bool drop[3] = {true, false, true};
    vs_client_drop_results(c, drop);
    assert_int_equal(c->n_results, 1);
    assert_int_equal(vs_client_find_result(c, 0, "t_1_0"), 0);
    assert_int_equal(vs_client_find_result(c, 0, "t_0_0"), -1);
    assert_int_equal(c->n_wus, 1);
    assert_int_equal(vs_client_find_file(c, 0, "used"), -1);
    assert_false(exists(c, 0, "used"));
}

/* At start the daemon (holding the lock) drops what nothing uses; `client
 * status` (no lock) changes nothing. */
static void test_load_gc(void **state)
{
    struct client_fx *f = *state;
    struct vs_client *c = f->c;
    attach(c, 1);
    hold(c, 0, "t", 1);
    struct cl_wu *spare = vs_client_add_wu(c);
    spare->name = vs_xstrdup("spare");
    spare->app_name = vs_xstrdup("a");
    add_file(c, 0, "orphan", FS_PRESENT, 1);
    assert_int_equal(vs_client_state_write(c), 0);

    struct vs_client *d = VS_NEW(struct vs_client);
    vs_client_init(d, f->dir);
    d->logf = fopen("/dev/null", "w");
    assert_int_equal(vs_client_load(d), 0);
    assert_int_equal(d->n_wus, 2);
    assert_int_equal(d->n_files, 1);
    vs_client_cleanup(d);
    vs_client_init(d, f->dir);
    d->logf = fopen("/dev/null", "w");
    assert_int_equal(vs_client_lock(d), 0);
    assert_int_equal(vs_client_load(d), 0);
    assert_int_equal(d->n_wus, 1);
    assert_int_equal(d->n_files, 0);
    assert_non_null(msg_with(d, "Dropped 2 workunits and files that nothing in the state uses"));
    vs_client_cleanup(d);
    vs_free(d);
}

static void test_disk_allowed(void **state)
{
    (void)state;
    struct cl_prefs p;
    vs_client_prefs_default(&p);
    /* BOINC-COMPAT: lib/prefs.cpp's defaults */
    assert_true(p.disk_max_used_gb == 0 && p.disk_max_used_pct == 90 && p.disk_min_free_gb == 0.1);
    /* leave 0.1 GiB free: 1 + 50 - 0.1; 90% of 100 is more */
    assert_true(fabs(vs_client_disk_allowed(&p, 100 * GIB, 50 * GIB, 1 * GIB) - 50.9 * GIB) < 1);
    p.disk_max_used_pct = 20;
    assert_true(vs_client_disk_allowed(&p, 100 * GIB, 50 * GIB, 1 * GIB) == 20 * GIB);
    p.disk_max_used_gb = 10;
    assert_true(vs_client_disk_allowed(&p, 100 * GIB, 50 * GIB, 1 * GIB) == 10 * GIB);
    /* 0 turns the percentage and the GB limit off */
    p.disk_max_used_pct = p.disk_max_used_gb = 0;
    assert_true(fabs(vs_client_disk_allowed(&p, 100 * GIB, 50 * GIB, 1 * GIB) - 50.9 * GIB) < 1);
    /* never negative: less free than disk_min_free_gb, nothing used */
    assert_true(vs_client_disk_allowed(&p, 100 * GIB, 0.05 * GIB, 0) == 0);
}

static void test_disk_shares(void **state)
{
    (void)state;
    double out[3];
    /* equal shares, nothing wanted: half each */
    vs_client_disk_shares(2, (double[]){100, 100}, (double[]){0, 0}, 1000, out);
    assert_true(out[0] == 500 && out[1] == 500);
    /* a backup project (share 0) still gets a tenth of the largest share's
     * weight: 100 + 10 and 0 + 10 of 120 */
    vs_client_disk_shares(2, (double[]){100, 0}, (double[]){0, 0}, 1200, out);
    assert_true(fabs(out[0] - 1100) < 1e-9 && fabs(out[1] - 100) < 1e-9);
    /* a greedy project (wants more than its quota) gets what the others'
     * usage leaves; the others keep their quota */
    vs_client_disk_shares(2, (double[]){100, 100}, (double[]){10, 1e9}, 1000, out);
    assert_true(out[0] == 500 && fabs(out[1] - 990) < 1e-9);
    /* every project greedy: the shares add up to the allowed total (7.20.5's
     * divisor, the plain resource shares, handed out 1.1 x allowed here) */
    vs_client_disk_shares(3, (double[]){100, 200, 100}, (double[]){1e9, 1e9, 1e9}, 1000, out);
    assert_true(fabs(out[0] + out[1] + out[2] - 1000) < 1e-9);
    assert_true(out[1] > out[0] && fabs(out[0] - out[2]) < 1e-9);
    /* all shares 0: equal */
    vs_client_disk_shares(2, (double[]){0, 0}, (double[]){0, 0}, 1000, out);
    assert_true(out[0] == 500 && out[1] == 500);
    vs_client_disk_shares(0, NULL, NULL, 1000, out);
}

static void test_disk_admit(void **state)
{
    struct vs_client *c = ((struct client_fx *)*state)->c;
    attach(c, 2);
    /* 1 MiB allowed in all, whatever the real disk has free */
    c->prefs.disk_max_used_gb = 1.0 / 1024;
    c->prefs.disk_max_used_pct = 0;
    c->prefs.disk_min_free_gb = 0;
    struct cl_file *big = add_file(c, 0, "big", FS_NOT_PRESENT, 2 << 20);
    double room = -1;
    assert_int_equal(vs_client_disk_admit(c, big, 0, &room), VS_ELIMIT);
    assert_true(big->disk_wait && big->next_try > c->now);
    assert_non_null(msg_with(c, "Waiting for disk space to download big (2097152 bytes): the "
                                "projects use"));
    int seq = c->msg_seqno;
    assert_int_equal(vs_client_disk_admit(c, big, 0, &room), VS_ELIMIT);
    assert_int_equal(c->msg_seqno, seq); /* said once */
    big->status = FS_ERR;                /* out of the way */

    /* p1 holds 600 KiB: over its half, so greedy; p0 wants 300 KiB */
    add_file(c, 1, "held", FS_PRESENT, 600 << 10);
    struct cl_file *mine = add_file(c, 0, "mine", FS_NOT_PRESENT, 300 << 10);
    assert_int_equal(vs_client_disk_admit(c, mine, 0, &room), 0);
    assert_true(room == 300 << 10);
    /* p0 within its quota keeps it (half); p1 gets what p0's 300 KiB leaves */
    assert_true(fabs(c->projects[0].disk_share - 512 * 1024) < 1);
    assert_true(fabs(c->projects[1].disk_share - (1024 - 300) * 1024) < 1);
    /* so another 300 KiB for p1 does not fit */
    struct cl_file *more = add_file(c, 1, "more", FS_NOT_PRESENT, 300 << 10);
    assert_int_equal(vs_client_disk_admit(c, more, 0, &room), VS_ELIMIT);
    assert_non_null(msg_with(c, "Waiting for disk space to download more (307200 bytes): this "
                                "project uses 614400 of its disk share"));
    /* the scheduler request's and GUI RPC's figures come from here */
    assert_true(c->projects[1].disk_usage == 600 << 10);
    assert_true(c->disk.total_usage >= 600 << 10);
    assert_true(fabs(c->disk.allowed - 1048576) < 1);
}

static void test_prefs_and_fetch(void **state)
{
    struct client_fx *f = *state;
    struct vs_client *c = f->c;
    char path[4096];
    snprintf(path, sizeof(path), "%s/global_prefs_override.xml", f->dir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("<global_preferences><disk_max_used_gb>5</disk_max_used_gb>"
          "<disk_max_used_pct>150</disk_max_used_pct><disk_min_free_gb>0.5</disk_min_free_gb>"
          "</global_preferences>",
          fp);
    fclose(fp);
    vs_client_prefs_read(c);
    assert_true(c->prefs.disk_max_used_gb == 5 && c->prefs.disk_min_free_gb == 0.5);
    assert_true(c->prefs.disk_max_used_pct == 90);
    assert_non_null(msg_with(c, "<disk_max_used_pct> must be a number in [0, 100]; ignored"));
    struct vs_buf b;
    vs_buf_init(&b, 1u << 16);
    assert_int_equal(vs_client_prefs_xml(c, &b), 0);
    assert_non_null(strstr(vs_buf_str(&b), "<disk_min_free_gb>0.5"));
    vs_buf_cleanup(&b);

    /* a project at its cap on tasks is not asked for work */
    attach(c, 2);
    hold(c, 0, "t", 10000);
    hold(c, 1, "u", 10);
    c->run_mode = RUN_MODE_NEVER; /* nothing starts */
    assert_int_equal(vs_client_sched_decide(c), 0);
    assert_true(c->cst.projects[0].no_new_work);
    assert_false(c->cst.projects[1].no_new_work);
}

/* A project's text in the client's log (its name, a server message, the
 * host's venue there) stays one line: a newline in it cannot forge a line
 * that seems to come from another project or from the client. */
static void test_msg_one_line(void **state)
{
    struct client_fx *f = *state;
    struct vs_client *c = f->c;
    char path[4096];
    snprintf(path, sizeof(path), "%s/msgs.log", f->dir);
    fclose(c->logf);
    c->logf = fopen(path, "w+");
    assert_non_null(c->logf);
    attach(c, 1);
    fflush(c->logf);
    long before = ftell(c->logf);
    vs_client_setstr(&c->projects[0].project_name, "p0\nforged [---] line");
    vs_client_msg(c, 0, 1, "The computer's venue here is now \"%s\"",
                  "w\n07-Dec-2026 00:00:00 [---] Project attached\x1b[2J");
    fflush(c->logf);
    assert_int_equal(fseek(c->logf, before, SEEK_SET), 0);
    char line[8192];
    int n = 0;
    while (fgets(line, sizeof(line), c->logf)) {
        n++;
        assert_null(strchr(line, '\x1b'));
    }
    assert_int_equal(n, 1);
    assert_non_null(strstr(line, "\\x0a07-Dec-2026"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_caps, setup, clientfx_teardown),
        cmocka_unit_test_setup_teardown(test_msg_one_line, setup, clientfx_teardown),
        cmocka_unit_test_setup_teardown(test_admit, setup, clientfx_teardown),
        cmocka_unit_test_setup_teardown(test_admit_held, setup, clientfx_teardown),
        cmocka_unit_test_setup_teardown(test_gc_and_index, setup, clientfx_teardown),
        cmocka_unit_test_setup_teardown(test_load_gc, setup, clientfx_teardown),
        cmocka_unit_test(test_disk_allowed),
        cmocka_unit_test(test_disk_shares),
        cmocka_unit_test_setup_teardown(test_disk_admit, setup, clientfx_teardown),
        cmocka_unit_test_setup_teardown(test_prefs_and_fetch, setup, clientfx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
