/*
 * Set-up shared by the benchmark programs. Header only, with static
 * functions: every bench/bench_*.c is a program of its own (CMakeLists.txt
 * builds each alone), so there is no shared object to link, and this file is
 * not named bench_*.c so it does not become a program. Define BENCH_NAME
 * (the program's name, for error messages) before including it.
 */
#ifndef VOLSCHED_BENCH_UTIL_H
#define VOLSCHED_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "volsched/config.h"
#include "volsched/store.h"
#include "volsched/str.h"

#ifndef BENCH_NAME
#error "define BENCH_NAME before including bench_util.h"
#endif

/* Monotonic seconds, for timing. */
static inline double bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Exits 1 with "BENCH_NAME: what: <error>" when rc is a volsched error
 * (negative); a count (>= 0) passes. */
static inline void bench_check(int rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, BENCH_NAME ": %s: %s\n", what, vs_strerror(rc));
        exit(1);
    }
}

/*
 * Makes a fresh directory BASE/STEM_XXXXXX (name in dir, size n) and fills
 * cfg with a project's defaults there (name "bench", an unreachable URL).
 * Exits 1 when either fails.
 */
static inline void bench_project(const char *base, const char *stem, char *dir, size_t n,
                                 struct vs_project_config *cfg)
{
    snprintf(dir, n, "%s/%s_XXXXXX", base, stem);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        exit(1);
    }
    bench_check(vs_project_config_defaults(cfg, dir, "bench", "http://127.0.0.1:1/b/"), "config");
}

/*
 * Adds an app named app_name (into *app, zeroed first), a user "u" (*u,
 * zeroed first) and the host *h as the caller filled it, owned by that user.
 * Exits on error.
 */
static inline void bench_add_app_user_host(struct vs_store *s, const char *app_name,
                                           struct vs_app *app, struct vs_user *u,
                                           struct vs_host *h)
{
    memset(app, 0, sizeof(*app));
    bench_check(vs_strlcpy(app->name, app_name, sizeof(app->name)), "name");
    bench_check(vs_store_app_add(s, app), "app");
    memset(u, 0, sizeof(*u));
    bench_check(vs_strlcpy(u->name, "u", sizeof(u->name)), "name");
    bench_check(vs_store_user_add(s, u), "user");
    h->userid = u->id;
    bench_check(vs_store_host_add(s, h), "host");
}

#endif
