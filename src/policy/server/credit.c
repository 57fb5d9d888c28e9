/*
 * Credit policy (see include/volsched/credit.h and docs/credit.md).
 *
 * The adaptive scheme follows CreditNew's idea: a result's peak-FLOP count
 * (pfc: elapsed time x the host's peak FLOPS on the CPUs the job used) is
 * divided by the job's estimated FLOPs; each app version keeps the average
 * of that ratio over its hosts, and each host its own on the version. A
 * result is worth
 *
 *     credit = est x ref x (sample / host's average) x cobblestone scale
 *
 * where ref is the lowest settled version average of the app (the most
 * efficient version): a host is paid what the most efficient version would
 * need for the job, scaled by how this job compared with the host's usual
 * ones. Whatever a host says about its speed or its runtimes, its average
 * carries the same bias, so the bias cancels; a host or version without
 * enough history is granted the average (est x ref), as is an outlier.
 */
#include "volsched/credit.h"

#include <math.h>
#include <string.h>

static const char *const method_names[] = {"adaptive", "flops", "fixed"};

const char *vs_credit_method_name(int method)
{
    return method >= 0 && method <= VS_CREDIT_FIXED ? method_names[method] : NULL;
}

int vs_credit_method_parse(const char *s)
{
    for (int i = 0; i <= VS_CREDIT_FIXED; i++)
        if (s && strcmp(s, method_names[i]) == 0)
            return i;
    return -1;
}

static bool usable(double x)
{
    return isfinite(x) && x > 0;
}

void vs_credit_update_average(double now, double work_start_time, double work, double half_life,
                              double *avg, double *avg_time)
{
    const double day = 86400.0;
    if (!isfinite(work) || work < 0)
        work = 0;
    if (!isfinite(*avg) || *avg < 0)
        *avg = 0;
    if (*avg_time > 0) {
        double diff = now - *avg_time;
        if (!isfinite(diff) || diff < 0)
            diff = 0;
        double weight = exp(-diff * M_LN2 / half_life);
        *avg *= weight;
        /* For a tiny interval, (1 - weight) / diff tends to ln2 / half_life:
         * use the limit rather than divide two roundings. */
        if (1.0 - weight > 1e-6)
            *avg += (1.0 - weight) * work / (diff / day);
        else
            *avg += M_LN2 * work * day / half_life;
    } else if (work > 0) {
        double dd = (now - work_start_time) / day;
        /* BOINC-COMPAT: the first credit is averaged over the time since
         * the job was sent; a job sent "now" counts as one day. */
        *avg = dd > 0 && isfinite(dd) ? work / dd : work;
    }
    *avg_time = now;
}

void vs_credit_stat_add(struct vs_credit_stat *st, double sample, int window)
{
    if (!usable(sample))
        return;
    if (!isfinite(st->n) || st->n < 0 || !isfinite(st->avg)) {
        st->n = 0;
        st->avg = 0;
    }
    double w = window > 0 ? window : 1;
    st->n += 1;
    if (st->n <= w)
        st->avg += (sample - st->avg) / st->n;
    else
        st->avg += (sample - st->avg) / w;
}

bool vs_credit_benchmark_failed(double p_fpops)
{
    /* BOINC-COMPAT: the client's default when its benchmark did not run. */
    return !isfinite(p_fpops) || p_fpops <= 1e6 || p_fpops == 1e9;
}

double vs_credit_app_ref(const struct vs_credit_stat *avs, size_t n)
{
    double ref = 0;
    for (size_t i = 0; i < n; i++)
        if (avs[i].n >= VS_CREDIT_MIN_AV_SAMPLES && usable(avs[i].avg) &&
            (ref == 0 || avs[i].avg < ref))
            ref = avs[i].avg;
    return ref;
}

static bool far_from(double x, double avg, double factor)
{
    return x > avg * factor || x < avg / factor;
}

/* The CPUs a job is paid for: the version's count, at most the host's, and
 * at most what its CPU time shows it used (but one at least: a job that
 * waits on I/O still holds its CPU). */
static double cpus_used(const struct vs_credit_job *j)
{
    double n = usable(j->av_avg_ncpus) ? j->av_avg_ncpus : 1;
    if (j->host_p_ncpus > 0 && n > j->host_p_ncpus)
        n = j->host_p_ncpus;
    if (usable(j->cpu_time) && usable(j->elapsed_time)) {
        double used = j->cpu_time / j->elapsed_time;
        if (used < 1)
            used = 1;
        if (used < n)
            n = used;
    }
    return n < 1 ? 1 : n;
}

static void adaptive(const struct vs_credit_job *j, double est, struct vs_credit_claim *out)
{
    double ref = usable(j->app_ref) ? j->app_ref : 1;
    double average = est * ref;
    bool bench_ok = !vs_credit_benchmark_failed(j->host_p_fpops);
    /* A failed benchmark still gives a host a consistent (if wrong) speed:
     * its own average absorbs the error, as it absorbs any other bias. */
    double peak = (bench_ok ? j->host_p_fpops : 1e9) * cpus_used(j);
    double sample = usable(j->elapsed_time) ? j->elapsed_time * peak / est : 0;
    bool host_settled = j->hav.n >= VS_CREDIT_MIN_HOST_SAMPLES && usable(j->hav.avg);
    bool av_settled = j->av.n >= VS_CREDIT_MIN_AV_SAMPLES && usable(j->av.avg);
    bool bad = !usable(sample);
    bool outlier = bad;
    if (!bad && host_settled)
        outlier = far_from(sample, j->hav.avg, VS_CREDIT_OUTLIER_FACTOR);
    else if (!bad && bench_ok && av_settled)
        outlier = far_from(sample, j->av.avg, VS_CREDIT_OUTLIER_FACTOR);
    out->sample = bad ? 0 : sample;
    out->outlier = outlier;
    out->update_hav = !outlier;
    out->update_av =
        !outlier && bench_ok && (!av_settled || !far_from(sample, j->av.avg, VS_CREDIT_AV_BAND));
    out->credit = !outlier && host_settled ? average * (sample / j->hav.avg) : average;
}

void vs_credit_claim(int method, const struct vs_credit_job *j, struct vs_credit_claim *out)
{
    memset(out, 0, sizeof(*out));
    double est = usable(j->rsc_fpops_est) ? j->rsc_fpops_est : 0;
    double flops = 0;
    switch (method) {
    case VS_CREDIT_FIXED:
        out->credit = usable(j->fixed_credit) ? j->fixed_credit : 0;
        return; /* the project's own number: not capped */
    case VS_CREDIT_FLOPS:
        flops = est;
        break;
    default:
        if (est > 0) {
            adaptive(j, est, out);
            flops = out->credit;
        }
        break;
    }
    if (usable(j->rsc_fpops_bound) && flops > j->rsc_fpops_bound)
        flops = j->rsc_fpops_bound;
    out->credit = usable(flops) ? flops * VS_COBBLESTONE_SCALE : 0;
}

double vs_credit_quorum(const double *claims, size_t n)
{
    if (n == 0)
        return 0;
    double lo = INFINITY, hi = 0, sum = 0;
    for (size_t i = 0; i < n; i++) {
        double c = usable(claims[i]) ? claims[i] : 0;
        sum += c;
        lo = c < lo ? c : lo;
        hi = c > hi ? c : hi;
    }
    if (n <= 2)
        return lo;
    return (sum - hi) / (double)(n - 1);
}
