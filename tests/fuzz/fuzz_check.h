/*
 * What the fuzz targets share: the libFuzzer entry point's prototype and
 * CHECK, which aborts on a violated property so that the fuzzer (or the
 * CTest replay of the corpus) reports it. Not named fuzz_*.c, so the build
 * does not take it for a target.
 */
#ifndef VOLSCHED_FUZZ_CHECK_H
#define VOLSCHED_FUZZ_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (!(x))                                                                                  \
            abort();                                                                               \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
