/* Seed 004's rules, one by one: each case sits exactly on a rule's edge and
 * just inside it. */
#include "vs_test.h"

#include <math.h>
#include <string.h>

#include "volsched/buf.h"
#include "volsched/server_policy.h"
#include "volsched/str.h"

#include "sp_fixture.h"

static char *message(struct fx *f, const struct vs_sp_verdict *v)
{
    static char out[512];
    struct vs_buf b;
    vs_buf_init(&b, 4096);
    assert_int_equal(vs_sp_verdict_message(&f->st, v, &b), 0);
    assert_int_equal(vs_strlcpy(out, vs_buf_str(&b), sizeof out), 0);
    vs_buf_cleanup(&b);
    return out;
}

/* ---- rule 1: app version for the platform, min_version ---- */

static void test_platform_primary_and_alternate(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    f.av[0].platform = "i686-pc-linux-gnu";
    fx_start(&f, NULL, 0);
    struct vs_sp_verdict v;
    assert_int_equal(fx_check(&f, &v), VS_SP_NO_APP_VERSION);
    assert_string_equal(message(&f, &v), "Upper Case is not available for your type of computer.");

    /* The same version through an alternate platform. */
    const char *alts[] = {"i686-pc-linux-gnu"};
    f.host.alt_platforms = alts;
    f.host.n_alt_platforms = 1;
    fx_start(&f, NULL, 0);
    assert_int_equal(fx_check(&f, &v), VS_SP_OK);
    assert_ptr_equal(v.av, &f.av[0]);

    /* Anonymous platform: alternates are ignored. */
    f.host.platform = "anonymous";
    fx_start(&f, NULL, 0);
    assert_int_equal(fx_check(&f, &v), VS_SP_NO_APP_VERSION);
    fx_done(&f);
}

static void test_min_version(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    f.app.min_version = 711;
    fx_start(&f, NULL, 0);
    struct vs_sp_verdict v;
    assert_int_equal(fx_check(&f, &v), VS_SP_OLD_APP_VERSION);
    assert_int_equal(v.limit, 711);
    f.app.min_version = 710; /* exactly the version: allowed */
    fx_start(&f, NULL, 0);   /* apps are fixed for a state's life */
    assert_int_equal(fx_check(&f, &v), VS_SP_OK);
    f.app.min_version = 0; /* zero: no minimum */
    fx_start(&f, NULL, 0);
    assert_int_equal(fx_check(&f, &v), VS_SP_OK);
    fx_done(&f);
}

static void test_version_choice_fastest_and_pinned(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    f.av[1] = f.av[0];
    f.av[1].id = 102;
    f.av[1].version_num = 720;
    f.av[1].plan_class = "mt";
    f.av[1].avg_ncpus = 4;
    f.app.n_versions = 2;
    fx_start(&f, NULL, 0);
    struct vs_sp_verdict v;
    assert_int_equal(fx_check(&f, &v), VS_SP_OK);
    assert_int_equal(v.av->id, 102); /* 4 CPUs beat 1 */
    assert_true(fabs(v.est_duration - 300.0) < 1e-6);
    f.job.app_version_num = 710;
    assert_int_equal(fx_check(&f, &v), VS_SP_OK);
    assert_int_equal(v.av->id, 101);
    f.job.app_version_num = 999;
    assert_int_equal(fx_check(&f, &v), VS_SP_NO_APP_VERSION);
    fx_done(&f);
}

static void test_version_core_client_bounds(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    f.av[0].min_core_version = 72006;
    fx_start(&f, NULL, 0);
    assert_int_equal(fx_check(&f, NULL), VS_SP_NO_APP_VERSION);
    f.av[0].min_core_version = 72005;
    fx_start(&f, NULL, 0);
    assert_int_equal(fx_check(&f, NULL), VS_SP_OK);
    f.av[0].max_core_version = 72004;
    fx_start(&f, NULL, 0);
    assert_int_equal(fx_check(&f, NULL), VS_SP_NO_APP_VERSION);
    f.av[0].max_core_version = 72005;
    fx_start(&f, NULL, 0);
    assert_int_equal(fx_check(&f, NULL), VS_SP_OK);
    fx_done(&f);
}

