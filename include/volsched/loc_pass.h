/*
 * Locality scheduling (seed 001): one scheduler request's pass, and the
 * working-set manager's pass, as policy code over a source. The server
 * (src/server/h_locality.c, locality_daemons.c) gives them its store, its
 * trigger directories and its work-send rules; the population simulator
 * (src/popsim) gives them its in-memory project. Both therefore run the
 * same algorithm: which files are searched in which order, where a file's
 * search starts and stops, when a file is reported, waited for or deleted,
 * when a host gets a working-set file. The pass itself does no I/O and
 * keeps no clock: everything it learns comes through the source's
 * callbacks, and its scratch memory from the caller's arena.
 *
 * Naming: vs_loc_. Strings are borrowed unless said otherwise.
 */
#ifndef VOLSCHED_LOC_PASS_H
#define VOLSCHED_LOC_PASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "volsched/alloc.h"

/* A sorted set of file names with sizes (the host's files, or the files a
 * pass searched). Names are borrowed; the arrays come from an arena. */
struct vs_loc_held {
    const char **names;
    double *sizes;
    size_t n, cap;
};

/* Inserts name in sorted order (growing the arrays from a); false when it
 * was there already. */
bool vs_loc_held_insert(struct vs_loc_held *h, struct vs_arena *a, const char *name, double size);

/* The trigger directories under locality_scheduling/ (seed 001's names;
 * volsched/loc_dirs.h keeps them on disk). */
enum vs_loc_dir {
    VS_LOC_NEED_WORK = 0,
    VS_LOC_NO_WORK_AVAILABLE,
    VS_LOC_WORKING_SET,
    VS_LOC_FILES_NO_WORK,
    VS_LOC__NDIRS
};

/* What became of one offered row. */
enum vs_loc_offer {
    VS_LOC_TAKEN, /* sent to the host */
    VS_LOC_PASS,  /* never for this host or user, or not a locality job: go on */
    VS_LOC_SKIP,  /* not now (disk, memory, deadline, limits): stop this file */
    VS_LOC_STOP   /* the request wants nothing more */
};

/* One query's answer: rows kept (offered in order by index), rows the
 * query passed (kept or not), and the last passed row's result id. */
struct vs_loc_rows {
    size_t n, rows;
    int64_t last_id;
};

struct vs_loc_pass;

/*
 * What the pass asks of its world. Every callback gets ctx. Return codes
 * are 0 or a VS_E* code; a failed query is treated as "nothing learnt"
 * (nothing is reported or deleted on it).
 */
struct vs_loc_source {
    void *ctx;
    /* The largest result id of file f this user was ever sent (0: none). */
    int (*max_sent)(void *ctx, const char *f, int64_t *after);
    /* Reads, in increasing result id, up to lim unsent results of f with
     * id > after, leaving out workunits of which user excl_user or host
     * excl_host (when nonzero) hold a result; rows of a workunit for which
     * vs_loc_pass_wu_taken(pass, wu) is true may be passed without being
     * kept. The kept rows stay the source's until rows_done. */
    int (*unsent)(void *ctx, const struct vs_loc_pass *pass, const char *f, int64_t after,
                  int64_t excl_user, int64_t excl_host, size_t lim, struct vs_loc_rows *out);
    /* Offers kept row i of the last query; its workunit id in *wu. */
    enum vs_loc_offer (*offer)(void *ctx, size_t i, int64_t *wu);
    /* The rows of the last query that were not taken may be freed. */
    void (*rows_done)(void *ctx);
    /* The work-send rules still want jobs; room: jobs the reply has room for. */
    bool (*wants)(void *ctx);
    size_t (*room)(void *ctx);
    /* Some workunit was ever named after f. */
    int (*file_known)(void *ctx, const char *f, bool *known);
    /* The trigger file d/f exists; make it. */
    bool (*exists)(void *ctx, enum vs_loc_dir d, const char *f);
    void (*touch)(void *ctx, enum vs_loc_dir d, const char *f);
    /* Tell the host to delete f (<delete_file_info>). */
    void (*delete_file)(void *ctx, const char *f);
    /* The on-demand wait: first is true on the first call of a wait.
     * Sleeps a step; false when the wait period is over. NULL: no waits. */
    bool (*wait_step)(void *ctx, bool first);
    /* A working-set file (uniform or in turn), or NULL when the set is
     * empty; the name stays valid for the request. */
    const char *(*ws_pick)(void *ctx);
    /* Files with unsent results in name order from start, wrapping, at
     * most max, into names (valid for the request). */
    size_t (*scan)(void *ctx, const char *start, const char **names, size_t max);
    /* The scan's listing should forget f (no unsent results left). */
    void (*drop_work)(void *ctx, const char *f);
};

/* One request's settings. */
struct vs_loc_request {
    int64_t hostid, userid;
    bool one_result_per_user_per_wu; /* the project's rule (excludes the user's workunits) */
    bool on_demand;                  /* <locality_scheduling_wait_period> > 0 */
    bool sorted;                     /* <locality_scheduling_sorted_order/> */
    uint64_t rnd;                    /* where the random order of the host's files starts */
    const char *const *files;        /* the host's files as the client listed them (untrusted) */
    size_t nfiles;
};

/* What one pass did (the server adds these to its counters). */
struct vs_loc_pass_stats {
    uint64_t sent, deletes, need_work, waits, files_no_work, bad_names, searched;
};

/*
 * Seed 001's pass for one request (see h_locality.c's header for the
 * rules): the host's files in order, then, if the host got nothing for
 * them and still wants work, working-set files and the deterministic scan.
 */
void vs_loc_pass_run(const struct vs_loc_source *src, const struct vs_loc_request *rq,
                     struct vs_arena *a, struct vs_loc_pass_stats *out);

/* True when the pass already sent a result of workunit wu. */
bool vs_loc_pass_wu_taken(const struct vs_loc_pass *p, int64_t wu);

/*
 * The working-set manager's source: list a trigger directory (each name to
 * fn), remove a trigger file, make one, and the files with unsent results
 * in name order from the first (each to fn, at most lim).
 */
struct vs_loc_ws_source {
    void *ctx;
    int (*list)(void *ctx, enum vs_loc_dir d, int (*fn)(void *, const char *), void *fctx);
    int (*remove)(void *ctx, enum vs_loc_dir d, const char *f);
    int (*touch)(void *ctx, enum vs_loc_dir d, const char *f);
    bool (*exists)(void *ctx, enum vs_loc_dir d, const char *f);
    int (*files_with_work)(void *ctx, size_t lim, int (*fn)(void *, const char *), void *fctx);
    /* Told of each change (may be NULL). */
    void (*changed)(void *ctx, const char *f, bool joined);
};

struct vs_loc_ws_stats {
    size_t removed, added, size;
};

/*
 * Seed 001's working-set manager, one pass: files the scheduler reported
 * without work (files_no_work/) leave the set, then files with work join
 * it in name order until it holds target. Returns 0 or the first error.
 */
int vs_loc_ws_run(const struct vs_loc_ws_source *src, size_t target, struct vs_loc_ws_stats *out);

#endif
