/*
 * volsched sim: runs a scenario through the host simulator and prints the
 * figures of merit (a table, or JSON), optionally a timeline picture and CSV,
 * or several policies side by side (--compare).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli_util.h"
#include "cmd.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/json.h"
#include "volsched/scenario.h"
#include "volsched/scn.h"
#include "volsched/sim.h"
#include "volsched/str.h"

#define MAX_COMPARE 8

static void usage(FILE *f)
{
    fprintf(f, "usage: volsched sim SCENARIO [--policy P] [--days N] [--seed N] [--json]\n"
               "                    [--timeline F.svg] [--csv F.csv] [--compare P1,P2,...]\n"
               "\n"
               "Simulates one host running the client scheduling policies on the scenario\n"
               "and prints the figures of merit. SCENARIO is a file or the scenario text\n"
               "itself, in the seeds' notation, e.g.\n"
               "    volsched sim '(P1(1000, 2000, .5), P2(1, 10, .5), NCPUS=4)'\n"
               "\n"
               "Options:\n"
               "  --policy P        fair (default: seed 000 with deadline- and share-capped\n"
               "                    work fetch), shortfall (seed 000), debt (seed 002) or\n"
               "                    wrr (the older weighted round-robin client)\n"
               "  --days N          simulated days (default: the scenario's duration, 10)\n"
               "  --seed N          random seed (default: the scenario's seed, 1)\n"
               "  --json            print the figures as one JSON object\n"
               "  --timeline F.svg  draw what ran on each CPU (with --compare: F-POLICY.svg)\n"
               "  --csv F.csv       the same as CSV rows (with --compare: F-POLICY.csv)\n"
               "  --compare LIST    run each listed policy and print the figures side by side\n"
               "  --no-progress     no progress bar, even on a terminal\n"
               "\n"
               "The scenario language, the options and the figures: docs/simulator.md.\n");
}

static int load_scenario(const char *arg, struct vs_scenario *s)
{
    struct vs_scn_error e;
    struct stat sb;
    int rc;
    const char *where = arg;
    if (stat(arg, &sb) == 0) {
        rc = vs_scenario_load(arg, s, &e);
    } else if (strchr(arg, '(')) {
        rc = vs_scenario_parse(arg, strlen(arg), s, &e);
        where = "<scenario>";
    } else {
        fprintf(stderr, "volsched sim: %s: no such file (and not a scenario)\n", arg);
        return VS_EXIT_USAGE;
    }
    vs_scn_print_notes(stderr, "volsched sim", where, &e);
    if (rc == 0)
        return 0;
    if (e.line > 0)
        fprintf(stderr, "volsched sim: %s:%d:%d: %s\n", where, e.line, e.col, e.msg);
    else
        fprintf(stderr, "volsched sim: %s\n", e.msg[0] ? e.msg : vs_strerror(rc));
    return rc == VS_EPARSE || rc == VS_ELIMIT ? VS_EXIT_USAGE : VS_EXIT_FAIL;
}

/* F.svg + "debt" -> F-debt.svg */
static char *suffixed(const char *path, const char *policy, bool suffix)
{
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    if (!suffix || !dot || (slash && dot < slash))
        dot = path + strlen(path);
    int rc = vs_buf_append(&b, path, (size_t)(dot - path));
    if (rc == 0 && suffix)
        rc = vs_buf_printf(&b, "-%s", policy);
    if (rc == 0)
        rc = vs_buf_puts(&b, dot);
    (void)rc; /* unlimited buffer: appends cannot fail */
    return vs_buf_take(&b, NULL);
}

static int write_file(const char *path, const struct vs_timeline *tl, const struct vs_scenario *s,
                      const char *title, bool svg)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "volsched sim: %s: %s\n", path, strerror(errno));
        return VS_EXIT_FAIL;
    }
    int rc = svg ? vs_timeline_write_svg(tl, s, title, f) : vs_timeline_write_csv(tl, s, f);
    if (fclose(f) != 0 && rc == 0)
        rc = -errno;
    if (rc) {
        fprintf(stderr, "volsched sim: %s: %s\n", path, vs_strerror(rc));
        return VS_EXIT_FAIL;
    }
    return 0;
}

