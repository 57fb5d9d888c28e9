/* MD5 hex digests through OpenSSL. See include/volsched/md5.h. */
#include "volsched/md5.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

static void to_hex(const unsigned char *md, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        out[2 * i] = digits[md[i] >> 4];
        out[2 * i + 1] = digits[md[i] & 15];
    }
    out[VS_MD5_HEX_LEN] = '\0';
}

int vs_md5_hex(const void *data, size_t len, char out_hex[VS_MD5_HEX_LEN + 1])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (!EVP_Digest(data, len, md, &mdlen, EVP_md5(), NULL) || mdlen != 16)
        return VS_ECRYPTO;
    to_hex(md, out_hex);
    return 0;
}

int vs_md5_fd(int fd, char out_hex[VS_MD5_HEX_LEN + 1], int64_t *out_nbytes)
{
    int rc = VS_ECRYPTO;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx || !EVP_DigestInit_ex(ctx, EVP_md5(), NULL))
        goto fail;
    unsigned char buf[65536];
    int64_t total = 0;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = VS_EIO;
            goto fail;
        }
        if (n == 0)
            break;
        if (!EVP_DigestUpdate(ctx, buf, (size_t)n))
            goto fail;
        total += n;
    }
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (!EVP_DigestFinal_ex(ctx, md, &mdlen) || mdlen != 16)
        goto fail;
    to_hex(md, out_hex);
    if (out_nbytes)
        *out_nbytes = total;
    rc = 0;
fail:
    EVP_MD_CTX_free(ctx);
    return rc;
}

int vs_md5_file(const char *path, char out_hex[VS_MD5_HEX_LEN + 1], int64_t *out_nbytes)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = vs_md5_fd(fd, out_hex, out_nbytes);
    close(fd);
    return rc;
}
