#include "volsched/buf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "volsched/alloc.h"

void vs_buf_init(struct vs_buf *b, size_t max_len)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max_len = max_len;
}

void vs_buf_cleanup(struct vs_buf *b)
{
    vs_free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void vs_buf_reset(struct vs_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

static int reserve(struct vs_buf *b, size_t extra)
{
    if (extra > b->max_len || b->len > b->max_len - extra)
        return VS_ELIMIT;
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return 0;
    size_t ncap = b->cap ? b->cap : 64;
    while (ncap < need)
        ncap *= 2;
    b->data = vs_xrealloc(b->data, ncap);
    b->cap = ncap;
    return 0;
}

int vs_buf_append(struct vs_buf *b, const void *p, size_t n)
{
    int rc = reserve(b, n);
    if (rc)
        return rc;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int vs_buf_puts(struct vs_buf *b, const char *s)
{
    return vs_buf_append(b, s, strlen(s));
}

int vs_buf_vprintf(struct vs_buf *b, const char *fmt, va_list ap)
{
    char small[256];
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof(small), fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return VS_EINVAL;
    if ((size_t)n < sizeof(small))
        return vs_buf_append(b, small, (size_t)n);
    int rc = reserve(b, (size_t)n);
    if (rc)
        return rc;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return 0;
}

int vs_buf_printf(struct vs_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vs_buf_vprintf(b, fmt, ap);
    va_end(ap);
    return rc;
}

const char *vs_buf_str(const struct vs_buf *b)
{
    return b->data ? b->data : "";
}

char *vs_buf_take(struct vs_buf *b, size_t *out_len)
{
    char *d = b->data ? b->data : vs_xstrdup("");
    if (out_len)
        *out_len = b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return d;
}

int vs_buf_append_file(struct vs_buf *b, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -errno;
    char chunk[8192];
    size_t n;
    int rc = 0;
    while (rc == 0 && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        rc = vs_buf_append(b, chunk, n);
    if (rc == 0 && ferror(f))
        rc = VS_EIO;
    fclose(f);
    return rc;
}
