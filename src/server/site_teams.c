/*
 * Teams on the web site: the list (with a search), a team's page with its
 * members, and creating, joining and leaving one (site.c has the frame).
 */
#include <stdio.h>
#include <string.h>

#include "server/acct_int.h"
#include "volsched/log.h"
#include "volsched/store_accounts.h"
#include "volsched/str.h"

static int team_li(void *ctx, const struct vs_team *t)
{
    struct vs_page *p = ctx;
    vs_page_printf(p, "<tr><td><a href=\"team.php?id=%lld\">", (long long)t->id);
    vs_page_esc(p, t->name);
    vs_page_printf(p, "</a></td><td>%d</td><td>%.2f</td></tr>\n", t->nusers, t->total_credit);
    return 0;
}

int vs_site__teams(struct acct_req *r)
{
    struct site s;
    int st = vs_site__begin(r, &s);
    if (st != 0)
        goto out;
    struct vs_page *p = &r->p;
    char q[VS_NAME_MAX], err[8];
    vs_site__field(&s, "q", q, sizeof(q));
    vs_site__field(&s, "err", err, sizeof(err));
    vs_site__head(&s, "Teams");
    if (err[0])
        vs_site__msg(&s, "err",
                     "Team not created: its name is taken, or not allowed "
                     "(no HTML, no control characters, 1 to 64 bytes).");
    vs_page_printf(p, "<form method=\"get\" action=\"teams.php\"><input type=\"text\" name=\"q\" "
                      "value=\"");
    vs_page_esc(p, q);
    vs_page_printf(p, "\"> <button type=\"submit\">Search</button></form>\n"
                      "<table class=\"t\" id=\"teams\"><tr><th>Team</th><th>Members</th>"
                      "<th>Credit</th></tr>\n");
    if (vs_store_teams_find(r->a->st, q, 100, team_li, p) != 0)
        vs_page_printf(p, "<tr><td colspan=\"3\">store error</td></tr>\n");
    vs_page_printf(p, "</table>\n");
    if (s.in && !r->a->cfg.disable_team_creation) {
        vs_page_printf(p, "<h2>Create a team</h2>\n<form method=\"post\" "
                          "action=\"team_create.php\">\n");
        vs_site__csrf_input(&s);
        vs_page_printf(p, "<label><span>Name</span><input type=\"text\" name=\"name\" "
                          "id=\"f-team-name\"></label>\n<label><span>Description</span>"
                          "<input type=\"text\" name=\"description\" id=\"f-team-desc\"></label>\n"
                          "<button type=\"submit\" id=\"go-team\">Create and join</button>"
                          "</form>\n");
    }
    vs_site__tail(&s);
out:
    vs_site__end(&s);
    return st ? st : 200;
}

static int member_li(void *ctx, const struct vs_user *u)
{
    struct vs_page *p = ctx;
    vs_page_printf(p, "<li>");
    vs_page_esc(p, u->name);
    vs_page_printf(p, "</li>\n");
    return 0;
}

/* The team of the "id" field: 0 and *out, or VS_ENOTFOUND. */
static int team_of(struct site *s, struct vs_team *out)
{
    char id_s[24];
    int64_t id = 0;
    vs_site__field(s, "id", id_s, sizeof(id_s));
    if (vs_parse_int64(id_s, &id) != 0 || id <= 0)
        return VS_ENOTFOUND;
    return vs_store_team_get(s->r->a->st, id, out);
}

