/*
 * volsched serve: run a project's server. The HTTP front end (master page,
 * scheduler, downloads, uploads) runs on its own threads; the back-end
 * daemons (transitioner, validator, assimilator, file deleter) run on one
 * more thread; this thread runs the feeder (job cache refill) and catalog
 * reloads in a loop until SIGINT or SIGTERM. With --only NAME it runs that
 * one daemon alone, without HTTP (for operators who spread the daemons over
 * processes or machines).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_util.h"
#include "cmd.h"
#include "serve_proc.h"
#include "volsched/acct.h"
#include "volsched/alloc.h"
#include "volsched/config.h"
#include "volsched/daemons.h"
#include "volsched/h_upload.h"
#include "volsched/http.h"
#include "volsched/layout.h"
#include "volsched/log.h"
#include "volsched/ops_pages.h"
#include "volsched/sched.h"
#include "volsched/store.h"
#include "volsched/store_project.h"
#include "volsched/str.h"
#include "volsched/submit.h"
#include "volsched/submit_tail.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched serve [--project DIR] [--listen HOST:PORT] [--store URL]\n"
               "                      [--threads N] [--cache-slots N] [--max-body BYTES]\n"
               "                      [--max-upload BYTES] [--daemon-interval MS]\n"
               "                      [--daemons all|none|NAME,...] [--mod N I]\n"
               "                      [--log-level error|warn|info|debug] [--foreground]\n"
               "       volsched serve --only transitioner|validator|assimilator|file_deleter|\n"
               "                             locality_gen|locality_ws\n"
               "                      [--project DIR] [--store URL] [--daemon-interval MS]\n"
               "                      [--mod N I]\n"
               "\n"
               "Serves the project in DIR (default: the current directory): the master page at\n"
               "the path of its master URL, the scheduler (<cgi_url>cgi), file downloads, the\n"
               "file upload handler and get_project_config.php. Runs the job cache feeder and\n"
               "the daemons (transitioner, validator, assimilator, file deleter, and the\n"
               "locality generator and working-set manager when config.xml sets them up:\n"
               "docs/locality.md) beside it.\n"
               "With --only, runs that one daemon alone, without HTTP. Also serves\n"
               "server_status.php, /metrics and the operator's dashboard /ops/.\n"
               "\n"
               "Logs go to DIR/log/serve.log and DIR/log/<daemon>.log (--only: that daemon's\n"
               "log). It holds DIR/run/serve.pid (or run/<daemon>.pid) locked: a second serve\n"
               "on the project refuses to start. SIGTERM/SIGINT: stop accepting, answer the\n"
               "requests in flight, commit, exit. SIGHUP: reopen the logs, reload config.xml\n"
               "(a bad one is refused and the old one kept). stop_sched / stop_daemons files\n"
               "in DIR pause the scheduler / the daemons (see `volsched stop`).\n"
               "\n"
               "  --project DIR      project directory made by `volsched init`\n"
               "  --listen H:P       address to listen on (default 127.0.0.1:8080)\n"
               "  --store URL        store URL instead of config.xml's <store_url>\n"
               "  --threads N        HTTP worker threads (default 16)\n"
               "  --cache-slots N    job cache size (default 1000)\n"
               "  --max-body BYTES   largest scheduler request body accepted (default 4 MiB)\n"
               "  --max-upload BYTES largest upload request (default 64 MiB)\n"
               "  --only NAME        run only this daemon, no HTTP\n"
               "  --daemons LIST     daemons run beside HTTP (default all; none, or names\n"
               "                     separated by commas, when others run them with --only)\n"
               "  --daemon-interval MS  daemons' sleep when idle (default 1000)\n"
               "  --mod N I          BOINC's sharding, for several instances on one store:\n"
               "                     the transitioner, validator, assimilator and file\n"
               "                     deleter of this instance handle only the ids with\n"
               "                     id %% N == I (N >= 2, 0 <= I < N; run N instances, one\n"
               "                     per I), instead of one leader per daemon (the default;\n"
               "                     docs/scale-out.md). The locality daemons and the\n"
               "                     trickle handler keep their leader.\n"
               "  --log-level L      default info\n"
               "  --foreground       also copy every log line to stderr\n");
}

static int parse_listen(const char *s, char *host, size_t hsize, uint16_t *port)
{
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s)
        return VS_EINVAL;
    size_t hl = (size_t)(colon - s);
    if (s[0] == '[' && hl >= 2 && s[hl - 1] == ']') { /* [::1]:8080 */
        s++;
        hl -= 2;
    }
    if (hl >= hsize)
        return VS_EINVAL;
    memcpy(host, s, hl);
    host[hl] = '\0';
    int64_t p;
    if (vs_parse_int64(colon + 1, &p) != 0 || p < 0 || p > 65535)
        return VS_EINVAL;
    *port = (uint16_t)p;
    return 0;
}

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* "all", "none" or a comma-separated list of daemon names. */
static int parse_daemons(const char *s, unsigned *out_mask)
{
    if (strcmp(s, "all") == 0) {
        *out_mask = VS_DAEMON_ALL;
        return 0;
    }
    if (strcmp(s, "none") == 0) {
        *out_mask = 0;
        return 0;
    }
    unsigned mask = 0;
    char name[64];
    for (const char *p = s; *p;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (n == 0 || n >= sizeof(name))
            return VS_EINVAL;
        memcpy(name, p, n);
        name[n] = '\0';
        unsigned bit = vs_daemon_by_name(name);
        if (bit == 0)
            return VS_EINVAL;
        mask |= bit;
        p += n;
        if (*p == ',')
            p++;
    }
    if (mask == 0)
        return VS_EINVAL;
    *out_mask = mask;
    return 0;
}

