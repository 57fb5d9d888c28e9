/*
 * volsched release: releases workunits held by `create_work --no_transition`
 * (transition_time "never"), by name or by batch, then runs one
 * transitioner pass so their results exist when it returns.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli_util.h"
#include "cmd.h"
#include "volsched/store.h"
#include "volsched/str.h"
#include "volsched/transitioner.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched release [--project DIR] (--batch N | WU_NAME...)\n"
               "\n"
               "Releases jobs made with `volsched create_work --no_transition`: until then\n"
               "no transitioner makes their results, so nothing is sent. Releases the named\n"
               "workunits, or every held workunit of batch N, then makes their results.\n"
               "Prints how many were released.\n");
}

int vs_cmd_release(int argc, char **argv)
{
    const char *project = NULL, *batch = NULL;
    const struct vs_cli_opt opts[] = {
        {.name = "project", .str = &project},
        {.name = "batch", .str = &batch},
    };
    int next;
    int st =
        vs_cli_getopt("release", argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage, &next);
    if (st != VS_CLI_GO)
        return st;
    int64_t b = 0;
    if ((batch == NULL) == (next == argc)) {
        fprintf(stderr, "volsched release: give --batch N or workunit names (one of them)\n");
        usage(stderr);
        return VS_EXIT_USAGE;
    }
    if (batch && !vs_cli_int("release", "batch", batch, 0, INT64_C(1) << 53, &b))
        return VS_EXIT_USAGE;
    struct vs_project_config cfg;
    struct vs_store *s;
    if (!vs_cli_open_project("release", project, &cfg, &s))
        return VS_EXIT_FAIL;
    int64_t now = (int64_t)time(NULL), total = 0;
    int rc = vs_store_begin(s);
    for (int i = next; rc == 0 && (batch ? i == next : i < argc); i++) {
        int64_t n = 0;
        rc = vs_store_workunits_release(s, batch ? NULL : argv[i], b, now, &n);
        if (rc == 0 && n == 0 && !batch)
            fprintf(stderr, "volsched release: %s is not a held workunit\n", argv[i]);
        total += n;
    }
    if (rc == 0)
        rc = vs_store_commit(s);
    else
        (void)vs_store_rollback(s);
    if (rc) {
        fprintf(stderr, "volsched release: store: %s (nothing released)\n", vs_strerror(rc));
        vs_store_close(s);
        return VS_EXIT_FAIL;
    }
    printf("released %lld workunit(s)\n", (long long)total);
    struct vs_transitioner_stats ts;
    do
        rc = vs_transitioner_pass(s, &cfg, now, 1000, NULL, &ts);
    while (rc == 0 && ts.nwus == 1000);
    if (rc)
        fprintf(stderr,
                "volsched release: warning: transitioner pass: %s (the server's "
                "transitioner will retry)\n",
                vs_strerror(rc));
    vs_store_close(s);
    return total > 0 || batch ? VS_EXIT_OK : VS_EXIT_USAGE;
}
