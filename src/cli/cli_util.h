/*
 * Helpers shared by the project-admin subcommands (init, app, user, team,
 * create_work): help detection, number parsing with clear messages, and
 * opening a project directory with its store.
 */
#ifndef VOLSCHED_CLI_UTIL_H
#define VOLSCHED_CLI_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "store/project.h"
#include "store/store.h"

/* True for "--help", "-h" and "-help". */
bool vs_cli_is_help(const char *arg);

/* Parses a decimal integer option value; prints "CMD: --NAME: ..." and
 * returns false when it is not one or is outside [min, max]. */
bool vs_cli_int(const char *cmd, const char *name, const char *s, int64_t min, int64_t max,
                int64_t *out);
bool vs_cli_double(const char *cmd, const char *name, const char *s, double min, double *out);

/*
 * Loads DIR/config.xml (dir NULL = the current directory) and opens the
 * store. Prints a clear message naming cmd and returns false on failure.
 * The caller closes *out_store.
 */
bool vs_cli_open_project(const char *cmd, const char *dir, struct vs_project_config *out_cfg,
                         struct vs_store **out_store);

/* Exit status for a volsched error from an operation on user input: bad
 * input (2) for EINVAL/NOTFOUND/EXISTS/PARSE/LIMIT, failure (1) otherwise. */
int vs_cli_exit_for(int rc);

#endif
