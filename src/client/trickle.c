/*
 * Trickle messages (seed 002 lists a trickle-up as a reason to contact a
 * project). BOINC-COMPAT: the app's boinc_send_trickle_up() writes
 * slots/N/trickle_up.xml ("<variety>V</variety>\n<text>T</text>") and raises
 * <have_new_trickle_up/>; the client moves it to
 * projects/DIR/trickle_up_RESULT_TIME.xml, sends each such file as a
 * <msg_from_host> in the next scheduler request (renamed .sent), and
 * deletes the .sent files once the reply arrives. A <msg_to_host> in a reply
 * becomes slots/N/trickle_down_TIME_K for the result it names, announced by
 * <have_trickle_down/>.
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/proto.h"
#include "volsched/str.h"
#include "volsched/xml.h"

#define TRICKLE_MAX_FILES 100
#define TRICKLE_MAX_BYTES (64 * 1024)

void vs_client_trickle_harvest(struct vs_client *c, const struct cl_result *r)
{
    if (r->slot < 0)
        return;
    char from[VS_CLIENT_PATH_MAX], dir[VS_CLIENT_PATH_MAX], to[VS_CLIENT_PATH_MAX + 600];
    if (vs_client_path(c, from, sizeof(from), "slots/%d/trickle_up.xml", r->slot) ||
        access(from, F_OK) != 0 || vs_client_project_dir(c, r->project, dir, sizeof(dir)))
        return;
    snprintf(to, sizeof(to), "%s/trickle_up_%s_%.0f.xml", dir, r->name, vs_client_now() * 1000);
    if (rename(from, to) == 0) {
        c->projects[r->project].trickle_up_pending = true;
        c->resched = c->dirty = true;
        vs_client_msg(c, (long)r->project, 1, "Trickle-up message from task %s queued", r->name);
    }
}

struct vs_proto_msg_from_host *vs_client_trickle_collect(struct vs_client *c, size_t p,
                                                         struct vs_arena *a, size_t *out_n)
{
    *out_n = 0;
    for (size_t i = 0; i < c->n_results; i++)
        if (c->results[i].project == p)
            vs_client_trickle_harvest(c, &c->results[i]);
    char dir[VS_CLIENT_PATH_MAX];
    if (vs_client_project_dir(c, p, dir, sizeof(dir)))
        return NULL;
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    struct vs_proto_msg_from_host *m =
        vs_arena_alloc(a, TRICKLE_MAX_FILES * sizeof(struct vs_proto_msg_from_host));
    struct dirent *e;
    struct vs_buf b;
    vs_buf_init(&b, TRICKLE_MAX_BYTES);
    while ((e = readdir(d)) != NULL && *out_n < TRICKLE_MAX_FILES) {
        const char *n = e->d_name;
        if (!vs_str_has_prefix(n, "trickle_up_") || !vs_str_has_suffix(n, ".xml"))
            continue;
        char path[VS_CLIENT_PATH_MAX + 300], sent[VS_CLIENT_PATH_MAX + 310];
        snprintf(path, sizeof(path), "%s/%s", dir, n);
        if (vs_client_read_file(path, TRICKLE_MAX_BYTES, &b) != 0) {
            vs_client_msg(c, (long)p, 2, "Trickle-up file %s unreadable or too large; dropped", n);
            unlink(path);
            continue;
        }
        /* the name is trickle_up_RESULT_TIME.xml */
        const char *rs = n + strlen("trickle_up_");
        const char *us = strrchr(n, '_');
        struct vs_proto_msg_from_host *x = &m[*out_n];
        x->result_name = vs_arena_strndup(a, rs, us > rs ? (size_t)(us - rs) : strlen(rs));
        struct vs_arena t;
        vs_arena_init(&t, 4096);
        struct vs_xml_doc doc;
        struct vs_xml_error xe;
        struct vs_buf wrapped;
        vs_buf_init(&wrapped, TRICKLE_MAX_BYTES + 64);
        const char *variety = "", *text = vs_buf_str(&b);
        if (vs_buf_printf(&wrapped, "<t>%s</t>", vs_buf_str(&b)) == 0 &&
            vs_xml_parse(wrapped.data, wrapped.len, NULL, 0, &t, &doc, &xe) == 0) {
            const struct vs_xml_node *vn = vs_xml_child(doc.root, "variety");
            variety = vs_xml_text_trim(vn, &t);
            const struct vs_xml_node *tx = vs_xml_child(doc.root, "text");
            if (tx) {
                text = tx->text;
            } else if (vn) {
                /* BOINC-COMPAT: the API writes <variety>V</variety> then the app's text */
                size_t rl, il;
                const char *raw = vs_xml_raw(&doc, vn, &rl);
                const char *inner = vs_xml_inner_raw(&doc, doc.root, &il);
                size_t before = (size_t)(raw - inner), after = il - before - rl;
                char *rest = vs_arena_alloc(&t, il + 1);
                memcpy(rest, inner, before);
                memcpy(rest + before, raw + rl, after);
                rest[before + after] = '\0';
                while (*rest == '\n')
                    rest++;
                text = rest;
            }
        }
        x->variety = vs_arena_strndup(a, variety, strlen(variety));
        x->msg_text = vs_arena_strndup(a, text, strlen(text));
        vs_arena_cleanup(&t);
        vs_buf_cleanup(&wrapped);
        snprintf(sent, sizeof(sent), "%s.sent", path);
        if (rename(path, sent) == 0)
            (*out_n)++;
    }
    vs_buf_cleanup(&b);
    closedir(d);
    c->projects[p].trickle_up_pending = false;
    return m;
}

