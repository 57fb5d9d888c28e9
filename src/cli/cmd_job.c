/*
 * The operator's tools on jobs (BOINC's ops pages and cancel_jobs):
 *   volsched job show WU | job cancel WU... | job cancel --batch N
 *   volsched result show NAME
 * WU is a workunit name or id.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli_util.h"
#include "cmd.h"
#include "volsched/alloc.h"
#include "volsched/ops_status.h"
#include "volsched/store_ops.h"
#include "volsched/str.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched job show [--project DIR] WU\n"
               "       volsched job cancel [--project DIR] WU...\n"
               "       volsched job cancel [--project DIR] --batch N\n"
               "       volsched result show [--project DIR] NAME\n"
               "\n"
               "show prints a workunit with its results, or one result with the client's\n"
               "report and stderr. cancel (BOINC's cancel_jobs) marks workunits cancelled:\n"
               "their unsent results are never sent, the transitioner finishes them, and\n"
               "results already out are abandoned. WU is a workunit name or id.\n");
}

/* One "  label  value" line of a show command. */
static void VS_PRINTF(2, 3) field(const char *label, const char *fmt, ...)
{
    printf("  %-18s ", label);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

/* Says why a show command found nothing (rc != 0); returns rc. */
static int not_found(int rc, const char *cmd, const char *kind, const char *arg)
{
    if (rc)
        fprintf(stderr, "volsched %s: %s %s: %s\n", cmd, kind, arg, vs_strerror(rc));
    return rc;
}

static void ts(const char *label, int64_t t)
{
    char buf[32] = "-";
    if (t > 0) {
        time_t tt = (time_t)t;
        struct tm tm;
        gmtime_r(&tt, &tm);
        strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%SZ", &tm);
    }
    field(label, "%s", buf);
}

static const char *state_name(int st)
{
    return st >= 0 && st < 6 && vs_ops_state_names[st][0] ? vs_ops_state_names[st] : "?";
}

static int print_result_row(void *ctx, const struct vs_result *r)
{
    (void)ctx;
    printf("  %-28s %-12s %-15s host %-5lld exit %-4d validate %s\n", r->name,
           state_name(r->server_state),
           r->server_state == VS_RESULT_SERVER_STATE_OVER && r->outcome >= 0 && r->outcome < 8
               ? vs_ops_outcome_names[r->outcome]
               : "-",
           (long long)r->hostid, r->exit_status,
           r->validate_state >= 0 && r->validate_state < 6
               ? vs_ops_validate_names[r->validate_state]
               : "?");
    return 0;
}

/* Finds a workunit by name, or by id when arg is a number and no name matches. */
static int find_wu(struct vs_store *s, const char *arg, struct vs_workunit *wu)
{
    int rc = vs_store_workunit_by_name(s, arg, wu);
    int64_t id;
    if (rc == VS_ENOTFOUND && vs_parse_int64(arg, &id) == 0)
        rc = vs_store_workunit_get(s, id, wu);
    return rc;
}

static int show_wu(struct vs_store *s, const char *arg)
{
    struct vs_workunit wu;
    memset(&wu, 0, sizeof(wu));
    if (not_found(find_wu(s, arg, &wu), "job show", "workunit", arg))
        return VS_EXIT_FAIL;
    printf("workunit %s (id %lld, app %lld, batch %lld)\n", wu.name, (long long)wu.id,
           (long long)wu.appid, (long long)wu.batch);
    field("phase", "%s", vs_wu_phase_name(vs_workunit_phase(&wu)));
    char errs[256];
    int n = snprintf(errs, sizeof(errs), "0x%x", wu.error_mask);
    for (int b = 0; b < VS_WU_ERROR_BITS && n > 0 && (size_t)n < sizeof(errs); b++)
        if (wu.error_mask & (1 << b))
            n += snprintf(errs + n, sizeof(errs) - (size_t)n, " %s", vs_wu_error_names[b]);
    field("error_mask", "%s", errs);
    field("canonical result", "%lld", (long long)wu.canonical_resultid);
    field("replication", "quorum %d, target %d, max error %d, max total %d, max success %d",
          wu.min_quorum, wu.target_nresults, wu.max_error_results, wu.max_total_results,
          wu.max_success_results);
    field("resources", "%.3g flops est, %.3g bound, delay bound %d s, priority %d",
          wu.rsc_fpops_est, wu.rsc_fpops_bound, wu.delay_bound, wu.priority);
    field("states", "assimilate %d, file_delete %d, need_validate %d", wu.assimilate_state,
          wu.file_delete_state, wu.need_validate);
    ts("created", wu.create_time);
    ts("transition time", wu.transition_time < (int64_t)1 << 40 ? wu.transition_time : 0);
    printf("results:\n");
    int rc = vs_store_results_of_wu(s, wu.id, print_result_row, NULL);
    vs_workunit_cleanup(&wu);
    return rc ? VS_EXIT_FAIL : VS_EXIT_OK;
}

static int show_result(struct vs_store *s, const char *name)
{
    struct vs_result r;
    memset(&r, 0, sizeof(r));
    if (not_found(vs_store_result_by_name(s, name, &r), "result show", "result", name))
        return VS_EXIT_FAIL;
    printf("result %s (id %lld, workunit %lld, app %lld)\n", r.name, (long long)r.id,
           (long long)r.workunitid, (long long)r.appid);
    field("server_state", "%s", state_name(r.server_state));
    field("outcome", "%s", r.outcome >= 0 && r.outcome < 8 ? vs_ops_outcome_names[r.outcome] : "?");
    field("validate_state", "%s",
          r.validate_state >= 0 && r.validate_state < 6 ? vs_ops_validate_names[r.validate_state]
                                                        : "?");
    field("sent to", "host %lld, user %lld, app version %lld (%d)", (long long)r.hostid,
          (long long)r.userid, (long long)r.app_version_id, r.app_version_num);
    ts("sent", r.sent_time);
    ts("report deadline", r.report_deadline);
    ts("received", r.received_time);
    field("exit_status", "%d", r.exit_status);
    field("times", "%.1f s cpu, %.1f s elapsed", r.cpu_time, r.elapsed_time);
    field("granted credit", "%.2f", r.granted_credit);
    if (r.stderr_out && r.stderr_out[0])
        printf("stderr:\n%.4000s%s\n", r.stderr_out, strlen(r.stderr_out) > 4000 ? "\n[...]" : "");
    vs_result_cleanup(&r);
    return VS_EXIT_OK;
}

static int cancel_one(struct vs_store *s, int64_t id, const char *label)
{
    int64_t n = 0;
    int rc = vs_store_workunit_cancel(s, id, (int64_t)time(NULL), &n);
    if (rc == VS_ESTATE) {
        printf("%s: already finished; left alone\n", label);
        return 0;
    }
    if (rc) {
        fprintf(stderr, "volsched job cancel: %s: %s\n", label, vs_strerror(rc));
        return rc;
    }
    printf("%s: cancelled (%lld unsent results withdrawn)\n", label, (long long)n);
    return 0;
}

static int run(const char *sub, int argc, char **argv)
{
    const char *project = NULL, *batch = NULL;
    const struct vs_cli_opt opts[] = {
        {.name = "project", .str = &project},
        {.name = "batch", .str = &batch},
    };
    char cmd[32];
    snprintf(cmd, sizeof(cmd), "%s", sub);
    int next;
    int st = vs_cli_getopt(cmd, argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage, &next);
    if (st != VS_CLI_GO)
        return st;
    bool cancel = strcmp(sub, "job cancel") == 0;
    if ((!cancel && (argc - next != 1 || batch)) ||
        (cancel && ((batch != NULL) == (argc - next > 0)))) {
        usage(stderr);
        return VS_EXIT_USAGE;
    }
    int64_t bnum = 0;
    if (batch && !vs_cli_int(cmd, "batch", batch, 1, INT64_MAX, &bnum))
        return VS_EXIT_USAGE;
    struct vs_project_config cfg;
    struct vs_store *s;
    if (!vs_cli_open_project(cmd, project, &cfg, &s))
        return VS_EXIT_FAIL;
    int ret = VS_EXIT_OK;
    if (strcmp(sub, "job show") == 0) {
        ret = show_wu(s, argv[next]);
    } else if (strcmp(sub, "result show") == 0) {
        ret = show_result(s, argv[next]);
    } else if (batch) {
        enum { MAXB = 100000 };
        int64_t *ids = vs_xcalloc(MAXB, sizeof(*ids));
        size_t n = 0;
        int rc = vs_store_batch_wus(s, bnum, ids, MAXB, &n);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            char label[48];
            snprintf(label, sizeof(label), "workunit %lld", (long long)ids[i]);
            rc = cancel_one(s, ids[i], label);
        }
        vs_free(ids);
        if (rc == 0 && n == 0)
            fprintf(stderr, "volsched job cancel: batch %lld has no workunits\n", (long long)bnum);
        ret = rc || n == 0 ? VS_EXIT_FAIL : VS_EXIT_OK;
    } else {
        for (int i = next; i < argc; i++) {
            struct vs_workunit wu;
            memset(&wu, 0, sizeof(wu));
            int rc = find_wu(s, argv[i], &wu);
            if (rc == 0)
                rc = cancel_one(s, wu.id, argv[i]);
            else
                fprintf(stderr, "volsched job cancel: workunit %s: %s\n", argv[i], vs_strerror(rc));
            vs_workunit_cleanup(&wu);
            if (rc)
                ret = VS_EXIT_FAIL;
        }
    }
    vs_store_close(s);
    return ret;
}

int vs_cmd_job(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "show") == 0 || strcmp(argv[1], "cancel") == 0))
        return run(strcmp(argv[1], "show") == 0 ? "job show" : "job cancel", argc - 1, argv + 1);
    if (argc >= 2 && vs_cli_is_help(argv[1])) {
        usage(stdout);
        return VS_EXIT_OK;
    }
    usage(stderr);
    return VS_EXIT_USAGE;
}

int vs_cmd_result(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "show") == 0)
        return run("result show", argc - 1, argv + 1);
    if (argc >= 2 && vs_cli_is_help(argv[1])) {
        usage(stdout);
        return VS_EXIT_OK;
    }
    usage(stderr);
    return VS_EXIT_USAGE;
}
