/*
 * Credit on the volunteers' web site (issue 39; docs/volunteers.md): the
 * leaderboards of users, teams and computers by total or recent average
 * credit, paged, and a computer's page with its credit (site.c has the
 * frame). Names are escaped; a computer is shown without its owner's name
 * or its own (as BOINC's lists do for owners who keep their computers
 * private), except to its owner.
 */
#include <stdio.h>
#include <string.h>

#include "server/acct_int.h"
#include "volsched/store_accounts.h"
#include "volsched/store_credit.h"
#include "volsched/str.h"

/* BOINC-COMPAT: top_*.php show 20 rows a page; offsets past 10000 are
 * refused so that a page never asks the store to sort past it. */
#define TOP_PAGE       20
#define TOP_MAX_OFFSET 10000

struct top {
    struct site *s;
    enum vs_credit_owner owner;
    int64_t rank;
    int n;
};

static void credit_cells(struct vs_page *p, const struct vs_stats_row *r)
{
    vs_page_printf(p, "<td class=\"num\">%.2f</td><td class=\"num\">%.2f</td>", r->expavg,
                   r->total);
}

static int top_row(void *ctx, const struct vs_stats_row *r)
{
    struct top *t = ctx;
    struct vs_page *p = &t->s->r->p;
    t->n++;
    vs_page_printf(p, "<tr><td>%lld</td><td>", (long long)++t->rank);
    switch (t->owner) {
    case VS_CREDIT_USER:
        vs_page_esc(p, r->name);
        vs_page_printf(p, "</td>");
        credit_cells(p, r);
        vs_page_printf(p, "<td>");
        vs_page_esc(p, r->country[0] ? r->country : "-");
        vs_page_printf(p, "</td><td>");
        vs_page_time(p, r->create_time);
        break;
    case VS_CREDIT_TEAM:
        vs_page_printf(p, "<a href=\"team.php?id=%lld\">", (long long)r->id);
        vs_page_esc(p, r->name);
        vs_page_printf(p, "</a></td>");
        credit_cells(p, r);
        vs_page_printf(p, "<td>");
        vs_page_time(p, r->create_time);
        break;
    default:
        vs_page_printf(p, "<a href=\"show_host_detail.php?hostid=%lld\">%lld</a></td>",
                       (long long)r->id, (long long)r->id);
        credit_cells(p, r);
        vs_page_printf(p, "<td>");
        vs_page_esc(p, r->p_vendor);
        vs_page_printf(p, " ");
        vs_page_esc(p, r->p_model);
        vs_page_printf(p, "</td><td>");
        vs_page_esc(p, r->os_name);
        vs_page_printf(p, " ");
        vs_page_esc(p, r->os_version);
        break;
    }
    vs_page_printf(p, "</td></tr>\n");
    return 0;
}

static const char *const top_page[] = {"top_hosts.php", "top_users.php", "top_teams.php"};

/* The links between the lists and their two orders. */
static void top_nav(struct vs_page *p, enum vs_credit_owner owner, bool recent)
{
    static const char *const what[] = {"Computers", "Users", "Teams"};
    static const enum vs_credit_owner order[] = {VS_CREDIT_USER, VS_CREDIT_TEAM, VS_CREDIT_HOST};
    vs_page_printf(p, "<p id=\"lists\">");
    for (size_t i = 0; i < 3; i++) {
        enum vs_credit_owner o = order[i];
        if (o == owner)
            vs_page_printf(p, "<b>%s</b> ", what[o]);
        else
            vs_page_printf(p, "<a href=\"%s?sort_by=%s\">%s</a> ", top_page[o],
                           recent ? "expavg_credit" : "total_credit", what[o]);
    }
    vs_page_printf(p,
                   "&middot; by <a id=\"by-recent\" href=\"%s?sort_by=expavg_credit\">%s</a>"
                   " or <a id=\"by-total\" href=\"%s?sort_by=total_credit\">%s</a> &middot; "
                   "<a href=\"server_status.php\">Server status</a></p>\n",
                   top_page[owner], recent ? "<b>recent average</b>" : "recent average",
                   top_page[owner], recent ? "total" : "<b>total</b>");
}

