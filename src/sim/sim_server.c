/*
 * The simulated per-project servers. Each answers a scheduler RPC by
 * calling src/policy/server, the code `volsched serve` calls (feasibility,
 * seed 004's deadline rule from the request's estimated_delay and the
 * host's time stats, job limits, max_wus_to_send, daily quota, and seed
 * 000's EDF check when the scenario sets workload_sim), on a request built
 * from the simulated client's state. There is no second, simpler server
 * here: what the simulator measures is the server projects run. Also the
 * client's side of a reply: its backoff after an RPC that failed or brought
 * nothing (src/policy/client's rule), latency-limited after "no work because
 * of deadlines".
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host_sim.h"
#include "volsched/alloc.h"
#include "volsched/server_policy.h"

/* ---------------------------------------------------------------- server */

/* The client's backoffs (src/policy/client's rule, BOINC's constants),
 * randomised from the client's own stream, so that the run's other draws
 * do not move with them: after an RPC that failed (the server was down)
 * nothing goes to the project until min_rpc_time; after a work request
 * that brought nothing, no work is asked until work_backoff_until, while
 * reports still go. */
static void backoff(struct sim *x, size_t p)
{
    struct proj *pj = &x->pj[p];
    if (pj->backoff_n < VS_CBACKOFF_CAP)
        pj->backoff_n++;
    double d =
        vs_cbackoff(pj->backoff_n, VS_CBACKOFF_MIN, VS_CBACKOFF_MAX, vs_rng_double(&x->rng_client));
    x->cp[p].min_rpc_time = x->st.now + d;
    push_wake(x, x->cp[p].min_rpc_time);
}

static void work_backoff(struct sim *x, size_t p)
{
    struct proj *pj = &x->pj[p];
    if (pj->no_work_n < VS_CBACKOFF_CAP)
        pj->no_work_n++;
    double d =
        vs_cbackoff(pj->no_work_n, VS_CBACKOFF_MIN, VS_CBACKOFF_MAX, vs_rng_double(&x->rng_client));
    x->cp[p].work_backoff_until = x->st.now + d;
    push_wake(x, x->cp[p].work_backoff_until);
}

/* What the client would send as <estimated_delay> for the CPU, from the
 * round-robin simulation of the pass that decided this RPC. */
static double estimated_delay(struct sim *x)
{
    return x->have_sched ? vs_rrsim_busy_time(&x->st, &x->out.rr, &x->ws) : 0;
}

static void reserve_request(struct sim *x)
{
    if (x->st.nresults <= x->req_cap)
        return;
    x->req_cap = x->st.nresults * 2;
    x->req_inprog = vs_xreallocarray(x->req_inprog, x->req_cap, sizeof(*x->req_inprog));
    x->req_ip = vs_xreallocarray(x->req_ip, x->req_cap, sizeof(*x->req_ip));
}

/*
 * The scheduler request the client sends project p, built from the
 * simulated client's state the way a BOINC client builds it: the CPU
 * request in instance-seconds, estimated_delay, the project's jobs in
 * progress (<other_results>) and, for seed 000's EDF check, every queued
 * CPU result (<in_progress_results>, deadlines relative to now). Times are
 * moved by VS_SIM_EPOCH so that 0 keeps its meaning of "never".
 */
static void build_request(struct sim *x, size_t p, double request, struct vs_sp_request *req)
{
    const struct proj *pj = &x->pj[p];
    double now = x->st.now;
    memset(req, 0, sizeof(*req));
    req->now = VS_SIM_EPOCH + now;
    req->prev_rpc_time = pj->srv.prev_rpc > 0 ? VS_SIM_EPOCH + pj->srv.prev_rpc : 0;
    req->work_req_seconds = request;
    req->req_secs[VS_SP_CPU] = request;
    req->estimated_delay[VS_SP_CPU] = estimated_delay(x);
    reserve_request(x);
    int nin = 0, nip = 0;
    bool want_ip = pj->srv.cfg.workload_sim;
    for (size_t r = 0; r < x->st.nresults; r++) {
        const struct vs_cresult *res = &x->st.results[r];
        if (res->done)
            continue;
        if (res->project == p)
            x->req_inprog[nin++] =
                (struct vs_sp_inprog){.app_name = x->s->projects[p].name, .proc = VS_SP_CPU};
        if (want_ip && !x->s->projects[res->project].non_cpu_intensive)
            x->req_ip[nip++] = (struct vs_sp_ip_result){.deadline = res->deadline - now,
                                                        .remaining = res->remaining};
    }
    req->in_progress = x->req_inprog;
    req->n_in_progress = nin;
    req->ip_results = x->req_ip;
    req->n_ip_results = nip;
    req->have_ip_results = want_ip;
}

