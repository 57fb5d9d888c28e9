/*
 * bench_submit: remote job submission's speed (issue 38), measured against
 * real `volsched` processes, with ratios taken in the same run:
 *
 *  1. N jobs with 1 kB inputs (distinct files, written and synced before
 *     any clock starts) through `volsched create_work --stdin` into one
 *     fresh project: the baseline.
 *  2. The same N jobs submitted over HTTP to `volsched serve` on another
 *     fresh project, inputs inline: the request built from the files,
 *     POSTed, and the reply read, end to end. The ratio to 1 is the
 *     figure that counts on a noisy machine (target: at most 2).
 *  3. query_batch of that batch with job details: its time, reply size, and
 *     the growth of serve's peak RSS (VmHWM) across it (bounded memory).
 *     Before a figure is printed, the reply must list N jobs.
 *  4. With --sched: the scheduler's throughput (bench_server --target, 16
 *     simulated hosts, one job per RPC) on a project with work, alone and
 *     while an N-job batch is submitted to the same server, as a ratio.
 *     Both phases last as long as step 2's submission took (at least 3 s),
 *     so the second covers the submission (which is slower with the
 *     scheduler busy beside it); the batch is POSTed as the phase starts.
 *     A third phase, once the POST is answered, shows what follows: the
 *     transitioner making the batch's results (printed apart, not part of
 *     the target's ratio).
 *
 *   bench_submit [--dir DIR] [--sizes 10000,100000] [--sched] [--repeat R]
 *
 * Each size is run R times (default 3), every step on fresh projects; the
 * machine is shared and noisy, so each run's lines are printed and then
 * the medians, with each target's verdict on the medians.
 *
 * Targets (issue 38): 10,000 jobs < 2 s and <= 2x create_work; 100,000
 * < 20 s; query_batch of 100,000 < 0.5 s in bounded memory; scheduler >=
 * 80% while submitting.
 */
#define BENCH_NAME "bench_submit"
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/xml.h"

static char g_bin[PATH_MAX + 32];   /* the volsched binary beside this one */
static char g_bench[PATH_MAX + 32]; /* bench_server */
static char g_primes[PATH_MAX + 32];

static void sh(const char *cmd)
{
    int rc = system(cmd);
    if (rc != 0) {
        fprintf(stderr, "bench_submit: failed (%d): %s\n", rc, cmd);
        exit(1);
    }
}

static uint16_t free_port(void)
{
    FILE *p = popen("python3 -c 'import socket;s=socket.socket();s.bind((\"127.0.0.1\",0));"
                    "print(s.getsockname()[1])'",
                    "r");
    unsigned port = 0;
    if (!p || fscanf(p, "%u", &port) != 1) {
        fprintf(stderr, "bench_submit: no free port\n");
        exit(1);
    }
    pclose(p);
    return (uint16_t)port;
}

/* A project at dir with the primes app; *auth gets a submitter's key when
 * auth is not NULL. */
static void make_project(const char *dir, uint16_t port, char *auth, size_t asize)
{
    char cmd[4 * PATH_MAX];
    snprintf(cmd, sizeof(cmd), "%s init %s --url http://127.0.0.1:%u/demo/ >/dev/null", g_bin, dir,
             (unsigned)port);
    sh(cmd);
    /* 100,000 jobs with 1 kB inline inputs are ~120 MB; the default cap
     * is 64 MB. The simulated hosts are many of one account. */
    snprintf(cmd, sizeof(cmd),
             "sed -i 's|</config>|<submit_max_request_mb>512</submit_max_request_mb>"
             "<max_new_hosts_per_day>0</max_new_hosts_per_day><daily_result_quota>0"
             "</daily_result_quota><http_max_per_address>0</http_max_per_address></config>|' "
             "%s/config.xml",
             dir);
    sh(cmd);
    snprintf(cmd, sizeof(cmd),
             "%s app add --project %s --name primes --platform x86_64-pc-linux-gnu --version 100 "
             "%s >/dev/null",
             g_bin, dir, g_primes);
    sh(cmd);
    if (!auth)
        return;
    snprintf(cmd, sizeof(cmd), "%s user add --project %s --name sci --submit", g_bin, dir);
    FILE *p = popen(cmd, "r");
    if (!p || !fgets(auth, (int)asize, p)) {
        fprintf(stderr, "bench_submit: user add failed\n");
        exit(1);
    }
    pclose(p);
    auth[strcspn(auth, "\n")] = '\0';
}

