/*
 * The validator (see validator.h). For each workunit: work out the verdicts
 * outside any transaction (reading files and running the operator's
 * commands may take a while), then apply them in one transaction.
 */
#include "volsched/validator.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/credit_grant.h"
#include "volsched/alloc.h"
#include "volsched/daemon_util.h"
#include "volsched/layout.h"
#include "volsched/log.h"
#include "volsched/str.h"

#define DEFAULT_LIMIT 100
#define MAX_RESULTS   64 /* results of one WU the validator looks at */

enum verdict { V_OK, V_BAD, V_TRANSIENT };

struct pass {
    struct vs_daemon_pass d; /* store, config, now, log, arena */
    struct vs_validator_stats st;
};

/* The output files of one result, as absolute paths in the upload hierarchy. */
struct outputs {
    const char **paths;
    size_t n;
    bool bad; /* xml_doc_in unreadable: a permanent failure */
};

/* A change to one result, decided outside the transaction. */
struct change {
    int64_t id;
    int old_outcome, old_validate; /* applied only if the row still has these */
    int outcome, validate;
    int hav; /* enum vs_hav_event, or -1 */
};

struct plan {
    struct change ch[MAX_RESULTS];
    size_t nch;
    bool defer;
    int64_t canonical;   /* new canonical result, 0 = none */
    int target_nresults; /* 0 = unchanged */
    int add_mask;
    int64_t transition_time;
    int credit_method; /* enum vs_credit_method, the app's <validator><credit> */
};

static void note(struct pass *p, const char *wu, const char *what, int rc)
{
    vs_daemon_msg(p->st.last_error, sizeof(p->st.last_error), "WU %s: %s%s%s", wu, what,
                  rc ? ": " : "", rc ? vs_strerror(rc) : "");
    VS_LOG(p->d.log, VS_LOG_WARN, "validator: %s", p->st.last_error);
}

static void outputs_of(struct pass *p, const struct vs_result *r, struct outputs *o)
{
    struct vs_daemon_file files[VS_DAEMON_MAX_FILES];
    size_t n = 0;
    memset(o, 0, sizeof(*o));
    if (vs_daemon_files(r->xml_doc_in, &p->d.arena, files, &n) != 0) {
        o->bad = true;
        return;
    }
    o->paths = vs_arena_alloc(&p->d.arena, (n ? n : 1) * sizeof(*o->paths));
    for (size_t i = 0; i < n; i++) {
        char path[VS_PATH_MAX + VS_NAME_MAX];
        if (vs_project_upload_path(p->d.cfg, files[i].name, false, path, sizeof(path)) != 0) {
            o->bad = true;
            return;
        }
        o->paths[i] = vs_arena_strndup(&p->d.arena, path, strlen(path));
    }
    o->n = n;
}

/* Runs an operator's command: exit 0 -> V_OK, 1 -> V_BAD, else transient. */
static enum verdict run_verdict(struct pass *p, const char *cmd, const char *const *args,
                                size_t nargs)
{
    int status = 0;
    int rc = vs_daemon_run(cmd, args, nargs, p->d.cfg->daemon_command_timeout, p->d.log, &status);
    if (rc)
        return V_TRANSIENT;
    return status == 0 ? V_OK : status == 1 ? V_BAD : V_TRANSIENT;
}

/* BOINC's init_result: can this result take part at all? */
static enum verdict check_one(struct pass *p, const struct vs_validator_config *vc,
                              const struct outputs *o)
{
    if (o->bad)
        return V_BAD;
    if (vc->method == VS_VALIDATE_ALWAYS)
        return V_OK;
    for (size_t i = 0; i < o->n; i++) {
        struct stat sb;
        if (stat(o->paths[i], &sb) != 0)
            return errno == ENOENT ? V_BAD : V_TRANSIENT;
    }
    if (vc->method == VS_VALIDATE_COMMAND && vc->command[0])
        return run_verdict(p, vc->command, o->paths, o->n);
    return V_OK;
}

