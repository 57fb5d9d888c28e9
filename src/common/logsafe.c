/* Client text made safe for the log; see volsched/logsafe.h. */
#include "volsched/logsafe.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "volsched/md5.h"

static bool unsafe(unsigned char ch)
{
    return ch < 0x20 || ch == 0x7f || ch == '\\';
}

size_t vs_logsafe_escape(const char *s, char *out, size_t outsize)
{
    static const char hex[] = "0123456789abcdef";
    if (outsize == 0)
        return 0;
    if (!s)
        s = "(null)";
    size_t o = 0;
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (!unsafe(ch)) {
            if (o + 1 >= outsize)
                break;
            out[o++] = (char)ch;
            continue;
        }
        if (o + 4 >= outsize)
            break;
        out[o++] = '\\';
        out[o++] = 'x';
        out[o++] = hex[ch >> 4];
        out[o++] = hex[ch & 15];
    }
    out[o] = '\0';
    return o;
}

void vs_logsafe_escape_inplace(char *s, size_t bufsize)
{
    /* Most lines need nothing: only copy when there is something to do. */
    bool any = false;
    for (const char *p = s; *p && !any; p++)
        any = unsafe((unsigned char)*p);
    if (!any || bufsize == 0)
        return;
    char tmp[4096];
    size_t n = bufsize < sizeof(tmp) ? bufsize : sizeof(tmp);
    vs_logsafe_escape(s, tmp, n);
    memcpy(s, tmp, strlen(tmp) + 1);
}

void vs_logsafe_secret(const char *secret, char *out, size_t outsize)
{
    char md5[VS_MD5_HEX_LEN + 1];
    if (!secret)
        secret = "";
    if (vs_md5_hex(secret, strlen(secret), md5) != 0)
        snprintf(md5, sizeof(md5), "????????");
    snprintf(out, outsize, "md5:%.8s", md5);
}
