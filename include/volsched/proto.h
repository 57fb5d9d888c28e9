/*
 * BOINC scheduler RPC messages <-> plain structs, for both sides.
 *
 *   server: vs_proto_request_parse()  and vs_proto_reply_write()
 *   client: vs_proto_request_write()  and vs_proto_reply_parse()
 *   upload handler: vs_proto_upload_parse() / vs_proto_upload_reply_write(),
 *                   client side vs_proto_upload_write_header() / _reply_parse()
 *   master page: vs_proto_master_page_write() / vs_proto_master_urls_parse()
 *
 * BOINC-COMPAT: element names, shapes and order are those of the Debian
 * BOINC client 7.20.5 (see docs/protocol.md and ../shared/docs/boinc-protocol.md).
 *
 * Ownership: a parse fills a caller-provided struct whose strings and arrays
 * live in the caller's arena (one arena per RPC; free it in one call). A
 * write reads a struct whose pointers the caller owns and appends XML to a
 * vs_buf. Strings are NUL-terminated; a NULL string means "absent" and is not
 * written. Unknown elements are skipped by the parsers (clients add fields).
 *
 * Numbers: optional numeric fields that BOINC itself writes only when
 * non-zero (the peak sizes, fpops, request_delay ...) are written only when
 * non-zero; everything else is always written.
 */
#ifndef VOLSCHED_PROTO_H
#define VOLSCHED_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/error.h"
#include "volsched/xml.h"

/* ---- limits (every one is enforced with VS_ELIMIT and a message) ---- */
#define VS_PROTO_MAX_REQUEST_BYTES (4u * 1024u * 1024u) /* scheduler request body */
#define VS_PROTO_MAX_REPLY_BYTES   (16u * 1024u * 1024u)
#define VS_PROTO_MAX_RESULTS       1000u  /* reported <result>s in one request */
#define VS_PROTO_MAX_OTHER_RESULTS 10000u /* <other_result>s / <ip_result>s */
#define VS_PROTO_MAX_FILE_INFOS    10000u /* sticky <file_info>s in a request */
#define VS_PROTO_MAX_APP_VERSIONS  1000u
#define VS_PROTO_MAX_LIST          10000u         /* any other repeated element */
#define VS_PROTO_MAX_STRING        4096u          /* one name, URL, authenticator ... */
#define VS_PROTO_MAX_STDERR        (256u * 1024u) /* one result's stderr_out */
#define VS_PROTO_MAX_PREFS         (256u * 1024u) /* a <global_preferences> subtree */
#define VS_PROTO_MAX_UPLOAD_HEADER (64u * 1024u)  /* bytes before the raw data */
#define VS_PROTO_MAX_MASTER_URLS   16u

/* A parse error: code plus a message naming the element. */
struct vs_proto_error {
    int code;
    char msg[200];
};

/* ================= scheduler request (client -> server) ================= */

struct vs_proto_time_stats {
    double on_frac;
    double connected_frac; /* -1 = unknown */
    double cpu_and_network_available_frac;
    double active_frac;
    double cpu_efficiency; /* BOINC 6 clients and volsched's; 0 = not sent (7.x) */
    double gpu_active_frac;
    double client_start_time;
    double total_start_time;
    double total_duration;
    double total_active_duration;
    double total_gpu_active_duration;
    double now;
    double previous_uptime;
    double session_active_duration;
    double session_gpu_active_duration;
};

struct vs_proto_net_stats {
    double bwup, avg_up, avg_time_up;
    double bwdown, avg_down, avg_time_down;
};

struct vs_proto_disk_usage {
    double d_boinc_used_total;
    double d_boinc_used_project;
    double d_project_share;
};

/*
 * One usable coprocessor type. BOINC-COMPAT: <coproc_cuda> (type "NVIDIA"),
 * <coproc_ati> ("ATI"), <coproc_intel_gpu> ("intel_gpu") or generic
 * <coproc><type>T</type>; carries the per-resource work request.
 */