static void test_version_choice_redone_after_commit(void **state)
{
    (void)state;
    /* The choice is memoized per app; a send that uses up the CPU request
     * must make the next job of the same app look again. */
    struct fx f;
    fx_init(&f);
    f.req.req_secs[VS_SP_CPU] = 1;
    f.req.req_instances[VS_SP_CPU] = 0;
    fx_start(&f, NULL, 0);
    assert_int_equal(fx_send(&f), VS_SP_OK);
    f.job.wu_id++;
    assert_int_equal(fx_check(&f, NULL), VS_SP_NO_WORK_WANTED);
    fx_done(&f);
}

static void test_plan_class_proc(void **state)
{
    (void)state;
    assert_int_equal(vs_sp_plan_class_proc(NULL), VS_SP_CPU);
    assert_int_equal(vs_sp_plan_class_proc(""), VS_SP_CPU);
    assert_int_equal(vs_sp_plan_class_proc("mt"), VS_SP_CPU);
    assert_int_equal(vs_sp_plan_class_proc("sse2"), VS_SP_CPU);
    assert_int_equal(vs_sp_plan_class_proc("cuda_fermi"), VS_SP_NVIDIA);
    assert_int_equal(vs_sp_plan_class_proc("opencl_nvidia_101"), VS_SP_NVIDIA);
    assert_int_equal(vs_sp_plan_class_proc("ati14"), VS_SP_AMD);
    assert_int_equal(vs_sp_plan_class_proc("opencl_ati_101"), VS_SP_AMD);
    assert_int_equal(vs_sp_plan_class_proc("opencl_amd"), VS_SP_AMD);
    assert_int_equal(vs_sp_plan_class_proc("opencl_intel_gpu_102"), VS_SP_INTEL);
    assert_int_equal(vs_sp_plan_class_proc("intel_gpu"), VS_SP_INTEL);
}

static void test_gpu_version_needs_that_gpu(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    f.av[0].plan_class = "cuda_fermi";
    f.av[0].proc = vs_sp_plan_class_proc(f.av[0].plan_class);
    f.av[0].gpu_usage = 1;
    f.av[0].avg_ncpus = 0.1;
    f.host.gpu_count[VS_SP_AMD] = 1; /* the wrong vendor */
    f.req.req_secs[VS_SP_AMD] = 3600;
    fx_start(&f, NULL, 0);
    struct vs_sp_verdict v;
    assert_int_equal(fx_check(&f, &v), VS_SP_NO_GPU);
    assert_string_equal(message(&f, &v),
                        "Upper Case needs an NVIDIA GPU; none was found on this computer.");
    f.host.gpu_count[VS_SP_NVIDIA] = 1;
    fx_start(&f, NULL, 0);
    /* Host has it but the client asked for no NVIDIA work. */
    assert_int_equal(fx_check(&f, &v), VS_SP_NO_WORK_WANTED);
    f.req.req_secs[VS_SP_NVIDIA] = 3600;
    fx_start(&f, NULL, 0);
    assert_int_equal(fx_check(&f, &v), VS_SP_OK);
    assert_int_equal(v.proc, VS_SP_NVIDIA);
    fx_done(&f);
}

/* ---- rule 2: memory and disk ---- */

static void test_memory_bound(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    f.host.m_nbytes = 1e9;
    f.host.ram_max_used_busy_frac = 0.5;
    f.host.ram_max_used_idle_frac = 0.9;
    fx_start(&f, NULL, 0);
    assert_true(fabs(vs_sp_usable_ram(&f.host) - 0.9e9) < 1);
    f.job.rsc_memory_bound = 0.9e9; /* exactly usable */
    struct vs_sp_verdict v;
    assert_int_equal(fx_check(&f, &v), VS_SP_OK);
    f.job.rsc_memory_bound = 0.9e9 + 1;
    assert_int_equal(fx_check(&f, &v), VS_SP_MEMORY);
    assert_string_equal(message(&f, &v),
                        "Upper Case needs 900.00 MB RAM but only 900.00 MB is available for use.");
    f.job.rsc_memory_bound = 2e9;
    assert_int_equal(fx_check(&f, &v), VS_SP_MEMORY);
    assert_string_equal(message(&f, &v),
                        "Upper Case needs 2000.00 MB RAM but only 900.00 MB is available for use.");
    fx_done(&f);
}

