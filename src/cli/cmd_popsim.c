/*
 * volsched popsim: runs a project against a simulated host population and
 * prints the figures (a table, or JSON), optionally the hourly timeline as
 * CSV and as an SVG picture.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"
#include "cmd.h"
#include "volsched/popsim.h"
#include "volsched/str.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched popsim SCENARIO [--json] [--seed N] [--days N] [--csv F.csv]\n"
               "                       [--svg F.svg] [--no-progress]\n"
               "\n"
               "Simulates one project's server (the scheduler policy code `volsched serve`\n"
               "runs) against a population of volunteer hosts drawn from the scenario's\n"
               "distributions, and prints batch makespan, turnaround, results sent, valid,\n"
               "invalid, timed out and wasted, CPU and bytes, and the server's RPC rate.\n"
               "\n"
               "Options:\n"
               "  --json         print the figures as one JSON object\n"
               "  --seed N       random seed (default: the scenario's seed, 1)\n"
               "  --days N       simulated days (default: the scenario's duration, 30)\n"
               "  --csv F.csv    the hourly timeline: in flight, returned, validated, RPCs\n"
               "  --svg F.svg    a picture of results in flight and returned over time\n"
               "  --no-progress  no progress bar, even on a terminal\n"
               "\n"
               "The scenario language, the host model and the studies: docs/popsim.md.\n");
}

static int write_file(const char *path, const struct vs_pop_result *r, bool svg)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return VS_EXIT_FAIL;
    }
    int rc = svg ? vs_pop_write_svg(f, r) : vs_pop_write_csv(f, r);
    if (fclose(f) != 0 && rc == 0)
        rc = VS_EIO;
    if (rc) {
        fprintf(stderr, "volsched popsim: %s: %s\n", path, vs_strerror(rc));
        return VS_EXIT_FAIL;
    }
    return VS_EXIT_OK;
}

int vs_cmd_popsim(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'},        {"seed", required_argument, NULL, 's'},
        {"days", required_argument, NULL, 'd'},  {"csv", required_argument, NULL, 'c'},
        {"svg", required_argument, NULL, 'v'},   {"no-progress", no_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0},
    };
    bool json = false, no_progress = false;
    const char *csv = NULL, *svg = NULL;
    struct vs_pop_options o = {0};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'j':
            json = true;
            break;
        case 's': {
            int64_t v;
            if (vs_parse_int64(optarg, &v) != 0 || v < 0) {
                fprintf(stderr, "volsched popsim: --seed wants a whole number >= 0\n");
                return VS_EXIT_USAGE;
            }
            o.seed_set = true;
            o.seed = (uint64_t)v;
            break;
        }
        case 'd': {
            double v;
            if (vs_parse_double(optarg, &v) != 0 || !(v > 0) || v > 3650) {
                fprintf(stderr, "volsched popsim: --days wants a number of days in (0, 3650]\n");
                return VS_EXIT_USAGE;
            }
            o.duration = v * 86400;
            break;
        }
        case 'c':
            csv = optarg;
            break;
        case 'v':
            svg = optarg;
            break;
        case 'P':
            no_progress = true;
            break;
        case 'h':
            usage(stdout);
            return VS_EXIT_OK;
        default:
            usage(stderr);
            return VS_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        usage(stderr);
        return VS_EXIT_USAGE;
    }
    const char *path = argv[optind];
    struct vs_pop_scenario s;
    struct vs_scn_error e;
    int rc = vs_pop_scenario_load(path, &s, &e);
    if (rc) {
        if (e.line > 0)
            fprintf(stderr, "volsched popsim: %s:%d:%d: %s\n", path, e.line, e.col, e.msg);
        else
            fprintf(stderr, "volsched popsim: %s\n", e.msg[0] ? e.msg : vs_strerror(rc));
        return rc == VS_EPARSE || rc == VS_ELIMIT || e.line > 0 ? VS_EXIT_USAGE : VS_EXIT_FAIL;
    }
    struct vs_cli_progress pg = {.enabled = !no_progress && isatty(STDERR_FILENO)};
    vs_cli_progress_start(&pg, "popsim");
    o.progress = vs_cli_progress_cb;
    o.progress_ctx = &pg;
    struct vs_pop_result r;
    rc = vs_popsim_run(&s, &o, &r);
    if (rc) {
        fprintf(stderr, "volsched popsim: %s\n", vs_strerror(rc));
        return VS_EXIT_FAIL;
    }
    int status = VS_EXIT_OK;
    rc = json ? vs_pop_print_json(stdout, &s, &r) : vs_pop_print_text(stdout, &s, &r);
    if (rc)
        status = VS_EXIT_FAIL;
    if (csv && write_file(csv, &r, false) != VS_EXIT_OK)
        status = VS_EXIT_FAIL;
    if (svg && write_file(svg, &r, true) != VS_EXIT_OK)
        status = VS_EXIT_FAIL;
    vs_pop_result_cleanup(&r);
    return status;
}