struct vs_proto_coproc {
    const char *type;
    const char *name; /* device model, may be NULL */
    int count;
    double peak_flops;
    double available_ram;
    double req_secs;
    double req_instances;
    double estimated_delay;
};

struct vs_proto_host_info {
    int timezone;
    const char *domain_name;
    const char *ip_addr;
    const char *host_cpid;
    int p_ncpus;
    const char *p_vendor;
    const char *p_model;
    const char *p_features;
    double p_fpops;
    double p_iops;
    double p_membw;
    double p_calculated;
    bool p_vm_extensions_disabled;
    double m_nbytes;
    double m_cache;
    double m_swap;
    double d_total;
    double d_free;
    const char *os_name;
    const char *os_version;
    int n_usable_coprocs;
    bool wsl_available;
    const char *product_name;       /* optional */
    const char *virtualbox_version; /* optional */
};

/* An uploaded output file of a reported result (<file_info> inside <result>). */
struct vs_proto_result_file {
    const char *name;
    double nbytes;
    double max_nbytes;
    const char *md5_cksum;
    const char *upload_url; /* may be NULL */
};

/* A completed result being reported (top-level <result> in a request). */
struct vs_proto_reported_result {
    const char *name;
    double final_cpu_time;
    double final_elapsed_time;
    int exit_status;
    int state; /* BOINC-COMPAT: 5 = uploaded (success with exit_status 0), 3 = compute error */
    const char *platform;
    int version_num;
    const char *plan_class;                        /* optional */
    double fpops_per_cpu_sec, fpops_cumulative;    /* optional (0 = absent) */
    double intops_per_cpu_sec, intops_cumulative;  /* optional */
    double final_peak_working_set_size;            /* optional */
    double final_peak_swap_size;                   /* optional */
    double final_peak_disk_usage;                  /* optional */
    double final_bytes_sent, final_bytes_received; /* optional */
    int app_version_num;
    const char *core_client_version; /* from <stderr_out>, may be NULL */
    const char *stderr_text;         /* the CDATA of <stderr_out>, trimmed; may be NULL */
    struct vs_proto_result_file *files;
    size_t n_files;
};

/* A trickle-up message (<msg_from_host>). */
struct vs_proto_msg_from_host {
    const char *result_name;
    const char *variety;
    const char *msg_text;
};

/* A sticky file the client holds (top-level <file_info> in a request; locality). */
struct vs_proto_sticky_file {
    const char *name;
    double nbytes;
    int status;
};

/* An app version the client has (<app_versions><app_version>; anonymous platform). */
struct vs_proto_client_app_version {
    const char *app_name;
    int version_num;
    const char *platform;
    const char *plan_class; /* optional */
    double avg_ncpus;
    double flops;
    const char *api_version; /* optional */
    const char *cmdline;     /* optional */
    const char *file_prefix; /* optional */
};

/* A result the client holds and is not reporting (<other_results><other_result>). */
struct vs_proto_other_result {
    const char *name;
    int app_version; /* index into the request's app_versions, -1 if absent */
    const char *plan_class;
};

/* A result in progress (<in_progress_results><ip_result>). */
struct vs_proto_ip_result {
    const char *name;
    double report_deadline;
    double time_remaining;
    double avg_ncpus;
    double ncudas, natis, nintel_gpus; /* optional */
};

