/*
 * Internals shared by the scheduler's files: h_sched.c (the request, the
 * catalog, the caches, life cycle) and h_send.c (job selection through the
 * work-send policy, and the jobs' part of the reply). Not an interface.
 */
#ifndef VOLSCHED_SERVER_SCHED_INT_H
#define VOLSCHED_SERVER_SCHED_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "server/cache.h"
#include "server/commit.h"
#include "volsched/alloc.h"
#include "volsched/loc_pass.h"
#include "volsched/md5.h"
#include "volsched/proto.h"
#include "volsched/sched.h"
#include "volsched/server_policy.h"

struct ucache_ent {
    int64_t expires; /* 0: empty */
    char authenticator[VS_AUTH_MAX];
    int64_t id, teamid, create_time;
    double total_credit, expavg_credit;
    char name[VS_NAME_MAX];
    double prefs_mod_time;               /* <mod_time> of the account's global prefs; 0: none */
    char email_hash[VS_MD5_HEX_LEN + 1]; /* md5 of the account's e-mail address */
    char cross_project_id[VS_AUTH_MAX];  /* BOINC's user.cross_project_id */
};

/* Daily-quota rows kept with a cached host (most hosts run one or two
 * versions; a host with more is read from the store each time). */
#define HCACHE_HAVS 4

/* The quota rows of one host as the scheduler last read or wrote them. */
struct host_havs {
    bool valid;
    int n;
    struct vs_sp_hav v[HCACHE_HAVS];
};

/* h_user.c: the <mod_time> of preferences text (0: none or unreadable). */
double vs_sched__prefs_mod_time(const char *prefs);
/* BOINC's email_hash of a user (md5 of its e-mail address) into out. */
void vs_sched__email_hash(const struct vs_user *u, char out[VS_MD5_HEX_LEN + 1]);
/* BOINC-COMPAT (handle_global_prefs): the client's master preferences are
 * stored as the account's when they are newer than the account's (db_mod)
 * and came from this account (the request's
 * global_prefs_source_email_hash is email_hash). Returns true when they
 * were stored (the caller forgets its cached copy of the user). */
bool vs_sched__prefs_store(struct vs_store *st, const struct vs_proto_request *q,
                           const struct vs_user *user, const char *email_hash, double db_mod,
                           int64_t now, struct vs_log *log, int64_t hostid);
/* BOINC-COMPAT (authenticate_user): the request's <cross_project_id> (the
 * oldest CPID of this volunteer among the client's projects with the same
 * e-mail hash) becomes the account's when it differs, is 32 hex digits and
 * the request used the account's own key (not a weak one). Updates
 * user->cross_project_id; returns true when it was stored (the caller
 * forgets its cached copy of the user). */
bool vs_sched__cpid_adopt(struct vs_store *st, const struct vs_proto_request *q,
                          struct vs_user *user, struct vs_log *log, int64_t hostid);
/* A weak account key "ID_md5(key + password)" (BOINC's): the user it
 * opens into *out (free with vs_user_cleanup), or VS_ENOTFOUND. */
int vs_sched__weak_auth(struct vs_store *st, const char *auth, struct vs_user *out);
/* BOINC-COMPAT (handle_global_prefs): the account's preferences go in the
 * reply when they are newer than both the client's (master and working);
 * db_mod_time is theirs, user->global_prefs their text when already read
 * (else read here). Returns true when they were put in r. */
bool vs_sched__prefs_reply(struct vs_store *st, const struct vs_proto_request *q,
                           const struct vs_user *user, double db_mod_time, int64_t now,
                           struct vs_arena *a, struct vs_proto_reply *r);

struct hcache_ent {
    int64_t expires; /* 0: empty */
    struct vs_host host;
    struct host_havs havs;
};

/* ---- the catalog: apps and app versions, prepared for replies ---- */

struct prep_av {
    const struct vs_app_version *av; /* in snap->cat */
    const struct vs_app *app;
    struct vs_proto_app papp;
    struct vs_proto_app_version pav;
    struct vs_proto_file_info *fis;
    size_t nfis;
};

struct catalog_snap {
    struct vs_catalog cat;
    struct vs_arena arena;
    struct prep_av *avs;
    size_t navs;
    /* The same apps and versions as the work-send policy sees them
     * (h_send.c): sp_avs grouped by app, sp_av_prep[i] is sp_avs[i]'s. */
    struct vs_sp_app *sp_apps;
    size_t n_sp_apps;
    struct vs_sp_app_version *sp_avs;
    const struct prep_av **sp_av_prep;
    size_t n_sp_avs;
    /* Apps by app.locality_scheduling (VS_LOC_APP_FULL, VS_LOC_APP_LITE). */
    size_t n_loc_full, n_loc_lite;
};

