/*
 * BOINC-compatible code signing with OpenSSL 3. See include/volsched/sign.h.
 *
 * BOINC-COMPAT: the key text is BOINC's in-memory key struct (RSAEuro layout,
 * a 16-bit bit count followed by fixed-size big-endian byte arrays) dumped as
 * hex; we translate it to and from OpenSSL parameters, never sharing memory
 * layouts with BOINC.
 */
#include "volsched/sign.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <stdio.h>
#include <string.h>

#include "volsched/str.h"
#include <sys/stat.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/md5.h"

struct vs_sign_key {
    EVP_PKEY *pkey;
    bool priv;
    int bits;
};

#define MOD_LEN   VS_SIGN_MAX_MODULUS_LEN
#define PRIME_LEN VS_SIGN_MAX_PRIME_LEN
/* BOINC-COMPAT: byte sizes of the hex body of public / private key text */
#define PUBLIC_BYTES  (2 * MOD_LEN)
#define PRIVATE_BYTES (3 * MOD_LEN + 5 * PRIME_LEN)

/* The OpenSSL parameters in BOINC's private key order, with their byte widths. */
static const struct {
    const char *param;
    size_t width;
} priv_layout[] = {
    {OSSL_PKEY_PARAM_RSA_N, MOD_LEN},           {OSSL_PKEY_PARAM_RSA_E, MOD_LEN},
    {OSSL_PKEY_PARAM_RSA_D, MOD_LEN},           {OSSL_PKEY_PARAM_RSA_FACTOR1, PRIME_LEN},
    {OSSL_PKEY_PARAM_RSA_FACTOR2, PRIME_LEN},   {OSSL_PKEY_PARAM_RSA_EXPONENT1, PRIME_LEN},
    {OSSL_PKEY_PARAM_RSA_EXPONENT2, PRIME_LEN}, {OSSL_PKEY_PARAM_RSA_COEFFICIENT1, PRIME_LEN},
};

static struct vs_sign_key *wrap(EVP_PKEY *pkey, bool priv)
{
    struct vs_sign_key *k = VS_NEW(struct vs_sign_key);
    k->pkey = pkey;
    k->priv = priv;
    k->bits = EVP_PKEY_get_bits(pkey);
    return k;
}

void vs_sign_key_destroy(struct vs_sign_key *key)
{
    if (!key)
        return;
    EVP_PKEY_free(key->pkey);
    vs_free(key);
}

bool vs_sign_key_is_private(const struct vs_sign_key *key)
{
    return key->priv;
}

int vs_sign_key_generate(int bits, struct vs_sign_key **out_key)
{
    if (bits < 512 || bits > VS_SIGN_KEY_BITS)
        return VS_EINVAL;
    EVP_PKEY *pkey = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)bits);
    if (!pkey)
        return VS_ECRYPTO;
    *out_key = wrap(pkey, true);
    return 0;
}

/* ---- hex text ---- */

/*
 * Reads hex digits from s (whitespace skipped) into out, up to max bytes,
 * stopping at the first other character. Returns the byte count, or -1 for an
 * odd number of digits or more than max bytes.
 */
static long scan_hex(const char *s, size_t len, unsigned char *out, size_t max, size_t *used)
{
    size_t n = 0, i = 0;
    int hi = -1;
    for (; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (isspace(c))
            continue;
        int v = vs_hexval(c);
        if (v < 0)
            break;
        if (hi < 0) {
            hi = v;
        } else {
            if (n >= max)
                return -1;
            out[n++] = (unsigned char)(hi << 4 | v);
            hi = -1;
        }
    }
    if (hi >= 0)
        return -1;
    if (used)
        *used = i;
    return (long)n;
}

/* BOINC-COMPAT: hex, 32 bytes (64 digits) a line, then a line holding ".". */
static int print_hex(struct vs_buf *out, const unsigned char *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    char line[66];
    for (size_t i = 0; i < n; i += 32) {
        size_t k = 0;
        for (size_t j = i; j < n && j < i + 32; j++) {
            line[k++] = digits[p[j] >> 4];
            line[k++] = digits[p[j] & 15];
        }
        line[k++] = '\n';
        int rc = vs_buf_append(out, line, k);
        if (rc)
            return rc;
    }
    return vs_buf_puts(out, ".\n");
}