/* The process's loggers (one serve per process: main() runs one command). */
static struct serve_logs g_logs;

/*
 * SIGHUP: reads config.xml again; on success takes the new rules into the
 * scheduler and the daemons and *cfg, else logs why and keeps the old.
 */
static void reload_config(struct vs_project_config *cfg, struct vs_log *log, struct vs_sched *sched,
                          struct vs_daemons_runner *daemons)
{
    struct vs_project_config *ncfg = vs_xmalloc(sizeof(*ncfg));
    struct vs_config_error cerr;
    memset(&cerr, 0, sizeof(cerr));
    int rc = vs_project_config_load(cfg->dir, log, ncfg, &cerr);
    if (rc != 0) {
        /* file:line: reason (line 0: the file as a whole, e.g. unreadable) */
        char where[600];
        vs_config_error_format(&cerr, where, sizeof(where));
        VS_LOG(log, VS_LOG_ERROR, "config reload refused, keeping the running config: %s", where);
        vs_free(ncfg);
        return;
    }
    /* What the running server cannot change under its feet. */
    memcpy(ncfg->store_url, cfg->store_url, sizeof(cfg->store_url));
    if (strcmp(ncfg->master_url, cfg->master_url) != 0 || strcmp(ncfg->cgi_url, cfg->cgi_url) ||
        strcmp(ncfg->download_url, cfg->download_url) || strcmp(ncfg->upload_url, cfg->upload_url))
        VS_LOG(log, VS_LOG_WARN, "config reload: changed URLs take effect after a restart");
    if (strcmp(ncfg->https_cert, cfg->https_cert) || strcmp(ncfg->https_key, cfg->https_key) ||
        ncfg->https_port != cfg->https_port || ncfg->https_only != cfg->https_only ||
        strcmp(ncfg->ops_listen, cfg->ops_listen))
        VS_LOG(log, VS_LOG_WARN,
               "config reload: changed listeners (https_*, ops_listen) take effect after a "
               "restart");
    if (sched)
        vs_sched_set_config(sched, ncfg);
    if (daemons)
        vs_daemons_runner_set_config(daemons, ncfg);
    *cfg = *ncfg;
    vs_free(ncfg);
    VS_LOG(log, VS_LOG_INFO, "config.xml reloaded");
}

