#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "volsched/version.h"

int vs_cmd_version(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: volsched version\n\nPrints the volsched version.\n");
        return VS_EXIT_OK;
    }
    if (argc > 1) {
        fprintf(stderr, "volsched version: unexpected argument '%s'\n", argv[1]);
        return VS_EXIT_USAGE;
    }
    printf("volsched %s\n", VS_VERSION_STRING);
    return VS_EXIT_OK;
}
