#include "volsched/json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void vs_json_init(struct vs_json *j, struct vs_buf *out, bool pretty)
{
    memset(j, 0, sizeof(*j));
    j->out = out;
    j->pretty = pretty;
}

static void put(struct vs_json *j, const char *s, size_t n)
{
    if (j->err)
        return;
    j->err = vs_buf_append(j->out, s, n);
}

static void newline(struct vs_json *j)
{
    if (!j->pretty)
        return;
    put(j, "\n", 1);
    for (int i = 0; i < j->depth; i++)
        put(j, "  ", 2);
}

/* Emits the separator due before a value or key at the current depth. */
static void before_value(struct vs_json *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->depth > 0) {
        if (j->need_comma[j->depth - 1])
            put(j, ",", 1);
        j->need_comma[j->depth - 1] = true;
        newline(j);
    }
}

static void open(struct vs_json *j, char c)
{
    before_value(j);
    put(j, &c, 1);
    if (j->depth >= VS_JSON_MAX_DEPTH) {
        if (!j->err)
            j->err = VS_ELIMIT;
        return;
    }
    j->need_comma[j->depth++] = false;
}

static void close_(struct vs_json *j, char c)
{
    if (j->depth == 0) {
        if (!j->err)
            j->err = VS_ESTATE;
        return;
    }
    bool had = j->need_comma[j->depth - 1];
    j->depth--;
    if (had)
        newline(j);
    put(j, &c, 1);
}

void vs_json_obj_begin(struct vs_json *j)
{
    open(j, '{');
}
void vs_json_obj_end(struct vs_json *j)
{
    close_(j, '}');
}
void vs_json_arr_begin(struct vs_json *j)
{
    open(j, '[');
}
void vs_json_arr_end(struct vs_json *j)
{
    close_(j, ']');
}

static void escaped(struct vs_json *j, const char *s, size_t n)
{
    put(j, "\"", 1);
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *rep = NULL;
        char tmp[8];
        switch (c) {
        case '"':
            rep = "\\\"";
            break;
        case '\\':
            rep = "\\\\";
            break;
        case '\n':
            rep = "\\n";
            break;
        case '\r':
            rep = "\\r";
            break;
        case '\t':
            rep = "\\t";
            break;
        default:
            if (c < 0x20) {
                snprintf(tmp, sizeof(tmp), "\\u%04x", c);
                rep = tmp;
            }
        }
        if (rep) {
            put(j, s + start, i - start);
            put(j, rep, strlen(rep));
            start = i + 1;
        }
    }
    put(j, s + start, n - start);
    put(j, "\"", 1);
}

void vs_json_key(struct vs_json *j, const char *key)
{
    before_value(j);
    escaped(j, key, strlen(key));
    put(j, j->pretty ? ": " : ":", j->pretty ? 2 : 1);
    j->after_key = true;
}

void vs_json_strn(struct vs_json *j, const char *s, size_t n)
{
    before_value(j);
    escaped(j, s, n);
}

void vs_json_str(struct vs_json *j, const char *s)
{
    if (!s) {
        vs_json_null(j);
        return;
    }
    vs_json_strn(j, s, strlen(s));
}

void vs_json_num(struct vs_json *j, double v)
{
    before_value(j);
    if (!isfinite(v)) {
        put(j, "null", 4);
        return;
    }
    char tmp[40];
    int n = snprintf(tmp, sizeof(tmp), "%.10g", v);
    if (strcmp(tmp, "-0") == 0)
        n = snprintf(tmp, sizeof(tmp), "0");
    put(j, tmp, (size_t)n);
}

void vs_json_int(struct vs_json *j, int64_t v)
{
    before_value(j);
    char tmp[32];
    int n = snprintf(tmp, sizeof(tmp), "%" PRId64, v);
    put(j, tmp, (size_t)n);
}

void vs_json_bool(struct vs_json *j, bool v)
{
    before_value(j);
    put(j, v ? "true" : "false", v ? 4 : 5);
}

void vs_json_null(struct vs_json *j)
{
    before_value(j);
    put(j, "null", 4);
}

int vs_json_error(const struct vs_json *j)
{
    return j->err;
}

void vs_json_key_int(struct vs_json *j, const char *key, int64_t v)
{
    vs_json_key(j, key);
    vs_json_int(j, v);
}

void vs_json_key_str(struct vs_json *j, const char *key, const char *s)
{
    vs_json_key(j, key);
    vs_json_str(j, s);
}

void vs_json_key_num(struct vs_json *j, const char *key, double v)
{
    vs_json_key(j, key);
    vs_json_num(j, v);
}
