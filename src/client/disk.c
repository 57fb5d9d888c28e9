/*
 * The disk (docs/client.md, "Disk"): BOINC's three disk preferences
 * (lib/prefs.cpp: disk_max_used_gb 0 = off, disk_max_used_pct 90,
 * disk_min_free_gb 0.1), the allowed total as CLIENT_STATE::
 * allowed_disk_usage computes it, each project's share of it as
 * get_disk_shares divides it, and the check each download passes before
 * it starts: its project's share, the allowed total, and the free space
 * less what the client keeps for its own state file. A download that does
 * not fit waits (with a message), the other projects' work goes on, and
 * the file system never fills with one project's files.
 *
 * A project's usage is the bytes of its files that are present (the sizes
 * the client verified) and of its tasks' slot directories; the client's
 * own usage (state file, logs, scheduler request and reply files) is the
 * data directory's top-level files. The directory walks are redone at most
 * every WALK_PERIOD seconds; the rest costs one pass over the files.
 */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/xml.h"

#define GIGA        (1024.0 * 1024.0 * 1024.0) /* BOINC-COMPAT: lib/util.h */
#define WALK_PERIOD 10.0
#define WALK_DEPTH  8
#define WALK_MAX    100000        /* entries one walk looks at */
#define RESERVE_MIN (1024 * 1024) /* bytes kept free beside twice the state file */

double vs_client_disk_allowed(const struct cl_prefs *p, double d_total, double d_free,
                              double boinc_total)
{
    double limit = boinc_total + d_free - p->disk_min_free_gb * GIGA;
    if (p->disk_max_used_pct > 0)
        limit = fmin(limit, d_total * p->disk_max_used_pct / 100.0);
    if (p->disk_max_used_gb > 0)
        limit = fmin(limit, p->disk_max_used_gb * GIGA);
    return limit > 0 ? limit : 0;
}

/* BOINC's rule, with one difference: a quota here is the project's disk
 * resource share over the sum of all projects' disk resource shares (what
 * BOINC's comment says), where 7.20.5 divides by the sum of the plain
 * resource shares, which hands out more than `allowed` in all. */
void vs_client_disk_shares(size_t n, const double *rs, const double *ddu, double allowed,
                           double *out)
{
    double trs = 0, max_rs = 0;
    for (size_t i = 0; i < n; i++) {
        trs += rs[i];
        max_rs = fmax(max_rs, rs[i]);
    }
    double sum_drs = 0;
    for (size_t i = 0; i < n; i++)
        sum_drs += trs > 0 ? rs[i] + max_rs / 10 : 1;
    double greedy_drs = 0, non_greedy_ddu = 0;
    for (size_t i = 0; i < n; i++) {
        double drs = trs > 0 ? rs[i] + max_rs / 10 : 1;
        double quota = allowed * drs / sum_drs;
        if (ddu[i] > quota)
            greedy_drs += drs;
        else
            non_greedy_ddu += ddu[i];
    }
    double greedy_allowed = allowed - non_greedy_ddu;
    for (size_t i = 0; i < n; i++) {
        double drs = trs > 0 ? rs[i] + max_rs / 10 : 1;
        double quota = allowed * drs / sum_drs;
        out[i] = ddu[i] > quota ? greedy_allowed * drs / greedy_drs : quota;
    }
}

/* Allocated bytes under dir (BOINC's dir_size_alloc), not following links;
 * bounded in depth and in entries (*budget). */
static double walk(int dirfd, int depth, long *budget)
{
    DIR *d = fdopendir(dirfd);
    if (!d) {
        close(dirfd);
        return 0;
    }
    double sum = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && (*budget)-- > 0) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        struct stat st;
        if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        sum += (double)st.st_blocks * 512;
        if (S_ISDIR(st.st_mode) && depth > 0) {
            int fd = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd >= 0)
                sum += walk(fd, depth - 1, budget);
        }
    }
    closedir(d);
    return sum;
}

static double dir_bytes(const char *path, long *budget)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return fd < 0 ? 0 : walk(fd, WALK_DEPTH, budget);
}

/* The client's own files: the data directory's top level, without its
 * subdirectories (projects/, slots/). */
static double client_bytes(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    double sum = 0;
    struct dirent *e;
    long n = 0;
    while ((e = readdir(d)) != NULL && n++ < WALK_MAX) {
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
            sum += (double)st.st_blocks * 512;
    }
    closedir(d);
    return sum;
}

static void walk_all(struct vs_client *c)
{
    long budget = WALK_MAX;
    for (size_t p = 0; p < c->n_projects; p++)
        c->projects[p].slot_usage = 0;
    for (size_t i = 0; i < c->n_results; i++) {
        const struct cl_result *r = &c->results[i];
        char path[VS_CLIENT_PATH_MAX];
        if (r->slot < 0 || vs_client_path(c, path, sizeof(path), "slots/%d", r->slot) != 0)
            continue;
        c->projects[r->project].slot_usage += dir_bytes(path, &budget);
    }
    c->disk.client_usage = client_bytes(c->dir);
    c->disk.walked_at = c->now;
}