/* Every job of a simulated project is the same to the server (one app, one
 * version, the estimate of the project's mean length, one delay bound, no
 * memory or disk bound): nothing varies between candidates, so the shared
 * scan rule stops at any refusal but a workunit's own. */
#define SIM_VARIES 0u

/*
 * The server's answer: src/policy/server's rules, as `volsched serve` runs
 * them, on each job the project would send (its length drawn now, its
 * estimate the project's mean C), until the request is filled or the scan
 * rule (vs_sp_scan_stops) says no further job can pass. Fills *out, and
 * appends the reply's explanation to explain when it is not NULL.
 */
void vs_sim__serve(struct sim *x, size_t p, double request, struct vs_buf *explain,
                   struct vs_sim_reply *out)
{
    struct proj *pj = &x->pj[p];
    struct vs_sim_server *sv = &pj->srv;
    const struct vs_scn_project *sp = &x->s->projects[p];
    memset(out, 0, sizeof(*out));
    struct vs_sp_request req;
    build_request(x, p, request, &req);
    /* The client reports its duration correction factor with its host
     * info and the server scales its runtime estimates by it (BOINC's
     * estimate_wallclock_duration): as the app version's speed on this
     * host. Only a project that misestimates (est != 1) has one. */
    if (pj->estimating)
        sv->av.flops = VS_SIM_FLOPS * pj->kcpu / pj->dcf;
    int sent = 0;
    struct vs_sp_state st;
    if (vs_sp_state_init(&st, &sv->cfg, &x->sp_host, &req, &sv->hav, 1) != 0) {
        if (!x->rc)
            x->rc = VS_EINTERNAL;
        return;
    }
    /* nowork = D1-D2: the project has no work then (BOINC's "no work
     * available": an empty reply, and the client backs off). */
    bool dry = x->st.now >= sp->nowork_from && x->st.now < sp->nowork_to;
    for (int looked = 0; !dry && pj->jobs_left != 0 && sent < MAX_JOBS_PER_RPC &&
                         looked < MAX_JOBS_PER_RPC && vs_sp_work_needed(&st);
         looked++) {
        double len = sp->cpu_time;
        if (sp->spread > 0)
            len *= 1 + sp->spread * (2 * vs_rng_double(&x->rng_jobs) - 1);
        struct vs_sp_job job = {
            .wu_id = x->next_job_id,
            .result_id = x->next_job_id,
            .app = &sv->app,
            /* est x the true mean length, for a job that keeps ncpus CPUs
             * busy (the server divides by the app version's avg_ncpus). */
            .rsc_fpops_est = sp->est * sp->cpu_time * pj->kcpu * VS_SIM_FLOPS,
            .delay_bound = sp->delay_bound,
        };
        struct vs_sp_verdict v;
        if (vs_sp_check_job(&st, &job, &v) != VS_SP_OK) {
            if (vs_sp_scan_stops(v.reason, SIM_VARIES))
                break;
            continue;
        }
        vs_sp_commit(&st, &job, &v);
        vs_sim__add_result(x, p, len, x->st.now + sp->delay_bound);
        /* What the client learns of the project's jobs from this one. */
        x->cp[p].job_est = job.rsc_fpops_est / VS_SIM_FLOPS / pj->kcpu * pj->dcf;
        x->cp[p].job_delay_bound = sp->delay_bound;
        if (pj->jobs_left > 0)
            pj->jobs_left--;
        sent++;
    }
    if (st.n_havs > 0)
        sv->hav = st.havs[0];
    out->sent = sent;
    out->deadlines = vs_sp_no_work_because_of_deadlines(&st);
    out->delay = vs_sp_reply_delay(&st);
    for (int r = VS_SP_OK + 1; r < VS_SP__NREASONS; r++)
        if (st.n_refused[r] > 0)
            out->refused |= 1u << r;
    if (explain && vs_sp_explain(&st, explain) != 0 && !x->rc)
        x->rc = VS_ELIMIT;
    vs_sp_state_cleanup(&st);
}

