/*
 * The scan rule (vs_sp_scan_stops, src/policy/server/send.c): which
 * refusals end a scan of candidate jobs, given what may differ between the
 * candidates. Its table, and that it is sound: when the candidates are all
 * alike, every rule it stops at goes on refusing every further candidate
 * (so a scan that stops sends what a scan that skips would), while a
 * refusal it skips can be followed by a job that passes.
 */
#include "vs_test.h"

#include <string.h>

#include "volsched/server_policy.h"

#include "sp_fixture.h"

#define ALIKE 0u

static void test_table(void **state)
{
    (void)state;
    /* The host's version and the reply's cap end any scan. */
    for (unsigned v = 0; v <= VS_SP_VARIES_ALL; v++) {
        assert_true(vs_sp_scan_stops(VS_SP_CLIENT_VERSION, v));
        assert_true(vs_sp_scan_stops(VS_SP_RPC_LIMIT, v));
        /* A workunit's own refusals never do. */
        assert_false(vs_sp_scan_stops(VS_SP_DUP_USER, v));
        assert_false(vs_sp_scan_stops(VS_SP_DUP_HOST, v));
        assert_false(vs_sp_scan_stops(VS_SP_HR_CLASS, v));
        /* Not refusals. */
        assert_false(vs_sp_scan_stops(VS_SP_OK, v));
        assert_false(vs_sp_scan_stops(VS_SP__NREASONS, v));
        assert_false(vs_sp_scan_stops((enum vs_sp_reason)99, v));
    }
    const enum vs_sp_reason app_rules[] = {
        VS_SP_NO_WORK_WANTED, VS_SP_HR_UNKNOWN, VS_SP_NO_APP_VERSION, VS_SP_OLD_APP_VERSION,
        VS_SP_NO_GPU,         VS_SP_JOB_LIMIT,  VS_SP_DAILY_QUOTA,
    };
    for (size_t i = 0; i < sizeof(app_rules) / sizeof(app_rules[0]); i++) {
        assert_true(vs_sp_scan_stops(app_rules[i], ALIKE));
        assert_true(vs_sp_scan_stops(app_rules[i],
                                     VS_SP_VARIES_DISK | VS_SP_VARIES_SIZE | VS_SP_VARIES_MEMORY));
        assert_false(vs_sp_scan_stops(app_rules[i], VS_SP_VARIES_APP));
    }
    assert_true(vs_sp_scan_stops(VS_SP_MEMORY, ALIKE));
    assert_true(vs_sp_scan_stops(VS_SP_MEMORY, VS_SP_VARIES_ALL & ~VS_SP_VARIES_MEMORY));
    assert_false(vs_sp_scan_stops(VS_SP_MEMORY, VS_SP_VARIES_MEMORY));
    /* Disk: a request-wide stop only when every job needs the same. */
    assert_true(vs_sp_scan_stops(VS_SP_DISK, ALIKE));
    assert_true(vs_sp_scan_stops(VS_SP_DISK, VS_SP_VARIES_ALL & ~VS_SP_VARIES_DISK));
    assert_false(vs_sp_scan_stops(VS_SP_DISK, VS_SP_VARIES_DISK));
    for (int k = 0; k < 2; k++) {
        enum vs_sp_reason r = k ? VS_SP_WORKLOAD : VS_SP_DEADLINE;
        assert_true(vs_sp_scan_stops(r, ALIKE));
        assert_true(vs_sp_scan_stops(r, VS_SP_VARIES_DISK | VS_SP_VARIES_MEMORY));
        assert_false(vs_sp_scan_stops(r, VS_SP_VARIES_SIZE));
        assert_false(vs_sp_scan_stops(r, VS_SP_VARIES_APP));
    }
    /* The server's job cache: everything may vary, only the two stop. */
    int stops = 0;
    for (int r = VS_SP_OK; r < VS_SP__NREASONS; r++)
        stops += vs_sp_scan_stops((enum vs_sp_reason)r, VS_SP_VARIES_ALL);
    assert_int_equal(stops, 2);
}

/* Offers 60 alike candidates (new workunits each) in turn, sending what
 * passes. Returns the first refusal; *at is how many were sent before it.
 * Every candidate after it must be refused for the same reason. */
static enum vs_sp_reason scan_alike(struct fx *f, int *at)
{
    enum vs_sp_reason first = VS_SP_OK;
    *at = -1;
    for (int i = 0; i < 60; i++) {
        f->job.wu_id = 7000 + i;
        f->job.result_id = 9000 + i;
        enum vs_sp_reason r = fx_send(f);
        if (first == VS_SP_OK) {
            if (r != VS_SP_OK) {
                first = r;
                *at = i;
            }
            continue;
        }
        if (r != first)
            fail_msg("candidate %d: %s after %s", i, vs_sp_reason_name(r),
                     vs_sp_reason_name(first));
    }
    return first;
}

