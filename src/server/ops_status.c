/* A project's status figures and their three renderings (ops_status.h). */
#include "volsched/ops_status.h"

#include <string.h>

#include "server/ops_page.h"
#include "volsched/daemons.h"
#include "volsched/json.h"
#include "volsched/str.h"

const char *const vs_ops_state_names[6] = {"", "inactive", "unsent", "", "in_progress", "over"};
const char *const vs_ops_outcome_names[8] = {
    "init",     "success",    "couldnt_send",   "client_error",
    "no_reply", "didnt_need", "validate_error", "client_detached",
};
const char *const vs_ops_validate_names[6] = {
    "init", "valid", "invalid", "no_check", "inconclusive", "too_late",
};

const char *const vs_ops_assign_kinds[4][2] = {
    {"", "broadcast_all"},
    {"targeted_host", "broadcast_host"},
    {"targeted_user", "broadcast_user"},
    {"targeted_team", "broadcast_team"},
};

const char *vs_daemon_run_name(int run)
{
    return run == VS_RUN_RUNNING ? "running" : run == VS_RUN_DISABLED ? "disabled" : "not running";
}

static int on_daemon(void *ctx, const struct vs_daemon_status *d)
{
    struct vs_ops_status *st = ctx;
    unsigned bit = vs_daemon_by_name(d->name);
    for (unsigned i = 0; i < VS_NDAEMONS; i++)
        if (bit == 1u << i)
            st->daemons[i].st = *d;
    return 0;
}

static int on_app(void *ctx, const struct vs_app_counts *c)
{
    struct vs_ops_status *st = ctx;
    st->ready_to_send += c->unsent;
    st->in_progress += c->in_progress;
    st->need_validate += c->need_validate;
    st->need_assimilate += c->need_assimilate;
    if (c->oldest_unsent && (!st->oldest_unsent || c->oldest_unsent < st->oldest_unsent))
        st->oldest_unsent = c->oldest_unsent;
    if (st->napps < VS_OPS_MAX_APPS)
        st->apps[st->napps++] = *c;
    return 0;
}

int vs_ops_status_collect(const char *dir, const char *name, struct vs_store *s, int64_t now,
                          struct vs_ops_status *out)
{
    memset(out, 0, sizeof(*out));
    out->now = now;
    if (vs_strlcpy(out->name, name ? name : "", sizeof(out->name)) != 0) {
        /* a long name is shown truncated */
    }
    pid_t pid = 0;
    out->server_up = vs_pidlock_probe(dir, "serve", &pid) == 1;
    out->server_pid = pid;
    if (out->server_up && vs_serve_state_read(dir, &out->serve) != 0)
        memset(&out->serve, 0, sizeof(out->serve));
    out->stop_sched = vs_ctl_file_exists(dir, "stop_sched");
    out->stop_daemons = vs_ctl_file_exists(dir, "stop_daemons");
    int rc = vs_store_counts(s, &out->counts);
    if (rc == 0)
        rc = vs_store_credit_counts(s, now, &out->credit);
    if (rc == 0)
        rc = vs_store_daemon_status_list(s, on_daemon, out);
    if (rc == 0)
        rc = vs_store_app_counts(s, now, on_app, out);
    if (rc == 0)
        rc = vs_store_assignment_counts(s, &out->asg);
    for (unsigned i = 0; rc == 0 && i < VS_NDAEMONS; i++) {
        pid_t dp = 0;
        /* A daemon runs inside serve (its --daemons) or alone (serve --only). */
        if (out->server_up && (out->serve.daemons & (1u << i)))
            dp = (pid_t)out->server_pid;
        else if (vs_pidlock_probe(dir, vs_daemon_name(1u << i), &dp) != 1)
            dp = 0;
        out->daemons[i].pid = dp;
        out->daemons[i].run = out->stop_daemons ? VS_RUN_DISABLED
                              : dp              ? VS_RUN_RUNNING
                                                : VS_RUN_NOT_RUNNING;
    }
    return rc;
}

/* ------------------------------------------------------------------------ */
/* JSON                                                                      */

