/*
 * The project's scheduler. A request is answered by src/policy/server, the
 * code `volsched serve` runs for every RPC (the client and feasibility
 * checks, seed 004's deadline rule from the request's estimated_delay and
 * the host's time stats, job limits, max_wus_to_send, the daily quota, one
 * result per user and host per workunit, and seed 000's EDF check when the
 * scenario turns it on), over an in-memory store: the unsent results in
 * creation order stand for the feeder's job cache, of which the first
 * job_cache are looked at per request, as BOINC's scheduler looks at its
 * shared-memory slots; a refusal ends that look only when the shared scan
 * rule says no further job can pass (vs_sp_scan_stops, as the server and
 * the host simulator ask it). What is not simulated is the store's I/O.
 */
#include <string.h>

#include "popsim/pop_int.h"
#include "volsched/alloc.h"

#define POP_PLATFORM "x86_64-pc-linux-gnu"

void vs_pop__server_init(struct pop *p)
{
    const struct vs_pop_scenario *s = p->s;
    struct vs_sp_config *c = &p->cfg;
    vs_sp_config_defaults(c);
    c->max_wus_to_send = (int)s->max_wus_to_send;
    c->daily_result_quota = (int)s->daily_result_quota;
    c->workload_sim = s->server_edf_check;
    c->one_result_per_user_per_wu = true;
    c->one_result_per_host_per_wu = true;
    if (s->max_wus_in_progress > 0)
        c->limits.project.cpu = (struct vs_sp_rsc_limit){(int)s->max_wus_in_progress, true};
    p->av = (struct vs_sp_app_version){
        .id = 1, .platform = POP_PLATFORM, .version_num = 100, .proc = VS_SP_CPU, .avg_ncpus = 1};
    p->app = (struct vs_sp_app){
        .id = 1, .name = "popsim", .limit_index = -1, .versions = &p->av, .n_versions = 1};
}

void vs_pop__server_cleanup(struct pop *p)
{
    vs_free(p->inprog);
    vs_free(p->ip);
    vs_free(p->sent);
}

/* The host as the scheduler sees it (its <host_info> and time stats). */
static void build_host(const struct pop *p, const struct pop_host *h, struct vs_sp_host *sh)
{
    memset(sh, 0, sizeof(*sh));
    sh->id = h->id;
    sh->userid = h->id;
    sh->platform = POP_PLATFORM;
    sh->p_fpops = h->flops;
    sh->p_ncpus = h->ncpus;
    sh->m_nbytes = h->ram;
    sh->d_total = h->disk;
    /* The big files it keeps take their room (BOINC's client reports its
     * free space net of them). */
    sh->d_free = h->disk > h->held_bytes ? h->disk - h->held_bytes : 0;
    sh->work_buf_min = p->s->buffer;
    sh->on_frac = h->on_frac;
    sh->active_frac = h->active_frac;
    sh->core_client_version = 72005;
}

/* What differs between popsim's candidate jobs, for the shared scan rule
 * (vs_sp_scan_stops): every job has the project's one app and version, its
 * estimate and its delay bound, and no memory bound; with big input files
 * the disk need differs (a job whose file the host holds needs only its own
 * input), so a disk refusal skips that job and the scan goes on. */
unsigned vs_pop__varies(const struct pop *p)
{
    return p->s->file_mb > 0 ? VS_SP_VARIES_DISK : 0;
}

/* Result r goes to host h: the server's side of it, and for the lighter
 * model the host's queue (a full host is given its jobs by pop_full.c,
 * from p->sent). */
static void assign(struct pop *p, struct pop_host *h, int32_t slot, int32_t r)
{
    struct pop_result *x = &p->res[r];
    vs_pop__unsent_remove(p, r);
    x->state = R_RUNNING;
    x->host = slot;
    x->hostid = h->id;
    x->sent = p->now;
    x->deadline = p->now + p->s->delay_bound;
    int32_t **q = &h->q;
    int *n = &h->nq, *cap = &h->capq;
    if (p->s->model == VS_POP_FULL)
        q = &p->sent, n = &p->nsent, cap = &p->capsent;
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        *q = vs_xreallocarray(*q, (size_t)*cap, sizeof(**q));
    }
    (*q)[(*n)++] = r;
    p->in_flight++;
    p->out->sent++;
    p->out->bytes_down += p->s->input_mb * 1e6;
    vs_pop__file_sent(p, h, r);
    vs_eventq_push(&p->q, x->deadline, EV_DEADLINE, r, x->gen);
}