/* The serve running now: stopped by exit() too (a failed step exits). */
static pid_t g_serve = -1;

static void stop_serve_at_exit(void)
{
    if (g_serve > 0) {
        kill(g_serve, SIGTERM);
        waitpid(g_serve, NULL, 0);
    }
}

static pid_t serve(const char *dir, uint16_t port, const char *daemons)
{
    pid_t pid = fork();
    if (pid > 0)
        g_serve = pid;
    if (pid == 0) {
        char listen[64];
        snprintf(listen, sizeof(listen), "127.0.0.1:%u", (unsigned)port);
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 1);
        dup2(fd, 2);
        execl(g_bin, g_bin, "serve", "--project", dir, "--listen", listen, "--foreground",
              "--daemons", daemons, (char *)NULL);
        _exit(127);
    }
    char cmd[200];
    snprintf(cmd, sizeof(cmd), "curl -sf http://127.0.0.1:%u/demo/ >/dev/null 2>&1",
             (unsigned)port);
    for (int i = 0; i < 100; i++) {
        if (system(cmd) == 0)
            return pid;
        usleep(100000);
    }
    fprintf(stderr, "bench_submit: serve did not start\n");
    exit(1);
}

static void stop(pid_t pid)
{
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    g_serve = -1;
}

static long hwm_kb(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long kb = -1;
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            kb = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kb;
}

/* CPU seconds (user + system) process pid has used so far. */
static double cpu_of(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    char buf[1024];
    double s = -1;
    if (f && fgets(buf, sizeof(buf), f)) {
        const char *p = strrchr(buf, ')');
        unsigned long ut = 0, st = 0;
        if (p &&
            sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2)
            s = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
    }
    if (f)
        fclose(f);
    return s;
}

/* CPU seconds the waited-for children have used so far. */
static double children_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static size_t on_data(char *p, size_t size, size_t n, void *ctx)
{
    return vs_buf_append(ctx, p, size * n) == 0 ? size * n : 0;
}

/* POSTs request=xml to the handler; the reply in out. Seconds taken. */
static double post(uint16_t port, const char *xml, size_t len, struct vs_buf *out)
{
    CURL *c = curl_easy_init();
    char url[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/demo/submit_rpc_handler.php", (unsigned)port);
    double t0 = bench_now_s();
    /* Percent-encoded here: curl_easy_escape refuses inputs over 8 MB,
     * and a 100,000-job request is ~110 MB. */
    static const char hex[] = "0123456789ABCDEF";
    char *body = vs_xmalloc(8 + 3 * len + 1);
    memcpy(body, "request=", 8);
    size_t el = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)xml[i];
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '_' || ch == '.' || ch == '~') {
            body[8 + el++] = (char)ch;
        } else {
            body[8 + el++] = '%';
            body[8 + el++] = hex[ch >> 4];
            body[8 + el++] = hex[ch & 15];
        }
    }
    body[8 + el] = '\0';
    vs_buf_reset(out);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(el + 8));
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
    CURLcode cc = curl_easy_perform(c);
    double t = bench_now_s() - t0;
    curl_easy_cleanup(c);
    vs_free(body);
    if (cc != CURLE_OK) {
        fprintf(stderr, "bench_submit: POST: %s\n", curl_easy_strerror(cc));
        exit(1);
    }
    return t;
}

static size_t count_of(const char *s, const char *needle)
{
    size_t n = 0, nl = strlen(needle);
    for (const char *p = s; (p = strstr(p, needle)) != NULL; p += nl)
        n++;
    return n;
}

/* Builds the submit_batch request from the n input files (end to end: the
 * client reads its files). */
static void build_request(const char *indir, size_t n, const char *auth, struct vs_buf *b)
{
    bench_check(vs_buf_printf(b,
                              "<submit_batch><authenticator>%s</authenticator><batch><app_name>"
                              "primes</app_name><job_params><rsc_fpops_est>2e10</rsc_fpops_est>"
                              "</job_params>",
                              auth),
                "request");
    char path[PATH_MAX], data[2048];
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "%s/in_%zu", indir, i);
        FILE *f = fopen(path, "rb");
        size_t got = f ? fread(data, 1, sizeof(data), f) : 0;
        if (f)
            fclose(f);
        bench_check(vs_buf_puts(b, "<job><input_file><mode>inline</mode><source>"), "request");
        bench_check(vs_xml_escape(b, data, got), "request");
        bench_check(vs_buf_puts(b, "</source></input_file></job>"), "request");
    }
    bench_check(vs_buf_puts(b, "</batch></submit_batch>"), "request");
}

