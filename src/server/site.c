/*
 * The volunteers' web site (acct.h, docs/volunteers.md): sessions, CSRF
 * tokens, the page frame and its one stylesheet, sign up, log in, log out.
 * Plain HTML that works without JavaScript. Every visitor has a session
 * cookie (HttpOnly, SameSite=Lax, Secure over HTTPS): "UID.EXPIRY.NONCE.MAC"
 * once logged in, without UID before (ops_session.h), and a logged-in one
 * only while its row in the store's sessions lives (logging out, a new
 * password and deleting the account end it); every form carries
 * the session's CSRF token (the HMAC of the cookie's value), and a POST
 * without the right one is refused (403) before anything is done.
 */
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/acct_int.h"
#include "server/form.h"
#include "volsched/alloc.h"
#include "volsched/log.h"
#include "volsched/md5.h"
#include "volsched/ops_auth.h"
#include "volsched/store_accounts.h"
#include "volsched/str.h"

/* The stylesheet: the /ops/ dashboard's look, one file, no CDN. */
static const char style[] =
    "body{font-family:sans-serif;margin:0;color:#222}"
    "header{background:#f3f3f3;border-bottom:1px solid #ccc;padding:.5em 2em}"
    "header a{margin-right:1em}header form{display:inline}"
    "main{margin:1em 2em;max-width:60em}"
    ".t{border-collapse:collapse;margin-bottom:1em}.t td,.t th{border:1px solid #bbb;"
    "padding:2px 8px;font-size:90%}"
    "label{display:block;margin:.4em 0}label span{display:inline-block;min-width:24em}"
    "input[type=text],input[type=email],input[type=password]{width:20em}"
    ".err{color:#b00}.ok{color:#070}code{background:#f6f6f6;padding:1px 4px}"
    "button.link{background:none;border:none;color:#00e;text-decoration:underline;"
    "cursor:pointer;padding:0;font-size:100%}.num{text-align:right}\n";

int vs_site__style(struct acct_req *r)
{
    r->out->ctype = "text/css";
    vs_page_printf(&r->p, "%s", style);
    return 200;
}

/* The Set-Cookie of the session value v. */
static void set_cookie(struct site *s, const char *v)
{
    int m = snprintf(s->r->out->set_cookie, sizeof(s->r->out->set_cookie),
                     "%s=%s; Path=%s; Max-Age=%d; HttpOnly; SameSite=Lax%s", SITE_COOKIE, v,
                     s->r->a->base, SITE_SESSION_SECS, s->r->req->https ? "; Secure" : "");
    if (m < 0 || (size_t)m >= sizeof(s->r->out->set_cookie))
        s->r->out->set_cookie[0] = '\0';
}

/* The tag of the cookie value c for purpose ("csrf", "sess") into out (65
 * bytes): the CSRF token, and the session's row id in the store (never the
 * cookie itself). */
static int cookie_tag(struct site *s, const char *purpose, const char *c, char *out, size_t n)
{
    char data[VS_OPS_COOKIE_MAX + 8];
    snprintf(data, sizeof(data), "%s|%s", purpose, c);
    return vs_session_tag(&s->r->a->skey, data, out, n);
}

/* A new cookie for uid (0: nobody), its CSRF token with it; a logged-in
 * one is recorded in the store's sessions, which logging out ends. */
int vs_site__set_session(struct site *s, int64_t uid)
{
    char subj[24] = "", id[65];
    if (uid > 0)
        snprintf(subj, sizeof(subj), "%lld", (long long)uid);
    /* Logging in over a live session ends that one (its cookie is
     * replaced in the browser; no copy of it should outlive that). */
    if (s->in && vs_site__end_session(s) != 0)
        VS_LOG(s->r->a->log, VS_LOG_WARN, "site: user %lld: cannot end its previous session",
               (long long)s->user.id);
    int rc = vs_session_cookie_make(&s->r->a->skey, subj, s->r->now, SITE_SESSION_SECS, s->cookie,
                                    sizeof(s->cookie));
    rc = rc ? rc : cookie_tag(s, "csrf", s->cookie, s->csrf, sizeof(s->csrf));
    if (rc == 0 && uid > 0) {
        rc = cookie_tag(s, "sess", s->cookie, id, sizeof(id));
        rc = rc ? rc
                : vs_store_session_add(s->r->a->st, id, uid, s->r->now,
                                       s->r->now + SITE_SESSION_SECS);
    }
    if (rc == 0)
        set_cookie(s, s->cookie);
    return rc;
}

