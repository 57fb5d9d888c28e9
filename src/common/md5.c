/* MD5 hex digests through OpenSSL. See include/volsched/md5.h. */
#include "volsched/md5.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>

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

int vs_md5_file(const char *path, char out_hex[VS_MD5_HEX_LEN + 1], int64_t *out_nbytes)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -errno;
    int rc = VS_ECRYPTO;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx || !EVP_DigestInit_ex(ctx, EVP_md5(), NULL))
        goto fail;
    unsigned char buf[65536];
    int64_t total = 0;
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
        if (!EVP_DigestUpdate(ctx, buf, n))
            goto fail;
        total += (int64_t)n;
    }
    if (ferror(f)) {
        rc = VS_EIO;
        goto fail;
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
    fclose(f);
    return rc;
}