/* ---- a cached job, prepared for replies (the cache's prep) ---- */

struct prep_job {
    struct vs_arena arena;
    struct vs_proto_file_info *in_fis;
    size_t n_in;
    struct vs_proto_workunit wu;
    struct vs_proto_file_info *out_fis;
    size_t n_out;
    struct vs_proto_result res;
};

#define VS_SCHED_MAX_WRITERS 8
/* The user and host read-through caches (h_sched.c user_lookup): entries,
 * powers of two. */
#define VS_SCHED_UCACHE_SIZE 4096
#define VS_SCHED_HCACHE_SIZE 4096

struct vs_sched {
    struct vs_project_config cfg;
    struct vs_log *log;
    struct vs_sched_options opt;
    char *code_sign_key;  /* BOINC key text, NULL if the project has none */
    bool trickle_handler; /* config.xml has <trickle_handler>: replies carry trickle-downs */
    pthread_rwlock_t cat_lock;
    struct catalog_snap *cat;
    struct vs_cache *cache;
    pthread_mutex_t feed_mu;
    struct vs_store *feed_store;
    int64_t last_checkpoint; /* time of the last WAL checkpoint (feed_mu) */
    int64_t lease_owner;     /* this instance's job-cache lease id (random, never 0) */
    pthread_mutex_t pool_mu;
    struct vs_store **pool; /* idle read handles */
    size_t npool, cap_pool;
    /* The group commit: one committer per write handle, as many as the
     * store runs side by side (vs_store_sched_writers); a request takes
     * the next one round robin. */
    struct vs_committer *committers[VS_SCHED_MAX_WRITERS];
    size_t ncommitters;
    atomic_uint next_committer;
    struct vs_assign *assign;         /* NULL: no assigned work enabled */
    struct vs_auth_limit *auth_limit; /* failed account keys per address */
    struct vs_locality *loc;          /* <locality_scheduling/> on; else NULL */
    /* Read-through caches of the rows every RPC needs (see user_lookup). */
    pthread_mutex_t ucache_mu, hcache_mu;
    struct ucache_ent *ucache; /* UCACHE_SIZE entries */
    struct hcache_ent *hcache; /* HCACHE_SIZE entries */
    _Atomic uint64_t n_rpcs, n_bad, n_sent, n_nowork, n_reports, n_maint;
    _Atomic uint64_t n_claims_lost, n_rechosen; /* h_sched.c rechoose */
    _Atomic bool maintenance;                   /* stop_sched exists (vs_sched_set_maintenance) */
    struct vs_submit_tail *tail;                /* batch tail acceleration (borrowed); NULL: none */
};

/* ---- sched_gate.c: the operator's switches ---- */

/*
 * Before work is chosen: the operator's switches that hold work back from
 * this host (a banned host, config.xml's dont_send_jobs, ...). Adds the
 * reason to the reply as a message and sets its delays. Returns whether
 * work may be sent; wants is the request's own wish.
 */
bool vs_sched__gate(struct vs_sched *s, const struct vs_host *host, bool new_host,
                    double prev_rpc_time, int64_t now, bool wants, struct vs_arena *a,
                    struct vs_proto_reply *r);

/* report_max: cuts the request's reported results to the first report_max. */
void vs_sched__report_max(const struct vs_sched *s, struct vs_proto_request *q);

/* ---- h_send.c ---- */

/* How one taken job is sent (parallel to the taken jobs). */
struct send_job {
    const struct prep_av *av;                          /* NULL: anonymous platform */
    const struct vs_proto_client_app_version *anon_av; /* anonymous platform */
    double flops;
    int hr_class;    /* commit the workunit to this HR class (0: none) */
    int day_quota;   /* the host's daily limit of its app version (0: none) */
    bool from_store; /* read from the store (locality pass, assigned work), not the cache */
    bool assigned;   /* assigned work (h_assign.c): the reservation applied its own rules */
    /* The policy's view and verdict when it was chosen: what
     * vs_send_keep_claimed() commits again to the policy state. */
    struct vs_sp_job job;
    struct vs_sp_verdict v;
};