static void test_memory_unknown_is_64mb(void **state)
{
    (void)state;
    struct vs_sp_host h;
    memset(&h, 0, sizeof h);
    assert_true(fabs(vs_sp_usable_ram(&h) - 64 * 1048576.0) < 1);
}

static void test_disk_allowance(void **state)
{
    (void)state;
    struct vs_sp_host h;
    memset(&h, 0, sizeof h);
    assert_true(vs_sp_disk_allowed(&h) == VS_SP_DISK_UNKNOWN); /* nothing reported */
    h.d_total = 100e9;
    h.d_free = 50e9;
    assert_true(fabs(vs_sp_disk_allowed(&h) - 50e9) < 1);
    h.d_boinc_used_total = 2e9;
    h.disk_max_used_gb = 10;
    assert_true(fabs(vs_sp_disk_allowed(&h) - 8e9) < 1);
    h.disk_max_used_pct = 5; /* 5 GB - 2 GB used */
    assert_true(fabs(vs_sp_disk_allowed(&h) - 3e9) < 1);
    h.disk_min_free_gb = 48; /* 50 - 48 */
    assert_true(fabs(vs_sp_disk_allowed(&h) - 2e9) < 1);
}

static void test_disk_bound_and_use(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    f.host.d_free = 3e9;
    fx_start(&f, NULL, 0);
    f.job.rsc_disk_bound = 3e9 + 1;
    struct vs_sp_verdict v;
    assert_int_equal(fx_check(&f, &v), VS_SP_DISK);
    assert_string_equal(message(&f, &v), "Upper Case needs 0.00 MB more disk space. You currently "
                                         "have 3000.00 MB available and it needs 3000.00 MB.");
    f.job.rsc_disk_bound = 1.5e9;
    assert_int_equal(fx_send(&f), VS_SP_OK);
    f.job.wu_id++;
    assert_int_equal(fx_send(&f), VS_SP_OK); /* exactly the rest */
    f.job.wu_id++;
    assert_int_equal(fx_check(&f, &v), VS_SP_DISK);
    fx_done(&f);
}

/* ---- rule 3: deadline (crude form; EDF in test_server_deadline) ---- */

static void test_deadline_bound(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    f.host.on_frac = 0.5;
    f.host.active_frac = 0.5; /* 1200 s of work takes 4800 s of wall time */
    f.req.estimated_delay[VS_SP_CPU] = 200;
    fx_start(&f, NULL, 0);
    struct vs_sp_verdict v;
    f.job.delay_bound = 5000; /* 200 + 4800: exactly on time */
    assert_int_equal(fx_check(&f, &v), VS_SP_OK);
    assert_true(fabs(v.est_duration - 4800) < 1e-6);
    f.job.delay_bound = 4999;
    assert_int_equal(fx_check(&f, &v), VS_SP_DEADLINE);
    assert_string_equal(message(&f, &v), "Tasks won't finish in time: BOINC runs 50.0% of the "
                                         "time; computation is enabled 50.0% of that");
    fx_done(&f);
}

static void test_deadline_empty_queue_exemption(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    f.job.delay_bound = 1199; /* 1200 s job, queue empty */
    fx_start(&f, NULL, 0);
    /* Seed 004's rule holds even with an empty queue (the default). */
    assert_int_equal(fx_check(&f, NULL), VS_SP_DEADLINE);
    f.cfg.deadline_exempt_empty_queue = true;
    fx_start(&f, NULL, 0);
    assert_int_equal(fx_send(&f), VS_SP_OK);
    /* The queue is no longer empty: the next one is checked. */
    f.job.wu_id++;
    assert_int_equal(fx_check(&f, NULL), VS_SP_DEADLINE);
    f.cfg.ignore_delay_bound = true;
    assert_int_equal(fx_check(&f, NULL), VS_SP_OK);
    fx_done(&f);
}

