/* Opening the store a project's configuration names (volsched/store_project.h). */
#include "volsched/store_project.h"
#include "volsched/config.h"

int vs_project_store_open(const struct vs_project_config *cfg, bool create, struct vs_log *log,
                          struct vs_store **out_store)
{
    return vs_store_open(cfg->store_url, create ? VS_STORE_CREATE : 0, log, out_store);
}
