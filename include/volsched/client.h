/*
 * The volsched client daemon: internal interface between its files.
 *
 *   dirs.c     data directory: names, lockfile, gui_rpc_auth.cfg, atomic writes
 *   state.c    the in-memory state and its life-cycle (add, drop, garbage collection)
 *   index.c    hash indexes: results, workunits and files by project and name
 *   limits.c   per-project caps on what a scheduler reply may add
 *   disk.c     disk preferences, usage, per-project shares, download admission
 *   statefile.c client_state.xml written next + rename, read back at start
 *   xmlshape.c the fields of projects, results ... the state file and GUI RPC share
 *   prefs.c    global_prefs.xml / global_prefs_override.xml / cc_config.xml
 *   host.c     host facts, the CPU benchmark cache, time_stats
 *   msgs.c     the message log (client.log lines and --get_messages)
 *   rpc.c      scheduler RPC: request, reply, acks, backoff
 *   master.c   the master page: the scheduler URLs
 *   xfer.c     downloads (md5, resume, code signature) and uploads (resume)
 *   net.c      the HTTP of both, non-blocking (curl multi), polled with the GUI RPC
 *   proc.c     running apps: slot, init_data.xml, links, shm, spawn, control
 *   task.c     the tasks' poll, exit judgement, recovery after a crash, shutdown
 *   trickle.c  trickle-up and trickle-down messages
 *   sched.c    the policy driver: vs_cstate from the queue, vs_cpolicy_step, actions
 *   gui_rpc.c  the GUI RPC server boinccmd talks to (transport, authentication)
 *   gui_ops.c  its requests and replies
 *   loop.c     the daemon's main loop: one poll() for GUI RPC and transfer sockets
 *
 * One struct vs_client holds everything (one owner: the `run` command, or the
 * short-lived attach/detach/status commands); it is passed down explicitly.
 * Everything is single-threaded. The structs are in client_types.h.
 */
#ifndef VOLSCHED_CLIENT_CLIENT_H
#define VOLSCHED_CLIENT_CLIENT_H

#include "volsched/client_types.h"

/* ---- dirs.c ---- */
/* "http://127.0.0.1:31477/cproj/" -> "127.0.0.1_31477_cproj" (BOINC's escape_project_url). */
void vs_client_escape_url(const char *url, char *out, size_t size);
/* Canonical form: scheme kept, trailing '/' added. VS_EINVAL if not http(s). */
int vs_client_canon_url(const char *url, char *out, size_t size);
/* DIR/rel formatted. VS_ELIMIT if too long. */
int vs_client_path(const struct vs_client *c, char *out, size_t size, const char *fmt, ...)
    VS_PRINTF(4, 5);
/* projects/<escaped master URL>; VS_EINVAL if the escaped name could be the
 * projects directory or its parent ("", ".", "..": such a URL is refused). */
int vs_client_project_dir(const struct vs_client *c, size_t p, char *out, size_t size);
/* Writes data to path through path.tmp + rename (fsync'd when durable), mode 0644. */
int vs_client_write_atomic(const char *path, const char *data, size_t len, bool durable);
/* The same, mode 0600: for files that hold an account key (account files,
 * scheduler requests, init_data.xml). */
int vs_client_write_private(const char *path, const char *data, size_t len, bool durable);
/* Reads a whole file (at most max bytes) into a NUL-terminated vs_buf. */
int vs_client_read_file(const char *path, size_t max, struct vs_buf *out);
/* Takes DIR/lockfile (fcntl write lock). VS_EBUSY when another client holds it. */
int vs_client_lock(struct vs_client *c);
/* Reads gui_rpc_auth.cfg, creating it with a random password when missing. */
int vs_client_gui_password(struct vs_client *c);
/* True when a name from a project is safe as a file name (no '/', no "..", printable). */
bool vs_client_safe_name(const char *name);
/* Account file. */
int vs_client_write_account(struct vs_client *c, size_t p);
int vs_client_read_accounts(struct vs_client *c);
/* Sets the project's resource share from <resource_share> in its project preferences. */
void vs_client_share_from_prefs(struct vs_client *c, size_t p);

