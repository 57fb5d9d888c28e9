/*
 * Client addresses for the HTTP front end, pure (no I/O): the trusted
 * proxies' address prefixes (config.xml <trusted_proxy>), and the client a
 * request comes from when a trusted proxy names it in X-Forwarded-For.
 */
#ifndef VOLSCHED_SERVER_HTTP_ADDR_H
#define VOLSCHED_SERVER_HTTP_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "volsched/error.h"

/* An IPv4 or IPv6 address as 16 bytes (IPv4 mapped: ::ffff:a.b.c.d), so
 * that one table and one comparison serve both families. */
struct vs_ip {
    uint8_t b[16];
};

/* An address prefix: "10.0.0.0/8", "::1", "192.0.2.7" (a whole address). */
struct vs_ip_prefix {
    struct vs_ip ip;
    unsigned bits; /* 0..128 over the 16-byte form */
};

/* Parses text (an IPv4 or IPv6 address, optionally "/bits") into *out.
 * Returns 0, or VS_EINVAL. */
VS_MUST_CHECK int vs_ip_prefix_parse(const char *text, struct vs_ip_prefix *out);

/* Parses an address without prefix. Returns 0, or VS_EINVAL. */
VS_MUST_CHECK int vs_ip_parse(const char *text, struct vs_ip *out);

/* The 16-byte form of a socket address (AF_INET or AF_INET6); false for
 * another family. */
bool vs_ip_from_sockaddr(const struct sockaddr *sa, struct vs_ip *out);

/* The address as text (IPv4 as a.b.c.d), into out (at least 46 bytes). */
void vs_ip_text(const struct vs_ip *ip, char *out, size_t n);

bool vs_ip_in_prefix(const struct vs_ip *ip, const struct vs_ip_prefix *p);
bool vs_ip_in_any(const struct vs_ip *ip, const struct vs_ip_prefix *ps, size_t n);

/*
 * The client of a request that came from peer, given its X-Forwarded-For
 * header (NULL: none) and the trusted proxies: when peer is trusted, the
 * rightmost address of the header that is not itself a trusted proxy (each
 * proxy appends the address it got the request from, so the entries left
 * of the first untrusted one are the client's to write, and not believed).
 * The header is read at most 64 entries from its right. Returns true and
 * *out when the header gave the client, false (and *out = peer) otherwise:
 * peer untrusted, no header, or an entry that is not an address.
 */
bool vs_ip_forwarded_client(const struct vs_ip *peer, const char *xff,
                            const struct vs_ip_prefix *trusted, size_t ntrusted, struct vs_ip *out);

#endif
