/*
 * Inside the configuration module (src/config/): the tag table that the
 * reader (config.c), the writer (config_write.c) and the config_aux.xml
 * reader (config_aux.c) share, and the parse context with its error and
 * warning helpers. Not for use outside src/config/.
 */
#ifndef VOLSCHED_CONFIG_CONFIG_INT_H
#define VOLSCHED_CONFIG_CONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "volsched/alloc.h"
#include "volsched/config.h"
#include "volsched/xml.h"

/* What a tag's text is and how it is stored in struct vs_project_config. */
enum vs_config_kind {
    K_BOOL,         /* bool; "", 0 or 1 (BOINC's <tag/> is true) */
    K_INT,          /* int, >= min, <= max when max > min */
    K_LLONG,        /* long long, >= min */
    K_STR,          /* char[size], trimmed text */
    K_PATH,         /* char[size]; a relative path is taken under cfg->dir */
    K_STRLIST,      /* struct vs_config_list: each occurrence adds one */
    K_CORE_VERSION, /* int; BOINC's old major*100+minor form is scaled */
    K_LIMIT_CPU,    /* max_wus_in_progress: project CPU limit, per processor */
    K_LIMIT_GPU,    /* max_wus_in_progress_gpu: project GPU limit, per processor */
    K_VALIDATOR,    /* a <validator> block */
    K_ASSIMILATOR,  /* an <assimilator> block */
    K_LOCALITY_GEN, /* a <locality_gen> block: <command> */
    K_LOCALITY_WS,  /* a <locality_ws> block: <files> */
    K_DEL_METHOD,   /* int: <enable_delete_account>, BOINC's methods 0 and 1 */
    /* BOINC's tags with no field (off, size and bounds 0): */
    K_IGNORED,     /* BOINC-only, no meaning here (db_host, shmem_key, web site
                    * options): accepted without a word */
    K_UNSUPPORTED, /* BOINC behaviour volsched does not implement: accepted,
                    * and listed in one "BOINC option not supported" warning */
};

/* A row's flag: `volsched init` writes this tag into a new config.xml. */
#define VS_CONFIG_WRITTEN 1u

struct vs_config_tag {
    const char *name;
    enum vs_config_kind kind;
    size_t off, size; /* the field in struct vs_project_config */
    double min, max;
    unsigned flags;
};

/* The tags of config.xml's <config>, in the order the writer writes them. */
extern const struct vs_config_tag vs_config__tags[];
extern const size_t vs_config__n_tags;

/* One parse of one file. */
struct vs_config_ctx {
    struct vs_project_config *cfg;
    const char *file; /* for messages */
    struct vs_log *log;
    struct vs_config_error *err; /* may be NULL */
    struct vs_arena *arena;      /* trimmed texts; freed after the parse */
    /* The K_UNSUPPORTED tags met, "name (line N), ..." (cut when long):
     * logged once at the end of the file. */
    char *unsupported;
    size_t unsupported_size;
};

/* Fills ctx->err (when not NULL) and returns code. */
int vs_config__fail(const struct vs_config_ctx *x, int code, unsigned line, const char *fmt, ...)
    VS_PRINTF(4, 5);
/* Logs "FILE:LINE: <message>" at VS_LOG_WARN on ctx->log (may be NULL). */
void vs_config__warn(const struct vs_config_ctx *x, unsigned line, const char *fmt, ...)
    VS_PRINTF(3, 4);

/* The element's text, trimmed; an error if it holds elements. */
VS_MUST_CHECK int vs_config__text(const struct vs_config_ctx *x, const struct vs_xml_node *n,
                                  const char **out);
VS_MUST_CHECK int vs_config__int(const struct vs_config_ctx *x, const struct vs_xml_node *n,
                                 long long min, long long max, long long *out);
VS_MUST_CHECK int vs_config__bool(const struct vs_config_ctx *x, const struct vs_xml_node *n,
                                  bool *out);

/* "bitwise", "always_valid", "command" for enum vs_validate_method; NULL
 * for any other value. */
const char *vs_config__method_name(int method);

/* config_aux.xml's <config> children (config_aux.c). */
VS_MUST_CHECK int vs_config__aux_body(const struct vs_config_ctx *x, const struct vs_xml_node *cfg);

#endif
