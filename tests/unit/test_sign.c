/*
 * Code signing: the known-answer vector from ../shared/protocol/signing (copied
 * to tests/golden/signing), BOINC key text round trips, corrupted data or keys
 * failing, upload certificates, and keygen.
 */
#include "vs_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/md5.h"
#include "volsched/sign.h"

#define VEC VS_SOURCE_DIR "/tests/golden/signing/"

static void test_md5(void **state)
{
    (void)state;
    char hex[33];
    assert_int_equal(vs_md5_hex("", 0, hex), 0);
    assert_string_equal(hex, "d41d8cd98f00b204e9800998ecf8427e");
    int64_t n = 0;
    assert_int_equal(vs_md5_file(VEC "data.txt", hex, &n), 0);
    size_t len;
    char *want = vs_test_slurp(VEC "data.txt.md5", &len);
    assert_memory_equal(hex, want, 32);
    assert_int_equal(n, 29);
    vs_free(want);
    assert_true(vs_md5_file(VEC "no-such-file", hex, NULL) < 0);
}

/* Signing data.txt with the PEM key must reproduce data.txt.sig byte for byte. */
static void test_known_answer(void **state)
{
    (void)state;
    struct vs_sign_key *priv = NULL, *pub = NULL;
    assert_int_equal(vs_sign_key_load(VEC "private_key_TEST_ONLY.pem", true, &priv), 0);
    assert_true(vs_sign_key_is_private(priv));
    struct vs_buf sig;
    vs_buf_init(&sig, 4096);
    assert_int_equal(vs_sign_file(priv, VEC "data.txt", &sig), 0);
    size_t len;
    char *want = vs_test_slurp(VEC "data.txt.sig", &len);
    assert_int_equal(sig.len, len);
    assert_memory_equal(sig.data, want, len);

    /* the public key text we write equals BOINC's public_key.txt */
    struct vs_buf pubtext;
    vs_buf_init(&pubtext, 4096);
    assert_int_equal(vs_sign_key_write_public(priv, &pubtext), 0);
    size_t plen;
    char *pubwant = vs_test_slurp(VEC "public_key.txt", &plen);
    assert_int_equal(pubtext.len, plen);
    assert_memory_equal(pubtext.data, pubwant, plen);

    /* and verifies with the BOINC-format public key */
    assert_int_equal(vs_sign_key_load(VEC "public_key.txt", false, &pub), 0);
    assert_false(vs_sign_key_is_private(pub));
    assert_int_equal(vs_sign_verify_file(pub, VEC "data.txt", want, len), 0);
    size_t dlen;
    char *data = vs_test_slurp(VEC "data.txt", &dlen);
    assert_int_equal(vs_sign_verify_data(pub, data, dlen, want, len), 0);
    /* a corrupted file fails */
    data[0] ^= 1;
    assert_int_equal(vs_sign_verify_data(pub, data, dlen, want, len), VS_EAUTH);
    /* a corrupted signature fails */
    want[10] = want[10] == '0' ? '1' : '0';
    assert_int_equal(vs_sign_verify_file(pub, VEC "data.txt", want, len), VS_EAUTH);
    /* a public key cannot sign */
    assert_int_equal(vs_sign_file(pub, VEC "data.txt", &sig), VS_EINVAL);
    /* not signature text at all */
    assert_int_equal(vs_sign_verify_file(pub, VEC "data.txt", "xyz", 3), VS_EPARSE);

    /* a corrupted public key (one modulus digit changed) fails to verify */
    vs_buf_reset(&sig);
    assert_int_equal(vs_sign_file(priv, VEC "data.txt", &sig), 0);
    pubwant[10] = pubwant[10] == 'a' ? 'b' : 'a';
    struct vs_sign_key *bad = NULL;
    assert_int_equal(vs_sign_key_parse(pubwant, plen, false, &bad), 0);
    assert_int_equal(vs_sign_verify_file(bad, VEC "data.txt", sig.data, sig.len), VS_EAUTH);
    vs_sign_key_destroy(bad);
    /* truncated key text is refused */
    assert_int_equal(vs_sign_key_parse(pubwant, plen / 2, false, &bad), VS_EPARSE);
    assert_int_equal(vs_sign_key_parse("1024\n.\n", 7, false, &bad), VS_EPARSE);

    vs_free(data);
    vs_free(pubwant);
    vs_free(want);
    vs_buf_cleanup(&pubtext);
    vs_buf_cleanup(&sig);
    vs_sign_key_destroy(priv);
    vs_sign_key_destroy(pub);
}

