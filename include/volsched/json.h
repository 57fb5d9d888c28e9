/*
 * A small streaming JSON writer into a vs_buf. It tracks nesting so commas
 * are placed automatically; keys and strings are escaped. Numbers are
 * printed with %.17g-style round-trip precision trimmed to what is needed
 * ("%.10g" by default keeps output readable and deterministic).
 *
 * Errors (buffer cap) are sticky: check vs_json_error() once at the end.
 */
#ifndef VOLSCHED_JSON_H
#define VOLSCHED_JSON_H

#include <stdbool.h>
#include <stdint.h>

#include "volsched/buf.h"

#define VS_JSON_MAX_DEPTH 32

struct vs_json {
    struct vs_buf *out;
    int depth;
    bool need_comma[VS_JSON_MAX_DEPTH];
    bool after_key;
    bool pretty;
    int err;
};

void vs_json_init(struct vs_json *j, struct vs_buf *out, bool pretty);
void vs_json_obj_begin(struct vs_json *j);
void vs_json_obj_end(struct vs_json *j);
void vs_json_arr_begin(struct vs_json *j);
void vs_json_arr_end(struct vs_json *j);
void vs_json_key(struct vs_json *j, const char *key);
void vs_json_str(struct vs_json *j, const char *s);
void vs_json_strn(struct vs_json *j, const char *s, size_t n);
void vs_json_num(struct vs_json *j, double v);
void vs_json_int(struct vs_json *j, int64_t v);
void vs_json_bool(struct vs_json *j, bool v);
void vs_json_null(struct vs_json *j);
/* A key and its value in one call (objects of many fields). */
void vs_json_key_int(struct vs_json *j, const char *key, int64_t v);
void vs_json_key_str(struct vs_json *j, const char *key, const char *s);
void vs_json_key_num(struct vs_json *j, const char *key, double v);
/* Returns 0 or the first error met while writing. */
int vs_json_error(const struct vs_json *j);

#endif
