/*
 * create_work's job lines, shared by `volsched create_work --stdin` and
 * `volsched workgen`: one job per line, BOINC's per-line flags
 * (--wu_name, --wu_template, --result_template, --command_line,
 * --target_host, --target_user, --target_team, --priority, --remote_file
 * URL NBYTES MD5) and input names; "double quotes" group words; blank lines
 * and # comments are skipped. Flags are matched exactly.
 */
#ifndef VOLSCHED_CLI_CW_LINES_H
#define VOLSCHED_CLI_CW_LINES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "volsched/alloc.h"
#include "volsched/create_work.h"

#define VS_CW_MAX_JOBS   1000000
#define VS_CW_MAX_LINE   65536
#define VS_CW_MAX_TOKENS 4096

/* Number options of create_work, with its messages (false: printed why). */
bool vs_cw_opt_int(const char *name, const char *s, int64_t min, struct vs_cw_opt *o);
bool vs_cw_opt_dbl(const char *name, const char *s, struct vs_cw_opt *o);
/* BOINC-COMPAT: an assignment id of 0 is rejected. */
bool vs_cw_id_arg(const char *name, const char *s, int64_t *out);
/* --remote_file URL NBYTES MD5 into rf (strings borrowed). */
bool vs_cw_remote_arg(const char **args, struct vs_cw_remote *rf);

/* Inputs of one job as they are read: local paths / staged names and
 * remote files, in order. v and remote have room for every word. */
struct vs_cw_inputs {
    const char **v;
    struct vs_cw_remote *remote;
    size_t n;
    bool any_remote;
};
void vs_cw_inputs_add(struct vs_cw_inputs *in, const char *word, const struct vs_cw_remote *rf);
void vs_cw_inputs_to_job(const struct vs_cw_inputs *in, struct vs_cw_job *j);

/*
 * Reads job lines from in until EOF (what names it in messages: "stdin").
 * Jobs without --wu_name are named WU_NAME_LINENO when wu_name is set.
 * Strings live in arena; the caller frees *out_jobs (vs_free). A bad line
 * is an error (message printed) unless continue_on_error, which skips it.
 * Returns 0, VS_EINVAL or VS_ELIMIT.
 */
VS_MUST_CHECK int vs_cw_read_jobs(FILE *in, const char *what, const char *wu_name,
                                  bool continue_on_error, struct vs_arena *arena,
                                  struct vs_cw_job **out_jobs, size_t *out_n);

#endif