int vs_site__team(struct acct_req *r)
{
    struct site s;
    int st = vs_site__begin(r, &s);
    if (st != 0)
        goto out;
    struct vs_page *p = &r->p;
    struct vs_team t;
    if (team_of(&s, &t) != 0) {
        vs_site__head(&s, "No such team");
        vs_site__tail(&s);
        st = 404;
        goto out;
    }
    vs_site__head(&s, t.name);
    vs_page_printf(p, "<p id=\"desc\">");
    vs_page_esc(p, t.description);
    vs_page_printf(p,
                   "</p>\n<p>%d members; credit: <span id=\"team-total\">%.2f</span> total, "
                   "<span id=\"team-recent\">%.2f</span> recent average.</p>\n",
                   t.nusers, t.total_credit, t.expavg_credit);
    if (s.in) {
        bool member = s.user.teamid == t.id;
        vs_page_printf(p, "<form method=\"post\" action=\"%s\">\n",
                       member ? "team_leave.php" : "team_join.php");
        vs_site__csrf_input(&s);
        vs_page_printf(p,
                       "<input type=\"hidden\" name=\"id\" value=\"%lld\">"
                       "<button type=\"submit\" id=\"go-%s\">%s</button></form>\n",
                       (long long)t.id, member ? "leave" : "join",
                       member ? "Leave this team" : "Join this team");
    }
    vs_page_printf(p, "<h2>Members</h2>\n<ul id=\"members\">\n");
    if (vs_store_team_members(r->a->st, t.id, 500, member_li, p) != 0)
        vs_page_printf(p, "<li>store error</li>\n");
    vs_page_printf(p, "</ul>\n");
    vs_site__tail(&s);
    st = 200;
out:
    vs_site__end(&s);
    return st;
}

/* The POST-only team actions: logged in, a form. 0 to go on. */
static int team_action_begin(struct acct_req *r, struct site *s)
{
    int st = vs_site__begin_in(r, s);
    if (st == 0 && !r->req->form)
        st = vs_site__redirect(s, "teams.php");
    return st;
}

int vs_site__team_create(struct acct_req *r)
{
    struct site s;
    int st = team_action_begin(r, &s);
    if (st != 0)
        goto out;
    struct vs_team t;
    memset(&t, 0, sizeof(t));
    char name[VS_NAME_MAX], desc[VS_NAME_MAX];
    vs_site__field(&s, "name", name, sizeof(name));
    vs_site__field(&s, "description", desc, sizeof(desc));
    int rc = r->a->cfg.disable_team_creation || vs_acct__bad_name(name, ACCT_NAME_MAX) ||
                     (desc[0] && vs_acct__bad_name(desc, sizeof(desc) - 1))
                 ? VS_EINVAL
                 : 0;
    rc = rc ? rc : vs_strlcpy(t.name, name, sizeof(t.name));
    rc = rc ? rc : vs_strlcpy(t.description, desc, sizeof(t.description));
    t.userid = s.user.id;
    t.create_time = r->now;
    rc = rc ? rc : vs_store_team_add(r->a->st, &t);
    rc = rc ? rc : vs_store_user_set_team(r->a->st, s.user.id, t.id);
    if (rc != 0) {
        st = vs_site__redirect(&s, "teams.php?err=1");
        goto out;
    }
    VS_LOG(r->a->log, VS_LOG_INFO, "site: user %lld created team %lld", (long long)s.user.id,
           (long long)t.id);
    char rel[48];
    snprintf(rel, sizeof(rel), "team.php?id=%lld", (long long)t.id);
    st = vs_site__redirect(&s, rel);
out:
    vs_site__end(&s);
    return st;
}

/* Join (into true) or leave the team of the form. */
static int join_or_leave(struct acct_req *r, bool into)
{
    struct site s;
    int st = team_action_begin(r, &s);
    if (st != 0)
        goto out;
    struct vs_team t;
    int rc = team_of(&s, &t);
    if (rc == 0 && (into || s.user.teamid == t.id))
        rc = vs_store_user_set_team(r->a->st, s.user.id, into ? t.id : 0);
    if (rc != 0) {
        st = vs_site__redirect(&s, "teams.php");
        goto out;
    }
    VS_LOG(r->a->log, VS_LOG_INFO, "site: user %lld %s team %lld", (long long)s.user.id,
           into ? "joined" : "left", (long long)t.id);
    char rel[48];
    snprintf(rel, sizeof(rel), "team.php?id=%lld", (long long)t.id);
    st = vs_site__redirect(&s, rel);
out:
    vs_site__end(&s);
    return st;
}

int vs_site__team_join(struct acct_req *r)
{
    return join_or_leave(r, true);
}

int vs_site__team_leave(struct acct_req *r)
{
    return join_or_leave(r, false);
}