/* One request's job selection. */
struct vs_send {
    int64_t teamid; /* the user's team (0: none): set by the caller, for assigned work */
    struct vs_sp_config cfg;
    struct vs_sp_host host;
    struct vs_sp_request req;
    struct vs_sp_state st;
    bool have_state;
    bool client_refused;       /* rule 8: no work, message in the reply */
    struct vs_cache_job *jobs; /* owned (vs_free); taken jobs */
    struct send_job *sent;     /* in the request's arena */
    size_t njobs;
    size_t max_jobs; /* this reply's cap */
    bool havs_read;  /* the host's quota rows were read (st.havs is their state) */
    int host_cap;    /* the host's in-progress cap for the claim (0: none) */
    /* in, set by the caller before vs_send_choose: the host's IN_PROGRESS
     * results this request reports (they leave before the claim) */
    int n_reporting;
    /* The quota rows the state started from (request arena), to start
     * it again (vs_send_keep_claimed). */
    const struct vs_sp_hav *havs0;
    int n_havs0;
    /* Result ids chosen by earlier rounds, sorted (request arena): a
     * second choice passes over them. */
    int64_t *tried;
    size_t ntried;
};

/* Builds c's policy view of apps and versions (in c's arena). */
void vs_send_catalog(const struct vs_sched *s, struct catalog_snap *c);

/*
 * Chooses the jobs for request q from the cache through the work-send
 * policy (every rule of docs/server-policy.md), reading the host's quota
 * rows and other hosts' results of replicated workunits through st.
 * host is the stored row (id 0 for a new host), prev_rpc_time its previous
 * RPC (0: none). cached (may be NULL or !valid) are the host's quota rows
 * as this process last wrote them: a store read per RPC is what they save. Adds the refusal
 * messages and request_delay to r when no job was chosen. Call vs_send_cleanup() after the commit.
 */
void vs_send_choose(struct vs_sched *s, struct vs_store *st, const struct vs_proto_request *q,
                    int64_t hostid, int64_t userid, double prev_rpc_time, int64_t now, bool wants,
                    const struct host_havs *cached, struct vs_arena *a, struct vs_proto_reply *r,
                    struct vs_send *out);
/*
 * After a commit that lost claims (other requests or instances claimed
 * those results first, or a rule the claim checks in the store refused
 * them): gives the lost jobs back (as vs_send_release(..., false)), moves
 * the claimed ones and their claims to the front of x->jobs, x->sent and
 * claims (claims[0..x->njobs) on entry), and starts the policy state again
 * from the claimed jobs alone, so the request's remaining wish, limits and
 * quota are what it was really sent. Returns the new x->njobs (the number
 * claimed). The lost jobs' result ids are remembered in x->tried (in a,
 * the request's arena).
 */
size_t vs_send_keep_claimed(struct vs_sched *s, struct vs_send *x, struct vs_claim *claims,
                            struct vs_arena *a);
/*
 * The second choice of a request whose claims were lost, after
 * vs_send_keep_claimed(): the host's in-progress cap is counted again in
 * the store (which now holds this request's claims), then jobs are taken
 * from the cache through the work-send policy as vs_send_choose() takes
 * them, passing over every result already tried, and added at
 * x->jobs[x->njobs...]. Assigned work and the locality pass are not run
 * again. hostid is the stored host's (now known for a new host too).
 * Returns how many jobs were added (0: none, nothing changed).
 */
size_t vs_send_rechoose(struct vs_sched *s, struct vs_store *st, const struct vs_proto_request *q,
                        int64_t hostid, struct vs_arena *a, struct vs_send *x);
/* Adds the claimed jobs' elements to the reply, each app, version and file once. */
void vs_send_reply_jobs(const struct vs_sched *s, const struct vs_send *x,
                        const struct vs_claim *claims, struct vs_arena *a,
                        struct vs_proto_reply *r);
void vs_send_cleanup(struct vs_send *x);
/* True while the request wants more work and the reply has room. */
bool vs_send_wants_more(const struct vs_send *x);
/* Ends a chosen job after the commit: back to the cache's bookkeeping (or
 * freed, for the locality pass's and assigned work's: an unclaimed result
 * stays UNSENT in the store) with claimed saying whether it was sent. */
void vs_send_release(struct vs_sched *s, struct vs_send *x, size_t i, bool claimed);
/* Gives a chosen job back unsent (the commit failed). */
void vs_send_put_back(struct vs_sched *s, struct vs_send *x, size_t i);

