/*
 * fair's work fetch: seed 000's, with what BOINC's volunteers complain about
 * fixed. Shares below are each project's among the CPU-intensive projects
 * that are not suspended (not frs(P), which drops the deferred ones and so
 * would let a project count on every CPU while the others wait out a
 * backoff).
 *
 * - Share cap. A project asks for work while it has fewer results than its
 *   share of the CPUs plus one (one waits while the others run: a project
 *   with nothing runnable for a moment loses its turn) or less queued work
 *   than its share of the buffer (share x ncpus x min_queue). Seed 000
 *   instead lets the first project asked fill every idle CPU, and a project
 *   whose long jobs hold every CPU makes the servers refuse everybody else
 *   (seed 004's rule sees a queue as long as those jobs: BOINC's emulator,
 *   a_30d).
 * - Deadline cap at the project's share. Its queue with one more job of the
 *   size it last sent must be done by the earliest of its deadlines (the
 *   new job's less a margin: a scheduling period, at most a tenth of the
 *   delay bound) running on its share of the CPUs, as the round-robin
 *   simulation runs it (a project's results share its CPUs, so they end
 *   together); the request is cut to what still fits. Then the simulation
 *   sees no miss and the CPU scheduler does not go into deadline mode,
 *   which hands one project every CPU (b_20d: P1's six-minute jobs with a
 *   one-hour deadline held both CPUs, 0.87 of the CPU against a 0.5 share).
 * - Deadline cap on the host. The job must also meet its deadline, and make
 *   no queued job later, in an earliest-deadline-first list schedule of the
 *   whole queue on the host's CPUs at its real speed (on_frac x active_frac
 *   x cpu_efficiency).
 * - The server's verdict. The client sends estimated_delay (when a CPU
 *   first runs out of work in the round-robin simulation); a project whose
 *   next job that delay already pushes past its delay bound is not asked,
 *   and asks for nothing in a forced RPC either: a refusal for deadlines
 *   defers the project, and its finished results then wait past their
 *   deadlines to be reported.
 * - Others' deadlines. A job is not fetched if, once another project's own
 *   queue has run out, the rest of the queue with this job keeps every CPU
 *   busy past that project's slack (its delay bound less its job, less the
 *   margin): its server would refuse it for as long. Except by turns: on
 *   one CPU, or for a job that needs every CPU, a project under its share
 *   cap with nothing queued, owed more than the other, may fetch a job
 *   that alone outlasts the other's slack (else it could never fetch
 *   beside it). While such a job waits for its CPUs and its project is
 *   owed more, no other project is asked (their new jobs would keep a CPU
 *   each and the job would wait out its slack), and for a CPU idle now a
 *   job needing more CPUs than are idle is not fetched (it could not start
 *   there).
 * - Idle CPUs. When no project asks under these caps and the round-robin
 *   simulation still sees an idle CPU within min_queue, a project may be
 *   asked under the host caps, its share cap counted at one CPU at least;
 *   with a CPU idle now, any project passing the host cap at all.
 * - Oversized jobs (internal.h): a project whose jobs could meet their
 *   deadlines only by taking more than its share, and are over twice its
 *   share of a month, is not asked (c_stress_20d's 192-hour S10 job).
 * - Multi-threaded jobs and max_concurrent (CPUs, not results): a
 *   project's queued work and its share are counted in CPU seconds (a job
 *   of k CPUs running w seconds is k x w), its share cap at the jobs its
 *   share of the CPUs holds (at most max_concurrent), its buffer at what
 *   the CPUs it can use at once hold; in the host's EDF schedule a job
 *   takes one CPU for max(k, 1) x w (never earlier than it can end). A
 *   project that already has the work its max_concurrent results can run
 *   through the buffer is not asked for an idle CPU either: its next job
 *   could not run (BOINC's fetch loop at a project's limit).
 * - Backup projects (R = 0): asked only when no project with a share is
 *   and a CPU is idle now (its queue cannot fill every CPU), one job at a
 *   time: a buffer of their work would starve, and miss its deadlines,
 *   once the others have work again.
 * - extra_queue: a project is asked under its share cap while its queue
 *   is below its share of min_queue, then up to its share of min_queue +
 *   extra_queue; with min_queue = 0, when the share cap asks (fewer
 *   results than its share of the CPUs plus one), up to its share of
 *   extra_queue (BOINC fills to min + additional when a CPU runs dry).
 * - Order. The project asked is the one with the greatest long-term debt
 *   less the job it would send (a 192-hour job waits until the project is
 *   owed that much, or nothing else can run); ties go to the greater share,
 *   then the name: never the position in the project list.
 */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "volsched/alloc.h"
