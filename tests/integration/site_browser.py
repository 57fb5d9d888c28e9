#!/usr/bin/env python3
"""The volunteers' web site in headless Chromium, as a person uses it
(test_site_chromium.sh). Two phases, in one running Chromium (cookies kept):

  site_browser.py signup CDP_PORT URL OUTDIR EMAIL NAME PASSWORD
      the master page, its "Join" link, the sign-up form: prints the
      account key shown on the account page
  site_browser.py after CDP_PORT URL OUTDIR EMAIL NAME PASSWORD TEAM
      log out, log in, the account page with the host and its results, a
      team joined, the preferences changed (50% of the CPUs), a form
      without its CSRF token refused, log out

Screenshots go to OUTDIR/*.png. Any failure raises (exit status 1)."""
import sys

from cdp import Page


def check(cond, what):
    if not cond:
        raise SystemExit("FAIL: " + what)


def signup(pg, url, out, email, name, pw):
    pg.goto(url)
    pg.screenshot(f"{out}/1_master.png")
    check(pg.js("!!document.querySelector('link[rel=boinc_scheduler]')"), "master page lost its scheduler link")
    pg.click_and_wait("a[href='signup.php']")
    check(pg.url().endswith("signup.php"), "Join link: " + pg.url())
    pg.fill("f-email_addr", email)
    pg.fill("f-user_name", name)
    pg.fill("f-passwd", pw)
    pg.fill("f-passwd2", pw + "x")  # a typo first: refused, nothing made
    pg.click_and_wait("#go")
    check("differ" in (pg.text("#msg") or ""), "mismatched passwords accepted: " + pg.html()[:500])
    pg.screenshot(f"{out}/2_signup_error.png")
    pg.fill("f-passwd", pw)
    pg.fill("f-passwd2", pw)
    pg.click_and_wait("#go")
    check(pg.url().endswith("home.php"), "after sign-up: " + pg.url())
    check(pg.text("#who") == name, "not logged in as the new account: %r" % pg.text("#who"))
    key = pg.text("#key")
    check(key and len(key) == 32, "no account key on the account page")
    pg.screenshot(f"{out}/3_account_new.png")
    print(key)


def after(pg, url, out, email, name, pw, team):
    pg.goto(url + "home.php")
    pg.click_and_wait("header button[type=submit]")  # log out
    check(pg.text("#who") is None and pg.js("!!document.querySelector(\"a[href='login.php']\")"), "log out")
    pg.goto(url + "home.php")
    check(pg.url().endswith("login.php"), "account page without a session: " + pg.url())
    pg.fill("f-email_addr", email)
    pg.fill("f-passwd", "wrong password")
    pg.click_and_wait("#go")
    check("Wrong" in (pg.text("#msg") or ""), "a wrong password logged in")
    pg.fill("f-passwd", pw)
    pg.click_and_wait("#go")
    check(pg.url().endswith("home.php") and pg.text("#who") == name, "log in: " + pg.url())
    nhosts = pg.js("document.querySelectorAll('#hosts tr').length - 1")
    nres = pg.js("document.querySelectorAll('#results tr').length - 1")
    ndone = pg.js("[...document.querySelectorAll('#results td')].filter(t => t.textContent == 'success').length")
    check(nhosts >= 1, "no host on the account page")
    check(nres >= 1 and ndone >= 1, f"results on the account page: {nres}, {ndone} successful")
    pg.screenshot(f"{out}/4_account_worked.png")
    # A team: find it, join it, see oneself among its members.
    pg.click_and_wait("header a[href='teams.php']")
    pg.screenshot(f"{out}/5_teams.png")
    links = pg.js("[...document.querySelectorAll('#teams a')].map(a => a.textContent)")
    check(team in links, f"team {team!r} not listed: {links}")
    pg.js(f"[...document.querySelectorAll('#teams a')].find(a => a.textContent == {team!r}).id = 'the-team'")
    pg.click_and_wait("#the-team")
    pg.click_and_wait("#go-join")
    members = pg.js("[...document.querySelectorAll('#members li')].map(l => l.textContent)")
    check(name in members, f"not a member after joining: {members}")
    check(pg.js("!!document.getElementById('go-leave')"), "no leave button for a member")
    pg.screenshot(f"{out}/6_team_joined.png")
    # Preferences: half of the CPUs, for the default set.
    pg.click_and_wait("header a[href='prefs.php']")
    pg.fill("f-max_ncpus_pct", "50")
    pg.fill("f-work_buf_min_days", "0")
    pg.fill("f-work_buf_additional_days", "0.001")
    pg.click_and_wait("#go")
    check("Saved" in (pg.text("#msg") or ""), "prefs not saved: " + (pg.text("#msg") or pg.html()[:300]))
    check(pg.js("document.getElementById('f-max_ncpus_pct').value") == "50", "the form does not show 50")
    pg.screenshot(f"{out}/7_prefs_saved.png")
    # A form without its CSRF token is refused, and changes nothing.
    pg.fill("f-max_ncpus_pct", "25")
    pg.js("document.querySelector('main form input[name=csrf]').remove()")
    pg.click_and_wait("#go")
    check(pg.js("document.title").startswith("Form refused"), "a form without CSRF token: " + pg.js("document.title"))
    pg.screenshot(f"{out}/8_csrf_refused.png")
    pg.goto(url + "prefs.php")
    check(pg.js("document.getElementById('f-max_ncpus_pct').value") == "50", "the refused form changed the prefs")
    pg.click_and_wait("header button[type=submit]")
    pg.goto(url + "home.php")
    check(pg.url().endswith("login.php"), "still logged in after log out")
    pg.screenshot(f"{out}/9_logged_out.png")
    print("ok")


def main():
    phase, port, url, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    pg = Page(port)
    if phase == "signup":
        signup(pg, url, out, *sys.argv[5:8])
    else:
        after(pg, url, out, *sys.argv[5:9])


main()
