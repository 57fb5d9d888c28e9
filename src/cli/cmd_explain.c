/*
 * volsched explain STATE.json [--policy P] [--json]
 *
 * Reads a snapshot of a client (format: docs/explain.md), runs one pass of
 * the client policy on it and says what it decides and why: the round-robin
 * simulation's shortfalls and deadline misses, the results chosen to run,
 * the start/suspend actions, and which project work fetch would ask for how
 * much. It answers a volunteer's "why is my computer running this?".
 *
 * All times in the file are seconds relative to now (now is 0).
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "explain_print.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/client_policy.h"
#include "volsched/json.h"

/* A snapshot larger than this is refused rather than parsed. */
#define EXPLAIN_MAX_FILE     (64u << 20)
#define EXPLAIN_MAX_PROJECTS 10000u
#define EXPLAIN_MAX_RESULTS  1000000u

static void usage(FILE *f)
{
    fprintf(f,
            "usage: volsched explain STATE.json [--policy P] [--json]\n"
            "\n"
            "Explains what the client scheduling policy does with a snapshot of a\n"
            "client's queue: which results run and why, which would miss their\n"
            "deadlines, and which project work fetch would ask for how much work.\n"
            "\n"
            "  --policy P   client policy: %s (default fair)\n"
            "  --json       print JSON instead of a table\n"
            "\n"
            "STATE.json is described in docs/explain.md; times are seconds from now.\n",
            vs_cpolicy_names());
}

/* ---------------------------------------------------------------- reading */

struct reader {
    const char *path;
    char where[160]; /* e.g. results[3] ("A1") */
    char msg[512];   /* the first error */
};

static int fail_at(struct reader *rd, const char *fmt, ...) VS_PRINTF(2, 3);

static int fail_at(struct reader *rd, const char *fmt, ...)
{
    char detail[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    snprintf(rd->msg, sizeof(rd->msg), "%s: %s%s%s", rd->path, rd->where, rd->where[0] ? ": " : "",
             detail);
    return VS_EPARSE;
}

/* Reads a number >= min (or any number when min is -INFINITY). Missing keys
 * give the default when not required. */
static int get_num(struct reader *rd, json_t *obj, const char *key, bool required, double min,
                   double def, double *out)
{
    json_t *v = json_object_get(obj, key);
    if (!v) {
        if (required)
            return fail_at(rd, "missing key \"%s\"", key);
        *out = def;
        return 0;
    }
    if (!json_is_number(v))
        return fail_at(rd, "\"%s\" must be a number", key);
    double x = json_number_value(v);
    if (!isfinite(x))
        return fail_at(rd, "\"%s\" must be a finite number", key);
    if (x < min)
        return fail_at(rd, "\"%s\" must be >= %g, not %g", key, min, x);
    *out = x;
    return 0;
}

static int get_bool(struct reader *rd, json_t *obj, const char *key, bool *out)
{
    json_t *v = json_object_get(obj, key);
    if (!v) {
        *out = false;
        return 0;
    }
    if (!json_is_boolean(v))
        return fail_at(rd, "\"%s\" must be true or false", key);
    *out = json_is_true(v);
    return 0;
}

static int get_name(struct reader *rd, json_t *obj, const char *key, const char **out)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return fail_at(rd, "missing key \"%s\"", key);
    if (!json_is_string(v) || json_string_length(v) == 0)
        return fail_at(rd, "\"%s\" must be a non-empty string", key);
    *out = json_string_value(v);
    return 0;
}

/* Refuses keys outside the allowed list: a misspelt key would otherwise be
 * silently ignored and the answer would be wrong. */
static int check_keys(struct reader *rd, json_t *obj, const char *const *allowed)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v)
    {
        bool ok = false;
        for (size_t i = 0; allowed[i] && !ok; i++)
            ok = strcmp(key, allowed[i]) == 0;
        if (!ok)
            return fail_at(rd, "unknown key \"%s\"", key);
    }
    return 0;
}

