/* The account handler's life, routing, replies and checks (acct.h). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server/acct_int.h"
#include "server/form.h"
#include "volsched/alloc.h"
#include "volsched/buf.h"
#include "volsched/log.h"
#include "volsched/store_project.h"
#include "volsched/str.h"
#include "volsched/xml.h"

#define TERMS_FILE "terms_of_use.txt"
#define TERMS_MAX  (64 * 1024)

/* DIR/terms_of_use.txt (BOINC's place for it), trimmed, into b; nothing
 * when there is none. */
static int read_terms(const char *dir, struct vs_buf *b)
{
    char path[VS_PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/%s", dir, TERMS_FILE);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errno == ENOENT ? 0 : -errno;
    struct vs_buf t;
    vs_buf_init(&t, TERMS_MAX);
    char chunk[4096];
    ssize_t n;
    int rc = 0;
    while (rc == 0 && (n = read(fd, chunk, sizeof(chunk))) > 0)
        rc = vs_buf_append(&t, chunk, (size_t)n);
    close(fd);
    const char *s = vs_buf_str(&t);
    size_t len = t.len;
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    while (len && isspace((unsigned char)*s)) {
        s++;
        len--;
    }
    if (rc == 0 && len) {
        rc = vs_buf_puts(b, "    <terms_of_use>\n");
        rc = rc ? rc : vs_xml_escape(b, s, len);
        rc = rc ? rc : vs_buf_puts(b, "\n</terms_of_use>\n");
    }
    vs_buf_cleanup(&t);
    return rc;
}

/* BOINC-COMPAT: html/user/get_project_config.php's account elements. The
 * login is the e-mail address (no <uses_username/>). */
static int build_config_xml(struct vs_acct *a)
{
    struct vs_buf b;
    vs_buf_init(&b, VS_BUF_UNLIMITED);
    bool off = a->cfg.disable_account_creation || a->cfg.invite_code.n > 0;
    int rc = vs_buf_printf(&b, "    <web_stopped>0</web_stopped>\n%s%s%s",
                           off ? "    <account_creation_disabled/>\n" : "",
                           a->cfg.invite_code.n > 0 ? "    <invite_code_required/>\n" : "",
                           a->cfg.disable_account_creation || a->cfg.disable_account_creation_rpc
                               ? "    <client_account_creation_disabled/>\n"
                               : "");
    rc = rc ? rc
            : vs_buf_printf(&b, "    <min_passwd_length>%d</min_passwd_length>\n",
                            a->cfg.min_passwd_length);
    rc = rc ? rc : read_terms(a->cfg.dir, &b);
    size_t n;
    a->config_xml = vs_buf_take(&b, &n);
    return rc;
}

int vs_acct_create(const struct vs_project_config *cfg, struct vs_log *log, vs_http_get_fn next,
                   void *next_ctx, struct vs_acct **out)
{
    struct vs_acct *a = VS_NEW(struct vs_acct);
    a->cfg = *cfg;
    a->log = log;
    a->next = next;
    a->next_ctx = next_ctx;
    if (vs_http_url_path(cfg->master_url, a->base, sizeof(a->base)) != 0)
        snprintf(a->base, sizeof(a->base), "/");
    int rc = build_config_xml(a);
    if (rc != 0) {
        VS_LOG(log, VS_LOG_ERROR, "cannot read %s/%s: %s", cfg->dir, TERMS_FILE, vs_strerror(rc));
        vs_free(a->config_xml);
        vs_free(a);
        return rc;
    }
    /* The site's sessions: the operator's secret, under a purpose of
     * their own (never a valid password line). */
    rc = vs_ops_session_key_load(cfg->dir, "volunteers' web site", &a->skey);
    if (rc != 0) {
        VS_LOG(log, VS_LOG_ERROR, "cannot read or make %s/%s: %s", cfg->dir,
               VS_OPS_SESSION_KEY_FILE, vs_strerror(rc));
        vs_free(a->config_xml);
        vs_free(a);
        return rc;
    }
    rc = vs_project_store_open(cfg, false, log, &a->st);
    if (rc != 0) {
        vs_free(a->config_xml);
        vs_free(a);
        return rc;
    }
    a->limit =
        vs_auth_limit_create((unsigned)cfg->account_rpc_burst, (unsigned)cfg->account_rpc_per_hour);
    pthread_mutex_init(&a->mu, NULL);
    *out = a;
    return 0;
}

void vs_acct_destroy(struct vs_acct *a)
{
    if (!a)
        return;
    vs_store_close(a->st);
    vs_auth_limit_destroy(a->limit);
    pthread_mutex_destroy(&a->mu);
    explicit_bzero(&a->skey, sizeof(a->skey));
    vs_free(a->config_xml);
    vs_free(a);
}

void vs_acct_set_sched(struct vs_acct *a, struct vs_sched *sched)
{
    a->sched = sched;
}

const char *vs_acct_project_config_xml(const struct vs_acct *a)
{
    return a->config_xml;
}

/* ------------------------------------------------------------------------ */
/* Replies                                                                   */

void vs_acct__xml_head(struct acct_req *r)
{
    r->out->ctype = "text/xml; charset=utf-8";
    vs_page_printf(&r->p, "<?xml version=\"1.0\" encoding=\"UTF-8\" ?>\n");
}

/* BOINC-COMPAT: html/inc/util_basic.inc xml_error's default texts. */
static const char *error_text(int num)
{
    switch (num) {
    case ACCT_ERR_XML_PARSE:
        return "Invalid XML";
    case ACCT_ERR_NOT_FOUND:
        return "Not found";
    case ACCT_ERR_NOT_UNIQUE:
        return "Name or email address is not unique";
    case ACCT_ERR_DB:
        return "Can't access database";
    case ACCT_ERR_BAD_EMAIL:
        return "Email address has invalid syntax";
    case ACCT_ERR_BAD_PASSWD:
        return "Invalid password";
    case ACCT_ERR_CREATION_OFF:
        return "Account creation is disabled";
    default:
        return "Unknown error";
    }
}

int vs_acct__error(struct acct_req *r, int num, const char *msg)
{
    vs_buf_reset(r->out->body);
    r->p.rc = 0;
    vs_acct__xml_head(r);
    vs_page_printf(&r->p, "<error>\n    <error_num>%d</error_num>\n    <error_msg>", num);
    vs_page_esc(&r->p, msg ? msg : error_text(num));
    vs_page_printf(&r->p, "</error_msg>\n</error>\n");
    return 200;
}

int vs_acct__arg(struct acct_req *r, const char *key, char *out, size_t n, int *out_status)
{
    /* BOINC-COMPAT: the RPCs take GET arguments, or POSTed ones (post_str). */
    int rc = vs_form_get(r->req->form ? r->req->form : r->req->query, key, out, n);
    if (rc == 0 || rc == VS_ENOTFOUND)
        return 0;
    char msg[128];
    snprintf(msg, sizeof(msg), "%s: %s", key,
             rc == VS_ELIMIT ? "too long" : "bad %-escape or a NUL byte");
    *out_status = vs_acct__error(r, ACCT_ERR_GENERIC, msg);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Throttle                                                                  */

bool vs_acct__spend(struct acct_req *r, int *out_status)
{
    int wait = 0;
    if (!vs_auth_limit_allow(r->a->limit, r->peer_key, r->now, &wait)) {
        VS_LOG(r->a->log, VS_LOG_DEBUG, "account: %s from %s refused unchecked (throttled)",
               r->req->path, r->req->peer ? r->req->peer : "?");
        vs_acct__error(r, ACCT_ERR_GENERIC,
                       "too many account requests from your address; try "
                       "again later");
        r->out->retry_after = (unsigned)wait;
        *out_status = 429;
        return false;
    }
    vs_auth_limit_failed(r->a->limit, r->peer_key, r->now);
    if (!vs_auth_limit_allow(r->a->limit, r->peer_key, r->now, &wait))
        VS_LOG(r->a->log, VS_LOG_WARN,
               "account: %s spent its %d account requests: the next are refused unchecked (429) "
               "for %d s, then %d an hour",
               r->peer_key, r->a->cfg.account_rpc_burst, wait, r->a->cfg.account_rpc_per_hour);
    return true;
}

void vs_acct__failed(struct acct_req *r)
{
    vs_auth_limit_failed(r->a->limit, r->peer_key, r->now);
}

int vs_acct__user_by_key(struct acct_req *r, const char *key, struct vs_user *out, int *out_status)
{
    int wait = 0;
    if (!vs_auth_limit_allow(r->a->limit, r->peer_key, r->now, &wait)) {
        vs_acct__error(r, ACCT_ERR_GENERIC,
                       "too many wrong account keys from your address; try again later");
        r->out->retry_after = (unsigned)wait;
        *out_status = 429;
        return VS_ELIMIT;
    }
    memset(out, 0, sizeof(*out));
    int rc = key[0] ? vs_store_user_by_auth(r->a->st, key, out) : VS_ENOTFOUND;
    if (rc == VS_ENOTFOUND) {
        vs_acct__failed(r);
        VS_LOG(r->a->log, VS_LOG_INFO, "account: %s from %s: unknown account key", r->req->path,
               r->req->peer ? r->req->peer : "?");
    }
    if (rc != 0)
        *out_status =
            vs_acct__error(r, rc == VS_ENOTFOUND ? ACCT_ERR_NOT_FOUND : ACCT_ERR_DB, NULL);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Checks of what volunteers type                                            */

/* Length of the UTF-8 sequence at p (shortest form, no surrogates, at most
 * U+10FFFF), 0 if it is not one. */
static size_t utf8_len(const unsigned char *p)
{
    if (p[0] < 0x80)
        return 1;
    if (p[0] >= 0xc2 && p[0] <= 0xdf)
        return (p[1] & 0xc0) == 0x80 ? 2 : 0;
    if (p[0] >= 0xe0 && p[0] <= 0xef) {
        if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
            return 0;
        if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0))
            return 0;
        return 3;
    }
    if (p[0] >= 0xf0 && p[0] <= 0xf4) {
        if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80)
            return 0;
        if ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
            return 0;
        return 4;
    }
    return 0;
}