/* BOINC private key text round trip: write, parse, sign the same bytes. */
static void test_private_text_roundtrip(void **state)
{
    (void)state;
    struct vs_sign_key *priv = NULL, *again = NULL;
    assert_int_equal(vs_sign_key_load(VEC "private_key_TEST_ONLY.pem", true, &priv), 0);
    struct vs_buf text, s1, s2;
    vs_buf_init(&text, 8192);
    vs_buf_init(&s1, 4096);
    vs_buf_init(&s2, 4096);
    assert_int_equal(vs_sign_key_write_private(priv, &text), 0);
    /* 1024 line, 704 bytes = 22 lines of 64 hex digits, "." */
    assert_int_equal(text.len, 5 + 22 * 65 + 2);
    assert_int_equal(vs_sign_key_parse(text.data, text.len, true, &again), 0);
    assert_int_equal(vs_sign_data(priv, "abc", 3, &s1), 0);
    assert_int_equal(vs_sign_data(again, "abc", 3, &s2), 0);
    assert_string_equal(vs_buf_str(&s1), vs_buf_str(&s2));
    vs_sign_key_destroy(again);
    /* a private key whose prime was altered is rejected */
    text.data[5 + 12 * 65 + 3] = text.data[5 + 12 * 65 + 3] == '1' ? '2' : '1';
    assert_int_equal(vs_sign_key_parse(text.data, text.len, true, &again), VS_ECRYPTO);
    vs_buf_cleanup(&text);
    vs_buf_cleanup(&s1);
    vs_buf_cleanup(&s2);
    vs_sign_key_destroy(priv);
}

/* The upload certificate in the captured reply verifies with the test key. */
static void test_upload_cert(void **state)
{
    (void)state;
    static const char captured[] =
        "092309426531da4302bfe8d24ac62f7e53b86a5cb17172e00ca831b521210eb0\n"
        "3e77b7de59237f0f308e928daece6312ac38cae1c0988a96a7c927beb0b4e3c2\n"
        "ee82a9a54041d918e1fdc8c9258baddae3ddfccd02bde765558c76694797d4d7\n"
        "f521bb3887fb0b00cd3a943d8d5512e406dd4ea9810a5c98b6c94f00353fc255\n"
        ".\n";
    struct vs_sign_key *priv = NULL, *pub = NULL;
    assert_int_equal(vs_sign_key_load(VEC "private_key_TEST_ONLY.pem", true, &priv), 0);
    assert_int_equal(vs_sign_key_load(VEC "public_key.txt", false, &pub), 0);
    assert_int_equal(vs_sign_verify_upload_cert(pub, "wu_1795969703_1_0_out", 1e6, captured,
                                                sizeof(captured) - 1),
                     0);
    struct vs_buf c;
    vs_buf_init(&c, 4096);
    assert_int_equal(vs_sign_upload_cert(priv, "wu_1795969703_1_0_out", 1e6, &c), 0);
    assert_string_equal(vs_buf_str(&c), captured);
    /* another size or name does not verify */
    assert_int_equal(vs_sign_verify_upload_cert(pub, "wu_1795969703_1_0_out", 2e6, c.data, c.len),
                     VS_EAUTH);
    assert_int_equal(vs_sign_verify_upload_cert(pub, "wu_x", 1e6, c.data, c.len), VS_EAUTH);
    vs_buf_cleanup(&c);
    vs_sign_key_destroy(priv);
    vs_sign_key_destroy(pub);
}

static void test_keygen(void **state)
{
    (void)state;
    char dir[] = "/tmp/vs_keygen_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char keys[64];
    snprintf(keys, sizeof(keys), "%s/keys", dir);
    assert_int_equal(vs_sign_keygen_write(keys, 1024), 0);
    /* never overwrites */
    assert_int_equal(vs_sign_keygen_write(keys, 1024), VS_EEXISTS);
    char p[128];
    struct stat st;
    snprintf(p, sizeof(p), "%s/" VS_SIGN_CODE_PRIVATE, keys);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    struct vs_sign_key *priv = NULL, *pub = NULL;
    assert_int_equal(vs_sign_key_load(p, true, &priv), 0);
    snprintf(p, sizeof(p), "%s/" VS_SIGN_CODE_PUBLIC, keys);
    assert_int_equal(vs_sign_key_load(p, false, &pub), 0);
    struct vs_buf sig;
    vs_buf_init(&sig, 4096);
    assert_int_equal(vs_sign_file(priv, VEC "data.txt", &sig), 0);
    assert_int_equal(vs_sign_verify_file(pub, VEC "data.txt", sig.data, sig.len), 0);
    vs_sign_key_destroy(priv);
    vs_sign_key_destroy(pub);
    /* the upload pair is a different key: the code-sign signature fails there */
    snprintf(p, sizeof(p), "%s/" VS_SIGN_UPLOAD_PUBLIC, keys);
    assert_int_equal(vs_sign_key_load(p, false, &pub), 0);
    assert_int_equal(vs_sign_verify_file(pub, VEC "data.txt", sig.data, sig.len), VS_EAUTH);
    vs_sign_key_destroy(pub);
    vs_buf_cleanup(&sig);
    static const char *const names[] = {VS_SIGN_CODE_PRIVATE, VS_SIGN_CODE_PUBLIC,
                                        VS_SIGN_UPLOAD_PRIVATE, VS_SIGN_UPLOAD_PUBLIC};
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof(p), "%s/%s", keys, names[i]);
        unlink(p);
    }
    rmdir(keys);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_md5),
        cmocka_unit_test(test_known_answer),
        cmocka_unit_test(test_private_text_roundtrip),
        cmocka_unit_test(test_upload_cert),
        cmocka_unit_test(test_keygen),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
