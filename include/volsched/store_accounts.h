/*
 * Store operations for volunteers' accounts (issue 36): what the account
 * web RPCs (create_account.php, lookup_account.php, am_*.php), the
 * volunteers' web site and the account managers read and change. Kept
 * apart from store.h: none of it is on the scheduler's path, so the
 * statements are compiled per call.
 */
#ifndef VOLSCHED_STORE_STORE_ACCOUNTS_H
#define VOLSCHED_STORE_STORE_ACCOUNTS_H

#include <stdint.h>

#include "volsched/error.h"
#include "volsched/store.h"

/* The user whose e-mail address is email (compared as stored: callers
 * lower-case it, as create_account does); VS_ENOTFOUND if none, or for an
 * empty email. Free *out with vs_user_cleanup. */
VS_MUST_CHECK int vs_store_user_by_email(struct vs_store *s, const char *email,
                                         struct vs_user *out);

/* Writes every field of u (but teamid: vs_store_user_set_team) to the row
 * u->id. VS_EEXISTS when the new name or e-mail is another user's,
 * VS_ENOTFOUND when the row is gone. */
VS_MUST_CHECK int vs_store_user_update(struct vs_store *s, const struct vs_user *u);

/* Moves user userid into team teamid (0: out of any team), keeping both
 * teams' nusers right, in one transaction. VS_ENOTFOUND (nothing written)
 * when the user or the team does not exist. */
VS_MUST_CHECK int vs_store_user_set_team(struct vs_store *s, int64_t userid, int64_t teamid);

/*
 * Deletes the personal data of user userid, keeping the row so that the
 * results its hosts returned stay the science's: the name becomes
 * "deleted_ID", the e-mail, password, country, preferences and venue are
 * emptied, a new random authenticator replaces the old (which stops
 * working), it leaves its team; its hosts lose their names, addresses and
 * cpid. One transaction. VS_ENOTFOUND if no such user.
 */
VS_MUST_CHECK int vs_store_user_delete(struct vs_store *s, int64_t userid);

/* Calls fn for each host of user userid (newest RPC first), up to limit. */
VS_MUST_CHECK int vs_store_user_hosts(struct vs_store *s, int64_t userid, int limit,
                                      int (*fn)(void *ctx, const struct vs_host *h), void *ctx);

/* Calls fn for the limit most recent results sent to user userid's hosts
 * (newest first). */
VS_MUST_CHECK int vs_store_user_results(struct vs_store *s, int64_t userid, int limit,
                                        vs_store_result_fn fn, void *ctx);

/* Calls fn for up to limit members of team teamid (by id). */
VS_MUST_CHECK int vs_store_team_members(struct vs_store *s, int64_t teamid, int limit,
                                        int (*fn)(void *ctx, const struct vs_user *u), void *ctx);

/* Calls fn for up to limit teams whose name contains part (case-insensitive
 * for ASCII; "" = every team), by name. '%' and '_' in part match
 * themselves. */
VS_MUST_CHECK int vs_store_teams_find(struct vs_store *s, const char *part, int limit,
                                      int (*fn)(void *ctx, const struct vs_team *t), void *ctx);

/* Sets the venue of host hostid, if it is user userid's ("" = none).
 * VS_ENOTFOUND when it is not that user's host. */
VS_MUST_CHECK int vs_store_host_set_venue(struct vs_store *s, int64_t hostid, int64_t userid,
                                          const char *venue);

/* Sets user userid's global preferences text (prefs: well-formed XML, as
 * a scheduler request carried it). VS_ENOTFOUND if no such user. */
VS_MUST_CHECK int vs_store_user_set_global_prefs(struct vs_store *s, int64_t userid,
                                                 const char *prefs);

/* Sets user userid's cross-project id (the CPID a volunteer's client
 * brought from its other projects; BOINC's user.cross_project_id).
 * VS_ENOTFOUND if no such user. */
VS_MUST_CHECK int vs_store_user_set_cpid(struct vs_store *s, int64_t userid, const char *cpid);

/*
 * The web site's sessions (schema v8, table site_session): a row per
 * logged-in session, keyed by id (the site's HMAC of its cookie, 64 hex
 * digits, never the cookie). Add records one (expired rows of everyone are
 * dropped on the way); check answers 0 when the row is there for userid and
 * expires after now, VS_ENOTFOUND otherwise; end drops one; end_user drops
 * every session of userid but keep (NULL: all), and *out_n (may be NULL)
 * says how many went. vs_store_user_delete ends the user's sessions too.
 */
VS_MUST_CHECK int vs_store_session_add(struct vs_store *s, const char *id, int64_t userid,
                                       int64_t now, int64_t expire_time);
VS_MUST_CHECK int vs_store_session_check(struct vs_store *s, const char *id, int64_t userid,
                                         int64_t now);
VS_MUST_CHECK int vs_store_session_end(struct vs_store *s, const char *id);
VS_MUST_CHECK int vs_store_session_end_user(struct vs_store *s, int64_t userid, const char *keep,
                                            int64_t *out_n);

#endif