/* A project's figures that volunteers judge a client by. */
static void json_volunteer(struct vs_json *j, const struct vs_sim_project_result *p)
{
    vs_json_key(j, "share_min_7d");
    vs_json_num(j, p->share_min_7d);
    vs_json_key(j, "share_max_7d");
    vs_json_num(j, p->share_max_7d);
    vs_json_key(j, "peak_queued_hours");
    vs_json_num(j, p->peak_queued / 3600);
    vs_json_key(j, "preemptions");
    vs_json_int(j, p->preemptions);
    vs_json_key(j, "preemptions_per_job");
    vs_json_num(j, p->preemptions_per_job);
    vs_json_key(j, "rollback_cpu_hours");
    vs_json_num(j, p->rollback / 3600);
    vs_json_key(j, "late_starts");
    vs_json_int(j, p->late_starts);
}

static void json_result(struct vs_json *j, const struct vs_sim_result *r)
{
    vs_json_obj_begin(j);
    vs_json_key(j, "idle_frac");
    vs_json_num(j, r->idle_frac);
    vs_json_key(j, "wasted_frac");
    vs_json_num(j, r->wasted_frac);
    vs_json_key(j, "wasted_frac_reported");
    vs_json_num(j, r->wasted_frac_reported);
    vs_json_key(j, "share_violation");
    vs_json_num(j, r->share_violation);
    vs_json_key(j, "monotony");
    vs_json_num(j, r->monotony);
    vs_json_key(j, "rpcs_per_job");
    vs_json_num(j, r->rpcs_per_job);
    vs_json_key(j, "rpcs");
    vs_json_int(j, r->rpcs);
    vs_json_key(j, "jobs_sent");
    vs_json_int(j, r->jobs_sent);
    vs_json_key(j, "deadline_misses");
    vs_json_int(j, r->deadline_misses);
    vs_json_key(j, "jobs_completed");
    vs_json_int(j, r->jobs_completed);
    vs_json_key(j, "preemptions");
    vs_json_int(j, r->preemptions);
    vs_json_key(j, "restart_waste_frac");
    vs_json_num(j, r->restart_waste_frac);
    vs_json_key(j, "edf_frac");
    vs_json_num(j, r->edf_frac);
    vs_json_key(j, "duration_days");
    vs_json_num(j, r->duration / 86400);
    vs_json_key(j, "projects");
    vs_json_obj_begin(j);
    for (size_t i = 0; i < r->nprojects; i++) {
        const struct vs_sim_project_result *p = &r->projects[i];
        vs_json_key(j, p->name);
        vs_json_obj_begin(j);
        vs_json_key(j, "cpu_share");
        vs_json_num(j, p->cpu_share);
        vs_json_key(j, "share_target");
        vs_json_num(j, p->share_target);
        vs_json_key(j, "jobs_sent");
        vs_json_int(j, p->jobs_sent);
        vs_json_key(j, "jobs_completed");
        vs_json_int(j, p->jobs_completed);
        vs_json_key(j, "deadlines_met");
        vs_json_int(j, p->deadlines_met);
        vs_json_key(j, "deadline_misses");
        vs_json_int(j, p->deadline_misses);
        vs_json_key(j, "wasted_cpu_hours");
        vs_json_num(j, p->wasted / 3600);
        vs_json_key(j, "rpcs");
        vs_json_int(j, p->rpcs);
        json_volunteer(j, p);
        vs_json_obj_end(j);
    }
    vs_json_obj_end(j);
    vs_json_obj_end(j);
}

/* Project i's figures that volunteers judge a client by, one column per run. */
static void table_volunteer(const struct vs_sim_result *r, size_t n, size_t i)
{
    printf("  %-20s", "share_7d (min-max)");
    for (size_t k = 0; k < n; k++) {
        char cell[40];
        snprintf(cell, sizeof(cell), "%.3f-%.3f", r[k].projects[i].share_min_7d,
                 r[k].projects[i].share_max_7d);
        printf(" %12s", cell);
    }
    printf("\n  %-20s", "peak_queued_hours");
    for (size_t k = 0; k < n; k++)
        printf(" %12.2f", r[k].projects[i].peak_queued / 3600);
    printf("\n  %-20s", "preemptions_per_job");
    for (size_t k = 0; k < n; k++)
        printf(" %12.4f", r[k].projects[i].preemptions_per_job);
    printf("\n  %-20s", "rollback_cpu_hours");
    for (size_t k = 0; k < n; k++)
        printf(" %12.2f", r[k].projects[i].rollback / 3600);
    printf("\n  %-20s", "late_starts");
    for (size_t k = 0; k < n; k++)
        printf(" %12lld", (long long)r[k].projects[i].late_starts);
    printf("\n");
}