int vs_sign_key_parse(const char *text, size_t len, bool is_private, struct vs_sign_key **out_key)
{
    if (len > VS_SIGN_MAX_TEXT)
        return VS_ELIMIT;
    size_t i = 0;
    while (i < len && isspace((unsigned char)text[i]))
        i++;
    long bits = 0;
    size_t nd = 0;
    while (i < len && isdigit((unsigned char)text[i]) && nd < 6) {
        bits = bits * 10 + (text[i++] - '0');
        nd++;
    }
    if (nd == 0 || i >= len || (text[i] != '\n' && text[i] != '\r'))
        return VS_EPARSE;
    if (bits < 256 || bits > VS_SIGN_KEY_BITS)
        return VS_EPARSE;
    unsigned char raw[PRIVATE_BYTES];
    size_t want = is_private ? PRIVATE_BYTES : PUBLIC_BYTES;
    size_t used = 0;
    long got = scan_hex(text + i, len - i, raw, sizeof(raw), &used);
    if (got != (long)want)
        return VS_EPARSE;
    /* the body must end with the "." line (trailing whitespace allowed) */
    size_t j = i + used;
    if (j >= len || text[j] != '.')
        return VS_EPARSE;

    int rc = VS_ECRYPTO;
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = NULL;
    EVP_PKEY *pkey = NULL;
    BIGNUM *bn[8] = {0};
    size_t nparams = is_private ? 8 : 2;
    size_t off = 0;
    if (!bld)
        goto fail;
    for (size_t k = 0; k < nparams; k++) {
        /* the public struct is modulus then exponent: the first two of the layout */
        size_t w = priv_layout[k].width;
        bn[k] = BN_bin2bn(raw + off, (int)w, NULL);
        off += w;
        if (!bn[k] || !OSSL_PARAM_BLD_push_BN(bld, priv_layout[k].param, bn[k]))
            goto fail;
    }
    if (BN_num_bits(bn[0]) > bits || BN_num_bits(bn[0]) < 256 || BN_is_zero(bn[1])) {
        rc = VS_ECRYPTO;
        goto fail;
    }
    params = OSSL_PARAM_BLD_to_param(bld);
    ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    if (!params || !ctx || EVP_PKEY_fromdata_init(ctx) <= 0 ||
        EVP_PKEY_fromdata(ctx, &pkey, is_private ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY,
                          params) <= 0)
        goto fail;
    if (is_private) {
        /* reject a private struct whose numbers do not belong together */
        EVP_PKEY_CTX *chk = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
        int ok = chk && EVP_PKEY_pairwise_check(chk) > 0;
        EVP_PKEY_CTX_free(chk);
        if (!ok)
            goto fail;
    }
    *out_key = wrap(pkey, is_private);
    pkey = NULL;
    rc = 0;
fail:
    for (size_t k = 0; k < 8; k++)
        BN_clear_free(bn[k]);
    EVP_PKEY_free(pkey);
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    OPENSSL_cleanse(raw, sizeof(raw));
    return rc;
}

static int write_key(const struct vs_sign_key *key, bool priv, struct vs_buf *out)
{
    if (priv && !key->priv)
        return VS_EINVAL;
    if (key->bits > VS_SIGN_KEY_BITS)
        return VS_EUNSUPPORTED;
    unsigned char raw[PRIVATE_BYTES];
    memset(raw, 0, sizeof(raw));
    size_t nparams = priv ? 8 : 2, off = 0;
    int rc = VS_ECRYPTO;
    for (size_t k = 0; k < nparams; k++) {
        BIGNUM *bn = NULL;
        size_t w = priv_layout[k].width;
        if (!EVP_PKEY_get_bn_param(key->pkey, priv_layout[k].param, &bn))
            goto fail;
        int ok = BN_bn2binpad(bn, raw + off, (int)w) == (int)w;
        BN_clear_free(bn);
        if (!ok)
            goto fail;
        off += w;
    }
    rc = vs_buf_printf(out, "%d\n", key->bits);
    if (!rc)
        rc = print_hex(out, raw, off);
fail:
    OPENSSL_cleanse(raw, sizeof(raw));
    return rc;
}

int vs_sign_key_write_public(const struct vs_sign_key *key, struct vs_buf *out)
{
    return write_key(key, false, out);
}

int vs_sign_key_write_private(const struct vs_sign_key *key, struct vs_buf *out)
{
    return write_key(key, true, out);
}

int vs_sign_key_write_pem(const struct vs_sign_key *key, bool private_part, struct vs_buf *out)
{
    if (private_part && !key->priv)
        return VS_EINVAL;
    BIO *bio = BIO_new(BIO_s_mem());
    if (!bio)
        return VS_ECRYPTO;
    int ok = private_part ? PEM_write_bio_PrivateKey(bio, key->pkey, NULL, NULL, 0, NULL, NULL)
                          : PEM_write_bio_PUBKEY(bio, key->pkey);
    int rc = VS_ECRYPTO;
    if (ok) {
        char *p = NULL;
        long n = BIO_get_mem_data(bio, &p);
        rc = n >= 0 ? vs_buf_append(out, p, (size_t)n) : VS_ECRYPTO;
    }
    BIO_free(bio);
    return rc;
}