/* ---- h_assign.c ---- */

struct vs_assign;
struct pick_ctx;
/* The assigned-work state of a scheduler (upload key, result template
 * cache); NULL when the project enables neither kind. */
struct vs_assign *vs_assign_create(const struct vs_project_config *cfg, struct vs_log *log);
void vs_assign_destroy(struct vs_assign *g);

/*
 * Assigned work for one request, before anything else is chosen: the
 * targeted and broadcast assignments the host is in, highest priority
 * first, each through the work-send policy (a targeted job the host cannot
 * run is explained in r), then reserved in the store (one transaction per
 * job, the slot indexes keep concurrent requests within target_nresults).
 * Adds the jobs at x->jobs[x->njobs...] with sent[].assigned set.
 */
void vs_assign_choose(struct vs_sched *s, struct vs_store *st, struct pick_ctx *pc, int64_t now,
                      struct vs_proto_reply *r);

/* Lost results (h_resend.c, resend_lost_results). */
struct vs_resend_job {
    struct vs_cache_job cj; /* the store's rows, prep'ed; owned */
    struct send_job sj;
    int64_t deadline;
};
struct vs_resend {
    struct vs_resend_item *items; /* for the commit (in the request's arena) */
    size_t nitems;
    struct vs_resend_job *jobs; /* for the reply (owned) */
    size_t njobs;
};
/*
 * The request's <other_results> (the results the client holds) against the
 * store's results of host hostid, before work is chosen. send_result_abort:
 * <result_abort> for those the project no longer needs.
 * resend_lost_results: host hostid's lost results (IN_PROGRESS in the
 * store, neither reported nor listed by q) are resent or given up (the
 * decisions go to the commit in out->items) and the reply's messages
 * added. Store errors are logged and the RPC goes on. Call with the
 * catalog lock held.
 */
void vs_resend_find(struct vs_sched *s, struct vs_store *st, const struct vs_proto_request *q,
                    int64_t hostid, int64_t now, struct vs_arena *a, struct vs_proto_reply *r,
                    struct vs_resend *out);
/* The jobs' part of the reply: x's claimed jobs and rs's resent ones. */
void vs_resend_reply(const struct vs_sched *s, const struct vs_send *x,
                     const struct vs_claim *claims, const struct vs_resend *rs, struct vs_arena *a,
                     struct vs_proto_reply *r);
void vs_resend_cleanup(struct vs_sched *s, struct vs_resend *rs);

/* The host row's fields from the request (h_host.c). */
void vs_sched__host_from_request(struct vs_host *h, const struct vs_proto_request *q,
                                 const struct vs_user *u, const char *peer, int64_t now);
/* May user userid create one more host now (max_new_hosts_per_day)? */
bool vs_sched__new_host_allowed(struct vs_sched *s, struct vs_store *st, int64_t userid,
                                int64_t now);

/* ---- h_locality.c: locality scheduling (seed 001) ---- */

/* The files a host holds as one request sees them: the valid sticky names
 * its client listed plus the inputs of the jobs this reply sends, sorted
 * by name (arena memory). */
void vs_loc_held_from_request(struct vs_loc_held *h, const struct vs_proto_request *q,
                              struct vs_arena *a);
/* Adds the sticky inputs of pj (the host keeps them once sent). */
void vs_loc_held_add_job(struct vs_loc_held *h, struct vs_arena *a, const struct prep_job *pj);
/* The part of disk_bound that pj's inputs already on the host take. */
double vs_loc_held_credit(const struct vs_loc_held *h, const struct prep_job *pj,
                          double disk_bound);
/* True when one of pj's sticky inputs is on the host (locality lite). */
bool vs_loc_held_match(const struct vs_loc_held *h, const struct prep_job *pj);

/* Replicated workunits whose holders one request looks up in the store. */
#define MAX_PENDING 64

/* The users and hosts holding a result of one replicated workunit, and the
 * workunit's current HR class (the cached copy may predate a send). */
struct holders {
    int64_t wuid;
    int hr_class;
    int n;
    int64_t *users, *hosts;
};

