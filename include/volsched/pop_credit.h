/*
 * popsim's credit study (issue 39; docs/credit.md): is the credit the
 * validator grants fair and stable? A population of hosts 1000x apart in
 * speed runs three apps (short, long, multi-threaded) whose estimates are
 * off by different factors; 5% of the hosts report a failed benchmark
 * (exactly 1e9 FLOPS), 1% report ten times their runtimes. Every result is
 * granted by the credit policy of volsched/credit.h, the code the
 * validator runs, under each scheme (fixed, FLOP estimate, adaptive); half
 * way a new, twice as efficient version of the short app appears.
 *
 * src/popsim/pop_credit.c; `volsched popsim --credit`.
 */
#ifndef VOLSCHED_POP_CREDIT_H
#define VOLSCHED_POP_CREDIT_H

#include <stdint.h>

struct vs_pop_credit_options {
    uint64_t seed;
    int nhosts;   /* <= 0: 2000 */
    int nresults; /* results per scheme; <= 0: 200000 */
};

/* The figures of one scheme (enum vs_credit_method order). */
struct vs_pop_credit_scheme {
    /* Credit per CPU-hour, per unit of true host speed (a fair scheme pays
     * every honest host the same for the same computing): its coefficient
     * of variation over honest (host, app) pairs, and over the three apps'
     * means. */
    double cv_hosts, cv_apps;
    double cheat_gain;      /* cheaters' credit per true CPU-hour / honest hosts' */
    double failed_gain;     /* failed-benchmark hosts' likewise */
    double settle_results;  /* results of the new version before its credit per job stays
                               within 10% of its final level; -1: never */
    double credit_per_hour; /* honest hosts' mean credit per CPU-hour at 1 GFLOPS */
};

struct vs_pop_credit_result {
    struct vs_pop_credit_scheme scheme[3];
    int nhosts, nresults;
};

/* Runs the study. Returns 0 (it cannot fail but for memory). */
int vs_pop_credit_run(const struct vs_pop_credit_options *o, struct vs_pop_credit_result *out);

#endif
