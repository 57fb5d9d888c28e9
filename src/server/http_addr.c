/*
 * Client addresses and X-Forwarded-For; see http_addr.h.
 */
#include "volsched/http_addr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

static void map_v4(const void *a4, struct vs_ip *out)
{
    memset(out->b, 0, 10);
    out->b[10] = 0xff;
    out->b[11] = 0xff;
    memcpy(out->b + 12, a4, 4);
}

static bool is_v4(const struct vs_ip *ip)
{
    static const uint8_t pre[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return memcmp(ip->b, pre, sizeof(pre)) == 0;
}

int vs_ip_parse(const char *text, struct vs_ip *out)
{
    struct in_addr a4;
    if (inet_pton(AF_INET, text, &a4) == 1) {
        map_v4(&a4, out);
        return 0;
    }
    if (inet_pton(AF_INET6, text, out->b) == 1)
        return 0;
    return VS_EINVAL;
}

int vs_ip_prefix_parse(const char *text, struct vs_ip_prefix *out)
{
    char buf[64];
    size_t n = strlen(text);
    if (n == 0 || n >= sizeof(buf))
        return VS_EINVAL;
    memcpy(buf, text, n + 1);
    char *slash = strchr(buf, '/');
    long bits = -1;
    if (slash) {
        *slash = '\0';
        char *end;
        bits = strtol(slash + 1, &end, 10);
        if (end == slash + 1 || *end != '\0' || bits < 0)
            return VS_EINVAL;
    }
    struct in_addr a4;
    if (inet_pton(AF_INET, buf, &a4) == 1) {
        if (bits > 32)
            return VS_EINVAL;
        map_v4(&a4, &out->ip);
        out->bits = bits < 0 ? 128u : 96u + (unsigned)bits;
        return 0;
    }
    if (inet_pton(AF_INET6, buf, out->ip.b) != 1 || bits > 128)
        return VS_EINVAL;
    out->bits = bits < 0 ? 128u : (unsigned)bits;
    return 0;
}

bool vs_ip_from_sockaddr(const struct sockaddr *sa, struct vs_ip *out)
{
    if (sa->sa_family == AF_INET) {
        map_v4(&((const struct sockaddr_in *)(const void *)sa)->sin_addr, out);
        return true;
    }
    if (sa->sa_family == AF_INET6) {
        memcpy(out->b, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
        return true;
    }
    return false;
}

void vs_ip_text(const struct vs_ip *ip, char *out, size_t n)
{
    const char *r = is_v4(ip) ? inet_ntop(AF_INET, ip->b + 12, out, (socklen_t)n)
                              : inet_ntop(AF_INET6, ip->b, out, (socklen_t)n);
    if (!r && n > 0)
        out[0] = '\0';
}

bool vs_ip_in_prefix(const struct vs_ip *ip, const struct vs_ip_prefix *p)
{
    unsigned full = p->bits / 8, rest = p->bits % 8;
    if (memcmp(ip->b, p->ip.b, full) != 0)
        return false;
    if (rest == 0)
        return true;
    uint8_t mask = (uint8_t)(0xffu << (8 - rest));
    return (ip->b[full] & mask) == (p->ip.b[full] & mask);
}

bool vs_ip_in_any(const struct vs_ip *ip, const struct vs_ip_prefix *ps, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (vs_ip_in_prefix(ip, &ps[i]))
            return true;
    return false;
}

/* The entry of xff that ends at end (exclusive), trimmed, as an address. */
static bool entry_ip(const char *start, const char *end, struct vs_ip *out)
{
    while (start < end && (*start == ' ' || *start == '\t'))
        start++;
    while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    char buf[64];
    size_t n = (size_t)(end - start);
    if (n == 0 || n >= sizeof(buf))
        return false;
    memcpy(buf, start, n);
    buf[n] = '\0';
    return vs_ip_parse(buf, out) == 0;
}

bool vs_ip_forwarded_client(const struct vs_ip *peer, const char *xff,
                            const struct vs_ip_prefix *trusted, size_t ntrusted, struct vs_ip *out)
{
    *out = *peer;
    if (!xff || ntrusted == 0 || !vs_ip_in_any(peer, trusted, ntrusted))
        return false;
    const char *end = xff + strlen(xff);
    /* Bounded: a header is at most a few KB, and only 64 hops are read. */
    for (int hop = 0; hop < 64 && end > xff; hop++) {
        const char *start = end;
        while (start > xff && start[-1] != ',')
            start--;
        struct vs_ip ip;
        if (!entry_ip(start, end, &ip))
            return false;
        if (!vs_ip_in_any(&ip, trusted, ntrusted)) {
            *out = ip;
            return true;
        }
        end = start > xff ? start - 1 : start;
    }
    return false;
}