void vs_client_disk_refresh(struct vs_client *c, bool force)
{
    struct statvfs sv;
    if (statvfs(c->dir, &sv) == 0) {
        c->disk.d_total = c->host.d_total = (double)sv.f_blocks * (double)sv.f_frsize;
        c->disk.d_free = c->host.d_free = (double)sv.f_bavail * (double)sv.f_frsize;
    }
    if (force || !(c->disk.walked_at > 0) || c->now < c->disk.walked_at ||
        c->now - c->disk.walked_at >= WALK_PERIOD)
        walk_all(c);
    size_t n = c->n_projects;
    double *rs = vs_xcalloc(n + 1, sizeof(*rs));
    double *ddu = vs_xcalloc(n + 1, sizeof(*ddu));
    double *share = vs_xcalloc(n + 1, sizeof(*share));
    for (size_t p = 0; p < n; p++)
        c->projects[p].disk_usage = c->projects[p].slot_usage;
    for (size_t i = 0; i < c->n_files; i++) {
        const struct cl_file *f = &c->files[i];
        double b = f->nbytes > 0 && isfinite(f->nbytes) ? f->nbytes : 0;
        if (f->status == FS_PRESENT)
            c->projects[f->project].disk_usage += b;
        else if (f->status == FS_NOT_PRESENT && !f->is_output)
            ddu[f->project] += b; /* what it still wants to download */
    }
    double total = c->disk.client_usage;
    for (size_t p = 0; p < n; p++) {
        total += c->projects[p].disk_usage;
        rs[p] = c->projects[p].resource_share;
        /* BOINC's desired disk usage: what it has and what its queue still
         * wants, so a project whose queue wants more than its quota is the
         * greedy one, not the others */
        ddu[p] += c->projects[p].disk_usage;
    }
    c->disk.total_usage = total;
    c->disk.allowed = vs_client_disk_allowed(&c->prefs, c->disk.d_total, c->disk.d_free, total);
    vs_client_disk_shares(n, rs, ddu, c->disk.allowed, share);
    for (size_t p = 0; p < n; p++)
        c->projects[p].disk_share = share[p];
    vs_free(rs);
    vs_free(ddu);
    vs_free(share);
}

static double reserve(const struct vs_client *c)
{
    return RESERVE_MIN + 2 * c->disk.state_bytes;
}

/* Not a change to keep: after a restart the file is simply checked again.
 * (Marking the state dirty here rewrote it every second while many files
 * waited, four checked a second.) */
static void defer(struct vs_client *c, struct cl_file *f)
{
    f->disk_wait = true;
    f->next_try = c->now + c->prefs.pers_retry_delay_min;
}

int vs_client_disk_admit(struct vs_client *c, struct cl_file *f, double have, double *out_room)
{
    vs_client_disk_refresh(c, false);
    const struct cl_project *pr = &c->projects[f->project];
    double size = f->nbytes > 0 ? f->nbytes : 0; /* 0: not declared */
    /* present files count whole; a partial file's bytes are in d_free; the
     * downloads in flight count for what they may still write (several run
     * at once, each admitted before the others have written anything) */
    double all_coming = vs_client_net_to_come(c, NULL);
    double free_room = c->disk.d_free - reserve(c) - all_coming;
    double share_room = pr->disk_share - pr->disk_usage - vs_client_net_to_come(c, pr->master_url);
    double total_room = c->disk.allowed - c->disk.total_usage - all_coming;
    bool quiet = f->disk_wait;
    if (size - have > free_room || (size == 0 && free_room <= 0)) {
        if (!quiet)
            vs_client_msg(c, (long)f->project, 3,
                          "Disk full while downloading %s: it needs %.0f more bytes, %.0f are "
                          "free beyond the %.0f the client keeps for its own files",
                          f->name, size - have, fmax(0, free_room), reserve(c));
        defer(c, f);
        return VS_ELIMIT;
    }
    if (size > total_room || (size == 0 && total_room <= have)) {
        if (!quiet)
            vs_client_msg(c, (long)f->project, 2,
                          "Waiting for disk space to download %s (%.0f bytes): the projects "
                          "use %.0f of the %.0f bytes the disk preferences allow "
                          "(disk_max_used_gb, disk_max_used_pct, disk_min_free_gb)",
                          f->name, size, c->disk.total_usage, c->disk.allowed);
        defer(c, f);
        return VS_ELIMIT;
    }
    if (size > share_room || (size == 0 && share_room <= have)) {
        if (!quiet)
            vs_client_msg(c, (long)f->project, 2,
                          "Waiting for disk space to download %s (%.0f bytes): this project "
                          "uses %.0f of its disk share of %.0f bytes",
                          f->name, size, pr->disk_usage, pr->disk_share);
        defer(c, f);
        return VS_ELIMIT;
    }
    if (f->disk_wait)
        vs_client_msg(c, (long)f->project, 1, "Disk space for %s is available now", f->name);
    f->disk_wait = false;
    *out_room = size > 0 ? size - have : fmin(free_room, fmin(share_room, total_room) - have);
    return 0;
}

void vs_client_disk_defer(struct vs_client *c, struct cl_file *f, double need)
{
    if (!f->disk_wait)
        vs_client_msg(c, (long)f->project, 2,
                      "Download of %s stopped at the room its project has on this disk "
                      "(%.0f bytes); waiting for disk space",
                      f->name, need);
    defer(c, f);
}

void vs_client_disk_summary_xml(struct vs_client *c, struct vs_xml_writer *w)
{
    vs_client_disk_refresh(c, false); /* a GUI polling it does not walk the disk each time */
    for (size_t p = 0; p < c->n_projects; p++) {
        vs_xml_open(w, "project");
        vs_xml_str(w, "master_url", c->projects[p].master_url);
        vs_xml_double(w, "disk_usage", c->projects[p].disk_usage);
        vs_xml_close(w);
    }
    vs_xml_double(w, "d_total", c->disk.d_total);
    vs_xml_double(w, "d_free", c->disk.d_free);
    vs_xml_double(w, "d_boinc", c->disk.client_usage);
    vs_xml_double(w, "d_allowed", c->disk.allowed);
}
