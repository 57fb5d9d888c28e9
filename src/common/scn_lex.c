/*
 * The scenario languages' lexer and their file reader; see volsched/scn.h.
 */
#include "volsched/scn.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "volsched/str.h"

void vs_lex_init(struct vs_lex *lx, const char *text, size_t len, struct vs_scn_error *err)
{
    memset(lx, 0, sizeof(*lx));
    lx->text = text;
    lx->len = len;
    lx->line = 1;
    lx->col = 1;
    lx->err = err;
    if (err)
        memset(err, 0, sizeof(*err));
}

int vs_lex_fail(struct vs_lex *lx, int line, int col, const char *fmt, ...)
{
    if (lx->err && lx->rc == 0) {
        lx->err->line = line;
        lx->err->col = col;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(lx->err->msg, sizeof(lx->err->msg), fmt, ap);
        va_end(ap);
    }
    if (lx->rc == 0)
        lx->rc = VS_EPARSE;
    return lx->rc;
}

static void advance(struct vs_lex *lx)
{
    if (lx->text[lx->pos] == '\n') {
        lx->line++;
        lx->col = 1;
    } else {
        lx->col++;
    }
    lx->pos++;
}

static bool ident_start(int c)
{
    return isalpha(c) || c == '_';
}

static bool ident_char(int c)
{
    return isalnum(c) || c == '_' || c == '@' || c == '.' || c == '-';
}

/* A number runs on through letters (its unit) and an exponent's sign. */
static void read_number(struct vs_lex *lx)
{
    advance(lx);
    while (lx->pos < lx->len) {
        unsigned char d = (unsigned char)lx->text[lx->pos];
        unsigned char prev = (unsigned char)lx->text[lx->pos - 1];
        if (isalnum(d) || d == '.' || ((d == '-' || d == '+') && (prev == 'e' || prev == 'E')))
            advance(lx);
        else
            break;
    }
}

int vs_lex_next(struct vs_lex *lx)
{
    if (lx->rc)
        return lx->rc;
    while (lx->pos < lx->len) {
        unsigned char c = (unsigned char)lx->text[lx->pos];
        if (c == '#') {
            while (lx->pos < lx->len && lx->text[lx->pos] != '\n')
                advance(lx);
        } else if (isspace(c)) {
            advance(lx);
        } else {
            break;
        }
    }
    struct vs_lex_tok *t = &lx->cur;
    t->p = lx->text + lx->pos;
    t->n = 0;
    t->line = lx->line;
    t->col = lx->col;
    if (lx->pos >= lx->len) {
        t->kind = VS_LEX_EOF;
        return 0;
    }
    unsigned char c = (unsigned char)lx->text[lx->pos];
    size_t start = lx->pos;
    static const char punct[] = "(),=:";
    static const enum vs_lex_kind pkind[] = {VS_LEX_LP, VS_LEX_RP, VS_LEX_COMMA, VS_LEX_EQ,
                                             VS_LEX_COLON};
    const char *pc = c ? strchr(punct, c) : NULL;
    if (pc && (c != ':' || lx->allow_colon)) {
        t->kind = pkind[pc - punct];
        advance(lx);
    } else if (ident_start(c)) {
        t->kind = VS_LEX_IDENT;
        while (lx->pos < lx->len && ident_char((unsigned char)lx->text[lx->pos]))
            advance(lx);
    } else if (isdigit(c) || c == '.' || c == '-' || c == '+') {
        t->kind = VS_LEX_NUM;
        read_number(lx);
    } else if (isprint(c)) {
        return vs_lex_fail(lx, t->line, t->col, "unexpected character '%c'", c);
    } else {
        return vs_lex_fail(lx, t->line, t->col, "unexpected byte 0x%02x", c);
    }
    t->n = lx->pos - start;
    return 0;
}

bool vs_lex_is(const struct vs_lex_tok *t, const char *s)
{
    return t->kind == VS_LEX_IDENT && strlen(s) == t->n && strncasecmp(t->p, s, t->n) == 0;
}

/* The multiplier to seconds of a time unit; 0 when the unit is unknown. */
static double unit_seconds(const char *unit)
{
    static const struct {
        const char *name;
        double secs;
    } units[] = {{"s", 1}, {"m", 60}, {"min", 60}, {"h", 3600}, {"d", 86400}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strcmp(unit, units[i].name) == 0)
            return units[i].secs;
    return 0;
}