struct vs_proto_request {
    const char *authenticator;
    int64_t hostid;
    int64_t rpc_seqno;
    int core_client_major_version;
    int core_client_minor_version;
    int core_client_release;
    double resource_share_fraction;
    double rrs_fraction;
    double prrs_fraction;
    double duration_correction_factor;
    bool allow_multiple_clients;
    bool sandbox;
    bool dont_send_work;
    double work_req_seconds;
    double cpu_req_secs;
    double cpu_req_instances;
    double estimated_delay;
    int client_cap_plan_class;
    const char *platform_name; /* "anonymous" for anonymous platform */
    const char **alt_platforms;
    size_t n_alt_platforms;
    const char *code_sign_key; /* as sent, NULL when the client has no key yet */
    /* Verbatim <global_preferences>...</global_preferences> XML, or NULL. */
    const char *working_global_prefs; /* the one inside <working_global_preferences> */
    const char *global_prefs;         /* the top-level one (the user's master prefs) */
    /* BOINC-COMPAT: the <email_hash> of the project the master prefs came
     * from (the scheduler stores newer prefs only from the same account) */
    const char *global_prefs_source_email_hash;
    const char *cross_project_id;
    struct vs_proto_time_stats time_stats;
    struct vs_proto_net_stats net_stats;
    struct vs_proto_host_info host;
    struct vs_proto_disk_usage disk_usage;
    struct vs_proto_coproc *coprocs;
    size_t n_coprocs;
    struct vs_proto_reported_result *results;
    size_t n_results;
    struct vs_proto_msg_from_host *msgs_from_host;
    size_t n_msgs_from_host;
    struct vs_proto_sticky_file *sticky_files;
    size_t n_sticky_files;
    struct vs_proto_client_app_version *app_versions;
    size_t n_app_versions;
    struct vs_proto_other_result *other_results;
    size_t n_other_results;
    bool has_in_progress_results; /* the element was present (send_full_workload) */
    struct vs_proto_ip_result *ip_results;
    size_t n_ip_results;
    const char *client_opaque; /* optional verbatim inner XML */
    const char *client_brand;  /* optional */
};

/*
 * Parses a scheduler request body (server side). Strings and arrays are
 * allocated in arena. Returns 0; VS_ELIMIT when a limit is hit (body size,
 * XML depth / elements / text, too many results ...), VS_EPARSE for malformed
 * XML or a missing <scheduler_request>, VS_EUNSUPPORTED for DOCTYPE or
 * entities; out_err (may be NULL) then says what and where. *out is written
 * only on success.
 */
VS_MUST_CHECK int vs_proto_request_parse(const char *body, size_t len, struct vs_arena *arena,
                                         struct vs_proto_request *out,
                                         struct vs_proto_error *out_err);

/*
 * The server's parse: the same contract and the same struct as
 * vs_proto_request_parse(), read in one pass without an XML tree when the
 * body is in the subset vs_proto_request_parse_direct() reads (the real
 * client's requests are), else by vs_proto_request_parse().
 */
VS_MUST_CHECK int vs_proto_request_parse_fast(const char *body, size_t len, struct vs_arena *arena,
                                              struct vs_proto_request *out,
                                              struct vs_proto_error *out_err);

/*
 * The one-pass reader alone: 0 with *out exactly as vs_proto_request_parse()
 * would fill it, or VS_EUNSUPPORTED (nothing in *out; arena may hold
 * garbage) for anything outside its subset: attributes, comments,
 * processing instructions, '\r', non-ASCII element names, bytes that are
 * not UTF-8 characters XML allows, entities inside a stored field, a body
 * over VS_XML_MAX_TEXT, any limit or malformed value (whose error message
 * is the full parser's to give). <coprocs>, <msg_from_host>,
 * <client_opaque> and UTF-8 text are inside it.
 */
VS_MUST_CHECK int vs_proto_request_parse_direct(const char *body, size_t len,
                                                struct vs_arena *arena,
                                                struct vs_proto_request *out);

/* Writes a request the way the 7.20.5 client does (client side). */
VS_MUST_CHECK int vs_proto_request_write(const struct vs_proto_request *req, struct vs_buf *out);

/* True when the request asks for any work (CPU or a coprocessor). */
bool vs_proto_request_wants_work(const struct vs_proto_request *req);

/* ================= scheduler reply (server -> client) ================= */

struct vs_proto_message {
    const char *priority; /* "low", "notice", "high"; NULL = "low" */
    const char *text;
};

struct vs_proto_app {
    const char *name;
    const char *user_friendly_name; /* optional */
    bool non_cpu_intensive;
    bool fraction_done_exact;
};

