/*
 * The scheduler's account questions (sched_int.h): weak account keys, and
 * which global preferences go to the client (the account's, set on the web
 * site or by an account manager, when newer than the client's), and the
 * cross-project id a client brings from the volunteer's other projects.
 */
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/sched_int.h"
#include "volsched/log.h"
#include "volsched/md5.h"
#include "volsched/store_accounts.h"

double vs_sched__prefs_mod_time(const char *prefs)
{
    const char *m = prefs ? strstr(prefs, "<mod_time>") : NULL;
    if (!m)
        return 0;
    char *end;
    double v = strtod(m + 10, &end);
    return end != m + 10 && v > 0 ? v : 0;
}

int vs_sched__weak_auth(struct vs_store *st, const char *auth, struct vs_user *out)
{
    /* BOINC-COMPAT: html/inc/user.inc weak_auth(), "ID_" then the md5 of
     * the account key and the stored password hash. */
    char *end;
    long long id = strtoll(auth, &end, 10);
    if (id <= 0 || *end != '_' || strlen(end + 1) != VS_MD5_HEX_LEN)
        return VS_ENOTFOUND;
    int rc = vs_store_user_get(st, id, out);
    if (rc != 0)
        return rc;
    char buf[VS_AUTH_MAX + VS_NAME_MAX], want[VS_MD5_HEX_LEN + 1];
    int n = snprintf(buf, sizeof(buf), "%s%s", out->authenticator, out->passwd_hash);
    bool ok = n > 0 && (size_t)n < sizeof(buf) && vs_md5_hex(buf, (size_t)n, want) == 0 &&
              CRYPTO_memcmp(want, end + 1, VS_MD5_HEX_LEN) == 0;
    OPENSSL_cleanse(buf, sizeof(buf));
    if (!ok) {
        vs_user_cleanup(out);
        return VS_ENOTFOUND;
    }
    return 0;
}

bool vs_sched__prefs_reply(struct vs_store *st, const struct vs_proto_request *q,
                           const struct vs_user *user, double db_mod_time, int64_t now,
                           struct vs_arena *a, struct vs_proto_reply *r)
{
    if (db_mod_time <= 0)
        return false;
    /* BOINC-COMPAT: times in the future count as now. */
    double master = vs_sched__prefs_mod_time(q->global_prefs);
    double working = vs_sched__prefs_mod_time(q->working_global_prefs);
    if (master > (double)now)
        master = (double)now;
    if (working > (double)now)
        working = (double)now;
    if (db_mod_time > (double)now)
        db_mod_time = (double)now;
    if (!(db_mod_time > master && db_mod_time > working))
        return false;
    const char *text = user->global_prefs;
    struct vs_user u;
    memset(&u, 0, sizeof(u));
    if (!text && vs_store_user_get(st, user->id, &u) == 0)
        text = u.global_prefs;
    if (text)
        r->global_prefs = vs_arena_strndup(a, text, strlen(text));
    vs_user_cleanup(&u);
    return r->global_prefs != NULL;
}

void vs_sched__email_hash(const struct vs_user *u, char out[VS_MD5_HEX_LEN + 1])
{
    if (vs_md5_hex(u->email_addr, strlen(u->email_addr), out) != 0)
        out[0] = '\0';
}

bool vs_sched__prefs_store(struct vs_store *st, const struct vs_proto_request *q,
                           const struct vs_user *user, const char *email_hash, double db_mod,
                           int64_t now, struct vs_log *log, int64_t hostid)
{
    if (!q->global_prefs || !email_hash[0])
        return false;
    /* BOINC-COMPAT: times in the future count as now. */
    double master = vs_sched__prefs_mod_time(q->global_prefs);
    if (master > (double)now)
        master = (double)now;
    if (db_mod > (double)now)
        db_mod = (double)now;
    if (!(master > db_mod))
        return false;
    const char *src = q->global_prefs_source_email_hash;
    if (!src || strcmp(src, email_hash) != 0) {
        VS_LOG(log, VS_LOG_DEBUG,
               "host %lld: its preferences are newer than user %lld's but come from another "
               "account (source e-mail hash %s): not stored",
               (long long)hostid, (long long)user->id, src && src[0] ? src : "none");
        return false;
    }
    int rc = vs_store_user_set_global_prefs(st, user->id, q->global_prefs);
    if (rc != 0) {
        VS_LOG(log, VS_LOG_ERROR, "host %lld: cannot store user %lld's preferences: %s",
               (long long)hostid, (long long)user->id, vs_strerror(rc));
        return false;
    }
    VS_LOG(log, VS_LOG_INFO,
           "host %lld: its preferences (mod_time %.0f) are newer than user %lld's (%.0f): "
           "stored as the account's",
           (long long)hostid, master, (long long)user->id, db_mod);
    return true;
}

static bool cpid_well_formed(const char *c)
{
    size_t n = 0;
    for (; c[n]; n++)
        if (!((c[n] >= '0' && c[n] <= '9') || (c[n] >= 'a' && c[n] <= 'f')))
            return false;
    return n == VS_MD5_HEX_LEN;
}

bool vs_sched__cpid_adopt(struct vs_store *st, const struct vs_proto_request *q,
                          struct vs_user *user, struct vs_log *log, int64_t hostid)
{
    const char *c = q->cross_project_id;
    if (!c || !c[0] || strcmp(c, user->cross_project_id) == 0)
        return false;
    /* BOINC does not take it on a weak key: a key an account manager or a
     * friend holds must not change the volunteer's identity. */
    if (!q->authenticator || strcmp(q->authenticator, user->authenticator) != 0)
        return false;
    /* BOINC writes whatever the client sent; the ids projects make are 32
     * hex digits, and anything else (too long for the column, markup) is
     * refused here. */
    if (!cpid_well_formed(c)) {
        VS_LOG(log, VS_LOG_WARN,
               "host %lld: user %lld's request carries a malformed cross_project_id: ignored",
               (long long)hostid, (long long)user->id);
        return false;
    }
    int rc = vs_store_user_set_cpid(st, user->id, c);
    if (rc != 0) {
        VS_LOG(log, VS_LOG_ERROR, "host %lld: cannot store user %lld's cross_project_id: %s",
               (long long)hostid, (long long)user->id, vs_strerror(rc));
        return false;
    }
    VS_LOG(log, VS_LOG_INFO,
           "host %lld: user %lld adopts the cross_project_id its client brought from its other "
           "projects (had %s): its exported CPID changes",
           (long long)hostid, (long long)user->id, user->cross_project_id[0] ? "another" : "none");
    snprintf(user->cross_project_id, sizeof(user->cross_project_id), "%s", c);
    return true;
}
