#include "volsched/error.h"

#include <string.h>

const char *vs_strerror(int code)
{
    if (code == 0)
        return "success";
    switch (code) {
#define VS_X_CASE(name, msg)                                                                       \
    case VS_E##name:                                                                               \
        return msg;
        VS_ERROR_TABLE(VS_X_CASE)
#undef VS_X_CASE
    default:
        break;
    }
    if (code < 0 && code > VS_E__BASE)
        return strerror(-code); /* NOLINT(concurrency-mt-unsafe): messages are static in glibc */
    return "unknown error";
}
