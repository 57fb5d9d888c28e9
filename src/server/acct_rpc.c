/*
 * create_account.php and lookup_account.php (acct.h): what the attach
 * wizard and boinccmd --create_account / --lookup_account call.
 * BOINC-COMPAT: html/user/create_account.php, lookup_account.php.
 */
#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>

#include "server/acct_int.h"
#include "volsched/log.h"
#include "volsched/md5.h"
#include "volsched/ops_auth.h"
#include "volsched/store_accounts.h"
#include "volsched/str.h"

/* The account's reply: its key. */
static int account_out(struct acct_req *r, const char *auth)
{
    vs_acct__xml_head(r);
    vs_page_printf(&r->p, "<account_out>\n    <authenticator>%s</authenticator>\n</account_out>\n",
                   auth);
    return 200;
}

/* Is code one of the invitation codes? Every code is compared, in constant
 * time per code, so that the answer's time says nothing of which. */
static bool invite_ok(const struct vs_project_config *cfg, const char *code)
{
    bool ok = false;
    size_t cl = strlen(code);
    for (int i = 0; i < cfg->invite_code.n; i++) {
        const char *c = cfg->invite_code.v[i];
        size_t l = strlen(c);
        ok |= l == cl && l > 0 && CRYPTO_memcmp(c, code, l) == 0;
    }
    return ok;
}

bool vs_acct__lookup_hash_ok(const struct vs_user *u, const char *passwd_hash)
{
    char h[33];
    if (!vs_acct__is_md5(passwd_hash))
        return false;
    memcpy(h, passwd_hash, 33);
    vs_acct__lower(h);
    bool ok = u->passwd_hash[0] && vs_ops_check_password(u->passwd_hash, h);
    char buf[VS_AUTH_MAX + VS_NAME_MAX], auth_hash[VS_MD5_HEX_LEN + 1];
    int n = snprintf(buf, sizeof(buf), "%s%s", u->authenticator, u->email_addr);
    if (!ok && n > 0 && (size_t)n < sizeof(buf) && vs_md5_hex(buf, (size_t)n, auth_hash) == 0)
        ok = CRYPTO_memcmp(auth_hash, h, 32) == 0;
    OPENSSL_cleanse(buf, sizeof(buf));
    return ok;
}

