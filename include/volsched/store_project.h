/*
 * Opening the store that a project's configuration names (<store_url> in
 * config.xml, volsched/config.h): the one place where the configuration and
 * the store meet.
 */
#ifndef VOLSCHED_STORE_STORE_PROJECT_H
#define VOLSCHED_STORE_STORE_PROJECT_H

#include <stdbool.h>

#include "volsched/config.h"
#include "volsched/store.h"

/* vs_store_open(cfg->store_url), creating the store when create is true.
 * The caller owns *out_store and closes it with vs_store_close(). */
VS_MUST_CHECK int vs_project_store_open(const struct vs_project_config *cfg, bool create,
                                        struct vs_log *log, struct vs_store **out_store);

#endif
