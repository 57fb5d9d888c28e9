/*
 * What account managers call (acct.h): am_get_info, am_set_info,
 * am_set_host_info, show_user (XML), team_lookup (XML), create_team.
 * BOINC-COMPAT: html/user/am_*.php, show_user.php, team_lookup.php,
 * create_team.php and html/inc/xml.inc's show_user_xml / show_team_xml.
 * Credit figures are the store's (the credit issue fills them).
 */
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/acct_int.h"
#include "volsched/log.h"
#include "volsched/md5.h"
#include "volsched/ops_auth.h"
#include "volsched/sched.h"
#include "volsched/store_accounts.h"
#include "volsched/str.h"
#include "volsched/xml.h"

#define PREFS_MAX (16 * 1024)

/* BOINC-COMPAT: PHP's urlencode (am_get_info sends name and country so). */
static void urlenc(struct vs_page *p, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
            *c == '-' || *c == '_' || *c == '.')
            vs_page_printf(p, "%c", *c);
        else if (*c == ' ')
            vs_page_printf(p, "+");
        else
            vs_page_printf(p, "%%%c%c", hex[*c >> 4], hex[*c & 15]);
    }
}

/* md5 hex of a + b into out (33 bytes); "" if it cannot. */
static void md5_of2(const char *a, const char *b, char *out)
{
    char buf[2 * VS_NAME_MAX];
    int n = snprintf(buf, sizeof(buf), "%s%s", a, b);
    if (n < 0 || (size_t)n >= sizeof(buf) || vs_md5_hex(buf, (size_t)n, out) != 0)
        out[0] = '\0';
    OPENSSL_cleanse(buf, sizeof(buf));
}

/* BOINC-COMPAT: html/inc/user.inc weak_auth(): "ID_md5(key + password)". */
static void weak_auth(const struct vs_user *u, char *out, size_t n)
{
    char h[VS_MD5_HEX_LEN + 1];
    md5_of2(u->authenticator, u->passwd_hash, h);
    snprintf(out, n, "%lld_%s", (long long)u->id, h);
}

int vs_acct__am_get_info(struct acct_req *r)
{
    char key[VS_AUTH_MAX];
    int status = 200;
    struct vs_user u;
    if (vs_acct__arg(r, "account_key", key, sizeof(key), &status) ||
        vs_acct__user_by_key(r, key, &u, &status))
        return status;
    char weak[VS_AUTH_MAX + 32], cpid[VS_MD5_HEX_LEN + 1];
    weak_auth(&u, weak, sizeof(weak));
    md5_of2(u.cross_project_id, u.email_addr, cpid);
    bool founder = false;
    struct vs_team t;
    if (u.teamid && vs_store_team_get(r->a->st, u.teamid, &t) == 0)
        founder = t.userid == u.id;
    vs_acct__xml_head(r);
    struct vs_page *p = &r->p;
    vs_page_printf(p, "<am_get_info_reply>\n    <success/>\n<id>%lld</id>\n<name>",
                   (long long)u.id);
    urlenc(p, u.name);
    vs_page_printf(p, "</name>\n<country>");
    urlenc(p, u.country);
    vs_page_printf(p,
                   "</country>\n<weak_auth>%s</weak_auth>\n<cpid>%s</cpid>\n"
                   "<has_profile>0</has_profile>\n<create_time>%lld</create_time>\n"
                   "<global_prefs>\n%s\n</global_prefs>\n<project_prefs>\n%s\n</project_prefs>\n"
                   "<url></url>\n<send_email>0</send_email>\n<show_hosts>0</show_hosts>\n"
                   "<teamid>%lld</teamid>\n<venue>",
                   weak, cpid, (long long)u.create_time, u.global_prefs ? u.global_prefs : "",
                   u.project_prefs ? u.project_prefs : "", (long long)u.teamid);
    vs_page_esc(p, u.venue);
    vs_page_printf(p, "</venue>\n%s</am_get_info_reply>\n", founder ? "<teamfounder/>\n" : "");
    vs_user_cleanup(&u);
    return 200;
}

/* NULL when text is one well-formed <tag> element (what the scheduler may
 * pass on verbatim), else why not. */