const char *vs_acct__bad_name(const char *s, size_t max)
{
    size_t len = strlen(s);
    if (len == 0 || isspace((unsigned char)s[0]) || isspace((unsigned char)s[len - 1]))
        return "the name may not be empty or begin or end with a space";
    if (len > max)
        return "the name is too long";
    bool digits = true;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = utf8_len(p);
        if (n == 0)
            return "the name is not valid UTF-8";
        if (*p < 0x20 || *p == 0x7f)
            return "the name may not contain control characters";
        if (*p == '<' || *p == '>')
            return "the name may not contain HTML tags";
        digits = digits && isdigit(*p);
        p += n;
    }
    if (digits)
        return "the name may not be a number";
    return NULL;
}

const char *vs_acct__bad_email(const char *s)
{
    size_t len = strlen(s);
    const char *at = strchr(s, '@');
    if (len < 3 || len > ACCT_EMAIL_MAX || !at || at == s || strchr(at + 1, '@'))
        return "Email address has invalid syntax";
    const char *dot = strrchr(at + 1, '.');
    if (!dot || dot == at + 1 || dot[1] == '\0')
        return "Email address has invalid syntax";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p <= ' ' || *p >= 0x7f || strchr("<>()[]\\,;:\"'", *p))
            return "Email address has invalid syntax";
    }
    return NULL;
}

