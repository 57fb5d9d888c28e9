/*
 * The engine of the simulators' scenario languages: `volsched sim`'s seed
 * notation (scenario.h) and `volsched popsim`'s population files
 * (popsim.h) are both read with it, so numbers, units, booleans, option
 * names, deprecated spellings and error positions behave the same in both.
 *
 * Two parts:
 *
 * - The lexer: identifiers, numbers with an optional unit glued on (90s,
 *   5m, 2h, 1d), ( ) , = and, where the language allows it, ':'. `#`
 *   comments run to the end of the line. Every token and every error
 *   carries its line and column.
 * - The option reader: a language describes its `name = value` options in a
 *   table of struct vs_scn_opt (the name, the kind of value, where in the
 *   caller's struct it goes, its range), and vs_scn_opt_find and
 *   vs_scn_opt_read do the rest. A deprecated spelling is a row of its own
 *   whose alias_of names the option's name now: it is read as before and
 *   leaves a note in the error struct (once per parse, at its first use)
 *   that the program prints as a warning.
 *
 * What a language keeps for itself is its grammar around the options
 * (sim's P(C, D, R) projects, popsim's distributions through a
 * VS_SCN_CUSTOM reader) and its checks between options.
 */
#ifndef VOLSCHED_SCN_H
#define VOLSCHED_SCN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "volsched/buf.h"
#include "volsched/error.h"

#define VS_SCN_MAX_TEXT  (1024 * 1024)
#define VS_SCN_MAX_NOTES 8

/* A deprecated option name the text used. The strings are the table's
 * (static); note may be NULL. */
struct vs_scn_note {
    int line, col;
    const char *old_name, *new_name, *note;
};

/*
 * Where parsing stopped and why (line and col count from 1; line 0 for an
 * error that is not at a place in the text, such as a file that cannot be
 * read), and the deprecated names the text used, which are filled on
 * success as well as on failure: one note per old name, at its first use,
 * the first VS_SCN_MAX_NOTES of them (no language has more old names).
 */
struct vs_scn_error {
    int line;
    int col;
    char msg[160];
    int nnotes;
    struct vs_scn_note notes[VS_SCN_MAX_NOTES];
};

/* ---- the lexer ---- */

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

/* Sets lx up over text[0..len) and clears *err (err may be NULL). */
void vs_lex_init(struct vs_lex *lx, const char *text, size_t len, struct vs_scn_error *err);
/*
 * vs_lex_init, then refuses a text longer than VS_SCN_MAX_TEXT (VS_ELIMIT,
 * with a message and line 0) and reads the first token. allow_colon makes
 * ':' a token. Returns 0 or the error.
 */
VS_MUST_CHECK int vs_lex_start(struct vs_lex *lx, const char *text, size_t len, bool allow_colon,
                               struct vs_scn_error *err);
/* Reads the next token into lx->cur; returns 0 or the (sticky) error. */
int vs_lex_next(struct vs_lex *lx);
/* Records an error at line:col (the first one wins) and returns VS_EPARSE. */
int vs_lex_fail(struct vs_lex *lx, int line, int col, const char *fmt, ...) VS_PRINTF(4, 5);
/* True when t is the identifier s (case-insensitive). */
bool vs_lex_is(const struct vs_lex_tok *t, const char *s);
/* Converts a number token to its value (seconds for times), range-checked. */
int vs_lex_number(struct vs_lex *lx, const struct vs_lex_tok *t, enum vs_lex_val kind, double *out);

#define VS_LEX_FAIL_TOK(lx, t, ...) vs_lex_fail((lx), (t).line, (t).col, __VA_ARGS__)

/* ---- the option reader ---- */