#include "volsched/client_policy.h"

static bool fetch_blocked(const struct vs_cproject *p, unsigned flags)
{
    return p->suspended || p->no_new_work || (flags & VS_CPS_DEFERRED);
}

/* The margin a job due after delay bound D needs (see the header). */
static double margin(const struct vs_cstate *st, double D)
{
    double m = 0.1 * D;
    return m < st->host.sched_period ? m : st->host.sched_period;
}

/* The queue in deadline order: keys[0..n), durations in wall seconds. */
struct queue {
    const struct vs_cpkey *keys;
    size_t n;
    const double *dur; /* [nresults] */
    double *cpu;       /* [ncpus] scratch */
    int ncpus;
};

/* The CPU that frees first (least index on ties). Most hosts have one or
 * two CPUs, and a job placement is the inner step of every schedule here. */
static int earliest(const double *cpu, int n)
{
    if (n <= 2)
        return n == 2 && cpu[1] < cpu[0];
    int best = 0;
    for (int i = 1; i < n; i++)
        if (cpu[i] < cpu[best])
            best = i;
    return best;
}

/* The base schedule: each queued job's lateness without a new job, into
 * late[i] (queue position i). */
static void edf_base(const struct vs_cstate *st, const struct queue *q, double *late)
{
    for (int c = 0; c < q->ncpus; c++)
        q->cpu[c] = st->now;
    for (size_t i = 0; i < q->n; i++) {
        int c = earliest(q->cpu, q->ncpus);
        q->cpu[c] += q->dur[q->keys[i].idx];
        double l = q->cpu[c] - q->keys[i].key;
        late[i] = l > 0 ? l : 0;
    }
}

/*
 * List-schedules the queue with one more job (duration dur, deadline dl)
 * in deadline order. Returns whether that job meets dl less its margin mg
 * and no queued job ends later than its base lateness allows; *first_free
 * gets the time from now until the first CPU runs out of work.
 */
static bool edf_fits(const struct vs_cstate *st, const struct queue *q, const double *late,
                     double dur, double dl, double mg, double *first_free)
{
    for (int c = 0; c < q->ncpus; c++)
        q->cpu[c] = st->now;
    bool placed = false;
    for (size_t i = 0; i <= q->n; i++) {
        double d_i = i < q->n ? q->keys[i].key : INFINITY;
        if (!placed && dl <= d_i) {
            int c = earliest(q->cpu, q->ncpus);
            q->cpu[c] += dur;
            placed = true;
            if (q->cpu[c] > dl - mg)
                return false;
        }
        if (i == q->n)
            break;
        int c = earliest(q->cpu, q->ncpus);
        q->cpu[c] += q->dur[q->keys[i].idx];
        if (placed && q->cpu[c] - d_i > late[i] + 1e-6)
            return false;
    }
    *first_free = q->cpu[earliest(q->cpu, q->ncpus)] - st->now;
    return true;
}

/*
 * (This walk opens as edf_fits's does, on purpose: the two are fair's
 * hottest loops and differ in what ends them, which a shared walk would
 * test once per job.)
 * The first CPU's free time from now in the deadline-order list schedule of
 * the queue without project k's results, plus one job (dur, due dl): what
 * k's server will see as estimated_delay once k's own queue has run out.
 */
