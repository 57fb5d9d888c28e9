/*
 * create_work's job lines (the --stdin format, BOINC's): read by
 * `volsched create_work --stdin` and from `volsched workgen`'s command.
 */
#include "cw_lines.h"

#include <string.h>

#include "cli_util.h"
#include "volsched/alloc.h"

#define INT_MAX_ARG 2000000000LL

bool vs_cw_opt_int(const char *name, const char *s, int64_t min, struct vs_cw_opt *o)
{
    int64_t v;
    if (!vs_cli_int("create_work", name, s, min, INT_MAX_ARG, &v))
        return false;
    o->set = true;
    o->v = (double)v;
    return true;
}

bool vs_cw_opt_dbl(const char *name, const char *s, struct vs_cw_opt *o)
{
    double v;
    if (!vs_cli_double("create_work", name, s, 0, &v))
        return false;
    o->set = true;
    o->v = v;
    return true;
}

bool vs_cw_id_arg(const char *name, const char *s, int64_t *out)
{
    /* BOINC-COMPAT: an id of 0 is rejected. */
    return vs_cli_int("create_work", name, s, 1, INT64_C(1) << 53, out);
}

/* Splits a --stdin line into tokens (blanks separate; "double quotes" group;
 * backslash escapes the next character inside quotes). Tokens live in arena. */
static int tokenize(const char *line, struct vs_arena *arena, const char **tok, size_t max,
                    size_t *out_n)
{
    size_t n = 0;
    const char *p = line;
    char *buf = vs_arena_alloc(arena, strlen(line) + 1);
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
            p++;
        if (!*p)
            break;
        if (n == max)
            return VS_ELIMIT;
        char *start = buf;
        while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') {
            if (*p == '"') {
                p++;
                while (*p && *p != '"') {
                    if (*p == '\\' && p[1])
                        p++;
                    *buf++ = *p++;
                }
                if (*p != '"')
                    return VS_EPARSE;
                p++;
            } else {
                *buf++ = *p++;
            }
        }
        *buf++ = '\0';
        tok[n++] = start;
    }
    *out_n = n;
    return 0;
}

/* The flags a --stdin line may carry (BOINC's list). */
enum {
    L_WU_NAME = 1,
    L_WU_TEMPLATE,
    L_RESULT_TEMPLATE,
    L_COMMAND_LINE,
    L_TARGET_HOST,
    L_TARGET_USER,
    L_TARGET_TEAM,
    L_PRIORITY,
    L_REMOTE_FILE,
};

static const struct vs_cli_xopt line_opts[] = {
    {"wu_name", 1, L_WU_NAME},
    {"wu_template", 1, L_WU_TEMPLATE},
    {"result_template", 1, L_RESULT_TEMPLATE},
    {"command_line", 1, L_COMMAND_LINE},
    {"target_host", 1, L_TARGET_HOST},
    {"target_user", 1, L_TARGET_USER},
    {"target_team", 1, L_TARGET_TEAM},
    {"priority", 1, L_PRIORITY},
    {"remote_file", 3, L_REMOTE_FILE},
};

/* Reads --remote_file's three words into rf (strings borrowed). */
bool vs_cw_remote_arg(const char **args, struct vs_cw_remote *rf)
{
    rf->url = args[0];
    rf->md5 = args[2];
    return vs_cli_double("create_work", "remote_file NBYTES", args[1], 1, &rf->nbytes);
}

void vs_cw_inputs_add(struct vs_cw_inputs *in, const char *word, const struct vs_cw_remote *rf)
{
    in->v[in->n] = word;
    memset(&in->remote[in->n], 0, sizeof(in->remote[in->n]));
    if (rf) {
        in->remote[in->n] = *rf;
        in->any_remote = true;
    }
    in->n++;
}

void vs_cw_inputs_to_job(const struct vs_cw_inputs *in, struct vs_cw_job *j)
{
    j->inputs = in->v;
    j->ninputs = in->n;
    j->remote = in->any_remote ? in->remote : NULL;
}

/* Parses one --stdin line into job j (strings in arena; tok is scratch of
 * VS_CW_MAX_TOKENS entries). */
