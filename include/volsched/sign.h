/*
 * BOINC-compatible code signing and upload certificates (OpenSSL 3).
 *
 * BOINC-COMPAT: keys are RSA (at most 1024 bits, the client's key struct
 * holds a 128-byte modulus) written in BOINC's text format: the modulus bit
 * count on the first line, then the key struct as lowercase hex, 64 hex
 * digits a line, then a line holding ".". A public key is modulus and public
 * exponent (128 bytes each, big-endian, left zero-padded); a private key is
 * modulus, public exponent, private exponent (128 bytes each), the two primes,
 * the two CRT exponents and the CRT coefficient (64 bytes each).
 *
 * A signature is PKCS#1 v1.5 type-1 padding (no DigestInfo) over the 32 ASCII
 * characters of a lowercase hex MD5, written as hex, 64 digits a line, then
 * ".". Signing is deterministic: the same key and data give the same text.
 *
 * A struct vs_sign_key is created by one of the load/parse/generate calls and
 * owned by the caller, who frees it with vs_sign_key_destroy().
 */
#ifndef VOLSCHED_SIGN_H
#define VOLSCHED_SIGN_H

#include <stdbool.h>
#include <stddef.h>

#include "volsched/buf.h"
#include "volsched/error.h"

#define VS_SIGN_KEY_BITS        1024 /* what the BOINC 7.20 client accepts at most */
#define VS_SIGN_MAX_MODULUS_LEN 128
#define VS_SIGN_MAX_PRIME_LEN   64
#define VS_SIGN_MAX_TEXT        4096 /* bytes of key or signature text we read */

/* File names of the key pairs in a project's keys/ directory (BOINC's names). */
#define VS_SIGN_CODE_PRIVATE   "code_sign_private"
#define VS_SIGN_CODE_PUBLIC    "code_sign_public"
#define VS_SIGN_UPLOAD_PRIVATE "upload_private"
#define VS_SIGN_UPLOAD_PUBLIC  "upload_public"

struct vs_sign_key;

/* Generates a new RSA key pair of bits (<= 1024, >= 512) with exponent 65537. */
VS_MUST_CHECK int vs_sign_key_generate(int bits, struct vs_sign_key **out_key);
/*
 * Parses BOINC key text (public if is_private is false). Returns VS_EPARSE for
 * malformed text, VS_ELIMIT for text over VS_SIGN_MAX_TEXT, VS_ECRYPTO when the
 * numbers do not form a usable key.
 */
VS_MUST_CHECK int vs_sign_key_parse(const char *text, size_t len, bool is_private,
                                    struct vs_sign_key **out_key);
/* Reads a key file in BOINC's text format, or PEM (detected by "-----BEGIN"). */
VS_MUST_CHECK int vs_sign_key_load(const char *path, bool is_private, struct vs_sign_key **out_key);
bool vs_sign_key_is_private(const struct vs_sign_key *key);
/* Appends the public half in BOINC text format (what <code_sign_key> carries). */
VS_MUST_CHECK int vs_sign_key_write_public(const struct vs_sign_key *key, struct vs_buf *out);
/* Appends the private key in BOINC text format. VS_EINVAL for a public-only key. */
VS_MUST_CHECK int vs_sign_key_write_private(const struct vs_sign_key *key, struct vs_buf *out);
/* Appends the key as PKCS#8 / SubjectPublicKeyInfo PEM (for openssl tools). */
VS_MUST_CHECK int vs_sign_key_write_pem(const struct vs_sign_key *key, bool private_part,
                                        struct vs_buf *out);
void vs_sign_key_destroy(struct vs_sign_key *key);

/* Appends the signature text of md5hex (32 hex digits) made with a private key. */
VS_MUST_CHECK int vs_sign_md5hex(const struct vs_sign_key *key, const char *md5hex,
                                 struct vs_buf *out);
/* Signs the MD5 of data[0..len). */
VS_MUST_CHECK int vs_sign_data(const struct vs_sign_key *key, const void *data, size_t len,
                               struct vs_buf *out);
/* Signs the MD5 of the file at path (<file_signature> of an app version file). */
VS_MUST_CHECK int vs_sign_file(const struct vs_sign_key *key, const char *path, struct vs_buf *out);

/*
 * Verifies signature text sig[0..sig_len) over md5hex with a public (or
 * private) key. Returns 0 when it matches, VS_EAUTH when it does not,
 * VS_EPARSE when sig is not signature text.
 */
VS_MUST_CHECK int vs_sign_verify_md5hex(const struct vs_sign_key *key, const char *md5hex,
                                        const char *sig, size_t sig_len);
VS_MUST_CHECK int vs_sign_verify_data(const struct vs_sign_key *key, const void *data, size_t len,
                                      const char *sig, size_t sig_len);
VS_MUST_CHECK int vs_sign_verify_file(const struct vs_sign_key *key, const char *path,
                                      const char *sig, size_t sig_len);

/*
 * Upload certificates (<xml_signature> of an output file_info): a signature
 * over "<name>NAME</name><max_nbytes>N</max_nbytes>" with N printed with no
 * decimals, made with the upload key. The file_upload_handler verifies it
 * against what the client sends back.
 */
VS_MUST_CHECK int vs_sign_upload_cert(const struct vs_sign_key *key, const char *name,
                                      double max_nbytes, struct vs_buf *out);
VS_MUST_CHECK int vs_sign_verify_upload_cert(const struct vs_sign_key *key, const char *name,
                                             double max_nbytes, const char *sig, size_t sig_len);

/*
 * Writes two fresh key pairs of bits into dir (created if missing, mode 0700):
 * code_sign_private/public and upload_private/public in BOINC text format,
 * private files mode 0600. Refuses (VS_EEXISTS) if any of the four exists.
 * This is what `volsched keygen` and `volsched init` call.
 */
VS_MUST_CHECK int vs_sign_keygen_write(const char *dir, int bits);

#endif