int vs_site__end_session(struct site *s)
{
    char id[65];
    int rc = cookie_tag(s, "sess", s->cookie, id, sizeof(id));
    return rc ? rc : vs_store_session_end(s->r->a->st, id);
}

int vs_site__begin(struct acct_req *r, struct site *s)
{
    memset(s, 0, sizeof(*s));
    s->r = r;
    r->out->ctype = "text/html; charset=utf-8";
    char subj[24];
    bool have =
        vs_session_cookie_find(&r->a->skey, SITE_COOKIE, r->req->cookie, r->now, SITE_SESSION_SECS,
                               subj, sizeof(subj), s->cookie, sizeof(s->cookie));
    int rc = 0;
    if (have) {
        rc = cookie_tag(s, "csrf", s->cookie, s->csrf, sizeof(s->csrf));
        int64_t uid = 0;
        char id[65];
        bool live = rc == 0 && subj[0] && vs_parse_int64(subj, &uid) == 0 && uid > 0 &&
                    cookie_tag(s, "sess", s->cookie, id, sizeof(id)) == 0 &&
                    vs_store_session_check(r->a->st, id, uid, r->now) == 0;
        /* A signed cookie whose session has ended (logged out, a new
         * password, the account deleted) logs nobody in. */
        if (rc == 0 && subj[0] && !live)
            VS_LOG(r->a->log, VS_LOG_WARN,
                   "site: a cookie of user %s from %s refused: its session has ended", subj,
                   r->req->peer ? r->req->peer : "?");
        if (live && vs_store_user_get(r->a->st, uid, &s->user) == 0) {
            /* A deleted account keeps its row, not its e-mail. */
            s->in = s->user.email_addr[0] != '\0';
            if (!s->in)
                vs_user_cleanup(&s->user);
        }
        if (rc == 0 && subj[0] && !s->in)
            rc = vs_site__set_session(s, 0); /* that account is gone */
    } else {
        rc = vs_site__set_session(s, 0);
    }
    if (rc != 0) {
        VS_LOG(r->a->log, VS_LOG_ERROR, "site: cannot make a session: %s", vs_strerror(rc));
        vs_page_printf(&r->p, "500 cannot make a session\n");
        return 500;
    }
    if (!r->req->form)
        return 0;
    char got[80];
    if (vs_form_get(r->req->form, "csrf", got, sizeof(got)) != 0 || strlen(got) != 64 ||
        CRYPTO_memcmp(got, s->csrf, 64) != 0) {
        VS_LOG(r->a->log, VS_LOG_WARN, "site: %s from %s refused: missing or wrong CSRF token",
               r->req->path, r->req->peer ? r->req->peer : "?");
        vs_site__head(s, "Form refused");
        vs_site__msg(s, "err",
                     "This form's security token is missing or out of date: nothing was done. "
                     "Go back, reload the page and try again.");
        vs_site__tail(s);
        return 403;
    }
    return 0;
}

void vs_site__end(struct site *s)
{
    if (s->in)
        vs_user_cleanup(&s->user);
    OPENSSL_cleanse(s->csrf, sizeof(s->csrf));
}

void vs_site__csrf_input(struct site *s)
{
    vs_page_printf(&s->r->p, "<input type=\"hidden\" name=\"csrf\" value=\"%s\">\n", s->csrf);
}

