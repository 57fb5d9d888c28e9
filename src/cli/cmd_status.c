/*
 * volsched status: counts of a project's store (workunits by state, results
 * by server_state and outcome, hosts, users, the job cache) and the last
 * pass and last error of each back-end daemon.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli_util.h"
#include "cmd.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/daemons.h"
#include "volsched/json.h"
#include "volsched/ops_status.h"
#include "volsched/store.h"
#include "volsched/str.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched status [--project DIR] [--json | --broadcast-results]\n"
               "\n"
               "Prints the state of a project (BOINC's bin/status and server_status.php):\n"
               "whether the server is up (its pid file lock) and the stop files, workunits by\n"
               "state, results by server state and outcome, results ready to send and in\n"
               "progress, the running scheduler's job cache fill, per app figures, hosts,\n"
               "users, and each back-end daemon's status, last pass and last error.\n"
               "\n"
               "Options:\n"
               "  --project DIR  project directory (default: current directory)\n"
               "  --json         print one JSON object instead of tables\n"
               "  --broadcast-results  list the reported broadcast results (one per line:\n"
               "                 name, host, success/error, exit status, time), which skip\n"
               "                 validation and assimilation: the operator's daemon takes them\n");
}

static void fmt_time(int64_t t, char *buf, size_t n)
{
    if (!t) {
        snprintf(buf, n, "never");
        return;
    }
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(buf, n, "%Y-%m-%d %H:%M:%SZ", &tm);
}

/* Seed 003's figures: unsent results per app (what a work generator
 * watches) and assigned work by kind. */
static void text_assigned(const struct vs_ops_status *os)
{
    printf("\nUnsent results by app:");
    for (int i = 0; i < os->napps; i++)
        printf("%s %s %lld", i ? "," : "", os->apps[i].name, (long long)os->apps[i].unsent);
    printf("%s\n", os->napps ? "" : " (no apps)");
    printf("Assigned work (jobs / still open):");
    bool any = false;
    for (int t = 0; t < 4; t++)
        for (int m = 0; m < 2; m++)
            if (vs_ops_assign_kinds[t][m][0] && os->asg.n[t][m]) {
                printf("%s %s %lld/%lld", any ? "," : "", vs_ops_assign_kinds[t][m],
                       (long long)os->asg.n[t][m], (long long)os->asg.open[t][m]);
                any = true;
            }
    printf("%s\n", any ? "" : " none");
}

/* --broadcast-results: the reported broadcast instances, one per line. */
static int print_bcast(void *ctx, const struct vs_result *r)
{
    (void)ctx;
    printf("%s host %lld %s exit %d received %lld\n", r->name, (long long)r->hostid,
           r->outcome == VS_RESULT_OUTCOME_SUCCESS ? "success" : "error", r->exit_status,
           (long long)r->received_time);
    return 0;
}