enum vs_proto_url_kind {
    VS_PROTO_URL = 0,      /* <url>: download unless it contains "file_upload_handler" */
    VS_PROTO_URL_DOWNLOAD, /* <download_url> */
    VS_PROTO_URL_UPLOAD,   /* <upload_url> */
    VS_PROTO_URL_GZIPPED,  /* <gzipped_url> */
};

struct vs_proto_url {
    enum vs_proto_url_kind kind;
    const char *url;
};

struct vs_proto_file_info {
    const char *name;
    struct vs_proto_url *urls;
    size_t n_urls;
    double nbytes;     /* 0 = not sent */
    double max_nbytes; /* 0 = not sent; required for outputs */
    const char *md5_cksum;
    bool executable;
    const char *file_signature; /* signature text (hex lines + "."), optional */
    const char *xml_signature;  /* upload certificate text, optional */
    bool sticky;
    double sticky_lifetime; /* 0 = not sent */
    bool report_on_rpc;     /* list it in every request while held (locality) */
    bool no_delete;
    bool is_project_file;
    bool download_gzipped;
    double gzipped_nbytes; /* 0 = not sent */
    bool gzip_when_done;
};

struct vs_proto_file_ref {
    const char *file_name;
    const char *open_name; /* optional */
    bool main_program;
    bool copy_file;
    bool optional;
};

struct vs_proto_app_version {
    const char *app_name;
    int version_num;
    const char *platform;
    const char *plan_class;  /* optional */
    const char *api_version; /* optional */
    double avg_ncpus;        /* 0 = not sent (client default 1) */
    double max_ncpus;        /* optional */
    double flops;            /* 0 = not sent */
    const char *cmdline;     /* optional */
    const char *file_prefix; /* optional */
    const char *coproc_type; /* optional GPU: <coproc><type>T</type><count>N</count></coproc> */
    double coproc_count;
    double gpu_ram; /* optional */
    bool dont_throttle;
    bool is_wrapper;
    bool needs_network;
    struct vs_proto_file_ref *file_refs;
    size_t n_file_refs;
};

struct vs_proto_workunit {
    const char *name;
    const char *app_name;
    const char *command_line; /* optional */
    double rsc_fpops_est;
    double rsc_fpops_bound;
    double rsc_memory_bound;
    double rsc_disk_bound;
    const char *job_keyword_ids; /* optional */
    struct vs_proto_file_ref *file_refs;
    size_t n_file_refs;
};

struct vs_proto_result {
    const char *name;
    const char *wu_name;
    double report_deadline;
    const char *platform;
    int version_num;
    const char *plan_class; /* written even when empty ("" if NULL), as BOINC does */
    bool report_immediately;
    struct vs_proto_file_ref *file_refs;
    size_t n_file_refs;
};

