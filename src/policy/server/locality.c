/* Locality scheduling's pure decisions (see include/volsched/locality.h). */
#include "volsched/locality.h"

#include <stdlib.h>
#include <string.h>

#include "volsched/error.h"

bool vs_loc_file_name_ok(const char *name, size_t len)
{
    if (!name || len == 0 || len >= VS_LOC_NAME_MAX || name[0] == '-')
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c <= ' ' || c == 127 || c == '/' || c == '%' || c == '<' || c == '>' || c == '&')
            return false;
        /* ".." anywhere (not just as a whole name): BOINC's tools refuse it
         * too, and it keeps every name a single path component. */
        if (i + 1 < len && ((c == '.' && name[i + 1] == '.') || (c == '_' && name[i + 1] == '_')))
            return false;
    }
    return true;
}

int vs_loc_file_of_wu(const char *wu_name, char *out, size_t size)
{
    const char *sep = wu_name ? strstr(wu_name, "__") : NULL;
    if (!sep || sep == wu_name)
        return VS_EINVAL;
    size_t n = (size_t)(sep - wu_name);
    if (!vs_loc_file_name_ok(wu_name, n))
        return VS_EINVAL;
    if (n + 1 > size)
        return VS_ELIMIT;
    memcpy(out, wu_name, n);
    out[n] = '\0';
    return 0;
}

int vs_loc_wu_range(const char *file, char *lo, char *hi, size_t size)
{
    size_t n = file ? strlen(file) : 0;
    if (!vs_loc_file_name_ok(file, n))
        return VS_EINVAL;
    if (n + 3 > size)
        return VS_ELIMIT;
    memcpy(lo, file, n);
    memcpy(lo + n, "__", 3);
    memcpy(hi, file, n);
    memcpy(hi + n, "_`", 3);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

size_t vs_loc_order_files(const char *const *names, size_t n, bool sorted, uint64_t rnd,
                          const char **out, size_t max, size_t *out_bad)
{
    size_t k = 0, bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (names[i] && vs_loc_file_name_ok(names[i], strnlen(names[i], VS_LOC_NAME_MAX)))
            out[k++] = names[i];
        else
            bad++;
    }
    if (out_bad)
        *out_bad = bad;
    if (k == 0)
        return 0;
    qsort(out, k, sizeof(*out), cmp_str);
    size_t u = 1;
    for (size_t i = 1; i < k; i++)
        if (strcmp(out[i], out[u - 1]) != 0)
            out[u++] = out[i];
    if (!sorted && u > 1) {
        /* Rotate left by r in place: three reversals, no scratch space. */
        size_t r = (size_t)(rnd % u);
        for (size_t lo = 0, hi = r; lo + 1 < hi; lo++, hi--) {
            const char *t = out[lo];
            out[lo] = out[hi - 1];
            out[hi - 1] = t;
        }
        for (size_t lo = r, hi = u; lo + 1 < hi; lo++, hi--) {
            const char *t = out[lo];
            out[lo] = out[hi - 1];
            out[hi - 1] = t;
        }
        for (size_t lo = 0, hi = u; lo + 1 < hi; lo++, hi--) {
            const char *t = out[lo];
            out[lo] = out[hi - 1];
            out[hi - 1] = t;
        }
    }
    return u < max ? u : max;
}

bool vs_loc_sorted_has(const char *const *sorted, size_t n, const char *name)
{
    return n > 0 && bsearch(&name, sorted, n, sizeof(*sorted), cmp_str) != NULL;
}

void vs_loc_after_search(const struct vs_loc_file_facts *f, struct vs_loc_file_action *out)
{
    memset(out, 0, sizeof(*out));
    /* Something was sent, the host is full, or the next job did not fit
     * now: nothing to conclude about the file. A file the project never
     * named a workunit after is not ours to delete or to ask work for (a
     * client may report anything). */
    if (f->sent > 0 || !f->work_needed || f->stopped || !f->known)
        return;
    if (f->on_demand && !f->no_work_available) {
        out->need_work = true;
        out->wait = !f->waited;
    }
    if (!f->any_unsent)
        out->files_no_work = true;
    /* More work may still come from the generator: keep the file. Without a
     * generator, or once it said "no more", a file with nothing for this
     * host (no results left, or only ones this user may not get) is dead
     * weight on the host. */
    if (!out->wait && (!f->on_demand || f->no_work_available))
        out->delete_file = true;
}

size_t vs_loc_working_set_target(int64_t n_active, int target_nresults)
{
    int64_t m = target_nresults > 0 ? target_nresults : 1;
    int64_t n = n_active > 0 ? n_active : 0;
    int64_t t = (n + m - 1) / m;
    return t > 0 ? (size_t)t : 1;
}

size_t vs_loc_pick_working(size_t n, uint64_t rnd)
{
    return n ? (size_t)(rnd % n) : 0;
}

double vs_loc_disk_credit(const char *const *names, const double *sizes, size_t n,
                          const char *const *held, size_t nheld, double disk_bound)
{
    double credit = 0;
    for (size_t i = 0; i < n; i++)
        if (names[i] && sizes[i] > 0 && vs_loc_sorted_has(held, nheld, names[i]))
            credit += sizes[i];
    return credit < disk_bound ? credit : (disk_bound > 0 ? disk_bound : 0);
}
