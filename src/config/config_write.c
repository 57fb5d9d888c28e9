/*
 * The writer of config.xml (`volsched init`): the rows of the tag table
 * (config_tags.c) marked for writing, in table order, then the daemons'
 * blocks, in BOINC's <boinc><config>...</config><daemons/></boinc> layout.
 * config_aux.xml gets seed 003's <max_jobs_in_progress> as a commented
 * example: an active <project> section there would replace config.xml's
 * max_wus_in_progress (the reader applies config_aux.xml last), so a fresh
 * project's config.xml limit would silently do nothing.
 * It lives beside the reader so the format has one home: whatever it
 * writes, vs_project_config_load reads back to the same values.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "config/config_int.h"
#include "volsched/buf.h"
#include "volsched/credit.h"
#include "volsched/fs.h"

/* BOINC-COMPAT: config_aux.xml as seed 003 shows it; 0 = no limit. */
static const char config_aux[] =
    "<?xml version=\"1.0\"?>\n"
    "<config>\n"
    "<!-- Job limits per host (seed 003, BOINC sched_limit). <jobs>0</jobs> means\n"
    "     no limit; <per_proc/> multiplies the limit by the host's processors.\n"
    "     Add <app><app_name>NAME</app_name>...</app> blocks for per-app limits.\n"
    "     The <project> section below is an example, commented out: when active\n"
    "     its <cpu_limit> and <gpu_limit> replace config.xml's max_wus_in_progress\n"
    "     and max_wus_in_progress_gpu (`volsched serve` says so when both are set).\n"
    "<max_jobs_in_progress>\n"
    "    <project>\n"
    "        <total_limit>\n"
    "            <jobs>0</jobs>\n"
    "        </total_limit>\n"
    "        <cpu_limit>\n"
    "            <jobs>0</jobs>\n"
    "            <per_proc/>\n"
    "        </cpu_limit>\n"
    "        <gpu_limit>\n"
    "            <jobs>0</jobs>\n"
    "            <per_proc/>\n"
    "        </gpu_limit>\n"
    "    </project>\n"
    "</max_jobs_in_progress>\n"
    "-->\n"
    "<max_jobs_in_progress>\n"
    "</max_jobs_in_progress>\n"
    "</config>\n";

static void write_blocks(const struct vs_project_config *cfg, struct vs_xml_writer *w)
{
    for (int i = 0; i < cfg->nvalidators; i++) {
        const struct vs_validator_config *v = &cfg->validators[i];
        vs_xml_open(w, "validator");
        if (v->app[0])
            vs_xml_str(w, "app", v->app);
        const char *method = vs_config__method_name(v->method);
        if (method)
            vs_xml_str(w, "method", method);
        if (v->command[0])
            vs_xml_str(w, "command", v->command);
        if (v->compare_command[0])
            vs_xml_str(w, "compare_command", v->compare_command);
        if (v->credit != VS_CREDIT_ADAPTIVE && vs_credit_method_name(v->credit))
            vs_xml_str(w, "credit", vs_credit_method_name(v->credit));
        vs_xml_close(w);
    }
    for (int i = 0; i < cfg->nassimilators; i++) {
        const struct vs_assimilator_config *a = &cfg->assimilators[i];
        vs_xml_open(w, "assimilator");
        if (a->app[0])
            vs_xml_str(w, "app", a->app);
        if (a->command[0])
            vs_xml_str(w, "command", a->command);
        vs_xml_close(w);
    }
}

/* One row's value; VS_EINTERNAL for a kind the writer does not write. */
static int write_tag(const struct vs_project_config *cfg, const struct vs_config_tag *t,
                     struct vs_xml_writer *w)
{
    const char *f = (const char *)cfg + t->off;
    switch (t->kind) {
    case K_STR:
    case K_PATH:
        vs_xml_str(w, t->name, f);
        return 0;
    case K_INT:
    case K_CORE_VERSION:
        vs_xml_int(w, t->name, *(const int *)f);
        return 0;
    case K_BOOL:
        vs_xml_int(w, t->name, *(const bool *)f ? 1 : 0);
        return 0;
    case K_LIMIT_CPU:
    case K_LIMIT_GPU:
        vs_xml_int(w, t->name, ((const struct vs_sp_rsc_limit *)f)->jobs);
        return 0;
    case K_LLONG:
    case K_STRLIST:
    case K_VALIDATOR:
    case K_ASSIMILATOR:
    case K_LOCALITY_GEN:
    case K_LOCALITY_WS:
    case K_DEL_METHOD:
    case K_IGNORED:
    case K_UNSUPPORTED:
        break;
    }
    return VS_EINTERNAL;
}

int vs_project_config_write(const struct vs_project_config *cfg)
{
    struct vs_buf b;
    vs_buf_init(&b, VS_CONFIG_MAX_FILE);
    struct vs_xml_writer w;
    int rc = vs_buf_puts(&b, "<?xml version=\"1.0\"?>\n");
    vs_xml_writer_init(&w, &b);
    vs_xml_open(&w, "boinc");
    vs_xml_open(&w, "config");
    for (size_t i = 0; i < vs_config__n_tags && rc == 0; i++)
        if (vs_config__tags[i].flags & VS_CONFIG_WRITTEN)
            rc = write_tag(cfg, &vs_config__tags[i], &w);
    write_blocks(cfg, &w);
    vs_xml_close(&w);
    /* BOINC's daemons and tasks sections: `volsched serve` runs its daemons
     * in-process, so they are listed for BOINC tools only. */
    vs_xml_open(&w, "daemons");
    vs_xml_close(&w);
    vs_xml_close(&w);
    if (rc == 0)
        rc = vs_xml_writer_error(&w);
    char path[VS_PATH_MAX + 16];
    if (rc == 0) {
        int n = snprintf(path, sizeof(path), "%s/config.xml", cfg->dir);
        rc = n < 0 || (size_t)n >= sizeof(path) ? VS_ELIMIT : 0;
    }
    if (rc == 0)
        /* config.xml may hold the store's password: owner-only. */
        rc = vs_fs_write_atomic(path, b.data, b.len, 0600, VS_FS_DURABLE | VS_FS_PID_TMP);
    vs_buf_cleanup(&b);
    return rc;
}

int vs_project_config_write_aux(const struct vs_project_config *cfg)
{
    char path[VS_PATH_MAX + 32];
    int n = snprintf(path, sizeof(path), "%s/config_aux.xml", cfg->dir);
    if (n < 0 || (size_t)n >= sizeof(path))
        return VS_ELIMIT;
    /* The operator's limits survive `volsched init --force`. */
    if (access(path, F_OK) == 0)
        return 0;
    return vs_fs_write_atomic(path, config_aux, sizeof(config_aux) - 1, 0600,
                              VS_FS_DURABLE | VS_FS_PID_TMP);
}
