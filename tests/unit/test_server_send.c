/* Rule 9 (fill the request) and the no-work explanation. */
#include "vs_test.h"

#include <math.h>
#include <string.h>

#include "volsched/buf.h"
#include "volsched/server_policy.h"

#include "sp_fixture.h"

static int send_until_filled(struct fx *f, int max)
{
    int n = 0;
    while (n < max && vs_sp_work_needed(&f->st)) {
        f->job.wu_id = 5000 + n;
        if (fx_send(f) != VS_SP_OK)
            break;
        n++;
    }
    return n;
}

static void test_fill_seconds(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    f.req.req_secs[VS_SP_CPU] = 3600; /* three 1200 s jobs */
    f.req.req_instances[VS_SP_CPU] = 0;
    fx_start(&f, NULL, 0);
    assert_int_equal(send_until_filled(&f, 100), 3);
    assert_false(vs_sp_work_needed(&f.st));
    /* Four CPUs share the queue: 3 x 1200 / 4. */
    assert_true(fabs(f.st.est_delay[VS_SP_CPU] - 900) < 1e-6);

    f.req.req_secs[VS_SP_CPU] = 3601; /* one second more needs a 4th */
    fx_start(&f, NULL, 0);
    assert_int_equal(send_until_filled(&f, 100), 4);
    fx_done(&f);
}

static void test_fill_instances(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    f.req.req_secs[VS_SP_CPU] = 3600;
    f.req.req_instances[VS_SP_CPU] = 4; /* four idle CPUs: one job each */
    fx_start(&f, NULL, 0);
    assert_int_equal(send_until_filled(&f, 100), 4);
    fx_done(&f);
}

static void test_fill_counts_cpus_used(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    f.av[0].plan_class = "mt";
    f.av[0].avg_ncpus = 4; /* 300 s of wall time, 1200 CPU-seconds */
    f.req.req_secs[VS_SP_CPU] = 3600;
    f.req.req_instances[VS_SP_CPU] = 0;
    fx_start(&f, NULL, 0);
    assert_int_equal(send_until_filled(&f, 100), 3);
    fx_done(&f);
}

static void test_fill_old_client(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    memset(f.req.req_secs, 0, sizeof f.req.req_secs);
    memset(f.req.req_instances, 0, sizeof f.req.req_instances);
    f.req.work_req_seconds = 2400;
    fx_start(&f, NULL, 0);
    assert_false(f.st.rsc_spec_request);
    assert_int_equal(send_until_filled(&f, 100), 2);
    fx_done(&f);
}

static void test_fill_gpu_only(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    f.av[1] = f.av[0];
    f.av[1].id = 102;
    f.av[1].plan_class = "opencl_nvidia_101";
    f.av[1].proc = vs_sp_plan_class_proc(f.av[1].plan_class);
    f.av[1].gpu_usage = 1;
    f.app.n_versions = 2;
    f.host.gpu_count[VS_SP_NVIDIA] = 1;
    f.host.gpu_peak_flops[VS_SP_NVIDIA] = 3e10; /* 120 s a job */
    f.req.req_secs[VS_SP_CPU] = 0;
    f.req.req_instances[VS_SP_CPU] = 0;
    f.req.req_secs[VS_SP_NVIDIA] = 2400;
    fx_start(&f, NULL, 0);
    assert_int_equal(send_until_filled(&f, 100), 20);
    assert_true(fabs(f.st.req_secs[VS_SP_CPU]) < 1e-9);
    assert_int_equal(f.st.n_proj[VS_SP_NVIDIA], 20);
    assert_int_equal(f.st.n_proj[VS_SP_CPU], 0);
    fx_done(&f);
}

static void test_nothing_requested(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    memset(f.req.req_secs, 0, sizeof f.req.req_secs);
    memset(f.req.req_instances, 0, sizeof f.req.req_instances);
    fx_start(&f, NULL, 0);
    assert_false(vs_sp_work_needed(&f.st));
    assert_int_equal(fx_check(&f, NULL), VS_SP_NO_WORK_WANTED);
    /* A GPU the host does not have cannot be asked for. */
    f.req.req_secs[VS_SP_AMD] = 100;
    fx_start(&f, NULL, 0);
    assert_false(vs_sp_work_needed(&f.st));
    fx_done(&f);
}

