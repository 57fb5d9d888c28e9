/* SQLite backend: users, teams and hosts. */
#include <string.h>
#include <sys/random.h>

#include "store/store_int.h"
#include "volsched/str.h"

/* A fresh authenticator: 32 lowercase hex digits from the kernel's CSPRNG,
 * like BOINC's make_secure_random_string. */
int vs_store__make_authenticator(char *out, size_t outsize)
{
    unsigned char raw[16];
    if (outsize < 2 * sizeof(raw) + 1)
        return VS_ELIMIT;
    size_t got = 0;
    while (got < sizeof(raw)) {
        ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);
        if (n <= 0)
            return VS_EIO;
        got += (size_t)n;
    }
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < sizeof(raw); i++) {
        out[2 * i] = hex[raw[i] >> 4];
        out[2 * i + 1] = hex[raw[i] & 15];
    }
    out[2 * sizeof(raw)] = '\0';
    return 0;
}

int vs_store_user_by_auth(struct vs_store *s, const char *authenticator, struct vs_user *out)
{
    if (!authenticator || !*authenticator)
        return VS_ENOTFOUND;
    return vs_store__get_text(s, SQ_USER_BY_AUTH, &vs_store__user, authenticator, out);
}

int vs_store_user_get(struct vs_store *s, int64_t id, struct vs_user *out)
{
    return vs_store__get_i64(s, SQ_USER_GET, &vs_store__user, id, out);
}

int vs_store_user_by_name(struct vs_store *s, const char *name, struct vs_user *out)
{
    return vs_store__get_text(s, SQ_USER_BY_NAME, &vs_store__user, name, out);
}

int vs_store_user_add(struct vs_store *s, struct vs_user *u)
{
    if (!u->name[0])
        return VS_EINVAL;
    int rc;
    bool made_auth = false;
    if (!u->authenticator[0]) {
        if ((rc = vs_store__make_authenticator(u->authenticator, sizeof(u->authenticator))) != 0)
            return rc;
        made_auth = true;
    }
    /* BOINC-COMPAT: the cross-project id the statistics exports' CPID is
     * made of (md5 of it and the e-mail address; `volsched db_dump`). */
    bool made_cpid = false;
    if (!u->cross_project_id[0]) {
        if ((rc = vs_store__make_authenticator(u->cross_project_id, sizeof(u->cross_project_id))) !=
            0)
            goto out;
        made_cpid = true;
    }
    if (!u->create_time)
        u->create_time = vs_store__now();
    if ((rc = vs_store__enter(s)) != 0)
        goto out;
    rc = vs_store__insert(s, SQ_USER_INSERT, &vs_store__user, u);
    if (rc == 0 && u->teamid) {
        struct vs_stmt *st = vs_store__stmt(s, SQ_TEAM_NUSERS_INC);
        if (!st) {
            rc = VS_ESTORE;
        } else {
            vs_db_bind_int64(st, 1, u->teamid);
            rc = vs_store__step_done(s, st, "team nusers");
            if (rc == 0 && vs_db_changes(s) != 1)
                rc = VS_ENOTFOUND; /* no such team */
        }
    }
    rc = vs_store__leave(s, rc);
out:
    if (rc) {
        u->id = 0;
        if (made_auth)
            u->authenticator[0] = '\0';
        if (made_cpid)
            u->cross_project_id[0] = '\0';
    }
    return rc;
}

int vs_store_team_get(struct vs_store *s, int64_t id, struct vs_team *out)
{
    return vs_store__get_i64(s, SQ_TEAM_GET, &vs_store__team, id, out);
}

int vs_store_team_by_name(struct vs_store *s, const char *name, struct vs_team *out)
{
    return vs_store__get_text(s, SQ_TEAM_BY_NAME, &vs_store__team, name, out);
}

int vs_store_team_add(struct vs_store *s, struct vs_team *t)
{
    if (!t->name[0])
        return VS_EINVAL;
    if (!t->create_time)
        t->create_time = vs_store__now();
    return vs_store__insert(s, SQ_TEAM_INSERT, &vs_store__team, t);
}

int vs_store_host_get(struct vs_store *s, int64_t id, struct vs_host *out)
{
    return vs_store__get_i64(s, SQ_HOST_GET, &vs_store__host, id, out);
}

int vs_store_host_by_cpid(struct vs_store *s, int64_t userid, const char *host_cpid,
                          struct vs_host *out)
{
    if (!host_cpid || !*host_cpid)
        return VS_ENOTFOUND;
    struct vs_stmt *st = vs_store__stmt(s, SQ_HOST_BY_CPID);
    if (!st)
        return VS_ESTORE;
    vs_db_bind_int64(st, 1, userid);
    vs_db_bind_text(st, 2, host_cpid, -1, VS_DB_STATIC);
    int rc = vs_db_step(st);
    if (rc == VS_DB_ROW)
        vs_store__read_row(st, 0, &vs_store__host, out);
    return vs_store__one_row_end(s, st, rc, "host by cpid");
}

int vs_store_host_add(struct vs_store *s, struct vs_host *h)
{
    if (!h->userid)
        return VS_EINVAL;
    if (!h->create_time)
        h->create_time = vs_store__now();
    return vs_store__insert(s, SQ_HOST_INSERT, &vs_store__host, h);
}

int vs_store_host_update(struct vs_store *s, const struct vs_host *h)
{
    if (!h->id)
        return VS_EINVAL;
    int rc = vs_store__update(s, SQ_HOST_UPDATE, &vs_store__host, h);
    if (rc != 0 || s->ops->host_keys_in_update)
        return rc; /* the keys were in it */
    /* userid and host_cpid (index host_user) only when they changed; the
     * row exists, so "no row changed" is success here. */
    rc = vs_store__update(s, SQ_HOST_UPDATE_KEYS, &vs_store__host, h);
    return rc == VS_ENOTFOUND ? 0 : rc;
}