static void delete_sent(struct vs_client *c, size_t p)
{
    char dir[VS_CLIENT_PATH_MAX];
    if (vs_client_project_dir(c, p, dir, sizeof(dir)))
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (vs_str_has_prefix(e->d_name, "trickle_up_") && vs_str_has_suffix(e->d_name, ".sent")) {
            char path[VS_CLIENT_PATH_MAX + 300];
            snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
            unlink(path);
        }
    closedir(d);
}

void vs_client_trickle_reply(struct vs_client *c, size_t p, const char *reply, size_t len,
                             size_t n_sent)
{
    if (n_sent)
        delete_sent(c, p);
    if (!memmem(reply, len, "<msg_to_host", 12))
        return;
    struct vs_arena a;
    vs_arena_init(&a, 8192);
    struct vs_xml_doc doc;
    struct vs_xml_error xe;
    const char *start = memmem(reply, len, "<scheduler_reply", 16);
    if (start && vs_xml_parse(start, len - (size_t)(start - reply), NULL, VS_XML_REPAIR_BYTES, &a,
                              &doc, &xe) == 0) {
        struct cl_project *pr = &c->projects[p];
        for (const struct vs_xml_node *m = vs_xml_child(doc.root, "msg_to_host"); m;
             m = vs_xml_next_same(m)) {
            if (pr->n_trickle_downs >= 100) {
                vs_client_msg(c, (long)p, 2, "Too many trickle-down messages queued; dropped");
                break;
            }
            size_t n;
            const char *raw = vs_xml_raw(&doc, m, &n);
            if (n > TRICKLE_MAX_BYTES)
                continue;
            pr->trickle_downs =
                vs_xreallocarray(pr->trickle_downs, pr->n_trickle_downs + 1, sizeof(char *));
            pr->trickle_downs[pr->n_trickle_downs++] = vs_xstrndup(raw, n);
            vs_client_msg(c, (long)p, 1, "Trickle-down message received");
        }
    }
    vs_arena_cleanup(&a);
}

void vs_client_trickle_deliver(struct vs_client *c, struct cl_result *r)
{
    struct cl_project *pr = &c->projects[r->project];
    char want[600];
    snprintf(want, sizeof(want), "<result_name>%s</result_name>", r->name);
    for (size_t i = 0; i < pr->n_trickle_downs;) {
        if (!strstr(pr->trickle_downs[i], want)) {
            i++;
            continue;
        }
        char path[VS_CLIENT_PATH_MAX];
        if (vs_client_path(c, path, sizeof(path), "slots/%d/trickle_down_%.0f_%zu", r->slot,
                           vs_client_now(), i) ||
            vs_client_write_atomic(path, pr->trickle_downs[i], strlen(pr->trickle_downs[i]),
                                   false) != 0) {
            i++;
            continue;
        }
        vs_client_trickle_notify(r);
        vs_free(pr->trickle_downs[i]);
        pr->trickle_downs[i] = pr->trickle_downs[--pr->n_trickle_downs];
        c->dirty = true;
    }
}
