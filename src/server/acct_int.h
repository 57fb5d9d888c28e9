/*
 * Inside the account handler (acct.c: life, routing, replies, checks;
 * acct_rpc.c: create and lookup; acct_am.c: the account managers' RPCs).
 * Not for use outside src/server/acct*.c.
 */
#ifndef VOLSCHED_SERVER_ACCT_INT_H
#define VOLSCHED_SERVER_ACCT_INT_H

#include <pthread.h>
#include <stdbool.h>

#include "server/auth_limit.h"
#include "server/ops_page.h"
#include "server/ops_session.h"
#include "volsched/acct.h"
#include "volsched/store.h"

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

/* Longest user name, team name, country, venue the RPCs take (bytes). */
#define ACCT_NAME_MAX  64
#define ACCT_EMAIL_MAX 100

struct vs_acct {
    struct vs_project_config cfg;
    struct vs_log *log;
    vs_http_get_fn next;
    void *next_ctx;
    struct vs_sched *sched;
    char base[VS_URL_MAX]; /* the master URL's path, "/demo/" */
    char *config_xml;      /* get_project_config.php's account elements */
    struct vs_auth_limit *limit;
    pthread_mutex_t mu; /* the store handle: one request at a time */
    struct vs_store *st;
    struct vs_ops_session_key skey; /* the site's session cookies (site.c) */
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
int vs_acct__user_by_key(struct acct_req *r, const char *key, struct vs_user *out, int *out_status);

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

/* The volunteers' web site (site*.c): a logged-in visitor's account, or
 * none, and the session's CSRF token. */
struct site {
    struct acct_req *r;
    bool in;             /* logged in: user is theirs */
    struct vs_user user; /* free with vs_user_cleanup (site_end) */
    char cookie[VS_OPS_COOKIE_MAX];
    char csrf[65];
};
#define SITE_COOKIE       "vs_site"
#define SITE_SESSION_SECS (14 * 24 * 3600)
/* site.c: the visitor's session (a new one made if none), and a form's
 * CSRF check: 0, or the status of the answer already written. */
int vs_site__begin(struct acct_req *r, struct site *s);
void vs_site__end(struct site *s);
/* Makes the visitor's session that of user uid (0: nobody), recording a
 * logged-in one in the store. */
int vs_site__set_session(struct site *s, int64_t uid);
/* Ends the visitor's current session in the store. */
int vs_site__end_session(struct site *s);
/* The page's head (title escaped) with the navigation, and its tail. */
void vs_site__head(struct site *s, const char *title);
void vs_site__tail(struct site *s);
/* The hidden CSRF input of every form. */
void vs_site__csrf_input(struct site *s);
/* A redirect (303) to BASE + rel. */
int vs_site__redirect(struct site *s, const char *rel);
/* A form's field (decoded) into out; "" when absent or bad. */
void vs_site__field(struct site *s, const char *key, char *out, size_t n);
/* A message paragraph (escaped) of class cls ("err", "ok"). */
void vs_site__msg(struct site *s, const char *cls, const char *text);
/* vs_site__begin for a page of a logged-in visitor: else 303 to the
 * login page. */
int vs_site__begin_in(struct acct_req *r, struct site *s);
/* The client's password hash of a typed password: md5(passwd + lower-case
 * email), as the BOINC client computes it (out: 33 bytes). */
int vs_site__passwd_hash(const char *passwd, const char *email, char *out);

int vs_site__style(struct acct_req *r);
int vs_site__signup(struct acct_req *r);
int vs_site__login(struct acct_req *r);
int vs_site__logout(struct acct_req *r);
/* site_home.c */
int vs_site__home(struct acct_req *r);
int vs_site__host_venue(struct acct_req *r);
int vs_site__delete(struct acct_req *r);
/* site_prefs.c */
int vs_site__prefs(struct acct_req *r);
/* site_teams.c */
int vs_site__teams(struct acct_req *r);
int vs_site__team(struct acct_req *r);
int vs_site__team_create(struct acct_req *r);
int vs_site__team_join(struct acct_req *r);
int vs_site__team_leave(struct acct_req *r);
/* site_stats.c */
int vs_site__top_users(struct acct_req *r);
int vs_site__top_teams(struct acct_req *r);
int vs_site__top_hosts(struct acct_req *r);
int vs_site__host_detail(struct acct_req *r);

/* acct_am.c */
int vs_acct__am_get_info(struct acct_req *r);
int vs_acct__am_set_info(struct acct_req *r);
int vs_acct__am_set_host_info(struct acct_req *r);
int vs_acct__show_user(struct acct_req *r);
int vs_acct__team_lookup(struct acct_req *r);
int vs_acct__create_team(struct acct_req *r);

#endif
