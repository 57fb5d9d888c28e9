/*
 * The scenario languages' option reader: `name = value` by a table of
 * struct vs_scn_opt rows; see volsched/scn.h.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "volsched/scn.h"
#include "volsched/str.h"

const struct vs_scn_opt *vs_scn_opt_find(const struct vs_scn_opt *tab, size_t n,
                                         const struct vs_lex_tok *t)
{
    for (size_t i = 0; i < n; i++)
        if (vs_lex_is(t, tab[i].name))
            return &tab[i];
    return NULL;
}

size_t vs_scn_opt_index(const struct vs_scn_opt *tab, size_t n, const struct vs_scn_opt *o)
{
    if (o->alias_of)
        for (size_t i = 0; i < n; i++)
            if (!tab[i].alias_of && strcmp(tab[i].name, o->alias_of) == 0)
                return i;
    /* An alias that names no option of its table is a bug in the table. */
    (void)VS_NEVER(o->alias_of != NULL);
    return (size_t)(o - tab);
}

size_t vs_scn_opt_size(const struct vs_scn_opt *o)
{
    switch (o->kind) {
    case VS_SCN_BOOL:
        return sizeof(bool);
    case VS_SCN_INT:
    case VS_SCN_ENUM:
        return sizeof(int);
    case VS_SCN_COUNT:
        return sizeof(int64_t);
    case VS_SCN_SEED:
        return sizeof(uint64_t);
    case VS_SCN_DAY_RANGE:
        return 2 * sizeof(double);
    case VS_SCN_CUSTOM:
        return 0;
    default:
        return sizeof(double);
    }
}

/* Notes a deprecated spelling at its first use in the text. */
static void note_alias(struct vs_lex *lx, const struct vs_scn_opt *o)
{
    struct vs_scn_error *e = lx->err;
    if (!e)
        return;
    for (int i = 0; i < e->nnotes; i++)
        if (e->notes[i].old_name == o->name)
            return;
    if (e->nnotes == VS_SCN_MAX_NOTES)
        return;
    e->notes[e->nnotes++] = (struct vs_scn_note){.line = lx->cur.line,
                                                 .col = lx->cur.col,
                                                 .old_name = o->name,
                                                 .new_name = o->alias_of,
                                                 .note = o->note};
}

/* What a number of each kind means to the lexer (unit and base range). */
static enum vs_lex_val lex_val(enum vs_scn_kind k)
{
    switch (k) {
    case VS_SCN_REAL:
        return VS_LV_REAL;
    case VS_SCN_FRAC:
        return VS_LV_FRAC;
    case VS_SCN_POS:
        return VS_LV_POS;
    case VS_SCN_HOURS:
        return VS_LV_TIME_H;
    case VS_SCN_DAYS:
    case VS_SCN_DAY_RANGE:
        return VS_LV_TIME_D;
    default: /* the whole numbers */
        return VS_LV_COUNT;
    }
}

static int read_bool(struct vs_lex *lx, const struct vs_scn_opt *o, char *dst)
{
    struct vs_lex_tok t = lx->cur;
    char buf[16];
    bool b;
    if ((t.kind != VS_LEX_IDENT && t.kind != VS_LEX_NUM) || t.n >= sizeof(buf))
        return VS_LEX_FAIL_TOK(lx, t, "%s wants true or false", o->name);
    memcpy(buf, t.p, t.n);
    buf[t.n] = '\0';
    if (vs_parse_bool(buf, &b) != 0)
        return VS_LEX_FAIL_TOK(lx, t, "%s wants true or false, not '%s'", o->name, buf);
    memcpy(dst, &b, sizeof(b));
    return vs_lex_next(lx);
}

static int read_enum(struct vs_lex *lx, const struct vs_scn_opt *o, char *dst)
{
    struct vs_lex_tok t = lx->cur;
    for (int i = 0; o->names[i]; i++) {
        if (vs_lex_is(&t, o->names[i])) {
            memcpy(dst, &i, sizeof(i));
            return vs_lex_next(lx);
        }
    }
    char list[96] = "";
    size_t n = 0;
    for (int i = 0; o->names[i] && n < sizeof(list); i++)
        n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "", o->names[i]);
    return VS_LEX_FAIL_TOK(lx, t, "%s wants one of: %s", o->name, list);
}

/*
 * D1-D2 (nowork = 5-8, or 5d-8d, 120h-8d): the lexer reads "5" and "-8",
 * or "5", "-" and "8" when there are blanks around the dash. Stores
 * D1 < D2 as two doubles at dst.
 */
static int read_range(struct vs_lex *lx, const struct vs_scn_opt *o, char *dst)
{
    struct vs_lex_tok t = lx->cur;
    double v[2];
    if (vs_lex_number(lx, &t, VS_LV_TIME_D, &v[0]) || vs_lex_next(lx))
        return lx->rc;
    struct vs_lex_tok u = lx->cur;
    if (u.kind != VS_LEX_NUM || u.n == 0 || u.p[0] != '-')
        return VS_LEX_FAIL_TOK(lx, u, "%s wants D1-D2 (days)", o->name);
    if (u.n == 1) {
        if (vs_lex_next(lx))
            return lx->rc;
        u = lx->cur;
    } else {
        u.p++;
        u.n--;
        u.col++;
    }
    if (vs_lex_number(lx, &u, VS_LV_TIME_D, &v[1]))
        return lx->rc;
    if (!(v[1] > v[0]))
        return VS_LEX_FAIL_TOK(lx, t, "%s: D1 must come before D2", o->name);
    memcpy(dst, v, sizeof(v));
    return vs_lex_next(lx);
}

/* A number, range-checked, stored as the kind's type. */
static int read_number(struct vs_lex *lx, const struct vs_scn_opt *o, char *dst)
{
    struct vs_lex_tok t = lx->cur;
    double v;
    if (vs_lex_number(lx, &t, lex_val(o->kind), &v))
        return lx->rc;
    if (v < o->min || (o->max > 0 && v > o->max))
        return VS_LEX_FAIL_TOK(lx, t, "%s out of range", o->name);
    if (o->kind == VS_SCN_INT) {
        int iv = (int)v;
        memcpy(dst, &iv, sizeof(iv));
    } else if (o->kind == VS_SCN_COUNT) {
        int64_t i64 = (int64_t)v;
        memcpy(dst, &i64, sizeof(i64));
    } else if (o->kind == VS_SCN_SEED) {
        uint64_t u = (uint64_t)v;
        memcpy(dst, &u, sizeof(u));
    } else {
        memcpy(dst, &v, sizeof(v));
    }
    return vs_lex_next(lx);
}

int vs_scn_opt_read(struct vs_lex *lx, const struct vs_scn_opt *o, void *base)
{
    if (o->alias_of)
        note_alias(lx, o);
    if (vs_lex_next(lx))
        return lx->rc;
    if (lx->cur.kind != VS_LEX_EQ)
        return VS_LEX_FAIL_TOK(lx, lx->cur, "expected '=' after '%s'", o->name);
    if (vs_lex_next(lx))
        return lx->rc;
    char *dst = (char *)base + o->off;
    switch (o->kind) {
    case VS_SCN_BOOL:
        return read_bool(lx, o, dst);
    case VS_SCN_ENUM:
        return read_enum(lx, o, dst);
    case VS_SCN_DAY_RANGE:
        return read_range(lx, o, dst);
    case VS_SCN_CUSTOM:
        return o->read(lx, o, dst);
    default:
        return read_number(lx, o, dst);
    }
}
