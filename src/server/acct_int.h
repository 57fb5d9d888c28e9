/*
 * Inside the account handler (acct.c: life, routing, replies, checks;
 * acct_rpc.c: create and lookup; acct_am.c: the account managers' RPCs).
 * Not for use outside src/server/acct*.c.
 */
#ifndef VOLSCHED_SERVER_ACCT_INT_H
#define VOLSCHED_SERVER_ACCT_INT_H

#include <pthread.h>
#include <stdbool.h>

#include "server/acct.h"
#include "server/auth_limit.h"
#include "server/ops_page.h"
#include "store/store.h"

/* BOINC-COMPAT: lib/error_numbers.h, the numbers BOINC's xml_error sends. */
#define ACCT_ERR_GENERIC       (-1)
#define ACCT_ERR_XML_PARSE     (-112)
#define ACCT_ERR_NOT_FOUND     (-136)
#define ACCT_ERR_NOT_UNIQUE    (-137)
#define ACCT_ERR_DB            (-138)
#define ACCT_ERR_BAD_USER_NAME (-188)
#define ACCT_ERR_BAD_EMAIL     (-205)
#define ACCT_ERR_BAD_PASSWD    (-206)
#define ACCT_ERR_CREATION_OFF  (-208)
#define ACCT_ERR_BAD_INVITE    (-209)

/* Longest user name, team name, country, venue the RPCs take (bytes). */
#define ACCT_NAME_MAX  64
#define ACCT_EMAIL_MAX 100

struct vs_acct {
    struct vs_project_config cfg;
    struct vs_log *log;
    vs_http_get_fn next;
    void *next_ctx;
    struct vs_sched *sched;
    char base[VS_URL_MAX];  /* the master URL's path, "/demo/" */
    char *config_xml;       /* get_project_config.php's account elements */
    struct vs_auth_limit *limit;
    pthread_mutex_t mu; /* the store handle: one request at a time */
    struct vs_store *st;
};

/* One request being answered. */
struct acct_req {
    struct vs_acct *a;
    const struct vs_http_get *req;
    struct vs_http_page *out;
    struct vs_page p; /* on out->body */
    int64_t now;
    char peer_key[64]; /* the throttle's key */
};

/* The reply's start (the XML declaration) and a BOINC error reply; both
 * return 200 (BOINC's xml_error answers 200). msg NULL: BOINC's text for
 * num. */
void vs_acct__xml_head(struct acct_req *r);
int vs_acct__error(struct acct_req *r, int num, const char *msg);

/* The query argument key into out (decoded); "" when absent. Returns 0, or
 * an error reply already written (its status) for a bad or too long one. */
int vs_acct__arg(struct acct_req *r, const char *key, char *out, size_t n, int *out_status);

/* Takes one token from the requester's bucket, or answers 429 (returns
 * false: *out_status set). */
bool vs_acct__spend(struct acct_req *r, int *out_status);
/* Takes a token only for a failure (a wrong key). */
void vs_acct__failed(struct acct_req *r);

/* The user whose account key is key (full authenticator only: never a
 * weak one); an error reply (-136) and a spent token otherwise. */
int vs_acct__user_by_key(struct acct_req *r, const char *key, struct vs_user *out,
                         int *out_status);

/* NULL when s is acceptable as what (a static sentence otherwise). */
const char *vs_acct__bad_email(const char *s);
const char *vs_acct__bad_name(const char *s, size_t max);
/* True for exactly 32 lower- or upper-case hex digits. */
bool vs_acct__is_md5(const char *s);
/* Lower-cases ASCII letters of s in place. */
void vs_acct__lower(char *s);

/* acct_rpc.c */
/* True when passwd_hash (the client's md5 hex, any case) opens account u:
 * the stored PBKDF2 of it, or (BOINC-COMPAT lookup_account.php) md5(key +
 * e-mail), which an account without a password logs in with. */
bool vs_acct__lookup_hash_ok(const struct vs_user *u, const char *passwd_hash);
int vs_acct__create_account(struct acct_req *r);
int vs_acct__lookup_account(struct acct_req *r);

/* acct_am.c */
int vs_acct__am_get_info(struct acct_req *r);
int vs_acct__am_set_info(struct acct_req *r);
int vs_acct__am_set_host_info(struct acct_req *r);
int vs_acct__show_user(struct acct_req *r);
int vs_acct__team_lookup(struct acct_req *r);
int vs_acct__create_team(struct acct_req *r);

#endif