static void test_deadline_queue_grows_with_sends(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    f.host.p_ncpus = 1;
    f.job.delay_bound = 3600; /* three 1200 s jobs fit on one CPU */
    fx_start(&f, NULL, 0);
    for (int i = 0; i < 3; i++) {
        f.job.wu_id = 1000 + i;
        assert_int_equal(fx_send(&f), VS_SP_OK);
    }
    f.job.wu_id = 1003;
    assert_int_equal(fx_check(&f, NULL), VS_SP_DEADLINE);
    fx_done(&f);
}

/* ---- rule 4: one result per user / host per WU ---- */

static void test_one_result_per_user_two_hosts(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    f.cfg.one_result_per_user_per_wu = true;
    /* Host A (17) of user 5 gets a result of WU 1000. */
    fx_start(&f, NULL, 0);
    assert_int_equal(fx_send(&f), VS_SP_OK);
    /* The store now records user 5 / host 17 for WU 1000. Host B (18) of
     * the same user asks for another result of that WU. */
    int64_t users[] = {9, 5}, hosts[] = {3, 17};
    f.job.result_userids = users;
    f.job.n_result_userids = 2;
    f.job.result_hostids = hosts;
    f.job.n_result_hostids = 2;
    f.job.result_id = 2001;
    f.host.id = 18;
    fx_start(&f, NULL, 0);
    struct vs_sp_verdict v;
    assert_int_equal(fx_check(&f, &v), VS_SP_DUP_USER);
    assert_string_equal(message(&f, &v), "This project sends each user at most one task of a "
                                         "workunit; your account already has the tasks that are "
                                         "available");
    /* Another user's host: allowed. */
    f.host.userid = 6;
    fx_start(&f, NULL, 0);
    assert_int_equal(fx_check(&f, &v), VS_SP_OK);
    /* Flag off: the same user's second host may have it too. */
    f.host.userid = 5;
    f.cfg.one_result_per_user_per_wu = false;
    fx_start(&f, NULL, 0);
    assert_int_equal(fx_check(&f, &v), VS_SP_OK);
    fx_done(&f);
}

static void test_one_result_per_host(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    f.cfg.one_result_per_host_per_wu = true;
    int64_t hosts[] = {17};
    f.job.result_hostids = hosts;
    f.job.n_result_hostids = 1;
    fx_start(&f, NULL, 0);
    assert_int_equal(fx_check(&f, NULL), VS_SP_DUP_HOST);
    hosts[0] = 18; /* same user's other host holds it: per-host rule allows */
    assert_int_equal(fx_send(&f), VS_SP_OK);
    /* Two results of one WU in the same reply go to the same host. */
    f.job.result_id = 2001;
    assert_int_equal(fx_check(&f, NULL), VS_SP_DUP_HOST);
    f.job.wu_id = 1001;
    assert_int_equal(fx_check(&f, NULL), VS_SP_OK);
    fx_done(&f);
}

/* ---- rule 5: daily quota ---- */

static void test_quota_scaled_by_cpus(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    f.cfg.daily_result_quota = 2; /* x 4 CPUs = 8 a day */
    struct vs_sp_hav hav = {.app_version_id = 101, .max_jobs_per_day = 2, .n_jobs_today = 7};
    fx_start(&f, &hav, 1);
    assert_int_equal(vs_sp_quota_limit(&f.cfg, &f.host, &hav, VS_SP_CPU, 4), 8);
    assert_int_equal(fx_send(&f), VS_SP_OK); /* the 8th */
    f.job.wu_id++;
    struct vs_sp_verdict v;
    assert_int_equal(fx_check(&f, &v), VS_SP_DAILY_QUOTA);
    assert_string_equal(message(&f, &v), "This computer has finished a daily quota of 8 tasks");
    /* The state hands back the updated row for the store. */
    assert_int_equal(f.st.n_havs, 1);
    assert_int_equal(f.st.havs[0].n_jobs_today, 8);
    fx_done(&f);
}

