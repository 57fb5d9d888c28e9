/*
 * volsched stop | start (BOINC's bin/stop and bin/start; bin/status is
 * `volsched status`). stop creates DIR/stop_sched and DIR/stop_daemons: the
 * running serve answers "down for maintenance" and its daemons pause; with
 * --kill it also ends the serve processes (SIGTERM: they drain and commit).
 * start removes both files and starts `volsched serve` in the background
 * when none runs (unless --no-serve).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_util.h"
#include "cmd.h"
#include "volsched/daemons.h"
#include "volsched/proc_ctl.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched stop [--project DIR] [--kill]\n"
               "       volsched start [--project DIR] [--listen HOST:PORT] [--no-serve]\n"
               "\n"
               "stop takes the project down for maintenance: it creates stop_sched (the\n"
               "scheduler answers \"Project is temporarily shut down for maintenance\") and\n"
               "stop_daemons (the daemons pause). --kill also stops the serve processes.\n"
               "start removes both files and, if no serve runs, starts one in the\n"
               "background (logs in DIR/log/). `volsched status` says what runs.\n");
}

static void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* SIGTERM to the process holding run/<name>.pid, then waits for it to go. */
static bool kill_one(const char *dir, const char *name)
{
    pid_t pid = 0;
    if (vs_pidlock_probe(dir, name, &pid) != 1 || pid <= 0)
        return true;
    printf("stopping %s (pid %ld)\n", name, (long)pid);
    if (kill(pid, SIGTERM) != 0)
        return false;
    for (int i = 0; i < 300; i++) {
        if (vs_pidlock_probe(dir, name, NULL) != 1)
            return true;
        sleep_ms(100);
    }
    fprintf(stderr, "volsched stop: %s (pid %ld) still runs after 30 s\n", name, (long)pid);
    return false;
}

int vs_cmd_stop(int argc, char **argv)
{
    const char *project = NULL;
    bool kill_too = false;
    const struct vs_cli_opt opts[] = {
        {.name = "project", .str = &project},
        {.name = "kill", .flag = &kill_too},
    };
    int st = vs_cli_getopt_only("stop", argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage);
    if (st != VS_CLI_GO)
        return st;
    struct vs_project_config cfg;
    struct vs_store *s;
    if (!vs_cli_open_project("stop", project, &cfg, &s))
        return VS_EXIT_FAIL;
    vs_store_close(s);
    int rc = vs_ctl_file_set(cfg.dir, "stop_sched", true);
    if (rc == 0)
        rc = vs_ctl_file_set(cfg.dir, "stop_daemons", true);
    if (rc) {
        fprintf(stderr, "volsched stop: %s\n", strerror(-rc));
        return VS_EXIT_FAIL;
    }
    printf("project disabled: stop_sched and stop_daemons created in %s\n", cfg.dir);
    bool ok = true;
    if (kill_too) {
        ok = kill_one(cfg.dir, "serve");
        for (unsigned i = 0; i < VS_NDAEMONS; i++)
            ok = kill_one(cfg.dir, vs_daemon_name(1u << i)) && ok;
    }
    return ok ? VS_EXIT_OK : VS_EXIT_FAIL;
}

int vs_cmd_start(int argc, char **argv)
{
    const char *project = NULL, *listen = NULL;
    bool no_serve = false;
    const struct vs_cli_opt opts[] = {
        {.name = "project", .str = &project},
        {.name = "listen", .str = &listen},
        {.name = "no-serve", .flag = &no_serve},
    };
    int st = vs_cli_getopt_only("start", argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage);
    if (st != VS_CLI_GO)
        return st;
    struct vs_project_config cfg;
    struct vs_store *s;
    if (!vs_cli_open_project("start", project, &cfg, &s))
        return VS_EXIT_FAIL;
    vs_store_close(s);
    int rc = vs_ctl_file_set(cfg.dir, "stop_sched", false);
    if (rc == 0)
        rc = vs_ctl_file_set(cfg.dir, "stop_daemons", false);
    if (rc) {
        fprintf(stderr, "volsched start: %s\n", strerror(-rc));
        return VS_EXIT_FAIL;
    }
    printf("project enabled: stop_sched and stop_daemons removed\n");
    pid_t pid = 0;
    if (vs_pidlock_probe(cfg.dir, "serve", &pid) == 1) {
        printf("serve already runs (pid %ld)\n", (long)pid);
        return VS_EXIT_OK;
    }
    if (no_serve)
        return VS_EXIT_OK;
    pid_t child = fork();
    if (child < 0) {
        perror("volsched start: fork");
        return VS_EXIT_FAIL;
    }
    if (child == 0) {
        /* Detached: its own session, no terminal; it logs to DIR/log/. */
        setsid();
        int fd = open("/dev/null", O_RDWR);
        if (fd >= 0) {
            dup2(fd, 0);
            dup2(fd, 1);
            dup2(fd, 2);
            if (fd > 2)
                close(fd);
        }
        char *args[8];
        int n = 0;
        args[n++] = "volsched";
        args[n++] = "serve";
        args[n++] = "--project";
        args[n++] = cfg.dir;
        if (listen) {
            args[n++] = "--listen";
            args[n++] = (char *)listen;
        }
        args[n] = NULL;
        execv("/proc/self/exe", args);
        _exit(127);
    }
    for (int i = 0; i < 100; i++) {
        if (vs_pidlock_probe(cfg.dir, "serve", &pid) == 1) {
            printf("serve started (pid %ld); logs in %s/log/serve.log\n", (long)pid, cfg.dir);
            return VS_EXIT_OK;
        }
        int status;
        if (waitpid(child, &status, WNOHANG) == child)
            break;
        sleep_ms(100);
    }
    fprintf(stderr, "volsched start: serve did not come up; see %s/log/serve.log\n", cfg.dir);
    return VS_EXIT_FAIL;
}
