/*
 * volsched host show ID | host ban ID [--lift]: a host's record, and the
 * operator's ban (BOINC-COMPAT: host._max_results_day = -1, which the
 * scheduler answers with no work and a message).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli_util.h"
#include "cmd.h"
#include "volsched/store_ops.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched host show [--project DIR] ID\n"
               "       volsched host ban [--project DIR] [--lift] ID\n"
               "\n"
               "show prints a host's record and the results it has in progress. ban stops\n"
               "sending it work (its next RPCs are told so); --lift ends the ban.\n");
}

static int print_ip(void *ctx, const struct vs_result *r)
{
    (void)ctx;
    printf("  in progress: %s (deadline in %.1f h)\n", r->name,
           (double)(r->report_deadline - (int64_t)time(NULL)) / 3600.0);
    return 0;
}

static void show(struct vs_store *s, const struct vs_host *h)
{
    printf("host %lld (user %lld, team %lld)%s\n", (long long)h->id, (long long)h->userid,
           (long long)h->teamid, h->max_results_day == -1 ? ": BANNED" : "");
    printf("  name          %s\n  cpid          %s\n  address       %s (client says %s)\n",
           h->domain_name, h->host_cpid, h->external_ip_addr, h->last_ip_addr);
    printf("  platform      %s, %s %s\n  cpus          %d x %s %s, %.3g flops\n", h->platform_name,
           h->os_name, h->os_version, h->p_ncpus, h->p_vendor, h->p_model, h->p_fpops);
    printf("  memory        %.3g bytes, disk free %.3g of %.3g\n", h->m_nbytes, h->d_free,
           h->d_total);
    printf("  availability  on %.2f, connected %.2f, active %.2f\n", h->on_frac, h->connected_frac,
           h->active_frac);
    printf("  credit        total %.1f, recent %.1f; error rate %.3f\n", h->total_credit,
           h->expavg_credit, h->error_rate);
    char buf[32] = "never";
    if (h->rpc_time) {
        time_t t = (time_t)h->rpc_time;
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%SZ", &tm);
    }
    printf("  last RPC      %s (seqno %d)\n", buf, h->rpc_seqno);
    if (vs_store_results_in_progress(s, h->id, print_ip, NULL) != 0)
        printf("  (cannot list its results in progress)\n");
}

int vs_cmd_host(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "show") != 0 && strcmp(argv[1], "ban") != 0)) {
        bool help = argc >= 2 && vs_cli_is_help(argv[1]);
        usage(help ? stdout : stderr);
        return help ? VS_EXIT_OK : VS_EXIT_USAGE;
    }
    bool ban = strcmp(argv[1], "ban") == 0;
    const char *project = NULL;
    bool lift = false;
    const struct vs_cli_opt opts[] = {
        {.name = "project", .str = &project},
        {.name = "lift", .flag = &lift},
    };
    const char *cmd = ban ? "host ban" : "host show";
    int next;
    int st =
        vs_cli_getopt(cmd, argc - 1, argv + 1, opts, sizeof(opts) / sizeof(opts[0]), usage, &next);
    if (st != VS_CLI_GO)
        return st;
    next += 1;
    int64_t id = 0;
    if (argc - next != 1 || (lift && !ban)) {
        usage(stderr);
        return VS_EXIT_USAGE;
    }
    if (!vs_cli_int(cmd, "ID", argv[next], 1, INT64_MAX, &id))
        return VS_EXIT_USAGE;
    struct vs_project_config cfg;
    struct vs_store *s;
    if (!vs_cli_open_project(cmd, project, &cfg, &s))
        return VS_EXIT_FAIL;
    int rc;
    if (ban) {
        rc = vs_store_host_set_max_results_day(s, id, lift ? 0 : -1);
        if (rc == 0)
            printf("host %lld %s\n", (long long)id,
                   lift ? "may get work again" : "banned: it gets no more work");
    } else {
        struct vs_host h;
        rc = vs_store_host_get(s, id, &h);
        if (rc == 0)
            show(s, &h);
    }
    if (rc)
        fprintf(stderr, "volsched %s: host %lld: %s\n", cmd, (long long)id, vs_strerror(rc));
    vs_store_close(s);
    return rc ? VS_EXIT_FAIL : VS_EXIT_OK;
}
