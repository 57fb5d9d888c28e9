/* Sticky-error page writing (ops_page.h). */
#include "server/ops_page.h"

#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "volsched/xml.h"

void vs_page_printf(struct vs_page *p, const char *fmt, ...)
{
    if (p->rc)
        return;
    va_list ap;
    va_start(ap, fmt);
    p->rc = vs_buf_vprintf(p->b, fmt, ap);
    va_end(ap);
}

void vs_page_esc(struct vs_page *p, const char *s)
{
    if (p->rc || !s)
        return;
    p->rc = vs_xml_escape(p->b, s, strlen(s));
}

void vs_page_time(struct vs_page *p, int64_t t)
{
    if (!t) {
        vs_page_printf(p, "never");
        return;
    }
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    char buf[32];
    strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
    vs_page_printf(p, "%s", buf);
}
