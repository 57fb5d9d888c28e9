/*
 * The message log: every event the volunteer should see goes to the log
 * (stdout in the foreground, else DIR/stdoutdae.txt, BOINC's name) as
 * "DD-Mon-YYYY HH:MM:SS [project] text" and into a ring of the last
 * VS_CLIENT_MSG_KEEP messages that GUI RPC get_messages serves.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/logsafe.h"

void vs_client_msg(struct vs_client *c, long project, int pri, const char *fmt, ...)
{
    char body[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof(body), fmt, ap);
    va_end(ap);
    struct cl_msg *m = &c->msgs[c->msgs_head];
    vs_free(m->body);
    m->body = vs_xstrdup(body);
    m->seqno = ++c->msg_seqno;
    m->pri = pri;
    m->time = vs_client_now();
    m->project[0] = '\0';
    if (project >= 0 && (size_t)project < c->n_projects) {
        const struct cl_project *p = &c->projects[project];
        snprintf(m->project, sizeof(m->project), "%s",
                 p->project_name && *p->project_name ? p->project_name : p->master_url);
    }
    c->msgs_head = (c->msgs_head + 1) % VS_CLIENT_MSG_KEEP;
    if (c->n_msgs < VS_CLIENT_MSG_KEEP)
        c->n_msgs++;

    FILE *out = c->logf ? c->logf : stderr;
    time_t t = (time_t)m->time;
    struct tm tm;
    char ts[40] = "";
    if (localtime_r(&t, &tm))
        strftime(ts, sizeof(ts), "%d-%b-%Y %H:%M:%S", &tm);
    /* A project's text (its name, a server message, the host's venue there)
     * is one line in the log: a newline or an escape sequence in it cannot
     * forge another project's line or drive a terminal. The GUI RPC keeps
     * the message as sent (XML-escaped there). */
    char safe_body[4 * sizeof(body)], safe_proj[4 * sizeof(m->project)];
    vs_logsafe_escape(body, safe_body, sizeof(safe_body));
    vs_logsafe_escape(m->project[0] ? m->project : "---", safe_proj, sizeof(safe_proj));
    fprintf(out, "%s [%s] %s%s\n", ts, safe_proj, pri == 3 ? "[error] " : "", safe_body);
    fflush(out);
}
