/* Log files, start checks, pid file and signals of `volsched serve`. */
#include "serve_proc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "volsched/daemons.h"
#include "volsched/str.h"

volatile sig_atomic_t serve_stop, serve_hup, serve_usr1, serve_usr2;

static void on_signal(int sig)
{
    if (sig == SIGHUP)
        serve_hup = 1;
    else if (sig == SIGUSR1)
        serve_usr1 = 1;
    else if (sig == SIGUSR2)
        serve_usr2 = 1;
    else
        serve_stop = 1;
}

void serve_install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaction(sigs[i], &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

int serve_logs_open(struct serve_logs *l, const char *dir, const char *name, unsigned mask,
                    enum vs_log_level level, bool tee, struct vs_ops_metrics *tap)
{
    memset(l, 0, sizeof(*l));
    char path[VS_PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/log", dir);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        int e = errno;
        fprintf(stderr, "volsched serve: cannot create %s: %s\n", path, strerror(e));
        return -e;
    }
    for (int i = 0; i <= VS_NDAEMONS; i++) {
        const char *n = i == 0 ? name : vs_daemon_name(1u << (i - 1));
        if (i > 0 && !(mask & (1u << (i - 1))))
            continue;
        snprintf(path, sizeof(path), "%s/log/%s.log", dir, n);
        int rc = vs_log_file_open(path, &l->file[i]);
        if (rc != 0) {
            fprintf(stderr, "volsched serve: cannot open log %s: %s\n", path, strerror(-rc));
            serve_logs_close(l);
            return rc;
        }
        vs_log_init(&l->lg[i], level, stderr, n);
        l->lg[i].file = l->file[i];
        l->lg[i].tee = tee;
        if (tap) {
            l->lg[i].tap = vs_ops_metrics_tap;
            l->lg[i].tap_ctx = tap;
        }
    }
    return 0;
}

void serve_logs_reopen(struct serve_logs *l)
{
    for (int i = 0; i <= VS_NDAEMONS; i++) {
        if (!l->file[i])
            continue;
        int rc = vs_log_file_reopen(l->file[i]);
        if (rc != 0)
            VS_LOG(&l->lg[0], VS_LOG_ERROR, "cannot reopen %s: %s (still writing the old file)",
                   vs_log_file_path(l->file[i]), strerror(-rc));
    }
    VS_LOG(&l->lg[0], VS_LOG_INFO, "log files reopened");
}

void serve_logs_close(struct serve_logs *l)
{
    for (int i = 0; i <= VS_NDAEMONS; i++) {
        vs_log_file_close(l->file[i]);
        l->file[i] = NULL;
        l->lg[i].file = NULL;
    }
}

static bool check_dir(const char *what, const char *dir)
{
    int rc = vs_ctl_check_writable_dir(dir);
    if (rc == 0)
        return true;
    fprintf(stderr, "volsched serve: the %s %s is not writable: %s\n", what, dir,
            rc < 0 ? strerror(-rc) : vs_strerror(rc));
    return false;
}

bool serve_check_writable(const struct vs_project_config *cfg)
{
    if (!check_dir("project directory", cfg->dir) ||
        !check_dir("upload directory", cfg->upload_dir))
        return false;
    const char *url = cfg->store_url;
    if (vs_str_has_prefix(url, "sqlite:"))
        url += 7;
    else if (strstr(url, "://"))
        return true; /* a server store: its own permissions */
    char path[VS_URL_MAX];
    size_t n = strcspn(url, "?");
    if (n >= sizeof(path))
        return true;
    memcpy(path, url, n);
    path[n] = '\0';
    if (access(path, F_OK) == 0 && access(path, W_OK) != 0) {
        fprintf(stderr, "volsched serve: the store %s is not writable: %s\n", path,
                strerror(errno));
        return false;
    }
    /* SQLite writes its -wal and -shm files beside the database. */
    char *slash = strrchr(path, '/');
    if (slash) {
        *slash = '\0';
        return check_dir("store's directory", path[0] ? path : "/");
    }
    return true;
}

struct vs_pidlock *serve_lock(const char *dir, const char *name)
{
    struct vs_pidlock *p = NULL;
    pid_t other = 0;
    int rc = vs_pidlock_acquire(dir, name, &p, &other);
    if (rc == VS_EBUSY) {
        fprintf(stderr,
                "volsched serve: %s already runs on %s (pid %ld, run/%s.pid); stop it first\n",
                name, dir, (long)other, name);
        return NULL;
    }
    if (rc != 0) {
        fprintf(stderr, "volsched serve: cannot take %s/run/%s.pid: %s\n", dir, name,
                rc < 0 ? strerror(-rc) : vs_strerror(rc));
        return NULL;
    }
    return p;
}
