/*
 * primes: a small, real volunteer-computing app for the demo and the tests.
 *
 * It reads two integers LO HI from the file `in`, counts the primes p with
 * LO <= p < HI by trial division (deliberately CPU-bound, a few seconds for
 * the demo's inputs), and writes to `out`:
 *
 *     range LO HI
 *     count N
 *     largest P        (0 if there is none)
 *
 * Anyone can check a result with a sieve. It checkpoints its progress to
 * `checkpoint` about once a second (temporary file + rename), and resumes from
 * it when restarted with the same input, so a suspended or killed task loses
 * at most a second of work.
 *
 * It is a plain executable (no BOINC API library): the templates give every
 * file <copy_file/>, so `in` and `out` are real files in the slot directory,
 * and on success it creates `boinc_finish_called` before exit(0), which is
 * how the BOINC client tells "finished" from "exited early" (see
 * ../shared/docs/boinc-protocol.md, section 7).
 *
 * Exit status: 0 done, 1 bad input or I/O error.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define MAX_HI ((uint64_t)1 << 40)

struct progress {
    uint64_t lo, hi;
    uint64_t next; /* first number not yet examined */
    uint64_t count;
    uint64_t largest;
};

static bool is_prime(uint64_t n)
{
    if (n < 2)
        return false;
    if (n < 4)
        return true;
    if (n % 2 == 0 || n % 3 == 0)
        return false;
    for (uint64_t d = 5; d * d <= n; d += 6)
        if (n % d == 0 || n % (d + 2) == 0)
            return false;
    return true;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Writes path atomically: a crash leaves the old or the new content. */
static int write_file(const char *path, const char *text)
{
    char tmp[256];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    bool ok = fputs(text, f) >= 0;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        remove(tmp);
        return -1;
    }
    return 0;
}

static int read_input(struct progress *p)
{
    FILE *f = fopen("in", "r");
    if (!f) {
        fprintf(stderr, "primes: cannot open 'in': %s\n", strerror(errno));
        return -1;
    }
    int n = fscanf(f, "%" SCNu64 " %" SCNu64, &p->lo, &p->hi);
    fclose(f);
    if (n != 2 || p->lo > p->hi || p->hi > MAX_HI) {
        fprintf(stderr, "primes: 'in' must hold two integers LO HI with LO <= HI <= 2^40\n");
        return -1;
    }
    p->next = p->lo;
    return 0;
}

/* Resumes from `checkpoint` if it belongs to this input. */
static void read_checkpoint(struct progress *p)
{
    FILE *f = fopen("checkpoint", "r");
    if (!f)
        return;
    struct progress c;
    int n = fscanf(f, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64, &c.lo, &c.hi,
                   &c.next, &c.count, &c.largest);
    fclose(f);
    if (n == 5 && c.lo == p->lo && c.hi == p->hi && c.next >= c.lo && c.next <= c.hi) {
        *p = c;
        fprintf(stderr, "primes: resuming at %" PRIu64 " (%" PRIu64 " primes so far)\n", p->next,
                p->count);
    }
}

static int write_checkpoint(const struct progress *p)
{
    char text[200];
    snprintf(text, sizeof(text), "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
             p->lo, p->hi, p->next, p->count, p->largest);
    return write_file("checkpoint", text);
}

int main(void)
{
    struct progress p = {0};
    if (read_input(&p) != 0)
        return 1;
    read_checkpoint(&p);
    double last = now_s();
    while (p.next < p.hi) {
        /* Work in small blocks so the clock is read rarely. */
        uint64_t end = p.next + 4096 < p.hi ? p.next + 4096 : p.hi;
        for (uint64_t n = p.next; n < end; n++) {
            if (is_prime(n)) {
                p.count++;
                p.largest = n;
            }
        }
        p.next = end;
        double t = now_s();
        if (t - last >= 1.0) {
            if (write_checkpoint(&p) != 0)
                fprintf(stderr, "primes: cannot write checkpoint (continuing)\n");
            last = t;
        }
    }
    char text[200];
    snprintf(text, sizeof(text),
             "range %" PRIu64 " %" PRIu64 "\ncount %" PRIu64 "\nlargest %" PRIu64 "\n", p.lo, p.hi,
             p.count, p.largest);
    if (write_file("out", text) != 0) {
        fprintf(stderr, "primes: cannot write 'out': %s\n", strerror(errno));
        return 1;
    }
    remove("checkpoint");
    fprintf(stderr, "primes: %" PRIu64 " primes in [%" PRIu64 ", %" PRIu64 ")\n", p.count, p.lo,
            p.hi);
    /* BOINC-COMPAT: the client restarts a task that exits 0 without this file. */
    if (write_file("boinc_finish_called", "0\n") != 0)
        return 1;
    return 0;
}