void vs_site__head(struct site *s, const char *title)
{
    struct vs_page *p = &s->r->p;
    const char *name = s->r->a->cfg.long_name;
    vs_page_printf(p, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>");
    vs_page_esc(p, title);
    vs_page_printf(p, " - ");
    vs_page_esc(p, name);
    vs_page_printf(p, "</title>\n<link rel=\"stylesheet\" href=\"style.css\"></head><body>\n"
                      "<header><a href=\"./\"><b>");
    vs_page_esc(p, name);
    vs_page_printf(p, "</b></a> <a href=\"teams.php\">Teams</a><a href=\"top_users.php\">"
                      "Statistics</a>");
    if (s->in) {
        vs_page_printf(p, "<a href=\"home.php\">Your account</a><a href=\"prefs.php\">"
                          "Preferences</a><form method=\"post\" action=\"logout.php\">");
        vs_site__csrf_input(s);
        vs_page_printf(p, "<button class=\"link\" type=\"submit\">Log out</button></form> "
                          "<span id=\"who\">");
        vs_page_esc(p, s->user.name);
        vs_page_printf(p, "</span>");
    } else {
        vs_page_printf(p, "<a href=\"signup.php\">Join</a><a href=\"login.php\">Log in</a>");
    }
    vs_page_printf(p, "</header>\n<main>\n<h1>");
    vs_page_esc(p, title);
    vs_page_printf(p, "</h1>\n");
}

void vs_site__tail(struct site *s)
{
    vs_page_printf(&s->r->p, "</main>\n</body></html>\n");
}

int vs_site__redirect(struct site *s, const char *rel)
{
    int n = snprintf(s->r->out->location, sizeof(s->r->out->location), "%s%s", s->r->a->base, rel);
    if (n < 0 || (size_t)n >= sizeof(s->r->out->location))
        snprintf(s->r->out->location, sizeof(s->r->out->location), "/"); /* base too long */
    vs_page_printf(&s->r->p, "<!DOCTYPE html>\n<p><a href=\"%s\">continue</a></p>\n", rel);
    return 303;
}

void vs_site__field(struct site *s, const char *key, char *out, size_t n)
{
    const char *args = s->r->req->form ? s->r->req->form : s->r->req->query;
    if (vs_form_get(args, key, out, n) != 0)
        out[0] = '\0';
}

void vs_site__msg(struct site *s, const char *cls, const char *text)
{
    vs_page_printf(&s->r->p, "<p class=\"%s\" id=\"msg\">", cls);
    vs_page_esc(&s->r->p, text);
    vs_page_printf(&s->r->p, "</p>\n");
}

int vs_site__begin_in(struct acct_req *r, struct site *s)
{
    int st = vs_site__begin(r, s);
    return st || s->in ? st : vs_site__redirect(s, "login.php");
}

int vs_site__passwd_hash(const char *passwd, const char *email, char *out)
{
    char buf[2 * VS_NAME_MAX + 2];
    int n = snprintf(buf, sizeof(buf), "%s%s", passwd, email);
    for (int i = (int)strlen(passwd); i < n; i++)
        buf[i] = (char)((buf[i] >= 'A' && buf[i] <= 'Z') ? buf[i] - 'A' + 'a' : buf[i]);
    int rc = n < 0 || (size_t)n >= sizeof(buf) ? VS_ELIMIT : vs_md5_hex(buf, (size_t)n, out);
    OPENSSL_cleanse(buf, sizeof(buf));
    return rc;
}

/* One labelled input; value escaped (NULL: none). */
static void input(struct site *s, const char *label, const char *type, const char *name,
                  const char *value)
{
    struct vs_page *p = &s->r->p;
    vs_page_printf(p, "<label><span>%s</span><input type=\"%s\" name=\"%s\" id=\"f-%s\"", label,
                   type, name, name);
    if (value) {
        vs_page_printf(p, " value=\"");
        vs_page_esc(p, value);
        vs_page_printf(p, "\"");
    }
    vs_page_printf(p, "></label>\n");
}

/* ------------------------------------------------------------------------ */
/* Sign up                                                                   */

struct signup_in {
    char email[VS_NAME_MAX], name[VS_NAME_MAX], pw[VS_NAME_MAX], pw2[VS_NAME_MAX],
        invite[VS_NAME_MAX];
};

static void signup_form(struct site *s, const struct signup_in *in, const char *err)
{
    vs_site__head(s, "Join");
    if (err)
        vs_site__msg(s, "err", err);
    vs_page_printf(&s->r->p, "<form method=\"post\" action=\"signup.php\">\n");
    vs_site__csrf_input(s);
    input(s, "E-mail address", "email", "email_addr", in ? in->email : NULL);
    input(s, "Name (shown to others)", "text", "user_name", in ? in->name : NULL);
    input(s, "Password", "password", "passwd", NULL);
    input(s, "Password again", "password", "passwd2", NULL);
    if (s->r->a->cfg.invite_code.n > 0)
        input(s, "Invitation code", "text", "invite_code", in ? in->invite : NULL);
    vs_page_printf(&s->r->p,
                   "<p>At least %d characters for the password.</p>\n"
                   "<button type=\"submit\" id=\"go\">Create account</button></form>\n",
                   s->r->a->cfg.min_passwd_length);
    vs_site__tail(s);
}

/* Why the sign-up in cannot be done (NULL: it can), with the account made
 * into *out (id set) when it can. */
static const char *signup_do(struct site *s, struct signup_in *in, struct vs_user *out)
{
    const struct vs_project_config *cfg = &s->r->a->cfg;
    if (cfg->disable_account_creation || cfg->disable_web_account_creation)
        return "This project is not accepting new accounts.";
    if (cfg->invite_code.n > 0) {
        bool ok = false;
        size_t cl = strlen(in->invite);
        for (int i = 0; i < cfg->invite_code.n; i++)
            ok |= strlen(cfg->invite_code.v[i]) == cl && cl > 0 &&
                  CRYPTO_memcmp(cfg->invite_code.v[i], in->invite, cl) == 0;
        if (!ok)
            return "Invalid invitation code.";
    }
    const char *why = vs_acct__bad_name(in->name, ACCT_NAME_MAX);
    if (why)
        return why;
    vs_acct__lower(in->email);
    if (vs_acct__bad_email(in->email))
        return "That is not an e-mail address.";
    size_t pl = strlen(in->pw);
    if (pl < (size_t)cfg->min_passwd_length)
        return "The password is too short.";
    if (strcmp(in->pw, in->pw2) != 0)
        return "The two passwords differ.";
    struct vs_user u;
    memset(&u, 0, sizeof(u));
    if (vs_store_user_by_email(s->r->a->st, in->email, &u) == 0) {
        vs_user_cleanup(&u);
        return "There is already an account with that e-mail address: log in instead.";
    }
    char hash[VS_MD5_HEX_LEN + 1];
    if (vs_strlcpy(u.email_addr, in->email, sizeof(u.email_addr)) != 0 ||
        vs_strlcpy(u.name, in->name, sizeof(u.name)) != 0 ||
        vs_site__passwd_hash(in->pw, in->email, hash) != 0 ||
        vs_ops_hash_password(hash, u.passwd_hash, sizeof(u.passwd_hash)) != 0)
        return "Server error.";
    u.create_time = s->r->now;
    u.expavg_time = (double)s->r->now;
    int rc = vs_store_user_add(s->r->a->st, &u);
    if (rc == VS_EEXISTS)
        return "That name or e-mail address is taken.";
    if (rc != 0)
        return "Server error.";
    *out = u;
    return NULL;
}

int vs_site__signup(struct acct_req *r)
{
    struct site s;
    int st = vs_site__begin(r, &s);
    if (st != 0)
        goto out;
    if (!r->req->form) {
        signup_form(&s, NULL, NULL);
        goto out;
    }
    if (!vs_acct__spend(r, &st))
        goto out;
    struct signup_in *in = VS_NEW(struct signup_in);
    vs_site__field(&s, "email_addr", in->email, sizeof(in->email));
    vs_site__field(&s, "user_name", in->name, sizeof(in->name));
    vs_site__field(&s, "passwd", in->pw, sizeof(in->pw));
    vs_site__field(&s, "passwd2", in->pw2, sizeof(in->pw2));
    vs_site__field(&s, "invite_code", in->invite, sizeof(in->invite));
    struct vs_user u;
    memset(&u, 0, sizeof(u));
    const char *why = signup_do(&s, in, &u);
    if (why) {
        signup_form(&s, in, why);
        st = 400;
    } else {
        VS_LOG(r->a->log, VS_LOG_INFO, "site: user %lld signed up from %s", (long long)u.id,
               r->req->peer ? r->req->peer : "?");
        st = vs_site__set_session(&s, u.id) == 0 ? vs_site__redirect(&s, "home.php") : 500;
        vs_user_cleanup(&u);
    }
    OPENSSL_cleanse(in, sizeof(*in));
    vs_free(in);
out:
    vs_site__end(&s);
    return st ? st : 200;
}

/* ------------------------------------------------------------------------ */
/* Log in, log out                                                           */

static void login_form(struct site *s, const char *email, const char *err)
{
    vs_site__head(s, "Log in");
    if (err)
        vs_site__msg(s, "err", err);
    vs_page_printf(&s->r->p, "<form method=\"post\" action=\"login.php\">\n");
    vs_site__csrf_input(s);
    input(s, "E-mail address", "email", "email_addr", email);
    input(s, "Password", "password", "passwd", NULL);
    vs_page_printf(&s->r->p, "<button type=\"submit\" id=\"go\">Log in</button></form>\n"
                             "<p>No account yet? <a href=\"signup.php\">Join</a>.</p>\n");
    vs_site__tail(s);
}

int vs_site__login(struct acct_req *r)
{
    struct site s;
    int st = vs_site__begin(r, &s);
    if (st != 0)
        goto out;
    if (!r->req->form) {
        if (s.in)
            st = vs_site__redirect(&s, "home.php");
        else
            login_form(&s, NULL, NULL);
        goto out;
    }
    /* Every attempt costs the address a token: a password guesser is
     * throttled as lookup_account's is. */
    if (!vs_acct__spend(r, &st))
        goto out;
    char email[VS_NAME_MAX], pw[VS_NAME_MAX], hash[VS_MD5_HEX_LEN + 1];
    vs_site__field(&s, "email_addr", email, sizeof(email));
    vs_site__field(&s, "passwd", pw, sizeof(pw));
    vs_acct__lower(email);
    struct vs_user u;
    memset(&u, 0, sizeof(u));
    bool ok = email[0] && vs_store_user_by_email(r->a->st, email, &u) == 0;
    bool good =
        ok && vs_site__passwd_hash(pw, email, hash) == 0 && vs_acct__lookup_hash_ok(&u, hash);
    OPENSSL_cleanse(pw, sizeof(pw));
    if (!good) {
        VS_LOG(r->a->log, VS_LOG_WARN, "site: failed login from %s",
               r->req->peer ? r->req->peer : "?");
        login_form(&s, email, "Wrong e-mail address or password.");
        st = 400;
    } else {
        VS_LOG(r->a->log, VS_LOG_INFO, "site: user %lld logged in from %s", (long long)u.id,
               r->req->peer ? r->req->peer : "?");
        st = vs_site__set_session(&s, u.id) == 0 ? vs_site__redirect(&s, "home.php") : 500;
    }
    if (ok)
        vs_user_cleanup(&u);
out:
    vs_site__end(&s);
    return st ? st : 200;
}

int vs_site__logout(struct acct_req *r)
{
    struct site s;
    int st = vs_site__begin(r, &s);
    if (st == 0 && !r->req->form)
        st = vs_site__redirect(&s, ""); /* a POST form only: a link cannot log anyone out */
    else if (st == 0) {
        /* Ends the session on the server: a copy of the cookie is worth
         * nothing from now on. */
        if (s.in && vs_site__end_session(&s) != 0) {
            VS_LOG(r->a->log, VS_LOG_ERROR, "site: user %lld: cannot end its session",
                   (long long)s.user.id);
            st = 500;
        } else {
            if (s.in)
                VS_LOG(r->a->log, VS_LOG_INFO, "site: user %lld logged out", (long long)s.user.id);
            st = vs_site__set_session(&s, 0) == 0 ? vs_site__redirect(&s, "") : 500;
        }
    }
    vs_site__end(&s);
    return st;
}
