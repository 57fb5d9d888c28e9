/*
 * volsched client --dir DIR attach URL AUTH | run [...] | status [--json] |
 *                           explain [--json] | detach URL
 *
 * The volunteer's daemon and its small helpers (docs/client.md). `run` is
 * the daemon (src/client/loop.c); the others read or change the data
 * directory while the daemon is not running (attach and detach) or at any
 * time (status and explain read the state file, which is always complete).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/json.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: volsched client --dir DIR COMMAND\n"
            "\n"
            "The volsched client: runs BOINC apps for BOINC-style projects, with the\n"
            "client scheduling policies of volsched, controlled by boinccmd.\n"
            "\n"
            "Commands:\n"
            "  attach URL AUTHENTICATOR   attach DIR to a project (client not running;\n"
            "                             else: boinccmd --project_attach URL AUTH)\n"
            "  run [--gui_rpc_port N] [--allow_remote_gui_rpc] [--foreground] [--policy P]\n"
            "      [--log-level L]        the daemon (GUI RPC on 127.0.0.1:N, default 31416;\n"
            "                             with --allow_remote_gui_rpc on all interfaces, for\n"
            "                             any host: needs a password in gui_rpc_auth.cfg;\n"
            "                             policy %s, default %s)\n"
            "  status [--json]            projects and tasks as of the last state write\n"
            "  explain [--json]           what `volsched explain` says about the live queue\n"
            "  detach URL                 detach from a project (client not running;\n"
            "                             else: boinccmd --project URL detach)\n",
            vs_cpolicy_names(), vs_cpolicy_name(VS_CPOLICY_DEFAULT));
}

static int prepare_dir(const char *dir, bool create, char *out, size_t size)
{
    /* owner-only: it holds account keys and the projects' files (an existing
     * directory keeps the mode its owner gave it) */
    if (create && mkdir(dir, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "volsched client: cannot create %s: %s\n", dir, strerror(errno));
        return VS_EXIT_FAIL;
    }
    char abs[PATH_MAX];
    if (!realpath(dir, abs)) {
        fprintf(stderr, "volsched client: %s: %s\n", dir, strerror(errno));
        return VS_EXIT_USAGE;
    }
    int n = snprintf(out, size, "%s", abs);
    if (n < 0 || (size_t)n >= size) {
        fprintf(stderr, "volsched client: %s: path too long\n", dir);
        return VS_EXIT_USAGE;
    }
    return VS_EXIT_OK;
}

/* attach and detach change the data directory: only while no client runs
 * there (else the running one is to be asked, with the boinccmd line how). */
static bool lock_and_load(struct vs_client *c, const char *what, const char *how)
{
    int rc = vs_client_lock(c);
    if (rc == VS_EBUSY) {
        fprintf(stderr, "volsched client: a client is running in %s; %s through it:\n  %s\n",
                c->dir, what, how);
        return false;
    }
    if (rc == 0)
        rc = vs_client_load(c);
    if (rc) {
        fprintf(stderr, "volsched client: %s: %s\n", c->dir, vs_strerror(rc));
        return false;
    }
    return true;
}

static int cmd_attach(struct vs_client *c, int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: volsched client --dir DIR attach URL AUTHENTICATOR\n");
        return VS_EXIT_USAGE;
    }
    char how[1200];
    snprintf(how, sizeof(how), "boinccmd --project_attach %s AUTHENTICATOR", argv[1]);
    if (!lock_and_load(c, "attach", how))
        return VS_EXIT_FAIL;
    int rc = vs_client_attach(c, argv[1], argv[2], true);
    if (rc == 0)
        rc = vs_client_state_write(c);
    if (rc) {
        fprintf(stderr, "volsched client: attach %s: %s\n", argv[1], vs_strerror(rc));
        return rc == VS_EINVAL || rc == VS_EEXISTS ? VS_EXIT_USAGE : VS_EXIT_FAIL;
    }
    return VS_EXIT_OK;
}

