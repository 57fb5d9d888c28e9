/*
 * volsched popsim --credit: the credit study (volsched/pop_credit.h,
 * docs/credit.md): each scheme's spread of credit per CPU-hour, the
 * cheaters' and failed-benchmark hosts' gain, and how long a new app
 * version takes to settle.
 */
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "cmd.h"
#include "volsched/credit.h"
#include "volsched/pop_credit.h"
#include "volsched/str.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched popsim --credit [--seed N] [--hosts N] [--results N] [--json]\n"
               "\n"
               "Runs the credit study of docs/credit.md: a population of hosts 1000x apart in\n"
               "speed (5%% with failed benchmarks, 1%% reporting 10x their runtimes) runs three\n"
               "apps through the validator's credit policy under each scheme (fixed, flops,\n"
               "adaptive); prints each scheme's figures.\n");
}

int vs_cmd_popsim_credit(int argc, char **argv)
{
    const char *seed = NULL, *hosts = NULL, *results = NULL;
    bool json = false;
    const struct vs_cli_opt opts[] = {
        {.name = "seed", .str = &seed},
        {.name = "hosts", .str = &hosts},
        {.name = "results", .str = &results},
        {.name = "json", .flag = &json},
    };
    int next;
    int st = vs_cli_getopt("popsim --credit", argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
                           usage, &next);
    if (st != VS_CLI_GO)
        return st;
    if (next != argc) {
        usage(stderr);
        return VS_EXIT_USAGE;
    }
    int64_t v = 1;
    struct vs_pop_credit_options o = {.seed = 1};
    if (seed) {
        if (!vs_cli_int("popsim --credit", "seed", seed, 0, INT64_MAX, &v))
            return VS_EXIT_USAGE;
        o.seed = (uint64_t)v;
    }
    if (hosts) {
        if (!vs_cli_int("popsim --credit", "hosts", hosts, 10, 1000000, &v))
            return VS_EXIT_USAGE;
        o.nhosts = (int)v;
    }
    if (results) {
        if (!vs_cli_int("popsim --credit", "results", results, 1000, 100000000, &v))
            return VS_EXIT_USAGE;
        o.nresults = (int)v;
    }
    struct vs_pop_credit_result r;
    if (vs_pop_credit_run(&o, &r) != 0)
        return VS_EXIT_FAIL;
    if (json)
        printf("{\"hosts\": %d, \"results\": %d, \"schemes\": {", r.nhosts, r.nresults);
    else
        printf("%d hosts, %d results per scheme (seed %llu)\n%-9s %9s %9s %11s %12s %11s %10s\n",
               r.nhosts, r.nresults, (unsigned long long)o.seed, "scheme", "cv_hosts", "cv_apps",
               "cheat_gain", "failed_gain", "settle_res", "credit/h");
    for (int m = 0; m < 3; m++) {
        const struct vs_pop_credit_scheme *s = &r.scheme[m];
        if (json)
            printf("%s\"%s\": {\"cv_hosts\": %.4f, \"cv_apps\": %.4f, \"cheat_gain\": %.4f, "
                   "\"failed_gain\": %.4f, \"settle_results\": %.0f, \"credit_per_hour\": %.4f}",
                   m ? ", " : "", vs_credit_method_name(m), s->cv_hosts, s->cv_apps, s->cheat_gain,
                   s->failed_gain, s->settle_results, s->credit_per_hour);
        else
            printf("%-9s %9.3f %9.3f %11.3f %12.3f %11.0f %10.2f\n", vs_credit_method_name(m),
                   s->cv_hosts, s->cv_apps, s->cheat_gain, s->failed_gain, s->settle_results,
                   s->credit_per_hour);
    }
    if (json)
        printf("}}\n");
    return VS_EXIT_OK;
}
