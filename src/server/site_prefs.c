/*
 * Computing preferences on the web site: BOINC's global preferences, a
 * set without venue and one per venue (home, work, school), stored as the
 * account's global_prefs XML with a new <mod_time>, which the scheduler
 * sends to the account's clients at their next RPC (h_user.c: newer
 * mod_time wins). Saving replaces the elements the form shows in the set
 * it edits and the <mod_time>, and keeps every other element as it was
 * (the other sets, what an account manager or a client set: day_prefs,
 * network limits, names unknown here, other venues).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/acct_int.h"
#include "volsched/log.h"
#include "volsched/proto.h"
#include "volsched/sched.h"
#include "volsched/store_accounts.h"
#include "volsched/str.h"
#include "volsched/xml.h"

/* BOINC-COMPAT: lib/prefs.cpp element names, bounds, and the client's
 * defaults (shown for a set that has no value). */
struct pref_def {
    const char *name;
    const char *label;
    bool is_bool;
    double min, max, def;
};
static const struct pref_def defs[] = {
    {"run_on_batteries", "Compute while on batteries", true, 0, 1, 1},
    {"run_if_user_active", "Compute while the computer is in use", true, 0, 1, 1},
    {"max_ncpus_pct", "Use at most this % of the CPUs", false, 1, 100, 100},
    {"cpu_usage_limit", "Use at most this % of CPU time", false, 1, 100, 100},
    {"disk_max_used_gb", "Use at most this many GB of disk (0: no limit)", false, 0, 1e6, 0},
    {"disk_max_used_pct", "Use at most this % of the disk", false, 0, 100, 90},
    {"disk_min_free_gb", "Leave at least this many GB free", false, 0, 1e6, 0.1},
    {"work_buf_min_days", "Store at least this many days of work", false, 0, 10, 0.1},
    {"work_buf_additional_days", "Store up to this many more days", false, 0, 10, 0.5},
};
#define NDEFS (sizeof(defs) / sizeof(defs[0]))

static const char *const sets[] = {"", "home", "work", "school"};
#define NSETS 4

struct pref_set {
    bool present;
    bool has[NDEFS];
    double v[NDEFS];
};

/* Reads the element values of defs among n's children into ps. */
static void read_set(const struct vs_xml_node *n, struct pref_set *ps)
{
    ps->present = true;
    for (size_t i = 0; i < NDEFS; i++) {
        double v;
        const struct vs_xml_node *c = vs_xml_child(n, defs[i].name);
        if (c && vs_xml_get_double(c, &v) == 0) {
            ps->has[i] = true;
            ps->v[i] = v;
        }
    }
}

/* The account's prefs text parsed into the four sets, and its mod_time. */
static void parse_prefs(const char *text, struct pref_set out[NSETS], double *out_mod)
{
    memset(out, 0, NSETS * sizeof(*out));
    *out_mod = 0;
    if (!text)
        return;
    struct vs_arena a;
    vs_arena_init(&a, 16 * 1024);
    struct vs_xml_doc doc;
    if (vs_xml_parse(text, strlen(text), NULL, 0, &a, &doc, NULL) == 0) {
        double m;
        if (vs_xml_get_double(vs_xml_child(doc.root, "mod_time"), &m) == 0)
            *out_mod = m;
        read_set(doc.root, &out[0]);
        for (const struct vs_xml_node *v = vs_xml_child(doc.root, "venue"); v;
             v = vs_xml_next_same(v)) {
            const char *vn = vs_xml_attr(v, "name");
            for (int k = 1; vn && k < NSETS; k++)
                if (strcmp(vn, sets[k]) == 0)
                    read_set(v, &out[k]);
        }
    }
    vs_arena_cleanup(&a);
}

static void write_set(struct vs_buf *b, const struct pref_set *ps, int *rc)
{
    for (size_t i = 0; i < NDEFS && *rc == 0; i++)
        if (ps->has[i])
            *rc = vs_buf_printf(b, defs[i].is_bool ? "<%s>%.0f</%s>\n" : "<%s>%g</%s>\n",
                                defs[i].name, ps->v[i], defs[i].name);
}

/* Whether an element of this name is one the form edits. */
static bool edited(const char *name)
{
    for (size_t i = 0; i < NDEFS; i++)
        if (strcmp(name, defs[i].name) == 0)
            return true;
    return false;
}