/* Each rule the scan stops at, reached with alike candidates: what refused
 * one refuses all the rest, so stopping loses nothing. */
static void test_stops_are_sound(void **state)
{
    (void)state;
    for (int c = 0; c < 11; c++) {
        struct fx f;
        fx_init(&f);
        enum vs_sp_reason want = VS_SP_OK;
        int want_at = 0;
        switch (c) {
        case 0: /* seed 004: each job adds 300 s of delay on 4 CPUs */
            f.job.delay_bound = 3000;
            want = VS_SP_DEADLINE;
            want_at = 7;
            break;
        case 1: /* seed 000's EDF check: the queue's jobs would miss */
            f.cfg.workload_sim = true;
            f.req.have_ip_results = true;
            {
                static const struct vs_sp_ip_result q[4] = {
                    {3000, 2000}, {3000, 2000}, {3000, 2000}, {3000, 2000}};
                f.req.ip_results = q;
                f.req.n_ip_results = 4;
            }
            f.job.delay_bound = 2500;
            want = VS_SP_WORKLOAD;
            break;
        case 2: /* 2 a CPU a day on 4 CPUs */
            f.cfg.daily_result_quota = 2;
            want = VS_SP_DAILY_QUOTA;
            want_at = 8;
            break;
        case 3: /* the app's limit on jobs in progress */
            snprintf(f.cfg.limits.apps[0].app_name, sizeof(f.cfg.limits.apps[0].app_name), "%s",
                     "uppercase");
            f.cfg.limits.apps[0].cpu = (struct vs_sp_rsc_limit){3, false};
            f.cfg.limits.n_apps = 1;
            f.app.limit_index = 0;
            want = VS_SP_JOB_LIMIT;
            want_at = 3;
            break;
        case 4:
            f.job.rsc_memory_bound = 9e9;
            want = VS_SP_MEMORY;
            break;
        case 5: /* room for two jobs' disk */
            f.host.d_total = f.host.d_free = 2.5e9;
            f.host.disk_max_used_pct = 100;
            want = VS_SP_DISK;
            want_at = 2;
            break;
        case 6:
            f.av[0].platform = "windows_x86_64";
            want = VS_SP_NO_APP_VERSION;
            break;
        case 7:
            f.av[0].proc = VS_SP_NVIDIA;
            want = VS_SP_NO_GPU;
            break;
        case 8:
            f.app.min_version = 800;
            want = VS_SP_OLD_APP_VERSION;
            break;
        case 9: /* a request for NVIDIA work only */
            f.host.gpu_count[VS_SP_NVIDIA] = 1;
            f.req.req_secs[VS_SP_CPU] = 0;
            f.req.req_instances[VS_SP_CPU] = 0;
            f.req.req_secs[VS_SP_NVIDIA] = 86400;
            want = VS_SP_NO_WORK_WANTED;
            break;
        case 10:
            f.cfg.homogeneous_redundancy = 1;
            f.host.os_name = "Plan 9";
            want = VS_SP_HR_UNKNOWN;
            break;
        }
        fx_start(&f, NULL, 0);
        int at;
        enum vs_sp_reason got = scan_alike(&f, &at);
        if (got != want || at != want_at)
            fail_msg("case %d: %s after %d jobs, wanted %s after %d", c, vs_sp_reason_name(got), at,
                     vs_sp_reason_name(want), want_at);
        assert_true(vs_sp_scan_stops(got, ALIKE));
        fx_done(&f);
    }
}

/* What the rule skips can be followed by a job that passes: a job whose
 * disk need is past what is left, then one that fits (a host that holds
 * its big file needs only its own input); a workunit already in the
 * reply, then another workunit. */
static void test_skips_are_needed(void **state)
{
    (void)state;
    struct fx f;
    fx_init(&f);
    f.cfg.one_result_per_host_per_wu = true; /* as volsched serve always sets it */
    f.host.d_total = f.host.d_free = 1.5e9;
    f.host.disk_max_used_pct = 100;
    fx_start(&f, NULL, 0);
    assert_int_equal(fx_send(&f), VS_SP_OK); /* 1 GB: 0.5 GB left */
    f.job.wu_id++;
    assert_int_equal(fx_send(&f), VS_SP_DISK);
    assert_false(vs_sp_scan_stops(VS_SP_DISK, VS_SP_VARIES_DISK));
    f.job.wu_id++;
    f.job.rsc_disk_bound = 1e8;
    assert_int_equal(fx_send(&f), VS_SP_OK);

    f.job.wu_id = 1000; /* the first workunit again */
    f.job.rsc_disk_bound = 1e6;
    assert_int_equal(fx_send(&f), VS_SP_DUP_HOST);
    assert_false(vs_sp_scan_stops(VS_SP_DUP_HOST, ALIKE));
    f.job.wu_id += 10;
    assert_int_equal(fx_send(&f), VS_SP_OK);
    fx_done(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_stops_are_sound),
        cmocka_unit_test(test_skips_are_needed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