static void print_text(const char *dir, const struct vs_ops_status *os)
{
    const struct vs_store_counts *c = &os->counts;
    printf("Project %s\n", dir);
    if (os->server_up)
        printf("Server: up (pid %lld, %s)%s\n", (long long)os->server_pid, os->serve.listen,
               os->stop_sched ? ", scheduler down for maintenance (stop_sched)" : "");
    else
        printf("Server: down%s\n", os->stop_sched ? " (stop_sched exists)" : "");
    if (os->stop_daemons)
        printf("Daemons: disabled (stop_daemons exists)\n");
    printf("\n");
    printf("Workunits: %lld\n", (long long)c->workunits);
    for (int i = VS_WU_PHASE__COUNT - 1; i >= 0; i--)
        printf("  %-22s %lld\n", vs_wu_phase_name(i), (long long)c->wu_phase[i]);
    for (int i = 0; i < VS_WU_ERROR_BITS; i++)
        if (c->wu_error_mask[i])
            printf("  error %-16s %lld\n", vs_wu_error_names[i], (long long)c->wu_error_mask[i]);
    if (c->wu_file_delete_error)
        printf("  %-22s %lld\n", "file_delete_error", (long long)c->wu_file_delete_error);

    printf("\nResults: %lld\n", (long long)c->results);
    printf("  %-12s %-16s %s\n", "SERVER_STATE", "OUTCOME", "COUNT");
    for (int st = 1; st < 6; st++) {
        for (int o = 0; o < 8; o++) {
            int64_t n = c->result_state_outcome[st][o];
            if (!n)
                continue;
            printf("  %-12s %-16s %lld\n", vs_ops_state_names[st][0] ? vs_ops_state_names[st] : "?",
                   st == VS_RESULT_SERVER_STATE_OVER ? vs_ops_outcome_names[o] : "-", (long long)n);
        }
    }
    printf("  successes by validate_state:");
    for (int v = 0; v < 6; v++)
        printf(" %s %lld%s", vs_ops_validate_names[v], (long long)c->result_validate[v],
               v < 5 ? "," : "");
    printf("\n");
    if (c->result_file_delete_error)
        printf("  file_delete_error %lld\n", (long long)c->result_file_delete_error);

    printf("\nResults ready to send: %lld (%lld sendable by the feeder)\n",
           (long long)os->ready_to_send, (long long)c->job_cache);
    printf("Results in progress: %lld\n", (long long)os->in_progress);
    printf("Workunits waiting for validation: %lld, for assimilation: %lld\n",
           (long long)os->need_validate, (long long)os->need_assimilate);
    if (os->server_up)
        printf("Job cache: %lld of %lld slots filled\n", (long long)os->serve.cache_present,
               (long long)os->serve.cache_slots);
    else
        printf("Job cache: none (server down)\n");
    for (int i = 0; i < os->napps; i++) {
        const struct vs_app_counts *a = &os->apps[i];
        printf("  app %-16s unsent %lld, in progress %lld, need validation %lld\n", a->name,
               (long long)a->unsent, (long long)a->in_progress, (long long)a->need_validate);
    }
    printf("Hosts: %lld  Users: %lld  Teams: %lld  Apps: %lld\n", (long long)c->hosts,
           (long long)c->users, (long long)c->teams, (long long)c->apps);
    text_assigned(os);

    printf("\nDaemons:\n  %-13s %-12s %-21s %8s %10s  %s\n", "NAME", "STATUS", "LAST RUN", "WORK",
           "TOTAL", "LAST ERROR");
    for (unsigned i = 0; i < VS_NDAEMONS; i++) {
        const struct vs_daemon_status *d = &os->daemons[i].st;
        char run[32], errt[32];
        fmt_time(d->last_run, run, sizeof(run));
        fmt_time(d->last_error_time, errt, sizeof(errt));
        printf("  %-13s %-12s %-21s %8lld %10lld  ", vs_daemon_name(1u << i),
               vs_daemon_run_name(os->daemons[i].run), run, (long long)d->last_work,
               (long long)d->total_work);
        if (d->last_error[0])
            printf("%s: %s\n", errt, d->last_error);
        else
            printf("-\n");
    }
}

int vs_cmd_status(int argc, char **argv)
{
    const char *project = NULL;
    bool json = false, bcast = false;
    const struct vs_cli_opt opts[] = {
        {.name = "project", .str = &project},
        {.name = "json", .flag = &json},
        {.name = "broadcast-results", .flag = &bcast},
    };
    int st = vs_cli_getopt_only("status", argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage);
    if (st != VS_CLI_GO)
        return st;
    struct vs_project_config cfg;
    struct vs_store *s;
    if (!vs_cli_open_project("status", project, &cfg, &s))
        return VS_EXIT_FAIL;
    if (bcast) {
        /* The operator's own daemon collects these: BOINC skips their
         * validation and assimilation. */
        int rc = vs_store_broadcast_results(s, 0, 1000000, print_bcast, NULL);
        vs_store_close(s);
        if (rc)
            fprintf(stderr, "volsched status: store: %s\n", vs_strerror(rc));
        return rc ? VS_EXIT_FAIL : VS_EXIT_OK;
    }
    struct vs_ops_status *os = vs_xmalloc(sizeof(*os));
    int rc = vs_ops_status_collect(cfg.dir, cfg.long_name, s, (int64_t)time(NULL), os);
    vs_store_close(s);
    if (rc) {
        fprintf(stderr, "volsched status: store: %s\n", vs_strerror(rc));
        vs_free(os);
        return VS_EXIT_FAIL;
    }
    if (json) {
        struct vs_buf b;
        vs_buf_init(&b, VS_BUF_UNLIMITED);
        if (vs_ops_status_json(os, cfg.dir, &b) == 0)
            fputs(vs_buf_str(&b), stdout);
        vs_buf_cleanup(&b);
    } else {
        print_text(cfg.dir, os);
    }
    vs_free(os);
    return VS_EXIT_OK;
}