/* n's children into b verbatim, but the ones the form edits (and with
 * drop_mod, <mod_time>). */
static void copy_children(struct vs_buf *b, const struct vs_xml_doc *doc,
                          const struct vs_xml_node *n, bool drop_mod, int *rc)
{
    for (const struct vs_xml_node *c = n->child; c && *rc == 0; c = c->next) {
        if (edited(c->name) || (drop_mod && strcmp(c->name, "mod_time") == 0))
            continue;
        size_t len;
        const char *raw = vs_xml_raw(doc, c, &len);
        *rc = raw ? vs_buf_append(b, raw, len) : 0;
        *rc = *rc ? *rc : vs_buf_puts(b, "\n");
    }
}

/*
 * The account's prefs text old with set k replaced by in and mod_time mod
 * (heap; NULL on error). Everything the form does not edit stays as it
 * was: the other sets, elements an account manager or the client's
 * Manager set (day_prefs, network limits, names unknown here), unknown
 * venues. A text that is not XML is replaced (*out_dropped set).
 */
static char *write_prefs(const char *old, int k, const struct pref_set *in, double mod,
                         bool *out_dropped)
{
    struct vs_arena a;
    vs_arena_init(&a, 16 * 1024);
    struct vs_xml_doc doc;
    bool have = old && old[0] && vs_xml_parse(old, strlen(old), NULL, 0, &a, &doc, NULL) == 0;
    *out_dropped = old && old[0] && !have;
    struct vs_buf b;
    vs_buf_init(&b, VS_PROTO_MAX_PREFS);
    int rc = vs_buf_printf(&b, "<global_preferences>\n<mod_time>%.0f</mod_time>\n", mod);
    if (k == 0)
        write_set(&b, in, &rc);
    bool done = k == 0;
    for (const struct vs_xml_node *c = have ? doc.root->child : NULL; c && rc == 0; c = c->next) {
        if (strcmp(c->name, "mod_time") == 0 || (k == 0 && edited(c->name)))
            continue;
        const char *vn = strcmp(c->name, "venue") == 0 ? vs_xml_attr(c, "name") : NULL;
        if (!done && vn && strcmp(vn, sets[k]) == 0) {
            rc = vs_buf_printf(&b, "<venue name=\"%s\">\n", sets[k]);
            write_set(&b, in, &rc);
            copy_children(&b, &doc, c, false, &rc);
            rc = rc ? rc : vs_buf_puts(&b, "</venue>\n");
            done = true;
            continue;
        }
        size_t len;
        const char *raw = vs_xml_raw(&doc, c, &len);
        rc = rc ? rc : raw ? vs_buf_append(&b, raw, len) : 0;
        rc = rc ? rc : vs_buf_puts(&b, "\n");
    }
    if (!done && rc == 0) {
        rc = vs_buf_printf(&b, "<venue name=\"%s\">\n", sets[k]);
        write_set(&b, in, &rc);
        rc = rc ? rc : vs_buf_puts(&b, "</venue>\n");
    }
    rc = rc ? rc : vs_buf_puts(&b, "</global_preferences>\n");
    size_t n;
    char *s = rc == 0 ? vs_buf_take(&b, &n) : NULL;
    vs_buf_cleanup(&b);
    vs_arena_cleanup(&a);
    return s;
}

/* The set the form posts into ps; NULL, or why it cannot be taken. */
static const char *read_form(struct site *s, struct pref_set *ps)
{
    memset(ps, 0, sizeof(*ps));
    ps->present = true;
    for (size_t i = 0; i < NDEFS; i++) {
        char v[64];
        vs_site__field(s, defs[i].name, v, sizeof(v));
        if (defs[i].is_bool) {
            ps->has[i] = true;
            ps->v[i] = v[0] ? 1 : 0; /* a checkbox: absent when off */
            continue;
        }
        double x;
        if (vs_parse_double(v, &x) != 0 || x < defs[i].min || x > defs[i].max)
            return defs[i].label;
        ps->has[i] = true;
        ps->v[i] = x;
    }
    return NULL;
}

