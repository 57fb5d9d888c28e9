/*
 * A project that had https is never sent a request over http again
 * (a middleman could strip it): once its master URL is https, or a scheduler URL its master
 * page named was https, an http scheduler or upload URL is refused with a
 * message, so a middleman who rewrites a plain master page (or a reply) to
 * name an http URL gets no account key and no output. The pin is the
 * project's `https_pinned`, kept in client_state.xml (<vs_https_pinned/>);
 * a state file from before it was kept pins a project whose scheduler URLs
 * include an https one.
 *
 * Also libcurl's TLS setup for every transfer: the data directory's
 * ca-bundle.crt, when there is one, as the CA file (BOINC-COMPAT: the 7.20
 * client does the same), and no redirect from an https URL to http.
 */
#ifndef VOLSCHED_CLIENT_HTTPS_PIN_H
#define VOLSCHED_CLIENT_HTTPS_PIN_H

#include <stdbool.h>
#include <stddef.h>

struct vs_client;

/* Whether project p is pinned to https (pins it, state dirty, when its
 * master URL or one of its scheduler URLs is https). */
bool vs_client_https_pinned(struct vs_client *c, size_t p);

/* Notes the scheduler URLs a master page of project p named: an https one
 * pins p. Call before vs_client_https_allowed on them. */
void vs_client_https_note(struct vs_client *c, size_t p, const char *const *urls, size_t n);

/* Whether a request of project p (what: "scheduler request", "upload") may
 * go to url: false, with a message to the volunteer, for an http URL of a
 * project pinned to https. */
bool vs_client_https_allowed(struct vs_client *c, size_t p, const char *url, const char *what);

/* Drops project p's http scheduler URLs when it is pinned (each with a
 * message); the master page is then fetched again if none is left. */
void vs_client_https_filter(struct vs_client *c, size_t p);

/* The first of urls[0..n), from urls[start % n] on, that a request of p
 * (what) may go to; NULL (with a message) when none may. */
const char *vs_client_https_pick(struct vs_client *c, size_t p, char *const *urls, size_t n,
                                 size_t start, const char *what);

/* libcurl options for a transfer of c to url (curl is a CURL *). */
void vs_client_https_curl(const struct vs_client *c, void *curl, const char *url);

#endif
