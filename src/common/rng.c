#include "volsched/rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void vs_rng_seed(struct vs_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t vs_rng_u64(struct vs_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double vs_rng_double(struct vs_rng *r)
{
    return (double)(vs_rng_u64(r) >> 11) * 0x1.0p-53;
}

uint64_t vs_rng_below(struct vs_rng *r, uint64_t n)
{
    /* Rejection sampling removes the modulo bias. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do {
        x = vs_rng_u64(r);
    } while (x >= limit);
    return x % n;
}

double vs_rng_exp(struct vs_rng *r, double mean)
{
    return -mean * log1p(-vs_rng_double(r));
}