static const char *const top_keys[] = {"ncpus",
                                       "min_queue",
                                       "extra_queue",
                                       "sched_period",
                                       "on_frac",
                                       "active_frac",
                                       "cpu_efficiency",
                                       "leave_in_memory",
                                       "flops_per_cpu",
                                       "projects",
                                       "results",
                                       "last_sched_ago",
                                       NULL};
static const char *const project_keys[] = {"name",
                                           "resource_share",
                                           "std",
                                           "ltd",
                                           "suspended",
                                           "no_new_work",
                                           "deferred_for",
                                           "work_backoff_for",
                                           "master_fetch_pending",
                                           "latency_limited_for",
                                           "non_cpu_intensive",
                                           "rpc_user_request",
                                           "trickle_up_pending",
                                           "report_overdue",
                                           "job_est",
                                           "job_delay_bound",
                                           "job_ncpus",
                                           "max_concurrent",
                                           "results",
                                           NULL};
static const char *const result_keys[] = {"name",
                                          "project",
                                          "remaining",
                                          "deadline",
                                          "received",
                                          "files",
                                          "suspended",
                                          "running",
                                          "task",
                                          "running_for",
                                          "checkpointed",
                                          "checkpoint_age",
                                          "wall_since_checkpoint",
                                          NULL};

struct snapshot {
    json_t *root; /* owns every name string but the ones below */
    struct vs_cstate st;
    char **shown; /* names made for results whose name another project's
                   * result also has: "NAME (PROJECT)" */
    size_t nshown;
};

static int find_project(const struct vs_cstate *st, const char *name, size_t *out)
{
    for (size_t p = 0; p < st->nprojects; p++) {
        if (strcmp(st->projects[p].name, name) == 0) {
            *out = p;
            return 0;
        }
    }
    return VS_ENOTFOUND;
}

static int read_result(struct reader *rd, struct snapshot *sn, json_t *o, size_t index, long owner)
{
    struct vs_cstate *st = &sn->st;
    struct vs_cresult *r = &st->results[index];
    int rc;
    const char *pname = NULL;
    if (!json_is_object(o))
        return fail_at(rd, "%s must be an object", "a result");
    if ((rc = check_keys(rd, o, result_keys)) || (rc = get_name(rd, o, "name", &r->name)))
        return rc;
    size_t len = strlen(rd->where);
    snprintf(rd->where + len, sizeof(rd->where) - len, " (\"%s\")", r->name);
    if (owner >= 0) {
        r->project = (size_t)owner;
        if (json_object_get(o, "project")) {
            if ((rc = get_name(rd, o, "project", &pname)))
                return rc;
            if (strcmp(pname, st->projects[owner].name) != 0)
                return fail_at(rd, "\"project\" \"%s\" differs from the enclosing project", pname);
        }
    } else {
        if ((rc = get_name(rd, o, "project", &pname)))
            return rc;
        if (find_project(st, pname, &r->project) != 0)
            return fail_at(rd, "unknown project \"%s\"", pname);
    }
    double received = 0, running_for = 0, ck_age = 0, wsc = 0;
    bool running = false;
    if ((rc = get_num(rd, o, "remaining", true, 0, 0, &r->remaining)) ||
        (rc = get_num(rd, o, "deadline", true, 0, 0, &r->deadline)) ||
        (rc = get_num(rd, o, "received", false, 0, (double)(st->nresults - index), &received)) ||
        (rc = get_bool(rd, o, "suspended", &r->suspended)) ||
        (rc = get_bool(rd, o, "running", &running)) ||
        (rc = get_bool(rd, o, "checkpointed", &r->checkpointed)) ||
        (rc = get_num(rd, o, "running_for", false, 0, st->host.sched_period, &running_for)) ||
        (rc = get_num(rd, o, "checkpoint_age", false, 0, 0, &ck_age)))
        return rc;
    /* "received" is how long ago: the larger, the earlier. By default the
     * order of the file. */
    r->received = -received;
    const char *files = "ready", *task = running ? "running" : "unstarted";
    json_t *v;
    if ((v = json_object_get(o, "files"))) {
        if (!json_is_string(v))
            return fail_at(rd, "\"%s\" must be \"ready\", \"downloading\" or \"deferred\"",
                           "files");
        files = json_string_value(v);
    }
    if (strcmp(files, "ready") == 0)
        r->files = VS_CFILES_READY;
    else if (strcmp(files, "downloading") == 0)
        r->files = VS_CFILES_DOWNLOADING;
    else if (strcmp(files, "deferred") == 0)
        r->files = VS_CFILES_DEFERRED;
    else
        return fail_at(
            rd, "\"files\" must be \"ready\", \"downloading\" or \"deferred\", not \"%s\"", files);
    if ((v = json_object_get(o, "task"))) {
        if (!json_is_string(v))
            return fail_at(rd, "\"%s\" must be a string", "task");
        task = json_string_value(v);
        if (json_object_get(o, "running") && running != (strcmp(task, "running") == 0))
            return fail_at(rd, "\"running\" contradicts \"%s\"", "task");
    }
    if (strcmp(task, "unstarted") == 0)
        r->task = VS_CTASK_UNSTARTED;
    else if (strcmp(task, "running") == 0)
        r->task = VS_CTASK_RUNNING;
    else if (strcmp(task, "suspended") == 0)
        r->task = VS_CTASK_SUSPENDED;
    else if (strcmp(task, "removed") == 0)
        r->task = VS_CTASK_REMOVED;
    else
        return fail_at(rd,
                       "\"task\" must be \"unstarted\", \"running\", \"suspended\" or \"removed\", "
                       "not \"%s\"",
                       task);
    r->running_since = st->now - running_for;
    r->checkpoint_time = st->now - ck_age;
    double wsc_default = r->checkpointed ? ck_age : running_for;
    if ((rc = get_num(rd, o, "wall_since_checkpoint", false, 0, wsc_default, &wsc)))
        return rc;
    r->wall_since_checkpoint = wsc;
    return 0;
}

