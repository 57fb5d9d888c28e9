/* Unit tests of the scenario languages' engine (src/common/scn_lex.c and
 * scn_opt.c): every value kind through a table of its own, deprecated
 * spellings and their notes, the text limit and the file reader. */
#include "vs_test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "volsched/alloc.h"
#include "volsched/scn.h"

enum colour { RED, GREEN };
static const char *const colours[] = {"red", "green", NULL};

struct things {
    bool flag;
    int n;
    int64_t count;
    uint64_t seed;
    double real, frac, pos, hours, days, range[2];
    int colour;
    int custom; /* what the custom reader saw: the tokens before ')' */
};

/* A custom value: a word, then anything up to and including the next ')'. */
static int read_custom(struct vs_lex *lx, const struct vs_scn_opt *o, void *dst)
{
    int n = 0;
    while (lx->cur.kind != VS_LEX_RP) {
        if (lx->cur.kind == VS_LEX_EOF)
            return VS_LEX_FAIL_TOK(lx, lx->cur, "%s: no ')'", o->name);
        n++;
        if (vs_lex_next(lx))
            return lx->rc;
    }
    memcpy(dst, &n, sizeof(n));
    return vs_lex_next(lx);
}

#define T(n, k, f, lo, hi)                                                                         \
    {                                                                                              \
        .name = n, .kind = k, .off = offsetof(struct things, f), .min = lo, .max = hi              \
    }
static const struct vs_scn_opt tab[] = {
    T("flag", VS_SCN_BOOL, flag, 0, 0),
    T("n", VS_SCN_INT, n, 1, 10),
    T("count", VS_SCN_COUNT, count, 0, 0),
    T("seed", VS_SCN_SEED, seed, 0, 0),
    T("real", VS_SCN_REAL, real, -5, 5),
    T("frac", VS_SCN_FRAC, frac, 0, 0),
    T("pos", VS_SCN_POS, pos, 0, 0),
    T("hours", VS_SCN_HOURS, hours, 0, 0),
    T("days", VS_SCN_DAYS, days, 0, 0),
    T("range", VS_SCN_DAY_RANGE, range, 0, 0),
    {.name = "colour",
     .kind = VS_SCN_ENUM,
     .off = offsetof(struct things, colour),
     .names = colours},
    {.name = "custom",
     .kind = VS_SCN_CUSTOM,
     .off = offsetof(struct things, custom),
     .read = read_custom},
    {.name = "old_hours",
     .kind = VS_SCN_DAYS,
     .off = offsetof(struct things, hours),
     .alias_of = "hours",
     .note = "(days, then)"},
    {.name = "old_flag",
     .kind = VS_SCN_BOOL,
     .off = offsetof(struct things, flag),
     .alias_of = "flag"},
};
#define NTAB (sizeof(tab) / sizeof(tab[0]))

/* Reads `name = value ...` items into *t; returns 0 or the error. */
static int read_all(const char *text, struct things *t, struct vs_scn_error *e)
{
    struct vs_lex lx;
    memset(t, 0, sizeof(*t));
    if (vs_lex_start(&lx, text, strlen(text), false, e))
        return lx.rc;
    while (lx.cur.kind != VS_LEX_EOF) {
        const struct vs_scn_opt *o = vs_scn_opt_find(tab, NTAB, &lx.cur);
        if (!o)
            return VS_LEX_FAIL_TOK(&lx, lx.cur, "unknown '%.*s'", (int)lx.cur.n, lx.cur.p);
        if (vs_scn_opt_read(&lx, o, t))
            return lx.rc;
    }
    return 0;
}

static void test_kinds(void **state)
{
    (void)state;
    struct things t;
    struct vs_scn_error e;
    assert_int_equal(read_all("FLAG = On n = 7 count = 9000000000 seed = 18 real = -2.5\n"
                              "frac = .25 pos = 3e2 hours = 90m days = 2 range = 1-36h\n"
                              "colour = GREEN custom = a b c ) # the end",
                              &t, &e),
                     0);
    assert_true(t.flag);
    assert_int_equal(t.n, 7);
    assert_true(t.count == INT64_C(9000000000));
    assert_true(t.seed == 18);
    assert_true(t.real == -2.5);
    assert_true(t.frac == 0.25);
    assert_true(t.pos == 300);
    assert_true(t.hours == 5400);
    assert_true(t.days == 2 * 86400.0);
    assert_true(t.range[0] == 86400 && t.range[1] == 36 * 3600.0);
    assert_int_equal(t.colour, GREEN);
    assert_int_equal(t.custom, 3);
    assert_int_equal(e.nnotes, 0);
    /* The booleans' spellings and a range with blanks around the dash. */
    assert_int_equal(read_all("flag = 1 range = 2 - 3", &t, &e), 0);
    assert_true(t.flag);
    assert_true(t.range[0] == 2 * 86400.0 && t.range[1] == 3 * 86400.0);
    assert_int_equal(read_all("flag = no", &t, &e), 0);
    assert_false(t.flag);
}

