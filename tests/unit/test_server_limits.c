/* Seed 003's job limits: every combination of scope (project / app), kind
 * (total / cpu / gpu) and per_proc, each hit exactly and just inside. */
#include "vs_test.h"

#include <limits.h>
#include <string.h>

#include "volsched/buf.h"
#include "volsched/server_policy.h"

#include "sp_fixture.h"

enum kind { K_TOTAL, K_CPU, K_GPU };

/* A 4-CPU host with 2 NVIDIA GPUs asking a day of both; the app has a CPU
 * version (101) and a CUDA version (102). */
static void setup_gpu_host(struct fx *f)
{
    fx_init(f);
    f->host.gpu_count[VS_SP_NVIDIA] = 2;
    f->host.gpu_peak_flops[VS_SP_NVIDIA] = 3e10;
    f->req.req_secs[VS_SP_NVIDIA] = 86400;
    f->req.req_instances[VS_SP_NVIDIA] = 2;
    f->av[1] = f->av[0];
    f->av[1].id = 102;
    f->av[1].plan_class = "cuda_fermi";
    f->av[1].proc = VS_SP_NVIDIA;
    f->av[1].gpu_usage = 1;
    f->app.n_versions = 2;
    f->job.rsc_fpops_est = 3e9; /* short jobs: only the limits stop sending */
}

static struct vs_sp_limit_set *limit_set(struct fx *f, bool app_scope)
{
    if (!app_scope)
        return &f->cfg.limits.project;
    f->cfg.limits.n_apps = 1;
    memcpy(f->cfg.limits.apps[0].app_name, "uppercase", sizeof "uppercase");
    f->app.limit_index = vs_sp_limits_app_index(&f->cfg.limits, "uppercase");
    assert_int_equal(f->app.limit_index, 0);
    return &f->cfg.limits.apps[0];
}

static void run_combo(bool app_scope, enum kind k, bool per_proc)
{
    struct fx f;
    setup_gpu_host(&f);
    struct vs_sp_limit_set *set = limit_set(&f, app_scope);
    struct vs_sp_rsc_limit *l = k == K_TOTAL ? &set->total : k == K_CPU ? &set->cpu : &set->gpu;
    l->jobs = 2;
    l->per_proc = per_proc;
    /* total scales by all processors (4 CPUs + 2 GPUs), cpu by CPUs, gpu
     * by that GPU type's devices. */
    int expect = !per_proc ? 2 : k == K_TOTAL ? 12 : k == K_CPU ? 8 : 4;
    enum vs_sp_proc proc = k == K_GPU ? VS_SP_NVIDIA : VS_SP_CPU;
    if (k == K_GPU) {
        f.app.versions = &f.av[1];
        f.app.n_versions = 1;
    } else {
        f.app.n_versions = 1; /* CPU version only */
    }

    /* The client holds expect-1 jobs of this app on this resource. */
    struct vs_sp_inprog ip[16];
    for (int i = 0; i < expect - 1; i++)
        ip[i] = (struct vs_sp_inprog){.app_name = "uppercase", .proc = proc};
    f.req.in_progress = ip;
    f.req.n_in_progress = expect - 1;
    fx_start(&f, NULL, 0);
    struct vs_sp_verdict v;
    assert_int_equal(fx_check(&f, &v), VS_SP_OK); /* just inside */
    assert_int_equal(v.proc, proc);
    vs_sp_commit(&f.st, &f.job, &v);
    f.job.wu_id++;
    assert_int_equal(fx_check(&f, &v), VS_SP_JOB_LIMIT); /* exactly at it */
    struct vs_buf b;
    vs_buf_init(&b, 1024);
    assert_int_equal(vs_sp_verdict_message(&f.st, &v, &b), 0);
    assert_string_equal(vs_buf_str(&b), "This computer has reached a limit on tasks in progress");
    vs_buf_cleanup(&b);

    /* The same number of jobs of another app: only a project limit counts
     * them. */
    for (int i = 0; i < expect; i++)
        ip[i] = (struct vs_sp_inprog){.app_name = "other", .proc = proc};
    f.req.n_in_progress = expect;
    f.job.wu_id++;
    fx_start(&f, NULL, 0);
    assert_int_equal(fx_check(&f, &v), app_scope ? VS_SP_OK : VS_SP_JOB_LIMIT);

    /* A CPU limit does not stop GPU jobs and a GPU limit not CPU jobs. */
    if (k != K_TOTAL) {
        for (int i = 0; i < expect; i++)
            ip[i] = (struct vs_sp_inprog){.app_name = "uppercase", .proc = proc};
        f.app.versions = f.av;
        f.app.n_versions = 2;
        fx_start(&f, NULL, 0);
        assert_int_equal(fx_check(&f, &v), VS_SP_OK);
        assert_int_equal(v.proc, k == K_CPU ? VS_SP_NVIDIA : VS_SP_CPU);
    }
    fx_done(&f);
}

#define COMBO(name, app, k, pp)                                                                    \
    static void name(void **state)                                                                 \
    {                                                                                              \
        (void)state;                                                                               \
        run_combo(app, k, pp);                                                                     \
    }
COMBO(test_project_total, false, K_TOTAL, false)
COMBO(test_project_total_per_proc, false, K_TOTAL, true)
COMBO(test_project_cpu, false, K_CPU, false)
COMBO(test_project_cpu_per_proc, false, K_CPU, true)
COMBO(test_project_gpu, false, K_GPU, false)
COMBO(test_project_gpu_per_proc, false, K_GPU, true)
COMBO(test_app_total, true, K_TOTAL, false)
COMBO(test_app_total_per_proc, true, K_TOTAL, true)
COMBO(test_app_cpu, true, K_CPU, false)
COMBO(test_app_cpu_per_proc, true, K_CPU, true)
COMBO(test_app_gpu, true, K_GPU, false)
COMBO(test_app_gpu_per_proc, true, K_GPU, true)