static int cmd_detach(struct vs_client *c, int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: volsched client --dir DIR detach URL\n");
        return VS_EXIT_USAGE;
    }
    char how[1200];
    snprintf(how, sizeof(how), "boinccmd --project %s detach", argv[1]);
    if (!lock_and_load(c, "detach", how))
        return VS_EXIT_FAIL;
    int rc;
    char canon[1100];
    long p = vs_client_canon_url(argv[1], canon, sizeof(canon)) == 0
                 ? vs_client_find_project(c, canon)
                 : -1;
    if (p < 0) {
        fprintf(stderr, "volsched client: not attached to %s\n", argv[1]);
        return VS_EXIT_USAGE;
    }
    vs_client_drop_project(c, (size_t)p);
    if ((rc = vs_client_state_write(c)) != 0)
        return VS_EXIT_FAIL;
    printf("detached from %s\n", canon);
    return VS_EXIT_OK;
}

static const char *state_name(int s)
{
    static const char *const n[] = {"new",       "downloading", "ready",   "compute error",
                                    "uploading", "uploaded",    "aborted", "upload failed"};
    return s >= 0 && s < 8 ? n[s] : "?";
}

static int cmd_status(struct vs_client *c, int argc, char **argv)
{
    bool json = argc > 1 && strcmp(argv[1], "--json") == 0;
    int rc = vs_client_load(c);
    if (rc) {
        fprintf(stderr, "volsched client: %s: %s\n", c->dir, vs_strerror(rc));
        return VS_EXIT_FAIL;
    }
    if (!json) {
        printf("%zu project(s), %zu task(s)\n", c->n_projects, c->n_results);
        double now = vs_client_now();
        for (size_t p = 0; p < c->n_projects; p++) {
            const struct cl_project *pr = &c->projects[p];
            char lat[64] = "";
            if (pr->latency_limited_until > now)
                snprintf(lat, sizeof(lat), " latency-limited for %.0f s",
                         pr->latency_limited_until - now);
            printf("project %s (%s) share %g hostid %lld jobs ok %d err %d%s%s%s\n", pr->master_url,
                   pr->project_name ? pr->project_name : "?", pr->resource_share,
                   (long long)pr->hostid, pr->njobs_success, pr->njobs_error,
                   pr->suspended_via_gui ? " suspended" : "",
                   pr->dont_request_more_work ? " no-new-work" : "", lat);
            for (size_t i = 0; i < c->n_results; i++) {
                const struct cl_result *r = &c->results[i];
                if (r->project != p)
                    continue;
                printf("  %-40s %-13s cpu %8.1f  done %5.1f%%%s%s\n", r->name, state_name(r->state),
                       r->state >= RS_COMPUTE_ERROR ? r->final_cpu_time : r->current_cpu_time,
                       100 * r->fraction_done, r->pid > 0 ? " running" : "",
                       r->ready_to_report ? " ready to report" : "");
            }
        }
        return VS_EXIT_OK;
    }
    struct vs_buf b;
    vs_buf_init(&b, 64u << 20);
    struct vs_json j;
    vs_json_init(&j, &b, true);
    vs_json_obj_begin(&j);
    vs_json_key(&j, "cpu_efficiency"); /* learnt (host.c), what the policy gets */
    vs_json_num(&j, vs_client_cpu_efficiency(c));
    vs_json_key(&j, "projects");
    vs_json_arr_begin(&j);
    for (size_t p = 0; p < c->n_projects; p++) {
        const struct cl_project *pr = &c->projects[p];
        vs_json_obj_begin(&j);
        vs_json_key(&j, "master_url");
        vs_json_str(&j, pr->master_url);
        vs_json_key(&j, "project_name");
        vs_json_str(&j, pr->project_name ? pr->project_name : "");
        vs_json_key(&j, "resource_share");
        vs_json_num(&j, pr->resource_share);
        vs_json_key(&j, "hostid");
        vs_json_int(&j, pr->hostid);
        vs_json_key(&j, "njobs_success");
        vs_json_int(&j, pr->njobs_success);
        vs_json_key(&j, "njobs_error");
        vs_json_int(&j, pr->njobs_error);
        vs_json_key(&j, "cpu_time");
        vs_json_num(&j, pr->cpu_time);
        vs_json_key(&j, "elapsed_time");
        vs_json_num(&j, pr->elapsed_time);
        vs_json_key(&j, "suspended");
        vs_json_bool(&j, pr->suspended_via_gui);
        vs_json_key(&j, "latency_limited_for"); /* seconds, 0 = not latency-limited */
        vs_json_num(&j, fmax(0, pr->latency_limited_until - vs_client_now()));
        vs_json_obj_end(&j);
    }
    vs_json_arr_end(&j);
    vs_json_key(&j, "tasks");
    vs_json_arr_begin(&j);
    for (size_t i = 0; i < c->n_results; i++) {
        const struct cl_result *r = &c->results[i];
        vs_json_obj_begin(&j);
        vs_json_key(&j, "name");
        vs_json_str(&j, r->name);
        vs_json_key(&j, "project");
        vs_json_str(&j, c->projects[r->project].master_url);
        vs_json_key(&j, "state");
        vs_json_str(&j, state_name(r->state));
        vs_json_key(&j, "cpu_time");
        vs_json_num(&j, r->state >= RS_COMPUTE_ERROR ? r->final_cpu_time : r->current_cpu_time);
        vs_json_key(&j, "elapsed_time");
        vs_json_num(&j, r->state >= RS_COMPUTE_ERROR ? r->final_elapsed_time : r->elapsed_time);
        vs_json_key(&j, "fraction_done");
        vs_json_num(&j, r->fraction_done);
        vs_json_key(&j, "running");
        vs_json_bool(&j, r->pid > 0);
        vs_json_key(&j, "ready_to_report");
        vs_json_bool(&j, r->ready_to_report);
        vs_json_obj_end(&j);
    }
    vs_json_arr_end(&j);
    vs_json_obj_end(&j);
    rc = vs_json_error(&j);
    if (rc == 0)
        printf("%s\n", vs_buf_str(&b));
    vs_buf_cleanup(&b);
    return rc ? VS_EXIT_FAIL : VS_EXIT_OK;
}

