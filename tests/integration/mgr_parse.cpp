// The BOINC Manager's own parsers against a client: for every GUI RPC op
// named on the command line (the ops a Manager session sent, as
// gui_rpc_record.py wrote them down), calls the method of libboinc's
// RPC_CLIENT that the Manager 7.20 calls for it -- the same request and the
// same parsing code (lib/gui_rpc_client_ops.cpp, in Debian's libboinc7) --
// and checks that it succeeds and that what it parsed is what the Manager's
// view then shows (e.g. the Disk view's d_allowed, the Statistics view's
// daily records, each task linked to its workunit and app version).
//
// usage: mgr_parse PORT PASSWORD OP...   (MGR_URL: the attached project)
// Prints "OP: ok ..." or "OP: FAIL ..." per op; exits 1 on any failure or
// on an op it has no check for (a new op in a capture must get one).
// Built by tests/integration/test_client_manager.sh with g++ and -lboinc.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

#include "boinc/error_numbers.h"
#include "boinc/gui_rpc_client.h"

static RPC_CLIENT rpc;
static int failures;
static std::string url;

static void report(const char* op, bool ok, const std::string& what) {
    printf("%s: %s %s\n", op, ok ? "ok" : "FAIL", what.c_str());
    if (!ok) failures++;
}

static std::string num(double x) {
    char b[64];
    snprintf(b, sizeof b, "%g", x);
    return b;
}

static bool check_state(std::string& w) {
    CC_STATE cs;
    int rv = rpc.get_state(cs);
    if (rv) { w = "retval " + num(rv); return false; }
    w = num(cs.projects.size()) + " projects, " + num(cs.results.size()) + " tasks";
    if (cs.projects.empty() || cs.results.empty() || cs.apps.empty()) return false;
    for (RESULT* r : cs.results) {
        // the Tasks view shows the app's name and the version through these links
        if (!r->project || !r->wup || !r->app || !r->avp) {
            w += "; task " + std::string(r->name) + " not linked to its project/workunit/app/version";
            return false;
        }
    }
    if (cs.host_info.p_ncpus < 1) { w += "; host without CPUs"; return false; }
    return true;
}

