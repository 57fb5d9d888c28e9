/*
 * Connection limits and deadlines of the HTTP front end; see http_guard.h.
 */
#include "server/http_guard.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "volsched/alloc.h"

#define NBUCKETS 4096u /* per-address table; chains stay short at 10^5 peers */

enum phase { PH_HEAD = 0, PH_BODY, PH_BUSY };

struct vs_http_conn {
    struct vs_http_conn *prev, *next;
    struct vs_ip ip;
    int fd;
    enum phase phase;
    bool trusted, counted, cut;
    double since;     /* start of the current phase (monotonic seconds) */
    uint64_t body_in; /* body bytes of the current request */
    int listener;     /* the front end's mark of the listener it came in on */
};

struct addr_ent {
    struct addr_ent *next;
    struct vs_ip ip;
    unsigned n;
};

struct vs_http_guard {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* the reaper's sleep; signalled to stop */
    pthread_t reaper;
    bool stop, started;
    struct vs_http_guard_config cfg;
    struct vs_ip_prefix *trusted;
    struct vs_http_conn *head; /* every open connection */
    struct addr_ent *buckets[NBUCKETS];
    struct vs_http_guard_stats st;
    struct vs_http_guard_stats logged; /* what the last log line covered */
    double last_log;
    char last_addr[48]; /* the last address refused for its count */
};

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static unsigned bucket_of(const struct vs_ip *ip)
{
    uint32_t h = 2166136261u;
    for (int i = 0; i < 16; i++)
        h = (h ^ ip->b[i]) * 16777619u;
    return h % NBUCKETS;
}

static struct addr_ent **find_ent(struct vs_http_guard *g, const struct vs_ip *ip)
{
    struct addr_ent **pp = &g->buckets[bucket_of(ip)];
    while (*pp && memcmp((*pp)->ip.b, ip->b, 16) != 0)
        pp = &(*pp)->next;
    return pp;
}

static unsigned addr_count(struct vs_http_guard *g, const struct vs_ip *ip)
{
    struct addr_ent *e = *find_ent(g, ip);
    return e ? e->n : 0;
}

static void addr_add(struct vs_http_guard *g, const struct vs_ip *ip, int delta)
{
    struct addr_ent **pp = find_ent(g, ip);
    if (!*pp) {
        if (delta <= 0)
            return;
        *pp = VS_NEW(struct addr_ent);
        (*pp)->ip = *ip;
    }
    struct addr_ent *e = *pp;
    e->n = delta > 0 ? e->n + (unsigned)delta : e->n - (unsigned)-delta;
    if (e->n == 0) {
        *pp = e->next;
        vs_free(e);
    }
}

/* Closes the connection's stream under the lock (the record, and so its
 * descriptor, live until vs_http_guard_close takes the same lock). */
static void cut(struct vs_http_conn *c)
{
    if (c->cut)
        return;
    c->cut = true;
    (void)shutdown(c->fd, SHUT_RDWR);
}

/* One log line for the limits hit since the last one. */
static void log_limits(struct vs_http_guard *g, double now)
{
    struct vs_http_guard_stats *s = &g->st, *l = &g->logged;
    uint64_t head = s->head_timeouts - l->head_timeouts, body = s->slow_bodies - l->slow_bodies,
             addr = s->per_address - l->per_address, full = s->full - l->full;
    if (head + body + addr + full == 0) {
        g->last_log = now;
        return;
    }
    VS_LOG(g->cfg.log, VS_LOG_WARN,
           "http limits in the last %.0f s: %llu heads over %u s, %llu bodies under %u B/s "
           "closed; %llu connections over %u per address refused (last from %s), %llu refused "
           "at %u connections (%llu open)",
           now - g->last_log, (unsigned long long)head, g->cfg.head_timeout,
           (unsigned long long)body, g->cfg.body_min_rate, (unsigned long long)addr,
           g->cfg.max_per_address, g->last_addr[0] ? g->last_addr : "-", (unsigned long long)full,
           g->cfg.max_connections, (unsigned long long)s->open);
    *l = *s;
    g->last_log = now;
}

