/* Failed account-key lookups per address; see auth_limit.h. */
#include "server/auth_limit.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "volsched/http_addr.h"

#include "volsched/alloc.h"

#define NSLOTS   4096 /* power of two */
#define ADDR_MAX 64

struct slot {
    char addr[ADDR_MAX];
    double tokens; /* failures still allowed */
    int64_t t;     /* when tokens was computed */
};

struct vs_auth_limit {
    pthread_mutex_t mu;
    double burst, per_sec;
    struct slot slots[NSLOTS];
};

struct vs_auth_limit *vs_auth_limit_create(unsigned burst, unsigned per_hour)
{
    struct vs_auth_limit *l = VS_NEW(struct vs_auth_limit);
    pthread_mutex_init(&l->mu, NULL);
    l->burst = burst;
    l->per_sec = per_hour / 3600.0;
    return l;
}

void vs_auth_limit_destroy(struct vs_auth_limit *l)
{
    if (!l)
        return;
    pthread_mutex_destroy(&l->mu);
    vs_free(l);
}

static struct slot *slot_of(struct vs_auth_limit *l, const char *addr)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const char *p = addr; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return &l->slots[h & (NSLOTS - 1)];
}

/* The slot's bucket brought to now; a slot of another address, or a full
 * bucket, is (re)started full for addr. Called with the mutex held. */
static struct slot *refill(struct vs_auth_limit *l, const char *addr, int64_t now)
{
    struct slot *s = slot_of(l, addr);
    if (strncmp(s->addr, addr, ADDR_MAX - 1) != 0) {
        if (s->addr[0] && s->tokens < l->burst) {
            /* Another address's bucket that is not full: bring it up to
             * date first; only a full one may be taken over. */
            s->tokens += (double)(now - s->t) * l->per_sec;
            s->t = now;
            if (s->tokens < l->burst)
                return s; /* shared until it refills */
        }
        memset(s, 0, sizeof(*s));
        size_t n = strnlen(addr, ADDR_MAX - 1);
        memcpy(s->addr, addr, n);
        s->tokens = l->burst;
        s->t = now;
        return s;
    }
    if (now > s->t) {
        s->tokens += (double)(now - s->t) * l->per_sec;
        if (s->tokens > l->burst)
            s->tokens = l->burst;
        s->t = now;
    }
    return s;
}

bool vs_auth_limit_allow(struct vs_auth_limit *l, const char *addr, int64_t now, int *out_wait)
{
    if (!l || l->burst <= 0)
        return true;
    pthread_mutex_lock(&l->mu);
    struct slot *s = refill(l, addr ? addr : "", now);
    bool ok = s->tokens >= 1;
    int wait = 0;
    if (!ok)
        wait = l->per_sec > 0 ? (int)((1 - s->tokens) / l->per_sec) + 1 : 86400;
    pthread_mutex_unlock(&l->mu);
    if (out_wait)
        *out_wait = wait;
    return ok;
}

void vs_auth_limit_failed(struct vs_auth_limit *l, const char *addr, int64_t now)
{
    if (!l || l->burst <= 0)
        return;
    pthread_mutex_lock(&l->mu);
    struct slot *s = refill(l, addr ? addr : "", now);
    s->tokens = s->tokens >= 1 ? s->tokens - 1 : 0;
    pthread_mutex_unlock(&l->mu);
}

void vs_auth_limit_key(const char *peer, char *out, size_t n)
{
    struct vs_ip ip;
    static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (!peer || vs_ip_parse(peer, &ip) != 0 || memcmp(ip.b, v4mapped, 12) == 0) {
        snprintf(out, n, "%s", peer ? peer : "?");
        return;
    }
    memset(ip.b + 8, 0, 8);
    vs_ip_text(&ip, out, n);
}