static bool check(const char* op, std::string& w) {
    int rv = 0;
    if (!strcmp(op, "auth1") || !strcmp(op, "auth2")) {
        w = "(authorize)";
        return true;
    }
    if (!strcmp(op, "exchange_versions")) {
        VERSION_INFO v;
        rv = rpc.exchange_versions("boincmgr", v);
        w = num(v.major) + "." + num(v.minor) + "." + num(v.release);
        return !rv && v.major == 7;
    }
    if (!strcmp(op, "get_state")) return check_state(w);
    if (!strcmp(op, "get_results")) {
        RESULTS r;
        rv = rpc.get_results(r, false);
        w = num(r.results.size()) + " tasks";
        return !rv && !r.results.empty() && r.results[0]->name[0];
    }
    if (!strcmp(op, "get_old_results")) {
        std::vector<OLD_RESULT> o;
        rv = rpc.get_old_results(o);
        w = num(o.size()) + " old tasks";
        return !rv;
    }
    if (!strcmp(op, "get_project_status")) {
        PROJECTS p;
        rv = rpc.get_project_status(p);
        w = num(p.projects.size()) + " projects";
        return !rv && !p.projects.empty() && url == p.projects[0]->master_url &&
               !p.projects[0]->project_name.empty();
    }
    if (!strcmp(op, "get_file_transfers")) {
        FILE_TRANSFERS f;
        rv = rpc.get_file_transfers(f);
        w = num(f.file_transfers.size()) + " transfers";
        return !rv;
    }
    if (!strcmp(op, "get_simple_gui_info")) {
        SIMPLE_GUI_INFO s;
        rv = rpc.get_simple_gui_info(s);
        w = num(s.projects.size()) + " projects, " + num(s.results.size()) + " tasks";
        return !rv && !s.projects.empty() && !s.results.empty();
    }
    if (!strcmp(op, "get_messages")) {
        MESSAGES m;
        rv = rpc.get_messages(0, m, false);
        w = num(m.messages.size()) + " messages";
        return !rv && !m.messages.empty() && m.messages.back()->seqno > 0;
    }
    if (!strcmp(op, "get_message_count")) {
        int n = 0;
        rv = rpc.get_message_count(n);
        w = "seqno " + num(n);
        return !rv && n > 0;
    }
    if (!strcmp(op, "get_notices")) {
        NOTICES n;
        rv = rpc.get_notices(0, n);
        w = num(n.notices.size()) + " notices";
        return !rv;
    }
    if (!strcmp(op, "get_cc_status")) {
        CC_STATUS c;
        rv = rpc.get_cc_status(c);
        w = "task mode " + num(c.task_mode) + ", network status " + num(c.network_status);
        return !rv && c.task_mode >= 1 && c.task_mode <= 3;
    }
    if (!strcmp(op, "acct_mgr_info")) {
        ACCT_MGR_INFO a;
        rv = rpc.acct_mgr_info(a);
        w = a.acct_mgr_url.empty() ? "no account manager" : "account manager " + a.acct_mgr_url;
        // an empty URL is what makes the Manager offer "Add project"
        return !rv && a.acct_mgr_url.empty();
    }
    if (!strcmp(op, "get_disk_usage")) {
        DISK_USAGE d;
        rv = rpc.get_disk_usage(d);
        w = "d_boinc " + num(d.d_boinc) + ", d_allowed " + num(d.d_allowed) + ", " +
            num(d.projects.size()) + " projects";
        return !rv && d.d_allowed > 0 && d.d_boinc > 0 && d.d_total > 0 && !d.projects.empty() &&
               d.projects[0]->disk_usage > 0;
    }
    if (!strcmp(op, "get_statistics")) {
        PROJECTS p;
        rv = rpc.get_statistics(p);
        w = num(p.projects.size()) + " projects";
        if (rv || p.projects.empty()) return false;
        w += ", " + num(p.projects[0]->statistics.size()) + " days";
        return !p.projects[0]->statistics.empty() && p.projects[0]->statistics[0].day > 0;
    }
    if (!strcmp(op, "get_all_projects_list")) {
        ALL_PROJECTS_LIST l;
        rv = rpc.get_all_projects_list(l);
        w = num(l.projects.size()) + " listed projects";
        return !rv;
    }
    if (!strcmp(op, "get_project_init_status")) {
        PROJECT_INIT_STATUS s;
        rv = rpc.get_project_init_status(s);
        w = "url '" + s.url + "'";
        return !rv;
    }
    if (!strcmp(op, "set_language")) {
        rv = rpc.set_language("en_US");
        return !rv;
    }
    if (!strcmp(op, "get_host_info")) {
        HOST_INFO h;
        rv = rpc.get_host_info(h);
        w = num(h.p_ncpus) + " CPUs, " + h.os_name;
        return !rv && h.p_ncpus >= 1 && h.m_nbytes > 0;
    }
    if (!strcmp(op, "get_global_prefs_working")) {
        GLOBAL_PREFS p;
        GLOBAL_PREFS_MASK m;
        rv = rpc.get_global_prefs_working_struct(p, m);
        w = "max_ncpus_pct " + num(p.max_ncpus_pct) + ", work_buf_min_days " + num(p.work_buf_min_days);
        return !rv && p.max_ncpus_pct > 0 && p.cpu_usage_limit > 0;
    }
    if (!strcmp(op, "get_global_prefs_override")) {
        GLOBAL_PREFS p;
        GLOBAL_PREFS_MASK m;
        rv = rpc.get_global_prefs_override_struct(p, m);
        w = "work_buf_min_days " + num(p.work_buf_min_days) + (m.work_buf_min_days ? " (set)" : "");
        return !rv && m.work_buf_min_days;
    }
    if (!strcmp(op, "set_global_prefs_override")) {
        // what the preferences dialog's Save does: the override it read, written back
        GLOBAL_PREFS p;
        GLOBAL_PREFS_MASK m;
        rv = rpc.get_global_prefs_override_struct(p, m);
        if (!rv) rv = rpc.set_global_prefs_override_struct(p, m);
        w = "written back";
        return !rv;
    }
    if (!strcmp(op, "read_global_prefs_override")) return !rpc.read_global_prefs_override();
    if (!strcmp(op, "get_global_prefs_file")) {
        std::string s;
        rv = rpc.get_global_prefs_file(s);
        w = "retval " + num(rv);
        return !rv || rv == ERR_NOT_FOUND;
    }
    if (!strcmp(op, "get_proxy_settings")) {
        GR_PROXY_INFO p;
        rv = rpc.get_proxy_settings(p);
        w = p.use_http_proxy ? "HTTP proxy" : "no proxy";
        return !rv;
    }
    if (!strcmp(op, "get_newer_version")) {
        std::string v, u;
        rv = rpc.get_newer_version(v, u);
        w = "'" + v + "'";
        return !rv;
    }
    if (!strcmp(op, "get_daily_xfer_history")) {
        DAILY_XFER_HISTORY d;
        rv = rpc.get_daily_xfer_history(d);
        w = num(d.daily_xfers.size()) + " days";
        return !rv;
    }
    if (!strcmp(op, "get_cc_config")) {
        CC_CONFIG c;
        LOG_FLAGS f;
        rv = rpc.get_cc_config(c, f);
        w = "ncpus " + num(c.ncpus);
        return !rv && c.ncpus >= 1;
    }
    if (!strcmp(op, "get_screensaver_tasks")) {
        RESULTS r;
        int reason = 0;
        rv = rpc.get_screensaver_tasks(reason, r);
        w = num(r.results.size()) + " tasks";
        return !rv;
    }
    if (!strcmp(op, "get_project_config") || !strcmp(op, "get_project_config_poll")) {
        PROJECT_CONFIG pc;
        rv = rpc.get_project_config(url);
        for (int i = 0; !rv && i < 120; i++) {
            pc.clear();
            rv = rpc.get_project_config_poll(pc);
            if (rv || pc.error_num != ERR_IN_PROGRESS) break;
            usleep(250000);
        }
        w = "'" + pc.name + "', min_passwd_length " + num(pc.min_passwd_length);
        return !rv && !pc.error_num && !pc.name.empty();
    }
    if (!strcmp(op, "create_account") || !strcmp(op, "create_account_poll") ||
        !strcmp(op, "lookup_account") || !strcmp(op, "lookup_account_poll")) {
        // as the wizard's account page: the Manager's ACCOUNT_IN, hashed by
        // RPC_CLIENT (md5 of password + lower-case e-mail), then polled
        bool create = !strncmp(op, "create", 6);
        ACCOUNT_IN in;
        ACCOUNT_OUT out;
        const char* e = getenv("MGR_EMAIL");
        const char* p = getenv("MGR_PASSWD");
        if (!e || !p) {
            w = "MGR_EMAIL / MGR_PASSWD not set";
            return false;
        }
        in.url = url;
        in.email_addr = e;
        in.passwd = p;
        in.user_name = "Wizard User";
        in.consented_to_terms = true;
        rv = create ? rpc.create_account(in) : rpc.lookup_account(in);
        for (int i = 0; !rv && i < 120; i++) {
            out.clear();
            rv = create ? rpc.create_account_poll(out) : rpc.lookup_account_poll(out);
            if (rv || out.error_num != ERR_IN_PROGRESS) break;
            usleep(250000);
        }
        w = "error_num " + num(out.error_num) + ", authenticator " + out.authenticator;
        static std::string key;
        if (create && !rv && !out.error_num) key = out.authenticator;
        return !rv && !out.error_num && out.authenticator.size() == 32 &&
               (create || key.empty() || key == out.authenticator);
    }
    if (!strcmp(op, "project_attach_poll")) {
        PROJECT_ATTACH_REPLY r;
        rv = rpc.project_attach_poll(r);
        w = "error_num " + num(r.error_num);
        return !rv;
    }
    if (!strcmp(op, "get_app_config")) {
        APP_CONFIGS c;
        rv = rpc.get_app_config(url.c_str(), c);
        w = "retval " + num(rv);
        return !rv || rv == ERR_NOT_FOUND;
    }
    w = "no check for this op (add one)";
    return false;
}

int main(int argc, char** argv) {
    const char* u = getenv("MGR_URL");
    if (argc < 3 || !u) {
        fprintf(stderr, "usage: MGR_URL=URL mgr_parse PORT PASSWORD OP...\n");
        return 2;
    }
    url = u;
    if (rpc.init("127.0.0.1", atoi(argv[1])) || rpc.authorize(argv[2])) {
        fprintf(stderr, "mgr_parse: cannot connect or authorize\n");
        return 2;
    }
    for (int i = 3; i < argc; i++) {
        std::string w;
        bool ok = check(argv[i], w);
        report(argv[i], ok, w);
    }
    return failures ? 1 : 0;
}