/* The figures as rows, one column per run. */
static void print_table(const char *const *names, const struct vs_sim_result *r, size_t n)
{
    printf("%-22s", "figure");
    for (size_t k = 0; k < n; k++)
        printf(" %12s", names[k]);
    printf("\n");
#define ROW_F(label, field)                                                                        \
    do {                                                                                           \
        printf("%-22s", label);                                                                    \
        for (size_t k = 0; k < n; k++)                                                             \
            printf(" %12.4f", r[k].field);                                                         \
        printf("\n");                                                                              \
    } while (0)
#define ROW_I(label, field)                                                                        \
    do {                                                                                           \
        printf("%-22s", label);                                                                    \
        for (size_t k = 0; k < n; k++)                                                             \
            printf(" %12lld", (long long)r[k].field);                                              \
        printf("\n");                                                                              \
    } while (0)
    ROW_F("idle_frac", idle_frac);
    ROW_F("wasted_frac", wasted_frac);
    ROW_F("wasted_frac_reported", wasted_frac_reported);
    ROW_F("share_violation", share_violation);
    ROW_F("monotony", monotony);
    ROW_F("rpcs_per_job", rpcs_per_job);
    ROW_I("rpcs", rpcs);
    ROW_I("jobs_sent", jobs_sent);
    ROW_I("jobs_completed", jobs_completed);
    ROW_I("deadline_misses", deadline_misses);
    ROW_I("preemptions", preemptions);
    ROW_F("restart_waste_frac", restart_waste_frac);
    ROW_F("edf_frac", edf_frac);
#undef ROW_F
#undef ROW_I
    /* Per project: CPU share against its target, completions and misses. */
    for (size_t i = 0; i < r[0].nprojects; i++) {
        const struct vs_sim_project_result *p0 = &r[0].projects[i];
        printf("\n%s (target share %.3f)\n", p0->name, p0->share_target);
        printf("  %-20s", "cpu_share");
        for (size_t k = 0; k < n; k++)
            printf(" %12.4f", r[k].projects[i].cpu_share);
        printf("\n  %-20s", "completed (missed)");
        for (size_t k = 0; k < n; k++) {
            char cell[40];
            snprintf(cell, sizeof(cell), "%lld (%lld)", (long long)r[k].projects[i].jobs_completed,
                     (long long)r[k].projects[i].deadline_misses);
            printf(" %12s", cell);
        }
        printf("\n  %-20s", "wasted_cpu_hours");
        for (size_t k = 0; k < n; k++)
            printf(" %12.2f", r[k].projects[i].wasted / 3600);
        printf("\n");
        table_volunteer(r, n, i);
    }
}

static int split_policies(char *list, const char **out, size_t *out_n)
{
    size_t n = 0;
    char *p = list;
    while (*p) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        if (*p) {
            if (n == MAX_COMPARE)
                return VS_ELIMIT;
            out[n++] = p;
        }
        if (!comma)
            break;
        p = comma + 1;
    }
    *out_n = n;
    return n ? 0 : VS_EINVAL;
}

static bool known_policy(const char *name)
{
    for (size_t i = 0; vs_sim_policies[i]; i++)
        if (strcmp(vs_sim_policies[i], name) == 0)
            return true;
    return false;
}