enum vs_sp_reason vs_pop__offer(struct pop *p, struct pop_host *h, int32_t slot,
                                struct vs_sp_state *st, int32_t r)
{
    const struct pop_wu *wu = &p->wus[p->res[r].wu];
    int64_t ids[VS_POP_MAX_RESULTS];
    int nids = 0;
    for (int i = 0; i < wu->nres; i++) {
        const struct pop_result *o = &p->res[wu->res[i]];
        if (o->state != R_UNSENT && o->state != R_CANCELLED)
            ids[nids++] = o->hostid;
    }
    struct vs_sp_job job = {
        .wu_id = p->res[r].wu + 1,
        .result_id = r + 1,
        .app = &p->app,
        .rsc_fpops_est = p->s->job_hours * p->s->ref_gflops * 1e9,
        .rsc_disk_bound = vs_pop__file_disk_need(p, h, r),
        .delay_bound = p->s->delay_bound,
        .result_userids = ids, /* one user per host */
        .n_result_userids = nids,
        .result_hostids = ids,
        .n_result_hostids = nids,
    };
    struct vs_sp_verdict v;
    enum vs_sp_reason why = vs_sp_check_job(st, &job, &v);
    if (why == VS_SP_OK) {
        vs_sp_commit(st, &job, &v);
        assign(p, h, slot, r);
    } else if (why == VS_SP_DEADLINE) {
        p->out->refused_deadline++;
    } else if (why == VS_SP_WORKLOAD) {
        p->out->refused_workload++;
    }
    return why;
}

/*
 * Answers request rq of host h: by locality scheduling when the scenario
 * has it (the project's one app is then a full-locality app, whose jobs
 * never enter the job cache), else by asking src/policy/server about the
 * cached jobs in order. Returns jobs sent. *deadlines tells whether nothing
 * was sent because of deadlines, *delay the reply's request delay (either
 * may be NULL).
 */
int vs_pop__send_work(struct pop *p, struct pop_host *h, int32_t slot,
                      const struct vs_sp_request *rq, bool *deadlines, double *delay)
{
    struct vs_sp_host sh;
    build_host(p, h, &sh);
    p->nsent = 0;
    struct vs_sp_state st;
    if (vs_sp_state_init(&st, &p->cfg, &sh, rq, &h->hav, 1) != 0) {
        p->rc = VS_EINTERNAL;
        return 0;
    }
    int sent = 0;
    if (p->s->locality) {
        sent = vs_pop__locality_send(p, h, slot, &st);
    } else {
        int64_t looked = 0;
        if (p->tail.enabled)
            sent += vs_pop__tail_replicate(p, h, slot, &st);
        int32_t r = p->unsent_head;
        while (r >= 0 && looked < p->s->job_cache && vs_sp_work_needed(&st)) {
            int32_t next = p->res[r].next;
            if (p->tail.enabled && vs_pop__tail_skip(p, h, r)) {
                p->out->tail_refused++;
                looked++;
                r = next;
                continue;
            }
            enum vs_sp_reason why = vs_pop__offer(p, h, slot, &st, r);
            looked++;
            if (why == VS_SP_OK)
                sent++;
            else if (vs_sp_scan_stops(why, vs_pop__varies(p)))
                break;
            r = next;
        }
    }
    if (st.n_havs > 0)
        h->hav = st.havs[0];
    if (deadlines)
        *deadlines = vs_sp_no_work_because_of_deadlines(&st);
    if (delay)
        *delay = vs_sp_reply_delay(&st);
    vs_sp_state_cleanup(&st);
    return sent;
}