/* 1 equal, 0 different, < 0 error. */
static int files_equal(const char *a, const char *b)
{
    int fa = open(a, O_RDONLY | O_CLOEXEC);
    if (fa < 0)
        return -errno;
    int fb = open(b, O_RDONLY | O_CLOEXEC);
    if (fb < 0) {
        int e = -errno;
        close(fa);
        return e;
    }
    char ba[16384], bb[16384];
    int res = 1;
    for (;;) {
        ssize_t na = read(fa, ba, sizeof(ba));
        if (na < 0) {
            res = -errno;
            break;
        }
        /* Fill the same number of bytes from b (short reads happen). */
        ssize_t nb = 0;
        while (nb < na) {
            ssize_t k = read(fb, bb + nb, (size_t)(na - nb));
            if (k < 0) {
                res = -errno;
                break;
            }
            if (k == 0)
                break;
            nb += k;
        }
        if (res < 0)
            break;
        if (nb != na || memcmp(ba, bb, (size_t)na) != 0) {
            res = 0;
            break;
        }
        if (na == 0) {
            char c;
            /* a ended: b must end too. */
            ssize_t k = read(fb, &c, 1);
            res = k == 0 ? 1 : k < 0 ? -errno : 0;
            break;
        }
    }
    close(fa);
    close(fb);
    return res;
}

/* BOINC's check_pair / compare_results. */
static enum verdict compare(struct pass *p, const struct vs_validator_config *vc,
                            const struct outputs *a, const struct outputs *b)
{
    if (vc->method == VS_VALIDATE_ALWAYS)
        return V_OK;
    if (vc->method == VS_VALIDATE_COMMAND && vc->compare_command[0]) {
        const char **args = vs_arena_alloc(&p->d.arena, (a->n + b->n + 1) * sizeof(*args));
        size_t k = 0;
        for (size_t i = 0; i < a->n; i++)
            args[k++] = a->paths[i];
        args[k++] = "--";
        for (size_t i = 0; i < b->n; i++)
            args[k++] = b->paths[i];
        return run_verdict(p, vc->compare_command, args, k);
    }
    if (a->n != b->n)
        return V_BAD;
    for (size_t i = 0; i < a->n; i++) {
        int eq = files_equal(a->paths[i], b->paths[i]);
        if (eq < 0)
            return V_TRANSIENT;
        if (eq == 0)
            return V_BAD;
    }
    return V_OK;
}

static void plan_change(struct plan *pl, const struct vs_result *r, int outcome, int validate,
                        int hav)
{
    if (pl->nch == MAX_RESULTS)
        return;
    struct change *c = &pl->ch[pl->nch++];
    c->id = r->id;
    c->old_outcome = r->outcome;
    c->old_validate = r->validate_state;
    c->outcome = outcome;
    c->validate = validate;
    c->hav = hav;
}

static bool is_success(const struct vs_result *r)
{
    return r->server_state == VS_RESULT_SERVER_STATE_OVER &&
           r->outcome == VS_RESULT_OUTCOME_SUCCESS;
}

/* A WU that has its canonical result: judge the newcomers against it. */
static void plan_against_canonical(struct pass *p, const struct vs_validator_config *vc,
                                   const struct vs_workunit *wu, const struct vs_result *res,
                                   size_t n, struct plan *pl)
{
    const struct vs_result *canon = NULL;
    for (size_t i = 0; i < n; i++)
        if (res[i].id == wu->canonical_resultid)
            canon = &res[i];
    if (!canon) {
        note(p, wu->name, "canonical result missing", 0);
        pl->add_mask |= VS_WU_ERROR_NO_CANONICAL_RESULT;
        return;
    }
    struct outputs co;
    outputs_of(p, canon, &co);
    for (size_t i = 0; i < n && !pl->defer; i++) {
        const struct vs_result *r = &res[i];
        if (r == canon || !is_success(r) ||
            (r->validate_state != VS_VALIDATE_STATE_INIT &&
             r->validate_state != VS_VALIDATE_STATE_INCONCLUSIVE))
            continue;
        struct outputs o;
        outputs_of(p, r, &o);
        enum verdict v = check_one(p, vc, &o);
        if (v == V_OK)
            v = compare(p, vc, &o, &co);
        if (v == V_TRANSIENT)
            pl->defer = true;
        else if (v == V_OK)
            plan_change(pl, r, r->outcome, VS_VALIDATE_STATE_VALID, VS_HAV_VALID);
        else
            plan_change(pl, r, r->outcome, VS_VALIDATE_STATE_INVALID, VS_HAV_INVALID);
    }
    pl->transition_time = p->d.now;
}

