/*
 * The HTML form bodies BOINC's submission clients send (internal to
 * src/server): application/x-www-form-urlencoded (lib/submit_api.py's
 * urlencode({'request': xml}), curl's -d) and multipart/form-data (the
 * request plus the files of job_file.php's upload_files). Fields are views
 * into the body or decoded copies in an arena; nothing is copied twice.
 */
#ifndef VOLSCHED_SERVER_SUBMIT_FORM_H
#define VOLSCHED_SERVER_SUBMIT_FORM_H

#include <stdbool.h>
#include <stddef.h>

#include "volsched/alloc.h"
#include "volsched/error.h"

#define VS_FORM_MAX_FIELDS 1024

struct vs_form_field {
    const char *name;  /* NUL-terminated (arena) */
    const char *value; /* len bytes, NUL-terminated after them */
    size_t len;
    const char *filename; /* a multipart file part's filename=, else NULL */
};

struct vs_form {
    struct vs_form_field f[VS_FORM_MAX_FIELDS];
    size_t n;
};

/*
 * Parses body (len bytes, NUL-terminated after them) by its content type
 * (NULL: urlencoded) into *out; strings live in arena or in body. Returns
 * 0; VS_EPARSE with a sentence in err for a malformed body (a multipart
 * body without its boundary, a part without a name, a bad %-escape);
 * VS_ELIMIT for more than VS_FORM_MAX_FIELDS fields; VS_EUNSUPPORTED for
 * another content type.
 */
VS_MUST_CHECK int vs_form_parse(const char *ctype, const char *body, size_t len,
                                struct vs_arena *arena, struct vs_form *out, char *err,
                                size_t errsize);

/* The first field named name, or NULL. */
const struct vs_form_field *vs_form_field_get(const struct vs_form *f, const char *name);

#endif
