/* Scheduler request -> policy inputs, on a request captured from the real
 * BOINC 7.20.5 client and on a hand-made GPU request. */
#include "vs_test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/policy_input.h"
#include "volsched/proto.h"
#include "volsched/server_policy.h"

static void read_all(const char *path, struct vs_buf *out)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        assert_int_equal(vs_buf_append(out, chunk, n), 0);
    fclose(f);
}

static void test_real_client_request(void **state)
{
    (void)state;
    struct vs_buf body;
    vs_buf_init(&body, 1 << 20);
    read_all(VS_SOURCE_DIR "/tests/data/sched_request_minimal.xml", &body);
    struct vs_arena arena;
    vs_arena_init(&arena, 65536);
    struct vs_proto_request rq;
    struct vs_proto_error perr;
    assert_int_equal(vs_proto_request_parse(body.data, body.len, &arena, &rq, &perr), 0);

    struct vs_sp_host h;
    struct vs_sp_request r;
    double now = 1795968708.0;
    assert_int_equal(vs_sp_input_from_request(&rq, 12, 3, now, 0, &arena, &h, &r), 0);
    assert_int_equal(h.id, 12);
    assert_int_equal(h.userid, 3);
    assert_string_equal(h.platform, "x86_64-pc-linux-gnu");
    assert_int_equal(h.n_alt_platforms, 1);
    assert_string_equal(h.alt_platforms[0], "i686-pc-linux-gnu");
    assert_int_equal(h.p_ncpus, 2);
    assert_int_equal(h.core_client_version, 72005);
    assert_true(fabs(h.m_nbytes - 25276026880.0) < 1);
    assert_true(fabs(h.ram_max_used_busy_frac - 0.9) < 1e-9);
    assert_true(fabs(h.disk_max_used_pct - 100) < 1e-9);
    assert_true(fabs(r.req_secs[VS_SP_CPU] - 528.292187) < 1e-6);
    assert_true(fabs(r.req_instances[VS_SP_CPU] - 1) < 1e-9);
    assert_int_equal(r.n_in_progress, 1);
    assert_string_equal(r.in_progress[0].app_name, "uppercase");
    assert_int_equal(r.in_progress[0].proc, VS_SP_CPU);
    assert_false(r.have_ip_results);

    /* Through the policy: the app's x86_64 version is chosen; with a
     * per-app limit of one job in progress, the job the client holds blocks
     * a second one. */
    struct vs_sp_config cfg;
    vs_sp_config_defaults(&cfg);
    struct vs_sp_app_version av = {.id = 1,
                                   .platform = "x86_64-pc-linux-gnu",
                                   .version_num = 101,
                                   .proc = VS_SP_CPU,
                                   .avg_ncpus = 1};
    struct vs_sp_app app = {
        .id = 1, .name = "uppercase", .limit_index = -1, .versions = &av, .n_versions = 1};
    struct vs_sp_job job = {.wu_id = 9,
                            .app = &app,
                            .rsc_fpops_est = 1e11,
                            .rsc_memory_bound = 1e8,
                            .rsc_disk_bound = 1e7,
                            .delay_bound = 86400};
    struct vs_sp_state st;
    struct vs_sp_verdict v;
    assert_int_equal(vs_sp_state_init(&st, &cfg, &h, &r, NULL, 0), 0);
    assert_int_equal(vs_sp_check_client(&cfg, &h, NULL), VS_SP_OK);
    assert_int_equal(vs_sp_check_job(&st, &job, &v), VS_SP_OK);
    vs_sp_state_cleanup(&st);
    cfg.limits.n_apps = 1;
    memcpy(cfg.limits.apps[0].app_name, "uppercase", sizeof "uppercase");
    cfg.limits.apps[0].total.jobs = 1;
    app.limit_index = 0;
    assert_int_equal(vs_sp_state_init(&st, &cfg, &h, &r, NULL, 0), 0);
    assert_int_equal(vs_sp_check_job(&st, &job, &v), VS_SP_JOB_LIMIT);
    vs_sp_state_cleanup(&st);

    vs_arena_cleanup(&arena);
    vs_buf_cleanup(&body);
}

