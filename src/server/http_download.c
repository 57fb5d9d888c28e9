/*
 * Downloads of the HTTP front end: files of the download hierarchy by GET,
 * with a single Range (resuming clients), never following a symlink at the
 * last component (http.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/http_int.h"
#include "volsched/str.h"

/* Parses "bytes=N-" or "bytes=N-M" into [*start, *end] (inclusive) for a file
 * of size bytes. Returns 1 for a usable range, 0 to ignore the header (serve
 * everything), -1 when the range lies past the end (416). */
static int parse_range(const char *hdr, uint64_t size, uint64_t *start, uint64_t *end)
{
    if (!vs_str_has_prefix(hdr, "bytes="))
        return 0;
    const char *p = hdr + 6;
    if (strchr(p, ','))
        return 0; /* multi-range: not worth it, whole file is valid too */
    char *dash;
    errno = 0;
    unsigned long long a = strtoull(p, &dash, 10);
    if (dash == p || *dash != '-' || errno)
        return 0;
    unsigned long long b = size ? size - 1 : 0;
    if (dash[1] != '\0') {
        char *e;
        b = strtoull(dash + 1, &e, 10);
        if (*e != '\0' || errno || b < a)
            return 0;
        if (b >= size)
            b = size ? size - 1 : 0;
    }
    if (a >= size)
        return -1;
    *start = a;
    *end = b;
    return 1;
}

/* Answers with the file fd (taken over: closed on every path). */
static enum MHD_Result serve_fd(struct vs_http *h, struct MHD_Connection *c, const char *method,
                                const char *url, int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return vs_http__refuse(h, c, MHD_HTTP_NOT_FOUND, method, url, "not a regular file");
    }
    uint64_t size = (uint64_t)st.st_size, start = 0, end = size ? size - 1 : 0;
    unsigned status = MHD_HTTP_OK;
    const char *range = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_RANGE);
    if (range) {
        int rr = parse_range(range, size, &start, &end);
        if (rr < 0) {
            close(fd);
            char cr[64];
            snprintf(cr, sizeof(cr), "bytes */%" PRIu64, size);
            struct MHD_Response *r =
                MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
            if (!r)
                return MHD_NO;
            MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_RANGE, cr);
            VS_LOG(h->cfg.log, VS_LOG_WARN, "http 416 %s %s: range '%s' past end", method, url,
                   range);
            atomic_fetch_add_explicit(&h->n_refused, 1, memory_order_relaxed);
            enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_RANGE_NOT_SATISFIABLE, r);
            MHD_destroy_response(r);
            return ret;
        }
        if (rr > 0)
            status = MHD_HTTP_PARTIAL_CONTENT;
    }
    uint64_t len = size ? end - start + 1 : 0;
    /* MHD owns fd from here and closes it with the response. */
    struct MHD_Response *r = MHD_create_response_from_fd_at_offset64(len, fd, start);
    if (!r) {
        close(fd);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
    MHD_add_response_header(r, MHD_HTTP_HEADER_ACCEPT_RANGES, "bytes");
    if (status == MHD_HTTP_PARTIAL_CONTENT) {
        char cr[96];
        snprintf(cr, sizeof(cr), "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, start, end, size);
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_RANGE, cr);
    }
    atomic_fetch_add_explicit(&h->n_downloads, 1, memory_order_relaxed);
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

enum MHD_Result vs_http__serve_download(struct vs_http *h, struct MHD_Connection *c,
                                        const char *method, const char *url, const char *rel)
{
    if (!vs_http_safe_relpath(rel))
        return vs_http__refuse(h, c, MHD_HTTP_NOT_FOUND, method, url, "unsafe download path");
    int fd = openat(h->download_fd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return vs_http__refuse(h, c, MHD_HTTP_NOT_FOUND, method, url, "no such file");
    return serve_fd(h, c, method, url, fd);
}

enum MHD_Result vs_http__serve_stats(struct vs_http *h, struct MHD_Connection *c,
                                     const char *method, const char *url, const char *rel)
{
    /* One level of plain names (the exports are flat; their temporary
     * files start with '.' and are not served). */
    if (!vs_http_safe_relpath(rel) || strchr(rel, '/') || rel[0] == '.')
        return vs_http__refuse(h, c, MHD_HTTP_NOT_FOUND, method, url, "no such export");
    /* The directory appears with the first export: opened per request. */
    int dfd = open(h->stats_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return vs_http__refuse(h, c, MHD_HTTP_NOT_FOUND, method, url, "no exports yet");
    int fd = openat(dfd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    close(dfd);
    if (fd < 0)
        return vs_http__refuse(h, c, MHD_HTTP_NOT_FOUND, method, url, "no such export");
    return serve_fd(h, c, method, url, fd);
}
