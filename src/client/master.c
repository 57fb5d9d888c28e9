/*
 * The master page (boinc-protocol.md 3): fetched when a project is new, has
 * no scheduler URL, or its RPCs failed five times in a row; its
 * <link rel="boinc_scheduler"> (or <scheduler>) URLs become the project's
 * scheduler URLs. A page with none is reported as "not a BOINC project" and
 * retried with backoff. The fetch is one of net.c's transfers (kind RPC: it
 * takes the scheduler RPC's slot), so a slow server never stalls the loop.
 */
#include <stdio.h>
#include <string.h>

#include "client/https_pin.h"
#include "volsched/alloc.h"
#include "volsched/client.h"
#include "volsched/proto.h"

#define MASTER_MAX_BYTES (1u << 20)

struct master_ctx {
    char *project_url; /* the project is found again by it (it may be detached meanwhile) */
    struct vs_buf page;
};

static void master_free(struct master_ctx *x)
{
    vs_buf_cleanup(&x->page);
    vs_free(x->project_url);
    vs_free(x);
}

static void master_done(struct vs_client *c, void *ud, const struct cl_http_done *d)
{
    struct master_ctx *x = ud;
    long pl = d->abandoned ? -1 : vs_client_find_project(c, x->project_url);
    if (pl < 0) { /* abandoned, or detached meanwhile */
        master_free(x);
        return;
    }
    size_t p = (size_t)pl;
    struct cl_project *pr = &c->projects[p];
    struct vs_buf *page = &x->page;
    int rc = d->rc;
    long code = d->code;
    size_t n = 0;
    const char **urls = NULL;
    struct vs_arena a;
    vs_arena_init(&a, 4096);
    if (rc == 0 && code == 200)
        rc = vs_proto_master_urls_parse(page->data, page->len, &a, &urls, &n);
    if (rc == 0 && code == 200 && n > 0) {
        size_t k = 0;
        for (size_t i = 0; i < pr->n_scheduler_urls; i++)
            vs_free(pr->scheduler_urls[i]);
        vs_client_https_note(c, p, urls, n);
        for (size_t i = 0; i < n && k < VS_CLIENT_MAX_URLS; i++) {
            char canon[1100];
            if (vs_client_canon_url(urls[i], canon, sizeof(canon)) != 0) {
                vs_client_msg(c, (long)p, 2, "Ignoring scheduler URL '%s': not http or https",
                              urls[i]);
                continue;
            }
            if (!vs_client_https_allowed(c, p, urls[i], "scheduler request"))
                continue;
            pr->scheduler_urls[k++] = vs_xstrdup(urls[i]);
        }
        pr->n_scheduler_urls = k;
        char esc[512], path[VS_CLIENT_PATH_MAX];
        vs_client_escape_url(pr->master_url, esc, sizeof(esc));
        if (vs_client_path(c, path, sizeof(path), "master_%s.xml", esc) == 0)
            (void)vs_client_write_atomic(path, page->data, page->len, false);
        if (k > 0) {
            pr->master_url_fetch_pending = false;
            pr->master_fetch_failures = 0;
            pr->min_rpc_time = 0;
            vs_client_msg(c, (long)p, 1, "Master file download succeeded");
        }
    }
    if (pr->master_url_fetch_pending) {
        pr->master_fetch_failures++;
        double dl = vs_client_rpc_backoff(c, pr->master_fetch_failures);
        pr->min_rpc_time = c->now + dl;
        if (rc == 0 && code == 200)
            vs_client_msg(c, (long)p, 2,
                          "%s is not a BOINC project: its page has no scheduler link "
                          "(check the URL); retrying in %.0f s",
                          pr->master_url, dl);
        else
            vs_client_msg(c, (long)p, 2,
                          "Couldn't fetch the master page %s: %s; retrying in %.0f s",
                          pr->master_url,
                          d->rc ? d->why
                          : rc  ? vs_strerror(rc)
                                : "HTTP error",
                          dl);
        if (rc == 0 && code != 200)
            VS_LOG(&c->log, VS_LOG_INFO, "HTTP status %ld", code);
    }
    vs_arena_cleanup(&a);
    master_free(x);
    c->dirty = true;
    c->resched = true;
}

int vs_client_master_fetch(struct vs_client *c, size_t p)
{
    struct cl_project *pr = &c->projects[p];
    vs_client_msg(c, (long)p, 1, "Fetching scheduler list");
    struct master_ctx *x = VS_NEW(struct master_ctx);
    x->project_url = vs_xstrdup(pr->master_url);
    vs_buf_init(&x->page, MASTER_MAX_BYTES);
    struct cl_http_req q = {
        .kind = CL_NET_RPC,
        .project_url = pr->master_url,
        .url = pr->master_url,
        .reply = &x->page,
        .timeout_s = VS_CLIENT_RPC_TIMEOUT_S,
    };
    int rc = vs_client_http_start(c, &q, master_done, x);
    if (rc) {
        master_free(x);
        pr->master_fetch_failures++;
        pr->min_rpc_time = c->now + vs_client_rpc_backoff(c, pr->master_fetch_failures);
    }
    return rc;
}