static const char *bad_prefs(const char *text, const char *tag)
{
    struct vs_arena ar;
    vs_arena_init(&ar, 16 * 1024);
    struct vs_xml_doc doc;
    struct vs_xml_limits lim;
    vs_xml_limits_default(&lim);
    lim.max_input = PREFS_MAX;
    lim.max_elements = 1000;
    lim.max_depth = 8;
    const char *why = NULL;
    if (vs_xml_parse(text, strlen(text), &lim, 0, &ar, &doc, NULL) != 0)
        why = "not well-formed XML (or too large)";
    else if (strcmp(doc.root->name, tag) != 0)
        why = "wrong outer element";
    vs_arena_cleanup(&ar);
    return why;
}

/* "", home, work or school: BOINC's venues. */
static bool venue_ok(const char *v)
{
    return !v[0] || strcmp(v, "home") == 0 || strcmp(v, "work") == 0 || strcmp(v, "school") == 0;
}

/* Replaces *dst (owned) with a copy of s. */
static void set_text(char **dst, const char *s)
{
    vs_free(*dst);
    *dst = vs_xstrdup(s);
}

int vs_acct__am_set_info(struct acct_req *r)
{
    char key[VS_AUTH_MAX], name[ACCT_NAME_MAX + 1], country[ACCT_NAME_MAX + 1], venue[16],
        teamid_s[24], email[ACCT_EMAIL_MAX + 1], hash[64];
    char *gp = vs_xmalloc(PREFS_MAX + 1), *pp = vs_xmalloc(PREFS_MAX + 1);
    int status = 200;
    struct vs_user u;
    memset(&u, 0, sizeof(u));
    bool have_user = false;
    if (vs_acct__arg(r, "account_key", key, sizeof(key), &status) ||
        vs_acct__arg(r, "name", name, sizeof(name), &status) ||
        vs_acct__arg(r, "country", country, sizeof(country), &status) ||
        vs_acct__arg(r, "venue", venue, sizeof(venue), &status) ||
        vs_acct__arg(r, "teamid", teamid_s, sizeof(teamid_s), &status) ||
        vs_acct__arg(r, "email_addr", email, sizeof(email), &status) ||
        vs_acct__arg(r, "password_hash", hash, sizeof(hash), &status) ||
        vs_acct__arg(r, "global_prefs", gp, PREFS_MAX + 1, &status) ||
        vs_acct__arg(r, "project_prefs", pp, PREFS_MAX + 1, &status) ||
        vs_acct__user_by_key(r, key, &u, &status))
        goto out;
    have_user = true;
    /* Every argument is checked before anything is written. */
    const char *why = NULL;
    int64_t teamid = -1;
    if (name[0])
        why = vs_acct__bad_name(name, ACCT_NAME_MAX);
    if (!why && country[0] && vs_acct__bad_name(country, ACCT_NAME_MAX))
        why = "invalid country";
    if (!why && !venue_ok(venue))
        why = "venue must be home, work, school or empty";
    if (!why && gp[0] && bad_prefs(gp, "global_preferences"))
        why = "Invalid global preferences";
    if (!why && pp[0] && bad_prefs(pp, "project_preferences"))
        why = "Invalid project preferences";
    if (!why && hash[0] && !vs_acct__is_md5(hash))
        why = "password_hash must be 32 hex digits";
    if (!why && teamid_s[0]) {
        char *end;
        teamid = strtoll(teamid_s, &end, 10);
        struct vs_team t;
        if (*end || teamid < 0)
            why = "teamid must be a number";
        else if (teamid > 0 && vs_store_team_get(r->a->st, teamid, &t) != 0)
            why = "no such team";
    }
    if (why) {
        status = vs_acct__error(r, ACCT_ERR_GENERIC, why);
        goto out;
    }
    if (email[0]) {
        vs_acct__lower(email);
        struct vs_user other;
        memset(&other, 0, sizeof(other));
        if (vs_acct__bad_email(email)) {
            status = vs_acct__error(r, ACCT_ERR_BAD_EMAIL, "Invalid email address");
            goto out;
        }
        if (strcmp(email, u.email_addr) != 0 &&
            vs_store_user_by_email(r->a->st, email, &other) == 0) {
            vs_user_cleanup(&other);
            status = vs_acct__error(r, ACCT_ERR_NOT_UNIQUE,
                                    "There's already an account with that email address.");
            goto out;
        }
    }
    /* Each fits: the arguments' buffers are smaller than the fields. */
    int rc = email[0] ? vs_strlcpy(u.email_addr, email, sizeof(u.email_addr)) : 0;
    rc |= name[0] ? vs_strlcpy(u.name, name, sizeof(u.name)) : 0;
    rc |= country[0] ? vs_strlcpy(u.country, country, sizeof(u.country)) : 0;
    rc |= venue[0] ? vs_strlcpy(u.venue, venue, sizeof(u.venue)) : 0;
    if (rc != 0) {
        status = vs_acct__error(r, ACCT_ERR_GENERIC, "too long");
        goto out;
    }
    if (gp[0])
        set_text(&u.global_prefs, gp);
    if (pp[0])
        set_text(&u.project_prefs, pp);
    if (hash[0]) {
        vs_acct__lower(hash);
        if (vs_ops_hash_password(hash, u.passwd_hash, sizeof(u.passwd_hash)) != 0) {
            status = vs_acct__error(r, ACCT_ERR_DB, NULL);
            goto out;
        }
    }
    rc = vs_store_user_update(r->a->st, &u);
    if (rc == 0 && teamid >= 0)
        rc = vs_store_user_set_team(r->a->st, u.id, teamid);
    if (rc != 0) {
        status = vs_acct__error(r, rc == VS_EEXISTS ? ACCT_ERR_NOT_UNIQUE : ACCT_ERR_DB, NULL);
        goto out;
    }
    /* A new password logs out every web session of the account. */
    if (hash[0] && vs_store_session_end_user(r->a->st, u.id, NULL, NULL) != 0)
        VS_LOG(r->a->log, VS_LOG_ERROR, "account: user %lld: cannot end its web sessions",
               (long long)u.id);
    if (r->a->sched)
        vs_sched_forget_user(r->a->sched, u.authenticator);
    VS_LOG(r->a->log, VS_LOG_INFO, "account: am_set_info changed user %lld%s%s", (long long)u.id,
           gp[0] ? " (with its preferences)" : "",
           hash[0] ? " (its password: its web sessions ended)" : "");
    vs_acct__xml_head(r);
    vs_page_printf(&r->p, "<am_set_info_reply>\n    <success/>\n</am_set_info_reply>\n");
out:
    if (have_user)
        vs_user_cleanup(&u);
    vs_free(gp);
    vs_free(pp);
    return status;
}

