/* Life-cycle helpers of the store's domain structs (backend independent). */
#include <string.h>

#include "volsched/alloc.h"
#include "volsched/store.h"

void vs_user_cleanup(struct vs_user *u)
{
    if (!u)
        return;
    vs_free(u->global_prefs);
    vs_free(u->project_prefs);
    u->global_prefs = u->project_prefs = NULL;
}

void vs_app_version_cleanup(struct vs_app_version *av)
{
    if (!av)
        return;
    for (size_t i = 0; i < av->nfiles; i++)
        vs_free(av->files[i].file_signature);
    vs_free(av->files);
    av->files = NULL;
    av->nfiles = 0;
}

void vs_workunit_cleanup(struct vs_workunit *wu)
{
    if (!wu)
        return;
    vs_free(wu->xml_doc);
    wu->xml_doc = NULL;
}

void vs_result_cleanup(struct vs_result *r)
{
    if (!r)
        return;
    vs_free(r->xml_doc_in);
    vs_free(r->xml_doc_out);
    vs_free(r->stderr_out);
    r->xml_doc_in = r->xml_doc_out = r->stderr_out = NULL;
}

/* Deep copy: dst owns its own heap strings. */
static void result_copy(struct vs_result *dst, const struct vs_result *src)
{
    *dst = *src;
    dst->xml_doc_in = src->xml_doc_in ? vs_xstrdup(src->xml_doc_in) : NULL;
    dst->xml_doc_out = src->xml_doc_out ? vs_xstrdup(src->xml_doc_out) : NULL;
    dst->stderr_out = src->stderr_out ? vs_xstrdup(src->stderr_out) : NULL;
}

int vs_result_vec_add(void *ctx, const struct vs_result *r)
{
    struct vs_result_vec *rv = ctx;
    if (rv->n == rv->cap) {
        rv->cap = rv->cap ? 2 * rv->cap : 4;
        rv->v = vs_xreallocarray(rv->v, rv->cap, sizeof(*rv->v));
    }
    /* Callers' rows live only during their callback: take deep copies. */
    result_copy(&rv->v[rv->n++], r);
    return 0;
}

void vs_result_vec_cleanup(struct vs_result_vec *rv)
{
    for (size_t i = 0; i < rv->n; i++)
        vs_result_cleanup(&rv->v[i]);
    vs_free(rv->v);
    rv->v = NULL;
    rv->n = rv->cap = 0;
}

void vs_job_copy(struct vs_job *dst, const struct vs_job *src)
{
    dst->wu = src->wu;
    dst->wu.xml_doc = src->wu.xml_doc ? vs_xstrdup(src->wu.xml_doc) : NULL;
    result_copy(&dst->result, &src->result);
}

void vs_job_cleanup(struct vs_job *j)
{
    vs_workunit_cleanup(&j->wu);
    vs_result_cleanup(&j->result);
}

void vs_catalog_cleanup(struct vs_catalog *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->napp_versions; i++)
        vs_app_version_cleanup(&c->app_versions[i]);
    vs_free(c->platforms);
    vs_free(c->apps);
    vs_free(c->app_versions);
    memset(c, 0, sizeof(*c));
}

void vs_workunit_defaults(struct vs_workunit *wu)
{
    memset(wu, 0, sizeof(*wu));
    /* BOINC-COMPAT: tools/backend_lib.h defaults. */
    wu->min_quorum = 1;
    wu->target_nresults = 1;
    wu->max_error_results = 1;
    wu->max_total_results = 1;
    wu->max_success_results = 1;
    wu->rsc_fpops_est = 3.6e12;
    wu->rsc_fpops_bound = 8.64e13;
    wu->rsc_memory_bound = 5e8;
    wu->rsc_disk_bound = 1e9;
    wu->delay_bound = 7 * 86400;
    wu->size_class = -1;
}

enum vs_wu_phase vs_workunit_phase(const struct vs_workunit *wu)
{
    if (wu->file_delete_state == VS_FILE_DELETE_DONE)
        return VS_WU_PHASE_FILES_DELETED;
    if (wu->assimilate_state == VS_ASSIMILATE_DONE)
        return VS_WU_PHASE_ASSIMILATED;
    if (wu->assimilate_state == VS_ASSIMILATE_READY)
        return VS_WU_PHASE_ASSIMILATE_READY;
    if (wu->error_mask)
        return VS_WU_PHASE_ERROR;
    if (wu->need_validate)
        return VS_WU_PHASE_NEED_VALIDATE;
    if (wu->canonical_resultid)
        return VS_WU_PHASE_VALIDATED;
    return VS_WU_PHASE_IN_PROGRESS;
}

const char *const vs_wu_error_names[VS_WU_ERROR_BITS] = {
    "couldnt_send_result",
    "too_many_error_results",
    "too_many_success_results",
    "too_many_total_results",
    "cancelled",
    "no_canonical_result",
};

const char *vs_wu_phase_name(int phase)
{
    static const char *const names[VS_WU_PHASE__COUNT] = {
        "files_deleted", "assimilated", "assimilate_ready", "error",
        "need_validate", "validated",   "in_progress",
    };
    return phase >= 0 && phase < VS_WU_PHASE__COUNT ? names[phase] : "unknown";
}
