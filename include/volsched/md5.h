/*
 * MD5 as BOINC uses it: the lowercase hex digest of a file or a buffer
 * (<md5_cksum>, and the text that code signatures cover). OpenSSL does the
 * hashing.
 */
#ifndef VOLSCHED_MD5_H
#define VOLSCHED_MD5_H

#include <stddef.h>
#include <stdint.h>

#include "volsched/error.h"

#define VS_MD5_HEX_LEN 32

/* Writes the 32 hex digits and a NUL into out_hex. Returns 0 or VS_ECRYPTO. */
VS_MUST_CHECK int vs_md5_hex(const void *data, size_t len, char out_hex[VS_MD5_HEX_LEN + 1]);
/*
 * Hashes the file at path. Returns 0, -errno when it cannot be read, or
 * VS_ECRYPTO. out_nbytes (may be NULL) gets the file's size.
 */
VS_MUST_CHECK int vs_md5_file(const char *path, char out_hex[VS_MD5_HEX_LEN + 1],
                              int64_t *out_nbytes);
/*
 * The same for what is left to read of open descriptor fd (not closed):
 * 0, VS_EIO when a read fails, or VS_ECRYPTO.
 */
VS_MUST_CHECK int vs_md5_fd(int fd, char out_hex[VS_MD5_HEX_LEN + 1], int64_t *out_nbytes);

#endif