int vs_sign_key_load(const char *path, bool is_private, struct vs_sign_key **out_key)
{
    struct vs_buf b;
    vs_buf_init(&b, 64 * 1024);
    int rc = vs_buf_append_file(&b, path); /* (a key is small: the cap is 64 KB) */
    if (rc)
        goto fail;
    if (strstr(vs_buf_str(&b), "-----BEGIN")) {
        BIO *bio = BIO_new_mem_buf(b.data, (int)b.len);
        EVP_PKEY *pkey = NULL;
        if (bio) {
            pkey = is_private ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL)
                              : PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
            BIO_free(bio);
        }
        if (!pkey || EVP_PKEY_get_base_id(pkey) != EVP_PKEY_RSA) {
            EVP_PKEY_free(pkey);
            rc = VS_EPARSE;
            goto fail;
        }
        *out_key = wrap(pkey, is_private);
    } else {
        rc = vs_sign_key_parse(vs_buf_str(&b), b.len, is_private, out_key);
    }
fail:
    if (b.data)
        OPENSSL_cleanse(b.data, b.len);
    vs_buf_cleanup(&b);
    return rc;
}

/* ---- signatures ---- */

static bool is_md5hex(const char *s)
{
    for (int i = 0; i < VS_MD5_HEX_LEN; i++)
        if (vs_hexval((unsigned char)s[i]) < 0)
            return false;
    return s[VS_MD5_HEX_LEN] == '\0';
}

int vs_sign_md5hex(const struct vs_sign_key *key, const char *md5hex, struct vs_buf *out)
{
    if (!key->priv || !is_md5hex(md5hex))
        return VS_EINVAL;
    unsigned char sig[1024];
    size_t siglen = sizeof(sig);
    int rc = VS_ECRYPTO;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, key->pkey, NULL);
    /* BOINC-COMPAT: PKCS#1 v1.5 type 1 over the raw 32 hex characters, no DigestInfo */
    if (ctx && EVP_PKEY_sign_init(ctx) > 0 &&
        EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) > 0 &&
        EVP_PKEY_sign(ctx, sig, &siglen, (const unsigned char *)md5hex, VS_MD5_HEX_LEN) > 0)
        rc = print_hex(out, sig, siglen);
    EVP_PKEY_CTX_free(ctx);
    return rc;
}

int vs_sign_data(const struct vs_sign_key *key, const void *data, size_t len, struct vs_buf *out)
{
    char md5[VS_MD5_HEX_LEN + 1];
    int rc = vs_md5_hex(data, len, md5);
    return rc ? rc : vs_sign_md5hex(key, md5, out);
}

int vs_sign_file(const struct vs_sign_key *key, const char *path, struct vs_buf *out)
{
    char md5[VS_MD5_HEX_LEN + 1];
    int rc = vs_md5_file(path, md5, NULL);
    return rc ? rc : vs_sign_md5hex(key, md5, out);
}

int vs_sign_verify_md5hex(const struct vs_sign_key *key, const char *md5hex, const char *sig,
                          size_t sig_len)
{
    if (!is_md5hex(md5hex))
        return VS_EINVAL;
    if (sig_len > VS_SIGN_MAX_TEXT)
        return VS_ELIMIT;
    unsigned char raw[VS_SIGN_MAX_TEXT / 2];
    long n = scan_hex(sig, sig_len, raw, sizeof(raw), NULL);
    if (n <= 0)
        return VS_EPARSE;
    if (n != EVP_PKEY_get_size(key->pkey))
        return VS_EAUTH;
    unsigned char plain[1024];
    size_t plen = sizeof(plain);
    int rc = VS_EAUTH;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, key->pkey, NULL);
    if (!ctx)
        return VS_ECRYPTO;
    if (EVP_PKEY_verify_recover_init(ctx) > 0 &&
        EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) > 0 &&
        EVP_PKEY_verify_recover(ctx, plain, &plen, raw, (size_t)n) > 0 && plen == VS_MD5_HEX_LEN &&
        memcmp(plain, md5hex, VS_MD5_HEX_LEN) == 0)
        rc = 0;
    EVP_PKEY_CTX_free(ctx);
    return rc;
}