/* ---- state.c ---- */
void vs_client_init(struct vs_client *c, const char *dir);
void vs_client_cleanup(struct vs_client *c);
char *vs_client_strdup(const char *s); /* NULL -> NULL */
void vs_client_setstr(char **dst, const char *s);
long vs_client_find_project(const struct vs_client *c, const char *url);
long vs_client_find_file(const struct vs_client *c, size_t p, const char *name);
long vs_client_find_app(const struct vs_client *c, size_t p, const char *name);
long vs_client_find_av(const struct vs_client *c, size_t p, const char *app, int version,
                       const char *plan_class);
long vs_client_find_wu(const struct vs_client *c, size_t p, const char *name);
long vs_client_find_result(const struct vs_client *c, size_t p, const char *name);
size_t vs_client_add_project(struct vs_client *c, const char *url, const char *auth);
struct cl_file *vs_client_add_file(struct vs_client *c);
struct cl_app *vs_client_add_app(struct vs_client *c);
struct cl_app_version *vs_client_add_av(struct vs_client *c);
struct cl_wu *vs_client_add_wu(struct vs_client *c);
struct cl_result *vs_client_add_result(struct vs_client *c);
/* The app version a result runs with, or NULL. */
struct cl_app_version *vs_client_result_av(struct vs_client *c, const struct cl_result *r);
struct cl_wu *vs_client_result_wu(struct vs_client *c, const struct cl_result *r);
/* Drops a reported result, and its workunit and files when nothing else uses them. */
void vs_client_drop_result(struct vs_client *c, size_t r);
/* Drops every result i with drop[i] set (drop has n_results entries), in one
 * pass, then what nothing uses any more (vs_client_gc). */
void vs_client_drop_results(struct vs_client *c, const bool *drop);
/* Drops the workunits no result uses and the files (and their bytes on
 * disk) nothing refers to, of project p or of all (p < 0): BOINC's garbage
 * collection. A sticky file stays while present, unless its project is over
 * its disk share. Returns how many items went. */
size_t vs_client_gc(struct vs_client *c, long p);
/* Drops a whole project (detach): results, files, apps and its directory. */
void vs_client_drop_project(struct vs_client *c, size_t p);
void vs_client_fref_free(struct cl_fref *f);
/* Estimated CPU seconds left for a result (rsc_fpops_est and progress). */
double vs_client_remaining(struct vs_client *c, const struct cl_result *r);
/* Whether computing is allowed now (run mode, suspend reasons). */
bool vs_client_can_compute(const struct vs_client *c);
int vs_client_ncpus(const struct vs_client *c);

struct vs_xml_writer;
/* ---- xmlshape.c: the fields client_state.xml and the GUI RPC replies share ---- */
/* <file_ref> elements as the state file and get_state write them. */
void vs_client_write_frefs(struct vs_xml_writer *w, const struct cl_fref *f, size_t n);
void vs_client_xml_project(struct vs_xml_writer *w, const struct cl_project *p);
void vs_client_xml_app_version(struct vs_xml_writer *w, const struct cl_app_version *a,
                               double flops);
void vs_client_xml_workunit(struct vs_xml_writer *w, const struct cl_wu *u);
void vs_client_xml_result(struct vs_xml_writer *w, const struct cl_result *r);
void vs_client_xml_task(struct vs_xml_writer *w, const struct cl_result *r);

/* ---- index.c: the finds above, by hash (vs_client_find_result, _wu, _file) ---- */
/* Marks the indexes stale (after items were removed or moved). */
void vs_client_index_stale(struct vs_client *c);
void vs_client_index_cleanup(struct vs_client *c);

/* ---- limits.c: per-project caps on what a scheduler reply may add ---- */
enum cl_kind { CL_RESULTS, CL_WUS, CL_FILES, CL_NKINDS };
/* The most of a kind one project may hold now: the total over the number of
 * projects attached (at least 1). */