int vs_cmd_sim(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},        {"policy", required_argument, NULL, 'p'},
        {"days", required_argument, NULL, 'd'},  {"seed", required_argument, NULL, 's'},
        {"json", no_argument, NULL, 'j'},        {"timeline", required_argument, NULL, 't'},
        {"csv", required_argument, NULL, 'c'},   {"compare", required_argument, NULL, 'C'},
        {"no-progress", no_argument, NULL, 'P'}, {NULL, 0, NULL, 0},
    };
    const char *policy = "fair", *timeline = NULL, *csv = NULL;
    char *compare = NULL;
    bool json = false, no_progress = false;
    struct vs_sim_options o = {0};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return VS_EXIT_OK;
        case 'p':
            policy = optarg;
            break;
        case 'd': {
            double d;
            if (vs_parse_double(optarg, &d) != 0 || d <= 0 || d > 36500) {
                fprintf(stderr, "volsched sim: --days wants a number of days > 0\n");
                return VS_EXIT_USAGE;
            }
            o.duration = d * 86400;
            break;
        }
        case 's': {
            int64_t v;
            if (vs_parse_int64(optarg, &v) != 0 || v < 0) {
                fprintf(stderr, "volsched sim: --seed wants a whole number >= 0\n");
                return VS_EXIT_USAGE;
            }
            o.seed = (uint64_t)v;
            o.seed_set = true;
            break;
        }
        case 'j':
            json = true;
            break;
        case 't':
            timeline = optarg;
            break;
        case 'c':
            csv = optarg;
            break;
        case 'C':
            compare = optarg;
            break;
        case 'P':
            no_progress = true;
            break;
        default:
            fprintf(stderr, "volsched sim: unknown or incomplete option '%s'\n", argv[optind - 1]);
            usage(stderr);
            return VS_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, optind >= argc ? "volsched sim: no scenario given\n"
                                       : "volsched sim: one scenario only\n");
        usage(stderr);
        return VS_EXIT_USAGE;
    }

    const char *names[MAX_COMPARE];
    size_t n = 1;
    char *compare_copy = NULL;
    if (compare) {
        compare_copy = vs_xstrdup(compare);
        if (split_policies(compare_copy, names, &n) != 0) {
            fprintf(stderr, "volsched sim: --compare wants a list like debt,shortfall,wrr\n");
            vs_free(compare_copy);
            return VS_EXIT_USAGE;
        }
    } else {
        names[0] = policy;
    }
    for (size_t k = 0; k < n; k++) {
        if (!known_policy(names[k])) {
            fprintf(stderr, "volsched sim: unknown policy '%s' (shortfall, debt or wrr)\n",
                    names[k]);
            vs_free(compare_copy);
            return VS_EXIT_USAGE;
        }
    }

    struct vs_scenario s;
    int status = load_scenario(argv[optind], &s);
    if (status) {
        vs_free(compare_copy);
        return status;
    }

    struct vs_sim_result res[MAX_COMPARE];
    size_t done = 0;
    struct vs_cli_progress pg = {.enabled = !no_progress && isatty(STDERR_FILENO)};
    status = VS_EXIT_OK;
    for (size_t k = 0; k < n; k++) {
        struct vs_timeline tl;
        o.policy = names[k];
        o.progress = vs_cli_progress_cb;
        o.progress_ctx = &pg;
        vs_cli_progress_start(&pg, names[k]);
        bool want_tl = timeline || csv;
        int rc = vs_sim_run(&s, &o, &res[k], want_tl ? &tl : NULL);
        if (rc) {
            fprintf(stderr, "volsched sim: %s: %s\n", names[k], vs_strerror(rc));
            status = VS_EXIT_FAIL;
            break;
        }
        done++;
        if (want_tl) {
            char title[160];
            snprintf(title, sizeof(title), "%.80s%s, policy %s, %g days, seed %llu", argv[optind],
                     strlen(argv[optind]) > 80 ? "..." : "", names[k], tl.duration / 86400,
                     (unsigned long long)(o.seed_set ? o.seed : s.seed));
            for (int w = 0; w < 2 && status == VS_EXIT_OK; w++) {
                const char *path = w == 0 ? timeline : csv;
                if (!path)
                    continue;
                char *p = suffixed(path, names[k], compare != NULL);
                status = write_file(p, &tl, &s, title, w == 0);
                vs_free(p);
            }
            vs_timeline_cleanup(&tl);
            if (status)
                break;
        }
    }

    if (status == VS_EXIT_OK) {
        if (json) {
            struct vs_buf b;
            struct vs_json j;
            vs_buf_init(&b, VS_BUF_UNLIMITED);
            vs_json_init(&j, &b, true);
            if (compare) {
                vs_json_obj_begin(&j);
                for (size_t k = 0; k < n; k++) {
                    vs_json_key(&j, names[k]);
                    json_result(&j, &res[k]);
                }
                vs_json_obj_end(&j);
            } else {
                json_result(&j, &res[0]);
            }
            if (vs_json_error(&j) == 0)
                printf("%s\n", vs_buf_str(&b));
            vs_buf_cleanup(&b);
        } else {
            printf("scenario %s: %zu projects, %d CPUs, %g days, seed %llu\n\n", argv[optind],
                   s.nprojects, s.ncpus, res[0].duration / 86400,
                   (unsigned long long)(o.seed_set ? o.seed : s.seed));
            print_table(names, res, n);
        }
    }
    for (size_t k = 0; k < done; k++)
        vs_sim_result_cleanup(&res[k]);
    vs_scenario_cleanup(&s);
    vs_free(compare_copy);
    return status;
}