/* The scheduler's RPC rate from bench_server's table (its 4th column is
 * rpcs/s of the one phase). */
static double sched_rate(uint16_t port, const char *auth, double secs)
{
    char cmd[2 * PATH_MAX + 256];
    snprintf(cmd, sizeof(cmd),
             "%s --target %u --path /demo/cgi-bin/cgi --auth %s --conc 16 --secs %.0f "
             "--rpcs 100000000 2>&1",
             g_bench, (unsigned)port, auth, secs);
    FILE *p = popen(cmd, "r");
    char line[512];
    double rate = -1;
    while (p && fgets(line, sizeof(line), p)) {
        unsigned hosts;
        long rpcs;
        double r;
        if (sscanf(line, "%u %ld %lf", &hosts, &rpcs, &r) == 3 && hosts == 16)
            rate = r;
    }
    if (p)
        pclose(p);
    return rate;
}

/* One run's figures (sched ones < 0 without --sched). */
struct figures {
    double t_cw, t_sub, ratio, c_cw, c_sub, t_q;
    double rss_kb; /* serve's peak RSS growth across query_batch */
    double alone, during, sched_ratio, after_ratio;
};

static void run(const char *base, size_t n, bool sched, struct figures *fig)
{
    char dir[PATH_MAX], indir[PATH_MAX + 8], a[PATH_MAX + 8], b[PATH_MAX + 8];
    snprintf(dir, sizeof(dir), "%s/vs_bench_submit_XXXXXX", base);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        exit(1);
    }
    snprintf(indir, sizeof(indir), "%s/in", dir);
    snprintf(a, sizeof(a), "%s/a", dir);
    snprintf(b, sizeof(b), "%s/b", dir);
    mkdir(indir, 0755);
    /* Inputs: 1 kB each, distinct (the job number in the first line). */
    char data[1024];
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof(path), "%s/in_%zu", indir, i);
        int k = snprintf(data, sizeof(data), "%zu %zu\n", 1000000000 + i * 1000,
                         1000000000 + (i + 1) * 1000);
        memset(data + k, 'x', sizeof(data) - (size_t)k - 1);
        data[sizeof(data) - 1] = '\n';
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(data, 1, sizeof(data), f) != sizeof(data) || fclose(f) != 0) {
            perror(path);
            exit(1);
        }
    }
    sync();

    /* 1. create_work --stdin */
    make_project(a, 1, NULL, 0);
    char cmd[4 * PATH_MAX];
    snprintf(cmd, sizeof(cmd),
             "%s create_work --project %s --appname primes --rsc_fpops_est 2e10 "
             "--stdin >/dev/null",
             g_bin, a);
    double c0 = children_cpu();
    double t0 = bench_now_s();
    FILE *p = popen(cmd, "w");
    for (size_t i = 0; p && i < n; i++)
        fprintf(p, "%s/in_%zu\n", indir, i);
    if (!p || pclose(p) != 0) {
        fprintf(stderr, "bench_submit: create_work failed\n");
        exit(1);
    }
    double t_cw = bench_now_s() - t0;
    double c_cw = children_cpu() - c0;

    /* 2. submit_batch over HTTP */
    char auth[128];
    uint16_t port = free_port();
    make_project(b, port, auth, sizeof(auth));
    pid_t pid = serve(b, port, "none");
    struct vs_buf req, reply;
    vs_buf_init(&req, 1u << 30);
    vs_buf_init(&reply, 1u << 30);
    double s0 = cpu_of(pid);
    t0 = bench_now_s();
    build_request(indir, n, auth, &req);
    post(port, req.data, req.len, &reply);
    double t_sub = bench_now_s() - t0;
    double c_sub = cpu_of(pid) - s0;
    const char *bid = strstr(vs_buf_str(&reply), "<batch_id>");
    if (!bid) {
        fprintf(stderr, "bench_submit: submit refused: %.300s\n", vs_buf_str(&reply));
        exit(1);
    }
    long batch = strtol(bid + 10, NULL, 10);

    /* 3. query_batch */
    char q[512];
    snprintf(q, sizeof(q),
             "<query_batch><authenticator>%s</authenticator><batch_id>%ld</batch_id>"
             "<get_job_details>1</get_job_details></query_batch>",
             auth, batch);
    long hwm0 = hwm_kb(pid);
    double t_q = post(port, q, strlen(q), &reply);
    long hwm1 = hwm_kb(pid);
    size_t jobs = count_of(vs_buf_str(&reply), "<job>");
    if (jobs != n) {
        fprintf(stderr, "bench_submit: query_batch lists %zu jobs, want %zu\n", jobs, n);
        exit(1);
    }
    printf("%8zu jobs: create_work --stdin %6.2f s (%7.0f jobs/s) | HTTP submit %6.2f s "
           "(%7.0f jobs/s, request %.1f MB) | ratio %.2f\n",
           n, t_cw, (double)n / t_cw, t_sub, (double)n / t_sub, (double)req.len / 1e6,
           t_sub / t_cw);
    printf("%8zu jobs: CPU seconds: create_work %.2f, serve during the submit %.2f (ratio %.2f; "
           "wall times above are inflated by the machine's load)\n",
           n, c_cw, c_sub, c_sub / c_cw);
    printf("%8zu jobs: query_batch with details %.3f s, reply %.1f MB, serve peak RSS %+ld kB "
           "(%ld -> %ld)\n",
           n, t_q, (double)reply.len / 1e6, hwm1 - hwm0, hwm0, hwm1);
    fflush(stdout);
    stop(pid);
    *fig = (struct figures){.t_cw = t_cw,
                            .t_sub = t_sub,
                            .ratio = t_sub / t_cw,
                            .c_cw = c_cw,
                            .c_sub = c_sub,
                            .t_q = t_q,
                            .rss_kb = (double)(hwm1 - hwm0),
                            .alone = -1,
                            .during = -1,
                            .sched_ratio = -1,
                            .after_ratio = -1};

    /* 4. the scheduler while a batch is submitted */
    if (sched) {
        /* Work for the hosts: project a's jobs, served with its daemons
         * (the transitioner makes their results), and the submitter. */
        char aauth[128];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", a);
        sh(cmd);
        uint16_t port2 = free_port();
        make_project(a, port2, aauth, sizeof(aauth));
        /* Enough jobs for three phases at up to 1,500 RPCs/s (one job
         * each), so that no phase runs dry. */
        double secs = t_sub > 3 ? t_sub : 3;
        long njobs = (long)(1500 * secs * 3);
        if (njobs < 20000)
            njobs = 20000;
        double t_setup = bench_now_s();
        snprintf(cmd, sizeof(cmd),
                 "seq 1 %ld | sed 's|.*|%s/in_0|' | %s create_work --project %s --appname "
                 "primes --rsc_fpops_est 2e10 --stdin >/dev/null",
                 njobs, indir, g_bin, a);
        sh(cmd);
        pid = serve(a, port2, "transitioner");
        /* The transitioner makes the results: the phases start once it has
         * (it would otherwise run beside the first phase only). */
        snprintf(cmd, sizeof(cmd),
                 "test \"$(sqlite3 %s/volsched.db 'SELECT count(*) FROM result')\" -ge %ld", a,
                 njobs);
        for (int i = 0; i < 600 && system(cmd) != 0; i++)
            sleep(1);
        fprintf(stderr, "bench_submit: the scheduler's project: %ld jobs in %.0f s\n", njobs,
                bench_now_s() - t_setup);
        double alone = sched_rate(port2, aauth, secs);
        /* The same batch, as this project's submitter. */
        vs_buf_reset(&req);
        build_request(indir, n, aauth, &req);
        pid_t sub = fork();
        if (sub == 0) {
            struct vs_buf r2;
            vs_buf_init(&r2, 1u << 30);
            post(port2, req.data, req.len, &r2);
            _exit(strstr(vs_buf_str(&r2), "<batch_id>") ? 0 : 1);
        }
        double t1 = bench_now_s();
        double during = sched_rate(port2, aauth, secs);
        int st = 0;
        waitpid(sub, &st, 0);
        double t_during = bench_now_s() - t1;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "bench_submit: the concurrent submit failed\n");
            exit(1);
        }
        /* Once the POST is answered: the transitioner makes the batch's
         * results meanwhile, so this is not a baseline but the cost that
         * follows a submission, printed apart. */
        double after = sched_rate(port2, aauth, secs);
        printf("%8zu jobs: scheduler %.0f RPCs/s alone, %.0f RPCs/s while the batch is submitted "
               "(%.0f%%; the submit ended %.1f s after the %.1f s phase began)\n",
               n, alone, during, 100.0 * during / alone, t_during, secs);
        printf("%8zu jobs: scheduler %.0f RPCs/s in the phase after the POST was answered "
               "(%.0f%%; the transitioner makes the batch's results then)\n",
               n, after, 100.0 * after / alone);
        fflush(stdout);
        stop(pid);
        fig->alone = alone;
        fig->during = during;
        fig->sched_ratio = during / alone;
        fig->after_ratio = after / alone;
    }
    vs_buf_cleanup(&req);
    vs_buf_cleanup(&reply);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    sh(cmd);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of field off of figs[0..r). */
