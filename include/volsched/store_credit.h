/*
 * Credit in the store (issue 39; docs/credit.md): the totals and recent
 * averages of hosts, users and teams, the adaptive scheme's running
 * averages (table credit_pfc), and the streams `volsched db_dump` exports.
 * Same rules as store.h: 0 or a negative VS_E* code, one thread per
 * handle; the writes join the caller's transaction.
 *
 * The totals are read and written inside the validator's transaction,
 * which on PostgreSQL holds the store's exclusive transaction lock and on
 * SQLite is BEGIN IMMEDIATE: no two grants interleave, so a read, the
 * policy's update and the write are exact. The scheduler's host row
 * update leaves these columns alone (store_sql.c).
 */
#ifndef VOLSCHED_STORE_CREDIT_H
#define VOLSCHED_STORE_CREDIT_H

#include <stdbool.h>
#include <stdint.h>

#include "volsched/store.h"

enum vs_credit_owner { VS_CREDIT_HOST, VS_CREDIT_USER, VS_CREDIT_TEAM };

/* BOINC-COMPAT: the columns total_credit, expavg_credit, expavg_time. */
struct vs_credit_totals {
    double total;
    double expavg;
    double expavg_time;
};

/* One row's totals with its id (vs_store_credit_decay_page). */
struct vs_credit_row {
    int64_t id;
    struct vs_credit_totals t;
};

/*
 * BOINC's update_stats: up to n hosts, users or teams with a recent
 * average (expavg_credit > 0) last updated before before, with id > after,
 * in id order, into rows; *out_n how many. Read inside the caller's write
 * transaction, so the decay written back with vs_store_credit_totals_set
 * cannot undo a grant made meanwhile.
 */
VS_MUST_CHECK int vs_store_credit_decay_page(struct vs_store *s, enum vs_credit_owner owner,
                                             int64_t after, double before,
                                             struct vs_credit_row *rows, int n, int *out_n);

/* The totals of host, user or team id; VS_ENOTFOUND if there is no row. */
VS_MUST_CHECK int vs_store_credit_totals_get(struct vs_store *s, enum vs_credit_owner owner,
                                             int64_t id, struct vs_credit_totals *out);
VS_MUST_CHECK int vs_store_credit_totals_set(struct vs_store *s, enum vs_credit_owner owner,
                                             int64_t id, const struct vs_credit_totals *t);

/* A running average of credit_pfc (hostid 0: the app version's own);
 * *out_n and *out_avg are 0 when there is no row yet. */
VS_MUST_CHECK int vs_store_credit_pfc_get(struct vs_store *s, int64_t app_version_id,
                                          int64_t hostid, double *out_n, double *out_avg);
VS_MUST_CHECK int vs_store_credit_pfc_put(struct vs_store *s, int64_t appid, int64_t app_version_id,
                                          int64_t hostid, double n, double avg);
/* The lowest average of app's versions with at least min_n samples, 0 if
 * none has. */
VS_MUST_CHECK int vs_store_credit_app_ref(struct vs_store *s, int64_t appid, double min_n,
                                          double *out_ref);

/* The CPUs app version id uses (app_version.avg_ncpus); 1 if there is no
 * such version. */
VS_MUST_CHECK int vs_store_credit_av_ncpus(struct vs_store *s, int64_t app_version_id, double *out);

/* Sums over the store, for tests and `volsched status`: the granted credit
 * of valid results, and the total_credit of hosts, users and teams. */
struct vs_credit_sums {
    double granted;
    double hosts, users, teams;
};
VS_MUST_CHECK int vs_store_credit_sums(struct vs_store *s, struct vs_credit_sums *out);

/* One row of a statistics export (BOINC's db_dump): a user, team or host
 * with credit. Strings are borrowed for the callback; those an owner does
 * not have are "". */
struct vs_stats_row {
    int64_t id;
    int64_t create_time;
    double total, expavg, expavg_time;
    int64_t ref;          /* user: team id; team: founder user id; host: user id */
    const char *name;     /* user, team */
    const char *email;    /* user */
    const char *cpid;     /* user: cross_project_id */
    const char *country;  /* user */
    const char *p_vendor; /* host, and the three below */
    const char *p_model;
    const char *os_name;
    const char *os_version;
};
typedef int (*vs_store_stats_fn)(void *ctx, const struct vs_stats_row *r);

/*
 * Calls fn, in id order, for every user, team or host with credit
 * (total_credit > 0; hosts of user 0 left out, as BOINC's db_dump does).
 * Reads in pages of page rows (<= 0: 2000), each its own short read, so
 * that memory stays bounded and the store's writers never wait long for
 * an export of millions of rows. A non-zero return of fn stops the walk
 * and is returned.
 */
VS_MUST_CHECK int vs_store_stats_each(struct vs_store *s, enum vs_credit_owner owner, int page,
                                      vs_store_stats_fn fn, void *ctx);

/*
 * A leaderboard's page: fn for the users, teams or hosts with credit
 * (as vs_store_stats_each has them), highest first by total_credit or, by
 * recent, by expavg_credit as stored (decayed to the last grant or the
 * last update_stats run, daily: as BOINC's lists), ties by id; rows offset to
 * offset + limit. A non-zero return of fn stops and is returned.
 */
VS_MUST_CHECK int vs_store_stats_top(struct vs_store *s, enum vs_credit_owner owner, bool by_recent,
                                     int64_t offset, int limit, vs_store_stats_fn fn, void *ctx);

/* BOINC-COMPAT: the counts of server_status.php's users and computers. */
struct vs_credit_counts {
    int64_t users_recent, users_credit, users_24h; /* recent: expavg_credit > 1 */
    int64_t hosts_recent, hosts_credit, hosts_24h;
    int64_t teams_credit;
    double gflops; /* the users' recent averages / 200 */
};
VS_MUST_CHECK int vs_store_credit_counts(struct vs_store *s, int64_t now,
                                         struct vs_credit_counts *out);

#endif