/* BOINC's check_set: look for a quorum among the viable results. */
static void plan_quorum(struct pass *p, const struct vs_validator_config *vc,
                        const struct vs_workunit *wu, const struct vs_result *res, size_t n,
                        struct plan *pl)
{
    const struct vs_result *viable[MAX_RESULTS];
    struct outputs outs[MAX_RESULTS];
    size_t nv = 0;
    for (size_t i = 0; i < n && nv < MAX_RESULTS; i++)
        if (is_success(&res[i]) && (res[i].validate_state == VS_VALIDATE_STATE_INIT ||
                                    res[i].validate_state == VS_VALIDATE_STATE_INCONCLUSIVE))
            viable[nv++] = &res[i];
    pl->transition_time = p->d.now;
    if ((int)nv < wu->min_quorum)
        return;
    /* Check each; the ones that fail permanently drop out. */
    const struct vs_result *good[MAX_RESULTS];
    struct outputs *gout[MAX_RESULTS];
    size_t ng = 0;
    for (size_t i = 0; i < nv; i++) {
        outputs_of(p, viable[i], &outs[i]);
        enum verdict v = check_one(p, vc, &outs[i]);
        if (v == V_TRANSIENT) {
            pl->defer = true;
            return;
        }
        if (v == V_BAD) {
            plan_change(pl, viable[i], VS_RESULT_OUTCOME_VALIDATE_ERROR, VS_VALIDATE_STATE_INVALID,
                        VS_HAV_INVALID);
            continue;
        }
        good[ng] = viable[i];
        gout[ng++] = &outs[i];
    }
    if ((int)ng < wu->min_quorum)
        return; /* the transitioner replaces the failed ones */

    /* Pairwise agreement, each pair compared once. */
    static const signed char unknown = -1;
    signed char eq[MAX_RESULTS][MAX_RESULTS];
    memset(eq, unknown, sizeof(eq));
    int need = wu->min_quorum / 2 + 1;
    size_t canon = ng;
    for (size_t i = 0; i < ng && canon == ng; i++) {
        int matches = 0;
        for (size_t j = 0; j < ng; j++) {
            if (i == j) {
                matches++;
                continue;
            }
            if (eq[i][j] == unknown) {
                enum verdict v = compare(p, vc, gout[i], gout[j]);
                if (v == V_TRANSIENT) {
                    pl->defer = true;
                    return;
                }
                eq[i][j] = eq[j][i] = v == V_OK;
            }
            matches += eq[i][j];
        }
        if (matches >= need)
            canon = i;
    }
    if (canon < ng) {
        pl->canonical = good[canon]->id;
        for (size_t j = 0; j < ng; j++) {
            bool ok = j == canon || eq[canon][j] == 1;
            plan_change(pl, good[j], good[j]->outcome,
                        ok ? VS_VALIDATE_STATE_VALID : VS_VALIDATE_STATE_INVALID,
                        ok ? VS_HAV_VALID : VS_HAV_INVALID);
        }
        /* BOINC-COMPAT: the validator does not wake the transitioner here;
         * the assimilator will. */
        pl->transition_time = VS_TIME_NEVER;
        return;
    }
    /* No consensus. */
    if ((int)ng > wu->max_success_results)
        pl->add_mask |= VS_WU_ERROR_TOO_MANY_SUCCESS_RESULTS;
    if ((int)ng >= wu->target_nresults)
        pl->target_nresults = (int)ng + 1;
    for (size_t j = 0; j < ng; j++)
        if (good[j]->validate_state == VS_VALIDATE_STATE_INIT)
            plan_change(pl, good[j], good[j]->outcome, VS_VALIDATE_STATE_INCONCLUSIVE, -1);
}

