/*
 * A page being written: a buffer and a sticky error, so that page renderers
 * (server_status.php, /ops/, /metrics, `volsched status`) write line after
 * line and check once at the end.
 */
#ifndef VOLSCHED_SERVER_OPS_PAGE_H
#define VOLSCHED_SERVER_OPS_PAGE_H

#include <stdint.h>

#include "volsched/buf.h"

struct vs_page {
    struct vs_buf *b;
    int rc; /* first error, 0 if none */
};

void vs_page_printf(struct vs_page *p, const char *fmt, ...) VS_PRINTF(2, 3);
/* Appends s with & < > " ' escaped (HTML and XML text and attributes). */
void vs_page_esc(struct vs_page *p, const char *s);
/* Appends a UTC time "2024-01-02 03:04:05" ("never" for 0). */
void vs_page_time(struct vs_page *p, int64_t t);

#endif
