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

#include "cli_util.h"
#include "cmd.h"
#include "server/daemons.h"
#include "server/h_upload.h"
#include "server/http.h"
#include "server/sched.h"
#include "store/store.h"
#include "store/store_project.h"
#include "volsched/config.h"
#include "volsched/layout.h"
#include "volsched/log.h"
#include "volsched/str.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched serve [--project DIR] [--listen HOST:PORT] [--store URL]\n"
               "                      [--threads N] [--cache-slots N] [--max-body BYTES]\n"
               "                      [--max-upload BYTES] [--daemon-interval MS]\n"
               "                      [--daemons all|none|NAME,...]\n"
               "                      [--log-level error|warn|info|debug]\n"
               "       volsched serve --only transitioner|validator|assimilator|file_deleter\n"
               "                      [--project DIR] [--store URL] [--daemon-interval MS]\n"
               "\n"
               "Serves the project in DIR (default: the current directory): the master page at\n"
               "the path of its master URL, the scheduler (<cgi_url>cgi), file downloads, the\n"
               "file upload handler and get_project_config.php. Runs the job cache feeder and\n"
               "the daemons (transitioner, validator, assimilator, file deleter) beside it.\n"
               "With --only, runs that one daemon alone, without HTTP. Stops cleanly on\n"
               "SIGINT/SIGTERM.\n"
               "\n"
               "  --project DIR      project directory made by `volsched init`\n"
               "  --listen H:P       address to listen on (default 127.0.0.1:8080)\n"
               "  --store URL        store URL instead of config.xml's <store_url>\n"
               "  --threads N        HTTP worker threads (default 8)\n"
               "  --cache-slots N    job cache size (default 1000)\n"
               "  --max-body BYTES   largest scheduler request body accepted (default 4 MiB)\n"
               "  --max-upload BYTES largest upload request (default 64 MiB)\n"
               "  --only NAME        run only this daemon, no HTTP\n"
               "  --daemons LIST     daemons run beside HTTP (default all; none, or names\n"
               "                     separated by commas, when others run them with --only)\n"
               "  --daemon-interval MS  daemons' sleep when idle (default 1000)\n"
               "  --log-level L      default info\n");
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

