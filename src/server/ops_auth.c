/* The operator password: PBKDF2 hashing and HTTP Basic checks (ops_auth.h). */
#include "volsched/ops_auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "volsched/str.h"

#define ITERATIONS 20000 /* ~10 ms here: cheap for one operator, slow to guess */
#define SALT_LEN   16
#define HASH_LEN   32

void vs_ops__to_hex(const unsigned char *p, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * n] = '\0';
}

int vs_ops__from_hex(const char *s, size_t len, unsigned char *out, size_t n)
{
    if (len != 2 * n)
        return -1;
    for (size_t i = 0; i < n; i++) {
        int v = 0;
        for (int k = 0; k < 2; k++) {
            char c = s[2 * i + (size_t)k];
            int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            if (d < 0)
                return -1;
            v = v * 16 + d;
        }
        out[i] = (unsigned char)v;
    }
    return 0;
}

static int derive(const char *password, const unsigned char *salt, int iter, unsigned char *out)
{
    return PKCS5_PBKDF2_HMAC(password, (int)strlen(password), salt, SALT_LEN, iter, EVP_sha256(),
                             HASH_LEN, out) == 1
               ? 0
               : VS_ECRYPTO;
}

int vs_ops_hash_password(const char *password, char *out, size_t n)
{
    unsigned char salt[SALT_LEN], hash[HASH_LEN];
    if (RAND_bytes(salt, SALT_LEN) != 1 || derive(password, salt, ITERATIONS, hash) != 0)
        return VS_ECRYPTO;
    char sh[2 * SALT_LEN + 1], hh[2 * HASH_LEN + 1];
    vs_ops__to_hex(salt, SALT_LEN, sh);
    vs_ops__to_hex(hash, HASH_LEN, hh);
    int m = snprintf(out, n, "pbkdf2-sha256$%d$%s$%s", ITERATIONS, sh, hh);
    return m < 0 || (size_t)m >= n ? VS_ELIMIT : 0;
}

bool vs_ops_check_password(const char *stored, const char *password)
{
    static const char tag[] = "pbkdf2-sha256$";
    if (!stored || !password || strncmp(stored, tag, sizeof(tag) - 1) != 0)
        return false;
    const char *p = stored + sizeof(tag) - 1;
    char *end;
    long iter = strtol(p, &end, 10);
    if (*end != '$' || iter < 1000 || iter > 10000000)
        return false;
    const char *salt_hex = end + 1;
    const char *d = strchr(salt_hex, '$');
    if (!d)
        return false;
    unsigned char salt[SALT_LEN], want[HASH_LEN], got[HASH_LEN];
    const char *hash_hex = d + 1;
    size_t hl = strcspn(hash_hex, "\r\n");
    if (vs_ops__from_hex(salt_hex, (size_t)(d - salt_hex), salt, SALT_LEN) != 0 ||
        vs_ops__from_hex(hash_hex, hl, want, HASH_LEN) != 0)
        return false;
    if (derive(password, salt, (int)iter, got) != 0)
        return false;
    return CRYPTO_memcmp(got, want, HASH_LEN) == 0;
}

_Static_assert(VS_OPS_PASSWORD_MIN == 10, "the message below names the minimum");

const char *vs_ops_password_problem(const char *password)
{
    if (!password || strlen(password) < VS_OPS_PASSWORD_MIN)
        return "the operator password must have at least 10 characters (it guards the "
               "dashboard on the open internet)";
    /* The password travels in an HTTP Basic header: no control characters. */
    for (const char *p = password; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return "the operator password may not contain control characters";
    return NULL;
}

int vs_ops_random_password(char *out, size_t n)
{
    static const char alphabet[] = "abcdefghijkmnpqrstuvwxyzACDEFGHJKLMNPQRSTUVWXYZ23456789";
    unsigned char r[16];
    if (n < 17)
        return VS_ELIMIT;
    if (RAND_bytes(r, sizeof(r)) != 1)
        return VS_ECRYPTO;
    for (size_t i = 0; i < 16; i++)
        out[i] = alphabet[r[i] % (sizeof(alphabet) - 1)];
    out[16] = '\0';
    return 0;
}

bool vs_ops_check_basic(const char *stored, const char *authorization)
{
    if (!authorization || strncasecmp(authorization, "Basic ", 6) != 0)
        return false;
    const char *b64 = authorization + 6;
    while (*b64 == ' ')
        b64++;
    size_t len = strlen(b64);
    if (len == 0 || len > 512 || len % 4 != 0)
        return false;
    unsigned char dec[400];
    int n = EVP_DecodeBlock(dec, (const unsigned char *)b64, (int)len);
    if (n < 0)
        return false;
    /* EVP_DecodeBlock counts the '=' padding as zero bytes. */
    if (len >= 1 && b64[len - 1] == '=')
        n--;
    if (len >= 2 && b64[len - 2] == '=')
        n--;
    dec[n] = '\0';
    const char *colon = memchr(dec, ':', (size_t)n);
    if (!colon || memchr(dec, '\0', (size_t)n))
        return false;
    return vs_ops_check_password(stored, colon + 1);
}
