/*
 * The volunteer's account page (its key, hosts and recent results), a
 * host's venue, and deleting the account (site.c has the frame).
 */
#include <stdio.h>
#include <string.h>

#include "server/acct_int.h"
#include "volsched/log.h"
#include "volsched/md5.h"
#include "volsched/ops_status.h"
#include "volsched/sched.h"
#include "volsched/store_accounts.h"
#include "volsched/str.h"

static const char *const venues[] = {"", "home", "work", "school"};

static int host_row(void *ctx, const struct vs_host *h)
{
    struct site *s = ctx;
    struct vs_page *p = &s->r->p;
    vs_page_printf(p, "<tr><td><a href=\"show_host_detail.php?hostid=%lld\">%lld</a></td><td>",
                   (long long)h->id, (long long)h->id);
    vs_page_esc(p, h->domain_name[0] ? h->domain_name : "-");
    vs_page_printf(p, "</td><td>%d</td><td class=\"num\">%.2f</td><td class=\"num\">%.2f</td><td>",
                   h->p_ncpus, h->total_credit, h->expavg_credit);
    vs_page_esc(p, h->os_name);
    vs_page_printf(p, "</td><td>");
    vs_page_time(p, h->rpc_time);
    vs_page_printf(p,
                   "</td><td><form method=\"post\" action=\"host_venue.php\">"
                   "<input type=\"hidden\" name=\"hostid\" value=\"%lld\">"
                   "<input type=\"hidden\" name=\"csrf\" value=\"%s\">"
                   "<select name=\"venue\" id=\"venue-%lld\">",
                   (long long)h->id, s->csrf, (long long)h->id);
    for (size_t i = 0; i < sizeof(venues) / sizeof(venues[0]); i++)
        vs_page_printf(p, "<option value=\"%s\"%s>%s</option>", venues[i],
                       strcmp(h->venue, venues[i]) == 0 ? " selected" : "",
                       venues[i][0] ? venues[i] : "(default)");
    vs_page_printf(p, "</select> <button type=\"submit\">Set</button></form></td></tr>\n");
    return 0;
}

static int result_row(void *ctx, const struct vs_result *res)
{
    struct vs_page *p = ctx;
    int st = res->server_state, o = res->outcome;
    vs_page_printf(p, "<tr><td>");
    vs_page_esc(p, res->name);
    vs_page_printf(p, "</td><td>%lld</td><td>%s</td><td>%s</td><td>", (long long)res->hostid,
                   st >= 0 && st < 6 && vs_ops_state_names[st][0] ? vs_ops_state_names[st] : "?",
                   st == VS_RESULT_SERVER_STATE_OVER && o >= 0 && o < 8 ? vs_ops_outcome_names[o]
                                                                        : "-");
    vs_page_time(p, res->sent_time);
    vs_page_printf(p, "</td><td>");
    if (res->received_time)
        vs_page_time(p, res->received_time);
    else
        vs_page_printf(p, "-");
    vs_page_printf(p, "</td><td>%.0f</td></tr>\n", res->elapsed_time);
    return 0;
}

int vs_site__home(struct acct_req *r)
{
    struct site s;
    int st = vs_site__begin_in(r, &s);
    if (st != 0)
        goto out;
    struct vs_page *p = &r->p;
    const struct vs_user *u = &s.user;
    vs_site__head(&s, "Your account");
    char msg[16];
    vs_site__field(&s, "done", msg, sizeof(msg));
    if (strcmp(msg, "venue") == 0)
        vs_site__msg(&s, "ok", "The host's venue is saved; it takes effect at its next contact.");
    vs_page_printf(p, "<table class=\"t\"><tr><td>Name</td><td id=\"name\">");
    vs_page_esc(p, u->name);
    vs_page_printf(p, "</td></tr>\n<tr><td>E-mail address</td><td>");
    vs_page_esc(p, u->email_addr);
    vs_page_printf(p,
                   "</td></tr>\n<tr><td>Account key</td><td><code id=\"key\">%s</code></td>"
                   "</tr>\n<tr><td>Team</td><td>",
                   u->authenticator);
    struct vs_team t;
    if (u->teamid && vs_store_team_get(r->a->st, u->teamid, &t) == 0) {
        vs_page_printf(p, "<a id=\"team\" href=\"team.php?id=%lld\">", (long long)t.id);
        vs_page_esc(p, t.name);
        vs_page_printf(p, "</a>");
    } else {
        vs_page_printf(p, "none (<a href=\"teams.php\">find one</a>)");
    }
    /* The credit figures are the store's, as the validator last granted. */
    vs_page_printf(p,
                   "</td></tr>\n<tr><td>Credit</td><td id=\"credit\">%.2f total, %.2f recent "
                   "average</td></tr>\n<tr><td>Member since</td><td>",
                   u->total_credit, u->expavg_credit);
    vs_page_time(p, u->create_time);
    vs_page_printf(p, " UTC</td></tr></table>\n<p>To attach a BOINC client by hand: <code>boinccmd "
                      "--project_attach ");
    vs_page_esc(p, r->a->cfg.master_url);
    vs_page_printf(p,
                   " %s</code>, or the Manager's &ldquo;Add project&rdquo; with this "
                   "site's address and your e-mail and password.</p>\n",
                   u->authenticator);
    vs_page_printf(p, "<h2>Your computers</h2>\n<table class=\"t\" id=\"hosts\"><tr><th>Host</th>"
                      "<th>Name</th><th>CPUs</th><th>Total credit</th><th>Recent average</th>"
                      "<th>OS</th><th>Last contact (UTC)</th>"
                      "<th>Venue</th></tr>\n");
    if (vs_store_user_hosts(r->a->st, u->id, 100, host_row, &s) != 0)
        vs_page_printf(p, "<tr><td colspan=\"8\">store error</td></tr>\n");
    vs_page_printf(p, "</table>\n<h2>Recent tasks</h2>\n<table class=\"t\" id=\"results\"><tr>"
                      "<th>Task</th><th>Host</th><th>State</th><th>Outcome</th>"
                      "<th>Sent (UTC)</th><th>Returned (UTC)</th><th>Run time (s)</th></tr>\n");
    if (vs_store_user_results(r->a->st, u->id, 50, result_row, p) != 0)
        vs_page_printf(p, "<tr><td colspan=\"7\">store error</td></tr>\n");
    vs_page_printf(p, "</table>\n<p><a href=\"prefs.php\">Computing preferences</a>%s</p>\n",
                   r->a->cfg.enable_delete_account
                       ? " &middot; <a href=\"delete.php\" id=\"delete\">Delete this account</a>"
                       : "");
    vs_site__tail(&s);
    st = 200;
out:
    vs_site__end(&s);
    return st;
}