/* The scheduler behind HTTP, timed for the latency histogram. */
struct timed_sched {
    struct vs_sched *sched;
    struct vs_ops_metrics *metrics;
};

static int timed_sched_http(void *ctx, const char *body, size_t len, const char *peer,
                            struct vs_buf *out)
{
    struct timed_sched *t = ctx;
    double t0 = mono_now();
    int status = vs_sched_http(t->sched, body, len, peer, out);
    vs_ops_metrics_latency(t->metrics, mono_now() - t0);
    return status;
}

/* The pages: get_output.php (remote submission's outputs), else the
 * account RPCs and the volunteers' site, which hand the rest to the
 * operator's and status pages. */
struct pages_chain {
    struct vs_submit *submit;
    struct vs_acct *acct;
};

static int chained_pages(void *ctx, const struct vs_http_get *req, struct vs_http_page *out)
{
    struct pages_chain *pc = ctx;
    if (!req->ops_listener && vs_str_has_suffix(req->path, "/get_output.php"))
        return vs_submit_get(pc->submit, req, out);
    return vs_acct_http(pc->acct, req, out);
}

/* SIGHUP in `serve --only`: reload config.xml and reopen the logs. */
static void only_tick(void *ctx)
{
    struct vs_project_config *cfg = ctx;
    if (!serve_hup)
        return;
    serve_hup = 0;
    reload_config(cfg, &g_logs.lg[0], NULL, NULL);
    serve_logs_reopen(&g_logs);
}

/* --only NAME: one daemon in this process's main thread, back to back while
 * it finds work and every interval_ms when idle (as BOINC's daemons). */
static int run_only(struct vs_project_config *cfg, unsigned which, int interval_ms, int mod_n,
                    int mod_i, struct vs_log *log)
{
    struct vs_cli_loop_hooks hooks = {.stop = &serve_stop,
                                      .wake = &serve_hup,
                                      .tick = only_tick,
                                      .ctx = cfg,
                                      .honour_pause = true,
                                      .log_passes = true,
                                      .mod_n = mod_n,
                                      .mod_i = mod_i};
    return vs_cli_run_daemons_hooked(cfg, which, interval_ms, false, log, &hooks);
}