static int cmd_explain_live(struct vs_client *c, int argc, char **argv)
{
    int rc = vs_client_load(c);
    if (rc) {
        fprintf(stderr, "volsched client: %s: %s\n", c->dir, vs_strerror(rc));
        return VS_EXIT_FAIL;
    }
    struct vs_buf b;
    vs_buf_init(&b, 256u << 20);
    rc = vs_client_explain_json(c, &b);
    /* the snapshot goes where the user keeps temporary files ($TMPDIR) */
    const char *tmp = getenv("TMPDIR");
    char path[VS_CLIENT_PATH_MAX];
    if (rc == 0 && snprintf(path, sizeof(path), "%s/volsched_explain_XXXXXX",
                            tmp && tmp[0] ? tmp : "/tmp") >= (int)sizeof(path))
        rc = VS_ELIMIT;
    int fd = rc == 0 ? mkstemp(path) : -1;
    if (fd < 0 || write(fd, b.data, b.len) != (ssize_t)b.len) {
        fprintf(stderr, "volsched client: cannot write the snapshot: %s\n",
                rc ? vs_strerror(rc) : strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(path);
        }
        vs_buf_cleanup(&b);
        return VS_EXIT_FAIL;
    }
    close(fd);
    vs_buf_cleanup(&b);
    /* exactly `volsched explain SNAPSHOT --policy P [--json]` */
    char *args[6];
    int n = 0;
    args[n++] = "explain";
    args[n++] = path;
    args[n++] = "--policy";
    args[n++] = (char *)vs_cpolicy_name(c->saved_policy);
    for (int i = 1; i < argc && n < 6; i++)
        if (strcmp(argv[i], "--json") == 0)
            args[n++] = "--json";
    int status = vs_cmd_explain(n, args);
    unlink(path);
    return status;
}