static int read_project(struct reader *rd, struct snapshot *sn, json_t *o, size_t index)
{
    struct vs_cproject *p = &sn->st.projects[index];
    int rc;
    double deferred_for = 0, backoff_for = 0, latency_for = 0, mc = 0;
    if (!json_is_object(o))
        return fail_at(rd, "%s must be an object", "a project");
    if ((rc = check_keys(rd, o, project_keys)) || (rc = get_name(rd, o, "name", &p->name)))
        return rc;
    size_t len = strlen(rd->where);
    snprintf(rd->where + len, sizeof(rd->where) - len, " (\"%s\")", p->name);
    for (size_t i = 0; i < index; i++) {
        if (strcmp(sn->st.projects[i].name, p->name) == 0)
            return fail_at(rd, "duplicate project name \"%s\"", p->name);
    }
    if ((rc = get_num(rd, o, "resource_share", true, 0, 0, &p->resource_share)))
        return rc;
    /* 0 is a backup project (docs/simulator.md). */
    if ((rc = get_num(rd, o, "std", false, 0, 0, &p->std)) ||
        (rc = get_num(rd, o, "ltd", false, -INFINITY, 0, &p->ltd)) ||
        (rc = get_bool(rd, o, "suspended", &p->suspended)) ||
        (rc = get_bool(rd, o, "no_new_work", &p->no_new_work)) ||
        (rc = get_num(rd, o, "deferred_for", false, 0, 0, &deferred_for)) ||
        (rc = get_num(rd, o, "work_backoff_for", false, 0, 0, &backoff_for)) ||
        (rc = get_bool(rd, o, "master_fetch_pending", &p->master_fetch_pending)) ||
        (rc = get_num(rd, o, "latency_limited_for", false, 0, 0, &latency_for)) ||
        (rc = get_bool(rd, o, "non_cpu_intensive", &p->non_cpu_intensive)) ||
        (rc = get_bool(rd, o, "rpc_user_request", &p->rpc_user_request)) ||
        (rc = get_bool(rd, o, "trickle_up_pending", &p->trickle_up_pending)) ||
        (rc = get_bool(rd, o, "report_overdue", &p->report_overdue)) ||
        (rc = get_num(rd, o, "job_est", false, 0, 0, &p->job_est)) ||
        (rc = get_num(rd, o, "job_delay_bound", false, 0, 0, &p->job_delay_bound)) ||
        (rc = get_num(rd, o, "job_ncpus", false, 0, 0, &p->job_ncpus)) ||
        (rc = get_num(rd, o, "max_concurrent", false, 0, 0, &mc)))
        return rc;
    if (mc != floor(mc) || mc > 1e6)
        return fail_at(rd, "\"%s\" must be a whole number up to 1000000", "max_concurrent");
    p->max_concurrent = (int)mc;
    if (p->std > VS_CDEBT_STD_MAX)
        return fail_at(rd, "\"%s\" must be at most 86400", "std");
    p->min_rpc_time = deferred_for > 0 ? sn->st.now + deferred_for : -INFINITY;
    p->work_backoff_until = backoff_for > 0 ? sn->st.now + backoff_for : -INFINITY;
    p->latency_limited_until = latency_for > 0 ? sn->st.now + latency_for : -INFINITY;
    return 0;
}