int vs_cmd_serve(int argc, char **argv)
{
    const char *project = ".", *listen = "127.0.0.1:8080", *store_url = NULL;
    const char *only = NULL;
    unsigned daemons_mask = VS_DAEMON_ALL;
    int64_t threads = 16, slots = 1000, max_body = 0, max_upload = 0, interval_ms = 1000;
    int64_t mod_n = 0, mod_i = 0;
    enum vs_log_level level = VS_LOG_INFO;
    bool foreground = false;
    static const struct option opts[] = {{"foreground", no_argument, NULL, 'F'},
                                         {"project", required_argument, NULL, 'p'},
                                         {"listen", required_argument, NULL, 'l'},
                                         {"store", required_argument, NULL, 's'},
                                         {"threads", required_argument, NULL, 't'},
                                         {"cache-slots", required_argument, NULL, 'c'},
                                         {"max-body", required_argument, NULL, 'b'},
                                         {"log-level", required_argument, NULL, 'L'},
                                         {"max-upload", required_argument, NULL, 'u'},
                                         {"only", required_argument, NULL, 'o'},
                                         {"daemon-interval", required_argument, NULL, 'i'},
                                         {"daemons", required_argument, NULL, 'd'},
                                         {"mod", required_argument, NULL, 'm'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int bad = 0;
        switch (ch) {
        case 'p':
            project = optarg;
            break;
        case 'l':
            listen = optarg;
            break;
        case 's':
            store_url = optarg;
            break;
        case 't':
            bad = vs_parse_int64(optarg, &threads) != 0 || threads < 1 || threads > 256;
            break;
        case 'c':
            bad = vs_parse_int64(optarg, &slots) != 0 || slots < 1 || slots > 1000000;
            break;
        case 'b':
            bad = vs_parse_int64(optarg, &max_body) != 0 || max_body < 1024;
            break;
        case 'L':
            bad = vs_log_level_parse(optarg, &level) != 0;
            break;
        case 'u':
            bad = vs_parse_int64(optarg, &max_upload) != 0 || max_upload < 4096 ||
                  max_upload > ((int64_t)1 << 32);
            break;
        case 'o':
            only = optarg;
            bad = vs_daemon_by_name(optarg) == 0;
            break;
        case 'd':
            bad = parse_daemons(optarg, &daemons_mask) != 0;
            break;
        case 'i':
            bad = vs_parse_int64(optarg, &interval_ms) != 0 || interval_ms < 1 ||
                  interval_ms > 3600000;
            break;
        case 'm':
            /* Two values: N in optarg, I the next word. */
            if (optind >= argc || vs_parse_int64(optarg, &mod_n) != 0 ||
                vs_parse_int64(argv[optind], &mod_i) != 0 || mod_n < 2 || mod_n > 1000000 ||
                mod_i < 0 || mod_i >= mod_n) {
                fprintf(stderr,
                        "volsched serve: --mod takes two numbers N I (this instance's daemons "
                        "handle the ids with id %% N == I): N from 2 to 1000000, I from 0 to "
                        "N-1; got '%s%s%s'\n",
                        optarg, optind < argc ? " " : "", optind < argc ? argv[optind] : "");
                return VS_EXIT_USAGE;
            }
            optind++;
            break;
        case 'F':
            foreground = true;
            break;
        case 'h':
            usage(stdout);
            return VS_EXIT_OK;
        default:
            fprintf(stderr, "volsched serve: unknown option '%s'\n", argv[optind - 1]);
            usage(stderr);
            return VS_EXIT_USAGE;
        }
        if (bad) {
            fprintf(stderr, "volsched serve: bad value '%s' for %s\n", optarg, argv[optind - 1]);
            return VS_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "volsched serve: unexpected argument '%s'\n", argv[optind]);
        return VS_EXIT_USAGE;
    }
    char host[256];
    uint16_t port = 0;
    if (parse_listen(listen, host, sizeof(host), &port) != 0) {
        fprintf(stderr, "volsched serve: --listen wants HOST:PORT, got '%s'\n", listen);
        return VS_EXIT_USAGE;
    }

    /* Until the log files are open, problems go to stderr. */
    struct vs_log early;
    vs_log_init(&early, level, stderr, "serve");
    struct vs_project_config cfg;
    /* config.xml and config_aux.xml: a bad one stops the start with file,
     * line and reason; unknown tags are logged as warnings. */
    if (!vs_cli_load_project("serve", project, &early, &cfg))
        return VS_EXIT_USAGE;
    int rc = 0;
    if (store_url && vs_strlcpy(cfg.store_url, store_url, sizeof(cfg.store_url)) != 0) {
        fprintf(stderr, "volsched serve: --store URL too long\n");
        return VS_EXIT_USAGE;
    }
    char sched_url[VS_URL_MAX];
    if (vs_project_scheduler_url(&cfg, sched_url, sizeof(sched_url)) != 0) {
        fprintf(stderr, "volsched serve: bad <cgi_url> in config.xml\n");
        return VS_EXIT_USAGE;
    }
    if (!serve_check_writable(&cfg))
        return VS_EXIT_FAIL;
    const char *name = only ? only : "serve";
    unsigned log_mask = only ? vs_daemon_by_name(only) : daemons_mask;
    struct vs_pidlock *lock = serve_lock(cfg.dir, name);
    if (!lock)
        return VS_EXIT_FAIL;
    struct vs_ops_metrics *metrics = vs_ops_metrics_create();
    if (serve_logs_open(&g_logs, cfg.dir, name, only ? 0 : log_mask, level, foreground, metrics) !=
        0) {
        vs_pidlock_release(lock);
        vs_ops_metrics_destroy(metrics);
        return VS_EXIT_FAIL;
    }
    struct vs_log *log = &g_logs.lg[0];
    serve_install_signals();
    int exit_code = VS_EXIT_FAIL;
    if (only) {
        exit_code =
            run_only(&cfg, vs_daemon_by_name(only), (int)interval_ms, (int)mod_n, (int)mod_i, log);
        goto release;
    }

    struct vs_sched_options so = {.cache_slots = (size_t)slots};
    struct vs_sched *sched = NULL;
    struct vs_http *http = NULL;
    struct vs_upload *upload = NULL;
    struct vs_daemons_runner *daemons = NULL;
    struct vs_ops_pages *pages = NULL;
    struct vs_acct *acct = NULL;
    struct vs_submit *submit = NULL;
    struct vs_sp_tail_params tp;
    vs_sp_tail_defaults(&tp);
    tp.enabled = cfg.batch_tail_acceleration;
    struct vs_submit_tail *tail = vs_submit_tail_create(&tp);
    rc = vs_sched_create(&cfg, log, &so, &sched);
    if (rc != 0)
        goto out;
    rc = vs_upload_create(&cfg, log, &upload);
    if (rc != 0)
        goto out;
    rc = vs_submit_create(&cfg, log, &submit);
    if (rc != 0)
        goto out;
    vs_sched_set_tail(sched, tail);
    struct vs_daemons_runner_opts dopts = {.which = daemons_mask,
                                           .interval_ms = (int)interval_ms,
                                           .log = log,
                                           .metrics = metrics,
                                           .mod_n = (int)mod_n,
                                           .mod_i = (int)mod_i};
    if (mod_n > 1)
        VS_LOG(log, VS_LOG_INFO,
               "daemons: --mod %lld %lld: the transitioner, validator, assimilator and file "
               "deleter here handle the ids with id %% %lld == %lld (no leader lock)",
               (long long)mod_n, (long long)mod_i, (long long)mod_n, (long long)mod_i);
    for (unsigned i = 0; i < VS_NDAEMONS; i++)
        dopts.logs[i] = g_logs.file[1 + i] ? &g_logs.lg[1 + i] : NULL;
    rc = daemons_mask ? vs_daemons_runner_start(&cfg, &dopts, &daemons) : 0;
    if (rc != 0) {
        VS_LOG(log, VS_LOG_ERROR, "cannot start the daemons: %s", vs_strerror(rc));
        goto out;
    }
    struct vs_ops_sources osrc = {.sched = sched, .upload = upload, .metrics = metrics, .log = log};
    rc = vs_ops_pages_create(&cfg, &osrc, &pages);
    if (rc != 0)
        goto out;
    /* The account RPCs first, then the operator's pages. */
    rc = vs_acct_create(&cfg, log, vs_ops_pages_http, pages, &acct);
    if (rc != 0)
        goto out;
    vs_acct_set_sched(acct, sched);
    size_t added = 0;
    if (vs_sched_refill(sched, &added) != 0)
        VS_LOG(log, VS_LOG_WARN, "initial job cache fill failed");
    bool maint = vs_ctl_file_exists(cfg.dir, "stop_sched");
    vs_sched_set_maintenance(sched, maint);

    struct timed_sched ts_sched = {.sched = sched, .metrics = metrics};
    struct vs_ip_prefix proxies[VS_CONFIG_LIST_MAX];
    size_t nproxies = 0;
    for (int i = 0; i < cfg.trusted_proxy.n && i < VS_CONFIG_LIST_MAX; i++) {
        if (vs_ip_prefix_parse(cfg.trusted_proxy.v[i], &proxies[nproxies]) != 0) {
            VS_LOG(log, VS_LOG_ERROR,
                   "config.xml: <trusted_proxy> '%s' is not an address or prefix",
                   cfg.trusted_proxy.v[i]);
            rc = VS_ECONFIG;
            goto out;
        }
        nproxies++;
    }
    char ops_host[VS_NAME_MAX] = "";
    uint16_t ops_port = 0;
    if (cfg.ops_listen[0] && parse_listen(cfg.ops_listen, ops_host, sizeof(ops_host), &ops_port)) {
        VS_LOG(log, VS_LOG_ERROR,
               "config.xml: <ops_listen> wants HOST:PORT (e.g. 127.0.0.1:8081), got '%s'",
               cfg.ops_listen);
        rc = VS_ECONFIG;
        goto out;
    }
    char stats_dir[VS_PATH_MAX + 16];
    snprintf(stats_dir, sizeof(stats_dir), "%s/stats", cfg.dir);
    struct pages_chain chain = {.submit = submit, .acct = acct};
    struct vs_http_config hc = {
        .master_url = cfg.master_url,
        .sched_url = sched_url,
        .download_url = cfg.download_url,
        .upload_url = cfg.upload_url,
        .project_name = cfg.long_name[0] ? cfg.long_name : NULL,
        .download_dir = cfg.download_dir,
        .stats_dir = stats_dir,
        .max_body = (size_t)max_body,
        .max_upload_body = (size_t)max_upload,
        .threads = (unsigned)threads,
        .max_connections = (unsigned)cfg.http_max_connections,
        .max_per_address = (unsigned)cfg.http_max_per_address,
        .head_timeout = (unsigned)cfg.http_head_timeout,
        .idle_timeout = (unsigned)cfg.http_idle_timeout,
        .body_min_rate = (unsigned)cfg.http_body_min_rate,
        .trusted_proxies = proxies,
        .ntrusted_proxies = nproxies,
        .log = log,
        .sched = timed_sched_http,
        .sched_ctx = &ts_sched,
        .upload = vs_upload_http,
        .upload_stream = &vs_upload_stream_ops,
        .upload_ctx = upload,
        .api = vs_submit_http,
        .max_api_body = (size_t)cfg.submit_max_request_mb * 1024u * 1024u,
        .api_ctx = submit,
        .pages = chained_pages,
        .pages_ctx = &chain,
        .project_config_xml = vs_acct_project_config_xml(acct),
        .tls_cert_file = cfg.https_cert[0] ? cfg.https_cert : NULL,
        .tls_key_file = cfg.https_key[0] ? cfg.https_key : NULL,
        .https_port = (uint16_t)cfg.https_port,
        .https_only = cfg.https_only,
        .ops_host = ops_host[0] ? ops_host : NULL,
        .ops_port = ops_port,
    };
    rc = vs_http_start(&hc, host, port, &http);
    if (rc != 0)
        goto out;
    vs_ops_pages_set_http(pages, http);

    struct vs_serve_state state = {.pid = (int64_t)getpid(),
                                   .started = (int64_t)time(NULL),
                                   .cache_slots = slots,
                                   .daemons = daemons_mask};
    snprintf(state.listen, sizeof(state.listen), "%s:%u", host, (unsigned)vs_http_port(http));
    VS_LOG(log, VS_LOG_INFO, "serving %s on %s:%u (scheduler %s), %zu jobs cached%s",
           cfg.master_url, host, (unsigned)vs_http_port(http), sched_url, added,
           maint ? "; stop_sched exists: down for maintenance" : "");

    if (vs_http_https_port(http))
        VS_LOG(log, VS_LOG_INFO, "https on %s:%u; the master page advertises %s%s", host,
               (unsigned)vs_http_https_port(http), vs_http_https_sched_url(http),
               cfg.https_only ? "; https_only: plain http serves only the master page, "
                                "get_project_config.php and downloads"
                              : "");
    if (vs_http_ops_port(http))
        VS_LOG(log, VS_LOG_INFO, "operator's listener on %s:%u: /ops/ and /metrics only there",
               ops_host, (unsigned)vs_http_ops_port(http));

    double t_cat = mono_now(), t_stats = mono_now(), t_state = 0, t_sample = 0, t_expire = 0;
    uint64_t last_rpcs = 0;
    while (!serve_stop) {
        double now = mono_now();
        if (serve_hup) {
            serve_hup = 0;
            serve_logs_reopen(&g_logs);
            reload_config(&cfg, log, sched, daemons);
        }
        if (serve_usr2) {
            serve_usr2 = 0;
            VS_LOG(log, VS_LOG_INFO, "SIGUSR2 ignored (SIGHUP reloads, SIGTERM stops)");
        }
        bool m = vs_ctl_file_exists(cfg.dir, "stop_sched");
        if (m != maint) {
            maint = m;
            vs_sched_set_maintenance(sched, m);
            VS_LOG(log, VS_LOG_INFO,
                   m ? "stop_sched exists: scheduler down for maintenance"
                     : "stop_sched removed: scheduler back");
        }
        if (now - t_cat >= 10.0) {
            t_cat = now;
            if (vs_sched_reload_catalog(sched) != 0)
                VS_LOG(log, VS_LOG_WARN, "reloading apps failed; keeping the old ones");
        }
        if (vs_sched_refill(sched, &added) != 0)
            VS_LOG(log, VS_LOG_WARN, "job cache refill failed");
        if (now - t_expire >= 60.0) {
            t_expire = now;
            if (vs_submit_expire(submit, (double)time(NULL)) < 0)
                VS_LOG(log, VS_LOG_WARN, "retiring expired batches failed");
            if (vs_submit_tail_tick(submit, tail, (int64_t)time(NULL)) != 0)
                VS_LOG(log, VS_LOG_WARN, "batch tail acceleration: the pass failed");
        }
        struct vs_sched_stats st;
        vs_sched_get_stats(sched, &st);
        if (now - t_sample >= 1.0) {
            t_sample = now;
            uint64_t cum[VS_SERIES__COUNT] = {0};
            cum[VS_SERIES_RPCS] = st.rpcs;
            cum[VS_SERIES_SENT] = st.jobs_sent;
            cum[VS_SERIES_RETURNED] = st.reports;
            vs_ops_metrics_sample(metrics, (int64_t)time(NULL), cum);
        }
        if (now - t_state >= 2.0) {
            t_state = now;
            state.updated = (int64_t)time(NULL);
            state.cache_present = (int64_t)st.cache_present;
            state.rpcs = (int64_t)st.rpcs;
            state.jobs_sent = (int64_t)st.jobs_sent;
            if (vs_serve_state_write(cfg.dir, &state) != 0)
                VS_LOG(log, VS_LOG_WARN, "cannot write run/serve.state");
        }
        if (serve_usr1 || (now - t_stats >= 60.0 && st.rpcs != last_rpcs)) {
            serve_usr1 = 0;
            t_stats = now;
            VS_LOG(log, VS_LOG_INFO,
                   "stats: %llu scheduler RPCs (%llu refused), %llu jobs sent, %llu reports, "
                   "%zu of %zu cached",
                   (unsigned long long)st.rpcs, (unsigned long long)st.bad_rpcs,
                   (unsigned long long)st.jobs_sent, (unsigned long long)st.reports,
                   st.cache_present, st.cache_slots);
            last_rpcs = st.rpcs;
        }
        struct timespec tsl = {.tv_sec = 0, .tv_nsec = 50 * 1000 * 1000};
        while (nanosleep(&tsl, &tsl) != 0 && errno == EINTR && !serve_stop) {
        }
    }
    /* Drain: no new connections; the requests in flight are answered (their
     * commits are durable before their replies leave). */
    VS_LOG(log, VS_LOG_INFO, "stopping: draining requests in flight");
    unsigned left = vs_http_drain(http, 10000);
    if (left)
        VS_LOG(log, VS_LOG_WARN, "%u requests still in flight after 10 s; closing them", left);
    exit_code = VS_EXIT_OK;
out:
    vs_http_stop(http);
    vs_acct_destroy(acct);
    vs_ops_pages_destroy(pages);
    vs_daemons_runner_stop(daemons);
    vs_upload_destroy(upload);
    vs_submit_destroy(submit);
    vs_sched_destroy(sched);
    vs_submit_tail_destroy(tail);
    if (exit_code == VS_EXIT_OK)
        VS_LOG(log, VS_LOG_INFO, "stopped");
    else
        VS_LOG(log, VS_LOG_ERROR, "could not start: %s", vs_strerror(rc));
release:
    serve_logs_close(&g_logs);
    vs_ops_metrics_destroy(metrics);
    vs_pidlock_release(lock);
    return exit_code;
}
