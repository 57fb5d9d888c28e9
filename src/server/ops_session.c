/* The operator's session cookie (ops_session.h). */
#include "server/ops_session.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "volsched/ops_auth.h"
#include "volsched/str.h"

#define SECRET_LEN  32
#define NONCE_LEN   8
#define MAC_LEN     32
#define SUBJECT_MAX 18 /* decimal digits */

/* HMAC-SHA256 of data under key into out (MAC_LEN bytes). */
static int hmac(const unsigned char *key, size_t klen, const void *data, size_t len,
                unsigned char *out)
{
    unsigned int olen = 0;
    if (!HMAC(EVP_sha256(), key, (int)klen, data, len, out, &olen) || olen != MAC_LEN)
        return VS_ECRYPTO;
    return 0;
}

/* Reads the secret from fd: 64 hex digits, then an optional newline. */
static int read_secret(int fd, unsigned char *out)
{
    char text[2 * SECRET_LEN + 2];
    ssize_t n = read(fd, text, sizeof(text));
    if (n < 0)
        return -errno;
    size_t len = (size_t)n;
    if (len > 0 && text[len - 1] == '\n')
        len--;
    return vs_ops__from_hex(text, len, out, SECRET_LEN) == 0 ? 0 : VS_EPARSE;
}

/* Makes the secret file (it did not exist): written whole, then renamed
 * into place, so a reader never sees half of it; a second maker racing
 * this one loses the rename's link and reads the winner's. */
static int make_secret(const char *path, unsigned char *out)
{
    if (RAND_bytes(out, SECRET_LEN) != 1)
        return VS_ECRYPTO;
    char text[2 * SECRET_LEN + 2], tmp[VS_PATH_MAX + 64];
    vs_ops__to_hex(out, SECRET_LEN, text);
    text[2 * SECRET_LEN] = '\n';
    int m = snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
    if (m < 0 || (size_t)m >= sizeof(tmp))
        return VS_ELIMIT;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    int rc = write(fd, text, 2 * SECRET_LEN + 1) == 2 * SECRET_LEN + 1 ? 0 : VS_EIO;
    if (fsync(fd) != 0 && rc == 0)
        rc = -errno;
    close(fd);
    /* link(2) fails with EEXIST instead of replacing a secret another
     * process made meanwhile. */
    if (rc == 0 && link(tmp, path) != 0)
        rc = -errno;
    unlink(tmp);
    return rc;
}

int vs_ops_session_key_load(const char *dir, const char *stored_hash,
                            struct vs_ops_session_key *out)
{
    char path[VS_PATH_MAX + 64];
    int m = snprintf(path, sizeof(path), "%s/%s", dir, VS_OPS_SESSION_KEY_FILE);
    if (m < 0 || (size_t)m >= sizeof(path) || !stored_hash)
        return VS_EINVAL;
    unsigned char secret[SECRET_LEN];
    int rc = 0;
    for (int tries = 0; tries < 2; tries++) {
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0) {
            rc = read_secret(fd, secret);
            close(fd);
            break;
        }
        rc = -errno;
        if (rc != -ENOENT)
            break;
        rc = make_secret(path, secret);
        if (rc != -EEXIST)
            break; /* made (0), or failed; EEXIST: another made it, read that */
    }
    if (rc == 0) {
        /* Bound to the password: a new one ends the old sessions. */
        char label[VS_OPS_HASH_MAX + 32];
        int n = snprintf(label, sizeof(label), "volsched ops session|%s", stored_hash);
        if (n < 0 || (size_t)n >= sizeof(label))
            rc = VS_ELIMIT;
        else
            rc = hmac(secret, SECRET_LEN, label, (size_t)n, out->k);
    }
    OPENSSL_cleanse(secret, sizeof(secret));
    return rc;
}

/* The MAC (hex) of "EXPIRY.NONCE" (body, len bytes). */
static int mac_hex(const struct vs_ops_session_key *k, const char *body, size_t len,
                   char out[2 * MAC_LEN + 1])
{
    unsigned char mac[MAC_LEN];
    int rc = hmac(k->k, sizeof(k->k), body, len, mac);
    if (rc == 0)
        vs_ops__to_hex(mac, MAC_LEN, out);
    return rc;
}

int vs_session_tag(const struct vs_ops_session_key *k, const char *data, char *out, size_t n)
{
    char h[2 * MAC_LEN + 1];
    int rc = mac_hex(k, data, strlen(data), h);
    if (rc == 0 && snprintf(out, n, "%s", h) >= (int)n)
        rc = VS_ELIMIT;
    OPENSSL_cleanse(h, sizeof(h));
    return rc;
}