static void json_counts(struct vs_json *j, const struct vs_store_counts *c)
{
    vs_json_key(j, "workunits");
    vs_json_obj_begin(j);
    vs_json_key_int(j, "total", c->workunits);
    vs_json_key(j, "by_state");
    vs_json_obj_begin(j);
    for (int i = 0; i < VS_WU_PHASE__COUNT; i++) {
        vs_json_key_int(j, vs_wu_phase_name(i), c->wu_phase[i]);
    }
    vs_json_obj_end(j);
    vs_json_key(j, "errors");
    vs_json_obj_begin(j);
    for (int i = 0; i < VS_WU_ERROR_BITS; i++) {
        vs_json_key_int(j, vs_wu_error_names[i], c->wu_error_mask[i]);
    }
    vs_json_obj_end(j);
    vs_json_key_int(j, "file_delete_errors", c->wu_file_delete_error);
    vs_json_obj_end(j);

    vs_json_key(j, "results");
    vs_json_obj_begin(j);
    vs_json_key_int(j, "total", c->results);
    vs_json_key(j, "by_server_state");
    vs_json_obj_begin(j);
    for (int st = 1; st < 6; st++) {
        if (!vs_ops_state_names[st][0])
            continue;
        int64_t n = 0;
        for (int o = 0; o < 8; o++)
            n += c->result_state_outcome[st][o];
        vs_json_key_int(j, vs_ops_state_names[st], n);
    }
    vs_json_obj_end(j);
    vs_json_key(j, "by_outcome"); /* OVER results only: the outcome means nothing before */
    vs_json_obj_begin(j);
    for (int o = 0; o < 8; o++) {
        vs_json_key_int(j, vs_ops_outcome_names[o],
                        c->result_state_outcome[VS_RESULT_SERVER_STATE_OVER][o]);
    }
    vs_json_obj_end(j);
    vs_json_key(j, "by_validate_state"); /* successes only */
    vs_json_obj_begin(j);
    for (int v = 0; v < 6; v++) {
        vs_json_key_int(j, vs_ops_validate_names[v], c->result_validate[v]);
    }
    vs_json_obj_end(j);
    vs_json_key_int(j, "file_delete_errors", c->result_file_delete_error);
    vs_json_obj_end(j);
    vs_json_key_int(j, "sendable", c->job_cache);
    vs_json_key_int(j, "hosts", c->hosts);
    vs_json_key_int(j, "users", c->users);
    vs_json_key_int(j, "teams", c->teams);
    vs_json_key_int(j, "apps", c->apps);
}

/* Seed 003's figures: unsent results per app (what a work generator
 * watches) and assigned work by kind, jobs and those still open. */
static void json_assigned(struct vs_json *j, const struct vs_ops_status *st)
{
    vs_json_key(j, "unsent_by_app");
    vs_json_obj_begin(j);
    for (int i = 0; i < st->napps; i++)
        vs_json_key_int(j, st->apps[i].name, st->apps[i].unsent);
    vs_json_obj_end(j);
    vs_json_key(j, "assigned");
    vs_json_obj_begin(j);
    for (int t = 0; t < 4; t++) {
        for (int m = 0; m < 2; m++) {
            if (!vs_ops_assign_kinds[t][m][0])
                continue;
            vs_json_key(j, vs_ops_assign_kinds[t][m]);
            vs_json_obj_begin(j);
            vs_json_key_int(j, "jobs", st->asg.n[t][m]);
            vs_json_key_int(j, "open", st->asg.open[t][m]);
            vs_json_obj_end(j);
        }
    }
    vs_json_obj_end(j);
}

static void json_app(struct vs_json *j, const struct vs_app_counts *a)
{
    vs_json_obj_begin(j);
    vs_json_key_str(j, "name", a->name);
    vs_json_key_int(j, "unsent", a->unsent);
    vs_json_key_int(j, "in_progress", a->in_progress);
    vs_json_key_int(j, "need_validate", a->need_validate);
    vs_json_key_int(j, "need_assimilate", a->need_assimilate);
    vs_json_key_int(j, "oldest_unsent", a->oldest_unsent);
    vs_json_key_int(j, "success_24h", a->success_24h);
    vs_json_key_int(j, "error_24h", a->error_24h);
    vs_json_obj_end(j);
}

