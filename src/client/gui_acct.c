/*
 * The Add Project wizard's ops, forwarded to the project's web RPCs as
 * BOINC 7.20's client does (client/acct_setup.cpp), through the client's
 * non-blocking HTTP (net.c): the op starts the fetch and answers
 * <success/> at once; its _poll form answers error_num -204
 * (ERR_IN_PROGRESS) until the reply is in, then the project's reply.
 *
 *   get_project_config <url>      GET URL/get_project_config.php
 *   lookup_account <url> <email_addr> <passwd_hash>
 *                                 GET URL/lookup_account.php?email_addr=&passwd_hash=
 *   create_account <url> <email_addr> <passwd_hash> <user_name> [<team_name>]
 *                                 GET URL/create_account.php?email_addr=&passwd_hash=
 *                                 &user_name=[&team_name=]
 *
 * One fetch of each kind at a time per client (BOINC keeps one per GUI
 * connection; a Manager has one connection): a second request while one is
 * in flight gets error_num -199 (ERR_RETRY) until the first ends, as
 * BOINC's busy GUI_HTTP. A reply is capped at 256 KB.
 */
#include <stdio.h>
#include <string.h>

#include "client/gui_rpc_int.h"
#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/xml.h"

/* BOINC-COMPAT: lib/error_numbers.h */
#define ERR_CONNECT        (-107)
#define ERR_TIMEOUT        (-182)
#define ERR_HTTP_TRANSIENT (-184)
#define ERR_INVALID_URL    (-189)
#define ERR_RETRY          (-199)
#define ERR_IN_PROGRESS    (-204)
#define ERR_HTTP_PERMANENT (-224)

#define ACCT_REPLY_MAX (256 * 1024)
#define ACCT_TIMEOUT_S 60L

enum { OP_CONFIG, OP_LOOKUP, OP_CREATE, OP_N };

struct acct_op {
    struct vs_client *c;
    int error_num; /* 0: reply holds the answer; ERR_IN_PROGRESS while in flight */
    bool busy;
    struct vs_buf reply;
};

struct cl_gui_acct {
    struct acct_op ops[OP_N];
};

static const char *const op_names[OP_N] = {"get_project_config", "lookup_account",
                                           "create_account"};

static struct cl_gui_acct *acct(struct vs_client *c)
{
    if (!c->acct) {
        c->acct = vs_xcalloc(1, sizeof(*c->acct));
        for (size_t i = 0; i < OP_N; i++) {
            c->acct->ops[i].c = c;
            vs_buf_init(&c->acct->ops[i].reply, ACCT_REPLY_MAX);
        }
    }
    return c->acct;
}

void vs_client_gui_acct_cleanup(struct vs_client *c)
{
    if (!c->acct)
        return;
    /* the transfers hold pointers to the ops: end them first */
    vs_client_net_abandon(c, CL_NET_GUI, NULL);
    for (size_t i = 0; i < OP_N; i++)
        vs_buf_cleanup(&c->acct->ops[i].reply);
    vs_free(c->acct);
    c->acct = NULL;
}

static void done(struct vs_client *c, void *ud, const struct cl_http_done *d)
{
    struct acct_op *o = ud;
    o->busy = false;
    size_t k = (size_t)(o - c->acct->ops);
    if (d->abandoned) {
        o->error_num = ERR_CONNECT;
        return;
    }
    if (d->rc == VS_ETIMEOUT)
        o->error_num = ERR_TIMEOUT;
    else if (d->rc != 0 || d->code == 0)
        o->error_num = ERR_CONNECT;
    else if (d->code >= 500)
        o->error_num = ERR_HTTP_TRANSIENT;
    else if (d->code >= 400)
        o->error_num = ERR_HTTP_PERMANENT;
    else
        o->error_num = 0;
    if (o->error_num)
        vs_client_msg(c, -1, 1, "%s: %s (HTTP %ld); error %d", op_names[k],
                      d->why[0] ? d->why : "failed", d->code, o->error_num);
}

/* Appends key=value, value %-escaped as BOINC's escape_url (alphanumerics
 * and "-_.~" as they are). */
static int add_param(struct vs_buf *u, const char *key, const char *v, bool first)
{
    int rc = vs_buf_printf(u, "%s%s=", first ? "?" : "&", key);
    for (const unsigned char *s = (const unsigned char *)v; rc == 0 && *s; s++) {
        if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
            strchr("-_.~", *s))
            rc = vs_buf_printf(u, "%c", *s);
        else
            rc = vs_buf_printf(u, "%%%02X", *s);
    }
    return rc;
}