size_t vs_client_cap(const struct vs_client *c, enum cl_kind k);
/* Whether a project holding `have` of kind k may take one more while all
 * projects together hold `total`: under its cap, and under the total or
 * under the floor every project keeps (total / VS_CLIENT_MAX_PROJECTS). */
bool vs_client_cap_room(const struct vs_client *c, enum cl_kind k, size_t have, size_t total);
/* Whether a project holding `have` results is at its cap (no work is asked of it). */
bool vs_client_results_full(const struct vs_client *c, size_t have);
struct vs_proto_reply;
struct vs_arena;
/* What of a scheduler reply project p may add, decided before anything is
 * merged (one flag per reply item, in the arena): new apps and app versions
 * up to the per-project caps; each new result with its new workunit and
 * the new files they and its app version name, all or nothing, under the
 * caps; new files only when a kept item names them. Refusals get a
 * message naming the project and the cap; a refused result is not kept,
 * so the next request's <other_results> tells the server it is not here. */
struct cl_admit {
    bool *app, *av, *wu, *result, *file;
};
void vs_client_admit(struct vs_client *c, size_t p, const struct vs_proto_reply *y,
                     struct vs_arena *a, struct cl_admit *out);

/* ---- disk.c ---- */
/* BOINC's allowed_disk_usage: the least of disk_max_used_gb, d_total x
 * disk_max_used_pct and what leaves disk_min_free_gb free; never negative. */
double vs_client_disk_allowed(const struct cl_prefs *p, double d_total, double d_free,
                              double boinc_total);
/* BOINC's get_disk_shares over n projects: each one's disk resource share is
 * its resource share plus a tenth of the largest (so a backup project gets
 * some); a project's quota is that fraction of `allowed`; a project whose
 * desired usage (ddu) is within its quota gets its quota, the others split
 * what the first ones' usage leaves, by disk resource share. */
void vs_client_disk_shares(size_t n, const double *resource_share, const double *ddu,
                           double allowed, double *out_share);
/* Measures the disk (statvfs, the projects' files, their tasks' slots, the
 * client's own files) and sets every project's usage and share. The
 * directory walks are redone at most every 10 s unless force. */
void vs_client_disk_refresh(struct vs_client *c, bool force);
/* Before a download of f (of which `have` bytes are on disk) starts: 0 and
 * the bytes it may still write in out_room, or VS_ELIMIT when it does not
 * fit (its project's share, the allowed total, or the free space less what
 * the state file needs): it is then deferred (next_try), with a message
 * the first time. */
int vs_client_disk_admit(struct vs_client *c, struct cl_file *f, double have, double *out_room);
/* A download stopped at the room admit gave: deferred like a refusal. */
void vs_client_disk_defer(struct vs_client *c, struct cl_file *f, double need);
/* GUI RPC get_disk_usage's <disk_usage_summary> body (BOINC's fields). */
void vs_client_disk_summary_xml(struct vs_client *c, struct vs_xml_writer *w);

/* ---- statefile.c ---- */
int vs_client_state_write(struct vs_client *c);
int vs_client_state_read(struct vs_client *c);

/* ---- prefs.c ---- */
void vs_client_prefs_default(struct cl_prefs *p);
/* Reads global_prefs.xml, the override, and cc_config.xml (bad files logged, defaults kept). */
void vs_client_prefs_read(struct vs_client *c);
/* The CPUs result r's job uses: its project's app_config.xml avg_ncpus,
 * else its app version's, else 1 (sched.c). */
double vs_client_result_ncpus(struct vs_client *c, const struct cl_result *r);
/* Reads every project's app_config.xml (app_config.c); prefs_read calls it. */
void vs_client_app_config_read(struct vs_client *c);
/* The working prefs as a <global_preferences> XML block. */
int vs_client_prefs_xml(const struct vs_client *c, struct vs_buf *out);