static void install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* --only NAME: one daemon in this process's main thread, back to back while
 * it finds work and every interval_ms when idle (as BOINC's daemons). */
static int run_only(const struct vs_project_config *cfg, unsigned which, int interval_ms,
                    struct vs_log *log)
{
    struct vs_store *st = NULL;
    int rc = vs_project_store_open(cfg, false, log, &st);
    if (rc != 0) {
        VS_LOG(log, VS_LOG_ERROR, "cannot open store: %s", vs_strerror(rc));
        return VS_EXIT_FAIL;
    }
    install_signals();
    VS_LOG(log, VS_LOG_INFO, "running %s alone on %s", vs_daemon_name(which), cfg->store_url);
    fflush(stderr);
    uint64_t total = 0;
    while (!stop_requested) {
        int n = vs_daemons_run_once(st, cfg, (int64_t)time(NULL), which, log, NULL);
        if (n > 0) {
            total += (uint64_t)n;
            continue;
        }
        struct timespec ts = {.tv_sec = interval_ms / 1000,
                              .tv_nsec = (long)(interval_ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !stop_requested) {
        }
    }
    VS_LOG(log, VS_LOG_INFO, "%s stopped after %llu items", vs_daemon_name(which),
           (unsigned long long)total);
    vs_store_close(st);
    return VS_EXIT_OK;
}

int vs_cmd_serve(int argc, char **argv)
{
    const char *project = ".", *listen = "127.0.0.1:8080", *store_url = NULL;
    const char *only = NULL;
    unsigned daemons_mask = VS_DAEMON_ALL;
    int64_t threads = 8, slots = 1000, max_body = 0, max_upload = 0, interval_ms = 1000;
    enum vs_log_level level = VS_LOG_INFO;
    static const struct option opts[] = {{"project", required_argument, NULL, 'p'},
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

    struct vs_log lg;
    vs_log_init(&lg, level, stderr, "serve");
    struct vs_log *log = &lg;
    struct vs_project_config cfg;
    /* config.xml and config_aux.xml: a bad one stops the start with file,
     * line and reason; unknown tags are logged as warnings. */
    if (!vs_cli_load_project("serve", project, log, &cfg))
        return VS_EXIT_USAGE;
    if (store_url && vs_strlcpy(cfg.store_url, store_url, sizeof(cfg.store_url)) != 0) {
        fprintf(stderr, "volsched serve: --store URL too long\n");
        return VS_EXIT_USAGE;
    }
    char sched_url[VS_URL_MAX];
    if (vs_project_scheduler_url(&cfg, sched_url, sizeof(sched_url)) != 0) {
        fprintf(stderr, "volsched serve: bad <cgi_url> in config.xml\n");
        return VS_EXIT_USAGE;
    }

    if (only)
        return run_only(&cfg, vs_daemon_by_name(only), (int)interval_ms, log);

    struct vs_sched_options so = {.cache_slots = (size_t)slots};
    struct vs_sched *sched = NULL;
    struct vs_http *http = NULL;
    struct vs_upload *upload = NULL;
    struct vs_daemons_runner *daemons = NULL;
    int exit_code = VS_EXIT_FAIL;
    int rc = vs_sched_create(&cfg, log, &so, &sched);
    if (rc != 0)
        goto out;
    rc = vs_upload_create(&cfg, log, &upload);
    if (rc != 0)
        goto out;
    rc = daemons_mask ? vs_daemons_runner_start(&cfg, daemons_mask, (int)interval_ms, log, &daemons)
                      : 0;
    if (rc != 0) {
        VS_LOG(log, VS_LOG_ERROR, "cannot start the daemons: %s", vs_strerror(rc));
        goto out;
    }
    size_t added = 0;
    if (vs_sched_refill(sched, &added) != 0)
        VS_LOG(log, VS_LOG_WARN, "initial job cache fill failed");

    struct vs_http_config hc = {
        .master_url = cfg.master_url,
        .sched_url = sched_url,
        .download_url = cfg.download_url,
        .upload_url = cfg.upload_url,
        .project_name = cfg.long_name[0] ? cfg.long_name : NULL,
        .download_dir = cfg.download_dir,
        .max_body = (size_t)max_body,
        .max_upload_body = (size_t)max_upload,
        .threads = (unsigned)threads,
        .log = log,
        .sched = vs_sched_http,
        .sched_ctx = sched,
        .upload = vs_upload_http,
        .upload_stream = &vs_upload_stream_ops,
        .upload_ctx = upload,
        .tls_cert_file = cfg.https_cert[0] ? cfg.https_cert : NULL,
        .tls_key_file = cfg.https_key[0] ? cfg.https_key : NULL,
        .https_port = (uint16_t)cfg.https_port,
    };
    rc = vs_http_start(&hc, host, port, &http);
    if (rc != 0)
        goto out;

    install_signals();

    VS_LOG(log, VS_LOG_INFO, "serving %s on %s:%u (scheduler %s), %zu jobs cached", cfg.master_url,
           host, (unsigned)vs_http_port(http), sched_url, added);
    if (vs_http_https_port(http))
        VS_LOG(log, VS_LOG_INFO, "https on %s:%u; the master page advertises %s", host,
               (unsigned)vs_http_https_port(http), vs_http_https_sched_url(http));
    fflush(stderr);

    double t_cat = mono_now(), t_stats = mono_now();
    uint64_t last_rpcs = 0;
    while (!stop_requested) {
        double now = mono_now();
        if (now - t_cat >= 10.0) {
            t_cat = now;
            if (vs_sched_reload_catalog(sched) != 0)
                VS_LOG(log, VS_LOG_WARN, "reloading apps failed; keeping the old ones");
        }
        if (vs_sched_refill(sched, &added) != 0)
            VS_LOG(log, VS_LOG_WARN, "job cache refill failed");
        if (now - t_stats >= 60.0) {
            t_stats = now;
            struct vs_sched_stats st;
            vs_sched_get_stats(sched, &st);
            if (st.rpcs != last_rpcs)
                VS_LOG(log, VS_LOG_INFO,
                       "stats: %llu scheduler RPCs (%llu refused), %llu jobs sent, %zu cached",
                       (unsigned long long)st.rpcs, (unsigned long long)st.bad_rpcs,
                       (unsigned long long)st.jobs_sent, st.cache_present);
            last_rpcs = st.rpcs;
        }
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 50 * 1000 * 1000};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !stop_requested) {
        }
    }
    VS_LOG(log, VS_LOG_INFO, "stopping");
    exit_code = VS_EXIT_OK;
out:
    vs_http_stop(http);
    vs_daemons_runner_stop(daemons);
    vs_upload_destroy(upload);
    vs_sched_destroy(sched);
    if (exit_code == VS_EXIT_OK)
        VS_LOG(log, VS_LOG_INFO, "stopped");
    return exit_code;
}