int vs_acct__create_account(struct acct_req *r)
{
    const struct vs_project_config *cfg = &r->a->cfg;
    int status = 200;
    if (!vs_acct__spend(r, &status))
        return status;
    if (cfg->disable_account_creation)
        return vs_acct__error(r, ACCT_ERR_CREATION_OFF,
                              "The project is not accepting new accounts.");
    if (cfg->disable_account_creation_rpc)
        return vs_acct__error(r, ACCT_ERR_CREATION_OFF,
                              "Please visit the project web site to create an account, then try "
                              "again.");
    /* Room past the limits, so that a long name gets its own message. */
    char email[VS_NAME_MAX], hash[64], name[VS_NAME_MAX], team[VS_NAME_MAX], invite[VS_NAME_MAX];
    if (vs_acct__arg(r, "invite_code", invite, sizeof(invite), &status) ||
        vs_acct__arg(r, "email_addr", email, sizeof(email), &status) ||
        vs_acct__arg(r, "passwd_hash", hash, sizeof(hash), &status) ||
        vs_acct__arg(r, "user_name", name, sizeof(name), &status) ||
        vs_acct__arg(r, "team_name", team, sizeof(team), &status))
        return status;
    if (cfg->invite_code.n > 0 && !invite_ok(cfg, invite)) {
        VS_LOG(r->a->log, VS_LOG_WARN, "account: creation from %s: wrong invitation code",
               r->req->peer ? r->req->peer : "?");
        /* BOINC-COMPAT: -1 with this text, as create_account.php answers
         * now (its old -209 is the client's "Couldn't start master page
         * download"). */
        return vs_acct__error(r, ACCT_ERR_GENERIC, "Invalid invitation code");
    }
    const char *why = vs_acct__bad_name(name, ACCT_NAME_MAX);
    if (why)
        return vs_acct__error(r, ACCT_ERR_BAD_USER_NAME, why);
    vs_acct__lower(email);
    if ((why = vs_acct__bad_email(email)) != NULL)
        return vs_acct__error(r, ACCT_ERR_BAD_EMAIL, why);
    if (!vs_acct__is_md5(hash))
        return vs_acct__error(r, ACCT_ERR_BAD_PASSWD, "password hash length not 32");
    vs_acct__lower(hash);

    struct vs_user u;
    memset(&u, 0, sizeof(u));
    int rc = vs_store_user_by_email(r->a->st, email, &u);
    if (rc == 0) {
        /* BOINC-COMPAT: the same e-mail and password again (a retried
         * wizard) gets the account it made; another password, -137. */
        bool same = vs_acct__lookup_hash_ok(&u, hash);
        status =
            same ? account_out(r, u.authenticator) : vs_acct__error(r, ACCT_ERR_NOT_UNIQUE, NULL);
        vs_user_cleanup(&u);
        return status;
    }
    if (rc != VS_ENOTFOUND)
        return vs_acct__error(r, ACCT_ERR_DB, NULL);
    memset(&u, 0, sizeof(u));
    if (team[0]) {
        struct vs_team t;
        /* BOINC-COMPAT: an unknown team is no error; the account is made
         * without one. */
        if (vs_store_team_by_name(r->a->st, team, &t) == 0)
            u.teamid = t.id;
    }
    if (vs_strlcpy(u.email_addr, email, sizeof(u.email_addr)) != 0 ||
        vs_strlcpy(u.name, name, sizeof(u.name)) != 0 ||
        vs_ops_hash_password(hash, u.passwd_hash, sizeof(u.passwd_hash)) != 0)
        return vs_acct__error(r, ACCT_ERR_DB, NULL);
    u.create_time = r->now;
    u.expavg_time = (double)r->now;
    rc = vs_store_user_add(r->a->st, &u);
    if (rc == VS_EEXISTS) {
        /* The e-mail (another request won) or the name is taken. */
        return vs_acct__error(r, ACCT_ERR_NOT_UNIQUE, NULL);
    }
    if (rc != 0) {
        VS_LOG(r->a->log, VS_LOG_ERROR, "account: cannot create an account: %s", vs_strerror(rc));
        return vs_acct__error(r, ACCT_ERR_DB, NULL);
    }
    VS_LOG(r->a->log, VS_LOG_INFO, "account: created user %lld%s from %s", (long long)u.id,
           u.teamid ? " (in a team)" : "", r->req->peer ? r->req->peer : "?");
    status = account_out(r, u.authenticator);
    vs_user_cleanup(&u);
    return status;
}

int vs_acct__lookup_account(struct acct_req *r)
{
    int status = 200;
    if (!vs_acct__spend(r, &status))
        return status;
    char email[ACCT_EMAIL_MAX + 1], hash[64];
    if (vs_acct__arg(r, "email_addr", email, sizeof(email), &status) ||
        vs_acct__arg(r, "passwd_hash", hash, sizeof(hash), &status))
        return status;
    vs_acct__lower(email);
    struct vs_user u;
    memset(&u, 0, sizeof(u));
    int rc = vs_store_user_by_email(r->a->st, email, &u);
    if (rc != 0)
        return vs_acct__error(r, rc == VS_ENOTFOUND ? ACCT_ERR_NOT_FOUND : ACCT_ERR_DB, NULL);
    if (!hash[0]) {
        /* BOINC-COMPAT: only asking whether the e-mail has an account. */
        vs_user_cleanup(&u);
        vs_acct__xml_head(r);
        vs_page_printf(&r->p, "<account_out>\n    <success/>\n</account_out>\n");
        return 200;
    }
    if (vs_acct__lookup_hash_ok(&u, hash)) {
        status = account_out(r, u.authenticator);
    } else {
        VS_LOG(r->a->log, VS_LOG_WARN, "account: wrong password for user %lld from %s",
               (long long)u.id, r->req->peer ? r->req->peer : "?");
        status = vs_acct__error(r, ACCT_ERR_BAD_PASSWD, NULL);
    }
    vs_user_cleanup(&u);
    return status;
}