/* A result's name and project, to sort by (check_result_names). */
struct rname {
    const char *name;
    size_t project, idx;
};

static int by_name(const void *a, const void *b)
{
    const struct rname *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c != 0)
        return c;
    return x->project < y->project ? -1 : x->project > y->project;
}

static void sort_by_name(const struct vs_cstate *st, struct rname *v)
{
    for (size_t i = 0; i < st->nresults; i++)
        v[i] = (struct rname){st->results[i].name, st->results[i].project, i};
    qsort(v, st->nresults, sizeof(*v), by_name);
}

/*
 * A result's name is unique within its project, as on a BOINC client; two
 * projects may well send results of the same name. Those are shown as
 * "NAME (PROJECT)", so that every line and JSON key of the answer names one
 * result. Sorting keeps this O(n log n) on a large snapshot.
 */
static int check_result_names(struct reader *rd, struct snapshot *sn)
{
    struct vs_cstate *st = &sn->st;
    size_t n = st->nresults;
    if (n < 2)
        return 0;
    struct rname *v = vs_xcalloc(n, sizeof(*v));
    bool *shared = vs_xcalloc(n, sizeof(*shared));
    int rc = 0;
    sort_by_name(st, v);
    for (size_t i = 1; i < n && rc == 0; i++) {
        if (strcmp(v[i - 1].name, v[i].name) != 0)
            continue;
        if (v[i - 1].project == v[i].project)
            rc = fail_at(rd, "duplicate result name \"%s\" in project \"%s\"", v[i].name,
                         st->projects[v[i].project].name);
        shared[v[i - 1].idx] = shared[v[i].idx] = true;
    }
    for (size_t r = 0; r < n && rc == 0; r++)
        sn->nshown += shared[r];
    if (rc == 0 && sn->nshown > 0) {
        sn->shown = vs_xcalloc(sn->nshown, sizeof(*sn->shown));
        size_t k = 0;
        for (size_t r = 0; r < n; r++) {
            if (!shared[r])
                continue;
            const char *pn = st->projects[st->results[r].project].name;
            size_t len = strlen(st->results[r].name) + strlen(pn) + 4;
            sn->shown[k] = vs_xmalloc(len);
            snprintf(sn->shown[k], len, "%s (%s)", st->results[r].name, pn);
            st->results[r].name = sn->shown[k++];
        }
        /* A made name may equal another result's own: then the answer
         * could not say which is which. */
        sort_by_name(st, v);
        for (size_t i = 1; i < n && rc == 0; i++)
            if (strcmp(v[i - 1].name, v[i].name) == 0)
                rc = fail_at(rd, "result name \"%s\" is ambiguous", v[i].name);
    }
    vs_free(shared);
    vs_free(v);
    return rc;
}