static void test_quota_gpu_and_punished(void **state)
{
    (void)state;
    struct vs_sp_config c;
    vs_sp_config_defaults(&c);
    c.daily_result_quota = 10;
    c.gpu_multiplier = 8;
    struct vs_sp_host h;
    memset(&h, 0, sizeof h);
    h.gpu_count[VS_SP_NVIDIA] = 2;
    struct vs_sp_hav hav = {.max_jobs_per_day = 10};
    assert_int_equal(vs_sp_quota_limit(&c, &h, &hav, VS_SP_NVIDIA, 4), 160);
    hav.max_jobs_per_day = 1; /* one a day is never scaled */
    assert_int_equal(vs_sp_quota_limit(&c, &h, &hav, VS_SP_CPU, 4), 1);
    hav.max_jobs_per_day = 0; /* unset: the project's quota */
    assert_int_equal(vs_sp_quota_limit(&c, &h, &hav, VS_SP_CPU, 4), 40);
    c.daily_result_quota = 0; /* no quota */
    assert_int_equal(vs_sp_quota_limit(&c, &h, &hav, VS_SP_CPU, 4), 0);
}

static void test_quota_adaptation(void **state)
{
    (void)state;
    struct vs_sp_hav h = {.max_jobs_per_day = 0, .consecutive_valid = 3};
    vs_sp_hav_on_error(&h, 8); /* unset -> 8 -> 7 */
    assert_int_equal(h.max_jobs_per_day, 7);
    assert_int_equal(h.consecutive_valid, 0);
    for (int i = 0; i < 10; i++)
        vs_sp_hav_on_timeout(&h, 8);
    assert_int_equal(h.max_jobs_per_day, 1); /* never below one */
    vs_sp_hav_on_success(&h, 8);
    assert_int_equal(h.max_jobs_per_day, 2);
    vs_sp_hav_on_success(&h, 8);
    vs_sp_hav_on_success(&h, 8);
    assert_int_equal(h.max_jobs_per_day, 8);
    vs_sp_hav_on_success(&h, 8); /* capped at the quota */
    assert_int_equal(h.max_jobs_per_day, 8);
    vs_sp_hav_on_valid(&h, 8); /* the validator's +1 is not capped */
    assert_int_equal(h.max_jobs_per_day, 9);
    assert_int_equal(h.consecutive_valid, 1);
    vs_sp_hav_on_invalid(&h, 8);
    assert_int_equal(h.max_jobs_per_day, 8);
    vs_sp_hav_on_invalid(&h, 8); /* only lowered while above the quota */
    assert_int_equal(h.max_jobs_per_day, 8);
    vs_sp_hav_on_error(&h, 8);
    assert_int_equal(h.max_jobs_per_day, 7);
}

/* The second of the UTC day at which this host's quota day starts. */
static double host_boundary(int64_t hostid, double day_start)
{
    for (double t = day_start + 1; t <= day_start + 86400; t++)
        if (vs_sp_quota_day(hostid, t) != vs_sp_quota_day(hostid, t - 1))
            return t;
    fail_msg("no day boundary for host %lld", (long long)hostid);
    return 0;
}

static void test_quota_day_boundary(void **state)
{
    (void)state;
    double day0 = 20000 * 86400.0;
    double b = host_boundary(17, day0);
    /* Boundaries are spread: not all hosts roll over at midnight UTC. */
    int distinct = 0;
    for (int64_t h = 1; h <= 10; h++)
        if (host_boundary(h, day0) != b)
            distinct++;
    assert_true(distinct >= 8);
    assert_false(vs_sp_quota_new_day(17, b - 3600, b - 1));
    assert_true(vs_sp_quota_new_day(17, b - 1, b));
    assert_false(vs_sp_quota_new_day(17, b, b + 86399));
    assert_true(vs_sp_quota_new_day(17, b, b + 86400));

    /* A simulated day: the quota runs out before the boundary and is back
     * right after it. */
    struct fx f;
    fx_init(&f);
    f.cfg.daily_result_quota = 1;
    f.host.p_ncpus = 2;
    struct vs_sp_hav hav = {.app_version_id = 101, .max_jobs_per_day = 1, .n_jobs_today = 0};
    f.req.prev_rpc_time = 0;
    f.req.now = b - 7200;
    fx_start(&f, &hav, 1);
    assert_int_equal(fx_send(&f), VS_SP_OK);
    hav = f.st.havs[0]; /* what the server would store */
    f.req.prev_rpc_time = f.req.now;
    f.req.now = b - 1; /* same quota day */
    fx_start(&f, &hav, 1);
    f.job.wu_id++;
    assert_int_equal(fx_check(&f, NULL), VS_SP_DAILY_QUOTA);
    f.req.prev_rpc_time = b - 1;
    f.req.now = b; /* the host's new day */
    fx_start(&f, &hav, 1);
    assert_true(f.st.new_day);
    assert_int_equal(fx_send(&f), VS_SP_OK);
    fx_done(&f);
}