/* Applies the verdicts; the ids of the results made VALID go to valid[]
 * (room for MAX_RESULTS), their number to *nvalid. */
static int apply_changes(struct pass *p, struct vs_workunit *wu, const struct plan *pl,
                         int64_t *valid, size_t *nvalid)
{
    int rc = 0;
    *nvalid = 0;
    for (size_t i = 0; i < pl->nch && rc == 0; i++) {
        const struct change *c = &pl->ch[i];
        struct vs_result r;
        memset(&r, 0, sizeof(r));
        rc = vs_store_result_get(p->d.s, c->id, &r);
        if (rc == 0 && r.outcome == c->old_outcome && r.validate_state == c->old_validate) {
            r.outcome = c->outcome;
            r.validate_state = c->validate;
            rc = vs_store_result_update(p->d.s, &r);
            if (rc == 0 && c->hav >= 0)
                rc = vs_daemon_hav_event(p->d.s, r.hostid, r.app_version_id,
                                         p->d.cfg->policy.daily_result_quota,
                                         (enum vs_hav_event)c->hav, wu->delay_bound);
            if (rc == 0 && c->validate == VS_VALIDATE_STATE_VALID)
                valid[(*nvalid)++] = c->id;
            if (c->validate == VS_VALIDATE_STATE_VALID)
                p->st.nvalid++;
            else if (c->validate == VS_VALIDATE_STATE_INVALID)
                p->st.ninvalid++;
            else if (c->validate == VS_VALIDATE_STATE_INCONCLUSIVE)
                p->st.ninconclusive++;
        } else if (rc == VS_ENOTFOUND) {
            rc = 0;
        }
        vs_result_cleanup(&r);
    }
    return rc;
}

struct walk_ctx {
    struct vs_store *s;
    bool didnt_need;  /* a canonical result was just chosen: unsent ones are not needed */
    int64_t deadline; /* out: the earliest report deadline of a result still out */
};

static int walk_result(void *ctx, const struct vs_result *r)
{
    struct walk_ctx *u = ctx;
    if (r->server_state == VS_RESULT_SERVER_STATE_IN_PROGRESS && r->report_deadline < u->deadline)
        u->deadline = r->report_deadline;
    if (!u->didnt_need || (r->server_state != VS_RESULT_SERVER_STATE_UNSENT &&
                           r->server_state != VS_RESULT_SERVER_STATE_INACTIVE))
        return 0;
    struct vs_result c = *r;
    c.server_state = VS_RESULT_SERVER_STATE_OVER;
    c.outcome = VS_RESULT_OUTCOME_DIDNT_NEED;
    return vs_store_result_update(u->s, &c);
}

