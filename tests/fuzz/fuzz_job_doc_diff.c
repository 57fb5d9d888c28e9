/*
 * Differential fuzz target: the feeder's one-pass reader of stored job
 * documents (vs_proto_job_doc_parse_direct, src/proto/job_doc.c) against
 * the reference, vs_proto_job_doc_parse() (the reply parser on expat). On
 * any input the one-pass reader either declines (VS_EUNSUPPORTED) or
 * accepts something the reference accepts too, into the same reply: every
 * field of every <file_info>, URL, <workunit>, <result> and <file_ref>
 * compared (strings by bytes, NULL told from "", doubles by bits), and
 * nothing else set. vs_proto_job_doc_parse_fast(), what the feeder calls,
 * answers exactly as the reference: the same code, and on failure the same
 * message.
 *
 * The seed corpus is stored documents of the shapes the templates, the
 * bench and the tests make, which the one-pass reader all takes, so
 * mutations start inside its subset and walk its edges.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "volsched/alloc.h"
#include "volsched/proto.h"

static void same_str(const char *a, const char *b)
{
    CHECK((a == NULL) == (b == NULL));
    CHECK(!a || strcmp(a, b) == 0);
}

static void same_dbl(double a, double b)
{
    CHECK(memcmp(&a, &b, sizeof(a)) == 0);
}

static void same_refs(const struct vs_proto_file_ref *a, size_t na,
                      const struct vs_proto_file_ref *b, size_t nb)
{
    CHECK(na == nb && (na == 0 || (a && b)));
    for (size_t i = 0; i < na; i++) {
        same_str(a[i].file_name, b[i].file_name);
        same_str(a[i].open_name, b[i].open_name);
        CHECK(a[i].main_program == b[i].main_program && a[i].copy_file == b[i].copy_file);
        CHECK(a[i].optional == b[i].optional);
    }
}

static void same_file_info(const struct vs_proto_file_info *a, const struct vs_proto_file_info *b)
{
    same_str(a->name, b->name);
    CHECK(a->n_urls == b->n_urls && (a->n_urls == 0 || (a->urls && b->urls)));
    for (size_t i = 0; i < a->n_urls; i++) {
        CHECK(a->urls[i].kind == b->urls[i].kind);
        same_str(a->urls[i].url, b->urls[i].url);
    }
    same_dbl(a->nbytes, b->nbytes);
    same_dbl(a->max_nbytes, b->max_nbytes);
    same_str(a->md5_cksum, b->md5_cksum);
    CHECK(a->executable == b->executable);
    same_str(a->file_signature, b->file_signature);
    same_str(a->xml_signature, b->xml_signature);
    CHECK(a->sticky == b->sticky);
    same_dbl(a->sticky_lifetime, b->sticky_lifetime);
    CHECK(a->report_on_rpc == b->report_on_rpc && a->no_delete == b->no_delete);
    CHECK(a->is_project_file == b->is_project_file);
    CHECK(a->download_gzipped == b->download_gzipped);
    same_dbl(a->gzipped_nbytes, b->gzipped_nbytes);
    CHECK(a->gzip_when_done == b->gzip_when_done);
}

static void same_workunit(const struct vs_proto_workunit *a, const struct vs_proto_workunit *b)
{
    same_str(a->name, b->name);
    same_str(a->app_name, b->app_name);
    same_str(a->command_line, b->command_line);
    same_dbl(a->rsc_fpops_est, b->rsc_fpops_est);
    same_dbl(a->rsc_fpops_bound, b->rsc_fpops_bound);
    same_dbl(a->rsc_memory_bound, b->rsc_memory_bound);
    same_dbl(a->rsc_disk_bound, b->rsc_disk_bound);
    same_str(a->job_keyword_ids, b->job_keyword_ids);
    same_refs(a->file_refs, a->n_file_refs, b->file_refs, b->n_file_refs);
}

static void same_result(const struct vs_proto_result *a, const struct vs_proto_result *b)
{
    same_str(a->name, b->name);
    same_str(a->wu_name, b->wu_name);
    same_dbl(a->report_deadline, b->report_deadline);
    same_str(a->platform, b->platform);
    CHECK(a->version_num == b->version_num);
    same_str(a->plan_class, b->plan_class);
    CHECK(a->report_immediately == b->report_immediately);
    same_refs(a->file_refs, a->n_file_refs, b->file_refs, b->n_file_refs);
}

/* The reference set nothing the one-pass reader does not read. */
static void nothing_else(const struct vs_proto_reply *r)
{
    CHECK(r->n_apps == 0 && r->n_app_versions == 0 && r->n_result_acks == 0);
    CHECK(r->n_result_aborts == 0 && r->n_result_aborts_if_not_started == 0);
    CHECK(r->n_delete_file_infos == 0 && r->n_msgs_to_host == 0 && r->n_messages == 0);
    CHECK(r->n_no_rsc_apps == 0 && !r->has_user_info && r->hostid == 0);
    CHECK(!r->master_url && !r->project_name && !r->global_prefs && !r->project_prefs);
    CHECK(!r->code_sign_key && r->scheduler_version == 0 && r->request_delay == 0);
}

static void same_reply(const struct vs_proto_reply *a, const struct vs_proto_reply *b)
{
    nothing_else(a);
    nothing_else(b);
    CHECK(a->n_file_infos == b->n_file_infos && a->n_workunits == b->n_workunits);
    CHECK(a->n_results == b->n_results);
    for (size_t i = 0; i < a->n_file_infos; i++)
        same_file_info(&a->file_infos[i], &b->file_infos[i]);
    for (size_t i = 0; i < a->n_workunits; i++)
        same_workunit(&a->workunits[i], &b->workunits[i]);
    for (size_t i = 0; i < a->n_results; i++)
        same_result(&a->results[i], &b->results[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy of exactly size bytes, so that ASan sees any read past the end. */
    char *s = vs_xmalloc(size ? size : 1);
    if (size)
        memcpy(s, data, size);
    struct vs_arena a;
    vs_arena_init(&a, 0);
    struct vs_proto_reply ref, direct, fast;
    struct vs_proto_error rerr, ferr;
    int rc = vs_proto_job_doc_parse(s, size, &a, &ref, &rerr);
    int drc = vs_proto_job_doc_parse_direct(s, size, &a, &direct);
    CHECK(drc == 0 || drc == VS_EUNSUPPORTED);
    CHECK(drc != 0 || rc == 0); /* it never accepts what the reference rejects */

    int frc = vs_proto_job_doc_parse_fast(s, size, &a, &fast, &ferr);
    CHECK(frc == rc && ferr.code == rc);
    if (rc)
        CHECK(strcmp(ferr.msg, rerr.msg) == 0);
    else
        CHECK(ferr.msg[0] == '\0');

    if (drc == 0) {
        same_reply(&ref, &direct);
        same_reply(&ref, &fast);
    } else if (rc == 0) {
        CHECK(fast.n_file_infos == ref.n_file_infos && fast.n_workunits == ref.n_workunits);
        CHECK(fast.n_results == ref.n_results);
    }
    vs_arena_cleanup(&a);
    vs_free(s);
    return 0;
}