/* ---- rule 6: results per RPC ---- */

static void test_max_jobs_per_rpc(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    f.cfg.max_wus_to_send = 2; /* x 4 CPUs */
    f.job.rsc_fpops_est = 3e9; /* 1 s jobs: the request is never filled */
    fx_start(&f, NULL, 0);
    assert_int_equal(f.st.max_jobs_per_rpc, 8);
    for (int i = 0; i < 8; i++) {
        f.job.wu_id = 1000 + i;
        assert_int_equal(fx_send(&f), VS_SP_OK);
    }
    f.job.wu_id = 2000;
    assert_int_equal(fx_check(&f, NULL), VS_SP_RPC_LIMIT);
    assert_false(vs_sp_work_needed(&f.st));

    f.host.gpu_count[VS_SP_NVIDIA] = 1;
    f.cfg.gpu_multiplier = 3;
    assert_int_equal(vs_sp_max_jobs_per_rpc(&f.cfg, &f.host), 2 * (4 + 3));
    f.host.p_ncpus = 200; /* max_ncpus caps the scaling */
    assert_int_equal(vs_sp_max_jobs_per_rpc(&f.cfg, &f.host), 2 * (64 + 3));
    fx_done(&f);
}

/* ---- rule 7: homogeneous redundancy ---- */

static void test_hr_classes(void **state)
{
    (void)state;
    struct vs_sp_host h;
    memset(&h, 0, sizeof h);
    h.os_name = "Linux Ubuntu";
    h.p_vendor = "GenuineIntel";
    h.p_model = "Intel(R) Core(TM) i5";
    assert_int_equal(vs_sp_hr_class(&h, 2), 256 + 2);
    assert_int_equal(vs_sp_hr_class(&h, 1), 256 + 21);
    h.p_vendor = "AuthenticAMD";
    h.p_model = "AMD Opteron(tm) Processor 6172";
    assert_int_equal(vs_sp_hr_class(&h, 2), 256 + 2); /* coarse: AMD with Intel */
    assert_int_equal(vs_sp_hr_class(&h, 1), 256 + 8);
    h.os_name = "Microsoft Windows 10";
    assert_int_equal(vs_sp_hr_class(&h, 2), 384 + 2);
    h.os_name = "Haiku";
    assert_int_equal(vs_sp_hr_class(&h, 1), 0);
    assert_int_equal(vs_sp_hr_class(&h, 2), 0);
    h.os_name = "FreeBSD"; /* fine knows it, coarse does not */
    assert_int_equal(vs_sp_hr_class(&h, 1), 640 + 8);
    assert_int_equal(vs_sp_hr_class(&h, 2), 0);
    h.os_name = "Darwin";
    h.p_vendor = "Apple";
    h.p_model = "Apple M1";
    assert_int_equal(vs_sp_hr_class(&h, 2), 0);
    h.p_vendor = "GenuineIntel";
    assert_int_equal(vs_sp_hr_class(&h, 2), 512 + 2);
}