static double free_without(const struct vs_cstate *st, const struct queue *q, size_t k, double dur,
                           double dl)
{
    for (int c = 0; c < q->ncpus; c++)
        q->cpu[c] = st->now;
    bool placed = false;
    for (size_t i = 0; i <= q->n; i++) {
        double d_i = i < q->n ? q->keys[i].key : INFINITY;
        if (!placed && dl <= d_i) {
            q->cpu[earliest(q->cpu, q->ncpus)] += dur;
            placed = true;
        }
        if (i == q->n)
            break;
        size_t r = q->keys[i].idx;
        if (st->results[r].project == k)
            continue;
        q->cpu[earliest(q->cpu, q->ncpus)] += q->dur[r];
    }
    return q->cpu[earliest(q->cpu, q->ncpus)] - st->now;
}

/* The queue's total and longest duration (wall seconds). exact: the
 * bound below does not hold (jobs of several or fractional CPUs, whose
 * project work is counted in CPUs, not in the schedule's durations), so
 * every question takes the schedule. */
struct qsum {
    double total, longest;
    const double *work; /* [nprojects]: each project's queued duration */
    bool exact;
};

/*
 * Whether free_without(k, dur, dl) > slack, mostly without the schedule.
 * A list schedule that puts each job on the least loaded CPU keeps the
 * loads within its longest job of each other, so with n CPUs and T the
 * work scheduled, the first CPU frees between (T - (n-1) longest) / n and
 * T / n. Only a slack inside that band (widened by far more than the
 * rounding of the sums) needs the schedule, whose answer is the same.
 */
static bool without_exceeds(const struct vs_cstate *st, const struct queue *q,
                            const struct qsum *qs, size_t k, double dur, double dl, double slack)
{
    if (qs->exact)
        return free_without(st, q, k, dur, dl) > slack;
    double n = q->ncpus, t = qs->total - qs->work[k] + dur;
    double longest = dur > qs->longest ? dur : qs->longest;
    double band = 1e-9 * (fabs(qs->total) + fabs(dur) + fabs(slack) + 1);
    if (t / n < slack - band)
        return false;
    if ((t - (n - 1) * longest) / n > slack + band)
        return true;
    return free_without(st, q, k, dur, dl) > slack;
}

/* Whether a job of p holds every CPU while it runs (one CPU, or as many
 * CPUs as the host has): it keeps the first CPU busy for its whole run,
 * whatever the rest of the queue. */
static bool holds_host(const struct vs_cstate *st, size_t p)
{
    return st->host.ncpus == 1 || vs_cpolicy__ncpus(st, p) >= st->host.ncpus;
}

/* Priority order: greater prio, then greater share, then name, then index. */
static bool before(const struct vs_cstate *st, const double *prio, size_t a, size_t b)
{
    /* Backup projects (R = 0) after every project with a share. */
    bool za = !(st->projects[a].resource_share > 0), zb = !(st->projects[b].resource_share > 0);
    if (za != zb)
        return zb;
    if (prio[a] != prio[b])
        return prio[a] > prio[b];
    const struct vs_cproject *pa = &st->projects[a], *pb = &st->projects[b];
    if (pa->resource_share != pb->resource_share)
        return pa->resource_share > pb->resource_share;
    int c = strcmp(pa->name ? pa->name : "", pb->name ? pb->name : "");
    if (c != 0)
        return c < 0;
    return a < b;
}

/*
 * Whether a job of p (wall seconds dur, due dl) that leaves the first CPU
 * free after ff would make another project's server refuse it: once that
 * project's own queue has run out, the rest of the queue with this job
 * keeps every CPU busy past its slack (delay bound less job less margin).
 * Projects deferred for the moment count: their next request comes soon.
 * With prio (p asks under its share cap with nothing queued), k yields
 * to a job that alone holds the host's only CPU past k's slack when p is
 * owed more (comes first in the order): such a job can never be fetched
 * beside k's queue, so the two can share the CPU only by turns, k's
 * server refusing it while p's job runs (one CPU, P1(0.5, 1.5, .5)
 * P2(10, 100, .5): P2 had one job in 10 days, share violation 0.917).
 * Out of line: inlined with that rule, the candidate loop ran seed 000's
 * scenario 1 5% slower than without it (bench_sim: 1,343 against 1,413
 * host-days/s) for 0.3% more instructions; out of line 1,395, for 1.2%
 * more instructions (callgrind, 20 days: 120.6 M against 119.1 M).
 */