static void test_gpu_request(void **state)
{
    (void)state;
    struct vs_proto_request rq;
    memset(&rq, 0, sizeof rq);
    struct vs_proto_coproc co[3] = {
        {.type = "NVIDIA",
         .count = 2,
         .peak_flops = 5e12,
         .req_secs = 100,
         .req_instances = 1,
         .estimated_delay = 50},
        {.type = "ATI", .count = 1, .peak_flops = 2e12},
        {.type = "Apple", .count = 1, .req_secs = 7},
    };
    struct vs_proto_client_app_version cav[1] = {
        {.app_name = "cudasum", .version_num = 3, .plan_class = "cuda_fermi"}};
    struct vs_proto_other_result other[3] = {
        {.name = "a", .app_version = 0},
        {.name = "b", .app_version = -1, .plan_class = "opencl_ati_101"},
        {.name = "c", .app_version = 7},
    };
    struct vs_proto_ip_result ip[2] = {
        {.name = "a", .report_deadline = 1000 + 5000, .time_remaining = 300, .ncudas = 1},
        {.name = "d", .report_deadline = 1000 + 7000, .time_remaining = 400}};
    rq.platform_name = "x86_64-pc-linux-gnu";
    rq.core_client_major_version = 8;
    rq.coprocs = co;
    rq.n_coprocs = 3;
    rq.app_versions = cav;
    rq.n_app_versions = 1;
    rq.other_results = other;
    rq.n_other_results = 3;
    rq.ip_results = ip;
    rq.n_ip_results = 2;
    rq.has_in_progress_results = true;
    rq.working_global_prefs = "<global_preferences><work_buf_min_days>0.5</work_buf_min_days>"
                              "<disk_min_free_gb>2</disk_min_free_gb></global_preferences>";

    struct vs_arena arena;
    vs_arena_init(&arena, 4096);
    struct vs_sp_host h;
    struct vs_sp_request r;
    assert_int_equal(vs_sp_input_from_request(&rq, 1, 1, 1000, 900, &arena, &h, &r), 0);
    assert_int_equal(h.core_client_version, 80000);
    assert_int_equal(h.gpu_count[VS_SP_NVIDIA], 2);
    assert_int_equal(h.gpu_count[VS_SP_AMD], 1);
    assert_int_equal(h.gpu_count[VS_SP_INTEL], 0);
    assert_true(h.gpu_peak_flops[VS_SP_NVIDIA] == 5e12);
    assert_true(r.req_secs[VS_SP_NVIDIA] == 100);
    assert_true(r.estimated_delay[VS_SP_NVIDIA] == 50);
    assert_true(r.req_secs[VS_SP_AMD] == 0);
    assert_true(h.work_buf_min == 43200);
    assert_true(h.disk_min_free_gb == 2);
    assert_int_equal(r.n_in_progress, 3);
    assert_string_equal(r.in_progress[0].app_name, "cudasum");
    assert_int_equal(r.in_progress[0].proc, VS_SP_NVIDIA);
    assert_null(r.in_progress[1].app_name);
    assert_int_equal(r.in_progress[1].proc, VS_SP_AMD);
    assert_null(r.in_progress[2].app_name); /* index out of range */
    assert_int_equal(r.in_progress[2].proc, VS_SP_CPU);
    assert_true(r.have_ip_results);
    assert_int_equal(r.n_ip_results, 1); /* the CUDA job is not in the CPU EDF */
    assert_true(r.ip_results[0].deadline == 7000);
    assert_true(r.ip_results[0].remaining == 400);
    assert_true(r.prev_rpc_time == 900);

    assert_int_equal(vs_sp_input_from_request(NULL, 1, 1, 0, 0, &arena, &h, &r), VS_EINVAL);
    assert_int_equal(vs_sp_proc_from_coproc_type("CUDA"), VS_SP_NVIDIA);
    assert_int_equal(vs_sp_proc_from_coproc_type("intel_gpu"), VS_SP_INTEL);
    assert_int_equal(vs_sp_proc_from_coproc_type(NULL), VS_SP_CPU);
    vs_arena_cleanup(&arena);
}

/* The preferences are read as XML, not scanned as text: a value in a
 * comment, in a <venue> or nested elsewhere does not count, an entity and
 * a CDATA section are decoded, the last of two values counts (BOINC's
 * parser), and a value with a tag name as prefix is another tag. */
static void test_prefs_as_xml(void **state)
{
    (void)state;
    struct vs_proto_request rq;
    memset(&rq, 0, sizeof(rq));
    rq.platform_name = "x86_64-pc-linux-gnu";
    rq.global_prefs = "<global_preferences>\n"
                      "<!-- <disk_max_used_gb>1</disk_max_used_gb> -->\n"
                      "<venue name=\"work\"><work_buf_min_days>9</work_buf_min_days></venue>\n"
                      "<day_prefs><disk_min_free_gb>7</disk_min_free_gb></day_prefs>\n"
                      "<disk_max_used_gb>&#53;0</disk_max_used_gb>\n"
                      "<disk_max_used_pct><![CDATA[80]]></disk_max_used_pct>\n"
                      "<work_buf_min_days>0.25</work_buf_min_days>\n"
                      "<work_buf_min_days>0.5</work_buf_min_days>\n"
                      "<ram_max_used_busy_pct_x>10</ram_max_used_busy_pct_x>\n"
                      "</global_preferences>\n";
    struct vs_arena arena;
    vs_arena_init(&arena, 4096);
    struct vs_sp_host h;
    struct vs_sp_request r;
    assert_int_equal(vs_sp_input_from_request(&rq, 1, 1, 1000, 900, &arena, &h, &r), 0);
    assert_true(h.disk_max_used_gb == 50);
    assert_true(h.disk_max_used_pct == 80);
    assert_true(h.disk_min_free_gb == 0);
    assert_true(h.work_buf_min == 43200);
    assert_true(h.ram_max_used_busy_frac == 0);
    vs_arena_cleanup(&arena);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_client_request),
        cmocka_unit_test(test_gpu_request),
        cmocka_unit_test(test_prefs_as_xml),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
