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
#include "server/daemons.h"
#include "store/store.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/json.h"
#include "volsched/str.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched status [--project DIR] [--json | --broadcast-results]\n"
               "\n"
               "Prints the state of a project: workunits by state, results by server state\n"
               "and outcome, hosts, users, the job cache (UNSENT results the scheduler may\n"
               "send), and each back-end daemon's last pass and last error.\n"
               "\n"
               "Options:\n"
               "  --project DIR  project directory (default: current directory)\n"
               "  --json         print one JSON object instead of tables\n"
               "  --broadcast-results  list the reported broadcast results (one per line:\n"
               "                 name, host, success/error, exit status, time), which skip\n"
               "                 validation and assimilation: the operator's daemon takes them\n");
}

/* BOINC's names of the stored enum values (index = value). */
static const char *const state_names[6] = {"", "inactive", "unsent", "", "in_progress", "over"};
static const char *const outcome_names[8] = {
    "init",     "success",    "couldnt_send",   "client_error",
    "no_reply", "didnt_need", "validate_error", "client_detached",
};
static const char *const validate_names[6] = {
    "init", "valid", "invalid", "no_check", "inconclusive", "too_late",
};
static const char *const error_names[6] = {
    "couldnt_send_result",
    "too_many_error_results",
    "too_many_success_results",
    "too_many_total_results",
    "cancelled",
    "no_canonical_result",
};

struct daemons {
    struct vs_daemon_status d[4];
};

