/*
 * The simulated per-project server: client backoff, the seed 000 server-side
 * deadline check, and the answer to one scheduler RPC.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host_sim.h"
#include "volsched/alloc.h"

/* ---------------------------------------------------------------- server */

static void backoff(struct sim *x, size_t p)
{
    struct proj *pj = &x->pj[p];
    double d = BACKOFF_MIN * pow(2, pj->backoff_n < 16 ? pj->backoff_n : 16);
    if (pj->backoff_n < 16)
        pj->backoff_n++;
    x->cp[p].min_rpc_time = x->st.now + min2(d, BACKOFF_MAX);
    push_wake(x, x->cp[p].min_rpc_time);
}

static void edf_reserve(struct sim *x, size_t n)
{
    if (n <= x->edf_cap)
        return;
    x->edf_cap = n * 2;
    x->edf_rem = vs_xreallocarray(x->edf_rem, x->edf_cap, sizeof(double));
    x->edf_dl = vs_xreallocarray(x->edf_dl, x->edf_cap, sizeof(double));
    x->edf_late = vs_xreallocarray(x->edf_late, x->edf_cap, sizeof(double));
    x->edf_idx = vs_xreallocarray(x->edf_idx, x->edf_cap, sizeof(size_t));
}

static int edf_cmp(const void *a, const void *b, void *key)
{
    const double *dl = key;
    size_t i = *(const size_t *)a, k = *(const size_t *)b;
    double di = dl[i], dk = dl[k];
    if (di != dk)
        return di < dk ? -1 : 1;
    return i < k ? -1 : (i > k ? 1 : 0);
}

/*
 * Lateness of each of the n jobs (edf_rem, edf_dl) under earliest-deadline-
 * first list scheduling on the host's CPUs at its average speed, into
 * edf_late.
 */
static void edf_simulate(struct sim *x, size_t n)
{
    double speed = x->s->on_frac * x->s->active_frac;
    /* The client runs EDF only once it sees a deadline in danger, so a job
     * may start up to a scheduling period later than EDF would start it:
     * demand that much slack. */
    double margin = x->s->sched_period;
    int ncpu = x->s->ncpus;
    for (size_t i = 0; i < n; i++)
        x->edf_idx[i] = i;
    qsort_r(x->edf_idx, n, sizeof(size_t), edf_cmp, x->edf_dl);
    for (int c = 0; c < ncpu; c++)
        x->edf_free[c] = x->st.now;
    for (size_t k = 0; k < n; k++) {
        size_t i = x->edf_idx[k];
        int best = 0;
        for (int c = 1; c < ncpu; c++)
            if (x->edf_free[c] < x->edf_free[best])
                best = c;
        x->edf_free[best] += x->edf_rem[i] / speed;
        x->edf_late[i] = fmax(0, x->edf_free[best] - (x->edf_dl[i] - margin));
    }
}

/*
 * The server-side deadline check seed 000 describes (and BOINC never built):
 * send a job only if an EDF simulation of the host's queue says it meets its
 * deadline and no queued job misses by more than it did before. The queue
 * is what the request lists (the client's unfinished results). "Meets" here
 * means with a scheduling period to spare (see edf_simulate).
 */
static bool deadline_check(struct sim *x, double len, double deadline)
{
    if (deadline < x->st.now + x->s->min_queue)
        return false;
    size_t n = 0;
    edf_reserve(x, x->st.nresults + 1);
    for (size_t r = 0; r < x->st.nresults; r++) {
        const struct vs_cresult *res = &x->st.results[r];
        if (res->done || x->s->projects[res->project].non_cpu_intensive)
            continue;
        x->edf_rem[n] = res->remaining;
        x->edf_dl[n] = res->deadline;
        n++;
    }
    edf_simulate(x, n);
    double before_late[64];
    size_t keep = n < 64 ? n : 64;
    /* Only the first 64 are compared one by one; the rest by their sum. */
    double before_rest = 0;
    for (size_t i = 0; i < n; i++) {
        if (i < keep)
            before_late[i] = x->edf_late[i];
        else
            before_rest += x->edf_late[i];
    }
    x->edf_rem[n] = len;
    x->edf_dl[n] = deadline;
    edf_simulate(x, n + 1);
    if (x->edf_late[n] > 0)
        return false;
    double after_rest = 0;
    for (size_t i = 0; i < n; i++) {
        if (i < keep) {
            if (x->edf_late[i] > before_late[i] + 1e-9)
                return false;
        } else {
            after_rest += x->edf_late[i];
        }
    }
    return after_rest <= before_rest + 1e-9;
}

