/*
 * Trickle messages on the server: storage in the RPC's transaction, the
 * trickle-downs of a reply, and the operator's handler (trickle.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/trickle.h"
#include "volsched/buf.h"
#include "volsched/daemon_util.h"
#include "volsched/log.h"
#include "volsched/store_trickle.h"
#include "volsched/xml.h"

#define TRICKLE_MAX_REPLY (64 * 1024)

struct downs_ctx {
    struct vs_arena *arena;
    struct vs_proto_reply *r;
    struct vs_sched_trickle *tr;
};

static int add_down(void *ctx, const struct vs_trickle *t)
{
    struct downs_ctx *d = ctx;
    if (d->tr->n_downs >= VS_TRICKLE_MAX_DOWNS)
        return 0;
    d->r->msgs_to_host[d->r->n_msgs_to_host++] = vs_arena_strndup(d->arena, t->xml, strlen(t->xml));
    d->tr->down_ids[d->tr->n_downs++] = t->id;
    return 0;
}

int vs_trickle_downs_load(struct vs_store *st, int64_t hostid, struct vs_arena *arena,
                          struct vs_proto_reply *r, struct vs_sched_trickle *tr)
{
    if (hostid <= 0)
        return 0;
    r->msgs_to_host = vs_arena_alloc(arena, VS_TRICKLE_MAX_DOWNS * sizeof(char *));
    r->n_msgs_to_host = 0;
    struct downs_ctx d = {arena, r, tr};
    return vs_store_trickle_downs_of_host(st, hostid, VS_TRICKLE_MAX_DOWNS, add_down, &d);
}

static int esc(struct vs_buf *b, const char *tag, const char *s)
{
    int rc = vs_buf_printf(b, "<%s>", tag);
    if (rc == 0 && s)
        rc = vs_xml_escape(b, s, strlen(s));
    if (rc == 0)
        rc = vs_buf_printf(b, "</%s>\n", tag);
    return rc;
}

int vs_trickle_commit(struct vs_store *s, int64_t hostid, int64_t now, void *ctx)
{
    struct vs_sched_trickle *tr = ctx;
    int rc = 0;
    struct vs_buf b;
    vs_buf_init(&b, 1u << 20);
    for (size_t i = 0; rc == 0 && i < tr->n_ups; i++) {
        const struct vs_proto_msg_from_host *m = &tr->ups[i];
        vs_buf_reset(&b);
        rc = vs_buf_puts(&b, "<msg_from_host>\n");
        if (rc == 0)
            rc = esc(&b, "result_name", m->result_name);
        if (rc == 0)
            rc = esc(&b, "variety", m->variety);
        if (rc == 0)
            rc = esc(&b, "msg_text", m->msg_text);
        if (rc == 0)
            rc = vs_buf_puts(&b, "</msg_from_host>\n");
        if (rc == 0)
            rc = vs_store_trickle_up_add(s, now, hostid, m->result_name, m->variety, b.data);
    }
    for (size_t i = 0; rc == 0 && i < tr->n_downs; i++)
        rc = vs_store_trickle_down_sent(s, tr->down_ids[i]);
    vs_buf_cleanup(&b);
    return rc;
}

struct ups {
    struct vs_trickle t[50];
    char *xml[50];
    size_t n;
};

static int collect(void *ctx, const struct vs_trickle *t)
{
    struct ups *u = ctx;
    if (u->n >= 50)
        return 0;
    u->t[u->n] = *t;
    u->xml[u->n] = vs_xstrdup(t->xml ? t->xml : "");
    u->t[u->n].xml = u->xml[u->n];
    u->n++;
    return 0;
}

static int write_file(const char *path, const char *s)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -errno;
    size_t n = strlen(s);
    int rc = fwrite(s, 1, n, f) == n ? 0 : VS_EIO;
    if (fclose(f) != 0 && rc == 0)
        rc = VS_EIO;
    return rc;
}

/* The trickle-down the command wrote, wrapped as a <msg_to_host>; NULL if none. */
static char *read_reply(const char *path, const struct vs_trickle *t, struct vs_log *log)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *body = vs_xmalloc(TRICKLE_MAX_REPLY + 1);
    size_t n = fread(body, 1, TRICKLE_MAX_REPLY + 1, f);
    fclose(f);
    if (n == 0 || n > TRICKLE_MAX_REPLY) {
        if (n > TRICKLE_MAX_REPLY)
            VS_LOG(log, VS_LOG_WARN, "trickle handler: reply for host %lld over %d bytes, dropped",
                   (long long)t->hostid, TRICKLE_MAX_REPLY);
        vs_free(body);
        return NULL;
    }
    body[n] = '\0';
    struct vs_buf b;
    vs_buf_init(&b, 2 * TRICKLE_MAX_REPLY);
    int rc = vs_buf_puts(&b, "<msg_to_host>\n");
    if (rc == 0)
        rc = esc(&b, "result_name", t->result_name);
    if (rc == 0)
        rc = esc(&b, "variety", t->variety);
    if (rc == 0)
        rc = vs_buf_puts(&b, "<msg_text>");
    if (rc == 0)
        rc = vs_xml_escape(&b, body, n);
    if (rc == 0)
        rc = vs_buf_puts(&b, "</msg_text>\n</msg_to_host>");
    vs_free(body);
    size_t len;
    char *out = rc == 0 ? vs_buf_take(&b, &len) : NULL;
    vs_buf_cleanup(&b);
    return out;
}