int vs_site__host_venue(struct acct_req *r)
{
    struct site s;
    int st = vs_site__begin_in(r, &s);
    if (st != 0 || !r->req->form) {
        if (st == 0)
            st = vs_site__redirect(&s, "home.php");
        goto out;
    }
    char id_s[24], venue[16];
    int64_t hostid = 0;
    vs_site__field(&s, "hostid", id_s, sizeof(id_s));
    vs_site__field(&s, "venue", venue, sizeof(venue));
    bool ok = vs_parse_int64(id_s, &hostid) == 0 && hostid > 0;
    bool vok = false;
    for (size_t i = 0; i < sizeof(venues) / sizeof(venues[0]); i++)
        vok |= strcmp(venue, venues[i]) == 0;
    if (!ok || !vok || vs_store_host_set_venue(r->a->st, hostid, s.user.id, venue) != 0) {
        vs_site__head(&s, "Venue not set");
        vs_site__msg(&s, "err", "No such host of yours, or no such venue.");
        vs_site__tail(&s);
        st = 400;
        goto out;
    }
    if (r->a->sched)
        vs_sched_forget_host(r->a->sched, hostid);
    st = vs_site__redirect(&s, "home.php?done=venue");
out:
    vs_site__end(&s);
    return st;
}

int vs_site__delete(struct acct_req *r)
{
    struct site s;
    int st = vs_site__begin_in(r, &s);
    if (st != 0)
        goto out;
    const char *err = NULL;
    if (!r->a->cfg.enable_delete_account) {
        /* BOINC-COMPAT: <enable_delete_account> 0 or absent: no deletion */
        if (r->req->form)
            VS_LOG(r->a->log, VS_LOG_WARN,
                   "site: user %lld asked to delete its account: refused, "
                   "<enable_delete_account> is 0",
                   (long long)s.user.id);
        vs_site__head(&s, "Delete your account");
        vs_site__msg(&s, "err",
                     "This project does not delete accounts from its web site: ask its "
                     "administrators.");
        vs_site__tail(&s);
        st = 403;
        goto out;
    }
    if (r->req->form) {
        char pw[VS_NAME_MAX], hash[VS_MD5_HEX_LEN + 1];
        vs_site__field(&s, "passwd", pw, sizeof(pw));
        bool good = vs_site__passwd_hash(pw, s.user.email_addr, hash) == 0 &&
                    vs_acct__lookup_hash_ok(&s.user, hash);
        explicit_bzero(pw, sizeof(pw));
        if (!good) {
            vs_acct__failed(r);
            err = "Wrong password: the account is not deleted.";
        } else if (vs_store_user_delete(r->a->st, s.user.id) != 0) {
            err = "Server error: the account is not deleted.";
        } else {
            VS_LOG(r->a->log, VS_LOG_INFO, "site: user %lld deleted its account",
                   (long long)s.user.id);
            if (r->a->sched)
                vs_sched_forget_user(r->a->sched, s.user.authenticator);
            vs_user_cleanup(&s.user);
            s.in = false;
            st = vs_site__set_session(&s, 0);
            vs_site__head(&s, "Account deleted");
            vs_site__msg(&s, "ok",
                         "Your account is deleted: its name, e-mail address, password, "
                         "preferences and computers' names are gone; the results your computers "
                         "returned stay with the project's science.");
            vs_site__tail(&s);
            st = st == 0 ? 200 : 500;
            goto out;
        }
    }
    vs_site__head(&s, "Delete your account");
    if (err)
        vs_site__msg(&s, "err", err);
    vs_page_printf(&r->p, "<p>This cannot be undone. Your clients attached with this account will "
                          "get no more work.</p>\n<form method=\"post\" action=\"delete.php\">\n");
    vs_site__csrf_input(&s);
    vs_page_printf(&r->p, "<label><span>Your password</span><input type=\"password\" "
                          "name=\"passwd\" id=\"f-passwd\"></label>\n<button type=\"submit\" "
                          "id=\"go\">Delete my account</button></form>\n");
    vs_site__tail(&s);
    st = err ? 400 : 200;
out:
    vs_site__end(&s);
    return st;
}