/*
 * One scheduler RPC to project p asking for request_pn project-normalized
 * seconds. Reports the project's finished results, then the server answers
 * with jobs of the project's shape. Returns the number of jobs received.
 */
int vs_sim__rpc(struct sim *x, size_t p, double request_pn, double share_frac)
{
    struct vs_cproject *cp = &x->cp[p];
    struct proj *pj = &x->pj[p];
    const struct vs_scn_project *sp = &x->s->projects[p];
    double now = x->st.now;

    vs_metrics_rpc(&x->m, (int)p);
    cp->rpc_user_request = false;
    if (!pj->server_up) {
        backoff(x, p);
        return 0;
    }
    /* Report. */
    size_t w = 0;
    for (size_t i = 0; i < x->nreports; i++) {
        struct report *rep = &x->reports[i];
        if ((size_t)rep->project != p) {
            x->reports[w++] = *rep;
            continue;
        }
        if (now > rep->deadline)
            vs_metrics_job_reported_late(&x->m, (int)p, rep->cpu);
    }
    x->nreports = w;
    cp->report_overdue = false;

    int sent = 0, refused = 0;
    /* The server's job limit (BOINC's max_wus_in_progress): it counts this
     * host's unfinished jobs of the project. */
    int64_t room = INT64_MAX;
    if (sp->max_in_progress > 0)
        room = sp->max_in_progress - pj->unfinished;
    if (request_pn > 0 && pj->jobs_left != 0 && room > 0) {
        struct vs_chost h = x->st.host;
        double cpu_req = request_pn * vs_cpolicy_pn_rate(&h, share_frac > 0 ? share_frac : 1);
        double nd = ceil(cpu_req / sp->cpu_time);
        int n = nd < 1 ? 1 : (nd > MAX_JOBS_PER_RPC ? MAX_JOBS_PER_RPC : (int)nd);
        if (sp->non_cpu_intensive)
            n = 1;
        if (n > room)
            n = (int)room;
        for (int k = 0; k < n && pj->jobs_left != 0; k++) {
            double len = sp->cpu_time;
            if (sp->spread > 0)
                len *= 1 + sp->spread * (2 * vs_rng_double(&x->rng_jobs) - 1);
            double deadline = now + sp->delay_bound;
            if (x->s->server_deadline_check && !sp->non_cpu_intensive &&
                !deadline_check(x, len, deadline)) {
                refused++;
                break;
            }
            vs_sim__add_result(x, p, len, deadline);
            if (pj->jobs_left > 0)
                pj->jobs_left--;
            sent++;
        }
        vs_metrics_sent(&x->m, (int)p, sent);
    }
    if (request_pn > 0 && sent == 0) {
        if (refused) {
            /* "No work because of deadlines": latency-limited until the
             * request delay has passed. */
            cp->latency_limited_until = now + LATENCY_LIMIT_DELAY;
            cp->min_rpc_time = now + LATENCY_LIMIT_DELAY;
            push_wake(x, cp->min_rpc_time);
        } else {
            backoff(x, p);
        }
    } else {
        pj->backoff_n = 0;
        cp->min_rpc_time = now + SERVER_REQUEST_DELAY;
    }
    return sent;
}