static double median_of(const struct figures *figs, int r, size_t off)
{
    double v[64];
    for (int i = 0; i < r; i++)
        memcpy(&v[i], (const char *)&figs[i] + off, sizeof(double));
    qsort(v, (size_t)r, sizeof(double), cmp_double);
    return r % 2 ? v[r / 2] : (v[r / 2 - 1] + v[r / 2]) / 2;
}

#define MED(field) median_of(figs, r, offsetof(struct figures, field))

static const char *verdict(bool met)
{
    return met ? "met" : "NOT met";
}

/* The medians of r runs of n jobs, and the targets of issue 38 for n. */
static void summary(size_t n, const struct figures *figs, int r, bool sched)
{
    double t_sub = MED(t_sub), ratio = MED(ratio), t_q = MED(t_q);
    printf("%8zu jobs, medians of %d runs: create_work --stdin %.2f s, HTTP submit %.2f s, "
           "ratio %.2f; CPU create_work %.2f s, serve %.2f s; query_batch %.3f s, peak RSS "
           "%+.0f kB\n",
           n, r, MED(t_cw), t_sub, ratio, MED(c_cw), MED(c_sub), t_q, MED(rss_kb));
    if (n == 10000)
        printf("%8zu jobs: target < 2 s end to end: %s (%.2f s); target <= 2x create_work: %s "
               "(%.2f)\n",
               n, verdict(t_sub < 2), t_sub, verdict(ratio <= 2), ratio);
    if (n == 100000)
        printf("%8zu jobs: target < 20 s: %s (%.2f s); query_batch < 0.5 s: %s (%.3f s)\n", n,
               verdict(t_sub < 20), t_sub, verdict(t_q < 0.5), t_q);
    if (sched)
        printf("%8zu jobs: scheduler while submitting, median %.0f%% of alone (%.0f -> %.0f "
               "RPCs/s): target >= 80%%: %s\n",
               n, 100 * MED(sched_ratio), MED(alone), MED(during),
               verdict(MED(sched_ratio) >= 0.8));
    if (sched)
        printf("%8zu jobs: scheduler in the phase after the POST, median %.0f%% of alone\n", n,
               100 * MED(after_ratio));
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *base = "/tmp", *sizes = "10000,100000";
    bool sched = false;
    int64_t repeat = 3;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            base = argv[++i];
        else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
            sizes = argv[++i];
        else if (strcmp(argv[i], "--sched") == 0)
            sched = true;
        else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc &&
                 vs_parse_int64(argv[i + 1], &repeat) == 0 && repeat >= 1 && repeat <= 64)
            i++;
        else {
            fprintf(stderr, "usage: bench_submit [--dir DIR] [--sizes N,N] [--sched] "
                            "[--repeat R (1..64)]\n");
            return 2;
        }
    }
    char self[PATH_MAX - 32];
    ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (k <= 0)
        return 1;
    self[k] = '\0';
    *strrchr(self, '/') = '\0';
    snprintf(g_bin, sizeof(g_bin), "%s/volsched", self);
    snprintf(g_bench, sizeof(g_bench), "%s/bench_server", self);
    snprintf(g_primes, sizeof(g_primes), "%s/examples/primes", self);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    atexit(stop_serve_at_exit);
    for (const char *s = sizes; *s;) {
        char *end;
        unsigned long n = strtoul(s, &end, 10);
        if (end == s || n == 0) {
            fprintf(stderr, "bench_submit: bad --sizes\n");
            return 2;
        }
        struct figures figs[64];
        for (int i = 0; i < (int)repeat; i++) {
            printf("-- %lu jobs, run %d of %d\n", n, i + 1, (int)repeat);
            run(base, n, sched, &figs[i]);
        }
        summary(n, figs, (int)repeat, sched);
        s = *end == ',' ? end + 1 : end;
    }
    curl_global_cleanup();
    return 0;
}
