/* `volsched keygen DIR`: writes BOINC-format code-signing and upload key pairs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "volsched/sign.h"
#include "volsched/str.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: volsched keygen [--bits N] DIR\n"
            "\n"
            "Writes two new RSA key pairs into DIR (created if missing) in BOINC's key\n"
            "text format: %s / %s (code signing: <code_sign_key>,\n"
            "<file_signature>) and %s / %s (upload certificates:\n"
            "<xml_signature>). Private files get mode 0600. Existing keys are never\n"
            "overwritten. --bits defaults to %d, the most the BOINC client accepts.\n",
            VS_SIGN_CODE_PRIVATE, VS_SIGN_CODE_PUBLIC, VS_SIGN_UPLOAD_PRIVATE,
            VS_SIGN_UPLOAD_PUBLIC, VS_SIGN_KEY_BITS);
}

int vs_cmd_keygen(int argc, char **argv)
{
    const char *dir = NULL;
    int64_t bits = VS_SIGN_KEY_BITS;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return VS_EXIT_OK;
        }
        if (strcmp(argv[i], "--bits") == 0) {
            if (i + 1 >= argc || vs_parse_int64(argv[i + 1], &bits) != 0 || bits < 512 ||
                bits > VS_SIGN_KEY_BITS) {
                fprintf(stderr, "volsched keygen: --bits needs a number from 512 to %d\n",
                        VS_SIGN_KEY_BITS);
                return VS_EXIT_USAGE;
            }
            i++;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "volsched keygen: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return VS_EXIT_USAGE;
        } else if (!dir) {
            dir = argv[i];
        } else {
            fprintf(stderr, "volsched keygen: unexpected argument '%s'\n", argv[i]);
            return VS_EXIT_USAGE;
        }
    }
    if (!dir) {
        usage(stderr);
        return VS_EXIT_USAGE;
    }
    int rc = vs_sign_keygen_write(dir, (int)bits);
    if (rc) {
        fprintf(stderr, "volsched keygen: %s: %s%s\n", dir, vs_strerror(rc),
                rc == VS_EEXISTS ? " (keys are never overwritten)" : "");
        return VS_EXIT_FAIL;
    }
    printf("wrote %s/{%s,%s,%s,%s}\n", dir, VS_SIGN_CODE_PRIVATE, VS_SIGN_CODE_PUBLIC,
           VS_SIGN_UPLOAD_PRIVATE, VS_SIGN_UPLOAD_PUBLIC);
    return VS_EXIT_OK;
}
