/* volsched store copy: move a project's store to another backend. */
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "cmd.h"
#include "volsched/log.h"
#include "volsched/store.h"
#include "volsched/store_copy.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched store copy --from URL --to URL\n"
               "\n"
               "Copies every table of the store at --from into the store at --to (created\n"
               "if missing; its tables must be empty), ids and all, in one transaction,\n"
               "then reads both again and compares them row for row, column for column.\n"
               "How a project moves to PostgreSQL: stop it (volsched stop, or stop serve),\n"
               "copy, set <store_url> in config.xml to the new URL, start it\n"
               "(docs/scale-out.md). URLs: sqlite:PATH or postgresql://...\n");
}

static void on_table(void *ctx, const char *table, int64_t rows)
{
    (void)ctx;
    printf("  %-18s %lld rows copied and checked\n", table, (long long)rows);
}

static int store_copy(int argc, char **argv)
{
    const char *from = NULL, *to = NULL;
    const struct vs_cli_opt opts[] = {
        {.name = "from", .str = &from},
        {.name = "to", .str = &to},
    };
    int next;
    int st =
        vs_cli_getopt("store copy", argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage, &next);
    if (st != VS_CLI_GO)
        return st;
    if (!from || !to || next != argc) {
        fprintf(stderr, "volsched store copy: --from and --to are required (and nothing else)\n");
        usage(stderr);
        return VS_EXIT_USAGE;
    }
    if (strcmp(from, to) == 0) {
        fprintf(stderr, "volsched store copy: --from and --to name the same store\n");
        return VS_EXIT_USAGE;
    }
    struct vs_log lg;
    vs_log_init(&lg, VS_LOG_WARN, stderr, "store copy");
    struct vs_store *a = NULL, *b = NULL;
    int rc = vs_store_open(from, 0, &lg, &a);
    if (rc) {
        fprintf(stderr, "volsched store copy: cannot open %s: %s\n", from, vs_strerror(rc));
        return vs_cli_exit_for(rc);
    }
    rc = vs_store_open(to, VS_STORE_CREATE, &lg, &b);
    if (rc) {
        fprintf(stderr, "volsched store copy: cannot open %s: %s\n", to, vs_strerror(rc));
        vs_store_close(a);
        return vs_cli_exit_for(rc);
    }
    printf("copying %s to %s\n", from, to);
    rc = vs_store_copy(a, b, on_table, NULL);
    vs_store_close(a);
    vs_store_close(b);
    if (rc) {
        fprintf(stderr, "volsched store copy: %s%s\n", vs_strerror(rc),
                rc == VS_EEXISTS ? " (the destination is not empty)" : "");
        return VS_EXIT_FAIL;
    }
    printf("done: the copy matches row for row\n");
    return VS_EXIT_OK;
}

int vs_cmd_store(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
                      strcmp(argv[1], "-help") == 0)) {
        usage(stdout);
        return VS_EXIT_OK;
    }
    if (argc >= 2 && strcmp(argv[1], "copy") == 0)
        return store_copy(argc - 1, argv + 1);
    if (argc >= 2)
        fprintf(stderr, "volsched store: unknown subcommand '%s'\n", argv[1]);
    usage(stderr);
    return VS_EXIT_USAGE;
}