static void test_hr_commitment(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    f.cfg.homogeneous_redundancy = 2;
    fx_start(&f, NULL, 0);
    struct vs_sp_verdict v;
    assert_int_equal(fx_check(&f, &v), VS_SP_OK);
    assert_int_equal(v.hr_class, 258); /* the class to commit the WU to */
    f.job.hr_class = 258;
    assert_int_equal(fx_check(&f, &v), VS_SP_OK);
    f.job.hr_class = 386; /* committed to Windows/x86 */
    assert_int_equal(fx_check(&f, &v), VS_SP_HR_CLASS);
    assert_string_equal(message(&f, &v), "Tasks are committed to other platforms");
    /* The app's own HR type wins over the project's. */
    f.app.hr_type = 1;
    f.job.hr_class = 256 + 21;
    assert_int_equal(fx_check(&f, &v), VS_SP_OK);
    f.host.os_name = "Haiku";
    fx_start(&f, NULL, 0);
    assert_int_equal(fx_check(&f, &v), VS_SP_HR_UNKNOWN);
    assert_string_equal(message(&f, &v), "Your computer type is not supported by this project");
    f.app.hr_type = 0;
    f.cfg.homogeneous_redundancy = 0; /* HR off: any host */
    f.job.hr_class = 386;
    assert_int_equal(fx_check(&f, &v), VS_SP_OK);
    fx_done(&f);
}

/* ---- rule 8: core client version ---- */

static void test_client_version(void **state)
{
    (void)state;
    struct vs_sp_config c;
    vs_sp_config_defaults(&c);
    struct vs_sp_host h;
    memset(&h, 0, sizeof h);
    assert_int_equal(vs_sp_version_encode(7, 20, 5), 72005);
    h.core_client_version = vs_sp_version_encode(6, 99, 99);
    struct vs_sp_verdict v;
    assert_int_equal(vs_sp_check_client(&c, &h, &v), VS_SP_CLIENT_VERSION);
    struct vs_buf b;
    vs_buf_init(&b, 1024);
    assert_int_equal(vs_sp_verdict_message(NULL, &v, &b), 0);
    assert_string_equal(vs_buf_str(&b), "Your BOINC client 6.99.99 is too old: this project "
                                        "needs version 7.0.0 or later. Please install the "
                                        "current version of BOINC.");
    vs_buf_cleanup(&b);
    h.core_client_version = vs_sp_version_encode(7, 0, 0);
    assert_int_equal(vs_sp_check_client(&c, &h, &v), VS_SP_OK);
    c.min_core_client_version = 72006;
    h.core_client_version = 72005;
    assert_int_equal(vs_sp_check_client(&c, &h, NULL), VS_SP_CLIENT_VERSION);
    c.min_core_client_version = 0; /* no gate */
    h.core_client_version = 0;
    assert_int_equal(vs_sp_check_client(&c, &h, NULL), VS_SP_OK);
}

static void test_reason_names(void **state)
{
    (void)state;
    for (int r = 0; r < VS_SP__NREASONS; r++) {
        const char *n = vs_sp_reason_name((enum vs_sp_reason)r);
        assert_non_null(n);
        assert_string_not_equal(n, "unknown");
    }
    assert_string_equal(vs_sp_reason_name(VS_SP__NREASONS), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_platform_primary_and_alternate),
        cmocka_unit_test(test_min_version),
        cmocka_unit_test(test_version_choice_fastest_and_pinned),
        cmocka_unit_test(test_version_core_client_bounds),
        cmocka_unit_test(test_version_choice_redone_after_commit),
        cmocka_unit_test(test_plan_class_proc),
        cmocka_unit_test(test_gpu_version_needs_that_gpu),
        cmocka_unit_test(test_memory_bound),
        cmocka_unit_test(test_memory_unknown_is_64mb),
        cmocka_unit_test(test_disk_allowance),
        cmocka_unit_test(test_disk_bound_and_use),
        cmocka_unit_test(test_deadline_bound),
        cmocka_unit_test(test_deadline_empty_queue_exemption),
        cmocka_unit_test(test_deadline_queue_grows_with_sends),
        cmocka_unit_test(test_one_result_per_user_two_hosts),
        cmocka_unit_test(test_one_result_per_host),
        cmocka_unit_test(test_quota_scaled_by_cpus),
        cmocka_unit_test(test_quota_gpu_and_punished),
        cmocka_unit_test(test_quota_adaptation),
        cmocka_unit_test(test_quota_day_boundary),
        cmocka_unit_test(test_max_jobs_per_rpc),
        cmocka_unit_test(test_hr_classes),
        cmocka_unit_test(test_hr_commitment),
        cmocka_unit_test(test_client_version),
        cmocka_unit_test(test_reason_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