static int read_snapshot(struct reader *rd, struct snapshot *sn)
{
    memset(&sn->st, 0, sizeof(sn->st));
    struct stat sb;
    if (stat(rd->path, &sb) != 0) {
        snprintf(rd->msg, sizeof(rd->msg), "%s: cannot read: %s", rd->path, strerror(errno));
        return VS_EIO;
    }
    if ((unsigned long long)sb.st_size > EXPLAIN_MAX_FILE) {
        snprintf(rd->msg, sizeof(rd->msg), "%s: larger than %u MiB", rd->path,
                 EXPLAIN_MAX_FILE >> 20);
        return VS_ELIMIT;
    }
    json_error_t jerr;
    sn->root = json_load_file(rd->path, JSON_REJECT_DUPLICATES, &jerr);
    if (!sn->root) {
        snprintf(rd->msg, sizeof(rd->msg), "%s:%d:%d: invalid JSON: %s", rd->path, jerr.line,
                 jerr.column, jerr.text);
        return VS_EPARSE;
    }
    json_t *root = sn->root;
    struct vs_cstate *st = &sn->st;
    rd->where[0] = '\0';
    if (!json_is_object(root))
        return fail_at(rd, "%s must be a JSON object", "the snapshot");
    int rc;
    double ncpus = 0, last_ago = 0;
    if ((rc = check_keys(rd, root, top_keys)) ||
        (rc = get_num(rd, root, "ncpus", true, 1, 0, &ncpus)) ||
        (rc = get_num(rd, root, "min_queue", true, 0, 0, &st->host.min_queue)) ||
        (rc = get_num(rd, root, "extra_queue", false, 0, 0, &st->host.extra_queue)) ||
        (rc = get_num(rd, root, "sched_period", true, 0, 0, &st->host.sched_period)) ||
        (rc = get_num(rd, root, "on_frac", true, 0, 0, &st->host.on_frac)) ||
        (rc = get_num(rd, root, "active_frac", true, 0, 0, &st->host.active_frac)) ||
        (rc = get_num(rd, root, "cpu_efficiency", false, 0, 1, &st->host.cpu_efficiency)) ||
        (rc = get_bool(rd, root, "leave_in_memory", &st->host.leave_in_memory)) ||
        (rc = get_num(rd, root, "flops_per_cpu", false, 0, 0, &st->host.flops_per_cpu)) ||
        (rc = get_num(rd, root, "last_sched_ago", false, 0, -1, &last_ago)))
        return rc;
    if (ncpus != floor(ncpus) || ncpus > 4096)
        return fail_at(rd, "\"%s\" must be a whole number from 1 to 4096", "ncpus");
    st->host.ncpus = (int)ncpus;
    if (st->host.sched_period <= 0)
        return fail_at(rd, "\"%s\" must be > 0", "sched_period");
    const char *fracs[] = {"on_frac", "active_frac", "cpu_efficiency"};
    double vals[] = {st->host.on_frac, st->host.active_frac, st->host.cpu_efficiency};
    for (int i = 0; i < 3; i++) {
        if (!(vals[i] > 0 && vals[i] <= 1))
            return fail_at(rd, "\"%s\" must be in (0, 1]", fracs[i]);
    }
    st->now = 0;
    /* By default the scheduler last ran one scheduling period ago. */
    st->last_sched_time = last_ago < 0 ? -st->host.sched_period : -last_ago;

    json_t *projects = json_object_get(root, "projects");
    if (!projects)
        return fail_at(rd, "missing key \"%s\"", "projects");
    if (!json_is_array(projects))
        return fail_at(rd, "\"%s\" must be an array", "projects");
    json_t *top_results = json_object_get(root, "results");
    if (top_results && !json_is_array(top_results))
        return fail_at(rd, "\"%s\" must be an array", "results");

    size_t np = json_array_size(projects), nr = top_results ? json_array_size(top_results) : 0;
    for (size_t i = 0; i < np; i++) {
        json_t *nested = json_object_get(json_array_get(projects, i), "results");
        if (nested && !json_is_array(nested)) {
            snprintf(rd->where, sizeof(rd->where), "projects[%zu]", i);
            return fail_at(rd, "\"%s\" must be an array", "results");
        }
        nr += json_array_size(nested);
    }
    if (np > EXPLAIN_MAX_PROJECTS || nr > EXPLAIN_MAX_RESULTS)
        return fail_at(rd, "%s: too many projects or results", "limit");
    st->projects = vs_xcalloc(np ? np : 1, sizeof(*st->projects));
    st->results = vs_xcalloc(nr ? nr : 1, sizeof(*st->results));
    st->nprojects = np;
    st->nresults = nr;

    for (size_t i = 0; i < np; i++) {
        snprintf(rd->where, sizeof(rd->where), "projects[%zu]", i);
        if ((rc = read_project(rd, sn, json_array_get(projects, i), i)))
            return rc;
    }
    size_t ri = 0;
    for (size_t i = 0; i < np; i++) {
        json_t *nested = json_object_get(json_array_get(projects, i), "results");
        for (size_t j = 0; j < json_array_size(nested); j++, ri++) {
            snprintf(rd->where, sizeof(rd->where), "projects[%zu].results[%zu]", i, j);
            if ((rc = read_result(rd, sn, json_array_get(nested, j), ri, (long)i)))
                return rc;
        }
    }
    for (size_t j = 0; j < json_array_size(top_results); j++, ri++) {
        snprintf(rd->where, sizeof(rd->where), "results[%zu]", j);
        if ((rc = read_result(rd, sn, json_array_get(top_results, j), ri, -1)))
            return rc;
    }
    rd->where[0] = '\0';
    if ((rc = check_result_names(rd, sn)))
        return rc;
    if (vs_cstate_validate(st) != 0)
        return fail_at(rd, "%s", "the snapshot is not valid");
    return 0;
}