int vs_acct__am_set_host_info(struct acct_req *r)
{
    char key[VS_AUTH_MAX], hostid_s[24], venue[16];
    int status = 200;
    struct vs_user u;
    if (vs_acct__arg(r, "account_key", key, sizeof(key), &status) ||
        vs_acct__arg(r, "hostid", hostid_s, sizeof(hostid_s), &status) ||
        vs_acct__arg(r, "venue", venue, sizeof(venue), &status) ||
        vs_acct__user_by_key(r, key, &u, &status))
        return status;
    vs_user_cleanup(&u);
    char *end;
    long long hostid = strtoll(hostid_s, &end, 10);
    if (!hostid_s[0] || *end || hostid <= 0)
        return vs_acct__error(r, ACCT_ERR_GENERIC, "hostid must be a number");
    if (!venue_ok(venue))
        return vs_acct__error(r, ACCT_ERR_GENERIC, "venue must be home, work, school or empty");
    int rc = vs_store_host_set_venue(r->a->st, hostid, u.id, venue);
    if (rc != 0)
        return vs_acct__error(r, rc == VS_ENOTFOUND ? ACCT_ERR_NOT_FOUND : ACCT_ERR_DB, NULL);
    if (r->a->sched)
        vs_sched_forget_host(r->a->sched, hostid);
    VS_LOG(r->a->log, VS_LOG_INFO, "account: host %lld of user %lld: venue '%s'", hostid,
           (long long)u.id, venue);
    vs_acct__xml_head(r);
    vs_page_printf(&r->p, "<am_set_host_info_reply>\n    <success/>\n</am_set_host_info_reply>\n");
    return 200;
}