static void reap(struct vs_http_guard *g, double now)
{
    double ht = (double)g->cfg.head_timeout;
    for (struct vs_http_conn *c = g->head; c; c = c->next) {
        if (c->cut)
            continue;
        double age = now - c->since;
        if (c->phase == PH_HEAD && ht > 0 && age > ht) {
            g->st.head_timeouts++;
            cut(c);
        } else if (c->phase == PH_BODY && g->cfg.body_min_rate > 0 && age > (ht > 0 ? ht : 30) &&
                   (double)c->body_in < (double)g->cfg.body_min_rate * age) {
            g->st.slow_bodies++;
            cut(c);
        }
    }
}

static void *reaper_main(void *arg)
{
    struct vs_http_guard *g = arg;
    pthread_mutex_lock(&g->mu);
    while (!g->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += 250 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        int rc = pthread_cond_timedwait(&g->cv, &g->mu, &ts);
        if (g->stop)
            break;
        if (rc != ETIMEDOUT && rc != 0)
            continue;
        double now = mono();
        reap(g, now);
        if (now - g->last_log >= (double)g->cfg.log_interval)
            log_limits(g, now);
    }
    log_limits(g, mono());
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

int vs_http_guard_create(const struct vs_http_guard_config *cfg, struct vs_http_guard **out)
{
    if (!cfg || cfg->max_connections == 0)
        return VS_EINVAL;
    struct vs_http_guard *g = VS_NEW(struct vs_http_guard);
    g->cfg = *cfg;
    if (g->cfg.log_interval == 0)
        g->cfg.log_interval = 10;
    if (cfg->ntrusted) {
        g->trusted = vs_xmalloc(cfg->ntrusted * sizeof(*g->trusted));
        memcpy(g->trusted, cfg->trusted, cfg->ntrusted * sizeof(*g->trusted));
    }
    g->cfg.trusted = g->trusted;
    pthread_mutex_init(&g->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g->cv, &ca);
    pthread_condattr_destroy(&ca);
    g->last_log = mono();
    if (pthread_create(&g->reaper, NULL, reaper_main, g) != 0) {
        vs_http_guard_destroy(g);
        return VS_ENOMEM;
    }
    g->started = true;
    *out = g;
    return 0;
}

void vs_http_guard_destroy(struct vs_http_guard *g)
{
    if (!g)
        return;
    if (g->started) {
        pthread_mutex_lock(&g->mu);
        g->stop = true;
        pthread_cond_signal(&g->cv);
        pthread_mutex_unlock(&g->mu);
        pthread_join(g->reaper, NULL);
    }
    for (unsigned i = 0; i < NBUCKETS; i++) {
        while (g->buckets[i]) {
            struct addr_ent *e = g->buckets[i];
            g->buckets[i] = e->next;
            vs_free(e);
        }
    }
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
    vs_free(g->trusted);
    vs_free(g);
}

/* Whether a connection from ip must be refused now (lock held); counts it. */
static bool over_limit(struct vs_http_guard *g, const struct vs_ip *ip, bool trusted,
                       unsigned have_total, unsigned have_addr)
{
    if (have_total >= g->cfg.max_connections) {
        g->st.full++;
        return true;
    }
    if (!trusted && g->cfg.max_per_address && have_addr >= g->cfg.max_per_address) {
        g->st.per_address++;
        vs_ip_text(ip, g->last_addr, sizeof(g->last_addr));
        return true;
    }
    return false;
}

bool vs_http_guard_admit(struct vs_http_guard *g, const struct sockaddr *sa)
{
    struct vs_ip ip;
    if (!vs_ip_from_sockaddr(sa, &ip))
        return false;
    bool trusted = vs_ip_in_any(&ip, g->trusted, g->cfg.ntrusted);
    pthread_mutex_lock(&g->mu);
    bool refuse = over_limit(g, &ip, trusted, (unsigned)g->st.open, addr_count(g, &ip));
    pthread_mutex_unlock(&g->mu);
    return !refuse;
}

struct vs_http_conn *vs_http_guard_open(struct vs_http_guard *g, int fd, const struct sockaddr *sa)
{
    struct vs_http_conn *c = VS_NEW(struct vs_http_conn);
    c->fd = fd;
    c->since = mono();
    if (!sa || !vs_ip_from_sockaddr(sa, &c->ip))
        memset(&c->ip, 0, sizeof(c->ip));
    c->trusted = vs_ip_in_any(&c->ip, g->trusted, g->cfg.ntrusted);
    pthread_mutex_lock(&g->mu);
    /* Several listener threads admit at once: the counts decide here. */
    if (over_limit(g, &c->ip, c->trusted, (unsigned)g->st.open, addr_count(g, &c->ip))) {
        cut(c);
    } else {
        c->counted = true;
        g->st.open++;
        g->st.accepted++;
        addr_add(g, &c->ip, 1);
    }
    c->next = g->head;
    if (g->head)
        g->head->prev = c;
    g->head = c;
    pthread_mutex_unlock(&g->mu);
    return c;
}

void vs_http_guard_close(struct vs_http_guard *g, struct vs_http_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&g->mu);
    if (c->prev)
        c->prev->next = c->next;
    else
        g->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    if (c->counted) {
        g->st.open--;
        addr_add(g, &c->ip, -1);
    }
    pthread_mutex_unlock(&g->mu);
    vs_free(c);
}

