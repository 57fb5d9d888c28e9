/* Argument strings of queries and forms (form.h). */
#include "server/form.h"

#include <string.h>

#include "volsched/str.h"

/* Decodes s[0..len) into out (n bytes). */
static int decode(const char *s, size_t len, char *out, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '+') {
            c = ' ';
        } else if (c == '%') {
            if (len - i < 3)
                return VS_EPARSE;
            int hi = vs_hexval(s[i + 1]), lo = vs_hexval(s[i + 2]);
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
                return VS_EPARSE;
            c = (char)(hi * 16 + lo);
            i += 2;
        }
        if (k + 1 >= n)
            return VS_ELIMIT;
        out[k++] = c;
    }
    out[k] = '\0';
    return 0;
}

/* The value of key in args: *out_v and *out_len; false when absent. */
static bool find(const char *args, const char *key, const char **out_v, size_t *out_len)
{
    size_t kl = strlen(key);
    for (const char *p = args; p && *p;) {
        size_t len = strcspn(p, "&");
        size_t nl = strcspn(p, "=&");
        if (nl == kl && strncmp(p, key, kl) == 0) {
            *out_v = nl < len ? p + nl + 1 : p + nl;
            *out_len = nl < len ? len - nl - 1 : 0;
            return true;
        }
        p += len;
        if (*p == '&')
            p++;
    }
    return false;
}

int vs_form_get(const char *args, const char *key, char *out, size_t n)
{
    if (n == 0)
        return VS_ELIMIT;
    out[0] = '\0';
    const char *v;
    size_t len;
    if (!find(args, key, &v, &len))
        return VS_ENOTFOUND;
    int rc = decode(v, len, out, n);
    if (rc != 0)
        out[0] = '\0';
    return rc;
}

bool vs_form_has(const char *args, const char *key)
{
    const char *v;
    size_t len;
    return find(args, key, &v, &len);
}