static void test_explain(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    f.host.m_nbytes = 1e9;
    f.host.on_frac = 0.8;
    f.host.active_frac = 0.5;
    fx_start(&f, NULL, 0);
    struct vs_buf b;
    vs_buf_init(&b, 4096);
    f.job.rsc_memory_bound = 2e9;
    assert_int_equal(fx_check(&f, NULL), VS_SP_MEMORY);
    f.job.rsc_memory_bound = 3e9; /* a second memory refusal: one message */
    assert_int_equal(fx_check(&f, NULL), VS_SP_MEMORY);
    f.job.rsc_memory_bound = 1e8;
    f.job.delay_bound = 100;
    assert_int_equal(fx_check(&f, NULL), VS_SP_DEADLINE);
    assert_int_equal(f.st.n_refused[VS_SP_MEMORY], 2);
    assert_int_equal(vs_sp_explain(&f.st, &b), 0);
    assert_string_equal(vs_buf_str(&b),
                        "No tasks sent\n"
                        "Upper Case needs 2000.00 MB RAM but only 1000.00 MB is available for "
                        "use.\n"
                        "Tasks won't finish in time: BOINC runs 80.0% of the time; computation "
                        "is enabled 50.0% of that\n");
    assert_int_equal(vs_sp_explain_delay(&f.st), 0);
    /* Once something is sent there is nothing to explain. */
    f.job.delay_bound = 7 * 86400.0;
    assert_int_equal(fx_send(&f), VS_SP_OK);
    vs_buf_reset(&b);
    assert_int_equal(vs_sp_explain(&f.st, &b), 0);
    assert_string_equal(vs_buf_str(&b), "");
    vs_buf_cleanup(&b);
    fx_done(&f);
}

static void test_explain_delay(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    f.cfg.homogeneous_redundancy = 1;
    f.host.os_name = "Plan 9";
    fx_start(&f, NULL, 0);
    assert_int_equal(fx_check(&f, NULL), VS_SP_HR_UNKNOWN);
    assert_int_equal(vs_sp_explain_delay(&f.st), 86400);
    assert_int_equal(vs_sp_reason_delay(VS_SP_CLIENT_VERSION), 86400);
    assert_int_equal(vs_sp_reason_delay(VS_SP_DAILY_QUOTA), 0);
    fx_done(&f);
}

static void test_state_init_rejects_bad_input(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    struct vs_sp_state st;
    assert_int_equal(vs_sp_state_init(NULL, &f.cfg, &f.host, &f.req, NULL, 0), VS_EINVAL);
    assert_int_equal(vs_sp_state_init(&st, &f.cfg, &f.host, &f.req, NULL, -1), VS_EINVAL);
    assert_int_equal(vs_sp_state_init(&st, &f.cfg, &f.host, &f.req, NULL, 2), VS_EINVAL);
    f.req.n_in_progress = 3; /* no array */
    assert_int_equal(vs_sp_state_init(&st, &f.cfg, &f.host, &f.req, NULL, 0), VS_EINVAL);
}

static void test_hav_rows_returned(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    f.cfg.daily_result_quota = 5;
    struct vs_sp_hav other = {.app_version_id = 55, .max_jobs_per_day = 0, .n_jobs_today = 3};
    fx_start(&f, &other, 1);
    assert_int_equal(f.st.havs[0].max_jobs_per_day, 5); /* unset -> quota */
    assert_int_equal(fx_send(&f), VS_SP_OK);
    f.job.wu_id++;
    assert_int_equal(fx_send(&f), VS_SP_OK);
    /* A new row for version 101, created on the first send. */
    assert_int_equal(f.st.n_havs, 2);
    assert_int_equal(f.st.havs[1].app_version_id, 101);
    assert_int_equal(f.st.havs[1].n_jobs_today, 2);
    assert_int_equal(f.st.havs[0].n_jobs_today, 3);
    fx_done(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fill_seconds),
        cmocka_unit_test(test_fill_instances),
        cmocka_unit_test(test_fill_counts_cpus_used),
        cmocka_unit_test(test_fill_old_client),
        cmocka_unit_test(test_fill_gpu_only),
        cmocka_unit_test(test_nothing_requested),
        cmocka_unit_test(test_explain),
        cmocka_unit_test(test_explain_delay),
        cmocka_unit_test(test_state_init_rejects_bad_input),
        cmocka_unit_test(test_hav_rows_returned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
