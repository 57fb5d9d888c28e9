/*
 * Fuzz target: client addresses (volsched/http_addr.h). The input is split
 * at its first newline: a trusted-proxy prefix, then an X-Forwarded-For
 * header. The prefix parser must accept only what it can print back; the
 * forwarded client must be the peer, or an address of the header that is
 * not trusted (never one a proxy list would match).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "volsched/alloc.h"
#include "volsched/http_addr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192)
        return 0;
    char *s = vs_xmalloc(size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    if (strlen(s) != size) { /* a header has no NUL */
        vs_free(s);
        return 0;
    }
    char *nl = strchr(s, '\n');
    const char *xff = nl ? nl + 1 : "";
    if (nl)
        *nl = '\0';
    struct vs_ip_prefix tr[2];
    size_t ntr = 0;
    if (vs_ip_prefix_parse(s, &tr[0]) == 0) {
        CHECK(tr[0].bits <= 128);
        ntr++;
    }
    CHECK(vs_ip_prefix_parse("127.0.0.0/8", &tr[ntr]) == 0);
    ntr++;
    struct vs_ip peer, out;
    CHECK(vs_ip_parse("127.0.0.2", &peer) == 0);
    bool got = vs_ip_forwarded_client(&peer, xff, tr, ntr, &out);
    if (got) {
        CHECK(!vs_ip_in_any(&out, tr, ntr));
        char text[64];
        vs_ip_text(&out, text, sizeof(text));
        CHECK(strstr(xff, text) != NULL || strchr(text, ':')); /* v6 text may be shortened */
    } else {
        CHECK(memcmp(out.b, peer.b, 16) == 0);
    }
    vs_free(s);
    return 0;
}
