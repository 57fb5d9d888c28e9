/* A project that had https stays on https (https_pin.h). */
#include "client/https_pin.h"

#include <curl/curl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "volsched/alloc.h"
#include "volsched/client.h"

static bool is_https(const char *url)
{
    return url && strncasecmp(url, "https://", 8) == 0;
}

bool vs_client_https_pinned(struct vs_client *c, size_t p)
{
    struct cl_project *pr = &c->projects[p];
    if (pr->https_pinned)
        return true;
    bool https = is_https(pr->master_url);
    for (size_t i = 0; i < pr->n_scheduler_urls && !https; i++)
        https = is_https(pr->scheduler_urls[i]);
    if (https) {
        pr->https_pinned = true;
        c->dirty = true;
    }
    return https;
}

void vs_client_https_note(struct vs_client *c, size_t p, const char *const *urls, size_t n)
{
    struct cl_project *pr = &c->projects[p];
    for (size_t i = 0; i < n && !pr->https_pinned; i++) {
        if (!is_https(urls[i]))
            continue;
        pr->https_pinned = true;
        c->dirty = true;
        vs_client_msg(c, (long)p, 1,
                      "This project's scheduler is https (%s): from now on no request of it "
                      "goes over http",
                      urls[i]);
    }
}

bool vs_client_https_allowed(struct vs_client *c, size_t p, const char *url, const char *what)
{
    if (is_https(url) || !vs_client_https_pinned(c, p))
        return true;
    vs_client_msg(c, (long)p, 2,
                  "Refusing to send a %s to %s: this project uses https (its %s https), so "
                  "an http URL may be a middleman's; the project's master page or the network "
                  "may have been tampered with",
                  what, url,
                  is_https(c->projects[p].master_url) ? "master URL is" : "scheduler URL was");
    return false;
}

void vs_client_https_filter(struct vs_client *c, size_t p)
{
    struct cl_project *pr = &c->projects[p];
    size_t k = 0;
    for (size_t i = 0; i < pr->n_scheduler_urls; i++) {
        if (vs_client_https_allowed(c, p, pr->scheduler_urls[i], "scheduler request"))
            pr->scheduler_urls[k++] = pr->scheduler_urls[i];
        else
            vs_free(pr->scheduler_urls[i]);
    }
    if (k != pr->n_scheduler_urls) {
        pr->n_scheduler_urls = k;
        if (k == 0)
            pr->master_url_fetch_pending = true;
        c->dirty = true;
    }
}

const char *vs_client_https_pick(struct vs_client *c, size_t p, char *const *urls, size_t n,
                                 size_t start, const char *what)
{
    for (size_t i = 0; i < n; i++) {
        const char *u = urls[(start + i) % n];
        if (vs_client_https_allowed(c, p, u, what))
            return u;
    }
    return NULL;
}

void vs_client_https_curl(const struct vs_client *c, void *curl, const char *url)
{
    CURL *h = curl;
    char ca[VS_CLIENT_PATH_MAX];
    if (vs_client_path(c, ca, sizeof(ca), "ca-bundle.crt") == 0 && access(ca, R_OK) == 0)
        curl_easy_setopt(h, CURLOPT_CAINFO, ca);
    /* A server (or anyone who can make it redirect) may not move an https
     * request to http. */
    if (is_https(url))
        curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "https");
}
