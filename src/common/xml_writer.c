/*
 * XML writer into a vs_buf (see include/volsched/xml.h): BOINC's layout, one
 * element per line with a four-space indent, text escaped, doubles printed
 * like BOINC's %f unless that would lose the value. Errors are sticky.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "volsched/xml.h"

void vs_xml_writer_init(struct vs_xml_writer *w, struct vs_buf *out)
{
    memset(w, 0, sizeof(*w));
    w->out = out;
    w->indent = true;
}

static void put(struct vs_xml_writer *w, const char *s, size_t n)
{
    if (w->err)
        return;
    int rc = vs_buf_append(w->out, s, n);
    if (rc)
        w->err = rc;
}

static void puts_(struct vs_xml_writer *w, const char *s)
{
    put(w, s, strlen(s));
}

static void pad(struct vs_xml_writer *w)
{
    static const char spaces[] = "                                                                "
                                 "                                                                ";
    if (!w->indent)
        return;
    size_t n = (size_t)w->depth * 4;
    if (n > sizeof(spaces) - 1)
        n = sizeof(spaces) - 1;
    put(w, spaces, n);
}

int vs_xml_escape(struct vs_buf *b, const char *s, size_t n)
{
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        const char *rep;
        switch (s[i]) {
        case '&':
            rep = "&amp;";
            break;
        case '<':
            rep = "&lt;";
            break;
        case '>':
            rep = "&gt;";
            break;
        case '"':
            rep = "&quot;";
            break;
        case '\'':
            rep = "&apos;";
            break;
        default:
            continue;
        }
        int rc = vs_buf_append(b, s + run, i - run);
        if (!rc)
            rc = vs_buf_puts(b, rep);
        if (rc)
            return rc;
        run = i + 1;
    }
    return vs_buf_append(b, s + run, n - run);
}

static void esc(struct vs_xml_writer *w, const char *s, size_t n)
{
    if (w->err)
        return;
    int rc = vs_xml_escape(w->out, s, n);
    if (rc)
        w->err = rc;
}

static void open_tag(struct vs_xml_writer *w, const char *name, const char *attr, const char *value,
                     bool newline)
{
    pad(w);
    put(w, "<", 1);
    puts_(w, name);
    if (attr) {
        put(w, " ", 1);
        puts_(w, attr);
        put(w, "=\"", 2);
        esc(w, value ? value : "", value ? strlen(value) : 0);
        put(w, "\"", 1);
    }
    put(w, newline ? ">\n" : ">", newline ? 2 : 1);
}

static void push(struct vs_xml_writer *w, const char *name)
{
    if (w->depth >= VS_XML_MAX_DEPTH) {
        if (!w->err)
            w->err = VS_EINVAL;
        return;
    }
    w->stack[w->depth++] = name;
}

void vs_xml_open(struct vs_xml_writer *w, const char *name)
{
    open_tag(w, name, NULL, NULL, true);
    push(w, name);
}

void vs_xml_open_attr(struct vs_xml_writer *w, const char *name, const char *attr,
                      const char *value)
{
    open_tag(w, name, attr, value, true);
    push(w, name);
}

void vs_xml_close(struct vs_xml_writer *w)
{
    if (w->depth <= 0) {
        if (!w->err)
            w->err = VS_EINVAL;
        return;
    }
    const char *name = w->stack[--w->depth];
    pad(w);
    put(w, "</", 2);
    puts_(w, name);
    put(w, ">\n", 2);
}

static void leaf(struct vs_xml_writer *w, const char *name, const char *attr, const char *av,
                 const char *s, size_t n, bool escape)
{
    open_tag(w, name, attr, av, false);
    if (escape)
        esc(w, s, n);
    else
        put(w, s, n);
    put(w, "</", 2);
    puts_(w, name);
    put(w, ">\n", 2);
}

void vs_xml_strn(struct vs_xml_writer *w, const char *name, const char *s, size_t n)
{
    if (s)
        leaf(w, name, NULL, NULL, s, n, true);
}

void vs_xml_str(struct vs_xml_writer *w, const char *name, const char *s)
{
    if (s)
        leaf(w, name, NULL, NULL, s, strlen(s), true);
}

void vs_xml_str_attr(struct vs_xml_writer *w, const char *name, const char *attr,
                     const char *attr_value, const char *s)
{
    if (s)
        leaf(w, name, attr, attr_value, s, strlen(s), true);
}

void vs_xml_int(struct vs_xml_writer *w, const char *name, int64_t v)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof(tmp), "%lld", (long long)v);
    leaf(w, name, NULL, NULL, tmp, (size_t)n, false);
}

/*
 * The fast exact path of vs_xml_format_double, for integers below 1e15
 * (FLOP counts, byte sizes: "%f" prints them exactly, then ".000000") and
 * for |v| < 2^33 (most of the rest a scheduler writes: times, fractions).
 * There one ulp is below 1e-6, so a six-decimal number that reads back as v
 * lies within half an ulp (< 0.5e-6) of v and is therefore the six-decimal
 * rounding of v that "%f" prints; and m / 1e6 with an integer m < 2^53 is
 * correctly rounded by one IEEE division (both operands exact), which is
 * what strtod returns for that text. So: take the integer m nearest
 * |v| * 1e6 (the product's rounding may put it one off: try m - 1 and
 * m + 1 too) and accept it when m / 1e6 == |v|. Writes "%f"'s text and
 * returns its length, or returns 0 when no six-decimal reads back as v
 * (then "%f" would not either, and the caller falls back to "%.17g").
 */