static void snapshot_cleanup(struct snapshot *sn)
{
    vs_free(sn->st.projects);
    vs_free(sn->st.results);
    for (size_t i = 0; i < sn->nshown; i++)
        vs_free(sn->shown[i]);
    vs_free(sn->shown);
    json_decref(sn->root);
}

/* ---------------------------------------------------------------- output */

int vs_cmd_explain(int argc, char **argv)
{
    const char *path = NULL, *policy_name = "fair";
    bool as_json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return VS_EXIT_OK;
        } else if (strcmp(argv[i], "--json") == 0) {
            as_json = true;
        } else if (strcmp(argv[i], "--policy") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "volsched explain: --policy needs a value\n");
                return VS_EXIT_USAGE;
            }
            policy_name = argv[++i];
        } else if (strncmp(argv[i], "--policy=", 9) == 0) {
            policy_name = argv[i] + 9;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "volsched explain: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return VS_EXIT_USAGE;
        } else if (!path) {
            path = argv[i];
        } else {
            fprintf(stderr, "volsched explain: unexpected argument '%s'\n", argv[i]);
            return VS_EXIT_USAGE;
        }
    }
    if (!path) {
        usage(stderr);
        return VS_EXIT_USAGE;
    }
    enum vs_cpolicy pol;
    if (vs_cpolicy_parse(policy_name, &pol) != 0) {
        fprintf(stderr, "volsched explain: unknown policy '%s' (known: %s)\n", policy_name,
                vs_cpolicy_names());
        return VS_EXIT_USAGE;
    }

    struct reader rd = {.path = path};
    struct snapshot sn = {0};
    int status = VS_EXIT_OK;
    if (read_snapshot(&rd, &sn) != 0) {
        fprintf(stderr, "volsched explain: %s\n", rd.msg);
        status = VS_EXIT_USAGE;
        goto done;
    }
    struct vs_cpolicy_ws ws;
    vs_cpolicy_ws_init(&ws);
    struct vs_cpolicy_out out;
    if (vs_cpolicy_pass(pol, &sn.st, &ws, &out) != 0) {
        fprintf(stderr, "volsched explain: %s: the snapshot is not valid\n", path);
        status = VS_EXIT_USAGE;
    } else if (as_json) {
        if (vs_explain_print_json(pol, &sn.st, &out) != 0)
            status = VS_EXIT_FAIL;
    } else {
        vs_explain_print_table(pol, &sn.st, &out);
    }
    vs_cpolicy_ws_cleanup(&ws);
done:
    snapshot_cleanup(&sn);
    return status;
}
