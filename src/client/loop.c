/*
 * The daemon's main loop: one wait for the GUI RPC sockets and the
 * transfers' sockets together (net.c), never longer than to the next tick;
 * GUI RPC requests are served and transfers moved on as their sockets get
 * ready, and a finished transfer or scheduler RPC is handled at once. Once a
 * second (BOINC's TASK_POLL_PERIOD) the tasks are polled, the policy step
 * runs when something changed (or its recheck time, or the scheduling
 * period, or a minute passed), the transfers and the scheduler RPC that are
 * due are started, and the state file is written if dirty. Nothing in the
 * loop waits for the network, so a signal is seen within a second; a
 * shutdown abandons the transfers in flight (partial downloads are kept and
 * resumed at the next start).
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "volsched/client.h"
#include "volsched/fs.h"

#define FETCH_CHECK_PERIOD 60.0 /* the policy step runs at least this often */
#define QUIT_WAIT_EXTRA    5.0  /* after <quit/> + the quit timeout, before SIGKILL of all */

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
    got_signal = sig;
}

double vs_client_now(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

int vs_client_load(struct vs_client *c)
{
    int rc = vs_client_read_accounts(c);
    if (rc)
        return rc;
    rc = vs_client_state_read(c);
    if (rc && rc != -ENOENT)
        return rc;
    for (size_t p = 0; p < c->n_projects; p++)
        vs_client_share_from_prefs(c, p); /* the account's prefs win over the state file */
    vs_client_prefs_read(c);
    vs_client_stats_read(c);
    vs_client_proxy_read(c);
    if (c->host.p_ncpus <= 1) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        c->host.p_ncpus = n > 0 ? (int)n : 1;
    }
    c->now = vs_client_now();
    return 0;
}

static void detach_pending(struct vs_client *c)
{
    for (size_t p = c->n_projects; p-- > 0;) {
        if (c->projects[p].detach_when_done && !c->projects[p].detached) {
            bool empty = true;
            for (size_t i = 0; i < c->n_results && empty; i++)
                empty = c->results[i].project != p;
            c->projects[p].detached = empty;
        }
        if (!c->projects[p].detached)
            continue;
        for (size_t i = 0; i < c->n_results; i++)
            if (c->results[i].project == p)
                vs_client_task_kill_now(c, i);
        vs_client_net_abandon(c, CL_NET_ANY, c->projects[p].master_url);
        vs_client_msg(c, (long)p, 1, "Detached from %s", c->projects[p].master_url);
        vs_client_drop_project(c, p);
    }
}

static bool step_due(const struct vs_client *c)
{
    if (c->resched)
        return true;
    if (c->last_enforce_recheck > 0 && c->now >= c->last_enforce_recheck)
        return true;
    double period = c->prefs.cpu_scheduling_period_minutes * 60.0;
    if (c->now - c->last_sched_time >= fmin(period, FETCH_CHECK_PERIOD))
        return true;
    return false;
}

static void tick(struct vs_client *c, double *last)
{
    c->now = vs_client_now();
    double dt = *last > 0 ? c->now - *last : 0;
    *last = c->now;
    if (c->run_mode_until > 0 && c->now >= c->run_mode_until) {
        c->run_mode = c->run_mode_perm;
        c->run_mode_until = 0;
        c->resched = true;
    }
    /* BOINC-COMPAT: active = computing allowed (no suspend reason) */
    vs_client_time_stats_update(c, true, vs_client_can_compute(c));
    vs_client_sched_account(c, dt);
    /* Each task exit is an event with a policy step of its own (task.c);
     * bounded: every call but the last handles one exit. */
    bool more = vs_client_tasks_poll(c);
    detach_pending(c);
    vs_client_update_result_states(c);
    if (c->quit_requested) {
        c->resched = false;
        return;
    }
    for (size_t guard = 0;; guard++) {
        if (step_due(c)) {
            c->resched = false;
            (void)vs_client_sched_step(c);
        }
        if (!more || guard > c->n_results)
            break;
        more = vs_client_tasks_poll(c);
        vs_client_update_result_states(c);
    }
    (void)vs_client_xfer_poll(c);
    if (vs_client_rpc_poll(c))
        c->resched = true;
}

