/*
 * volsched popsim: runs a project against a simulated host population and
 * prints the figures (a table, or JSON), optionally the hourly timeline as
 * CSV and as an SVG picture.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"
#include "cmd.h"
#include "volsched/alloc.h"
#include "volsched/popsim.h"
#include "volsched/scn.h"
#include "volsched/str.h"

#define MAX_SEEDS 100

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched popsim SCENARIO [--json] [--seed N] [--seeds K] [--days N]\n"
               "                       [--model light|full] [--csv F.csv] [--svg F.svg]\n"
               "                       [--no-progress]\n"
               "       volsched popsim --credit [--seed N] [--hosts N] [--results N] [--json]\n"
               "\n"
               "Simulates one project's server (the scheduler policy code `volsched serve`\n"
               "runs) against a population of volunteer hosts drawn from the scenario's\n"
               "distributions, and prints batch makespan, turnaround, results sent, valid,\n"
               "invalid, timed out and wasted, CPU and bytes, and the server's RPC rate.\n"
               "\n"
               "Options:\n"
               "  --json         print the figures as one JSON object\n"
               "  --seed N       random seed (default: the scenario's seed, 1)\n"
               "  --seeds K      run seeds N .. N+K-1 and print each figure's mean and 95%%\n"
               "                 confidence half-width (K from 2 to 100)\n"
               "  --days N       simulated days (default: the scenario's duration, 30)\n"
               "  --model M      the host model: light, or full (each host runs the client\n"
               "                 policy library as `volsched sim` does); default the\n"
               "                 scenario's model, light\n"
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

/* --seeds: the same scenario over seeds o->seed (or the scenario's) onwards. */
static int run_seeds(const struct vs_pop_scenario *s, struct vs_pop_options *o, size_t n, bool json,
                     bool progress)
{
    struct vs_pop_result *r = vs_xcalloc(n, sizeof(*r));
    uint64_t first = o->seed_set ? o->seed : s->seed;
    int status = VS_EXIT_OK;
    char label[32];
    struct vs_cli_progress pg = {.enabled = progress};
    size_t done = 0;
    for (; done < n; done++) {
        snprintf(label, sizeof(label), "seed %llu", (unsigned long long)(first + done));
        vs_cli_progress_start(&pg, label);
        o->progress = vs_cli_progress_cb;
        o->progress_ctx = &pg;
        o->seed_set = true;
        o->seed = first + done;
        int rc = vs_popsim_run(s, o, &r[done]);
        if (rc) {
            fprintf(stderr, "volsched popsim: seed %llu: %s\n", (unsigned long long)o->seed,
                    vs_strerror(rc));
            status = VS_EXIT_FAIL;
            break;
        }
    }
    if (status == VS_EXIT_OK && vs_pop_print_summary(stdout, s, r, n, json) != 0)
        status = VS_EXIT_FAIL;
    for (size_t i = 0; i < done; i++)
        vs_pop_result_cleanup(&r[i]);
    vs_free(r);
    return status;
}

int vs_cmd_popsim(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'},        {"seed", required_argument, NULL, 's'},
        {"days", required_argument, NULL, 'd'},  {"csv", required_argument, NULL, 'c'},
        {"svg", required_argument, NULL, 'v'},   {"no-progress", no_argument, NULL, 'P'},
        {"seeds", required_argument, NULL, 'k'}, {"model", required_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0},
    };
    if (argc > 1 && strcmp(argv[1], "--credit") == 0)
        return vs_cmd_popsim_credit(argc - 1, argv + 1);
    bool json = false, no_progress = false;
    size_t nseeds = 0;
    const char *csv = NULL, *svg = NULL;
    struct vs_pop_options o = {0};
    int model = -1;
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
        case 'k': {
            int64_t v;
            if (vs_parse_int64(optarg, &v) != 0 || v < 2 || v > MAX_SEEDS) {
                fprintf(stderr, "volsched popsim: --seeds wants a count from 2 to %d\n", MAX_SEEDS);
                return VS_EXIT_USAGE;
            }
            nseeds = (size_t)v;
            break;
        }
        case 'm':
            model = -1;
            for (int i = 0; vs_pop_models[i]; i++)
                if (strcmp(optarg, vs_pop_models[i]) == 0)
                    model = i;
            if (model < 0) {
                fprintf(stderr, "volsched popsim: --model wants light or full\n");
                return VS_EXIT_USAGE;
            }
            break;
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
    vs_scn_print_notes(stderr, "volsched popsim", path, &e);
    if (rc) {
        if (e.line > 0)
            fprintf(stderr, "volsched popsim: %s:%d:%d: %s\n", path, e.line, e.col, e.msg);
        else
            fprintf(stderr, "volsched popsim: %s\n", e.msg[0] ? e.msg : vs_strerror(rc));
        /* A bad or missing scenario is bad input (as sim); a read error a failure. */
        bool bad = rc == VS_EPARSE || rc == VS_ELIMIT || rc == -ENOENT || e.line > 0;
        return bad ? VS_EXIT_USAGE : VS_EXIT_FAIL;
    }
    if (model >= 0)
        s.model = model;
    if (nseeds && (csv || svg)) {
        fprintf(stderr, "volsched popsim: --csv and --svg draw one run; not with --seeds\n");
        return VS_EXIT_USAGE;
    }
    if (nseeds)
        return run_seeds(&s, &o, nseeds, json, !no_progress && isatty(STDERR_FILENO));
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
