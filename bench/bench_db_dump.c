/*
 * bench_db_dump: the statistics exports at scale (issue 39).
 *
 * Builds a throwaway SQLite store with --users users (default 1,000,000),
 * --hosts hosts (2,000,000) and --teams teams (100,000), every one with
 * credit, then:
 *
 *  1. times `volsched db_dump`'s code (vs_db_dump) in a child process and
 *     prints its wall time, the child's peak RSS (bounded memory: it must
 *     not grow with the row count) and the sizes of the files;
 *  2. runs bench_server (the scheduler under 64 simulated hosts over
 *     loopback, its own project) three times, alone, beside exports of the
 *     big store looping in another process, and alone again, and prints the
 *     scheduler's RPC rate beside the export as a share of its rate alone
 *     (the mean of the two runs alone): the ratio in one run.
 *
 * usage: bench_db_dump [--users N] [--hosts N] [--teams N] [--rpcs N]
 *                      [--server PATH] [--keep]
 * --server: the bench_server binary (default: beside this one); --rpcs:
 * RPCs per bench_server run (default 20000).
 */
#define BENCH_NAME "bench_db_dump"

#include <errno.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "volsched/alloc.h"
#include "volsched/db_dump.h"

static void die(const char *what)
{
    fprintf(stderr, BENCH_NAME ": %s\n", what);
    exit(1);
}

static void sql(sqlite3 *db, const char *s)
{
    char *err = NULL;
    if (sqlite3_exec(db, s, NULL, NULL, &err) != SQLITE_OK) {
        fprintf(stderr, BENCH_NAME ": %s: %s\n", s, err ? err : "?");
        exit(1);
    }
}

/* Fills the store with rows made by SQL (recursive CTEs: no per-row C). */
static void populate(const char *path, long users, long hosts, long teams)
{
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK)
        die("open store");
    sql(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; BEGIN");
    char q[1024];
    snprintf(q, sizeof(q),
             "WITH RECURSIVE s(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM s WHERE v < %ld) "
             "INSERT INTO team(id, create_time, userid, name, nusers, total_credit, "
             "expavg_credit, expavg_time) SELECT v, 1600000000, v, 'team ' || v, 10, "
             "v * 37.5, v %% 1000, 1700000000 FROM s",
             teams);
    sql(db, q);
    snprintf(q, sizeof(q),
             "WITH RECURSIVE s(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM s WHERE v < %ld) "
             "INSERT INTO \"user\"(id, create_time, email_addr, name, authenticator, teamid, "
             "total_credit, expavg_credit, expavg_time, cross_project_id) SELECT v, "
             "1600000000 + v, 'u' || v || '@example.org', 'user ' || v, 'auth' || v, "
             "CASE WHEN v %% 3 = 0 THEN 1 + v %% %ld ELSE 0 END, v * 1.25, v %% 500, "
             "1700000000, printf('%%032x', v * 2654435761) FROM s",
             users, teams);
    sql(db, q);
    snprintf(q, sizeof(q),
             "WITH RECURSIVE s(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM s WHERE v < %ld) "
             "INSERT INTO host(id, create_time, userid, p_ncpus, p_vendor, p_model, p_fpops, "
             "os_name, os_version, domain_name, last_ip_addr, total_credit, expavg_credit, "
             "expavg_time) SELECT v, 1600000000, 1 + v %% %ld, 8, 'GenuineIntel', "
             "'Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz [Family 6 Model 158 Stepping 10]', "
             "4e9, 'Linux Debian', 'Debian GNU/Linux 12 (bookworm) [6.1.0-13-amd64]', "
             "'host' || v, '10.0.0.1', v * 0.5, v %% 200, 1700000000 FROM s",
             hosts, users);
    sql(db, q);
    sql(db, "COMMIT; PRAGMA wal_checkpoint(TRUNCATE)");
    sqlite3_close(db);
}

struct dump_run {
    double secs;
    long maxrss_kib;
    int status;
};

/* One export in a child process (its peak RSS is its own). */
static struct dump_run dump_child(const char *url, const char *out_dir)
{
    struct dump_run r = {0, 0, -1};
    double t0 = bench_now_s();
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        struct vs_store *s = NULL;
        if (vs_store_open(url, 0, NULL, &s) != 0)
            _exit(2);
        /* Large: on the heap. */
        struct vs_project_config *cfg = vs_xcalloc(1, sizeof(*cfg));
        struct vs_db_dump_options opt = {.names = false, .out_dir = out_dir};
        int rc = vs_db_dump(s, cfg, (int64_t)time(NULL), &opt, NULL, NULL);
        vs_free(cfg);
        vs_store_close(s);
        _exit(rc ? 1 : 0);
    }
    int st = 0;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) != pid)
        die("wait4");
    r.secs = bench_now_s() - t0;
    r.maxrss_kib = ru.ru_maxrss;
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    return r;
}

