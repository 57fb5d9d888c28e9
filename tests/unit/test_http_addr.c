/*
 * Client addresses (volsched/http_addr.h): prefixes of trusted proxies and
 * the client a trusted proxy names in X-Forwarded-For; spoofed entries
 * left of the first untrusted address are never believed.
 */
#include "vs_test.h"

#include <string.h>

#include "volsched/http_addr.h"

static struct vs_ip ip(const char *s)
{
    struct vs_ip out;
    assert_int_equal(vs_ip_parse(s, &out), 0);
    return out;
}

static void assert_ip(const struct vs_ip *a, const char *want)
{
    char t[64];
    vs_ip_text(a, t, sizeof(t));
    assert_string_equal(t, want);
}

static void test_prefixes(void **state)
{
    (void)state;
    struct vs_ip_prefix p;
    assert_int_equal(vs_ip_prefix_parse("10.0.0.0/8", &p), 0);
    struct vs_ip a = ip("10.200.3.4"), b = ip("11.0.0.1");
    assert_true(vs_ip_in_prefix(&a, &p));
    assert_false(vs_ip_in_prefix(&b, &p));
    assert_int_equal(vs_ip_prefix_parse("192.0.2.7", &p), 0);
    struct vs_ip c = ip("192.0.2.7"), d = ip("192.0.2.8");
    assert_true(vs_ip_in_prefix(&c, &p));
    assert_false(vs_ip_in_prefix(&d, &p));
    assert_int_equal(vs_ip_prefix_parse("fd00::/8", &p), 0);
    struct vs_ip e = ip("fd12::1"), f = ip("fe80::1");
    assert_true(vs_ip_in_prefix(&e, &p));
    assert_false(vs_ip_in_prefix(&f, &p));
    /* An IPv4 prefix does not match IPv6 addresses outside ::ffff:0:0/96. */
    assert_int_equal(vs_ip_prefix_parse("0.0.0.0/0", &p), 0);
    assert_true(vs_ip_in_prefix(&a, &p));
    assert_false(vs_ip_in_prefix(&e, &p));
    assert_int_equal(vs_ip_prefix_parse("172.16.0.0/12", &p), 0);
    struct vs_ip g = ip("172.31.255.255"), h = ip("172.32.0.0");
    assert_true(vs_ip_in_prefix(&g, &p));
    assert_false(vs_ip_in_prefix(&h, &p));
    const char *bad[] = {"",     "10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/-1",
                         "host", "1.2.3.4/8x",  "1.2.3"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_not_equal(vs_ip_prefix_parse(bad[i], &p), 0);
    assert_ip(&e, "fd12::1");
    assert_ip(&a, "10.200.3.4");
}

static void test_forwarded(void **state)
{
    (void)state;
    struct vs_ip_prefix tr[2];
    assert_int_equal(vs_ip_prefix_parse("127.0.0.2", &tr[0]), 0);
    assert_int_equal(vs_ip_prefix_parse("10.0.0.0/8", &tr[1]), 0);
    struct vs_ip proxy = ip("127.0.0.2"), stranger = ip("198.51.100.1"), out;
    /* From the proxy: the client it names. */
    assert_true(vs_ip_forwarded_client(&proxy, "203.0.113.9", tr, 2, &out));
    assert_ip(&out, "203.0.113.9");
    /* A chain of trusted proxies: the first untrusted one from the right. */
    assert_true(vs_ip_forwarded_client(&proxy, "203.0.113.9, 10.1.1.1 ,10.2.2.2", tr, 2, &out));
    assert_ip(&out, "203.0.113.9");
    /* What the client wrote itself (left of it) is not believed. */
    assert_true(vs_ip_forwarded_client(&proxy, "1.1.1.1, 203.0.113.9", tr, 2, &out));
    assert_ip(&out, "203.0.113.9");
    /* From anyone else the header is ignored. */
    assert_false(vs_ip_forwarded_client(&stranger, "203.0.113.9", tr, 2, &out));
    assert_ip(&out, "198.51.100.1");
    /* No trusted proxies at all: ignored. */
    assert_false(vs_ip_forwarded_client(&proxy, "203.0.113.9", tr, 0, &out));
    assert_ip(&out, "127.0.0.2");
    /* Garbage, empty entries, only proxies: the peer stays. */
    const char *junk[] = {
        "", "   ", "not-an-ip", "203.0.113.9, ", "10.1.1.1", "203.0.113.9:80", "[2001:db8::1]"};
    for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
        assert_false(vs_ip_forwarded_client(&proxy, junk[i], tr, 2, &out));
        assert_ip(&out, "127.0.0.2");
    }
    assert_true(vs_ip_forwarded_client(&proxy, "2001:db8::1", tr, 2, &out));
    assert_ip(&out, "2001:db8::1");
    /* A long header is read only 64 entries from its right. */
    char big[64 * 12 + 32] = "203.0.113.9";
    size_t len = strlen(big);
    for (int i = 0; i < 64; i++) {
        memcpy(big + len, ",10.0.0.1", 9);
        len += 9;
    }
    big[len] = '\0';
    assert_false(vs_ip_forwarded_client(&proxy, big, tr, 2, &out));
    assert_ip(&out, "127.0.0.2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefixes),
        cmocka_unit_test(test_forwarded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