static size_t format_fixed6(char *dst, size_t size, double v)
{
    double a = fabs(v);
    if (size < 32)
        return 0;
    uint64_t ip, fp;
    if (a < 1e15 && a == floor(a)) {
        /* an integer (FLOPS, bytes): "%f" prints it exactly, ".000000" */
        ip = (uint64_t)a;
        fp = 0;
    } else if (a < 8589934592.0) {
        double m0 = nearbyint(a * 1e6);
        bool found = false;
        uint64_t m = 0;
        for (int d = -1; d <= 1 && !found; d++) {
            double mm = m0 + d;
            if (mm >= 0 && mm / 1e6 == a) {
                m = (uint64_t)mm;
                found = true;
            }
        }
        if (!found)
            return 0;
        ip = m / 1000000;
        fp = m % 1000000;
    } else {
        return 0;
    }
    char tmp[32];
    size_t k = sizeof(tmp);
    for (int i = 0; i < 6; i++) {
        tmp[--k] = (char)('0' + fp % 10);
        fp /= 10;
    }
    tmp[--k] = '.';
    do {
        tmp[--k] = (char)('0' + ip % 10);
        ip /= 10;
    } while (ip);
    if (signbit(v))
        tmp[--k] = '-';
    size_t n = sizeof(tmp) - k;
    memcpy(dst, tmp + k, n);
    dst[n] = '\0';
    return n;
}

size_t vs_xml_format_double(char *dst, size_t size, double v)
{
    if (!isfinite(v))
        v = 0; /* XML readers (BOINC's too) cannot take inf/nan */
    size_t fast = format_fixed6(dst, size, v);
    if (fast)
        return fast;
    int n = -1;
    if (fabs(v) < 1e15) {
        n = snprintf(dst, size, "%f", v);
        if (n > 0 && (size_t)n < size && strtod(dst, NULL) == v)
            return (size_t)n;
    }
    n = snprintf(dst, size, "%.17g", v);
    return n > 0 ? (size_t)n : 0;
}

void vs_xml_double(struct vs_xml_writer *w, const char *name, double v)
{
    char tmp[400];
    size_t n = vs_xml_format_double(tmp, sizeof(tmp), v);
    leaf(w, name, NULL, NULL, tmp, n, false);
}

void vs_xml_flag(struct vs_xml_writer *w, const char *name)
{
    pad(w);
    put(w, "<", 1);
    puts_(w, name);
    put(w, "/>\n", 3);
}

void vs_xml_raw_write(struct vs_xml_writer *w, const char *s, size_t n)
{
    put(w, s, n);
}

void vs_xml_cdata(struct vs_xml_writer *w, const char *s, size_t n)
{
    puts_(w, "<![CDATA[");
    size_t run = 0;
    for (size_t i = 0; i + 2 < n; i++) {
        if (s[i] == ']' && s[i + 1] == ']' && s[i + 2] == '>') {
            /* end the section between "]]" and ">" and open a new one */
            put(w, s + run, i + 2 - run);
            puts_(w, "]]><![CDATA[");
            run = i + 2;
        }
    }
    put(w, s + run, n - run);
    puts_(w, "]]>");
}

int vs_xml_writer_error(const struct vs_xml_writer *w)
{
    if (w->err)
        return w->err;
    return w->depth == 0 ? 0 : VS_EINVAL;
}