static int cmd_run(struct vs_client *c, int argc, char **argv)
{
    bool fg = false;
    const char *policy = vs_cpolicy_name(VS_CPOLICY_DEFAULT);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--foreground") == 0) {
            fg = true;
        } else if (strcmp(argv[i], "--allow_remote_gui_rpc") == 0) {
            c->allow_remote_cmdline = true; /* BOINC-COMPAT: the client's option */
        } else if (strcmp(argv[i], "--gui_rpc_port") == 0 && i + 1 < argc) {
            char *end;
            long port = strtol(argv[++i], &end, 10);
            if (*end || port < 1 || port > 65535) {
                fprintf(stderr, "volsched client: --gui_rpc_port must be 1..65535\n");
                return VS_EXIT_USAGE;
            }
            c->gui_port = (int)port;
        } else if (strcmp(argv[i], "--policy") == 0 && i + 1 < argc) {
            policy = argv[++i];
        } else if (strcmp(argv[i], "--log-level") == 0 && i + 1 < argc) {
            enum vs_log_level lv;
            if (vs_log_level_parse(argv[++i], &lv) != 0) {
                fprintf(stderr, "volsched client: bad --log-level '%s'\n", argv[i]);
                return VS_EXIT_USAGE;
            }
            c->log.level = lv;
        } else {
            fprintf(stderr, "volsched client run: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return VS_EXIT_USAGE;
        }
    }
    if (vs_cpolicy_parse(policy, &c->policy) != 0) {
        fprintf(stderr, "volsched client: unknown policy '%s' (known: %s)\n", policy,
                vs_cpolicy_names());
        return VS_EXIT_USAGE;
    }
    c->foreground = fg;
    if (!fg) {
        /* a classic daemon: the log goes to DIR/stdoutdae.txt (BOINC's name) */
        char path[VS_CLIENT_PATH_MAX];
        if (vs_client_path(c, path, sizeof(path), "stdoutdae.txt") != 0)
            return VS_EXIT_FAIL;
        pid_t pid = fork();
        if (pid < 0)
            return VS_EXIT_FAIL;
        if (pid > 0) {
            printf("volsched client started, pid %d, log %s\n", (int)pid, path);
            return VS_EXIT_OK;
        }
        setsid();
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        int nul = open("/dev/null", O_RDONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        if (nul >= 0)
            dup2(nul, 0);
        c->pid = getpid();
    }
    c->logf = fdopen(dup(1), "a");
    c->log.out = c->logf;
    int rc = vs_client_run(c);
    return rc == 0 ? VS_EXIT_OK : VS_EXIT_FAIL;
}

int vs_cmd_client(int argc, char **argv)
{
    const char *dir = NULL;
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return VS_EXIT_OK;
        }
        if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            dir = argv[++i];
        else if (strncmp(argv[i], "--dir=", 6) == 0)
            dir = argv[i] + 6;
        else
            break;
    }
    if (!dir || i >= argc) {
        usage(stderr);
        return VS_EXIT_USAGE;
    }
    const char *sub = argv[i];
    bool create = strcmp(sub, "attach") == 0 || strcmp(sub, "run") == 0;
    char abs[VS_CLIENT_PATH_MAX];
    int st = prepare_dir(dir, create, abs, sizeof(abs));
    if (st != VS_EXIT_OK)
        return st;
    struct vs_client *c = VS_NEW(struct vs_client);
    vs_client_init(c, abs);
    if (strcmp(sub, "attach") == 0)
        st = cmd_attach(c, argc - i, argv + i);
    else if (strcmp(sub, "run") == 0)
        st = cmd_run(c, argc - i, argv + i);
    else if (strcmp(sub, "status") == 0)
        st = cmd_status(c, argc - i, argv + i);
    else if (strcmp(sub, "explain") == 0)
        st = cmd_explain_live(c, argc - i, argv + i);
    else if (strcmp(sub, "detach") == 0)
        st = cmd_detach(c, argc - i, argv + i);
    else {
        fprintf(stderr, "volsched client: unknown command '%s'\n", sub);
        usage(stderr);
        st = VS_EXIT_USAGE;
    }
    vs_client_cleanup(c);
    vs_free(c);
    return st;
}