static long file_size(const char *dir, const char *name)
{
    char p[1024];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    struct stat sb;
    return stat(p, &sb) == 0 ? (long)sb.st_size : -1;
}

/* Runs bench_server for 64 hosts; returns its RPC rate. */
static double server_rate(const char *server, long rpcs)
{
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "%s --conc 64 --rpcs %ld --secs 60 --direct 0 2>&1", server, rpcs);
    FILE *p = popen(cmd, "r");
    if (!p)
        die("popen bench_server");
    char line[512];
    double rate = -1;
    while (fgets(line, sizeof(line), p)) {
        long hosts = 0, n = 0;
        double r = 0;
        if (rate < 0 && sscanf(line, "%ld %ld %lf", &hosts, &n, &r) == 3 && hosts == 64)
            rate = r;
    }
    if (pclose(p) != 0 || rate <= 0)
        die("bench_server failed or printed no rate for 64 hosts");
    return rate;
}

int main(int argc, char **argv)
{
    long users = 1000000, hosts = 2000000, teams = 100000, rpcs = 20000;
    bool keep = false;
    char server[1024];
    snprintf(server, sizeof(server), "%s", argv[0]);
    char *slash = strrchr(server, '/');
    snprintf(slash ? slash + 1 : server, sizeof(server) - (size_t)(slash ? slash + 1 - server : 0),
             "bench_server");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--keep") == 0) {
            keep = true;
            continue;
        }
        if (!v)
            die("usage: bench_db_dump [--users N] [--hosts N] [--teams N] [--rpcs N] "
                "[--server PATH] [--keep]");
        i++;
        if (strcmp(a, "--users") == 0)
            users = strtol(v, NULL, 10);
        else if (strcmp(a, "--hosts") == 0)
            hosts = strtol(v, NULL, 10);
        else if (strcmp(a, "--teams") == 0)
            teams = strtol(v, NULL, 10);
        else if (strcmp(a, "--rpcs") == 0)
            rpcs = strtol(v, NULL, 10);
        else if (strcmp(a, "--server") == 0)
            snprintf(server, sizeof(server), "%s", v);
        else
            die("unknown option");
    }
    if (users < 1 || hosts < 1 || teams < 1 || rpcs < 100)
        die("counts must be positive (--rpcs >= 100)");
    char dir[] = "/tmp/vs_bench_dump.XXXXXX";
    if (!mkdtemp(dir))
        die("mkdtemp");
    char url[256], path[200], out[220];
    snprintf(path, sizeof(path), "%s/volsched.db", dir);
    snprintf(url, sizeof(url), "sqlite:%s", path);
    snprintf(out, sizeof(out), "%s/stats", dir);
    struct vs_store *s = NULL;
    bench_check(vs_store_open(url, VS_STORE_CREATE, NULL, &s), "create store");
    vs_store_close(s);
    double t0 = bench_now_s();
    populate(path, users, hosts, teams);
    printf("store: %ld users, %ld hosts, %ld teams with credit, made in %.1f s\n", users, hosts,
           teams, bench_now_s() - t0);

    struct dump_run d = dump_child(url, out);
    if (d.status != 0)
        fprintf(stderr, BENCH_NAME ": the export failed (status %d)\n", d.status), exit(1);
    printf("export: %.1f s wall, peak RSS %.1f MiB; tables.xml %ld B, user.gz %.1f MiB, "
           "team.gz %.1f MiB, host.gz %.1f MiB\n",
           d.secs, (double)d.maxrss_kib / 1024, file_size(out, "tables.xml"),
           (double)file_size(out, "user.gz") / 1048576, (double)file_size(out, "team.gz") / 1048576,
           (double)file_size(out, "host.gz") / 1048576);
    fflush(stdout);

    double alone1 = server_rate(server, rpcs);
    /* Exports back to back in a child for as long as the scheduler runs. */
    pid_t looper = fork();
    if (looper < 0)
        die("fork");
    if (looper == 0) {
        for (;;)
            if (dump_child(url, out).status != 0)
                _exit(1);
    }
    double beside = server_rate(server, rpcs);
    kill(looper, SIGKILL);
    waitpid(looper, NULL, 0);
    double alone2 = server_rate(server, rpcs);
    double alone = (alone1 + alone2) / 2;
    printf("scheduler (bench_server, 64 hosts, %ld RPCs a run): alone %.0f and %.0f RPC/s, "
           "beside exports %.0f RPC/s: %.1f%% of alone (slowed %.1f%%)\n",
           rpcs, alone1, alone2, beside, 100 * beside / alone, 100 * (1 - beside / alone));
    if (keep) {
        printf("kept %s\n", dir);
    } else {
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, BENCH_NAME ": could not remove %s\n", dir);
    }
    return 0;
}
