#!/usr/bin/env python3
"""Credit on the volunteers' web site in headless Chromium
(test_site_credit.sh):

  site_stats_browser.py CDP_PORT URL OUTDIR DB EMAIL PASSWORD

From the teams page's "Statistics" link: the users' leaderboard by recent
average and by total, page 1 and page 2 against the store's order; the
teams' and computers' lists (names as text, no computer's own name); a
computer's page; the team page's figures; then logged in, the account
page's credit and its computers' credit. Screenshots go to OUTDIR/*.png.
Any failure raises (exit status 1)."""
import sqlite3
import sys

from cdp import Page


def check(cond, what):
    if not cond:
        raise SystemExit("FAIL: " + what)


def rows(pg):
    return pg.js("[...document.querySelectorAll('#top tr')].slice(1)"
                 ".map(r => [...r.querySelectorAll('td')].map(d => d.textContent))")


def store(db, sql):
    c = sqlite3.connect(db, timeout=10)
    try:
        return c.execute(sql).fetchall()
    finally:
        c.close()


def want(db, table, col, offset, extra=""):
    name = "id" if table == "host" else "name"
    return store(db, f"SELECT id, {name}, expavg_credit, total_credit FROM {table} "
                     f"WHERE total_credit > 0 {extra} ORDER BY {col} DESC, id LIMIT 20 OFFSET {offset}")


def same(got, exp, what):
    check(len(got) == len(exp), f"{what}: {len(got)} rows, the store has {len(exp)}")
    for i, (g, e) in enumerate(zip(got, exp)):
        check(g[1] == str(e[1]), f"{what} row {i}: name {g[1]!r}, the store's {e[1]!r}")
        check(abs(float(g[2]) - e[2]) < 0.006 and abs(float(g[3]) - e[3]) < 0.006,
              f"{what} row {i}: credit {g[2]}/{g[3]}, the store's {e[2]:.2f}/{e[3]:.2f}")


def main():
    port, url, out, db, email, pw = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
    pg = Page(port)
    pg.goto(url + "teams.php")
    pg.click_and_wait("header a[href='top_users.php']")
    check(pg.js("document.title").startswith("Top users by recent average credit"), "default order: " + pg.js("document.title"))
    got = rows(pg)
    same(got, want(db, '"user"', "expavg_credit", 0), "top users by recent, page 1")
    check([r[0] for r in got] == [str(i) for i in range(1, 21)], "ranks of page 1: %r" % [r[0] for r in got])
    check(not pg.js("!!document.getElementById('prev')"), "a previous link on page 1")
    pg.screenshot(f"{out}/1_top_users_recent.png")
    pg.click_and_wait("#next")
    got = rows(pg)
    same(got, want(db, '"user"', "expavg_credit", 20), "top users by recent, page 2")
    check(got[0][0] == "21", "page 2 starts at rank " + got[0][0])
    pg.screenshot(f"{out}/2_top_users_page2.png")
    pg.click_and_wait("#by-total")
    got = rows(pg)
    same(got, want(db, '"user"', "total_credit", 0), "top users by total")
    pg.screenshot(f"{out}/3_top_users_total.png")
    # The page with bob (credit from the validator), its name as text.
    order = [r[0] for r in store(db, 'SELECT name FROM "user" WHERE total_credit > 0 ORDER BY total_credit DESC, id')]
    off = order.index("bob <b>") // 20 * 20
    pg.goto(url + f"top_users.php?sort_by=total_credit&offset={off}")
    got = rows(pg)
    same(got, want(db, '"user"', "total_credit", off), f"top users by total from {off}")
    names = [r[1] for r in got]
    check("bob <b>" in names, "the name with markup is not shown as text: %r" % names)
    check(pg.js("document.querySelectorAll('#top b').length") == 0, "a user's name made an element")
    # The last page (ranks 41 to 48) has no next link; its previous goes to 21.
    pg.goto(url + "top_users.php?sort_by=total_credit&offset=40")
    check(len(rows(pg)) == len(order) - 40, "the last page's rows")
    check(not pg.js("!!document.getElementById('next')"), "a next link on the last page")
    pg.click_and_wait("#prev")
    check(rows(pg)[0][0] == "21", "the previous link does not go to rank 21")
    # Teams, then computers (by total: the link keeps the order).
    pg.click_and_wait("#lists a[href^='top_teams.php']")
    got = rows(pg)
    same(got, want(db, "team", "total_credit", 0), "top teams by total")
    check("Crunch & <Co>" in [r[1] for r in got], "the team's name is not shown as text")
    pg.screenshot(f"{out}/4_top_teams.png")
    pg.click_and_wait("#lists a[href^='top_hosts.php']")
    got = rows(pg)
    same(got, want(db, "host", "total_credit", 0, "AND userid <> 0"), "top hosts by total")
    check("secret-host" not in pg.html(), "a computer's own name on the public list")
    pg.screenshot(f"{out}/5_top_hosts.png")
    hid = got[0][1]
    pg.click_and_wait(f"#top a[href='show_host_detail.php?hostid={hid}']")
    total = store(db, f"SELECT total_credit FROM host WHERE id = {hid}")[0][0]
    check(abs(float(pg.text("#total")) - total) < 0.006, f"host {hid} page: {pg.text('#total')}, store {total}")
    check("secret-host" not in pg.html(), "a computer's own name shown to another")
    pg.screenshot(f"{out}/6_host.png")
    # The team page.
    tid, ttotal, tavg = store(db, "SELECT id, total_credit, expavg_credit FROM team ORDER BY total_credit DESC LIMIT 1")[0]
    pg.goto(url + f"team.php?id={tid}")
    check(abs(float(pg.text("#team-total")) - ttotal) < 0.006 and abs(float(pg.text("#team-recent")) - tavg) < 0.006,
          f"team page: {pg.text('#team-total')}/{pg.text('#team-recent')}, store {ttotal}/{tavg}")
    pg.screenshot(f"{out}/7_team.png")
    # Logged in: the account page's credit and its computers'.
    pg.goto(url + "login.php")
    pg.fill("f-email_addr", email)
    pg.fill("f-passwd", pw)
    pg.click_and_wait("#go")
    check(pg.url().endswith("home.php"), "log in: " + pg.url())
    uid, utotal, uavg = store(db, f"SELECT id, total_credit, expavg_credit FROM \"user\" WHERE email_addr = '{email.lower()}'")[0]
    check(pg.text("#credit") == f"{utotal:.2f} total, {uavg:.2f} recent average", "account page credit: " + str(pg.text("#credit")))
    hosts = pg.js("[...document.querySelectorAll('#hosts tr')].slice(1).map(r => [...r.querySelectorAll('td')].map(d => d.textContent))")
    exp = store(db, f"SELECT id, total_credit FROM host WHERE userid = {uid} ORDER BY id")
    hosts.sort(key=lambda h: int(h[0]))
    check(len(hosts) == len(exp) and all(h[0] == str(e[0]) and abs(float(h[3]) - e[1]) < 0.006 for h, e in zip(hosts, exp)),
          f"account page's computers {hosts}, store {exp}")
    pg.screenshot(f"{out}/8_account.png")
    pg.goto(url + f"show_host_detail.php?hostid={exp[0][0]}")
    check("mine-" in pg.html(), "the owner does not see its computer's name")
    pg.screenshot(f"{out}/9_own_host.png")
    print("ok")


main()
