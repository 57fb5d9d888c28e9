/*
 * Reading "k=v&k=v" argument strings: a page's query (as the HTTP layer
 * hands it, percent-encoded: http.h) or an HTML form's
 * application/x-www-form-urlencoded body.
 */
#ifndef VOLSCHED_SERVER_FORM_H
#define VOLSCHED_SERVER_FORM_H

#include <stdbool.h>
#include <stddef.h>

#include "volsched/error.h"

/*
 * Copies the decoded value of the first argument named key ('+' is a
 * space, %XX a byte) into out (n bytes, NUL-terminated). Returns 0;
 * VS_ENOTFOUND when there is no such argument (out is ""); VS_ELIMIT when
 * the value does not fit; VS_EPARSE for a bad %-escape or a decoded NUL.
 * An argument without '=' has the value "".
 */
VS_MUST_CHECK int vs_form_get(const char *args, const char *key, char *out, size_t n);

/* True when args has an argument named key. */
bool vs_form_has(const char *args, const char *key);

#endif
