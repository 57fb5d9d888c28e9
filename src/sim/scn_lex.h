/*
 * The lexer of the simulators' scenario languages (`volsched sim`'s seed
 * notation and `volsched popsim`'s population files share it): identifiers,
 * numbers with an optional unit glued on (90s, 5m, 2h, 1d), ( ) , = and,
 * where the language allows it, ':'. `#` comments run to the end of the
 * line. Every token and every error carries its line and column.
 */
#ifndef VOLSCHED_SIM_SCN_LEX_H
#define VOLSCHED_SIM_SCN_LEX_H

#include <stdbool.h>
#include <stddef.h>

#include "volsched/buf.h"
#include "volsched/scenario.h"

enum vs_lex_kind {
    VS_LEX_EOF,
    VS_LEX_IDENT,
    VS_LEX_NUM,
    VS_LEX_LP,
    VS_LEX_RP,
    VS_LEX_COMMA,
    VS_LEX_EQ,
    VS_LEX_COLON
};

struct vs_lex_tok {
    enum vs_lex_kind kind;
    const char *p; /* start in the text */
    size_t n;
    int line, col;
};

struct vs_lex {
    const char *text;
    size_t len, pos;
    int line, col;
    bool allow_colon; /* ':' is a token (popsim's choice(v: w, ...)) */
    struct vs_lex_tok cur;
    struct vs_scn_error *err; /* may be NULL */
    int rc;                   /* first error, sticky */
};

/* What a number means: its range and, for times, its default unit. */
enum vs_lex_val {
    VS_LV_REAL,   /* any number */
    VS_LV_FRAC,   /* 0..1 */
    VS_LV_POS,    /* > 0 */
    VS_LV_COUNT,  /* a whole number >= 0 */
    VS_LV_TIME_H, /* a time, hours unless a unit says otherwise; seconds out */
    VS_LV_TIME_D  /* a time, days unless a unit says otherwise; seconds out */
};

void vs_lex_init(struct vs_lex *lx, const char *text, size_t len, struct vs_scn_error *err);
/* Reads the next token into lx->cur; returns 0 or the (sticky) error. */
int vs_lex_next(struct vs_lex *lx);
/* Records an error at line:col (the first one wins) and returns VS_EPARSE. */
int vs_lex_fail(struct vs_lex *lx, int line, int col, const char *fmt, ...) VS_PRINTF(4, 5);
/* True when t is the identifier s (case-insensitive). */
bool vs_lex_is(const struct vs_lex_tok *t, const char *s);
/* Converts a number token to its value (seconds for times), range-checked. */
int vs_lex_number(struct vs_lex *lx, const struct vs_lex_tok *t, enum vs_lex_val kind, double *out);
/* Reads a whole scenario file (at most VS_SCN_MAX_TEXT bytes) into out,
 * which the caller has initialised; errors name the path in err->msg. */
int vs_lex_read_file(const char *path, struct vs_buf *out, struct vs_scn_error *err);

#define VS_LEX_FAIL_TOK(lx, t, ...) vs_lex_fail((lx), (t).line, (t).col, __VA_ARGS__)

#endif
