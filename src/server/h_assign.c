/*
 * Assigned work in the scheduler (seed 003; BOINC's sched_assign.cpp):
 * targeted jobs (host, user, team) and broadcast jobs (all, user, team),
 * chosen before locality and the job cache. Which assignments match and
 * whether the host gets an instance are the pure policy's
 * (policy/server/assign.c); the instance is reserved in the store in one
 * transaction whose unique slot indexes make BOINC's #1937 (two hosts of
 * one user both adding an instance) impossible. The usual work-send rules
 * (platform, memory, disk, deadline, limits) apply, unlike BOINC's
 * send_assigned_job; a host that cannot run its targeted job is told why.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "server/sched_int.h"
#include "volsched/log.h"
#include "volsched/sign.h"
#include "volsched/store.h"
#include "volsched/templates.h"

/* Assignments read per kind and request: the per-RPC cost is bounded even
 * when a user has thousands of targeted jobs (the rest come next time). */
#define MAX_PER_KIND 32
#define NKINDS       6

struct vs_assign {
    const struct vs_project_config *cfg;
    struct vs_log *log;
    struct vs_sign_key *upload_key; /* NULL: outputs without certificates */
    /* The last result template read, shared by requests (tmpl_mu). */
    pthread_mutex_t tmpl_mu;
    char tmpl_path[VS_PATH_MAX + VS_NAME_MAX + 2];
    char *tmpl;
    size_t tmpl_len;
};

struct vs_assign *vs_assign_create(const struct vs_project_config *cfg, struct vs_log *log)
{
    if (!cfg->enable_assignment && !cfg->enable_assignment_multi)
        return NULL;
    struct vs_assign *g = VS_NEW(struct vs_assign);
    g->cfg = cfg;
    g->log = log;
    pthread_mutex_init(&g->tmpl_mu, NULL);
    if (!cfg->dont_generate_upload_certificates) {
        char path[VS_PATH_MAX + 32];
        int n = snprintf(path, sizeof(path), "%s/%s", cfg->key_dir, VS_SIGN_UPLOAD_PRIVATE);
        if (n < 0 || (size_t)n >= sizeof(path) || vs_sign_key_load(path, true, &g->upload_key)) {
            VS_LOG(log, VS_LOG_WARN, "assigned work: no upload key at %s; outputs unsigned", path);
            g->upload_key = NULL;
        }
    }
    return g;
}

void vs_assign_destroy(struct vs_assign *g)
{
    if (!g)
        return;
    vs_sign_key_destroy(g->upload_key);
    vs_free(g->tmpl);
    pthread_mutex_destroy(&g->tmpl_mu);
    vs_free(g);
}

/* The store's callback: renders the new instance's output template, as the
 * transitioner does for ordinary results. Runs inside the reservation's
 * transaction. */
static int make_instance(void *ctx, const struct vs_workunit *wu, struct vs_result *r)
{
    struct vs_assign *g = ctx;
    char path[sizeof(g->tmpl_path)];
    int n = snprintf(path, sizeof(path), "%s/%s", g->cfg->dir, wu->result_template_file);
    if (n < 0 || (size_t)n >= sizeof(path))
        return VS_ELIMIT;
    uint32_t rnd = 0;
    if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
        rnd = (uint32_t)rand();
    r->random = (int)(rnd & 0x7fffffff);
    char err[256] = "";
    pthread_mutex_lock(&g->tmpl_mu);
    int rc = 0;
    if (!g->tmpl || strcmp(g->tmpl_path, path) != 0) {
        vs_free(g->tmpl);
        g->tmpl = NULL;
        rc = vs_template_read(path, &g->tmpl, &g->tmpl_len);
        if (rc == 0)
            memcpy(g->tmpl_path, path, sizeof(path));
    }
    if (rc == 0)
        rc = vs_template_output(g->tmpl, g->tmpl_len, r->name, rnd & 0x7fffffff, g->cfg->upload_url,
                                g->upload_key, &r->xml_doc_in, err, sizeof(err));
    pthread_mutex_unlock(&g->tmpl_mu);
    if (rc)
        VS_LOG(g->log, VS_LOG_ERROR, "assigned work: WU %s: result template %s: %s", wu->name, path,
               err[0] ? err : vs_strerror(rc));
    return rc;
}

/* One candidate: an assignment and a copy of its workunit. */
struct cand {
    struct vs_assignment a;
    struct vs_workunit wu;
};

struct cands {
    struct cand *v;
    size_t n, cap;
};

static int collect(void *ctx, const struct vs_assignment *a, const struct vs_workunit *wu)
{
    struct cands *c = ctx;
    for (size_t i = 0; i < c->n; i++)
        if (c->v[i].a.workunitid == a->workunitid)
            return 0; /* one workunit assigned twice: offered once */
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 16;
        c->v = vs_xreallocarray(c->v, c->cap, sizeof(*c->v));
    }
    struct cand *k = &c->v[c->n++];
    k->a = *a;
    k->wu = *wu;
    k->wu.xml_doc = vs_xstrdup(wu->xml_doc ? wu->xml_doc : "");
    return 0;
}

/* Higher priority first; targeted before broadcast; then assignment id. */
static int cand_cmp(const void *pa, const void *pb)
{
    const struct cand *a = pa, *b = pb;
    if (a->wu.priority != b->wu.priority)
        return a->wu.priority > b->wu.priority ? -1 : 1;
    if (a->a.multi != b->a.multi)
        return a->a.multi < b->a.multi ? -1 : 1;
    return a->a.id < b->a.id ? -1 : a->a.id > b->a.id;
}