/* Applies a plan in one transaction, against fresh copies of the rows. */
static int apply(struct pass *p, int64_t wuid, const struct plan *pl)
{
    int rc = vs_store_begin(p->d.s);
    if (rc)
        return rc;
    struct vs_workunit wu;
    memset(&wu, 0, sizeof(wu));
    struct walk_ctx walk = {p->d.s, false, VS_TIME_NEVER};
    rc = vs_store_workunit_get(p->d.s, wuid, &wu);
    if (rc == VS_ENOTFOUND || (rc == 0 && !wu.need_validate)) {
        rc = 0; /* gone or handled meanwhile */
        goto done;
    }
    if (rc)
        goto done;
    wu.need_validate = 0;
    if (pl->defer) {
        wu.transition_time = p->d.now + p->d.cfg->validator_retry_secs;
    } else {
        int64_t valid[MAX_RESULTS];
        size_t nvalid = 0;
        bool had_canonical = wu.canonical_resultid != 0;
        rc = apply_changes(p, &wu, pl, valid, &nvalid);
        /* Credit commits with the verdicts, in this transaction: a crash
         * loses both or neither, and a result made VALID once is granted
         * once (apply_changes skips a row another pass changed). */
        double credit = 0;
        if (rc == 0 && nvalid > 0)
            rc = vs_credit_grant(p->d.s, pl->credit_method, &wu, had_canonical, valid, nvalid,
                                 p->d.now, &credit);
        if (rc == 0 && nvalid > 0) {
            p->st.ngranted += (int)nvalid;
            p->st.credit += credit;
        }
        if (rc == 0 && pl->canonical && !wu.canonical_resultid && !wu.error_mask) {
            wu.canonical_resultid = pl->canonical;
            if (wu.assimilate_state == VS_ASSIMILATE_INIT)
                wu.assimilate_state = VS_ASSIMILATE_READY;
            walk.didnt_need = true;
            p->st.ncanonical++;
        }
        if (pl->target_nresults > wu.target_nresults)
            wu.target_nresults = pl->target_nresults;
        wu.error_mask |= pl->add_mask;
        wu.transition_time = pl->add_mask ? p->d.now : pl->transition_time;
        /* A replica still out times out at its deadline, canonical result
         * or not (BOINC's transitioner visits it then): a "never" here
         * would leave it IN_PROGRESS until the assimilator wakes the WU. */
        if (rc == 0 && (walk.didnt_need || wu.transition_time > p->d.now))
            rc = vs_store_results_of_wu(p->d.s, wuid, walk_result, &walk);
        if (walk.deadline < wu.transition_time)
            wu.transition_time = walk.deadline;
    }
    if (rc == 0)
        rc = vs_store_workunit_update(p->d.s, &wu);
done:
    vs_workunit_cleanup(&wu);
    return vs_daemon_txn_end(p->d.s, rc);
}

static int on_wu(void *ctx, struct vs_workunit *wu, struct vs_result *res, size_t n)
{
    struct pass *p = ctx;
    vs_arena_reset(&p->d.arena);
    struct vs_app app;
    memset(&app, 0, sizeof(app));
    if (vs_store_app_get(p->d.s, wu->appid, &app) != 0)
        app.name[0] = '\0';
    const struct vs_validator_config *vc = vs_project_validator(p->d.cfg, app.name);
    struct plan *pl = vs_xcalloc(1, sizeof(*pl));
    pl->credit_method = vc->credit;
    if (wu->canonical_resultid)
        plan_against_canonical(p, vc, wu, res, n, pl);
    else
        plan_quorum(p, vc, wu, res, n, pl);
    if (pl->defer) {
        p->st.ndeferred++;
        vs_daemon_msg(p->st.last_error, sizeof(p->st.last_error),
                      "WU %s: transient validation failure; retry in %d s", wu->name,
                      p->d.cfg->validator_retry_secs);
        VS_LOG(p->d.log, VS_LOG_WARN, "validator: %s", p->st.last_error);
    }
    int rc = apply(p, wu->id, pl);
    vs_free(pl);
    if (rc == 0)
        p->st.nwus++;
    return rc;
}

int vs_validator_pass(struct vs_store *s, const struct vs_project_config *cfg, int64_t now,
                      int limit, struct vs_log *log, struct vs_validator_stats *stats)
{
    struct pass p;
    memset(&p, 0, sizeof(p));
    int rc = vs_daemon_pass_begin(&p.d, s, cfg, now, log);
    if (rc)
        return rc;
    rc = vs_store_wus_in_queue(s, VS_WU_QUEUE_VALIDATE, 0, limit > 0 ? limit : DEFAULT_LIMIT, on_wu,
                               &p);
    rc = vs_daemon_pass_end(&p.d, rc, p.st.nwus, p.st.last_error, sizeof(p.st.last_error));
    if (stats)
        *stats = p.st;
    return rc;
}
