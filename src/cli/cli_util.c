#include "cli_util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "volsched/str.h"

bool vs_cli_is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0 || strcmp(arg, "-help") == 0;
}

bool vs_cli_int(const char *cmd, const char *name, const char *s, int64_t min, int64_t max,
                int64_t *out)
{
    int64_t v;
    if (!s || vs_parse_int64(s, &v) != 0) {
        fprintf(stderr, "volsched %s: --%s: '%s' is not an integer\n", cmd, name, s ? s : "");
        return false;
    }
    if (v < min || v > max) {
        fprintf(stderr, "volsched %s: --%s: %lld is out of range [%lld, %lld]\n", cmd, name,
                (long long)v, (long long)min, (long long)max);
        return false;
    }
    *out = v;
    return true;
}

bool vs_cli_double(const char *cmd, const char *name, const char *s, double min, double *out)
{
    double v;
    if (!s || vs_parse_double(s, &v) != 0 || !(v == v) || v > 1e300) {
        fprintf(stderr, "volsched %s: --%s: '%s' is not a number\n", cmd, name, s ? s : "");
        return false;
    }
    if (v < min) {
        fprintf(stderr, "volsched %s: --%s: %g is below %g\n", cmd, name, v, min);
        return false;
    }
    *out = v;
    return true;
}

bool vs_cli_open_project(const char *cmd, const char *dir, struct vs_project_config *out_cfg,
                         struct vs_store **out_store)
{
    const char *d = dir ? dir : ".";
    int rc = vs_project_config_load(d, out_cfg);
    if (rc == VS_ENOTFOUND) {
        fprintf(stderr,
                "volsched %s: %s is not a volsched project (no config.xml); create one with "
                "`volsched init DIR` or pass --project DIR\n",
                cmd, d);
        return false;
    }
    if (rc) {
        fprintf(stderr, "volsched %s: cannot read %s/config.xml: %s\n", cmd, d, vs_strerror(rc));
        return false;
    }
    rc = vs_project_store_open(out_cfg, false, NULL, out_store);
    if (rc) {
        fprintf(stderr, "volsched %s: cannot open the store %s: %s\n", cmd, out_cfg->store_url,
                vs_strerror(rc));
        return false;
    }
    return true;
}

int vs_cli_exit_for(int rc)
{
    switch (rc) {
    case 0:
        return VS_EXIT_OK;
    case VS_EINVAL:
    case VS_ENOTFOUND:
    case VS_EEXISTS:
    case VS_EPARSE:
    case VS_ELIMIT:
        return VS_EXIT_USAGE;
    default:
        return VS_EXIT_FAIL;
    }
}