int vs_trickle_handler_pass(struct vs_store *s, const struct vs_project_config *cfg,
                            const char *cmd, int64_t now, struct vs_log *log, int *out_n)
{
    if (out_n)
        *out_n = 0;
    if (!cmd || !*cmd)
        return 0;
    struct ups *u = vs_xcalloc(1, sizeof(*u));
    int rc = vs_store_trickle_ups_unhandled(s, 50, collect, u);
    char dir[VS_PATH_MAX + 32];
    snprintf(dir, sizeof(dir), "%s/trickle_tmp", cfg->dir);
    if (rc == 0 && u->n > 0 && mkdir(dir, 0700) != 0 && errno != EEXIST)
        rc = -errno;
    for (size_t i = 0; rc == 0 && i < u->n; i++) {
        const struct vs_trickle *t = &u->t[i];
        char msg[VS_PATH_MAX + 96], rep[VS_PATH_MAX + 96], host[32];
        snprintf(msg, sizeof(msg), "%s/msg_%lld.xml", dir, (long long)t->id);
        snprintf(rep, sizeof(rep), "%s/reply_%lld", dir, (long long)t->id);
        snprintf(host, sizeof(host), "%lld", (long long)t->hostid);
        unlink(rep);
        int status = -1;
        int wrc = write_file(msg, t->xml);
        const char *args[] = {host, t->result_name, t->variety, msg, rep};
        /* The result name and variety come from the volunteer's client: one
         * beginning with '-' would reach the handler as an option,
         * so the message is not handed over. */
        bool dash = t->result_name[0] == '-' || t->variety[0] == '-';
        if (dash && wrc == 0)
            VS_LOG(log, VS_LOG_ERROR,
                   "trickle handler: message %lld of host %lld names result '%s', variety '%s': "
                   "a name beginning with '-' is not passed to '%s'",
                   (long long)t->id, (long long)t->hostid, t->result_name, t->variety, cmd);
        int run = wrc    ? wrc
                  : dash ? VS_EINVAL
                         : vs_daemon_run(cmd, args, 5, cfg->daemon_command_timeout, log, &status);
        char *down = run == 0 && status == 0 ? read_reply(rep, t, log) : NULL;
        if (run != 0 || status != 0)
            VS_LOG(log, VS_LOG_ERROR,
                   "trickle handler: '%s' failed for message %lld of host %lld (%s, status %d); "
                   "not retried",
                   cmd, (long long)t->id, (long long)t->hostid, vs_strerror(run), status);
        rc = vs_store_begin(s);
        if (rc == 0 && down)
            rc = vs_store_trickle_down_add(s, now, t->hostid, t->variety, down);
        if (rc == 0)
            rc = vs_store_trickle_up_handled(s, t->id);
        if (rc == 0)
            rc = vs_store_commit(s);
        else
            vs_store_rollback(s);
        vs_free(down);
        unlink(msg);
        unlink(rep);
        if (rc == 0 && out_n)
            (*out_n)++;
    }
    for (size_t i = 0; i < u->n; i++)
        vs_free(u->xml[i]);
    vs_free(u);
    return rc;
}