__attribute__((noinline)) static bool hurts_others(const struct vs_cstate *st,
                                                   const struct queue *q, const struct qsum *qs,
                                                   size_t p, double dur, double dl, double ff,
                                                   double speed, const double *prio)
{
    const bool whole = holds_host(st, p);
    for (size_t k = 0; k < st->nprojects; k++) {
        const struct vs_cproject *o = &st->projects[k];
        if (k == p || o->non_cpu_intensive || o->suspended || o->no_new_work || o->job_est <= 0 ||
            o->job_delay_bound <= 0)
            continue;
        double slack = o->job_delay_bound - o->job_est / speed - margin(st, o->job_delay_bound);
        if (prio && dur > slack && before(st, prio, p, k))
            continue;
        if (whole && dur > slack)
            return true;
        /* Without k's results the first CPU frees no later than with
         * them: the full schedule's ff bounds it, so most k need no
         * second schedule. */
        if (ff > slack && without_exceeds(st, q, qs, k, dur, dl, slack))
            return true;
    }
    return false;
}

/* Each project's earliest deadline and longest duration in the queue
 * (INFINITY and 0 with nothing queued), gathered as the queue is built:
 * share_fits asks them of every candidate, and a scan of the queue for
 * each was 1.3% of fair's instructions. */
struct qproj {
    const double *first, *longest; /* [nprojects] */
};

/*
 * Whether p's queue with one more job (dur, due dl) is done, by the earliest
 * of its deadlines (the new job's less its margin), when p runs at its
 * share of the CPUs, m = frs(P) x ncpus: what the round-robin simulation
 * gives p, which shares p's CPUs equally among its results, so that all of
 * them finish about together (no faster than one CPU each). Then the
 * simulation sees no miss and the CPU scheduler stays out of deadline mode
 * (which hands p every CPU and starves the others). *room gets the work p
 * could still take at that rate.
 */
static bool share_fits(const struct vs_cstate *st, const struct qproj *qp, size_t p, double m,
                       double work, double dur, double dl, double *room)
{
    *room = 0;
    if (!(m > 0))
        return false;
    double first = dl - margin(st, dl - st->now), longest = dur;
    if (qp->first[p] < first)
        first = qp->first[p];
    if (qp->longest[p] > longest)
        longest = qp->longest[p];
    double span = first - st->now;
    *room = m * span - work;
    return fmax((work + dur) / m, longest) <= span;
}

/* Whether p must let the host drain for a waiting whole-host job of a
 * project owed more (waits[k] set, k before p). */
static bool drains_for(const struct vs_cstate *st, const double *prio, const size_t *waits,
                       size_t p)
{
    for (size_t k = 0; k < st->nprojects; k++)
        if (k != p && waits[k] && before(st, prio, k, p))
            return true;
    return false;
}

/* What the candidate loop remembers of a project between its rounds. */
enum { M_EDF = 1, M_FITS = 2, M_HURT_DONE = 4, M_HURTS = 8, M_HURT0_DONE = 16, M_HURTS0 = 32 };
/* Whether project p has as much work as its max_concurrent jobs can run
 * through the buffer (work in CPU seconds): more could not run now. */
static bool saturated(const struct vs_cstate *st, size_t p, size_t count, double work, double buf)
{
    int mc = st->projects[p].max_concurrent;
    if (mc <= 0 || count < (size_t)mc)
        return false;
    return work >= mc * vs_cpolicy__ncpus(st, p) * buf;
}