enum vs_scn_kind {
    VS_SCN_BOOL,      /* bool: true/false, yes/no, on/off, 1/0 (any case) */
    VS_SCN_INT,       /* int: a whole number */
    VS_SCN_COUNT,     /* int64_t: a whole number */
    VS_SCN_SEED,      /* uint64_t: a whole number */
    VS_SCN_REAL,      /* double: any number */
    VS_SCN_FRAC,      /* double: 0 to 1 */
    VS_SCN_POS,       /* double: above 0 */
    VS_SCN_HOURS,     /* double: a duration in seconds, hours unless a unit says otherwise */
    VS_SCN_DAYS,      /* double: a duration in seconds, days unless a unit says otherwise */
    VS_SCN_DAY_RANGE, /* double[2]: D1-D2, durations as VS_SCN_DAYS, D1 < D2 */
    VS_SCN_ENUM,      /* int: the index of the value in names[] */
    VS_SCN_CUSTOM     /* the option's own reader */
};

struct vs_scn_opt;

/* A VS_SCN_CUSTOM option's reader: lx->cur is the value's first token on
 * entry and the token after the value on return; dst is where the value
 * goes. Returns 0 or the lexer's error. */
typedef int vs_scn_read_fn(struct vs_lex *lx, const struct vs_scn_opt *o, void *dst);

/* One row of a language's option table. */
struct vs_scn_opt {
    const char *name;         /* matched case-insensitively */
    enum vs_scn_kind kind;    /* what the value is and the type stored */
    size_t off;               /* where it goes: offsetof in the caller's struct */
    double min, max;          /* numbers, after unit conversion; max 0 = no upper bound */
    const char *const *names; /* VS_SCN_ENUM: the values, NULL-terminated */
    vs_scn_read_fn *read;     /* VS_SCN_CUSTOM */
    const char *alias_of;     /* a deprecated spelling: the name of the option now */
    const char *note;         /* what the deprecation warning adds (a unit), or NULL */
};

/* A row for a value of kind k at field f of struct type, in [lo, hi]
 * (hi 0: no upper bound), and a deprecated spelling of option `now` whose
 * warning adds why (or NULL). */
#define VS_SCN_OPT(type, n, k, f, lo, hi)                                                          \
    {                                                                                              \
        .name = n, .kind = k, .off = offsetof(type, f), .min = lo, .max = hi                       \
    }
#define VS_SCN_OLD(type, n, k, f, lo, hi, now, why)                                                \
    {                                                                                              \
        .name = n, .kind = k, .off = offsetof(type, f), .min = lo, .max = hi, .alias_of = now,     \
        .note = why                                                                                \
    }

/* The row of tab[0..n) named by the identifier t, or NULL. */
const struct vs_scn_opt *vs_scn_opt_find(const struct vs_scn_opt *tab, size_t n,
                                         const struct vs_lex_tok *t);

/* The index in tab[0..n) of o, or for a deprecated spelling the index of
 * the option it names (the table must hold it). */
size_t vs_scn_opt_index(const struct vs_scn_opt *tab, size_t n, const struct vs_scn_opt *o);

/* The bytes an option's value takes at its offset (0 for VS_SCN_CUSTOM). */
size_t vs_scn_opt_size(const struct vs_scn_opt *o);

/*
 * Reads `= value` for option o, whose name is lx->cur, and stores the value
 * at (char *)base + o->off; lx->cur is then the token after the value. A
 * deprecated spelling leaves a note in lx->err. Returns 0 or the lexer's
 * error (the message names the option and the place).
 */
VS_MUST_CHECK int vs_scn_opt_read(struct vs_lex *lx, const struct vs_scn_opt *o, void *base);

/* ---- files and messages ---- */

typedef int vs_scn_parse_fn(const char *text, size_t len, void *out, struct vs_scn_error *err);

/*
 * Reads the file at path (at most VS_SCN_MAX_TEXT bytes) and parses it
 * with parse into out. A file that cannot be read is -errno (VS_ELIMIT when
 * too long) with line 0 and a message that names path.
 */
VS_MUST_CHECK int vs_scn_load(const char *path, vs_scn_parse_fn *parse, void *out,
                              struct vs_scn_error *err);

/* Prints each deprecation note of e to f as
 * "PROG: WHERE:LINE:COL: warning: 'old' is deprecated, use 'new' ...". */
void vs_scn_print_notes(FILE *f, const char *prog, const char *where, const struct vs_scn_error *e);

#endif