int vs_session_cookie_make(const struct vs_ops_session_key *k, const char *subject, int64_t now,
                           int secs, char *out, size_t n)
{
    unsigned char nonce[NONCE_LEN];
    char nh[2 * NONCE_LEN + 1], body[96], mh[2 * MAC_LEN + 1];
    size_t sl = subject ? strlen(subject) : 0;
    if (sl > SUBJECT_MAX || strspn(subject ? subject : "", "0123456789") != sl)
        return VS_EINVAL;
    if (RAND_bytes(nonce, NONCE_LEN) != 1)
        return VS_ECRYPTO;
    vs_ops__to_hex(nonce, NONCE_LEN, nh);
    int bl = snprintf(body, sizeof(body), "%s%s%" PRId64 ".%s", sl ? subject : "", sl ? "." : "",
                      now + secs, nh);
    if (bl < 0 || (size_t)bl >= sizeof(body))
        return VS_ELIMIT;
    int rc = mac_hex(k, body, (size_t)bl, mh);
    if (rc != 0)
        return rc;
    int m = snprintf(out, n, "%s.%s", body, mh);
    return m < 0 || (size_t)m >= n ? VS_ELIMIT : 0;
}

int vs_ops_cookie_make(const struct vs_ops_session_key *k, int64_t now, char *out, size_t n)
{
    return vs_session_cookie_make(k, "", now, VS_OPS_SESSION_SECS, out, n);
}

/* Digits v[from..to) as a number (at most 18 of them: no overflow); -1 if
 * they are not that. */
static int64_t digits(const char *v, size_t from, size_t to)
{
    if (to <= from || to - from > 18)
        return -1;
    int64_t x = 0;
    for (size_t i = from; i < to; i++) {
        if (v[i] < '0' || v[i] > '9')
            return -1;
        x = x * 10 + (v[i] - '0');
    }
    return x;
}

/* One cookie value v[0..len): well formed, signed under k, not expired;
 * its subject ("" for none) into out_subject (sn bytes). */
static bool value_ok(const struct vs_ops_session_key *k, const char *v, size_t len, int64_t now,
                     int secs, char *out_subject, size_t sn)
{
    /* [SUBJECT '.'] EXPIRY '.' NONCE '.' MAC */
    if (len < 1 + 1 + 2 * NONCE_LEN + 1 + 2 * MAC_LEN ||
        len > SUBJECT_MAX + 1 + 18 + 2 + 2 * (NONCE_LEN + MAC_LEN))
        return false;
    size_t bl = len - 2 * MAC_LEN - 1;  /* "[SUBJECT.]EXPIRY.NONCE" */
    size_t el = bl - 2 * NONCE_LEN - 1; /* end of EXPIRY */
    if (v[bl] != '.' || v[el] != '.')
        return false;
    const char *dot = memchr(v, '.', el);
    size_t es = dot ? (size_t)(dot - v) + 1 : 0; /* start of EXPIRY */
    int64_t expiry = digits(v, es, el);
    if (expiry <= now || expiry > now + secs + 300)
        return false;
    if (dot && (digits(v, 0, es - 1) < 0 || es - 1 > SUBJECT_MAX || es - 1 >= sn))
        return false;
    char want[2 * MAC_LEN + 1];
    if (mac_hex(k, v, bl, want) != 0 || CRYPTO_memcmp(want, v + bl + 1, 2 * MAC_LEN) != 0)
        return false;
    if (out_subject && sn) {
        size_t l = dot ? es - 1 : 0;
        memcpy(out_subject, v, l);
        out_subject[l] = '\0';
    }
    return true;
}

bool vs_session_cookie_find(const struct vs_ops_session_key *k, const char *name,
                            const char *cookie_header, int64_t now, int secs, char *out_subject,
                            size_t sn, char *out_value, size_t vn)
{
    const size_t nl = strlen(name);
    const char *p = cookie_header;
    char subj[SUBJECT_MAX + 1];
    for (int seen = 0; p && *p && seen < 8;) {
        while (*p == ' ' || *p == ';')
            p++;
        size_t len = strcspn(p, ";");
        if (len > nl + 1 && strncmp(p, name, nl) == 0 && p[nl] == '=') {
            seen++;
            const char *v = p + nl + 1;
            size_t vl = len - nl - 1;
            while (vl > 0 && v[vl - 1] == ' ')
                vl--;
            if (value_ok(k, v, vl, now, secs, subj, sizeof(subj))) {
                if (out_subject && sn && snprintf(out_subject, sn, "%s", subj) >= (int)sn)
                    return false;
                if (out_value && vn) {
                    if (vl >= vn)
                        return false;
                    memcpy(out_value, v, vl);
                    out_value[vl] = '\0';
                }
                return true;
            }
        }
        p += len;
    }
    return false;
}

bool vs_ops_cookie_check(const struct vs_ops_session_key *k, const char *cookie_header, int64_t now)
{
    char subj[SUBJECT_MAX + 1];
    /* The dashboard's cookies have no subject. */
    return vs_session_cookie_find(k, VS_OPS_COOKIE_NAME, cookie_header, now, VS_OPS_SESSION_SECS,
                                  subj, sizeof(subj), NULL, 0) &&
           subj[0] == '\0';
}