static bool parse_line(const char *line, size_t lineno, struct vs_arena *arena, const char **tok,
                       struct vs_cw_job *j)
{
    size_t n = 0;
    int rc = tokenize(line, arena, tok, VS_CW_MAX_TOKENS, &n);
    if (rc) {
        fprintf(stderr, "volsched create_work: stdin line %zu: %s\n", lineno,
                rc == VS_EPARSE ? "unterminated quote" : "too many words");
        return false;
    }
    struct vs_cw_inputs in = {
        .v = vs_arena_alloc(arena, (n ? n : 1) * sizeof(*in.v)),
        .remote = vs_arena_alloc(arena, (n ? n : 1) * sizeof(*in.remote)),
    };
    bool ok = true;
    for (int i = 0; ok && (size_t)i < n;) {
        const char *args[3];
        int id = vs_cli_exact_next("create_work", (int)n, (char **)tok, &i, line_opts,
                                   sizeof(line_opts) / sizeof(line_opts[0]), args);
        struct vs_cw_remote rf;
        switch (id) {
        case 0:
            vs_cw_inputs_add(&in, args[0], NULL);
            break;
        case L_WU_NAME:
            j->wu_name = args[0];
            break;
        case L_WU_TEMPLATE:
            j->wu_template = args[0];
            break;
        case L_RESULT_TEMPLATE:
            j->result_template = args[0];
            break;
        case L_COMMAND_LINE:
            j->command_line = args[0];
            break;
        case L_TARGET_HOST:
            ok = vs_cw_id_arg("target_host", args[0], &j->target_host);
            break;
        case L_TARGET_USER:
            ok = vs_cw_id_arg("target_user", args[0], &j->target_user);
            break;
        case L_TARGET_TEAM:
            ok = vs_cw_id_arg("target_team", args[0], &j->target_team);
            break;
        case L_PRIORITY:
            ok = vs_cw_opt_int("priority", args[0], -INT_MAX_ARG, &j->priority);
            break;
        case L_REMOTE_FILE:
            ok = vs_cw_remote_arg(args, &rf);
            if (ok)
                vs_cw_inputs_add(&in, args[0], &rf);
            break;
        default:
            ok = false;
        }
        if (!ok)
            fprintf(stderr, "volsched create_work: (stdin line %zu)\n", lineno);
    }
    vs_cw_inputs_to_job(&in, j);
    return ok;
}

int vs_cw_read_jobs(FILE *in, const char *what, const char *wu_name, bool continue_on_error,
                    struct vs_arena *arena, struct vs_cw_job **out_jobs, size_t *out_n)
{
    char *line = vs_xmalloc(VS_CW_MAX_LINE);
    const char **tok = vs_xcalloc(VS_CW_MAX_TOKENS, sizeof(*tok));
    struct vs_cw_job *jobs = NULL;
    size_t njobs = 0, cap = 0, lineno = 0;
    int rc = 0;
    while (rc == 0 && fgets(line, VS_CW_MAX_LINE, in)) {
        lineno++;
        size_t len = strlen(line);
        if (len == VS_CW_MAX_LINE - 1 && line[len - 1] != '\n') {
            fprintf(stderr, "volsched create_work: %s line %zu is too long\n", what, lineno);
            rc = VS_ELIMIT;
            break;
        }
        const char *q = line;
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q == '\n' || *q == '\0' || *q == '#')
            continue; /* blank lines and comments */
        if (njobs == VS_CW_MAX_JOBS) {
            fprintf(stderr, "volsched create_work: more than %d jobs on %s\n", VS_CW_MAX_JOBS,
                    what);
            rc = VS_ELIMIT;
            break;
        }
        if (njobs == cap) {
            cap = cap ? 2 * cap : 64;
            jobs = vs_xreallocarray(jobs, cap, sizeof(*jobs));
        }
        struct vs_cw_job *j = &jobs[njobs];
        memset(j, 0, sizeof(*j));
        if (!parse_line(line, lineno, arena, tok, j)) {
            if (!continue_on_error) {
                rc = VS_EINVAL;
                break;
            }
            fprintf(stderr, "volsched create_work: skipped %s line %zu\n", what, lineno);
            continue;
        }
        if (!j->wu_name && wu_name) {
            char nm[VS_NAME_MAX];
            snprintf(nm, sizeof(nm), "%s_%zu", wu_name, lineno);
            j->wu_name = vs_arena_strndup(arena, nm, strlen(nm));
        }
        njobs++;
    }
    vs_free(line);
    vs_free(tok);
    if (rc) {
        vs_free(jobs);
        return rc;
    }
    *out_jobs = jobs;
    *out_n = njobs;
    return 0;
}