int vs_lex_number(struct vs_lex *lx, const struct vs_lex_tok *t, enum vs_lex_val kind, double *out)
{
    char buf[64];
    if (t->kind != VS_LEX_NUM)
        return VS_LEX_FAIL_TOK(lx, *t, "expected a number, found '%.*s'", (int)t->n, t->p);
    if (t->n >= sizeof(buf))
        return VS_LEX_FAIL_TOK(lx, *t, "number too long");
    memcpy(buf, t->p, t->n);
    buf[t->n] = '\0';
    /* The unit: the trailing letters that are not part of an exponent. */
    size_t end = t->n;
    while (end > 0 && isalpha((unsigned char)buf[end - 1]))
        end--;
    char unit[8] = "";
    if (end < t->n) {
        if (t->n - end >= sizeof(unit))
            return VS_LEX_FAIL_TOK(lx, *t, "bad unit in '%s'", buf);
        memcpy(unit, buf + end, t->n - end);
        unit[t->n - end] = '\0';
        buf[end] = '\0';
    }
    double v;
    if (end == 0 || vs_parse_double(buf, &v) != 0 || !isfinite(v))
        return VS_LEX_FAIL_TOK(lx, *t, "bad number '%.*s'", (int)t->n, t->p);
    if (kind == VS_LV_TIME_H || kind == VS_LV_TIME_D) {
        double mult = kind == VS_LV_TIME_H ? 3600.0 : 86400.0;
        if (unit[0]) {
            mult = unit_seconds(unit);
            if (mult == 0)
                return VS_LEX_FAIL_TOK(lx, *t, "unknown time unit '%s' (use s, m, h or d)", unit);
        }
        if (v < 0)
            return VS_LEX_FAIL_TOK(lx, *t, "a time cannot be negative");
        v *= mult;
    } else if (unit[0]) {
        return VS_LEX_FAIL_TOK(lx, *t, "'%.*s': this value takes no unit", (int)t->n, t->p);
    }
    if (kind == VS_LV_FRAC && (v < 0 || v > 1))
        return VS_LEX_FAIL_TOK(lx, *t, "must be between 0 and 1");
    if (kind == VS_LV_POS && v <= 0)
        return VS_LEX_FAIL_TOK(lx, *t, "must be greater than 0");
    if (kind == VS_LV_COUNT && (v != floor(v) || v < 0 || v > 9.0e15))
        return VS_LEX_FAIL_TOK(lx, *t, "must be a whole number");
    *out = v;
    return 0;
}

int vs_lex_start(struct vs_lex *lx, const char *text, size_t len, bool allow_colon,
                 struct vs_scn_error *err)
{
    vs_lex_init(lx, text, len, err);
    lx->allow_colon = allow_colon;
    if (len > VS_SCN_MAX_TEXT) {
        if (err)
            snprintf(err->msg, sizeof(err->msg), "scenario text longer than %d bytes",
                     VS_SCN_MAX_TEXT);
        lx->rc = VS_ELIMIT;
        return VS_ELIMIT;
    }
    return vs_lex_next(lx);
}

int vs_scn_load(const char *path, vs_scn_parse_fn *parse, void *out, struct vs_scn_error *err)
{
    if (err)
        memset(err, 0, sizeof(*err));
    struct vs_buf b;
    vs_buf_init(&b, VS_SCN_MAX_TEXT);
    int rc = vs_buf_append_file(&b, path);
    if (rc != 0 && err) {
        if (rc == VS_ELIMIT)
            snprintf(err->msg, sizeof(err->msg), "%s: longer than %d bytes", path, VS_SCN_MAX_TEXT);
        else
            snprintf(err->msg, sizeof(err->msg), "%s: %s", path, vs_strerror(rc));
    }
    if (rc == 0)
        rc = parse(vs_buf_str(&b), b.len, out, err);
    vs_buf_cleanup(&b);
    return rc;
}

void vs_scn_print_notes(FILE *f, const char *prog, const char *where, const struct vs_scn_error *e)
{
    for (int i = 0; i < e->nnotes; i++) {
        const struct vs_scn_note *n = &e->notes[i];
        fprintf(f, "%s: %s:%d:%d: warning: '%s' is deprecated, use '%s'%s%s\n", prog, where,
                n->line, n->col, n->old_name, n->new_name, n->note ? " " : "",
                n->note ? n->note : "");
    }
}
