/*
 * The HTTP front end's protection against slow and greedy clients, shared
 * by the HTTP and HTTPS listeners of one server (libmicrohttpd only
 * tracks each daemon alone, and only idle time):
 *
 *  - a request head must arrive within head_timeout seconds of the
 *    connection's start or of the end of its previous request (slowloris
 *    drips a head one byte at a time, which an idle timeout never cuts);
 *  - a body must keep at least body_min_rate bytes/s on average once it is
 *    head_timeout seconds old;
 *  - at most max_per_address connections from one address (trusted
 *    proxies excepted), at most max_connections in all; a connection over
 *    either is closed at once, before it costs a request's memory.
 *
 * A reaper thread closes late connections (shutdown(2): the server's loop
 * sees the end of the stream and frees the connection as usual). Every
 * limit hit is counted and logged at most once per log interval, with the
 * counts, never once per connection.
 */
#ifndef VOLSCHED_SERVER_HTTP_GUARD_H
#define VOLSCHED_SERVER_HTTP_GUARD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "volsched/http_addr.h"
#include "volsched/log.h"

struct vs_http_guard_config {
    unsigned head_timeout;              /* seconds; 0: off */
    unsigned body_min_rate;             /* bytes per second; 0: off */
    unsigned max_per_address;           /* 0: off */
    unsigned max_connections;           /* required (> 0) */
    unsigned log_interval;              /* seconds between limit log lines; 0: 10 */
    const struct vs_ip_prefix *trusted; /* copied */
    size_t ntrusted;
    struct vs_log *log; /* borrowed */
};

struct vs_http_guard_stats {
    uint64_t accepted;      /* connections taken */
    uint64_t open;          /* connections open now */
    uint64_t head_timeouts; /* closed: head not in within head_timeout */
    uint64_t slow_bodies;   /* closed: body under body_min_rate */
    uint64_t per_address;   /* refused: over max_per_address */
    uint64_t full;          /* refused: max_connections reached */
};

/* One connection's record (opaque), made by vs_http_guard_open. */
struct vs_http_conn;
struct vs_http_guard;

/* Creates the guard and starts its reaper. Returns 0 and *out, or an error. */
VS_MUST_CHECK int vs_http_guard_create(const struct vs_http_guard_config *cfg,
                                       struct vs_http_guard **out);
/* Stops the reaper and frees the guard (every connection closed first). */
void vs_http_guard_destroy(struct vs_http_guard *g);

/* The accept check (before anything is allocated): false refuses. */
bool vs_http_guard_admit(struct vs_http_guard *g, const struct sockaddr *sa);
/* A connection started on fd from sa: its record (never NULL). A
 * connection that got past vs_http_guard_admit while others from its
 * address raced it is shut down here, so the limits are exact. */
struct vs_http_conn *vs_http_guard_open(struct vs_http_guard *g, int fd, const struct sockaddr *sa);
/* The connection is gone (before its socket is closed). */
void vs_http_guard_close(struct vs_http_guard *g, struct vs_http_conn *c);

/* Its request head arrived; expect_body: a body follows (POST). */
void vs_http_guard_head_done(struct vs_http_guard *g, struct vs_http_conn *c, bool expect_body);
/* n more body bytes arrived. */
void vs_http_guard_body(struct vs_http_guard *g, struct vs_http_conn *c, uint64_t n);
/* The body is complete: the request is being answered (no deadline). */
void vs_http_guard_busy(struct vs_http_guard *g, struct vs_http_conn *c);
/* The request was answered: the next head's deadline starts now. */
void vs_http_guard_idle(struct vs_http_guard *g, struct vs_http_conn *c);

/* The listener the connection came in on, as the front end numbers them
 * (0 until set). */
void vs_http_guard_set_listener(struct vs_http_conn *c, int listener);
int vs_http_guard_listener(const struct vs_http_conn *c);
/* Whether the connection's peer is a trusted proxy, and its address. */
bool vs_http_guard_trusted(const struct vs_http_conn *c);
const struct vs_ip *vs_http_guard_peer(const struct vs_http_conn *c);
const struct vs_ip_prefix *vs_http_guard_proxies(const struct vs_http_guard *g, size_t *n);

void vs_http_guard_get_stats(struct vs_http_guard *g, struct vs_http_guard_stats *out);

/*
 * Raises the soft open-file limit to the hard one (each connection is a
 * descriptor) and returns the soft limit now in force.
 */
uint64_t vs_http_raise_nofile(void);

#endif