int vs_sign_verify_data(const struct vs_sign_key *key, const void *data, size_t len,
                        const char *sig, size_t sig_len)
{
    char md5[VS_MD5_HEX_LEN + 1];
    int rc = vs_md5_hex(data, len, md5);
    return rc ? rc : vs_sign_verify_md5hex(key, md5, sig, sig_len);
}

int vs_sign_verify_file(const struct vs_sign_key *key, const char *path, const char *sig,
                        size_t sig_len)
{
    char md5[VS_MD5_HEX_LEN + 1];
    int rc = vs_md5_file(path, md5, NULL);
    return rc ? rc : vs_sign_verify_md5hex(key, md5, sig, sig_len);
}

/* BOINC-COMPAT: the text an upload certificate covers. */
static int cert_text(struct vs_buf *b, const char *name, double max_nbytes)
{
    if (!name || !*name)
        return VS_EINVAL;
    return vs_buf_printf(b, "<name>%s</name><max_nbytes>%.0f</max_nbytes>", name, max_nbytes);
}

int vs_sign_upload_cert(const struct vs_sign_key *key, const char *name, double max_nbytes,
                        struct vs_buf *out)
{
    struct vs_buf t;
    vs_buf_init(&t, VS_SIGN_MAX_TEXT);
    int rc = cert_text(&t, name, max_nbytes);
    if (!rc)
        rc = vs_sign_data(key, t.data, t.len, out);
    vs_buf_cleanup(&t);
    return rc;
}

int vs_sign_verify_upload_cert(const struct vs_sign_key *key, const char *name, double max_nbytes,
                               const char *sig, size_t sig_len)
{
    struct vs_buf t;
    vs_buf_init(&t, VS_SIGN_MAX_TEXT);
    int rc = cert_text(&t, name, max_nbytes);
    if (!rc)
        rc = vs_sign_verify_data(key, t.data, t.len, sig, sig_len);
    vs_buf_cleanup(&t);
    return rc;
}

/* ---- keygen ---- */

static int write_new_file(const char *dir, const char *name, const struct vs_buf *b, int mode)
{
    char path[4096];
    int n = snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof(path))
        return VS_ELIMIT;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0)
        return errno == EEXIST ? VS_EEXISTS : -errno;
    size_t done = 0;
    int rc = 0;
    while (done < b->len) {
        ssize_t w = write(fd, b->data + done, b->len - done);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            rc = -errno;
            break;
        }
        done += (size_t)w;
    }
    if (!rc && fsync(fd) != 0)
        rc = -errno;
    if (close(fd) != 0 && !rc)
        rc = -errno;
    if (rc)
        unlink(path);
    return rc;
}

static int write_pair(const char *dir, const char *priv_name, const char *pub_name, int bits)
{
    struct vs_sign_key *key = NULL;
    struct vs_buf priv, pub;
    vs_buf_init(&priv, VS_SIGN_MAX_TEXT);
    vs_buf_init(&pub, VS_SIGN_MAX_TEXT);
    int rc = vs_sign_key_generate(bits, &key);
    if (rc)
        goto fail;
    rc = vs_sign_key_write_private(key, &priv);
    if (!rc)
        rc = vs_sign_key_write_public(key, &pub);
    if (!rc)
        rc = write_new_file(dir, priv_name, &priv, 0600);
    if (!rc)
        rc = write_new_file(dir, pub_name, &pub, 0644);
fail:
    if (priv.data)
        OPENSSL_cleanse(priv.data, priv.len);
    vs_buf_cleanup(&priv);
    vs_buf_cleanup(&pub);
    vs_sign_key_destroy(key);
    return rc;
}

int vs_sign_keygen_write(const char *dir, int bits)
{
    if (!dir || !*dir || bits < 512 || bits > VS_SIGN_KEY_BITS)
        return VS_EINVAL;
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return -errno;
    static const char *const names[] = {VS_SIGN_CODE_PRIVATE, VS_SIGN_CODE_PUBLIC,
                                        VS_SIGN_UPLOAD_PRIVATE, VS_SIGN_UPLOAD_PUBLIC};
    for (size_t i = 0; i < 4; i++) {
        char path[4096];
        struct stat st;
        int n = snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        if (n < 0 || (size_t)n >= sizeof(path))
            return VS_ELIMIT;
        if (stat(path, &st) == 0)
            return VS_EEXISTS;
    }
    int rc = write_pair(dir, VS_SIGN_CODE_PRIVATE, VS_SIGN_CODE_PUBLIC, bits);
    if (!rc)
        rc = write_pair(dir, VS_SIGN_UPLOAD_PRIVATE, VS_SIGN_UPLOAD_PUBLIC, bits);
    return rc;
}