/* BOINC-COMPAT: xml.inc show_host_xml. */
static int host_xml(void *ctx, const struct vs_host *h)
{
    struct vs_page *p = ctx;
    vs_page_printf(p,
                   "    <host>\n        <id>%lld</id>\n        <create_time>%lld</create_time>\n"
                   "        <rpc_seqno>%d</rpc_seqno>\n        <rpc_time>%lld</rpc_time>\n"
                   "        <host_cpid>",
                   (long long)h->id, (long long)h->create_time, h->rpc_seqno,
                   (long long)h->rpc_time);
    vs_page_esc(p, h->host_cpid);
    vs_page_printf(p,
                   "</host_cpid>\n        <total_credit>%f</total_credit>\n"
                   "        <expavg_credit>%f</expavg_credit>\n"
                   "        <expavg_time>%f</expavg_time>\n        <domain_name>",
                   h->total_credit, h->expavg_credit, h->expavg_time);
    vs_page_esc(p, h->domain_name);
    vs_page_printf(p, "</domain_name>\n        <p_ncpus>%d</p_ncpus>\n        <p_vendor>",
                   h->p_ncpus);
    vs_page_esc(p, h->p_vendor);
    vs_page_printf(p, "</p_vendor>\n        <p_model>");
    vs_page_esc(p, h->p_model);
    vs_page_printf(p,
                   "</p_model>\n        <p_fpops>%f</p_fpops>\n        <p_iops>%f</p_iops>\n"
                   "        <os_name>",
                   h->p_fpops, h->p_iops);
    vs_page_esc(p, h->os_name);
    vs_page_printf(p, "</os_name>\n        <os_version>");
    vs_page_esc(p, h->os_version);
    vs_page_printf(p,
                   "</os_version>\n        <m_nbytes>%f</m_nbytes>\n        <d_free>%f</d_free>\n"
                   "        <d_total>%f</d_total>\n        <venue>",
                   h->m_nbytes, h->d_free, h->d_total);
    vs_page_esc(p, h->venue);
    vs_page_printf(p, "</venue>\n    </host>\n");
    return 0;
}

int vs_acct__show_user(struct acct_req *r)
{
    char fmt[16], key[VS_AUTH_MAX], id_s[24];
    int status = 200;
    if (vs_acct__arg(r, "format", fmt, sizeof(fmt), &status) ||
        vs_acct__arg(r, "auth", key, sizeof(key), &status) ||
        vs_acct__arg(r, "userid", id_s, sizeof(id_s), &status))
        return status;
    if (strcmp(fmt, "xml") != 0)
        return 404; /* the web site's user page is not served here */
    struct vs_user u;
    memset(&u, 0, sizeof(u));
    bool own = key[0] != '\0';
    if (own) {
        if (vs_acct__user_by_key(r, key, &u, &status))
            return status;
    } else {
        char *end;
        long long id = strtoll(id_s, &end, 10);
        if (!id_s[0] || *end || id <= 0 || vs_store_user_get(r->a->st, id, &u) != 0)
            return vs_acct__error(r, ACCT_ERR_NOT_FOUND, NULL);
    }
    char cpid[VS_MD5_HEX_LEN + 1];
    md5_of2(u.cross_project_id, u.email_addr, cpid);
    vs_acct__xml_head(r);
    struct vs_page *p = &r->p;
    vs_page_printf(p,
                   "<user>\n    <id>%lld</id>\n    <cpid>%s</cpid>\n"
                   "    <create_time>%lld</create_time>\n    <name>",
                   (long long)u.id, cpid, (long long)u.create_time);
    vs_page_esc(p, u.name);
    /* The credit figures: the store's (hook for the credit issue). */
    vs_page_printf(p,
                   "</name>\n    <total_credit>%f</total_credit>\n"
                   "    <expavg_credit>%f</expavg_credit>\n    <expavg_time>%f</expavg_time>\n"
                   "    <teamid>%lld</teamid>\n    <has_profile>0</has_profile>\n",
                   u.total_credit, u.expavg_credit, u.expavg_time, (long long)u.teamid);
    if (own) {
        vs_page_printf(p, "   <venue>");
        vs_page_esc(p, u.venue);
        vs_page_printf(p, "</venue>\n");
        if (vs_store_user_hosts(r->a->st, u.id, 1000, host_xml, p) != 0)
            status = vs_acct__error(r, ACCT_ERR_DB, NULL);
    }
    if (status == 200) {
        vs_page_printf(p, "     <country>");
        vs_page_esc(p, u.country);
        vs_page_printf(p, "</country>\n</user>\n");
    }
    vs_user_cleanup(&u);
    return status;
}

