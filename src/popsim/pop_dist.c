/*
 * Drawing host attributes from the scenario's distributions, with the
 * simulator's own deterministic generator (volsched/rng.h): normal by
 * Box-Muller, gamma by Marsaglia and Tsang's method, beta from two gammas.
 */
#include <math.h>

#include "popsim/pop_int.h"

static double normal(struct vs_rng *r)
{
    double u = vs_rng_double(r), v = vs_rng_double(r);
    if (u < 1e-300)
        u = 1e-300;
    return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

/* Gamma(shape k, scale 1), k > 0. The loop accepts with probability > 0.95,
 * so the bound is never reached in practice; it keeps the loop finite. */
static double gamma_draw(struct vs_rng *r, double k)
{
    if (k < 1) {
        double u = vs_rng_double(r);
        return gamma_draw(r, k + 1) * pow(u > 0 ? u : 1e-300, 1.0 / k);
    }
    double d = k - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (int i = 0; i < 1000; i++) {
        double x = normal(r), v = 1 + c * x;
        if (v <= 0)
            continue;
        v = v * v * v;
        double u = vs_rng_double(r);
        if (u < 1 - 0.0331 * x * x * x * x || log(u) < 0.5 * x * x + d * (1 - v + log(v)))
            return d * v;
    }
    return d;
}

double vs_pop__draw(const struct vs_pop_dist *d, struct vs_rng *r)
{
    switch (d->kind) {
    case VS_PD_UNIFORM:
        return d->a + (d->b - d->a) * vs_rng_double(r);
    case VS_PD_LOGNORMAL:
        return d->a * exp(d->b * normal(r));
    case VS_PD_BETA: {
        double x = gamma_draw(r, d->a), y = gamma_draw(r, d->b);
        return x + y > 0 ? x / (x + y) : 0.5;
    }
    case VS_PD_EXP:
        return vs_rng_exp(r, d->a);
    case VS_PD_CHOICE: {
        double total = 0;
        for (int i = 0; i < d->n; i++)
            total += d->w[i];
        double u = vs_rng_double(r) * total;
        for (int i = 0; i < d->n; i++) {
            if (u < d->w[i])
                return d->v[i];
            u -= d->w[i];
        }
        return d->v[d->n - 1];
    }
    default:
        return d->a;
    }
}

/* Bin k holds [POP_HIST_MIN x 1.01^k, POP_HIST_MIN x 1.01^(k+1)); bin 0 also
 * everything shorter. */
void vs_pop__hist_add(struct pop_hist *h, double secs)
{
    int k = secs > POP_HIST_MIN ? (int)(log(secs / POP_HIST_MIN) / log(1.01)) : 0;
    if (k >= POP_HIST_BINS)
        k = POP_HIST_BINS - 1;
    h->bins[k]++;
    h->n++;
}

/* The q-quantile, as the geometric middle of its bin. */
double vs_pop__hist_pct(const struct pop_hist *h, double q)
{
    if (h->n == 0)
        return 0;
    uint64_t want = (uint64_t)ceil(q * (double)h->n), seen = 0;
    if (want == 0)
        want = 1;
    for (int k = 0; k < POP_HIST_BINS; k++) {
        seen += h->bins[k];
        if (seen >= want)
            return POP_HIST_MIN * pow(1.01, k + 0.5);
    }
    return POP_HIST_MIN * pow(1.01, POP_HIST_BINS);
}
