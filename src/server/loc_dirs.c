/* Locality scheduling's trigger directories (see loc_dirs.h). */
#include "volsched/loc_dirs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "volsched/locality.h"

#define TOP "locality_scheduling"

static const char *const dir_names[VS_LOC__NDIRS] = {
    "need_work",
    "no_work_available",
    "file_working_set",
    "files_no_work",
};

const char *vs_loc_dir_name(enum vs_loc_dir d)
{
    return (unsigned)d < VS_LOC__NDIRS ? dir_names[d] : "";
}

static int join(char *out, size_t size, const char *dir, const char *sub, const char *name)
{
    int n = name  ? snprintf(out, size, "%s/" TOP "/%s/%s", dir, sub, name)
            : sub ? snprintf(out, size, "%s/" TOP "/%s", dir, sub)
                  : snprintf(out, size, "%s/" TOP, dir);
    return n < 0 || (size_t)n >= size ? VS_ELIMIT : 0;
}

int vs_loc_dirs_create(const char *project_dir)
{
    char p[4096];
    for (int i = -1; i < VS_LOC__NDIRS; i++) {
        if (join(p, sizeof(p), project_dir, i < 0 ? NULL : dir_names[i], NULL) != 0)
            return VS_ELIMIT;
        if (mkdir(p, 0755) != 0 && errno != EEXIST)
            return -errno;
    }
    return 0;
}

int vs_loc_path(const char *project_dir, enum vs_loc_dir d, const char *name, char *out,
                size_t size)
{
    if ((unsigned)d >= VS_LOC__NDIRS || !name ||
        !vs_loc_file_name_ok(name, strnlen(name, VS_LOC_NAME_MAX)))
        return VS_EINVAL;
    return join(out, size, project_dir, dir_names[d], name);
}

int vs_loc_touch(const char *project_dir, enum vs_loc_dir d, const char *name)
{
    char p[4096];
    int rc = vs_loc_path(project_dir, d, name, p, sizeof(p));
    if (rc)
        return rc;
    int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    close(fd);
    return 0;
}

bool vs_loc_exists(const char *project_dir, enum vs_loc_dir d, const char *name)
{
    char p[4096];
    struct stat sb;
    return vs_loc_path(project_dir, d, name, p, sizeof(p)) == 0 && stat(p, &sb) == 0;
}

int vs_loc_remove(const char *project_dir, enum vs_loc_dir d, const char *name)
{
    char p[4096];
    int rc = vs_loc_path(project_dir, d, name, p, sizeof(p));
    if (rc)
        return rc;
    return unlink(p) == 0 || errno == ENOENT ? 0 : -errno;
}

int vs_loc_list(const char *project_dir, enum vs_loc_dir d, size_t max, vs_loc_name_fn fn,
                void *ctx)
{
    char p[4096];
    if ((unsigned)d >= VS_LOC__NDIRS || join(p, sizeof(p), project_dir, dir_names[d], NULL))
        return VS_EINVAL;
    DIR *dh = opendir(p);
    if (!dh)
        return errno == ENOENT ? 0 : -errno;
    int ret = 0;
    size_t n = 0;
    struct dirent *e;
    while (n < max && (e = readdir(dh)) != NULL) {
        size_t len = strnlen(e->d_name, VS_LOC_NAME_MAX);
        if (e->d_name[0] == '.' || !vs_loc_file_name_ok(e->d_name, len))
            continue;
        n++;
        if ((ret = fn(ctx, e->d_name)) != 0)
            break;
    }
    closedir(dh);
    return ret;
}