static void set_phase(struct vs_http_guard *g, struct vs_http_conn *c, enum phase ph)
{
    if (!c)
        return;
    pthread_mutex_lock(&g->mu);
    c->phase = ph;
    c->since = mono();
    c->body_in = 0;
    pthread_mutex_unlock(&g->mu);
}

void vs_http_guard_head_done(struct vs_http_guard *g, struct vs_http_conn *c, bool expect_body)
{
    set_phase(g, c, expect_body ? PH_BODY : PH_BUSY);
}

void vs_http_guard_body(struct vs_http_guard *g, struct vs_http_conn *c, uint64_t n)
{
    if (!c)
        return;
    pthread_mutex_lock(&g->mu);
    c->body_in += n;
    pthread_mutex_unlock(&g->mu);
}

void vs_http_guard_busy(struct vs_http_guard *g, struct vs_http_conn *c)
{
    set_phase(g, c, PH_BUSY);
}

void vs_http_guard_idle(struct vs_http_guard *g, struct vs_http_conn *c)
{
    set_phase(g, c, PH_HEAD);
}

bool vs_http_guard_trusted(const struct vs_http_conn *c)
{
    return c && c->trusted;
}

void vs_http_guard_set_listener(struct vs_http_conn *c, int listener)
{
    if (c)
        c->listener = listener;
}

int vs_http_guard_listener(const struct vs_http_conn *c)
{
    return c ? c->listener : 0;
}

const struct vs_ip *vs_http_guard_peer(const struct vs_http_conn *c)
{
    return &c->ip;
}

const struct vs_ip_prefix *vs_http_guard_proxies(const struct vs_http_guard *g, size_t *n)
{
    *n = g->cfg.ntrusted;
    return g->trusted;
}

void vs_http_guard_get_stats(struct vs_http_guard *g, struct vs_http_guard_stats *out)
{
    pthread_mutex_lock(&g->mu);
    *out = g->st;
    pthread_mutex_unlock(&g->mu);
}

uint64_t vs_http_raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 1024;
    if (rl.rlim_cur < rl.rlim_max) {
        struct rlimit want = {.rlim_cur = rl.rlim_max, .rlim_max = rl.rlim_max};
        if (setrlimit(RLIMIT_NOFILE, &want) == 0)
            rl.rlim_cur = rl.rlim_max;
    }
    return rl.rlim_cur == RLIM_INFINITY ? (uint64_t)1 << 20 : (uint64_t)rl.rlim_cur;
}