struct vs_proto_reply {
    int scheduler_version; /* 0 = not sent */
    const char *master_url;
    const char *project_name;
    int64_t hostid; /* 0 = not sent; send only when creating a host record */
    /* User and host statistics, sent only when has_user_info. */
    bool has_user_info;
    int64_t userid;
    const char *user_name;
    double user_total_credit;
    double user_expavg_credit;
    double user_create_time;
    const char *team_name;                                          /* optional */
    int64_t teamid;                                                 /* 0 = not sent */
    double host_total_credit, host_expavg_credit, host_create_time; /* 0 = not sent */
    const char *host_venue;
    const char *email_hash;
    const char *cross_project_id;
    const char *external_cpid;
    double cpid_time;      /* 0 = not sent */
    double request_delay;  /* 0 = not sent */
    double next_rpc_delay; /* 0 = not sent */
    bool project_is_down;
    bool dont_use_dcf;
    bool send_full_workload;
    bool non_cpu_intensive;
    bool verify_files_on_app_start;
    bool ended;
    bool message_ack;
    /* BOINC-COMPAT: the legacy forms of no_rsc_apps (pre-7 clients) */
    bool no_cpu_apps, no_cuda_apps, no_ati_apps;
    /* volsched's: seed 000's "no work because of deadlines" flag (the server
     * had work but sent none, as no job's deadline could be met with the
     * host's queue). BOINC's client ignores it (an unknown element); the
     * volsched client marks the project latency-limited for request_delay. */
    bool vs_no_work_because_of_deadlines;
    const char **no_rsc_apps; /* "CPU", "NVIDIA", "ATI", "intel_gpu" */
    size_t n_no_rsc_apps;
    struct vs_proto_message *messages;
    size_t n_messages;
    const char *global_prefs;  /* verbatim <global_preferences>...</global_preferences> */
    const char *project_prefs; /* verbatim <project_preferences>...</project_preferences> */
    const char *code_sign_key; /* key text; send only if the request had none */
    const char *code_sign_key_signature; /* optional */
    struct vs_proto_app *apps;
    size_t n_apps;
    struct vs_proto_file_info *file_infos;
    size_t n_file_infos;
    struct vs_proto_app_version *app_versions;
    size_t n_app_versions;
    struct vs_proto_workunit *workunits;
    size_t n_workunits;
    struct vs_proto_result *results;
    size_t n_results;
    const char **result_acks;
    size_t n_result_acks;
    const char **result_aborts;
    size_t n_result_aborts;
    const char **result_aborts_if_not_started;
    size_t n_result_aborts_if_not_started;
    const char **delete_file_infos;
    size_t n_delete_file_infos;
    /* Trickle-downs, each a whole verbatim <msg_to_host>...</msg_to_host>
     * element (server side; written after delete_file_info; the client
     * side reads them from the reply XML itself, src/client/trickle.c). */
    const char **msgs_to_host;
    size_t n_msgs_to_host;
};

/*
 * Writes <scheduler_reply>...</scheduler_reply> (server side). Order:
 * project and user info, flags, keys, prefs, apps, file_infos, app_versions,
 * workunits, results, acks, aborts, deletes, messages. Returns 0 or VS_ELIMIT
 * from the buffer's cap, VS_EINVAL for a missing required name.
 */
VS_MUST_CHECK int vs_proto_reply_write(const struct vs_proto_reply *reply, struct vs_buf *out);

/*
 * Parses a scheduler reply (client side). Like the BOINC client, anything
 * before <scheduler_reply> is skipped and a missing </scheduler_reply> is an
 * error (VS_EPARSE). Strings and arrays live in arena.
 */
VS_MUST_CHECK int vs_proto_reply_parse(const char *body, size_t len, struct vs_arena *arena,
                                       struct vs_proto_reply *out, struct vs_proto_error *out_err);

/*
 * Parses a stored job document (server side): a workunit's xml_doc or a
 * result's xml_doc_in, which hold <file_info>s and a <workunit> or a
 * <result> in the reply's own shape, read as the content of a
 * <scheduler_reply> (vs_proto_reply_parse() of the document wrapped in one:
 * the reference). doc[0..len) need not be NUL-terminated; doc may be NULL
 * when len is 0. Strings and arrays live in arena.
 */
VS_MUST_CHECK int vs_proto_job_doc_parse(const char *doc, size_t len, struct vs_arena *arena,
                                         struct vs_proto_reply *out,
                                         struct vs_proto_error *out_err);

/*
 * The one-pass reader of stored job documents alone, for the feeder (each
 * job it caches has two): 0 with *out exactly as vs_proto_job_doc_parse()
 * fills it, or VS_EUNSUPPORTED (nothing in *out; arena may hold garbage)
 * for anything outside its subset: the request reader's subset of XML
 * (vs_proto_request_parse_direct()), top-level elements other than
 * <file_info>, <workunit> and <result>, text after the last element, any
 * limit or malformed value.
 */
VS_MUST_CHECK int vs_proto_job_doc_parse_direct(const char *doc, size_t len, struct vs_arena *arena,
                                                struct vs_proto_reply *out);

