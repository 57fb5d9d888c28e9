/*
 * A small deterministic PRNG (xoshiro256**, seeded through splitmix64).
 * The same seed gives the same sequence on every platform, which is what
 * makes simulator runs reproducible byte for byte. The state is a plain
 * struct owned by the caller: no global generator.
 */
#ifndef VOLSCHED_RNG_H
#define VOLSCHED_RNG_H

#include <stdint.h>

struct vs_rng {
    uint64_t s[4];
};

void vs_rng_seed(struct vs_rng *r, uint64_t seed);
uint64_t vs_rng_u64(struct vs_rng *r);
/* Uniform in [0, 1). */
double vs_rng_double(struct vs_rng *r);
/* Uniform in [0, n); n must be > 0. */
uint64_t vs_rng_below(struct vs_rng *r, uint64_t n);
/* Exponentially distributed with the given mean (> 0). */
double vs_rng_exp(struct vs_rng *r, double mean);

#endif
