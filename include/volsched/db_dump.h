/*
 * BOINC's statistics exports (sched/db_dump.cpp and its default
 * db_dump_spec.xml), written by `volsched db_dump` and daily by `volsched
 * serve`: DIR/stats/tables.xml (counts, total credit, apps) and the gzipped
 * user.gz, team.gz and host.gz, each the users, teams and hosts with credit
 * in id order, in BOINC's element names and number formats, which the
 * statistics sites (BOINCstats, Free-DC, Gridcoin's scrapers) read.
 * `serve` answers them under the master URL at stats/.
 *
 * GDPR-minimal by default (docs/credit.md): no e-mail address, IP address,
 * domain name or country; a user's name only with names (an operator's
 * choice until accounts carry the volunteer's consent); hosts without
 * their owner (BOINC's export without <detail/>). Each user carries its
 * CPID, md5(cross_project_id + email_addr) as BOINC computes it, so that
 * the sites add a volunteer's credit here to their other projects'.
 *
 * Atomic per file: each is written beside its final name, flushed to disk
 * and renamed over it; tables.xml goes last, so a reader that sees a new
 * tables.xml sees the files it describes. Streamed from the store in pages
 * (vs_store_stats_each): memory stays bounded whatever the project's size.
 */
#ifndef VOLSCHED_SERVER_DB_DUMP_H
#define VOLSCHED_SERVER_DB_DUMP_H

#include <stdbool.h>
#include <stdint.h>

#include "volsched/config.h"
#include "volsched/error.h"
#include "volsched/store.h"

struct vs_log;

struct vs_db_dump_options {
    bool names;          /* export users' names (default: empty <name/>) */
    const char *out_dir; /* NULL: cfg->dir/stats */
};

struct vs_db_dump_stats {
    int64_t nusers, nteams, nhosts; /* rows written */
    double total_credit;            /* the users' sum */
    char out_dir[VS_PATH_MAX + 16];
};

/* Writes the exports at time now. Returns 0, a store error, or -errno
 * (the previous files stay as they were). stats may be NULL. */
VS_MUST_CHECK int vs_db_dump(struct vs_store *s, const struct vs_project_config *cfg, int64_t now,
                             const struct vs_db_dump_options *opt, struct vs_log *log,
                             struct vs_db_dump_stats *stats);

/* Whether `serve` should write the exports at now: interval_hours > 0 and
 * DIR/stats/tables.xml missing or older than that (its mtime is the last
 * export's time, so a restarted server does not export again at once). */
bool vs_db_dump_due(const struct vs_project_config *cfg, int64_t now);

/* BOINC's CPID of a user: md5 hex of cross_project_id followed by the
 * e-mail address (out: 33 bytes). */
VS_MUST_CHECK int vs_db_dump_cpid(const char *cross_project_id, const char *email, char out[33]);

/* What vs_update_stats decayed. */
struct vs_update_stats_result {
    int64_t users, hosts, teams;
};

/*
 * BOINC's update_stats: decays the recent average (expavg_credit) of
 * every host, user and team that has one to now, by BOINC's update_average
 * with no new credit (vs_credit_update_average, one-week half-life), so a
 * row idle for a week shows half its average. Pages of 2,000 rows, each in
 * its own write transaction; exact whenever it runs (decaying twice to the
 * same instant is decaying once). Logs one line; *out (may be NULL) gets
 * the counts. `serve` runs it daily (config.xml
 * <update_stats_interval_hours>) and before each db_dump; `volsched
 * update_stats` by hand.
 */
VS_MUST_CHECK int vs_update_stats(struct vs_store *s, int64_t now, struct vs_log *log,
                                  struct vs_update_stats_result *out);

#endif
