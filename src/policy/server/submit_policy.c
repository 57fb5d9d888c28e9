/* Remote submission's pure policies (volsched/submit_policy.h). */
#include "volsched/submit_policy.h"

#include <math.h>

double vs_sp_fair_start(double vt_user, double v_project)
{
    return vt_user > v_project ? vt_user : v_project;
}

double vs_sp_fair_vtime(double start, double quota, size_t i)
{
    double q = quota > 1e-6 ? quota : 1e-6;
    return start + (double)(i + 1) / q;
}

int vs_sp_fair_priority(double vt)
{
    double p = -ceil(vt * VS_SP_FAIR_SCALE);
    if (p < (double)INT32_MIN + 1)
        return INT32_MIN + 1;
    if (p > 0)
        return 0;
    return (int)p;
}

double vs_sp_fair_vt_of_priority(int priority)
{
    return priority >= 0 ? 0.0 : -(double)priority / VS_SP_FAIR_SCALE;
}

void vs_sp_tail_defaults(struct vs_sp_tail_params *p)
{
    p->enabled = true;
    p->tail_frac = 0.1;
    p->fast_quantile = 0.5;
    p->max_error_rate = 0.05;
    p->overdue_factor = 2.0;
    p->min_overdue = 600;
    p->max_extra = 1;
}

bool vs_sp_tail_active(const struct vs_sp_tail_params *p, const struct vs_sp_tail_batch *b)
{
    if (!p->enabled || b->njobs <= 0 || b->nunfinished <= 0)
        return false;
    return (double)b->nunfinished <= p->tail_frac * (double)b->njobs;
}

bool vs_sp_tail_host_fit(const struct vs_sp_tail_params *p, const struct vs_sp_tail_host *h)
{
    if (h->turnaround <= 0 || h->turnaround_q <= 0)
        return false;
    return h->turnaround <= h->turnaround_q && h->error_rate <= p->max_error_rate;
}

bool vs_sp_tail_overdue(const struct vs_sp_tail_params *p, double now, double sent_time,
                        double expected, int extra)
{
    if (!p->enabled || extra >= p->max_extra)
        return false;
    double limit = p->overdue_factor * (expected > 0 ? expected : 0);
    if (limit < p->min_overdue)
        limit = p->min_overdue;
    return now - sent_time > limit;
}