/* ---- host.c ---- */
/* Measures the host; the benchmark is cached in DIR/benchmark.xml for 30 days. */
void vs_client_host_measure(struct vs_client *c, bool run_benchmark);
void vs_client_time_stats_update(struct vs_client *c, bool running, bool active);
void vs_client_time_stats_log(struct vs_client *c, const char *event);
/* The averaged CPU efficiency, in the policy's range (0, 1]. */
double vs_client_cpu_efficiency(const struct vs_client *c);
/* A running task's poll: wall seconds it ran (times its CPUs), CPU seconds it got. */
void vs_client_cpu_eff_account(struct vs_client *c, double wall, double cpu);

/* ---- msgs.c ---- */
void vs_client_msg(struct vs_client *c, long project, int pri, const char *fmt, ...)
    VS_PRINTF(4, 5);

/* ---- rpc.c, master.c ---- */
#define VS_CLIENT_RPC_TIMEOUT_S 120L /* a scheduler RPC or master page fetch, at most */
/* Starts at most one scheduler RPC (or master fetch) that is due, when none
 * is in flight; its reply is handled when it arrives. Returns true if it
 * started one. */
bool vs_client_rpc_poll(struct vs_client *c);
/* Starts a scheduler RPC to p asking for work_req seconds (0 on failure to start). */
int vs_client_rpc_do(struct vs_client *c, size_t p, double work_req);
/* The delay after n failures in a row: BOINC's exponential backoff with jitter. */
double vs_client_rpc_backoff(const struct vs_client *c, int n);
/* Starts fetching p's master page (its scheduler URLs). */
int vs_client_master_fetch(struct vs_client *c, size_t p);

/* ---- xfer.c ---- */
/* Starts the downloads and uploads that are due, within the transfer budgets
 * (cc_config max_file_xfers, max_file_xfers_per_project); they finish later,
 * in vs_client_net_run. With the network mode "never", abandons those in
 * flight. Returns true when it started one. */
bool vs_client_xfer_poll(struct vs_client *c);
/* Result state transitions driven by file status. */
void vs_client_update_result_states(struct vs_client *c);

/* ---- proc.c ---- */
int vs_client_task_start(struct vs_client *c, size_t r);
void vs_client_task_send(struct vs_client *c, size_t r, const char *msg);
void vs_client_task_suspend(struct vs_client *c, size_t r, bool remove);
void vs_client_task_resume(struct vs_client *c, size_t r);
void vs_client_task_abort(struct vs_client *c, size_t r, int code);
/* Per-second work: exits, app_status, heartbeats, messages, quit timeouts. */
/* Polls the tasks and handles at most one exit; true when more exits wait (call
 * again, after a policy step: each exit is its own event). */
bool vs_client_tasks_poll(struct vs_client *c);
/* At start: processes from a previous run are killed; tasks restart from checkpoints. */
void vs_client_tasks_recover(struct vs_client *c);
/* Sends <quit/> to every task; true when all are gone. */
bool vs_client_tasks_quit_all(struct vs_client *c);
int vs_client_free_slot(struct vs_client *c);
void vs_client_slot_clean(struct vs_client *c, int slot);

/* ---- sched.c ---- */
/* Builds the snapshot and runs the policy step; applies enforcement actions. */
int vs_client_sched_step(struct vs_client *c);
/* The first half: snapshot, vs_cpolicy_step, policy-owned state kept; no action applied. */
int vs_client_sched_decide(struct vs_client *c);
/* Accounts wall time since the last call. */
void vs_client_sched_account(struct vs_client *c, double dt);
/* Writes the snapshot as `volsched explain` STATE.json. */
int vs_client_explain_json(struct vs_client *c, struct vs_buf *out);

/* ---- net.c: non-blocking HTTP on one curl multi handle ---- */
/* What a transfer is for (bits: vs_client_net_count takes a set of them). */
enum {
    CL_NET_DOWNLOAD = 1,
    CL_NET_UPLOAD = 2,
    CL_NET_RPC = 4, /* scheduler RPC or master page */
    CL_NET_GUI = 8, /* a project's web RPC for the GUI (gui_acct.c) */
    CL_NET_FILES = CL_NET_DOWNLOAD | CL_NET_UPLOAD,
    CL_NET_ANY = CL_NET_FILES | CL_NET_RPC | CL_NET_GUI,
};