/* vs_proto_job_doc_parse_direct(), else vs_proto_job_doc_parse(): the latter's contract. */
VS_MUST_CHECK int vs_proto_job_doc_parse_fast(const char *doc, size_t len, struct vs_arena *arena,
                                              struct vs_proto_reply *out,
                                              struct vs_proto_error *out_err);

/* ================= upload handler (file_upload_handler) ================= */

enum vs_proto_upload_kind {
    VS_PROTO_UPLOAD_GET_FILE_SIZE = 1, /* <get_file_size>NAME</get_file_size> */
    VS_PROTO_UPLOAD_FILE = 2,          /* <file_upload> header, then raw bytes */
};

struct vs_proto_upload_request {
    enum vs_proto_upload_kind kind;
    int core_client_major_version;
    int core_client_minor_version;
    int core_client_release;
    const char *name;          /* file name (both kinds) */
    const char *xml_signature; /* FILE: the echoed upload certificate text ("" if empty) */
    double max_nbytes;         /* FILE: from the echoed file_info */
    int64_t nbytes;            /* FILE: the full file size */
    const char *md5_cksum;     /* FILE */
    int64_t offset;            /* FILE: first byte of the file carried in this body */
    size_t data_offset;        /* FILE: index in the body where the raw bytes start */
};

/*
 * Parses an upload handler POST body. For a file upload only the header is
 * parsed (at most VS_PROTO_MAX_UPLOAD_HEADER bytes, up to and including the
 * "<data>\n" line); the file bytes are body[data_offset .. len). Checks that
 * nbytes, offset and the name are sane (no "..", "/" or "%" in the name,
 * 0 <= offset <= nbytes, md5 32 hex digits). Returns 0, VS_EPARSE or VS_ELIMIT.
 */
VS_MUST_CHECK int vs_proto_upload_parse(const char *body, size_t len, struct vs_arena *arena,
                                        struct vs_proto_upload_request *out,
                                        struct vs_proto_error *out_err);

/* Client side: writes the header of either kind (for FILE, up to "<data>\n"). */
VS_MUST_CHECK int vs_proto_upload_write_header(const struct vs_proto_upload_request *req,
                                               struct vs_buf *out);

struct vs_proto_upload_reply {
    int status; /* BOINC-COMPAT: 0 ok, -1 permanent failure, other transient */
    bool has_file_size;
    int64_t file_size;   /* bytes the server has (get_file_size answers) */
    const char *message; /* optional */
};

/*
 * Writes <data_server_reply>. A status-0 answer to a size query must carry a
 * file size (the client loops otherwise): the caller sets has_file_size.
 */
VS_MUST_CHECK int vs_proto_upload_reply_write(const struct vs_proto_upload_reply *reply,
                                              struct vs_buf *out);
/* Client side. A reply without <status> parses with status 1 (transient), as BOINC does. */
VS_MUST_CHECK int vs_proto_upload_reply_parse(const char *body, size_t len, struct vs_arena *arena,
                                              struct vs_proto_upload_reply *out,
                                              struct vs_proto_error *out_err);

/* ================= master page ================= */

/*
 * Writes a small HTML master page with the scheduler link
 * (<link rel="boinc_scheduler" href="URL">, one per line, plus the old
 * <scheduler> form in a comment) and the project name as title.
 */
VS_MUST_CHECK int vs_proto_master_page_write(const char *project_name, const char *const *urls,
                                             size_t n_urls, struct vs_buf *out);
/*
 * Client side: finds the scheduler URLs in a master page the way the BOINC
 * client does (both forms, scanned as plain text, duplicates merged, at most
 * VS_PROTO_MAX_MASTER_URLS). Returns the count in *out_n (0 is not an error).
 */
VS_MUST_CHECK int vs_proto_master_urls_parse(const char *page, size_t len, struct vs_arena *arena,
                                             const char ***out_urls, size_t *out_n);

#endif
