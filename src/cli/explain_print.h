#ifndef VS_CLI_EXPLAIN_PRINT_H
#define VS_CLI_EXPLAIN_PRINT_H

#include "volsched/client_policy.h"

/* The pass's decisions on stdout as JSON; 0 or a VS_E* error. */
int vs_explain_print_json(enum vs_cpolicy pol, const struct vs_cstate *st,
                          const struct vs_cpolicy_out *out);
/* The same as a table for people. */
void vs_explain_print_table(enum vs_cpolicy pol, const struct vs_cstate *st,
                            const struct vs_cpolicy_out *out);

#endif
