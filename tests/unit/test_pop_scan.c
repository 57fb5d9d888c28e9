/* popsim's locality scan (src/popsim/pop_locality.c): the files with
 * unsent results after a given one, in index order, wrapping. It skips
 * empty 64-file words whole; near the wrap, with a partial last word, a
 * skip once stepped over the end into the first files, so they were never
 * offered (fixed in f90e827, tested here against a file-by-file scan). */
#include "vs_test.h"

#include <stdio.h>
#include <string.h>

#include "popsim/pop_int.h"
#include "volsched/alloc.h"
#include "volsched/rng.h"

struct fixture {
    struct pop p;
    const char **got, **want;
};

static void make(struct fixture *f, size_t nf)
{
    memset(f, 0, sizeof(*f));
    f->p.nfiles = nf;
    f->p.files = vs_xcalloc(nf, sizeof(*f->p.files));
    for (size_t i = 0; i < nf; i++)
        snprintf(f->p.files[i].name, sizeof(f->p.files[i].name), "f%u", (unsigned)(i % 1000000));
    f->p.nwords = (nf + 63) / 64;
    f->p.work_bits = vs_xcalloc(f->p.nwords, sizeof(*f->p.work_bits));
    f->got = vs_xcalloc(nf, sizeof(*f->got));
    f->want = vs_xcalloc(nf, sizeof(*f->want));
}

static void drop(struct fixture *f)
{
    vs_free(f->p.files);
    vs_free(f->p.work_bits);
    vs_free(f->got);
    vs_free(f->want);
}

static void set(struct fixture *f, size_t fi)
{
    f->p.work_bits[fi / 64] |= 1ULL << (fi % 64);
}

/* The reference: one file at a time, no skipping. */
static size_t slow_scan(const struct fixture *f, int32_t from, size_t max)
{
    size_t n = 0, nf = f->p.nfiles;
    for (size_t k = 0; k < nf && n < max; k++) {
        size_t fi = ((size_t)(from + 1) + k) % nf;
        if ((f->p.work_bits[fi / 64] >> (fi % 64)) & 1)
            f->want[n++] = f->p.files[fi].name;
    }
    return n;
}

static void same(struct fixture *f, int32_t from, size_t max)
{
    size_t want = slow_scan(f, from, max);
    size_t got = vs_pop__files_with_work(&f->p, from, f->got, max);
    assert_int_equal(got, want);
    for (size_t i = 0; i < got; i++)
        assert_string_equal(f->got[i], f->want[i]);
}

/* The case the fix is for: 130 files (the last word holds 128 and 129,
 * both without work), work only in the first word; a scan after file 127
 * starts on the empty partial word and must wrap to file 0, not skip 64
 * files into the first word. */
static void test_partial_last_word(void **state)
{
    (void)state;
    struct fixture f;
    make(&f, 130);
    for (size_t i = 0; i < 64; i++)
        set(&f, i);
    size_t n = vs_pop__files_with_work(&f.p, 127, f.got, 3);
    assert_int_equal(n, 3);
    assert_string_equal(f.got[0], "f0");
    assert_string_equal(f.got[1], "f1");
    assert_string_equal(f.got[2], "f2");
    same(&f, 127, 130);
    drop(&f);
}

/* Random bitmaps, dense and sparse, over sizes around word edges, from
 * every start (and -1: from the first), with small and unbounded max. */
static void test_random_against_reference(void **state)
{
    (void)state;
    const size_t sizes[] = {1, 2, 63, 64, 65, 127, 128, 129, 130, 191, 192, 200, 320};
    struct vs_rng rng;
    vs_rng_seed(&rng, 20261205);
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
        size_t nf = sizes[si];
        for (int trial = 0; trial < 24; trial++) {
            struct fixture f;
            make(&f, nf);
            /* Density from none to all, and whole empty words. */
            double density = (trial % 6) / 5.0;
            for (size_t i = 0; i < nf; i++)
                if (vs_rng_double(&rng) < density * density)
                    set(&f, i);
            if (trial % 4 == 3 && f.p.nwords > 1)
                f.p.work_bits[vs_rng_below(&rng, f.p.nwords)] = 0;
            const size_t maxes[] = {1, 2, 7, nf};
            for (int32_t from = -1; from < (int32_t)nf; from++)
                for (size_t mi = 0; mi < 4; mi++)
                    same(&f, from, maxes[mi]);
            drop(&f);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_partial_last_word),
        cmocka_unit_test(test_random_against_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