bool vs_acct__is_md5(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (!isxdigit((unsigned char)s[n]))
            return false;
    return n == 32;
}

void vs_acct__lower(char *s)
{
    for (; *s; s++)
        *s = (char)tolower((unsigned char)*s);
}

/* ------------------------------------------------------------------------ */
/* Routing                                                                   */

struct route {
    const char *name;
    int (*fn)(struct acct_req *r);
};

static const struct route routes[] = {
    {"create_account.php", vs_acct__create_account},
    {"lookup_account.php", vs_acct__lookup_account},
    {"am_get_info.php", vs_acct__am_get_info},
    {"am_set_info.php", vs_acct__am_set_info},
    {"am_set_host_info.php", vs_acct__am_set_host_info},
    {"show_user.php", vs_acct__show_user},
    {"team_lookup.php", vs_acct__team_lookup},
    {"create_team.php", vs_acct__create_team},
    /* The volunteers' web site (GET, and its forms' POSTs). */
    {"style.css", vs_site__style},
    {"signup.php", vs_site__signup},
    {"login.php", vs_site__login},
    {"logout.php", vs_site__logout},
    {"home.php", vs_site__home},
    {"host_venue.php", vs_site__host_venue},
    {"delete.php", vs_site__delete},
    {"prefs.php", vs_site__prefs},
    {"teams.php", vs_site__teams},
    {"team.php", vs_site__team},
    {"team_create.php", vs_site__team_create},
    {"team_join.php", vs_site__team_join},
    {"team_leave.php", vs_site__team_leave},
    {"top_users.php", vs_site__top_users},
    {"top_teams.php", vs_site__top_teams},
    {"top_hosts.php", vs_site__top_hosts},
    {"show_host_detail.php", vs_site__host_detail},
};

int vs_acct_handle(struct vs_acct *a, const struct vs_http_get *req, int64_t now,
                   struct vs_http_page *out)
{
    const struct route *rt = NULL;
    size_t bl = strlen(a->base);
    if (strncmp(req->path, a->base, bl) == 0) {
        for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
            if (strcmp(req->path + bl, routes[i].name) == 0)
                rt = &routes[i];
    }
    if (!rt)
        return a->next ? a->next(a->next_ctx, req, out) : 404;
    struct acct_req r = {.a = a, .req = req, .out = out, .p = {.b = out->body}, .now = now};
    vs_auth_limit_key(req->peer, r.peer_key, sizeof(r.peer_key));
    pthread_mutex_lock(&a->mu);
    int status = rt->fn(&r);
    pthread_mutex_unlock(&a->mu);
    if (r.p.rc != 0) {
        VS_LOG(a->log, VS_LOG_ERROR, "account: %s: reply too large", req->path);
        vs_buf_reset(out->body);
        out->ctype = "text/plain";
        if (vs_buf_puts(out->body, "500 reply too large\n") != 0)
            vs_buf_reset(out->body);
        return 500;
    }
    return status;
}

int vs_acct_http(void *ctx, const struct vs_http_get *req, struct vs_http_page *out)
{
    return vs_acct_handle(ctx, req, (int64_t)time(NULL), out);
}