static int top_list(struct acct_req *r, enum vs_credit_owner owner)
{
    struct site s;
    int st = vs_site__begin(r, &s);
    if (st != 0)
        goto out;
    struct vs_page *p = &r->p;
    char sort[24], off_s[24];
    vs_site__field(&s, "sort_by", sort, sizeof(sort));
    vs_site__field(&s, "offset", off_s, sizeof(off_s));
    int64_t offset = 0;
    bool bad =
        (sort[0] && strcmp(sort, "expavg_credit") != 0 && strcmp(sort, "total_credit") != 0) ||
        (off_s[0] &&
         (vs_parse_int64(off_s, &offset) != 0 || offset < 0 || offset > TOP_MAX_OFFSET));
    bool recent = strcmp(sort, "total_credit") != 0; /* BOINC's default: recent */
    static const char *const titles[2][3] = {
        {"Top computers by total credit", "Top users by total credit", "Top teams by total credit"},
        {"Top computers by recent average credit", "Top users by recent average credit",
         "Top teams by recent average credit"}};
    vs_site__head(&s, titles[recent][owner]);
    top_nav(p, owner, recent);
    if (bad) {
        vs_site__msg(&s, "err",
                     "Bad request: sort_by is expavg_credit or total_credit, offset a number "
                     "from 0 to 10000.");
        vs_site__tail(&s);
        st = 400;
        goto out;
    }
    vs_page_printf(p,
                   "<table class=\"t\" id=\"top\"><tr><th>Rank</th><th>%s</th>"
                   "<th>Recent average credit</th><th>Total credit</th>",
                   owner == VS_CREDIT_USER   ? "Name"
                   : owner == VS_CREDIT_TEAM ? "Team"
                                             : "Computer");
    vs_page_printf(p, "%s</tr>\n",
                   owner == VS_CREDIT_USER   ? "<th>Country</th><th>Participant since (UTC)</th>"
                   : owner == VS_CREDIT_TEAM ? "<th>Created (UTC)</th>"
                                             : "<th>CPU</th><th>Operating system</th>");
    struct top t = {.s = &s, .owner = owner, .rank = offset};
    if (vs_store_stats_top(r->a->st, owner, recent, offset, TOP_PAGE, top_row, &t) != 0)
        vs_page_printf(p, "<tr><td colspan=\"6\">store error</td></tr>\n");
    vs_page_printf(p, "</table>\n<p>");
    if (t.n == 0)
        vs_page_printf(p, "<span id=\"none\">Nobody here yet.</span> ");
    const char *by = recent ? "expavg_credit" : "total_credit";
    if (offset > 0)
        vs_page_printf(p, "<a id=\"prev\" href=\"%s?sort_by=%s&amp;offset=%lld\">Previous %d</a> ",
                       top_page[owner], by, (long long)(offset > TOP_PAGE ? offset - TOP_PAGE : 0),
                       TOP_PAGE);
    if (t.n == TOP_PAGE && offset + TOP_PAGE <= TOP_MAX_OFFSET)
        vs_page_printf(p, "<a id=\"next\" href=\"%s?sort_by=%s&amp;offset=%lld\">Next %d</a>",
                       top_page[owner], by, (long long)(offset + TOP_PAGE), TOP_PAGE);
    vs_page_printf(p, "</p>\n");
    vs_site__tail(&s);
    st = 200;
out:
    vs_site__end(&s);
    return st;
}

int vs_site__top_users(struct acct_req *r)
{
    return top_list(r, VS_CREDIT_USER);
}

int vs_site__top_teams(struct acct_req *r)
{
    return top_list(r, VS_CREDIT_TEAM);
}

int vs_site__top_hosts(struct acct_req *r)
{
    return top_list(r, VS_CREDIT_HOST);
}

int vs_site__host_detail(struct acct_req *r)
{
    struct site s;
    int st = vs_site__begin(r, &s);
    if (st != 0)
        goto out;
    struct vs_page *p = &r->p;
    char id_s[24];
    int64_t id = 0;
    vs_site__field(&s, "hostid", id_s, sizeof(id_s));
    struct vs_host h;
    memset(&h, 0, sizeof(h));
    /* Hosts of a deleted account (user 0) are not shown, as in the lists. */
    if (vs_parse_int64(id_s, &id) != 0 || id <= 0 || vs_store_host_get(r->a->st, id, &h) != 0 ||
        h.userid == 0) {
        vs_site__head(&s, "No such computer");
        vs_site__tail(&s);
        st = 404;
        goto out;
    }
    bool mine = s.in && s.user.id == h.userid;
    char title[64];
    snprintf(title, sizeof(title), "Computer %lld", (long long)h.id);
    vs_site__head(&s, title);
    vs_page_printf(p, "<table class=\"t\" id=\"host\">");
    if (mine) {
        vs_page_printf(p, "<tr><td>Name</td><td>");
        vs_page_esc(p, h.domain_name[0] ? h.domain_name : "-");
        vs_page_printf(p, "</td></tr>\n");
    }
    vs_page_printf(p,
                   "<tr><td>Total credit</td><td id=\"total\">%.2f</td></tr>\n"
                   "<tr><td>Recent average credit</td><td id=\"recent\">%.2f</td></tr>\n"
                   "<tr><td>CPU</td><td>",
                   h.total_credit, h.expavg_credit);
    vs_page_esc(p, h.p_vendor);
    vs_page_printf(p, " ");
    vs_page_esc(p, h.p_model);
    vs_page_printf(p,
                   " (%d processors, %.2f GFLOPS each)</td></tr>\n<tr><td>Operating "
                   "system</td><td>",
                   h.p_ncpus, h.p_fpops / 1e9);
    vs_page_esc(p, h.os_name);
    vs_page_printf(p, " ");
    vs_page_esc(p, h.os_version);
    vs_page_printf(p, "</td></tr>\n<tr><td>Created (UTC)</td><td>");
    vs_page_time(p, h.create_time);
    vs_page_printf(p, "</td></tr>\n<tr><td>Last contact (UTC)</td><td>");
    vs_page_time(p, h.rpc_time);
    vs_page_printf(p, "</td></tr>\n</table>\n<p><a href=\"top_hosts.php\">Top computers</a></p>\n");
    vs_site__tail(&s);
    st = 200;
out:
    vs_site__end(&s);
    return st;
}