/* A CPU idle now: the queue (count[p] results of each project) cannot
 * fill every CPU, counted in the CPUs its jobs use, at most max_concurrent
 * of each project's running. */
static double idle_cpus_now(const struct vs_cstate *st, const size_t *count, bool plain)
{
    double queued = 0;
    for (size_t p = 0; p < st->nprojects; p++) {
        double n = (double)count[p];
        if (!plain) {
            int mc = st->projects[p].max_concurrent;
            if (mc > 0 && n > mc)
                n = mc;
            n *= vs_cpolicy__ncpus(st, p);
        }
        queued += n;
    }
    return (double)st->host.ncpus - queued;
}

long vs_cfetch__fair_choose(const struct vs_cstate *st, const struct vs_rrsim_out *rr,
                            struct vs_cpolicy_ws *ws, double *wrs)
{
    size_t np = st->nprojects, nr = st->nresults;
    struct vs_cpolicy_wsd *d = ws->d;
    const struct vs_chost *h = &st->host;
    double speed = vs_cpolicy__speed(h);
    double buf = h->min_queue;
    double *work = d->ff_work, *prio = d->ff_prio;
    size_t *count = d->ff_count, *cand = d->ff_cand, *memo = d->ff_memo;
    double *ffs = d->ff_first_free;

    double share_sum = vs_cpolicy__share_sum(st);
    const bool plain = vs_cpolicy__one_cpu_jobs(st);
    double *qfirst = d->ff_first_dl, *qlong = d->ff_longest;
    size_t *waits = d->ff_waits; /* a queued job needing the whole host, not running */
    for (size_t p = 0; p < np; p++) {
        work[p] = 0;
        count[p] = 0;
        qfirst[p] = INFINITY;
        qlong[p] = 0;
        waits[p] = 0;
        prio[p] = st->projects[p].ltd - st->projects[p].job_est / speed;
    }
    bool any_waits = false;
    /* The queue: nearly runnable results of CPU-intensive projects. */
    double *rdur = (double *)d->res_list;
    struct qsum qs = {0, 0, work, !plain};
    struct vs_cpkey *keys = d->keys;
    size_t nq = 0;
    for (size_t r = 0; r < nr; r++) {
        const struct vs_cresult *res = &st->results[r];
        if (st->projects[res->project].non_cpu_intensive || !vs_cpolicy__nearly_runnable(st, res) ||
            vs_cpolicy__lost(VS_CPOLICY_FAIR, st, res, speed) ||
            vs_cpolicy__oversized(VS_CPOLICY_FAIR, st, res, speed, share_sum))
            continue;
        double w = res->remaining / speed;
        if (plain) {
            rdur[r] = w;
            work[res->project] += w;
            qs.total += w;
            if (w > qs.longest)
                qs.longest = w;
        } else {
            double k = vs_cpolicy__ncpus(st, res->project);
            rdur[r] = k > 1 ? k * w : w;
            work[res->project] += k * w;
            if (k > 1 && k >= h->ncpus && res->task != VS_CTASK_RUNNING) {
                waits[res->project] = 1;
                any_waits = true;
            }
        }
        count[res->project]++;
        if (res->deadline < qfirst[res->project])
            qfirst[res->project] = res->deadline;
        if (rdur[r] > qlong[res->project])
            qlong[res->project] = rdur[r];
        keys[nq++] = (struct vs_cpkey){.group = 0, .idx = (uint32_t)r, .key = res->deadline};
    }
    (void)vs_cpolicy__cpu_scratch(d, (size_t)h->ncpus);
    /* Asking a server that will refuse for deadlines costs a deferral
     * (BOINC: the reply's request delay) during which finished jobs wait to
     * be reported: a project whose next job the server would refuse now is
     * not asked under the caps. */
    double busy = vs_rrsim_busy_time(st, rr, ws);