/* BOINC-COMPAT: xml.inc show_team_xml. */
static int team_xml(void *ctx, const struct vs_team *t)
{
    struct vs_page *p = ctx;
    vs_page_printf(p,
                   "<team>\n    <id>%lld</id>\n    <create_time>%lld</create_time>\n"
                   "    <userid>%lld</userid>\n    <name>",
                   (long long)t->id, (long long)t->create_time, (long long)t->userid);
    vs_page_esc(p, t->name);
    vs_page_printf(p,
                   "</name>\n    <url></url>\n    <type>0</type>\n    <country></country>\n"
                   "    <total_credit>%f</total_credit>\n    <expavg_credit>%f</expavg_credit>\n"
                   "    <expavg_time>0</expavg_time>\n</team>\n",
                   t->total_credit, t->expavg_credit);
    return 0;
}

int vs_acct__team_lookup(struct acct_req *r)
{
    char fmt[16], id_s[24], ids[1024], name[ACCT_NAME_MAX + 1];
    int status = 200;
    if (vs_acct__arg(r, "format", fmt, sizeof(fmt), &status) ||
        vs_acct__arg(r, "team_id", id_s, sizeof(id_s), &status) ||
        vs_acct__arg(r, "team_ids", ids, sizeof(ids), &status) ||
        vs_acct__arg(r, "team_name", name, sizeof(name), &status))
        return status;
    struct vs_team t;
    char *end;
    if (id_s[0]) {
        long long id = strtoll(id_s, &end, 10);
        if (*end || id <= 0 || vs_store_team_get(r->a->st, id, &t) != 0)
            return vs_acct__error(r, ACCT_ERR_NOT_FOUND, NULL);
        vs_acct__xml_head(r);
        return team_xml(&r->p, &t) == 0 ? 200 : 500;
    }
    if (!ids[0] && strcmp(fmt, "xml") != 0)
        return 404; /* the web site's search page is not served here */
    vs_acct__xml_head(r);
    vs_page_printf(&r->p, "<teams>\n");
    if (ids[0]) {
        int total = 0;
        for (const char *p = ids; *p && total < 100;) {
            long long id = strtoll(p, &end, 10);
            if (end != p && id > 0 && vs_store_team_get(r->a->st, id, &t) == 0) {
                team_xml(&r->p, &t);
                total++;
            }
            p = strchr(p, ',');
            if (!p)
                break;
            p++;
        }
    } else if (vs_store_teams_find(r->a->st, name, 100, team_xml, &r->p) != 0) {
        return vs_acct__error(r, ACCT_ERR_DB, NULL);
    }
    vs_page_printf(&r->p, "</teams>\n");
    return 200;
}

int vs_acct__create_team(struct acct_req *r)
{
    char key[VS_AUTH_MAX], name[ACCT_NAME_MAX + 1], desc[VS_NAME_MAX];
    int status = 200;
    struct vs_user u;
    if (vs_acct__arg(r, "account_key", key, sizeof(key), &status) ||
        vs_acct__arg(r, "name", name, sizeof(name), &status) ||
        vs_acct__arg(r, "description", desc, sizeof(desc), &status) ||
        vs_acct__user_by_key(r, key, &u, &status))
        return status;
    vs_user_cleanup(&u);
    if (r->a->cfg.disable_team_creation)
        return vs_acct__error(r, ACCT_ERR_GENERIC, "team creation disabled");
    const char *why = vs_acct__bad_name(name, ACCT_NAME_MAX);
    if (!why && desc[0] && vs_acct__bad_name(desc, sizeof(desc) - 1))
        why = "the description may not contain control characters or HTML tags";
    if (why)
        return vs_acct__error(r, ACCT_ERR_GENERIC, why);
    struct vs_team t;
    memset(&t, 0, sizeof(t));
    t.userid = u.id;
    t.create_time = r->now;
    int rc = vs_strlcpy(t.name, name, sizeof(t.name)) |
             vs_strlcpy(t.description, desc, sizeof(t.description));
    rc = rc ? VS_ELIMIT : vs_store_team_add(r->a->st, &t);
    if (rc == 0)
        rc = vs_store_user_set_team(r->a->st, u.id, t.id);
    if (rc != 0)
        return vs_acct__error(r, rc == VS_EEXISTS ? ACCT_ERR_NOT_UNIQUE : ACCT_ERR_DB,
                              rc == VS_EEXISTS ? "could not create team" : NULL);
    VS_LOG(r->a->log, VS_LOG_INFO, "account: user %lld created team %lld", (long long)u.id,
           (long long)t.id);
    vs_acct__xml_head(r);
    vs_page_printf(&r->p,
                   "<create_team_reply>\n    <success/>\n    <team_id>%lld</team_id>\n"
                   "</create_team_reply>\n",
                   (long long)t.id);
    return 200;
}
