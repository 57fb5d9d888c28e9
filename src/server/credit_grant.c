/*
 * Granting credit (see credit_grant.h).
 */
#include "server/credit_grant.h"

#include <string.h>

#include "volsched/alloc.h"
#include "volsched/credit.h"
#include "volsched/store_credit.h"

/* Adds credit to one owner's total and recent average. An owner that is
 * gone (a deleted team, user 0) is skipped. */
static int add_to(struct vs_store *s, enum vs_credit_owner owner, int64_t id, double credit,
                  double start, double now)
{
    if (id <= 0 || credit <= 0)
        return 0;
    struct vs_credit_totals t;
    int rc = vs_store_credit_totals_get(s, owner, id, &t);
    if (rc == VS_ENOTFOUND)
        return 0;
    if (rc)
        return rc;
    t.total += credit;
    vs_credit_update_average(now, start, credit, VS_CREDIT_HALF_LIFE, &t.expavg, &t.expavg_time);
    return vs_store_credit_totals_set(s, owner, id, &t);
}

/* The claim of one result under method; feeds its sample to the adaptive
 * scheme's averages. */
static int claim_of(struct vs_store *s, int method, const struct vs_workunit *wu,
                    const struct vs_result *r, double *out)
{
    struct vs_credit_job j;
    memset(&j, 0, sizeof(j));
    j.rsc_fpops_est = wu->rsc_fpops_est;
    j.rsc_fpops_bound = wu->rsc_fpops_bound;
    j.fixed_credit = wu->canonical_credit;
    j.elapsed_time = r->elapsed_time;
    j.cpu_time = r->cpu_time;
    int rc = 0;
    if (method == VS_CREDIT_ADAPTIVE) {
        struct vs_host h;
        memset(&h, 0, sizeof(h));
        rc = vs_store_host_get(s, r->hostid, &h);
        if (rc == 0) {
            j.host_p_fpops = h.p_fpops;
            j.host_p_ncpus = h.p_ncpus;
        } else if (rc == VS_ENOTFOUND) {
            rc = 0; /* a host that is gone is granted the average */
        }
        if (rc == 0)
            rc = vs_store_credit_av_ncpus(s, r->app_version_id, &j.av_avg_ncpus);
        if (rc == 0)
            rc = vs_store_credit_pfc_get(s, r->app_version_id, 0, &j.av.n, &j.av.avg);
        if (rc == 0)
            rc = vs_store_credit_pfc_get(s, r->app_version_id, r->hostid, &j.hav.n, &j.hav.avg);
        if (rc == 0)
            rc = vs_store_credit_app_ref(s, wu->appid, VS_CREDIT_MIN_AV_SAMPLES, &j.app_ref);
        if (rc)
            return rc;
    }
    struct vs_credit_claim c;
    vs_credit_claim(method, &j, &c);
    if (c.update_hav && r->hostid > 0) {
        vs_credit_stat_add(&j.hav, c.sample, VS_CREDIT_HOST_WINDOW);
        rc =
            vs_store_credit_pfc_put(s, wu->appid, r->app_version_id, r->hostid, j.hav.n, j.hav.avg);
    }
    if (rc == 0 && c.update_av) {
        vs_credit_stat_add(&j.av, c.sample, VS_CREDIT_AV_WINDOW);
        rc = vs_store_credit_pfc_put(s, wu->appid, r->app_version_id, 0, j.av.n, j.av.avg);
    }
    if (rc == 0)
        *out = c.credit;
    return rc;
}

int vs_credit_grant(struct vs_store *s, int method, struct vs_workunit *wu, bool had_canonical,
                    const int64_t *ids, size_t n, int64_t now, double *out_credit)
{
    if (out_credit)
        *out_credit = 0;
    if (n == 0)
        return 0;
    struct vs_result *res = vs_xcalloc(n, sizeof(*res));
    double *claims = vs_xcalloc(n, sizeof(*claims));
    size_t got = 0;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = vs_store_result_get(s, ids[i], &res[got]);
        if (rc == 0)
            rc = claim_of(s, method, wu, &res[got], &claims[got]);
        if (rc == 0)
            got++;
    }
    double granted = had_canonical && wu->canonical_credit > 0 ? wu->canonical_credit
                                                               : vs_credit_quorum(claims, got);
    double sum = 0;
    for (size_t i = 0; i < got && rc == 0; i++) {
        struct vs_result *r = &res[i];
        r->claimed_credit = claims[i];
        r->granted_credit = granted;
        rc = vs_store_result_update(s, r);
        struct vs_user u;
        memset(&u, 0, sizeof(u));
        int64_t teamid = 0;
        if (rc == 0) {
            int urc = vs_store_user_get(s, r->userid, &u);
            if (urc == 0)
                teamid = u.teamid;
            else if (urc != VS_ENOTFOUND)
                rc = urc;
            vs_user_cleanup(&u);
        }
        double start = (double)r->sent_time;
        if (rc == 0)
            rc = add_to(s, VS_CREDIT_HOST, r->hostid, granted, start, (double)now);
        if (rc == 0)
            rc = add_to(s, VS_CREDIT_USER, r->userid, granted, start, (double)now);
        if (rc == 0)
            rc = add_to(s, VS_CREDIT_TEAM, teamid, granted, start, (double)now);
        sum += granted;
    }
    if (rc == 0) {
        wu->canonical_credit = granted;
        if (out_credit)
            *out_credit = sum;
    }
    for (size_t i = 0; i < n; i++)
        vs_result_cleanup(&res[i]);
    vs_free(res);
    vs_free(claims);
    return rc;
}
