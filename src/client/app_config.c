/*
 * app_config.xml, BOINC's per-project file in the project's directory with
 * which a volunteer limits and sizes its apps:
 *
 *   <app_config>
 *     <app><name>A</name><max_concurrent>4</max_concurrent></app>
 *     <app_version><app_name>A</app_name><avg_ncpus>2</avg_ncpus></app_version>
 *     <project_max_concurrent>6</project_max_concurrent>
 *   </app_config>
 *
 * The client policy takes one limit and one CPU count per project
 * (vs_cproject.max_concurrent, job_ncpus), so per project: the limit is
 * project_max_concurrent, else the least app max_concurrent (exact for a
 * project with one app, the usual case, and never more jobs than any one
 * app allows); the CPUs are the largest avg_ncpus given. Read at start-up
 * and with the preferences (read_cc_config), as BOINC does. A malformed
 * file is reported and ignored.
 */
#include <math.h>
#include <string.h>

#include "volsched/buf.h"
#include "volsched/client.h"
#include "volsched/xml.h"

/* A child's number in [min, max], or 0 when absent or bad (reported). */
static double child_num(struct vs_client *c, size_t p, const struct vs_xml_node *n,
                        const char *name, double min, double max)
{
    const struct vs_xml_node *k = vs_xml_child(n, name);
    double v;
    if (!k)
        return 0;
    if (vs_xml_get_double(k, &v) != 0 || !isfinite(v) || v < min || v > max) {
        vs_client_msg(c, (long)p, 2, "app_config.xml: <%s> must be a number in [%g, %g]; ignored",
                      name, min, max);
        return 0;
    }
    return v;
}

static void read_project(struct vs_client *c, size_t p, struct vs_arena *a, struct vs_buf *b)
{
    struct cl_project *pr = &c->projects[p];
    pr->max_concurrent = 0;
    pr->app_ncpus = 0;
    char dir[VS_CLIENT_PATH_MAX], path[VS_CLIENT_PATH_MAX + 16];
    if (vs_client_project_dir(c, p, dir, sizeof(dir)) != 0)
        return;
    int n = snprintf(path, sizeof(path), "%s/app_config.xml", dir);
    if (n < 0 || (size_t)n >= sizeof(path))
        return;
    vs_buf_reset(b);
    if (vs_client_read_file(path, 1u << 20, b) != 0)
        return; /* no file: no limits */
    struct vs_xml_doc doc;
    struct vs_xml_error xe;
    if (vs_xml_parse(b->data, b->len, NULL, 0, a, &doc, &xe) != 0) {
        vs_client_msg(c, (long)p, 2, "app_config.xml: %s; file ignored", xe.msg);
        return;
    }
    if (strcmp(doc.root->name, "app_config") != 0) {
        vs_client_msg(c, (long)p, 2, "app_config.xml: the root element is <%s>; file ignored",
                      doc.root->name);
        return;
    }
    const struct vs_xml_node *root = doc.root;
    double mc = child_num(c, p, root, "project_max_concurrent", 0, 1e6);
    double app_mc = 0, ncpus = 0;
    for (const struct vs_xml_node *k = root->child; k; k = k->next) {
        if (strcmp(k->name, "app") == 0) {
            double v = child_num(c, p, k, "max_concurrent", 0, 1e6);
            if (v >= 1 && (app_mc == 0 || v < app_mc))
                app_mc = v;
        } else if (strcmp(k->name, "app_version") == 0) {
            double v = child_num(c, p, k, "avg_ncpus", 0, 4096);
            if (v > ncpus)
                ncpus = v;
        }
    }
    pr->max_concurrent = (int)(mc >= 1 ? mc : app_mc);
    pr->app_ncpus = ncpus;
}

void vs_client_app_config_read(struct vs_client *c)
{
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_buf b;
    vs_buf_init(&b, 1u << 20);
    for (size_t p = 0; p < c->n_projects; p++)
        read_project(c, p, &a, &b);
    vs_buf_cleanup(&b);
    vs_arena_cleanup(&a);
}
