/*
 * A growable byte buffer with a hard cap (curl's dynbuf). Appending past the
 * cap fails with VS_ELIMIT and leaves the buffer as it was, so a buffer fed
 * by the network can never grow without bound. The contents are always
 * NUL-terminated. The caller owns the struct; vs_buf_cleanup frees storage.
 */
#ifndef VOLSCHED_BUF_H
#define VOLSCHED_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "volsched/error.h"

struct vs_buf {
    char *data; /* NUL-terminated; NULL until the first append */
    size_t len;
    size_t cap;     /* allocated bytes */
    size_t max_len; /* hard cap on len */
};

#define VS_BUF_UNLIMITED ((size_t)-1 / 2)

void vs_buf_init(struct vs_buf *b, size_t max_len);
void vs_buf_cleanup(struct vs_buf *b);
/* Empties the buffer, keeping its storage. */
void vs_buf_reset(struct vs_buf *b);
VS_MUST_CHECK int vs_buf_append(struct vs_buf *b, const void *p, size_t n);
VS_MUST_CHECK int vs_buf_puts(struct vs_buf *b, const char *s);
VS_MUST_CHECK int vs_buf_printf(struct vs_buf *b, const char *fmt, ...) VS_PRINTF(2, 3);
VS_MUST_CHECK int vs_buf_vprintf(struct vs_buf *b, const char *fmt, va_list ap) VS_PRINTF(2, 0);
/* Returns the contents ("" when empty); valid until the next change. */
const char *vs_buf_str(const struct vs_buf *b);
/*
 * Appends the whole file at path (read in binary). Returns 0, -errno when it
 * cannot be opened, VS_ELIMIT when it passes the cap (b keeps what fitted),
 * or VS_EIO on a read error.
 */
VS_MUST_CHECK int vs_buf_append_file(struct vs_buf *b, const char *path);
/* Hands the storage to the caller (free with vs_free); the buffer is reset. */
char *vs_buf_take(struct vs_buf *b, size_t *out_len);

#endif