int vs_ops_status_json(const struct vs_ops_status *st, const char *dir, struct vs_buf *out)
{
    struct vs_json j;
    vs_json_init(&j, out, true);
    vs_json_obj_begin(&j);
    vs_json_key_str(&j, "project", dir);
    vs_json_key_int(&j, "time", st->now);

    vs_json_key(&j, "server");
    vs_json_obj_begin(&j);
    vs_json_key(&j, "up");
    vs_json_bool(&j, st->server_up);
    vs_json_key_int(&j, "pid", st->server_pid);
    vs_json_key(&j, "listen");
    if (st->server_up)
        vs_json_str(&j, st->serve.listen);
    else
        vs_json_null(&j);
    vs_json_key_int(&j, "started", st->serve.started);
    vs_json_key(&j, "stop_sched");
    vs_json_bool(&j, st->stop_sched);
    vs_json_key(&j, "stop_daemons");
    vs_json_bool(&j, st->stop_daemons);
    vs_json_obj_end(&j);

    /* The real cache of the running scheduler; null when no server runs. */
    vs_json_key(&j, "job_cache");
    if (st->server_up) {
        vs_json_obj_begin(&j);
        vs_json_key_int(&j, "present", st->serve.cache_present);
        vs_json_key_int(&j, "slots", st->serve.cache_slots);
        vs_json_key_int(&j, "updated", st->serve.updated);
        vs_json_obj_end(&j);
    } else {
        vs_json_null(&j);
    }
    vs_json_key_int(&j, "ready_to_send", st->ready_to_send);
    vs_json_key_int(&j, "in_progress", st->in_progress);
    vs_json_key_int(&j, "need_validate", st->need_validate);
    vs_json_key_int(&j, "need_assimilate", st->need_assimilate);
    vs_json_key_int(&j, "oldest_unsent", st->oldest_unsent);
    json_counts(&j, &st->counts);

    vs_json_key(&j, "per_app");
    vs_json_arr_begin(&j);
    for (int i = 0; i < st->napps; i++)
        json_app(&j, &st->apps[i]);
    vs_json_arr_end(&j);
    json_assigned(&j, st);

    vs_json_key(&j, "daemons");
    vs_json_obj_begin(&j);
    for (unsigned i = 0; i < VS_NDAEMONS; i++) {
        const struct vs_daemon_status *d = &st->daemons[i].st;
        vs_json_key(&j, vs_daemon_name(1u << i));
        vs_json_obj_begin(&j);
        vs_json_key_str(&j, "status", vs_daemon_run_name(st->daemons[i].run));
        vs_json_key_int(&j, "last_run", d->last_run);
        vs_json_key_int(&j, "last_work", d->last_work);
        vs_json_key_int(&j, "total_work", d->total_work);
        vs_json_key(&j, "last_error");
        if (d->last_error[0])
            vs_json_str(&j, d->last_error);
        else
            vs_json_null(&j);
        vs_json_key_int(&j, "last_error_time", d->last_error_time);
        vs_json_obj_end(&j);
    }
    vs_json_obj_end(&j);
    vs_json_obj_end(&j);
    int rc = vs_json_error(&j);
    return rc ? rc : vs_buf_puts(out, "\n");
}

/* ------------------------------------------------------------------------ */
/* server_status.php                                                         */