/* Tells the host why it cannot run a job meant for it. */
static void explain_refusal(struct pick_ctx *pc, struct vs_proto_reply *r, const struct cand *k,
                            const struct vs_sp_verdict *v)
{
    struct vs_buf b;
    vs_buf_init(&b, 1024);
    if (vs_buf_printf(&b, "Job %s was assigned to this computer but not sent: ", k->wu.name) == 0 &&
        vs_sp_verdict_message(&pc->x->st, v, &b) == 0)
        vs_sched__add_msg(r, pc->arena, "low", vs_buf_str(&b));
    vs_buf_cleanup(&b);
}

/* Reserves an instance of candidate k and adds it to the reply's jobs. */
static void take(struct vs_sched *s, struct vs_store *st, struct pick_ctx *pc, int64_t now,
                 struct cand *k, const struct vs_sp_job *job, const struct vs_sp_verdict *v)
{
    struct vs_send *x = pc->x;
    struct vs_result res;
    const char *why = NULL;
    int rc =
        vs_store_assigned_reserve(st, &k->a, x->host.id, now, make_instance, s->assign, &res, &why);
    if (rc == VS_EEXISTS) {
        VS_LOG(s->log, VS_LOG_DEBUG, "host %lld: WU %s: another request took the slot first",
               (long long)x->host.id, k->wu.name);
        return;
    }
    if (rc != 0) {
        VS_LOG(s->log, VS_LOG_WARN, "host %lld: WU %s: cannot reserve an instance: %s",
               (long long)x->host.id, k->wu.name, vs_strerror(rc));
        return;
    }
    if (res.id == 0) {
        VS_LOG(s->log, VS_LOG_DEBUG, "host %lld: WU %s: %s", (long long)x->host.id, k->wu.name,
               why ? why : "no instance");
        return;
    }
    struct vs_cache_job *cj = &x->jobs[x->njobs];
    cj->job.result = res;
    cj->job.wu = k->wu; /* moves the heap string */
    k->wu.xml_doc = NULL;
    cj->prep = NULL;
    if (vs_sched__prep_job(s, cj) != 0) {
        vs_workunit_cleanup(&cj->job.wu);
        vs_result_cleanup(&cj->job.result);
        return;
    }
    vs_send__commit(pc, &cj->job.wu, cj->prep, job, v, true);
}

void vs_assign_choose(struct vs_sched *s, struct vs_store *st, struct pick_ctx *pc, int64_t now,
                      struct vs_proto_reply *r)
{
    struct vs_send *x = pc->x;
    if (!s->assign || !st || x->host.id <= 0)
        return;
    const struct vs_project_config *cfg = &s->cfg;
    /* BOINC's order: the user's, the host's, the team's targeted jobs;
     * then broadcasts to all, to the user, to the team. */
    struct {
        int type;
        int64_t id;
        int multi;
        bool on;
    } kinds[NKINDS] = {
        {VS_ASSIGN_USER, x->host.userid, 0, cfg->enable_assignment},
        {VS_ASSIGN_HOST, x->host.id, 0, cfg->enable_assignment},
        {VS_ASSIGN_TEAM, x->teamid, 0, cfg->enable_assignment && x->teamid > 0},
        {VS_ASSIGN_NONE, 0, 1, cfg->enable_assignment_multi},
        {VS_ASSIGN_USER, x->host.userid, 1, cfg->enable_assignment_multi},
        {VS_ASSIGN_TEAM, x->teamid, 1, cfg->enable_assignment_multi && x->teamid > 0},
    };
    struct cands c = {0};
    for (int i = 0; i < NKINDS; i++) {
        if (!kinds[i].on)
            continue;
        int rc = vs_store_assigned_for(st, kinds[i].type, kinds[i].id, kinds[i].multi, x->host.id,
                                       MAX_PER_KIND, collect, &c);
        if (rc)
            VS_LOG(s->log, VS_LOG_WARN, "host %lld: cannot read assigned work: %s",
                   (long long)x->host.id, vs_strerror(rc));
    }
    if (c.n > 1)
        qsort(c.v, c.n, sizeof(*c.v), cand_cmp);
    for (size_t i = 0; i < c.n; i++) {
        struct cand *k = &c.v[i];
        if (x->njobs >= pc->max_jobs || !vs_sp_work_needed(&x->st))
            break;
        /* The matching was the query's; the policy's test keeps it honest
         * (a team's assignment reaches only the team's current members). */
        struct vs_sp_assignment pa = {k->a.target_type, k->a.target_id, k->a.multi != 0};
        if (!vs_sp_assign_matches(&pa, x->host.id, x->host.userid, x->teamid))
            continue;
        struct vs_sp_job job;
        vs_send__sp_job(pc, &k->wu, 0, &job);
        struct vs_sp_verdict v;
        if (vs_sp_check_job(&x->st, &job, &v) != VS_SP_OK) {
            if (!k->a.multi && v.reason != VS_SP_NO_WORK_WANTED && v.reason != VS_SP_RPC_LIMIT)
                explain_refusal(pc, r, k, &v);
            continue;
        }
        take(s, st, pc, now, k, &job, &v);
    }
    for (size_t i = 0; i < c.n; i++)
        vs_workunit_cleanup(&c.v[i].wu);
    vs_free(c.v);
}