int vs_client_run(struct vs_client *c)
{
    int rc = vs_client_lock(c);
    if (rc == VS_EBUSY) {
        fprintf(stderr, "volsched client: another client is already running in %s\n", c->dir);
        return rc;
    }
    if (rc) {
        fprintf(stderr, "volsched client: cannot lock %s/lockfile: %s\n", c->dir, vs_strerror(rc));
        return rc;
    }
    if ((rc = vs_client_gui_password(c)) != 0) {
        fprintf(stderr, "volsched client: gui_rpc_auth.cfg: %s\n", vs_strerror(rc));
        return rc;
    }
    if ((rc = vs_client_load(c)) != 0) {
        fprintf(stderr, "volsched client: cannot read the state in %s: %s\n", c->dir,
                vs_strerror(rc));
        return rc;
    }
    char slots[VS_CLIENT_PATH_MAX];
    if (vs_client_path(c, slots, sizeof(slots), "slots") == 0)
        (void)vs_fs_mkdir_p(slots, 0755);
    if ((rc = vs_client_gui_check(c)) != 0)
        return rc;
    vs_client_net_global_init();
    vs_client_msg(c, -1, 1, "Starting volsched client (BOINC 7.20.5 compatible), policy %s",
                  vs_cpolicy_name(c->policy));
    vs_client_msg(c, -1, 1, "Data directory: %s", c->dir);
    vs_client_host_measure(c, true);
    vs_client_msg(c, -1, 1, "Processor: %d CPUs, %s; using %d", c->host.p_ncpus, c->host.p_model,
                  vs_client_ncpus(c));
    vs_client_time_stats_log(c, "power_on");
    vs_client_tasks_recover(c);
    if ((rc = vs_client_gui_open(c, c->gui_port)) != 0) {
        vs_client_msg(c, -1, 3, "GUI RPC bind to port %d failed: %s", c->gui_port, vs_strerror(rc));
        return rc;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    c->now = vs_client_now();
    c->resched = true;
    (void)vs_client_state_write(c);
    double last = 0, next_tick = 0;
    for (;;) {
        double now = vs_client_now();
        int wait_ms = next_tick > now ? (int)ceil((next_tick - now) * 1000) : 0;
        vs_client_gui_poll(c, wait_ms > 1000 ? 1000 : wait_ms);
        vs_client_net_run(c);
        if (got_signal && !c->quit_requested) {
            vs_client_msg(c, -1, 1, "Received signal %d: exiting", (int)got_signal);
            c->quit_requested = true;
        }
        now = vs_client_now();
        if (now >= next_tick || c->resched) {
            next_tick = now + 1.0;
            tick(c, &last);
        }
        if (c->quit_requested) {
            if (c->quit_started <= 0) {
                c->quit_started = c->now;
                if (vs_client_net_count(c, CL_NET_ANY, NULL) > 0)
                    vs_client_msg(c, -1, 1,
                                  "Abandoning %zu transfers in flight (partial downloads are "
                                  "kept and resumed at the next start)",
                                  vs_client_net_count(c, CL_NET_ANY, NULL));
                vs_client_net_abandon(c, CL_NET_ANY, NULL);
                vs_client_msg(c, -1, 1, "Telling apps to quit");
            }
            bool gone = vs_client_tasks_quit_all(c);
            if (gone || c->now - c->quit_started > c->prefs.quit_timeout + QUIT_WAIT_EXTRA) {
                for (size_t i = 0; i < c->n_results; i++)
                    vs_client_task_kill_now(c, i);
                break;
            }
        }
        if (c->dirty && c->now - c->last_state_write >= 1.0) {
            (void)vs_client_state_write(c);
            vs_client_xfer_history_write(c);
        }
    }
    vs_client_time_stats_log(c, "power_off");
    (void)vs_client_state_write(c);
    vs_client_xfer_history_write(c);
    vs_client_gui_close(c);
    vs_client_net_cleanup(c);
    vs_client_msg(c, -1, 1, "volsched client exiting");
    return 0;
}