int vs_ops_status_xml(const struct vs_ops_status *st, struct vs_buf *out)
{
    /* BOINC-COMPAT: the layout stats sites parse (html/user/server_status.php). */
    struct vs_page p = {.b = out};
    vs_page_printf(&p, "<server_status>\n    <update_time>%lld</update_time>\n",
                   (long long)st->now);
    vs_page_printf(&p, "    <daemon_status>\n");
    vs_page_printf(&p,
                   "        <daemon>\n            <host>localhost</host>\n"
                   "            <command>scheduler</command>\n"
                   "            <status>%s</status>\n        </daemon>\n",
                   !st->server_up   ? "not running"
                   : st->stop_sched ? "disabled"
                                    : "running");
    for (unsigned i = 0; i < VS_NDAEMONS; i++)
        vs_page_printf(&p,
                       "        <daemon>\n            <host>localhost</host>\n"
                       "            <command>%s</command>\n"
                       "            <status>%s</status>\n        </daemon>\n",
                       vs_daemon_name(1u << i), vs_daemon_run_name(st->daemons[i].run));
    vs_page_printf(&p, "    </daemon_status>\n    <database_file_states>\n");
    vs_page_printf(&p,
                   "        <results_ready_to_send>%lld</results_ready_to_send>\n"
                   "        <results_in_progress>%lld</results_in_progress>\n"
                   "        <workunits_waiting_for_validation>%lld"
                   "</workunits_waiting_for_validation>\n"
                   "        <workunits_waiting_for_assimilation>%lld"
                   "</workunits_waiting_for_assimilation>\n",
                   (long long)st->ready_to_send, (long long)st->in_progress,
                   (long long)st->need_validate, (long long)st->need_assimilate);
    const struct vs_credit_counts *cc = &st->credit;
    vs_page_printf(&p,
                   "        <users_with_recent_credit>%lld</users_with_recent_credit>\n"
                   "        <users_with_credit>%lld</users_with_credit>\n"
                   "        <users_registered_in_past_24_hours>%lld"
                   "</users_registered_in_past_24_hours>\n"
                   "        <hosts_with_recent_credit>%lld</hosts_with_recent_credit>\n"
                   "        <hosts_with_credit>%lld</hosts_with_credit>\n"
                   "        <hosts_registered_in_past_24_hours>%lld"
                   "</hosts_registered_in_past_24_hours>\n"
                   "        <current_floating_point_speed>%.6f</current_floating_point_speed>\n",
                   (long long)cc->users_recent, (long long)cc->users_credit,
                   (long long)cc->users_24h, (long long)cc->hosts_recent,
                   (long long)cc->hosts_credit, (long long)cc->hosts_24h, cc->gflops);
    vs_page_printf(&p, "    </database_file_states>\n    <tasks_by_app>\n");
    for (int i = 0; i < st->napps; i++) {
        const struct vs_app_counts *a = &st->apps[i];
        vs_page_printf(&p, "        <app>\n            <id>%lld</id>\n            <name>",
                       (long long)a->appid);
        vs_page_esc(&p, a->name);
        vs_page_printf(&p,
                       "</name>\n            <unsent>%lld</unsent>\n"
                       "            <in_progress>%lld</in_progress>\n        </app>\n",
                       (long long)a->unsent, (long long)a->in_progress);
    }
    vs_page_printf(&p, "    </tasks_by_app>\n</server_status>\n");
    return p.rc;
}

static void age(struct vs_page *p, int64_t now, int64_t t)
{
    if (!t) {
        vs_page_printf(p, "-");
        return;
    }
    int64_t d = now > t ? now - t : 0;
    if (d < 3600)
        vs_page_printf(p, "%lld min", (long long)(d / 60));
    else if (d < 86400 * 2)
        vs_page_printf(p, "%.1f hours", (double)d / 3600.0);
    else
        vs_page_printf(p, "%.1f days", (double)d / 86400.0);
}