static void expect_error(const char *text, int line, int col, const char *part)
{
    struct things t;
    struct vs_scn_error e;
    int rc = read_all(text, &t, &e);
    if (rc != VS_EPARSE || e.line != line || e.col != col || !strstr(e.msg, part))
        fail_msg("%s: rc %d at %d:%d '%s', wanted %d:%d '%s'", text, rc, e.line, e.col, e.msg, line,
                 col, part);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("flag 1", 1, 6, "expected '=' after 'flag'");
    expect_error("flag = maybe", 1, 8, "flag wants true or false, not 'maybe'");
    expect_error("flag = (", 1, 8, "flag wants true or false");
    expect_error("n = 11", 1, 5, "n out of range");
    expect_error("n = 1.5", 1, 5, "whole number");
    expect_error("real = 6", 1, 8, "real out of range");
    expect_error("frac = 1.5", 1, 8, "between 0 and 1");
    expect_error("pos = 0", 1, 7, "greater than 0");
    expect_error("hours = 3w", 1, 9, "unknown time unit 'w'");
    expect_error("hours = -1", 1, 9, "cannot be negative");
    expect_error("count = 2h", 1, 9, "takes no unit");
    expect_error("range = 5", 1, 10, "range wants D1-D2");
    expect_error("range = 5-3", 1, 9, "range: D1 must come before D2");
    expect_error("colour = blue", 1, 10, "colour wants one of: red, green");
    expect_error("custom = a b", 1, 13, "custom: no ')'");
    expect_error("\n  wobble = 1", 2, 3, "unknown 'wobble'");
}

/* An old spelling: its own kind (here days, where the option is hours),
 * the option's index, and one note at its first use. */
static void test_aliases(void **state)
{
    (void)state;
    struct things t;
    struct vs_scn_error e;
    assert_int_equal(
        read_all("old_flag = yes old_hours = 1\nold_hours = 0.5 old_flag = no", &t, &e), 0);
    assert_false(t.flag);
    assert_true(t.hours == 43200);
    assert_int_equal(e.nnotes, 2);
    assert_int_equal(e.notes[0].line, 1);
    assert_int_equal(e.notes[0].col, 1);
    assert_string_equal(e.notes[0].old_name, "old_flag");
    assert_string_equal(e.notes[0].new_name, "flag");
    assert_null(e.notes[0].note);
    assert_int_equal(e.notes[1].col, 16);
    assert_string_equal(e.notes[1].new_name, "hours");
    assert_string_equal(e.notes[1].note, "(days, then)");

    const struct vs_scn_opt *o = &tab[NTAB - 2];
    assert_int_equal(vs_scn_opt_index(tab, NTAB, o), 7); /* "hours" */
    assert_int_equal(vs_scn_opt_index(tab, NTAB, &tab[3]), 3);
    assert_int_equal(vs_scn_opt_size(o), sizeof(double));
    assert_int_equal(vs_scn_opt_size(&tab[9]), 2 * sizeof(double));
    assert_int_equal(vs_scn_opt_size(&tab[2]), sizeof(int64_t));
    assert_int_equal(vs_scn_opt_size(&tab[11]), 0);

    /* What a program prints of them. */
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    assert_non_null(f);
    vs_scn_print_notes(f, "volsched test", "x.scn", &e);
    fclose(f);
    assert_string_equal(out, "volsched test: x.scn:1:1: warning: 'old_flag' is deprecated, use "
                             "'flag'\n"
                             "volsched test: x.scn:1:16: warning: 'old_hours' is deprecated, use "
                             "'hours' (days, then)\n");
    vs_free(out); /* open_memstream's buffer: vs_free is free() */

    /* Notes stay when the text fails after them; a new parse clears them. */
    assert_int_equal(read_all("old_flag = 1 n = 0", &t, &e), VS_EPARSE);
    assert_int_equal(e.nnotes, 1);
    assert_int_equal(read_all("flag = 1", &t, &e), 0);
    assert_int_equal(e.nnotes, 0);
}

static int parse_things(const char *text, size_t len, void *out, struct vs_scn_error *err)
{
    (void)len; /* the reader's buffer is NUL-terminated */
    return read_all(text, out, err);
}

static void test_limits_and_files(void **state)
{
    (void)state;
    size_t big = VS_SCN_MAX_TEXT + 1;
    char *text = vs_xmalloc(big + 1);
    memset(text, '#', big);
    text[big] = '\0';
    struct vs_lex lx;
    struct vs_scn_error e;
    assert_int_equal(vs_lex_start(&lx, text, big, false, &e), VS_ELIMIT);
    assert_int_equal(e.line, 0);
    assert_non_null(strstr(e.msg, "longer than"));
    assert_int_equal(vs_lex_start(&lx, text, big - 1, false, &e), 0);
    assert_int_equal(lx.cur.kind, VS_LEX_EOF);
    vs_free(text);
    /* ':' is a token only where the language says so. */
    assert_int_equal(vs_lex_start(&lx, "a:", 2, true, &e), 0);
    assert_int_equal(vs_lex_next(&lx), 0);
    assert_int_equal(lx.cur.kind, VS_LEX_COLON);
    assert_int_equal(vs_lex_start(&lx, "a:", 2, false, &e), 0);
    assert_int_equal(vs_lex_next(&lx), VS_EPARSE);
    assert_non_null(strstr(e.msg, "unexpected character ':'"));

    char path[] = "/tmp/test_scn_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs("n = 3 old_flag = on\n", f);
    fclose(f);
    struct things t;
    assert_int_equal(vs_scn_load(path, parse_things, &t, &e), 0);
    assert_int_equal(t.n, 3);
    assert_int_equal(e.nnotes, 1);
    remove(path);
    assert_true(vs_scn_load(path, parse_things, &t, &e) < 0);
    assert_int_equal(e.line, 0);
    assert_non_null(strstr(e.msg, path));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_aliases),
        cmocka_unit_test(test_limits_and_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