struct cl_http_req {
    int kind;
    const char *project_url; /* its project's master URL (copied) */
    const char *name;        /* the file's name, or NULL (copied) */
    const char *url;
    const char *body; /* POST body (borrowed until done is called), or NULL: GET */
    size_t len;
    FILE *body_file;      /* with body: the body goes on with this file from its */
    double body_file_len; /* position, this many bytes (borrowed; streamed) */
    struct vs_buf *reply; /* the body into memory, capped by its max_len (borrowed) ... */
    FILE *sink;           /* ... or into this file (borrowed), at most sink_limit bytes */
    double sink_limit;
    double resume_from; /* with sink: ask for the bytes from here on (HTTP Range) */
    long timeout_s;     /* overall limit, 0 none (the low-speed limit always applies) */
};

struct cl_http_done {
    bool abandoned; /* shut down, detached, network off: only free what the owner holds */
    int rc;         /* 0, VS_ENET, VS_ETIMEOUT, VS_ELIMIT (body over its cap or refused) */
    long code;      /* HTTP status, 0 none */
    bool too_slow;  /* failed by the low-speed limit */
    bool range_refused, disk_full, over_limit; /* a sink's: resume refused, ENOSPC, > limit */
    double speed;                              /* bytes/s received */
    char why[256];                             /* for a message when rc != 0 */
};

/* Called once per transfer, from vs_client_net_run or vs_client_net_abandon. */
typedef void (*cl_http_done_fn)(struct vs_client *c, void *ud, const struct cl_http_done *d);

void vs_client_net_global_init(void);
/* Starts a transfer; done(c, ud, ...) is called when it ends. VS_ENET if curl refuses. */
VS_MUST_CHECK int vs_client_http_start(struct vs_client *c, const struct cl_http_req *q,
                                       cl_http_done_fn done, void *ud);
/* Transfers in flight of those kinds (of that project; NULL any). */
size_t vs_client_net_count(const struct vs_client *c, int kinds, const char *project_url);
/* Bytes the downloads in flight (of that project; NULL all) may still write:
 * what disk admission counts as taken (disk.c). */
double vs_client_net_to_come(const struct vs_client *c, const char *project_url);
bool vs_client_net_busy(const struct vs_client *c, int kinds, const char *project_url,
                        const char *name);
/* Waits at most timeout_ms for pf (revents set) and the transfers' sockets, or a signal. */
void vs_client_net_wait(struct vs_client *c, struct pollfd *pf, size_t n, int timeout_ms);
/* Moves the transfers on; calls the done functions of those that ended. */
void vs_client_net_run(struct vs_client *c);
/* Ends transfers of those kinds (of that project; NULL all) at once, done told "abandoned". */
void vs_client_net_abandon(struct vs_client *c, int kinds, const char *project_url);
void vs_client_net_cleanup(struct vs_client *c);

/* ---- gui_rpc.c ---- */
/* Refuses a remote-access configuration without a password (VS_ECONFIG, with
 * a message on stderr and in the log saying what to do). Before gui_open. */
int vs_client_gui_check(struct vs_client *c);
int vs_client_gui_open(struct vs_client *c, int port);
/* Waits at most timeout_ms for the GUI RPC sockets and the transfers, then
 * serves the ready connections and closes those past their deadlines. */
void vs_client_gui_poll(struct vs_client *c, int timeout_ms);
void vs_client_gui_close(struct vs_client *c);

/* ---- rpc.c / xfer.c / trickle.c / gui_ops.c extras ---- */
struct vs_arena;
struct vs_proto_msg_from_host;
bool vs_client_report_due(const struct vs_client *c, size_t p);
void vs_client_old_result(struct vs_client *c, size_t r);
struct vs_proto_msg_from_host *vs_client_trickle_collect(struct vs_client *c, size_t p,
                                                         struct vs_arena *a, size_t *out_n);
void vs_client_trickle_reply(struct vs_client *c, size_t p, const char *reply, size_t len,
                             size_t n_sent);