static void start(struct vs_client *c, size_t k, const struct vs_xml_node *op, struct vs_arena *a,
                  struct vs_xml_writer *w)
{
    static const char *const pages[OP_N] = {"get_project_config.php", "lookup_account.php",
                                            "create_account.php"};
    const char *url = vs_xml_text_trim(vs_xml_child(op, "url"), a);
    const char *email = vs_xml_text_trim(vs_xml_child(op, "email_addr"), a);
    const char *hash = vs_xml_text_trim(vs_xml_child(op, "passwd_hash"), a);
    const char *user = vs_xml_text_trim(vs_xml_child(op, "user_name"), a);
    const char *team = vs_xml_text_trim(vs_xml_child(op, "team_name"), a);
    if (k == OP_CONFIG && !*url) {
        vs_xml_raw_write(w, "<error>no url</error>\n", 22);
        return;
    }
    if (k == OP_LOOKUP && (!*url || !*email || !*hash)) {
        vs_xml_raw_write(w, "<error>missing URL, email address, or password</error>\n", 55);
        return;
    }
    struct acct_op *o = &acct(c)->ops[k];
    char canon[1100];
    if (vs_client_canon_url(url, canon, sizeof(canon)) != 0) {
        /* BOINC-COMPAT: the op succeeds; the poll says why */
        vs_client_msg(c, -1, 2, "%s: invalid project URL %.200s", op_names[k], url);
        o->error_num = ERR_INVALID_URL;
        vs_xml_raw_write(w, "<success/>\n", 11);
        return;
    }
    if (o->busy) {
        o->error_num = ERR_RETRY;
        vs_xml_raw_write(w, "<success/>\n", 11);
        return;
    }
    struct vs_buf u;
    vs_buf_init(&u, 8192);
    int rc = vs_buf_printf(&u, "%s%s", canon, pages[k]);
    if (rc == 0 && k != OP_CONFIG) {
        rc = add_param(&u, "email_addr", email, true);
        if (rc == 0)
            rc = add_param(&u, "passwd_hash", hash, false);
        if (rc == 0 && k == OP_CREATE)
            rc = add_param(&u, "user_name", user, false);
        if (rc == 0 && k == OP_CREATE && *team)
            rc = add_param(&u, "team_name", team, false);
    }
    vs_buf_reset(&o->reply);
    if (rc == 0) {
        struct cl_http_req q = {.kind = CL_NET_GUI,
                                .project_url = canon,
                                .url = u.data,
                                .reply = &o->reply,
                                .timeout_s = ACCT_TIMEOUT_S};
        rc = vs_client_http_start(c, &q, done, o);
    }
    if (rc != 0) {
        o->error_num = ERR_CONNECT;
    } else {
        o->busy = true;
        o->error_num = ERR_IN_PROGRESS;
        if (k == OP_CONFIG)
            vs_client_msg(c, -1, 1, "Fetching configuration file from %s", u.data);
        else
            vs_client_msg(c, -1, 1, "%s at %s for %s",
                          k == OP_LOOKUP ? "Looking up account" : "Creating account", canon, email);
    }
    vs_buf_cleanup(&u);
    vs_xml_raw_write(w, "<success/>\n", 11);
}

/* BOINC-COMPAT: handle_*_poll: the error, or the project's reply from its
 * element on (an XML declaration before it is dropped). */
static void poll_reply(struct vs_client *c, size_t k, struct vs_xml_writer *w)
{
    static const char *const outer[OP_N] = {"project_config", "account_out", "account_out"};
    struct acct_op *o = &acct(c)->ops[k];
    char head[200];
    if (o->error_num) {
        int n = snprintf(head, sizeof(head), "<%s>\n    <error_num>%d</error_num>\n</%s>\n",
                         outer[k], o->error_num, outer[k]);
        vs_xml_raw_write(w, head, (size_t)n);
        return;
    }
    const char *p = o->reply.data ? o->reply.data : "";
    char tag[40];
    snprintf(tag, sizeof(tag), "<%s", outer[k]);
    const char *q = strstr(p, tag);
    if (!q && k != OP_CONFIG)
        q = strstr(p, "<error");
    if (!q) { /* BOINC-COMPAT: also before any request */
        int n = snprintf(head, sizeof(head), "<%s/>\n", outer[k]);
        vs_xml_raw_write(w, head, (size_t)n);
        return;
    }
    /* byte 3 ends a GUI RPC reply: a project's must not */
    for (const char *e; (e = strchr(q, 3)) != NULL; q = e + 1)
        vs_xml_raw_write(w, q, (size_t)(e - q));
    size_t n = strlen(q);
    vs_xml_raw_write(w, q, n);
    if (n == 0 || q[n - 1] != '\n')
        vs_xml_raw_write(w, "\n", 1);
}

bool vs_client_gui_acct_op(struct vs_client *c, const struct vs_xml_node *op, struct vs_arena *a,
                           struct vs_xml_writer *w)
{
    for (size_t k = 0; k < OP_N; k++) {
        size_t n = strlen(op_names[k]);
        if (strncmp(op->name, op_names[k], n) != 0)
            continue;
        if (op->name[n] == '\0') {
            start(c, k, op, a, w);
            return true;
        }
        if (strcmp(op->name + n, "_poll") == 0) {
            poll_reply(c, k, w);
            return true;
        }
    }
    return false;
}
