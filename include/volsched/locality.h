/*
 * Locality scheduling (seed 001), the pure decisions. The server
 * (src/server/h_locality.c) does the store queries, the trigger files and
 * the sends; everything it decides goes through these functions, which take
 * plain values and return a decision: no I/O, no clock, no globals, no
 * allocation (randomness comes in as a number).
 *
 * The naming rule everything rests on: a locality workunit is named
 * FILENAME__SUFFIX, FILENAME is the name of its big (sticky) input file and
 * contains no "__". Ordering workunits by name therefore groups them by
 * file: the workunits of FILENAME are exactly the names in
 * ["FILENAME__", "FILENAME_`") ('`' follows '_' in ASCII).
 *
 * Naming: vs_loc_. Strings are borrowed.
 */
#ifndef VOLSCHED_LOCALITY_H
#define VOLSCHED_LOCALITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* BOINC-COMPAT: app.locality_scheduling 1 is BOINC's LOCALITY_SCHED_LITE.
 * 2 is volsched's: the app's jobs are sent by full locality scheduling. */
enum vs_loc_app_mode { VS_LOC_APP_NONE = 0, VS_LOC_APP_LITE = 1, VS_LOC_APP_FULL = 2 };

/* Bounds on what one request may make the server do. */
#define VS_LOC_NAME_MAX       200 /* a locality file name, bytes */
#define VS_LOC_MAX_HOST_FILES 64  /* host files one request searches */
#define VS_LOC_MAX_PER_FILE   100 /* results tried for one file (BOINC's figure) */
#define VS_LOC_WS_TRIES       5   /* working-set picks before the deterministic scan */
#define VS_LOC_SCAN_FILES     32  /* files the deterministic scan visits */

/*
 * True when name (len bytes, no NUL needed) may be a locality file name: 1
 * to VS_LOC_NAME_MAX - 1 bytes, no '/', no "..", no "__", no blank or
 * control character, none of % < > &, and no leading '-'. Such a name is
 * safe to join to a trigger directory, to echo in a reply, and to pass to
 * the on-demand generator's command (a leading '-' would be an option).
 */
bool vs_loc_file_name_ok(const char *name, size_t len);

/*
 * The file of locality workunit wu_name: the text before the first "__",
 * into out (size bytes). Returns 0, or VS_EINVAL when the name has no "__",
 * nothing before it, or the file part is not a valid file name (see
 * vs_loc_file_name_ok), VS_ELIMIT when out is too small.
 */
int vs_loc_file_of_wu(const char *wu_name, char *out, size_t size);

/*
 * The workunit-name range of file: *lo = "FILE__", *hi = "FILE_`" (every
 * name that starts with "FILE__" sorts in [lo, hi)). Both buffers have size
 * bytes. VS_EINVAL for an invalid file name, VS_ELIMIT when too small.
 */
int vs_loc_wu_range(const char *file, char *lo, char *hi, size_t size);

/*
 * The host's files in the order the request searches them. names[0..n) are
 * the names the client reported (untrusted: any text, duplicates, any
 * count); out has room for n pointers. Invalid names are dropped (counted
 * in *out_bad, may be NULL), duplicates are kept once, the rest sorted by
 * name; unless sorted, the list is then rotated to start at index
 * rnd % count (BOINC's random start). At most max are returned. O(n log n).
 */
size_t vs_loc_order_files(const char *const *names, size_t n, bool sorted, uint64_t rnd,
                          const char **out, size_t max, size_t *out_bad);

/* True when name is in sorted[0..n) (ascending strcmp order). */
bool vs_loc_sorted_has(const char *const *sorted, size_t n, const char *name);

/*
 * What the server found out about one file the host holds, after searching
 * it once (vs_loc_after_search) or twice (after the wait).
 */
struct vs_loc_file_facts {
    size_t sent;            /* results of the file sent to this host in this request */
    bool stopped;           /* the search stopped at a job the host cannot take now */
    bool work_needed;       /* the host still wants work */
    bool known;             /* some workunit was ever named FILE__* */
    bool any_unsent;        /* the file has unsent results (for any user) */
    bool no_work_available; /* locality_scheduling/no_work_available/FILE exists */
    bool on_demand;         /* <locality_scheduling_wait_period> > 0: a generator may make work */
    bool waited;            /* this request already waited once */
};

/* What the server should do about that file. */
struct vs_loc_file_action {
    bool need_work;     /* touch need_work/FILE: ask the generator for work */
    bool wait;          /* then wait (up to the wait period) and search again */
    bool files_no_work; /* touch files_no_work/FILE: the working-set manager drops it */
    bool delete_file;   /* <delete_file_info>FILE: no more work for it, for this host */
};

/*
 * Seed 001's rules for a file the host has and that gave it nothing:
 * unknown files (no workunit was ever named after them) are left alone;
 * otherwise, unless the host stopped wanting work or could not take the
 * next job now (the ID-order invariant: skipping would jump past it), ask
 * an on-demand generator for work (unless no_work_available says it has
 * none) and wait once; report a file without unsent results to the
 * working-set manager; tell the host to delete the file when no more work
 * will come for it (no generator, or the generator said so).
 */
void vs_loc_after_search(const struct vs_loc_file_facts *f, struct vs_loc_file_action *out);

/*
 * Seed 001's working-set size: about N/M files for n_active hosts and
 * target_nresults M (each file goes to about M hosts), at least 1.
 */
size_t vs_loc_working_set_target(int64_t n_active, int target_nresults);

/*
 * Which of the n (> 0) working-set files a host without files gets:
 * uniformly at random (rnd % n), or, with sorted order, in turn (the
 * caller passes a counter as rnd and the list sorted). Returns an index.
 */
size_t vs_loc_pick_working(size_t n, uint64_t rnd);

/*
 * Disk accounting: the part of a job's disk bound that is already on the
 * host. For each of the job's inputs (names[i], sizes[i]) that is in
 * held[0..nheld) (sorted), its size counts; the sum is capped at
 * disk_bound. The job is then charged disk_bound minus this.
 */
double vs_loc_disk_credit(const char *const *names, const double *sizes, size_t n,
                          const char *const *held, size_t nheld, double disk_bound);

#endif