void vs_client_trickle_deliver(struct vs_client *c, struct cl_result *r);
void vs_client_trickle_harvest(struct vs_client *c, const struct cl_result *r);
void vs_client_trickle_notify(struct cl_result *r);
/* Attaches (writes the account file). log_errors: say why in the messages. */
int vs_client_attach(struct vs_client *c, const char *url, const char *auth, bool log_errors);
/* Kills a task's process tree now and waits for it (detach, shutdown). */
void vs_client_task_kill_now(struct vs_client *c, size_t r);
/* Loads dir's state for the short commands (status, explain, detach): no lock, no GUI. */
int vs_client_load(struct vs_client *c);

/* ---- appdir.c: the verified directory each app version runs from ---- */
/* DIR/app_versions/<escaped URL>/<app>__<version>[__<plan class>]; VS_EINVAL
 * if a name in it could leave that directory. */
int vs_client_av_dir(const struct vs_client *c, const struct cl_app_version *av, char *out,
                     size_t size);
/* Makes av's directory hold exactly av's files, each one's current bytes
 * checked against its signature with the project's code-signing key, and
 * writes its path to out_dir. On failure writes why (for the event log):
 * VS_EAUTH if a file is unsigned or its bytes fail the check (never run),
 * another code if a file is missing or the directory cannot be made. */
int vs_client_av_prepare(struct vs_client *c, const struct cl_app_version *av, char *out_dir,
                         size_t size, char *why, size_t why_size);
/* Removes every app version directory of project p (detach, reset). */
int vs_client_av_remove_project(struct vs_client *c, size_t p);

/* ---- file_roles.c: one role per file name in a project ---- */
struct vs_proto_reply;
/* False, with why written, if reply y of project p names a file as two of
 * app version file, workunit input and result output, in itself or with
 * what the client holds for p. */
bool vs_client_file_roles_ok(const struct vs_client *c, size_t p, const struct vs_proto_reply *y,
                             char *why, size_t why_size);
/* False, with why written, if two of the task's files (app version, input,
 * output) share an open name, or one takes a name the client writes in the
 * slot: an input opened under an app file's name would replace the app's
 * slot copy (a wrapper runs its worker from the slot). */
bool vs_client_slot_names_ok(const struct cl_app_version *av, const struct cl_wu *w,
                             const struct cl_result *r, char *why, size_t why_size);
/* True if name is a file of one of p's app versions or workunits. */
bool vs_client_file_is_app_or_input(const struct vs_client *c, size_t p, const char *name);

/* ---- stats.c: statistics_*.xml and daily_xfer_history.xml, BOINC's formats ---- */
/* Reads every project's statistics file and the transfer history (bad ones logged). */
void vs_client_stats_read(struct vs_client *c);
/* After a scheduler reply from p: today's credit figures (a new day adds a
 * record, those older than 30 days go), statistics_<URL>.xml rewritten. */
void vs_client_stats_update(struct vs_client *c, size_t p);
/* GUI RPC get_statistics's <statistics> body. */
void vs_client_stats_xml(const struct vs_client *c, struct vs_xml_writer *w);
/* Counts bytes moved today (net.c, each finished transfer or RPC). */
void vs_client_xfer_add(struct vs_client *c, double up, double down);
/* <daily_xfers> as the GUI RPC and the file have it. */
void vs_client_xfer_history_xml(const struct vs_client *c, struct vs_xml_writer *w);
/* Writes daily_xfer_history.xml when it changed. */
void vs_client_xfer_history_write(struct vs_client *c);

/* ---- gui_cfg_ops.c, gui_misc_ops.c, gui_acct.c: the other GUI RPC ops ---- */
/* Reads proxy_info.xml (set_proxy_settings) at start. */
void vs_client_proxy_read(struct vs_client *c);
/* Ends the account web RPCs in flight and frees them. */
void vs_client_gui_acct_cleanup(struct vs_client *c);

/* ---- loop.c ---- */
int vs_client_run(struct vs_client *c);
double vs_client_now(void);

#endif
