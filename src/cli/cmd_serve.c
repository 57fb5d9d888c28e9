/*
 * volsched serve: run a project's server. The HTTP front end (master page,
 * scheduler, downloads) runs on its own threads; this thread runs the
 * feeder (job cache refill), the minimal transitioner and catalog reloads in
 * a loop until SIGINT or SIGTERM.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "server/http.h"
#include "server/sched.h"
#include "server/transitioner.h"
#include "store/project.h"
#include "volsched/config.h"
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
               "                      [--log-level error|warn|info|debug]\n"
               "\n"
               "Serves the project in DIR (default: the current directory): the master page at\n"
               "the path of its master URL, the scheduler (<cgi_url>cgi), file downloads and\n"
               "get_project_config.php. Runs the job cache feeder and the transitioner beside\n"
               "it. Stops cleanly on SIGINT/SIGTERM.\n"
               "\n"
               "  --project DIR      project directory made by `volsched init`\n"
               "  --listen H:P       address to listen on (default 127.0.0.1:8080)\n"
               "  --store URL        store URL instead of config.xml's <store_url>\n"
               "  --threads N        HTTP worker threads (default 8)\n"
               "  --cache-slots N    job cache size (default 1000)\n"
               "  --max-body BYTES   largest request body accepted (default 4 MiB)\n"
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

int vs_cmd_serve(int argc, char **argv)
{
    const char *project = ".", *listen = "127.0.0.1:8080", *store_url = NULL;
    int64_t threads = 8, slots = 1000, max_body = 0;
    enum vs_log_level level = VS_LOG_INFO;
    static const struct option opts[] = {{"project", required_argument, NULL, 'p'},
                                         {"listen", required_argument, NULL, 'l'},
                                         {"store", required_argument, NULL, 's'},
                                         {"threads", required_argument, NULL, 't'},
                                         {"cache-slots", required_argument, NULL, 'c'},
                                         {"max-body", required_argument, NULL, 'b'},
                                         {"log-level", required_argument, NULL, 'L'},
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
    struct vs_config_error cerr;
    memset(&cerr, 0, sizeof(cerr));
    int rc = vs_project_config_load_checked(project, log, &cfg, &cerr);
    if (rc != 0) {
        if (cerr.file[0]) {
            char where[600];
            vs_config_error_format(&cerr, where, sizeof(where));
            fprintf(stderr, "volsched serve: %s\n", where);
        } else {
            fprintf(stderr, "volsched serve: cannot load project %s: %s\n", project,
                    vs_strerror(rc));
        }
        return rc == -ENOMEM || rc == VS_ENOMEM ? VS_EXIT_FAIL : VS_EXIT_USAGE;
    }
    if (store_url && vs_strlcpy(cfg.store_url, store_url, sizeof(cfg.store_url)) != 0) {
        fprintf(stderr, "volsched serve: --store URL too long\n");
        return VS_EXIT_USAGE;
    }
    char sched_url[VS_URL_MAX];
    if (vs_project_scheduler_url(&cfg, sched_url, sizeof(sched_url)) != 0) {
        fprintf(stderr, "volsched serve: bad <cgi_url> in config.xml\n");
        return VS_EXIT_USAGE;
    }

    struct vs_sched_options so = {.cache_slots = (size_t)slots};
    struct vs_sched *sched = NULL;
    struct vs_http *http = NULL;
    struct vs_store *tstore = NULL;
    int exit_code = VS_EXIT_FAIL;
    rc = vs_sched_create(&cfg, log, &so, &sched);
    if (rc != 0)
        goto out;
    rc = vs_project_store_open(&cfg, false, log, &tstore);
    if (rc != 0) {
        VS_LOG(log, VS_LOG_ERROR, "cannot open store: %s", vs_strerror(rc));
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
        .threads = (unsigned)threads,
        .log = log,
        .sched = vs_sched_http,
        .sched_ctx = sched,
    };
    rc = vs_http_start(&hc, host, port, &http);
    if (rc != 0)
        goto out;

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    VS_LOG(log, VS_LOG_INFO, "serving %s on %s:%u (scheduler %s), %zu jobs cached", cfg.master_url,
           host, (unsigned)vs_http_port(http), sched_url, added);
    fflush(stderr);

    double t_trans = 0, t_cat = mono_now(), t_stats = mono_now();
    uint64_t last_rpcs = 0;
    while (!stop_requested) {
        double now = mono_now();
        if (now - t_trans >= 1.0) {
            t_trans = now;
            struct vs_transitioner_stats ts = {0};
            rc = vs_transitioner_pass(tstore, &cfg, (int64_t)time(NULL), 1000, log, &ts);
            if (rc != 0)
                VS_LOG(log, VS_LOG_WARN, "transitioner: %s", vs_strerror(rc));
            else if (ts.nresults_created || ts.ntimed_out || ts.nerrored)
                VS_LOG(log, VS_LOG_INFO,
                       "transitioner: %d workunits, %d results created, %d timed out, %d errored",
                       ts.nwus, ts.nresults_created, ts.ntimed_out, ts.nerrored);
        }
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
    vs_sched_destroy(sched);
    if (tstore)
        vs_store_close(tstore);
    if (exit_code == VS_EXIT_OK)
        VS_LOG(log, VS_LOG_INFO, "stopped");
    return exit_code;
}