static void test_gpu_limit_per_type(void **state)
{
    (void)state;
    struct fx f;
    setup_gpu_host(&f);
    f.host.gpu_count[VS_SP_AMD] = 1;
    f.cfg.limits.project.gpu = (struct vs_sp_rsc_limit){.jobs = 3, .per_proc = true};
    fx_start(&f, NULL, 0);
    assert_int_equal(f.st.lim_proj[VS_SP_NVIDIA], 6);
    assert_int_equal(f.st.lim_proj[VS_SP_AMD], 3);
    assert_int_equal(f.st.lim_proj[VS_SP_INTEL], 0); /* per GPU, and it has none */
    assert_int_equal(f.st.lim_proj[VS_SP_CPU], INT_MAX);
    fx_done(&f);
}

static void test_limit_zero_is_none(void **state)
{
    (void)state;
    struct fx f;
    setup_gpu_host(&f);
    f.cfg.limits.project.total = (struct vs_sp_rsc_limit){.jobs = 0, .per_proc = true};
    struct vs_sp_inprog ip[50];
    for (int i = 0; i < 50; i++)
        ip[i] = (struct vs_sp_inprog){.app_name = "uppercase", .proc = VS_SP_CPU};
    f.req.in_progress = ip;
    f.req.n_in_progress = 50;
    fx_start(&f, NULL, 0);
    assert_int_equal(fx_check(&f, NULL), VS_SP_OK);
    fx_done(&f);
}

static void test_unknown_app_counts_for_project(void **state)
{
    (void)state;
    struct fx f;
    setup_gpu_host(&f);
    f.app.n_versions = 1;
    f.cfg.limits.project.cpu = (struct vs_sp_rsc_limit){.jobs = 2};
    limit_set(&f, true)->cpu = (struct vs_sp_rsc_limit){.jobs = 5};
    /* The client holds two jobs whose app version it could not name. */
    struct vs_sp_inprog ip[2] = {{NULL, VS_SP_CPU}, {NULL, VS_SP_CPU}};
    f.req.in_progress = ip;
    f.req.n_in_progress = 2;
    fx_start(&f, NULL, 0);
    assert_int_equal(f.st.n_proj[VS_SP_CPU], 2);
    assert_int_equal(f.st.n_app[0][VS_SP_CPU], 0);
    assert_int_equal(fx_check(&f, NULL), VS_SP_JOB_LIMIT);
    /* Over the project CPU limit, the CPU request is no longer needed. */
    assert_false(vs_sp_need_proc(&f.st, VS_SP_CPU));
    assert_true(vs_sp_need_proc(&f.st, VS_SP_NVIDIA));
    fx_done(&f);
}

static void test_limit_app_index(void **state)
{
    (void)state;
    struct vs_sp_job_limits l;
    memset(&l, 0, sizeof l);
    l.n_apps = 2;
    memcpy(l.apps[0].app_name, "a", 2);
    memcpy(l.apps[1].app_name, "b", 2);
    assert_int_equal(vs_sp_limits_app_index(&l, "b"), 1);
    assert_int_equal(vs_sp_limits_app_index(&l, "c"), -1);
    assert_int_equal(vs_sp_limits_app_index(&l, NULL), -1);
}

/* vs_sp_state_init leaves the per-app rows uncleared (the state's tail):
 * on a state full of old bytes, the app with limits starts at zero and an
 * index past the apps with limits has none, whatever is registered. */
static void test_app_rows_past_limits(void **state)
{
    (void)state;
    struct fx f;
    setup_gpu_host(&f);
    limit_set(&f, true)->cpu = (struct vs_sp_rsc_limit){.jobs = 1};
    memset(&f.st, 0xa5, sizeof f.st);
    f.st_live = false; /* junk, not a state to clean up */
    fx_start(&f, NULL, 0);
    assert_false(vs_sp_limits_exceeded(&f.st, 0, VS_SP_CPU));
    for (int i = 0; i < 3; i++)
        vs_sp_limits_register(&f.st, 5, VS_SP_CPU);
    assert_false(vs_sp_limits_exceeded(&f.st, 5, VS_SP_CPU));
    assert_false(vs_sp_limits_exceeded(&f.st, VS_SP_MAX_APP_LIMITS - 1, VS_SP_CPU));
    assert_false(vs_sp_limits_exceeded(&f.st, 0, VS_SP_CPU));
    vs_sp_limits_register(&f.st, 0, VS_SP_CPU);
    assert_true(vs_sp_limits_exceeded(&f.st, 0, VS_SP_CPU));
    fx_done(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_project_total),
        cmocka_unit_test(test_project_total_per_proc),
        cmocka_unit_test(test_project_cpu),
        cmocka_unit_test(test_project_cpu_per_proc),
        cmocka_unit_test(test_project_gpu),
        cmocka_unit_test(test_project_gpu_per_proc),
        cmocka_unit_test(test_app_total),
        cmocka_unit_test(test_app_total_per_proc),
        cmocka_unit_test(test_app_cpu),
        cmocka_unit_test(test_app_cpu_per_proc),
        cmocka_unit_test(test_app_gpu),
        cmocka_unit_test(test_app_gpu_per_proc),
        cmocka_unit_test(test_gpu_limit_per_type),
        cmocka_unit_test(test_limit_zero_is_none),
        cmocka_unit_test(test_unknown_app_counts_for_project),
        cmocka_unit_test(test_limit_app_index),
        cmocka_unit_test(test_app_rows_past_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