void vs_ops_status_tables(struct vs_page *p, const struct vs_ops_status *st)
{
    vs_page_printf(p, "<h2>Server</h2>\n<table class=\"t\">\n<tr><th>Program</th><th>Status</th>"
                      "<th>Last pass</th><th>Items (last / total)</th><th>Last error</th></tr>\n");
    vs_page_printf(p,
                   "<tr><td>scheduler</td><td class=\"%s\" id=\"st-scheduler\">%s</td>"
                   "<td colspan=\"3\">",
                   st->server_up && !st->stop_sched ? "ok" : "bad",
                   !st->server_up   ? "not running"
                   : st->stop_sched ? "disabled"
                                    : "running");
    if (st->server_up)
        vs_page_printf(p, "pid %lld, job cache <span id=\"v-cache\">%lld</span> of %lld slots",
                       (long long)st->server_pid, (long long)st->serve.cache_present,
                       (long long)st->serve.cache_slots);
    vs_page_printf(p, "</td></tr>\n");
    for (unsigned i = 0; i < VS_NDAEMONS; i++) {
        const struct vs_daemon_status *d = &st->daemons[i].st;
        const char *name = vs_daemon_name(1u << i);
        vs_page_printf(p, "<tr><td>%s</td><td class=\"%s\" id=\"st-%s\">%s</td><td>", name,
                       st->daemons[i].run == VS_RUN_RUNNING ? "ok" : "bad", name,
                       vs_daemon_run_name(st->daemons[i].run));
        vs_page_time(p, d->last_run);
        vs_page_printf(p, "</td><td>%lld / %lld</td><td>", (long long)d->last_work,
                       (long long)d->total_work);
        vs_page_esc(p, d->last_error[0] ? d->last_error : "-");
        vs_page_printf(p, "</td></tr>\n");
    }
    vs_page_printf(p, "</table>\n");

    vs_page_printf(p,
                   "<h2>Work</h2>\n<table class=\"t\">\n"
                   "<tr><td>Results ready to send</td><td id=\"v-ready\">%lld</td></tr>\n"
                   "<tr><td>Results in progress</td><td id=\"v-inprogress\">%lld</td></tr>\n"
                   "<tr><td>Workunits waiting for validation</td><td id=\"v-validate\">%lld"
                   "</td></tr>\n"
                   "<tr><td>Workunits waiting for assimilation</td><td id=\"v-assimilate\">"
                   "%lld</td></tr>\n<tr><td>Oldest unsent result</td><td>",
                   (long long)st->ready_to_send, (long long)st->in_progress,
                   (long long)st->need_validate, (long long)st->need_assimilate);
    age(p, st->now, st->oldest_unsent);
    vs_page_printf(p, "</td></tr>\n</table>\n");
    const struct vs_credit_counts *cc = &st->credit;
    vs_page_printf(
        p,
        "<h2>Users and computers</h2>\n<table class=\"t\">\n"
        "<tr><th></th><th>All</th><th>With credit</th><th>With recent credit</th>"
        "<th>Registered in past 24 hours</th></tr>\n"
        "<tr><td>Users</td><td id=\"v-users\">%lld</td><td id=\"v-users-credit\">%lld"
        "</td><td id=\"v-users-recent\">%lld</td><td id=\"v-users-24h\">%lld</td></tr>\n"
        "<tr><td>Computers</td><td id=\"v-hosts\">%lld</td><td id=\"v-hosts-credit\">"
        "%lld</td><td id=\"v-hosts-recent\">%lld</td><td id=\"v-hosts-24h\">%lld</td>"
        "</tr>\n<tr><td>Teams</td><td id=\"v-teams\">%lld</td><td id=\"v-teams-credit\">"
        "%lld</td><td></td><td></td></tr>\n</table>\n"
        "<p>Credit granted per day (the users' recent average credit): <span "
        "id=\"v-credit-day\">%.2f</span>; current speed: <span id=\"v-gflops\">"
        "%.2f</span> GigaFLOPS (that / 200).</p>\n",
        (long long)st->counts.users, (long long)cc->users_credit, (long long)cc->users_recent,
        (long long)cc->users_24h, (long long)st->counts.hosts, (long long)cc->hosts_credit,
        (long long)cc->hosts_recent, (long long)cc->hosts_24h, (long long)st->counts.teams,
        (long long)cc->teams_credit, cc->gflops * 200, cc->gflops);
    vs_page_printf(p, "<h2>Tasks by application</h2>\n<table class=\"t\">\n<tr><th>App</th>"
                      "<th>Unsent</th><th>In progress</th><th>Need validation</th>"
                      "<th>Need assimilation</th><th>Oldest unsent</th>"
                      "<th>Success (24 h)</th><th>Error (24 h)</th></tr>\n");
    for (int i = 0; i < st->napps; i++) {
        const struct vs_app_counts *a = &st->apps[i];
        vs_page_printf(p, "<tr><td>");
        vs_page_esc(p, a->name);
        vs_page_printf(p, "</td><td>%lld</td><td>%lld</td><td>%lld</td><td>%lld</td><td>",
                       (long long)a->unsent, (long long)a->in_progress, (long long)a->need_validate,
                       (long long)a->need_assimilate);
        age(p, st->now, a->oldest_unsent);
        vs_page_printf(p, "</td><td>%lld</td><td>%lld</td></tr>\n", (long long)a->success_24h,
                       (long long)a->error_24h);
    }
    vs_page_printf(p, "</table>\n");
}

int vs_ops_status_html(const struct vs_ops_status *st, struct vs_buf *out)
{
    struct vs_page p = {.b = out};
    vs_page_printf(&p, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>");
    vs_page_esc(&p, st->name);
    vs_page_printf(&p, " server status</title>\n<style>body{font-family:sans-serif}"
                       ".t{border-collapse:collapse}.t td,.t th{border:1px solid #bbb;"
                       "padding:2px 8px}.ok{color:#070}.bad{color:#b00}</style></head><body>\n"
                       "<h1>");
    vs_page_esc(&p, st->name);
    vs_page_printf(&p, " server status</h1>\n<p>As of ");
    vs_page_time(&p, st->now);
    vs_page_printf(&p, " UTC. <a href=\"?xml=1\">XML</a></p>\n");
    vs_ops_status_tables(&p, st);
    vs_page_printf(&p, "</body></html>\n");
    return p.rc;
}