static void form(struct site *s, int k, const struct pref_set *ps, const char *err, bool saved)
{
    struct vs_page *p = &s->r->p;
    vs_site__head(s, "Computing preferences");
    if (err)
        vs_site__msg(s, "err", err);
    if (saved)
        vs_site__msg(s, "ok",
                     "Saved: your computers get them at their next contact with the "
                     "project.");
    vs_page_printf(p, "<p>Sets: ");
    for (int i = 0; i < NSETS; i++) {
        const char *shown = sets[i][0] ? sets[i] : "default";
        if (i == k)
            vs_page_printf(p, "<b>%s</b> ", shown);
        else
            vs_page_printf(p, "<a href=\"prefs.php?venue=%s\">%s</a> ", sets[i], shown);
    }
    vs_page_printf(p,
                   "</p>\n<p>A computer whose venue is home, work or school uses that set "
                   "when it has one, else the default set.</p>\n"
                   "<form method=\"post\" action=\"prefs.php\">\n"
                   "<input type=\"hidden\" name=\"venue\" value=\"%s\">\n",
                   sets[k]);
    vs_site__csrf_input(s);
    for (size_t i = 0; i < NDEFS; i++) {
        double v = ps->has[i] ? ps->v[i] : defs[i].def;
        if (defs[i].is_bool)
            vs_page_printf(p,
                           "<label><span>%s</span><input type=\"checkbox\" name=\"%s\" "
                           "id=\"f-%s\" value=\"1\"%s></label>\n",
                           defs[i].label, defs[i].name, defs[i].name, v != 0 ? " checked" : "");
        else
            vs_page_printf(p,
                           "<label><span>%s</span><input type=\"text\" name=\"%s\" id=\"f-%s\" "
                           "value=\"%g\"></label>\n",
                           defs[i].label, defs[i].name, defs[i].name, v);
    }
    vs_page_printf(p, "<button type=\"submit\" id=\"go\">Save the %s set</button></form>\n",
                   sets[k][0] ? sets[k] : "default");
    vs_site__tail(s);
}

int vs_site__prefs(struct acct_req *r)
{
    struct site s;
    int st = vs_site__begin_in(r, &s);
    if (st != 0)
        goto out;
    char venue[16];
    vs_site__field(&s, "venue", venue, sizeof(venue));
    int k = -1;
    for (int i = 0; i < NSETS; i++)
        if (strcmp(venue, sets[i]) == 0)
            k = i;
    struct pref_set all[NSETS];
    double mod;
    parse_prefs(s.user.global_prefs, all, &mod);
    if (k < 0) {
        form(&s, 0, &all[0], "No such venue.", false);
        st = 400;
        goto out;
    }
    if (!r->req->form) {
        char done[8];
        vs_site__field(&s, "done", done, sizeof(done));
        form(&s, k, &all[k], NULL, done[0] != '\0');
        st = 200;
        goto out;
    }
    struct pref_set in;
    const char *bad = read_form(&s, &in);
    if (bad) {
        char msg[160];
        snprintf(msg, sizeof(msg), "Not saved: \"%s\" is not a number in its range.", bad);
        form(&s, k, &in, msg, false);
        st = 400;
        goto out;
    }
    /* Newer than any the clients hold: the scheduler sends the newest. */
    double now = (double)r->now;
    bool dropped = false;
    char *xml = write_prefs(s.user.global_prefs, k, &in, mod >= now ? mod + 1 : now, &dropped);
    if (dropped)
        VS_LOG(r->a->log, VS_LOG_WARN,
               "site: user %lld: its stored preferences were not XML; replaced by the form's",
               (long long)s.user.id);
    int rc = VS_ENOMEM;
    if (xml) {
        vs_free(s.user.global_prefs);
        s.user.global_prefs = xml;
        rc = vs_store_user_update(r->a->st, &s.user);
    }
    if (rc != 0) {
        form(&s, k, &in, "Not saved: server error.", false);
        st = 500;
        goto out;
    }
    if (r->a->sched)
        vs_sched_forget_user(r->a->sched, s.user.authenticator);
    VS_LOG(r->a->log, VS_LOG_INFO, "site: user %lld saved its %s preferences", (long long)s.user.id,
           sets[k][0] ? sets[k] : "default");
    char rel[64];
    snprintf(rel, sizeof(rel), "prefs.php?venue=%s&done=1", sets[k]);
    st = vs_site__redirect(&s, rel);
out:
    vs_site__end(&s);
    return st;
}