    /* Each project's share among the CPU-intensive projects that are not
     * suspended: frs(P) leaves out the deferred ones, so a project would
     * count on every CPU while the others wait out a backoff. */
    double *fs = d->ff_share;
    for (size_t p = 0; p < np; p++)
        fs[p] = share_sum > 0 ? st->projects[p].resource_share / share_sum : 0;

    /* Requests under the share cap, and the candidates. */
    size_t nc = 0;
    bool any = false;
    for (size_t p = 0; p < np; p++) {
        const struct vs_cproject *pr = &st->projects[p];
        if (pr->non_cpu_intensive)
            continue; /* work_fetch.c's rule */
        wrs[p] = 0;
        /* Its jobs are oversized (internal.h): never fetched. */
        if (fetch_blocked(pr, rr->states[p]) ||
            vs_cpolicy__too_big(st, p, pr->job_est, pr->job_delay_bound, speed, share_sum))
            continue;
        double f = fs[p], cpus = f * h->ncpus;
        double target = cpus * buf;
        double allot = ceil(cpus - 1e-9) + 1;
        if (!plain) {
            /* In CPUs: the jobs its share of them holds, and no more than
             * its max_concurrent jobs can use. */
            double k = vs_cpolicy__ncpus(st, p);
            if (pr->max_concurrent > 0 && cpus > pr->max_concurrent * k)
                cpus = pr->max_concurrent * k;
            target = cpus * buf;
            allot = ceil(cpus / k - 1e-9) + 1;
        }
        /* extra_queue: below min_queue it asks for up to min_queue +
         * extra_queue (BOINC's work_buf_additional_days). */
        double fill = target;
        if (h->extra_queue > 0 && buf > 0)
            fill = target * (buf + h->extra_queue) / buf;
        else if (h->extra_queue > 0)
            /* min_queue = 0: BOINC still fills to min + additional when a
             * CPU runs dry; here when the share cap asks (target is 0). */
            fill = cpus * h->extra_queue;
        /* A project whose server would refuse its next job for deadlines
         * now asks for nothing, in a forced RPC too (a report): the
         * refusal would defer it while its next results wait to be
         * reported. */
        bool refused = pr->job_est > 0 && pr->job_delay_bound > 0 &&
                       busy + pr->job_est / speed > pr->job_delay_bound;
        /* A backup project (R = 0) is asked only for an idle CPU. */
        bool backup = !(pr->resource_share > 0);
        if (!refused && !backup && ((double)count[p] < allot || work[p] < target)) {
            wrs[p] = fmax(fill - work[p], 1);
            /* Without a buffer (min_queue = 0) the share cap's jobs are
             * asked for at once: one job an RPC, each followed by the
             * server's request delay, leaves its CPUs to others. */
            if (buf <= 0 && pr->job_est > 0 && (double)count[p] < allot)
                wrs[p] = fmax(wrs[p], (allot - (double)count[p]) * pr->job_est / speed *
                                          vs_cpolicy__ncpus(st, p));
            any = true;
        }
        memo[p] = 0;
        cand[nc++] = p;
    }
    bool idle_soon = rr->total_shortfall > h->ncpus * vs_cpolicy__time_eps(st);
    /* (With min_queue = 0 the round-robin simulation sees no idle CPU:
     * one idle now is looked for below.) */
    if (!any && !idle_soon && buf > 0)
        return -1;
    double idle_cpus = idle_cpus_now(st, count, plain);
    bool idle_now = idle_cpus > 1e-9;
    if (!any && !idle_soon && !idle_now)
        return -1;
    /* Only now the queue in deadline order (most passes stop above). */
    vs_cpolicy__sort(keys, d->keys2, nq);
    struct queue q = {keys, nq, rdur, d->fair_cpu, h->ncpus};
    const struct qproj qp = {qfirst, qlong};
    double *late = (double *)d->keys2; /* free again after the sort */
    edf_base(st, &q, late);
    /* Candidates in priority order (few projects: insertion sort). */
    for (size_t i = 1; i < nc; i++) {
        size_t v = cand[i], k = i;
        for (; k > 0 && before(st, prio, v, cand[k - 1]); k--)
            cand[k] = cand[k - 1];
        cand[k] = v;
    }
    /* Round 0: under the caps. Round 1: an idle CPU within min_queue,
     * without hurting another project's slack. Round 2: a CPU idle now. */
    for (int round = any ? 0 : 1; round < (idle_now ? 3 : 2); round++) {
        bool tried = false;
        for (size_t i = 0; i < nc; i++) {
            size_t p = cand[i];
            const struct vs_cproject *pr = &st->projects[p];
            if (round == 0 && wrs[p] <= 0)
                continue;
            /* A backup project only for a CPU idle now: a buffer of its
             * work would starve when the others have work again. */
            if (round < 2 && !(pr->resource_share > 0))
                continue;
            /* At its max_concurrent with the buffer full: more work could
             * not run on the idle CPU. */
            if (round > 0 && saturated(st, p, count[p], work[p], buf))
                continue;
            /* For a CPU idle now, a job needing more CPUs than are idle
             * could not start on them: it would only wait, and hold the
             * others' servers off (their estimated delay) meanwhile. */
            if (round == 2 && !plain && vs_cpolicy__ncpus(st, p) > idle_cpus + 1e-9)
                continue;
            /* A job that needs the whole host waits for every CPU to
             * free: while its project is owed more, no other project is
             * asked, or their new jobs would keep it waiting forever (the
             * CPU schedule keeps each project's share of whole CPUs). */
            if (any_waits && drains_for(st, prio, waits, p))
                continue;
            /* Round 1 tries the first candidate only. */
            if (round == 1 && tried)
                break;
            tried = round == 1;
            double est = pr->job_est, D = pr->job_delay_bound, room = INFINITY;
            /* A project whose jobs the client has not seen yet is asked
             * only for an idle CPU: its first job may be of any size. */
            if (round == 0 && !(est > 0 && D > 0))
                continue;
            if (est > 0 && D > 0) {
                /* The host cap and the others' slack do not depend on the
                 * round: a project judged in an earlier round is not
                 * scheduled again (memo, ffs). */
                if (!(memo[p] & M_EDF)) {
                    memo[p] |= M_EDF;
                    if (edf_fits(st, &q, late, est / speed, st->now + D, margin(st, D), &ffs[p]))
                        memo[p] |= M_FITS;
                }
                if (!(memo[p] & M_FITS))
                    continue;
                /* Under the caps p runs at its share; for a CPU that
                 * would idle, on at least one CPU. */
                double m = fs[p] * h->ncpus;
                if (round == 1 && m < 1)
                    m = 1;
                if (round < 2 && busy + est / speed > D)
                    continue;
                if (round < 2 &&
                    !share_fits(st, &qp, p, m, work[p], est / speed, st->now + D, &room))
                    continue;
                /* Under the caps (round 0), with nothing queued, p may
                 * take its turn before a project whose slack its job
                 * alone outlasts; beyond its share (round 1) it may not
                 * (hurts_others). */
                bool turn = round == 0 && count[p] == 0 && holds_host(st, p);
                unsigned done = turn ? M_HURT0_DONE : M_HURT_DONE;
                unsigned hurts = turn ? M_HURTS0 : M_HURTS;
                if (round < 2 && !(memo[p] & done)) {
                    memo[p] |= done;
                    if (hurts_others(st, &q, &qs, p, est / speed, st->now + D, ffs[p], speed,
                                     turn ? prio : NULL))
                        memo[p] |= hurts;
                }
                if (round < 2 && (memo[p] & hurts))
                    continue;
            }
            if (round > 0) {
                double f = rr->frs[p] > 0 ? rr->frs[p] : 0;
                wrs[p] = fmax(rr->total_shortfall * f, 1);
            }
            /* No more than p can finish at that rate (the server sends
             * whole jobs: at least one). */
            if (round < 2 && est > 0 && wrs[p] > room)
                wrs[p] = fmax(room, 1);
            return (long)p;
        }
    }
    return -1;
}
