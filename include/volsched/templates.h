/*
 * BOINC's job templates (tools/process_input_template.cpp,
 * process_result_template.cpp): the input template becomes a workunit's
 * xml_doc and some of its columns; the output template becomes each
 * result's xml_doc_in.
 *
 * Input template (BOINC-COMPAT):
 *   <input_template>
 *     <file_info> [<number>] [<sticky/>] [<no_delete/>] ...          one per input
 *                 [<physical_name>X</physical_name>]                    constant file
 *                 [<url> <md5_cksum> <nbytes>]                          remote file
 *     </file_info>
 *     <workunit>
 *       <file_ref> [<file_number>] <open_name>in</open_name> [<copy_file/>] </file_ref>
 *       [<command_line>] [<rsc_fpops_est> ... <max_success_results>]  -> columns
 *       [anything else, copied into the workunit XML]
 *     </workunit>
 *   </input_template>
 *
 * Output template (BOINC-COMPAT): <output_template> with <file_info>s named
 * <OUTFILE_n/> and uploaded to <UPLOAD_URL/>, then <result> with file_refs.
 */
#ifndef VOLSCHED_SERVER_TEMPLATES_H
#define VOLSCHED_SERVER_TEMPLATES_H

#include <stddef.h>
#include <stdint.h>

#include "volsched/config.h"
#include "volsched/error.h"
#include "volsched/store.h"

struct vs_sign_key;

/* BOINC-COMPAT: workunit.xml_doc and result.xml_doc_in are 64 KB columns. */
#define VS_TEMPLATE_MAX_DOC (64 * 1024)

/* One input file given to a job (already staged, md5 and size known). */
struct vs_tmpl_input {
    char name[VS_NAME_MAX]; /* physical name in the download hierarchy */
    char url[VS_URL_MAX];
    char md5_cksum[VS_SHORT_MAX];
    double nbytes;
};

/* Which workunit columns the template set (so explicit flags can override
 * and defaults can be adjusted). One bit per column, VS_TMPL_SET_*. */
#define VS_TMPL_SET_FPOPS_EST    (1u << 0)
#define VS_TMPL_SET_FPOPS_BOUND  (1u << 1)
#define VS_TMPL_SET_MEMORY_BOUND (1u << 2)
#define VS_TMPL_SET_DISK_BOUND   (1u << 3)
#define VS_TMPL_SET_DELAY_BOUND  (1u << 4)
#define VS_TMPL_SET_MIN_QUORUM   (1u << 5)
#define VS_TMPL_SET_TARGET       (1u << 6)
#define VS_TMPL_SET_MAX_ERROR    (1u << 7)
#define VS_TMPL_SET_MAX_TOTAL    (1u << 8)
#define VS_TMPL_SET_MAX_SUCCESS  (1u << 9)
#define VS_TMPL_SET_BATCH        (1u << 10)
#define VS_TMPL_SET_BANDWIDTH    (1u << 11)

/*
 * Processes an input template for one job with inputs[0..ninputs) (the
 * non-constant <file_info>s in order). Constant files (<physical_name>)
 * are looked up in cfg's download hierarchy. command_line (may be NULL) is
 * put in the workunit XML; it may not also be in the template. The
 * template's <workunit> rsc and replication values are written into wu,
 * and *out_set tells which. On success wu->xml_doc is replaced (the old
 * one freed) with the generated XML (caller owns). On failure a message
 * goes to err (size errsize) and the return is VS_EPARSE (malformed or
 * inconsistent template), VS_ENOTFOUND (constant file missing), VS_ELIMIT.
 */
VS_MUST_CHECK int vs_template_input(const char *tmpl, size_t len,
                                    const struct vs_project_config *cfg,
                                    const struct vs_tmpl_input *inputs, size_t ninputs,
                                    const char *command_line, struct vs_workunit *wu,
                                    unsigned *out_set, char *err, size_t errsize);

/* Number of non-constant <file_info>s an input template expects (or < 0 on a
 * malformed template). */
int vs_template_input_count(const char *tmpl, size_t len);

/*
 * Processes an output template for result result_name: <OUTFILE_n/> becomes
 * "<result_name>_r<random>_<n>", <UPLOAD_URL/> becomes upload_url, the outer
 * <output_template> tags are dropped, and each <file_info> gets an
 * <xml_signature> (upload certificate over name and max_nbytes) when
 * upload_key is not NULL. Every output <file_info> needs a <name> and a
 * <max_nbytes> (the client fails outputs without it). *out is a heap string
 * the caller frees. Errors as vs_template_input.
 */
VS_MUST_CHECK int vs_template_output(const char *tmpl, size_t len, const char *result_name,
                                     uint32_t random, const char *upload_url,
                                     const struct vs_sign_key *upload_key, char **out, char *err,
                                     size_t errsize);

/* The default templates `volsched app add` writes: one input opened as
 * "in", one output opened as "out", both <copy_file/> (so a plain program
 * that reads in and writes out runs under the BOINC client). */
extern const char vs_template_default_in[];
extern const char vs_template_default_out[];

/* Reads a whole template file (at most VS_TEMPLATE_MAX_DOC bytes) into a heap
 * string; -ENOENT if missing, VS_ELIMIT if too big. */
VS_MUST_CHECK int vs_template_read(const char *path, char **out, size_t *out_len);

#endif
