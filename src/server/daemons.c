/* All back-end daemons, one pass each (see daemons.h). */
#include "server/daemons.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "volsched/alloc.h"

#include "server/daemon_util.h"
#include "store/store_project.h"
#include "volsched/log.h"
#include "volsched/str.h"

static const char *const names[] = {"transitioner", "validator", "assimilator", "file_deleter"};

unsigned vs_daemon_by_name(const char *name)
{
    for (unsigned i = 0; name && i < 4; i++)
        if (strcmp(name, names[i]) == 0)
            return 1u << i;
    return 0;
}

const char *vs_daemon_name(unsigned bit)
{
    for (unsigned i = 0; i < 4; i++)
        if (bit == 1u << i)
            return names[i];
    return "";
}

/* Adds one pass to the daemon's status row. */
static void record(struct vs_store *s, struct vs_log *log, unsigned i, int64_t now, int64_t work,
                   const char *err)
{
    struct vs_daemon_status d;
    int rc = vs_store_daemon_status_get(s, names[i], &d);
    if (rc == VS_ENOTFOUND) {
        memset(&d, 0, sizeof(d));
        rc = vs_strlcpy(d.name, names[i], sizeof(d.name));
    }
    if (rc == 0) {
        d.last_run = now;
        d.last_work = work;
        d.total_work += work;
        if (err && *err) {
            d.last_error_time = now;
            vs_daemon_msg(d.last_error, sizeof(d.last_error), "%s", err);
        }
        rc = vs_store_daemon_status_put(s, &d);
    }
    if (rc)
        VS_LOG(log, VS_LOG_WARN, "%s: cannot record status: %s", names[i], vs_strerror(rc));
}

int vs_daemons_run_once(struct vs_store *s, const struct vs_project_config *cfg, int64_t now,
                        unsigned which, struct vs_log *log, struct vs_daemons_stats *stats)
{
    if (!s || !cfg)
        return VS_EINVAL;
    struct vs_daemons_stats st;
    memset(&st, 0, sizeof(st));
    int64_t total = 0;
    for (unsigned i = 0; i < 4; i++) {
        if (!(which & (1u << i)))
            continue;
        int rc = 0;
        int64_t work = 0;
        const char *err = NULL;
        char buf[VS_NAME_MAX];
        switch (i) {
        case 0:
            rc = vs_transitioner_pass(s, cfg, now, 0, log, &st.transitioner);
            work = rc == 0 ? st.transitioner.nwus : 0;
            if (rc) {
                vs_daemon_msg(buf, sizeof(buf), "%s", vs_strerror(rc));
                err = buf;
            }
            break;
        case 1:
            rc = vs_validator_pass(s, cfg, now, 0, log, &st.validator);
            err = st.validator.last_error;
            work = st.validator.nwus;
            break;
        case 2:
            rc = vs_assimilator_pass(s, cfg, now, 0, log, &st.assimilator);
            err = st.assimilator.last_error;
            work = st.assimilator.nwus;
            break;
        default:
            rc = vs_file_deleter_pass(s, cfg, now, 0, log, &st.file_deleter);
            err = st.file_deleter.last_error;
            work = st.file_deleter.nwus + st.file_deleter.nresults;
            break;
        }
        st.rc[i] = rc < 0 ? rc : 0;
        if (rc < 0)
            VS_LOG(log, VS_LOG_WARN, "%s: %s", names[i], vs_strerror(rc));
        total += work;
        record(s, log, i, now, work, err);
    }
    if (stats)
        *stats = st;
    return total > INT32_MAX ? INT32_MAX : (int)total;
}

/* ------------------------------------------------------------------------ */
/* Background runner                                                         */

struct vs_daemons_runner {
    struct vs_project_config cfg;
    unsigned which;
    int interval_ms;
    struct vs_log *log;
    struct vs_store *s;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;       /* under mu */
    uint64_t passes; /* under mu */
};

static void *runner_main(void *arg)
{
    struct vs_daemons_runner *r = arg;
    for (;;) {
        int n = vs_daemons_run_once(r->s, &r->cfg, (int64_t)time(NULL), r->which, r->log, NULL);
        pthread_mutex_lock(&r->mu);
        r->passes++;
        if (n <= 0 && !r->stop) {
            /* Idle: sleep until the interval is over or stop is asked. */
            struct timespec until;
            clock_gettime(CLOCK_MONOTONIC, &until);
            until.tv_sec += r->interval_ms / 1000;
            until.tv_nsec += (long)(r->interval_ms % 1000) * 1000000L;
            if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
            }
            while (!r->stop && pthread_cond_timedwait(&r->cv, &r->mu, &until) != ETIMEDOUT) {
            }
        }
        bool stop = r->stop;
        pthread_mutex_unlock(&r->mu);
        if (stop)
            break;
    }
    return NULL;
}

int vs_daemons_runner_start(const struct vs_project_config *cfg, unsigned which, int interval_ms,
                            struct vs_log *log, struct vs_daemons_runner **out)
{
    if (!cfg || !out)
        return VS_EINVAL;
    struct vs_daemons_runner *r = vs_xcalloc(1, sizeof(*r));
    r->cfg = *cfg;
    r->which = which;
    r->interval_ms = interval_ms > 0 ? interval_ms : 1000;
    r->log = log;
    int rc = vs_project_store_open(cfg, false, log, &r->s);
    if (rc) {
        vs_free(r);
        return rc;
    }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&r->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&r->mu, NULL);
    int e = pthread_create(&r->thread, NULL, runner_main, r);
    if (e != 0) {
        pthread_cond_destroy(&r->cv);
        pthread_mutex_destroy(&r->mu);
        vs_store_close(r->s);
        vs_free(r);
        return -e;
    }
    *out = r;
    return 0;
}

void vs_daemons_runner_stop(struct vs_daemons_runner *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->mu);
    r->stop = true;
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
    pthread_join(r->thread, NULL);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    vs_store_close(r->s);
    vs_free(r);
}

uint64_t vs_daemons_runner_passes(struct vs_daemons_runner *r)
{
    pthread_mutex_lock(&r->mu);
    uint64_t n = r->passes;
    pthread_mutex_unlock(&r->mu);
    return n;
}
