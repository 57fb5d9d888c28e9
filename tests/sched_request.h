/*
 * Scheduler requests for unit tests: a captured BOINC 7.20.5 request
 * (tests/data/boinc) with some of its text replaced. Include after vs_test.h.
 */
#ifndef VOLSCHED_TESTS_SCHED_REQUEST_H
#define VOLSCHED_TESTS_SCHED_REQUEST_H

#include <string.h>

#include "volsched/alloc.h"
#include "volsched/buf.h"

#define SR_SAMPLE_01 VS_SOURCE_DIR "/tests/data/boinc/sched_request_01.xml"

/* text with its first `from` replaced by `to` (a new string; text is freed). */
static inline char *sr_replace(char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    assert_non_null(at);
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    assert_int_equal(vs_buf_append(&b, text, (size_t)(at - text)), 0);
    assert_int_equal(vs_buf_puts(&b, to), 0);
    assert_int_equal(vs_buf_puts(&b, at + strlen(from)), 0);
    vs_free(text);
    return vs_buf_take(&b, NULL);
}

/* Sample 01 as the user with authenticator auth, asking for secs seconds of
 * work on ncpus CPUs. */
static inline char *sr_request(const char *auth, const char *secs, const char *ncpus)
{
    char *t = vs_test_slurp(SR_SAMPLE_01, NULL);
    char buf[256];
    snprintf(buf, sizeof(buf), "<authenticator>%.64s</authenticator>", auth);
    t = sr_replace(t, "<authenticator>0123456789abcdef0123456789abcdef</authenticator>", buf);
    snprintf(buf, sizeof(buf), "<cpu_req_secs>%.32s</cpu_req_secs>", secs);
    t = sr_replace(t, "<cpu_req_secs>1.000000</cpu_req_secs>", buf);
    snprintf(buf, sizeof(buf), "<p_ncpus>%.16s</p_ncpus>", ncpus);
    return sr_replace(t, "<p_ncpus>2</p_ncpus>", buf);
}

#endif