/* The answer of a server outside the simulator (hsim.h): the request is
 * built as for the built-in one, and the hook adds the jobs it sends. */
static int serve_hooked(struct sim *x, size_t p, double request, bool *deadlines, double *delay)
{
    struct vs_sp_request req;
    build_request(x, p, request, &req);
    return x->hooks->serve(x->hooks->ctx, (struct vs_hsim *)x, &req, deadlines, delay);
}

/* The server side of project p for the whole run, from the scenario. */
void vs_sim__server_init(struct sim *x, size_t p)
{
    const struct vs_scn_project *sp = &x->s->projects[p];
    struct vs_sim_server *sv = &x->pj[p].srv;
    memset(sv, 0, sizeof(*sv));
    struct vs_sp_config *c = &sv->cfg;
    vs_sp_config_defaults(c);
    c->max_wus_to_send = (int)sp->max_wus_to_send;
    c->daily_result_quota = (int)sp->daily_result_quota;
    c->workload_sim = sp->workload_sim || x->s->server_deadline_check;
    /* A non-CPU-intensive job runs beside the others: no deadline rule. */
    c->ignore_delay_bound = sp->ignore_delay_bound || sp->non_cpu_intensive;
    c->max_ncpus = VS_SP_MAX_NCPUS;
    if (sp->max_in_progress > 0)
        c->limits.project.total = (struct vs_sp_rsc_limit){(int)sp->max_in_progress, false};
    if (sp->max_wus_in_progress > 0)
        c->limits.project.cpu = (struct vs_sp_rsc_limit){(int)sp->max_wus_in_progress, true};
    sv->av = (struct vs_sp_app_version){
        .id = (int64_t)p + 1,
        .platform = VS_SIM_PLATFORM,
        .version_num = 100,
        .proc = VS_SP_CPU,
        .avg_ncpus = x->pj[p].kcpu,
    };
    sv->app = (struct vs_sp_app){
        .id = (int64_t)p + 1,
        .name = sp->name,
        .limit_index = -1,
        .versions = &sv->av,
        .n_versions = 1,
    };
    sv->hav = (struct vs_sp_hav){.app_version_id = sv->av.id};
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

    bool hooked = x->hooks && x->hooks->project == p;
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
        if (hooked)
            x->hooks->report(x->hooks->ctx, rep->ext, rep->cpu);
    }
    x->nreports = w;
    cp->report_overdue = false;

    int sent = 0;
    bool deadlines = false;
    double delay = 0;
    if (hooked && request_pn <= 0) {
        /* Only reporting: the caller's server still sees the RPC. */
        sent = x->hooks->serve(x->hooks->ctx, (struct vs_hsim *)x, NULL, &deadlines, &delay);
    } else if (request_pn > 0 && pj->jobs_left != 0) {
        /* The request in instance-seconds (wall CPU seconds), as the
         * round-robin simulation measured the shortfall. */
        double request = request_pn * (share_frac > 0 ? share_frac : 1);
        if (hooked) {
            sent = serve_hooked(x, p, request, &deadlines, &delay);
        } else {
            struct vs_sim_reply y;
            vs_sim__serve(x, p, request, NULL, &y);
            sent = y.sent;
            deadlines = y.deadlines;
            delay = y.delay;
        }
        vs_metrics_sent(&x->m, (int)p, sent);
        if (sent > 0)
            vs_sim__note_queued(x, p);
    }
    pj->srv.prev_rpc = now;
    if (request_pn > 0 && sent == 0) {
        if (deadlines) {
            /* "No work because of deadlines": latency-limited until the
             * request delay has passed. */
            cp->latency_limited_until = vs_clatency_limited_until(now, sent, true, delay);
            cp->min_rpc_time = now + max2(delay, sp->min_rpc_delay);
            push_wake(x, cp->min_rpc_time);
        } else {
            work_backoff(x, p);
            /* A refusal that asks for a longer wait (a daily quota, or
             * every reply's min_rpc_delay). */
            delay = max2(delay, sp->min_rpc_delay);
            if (now + delay > cp->min_rpc_time) {
                cp->min_rpc_time = now + delay;
                push_wake(x, cp->min_rpc_time);
            }
        }
    } else {
        cp->min_rpc_time = now + sp->min_rpc_delay;
    }
    pj->backoff_n = 0; /* the server answered */
    if (sent > 0) {
        pj->no_work_n = 0;
        cp->work_backoff_until = 0;
    }
    return sent;
}
