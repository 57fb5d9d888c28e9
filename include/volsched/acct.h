/*
 * Volunteers' accounts over HTTP (issue 36; docs/volunteers.md): BOINC's
 * account web RPCs under the master URL's path P, as the real client, the
 * BOINC Manager's attach wizard, boinccmd and account managers call them
 * (GET, arguments in the query; replies XML as BOINC's html/user/ pages):
 *
 *   Pcreate_account.php   email_addr, passwd_hash, user_name [, team_name,
 *                         invite_code]: <account_out><authenticator>
 *   Plookup_account.php   email_addr [, passwd_hash]: the authenticator, or
 *                         <success/> (the e-mail exists) without a hash
 *   Pam_get_info.php      account_key: name, country, prefs, team, venue...
 *   Pam_set_info.php      account_key, [name, country, global_prefs,
 *                         project_prefs, teamid, venue, email_addr,
 *                         password_hash]
 *   Pam_set_host_info.php account_key, hostid, venue
 *   Pshow_user.php        format=xml and auth (with hosts) or userid
 *   Pteam_lookup.php      format=xml and team_id, team_ids or team_name
 *   Pcreate_team.php      account_key, name [, description]
 *
 * Errors are BOINC's <error><error_num>N</error_num><error_msg>...: -136
 * not found, -137 not unique, -188 bad user name, -205 bad e-mail, -206
 * bad password, -208 creation disabled (-1 with its text for the rest:
 * a wrong invitation code, a throttled address).
 *
 * The client's passwd_hash (md5(password + lower-case e-mail)) is never
 * stored as it is: the store keeps a salted PBKDF2 of it (ops_auth.h's
 * hash), compared in constant time. create_account and lookup_account
 * cost every address a token of a bucket (config.xml account_rpc_burst,
 * account_rpc_per_hour); the other RPCs only when their key is wrong. An
 * address with an empty bucket is answered 429 at once, unchecked.
 *
 * Requests it does not own (404) go to the next handler (the operator's
 * pages), so that one vs_http_get_fn serves both.
 */
#ifndef VOLSCHED_SERVER_ACCT_H
#define VOLSCHED_SERVER_ACCT_H

#include <stdint.h>

#include "volsched/config.h"
#include "volsched/http.h"

struct vs_acct;
struct vs_sched;

/*
 * Creates the account handler for project cfg (copied): opens its own
 * store handle (one request at a time) and reads DIR/terms_of_use.txt if
 * there is one. next/next_ctx (may be NULL) answer what is not an account
 * path. Returns 0 and *out, or a store error (logged).
 */
VS_MUST_CHECK int vs_acct_create(const struct vs_project_config *cfg, struct vs_log *log,
                                 vs_http_get_fn next, void *next_ctx, struct vs_acct **out);
void vs_acct_destroy(struct vs_acct *a);

/* The scheduler whose caches learn of the changes made here (a host's
 * venue, a deleted account); may be NULL. Set before serving. */
void vs_acct_set_sched(struct vs_acct *a, struct vs_sched *sched);

/* What get_project_config.php says about accounts here (XML elements, for
 * vs_http_config.project_config_xml): owned by a. */
const char *vs_acct_project_config_xml(const struct vs_acct *a);

/* The vs_http_get_fn; ctx is the struct vs_acct. */
int vs_acct_http(void *ctx, const struct vs_http_get *req, struct vs_http_page *out);

/* The same at an explicit time (tests). */
int vs_acct_handle(struct vs_acct *a, const struct vs_http_get *req, int64_t now,
                   struct vs_http_page *out);

#endif
