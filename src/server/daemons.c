/* All back-end daemons, one pass each (see daemons.h). */
#include "volsched/daemons.h"

#include "server/trickle.h"
#include "volsched/db_dump.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "volsched/alloc.h"

#include "volsched/daemon_util.h"
#include "volsched/log.h"
#include "volsched/ops_metrics.h"
#include "volsched/proc_ctl.h"
#include "volsched/store_project.h"
#include "volsched/store_sched.h"
#include "volsched/str.h"

static const char *const names[VS_NDAEMONS] = {"transitioner", "validator",    "assimilator",
                                               "file_deleter", "locality_gen", "locality_ws"};

unsigned vs_daemon_by_name(const char *name)
{
    for (unsigned i = 0; name && i < VS_NDAEMONS; i++)
        if (strcmp(name, names[i]) == 0)
            return 1u << i;
    return 0;
}

const char *vs_daemon_name(unsigned bit)
{
    for (unsigned i = 0; i < VS_NDAEMONS; i++)
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
    for (unsigned i = 0; i < VS_NDAEMONS; i++) {
        if (!(which & (1u << i)))
            continue;
        /* The locality daemons run only where the project configures them. */
        if ((i == 4 && !cfg->locality_gen_command[0]) || (i == 5 && cfg->locality_ws_files <= 0))
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
        case 3:
            rc = vs_file_deleter_pass(s, cfg, now, 0, log, &st.file_deleter);
            err = st.file_deleter.last_error;
            work = st.file_deleter.nwus + st.file_deleter.nresults;
            break;
        case 4:
            rc = vs_locality_gen_pass(cfg, cfg->locality_gen_command, cfg->daemon_command_timeout,
                                      log, &st.locality_gen);
            err = st.locality_gen.last_error;
            work = rc > 0 ? rc : 0;
            break;
        default:
            rc = vs_locality_ws_pass(s, cfg, (size_t)cfg->locality_ws_files, log, &st.locality_ws);
            work = rc > 0 ? rc : 0;
            if (rc < 0) {
                vs_daemon_msg(buf, sizeof(buf), "%s", vs_strerror(rc));
                err = buf;
            }
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

void vs_daemons_log_pass(struct vs_log *log, unsigned i, const struct vs_daemons_stats *st,
                         double seconds)
{
    switch (i) {
    case 0:
        if (st->transitioner.nwus > 0)
            VS_LOG(log, VS_LOG_INFO, "transitioner: %d workunits in %.3f s", st->transitioner.nwus,
                   seconds);
        break;
    case 1:
        if (st->validator.nwus > 0)
            VS_LOG(log, VS_LOG_INFO,
                   "validator: %d workunits: %d canonical, %d valid, %d invalid, %d inconclusive, "
                   "%d deferred (%.3f s)",
                   st->validator.nwus, st->validator.ncanonical, st->validator.nvalid,
                   st->validator.ninvalid, st->validator.ninconclusive, st->validator.ndeferred,
                   seconds);
        break;
    case 2:
        if (st->assimilator.nwus > 0)
            VS_LOG(log, VS_LOG_INFO,
                   "assimilator: %d workunits: %d assimilated (%d errored), %d deferred (%.3f s)",
                   st->assimilator.nwus, st->assimilator.ndone, st->assimilator.nerror,
                   st->assimilator.ndeferred, seconds);
        break;
    case 4:
        if (st->locality_gen.triggers > 0)
            VS_LOG(log, VS_LOG_INFO,
                   "locality_gen: %zu need_work triggers: %zu made work, %zu no more work, "
                   "%zu failed (%.3f s)",
                   st->locality_gen.triggers, st->locality_gen.made, st->locality_gen.exhausted,
                   st->locality_gen.failed, seconds);
        break;
    case 5:
        if (st->locality_ws.removed + st->locality_ws.added > 0)
            VS_LOG(log, VS_LOG_INFO,
                   "locality_ws: working set %zu files (%zu removed, %zu added) (%.3f s)",
                   st->locality_ws.size, st->locality_ws.removed, st->locality_ws.added, seconds);
        break;
    default:
        if (st->file_deleter.nwus + st->file_deleter.nresults > 0)
            VS_LOG(log, VS_LOG_INFO,
                   "file_deleter: %d workunits, %d results: %d files removed, %d inputs kept "
                   "in use, %d errors (%.3f s)",
                   st->file_deleter.nwus, st->file_deleter.nresults, st->file_deleter.nfiles,
                   st->file_deleter.nkept, st->file_deleter.nerrors, seconds);
        break;
    }
}

bool vs_daemons_shardable(unsigned i)
{
    /* The locality daemons work on files, not on rows by id: one leader. */
    return i < VS_NDAEMONS && ((1u << i) & (VS_DAEMON_TRANSITIONER | VS_DAEMON_VALIDATOR |
                                            VS_DAEMON_ASSIMILATOR | VS_DAEMON_FILE_DELETER)) != 0;
}

bool vs_daemons_may_run(struct vs_store *s, unsigned i, bool *standby, struct vs_log *log)
{
    if (i >= VS_NDAEMONS)
        return false;
    /* --mod N I: every instance runs its share (the store's queues keep
     * id % N == I on this handle), no leader. */
    if (vs_store_mod_n(s) > 1 && vs_daemons_shardable(i))
        return true;
    bool lead = false;
    if (vs_store_leader(s, names[i], &lead) != 0)
        lead = false;
    if (lead == *standby) {
        *standby = !lead;
        VS_LOG(log, VS_LOG_INFO,
               lead ? "%s: leading (this instance runs it)"
                    : "%s: standing by (another instance on this store runs it)",
               names[i]);
    }
    return lead;
}

static double mono_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct vs_daemons_runner {
    struct vs_project_config cfg;     /* under mu */
    struct vs_project_config run_cfg; /* the thread's copy for one round */
    struct vs_daemons_runner_opts o;
    struct vs_store *s;
    bool paused;               /* thread only: stop_daemons seen */
    bool standby[VS_NDAEMONS]; /* thread only: another instance leads it */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;          /* under mu */
    uint64_t passes;    /* under mu */
    int64_t dump_retry; /* thread only: no statistics export before this time */
    int64_t stats_next; /* thread only: next update_stats run (0: at start) */
};

/* BOINC's update_stats (credit_grant.h), every <update_stats_interval_hours>
 * and before each statistics export, by one instance per store. */
static void update_stats_pass(struct vs_daemons_runner *r, int64_t now, bool dump_due)
{
    int hours = r->run_cfg.update_stats_interval_hours;
    bool lead = false;
    if (r->paused || hours <= 0 || !(now >= r->stats_next || dump_due))
        return;
    if (vs_store_leader(r->s, "update_stats", &lead) != 0 || !lead) {
        r->stats_next = now + 3600; /* another instance runs it; ask again hourly */
        return;
    }
    int rc = vs_update_stats(r->s, now, r->o.log, NULL);
    r->stats_next = now + (rc == 0 ? (int64_t)hours * 3600 : 3600);
}

/* One round: a pass of each daemon, each with its own logger. */
static int run_round(struct vs_daemons_runner *r)
{
    pthread_mutex_lock(&r->mu);
    r->run_cfg = r->cfg;
    pthread_mutex_unlock(&r->mu);
    struct vs_log *any = r->o.log;
    bool stop = vs_ctl_file_exists(r->run_cfg.dir, "stop_daemons");
    if (stop != r->paused) {
        r->paused = stop;
        for (unsigned i = 0; i < VS_NDAEMONS; i++)
            if (r->o.which & (1u << i))
                VS_LOG(r->o.logs[i] ? r->o.logs[i] : any, VS_LOG_INFO,
                       stop ? "%s: paused (stop_daemons exists)"
                            : "%s: resumed (stop_daemons gone)",
                       names[i]);
    }
    if (stop)
        return 0;
    int total = 0;
    for (unsigned i = 0; i < VS_NDAEMONS; i++) {
        if (!(r->o.which & (1u << i)))
            continue;
        struct vs_log *log = r->o.logs[i] ? r->o.logs[i] : any;
        if (!vs_daemons_may_run(r->s, i, &r->standby[i], log))
            continue;
        struct vs_daemons_stats st;
        double t0 = mono_seconds();
        int n = vs_daemons_run_once(r->s, &r->run_cfg, (int64_t)time(NULL), 1u << i, log, &st);
        double dt = mono_seconds() - t0;
        vs_daemons_log_pass(log, i, &st, dt);
        if (r->o.metrics)
            vs_ops_metrics_pass(r->o.metrics, i, dt, &st);
        if (n > 0)
            total += n;
    }
    return total;
}

static void *runner_main(void *arg)
{
    struct vs_daemons_runner *r = arg;
    for (;;) {
        int n = run_round(r);
        /* Trickle-ups go to config.xml's <trickle_handler> (docs/server.md),
         * paused by stop_daemons like the other daemons. */
        int nt = 0;
        bool lead = false; /* one instance per store runs the handler */
        if (!r->paused && r->run_cfg.trickle_handler[0] &&
            vs_store_leader(r->s, "trickle_handler", &lead) == 0 && lead &&
            vs_trickle_handler_pass(r->s, &r->run_cfg, r->run_cfg.trickle_handler,
                                    (int64_t)time(NULL), r->o.log, &nt) != 0)
            VS_LOG(r->o.log, VS_LOG_ERROR, "trickle handler pass failed");
        if (n >= 0)
            n += nt;
        /* The statistics exports (docs/credit.md), daily by default, by one
         * instance per store. They take a minute at a million users; the
         * other daemons wait that long once a day. */
        int64_t now = (int64_t)time(NULL);
        bool dump_due = !r->paused && now >= r->dump_retry && vs_db_dump_due(&r->run_cfg, now);
        update_stats_pass(r, now, dump_due);
        if (dump_due && vs_store_leader(r->s, "db_dump", &lead) == 0 && lead &&
            vs_db_dump(r->s, &r->run_cfg, now, NULL, r->o.log, NULL) != 0) {
            r->dump_retry = now + 3600;
            VS_LOG(r->o.log, VS_LOG_ERROR, "db_dump: the statistics exports failed; retry in 1 h");
        }
        pthread_mutex_lock(&r->mu);
        r->passes++;
        if (n <= 0 && !r->stop) {
            /* Idle: sleep until the interval is over or stop is asked. */
            struct timespec until;
            clock_gettime(CLOCK_MONOTONIC, &until);
            until.tv_sec += r->o.interval_ms / 1000;
            until.tv_nsec += (long)(r->o.interval_ms % 1000) * 1000000L;
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

int vs_daemons_runner_start(const struct vs_project_config *cfg,
                            const struct vs_daemons_runner_opts *opts,
                            struct vs_daemons_runner **out)
{
    if (!cfg || !opts || !out)
        return VS_EINVAL;
    struct vs_daemons_runner *r = vs_xcalloc(1, sizeof(*r));
    r->cfg = *cfg;
    r->o = *opts;
    if (r->o.interval_ms <= 0)
        r->o.interval_ms = 1000;
    int rc = vs_project_store_open(cfg, false, opts->log, &r->s);
    if (rc == 0 && opts->mod_n > 1)
        rc = vs_store_set_mod(r->s, opts->mod_n, opts->mod_i);
    if (rc) {
        if (r->s)
            vs_store_close(r->s);
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

void vs_daemons_runner_set_config(struct vs_daemons_runner *r, const struct vs_project_config *cfg)
{
    pthread_mutex_lock(&r->mu);
    r->cfg = *cfg;
    pthread_mutex_unlock(&r->mu);
}

uint64_t vs_daemons_runner_passes(struct vs_daemons_runner *r)
{
    pthread_mutex_lock(&r->mu);
    uint64_t n = r->passes;
    pthread_mutex_unlock(&r->mu);
    return n;
}
