/*
 * Replays a saved fuzz corpus through a fuzz target without libFuzzer
 * (SQLite's fuzzcheck idea): every file in the directories or files given on
 * the command line is fed to LLVMFuzzerTestOneInput once. A crash or a
 * sanitizer report fails the CTest run, so a bug the fuzzer found stays fixed.
 */
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "volsched/alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLAY_MAX_INPUT (4u * 1024u * 1024u)

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    uint8_t *buf = vs_xmalloc(REPLAY_MAX_INPUT);
    size_t n = fread(buf, 1, REPLAY_MAX_INPUT, f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
    vs_free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int files = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: no such file or directory: %s\n", argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            bad += run_file(argv[i]);
            files++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d)
            return 1;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char path[4096];
            int n = snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
            if (n < 0 || (size_t)n >= sizeof(path))
                continue;
            bad += run_file(path);
            files++;
        }
        closedir(d);
    }
    printf("replay: %d inputs, %d unreadable\n", files, bad);
    return (files == 0 || bad) ? 1 : 0;
}