/* One request's view of the apps and versions while jobs are picked. */
struct pick_ctx {
    struct vs_send *x;
    struct vs_arena *arena;
    const struct vs_sp_app *apps;
    size_t napps;
    const struct vs_sp_app_version *avs; /* all versions, for the index of a verdict's */
    const struct prep_av **av_prep;      /* catalog: per version */
    const struct vs_proto_client_app_version **anon; /* anonymous platform: per version */
    size_t max_jobs;
    const struct catalog_snap *cat;
    struct vs_loc_held held; /* the host's files (disk accounting, locality lite) */
    bool lite_only;          /* this pass takes only lite jobs whose file the host has */
    bool lite_all;           /* <locality_scheduling_lite/>: every app is lite */
    int last_reason;         /* enum vs_sp_reason of the last job pick() refused */
    struct holders *hold;
    size_t nhold;
    int64_t pending[MAX_PENDING];
    size_t npending;
    struct vs_submit_tail *tail; /* the scheduler's (may be NULL) */
    int64_t hostid;              /* the requesting host */
};

/* The policy's view of workunit wu as a candidate (result_id may be 0). */
void vs_send__sp_job(const struct pick_ctx *pc, const struct vs_workunit *wu, int64_t result_id,
                     struct vs_sp_job *job);
/* Sends a checked job: vs_sp_commit() and how to send it in
 * x->sent[x->njobs++] (the caller has put the job in x->jobs[x->njobs]). */
void vs_send__commit(struct pick_ctx *pc, const struct vs_workunit *wu, const struct prep_job *pj,
                     const struct vs_sp_job *job, const struct vs_sp_verdict *v, bool assigned);

/* What the work-send rules made of a job the locality pass offered. */
enum vs_offer {
    VS_OFFER_TAKEN,    /* chosen: the job was moved into the send (x->jobs) */
    VS_OFFER_SKIP_DUP, /* never for this host or user (one result per WU) */
    VS_OFFER_SKIP,     /* not now (disk, memory, deadline, limits ...) */
    VS_OFFER_STOP,     /* the request wants nothing more */
};
typedef enum vs_offer (*vs_send_offer_fn)(void *ctx, struct vs_cache_job *job);

struct vs_locality;
/* The scheduler's locality state (working-set listing, randomness). NULL
 * unless cfg has <locality_scheduling/>. log is borrowed. */
struct vs_locality *vs_locality_create(const struct vs_project_config *cfg, struct vs_log *log);
void vs_locality_destroy(struct vs_locality *l);

/*
 * The locality pass of one request (seed 001): jobs for the files the host
 * holds, then for a working-set file, each through offer; the trigger files;
 * <delete_file_info>s in r. Sleeps at most once, for the wait period.
 */
void vs_locality_send(struct vs_sched *s, struct vs_store *st, const struct vs_proto_request *q,
                      int64_t hostid, int64_t userid, vs_send_offer_fn offer, void *offer_ctx,
                      struct vs_arena *a, struct vs_proto_reply *r, struct vs_send *x);

struct vs_locality_stats {
    uint64_t sent, deletes, need_work, waits, files_no_work, bad_names;
    uint64_t searched; /* file searches (host files, working set, scan) */
};
void vs_locality_get_stats(const struct vs_locality *l, struct vs_locality_stats *out);

/* The clock the locality pass reads (its wait for the generator, the reuse
 * of its listings): now_ms on a monotonic clock in milliseconds, and a
 * sleep. NULL (the default) is the real clock; tests give a virtual one,
 * so that what they assert on is not how fast the machine is. */
struct vs_locality_clock {
    int64_t (*now_ms)(void *ctx);
    void (*sleep_ms)(void *ctx, int64_t ms);
    void *ctx;
};
void vs_locality_set_clock(struct vs_locality *l, const struct vs_locality_clock *clock);

/* h_sched.c: a message for the reply, used by h_send.c and h_locality.c */
void vs_sched__add_msg(struct vs_proto_reply *r, struct vs_arena *a, const char *prio,
                       const char *text);

/* h_catalog.c: the catalog snapshot and the job cache's hooks */
const struct vs_app *vs_sched__find_app(const struct vs_catalog *cat, int64_t id);
/* Loads apps and versions from st and builds their reply pieces. */
int vs_sched__load_catalog(struct vs_sched *s, struct vs_store *st, struct catalog_snap **out);
void vs_sched__snap_free(struct catalog_snap *c);
/* The cache's prep hooks: a job's reply pieces from its stored documents. */
int vs_sched__prep_job(void *ctx, struct vs_cache_job *cj);
void vs_sched__unprep_job(void *ctx, void *prep);
/* The feeder's filter: false for jobs of full-locality apps (sent by file). */
bool vs_sched__keep_job(void *ctx, const struct vs_job *job);

#endif