static int on_status(void *ctx, const struct vs_daemon_status *d)
{
    struct daemons *ds = ctx;
    unsigned bit = vs_daemon_by_name(d->name);
    for (unsigned i = 0; i < 4; i++)
        if (bit == 1u << i)
            ds->d[i] = *d;
    return 0;
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
#define MAX_APPS_SHOWN 256
struct extra {
    size_t napps;
    char app[MAX_APPS_SHOWN][VS_NAME_MAX];
    int64_t unsent[MAX_APPS_SHOWN];
    struct vs_assignment_counts asg;
};

static const char *const asg_kind[4][2] = {
    {"", "broadcast_all"},
    {"targeted_host", "broadcast_host"},
    {"targeted_user", "broadcast_user"},
    {"targeted_team", "broadcast_team"},
};

static int load_extra(struct vs_store *s, struct extra *x)
{
    struct vs_catalog cat;
    memset(&cat, 0, sizeof(cat));
    int rc = vs_store_catalog_load(s, &cat);
    for (size_t i = 0; rc == 0 && i < cat.napps && x->napps < MAX_APPS_SHOWN; i++) {
        snprintf(x->app[x->napps], VS_NAME_MAX, "%s", cat.apps[i].name);
        rc = vs_store_count_results(s, cat.apps[i].id, VS_RESULT_SERVER_STATE_UNSENT,
                                    &x->unsent[x->napps]);
        x->napps++;
    }
    vs_catalog_cleanup(&cat);
    if (rc == 0)
        rc = vs_store_assignment_counts(s, &x->asg);
    return rc;
}

static void json_extra(struct vs_json *j, const struct extra *x)
{
    vs_json_key(j, "unsent_by_app");
    vs_json_obj_begin(j);
    for (size_t i = 0; i < x->napps; i++) {
        vs_json_key(j, x->app[i]);
        vs_json_int(j, x->unsent[i]);
    }
    vs_json_obj_end(j);
    vs_json_key(j, "assigned");
    vs_json_obj_begin(j);
    for (int t = 0; t < 4; t++) {
        for (int m = 0; m < 2; m++) {
            if (!asg_kind[t][m][0])
                continue;
            vs_json_key(j, asg_kind[t][m]);
            vs_json_obj_begin(j);
            vs_json_key(j, "jobs");
            vs_json_int(j, x->asg.n[t][m]);
            vs_json_key(j, "open");
            vs_json_int(j, x->asg.open[t][m]);
            vs_json_obj_end(j);
        }
    }
    vs_json_obj_end(j);
}

static void text_extra(const struct extra *x)
{
    printf("\nUnsent results by app:");
    for (size_t i = 0; i < x->napps; i++)
        printf("%s %s %lld", i ? "," : "", x->app[i], (long long)x->unsent[i]);
    printf("%s\n", x->napps ? "" : " (no apps)");
    printf("Assigned work (jobs / still open):");
    bool any = false;
    for (int t = 0; t < 4; t++)
        for (int m = 0; m < 2; m++)
            if (asg_kind[t][m][0] && x->asg.n[t][m]) {
                printf("%s %s %lld/%lld", any ? "," : "", asg_kind[t][m], (long long)x->asg.n[t][m],
                       (long long)x->asg.open[t][m]);
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

static void print_json(const char *dir, const struct vs_store_counts *c, const struct daemons *ds,
                       const struct extra *x)
{
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    struct vs_json j;
    vs_json_init(&j, &b, true);
    vs_json_obj_begin(&j);
    vs_json_key(&j, "project");
    vs_json_str(&j, dir);

    vs_json_key(&j, "workunits");
    vs_json_obj_begin(&j);
    vs_json_key(&j, "total");
    vs_json_int(&j, c->workunits);
    vs_json_key(&j, "by_state");
    vs_json_obj_begin(&j);
    for (int i = 0; i < VS_WU_PHASE__COUNT; i++) {
        vs_json_key(&j, vs_wu_phase_name(i));
        vs_json_int(&j, c->wu_phase[i]);
    }
    vs_json_obj_end(&j);
    vs_json_key(&j, "errors");
    vs_json_obj_begin(&j);
    for (int i = 0; i < 6; i++) {
        vs_json_key(&j, error_names[i]);
        vs_json_int(&j, c->wu_error_mask[i]);
    }
    vs_json_obj_end(&j);
    vs_json_key(&j, "file_delete_errors");
    vs_json_int(&j, c->wu_file_delete_error);
    vs_json_obj_end(&j);

    vs_json_key(&j, "results");
    vs_json_obj_begin(&j);
    vs_json_key(&j, "total");
    vs_json_int(&j, c->results);
    vs_json_key(&j, "by_server_state");
    vs_json_obj_begin(&j);
    for (int st = 1; st < 6; st++) {
        if (!state_names[st][0])
            continue;
        int64_t n = 0;
        for (int o = 0; o < 8; o++)
            n += c->result_state_outcome[st][o];
        vs_json_key(&j, state_names[st]);
        vs_json_int(&j, n);
    }
    vs_json_obj_end(&j);
    vs_json_key(&j, "by_outcome"); /* OVER results only: the outcome means nothing before */
    vs_json_obj_begin(&j);
    for (int o = 0; o < 8; o++) {
        vs_json_key(&j, outcome_names[o]);
        vs_json_int(&j, c->result_state_outcome[VS_RESULT_SERVER_STATE_OVER][o]);
    }
    vs_json_obj_end(&j);
    vs_json_key(&j, "by_validate_state"); /* successes only */
    vs_json_obj_begin(&j);
    for (int v = 0; v < 6; v++) {
        vs_json_key(&j, validate_names[v]);
        vs_json_int(&j, c->result_validate[v]);
    }
    vs_json_obj_end(&j);
    vs_json_key(&j, "file_delete_errors");
    vs_json_int(&j, c->result_file_delete_error);
    vs_json_obj_end(&j);

    vs_json_key(&j, "job_cache");
    vs_json_int(&j, c->job_cache);
    vs_json_key(&j, "hosts");
    vs_json_int(&j, c->hosts);
    vs_json_key(&j, "users");
    vs_json_int(&j, c->users);
    vs_json_key(&j, "teams");
    vs_json_int(&j, c->teams);
    vs_json_key(&j, "apps");
    vs_json_int(&j, c->apps);
    json_extra(&j, x);

    vs_json_key(&j, "daemons");
    vs_json_obj_begin(&j);
    for (unsigned i = 0; i < 4; i++) {
        const struct vs_daemon_status *d = &ds->d[i];
        vs_json_key(&j, vs_daemon_name(1u << i));
        vs_json_obj_begin(&j);
        vs_json_key(&j, "last_run");
        vs_json_int(&j, d->last_run);
        vs_json_key(&j, "last_work");
        vs_json_int(&j, d->last_work);
        vs_json_key(&j, "total_work");
        vs_json_int(&j, d->total_work);
        vs_json_key(&j, "last_error");
        if (d->last_error[0])
            vs_json_str(&j, d->last_error);
        else
            vs_json_null(&j);
        vs_json_key(&j, "last_error_time");
        vs_json_int(&j, d->last_error_time);
        vs_json_obj_end(&j);
    }
    vs_json_obj_end(&j);
    vs_json_obj_end(&j);
    printf("%s\n", vs_buf_str(&b));
    vs_buf_cleanup(&b);
}

static void print_text(const char *dir, const struct vs_store_counts *c, const struct daemons *ds,
                       const struct extra *x)
{
    printf("Project %s\n\n", dir);
    printf("Workunits: %lld\n", (long long)c->workunits);
    for (int i = VS_WU_PHASE__COUNT - 1; i >= 0; i--)
        printf("  %-22s %lld\n", vs_wu_phase_name(i), (long long)c->wu_phase[i]);
    for (int i = 0; i < 6; i++)
        if (c->wu_error_mask[i])
            printf("  error %-16s %lld\n", error_names[i], (long long)c->wu_error_mask[i]);
    if (c->wu_file_delete_error)
        printf("  %-22s %lld\n", "file_delete_error", (long long)c->wu_file_delete_error);

    printf("\nResults: %lld\n", (long long)c->results);
    printf("  %-12s %-16s %s\n", "SERVER_STATE", "OUTCOME", "COUNT");
    for (int st = 1; st < 6; st++) {
        for (int o = 0; o < 8; o++) {
            int64_t n = c->result_state_outcome[st][o];
            if (!n)
                continue;
            printf("  %-12s %-16s %lld\n", state_names[st][0] ? state_names[st] : "?",
                   st == VS_RESULT_SERVER_STATE_OVER ? outcome_names[o] : "-", (long long)n);
        }
    }
    printf("  successes by validate_state:");
    for (int v = 0; v < 6; v++)
        printf(" %s %lld%s", validate_names[v], (long long)c->result_validate[v], v < 5 ? "," : "");
    printf("\n");
    if (c->result_file_delete_error)
        printf("  file_delete_error %lld\n", (long long)c->result_file_delete_error);

    printf("\nJob cache: %lld unsent results ready to send\n", (long long)c->job_cache);
    printf("Hosts: %lld  Users: %lld  Teams: %lld  Apps: %lld\n", (long long)c->hosts,
           (long long)c->users, (long long)c->teams, (long long)c->apps);
    text_extra(x);

    printf("\nDaemons:\n  %-13s %-21s %8s %10s  %s\n", "NAME", "LAST RUN", "WORK", "TOTAL",
           "LAST ERROR");
    for (unsigned i = 0; i < 4; i++) {
        const struct vs_daemon_status *d = &ds->d[i];
        char run[32], errt[32];
        fmt_time(d->last_run, run, sizeof(run));
        fmt_time(d->last_error_time, errt, sizeof(errt));
        printf("  %-13s %-21s %8lld %10lld  ", vs_daemon_name(1u << i), run,
               (long long)d->last_work, (long long)d->total_work);
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
    int next;
    int st =
        vs_cli_getopt("status", argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage, &next);
    if (st != VS_CLI_GO)
        return st;
    if (next != argc) {
        fprintf(stderr, "volsched status: unexpected argument '%s'\n", argv[next]);
        usage(stderr);
        return VS_EXIT_USAGE;
    }
    struct vs_project_config cfg;
    struct vs_store *s;
    if (!vs_cli_open_project("status", project, &cfg, &s))
        return VS_EXIT_FAIL;
    struct vs_store_counts c;
    struct daemons ds;
    memset(&ds, 0, sizeof(ds));
    struct extra *x = VS_NEW(struct extra);
    int rc = 0;
    if (bcast) {
        /* The operator's own daemon collects these: BOINC skips their
         * validation and assimilation. */
        rc = vs_store_broadcast_results(s, 0, 1000000, print_bcast, NULL);
        vs_store_close(s);
        vs_free(x);
        if (rc)
            fprintf(stderr, "volsched status: store: %s\n", vs_strerror(rc));
        return rc ? VS_EXIT_FAIL : VS_EXIT_OK;
    }
    rc = vs_store_counts(s, &c);
    if (rc == 0)
        rc = vs_store_daemon_status_list(s, on_status, &ds);
    if (rc == 0)
        rc = load_extra(s, x);
    vs_store_close(s);
    if (rc) {
        fprintf(stderr, "volsched status: store: %s\n", vs_strerror(rc));
        vs_free(x);
        return VS_EXIT_FAIL;
    }
    if (json)
        print_json(cfg.dir, &c, &ds, x);
    else
        print_text(cfg.dir, &c, &ds, x);
    vs_free(x);
    return VS_EXIT_OK;
}
